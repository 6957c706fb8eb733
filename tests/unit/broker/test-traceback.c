/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-traceback.c - the manifest's "error": the exception a Python
 * traceback at the end of stderr names, read from the tail alone. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "traceback.h"

static bool find(const char *s, struct sbx_traceback *tb)
{
	return sbx_traceback_find(s, strlen(s), tb);
}

static void test_cases(void **state)
{
	static const struct {
		const char *text;
		const char *type, *message, *file; /* type NULL: none found */
		uint64_t line;
	} cases[] = {
		{ "Traceback (most recent call last):\n  File \"/work/main.py\", line 7, in <module>\n"
		  "    f()\n  File \"/work/main.py\", line 3, in f\n    return {}[\"k\"]\n"
		  "           ~~^^^^^\nKeyError: 'k'\n",
		  "KeyError", "'k'", "/work/main.py", 3 },
		/* No message; CRLF; a dotted type. */
		{ "  File \"a.py\", line 12, in g\r\n    raise X\r\npandas.errors.EmptyDataError\r\n",
		  "pandas.errors.EmptyDataError", "", "a.py", 12 },
		/* A SyntaxError's frame has no ", in NAME". */
		{ "  File \"/work/main.py\", line 2\n    x = (\n        ^\n"
		  "SyntaxError: '(' was never closed\n",
		  "SyntaxError", "'(' was never closed", "/work/main.py", 2 },
		/* Chained: the last traceback's exception. */
		{ "  File \"m.py\", line 1, in f\n    a\nKeyError: 1\n\nDuring handling of the above "
		  "exception, another exception occurred:\n\nTraceback (most recent call last):\n"
		  "  File \"m.py\", line 9, in <module>\n    b\nValueError: bad\n",
		  "ValueError", "bad", "m.py", 9 },
		/* A file name holding the separator. */
		{ "  File \"x\", line 5.py\", line 44, in h\n    z\nOSError: [Errno 2] no\n",
		  "OSError", "[Errno 2] no", "x\", line 5.py", 44 },
		/* Other lines after the exception line leave it the last one. */
		{ "  File \"m.py\", line 4, in f\n    a\nRuntimeError: x\nmore output\n",
		  "RuntimeError", "x", "m.py", 4 },
		/* Not tracebacks. */
		{ "ValueError: no frame before it\n", NULL, NULL, NULL, 0 },
		{ "  File \"m.py\", line x, in f\nKeyError: 1\n", NULL, NULL, NULL, 0 },
		{ "  File \"m.py\", line 4, in f\n    a\n", NULL, NULL, NULL, 0 },
		{ "  File \"m.py\", line 4, in f\n1Error: x\n", NULL, NULL, NULL, 0 },
		{ "  File \"m.py\", line 4, in f\nError:x\n", NULL, NULL, NULL, 0 },
		{ "  File \"m.py\", line 1234567890123, in f\nKeyError: 1\n", NULL, NULL, NULL, 0 },
		{ "", NULL, NULL, NULL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbx_traceback tb;
		bool found = find(cases[i].text, &tb);

		print_message("case %zu\n", i);
		assert_int_equal(found, cases[i].type != NULL);
		if (!found)
			continue;
		assert_string_equal(tb.type, cases[i].type);
		assert_string_equal(tb.message, cases[i].message);
		assert_string_equal(tb.file, cases[i].file);
		assert_int_equal(tb.line, cases[i].line);
	}
}

/* A traceback far longer than the tail: the innermost frame and the
 * exception are at its end, and are what is found. */
static void test_long_traceback(void **state)
{
	static char buf[1 << 16];
	size_t len = 0;
	struct sbx_traceback tb;

	(void)state;
	len += (size_t)snprintf(buf, sizeof(buf), "Traceback (most recent call last):\n");
	for (int i = 0; i < 500; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"  File \"/work/main.py\", line %d, in f\n    return g(n - 1)\n",
					i % 2 ? 4 : 6);
	len += (size_t)snprintf(buf + len, sizeof(buf) - len,
				"  File \"/work/main.py\", line 3, in f\n    return {}[1]\nKeyError: 1\n");
	assert_true(len > SBX_TRACEBACK_TAIL * 4);
	assert_true(sbx_traceback_find(buf, len, &tb));
	assert_string_equal(tb.type, "KeyError");
	assert_int_equal(tb.line, 3);
}

/* Only the tail is read: a 16 MiB capture whose bytes before the last
 * SBX_TRACEBACK_TAIL are unreadable (PROT_NONE) is read without a fault,
 * and one whose tail is 4 KiB of a single line finds nothing. */
static void test_reads_tail_only(void **state)
{
	const size_t total = 16u << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	static const char tail[] = "  File \"/work/main.py\", line 8, in <module>\n"
				   "    x\nZeroDivisionError: division by zero\n";
	char *map = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t open_from = total - ((SBX_TRACEBACK_TAIL + page - 1) / page) * page;
	struct sbx_traceback tb;

	(void)state;
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + open_from, total - open_from, PROT_READ | PROT_WRITE), 0);
	memset(map + open_from, 'a', total - open_from);
	assert_false(sbx_traceback_find(map, total, &tb));
	memcpy(map + total - (sizeof(tail) - 1), tail, sizeof(tail) - 1);
	map[total - (sizeof(tail) - 1) - 1] = '\n';
	assert_true(sbx_traceback_find(map, total, &tb));
	assert_string_equal(tb.type, "ZeroDivisionError");
	assert_int_equal(tb.line, 8);
	munmap(map, total);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_long_traceback),
		cmocka_unit_test(test_reads_tail_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
