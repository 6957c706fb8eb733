/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-template.c - a template's digest changes with each thing that
 * shaped the template, and only with those; its socket's name.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "template.h"
#include "util.h"

static const char profile_json[] =
	"{\"description\": \"d\", \"argv\": [\"/usr/bin/python3\", \"-I\", \"{code}\", \"{args}\"],\n"
	" \"defaults\": {\"cpu_cores\": 0.5}, \"template\": {\"imports\": [\"numpy\"]}}\n";

static void base(struct sbx_template_ident *id, struct sbx_profile *pr, const char *raw)
{
	memset(pr, 0, sizeof(*pr));
	pr->name = (char *)"python-analysis";
	pr->file = (char *)"profiles/python-analysis.json";
	pr->raw = (char *)raw;
	pr->raw_len = strlen(raw);
	memset(id, 0, sizeof(*id));
	id->profile = pr;
	id->prepared_sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	id->binary = (struct sbx_file_ident){ 2049, 100, 50000, 1700000000000000000, "/usr/libexec/sbx/sbx-template" };
	id->interpreter = (struct sbx_file_ident){ 2049, 200, 6000000, 1600000000000000000, "/usr/bin/python3.11" };
	id->idle_seconds = 300;
	id->max_runs = 1000;
	id->max_seconds = 3600;
}

static void digest_of(const struct sbx_template_ident *id, char out[17])
{
	struct sbx_error err = { 0 };

	if (sbx_template_digest(id, out, &err) < 0)
		fail_msg("digest: %s", err.msg);
	assert_int_equal(strlen(out), 16);
	assert_int_equal(strspn(out, "0123456789abcdef"), 16);
}

static void test_digest(void **state)
{
	struct sbx_template_ident id;
	struct sbx_profile pr;
	char d0[17], d[17];

	(void)state;
	base(&id, &pr, profile_json);
	digest_of(&id, d0);
	/* The same inputs, the same digest. */
	digest_of(&id, d);
	assert_string_equal(d, d0);

	/* Reformatting the profile (keys reordered, whitespace) keeps it. */
	base(&id, &pr,
	     "{\"template\":{\"imports\":[\"numpy\"]},\"defaults\":{\"cpu_cores\":0.5},"
	     "\"description\":\"d\",\"argv\":[\"/usr/bin/python3\",\"-I\",\"{code}\",\"{args}\"]}");
	digest_of(&id, d);
	assert_string_equal(d, d0);

	/* Each input changes it. */
	base(&id, &pr,
	     "{\"description\": \"d\", \"argv\": [\"/usr/bin/python3\", \"-I\", \"{code}\", \"{args}\"],"
	     " \"defaults\": {\"cpu_cores\": 0.5}, \"template\": {\"imports\": [\"numpy\", \"pandas\"]}}");
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	base(&id, &pr, profile_json);
	pr.name = (char *)"other";
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	base(&id, &pr, profile_json);
	id.prepared_sha256 = NULL;
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	base(&id, &pr, profile_json);
	id.prepared_sha256 = "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	base(&id, &pr, profile_json);
	id.binary.mtime_ns++;
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	base(&id, &pr, profile_json);
	id.binary.ino++;
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	base(&id, &pr, profile_json);
	id.interpreter.size++;
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	base(&id, &pr, profile_json);
	id.interpreter.path = "/usr/bin/python3.12";
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	base(&id, &pr, profile_json);
	id.interpreter.path = NULL;
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	base(&id, &pr, profile_json);
	id.idle_seconds = 301;
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	base(&id, &pr, profile_json);
	id.max_runs = 999;
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	base(&id, &pr, profile_json);
	id.max_seconds = 60;
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
	/* The fields do not run into each other: idle 30 runs 01 is not
	 * idle 3 runs 001. */
	base(&id, &pr, profile_json);
	id.idle_seconds = 30, id.max_runs = 1;
	digest_of(&id, d0);
	id.idle_seconds = 3, id.max_runs = 1;
	digest_of(&id, d);
	assert_string_not_equal(d, d0);
}

static void test_bad_profile(void **state)
{
	struct sbx_template_ident id;
	struct sbx_profile pr;
	struct sbx_error err = { 0 };
	char d[17];

	(void)state;
	base(&id, &pr, "{\"argv\":");
	assert_int_equal(sbx_template_digest(&id, d, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_SOFTWARE);
	assert_non_null(strstr(err.msg, "profiles/python-analysis.json"));
}

static void test_names(void **state)
{
	_cleanup_free_ char *p = NULL;
	char k1[9], k2[9], k3[9];

	(void)state;
	sbx_template_catalog_key("/etc/sbx/policy", k1);
	sbx_template_catalog_key("/etc/sbx/policy", k2);
	sbx_template_catalog_key("/usr/share/sbx/policy", k3);
	assert_int_equal(strlen(k1), 8);
	assert_string_equal(k1, k2);
	assert_string_not_equal(k1, k3);
	p = sbx_template_socket_path("/run/sbx", k1, "python-analysis", "0123456789abcdef");
	assert_true(strncmp(p, "/run/sbx/templates/", 19) == 0);
	assert_non_null(strstr(p, "-python-analysis-0123456789abcdef.sock"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_bad_profile),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
