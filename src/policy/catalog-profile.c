/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog-profile.c - parse one runtime profile, DIR/profiles/NAME.json
 * (format in sbx-policy(5)): the interpreter's argv, the host paths bound
 * into the sandbox and the symlinks beside them, the environment, the
 * limits with their defaults, minimums and maximums, the media types a
 * run may return and the kernel quotas.
 *
 * Kept apart from the loader (catalog.c), which calls parse_profile() for
 * each file of DIR/profiles and checks its references to the other kinds
 * once all are loaded: what is checked here is the profile on its own,
 * above all that no bind or symlink lands on a path sbx builds itself.
 * The media types sbx validates are listed here too, as a profile's
 * "allowed_outputs" is where the catalog names them.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "catalog-internal.h"
#include "job.h"
#include "mediatype.h"

#define CATALOG_PATH_MAX 4096

bool sbx_media_type_known(const char *type)
{
	return sbx_media_type_static(type) != NULL;
}

/* An absolute path in normal form: "/a/b", no "//", ".", "..", trailing
 * '/' or control characters, and not "/" itself.  Binds and symlinks are
 * created from these strings, so there must be one spelling per path. */
static bool abs_path_valid(const char *s)
{
	return sbx_path_normal_absolute(s, CATALOG_PATH_MAX, false);
}

static bool path_is_or_under(const char *path, const char *top)
{
	size_t n = strlen(top);
	return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Places sbx builds itself inside the sandbox (SPEC §5); a profile bind or
 * symlink there would hide or replace them. */
static bool path_reserved(const char *path)
{
	static const char *const trees[] = { "/work", "/tmp", "/proc", "/dev", "/sys" };
	static const char *const files[] = { "/etc", "/etc/passwd", "/etc/group", "/etc/hosts",
					     "/etc/resolv.conf", "/etc/nsswitch.conf" };

	for (size_t i = 0; i < ARRAY_SIZE(trees); i++)
		if (path_is_or_under(path, trees[i]))
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if (strcmp(path, files[i]) == 0)
			return true;
	return false;
}

/* ^[A-Za-z_][A-Za-z0-9_]{0,127}$ */

/* A job-settable variable may not steer the dynamic loader: with LD_PRELOAD
 * the payload's own library would run inside every binary of the profile,
 * which is harmless inside the sandbox but makes the profile's interpreter
 * no longer the one the operator chose. */
static bool env_allow_valid(const char *s)
{
	return sbx_env_name_valid(s) && strncmp(s, "LD_", 3) != 0;
}

static bool media_type_valid(const char *s)
{
	return sbx_media_type_known(s);
}

/* The types whose validators flag active_content. */
static bool active_type_valid(const char *s)
{
	return !strcmp(s, "text/html") || !strcmp(s, "text/markdown");
}

static const char *const profile_keys[] = {
	"description", "argv", "code_file", "binds", "symlinks", "env", "env_allow", "seccomp",
	"defaults", "minimums", "maximums", "input_bytes_max", "stream_bytes_max",
	"allowed_outputs", "network_profiles", "kernel_quotas", "workspace_exec", "thread_env",
	"validate_seconds", "refuse_active_content",
	"prepare", "fetch_profiles", "template", NULL,
};

/*
 * kernel_quotas: each key optional, with the default below.  The defaults
 * leave a payload what ordinary programs use (a few inotify instances, a
 * POSIX timer or queued signal here and there, a little locked memory)
 * and nothing of the rest: no fanotify, no POSIX message queue.  The
 * upper bounds keep one run from claiming what it is meant not to.
 */
static const struct {
	const char *key;
	size_t off;
	uint64_t def, max;
} quota_keys[] = {
#define Q(k, d, m) { #k, offsetof(struct sbx_kernel_quotas, k), d, m }
	Q(inotify_instances, 16, 1024),
	Q(inotify_watches, 1024, 1048576),
	Q(fanotify_groups, 0, 128),
	Q(fanotify_marks, 0, 1048576),
	Q(sigpending, 128, 65536),
	Q(msgqueue_bytes, 0, UINT64_C(1) << 30),
	Q(memlock_bytes, 65536, UINT64_C(1) << 30),
#undef Q
};

static int parse_quotas(const struct sbx_jctx *c, const json_t *v, struct sbx_kernel_quotas *q)
{
	const char *keys[ARRAY_SIZE(quota_keys) + 1];

	for (size_t i = 0; i < ARRAY_SIZE(quota_keys); i++) {
		*(uint64_t *)((char *)q + quota_keys[i].off) = quota_keys[i].def;
		keys[i] = quota_keys[i].key;
	}
	keys[ARRAY_SIZE(quota_keys)] = NULL;
	if (!v)
		return 0;
	if (sbx_json_check_keys(c, "kernel_quotas", v, keys) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(quota_keys); i++) {
		const json_t *f = json_object_get(v, quota_keys[i].key);
		char p[SBX_JSON_PATH_MAX];

		if (!f)
			continue;
		sbx_json_path_key(p, "kernel_quotas", quota_keys[i].key);
		if (sbx_json_uint(c, p, f, 0, quota_keys[i].max,
				  (uint64_t *)((char *)q + quota_keys[i].off)) < 0)
			return -1;
	}
	return 0;
}

static int parse_argv(const struct sbx_jctx *c, const json_t *v, char ***out)
{
	_cleanup_strv_free_ char **argv = NULL;
	size_t n_code = 0, n_args = 0;

	if (sbx_json_strv(c, "argv", v, 64, CATALOG_PATH_MAX, NULL, NULL, false, &argv) < 0)
		return -1;
	if (!argv[0])
		return sbx_json_error(c, "argv", "expected at least the interpreter");
	if (!abs_path_valid(argv[0]))
		return sbx_json_expected(c, "argv[0]", json_array_get(v, 0),
					 "an absolute path in normal form");
	for (size_t i = 0; argv[i]; i++) {
		char p[SBX_JSON_PATH_MAX];

		sbx_json_path_index(p, "argv", i);
		/* Placeholders are whole arguments only: "{args}" becomes any
		 * number of arguments, so splicing it into a word would have
		 * no sane meaning, and a half-placeholder is a typo. */
		if (strcmp(argv[i], "{code}") == 0)
			n_code++;
		else if (strcmp(argv[i], "{args}") == 0)
			n_args++;
		else if (strstr(argv[i], "{code}") || strstr(argv[i], "{args}"))
			return sbx_json_error(c, p, "placeholders must be whole arguments");
	}
	if (n_code != 1)
		return sbx_json_error(c, "argv", "expected \"{code}\" exactly once, got %zu", n_code);
	if (n_args > 1)
		return sbx_json_error(c, "argv", "expected \"{args}\" at most once, got %zu", n_args);
	*out = TAKE_PTR(argv);
	return 0;
}

static int parse_binds(const struct sbx_jctx *c, const json_t *v, struct sbx_profile *pr)
{
	static const char *const bind_keys[] = { "src", "dst", "optional", NULL };

	if (!v)
		return 0;
	if (sbx_json_array(c, "binds", v, CATALOG_MAX_ENTRIES) < 0)
		return -1;
	pr->binds = sbx_xcalloc(json_array_size(v), sizeof(*pr->binds));
	for (size_t i = 0; i < json_array_size(v); i++) {
		const json_t *e = json_array_get(v, i), *f;
		struct sbx_bind *b = &pr->binds[i];
		char p[SBX_JSON_PATH_MAX], q[SBX_JSON_PATH_MAX];

		sbx_json_path_index(p, "binds", i);
		pr->n_binds = i + 1;
		if (json_is_string(e)) {
			/* Shorthand: "/usr" binds /usr at /usr, required. */
			if (sbx_json_string(c, p, e, CATALOG_PATH_MAX, &b->src) < 0)
				return -1;
			if (!abs_path_valid(b->src))
				return sbx_json_expected(c, p, e, "an absolute path in normal form");
			strcpy(q, p);
		} else {
			if (sbx_json_check_keys(c, p, e, bind_keys) < 0)
				return -1;
			if (!(f = sbx_json_required(c, p, e, "src")))
				return -1;
			sbx_json_path_key(q, p, "src");
			if (sbx_json_string(c, q, f, CATALOG_PATH_MAX, &b->src) < 0)
				return -1;
			if (!abs_path_valid(b->src))
				return sbx_json_expected(c, q, f, "an absolute path in normal form");
			if ((f = json_object_get(e, "dst"))) {
				sbx_json_path_key(q, p, "dst");
				if (sbx_json_string(c, q, f, CATALOG_PATH_MAX, &b->dst) < 0)
					return -1;
				if (!abs_path_valid(b->dst))
					return sbx_json_expected(c, q, f,
								 "an absolute path in normal form");
			}
			if ((f = json_object_get(e, "optional"))) {
				char r[SBX_JSON_PATH_MAX];
				sbx_json_path_key(r, p, "optional");
				if (sbx_json_bool(c, r, f, &b->optional) < 0)
					return -1;
			}
			if (!b->dst)
				strcpy(q, p);
		}
		if (!b->dst)
			b->dst = sbx_xstrdup(b->src);
		if (path_reserved(b->dst))
			return sbx_json_error(c, q, "%s is built by sbx itself and cannot be bound",
					      b->dst);
		for (size_t k = 0; k < i; k++)
			if (strcmp(pr->binds[k].dst, b->dst) == 0)
				return sbx_json_error(c, q, "%s is bound twice", b->dst);
	}
	return 0;
}

static int parse_symlinks(const struct sbx_jctx *c, const json_t *v, struct sbx_profile *pr)
{
	static const char *const link_keys[] = { "path", "target", NULL };

	if (!v)
		return 0;
	if (sbx_json_array(c, "symlinks", v, CATALOG_MAX_ENTRIES) < 0)
		return -1;
	pr->symlinks = sbx_xcalloc(json_array_size(v), sizeof(*pr->symlinks));
	for (size_t i = 0; i < json_array_size(v); i++) {
		const json_t *e = json_array_get(v, i), *f;
		struct sbx_symlink *l = &pr->symlinks[i];
		char p[SBX_JSON_PATH_MAX], q[SBX_JSON_PATH_MAX];

		sbx_json_path_index(p, "symlinks", i);
		pr->n_symlinks = i + 1;
		if (sbx_json_check_keys(c, p, e, link_keys) < 0)
			return -1;
		if (!(f = sbx_json_required(c, p, e, "path")))
			return -1;
		sbx_json_path_key(q, p, "path");
		if (sbx_json_string(c, q, f, CATALOG_PATH_MAX, &l->path) < 0)
			return -1;
		if (!abs_path_valid(l->path))
			return sbx_json_expected(c, q, f, "an absolute path in normal form");
		if (path_reserved(l->path))
			return sbx_json_error(c, q, "%s is built by sbx itself", l->path);
		for (size_t k = 0; k < pr->n_binds; k++)
			if (path_is_or_under(l->path, pr->binds[k].dst))
				return sbx_json_error(c, q, "%s is inside the bind of %s", l->path,
						      pr->binds[k].dst);
		if (!(f = sbx_json_required(c, p, e, "target")))
			return -1;
		sbx_json_path_key(q, p, "target");
		if (sbx_json_string(c, q, f, CATALOG_PATH_MAX, &l->target) < 0)
			return -1;
		/* Relative ("usr/bin") or absolute; it is resolved inside
		 * the sandbox's root, so it cannot point at the host. */
		if (!l->target[0] || sbx_has_control(l->target, strlen(l->target)))
			return sbx_json_expected(c, q, f, "a non-empty link target");
	}
	return 0;
}

static int parse_profile_env(const struct sbx_jctx *c, const json_t *v, char ***out)
{
	return sbx_json_env(c, "env", v, CATALOG_MAX_ENTRIES, 4096, out);
}

static bool abs_path_ok(const char *s)
{
	return abs_path_valid(s);
}

/*
 * "prepare": the trusted command that builds the profile's prepared tree
 * (sbx-policy(5)).  What is checked here is what makes the tree safe to
 * use in every run: its mount point is a place of its own (not one sbx
 * builds, not inside a bind), and the seed lands in the workspace, the
 * only place a run may write.
 */
static int parse_prepare(const struct sbx_jctx *c, const json_t *v, struct sbx_profile *pr)
{
	static const char *const keys[] = { "argv", "env", "network_profile", "inputs",
					    "timeout_seconds", "mount", "seed", NULL };
	static const char *const seed_keys[] = { "src", "dst", NULL };
	struct sbx_prepare *pp;
	const json_t *f;

	if (!v)
		return 0;
	if (sbx_json_check_keys(c, "prepare", v, keys) < 0)
		return -1;
	pp = pr->prepare = sbx_xcalloc(1, sizeof(*pp));
	if (!(f = sbx_json_required(c, "prepare", v, "argv")) ||
	    sbx_json_strv(c, "prepare.argv", f, 64, CATALOG_PATH_MAX, NULL, NULL, false,
			  &pp->argv) < 0)
		return -1;
	if (!pp->argv[0])
		return sbx_json_error(c, "prepare.argv", "expected at least the program");
	if (!abs_path_valid(pp->argv[0]))
		return sbx_json_expected(c, "prepare.argv[0]", json_array_get(f, 0),
					 "an absolute path in normal form");
	if (sbx_json_env(c, "prepare.env", json_object_get(v, "env"), CATALOG_MAX_ENTRIES, 4096,
			 &pp->env) < 0)
		return -1;
	if ((f = json_object_get(v, "network_profile"))) {
		bool listed = false;

		if (sbx_json_string(c, "prepare.network_profile", f, 64, &pp->network) < 0)
			return -1;
		for (size_t i = 0; pr->network_profiles[i]; i++)
			listed |= strcmp(pr->network_profiles[i], pp->network) == 0;
		if (!listed)
			return sbx_json_error(c, "prepare.network_profile",
					      "\"%s\" is not one of network_profiles", pp->network);
	}
	if (!(f = json_object_get(v, "inputs")))
		pp->inputs = sbx_xcalloc(1, sizeof(char *));
	else if (sbx_json_strv(c, "prepare.inputs", f, CATALOG_MAX_ENTRIES, CATALOG_PATH_MAX,
			       abs_path_ok, "an absolute path in normal form", true,
			       &pp->inputs) < 0)
		return -1;
	/* The command's wall_seconds: a job's rules, so within the maximum. */
	pp->timeout_seconds = pr->maximums.v[SBX_LIMIT_WALL_SECONDS] < 600 ?
				      pr->maximums.v[SBX_LIMIT_WALL_SECONDS] : 600;
	if ((f = json_object_get(v, "timeout_seconds")) &&
	    sbx_json_uint(c, "prepare.timeout_seconds", f, 1,
			  pr->maximums.v[SBX_LIMIT_WALL_SECONDS], &pp->timeout_seconds) < 0)
		return -1;
	if (!(f = sbx_json_required(c, "prepare", v, "mount")) ||
	    sbx_json_string(c, "prepare.mount", f, SBX_SPEC_PATH_MAX - 1, &pp->mount) < 0)
		return -1;
	if (!abs_path_valid(pp->mount))
		return sbx_json_expected(c, "prepare.mount", f, "an absolute path in normal form");
	if (path_reserved(pp->mount))
		return sbx_json_error(c, "prepare.mount", "%s is built by sbx itself", pp->mount);
	for (size_t i = 0; i < pr->n_binds; i++)
		if (path_is_or_under(pp->mount, pr->binds[i].dst) ||
		    path_is_or_under(pr->binds[i].dst, pp->mount))
			return sbx_json_error(c, "prepare.mount", "%s overlaps the bind of %s",
					      pp->mount, pr->binds[i].dst);
	for (size_t i = 0; i < pr->n_symlinks; i++)
		if (path_is_or_under(pp->mount, pr->symlinks[i].path) ||
		    path_is_or_under(pr->symlinks[i].path, pp->mount))
			return sbx_json_error(c, "prepare.mount", "%s overlaps the symlink %s",
					      pp->mount, pr->symlinks[i].path);
	if ((f = json_object_get(v, "seed"))) {
		const json_t *g;

		if (sbx_json_check_keys(c, "prepare.seed", f, seed_keys) < 0)
			return -1;
		if (!(g = sbx_json_required(c, "prepare.seed", f, "src")) ||
		    sbx_json_string(c, "prepare.seed.src", g, 64, &pp->seed_src) < 0)
			return -1;
		/* One directory at the top of the tree: a plain name. */
		if (!sbx_handle_name_valid(pp->seed_src))
			return sbx_json_expected(c, "prepare.seed.src", g,
						 "a directory name matching [A-Za-z0-9][A-Za-z0-9_.-]{0,63}");
		if (!(g = sbx_json_required(c, "prepare.seed", f, "dst")) ||
		    sbx_json_string(c, "prepare.seed.dst", g, SBX_SPEC_PATH_MAX - 1,
				    &pp->seed_dst) < 0)
			return -1;
		/* Into the workspace, and not over what sbx puts there. */
		if (!abs_path_valid(pp->seed_dst) ||
		    !((path_is_or_under(pp->seed_dst, "/tmp") || path_is_or_under(pp->seed_dst, "/work")) &&
		      strcmp(pp->seed_dst, "/tmp") && strcmp(pp->seed_dst, "/work") &&
		      !path_is_or_under(pp->seed_dst, "/work/in") &&
		      !path_is_or_under(pp->seed_dst, "/work/out")))
			return sbx_json_expected(c, "prepare.seed.dst", g,
						 "a path below /tmp or /work (not /work/in, /work/out)");
	}
	return 0;
}

int parse_profile(const struct sbx_jctx *c, const json_t *root, struct sbx_profile *pr)
{
	const json_t *v;
	char **cat_name = NULL;

	if (sbx_json_check_keys(c, "", root, profile_keys) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "description")) ||
	    sbx_json_string(c, "description", v, 1024, &pr->description) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "argv")) || parse_argv(c, v, &pr->argv) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "code_file")) ||
	    sbx_json_string(c, "code_file", v, 64, &pr->code_file) < 0)
		return -1;
	/* A plain file name in /work, not one of the directories sbx makes. */
	if (!sbx_handle_name_valid(pr->code_file) || strcmp(pr->code_file, "in") == 0 ||
	    strcmp(pr->code_file, "out") == 0)
		return sbx_json_expected(c, "code_file", v,
					 "a file name matching [A-Za-z0-9][A-Za-z0-9_.-]{0,63}, "
					 "not \"in\" or \"out\"");
	if (parse_binds(c, json_object_get(root, "binds"), pr) < 0 ||
	    parse_symlinks(c, json_object_get(root, "symlinks"), pr) < 0 ||
	    parse_profile_env(c, json_object_get(root, "env"), &pr->env) < 0)
		return -1;
	v = json_object_get(root, "env_allow");
	if (v) {
		if (sbx_json_strv(c, "env_allow", v, CATALOG_MAX_ENTRIES, 128, env_allow_valid,
				  "a variable name not starting with LD_", true, &pr->env_allow) < 0)
			return -1;
	} else {
		pr->env_allow = sbx_xcalloc(1, sizeof(char *));
	}
	if (!(v = sbx_json_required(c, "", root, "seccomp")) ||
	    sbx_json_string(c, "seccomp", v, 64, &pr->seccomp) < 0)
		return -1;
	if (!sbx_catalog_name_valid(pr->seccomp))
		return sbx_json_expected(c, "seccomp", v, "a catalog name");

	if (!(v = sbx_json_required(c, "", root, "defaults")) ||
	    sbx_limits_parse(c, "defaults", v, true, &pr->defaults) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "minimums")) ||
	    sbx_limits_parse(c, "minimums", v, true, &pr->minimums) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "maximums")) ||
	    sbx_limits_parse(c, "maximums", v, true, &pr->maximums) < 0)
		return -1;
	for (size_t i = 0; i < _SBX_LIMIT_MAX; i++) {
		char p[SBX_JSON_PATH_MAX], a[32], b[32];
		uint64_t lo = pr->minimums.v[i], def = pr->defaults.v[i], hi = pr->maximums.v[i];
		enum sbx_limit_id id = (enum sbx_limit_id)i;

		if (lo > hi) {
			sbx_json_path_key(p, "minimums", sbx_limit_table[i].key);
			sbx_limit_format(id, lo, a, sizeof(a));
			sbx_limit_format(id, hi, b, sizeof(b));
			return sbx_json_error(c, p, "%s is above maximums.%s (%s)", a,
					      sbx_limit_table[i].key, b);
		}
		sbx_json_path_key(p, "defaults", sbx_limit_table[i].key);
		sbx_limit_format(id, def, a, sizeof(a));
		if (def > hi) {
			sbx_limit_format(id, hi, b, sizeof(b));
			return sbx_json_error(c, p, "%s is above maximums.%s (%s)", a,
					      sbx_limit_table[i].key, b);
		}
		if (def < lo) {
			sbx_limit_format(id, lo, b, sizeof(b));
			return sbx_json_error(c, p, "%s is below minimums.%s (%s)", a,
					      sbx_limit_table[i].key, b);
		}
	}

	if (!(v = sbx_json_required(c, "", root, "input_bytes_max")) ||
	    sbx_json_uint(c, "input_bytes_max", v, 1, UINT64_C(1) << 40, &pr->input_bytes_max) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "stream_bytes_max")) ||
	    sbx_json_uint(c, "stream_bytes_max", v, 1, UINT64_C(1) << 30,
			  &pr->stream_bytes_max) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "allowed_outputs")) ||
	    sbx_json_strv(c, "allowed_outputs", v, SBX_MEDIA_TYPE_COUNT, 128, media_type_valid,
			  "a media type sbx validates", true, &pr->allowed_outputs) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "network_profiles")) ||
	    sbx_json_strv(c, "network_profiles", v, CATALOG_MAX_FILES, 64, sbx_catalog_name_valid,
			  "a catalog name", true, &cat_name) < 0)
		return -1;
	pr->network_profiles = cat_name;
	if (!cat_name[0])
		return sbx_json_error(c, "network_profiles", "expected at least one network profile");
	/* The fetch profiles its jobs may name; none unless listed. */
	if ((v = json_object_get(root, "fetch_profiles"))) {
		if (sbx_json_strv(c, "fetch_profiles", v, CATALOG_MAX_FILES, 64,
				  sbx_catalog_name_valid, "a catalog name", true,
				  &pr->fetch_profiles) < 0)
			return -1;
	} else {
		pr->fetch_profiles = sbx_xcalloc(1, sizeof(char *));
	}
	/* Whether the payload may run what it writes to /tmp and /work
	 * (sbx-policy(5) says why that is the profile's choice). */
	if ((v = json_object_get(root, "workspace_exec")) &&
	    sbx_json_bool(c, "workspace_exec", v, &pr->workspace_exec) < 0)
		return -1;
	/* Variables sbx sets to the run's CPU count (OMP_NUM_THREADS...);
	 * the same rule as env_allow, as they end up in the same place. */
	if ((v = json_object_get(root, "thread_env"))) {
		if (sbx_json_strv(c, "thread_env", v, CATALOG_MAX_ENTRIES, 128, env_allow_valid,
				  "a variable name not starting with LD_", true, &pr->thread_env) < 0)
			return -1;
	} else {
		pr->thread_env = sbx_xcalloc(1, sizeof(char *));
	}
	/* Types whose active content is refused rather than flagged: the
	 * ones that are ever flagged so, and only those the profile allows. */
	if ((v = json_object_get(root, "refuse_active_content"))) {
		if (sbx_json_strv(c, "refuse_active_content", v, 2, 128, active_type_valid,
				  "text/html or text/markdown", true, &pr->refuse_active) < 0)
			return -1;
		for (size_t i = 0; pr->refuse_active[i]; i++)
			if (!sbx_media_type_in(pr->allowed_outputs, pr->refuse_active[i])) {
				char p[64];

				snprintf(p, sizeof(p), "refuse_active_content[%zu]", i);
				return sbx_json_error(c, p, "%s is not in allowed_outputs",
						      pr->refuse_active[i]);
			}
	} else {
		pr->refuse_active = sbx_xcalloc(1, sizeof(char *));
	}
	/* The confined validator's time after the run's wall clock (the
	 * outputs of a run that used all of it are still validated). */
	pr->validate_seconds = SBX_VALIDATE_SECONDS_DEFAULT;
	if ((v = json_object_get(root, "validate_seconds")) &&
	    sbx_json_uint(c, "validate_seconds", v, 1, SBX_VALIDATE_SECONDS_MAX,
			  &pr->validate_seconds) < 0)
		return -1;
	if (parse_prepare(c, json_object_get(root, "prepare"), pr) < 0 ||
	    parse_template(c, json_object_get(root, "template"), pr) < 0)
		return -1;
	return parse_quotas(c, json_object_get(root, "kernel_quotas"), &pr->quotas);
}

void profile_free(struct sbx_profile *pr)
{
	free(pr->name);
	free(pr->file);
	free(pr->raw);
	free(pr->description);
	sbx_strv_free(pr->argv);
	free(pr->code_file);
	for (size_t i = 0; i < pr->n_binds; i++) {
		free(pr->binds[i].src);
		free(pr->binds[i].dst);
	}
	free(pr->binds);
	for (size_t i = 0; i < pr->n_symlinks; i++) {
		free(pr->symlinks[i].path);
		free(pr->symlinks[i].target);
	}
	free(pr->symlinks);
	sbx_strv_free(pr->env);
	sbx_strv_free(pr->env_allow);
	free(pr->seccomp);
	sbx_strv_free(pr->allowed_outputs);
	sbx_strv_free(pr->refuse_active);
	sbx_strv_free(pr->network_profiles);
	sbx_strv_free(pr->fetch_profiles);
	sbx_strv_free(pr->thread_env);
	if (pr->prepare) {
		sbx_strv_free(pr->prepare->argv);
		sbx_strv_free(pr->prepare->env);
		free(pr->prepare->network);
		sbx_strv_free(pr->prepare->inputs);
		free(pr->prepare->mount);
		free(pr->prepare->seed_src);
		free(pr->prepare->seed_dst);
		free(pr->prepare);
	}
	template_free(pr->template);
}
