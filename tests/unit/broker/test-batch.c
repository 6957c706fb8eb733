/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-batch.c - sbx batch's manifest names and their clashes, and its
 * progress line. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "batch-progress.h"
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

static void expect_progress(size_t done, size_t running, size_t failed, size_t queued, size_t ran,
			    uint64_t ms, unsigned cols, const char *want)
{
	struct sbx_batch_counts c = { .done = done, .running = running, .failed = failed,
				      .queued = queued, .ran = ran };
	char buf[256];
	size_t n = sbx_batch_progress_format(buf, sizeof(buf), &c, ms, cols);

	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

static void test_progress(void **state)
{
	(void)state;
	/* No run has ended: no pace to go by. */
	expect_progress(0, 4, 0, 96, 0, 3000, 200,
			"sbx: batch: 0 done, 4 running, 0 failed, 96 queued; 0:03, no estimate yet");
	/* 10 ran in 20 s: 2 s a run, 90 left: 180 s. */
	expect_progress(10, 4, 1, 86, 10, 20000, 200,
			"sbx: batch: 10 done, 4 running, 1 failed, 86 queued; 0:20, about 3:00 left");
	/* Skipped jobs are done but set no pace. */
	expect_progress(50, 2, 0, 48, 1, 5000, 200,
			"sbx: batch: 50 done, 2 running, 0 failed, 48 queued; 0:05, about 4:10 left");
	/* Hours. */
	expect_progress(1, 1, 0, 2, 1, 3700000, 200,
			"sbx: batch: 1 done, 1 running, 0 failed, 2 queued; 1:01:40, about 3:05:00 left");
	expect_progress(3, 0, 0, 0, 3, 1000, 200,
			"sbx: batch: 3 done, 0 running, 0 failed, 0 queued; 0:01, nothing left");
	/* Narrower than the terminal: a wrapped line could not be erased. */
	expect_progress(10, 4, 1, 86, 10, 20000, 30, "sbx: batch: 10 done, 4 runnin");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_name),
		cmocka_unit_test(test_clash),
		cmocka_unit_test(test_progress),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
