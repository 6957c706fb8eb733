/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * results.c - the results area: where a run without --artifacts keeps
 * what it produced, and its pruning by `sbx gc` (see results.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results.h"
#include "runid.h"
#include "state-internal.h"

/* Results younger than this are never pruned: their run may be writing
 * its captures into them right now. */
#define RESULTS_MIN_AGE_S 60

int sbx_results_area(const char *cfg_dir, char **out, struct sbx_error *err)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");

	if (cfg_dir) {
		*out = sbx_xstrdup(cfg_dir);
		return 0;
	}
	/* Root's results belong to the host, not to whatever HOME a sudo
	 * or a service manager left in the environment. */
	if (geteuid() == 0) {
		*out = sbx_xstrdup(LOCALSTATEDIR "/lib/sbx/runs");
		return 0;
	}
	/* The XDG spec says relative values are to be ignored. */
	if (xdg && xdg[0] == '/') {
		*out = sbx_xasprintf("%s/sbx/runs", xdg);
		return 0;
	}
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());

		home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
	}
	if (!home) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "results: no --artifacts, no $XDG_STATE_HOME and no home directory "
			      "for the results area");
		sbx_error_hint(err, "name a directory with --artifacts DIR, or \"results_dir\" in "
				    "the host config");
		return -1;
	}
	*out = sbx_xasprintf("%s/.local/state/sbx/runs", home);
	return 0;
}

/* mkdir -p: the area itself 0700, as results are the caller's alone;
 * missing directories above it (~/.local/state, /var/lib/sbx) 0755, as
 * the system or the user would make them. */
static int make_area(const char *area, struct sbx_error *err)
{
	_cleanup_free_ char *p = sbx_xstrdup(area);

	for (char *s = p + 1;; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, c ? 0755 : 0700) < 0 && errno != EEXIST) {
			sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "results: cannot create %s", p);
			sbx_error_hint(err, "name a directory with --artifacts DIR, or \"results_dir\" "
					    "in the host config");
			return -1;
		}
		*s = c;
		if (!c)
			return 0;
	}
}

int sbx_results_open(const struct sbx_run_opts *o, const char *run_id,
		     struct sbx_hostconfig *cfg, struct sbx_artifacts_dir *ad,
		     struct sbx_streams *st, struct sbx_error *err)
{
	const char *const files[_SBX_STREAM_MAX] = { o->stdout_file, o->stderr_file };
	_cleanup_free_ char *dir = NULL, *area = NULL;

	ad->base_fd = -1;
	for (int i = 0; i < _SBX_STREAM_MAX; i++)
		st->t[i] = (struct sbx_stream_target){ .dir_fd = -1 };
	if (o->artifacts)
		return sbx_artifacts_dir_open(o->artifacts, ad, err) < 0 ||
			       sbx_streams_open(st, files, ad, err) < 0 ||
			       sbx_hostconfig_load(cfg, o->common.config, err) < 0 ?
		       -1 : 0;
	if (sbx_hostconfig_load(cfg, o->common.config, err) < 0)
		return -1;
	if (o->artifacts_parent) {
		dir = sbx_xasprintf("%s/%s", o->artifacts_parent, run_id);
	} else {
		if (sbx_results_area(cfg->results_dir, &area, err) < 0 || make_area(area, err) < 0)
			return -1;
		dir = sbx_xasprintf("%s/%s", area, run_id);
	}
	return sbx_artifacts_dir_open(dir, ad, err) < 0 || sbx_streams_open(st, files, ad, err) < 0 ?
		       -1 : 0;
}

/* --- pruning ------------------------------------------------------------- */

struct kept {
	char name[SBX_RUN_ID_LEN + 1];
	int64_t mtime;
};

/* Newest first; run ids break ties (they begin with the time). */
static int newest_first(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? 1 : -1;
	return -strcmp(x->name, y->name);
}

/* Is @id a live run of @state_dir (its entry is there)? */
static bool live(const char *state_dir, const char *id)
{
	_cleanup_free_ char *p = NULL;
	struct stat st;

	if (!state_dir)
		return false;
	p = sbx_xasprintf("%s/runs/%s", state_dir, id);
	return lstat(p, &st) == 0;
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

int sbx_results_gc(const struct sbx_hostconfig *cfg, const char *state_dir, unsigned *pruned,
		   struct sbx_error *err)
{
	_cleanup_free_ char *area = NULL;
	_cleanup_free_ struct kept *v = NULL;
	_cleanup_close_ int area_fd = -1;
	_cleanup_(closedirp) DIR *d = NULL;
	size_t n = 0, cap = 0;
	int64_t now = (int64_t)(sbx_now_real_ms() / 1000u);
	int64_t max_age = (int64_t)cfg->results_max_age_hours * 3600;
	struct dirent *de;
	int dfd;

	*pruned = 0;
	if (sbx_results_area(cfg->results_dir, &area, err) < 0)
		return -1;
	area_fd = open(area, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (area_fd < 0)
		return errno == ENOENT ? 0 :
					 sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "gc: %s", area);
	dfd = fcntl(area_fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "gc: %s: cannot read", area);
	}
	while ((de = readdir(d))) {
		struct stat st;

		/* Only names sbx gives runs; anything else is not ours. */
		if (!sbx_run_id_valid(de->d_name) ||
		    fstatat(area_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || (st.st_uid != geteuid() && geteuid() != 0))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = sbx_xrealloc(v, cap * sizeof(*v));
		}
		memcpy(v[n].name, de->d_name, SBX_RUN_ID_LEN + 1);
		v[n++].mtime = (int64_t)st.st_mtime;
	}
	qsort(v, n, sizeof(*v), newest_first);
	for (size_t i = 0; i < n; i++) {
		int64_t age = now - v[i].mtime;

		if (i < cfg->results_max_count && age <= max_age)
			continue;
		if (age < RESULTS_MIN_AGE_S || live(state_dir, v[i].name))
			continue;
		if (sbx_state_remove_tree(area_fd, v[i].name) < 0) {
			sbx_warn("gc: %s/%s: cannot remove the results: %m", area, v[i].name);
			continue;
		}
		(*pruned)++;
	}
	return 0;
}
