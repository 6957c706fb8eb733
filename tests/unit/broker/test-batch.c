/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-batch.c - sbx batch's manifest names and their clashes. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "batch.h"

static void expect_name(const char *path, const char *want)
{
	char *got = sbx_batch_manifest_name(path);

	if (want) {
		assert_non_null(got);
		assert_string_equal(got, want);
	} else {
		assert_null(got);
	}
	free(got);
}

static void test_manifest_name(void **state)
{
	(void)state;
	expect_name("jobs/a.json", "a.json");
	expect_name("a.json", "a.json");
	expect_name("/abs/dir/job", "job.json");
	expect_name("dir/.hidden.json", ".hidden.json");
	expect_name("x.json.partial", "x.json.partial.json");
	expect_name("dir/.json", ".json");
	expect_name("dir/", NULL);
	expect_name("", NULL);
	expect_name(".", NULL);
	expect_name("dir/..", NULL);
}

static void test_clash(void **state)
{
	const char *none[] = { "b.json", "a.json", "c.json" };
	const char *two[] = { "x.json", "a.json", "y.json", "a.json", "x.json" };
	size_t i = 99, k = 99;

	(void)state;
	assert_false(sbx_batch_names_clash(none, 3, &i, &k));
	assert_false(sbx_batch_names_clash(NULL, 0, &i, &k));
	assert_true(sbx_batch_names_clash(two, 5, &i, &k));
	/* In name order "a.json" clashes first: indexes 1 and 3. */
	assert_int_equal(i, 1);
	assert_int_equal(k, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_name),
		cmocka_unit_test(test_clash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
