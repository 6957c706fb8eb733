/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * template.h - the broker's side of a profile's template (sbx(1)
 * TEMPLATES): which template a profile's runs may use (its digest), where
 * its socket is, and talking to it (src/common/template-proto.h).
 *
 * The template is a process of the caller's uid that holds an imported
 * interpreter and nothing secret; the broker names it by a digest of
 * everything that shaped it, so that a change of the profile, its
 * prepared state, the sbx-template binary, the interpreter or the config
 * keys makes a new one rather than reusing a stale one.
 */
#ifndef SBX_BROKER_TEMPLATE_H
#define SBX_BROKER_TEMPLATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "catalog.h"
#include "error.h"
#include "hostconfig.h"

/* A file's identity as the digest takes it: a change of any field (an
 * upgrade, a rebuild) is a new template. */
struct sbx_file_ident {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	const char *path;        /* resolved; NULL: absent */
};

/* Everything a template's digest covers. */
struct sbx_template_ident {
	const struct sbx_profile *profile; /* its file's JSON, canonicalized */
	const char *prepared_sha256;       /* NULL: no prepared state */
	struct sbx_file_ident binary;      /* sbx-template */
	struct sbx_file_ident interpreter; /* realpath of the profile's argv[0] */
	uint64_t idle_seconds, max_runs, max_seconds;
};

/*
 * sbx_template_digest() - SHA-256 over @id, its first 16 hex digits into
 * @out.  The profile's JSON is compared with its keys sorted and without
 * whitespace, so reformatting the file keeps the template.
 * Errors: -1 (SBX_EXIT_SOFTWARE) when the profile's bytes do not parse.
 */
int sbx_template_digest(const struct sbx_template_ident *id, char out[17], struct sbx_error *err);

/* sbx_file_ident_get() - stat @path (following links) into @out, whose
 * path is then @path.  -1 with errno on failure. */
int sbx_file_ident_get(const char *path, struct sbx_file_ident *out);

/* Where a template lives: <state_dir>/templates/<catalog>-<profile>-<digest>.sock
 * (and .json beside it).  @catalog_key is sbx_template_catalog_key(). */
char *sbx_template_socket_path(const char *state_dir, const char *catalog_key,
			       const char *profile, const char *digest);
/* Eight hex digits naming the catalog directory @dir, so that two
 * catalogs with a profile of the same name get two templates. */
void sbx_template_catalog_key(const char *dir, char out[9]);

/* What a template says of itself (STATUS). */
struct sbx_template_info {
	pid_t pid;               /* its pid (from its record); 0: unknown */
	int64_t started, last_used;
	uint32_t runs, active, max_runs;
	char digest[17];
	char interpreter[200];
};

/*
 * sbx_template_query() - connect to the template at @sock_path and ask
 * STATUS into @info (when @info) or STOP (@stop).
 * Errors: -1 with errno (ENOENT, ECONNREFUSED: none there; EPROTO: it
 * answered something else), and a message in @err.
 */
int sbx_template_query(const char *sock_path, bool stop, struct sbx_template_info *info,
		       struct sbx_error *err);

#endif
