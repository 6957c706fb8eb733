/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * template-life.h - starting a profile's template and finding it again
 * (template-life.c; sbx(1) TEMPLATES).
 */
#ifndef SBX_BROKER_TEMPLATE_LIFE_H
#define SBX_BROKER_TEMPLATE_LIFE_H

#include <stddef.h>

#include "catalog.h"
#include "cli.h"
#include "hostconfig.h"
#include "template.h"

/* Where a profile's template is, and what it is. */
struct sbx_template_place {
	char digest[17];
	char catalog_key[9];
	char *dir;          /* <state_dir>/templates */
	char *sock_path;
	char *record_path;  /* the .json beside the socket */
	char *binary;       /* sbx-template */
};

/*
 * sbx_template_locate() - the digest and the paths of @pr's template for
 * @cfg, @cat's directory and the prepared state @prepared_sha256 (NULL:
 * none).  Checks that the profile's interpreter is the one sbx-template
 * embeds.  0, or -1 with why not in @why (a reason for a cold run).
 */
int sbx_template_locate(const struct sbx_hostconfig *cfg, const struct sbx_catalog *cat,
			const struct sbx_profile *pr, const char *prepared_sha256,
			const char *state_dir, struct sbx_template_place *pl, char *why,
			size_t why_len);
void sbx_template_place_free(struct sbx_template_place *pl);

/*
 * sbx_template_start() - start @pr's template at @pl unless one answers
 * there already (under the profile's lock in the templates directory);
 * templates of the profile's other digests are stopped.  Waits until it
 * is ready (template_start_seconds at most).  @prepared_tree: the host
 * path of the profile's prepared tree, or NULL.  0, or -1 with why in
 * @why; nothing is left behind but the reason, in
 * sbx_template_failed_path().
 */
int sbx_template_start(const struct sbx_hostconfig *cfg, const struct sbx_catalog *cat,
		       const struct sbx_profile *pr, const char *prepared_tree,
		       const struct sbx_template_place *pl, char *why, size_t why_len);

/*
 * sbx_template_want() - for a run: 0 when a template answers at @pl.
 * Else -1 with why in @why, and the run starts cold: a template is
 * starting (the profile's lock is taken), or the last start failed less
 * than SBX_TEMPLATE_RETRY_SECONDS ago (its reason), or none was running
 * and one is now being started in the background, by `sbx template start`
 * with @o's --config and @cat's directory, for the runs after this one.
 * A run never waits for a template.
 */
int sbx_template_want(const struct sbx_common_opts *o, const struct sbx_catalog *cat,
		      const struct sbx_profile *pr, const struct sbx_template_place *pl,
		      char *why, size_t why_len);

/* How long runs report a failed start instead of retrying it (sbx
 * template start retries at once). */
#define SBX_TEMPLATE_RETRY_SECONDS 300

/* <dir>/<catalog>-<profile>.lock: held by whoever starts the profile's
 * template, until it answers or is gone. */
char *sbx_template_lock_path(const struct sbx_template_place *pl, const char *profile);
/* Whether a start of the profile of @name ("<catalog>-<profile>-
 * <digest>.sock" in @dir) is under way: its lock is taken. */
bool sbx_template_starting(const char *dir, const char *name);
/* <socket without .sock>.failed: why its last start failed. */
char *sbx_template_failed_path(const struct sbx_template_place *pl);

/*
 * sbx_template_gc() - for `sbx gc`: the records and sockets under
 * @state_dir/templates of templates that are gone, with their cgroups
 * (once empty).  A template that answers is left alone.  *@removed
 * counts the templates cleaned up.
 */
int sbx_template_gc(const char *state_dir, unsigned *removed);

#endif
