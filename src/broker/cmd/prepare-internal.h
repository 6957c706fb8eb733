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

/* One `sbx prepare` of a profile (prepare.c), as the tree's code sees it. */
struct sbx_prepare_ctx {
	const struct sbx_profile *pr;
	const char *catalog;      /* its canonical path */
	int dir_fd;               /* BASE/<catalog>/<profile> */
	char staging[64];         /* ".new-<random>" in it, while it exists */
	json_t *entries;
	char sha256[65];
	struct sbx_error fail;    /* why the step's run failed */
};

/* sbx_prepare_run.take (prepare-tree.c): the output root under @h's
 * ".new-<random>" in the state's directory, copied and refused
 * (77; prepare.c says what), digested and sealed; its sorted entries in
 * the context. */
int sbx_prepare_take_tree(struct sbx_prepare_run *h, int outroot_fd, struct sbx_error *err);
/* Each entry's identity (inode, size, mtime, ctime) added to it. */
int sbx_prepare_record_identities(int tfd, json_t *entries, struct sbx_error *err);
/* Remove @name at @dfd and what it holds, read-only or not, following no
 * link; best effort. */
void sbx_prepare_remove_tree(int dfd, const char *name, int depth);

/*
 * sbx_prepared_base() - the prepared_dir (@cfg's, else the default for
 * @cat's owner) into *@out, and in @who the uids whose state a run
 * trusts: root, the catalog's owner and the caller.
 * Errors: SBX_EXIT_UNAVAILABLE (69).
 */
int sbx_prepared_base(const struct sbx_hostconfig *cfg, const struct sbx_catalog *cat,
		      char **out, struct sbx_trust *who, struct sbx_error *err);

/*
 * sbx_prepared_dir() - where @pr's state of catalog @cat lives:
 * BASE/<catalog>/<profile> (prepare.h), into *@dir, and the catalog's
 * canonical path into *@catalog; @who as sbx_prepared_base() says.
 * Errors: SBX_EXIT_UNAVAILABLE (69).
 */
int sbx_prepared_dir(const struct sbx_hostconfig *cfg, const struct sbx_catalog *cat,
		     const struct sbx_profile *pr, char **dir, char **catalog,
		     struct sbx_trust *who, struct sbx_error *err);

/*
 * sbx_prepare_recipe() - the canonical JSON (RFC 8785) of the profile keys
 * the prepare step's result depends on (prepare-recipe.c): what the state
 * records, and what makes it stale when it changes.  *@out is the
 * caller's.  Errors: SBX_EXIT_SOFTWARE.
 */
int sbx_prepare_recipe(const struct sbx_profile *pr, char **out, size_t *len,
		       struct sbx_error *err);

/* The host path of the prepare step's interpreter (prepare.argv[0] through
 * the profile's symlinks and binds), whose identity the state records.
 * The caller frees it. */
char *sbx_prepare_interpreter(const struct sbx_profile *pr);

/*
 * sbx_prepared_open_dir() - BASE/<catalog>/<profile> (@dir) opened through
 * sbx_dir_open_trusted(), made when @create.  Errors: 69 in @pr's name
 * ("prepared state unusable: ..."), or errnum ENOENT (missing) as is.
 */
int sbx_prepared_open_dir(const char *dir, const struct sbx_profile *pr,
			  const struct sbx_trust *who, bool create, struct sbx_error *err);

/* The digest of the tree at @root_fd, entries ({path, type}) in order. */
int sbx_prepared_hash_tree(int root_fd, const json_t *entries, char hex[65],
			   struct sbx_error *err);

#endif
