/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * results.h - where a run keeps its results when the caller names no
 * --artifacts directory, and how `sbx gc` prunes them.
 *
 * The results area is a per-user place, never the working directory:
 * the host config's "results_dir", else $XDG_STATE_HOME/sbx/runs
 * (~/.local/state/sbx/runs) for an ordinary user, and
 * LOCALSTATEDIR/lib/sbx/runs for root.  A run's results are
 * AREA/<run_id>/: its promoted artifacts and .sbx/stdout, .sbx/stderr.
 * The directory is made only when there is something to keep, so a run
 * without outputs that printed nothing leaves nothing anywhere.
 *
 * `sbx batch --artifacts DIR` and a run without --artifacts both use
 * PARENT/<run_id>; `sbx run --artifacts DIR` names the run's directory
 * itself (sbx(1)).
 */
#ifndef SBX_RESULTS_H
#define SBX_RESULTS_H

#include "cli.h"
#include "collect.h"
#include "error.h"
#include "hostconfig.h"
#include "streams.h"

/*
 * sbx_results_area() - the results area's path, newly allocated, as
 * above, with @cfg_dir the host config's "results_dir" (may be NULL).
 * Errors: SBX_EXIT_UNAVAILABLE when an ordinary user has no home
 * directory and no $XDG_STATE_HOME, with a Hint.
 */
int sbx_results_area(const char *cfg_dir, char **out, struct sbx_error *err);

/*
 * sbx_results_open() - the start of `sbx run`: --artifacts DIR, --stdout
 * and --stderr, and the host config into @cfg.  With --artifacts, DIR is
 * checked first (a usage error, 64, comes before the config's 69), as
 * before; without, the config is read first, since it may name the
 * results area, and the run's directory is AREA/<@run_id> (the area made
 * 0700 if missing; the run's own directory only when there is something
 * to keep).  @ad, @st and @cfg are set up to be released also on error.
 */
int sbx_results_open(const struct sbx_run_opts *o, const char *run_id,
		     struct sbx_hostconfig *cfg, struct sbx_artifacts_dir *ad,
		     struct sbx_streams *st, struct sbx_error *err);

/*
 * sbx_results_gc() - prune the results area: every AREA/<run_id> (a name
 * sbx gives, owned by the caller, or any as root) whose directory was
 * last changed more than results_max_age_hours ago, then the oldest
 * beyond results_max_count.  A run still live in @state_dir (its entry
 * exists) and results younger than a minute are never touched.  *@pruned
 * gets the count.  A missing area is not an error.
 */
int sbx_results_gc(const struct sbx_hostconfig *cfg, const char *state_dir, unsigned *pruned,
		   struct sbx_error *err);

#endif
