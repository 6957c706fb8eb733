/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-oneliner.c - the job a one-line run builds: canonical bytes (the
 * same options, the same job_sha256), member for member what a job file
 * would hold, numbers as written, and only what cannot be JSON at all
 * refused here; everything else is left to the job parser.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "inputs.h"
#include "job.h"
#include "oneliner.h"

static char *build(const struct sbx_oneliner *o, int *code)
{
	struct sbx_error err = { 0 };
	char *job = NULL;
	size_t len = 0;

	*code = sbx_oneliner_build(o, &job, &len, &err) < 0 ? err.code : 0;
	if (*code)
		return NULL;
	assert_int_equal(strlen(job), len);
	return job;
}

/* -i with '=' or '/' is a local file: never a member of the job, and
 * named by NAME or by PATH's last component. */
static void test_local_inputs(void **state)
{
	const char *handles[] = { "h.csv", "data=./x.csv", "sub/y.txt", "./z", NULL };
	const char *twice[] = { "a=./x", "./a", NULL };
	const char *bad[] = { "a b=./x", NULL };
	const char *empty[] = { "a=", NULL };
	const char *dirslash[] = { "sub/", NULL };
	struct sbx_oneliner o = { .profile = "shell", .handles = handles, .code = "true" };
	struct sbx_local_inputs li;
	struct sbx_error err = { 0 };
	_cleanup_free_ char *job = NULL;
	int code;

	(void)state;
	job = build(&o, &code);
	assert_int_equal(code, 0);
	assert_string_equal(job, "{\"code\":\"true\",\"input_handles\":[\"h.csv\"],"
				 "\"runtime_profile\":\"shell\"}");
	assert_true(sbx_local_input_spec("a=b") && sbx_local_input_spec("./a"));
	assert_false(sbx_local_input_spec("a.csv"));

	assert_int_equal(sbx_local_inputs_parse(handles, &li, &err), 0);
	assert_int_equal(li.n, 3);
	assert_string_equal(li.v[0].name, "data");
	assert_string_equal(li.v[0].path, "./x.csv");
	assert_string_equal(li.v[1].name, "y.txt");
	assert_string_equal(li.v[2].name, "z");
	assert_int_equal(li.v[2].fd, -1);
	sbx_local_inputs_free(&li);

	{
		const char *const *cases[] = { twice, bad, empty, dirslash };

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct sbx_error e = { 0 };

			assert_int_equal(sbx_local_inputs_parse(cases[i], &li, &e), -1);
			assert_int_equal(e.code, SBX_EXIT_USAGE);
			sbx_local_inputs_free(&li);
		}
	}
}

static void test_canonical(void **state)
{
	const char *handles[] = { "b.csv", "a.csv", NULL };
	const char *limits[] = { "memory_mib=128", "cpu_cores=0.5", "wall_seconds=10", NULL };
	const char *allow[] = { "text/plain", NULL };
	const char *require[] = { "o.txt", NULL };
	const char *args[] = { "a b", "-x", "\"q\"", NULL };
	struct sbx_oneliner o = { .profile = "shell", .network = "disabled", .handles = handles,
				  .limits = limits, .allow = allow, .require = require,
				  .code = "echo \"$1\"\n\ttab", .args = args };
	int code;
	char *job;

	(void)state;
	job = build(&o, &code);
	assert_int_equal(code, 0);
	/* Keys sorted, no whitespace, handles in the order given. */
	assert_string_equal(job,
			    "{\"allowed_outputs\":[\"text/plain\"],\"args\":[\"a b\",\"-x\",\"\\\"q\\\"\"],"
			    "\"code\":\"echo \\\"$1\\\"\\n\\ttab\",\"input_handles\":[\"b.csv\",\"a.csv\"],"
			    "\"limits\":{\"cpu_cores\":0.5,\"memory_mib\":128,\"wall_seconds\":10},"
			    "\"network_profile\":\"disabled\",\"required_outputs\":[\"o.txt\"],"
			    "\"runtime_profile\":\"shell\"}");
	free(job);
}

/* --require PATH:CHECK=VALUE...: an output contract, checks of one path
 * merged, patterns keeping their colons; malformed checks are 64. */
static void test_require_contract(void **state)
{
	static struct {
		const char *req[4];
		const char *want; /* the job's members after "code", or NULL: 64 */
	} cases[] = {
		{ { "t.csv:rows=1..", NULL }, "\"outputs\":{\"t.csv\":{\"rows\":{\"min\":1}}}" },
		{ { "t.csv:rows=3", NULL }, "\"outputs\":{\"t.csv\":{\"rows\":{\"max\":3,\"min\":3}}}" },
		{ { "t.csv:total.sum=26.5~0.005", "t.csv:id.unique:id.type=integer", "plain.txt", NULL },
		  "\"outputs\":{\"t.csv\":{\"columns\":{\"id\":{\"type\":\"integer\",\"unique\":true},"
		  "\"total\":{\"sum\":{\"equals\":26.5,\"tolerance\":0.005},\"type\":\"number\"}}}},"
		  "\"required_outputs\":[\"plain.txt\"]" },
		{ { "n.txt:lines=..3:pattern=^a:b$", NULL },
		  "\"outputs\":{\"n.txt\":{\"lines\":{\"max\":3},\"pattern\":\"^a:b$\"}}" },
		{ { "t.csv:header=a,b", NULL }, "\"outputs\":{\"t.csv\":{\"header\":[\"a\",\"b\"]}}" },
		{ { "t.csv:rows", NULL }, NULL },
		{ { "t.csv:=1", NULL }, NULL },
		{ { "t.csv:", NULL }, NULL },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbx_oneliner o = { .profile = "shell", .code = "true", .require = cases[i].req };
		char want[1024];
		int code;
		char *job = build(&o, &code);

		if (!cases[i].want) {
			assert_null(job);
			assert_int_equal(code, SBX_EXIT_USAGE);
			continue;
		}
		assert_int_equal(code, 0);
		snprintf(want, sizeof(want), "{\"code\":\"true\",%s,\"runtime_profile\":\"shell\"}",
			 cases[i].want);
		assert_string_equal(job, want);
		free(job);
	}
}

static void test_minimal_and_parsed(void **state)
{
	struct sbx_oneliner o = { .profile = "shell", .code = "true" };
	struct sbx_error err = { 0 };
	struct sbx_job j;
	int code;
	char *job;

	(void)state;
	job = build(&o, &code);
	/* Nothing that no option gave: no args, no limits, no network. */
	assert_string_equal(job, "{\"code\":\"true\",\"runtime_profile\":\"shell\"}");
	assert_int_equal(sbx_job_parse(&j, SBX_ONELINER_SOURCE, job, strlen(job), &err), 0);
	assert_string_equal(j.runtime_profile, "shell");
	assert_null(j.network_profile);
	sbx_job_free(&j);
	free(job);
}

static void test_numbers(void **state)
{
	static const struct {
		const char *limit, *json;
	} cases[] = {
		{ "cpu_cores=0.1", "{\"cpu_cores\":0.1}" },
		{ "cpu_cores=1.25", "{\"cpu_cores\":1.25}" },
		{ "cpu_cores=2.0", "{\"cpu_cores\":2}" },       /* RFC 8785: 2.0 is 2 */
		{ "wall_seconds=1e1", "{\"wall_seconds\":10}" },
		{ "memory_mib=-3", "{\"memory_mib\":-3}" },     /* the parser refuses it */
		{ "memory_mib=lots", "{\"memory_mib\":\"lots\"}" },
		{ "memory_mib=", "{\"memory_mib\":\"\"}" },
		{ "memory_mib=true", "{\"memory_mib\":\"true\"}" },
		{ "memory_mib=[1]", "{\"memory_mib\":\"[1]\"}" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *limits[] = { cases[i].limit, NULL };
		struct sbx_oneliner o = { .profile = "p", .code = "c", .limits = limits };
		_cleanup_free_ char *want =
			sbx_xasprintf("{\"code\":\"c\",\"limits\":%s,\"runtime_profile\":\"p\"}",
				      cases[i].json);
		int code;
		_cleanup_free_ char *job = build(&o, &code);

		assert_int_equal(code, 0);
		assert_string_equal(job, want);
	}
}

static void test_job_parser_judges(void **state)
{
	const char *limits[] = { "memory_mib=lots", NULL };
	struct sbx_oneliner o = { .profile = "shell", .code = "true", .limits = limits };
	struct sbx_error err = { 0 };
	struct sbx_job j;
	int code;
	_cleanup_free_ char *job = build(&o, &code);

	(void)state;
	assert_int_equal(sbx_job_parse(&j, SBX_ONELINER_SOURCE, job, strlen(job), &err), -1);
	assert_int_equal(err.code, SBX_EXIT_INVALID);
	assert_non_null(strstr(err.msg, "<command line>: limits.memory_mib: expected a positive integer"));
	sbx_job_free(&j);
}

static void test_refused_here(void **state)
{
	const char *no_eq[] = { "memory_mib", NULL };
	const char *no_key[] = { "=1", NULL };
	const char *twice[] = { "pids=1", "pids=2", NULL };
	const char *bad_arg[] = { "\xff", NULL };
	int code;

	(void)state;
	assert_null(build(&(struct sbx_oneliner){ .profile = "p", .code = "c", .limits = no_eq }, &code));
	assert_int_equal(code, SBX_EXIT_USAGE);
	assert_null(build(&(struct sbx_oneliner){ .profile = "p", .code = "c", .limits = no_key }, &code));
	assert_int_equal(code, SBX_EXIT_USAGE);
	assert_null(build(&(struct sbx_oneliner){ .profile = "p", .code = "c", .limits = twice }, &code));
	assert_int_equal(code, SBX_EXIT_USAGE);
	/* Not UTF-8: as a job file holding it would be, 65. */
	assert_null(build(&(struct sbx_oneliner){ .profile = "p", .code = "\xc3(" }, &code));
	assert_int_equal(code, SBX_EXIT_INVALID);
	assert_null(build(&(struct sbx_oneliner){ .profile = "p\xff", .code = "c" }, &code));
	assert_int_equal(code, SBX_EXIT_INVALID);
	assert_null(build(&(struct sbx_oneliner){ .profile = "p", .code = "c", .args = bad_arg }, &code));
	assert_int_equal(code, SBX_EXIT_INVALID);
}

static void test_file(void **state)
{
	char path[] = "/tmp/sbx-test-oneliner.XXXXXX";
	const char *args[] = { "1", NULL };
	int fd = mkstemp(path);
	int code;
	char *job;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "echo \"$1\"\n", 10), 10);
	close(fd);
	job = build(&(struct sbx_oneliner){ .profile = "shell", .file = path, .args = args }, &code);
	assert_int_equal(code, 0);
	assert_string_equal(job, "{\"args\":[\"1\"],\"code\":\"echo \\\"$1\\\"\\n\",\"runtime_profile\":\"shell\"}");
	free(job);

	/* Larger than a job's code may be: 65, before anything is built. */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, SBX_JOB_MAX_CODE_BYTES + 1), 0);
	close(fd);
	assert_null(build(&(struct sbx_oneliner){ .profile = "shell", .file = path }, &code));
	assert_int_equal(code, SBX_EXIT_INVALID);
	unlink(path);

	assert_null(build(&(struct sbx_oneliner){ .profile = "shell", .file = path }, &code));
	assert_int_equal(code, SBX_EXIT_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canonical),
		cmocka_unit_test(test_require_contract),
		cmocka_unit_test(test_minimal_and_parsed),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_job_parser_judges),
		cmocka_unit_test(test_refused_here),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_local_inputs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
