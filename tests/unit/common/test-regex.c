/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-regex.c - patterns from jobs matched against untrusted bytes:
 * whole-subject and search modes, a clear reason for a bad pattern, and a
 * catastrophic pattern that ends with SBX_REGEX_LIMIT instead of a hang.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "regex.h"

static int match(const char *pattern, unsigned flags, const char *subject)
{
	struct sbx_regex *re;
	char err[200];
	int rc;

	assert_int_equal(sbx_regex_compile(pattern, flags, &re, err, sizeof(err)), 0);
	rc = sbx_regex_match(re, subject, strlen(subject));
	sbx_regex_free(re);
	return rc;
}

static void test_modes(void **state)
{
	(void)state;
	assert_int_equal(match("[0-9]{4}-[0-9]{2}", SBX_REGEX_WHOLE, "2026-12"), SBX_REGEX_MATCH);
	/* Whole: a prefix or a suffix is not enough. */
	assert_int_equal(match("[0-9]{4}-[0-9]{2}", SBX_REGEX_WHOLE, "2026-12x"), SBX_REGEX_NOMATCH);
	assert_int_equal(match("[0-9]{4}-[0-9]{2}", SBX_REGEX_WHOLE, "x2026-12"), SBX_REGEX_NOMATCH);
	/* An alternation is anchored as a whole, not only its first branch. */
	assert_int_equal(match("a|b", SBX_REGEX_WHOLE, "xb"), SBX_REGEX_NOMATCH);
	assert_int_equal(match("a|b", SBX_REGEX_WHOLE, "b"), SBX_REGEX_MATCH);
	/* Search: anywhere. */
	assert_int_equal(match("total", SBX_REGEX_SEARCH, "grand total: 3"), SBX_REGEX_MATCH);
	assert_int_equal(match("^total", SBX_REGEX_SEARCH, "grand total: 3"), SBX_REGEX_NOMATCH);
	/* $ before a final newline, unless only the end is asked for. */
	assert_int_equal(match("^a$", SBX_REGEX_SEARCH, "a\n"), SBX_REGEX_MATCH);
	assert_int_equal(match("^a$", SBX_REGEX_SEARCH | SBX_REGEX_DOLLAR_END, "a\n"),
			 SBX_REGEX_NOMATCH);
	/* UTF-8: one character, not one byte. */
	assert_int_equal(match("^.$", SBX_REGEX_SEARCH, "\xc3\xa9"), SBX_REGEX_MATCH);
}

static void test_subject_not_terminated(void **state)
{
	struct sbx_regex *re;
	char err[200];
	const char buf[] = { 'a', 'b', 'c', 'X' };

	(void)state;
	assert_int_equal(sbx_regex_compile("abc", SBX_REGEX_WHOLE, &re, err, sizeof(err)), 0);
	assert_int_equal(sbx_regex_match(re, buf, 3), SBX_REGEX_MATCH);
	assert_int_equal(sbx_regex_match(re, buf, 4), SBX_REGEX_NOMATCH);
	sbx_regex_free(re);
}

static void test_invalid_utf8_subject(void **state)
{
	(void)state;
	/* A bad byte is a boundary, not an error, and never matched by ".". */
	assert_int_equal(match("^a.b$", SBX_REGEX_SEARCH, "a\xffz"), SBX_REGEX_NOMATCH);
	assert_int_equal(match("ok", SBX_REGEX_SEARCH, "\xff\xfeok"), SBX_REGEX_MATCH);
}

static void test_bad_patterns(void **state)
{
	struct sbx_regex *re = (struct sbx_regex *)1;
	char err[200], *longpat;

	(void)state;
	assert_int_equal(sbx_regex_compile("(a", 0, &re, err, sizeof(err)), -EINVAL);
	assert_null(re);
	assert_non_null(strstr(err, "offset 2"));
	assert_int_equal(sbx_regex_compile("\\C", 0, &re, err, sizeof(err)), -EINVAL);
	longpat = malloc(SBX_REGEX_MAX_PATTERN + 2);
	assert_non_null(longpat);
	memset(longpat, 'a', SBX_REGEX_MAX_PATTERN + 1);
	longpat[SBX_REGEX_MAX_PATTERN + 1] = 0;
	assert_int_equal(sbx_regex_compile(longpat, 0, &re, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer than"));
	free(longpat);
}

static void test_catastrophic_pattern_is_bounded(void **state)
{
	struct sbx_regex *re;
	char err[200], *s;
	struct timespec t0, t1;
	size_t n = 100000;
	double ms;

	(void)state;
	s = malloc(n + 1);
	assert_non_null(s);
	memset(s, 'a', n - 1);
	s[n - 1] = 'b';
	s[n] = 0;
	assert_int_equal(sbx_regex_compile("^(a+)+$", 0, &re, err, sizeof(err)), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(sbx_regex_match(re, s, n), SBX_REGEX_LIMIT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	/* Unbounded, this takes longer than the universe has; bounded, a
	 * fraction of a second even under a sanitizer. */
	assert_true(ms < 5000);
	/* The same object still answers ordinary questions afterwards. */
	assert_int_equal(sbx_regex_match(re, "aaa", 3), SBX_REGEX_MATCH);
	sbx_regex_free(re);
	free(s);
}

/*
 * PCRE2's match limit counts the steps of one start position and starts
 * again from zero at the next: a search (no ^) over a subject made of
 * many blocks that each cost just under the limit ran for seconds per
 * kilobyte.  The limit must hold for the whole search.
 */
static void test_search_is_bounded_over_all_start_positions(void **state)
{
	struct sbx_regex *re;
	char err[200], *s;
	size_t blk = 16, nblk = 300, n = nblk * (blk + 1), k = 0;

	(void)state;
	s = malloc(n);
	assert_non_null(s);
	for (size_t i = 0; i < nblk; i++) {
		memset(s + k, 'a', blk);
		k += blk;
		s[k++] = 'b';
	}
	assert_int_equal(sbx_regex_compile("(a+)+$", SBX_REGEX_SEARCH, &re, err, sizeof(err)), 0);
	assert_int_equal(sbx_regex_match(re, s, n), SBX_REGEX_LIMIT);
	sbx_regex_free(re);
	free(s);
}

/* A caller's budget spans many matches: what one match used is taken
 * from it, and a match that would exceed it ends with SBX_REGEX_LIMIT. */
static void test_budget(void **state)
{
	struct sbx_regex *re;
	char err[200];
	uint64_t budget = 1000, before;

	(void)state;
	assert_int_equal(sbx_regex_compile("(a+)+$", SBX_REGEX_SEARCH, &re, err, sizeof(err)), 0);
	before = budget;
	assert_int_equal(sbx_regex_match_budget(re, "aaa", 3, &budget), SBX_REGEX_MATCH);
	assert_true(budget < before && budget > 0);
	assert_int_equal(sbx_regex_match_budget(re, "aaaaaaaaaaaaaaaaaaaab", 21, &budget),
			 SBX_REGEX_LIMIT);
	assert_int_equal(budget, 0);
	assert_int_equal(sbx_regex_match_budget(re, "aaa", 3, &budget), SBX_REGEX_LIMIT);
	/* The plain call keeps its own per-match limit. */
	assert_int_equal(sbx_regex_match(re, "aaa", 3), SBX_REGEX_MATCH);
	sbx_regex_free(re);

	/* A whole-subject pattern is charged what it used, too (it was
	 * charged the whole limit it was allowed). */
	assert_int_equal(sbx_regex_compile("(a+)+", SBX_REGEX_WHOLE, &re, err, sizeof(err)), 0);
	budget = SBX_REGEX_MATCH_LIMIT + 1500;
	assert_int_equal(sbx_regex_match_budget(re, "aaa", 3, &budget), SBX_REGEX_MATCH);
	assert_true(budget > SBX_REGEX_MATCH_LIMIT && budget < SBX_REGEX_MATCH_LIMIT + 1500);
	before = budget;
	assert_int_equal(sbx_regex_match_budget(re, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", 41, &budget),
			 SBX_REGEX_LIMIT);
	/* at most one call's limit */
	assert_int_equal(budget, before - SBX_REGEX_MATCH_LIMIT);
	assert_int_equal(sbx_regex_match_budget(re, "aaa", 3, &budget), SBX_REGEX_MATCH);
	budget = 20;
	assert_int_equal(sbx_regex_match_budget(re, "aaa", 3, &budget), SBX_REGEX_LIMIT);
	assert_int_equal(budget, 0);
	/* ... and the plain call gets the full limit back. */
	assert_int_equal(sbx_regex_match(re, "aaaaaaaaaaaa", 12), SBX_REGEX_MATCH);
	sbx_regex_free(re);
}

/* Anchored, a pattern has one start position: PCRE2's own limit bounds
 * it without the callouts. */
static void test_whole_is_bounded(void **state)
{
	struct sbx_regex *re;
	char err[200], *s;
	size_t n = 100000;

	(void)state;
	s = malloc(n);
	assert_non_null(s);
	memset(s, 'a', n - 1);
	s[n - 1] = 'b';
	assert_int_equal(sbx_regex_compile("(a+)+", SBX_REGEX_WHOLE, &re, err, sizeof(err)), 0);
	assert_int_equal(sbx_regex_match(re, s, n), SBX_REGEX_LIMIT);
	sbx_regex_free(re);
	free(s);
}

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * Issue 23: a whole-subject pattern was charged the whole per-match limit
 * on every call, so a budget of 20 limits ran out at the 21st cell.  A
 * match is charged what it did: 1,000,000 cells of "x" against x fit in
 * the budget of the 2 MB table they come from, and so do cells of
 * "AB1234567" against ^[A-Z]{2}[0-9]+$.
 */
static void test_budget_charges_use(void **state)
{
	struct sbx_regex *re;
	char err[200];
	uint64_t budget = sbx_regex_budget(2 * 1000000);

	(void)state;
	assert_int_equal(sbx_regex_compile("x", SBX_REGEX_WHOLE, &re, err, sizeof(err)), 0);
	for (int i = 0; i < 1000000; i++)
		if (sbx_regex_match_budget(re, "x", 1, &budget) != SBX_REGEX_MATCH)
			fail_msg("cell %d: not a match (budget left %llu)", i + 1, (unsigned long long)budget);
	assert_true(budget > 0);
	sbx_regex_free(re);
	assert_int_equal(sbx_regex_compile("^[A-Z]{2}[0-9]+$", SBX_REGEX_WHOLE, &re, err, sizeof(err)), 0);
	budget = sbx_regex_budget(10 * 1000000);
	for (int i = 0; i < 1000000; i++)
		if (sbx_regex_match_budget(re, "AB1234567", 9, &budget) != SBX_REGEX_MATCH)
			fail_msg("cell %d: not a match (budget left %llu)", i + 1, (unsigned long long)budget);
	sbx_regex_free(re);
}

/*
 * Issue 23: one PCRE2 step may scan a whole run of characters (a repeat
 * of one character, a lookahead, a backreference, a counted repeat), so
 * a pattern could do quadratic work inside the step limit: \w+$ over a
 * line of 65,535 letters and a '!' took 1.7 s.  Work is counted in bytes
 * as well as steps: each of these ends with SBX_REGEX_LIMIT, quickly.
 */
static void test_scanning_steps_are_bounded(void **state)
{
	static const struct {
		const char *pattern;
		unsigned flags;
		char fill;
		const char *end;
		char third; /* a third into the subject, unless 0 */
	} cases[] = {
		{ "\\w+$", SBX_REGEX_SEARCH, 'q', "!", 0 },
		{ "(?=(a+))\\1$", SBX_REGEX_SEARCH, 'a', "!", 0 },
		/* a backreference that compares far, then fails, at every
		 * step of a lazy repeat: a...ab a...a! with twice as many a's
		 * after the b (every compare then has room to run); caseless,
		 * so it compares a character at a time */
		{ "(?i)^(a+b).*?\\1", SBX_REGEX_SEARCH, 'a', "!", 'b' },
		/* a counted repeat that scans far, then fails */
		{ ".*?a{65535}", SBX_REGEX_WHOLE, 'a', "!", 0 },
		/* anchored, a lazy prefix before a scan */
		{ ".*?\\w+!", SBX_REGEX_WHOLE, 'q', "?", 0 },
	};
	size_t n = 65535;
	char *s = malloc(n + 2);
	int bad = 0;

	(void)state;
	assert_non_null(s);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct sbx_regex *re;
		char err[200];
		double t;
		int rc;

		memset(s, cases[c].fill, n);
		memcpy(s + n, cases[c].end, 1);
		if (cases[c].third)
			s[n / 3] = cases[c].third;
		assert_int_equal(sbx_regex_compile(cases[c].pattern, cases[c].flags, &re, err, sizeof(err)), 0);
		t = cpu_seconds();
		rc = sbx_regex_match(re, s, n + 1);
		t = cpu_seconds() - t;
		print_message("# %s: %d in %.3f s of CPU\n", cases[c].pattern, rc, t);
		if (rc != SBX_REGEX_LIMIT || t >= 1.0) {
			print_message("# ... wanted the limit (%d) in under a second\n", SBX_REGEX_LIMIT);
			bad++;
		}
		sbx_regex_free(re);
	}
	free(s);
	assert_int_equal(bad, 0);
}

static int match_n(const char *pattern, unsigned flags, const char *subject, size_t n)
{
	struct sbx_regex *re;
	char err[200];
	int rc;

	assert_int_equal(sbx_regex_compile(pattern, flags, &re, err, sizeof(err)), 0);
	rc = sbx_regex_match(re, subject, n);
	sbx_regex_free(re);
	return rc;
}

/* Counting bytes does not fail ordinary searches over long subjects. */
static void test_long_subjects_still_match(void **state)
{
	size_t n = 65536;
	char *s = malloc(n);

	(void)state;
	assert_non_null(s);
	memset(s, 'f', n);
	assert_int_equal(match_n("foo", SBX_REGEX_SEARCH, s, n), SBX_REGEX_NOMATCH);
	assert_int_equal(match_n("^f+$", SBX_REGEX_SEARCH, s, n), SBX_REGEX_MATCH);
	assert_int_equal(match_n("f+", SBX_REGEX_WHOLE, s, n), SBX_REGEX_MATCH);
	memset(s, '7', n);
	assert_int_equal(match_n("[0-9]{4}-[0-9]{2}", SBX_REGEX_SEARCH, s, n), SBX_REGEX_NOMATCH);
	memcpy(s + n - 7, "2026-12", 7);
	assert_int_equal(match_n("[0-9]{4}-[0-9]{2}", SBX_REGEX_SEARCH, s, n), SBX_REGEX_MATCH);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_subject_not_terminated),
		cmocka_unit_test(test_invalid_utf8_subject),
		cmocka_unit_test(test_bad_patterns),
		cmocka_unit_test(test_catastrophic_pattern_is_bounded),
		cmocka_unit_test(test_search_is_bounded_over_all_start_positions),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_whole_is_bounded),
		cmocka_unit_test(test_budget_charges_use),
		cmocka_unit_test(test_scanning_steps_are_bounded),
		cmocka_unit_test(test_long_subjects_still_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
