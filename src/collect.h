/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect.h - collection of the payload's outputs, quarantine, validation
 * and promotion into --artifacts.
 *
 * Three steps, each its own call so the orchestrator can emit an event in
 * between:
 *
 *   sbx_collect()          walk /work/out through a dirfd (openat2 only),
 *                          copy every candidate into a fresh quarantine dir
 *                          with bounded reads, hashing while copying;
 *   sbx_collect_validate() detect each candidate's type, check it against
 *                          the extension and the allowed types, run the
 *                          type's validator on the quarantined copy;
 *   sbx_collect_promote()  move what passed into the artifacts dir.
 *
 * The payload may still have processes racing in the output tree, so
 * nothing is trusted between the look and the open: every open re-checks
 * type, device, inode and link count, and only the quarantined copy (which
 * no one else can reach) is validated and promoted.
 *
 * Display paths: a path in struct sbx_artifact is relative to /work/out and
 * free of control characters.  A name that was rejected for its bytes
 * (control characters, DEL, invalid UTF-8) is shown with each offending
 * byte written as "\xNN" (four printable characters), so the listing names
 * the file without carrying the bytes themselves; such a display path is
 * never the path of a promoted file.
 */
#ifndef SBX_COLLECT_H
#define SBX_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum sbx_artifact_status {
	SBX_ARTIFACT_PROMOTED,  /* passed so far; final after promotion */
	SBX_ARTIFACT_REJECTED,
	SBX_ARTIFACT_DISCARDED, /* valid, but the run did not complete */
};

struct sbx_artifact {
	char *path;        /* relative to /work/out, cleaned for display */
	uint64_t size;     /* bytes copied (or, when rejected before, as seen) */
	char sha256[65];   /* lowercase hex, "" when not hashed */
	char *media_type;  /* detected type, or NULL */
	enum sbx_artifact_status status;
	char *reason;      /* NULL when promoted */
	bool partial;      /* promoted from a run that did not complete */
	bool formula_cells; /* CSV cells starting with = + - @ TAB CR */
	unsigned flags;     /* SBX_MEDIA_FLAG_*: suspicious but allowed */
	/* private to collect.c */
	char qname[16];    /* name in the quarantine dir, "" when not copied */
	bool validated;
};

struct sbx_collect_limits {
	uint64_t max_files;        /* output_files */
	uint64_t max_bytes;        /* output_bytes */
	unsigned max_depth;        /* directory levels walked below /work/out
				    * (e.g. 16); a directory deeper than that
				    * is listed as rejected, not entered */
	size_t max_name;           /* bytes per name, e.g. 255 */
	uint64_t max_entries_seen; /* stop the walk after this many entries */
};

struct sbx_collection {
	struct sbx_artifact *items;
	size_t n;
	uint64_t bytes_found; /* regular files seen in the output root */
	uint64_t files_found;
	bool walk_stopped;    /* max_entries_seen was reached */
	size_t cap;           /* private: room in items */
	int quarantine_dirfd;
	char *quarantine_path;
};

/* Defaults for the limits that are not job limits. */
#define SBX_COLLECT_MAX_DEPTH 16
#define SBX_COLLECT_MAX_NAME 255
/* Names read from one directory; a directory holding more is refused
 * whole (the output tmpfs's inode cap keeps real trees far below this). */
#define SBX_COLLECT_MAX_DIR_NAMES (1u << 20)
/* max_entries_seen for @max_files: room for a few rejections per file. */
#define SBX_COLLECT_ENTRIES_FOR(max_files) (4 * (uint64_t)(max_files) + 64)

/*
 * sbx_collect() - walk the output root and quarantine the candidates.
 * @outroot_fd: directory fd of /work/out (not consumed; its offset is not
 *              used); @lim: caps; @quarantine_parent: trusted directory in
 *              which a private 0700 quarantine dir is created;
 * @c: filled in (zero it first); release with sbx_collection_free(), also
 *     after an error.
 *
 * Every entry met is either a candidate (status PROMOTED, not yet
 * validated) or listed as REJECTED with a reason.  Directories are
 * descended, not listed.
 *
 * Return: 0, or -1 with @err set: SBX_EXIT_UNAVAILABLE when the kernel has
 * no openat2 (there is no safe fallback), SBX_EXIT_SOFTWARE when the
 * quarantine cannot be written.
 */
int sbx_collect(int outroot_fd, const struct sbx_collect_limits *lim,
		const char *quarantine_parent, struct sbx_collection *c, struct sbx_error *err);

/*
 * sbx_collect_validate() - validate every candidate in quarantine.
 * @allowed_types: NULL-terminated media types; NULL allows nothing.
 *
 * Sets media_type, and turns a candidate that fails into REJECTED with a
 * reason; formula_cells is set for CSV, flags for what a promoted file's
 * validator found suspicious but allowed.
 * Return: 0, or -1 (SBX_EXIT_SOFTWARE) when a quarantined copy cannot be
 * opened.
 */
int sbx_collect_validate(struct sbx_collection *c, char *const *allowed_types,
			 struct sbx_error *err);

/*
 * sbx_collect_check_artifacts_dir() - refuse an artifacts dir that exists
 * and is not an empty directory.  Call before the run, so nothing runs for
 * a result that cannot be delivered.
 * Return: 0, or -1 with SBX_EXIT_USAGE.
 */
int sbx_collect_check_artifacts_dir(const char *dir, struct sbx_error *err);

/*
 * sbx_collect_promote() - move validated candidates to @artifacts_dir.
 * @artifacts_dir: created with its parents (0755) if missing; must be empty
 *                 if it exists;
 * @partial: the run timed out, was cancelled or hit a limit;
 * @retain_partial: partial_outputs is "retain".
 *
 * A promoted file lands at DIR/<path> with mode 0644; intermediate
 * directories are made with mkdirat() below a dirfd and never through a
 * symlink; a file that already exists is never replaced.  For a partial
 * run without retain, candidates become DISCARDED ("run did not
 * complete"); with retain they are promoted with partial = true.
 *
 * Return: 0, or -1 with @err set (SBX_EXIT_USAGE when DIR is not empty,
 * SBX_EXIT_SOFTWARE for I/O failures; the artifact being moved is then
 * marked REJECTED with the reason).
 */
int sbx_collect_promote(struct sbx_collection *c, const char *artifacts_dir, bool partial,
			bool retain_partial, struct sbx_error *err);

/* The artifact listed under @path, or NULL (for required_outputs). */
const struct sbx_artifact *sbx_collection_find(const struct sbx_collection *c, const char *path);

/* Free the items and remove the quarantine dir with what is left in it. */
void sbx_collection_free(struct sbx_collection *c);

#endif
