/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-subids.c - an ordinary user's subordinate ranges: found by login
 * name or uid, the first one, both files or neither, malformed lines
 * skipped; the slot's ids are first + slot, refused past either range.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include "subids.h"
#include "util.h"

static char etc[64];

static void put(const char *name, const char *text)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/%s", etc, name);
	FILE *f = fopen(p, "we");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void drop(const char *name)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/%s", etc, name);
	unlink(p);
}

static int setup(void **state)
{
	(void)state;
	snprintf(etc, sizeof(etc), "/tmp/sbx-test-subids.XXXXXX");
	assert_non_null(mkdtemp(etc));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	drop("subuid");
	drop("subgid");
	rmdir(etc);
	return 0;
}

static const struct {
	const char *what;
	const char *subuid, *subgid; /* NULL: no file */
	int want;                    /* sbx_sub_ids_find() */
	uint32_t ufirst, ucount, gfirst, gcount;
} cases[] = {
	{ "no files", NULL, NULL, 0, 0, 0, 0, 0 },
	{ "empty files", "", "", 0, 0, 0, 0, 0 },
	{ "someone else's", "bob:100000:65536\n", "bob:100000:65536\n", 0, 0, 0, 0, 0 },
	{ "by name", "alice:100000:65536\n", "alice:200000:100\n", 1, 100000, 65536, 200000, 100 },
	{ "by uid", "1000:100000:8\n", "1000:100000:8\n", 1, 100000, 8, 100000, 8 },
	{ "the first of two", "alice:5000:2\nalice:9000:64\n", "alice:5000:2\n", 1, 5000, 2, 5000, 2 },
	{ "a prefix of the name is not the name", "alic:100000:8\nalicea:1:8\n", "", 0, 0, 0, 0, 0 },
	{ "comments and malformed lines skipped",
	  "# alice:1:1\nalice:x:8\nalice:10:0\nalice:-1:8\nalice:4294967295:2\nalice:300000:16\n",
	  "alice:300000:16\n", 1, 300000, 16, 300000, 16 },
	{ "the last line without a newline", "alice:400000:4", "alice:400000:4", 1, 400000, 4,
	  400000, 4 },
	{ "only subuid", "alice:100000:8\n", NULL, -1, 0, 0, 0, 0 },
	{ "only subgid", "", "alice:100000:8\n", -1, 0, 0, 0, 0 },
};

static void test_find(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbx_sub_ids ids = { 0 };
		struct sbx_error err = { 0 };
		int r;

		drop("subuid");
		drop("subgid");
		if (cases[i].subuid)
			put("subuid", cases[i].subuid);
		if (cases[i].subgid)
			put("subgid", cases[i].subgid);
		r = sbx_sub_ids_find(etc, "alice", 1000, &ids, &err);
		if (r != cases[i].want)
			fail_msg("%s: %d, wanted %d (%s)", cases[i].what, r, cases[i].want, err.msg);
		if (r < 0) {
			assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
			assert_non_null(strstr(err.msg, "a range and"));
			assert_non_null(strstr(err.hint, "usermod --add-subuids"));
		}
		if (r == 1 && (ids.uid.first != cases[i].ufirst || ids.uid.count != cases[i].ucount ||
			       ids.gid.first != cases[i].gfirst || ids.gid.count != cases[i].gcount))
			fail_msg("%s: %u+%u %u+%u", cases[i].what, ids.uid.first, ids.uid.count,
				 ids.gid.first, ids.gid.count);
	}
}

/* Without a login name (a uid no database names), only a numeric owner. */
static void test_no_name(void **state)
{
	struct sbx_sub_ids ids = { 0 };
	struct sbx_error err = { 0 };

	(void)state;
	put("subuid", "alice:100000:8\n1000:7000:8\n");
	put("subgid", "1000:7000:8\n");
	assert_int_equal(sbx_sub_ids_find(etc, NULL, 1000, &ids, &err), 1);
	assert_int_equal(ids.uid.first, 7000);
}

static void test_pick(void **state)
{
	struct sbx_sub_ids ids = { .uid = { 100000, 4 }, .gid = { 200000, 2 } };
	struct sbx_error err = { 0 };
	uid_t u;
	gid_t g;

	(void)state;
	assert_int_equal(sbx_sub_ids_pick(&ids, 0, &u, &g, &err), 0);
	assert_int_equal(u, 100000);
	assert_int_equal(g, 200000);
	assert_int_equal(sbx_sub_ids_pick(&ids, 1, &u, &g, &err), 0);
	assert_int_equal(u, 100001);
	assert_int_equal(g, 200001);
	/* past the smaller range: refused, with a Hint */
	assert_int_equal(sbx_sub_ids_pick(&ids, 2, &u, &g, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	assert_non_null(strstr(err.msg, "admission slot 2 has no id: the range in /etc/subgid holds 2"));
	assert_non_null(strstr(err.hint, "max_concurrent"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_no_name),
		cmocka_unit_test(test_pick),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
