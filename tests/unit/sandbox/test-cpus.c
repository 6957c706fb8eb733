/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-cpus.c - the CPU count a run sees and the thread-count variables
 * set to it, where neither the profile nor the job set them.
 */
#include "config.h"

#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cpus.h"
#include "util.h"

static void test_count(void **state)
{
	cpu_set_t set;
	unsigned have;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	have = (unsigned)CPU_COUNT(&set);
	/* Rounded up, at least one, never more than this process has. */
	assert_int_equal(sbx_cpus_for_run(0), 1);
	assert_int_equal(sbx_cpus_for_run(100), 1);
	assert_int_equal(sbx_cpus_for_run(1000), 1);
	assert_int_equal(sbx_cpus_for_run(1001), have < 2 ? have : 2);
	assert_int_equal(sbx_cpus_for_run(1024000), have);
}

static void test_env(void **state)
{
	char *env[] = { "PATH=/usr/bin", "OMP_NUM_THREADS=7", "OMP=x", NULL };
	char *names[] = { "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP", "OM", NULL };
	_cleanup_strv_free_ char **out = sbx_cpus_env(env, names, 2);

	(void)state;
	/* The job's (or profile's) value stays; a prefix is not a match. */
	assert_int_equal(sbx_strv_length(out), 5);
	assert_string_equal(out[0], "PATH=/usr/bin");
	assert_string_equal(out[1], "OMP_NUM_THREADS=7");
	assert_string_equal(out[2], "OMP=x");
	assert_string_equal(out[3], "OPENBLAS_NUM_THREADS=2");
	assert_string_equal(out[4], "OM=2");
	assert_null(out[5]);
}

static void test_empty(void **state)
{
	_cleanup_strv_free_ char **out = sbx_cpus_env(NULL, NULL, 1);

	(void)state;
	assert_non_null(out);
	assert_null(out[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
