/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-excerpt.c - the manifest's excerpt keeps the head and the tail. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "excerpt.h"
#include "util.h"

/* A capture that fits is quoted whole: no marker, nothing left out. */
static void test_short_whole(void **state)
{
	char buf[SBX_EXCERPT_HEAD + SBX_EXCERPT_TAIL];
	_cleanup_free_ char *e = NULL;
	size_t left = 99;

	(void)state;
	memset(buf, 'a', sizeof(buf));
	e = sbx_excerpt(buf, sizeof(buf), &left);
	assert_int_equal(left, 0);
	assert_int_equal(strlen(e), sizeof(buf));
	assert_null(strstr(e, "left out"));
}

/* A 3,109-byte traceback: its first line and its last (the exception)
 * are both in the excerpt, with a marker that counts what is not. */
static void test_traceback_keeps_last_line(void **state)
{
	char buf[4096];
	size_t len = 0, left = 0;
	_cleanup_free_ char *e = NULL, *marker = NULL;
	int frame = 0;

	(void)state;
	len += (size_t)sprintf(buf + len, "Traceback (most recent call last):\n");
	while (len < 3109 - 60) {
		len += (size_t)sprintf(buf + len, "  File \"/work/code.py\", line %d, in f%d\n", frame,
				       frame);
		frame++;
	}
	len += (size_t)sprintf(buf + len, "ZeroDivisionError: division by zero\n");
	e = sbx_excerpt(buf, len, &left);
	assert_true(left > 0);
	assert_true(strncmp(e, "Traceback (most recent call last):\n", 35) == 0);
	assert_non_null(strstr(e, "ZeroDivisionError: division by zero\n"));
	marker = sbx_xasprintf("[sbx: %zu bytes left out]\n  File ", left);
	/* The tail starts at a line: the marker is followed by a whole frame. */
	assert_non_null(strstr(e, marker));
	/* Head and tail are at most their sizes, plus the marker. */
	assert_true(strlen(e) <= SBX_EXCERPT_HEAD + SBX_EXCERPT_TAIL + strlen(marker) + 1);
}

/* Neither half cuts a UTF-8 character: no U+FFFD appears where the input
 * had none. */
static void test_utf8_boundaries(void **state)
{
	char buf[3000];
	size_t left = 0;
	_cleanup_free_ char *e = NULL;

	(void)state;
	/* 'x', then two-byte characters, then 'y': byte 512 and byte
	 * 3000 - 1536 both fall in the middle of a character. */
	buf[0] = 'x';
	for (size_t i = 1; i + 2 < sizeof(buf); i += 2)
		memcpy(buf + i, "\xc3\xa9", 2);
	buf[sizeof(buf) - 1] = 'y';
	e = sbx_excerpt(buf, sizeof(buf), &left);
	assert_true(left > 0);
	assert_null(strstr(e, "\xef\xbf\xbd"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_whole),
		cmocka_unit_test(test_traceback_keeps_last_line),
		cmocka_unit_test(test_utf8_boundaries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
