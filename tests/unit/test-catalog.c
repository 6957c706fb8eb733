/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-catalog.c - the shipped catalog loads and says what SPEC §4 asks;
 * broken catalogs written to a temporary directory fail with 69 naming
 * the file and the JSON path.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>

#include "catalog.h"
#include "hostconfig.h"

static const char *srcdir(void)
{
	const char *s = getenv("SBX_SRCDIR");
	return s && *s ? s : SBX_SRCDIR;
}

static void test_shipped(void **state)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/policy", srcdir());
	struct sbx_catalog cat;
	struct sbx_error err = { 0 };
	const struct sbx_profile *py, *sh;
	const struct sbx_seccomp_policy *sc;
	const struct sbx_netprofile *np;
	bool saw_tiocsti = false, saw_clone3 = false, saw_newuser = false;

	if (sbx_catalog_load(&cat, dir, &err) < 0)
		fail_msg("shipped catalog: %s", err.msg);
	assert_int_equal(cat.n_profiles, 2);
	py = sbx_catalog_profile(&cat, "python-analysis");
	sh = sbx_catalog_profile(&cat, "shell");
	assert_non_null(py);
	assert_non_null(sh);
	assert_null(sbx_catalog_profile(&cat, "../profiles/shell"));
	assert_null(sbx_catalog_profile(&cat, "/usr/bin/python3"));
	assert_null(sbx_catalog_profile(&cat, "shell.json"));

	/* SPEC §4 floor for both profiles. */
	for (const struct sbx_profile *p = py; p; p = p == py ? sh : NULL) {
		assert_true(p->minimums.v[SBX_LIMIT_WALL_SECONDS] <= 1);
		assert_true(p->maximums.v[SBX_LIMIT_WALL_SECONDS] >= 3600);
		assert_true(p->minimums.v[SBX_LIMIT_MEMORY_MIB] <= 16);
		assert_true(p->maximums.v[SBX_LIMIT_MEMORY_MIB] >= 8192);
		assert_true(p->minimums.v[SBX_LIMIT_PIDS] <= 8);
		assert_true(p->maximums.v[SBX_LIMIT_PIDS] >= 1024);
		assert_true(p->minimums.v[SBX_LIMIT_WORKSPACE_MIB] <= 8);
		assert_true(p->maximums.v[SBX_LIMIT_WORKSPACE_MIB] >= 4096);
		assert_true(p->maximums.v[SBX_LIMIT_OUTPUT_FILES] >= 10000);
		assert_true(p->maximums.v[SBX_LIMIT_OUTPUT_BYTES] >= 1073741824);
		assert_int_equal(p->minimums.v[SBX_LIMIT_CPU_MILLICORES], 100);
		assert_int_equal(p->maximums.v[SBX_LIMIT_CPU_MILLICORES], 2000);
		char sha[65];
		assert_int_equal(sbx_catalog_sha256(p->raw, p->raw_len, sha), 0);
		assert_int_equal(strlen(sha), 64);
		assert_string_equal(p->seccomp, "default");
	}
	/* No kernel_quotas in the shipped profiles: the defaults. */
	for (const struct sbx_profile *p = py; p; p = p == py ? sh : NULL) {
		assert_int_equal(p->quotas.inotify_instances, 16);
		assert_int_equal(p->quotas.inotify_watches, 1024);
		assert_int_equal(p->quotas.fanotify_groups, 0);
		assert_int_equal(p->quotas.fanotify_marks, 0);
		assert_int_equal(p->quotas.sigpending, 128);
		assert_int_equal(p->quotas.msgqueue_bytes, 0);
		assert_int_equal(p->quotas.memlock_bytes, 65536);
	}
	assert_string_equal(py->argv[0], "/usr/bin/python3");
	assert_string_equal(py->code_file, "main.py");
	assert_int_equal(sbx_strv_length(py->allowed_outputs), 6);
	assert_int_equal(sbx_strv_length(sh->allowed_outputs), 4);
	assert_string_equal(py->binds[0].src, "/usr");
	assert_string_equal(py->binds[0].dst, "/usr");
	assert_false(py->binds[0].optional);
	{
		bool mpl = false, agg = false;
		for (size_t i = 0; i < py->n_binds; i++)
			if (strcmp(py->binds[i].src, "/etc/matplotlibrc") == 0)
				mpl = py->binds[i].optional;
		for (size_t i = 0; py->env[i]; i++)
			if (strcmp(py->env[i], "MPLBACKEND=Agg") == 0)
				agg = true;
		assert_true(mpl);
		assert_true(agg);
	}

	np = sbx_catalog_network(&cat, "disabled");
	assert_non_null(np);
	assert_int_equal(np->kind, SBX_NET_DISABLED);
	np = sbx_catalog_network(&cat, "egress-example");
	assert_non_null(np);
	assert_int_equal(np->kind, SBX_NET_EGRESS);
	assert_true(np->n_allow >= 1);
	assert_int_equal(np->allow[0].ports[0], 443);

	sc = sbx_catalog_seccomp(&cat, "default");
	assert_non_null(sc);
	for (size_t i = 0; i < sc->n_rules; i++) {
		const struct sbx_seccomp_rule *r = &sc->rules[i];
		assert_true(strlen(r->why) > 20);
		if (strcmp(r->syscalls[0], "ioctl") == 0 && r->n_args == 1 && r->args[0].value == 0x5412) {
			/* The kernel truncates cmd to 32 bits: the rule must mask. */
			assert_int_equal(r->args[0].op, SBX_SC_OP_MASKED_EQ);
			assert_int_equal(r->args[0].mask, 0xffffffffu);
			assert_int_equal(r->args[0].index, 1);
			saw_tiocsti = true;
		}
		if (strcmp(r->syscalls[0], "clone3") == 0) {
			assert_int_equal(r->errnum, ENOSYS);
			saw_clone3 = true;
		}
		if (strcmp(r->syscalls[0], "unshare") == 0 && r->n_args == 1 &&
		    r->args[0].mask == 0x10000000 && r->args[0].value == 0x10000000)
			saw_newuser = true;
	}
	assert_true(saw_tiocsti);
	assert_true(saw_clone3);
	assert_true(saw_newuser);
	sbx_catalog_free(&cat);
}

/* The personality rules must deny everything but 0 and 0xffffffff, in the
 * low 32 bits the kernel reads: evaluate them the way the filter would. */
static bool personality_denied(const struct sbx_seccomp_policy *sc, uint64_t arg)
{
	for (size_t i = 0; i < sc->n_rules; i++) {
		const struct sbx_seccomp_rule *r = &sc->rules[i];
		bool match = true;

		if (strcmp(r->syscalls[0], "personality") != 0)
			continue;
		for (size_t k = 0; k < r->n_args; k++) {
			const struct sbx_seccomp_arg *a = &r->args[k];
			switch (a->op) {
			case SBX_SC_OP_EQ:
				match &= arg == a->value;
				break;
			case SBX_SC_OP_NE:
				match &= arg != a->value;
				break;
			case SBX_SC_OP_MASKED_EQ:
				match &= (arg & a->mask) == a->value;
				break;
			}
		}
		if (match)
			return true;
	}
	return false;
}

static void test_personality(void **state)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/policy", srcdir());
	struct sbx_catalog cat;
	struct sbx_error err = { 0 };
	const struct sbx_seccomp_policy *sc;
	static const uint64_t allowed[] = { 0, 0xffffffff, 0x100000000, 0xffffffffffffffff };
	static const uint64_t denied[] = { 0x8, 0x0040000, 0x0400000, 0x0400008, 0x00400ff,
					   0x80000000, 0x7fffffff, 0xfffffffe, 1, 0x1000000ff };

	assert_int_equal(sbx_catalog_load(&cat, dir, &err), 0);
	sc = sbx_catalog_seccomp(&cat, "default");
	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
		if (personality_denied(sc, allowed[i]))
			fail_msg("personality(%#llx) denied", (unsigned long long)allowed[i]);
	for (size_t i = 0; i < ARRAY_SIZE(denied); i++)
		if (!personality_denied(sc, denied[i]))
			fail_msg("personality(%#llx) allowed", (unsigned long long)denied[i]);
	/* every single bit and every value with one bit cleared */
	for (int b = 0; b < 32; b++) {
		assert_true(personality_denied(sc, 1ull << b));
		assert_true(personality_denied(sc, 0xffffffffull & ~(1ull << b)));
	}
	sbx_catalog_free(&cat);
}

/* ---- broken catalogs --------------------------------------------------- */

static const char good_seccomp[] =
	"{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"bpf\"],\"errno\":\"EPERM\","
	"\"why\":\"kernel attack surface\"}]}";
static const char good_network[] = "{\"description\":\"d\",\"kind\":\"disabled\"}";

#define LIMITS(w) "{\"wall_seconds\":" #w ",\"soft_seconds\":5,\"grace_seconds\":1," \
	"\"memory_mib\":64,\"cpu_cores\":1,\"pids\":16,\"output_bytes\":1000," \
	"\"output_files\":4,\"workspace_mib\":16}"

/* A small valid profile; @extra_key/@extra_value add one member (to test
 * unknown or duplicate keys), @binds and @outputs replace those values. */
static char *profile(const char *extra_key, const char *extra_value, const char *seccomp,
		     const char *defaults_wall, const char *binds, const char *outputs)
{
	return sbx_xasprintf(
		"{\"description\":\"d\",\"argv\":[\"/bin/sh\",\"{code}\",\"{args}\"],"
		"\"code_file\":\"main.sh\",\"binds\":%s,"
		"\"symlinks\":[{\"path\":\"/bin\",\"target\":\"usr/bin\"}],"
		"\"env\":{\"PATH\":\"/usr/bin\"},\"env_allow\":[\"TZ\"],\"seccomp\":\"%s\","
		"\"defaults\":{\"wall_seconds\":%s,\"soft_seconds\":5,\"grace_seconds\":1,"
		"\"memory_mib\":64,\"cpu_cores\":1,\"pids\":16,\"output_bytes\":1000,"
		"\"output_files\":4,\"workspace_mib\":16},"
		"\"minimums\":" LIMITS(1) ",\"maximums\":" LIMITS(100) ","
		"\"input_bytes_max\":1000,\"stream_bytes_max\":1000,"
		"\"allowed_outputs\":%s,\"network_profiles\":[\"disabled\"]%s%s%s}",
		binds ? binds : "[\"/usr\"]", seccomp, defaults_wall,
		outputs ? outputs : "[\"text/plain\"]", extra_key ? ",\"" : "", extra_key ? extra_key : "",
		extra_key ? extra_value : "");
}

static void write_file(const char *dir, const char *name, const char *body)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	fputs(body, f);
	assert_int_equal(fclose(f), 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

struct broken {
	const char *name;
	const char *file;     /* relative to the catalog dir */
	const char *body;     /* NULL: generated profile below */
	const char *pkey, *pval, *seccomp, *wall;
	const char *message;  /* start of the message after "<dir>/"; NULL: loads */
	const char *binds, *outputs;
};

/* Most cases leave the trailing members out (NULL: the good default). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct broken broken[] = {
	{ "valid control", NULL, NULL, NULL, NULL, "strict", "10", NULL },
	{ "unknown key", NULL, NULL, "image\":", "\"x\"", "strict", "10",
	  "profiles/p.json: image: unknown key" },
	{ "kernel quotas ok", NULL, NULL, "kernel_quotas\":", "{\"fanotify_groups\":1,\"sigpending\":0}",
	  "strict", "10", NULL },
	{ "kernel quotas unknown key", NULL, NULL, "kernel_quotas\":", "{\"inotify\":1}", "strict",
	  "10", "profiles/p.json: kernel_quotas.inotify: unknown key" },
	{ "kernel quotas above bound", NULL, NULL, "kernel_quotas\":", "{\"sigpending\":65537}",
	  "strict", "10",
	  "profiles/p.json: kernel_quotas.sigpending: expected a non-negative integer of at most 65536, got 65537" },
	{ "kernel quotas negative", NULL, NULL, "kernel_quotas\":", "{\"memlock_bytes\":-1}",
	  "strict", "10",
	  "profiles/p.json: kernel_quotas.memlock_bytes: expected a non-negative integer" },
	{ "kernel quotas not an object", NULL, NULL, "kernel_quotas\":", "16", "strict", "10",
	  "profiles/p.json: kernel_quotas: expected an object" },
	{ "dangling seccomp", NULL, NULL, NULL, NULL, "missing", "10",
	  "profiles/p.json: seccomp: no seccomp policy \"missing\"" },
	{ "default above maximum", NULL, NULL, NULL, NULL, "strict", "101",
	  "profiles/p.json: defaults.wall_seconds: 101 is above maximums.wall_seconds (100)" },
	{ "default below minimum", NULL, NULL, NULL, NULL, "strict", "0",
	  "profiles/p.json: defaults.wall_seconds: expected a positive integer, got 0" },
	{ "relative bind", NULL, NULL, NULL, NULL, NULL, NULL,
	  "profiles/p.json: binds[0]: expected an absolute path in normal form, got \"usr\"",
	  "[\"usr\"]" },
	{ "dotdot bind", NULL, NULL, NULL, NULL, NULL, NULL,
	  "profiles/p.json: binds[0].src: expected an absolute path", "[{\"src\":\"/usr/../etc\"}]" },
	{ "bind over /work", NULL, NULL, NULL, NULL, NULL, NULL,
	  "profiles/p.json: binds[0].dst: /work/x is built by sbx itself",
	  "[{\"src\":\"/srv\",\"dst\":\"/work/x\"}]" },
	{ "bind unknown key", NULL, NULL, NULL, NULL, NULL, NULL,
	  "profiles/p.json: binds[0].ro: unknown key", "[{\"src\":\"/srv\",\"ro\":true}]" },
	{ "optional bind ok", NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	  "[\"/usr\",{\"src\":\"/etc/x\",\"dst\":\"/opt/x\",\"optional\":true}]" },
	{ "duplicate json key", NULL, NULL, "seccomp\":", "\"strict\"", NULL, NULL,
	  "profiles/p.json: line 1 column" },
	{ "unknown output type", NULL, NULL, NULL, NULL, NULL, NULL,
	  "profiles/p.json: allowed_outputs[0]: expected a media type sbx validates, got \"text/html\"",
	  NULL, "[\"text/html\"]" },
	{ "bad syscall name", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"bpf\",\"frobnicate\"],"
	  "\"errno\":\"EPERM\",\"why\":\"typo catcher\"}]}",
	  NULL, NULL, NULL, NULL,
	  "seccomp/strict.json: deny[0].syscalls[1]: expected a system call name libseccomp knows, got \"frobnicate\"" },
	{ "seccomp without why", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"bpf\"],\"errno\":\"EPERM\"}]}", NULL, NULL,
	  NULL, NULL, "seccomp/strict.json: deny[0].why: missing required key" },
	{ "seccomp bad errno", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"bpf\"],\"errno\":\"EWHAT\",\"why\":\"because so\"}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].errno: expected an errno name" },
	{ "seccomp same arg twice", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"personality\"],\"errno\":\"EPERM\","
	  "\"why\":\"because so\",\"args\":[{\"index\":0,\"op\":\"ne\",\"value\":0},"
	  "{\"index\":0,\"op\":\"ne\",\"value\":\"0xffffffff\"}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[1]: argument 0 is compared twice" },
	{ "seccomp value outside mask", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"ioctl\"],\"errno\":\"EPERM\","
	  "\"why\":\"because so\",\"args\":[{\"index\":1,\"op\":\"masked_eq\",\"mask\":\"0xff\",\"value\":\"0x5412\"}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].value: has bits outside the mask" },
	{ "seccomp bad hex", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"ioctl\"],\"errno\":\"EPERM\","
	  "\"why\":\"because so\",\"args\":[{\"index\":1,\"op\":\"eq\",\"value\":\"0xfffffffffffffffff\"}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].value: expected a non-negative integer or a string" },
	{ "bad file name", "profiles/Bad.json", "{}", NULL, NULL, NULL, NULL,
	  "profiles/Bad.json: name \"Bad\" does not match" },
	{ "stray file", "network/notes.txt", "x", NULL, NULL, NULL, NULL,
	  "network/notes.txt: not a catalog file" },
	{ "egress on disabled", "network/disabled.json",
	  "{\"description\":\"d\",\"kind\":\"disabled\",\"allow\":[]}", NULL, NULL, NULL, NULL,
	  "network/disabled.json: allow: only allowed with kind \"egress\"" },
	{ "egress bad host", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[{\"host\":\"Exa_mple.com\",\"ports\":[443]}]}",
	  NULL, NULL, NULL, NULL, "network/web.json: allow[0].host: expected a lowercase host name" },
	{ "egress bad port", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[{\"host\":\"example.com\",\"ports\":[70000]}]}",
	  NULL, NULL, NULL, NULL, "network/web.json: allow[0].ports[0]: expected a positive integer of at most 65535, got 70000" },
	{ "egress bad cidr", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[],\"allow_cidrs\":[\"10.0.0.0/33\"]}",
	  NULL, NULL, NULL, NULL, "network/web.json: allow_cidrs[0]: expected an address/prefix" },
};
#pragma GCC diagnostic pop

static void test_broken(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(broken); i++) {
		const struct broken *b = &broken[i];
		char dir[] = "/tmp/sbx-test-catalog-XXXXXX";
		_cleanup_free_ char *prof = NULL, *sub = NULL, *want = NULL;
		struct sbx_catalog cat;
		struct sbx_error err = { 0 };
		int r;

		assert_non_null(mkdtemp(dir));
		for (const char *const *s = (const char *const[]){ "profiles", "network", "seccomp", NULL };
		     *s; s++) {
			_cleanup_free_ char *p = sbx_xasprintf("%s/%s", dir, *s);
			assert_int_equal(mkdir(p, 0700), 0);
		}
		write_file(dir, "seccomp/strict.json", good_seccomp);
		write_file(dir, "network/disabled.json", good_network);
		if (b->body) {
			prof = profile(NULL, NULL, "strict", "10", NULL, NULL);
			write_file(dir, "profiles/p.json", prof);
			write_file(dir, b->file, b->body);
		} else {
			prof = profile(b->pkey, b->pval, b->seccomp ? b->seccomp : "strict",
				       b->wall ? b->wall : "10", b->binds, b->outputs);
			write_file(dir, "profiles/p.json", prof);
		}

		r = sbx_catalog_load(&cat, dir, &err);
		if (!b->message) {
			if (r != 0)
				fail_msg("%s: %s", b->name, err.msg);
			assert_int_equal(cat.n_profiles, 1);
			sbx_catalog_free(&cat);
		} else {
			if (r == 0)
				fail_msg("%s: loaded", b->name);
			assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
			/* Nothing of a broken catalog is left behind. */
			assert_null(cat.profiles);
			assert_int_equal(cat.n_seccomp, 0);
			want = sbx_xasprintf("%s/%s", dir, b->message);
			if (strncmp(err.msg, want, strlen(want)) != 0)
				fail_msg("%s: message \"%s\" does not start \"%s\"", b->name, err.msg, want);
		}
		assert_int_equal(nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS), 0);
	}
}

static void test_missing_dir(void **state)
{
	struct sbx_catalog cat;
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_catalog_load(&cat, "/nonexistent/sbx-policy", &err), -1);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	assert_int_equal(err.errnum, ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/sbx-policy/seccomp"));
}

static void test_default_dir(void **state)
{
	struct sbx_hostconfig cfg = { .policy = (char *)"/etc/custom" };
	const char *d;

	assert_string_equal(sbx_catalog_default_dir("/opt/p", &cfg), "/opt/p");
	assert_string_equal(sbx_catalog_default_dir(NULL, &cfg), "/etc/custom");
	cfg.policy = NULL;
	d = sbx_catalog_default_dir(NULL, &cfg);
	assert_true(strcmp(d, SYSCONFDIR "/sbx/policy") == 0 || strcmp(d, DATADIR "/sbx/policy") == 0);
}

static void test_media_and_names(void **state)
{
	assert_true(sbx_media_type_known("text/csv"));
	assert_true(sbx_media_type_known("application/pdf"));
	assert_false(sbx_media_type_known("text/html"));
	assert_false(sbx_media_type_known("TEXT/CSV"));
	assert_true(sbx_catalog_name_valid("python-analysis"));
	assert_true(sbx_catalog_name_valid("a_1"));
	assert_false(sbx_catalog_name_valid("-a"));
	assert_false(sbx_catalog_name_valid("A"));
	assert_false(sbx_catalog_name_valid(".."));
	assert_false(sbx_catalog_name_valid(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped),      cmocka_unit_test(test_personality),
		cmocka_unit_test(test_broken),       cmocka_unit_test(test_missing_dir),
		cmocka_unit_test(test_default_dir),  cmocka_unit_test(test_media_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
