/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prepare.h - a profile's prepared runtime state (sbx-policy(5),
 * "prepare"): `sbx prepare PROFILE` builds it, `sbx run` binds it, `sbx
 * check` reports it.
 *
 * Where it lives: DIR/<catalog>/<profile>/, <catalog> the first 16 hex
 * digits of the SHA-256 of the catalog's canonical path (two catalogs
 * with a profile of the same name keep their own), DIR the host config's
 * "prepared_dir", else LOCALSTATEDIR/lib/sbx/prepared when the catalog
 * belongs to root, else $XDG_STATE_HOME/sbx/prepared (~/.local/state) of
 * the user who owns the catalog and runs sbx.  Only below directories
 * that root, the catalog's owner or the caller owns and nobody else may
 * write (trustdir.h).  In it: "state" (what
 * the tree was built from and the identity of each of its entries),
 * "tree-<digest>/" (the tree, read-only) and ".lock".
 */
#ifndef SBX_PREPARE_H
#define SBX_PREPARE_H

#include <stdbool.h>

#include "catalog.h"
#include "error.h"
#include "hostconfig.h"
#include "policy.h"

/* What a run learns from the state: the tree to bind and its digest. */
struct sbx_prepared {
	char *tree;          /* host path of tree-<digest> */
	char sha256[65];
};

/*
 * sbx_prepared_lookup() - the state of @pr's prepared tree, checked the
 * cheap way a run can afford: one small file read, and one fstatat per
 * entry of the tree and per declared input (no hashing).
 * @deep: also re-hash the tree's content (sbx check).
 * Stale means the recipe (prepare-recipe.c), the interpreter or a
 * declared input changed since it was prepared.
 * Errors: SBX_EXIT_UNAVAILABLE (69): "prepared state missing", "stale" or
 * "tampered with" and why, with a Hint to run `sbx prepare NAME`; or
 * "prepared state unusable" where the state, its tree or a directory
 * above them belongs to someone but root, the catalog's owner and the
 * caller, or is writable by group or others (sbx-policy(5),
 * prepared_dir), with a Hint saying what to change.
 */
int sbx_prepared_lookup(const struct sbx_hostconfig *cfg, const struct sbx_catalog *cat,
			const struct sbx_profile *pr, bool deep, struct sbx_prepared *out,
			struct sbx_error *err);
void sbx_prepared_free(struct sbx_prepared *p);
/* What sbx check calls a refusal of sbx_prepared_lookup(): "missing",
 * "stale" (or tampered with) or "unusable" (someone else's, or below a
 * directory others may write). */
const char *sbx_prepared_verdict(const struct sbx_error *err);

/*
 * sbx_prepared_admit() - for `sbx run`: a profile without "prepare" is
 * left alone; one with it gets its tree in @plan, or the run is refused
 * (69) as sbx_prepared_lookup() says.
 */
int sbx_prepared_admit(struct sbx_plan *plan, const struct sbx_hostconfig *cfg,
		       const struct sbx_catalog *cat, struct sbx_error *err);

/* What `sbx run` does differently for `sbx prepare` (run.c). */
struct sbx_prepare_run {
	/* After admission: the plan's argv and env become the step's. */
	int (*admit)(struct sbx_prepare_run *pr, struct sbx_plan *plan, struct sbx_error *err);
	/* After a successful command: take the tree from the output root. */
	int (*take)(struct sbx_prepare_run *pr, int outroot_fd, struct sbx_error *err);
	/* Once the run ended with @code: @err (printed already) when sbx
	 * failed, else the payload's @reason ("" when it succeeded). */
	void (*ended)(struct sbx_prepare_run *pr, const struct sbx_error *err, int code,
		      const char *reason);
	void *ud;
};

struct sbx_common_opts;
/* `sbx prepare [PROFILE...]`: every profile with a prepare step when none
 * is named.  Returns the exit code. */
int sbx_cmd_prepare(const struct sbx_common_opts *o, char *const *names);

#endif
