/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-suggest.c - "did you mean": the distance counts the edits of a
 * typing slip, a near miss gets the closest name, and a word that is
 * merely different (or too short to judge) gets nothing.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "suggest.h"

static const char *const subcommands[] = { "run", "verify", "keygen", "check", "profiles",
					   "cancel", "gc", "ps", NULL };
static const char *const job_keys[] = { "input_handles", "extract", "runtime_profile",
					"network_profile", "code", "code_handle", "args", "env",
					"limits", NULL };

static void test_distance(void **state)
{
	(void)state;
	assert_int_equal(sbx_suggest_distance("", ""), 0);
	assert_int_equal(sbx_suggest_distance("check", "check"), 0);
	assert_int_equal(sbx_suggest_distance("chek", "check"), 1);    /* dropped */
	assert_int_equal(sbx_suggest_distance("checck", "check"), 1);  /* doubled */
	assert_int_equal(sbx_suggest_distance("chock", "check"), 1);   /* wrong */
	assert_int_equal(sbx_suggest_distance("chekc", "check"), 1);   /* swapped */
	assert_int_equal(sbx_suggest_distance("", "abc"), 3);
	assert_int_equal(sbx_suggest_distance("kitten", "sitting"), 3);
	/* Over the length bound: never close. */
	char longw[SBX_SUGGEST_MAX_LEN + 2];
	memset(longw, 'a', sizeof(longw) - 1);
	longw[sizeof(longw) - 1] = '\0';
	assert_true(sbx_suggest_distance(longw, longw) > 3);
}

static void test_near_misses(void **state)
{
	static const char *const profiles[] = { "python-analysis", "shell", NULL };
	static const char *const networks[] = { "disabled", "egress-example", NULL };
	static const char *const limits[] = { "wall_seconds", "soft_seconds", "grace_seconds",
					      "memory_mib", "cpu_cores", "pids", NULL };

	(void)state;
	assert_string_equal(sbx_suggest_strv("chek", subcommands), "check");
	assert_string_equal(sbx_suggest_strv("prfiles", subcommands), "profiles");
	assert_string_equal(sbx_suggest_strv("verfy", subcommands), "verify");
	assert_string_equal(sbx_suggest_strv("shel", profiles), "shell");
	assert_string_equal(sbx_suggest_strv("Shell", profiles), "shell");
	assert_string_equal(sbx_suggest_strv("python-analisys", profiles), "python-analysis");
	assert_string_equal(sbx_suggest_strv("disable", networks), "disabled");
	assert_string_equal(sbx_suggest_strv("runtime_profil", job_keys), "runtime_profile");
	assert_string_equal(sbx_suggest_strv("network-profile", job_keys), "network_profile");
	assert_string_equal(sbx_suggest_strv("memroy_mib", limits), "memory_mib");
	assert_string_equal(sbx_suggest_strv("wall_second", limits), "wall_seconds");
}

static void test_no_suggestion(void **state)
{
	(void)state;
	/* Too different. */
	assert_null(sbx_suggest_strv("frobnicate", subcommands));
	assert_null(sbx_suggest_strv("bash", (const char *const[]){ "shell", NULL }));
	/* Two edits are too many for a short word: "ps" is not a typo of "gc". */
	assert_null(sbx_suggest_strv("xx", subcommands));
	assert_null(sbx_suggest_strv("chk", (const char *const[]){ "check", NULL }));
	/* A one-letter word is not judged. */
	assert_null(sbx_suggest_strv("x", subcommands));
	/* The word itself is no suggestion. */
	assert_null(sbx_suggest_strv("shell", (const char *const[]){ "shell", NULL }));
	/* Nothing to choose from. */
	assert_null(sbx_suggest_strv("shel", (const char *const[]){ NULL }));
	assert_null(sbx_suggest_strv("shel", NULL));
	assert_null(sbx_suggest_strv(NULL, subcommands));
}

static void test_tie_and_incremental(void **state)
{
	struct sbx_suggest s;

	(void)state;
	/* "cat" is one edit from both: the first offered wins. */
	sbx_suggest_init(&s, "cat");
	sbx_suggest_add(&s, "car");
	sbx_suggest_add(&s, "cut");
	sbx_suggest_add(&s, NULL);
	assert_string_equal(sbx_suggest_result(&s), "car");
	/* A closer one later still wins. */
	sbx_suggest_init(&s, "memory_mibb");
	sbx_suggest_add(&s, "memory_kb");
	sbx_suggest_add(&s, "memory_mib");
	assert_string_equal(sbx_suggest_result(&s), "memory_mib");
}

/* A catalog's names are word-word: its first word, or a typo of it,
 * finds the whole name. */
static void test_stem(void **state)
{
	static const char *const profiles[] = { "node", "python-analysis", "shell", NULL };
	struct sbx_suggest s;

	(void)state;
	for (const char *const *w = (const char *const[]){ "pyhton", "python", "pyton", NULL }; *w;
	     w++) {
		sbx_suggest_init(&s, *w);
		for (const char *const *p = profiles; *p; p++)
			sbx_suggest_add_stem(&s, *p);
		assert_string_equal(sbx_suggest_result(&s), "python-analysis");
	}
	/* Without stems, "pyhton" is nine edits from the name. */
	assert_null(sbx_suggest_strv("pyhton", profiles));
	/* A typo of a whole name still wins over a stem. */
	sbx_suggest_init(&s, "egress-exampel");
	sbx_suggest_add_stem(&s, "egress");
	sbx_suggest_add_stem(&s, "egress-example");
	assert_string_equal(sbx_suggest_result(&s), "egress-example");
	/* Too far from any stem: nothing. */
	sbx_suggest_init(&s, "ruby");
	for (const char *const *p = profiles; *p; p++)
		sbx_suggest_add_stem(&s, *p);
	assert_null(sbx_suggest_result(&s));
}

static void test_suffix(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(sbx_suggest_suffix(buf, sizeof(buf), "shell", '"'),
			    "; did you mean \"shell\"?");
	assert_string_equal(sbx_suggest_suffix(buf, sizeof(buf), "check", '\''),
			    "; did you mean 'check'?");
	assert_string_equal(sbx_suggest_suffix(buf, sizeof(buf), NULL, '"'), "");
	/* Truncated, still terminated. */
	assert_int_equal(strlen(sbx_suggest_suffix(buf, 8, "shell", '"')), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_near_misses),
		cmocka_unit_test(test_no_suggestion),
		cmocka_unit_test(test_tie_and_incremental),
		cmocka_unit_test(test_stem),
		cmocka_unit_test(test_suffix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
