/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog.c - load the policy catalog: DIR/profiles/NAME.json,
 * DIR/network/NAME.json and DIR/seccomp/NAME.json (formats in
 * sbx-policy(5)).
 *
 * Every file is parsed strictly (unknown keys, wrong types and bad values
 * are errors naming file and JSON path), then the whole catalog is
 * cross-checked: a profile naming a seccomp policy or network profile that
 * does not exist, or with a default outside its own [minimum, maximum],
 * fails the load.  All failures are 69: the operator's catalog is broken,
 * and nothing may run on part of a policy.
 */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <openssl/evp.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog.h"
#include "catalog-suggest.h"
#include "hostconfig.h"
#include "job.h"
#include "json.h"

#define CATALOG_FILE_MAX (1u << 20)
#define CATALOG_PATH_MAX 4096
#define CATALOG_MAX_ENTRIES 256
#define CATALOG_MAX_FILES 256

static const char *const media_types[] = {
	"text/csv", "text/plain", "application/json", "image/png", "image/jpeg", "application/pdf",
};

int sbx_catalog_sha256(const char *raw, size_t len, char out[65])
{
	unsigned char md[32];

	if (!raw || !EVP_Digest(raw, len, md, NULL, EVP_sha256(), NULL))
		return -1;
	sbx_hex(md, sizeof(md), out);
	return 0;
}

bool sbx_media_type_known(const char *type)
{
	for (size_t i = 0; i < ARRAY_SIZE(media_types); i++)
		if (strcmp(media_types[i], type) == 0)
			return true;
	return false;
}

bool sbx_catalog_name_valid(const char *name)
{
	size_t n = 0;

	if (!name || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9')))
		return false;
	for (const char *p = name; *p; p++, n++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return false;
	return n <= 64;
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

/* ---- runtime profiles ------------------------------------------------ */

static const char *const profile_keys[] = {
	"description", "argv", "code_file", "binds", "symlinks", "env", "env_allow", "seccomp",
	"defaults", "minimums", "maximums", "input_bytes_max", "stream_bytes_max",
	"allowed_outputs", "network_profiles", "kernel_quotas", NULL,
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

static int parse_profile(const struct sbx_jctx *c, const json_t *root, struct sbx_profile *pr)
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
	    sbx_json_strv(c, "allowed_outputs", v, ARRAY_SIZE(media_types), 128, media_type_valid,
			  "a media type sbx validates", true, &pr->allowed_outputs) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "network_profiles")) ||
	    sbx_json_strv(c, "network_profiles", v, CATALOG_MAX_FILES, 64, sbx_catalog_name_valid,
			  "a catalog name", true, &cat_name) < 0)
		return -1;
	pr->network_profiles = cat_name;
	if (!cat_name[0])
		return sbx_json_error(c, "network_profiles", "expected at least one network profile");
	return parse_quotas(c, json_object_get(root, "kernel_quotas"), &pr->quotas);
}

/* ---- network profiles ------------------------------------------------ */

static const char *const network_keys[] = {
	"description", "kind", "allow", "allow_cidrs", "max_connections", "max_bytes", "connect",
	NULL,
};

/* A lowercase DNS name (labels of [a-z0-9-], no leading or trailing '-'),
 * optionally "*." + such a name for a whole domain.  Lowercase only, so
 * that the proxy's comparison is a plain string compare. */
static bool host_valid(const char *s)
{
	size_t len;

	if (s[0] == '*' && s[1] == '.')
		s += 2;
	len = strlen(s);
	if (len == 0 || len > 253)
		return false;
	for (const char *p = s;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);

		if (n == 0 || n > 63 || p[0] == '-' || p[n - 1] == '-')
			return false;
		for (size_t i = 0; i < n; i++)
			if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') ||
			      p[i] == '-'))
				return false;
		if (!dot)
			return true;
		p = dot + 1;
	}
}

static bool cidr_valid(const char *s)
{
	const char *slash = strchr(s, '/');
	unsigned char buf[16];
	char addr[64];
	unsigned long prefix = 0;
	size_t n;
	int af;

	if (!slash || (n = (size_t)(slash - s)) == 0 || n >= sizeof(addr))
		return false;
	memcpy(addr, s, n);
	addr[n] = '\0';
	af = strchr(addr, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(af, addr, buf) != 1)
		return false;
	if (!slash[1] || strlen(slash + 1) > 3)
		return false;
	for (const char *p = slash + 1; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		prefix = prefix * 10 + (unsigned long)(*p - '0');
	}
	return prefix <= (af == AF_INET ? 32u : 128u);
}

/* "connect": true, false, or the ports a tunnel may go to (each also
 * needs an allow entry; one spelling each, so no empty list). */
static int parse_connect(const struct sbx_jctx *c, const json_t *v, struct sbx_netprofile *np)
{
	static const char what[] = "true, false or an array of ports";

	np->connect = SBX_CONNECT_ANY;
	if (!v || json_is_true(v))
		return 0;
	if (json_is_false(v)) {
		np->connect = SBX_CONNECT_NONE;
		return 0;
	}
	if (!json_is_array(v))
		return sbx_json_expected(c, "connect", v, what);
	if (sbx_json_array(c, "connect", v, 64) < 0)
		return -1;
	if (json_array_size(v) == 0)
		return sbx_json_error(c, "connect", "expected at least one port (false forbids CONNECT)");
	np->connect = SBX_CONNECT_PORTS;
	np->connect_ports = sbx_xcalloc(json_array_size(v), sizeof(*np->connect_ports));
	for (size_t k = 0; k < json_array_size(v); k++) {
		char pp[SBX_JSON_PATH_MAX];
		uint64_t port;

		sbx_json_path_index(pp, "connect", k);
		if (sbx_json_uint(c, pp, json_array_get(v, k), 1, 65535, &port) < 0)
			return -1;
		for (size_t j = 0; j < k; j++)
			if (np->connect_ports[j] == port)
				return sbx_json_error(c, pp, "port listed twice");
		np->connect_ports[k] = (uint16_t)port;
		np->n_connect_ports = k + 1;
	}
	return 0;
}

static int parse_egress(const struct sbx_jctx *c, const json_t *root, struct sbx_netprofile *np)
{
	static const char *const rule_keys[] = { "host", "ports", NULL };
	const json_t *v;

	if (!(v = sbx_json_required(c, "", root, "allow")) ||
	    sbx_json_array(c, "allow", v, CATALOG_MAX_ENTRIES) < 0)
		return -1;
	np->allow = sbx_xcalloc(json_array_size(v), sizeof(*np->allow));
	for (size_t i = 0; i < json_array_size(v); i++) {
		const json_t *e = json_array_get(v, i), *f;
		struct sbx_egress_rule *r = &np->allow[i];
		char p[SBX_JSON_PATH_MAX], q[SBX_JSON_PATH_MAX];

		np->n_allow = i + 1;
		sbx_json_path_index(p, "allow", i);
		if (sbx_json_check_keys(c, p, e, rule_keys) < 0 ||
		    !(f = sbx_json_required(c, p, e, "host")))
			return -1;
		sbx_json_path_key(q, p, "host");
		if (sbx_json_string(c, q, f, 255, &r->host) < 0)
			return -1;
		if (!host_valid(r->host))
			return sbx_json_expected(c, q, f, "a lowercase host name or \"*.domain\"");
		if (!(f = sbx_json_required(c, p, e, "ports")))
			return -1;
		sbx_json_path_key(q, p, "ports");
		if (sbx_json_array(c, q, f, 64) < 0)
			return -1;
		if (json_array_size(f) == 0)
			return sbx_json_error(c, q, "expected at least one port");
		r->ports = sbx_xcalloc(json_array_size(f), sizeof(*r->ports));
		for (size_t k = 0; k < json_array_size(f); k++) {
			char pp[SBX_JSON_PATH_MAX];
			uint64_t port;

			sbx_json_path_index(pp, q, k);
			if (sbx_json_uint(c, pp, json_array_get(f, k), 1, 65535, &port) < 0)
				return -1;
			r->ports[k] = (uint16_t)port;
			r->n_ports = k + 1;
		}
	}
	v = json_object_get(root, "allow_cidrs");
	if (v) {
		if (sbx_json_strv(c, "allow_cidrs", v, CATALOG_MAX_ENTRIES, 64, cidr_valid,
				  "an address/prefix (CIDR)", true, &np->allow_cidrs) < 0)
			return -1;
	} else {
		np->allow_cidrs = sbx_xcalloc(1, sizeof(char *));
	}
	if ((v = json_object_get(root, "max_connections")) &&
	    sbx_json_uint(c, "max_connections", v, 1, 65536, &np->max_connections) < 0)
		return -1;
	if ((v = json_object_get(root, "max_bytes")) &&
	    sbx_json_uint(c, "max_bytes", v, 1, UINT64_C(1) << 40, &np->max_bytes) < 0)
		return -1;
	return parse_connect(c, json_object_get(root, "connect"), np);
}

static int parse_network(const struct sbx_jctx *c, const json_t *root, struct sbx_netprofile *np)
{
	static const char *const egress_only[] = { "allow", "allow_cidrs", "max_connections",
						   "max_bytes", "connect" };
	const json_t *v;

	if (sbx_json_check_keys(c, "", root, network_keys) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "description")) ||
	    sbx_json_string(c, "description", v, 1024, &np->description) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "kind")))
		return -1;
	if (json_is_string(v) && strcmp(json_string_value(v), "egress") == 0)
		np->kind = SBX_NET_EGRESS;
	else if (json_is_string(v) && strcmp(json_string_value(v), "disabled") == 0)
		np->kind = SBX_NET_DISABLED;
	else
		return sbx_json_expected(c, "kind", v, "\"disabled\" or \"egress\"");
	if (np->kind == SBX_NET_EGRESS)
		return parse_egress(c, root, np);
	/* A disabled profile with an allowlist is a contradiction that would
	 * mislead whoever reads it. */
	for (size_t i = 0; i < ARRAY_SIZE(egress_only); i++)
		if (json_object_get(root, egress_only[i]))
			return sbx_json_error(c, egress_only[i], "only allowed with kind \"egress\"");
	np->allow_cidrs = sbx_xcalloc(1, sizeof(char *));
	return 0;
}

/* ---- seccomp policies ------------------------------------------------ */

static const struct {
	const char *name;
	int value;
} errnos[] = {
	{ "EPERM", EPERM },   { "ENOSYS", ENOSYS }, { "EACCES", EACCES },
	{ "EINVAL", EINVAL }, { "ENOTTY", ENOTTY }, { "EOPNOTSUPP", EOPNOTSUPP },
	{ "ENOMEM", ENOMEM }, { "EAGAIN", EAGAIN }, { "ENOENT", ENOENT },
	{ "EROFS", EROFS },   { "EAFNOSUPPORT", EAFNOSUPPORT },
	{ "EPROTONOSUPPORT", EPROTONOSUPPORT },
};

/* The largest "not_in" list, and the most rules one set of conditions may
 * expand into: bounds on the filter a catalog can ask for. */
#define NOT_IN_MAX 32
#define ALTERNATIVES_MAX 64

/* A "not_in" condition before expansion: argument @index is none of
 * @values (sorted, distinct).  n == 0: the set has none. */
struct not_in {
	unsigned index;
	uint64_t values[NOT_IN_MAX];
	size_t n;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int parse_not_in(const struct sbx_jctx *c, const char *path, const json_t *e,
			struct not_in *ni)
{
	const json_t *f;
	char q[SBX_JSON_PATH_MAX];

	for (const char *const *k = (const char *const[]){ "value", "mask", NULL }; *k; k++)
		if (json_object_get(e, *k)) {
			sbx_json_path_key(q, path, *k);
			return sbx_json_error(c, q, "not allowed with op \"not_in\" (it takes \"values\")");
		}
	if (!(f = sbx_json_required(c, path, e, "values")))
		return -1;
	sbx_json_path_key(q, path, "values");
	if (sbx_json_array(c, q, f, NOT_IN_MAX) < 0)
		return -1;
	if (json_array_size(f) == 0)
		return sbx_json_error(c, q, "expected at least one value");
	ni->n = json_array_size(f);
	for (size_t i = 0; i < ni->n; i++) {
		char p[SBX_JSON_PATH_MAX];

		sbx_json_path_index(p, q, i);
		if (sbx_json_u64(c, p, json_array_get(f, i), &ni->values[i]) < 0)
			return -1;
		for (size_t k = 0; k < i; k++)
			if (ni->values[k] == ni->values[i])
				return sbx_json_error(c, p, "%" PRIu64 " is listed twice", ni->values[i]);
	}
	qsort(ni->values, ni->n, sizeof(ni->values[0]), cmp_u64);
	return 0;
}

/* A condition: 0 when it filled @a, 1 when it was "not_in" and filled @ni
 * instead (@ni->n must be 0 then). */
static int parse_cond(const struct sbx_jctx *c, const char *path, const json_t *e,
		      struct sbx_seccomp_arg *a, struct not_in *ni)
{
	static const char *const cond_keys[] = { "index", "op", "mask", "value", "values", NULL };
	const json_t *f;
	char q[SBX_JSON_PATH_MAX];
	uint64_t index;

	if (sbx_json_check_keys(c, path, e, cond_keys) < 0)
		return -1;
	if (!(f = sbx_json_required(c, path, e, "index")))
		return -1;
	sbx_json_path_key(q, path, "index");
	if (sbx_json_uint(c, q, f, 0, 5, &index) < 0)
		return -1;
	a->index = (unsigned)index;
	if (!(f = sbx_json_required(c, path, e, "op")))
		return -1;
	sbx_json_path_key(q, path, "op");
	if (json_is_string(f) && strcmp(json_string_value(f), "not_in") == 0) {
		if (ni->n > 0)
			return sbx_json_error(c, path, "only one \"not_in\" condition per rule");
		ni->index = a->index;
		return parse_not_in(c, path, e, ni) < 0 ? -1 : 1;
	}
	if (json_is_string(f) && strcmp(json_string_value(f), "eq") == 0)
		a->op = SBX_SC_OP_EQ;
	else if (json_is_string(f) && strcmp(json_string_value(f), "ne") == 0)
		a->op = SBX_SC_OP_NE;
	else if (json_is_string(f) && strcmp(json_string_value(f), "masked_eq") == 0)
		a->op = SBX_SC_OP_MASKED_EQ;
	else
		return sbx_json_expected(c, q, f, "\"eq\", \"ne\", \"masked_eq\" or \"not_in\"");
	if (json_object_get(e, "values")) {
		sbx_json_path_key(q, path, "values");
		return sbx_json_error(c, q, "only allowed with op \"not_in\"");
	}
	f = json_object_get(e, "mask");
	sbx_json_path_key(q, path, "mask");
	if (a->op == SBX_SC_OP_MASKED_EQ) {
		if (!f)
			return sbx_json_error(c, q, "missing required key for op \"masked_eq\"");
		if (sbx_json_u64(c, q, f, &a->mask) < 0)
			return -1;
	} else if (f) {
		return sbx_json_error(c, q, "only allowed with op \"masked_eq\"");
	} else {
		a->mask = UINT64_MAX;
	}
	if (!(f = sbx_json_required(c, path, e, "value")))
		return -1;
	sbx_json_path_key(q, path, "value");
	if (sbx_json_u64(c, q, f, &a->value) < 0)
		return -1;
	/* A value with bits outside the mask can never match: a deny rule
	 * that silently denies nothing. */
	if (a->op == SBX_SC_OP_MASKED_EQ && (a->value & ~a->mask))
		return sbx_json_error(c, q, "has bits outside the mask, so the rule never matches");
	return 0;
}

/* One AND-set of argument conditions.  libseccomp takes at most one
 * comparison per argument in a rule, so a repeated index is refused here
 * rather than at filter build time.  A "not_in" condition goes to @ni (at
 * most one per set), the others to @out. */
static int parse_conds(const struct sbx_jctx *c, const char *path, const json_t *v,
		       struct sbx_seccomp_arg **out, size_t *n_out, struct not_in *ni)
{
	_cleanup_free_ struct sbx_seccomp_arg *args = NULL;
	unsigned seen = 0;
	size_t n, k = 0;

	ni->n = 0;
	if (sbx_json_array(c, path, v, 6) < 0)
		return -1;
	n = json_array_size(v);
	args = sbx_xcalloc(n, sizeof(*args));
	for (size_t i = 0; i < n; i++) {
		char p[SBX_JSON_PATH_MAX];
		int r;

		sbx_json_path_index(p, path, i);
		if ((r = parse_cond(c, p, json_array_get(v, i), &args[k], ni)) < 0)
			return -1;
		if (seen & (1u << args[k].index))
			return sbx_json_error(c, p, "argument %u is compared twice in one rule",
					      args[k].index);
		seen |= 1u << args[k].index;
		/* A "not_in" leaves its slot to the next condition. */
		if (r == 0)
			k++;
	}
	*out = k ? TAKE_PTR(args) : NULL;
	*n_out = k;
	return 0;
}

static bool add_alternative(struct sbx_seccomp_arg *alt, size_t *n, unsigned index,
			    enum sbx_seccomp_op op, uint64_t mask, uint64_t value)
{
	if (*n == ALTERNATIVES_MAX)
		return false;
	alt[(*n)++] = (struct sbx_seccomp_arg){ .index = index, .op = op, .mask = mask, .value = value };
	return true;
}

/* The values a..b (a <= b < UINT64_MAX) as aligned power-of-two blocks,
 * each one comparison: a single value is "eq", a block of 2^k values
 * starting at a multiple of 2^k is "masked_eq" with the low k bits
 * masked off. */
static bool add_range(struct sbx_seccomp_arg *alt, size_t *n, unsigned index, uint64_t a,
		      uint64_t b)
{
	while (a <= b) {
		uint64_t size = a ? a & -a : UINT64_C(1) << 63;

		while (size - 1 > b - a)
			size >>= 1;
		if (!add_alternative(alt, n, index, size == 1 ? SBX_SC_OP_EQ : SBX_SC_OP_MASKED_EQ,
				     ~(size - 1), a))
			return false;
		a += size;
	}
	return true;
}

/*
 * "Argument i is none of v1 < ... < vk" as alternatives, each a single
 * comparison on argument i, any of which may match: the gaps between the
 * values, "lt v1" below them and "gt vk" above.  libseccomp compares one
 * argument at most once in a rule, so "ne v1 and ne v2 ..." cannot be one
 * rule; several rules under one action are an OR, which this is.
 * Comparisons are 64-bit: an argument with bits above the listed values
 * (e.g. an int family with bit 32 set) is in a gap, so the deny matches.
 * Returns the number of alternatives, 0 if there would be too many.
 */
static size_t not_in_alternatives(const struct not_in *ni, struct sbx_seccomp_arg *alt)
{
	const uint64_t *v = ni->values;
	size_t n = 0;

	if (v[0] == 1 && !add_alternative(alt, &n, ni->index, SBX_SC_OP_EQ, UINT64_MAX, 0))
		return 0;
	if (v[0] > 1 && !add_alternative(alt, &n, ni->index, SBX_SC_OP_LT, UINT64_MAX, v[0]))
		return 0;
	for (size_t i = 0; i + 1 < ni->n; i++)
		if (v[i] + 1 < v[i + 1] && !add_range(alt, &n, ni->index, v[i] + 1, v[i + 1] - 1))
			return 0;
	if (v[ni->n - 1] == UINT64_MAX - 1 &&
	    !add_alternative(alt, &n, ni->index, SBX_SC_OP_EQ, UINT64_MAX, UINT64_MAX))
		return 0;
	if (v[ni->n - 1] < UINT64_MAX - 1 &&
	    !add_alternative(alt, &n, ni->index, SBX_SC_OP_GT, UINT64_MAX, v[ni->n - 1]))
		return 0;
	return n;
}

static void rule_free(struct sbx_seccomp_rule *r)
{
	sbx_strv_free(r->syscalls);
	free(r->args);
	free(r->why);
}

/*
 * A deny entry: {"syscalls", "errno", "why", and "args" (all must match)
 * or "any_args" (a list of such sets, any may match)}.  "any_args" and
 * "not_in" are expanded here into one rule per alternative, so consumers
 * see plain AND rules; they exist because a condition like "arg0 is
 * neither 0 nor 0xffffffff" needs several rules in libseccomp, and they
 * share one reason.
 */
static int parse_deny(const struct sbx_jctx *c, const char *path, const json_t *e,
		      struct sbx_seccomp_policy *sp)
{
	static const char *const deny_keys[] = { "syscalls", "errno", "args", "any_args", "why",
						 NULL };
	_cleanup_strv_free_ char **syscalls = NULL;
	_cleanup_free_ char *why = NULL;
	const json_t *f, *args, *any;
	char q[SBX_JSON_PATH_MAX];
	size_t n_sets;
	int errnum = 0;

	if (sbx_json_check_keys(c, path, e, deny_keys) < 0)
		return -1;
	if (!(f = sbx_json_required(c, path, e, "syscalls")))
		return -1;
	sbx_json_path_key(q, path, "syscalls");
	if (sbx_json_strv(c, q, f, 64, 64, NULL, NULL, true, &syscalls) < 0)
		return -1;
	if (!syscalls[0])
		return sbx_json_error(c, q, "expected at least one system call");
	for (size_t i = 0; syscalls[i]; i++) {
		char p[SBX_JSON_PATH_MAX];

		/* __NR_SCMP_ERROR: unknown on every architecture libseccomp
		 * knows (a typo).  A name that exists elsewhere but not on
		 * this architecture resolves to a negative pseudo number and
		 * is accepted: the rule then simply has nothing to deny. */
		sbx_json_path_index(p, q, i);
		if (seccomp_syscall_resolve_name(syscalls[i]) == __NR_SCMP_ERROR)
			return sbx_json_expected(c, p, json_array_get(f, i),
						 "a system call name libseccomp knows");
	}
	if (!(f = sbx_json_required(c, path, e, "errno")))
		return -1;
	sbx_json_path_key(q, path, "errno");
	for (size_t i = 0; i < ARRAY_SIZE(errnos); i++)
		if (json_is_string(f) && strcmp(json_string_value(f), errnos[i].name) == 0)
			errnum = errnos[i].value;
	if (!errnum)
		return sbx_json_expected(c, q, f, "an errno name such as \"EPERM\" or \"ENOSYS\"");
	/* Every deny says why: a rule nobody can explain is a rule nobody
	 * dares remove or fix. */
	if (!(f = sbx_json_required(c, path, e, "why")))
		return -1;
	sbx_json_path_key(q, path, "why");
	if (sbx_json_string(c, q, f, 1024, &why) < 0)
		return -1;
	if (strlen(why) < 8)
		return sbx_json_expected(c, q, f, "a reason of at least a few words");

	args = json_object_get(e, "args");
	any = json_object_get(e, "any_args");
	if (args && any) {
		sbx_json_path_key(q, path, "any_args");
		return sbx_json_error(c, q, "\"args\" and \"any_args\" exclude each other");
	}
	if (any) {
		sbx_json_path_key(q, path, "any_args");
		if (sbx_json_array(c, q, any, 64) < 0)
			return -1;
		if (json_array_size(any) == 0)
			return sbx_json_error(c, q, "expected at least one set of conditions");
	}
	n_sets = any ? json_array_size(any) : 1;
	for (size_t s = 0; s < n_sets; s++) {
		_cleanup_free_ struct sbx_seccomp_arg *set = NULL;
		struct sbx_seccomp_arg alt[ALTERNATIVES_MAX];
		struct not_in ni = { .n = 0 };
		char p[SBX_JSON_PATH_MAX] = "";
		size_t n_set = 0, n_alt = 1;

		if (any) {
			sbx_json_path_key(q, path, "any_args");
			sbx_json_path_index(p, q, s);
			if (parse_conds(c, p, json_array_get(any, s), &set, &n_set, &ni) < 0)
				return -1;
			if (n_set == 0 && ni.n == 0)
				return sbx_json_error(c, p, "expected at least one condition");
		} else if (args) {
			sbx_json_path_key(p, path, "args");
			if (parse_conds(c, p, args, &set, &n_set, &ni) < 0)
				return -1;
		}
		if (ni.n > 0 && !(n_alt = not_in_alternatives(&ni, alt)))
			return sbx_json_error(c, p, "the \"not_in\" list expands into more than %d rules",
					      ALTERNATIVES_MAX);
		sp->rules = sbx_xrealloc(sp->rules, (sp->n_rules + n_alt) * sizeof(*sp->rules));
		for (size_t a = 0; a < n_alt; a++) {
			struct sbx_seccomp_rule *r = &sp->rules[sp->n_rules];

			memset(r, 0, sizeof(*r));
			r->n_args = n_set + (ni.n > 0);
			if (r->n_args) {
				r->args = sbx_xcalloc(r->n_args, sizeof(*r->args));
				if (n_set)
					memcpy(r->args, set, n_set * sizeof(*set));
				if (ni.n > 0)
					r->args[n_set] = alt[a];
			}
			r->syscalls = sbx_strv_copy(syscalls);
			r->errnum = errnum;
			r->why = sbx_xstrdup(why);
			sp->n_rules++;
		}
	}
	return 0;
}

static int parse_seccomp(const struct sbx_jctx *c, const json_t *root,
			 struct sbx_seccomp_policy *sp)
{
	static const char *const seccomp_keys[] = { "description", "deny", NULL };
	const json_t *v;

	if (sbx_json_check_keys(c, "", root, seccomp_keys) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "description")) ||
	    sbx_json_string(c, "description", v, 1024, &sp->description) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "deny")) ||
	    sbx_json_array(c, "deny", v, 1024) < 0)
		return -1;
	for (size_t i = 0; i < json_array_size(v); i++) {
		char p[SBX_JSON_PATH_MAX];

		sbx_json_path_index(p, "deny", i);
		if (parse_deny(c, p, json_array_get(v, i), sp) < 0)
			return -1;
	}
	return 0;
}

/* ---- loading ----------------------------------------------------------- */

static void profile_free(struct sbx_profile *pr)
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
	sbx_strv_free(pr->network_profiles);
}

static void network_free(struct sbx_netprofile *np)
{
	free(np->name);
	free(np->file);
	free(np->raw);
	free(np->description);
	for (size_t i = 0; i < np->n_allow; i++) {
		free(np->allow[i].host);
		free(np->allow[i].ports);
	}
	free(np->allow);
	sbx_strv_free(np->allow_cidrs);
	free(np->connect_ports);
}

static void seccomp_free(struct sbx_seccomp_policy *sp)
{
	free(sp->name);
	free(sp->file);
	free(sp->raw);
	free(sp->description);
	for (size_t i = 0; i < sp->n_rules; i++)
		rule_free(&sp->rules[i]);
	free(sp->rules);
}

void sbx_catalog_free(struct sbx_catalog *cat)
{
	if (!cat)
		return;
	for (size_t i = 0; i < cat->n_profiles; i++)
		profile_free(&cat->profiles[i]);
	free(cat->profiles);
	for (size_t i = 0; i < cat->n_networks; i++)
		network_free(&cat->networks[i]);
	free(cat->networks);
	for (size_t i = 0; i < cat->n_seccomp; i++)
		seccomp_free(&cat->seccomp[i]);
	free(cat->seccomp);
	free(cat->dir);
	memset(cat, 0, sizeof(*cat));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The NAME.json files of @dir/@sub, sorted so that load order (and the
 * first error reported) does not depend on the file system. */
static int list_dir(const char *dir, const char *sub, char ***out, struct sbx_error *err)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", dir, sub);
	_cleanup_strv_free_ char **names = NULL;
	_cleanup_close_ int fd = -1;
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: cannot open catalog directory",
				     path);
	d = fdopendir(fd);
	if (!d)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: cannot read", path);
	fd = -1; /* owned by d now */
	names = sbx_xcalloc(1, sizeof(char *));
	while ((errno = 0, de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char esc[80];

		/* Dot files (editor state, ".", "..") are not catalog entries. */
		if (de->d_name[0] == '.')
			continue;
		if (len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0) {
			sbx_json_escape(de->d_name, esc, sizeof(esc));
			closedir(d);
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
					     "%s/%s: not a catalog file (expected NAME.json)", path, esc);
		}
		if (n >= CATALOG_MAX_FILES) {
			closedir(d);
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
					     "%s: more than %d files", path, CATALOG_MAX_FILES);
		}
		names = sbx_xrealloc(names, (n + 2) * sizeof(char *));
		names[n++] = sbx_xstrdup(de->d_name);
		names[n] = NULL;
	}
	if (errno) {
		int e = errno;
		closedir(d);
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, e, "%s: cannot read", path);
	}
	closedir(d);
	qsort(names, n, sizeof(char *), cmp_str);
	*out = TAKE_PTR(names);
	return 0;
}

enum kind { KIND_PROFILE, KIND_NETWORK, KIND_SECCOMP };

static int parse_file(struct sbx_catalog *cat, enum kind kind, const char *file,
		      const char *name, const char *data, size_t len, struct sbx_error *err);

static int load_file(struct sbx_catalog *cat, enum kind kind, const char *sub,
		     const char *fname, struct sbx_error *err)
{
	_cleanup_free_ char *file = sbx_xasprintf("%s/%s/%s", cat->dir, sub, fname);
	_cleanup_free_ char *name = sbx_xstrndup(fname, strlen(fname) - 5);
	_cleanup_free_ char *data = NULL;
	size_t len;

	if (!sbx_catalog_name_valid(name)) {
		char esc[80];
		sbx_json_escape(name, esc, sizeof(esc));
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				     "%s: name \"%s\" does not match [a-z0-9][a-z0-9_-]{0,63}", file,
				     esc);
	}
	if (sbx_json_read(file, CATALOG_FILE_MAX, SBX_EXIT_UNAVAILABLE, &data, &len, err) < 0)
		return -1;
	return parse_file(cat, kind, file, name, data, len, err);
}

int sbx_catalog_parse_file(struct sbx_catalog *cat, const char *sub, const char *file,
			   const char *name, const char *data, size_t len, struct sbx_error *err)
{
	enum kind kind = strcmp(sub, "profiles") == 0 ? KIND_PROFILE :
			 strcmp(sub, "network") == 0  ? KIND_NETWORK :
							KIND_SECCOMP;

	return parse_file(cat, kind, file, name, data, len, err);
}

static int parse_file(struct sbx_catalog *cat, enum kind kind, const char *file,
		      const char *name, const char *data, size_t len, struct sbx_error *err)
{
	_cleanup_json_ json_t *root = NULL;
	struct sbx_jctx c = { .source = file, .code = SBX_EXIT_UNAVAILABLE, .err = err };
	int r;

	root = sbx_json_parse(&c, data, len);
	if (!root)
		return -1;

	switch (kind) {
	case KIND_PROFILE: {
		struct sbx_profile *pr;
		cat->profiles = sbx_xrealloc(cat->profiles, (cat->n_profiles + 1) * sizeof(*pr));
		pr = &cat->profiles[cat->n_profiles++];
		memset(pr, 0, sizeof(*pr));
		pr->name = sbx_xstrdup(name);
		pr->file = sbx_xstrdup(file);
		/* The manifest names the exact bytes of the policy that
		 * applied; they are hashed when it is written. */
		pr->raw = sbx_xmalloc(len ? len : 1);
		memcpy(pr->raw, data, len);
		pr->raw_len = len;
		c.source = pr->file;
		r = parse_profile(&c, root, pr);
		break;
	}
	case KIND_NETWORK: {
		struct sbx_netprofile *np;
		cat->networks = sbx_xrealloc(cat->networks, (cat->n_networks + 1) * sizeof(*np));
		np = &cat->networks[cat->n_networks++];
		memset(np, 0, sizeof(*np));
		np->name = sbx_xstrdup(name);
		np->file = sbx_xstrdup(file);
		/* The manifest names the exact bytes of the policy that
		 * applied; they are hashed when it is written. */
		np->raw = sbx_xmalloc(len ? len : 1);
		memcpy(np->raw, data, len);
		np->raw_len = len;
		c.source = np->file;
		r = parse_network(&c, root, np);
		break;
	}
	case KIND_SECCOMP:
	default: {
		struct sbx_seccomp_policy *sp;
		cat->seccomp = sbx_xrealloc(cat->seccomp, (cat->n_seccomp + 1) * sizeof(*sp));
		sp = &cat->seccomp[cat->n_seccomp++];
		memset(sp, 0, sizeof(*sp));
		sp->name = sbx_xstrdup(name);
		sp->file = sbx_xstrdup(file);
		/* The manifest names the exact bytes of the policy that
		 * applied; they are hashed when it is written. */
		sp->raw = sbx_xmalloc(len ? len : 1);
		memcpy(sp->raw, data, len);
		sp->raw_len = len;
		c.source = sp->file;
		r = parse_seccomp(&c, root, sp);
		break;
	}
	}
	return r;
}

static int load_kind(struct sbx_catalog *cat, enum kind kind, const char *sub,
		     struct sbx_error *err)
{
	_cleanup_strv_free_ char **names = NULL;

	if (list_dir(cat->dir, sub, &names, err) < 0)
		return -1;
	if (!names[0])
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s/%s: no NAME.json files",
				     cat->dir, sub);
	for (size_t i = 0; names[i]; i++)
		if (load_file(cat, kind, sub, names[i], err) < 0)
			return -1;
	return 0;
}

/* References between files, checked once everything is loaded. */
static int cross_check(const struct sbx_catalog *cat, struct sbx_error *err)
{
	for (size_t i = 0; i < cat->n_profiles; i++) {
		const struct sbx_profile *pr = &cat->profiles[i];
		struct sbx_jctx c = { .source = pr->file, .code = SBX_EXIT_UNAVAILABLE, .err = err };

		if (!sbx_catalog_seccomp(cat, pr->seccomp))
			return sbx_json_error(&c, "seccomp", "no seccomp policy \"%s\" in %s/seccomp%s",
					      pr->seccomp, cat->dir,
					      sbx_did_you_mean(sbx_catalog_suggest_seccomp(cat, pr->seccomp)));
		for (size_t k = 0; pr->network_profiles[k]; k++) {
			char p[SBX_JSON_PATH_MAX];

			sbx_json_path_index(p, "network_profiles", k);
			if (!sbx_catalog_network(cat, pr->network_profiles[k]))
				return sbx_json_error(&c, p, "no network profile \"%s\" in %s/network%s",
						      pr->network_profiles[k], cat->dir,
						      sbx_did_you_mean(sbx_catalog_suggest_network(
							      cat, pr->network_profiles[k])));
		}
	}
	return 0;
}

int sbx_catalog_load(struct sbx_catalog *cat, const char *dir, struct sbx_error *err)
{
	memset(cat, 0, sizeof(*cat));
	cat->dir = sbx_xstrdup(dir);
	if (load_kind(cat, KIND_SECCOMP, "seccomp", err) < 0 ||
	    load_kind(cat, KIND_NETWORK, "network", err) < 0 ||
	    load_kind(cat, KIND_PROFILE, "profiles", err) < 0 || cross_check(cat, err) < 0) {
		/* Nothing of a broken catalog stays visible. */
		sbx_catalog_free(cat);
		return -1;
	}
	return 0;
}

const struct sbx_profile *sbx_catalog_profile(const struct sbx_catalog *cat, const char *name)
{
	for (size_t i = 0; name && i < cat->n_profiles; i++)
		if (strcmp(cat->profiles[i].name, name) == 0)
			return &cat->profiles[i];
	return NULL;
}

const struct sbx_netprofile *sbx_catalog_network(const struct sbx_catalog *cat, const char *name)
{
	for (size_t i = 0; name && i < cat->n_networks; i++)
		if (strcmp(cat->networks[i].name, name) == 0)
			return &cat->networks[i];
	return NULL;
}

const struct sbx_seccomp_policy *sbx_catalog_seccomp(const struct sbx_catalog *cat,
						     const char *name)
{
	for (size_t i = 0; name && i < cat->n_seccomp; i++)
		if (strcmp(cat->seccomp[i].name, name) == 0)
			return &cat->seccomp[i];
	return NULL;
}

const char *sbx_catalog_default_dir(const char *opt, const struct sbx_hostconfig *cfg)
{
	static const char etc_dir[] = SYSCONFDIR "/sbx/policy";
	struct stat st;

	if (opt)
		return opt;
	if (cfg && cfg->policy)
		return cfg->policy;
	/* The operator's override wins over the packaged catalog only when
	 * it exists; an empty or broken override still fails loudly. */
	if (stat(etc_dir, &st) == 0)
		return etc_dir;
	return DATADIR "/sbx/policy";
}
