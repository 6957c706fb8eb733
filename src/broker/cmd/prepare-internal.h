/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prepare-internal.h - what prepare.c (sbx prepare) and prepared.c (the
 * run's check) share: the state's layout and limits, where it lives and
 * whose it may be.  Not for other modules.
 */
#ifndef SBX_PREPARE_INTERNAL_H
#define SBX_PREPARE_INTERNAL_H

#include <stdint.h>
#include <sys/stat.h>

#include "prepare.h"
#include "trustdir.h"

#define STATE_FILE "state"
#define STATE_MAX_BYTES (1u << 20)
/* A prepared tree is a cache: small.  The caps bound the run's check. */
#define TREE_MAX_ENTRIES 256
#define TREE_MAX_DEPTH 8
#define TREE_MAX_BYTES (UINT64_C(256) << 20)

#define PREPARE_HINT_FMT "run 'sbx prepare %s' as the catalog's owner (make install and the " \
			 "package do it for the shipped profiles)"

/* FNV-1a, 64 bits: the profile file's bytes compared on the hot path
 * without libcrypto (the catalog is trusted; this tells versions apart,
 * it does not authenticate). */
static inline uint64_t fnv1a64(const char *p, size_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

static inline int64_t ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

static inline const char *type_name(mode_t m)
{
	return S_ISDIR(m) ? "dir" : S_ISREG(m) ? "file" : "other";
}

/*
 * sbx_prepared_base() - the prepared_dir (@cfg's, else the default for
 * @cat's owner) into *@out, and in @who the uids whose state a run
 * trusts: root, the catalog's owner and the caller.
 * Errors: SBX_EXIT_UNAVAILABLE (69).
 */
int sbx_prepared_base(const struct sbx_hostconfig *cfg, const struct sbx_catalog *cat,
		      char **out, struct sbx_trust *who, struct sbx_error *err);

/*
 * sbx_prepared_open_dir() - DIR/<profile> (@dir) opened through
 * sbx_dir_open_trusted(), made when @create.  Errors: 69 in @pr's name
 * ("prepared state unusable: ..."), or errnum ENOENT (missing) as is.
 */
int sbx_prepared_open_dir(const char *dir, const struct sbx_profile *pr,
			  const struct sbx_trust *who, bool create, struct sbx_error *err);

/* The digest of the tree at @root_fd, entries ({path, type}) in order. */
int sbx_prepared_hash_tree(int root_fd, const json_t *entries, char hex[65],
			   struct sbx_error *err);

#endif
