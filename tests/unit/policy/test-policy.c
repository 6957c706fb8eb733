/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-policy.c - admission against the shipped catalog: refusals (77)
 * name the JSON path and the bound; omitted limits take the defaults.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "policy.h"

static struct sbx_catalog cat;

static int setup(void **state)
{
	const char *s = getenv("SBX_SRCDIR");
	_cleanup_free_ char *dir = sbx_xasprintf("%s/policy", s && *s ? s : SBX_SRCDIR);
	struct sbx_error err = { 0 };

	if (sbx_catalog_load(&cat, dir, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	sbx_catalog_free(&cat);
	return 0;
}

struct policy_case {
	const char *name;
	const char *json;
	int code;
	const char *message;
};

#define PY "\"runtime_profile\":\"python-analysis\",\"code\":\"\""
#define SH "\"runtime_profile\":\"shell\",\"code\":\"\""

static const struct policy_case cases[] = {
	{ "python minimal", "{" PY "}", 0, NULL },
	{ "shell with everything at the maximum",
	  "{" SH ",\"limits\":{\"wall_seconds\":3600,\"soft_seconds\":3599,\"grace_seconds\":30,"
	  "\"memory_mib\":8192,\"cpu_cores\":2,\"pids\":1024,\"output_bytes\":1073741824,"
	  "\"output_files\":10000,\"workspace_mib\":4096}}", 0, NULL },
	{ "at the minimum", "{" SH ",\"limits\":{\"wall_seconds\":2,\"soft_seconds\":1,\"memory_mib\":16,"
	  "\"cpu_cores\":0.1,\"pids\":8,\"workspace_mib\":8}}", 0, NULL },
	{ "unknown profile", "{\"runtime_profile\":\"ruby\",\"code\":\"\"}", SBX_EXIT_REFUSED,
	  "job.json: runtime_profile: no runtime profile \"ruby\" in the catalog" },
	{ "path-like profile", "{\"runtime_profile\":\"../profiles/shell\",\"code\":\"\"}", SBX_EXIT_REFUSED,
	  "job.json: runtime_profile: no runtime profile \"../profiles/shell\"" },
	{ "interpreter path as profile", "{\"runtime_profile\":\"/usr/bin/python3\",\"code\":\"\"}",
	  SBX_EXIT_REFUSED, "job.json: runtime_profile: no runtime profile \"/usr/bin/python3\"" },
	{ "file name as profile", "{\"runtime_profile\":\"shell.json\",\"code\":\"\"}", SBX_EXIT_REFUSED,
	  "job.json: runtime_profile: no runtime profile" },
	{ "escape in profile name", "{\"runtime_profile\":\"\\u001b[2J\",\"code\":\"\"}", SBX_EXIT_REFUSED,
	  "no runtime profile \"\\x1b[2J\"" },
	{ "unknown network", "{" PY ",\"network_profile\":\"host\"}", SBX_EXIT_REFUSED,
	  "job.json: network_profile: no network profile \"host\" in the catalog" },
	{ "network not allowed", "{" SH ",\"network_profile\":\"egress-example\"}", SBX_EXIT_REFUSED,
	  "job.json: network_profile: profile \"shell\" does not allow network profile \"egress-example\"" },
	{ "network allowed", "{" PY ",\"network_profile\":\"egress-example\"}", 0, NULL },
	{ "memory above max", "{" PY ",\"limits\":{\"memory_mib\":8193}}", SBX_EXIT_REFUSED,
	  "job.json: limits.memory_mib: 8193 is above the maximum 8192 of profile \"python-analysis\"" },
	{ "memory below min", "{" PY ",\"limits\":{\"memory_mib\":15}}", SBX_EXIT_REFUSED,
	  "job.json: limits.memory_mib: 15 is below the minimum 16 of profile \"python-analysis\"" },
	{ "wall above max", "{" SH ",\"limits\":{\"wall_seconds\":3601}}", SBX_EXIT_REFUSED,
	  "job.json: limits.wall_seconds: 3601 is above the maximum 3600" },
	{ "cpu above max", "{" SH ",\"limits\":{\"cpu_cores\":2.5}}", SBX_EXIT_REFUSED,
	  "job.json: limits.cpu_cores: 2.5 is above the maximum 2 of profile \"shell\"" },
	{ "cpu below min", "{" SH ",\"limits\":{\"cpu_cores\":0.05}}", SBX_EXIT_REFUSED,
	  "job.json: limits.cpu_cores: 0.05 is below the minimum 0.1" },
	{ "pids above max", "{" SH ",\"limits\":{\"pids\":1025}}", SBX_EXIT_REFUSED,
	  "job.json: limits.pids: 1025 is above the maximum 1024" },
	{ "output bytes above max", "{" SH ",\"limits\":{\"output_bytes\":1073741825}}", SBX_EXIT_REFUSED,
	  "job.json: limits.output_bytes: 1073741825 is above the maximum 1073741824" },
	{ "grace above max", "{" SH ",\"limits\":{\"grace_seconds\":31}}", SBX_EXIT_REFUSED,
	  "job.json: limits.grace_seconds: 31 is above the maximum 30" },
	{ "env not allowed", "{" PY ",\"env\":{\"TZ\":\"UTC\",\"LD_PRELOAD\":\"/tmp/x.so\"}}", SBX_EXIT_REFUSED,
	  "job.json: env.LD_PRELOAD: not in env_allow of profile \"python-analysis\"" },
	{ "env fixed key not overridable", "{" PY ",\"env\":{\"PATH\":\"/tmp\"}}", SBX_EXIT_REFUSED,
	  "job.json: env.PATH: not in env_allow" },
	{ "output type not allowed", "{" SH ",\"allowed_outputs\":[\"text/csv\",\"application/pdf\"]}",
	  SBX_EXIT_REFUSED, "job.json: allowed_outputs[1]: profile \"shell\" does not allow output type application/pdf" },
	/* Well-formed but not allowed is refused, whether or not sbx has a
	 * validator for the type (SPEC §3). */
	{ "output type sbx does not validate", "{" SH ",\"allowed_outputs\":[\"text/csv\",\"text/html\"]}",
	  SBX_EXIT_REFUSED, "job.json: allowed_outputs[1]: profile \"shell\" does not allow output type text/html" },
	{ "output type with odd characters", "{" SH ",\"allowed_outputs\":[\"x-a!#$&^_.+-/y\"]}",
	  SBX_EXIT_REFUSED, "job.json: allowed_outputs[0]: profile \"shell\" does not allow output type x-a!#$&^_.+-/y" },
	{ "soft explicit above default wall", "{" SH ",\"limits\":{\"soft_seconds\":90}}", SBX_EXIT_INVALID,
	  "job.json: limits.soft_seconds: must be less than the wall deadline (60 s" },
	{ "default soft above explicit wall", "{" SH ",\"limits\":{\"wall_seconds\":10}}", 0, NULL },
};

static void test_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbx_error err = { 0 };
		struct sbx_plan plan;
		struct sbx_job job;
		int r;

		if (sbx_job_parse(&job, "job.json", cases[i].json, strlen(cases[i].json), &err) < 0)
			fail_msg("%s: job did not parse: %s", cases[i].name, err.msg);
		r = sbx_policy_admit(&plan, &job, &cat, &err);
		if (cases[i].code == 0 && r != 0)
			fail_msg("%s: refused: %s", cases[i].name, err.msg);
		if (cases[i].code != 0) {
			if (r == 0)
				fail_msg("%s: admitted", cases[i].name);
			if (err.code != cases[i].code)
				fail_msg("%s: exit %d, want %d: %s", cases[i].name, err.code, cases[i].code, err.msg);
			if (!strstr(err.msg, cases[i].message))
				fail_msg("%s: \"%s\" lacks \"%s\"", cases[i].name, err.msg, cases[i].message);
			assert_null(strchr(err.msg, '\x1b'));
		}
		sbx_plan_free(&plan);
		sbx_job_free(&job);
	}
}

static int admit(const char *json, struct sbx_plan *plan, struct sbx_job *job)
{
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_job_parse(job, "job.json", json, strlen(json), &err), 0);
	if (sbx_policy_admit(plan, job, &cat, &err) < 0)
		fail_msg("%s", err.msg);
	return 0;
}

static void test_defaults(void **state)
{
	const struct sbx_profile *py = sbx_catalog_profile(&cat, "python-analysis");
	struct sbx_plan plan;
	struct sbx_job job;

	admit("{" PY ",\"limits\":{\"memory_mib\":768}}", &plan, &job);
	assert_ptr_equal(plan.profile, py);
	assert_string_equal(plan.network->name, "disabled");
	assert_string_equal(plan.seccomp->name, "default");
	for (size_t i = 0; i < _SBX_LIMIT_MAX; i++) {
		assert_true(sbx_limit_is_set(&plan.limits, (enum sbx_limit_id)i));
		if (i != SBX_LIMIT_MEMORY_MIB)
			assert_int_equal(plan.limits.v[i], py->defaults.v[i]);
	}
	assert_int_equal(plan.limits.v[SBX_LIMIT_MEMORY_MIB], 768);
	assert_int_equal(plan.limits.v[SBX_LIMIT_WALL_SECONDS], 60);
	assert_int_equal(plan.limits.v[SBX_LIMIT_SOFT_SECONDS], 30);
	assert_int_equal(plan.limits.v[SBX_LIMIT_CPU_MILLICORES], 1000);
	/* Omitted allowed_outputs: the profile's list. */
	assert_int_equal(sbx_strv_length(plan.allowed_outputs), sbx_strv_length(py->allowed_outputs));
	assert_string_equal(plan.allowed_outputs[0], py->allowed_outputs[0]);
	sbx_plan_free(&plan);
	sbx_job_free(&job);

	/* A default soft deadline at or above the job's wall is dropped (0). */
	admit("{" SH ",\"limits\":{\"wall_seconds\":30}}", &plan, &job);
	assert_int_equal(plan.limits.v[SBX_LIMIT_WALL_SECONDS], 30);
	assert_int_equal(plan.limits.v[SBX_LIMIT_SOFT_SECONDS], 0);
	sbx_plan_free(&plan);
	sbx_job_free(&job);

	/* The job's list, when it gave one. */
	admit("{" SH ",\"allowed_outputs\":[\"image/png\"]}", &plan, &job);
	assert_string_equal(plan.allowed_outputs[0], "image/png");
	assert_null(plan.allowed_outputs[1]);
	sbx_plan_free(&plan);
	sbx_job_free(&job);
}

static bool env_has(char **env, const char *kv)
{
	for (size_t i = 0; env[i]; i++)
		if (strcmp(env[i], kv) == 0)
			return true;
	return false;
}

static void test_env(void **state)
{
	const struct sbx_profile *py = sbx_catalog_profile(&cat, "python-analysis");
	struct sbx_plan plan;
	struct sbx_job job;

	admit("{" PY ",\"env\":{\"TZ\":\"Europe/Paris\",\"MPLBACKEND\":\"pdf\"}}", &plan, &job);
	assert_true(env_has(plan.env, "TZ=Europe/Paris"));
	/* An allowed key replaces the profile's value, once. */
	assert_true(env_has(plan.env, "MPLBACKEND=pdf"));
	assert_false(env_has(plan.env, "MPLBACKEND=Agg"));
	assert_true(env_has(plan.env, "PATH=/usr/bin:/bin"));
	assert_true(env_has(plan.env, "HOME=/work"));
	assert_int_equal(sbx_strv_length(plan.env), sbx_strv_length(py->env) + 1);
	/* Nothing from the caller's environment. */
	assert_false(env_has(plan.env, "USER=root"));
	for (size_t i = 0; plan.env[i]; i++)
		assert_true(strncmp(plan.env[i], "SBX_SRCDIR=", 11) != 0);
	sbx_plan_free(&plan);
	sbx_job_free(&job);
}

static void test_refused_keeps_profile(void **state)
{
	static const char json[] = "{" PY ",\"limits\":{\"pids\":4096}}";
	struct sbx_error err = { 0 };
	struct sbx_plan plan;
	struct sbx_job job;

	assert_int_equal(sbx_job_parse(&job, "job.json", json, strlen(json), &err), 0);
	assert_int_equal(sbx_policy_admit(&plan, &job, &cat, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_REFUSED);
	assert_non_null(plan.profile);
	assert_string_equal(plan.profile->name, "python-analysis");
	assert_null(plan.env);
	sbx_plan_free(&plan);
	sbx_job_free(&job);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_refused_keeps_profile),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
