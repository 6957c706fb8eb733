/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostconfig.c - the host configuration (SPEC §9).
 *
 * Reported like a catalog error (69): a typo in the operator's file must
 * stop sbx, not be ignored while a default quietly applies.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "hostconfig.h"
#include "json.h"

#define HOSTCONFIG_MAX_BYTES (64u * 1024)
#define HOSTCONFIG_PATH_MAX 4096

static const char *const config_keys[] = {
	"store", "policy", "signing_key", "state_dir", "cgroup_parent", "max_concurrent",
	"memory_budget_mib", "root_ids", "hold_dir", "hold_max_age_hours", "prepared_dir",
	"results_dir", "results_max_age_hours", "results_max_count", "fetch_cache_bytes",
	"templates", "template_idle_seconds", "template_max_runs", "template_max_seconds",
	"template_start_seconds", NULL,
};
static const char *const root_ids_keys[] = { "first", "count", NULL };

/*
 * "root_ids": {"first": N, "count": M}, both required.  The range must
 * stay clear of 0, nobody (65534) and 16-bit -1 (65535), and below 2^31;
 * whether it owns anything on this host is checked by the run (rootids.c),
 * since accounts come and go after the file is written.
 */
static int get_root_ids(const struct sbx_jctx *c, const json_t *root, struct sbx_hostconfig *cfg)
{
	const json_t *v = json_object_get(root, "root_ids"), *f, *n;
	uint64_t first, count;

	cfg->root_ids_first = SBX_ROOT_IDS_FIRST_DEFAULT;
	cfg->root_ids_count = SBX_ROOT_IDS_COUNT_DEFAULT;
	if (!v)
		return 0;
	if (sbx_json_object(c, "root_ids", v) < 0 ||
	    sbx_json_check_keys(c, "root_ids", v, root_ids_keys) < 0 ||
	    !(f = sbx_json_required(c, "root_ids", v, "first")) ||
	    !(n = sbx_json_required(c, "root_ids", v, "count")) ||
	    sbx_json_uint(c, "root_ids.first", f, 1, SBX_ROOT_IDS_END_MAX - 1, &first) < 0 ||
	    sbx_json_uint(c, "root_ids.count", n, 1, SBX_ROOT_IDS_COUNT_MAX, &count) < 0)
		return -1;
	if (first + count > SBX_ROOT_IDS_END_MAX)
		return sbx_json_error(c, "root_ids", "the range %llu-%llu reaches 2^31",
				      (unsigned long long)first,
				      (unsigned long long)(first + count - 1));
	if (first <= 65535 && first + count > 65534)
		return sbx_json_error(c, "root_ids",
				      "the range %llu-%llu holds 65534 (nobody) or 65535",
				      (unsigned long long)first,
				      (unsigned long long)(first + count - 1));
	cfg->root_ids_first = (uint32_t)first;
	cfg->root_ids_count = (uint32_t)count;
	return 0;
}

/* Absolute, normal form: relative paths would depend on the caller's cwd,
 * and "." / ".." / "//" make two spellings of one place. */
static bool config_path_valid(const char *s)
{
	return sbx_path_normal_absolute(s, HOSTCONFIG_PATH_MAX, true);
}

static int get_path(const struct sbx_jctx *c, const json_t *root, const char *key, char **out)
{
	const json_t *v = json_object_get(root, key);

	if (!v)
		return 0;
	if (sbx_json_string(c, key, v, HOSTCONFIG_PATH_MAX, NULL) < 0)
		return -1;
	if (!config_path_valid(json_string_value(v)))
		return sbx_json_expected(c, key, v, "an absolute path in normal form");
	*out = sbx_xstrdup(json_string_value(v));
	return 0;
}

/* How much of the results area sbx gc keeps; bounds against nonsense. */
static int results_limits(const struct sbx_jctx *c, const json_t *root, struct sbx_hostconfig *cfg)
{
	const json_t *v;

	cfg->results_max_age_hours = SBX_RESULTS_MAX_AGE_HOURS_DEFAULT;
	cfg->results_max_count = SBX_RESULTS_MAX_COUNT_DEFAULT;
	if ((v = json_object_get(root, "results_max_age_hours")) &&
	    sbx_json_uint(c, "results_max_age_hours", v, 1, SBX_HOLD_MAX_AGE_HOURS_MAX,
			  &cfg->results_max_age_hours) < 0)
		return -1;
	if ((v = json_object_get(root, "results_max_count")) &&
	    sbx_json_uint(c, "results_max_count", v, 1, SBX_RESULTS_MAX_COUNT_MAX,
			  &cfg->results_max_count) < 0)
		return -1;
	return 0;
}

/* The keys of every profile's template (sbx(1) TEMPLATES).  The upper
 * bounds are what the trade documented there stays honest under: a
 * template's hash secret and memory layout are shared by at most
 * template_max_runs runs over at most template_max_seconds. */
static int template_keys(const struct sbx_jctx *c, const json_t *root, struct sbx_hostconfig *cfg)
{
	const json_t *v;

	if ((v = json_object_get(root, "templates")) &&
	    sbx_json_bool(c, "templates", v, &cfg->templates) < 0)
		return -1;
	if ((v = json_object_get(root, "template_idle_seconds")) &&
	    sbx_json_uint(c, "template_idle_seconds", v, 1, SBX_TEMPLATE_IDLE_SECONDS_MAX,
			  &cfg->template_idle_seconds) < 0)
		return -1;
	if ((v = json_object_get(root, "template_max_runs")) &&
	    sbx_json_uint(c, "template_max_runs", v, 1, SBX_TEMPLATE_MAX_RUNS_MAX,
			  &cfg->template_max_runs) < 0)
		return -1;
	if ((v = json_object_get(root, "template_max_seconds")) &&
	    sbx_json_uint(c, "template_max_seconds", v, 1, SBX_TEMPLATE_MAX_SECONDS_MAX,
			  &cfg->template_max_seconds) < 0)
		return -1;
	if ((v = json_object_get(root, "template_start_seconds")) &&
	    sbx_json_uint(c, "template_start_seconds", v, 1, SBX_TEMPLATE_START_SECONDS_MAX,
			  &cfg->template_start_seconds) < 0)
		return -1;
	return 0;
}

/* What a configuration without the key means. */
static void set_defaults(struct sbx_hostconfig *cfg)
{
	cfg->root_ids_first = SBX_ROOT_IDS_FIRST_DEFAULT;
	cfg->root_ids_count = SBX_ROOT_IDS_COUNT_DEFAULT;
	cfg->hold_max_age_hours = SBX_HOLD_MAX_AGE_HOURS_DEFAULT;
	cfg->results_max_age_hours = SBX_RESULTS_MAX_AGE_HOURS_DEFAULT;
	cfg->results_max_count = SBX_RESULTS_MAX_COUNT_DEFAULT;
	cfg->templates = true;
	cfg->template_idle_seconds = SBX_TEMPLATE_IDLE_SECONDS_DEFAULT;
	cfg->template_max_runs = SBX_TEMPLATE_MAX_RUNS_DEFAULT;
	cfg->template_max_seconds = SBX_TEMPLATE_MAX_SECONDS_DEFAULT;
	cfg->template_start_seconds = SBX_TEMPLATE_START_SECONDS_DEFAULT;
	cfg->fetch_cache_bytes = SBX_FETCH_CACHE_BYTES_DEFAULT;
}

int sbx_hostconfig_parse(struct sbx_hostconfig *cfg, const char *source, const char *data,
			 size_t len, struct sbx_error *err)
{
	struct sbx_jctx c = { .source = source, .code = SBX_EXIT_UNAVAILABLE, .err = err };
	_cleanup_json_ json_t *root = NULL;
	const json_t *v;

	memset(cfg, 0, sizeof(*cfg));
	set_defaults(cfg);
	cfg->file = sbx_xstrdup(source);
	root = sbx_json_parse(&c, data, len);
	if (!root)
		goto fail;
	if (sbx_json_check_keys(&c, "", root, config_keys) < 0 ||
	    get_path(&c, root, "store", &cfg->store) < 0 ||
	    get_path(&c, root, "policy", &cfg->policy) < 0 ||
	    get_path(&c, root, "signing_key", &cfg->signing_key) < 0 ||
	    get_path(&c, root, "state_dir", &cfg->state_dir) < 0 ||
	    get_path(&c, root, "prepared_dir", &cfg->prepared_dir) < 0 ||
	    get_path(&c, root, "cgroup_parent", &cfg->cgroup_parent) < 0 ||
	    get_path(&c, root, "hold_dir", &cfg->hold_dir) < 0 ||
	    get_path(&c, root, "results_dir", &cfg->results_dir) < 0 ||
	    get_root_ids(&c, root, cfg) < 0)
		goto fail;
	/* Bounds only against nonsense; the admission code decides what a
	 * budget means on this machine. */
	if ((v = json_object_get(root, "max_concurrent")) &&
	    sbx_json_uint(&c, "max_concurrent", v, 1, 4096, &cfg->max_concurrent) < 0)
		goto fail;
	if ((v = json_object_get(root, "memory_budget_mib")) &&
	    sbx_json_uint(&c, "memory_budget_mib", v, 1, 1u << 30, &cfg->memory_budget_mib) < 0)
		goto fail;
	cfg->fetch_cache_bytes = SBX_FETCH_CACHE_BYTES_DEFAULT;
	if ((v = json_object_get(root, "fetch_cache_bytes"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > (json_int_t)1 << 50) {
			sbx_json_expected(&c, "fetch_cache_bytes", v,
					  "an integer from 0 (no cache) to 2^50");
			goto fail;
		}
		cfg->fetch_cache_bytes = (uint64_t)json_integer_value(v);
	}
	cfg->hold_max_age_hours = SBX_HOLD_MAX_AGE_HOURS_DEFAULT;
	if ((v = json_object_get(root, "hold_max_age_hours")) &&
	    sbx_json_uint(&c, "hold_max_age_hours", v, 1, SBX_HOLD_MAX_AGE_HOURS_MAX,
			  &cfg->hold_max_age_hours) < 0)
		goto fail;
	if (results_limits(&c, root, cfg) < 0 || template_keys(&c, root, cfg) < 0)
		goto fail;
	return 0;
fail:
	sbx_hostconfig_free(cfg);
	return -1;
}

/*
 * The user's own file: $XDG_CONFIG_HOME/sbx/sbx.json, else
 * ~/.config/sbx/sbx.json; NULL for root (whose runs are the host's, set
 * up in the system file, whatever HOME a sudo left behind) and without a
 * home.
 */
char *sbx_hostconfig_user_file(void)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

	if (geteuid() == 0)
		return NULL;
	/* The XDG spec says relative values are to be ignored. */
	if (xdg && xdg[0] == '/')
		return sbx_xasprintf("%s/sbx/sbx.json", xdg);
	if (home && home[0] == '/')
		return sbx_xasprintf("%s/.config/sbx/sbx.json", home);
	return NULL;
}

/* An optional file: absent is no error, but one that exists and cannot
 * be read is, never a silent fall back to defaults.  lstat: a symlink
 * is there, and is read (and refused if dangling). */
static bool present(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 || errno != ENOENT;
}

int sbx_hostconfig_load(struct sbx_hostconfig *cfg, const char *path, struct sbx_error *err)
{
	static const char system_file[] = SYSCONFDIR "/sbx/sbx.json";
	_cleanup_free_ char *data = NULL, *user = sbx_hostconfig_user_file(), *note = NULL;
	const char *env = getenv("SBX_CONFIG"), *origin = "--config";
	size_t len = 0;

	memset(cfg, 0, sizeof(*cfg));
	set_defaults(cfg);
	/* --config, $SBX_CONFIG, the user's file, the system file: the first
	 * that is named or exists is the whole configuration (sbx(1)). */
	if (!path && env && *env) {
		path = env;
		origin = "$SBX_CONFIG";
	}
	if (!path && user && present(user)) {
		path = user;
		origin = "the user's file";
	}
	if (!path && present(system_file)) {
		path = system_file;
		origin = "the system file";
	}
	if (!path) {
		cfg->origin = "none";
		note = sbx_xasprintf("no host config file was read; create %s",
				     user ? user : system_file);
		sbx_error_config_note(note);
		return 0;
	}
	cfg->origin = origin;
	note = sbx_xasprintf("the host config is %s", path);
	sbx_error_config_note(note);
	if (sbx_json_read(path, HOSTCONFIG_MAX_BYTES, SBX_EXIT_UNAVAILABLE, &data, &len, err) < 0)
		return -1;
	if (sbx_hostconfig_parse(cfg, path, data, len, err) < 0)
		return -1;
	cfg->origin = origin;
	return 0;
}

void sbx_hostconfig_free(struct sbx_hostconfig *cfg)
{
	if (!cfg)
		return;
	free(cfg->file);
	free(cfg->store);
	free(cfg->policy);
	free(cfg->signing_key);
	free(cfg->state_dir);
	free(cfg->prepared_dir);
	free(cfg->cgroup_parent);
	free(cfg->hold_dir);
	free(cfg->results_dir);
	memset(cfg, 0, sizeof(*cfg));
}
