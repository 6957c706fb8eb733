/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-canonjson.c - RFC 8785 serialization, the string cleaner, and the
 * promise behind the manifest's signature: jq -cjS prints cleaned strings
 * exactly as sbx_canonjson_dump() does (checked against the real jq).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "canonjson.h"

static json_t *parse(const char *text)
{
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);

	if (!v)
		fail_msg("test input does not parse: %s: %s", text, jerr.text);
	return v;
}

static const struct dump_case {
	const char *name;
	const char *in;
	const char *out;  /* NULL: must be refused */
	const char *why;  /* substring of the error when refused */
} dump_cases[] = {
	/* RFC 8785 §3.2.3: keys sorted by UTF-16 code units - the emoji
	 * (D83D DE00) sorts before U+FB33 although its code point is larger,
	 * and \r before "1". */
	{ "rfc8785 sorting",
	  "{\"\\u20ac\":\"Euro Sign\",\"\\r\":\"Carriage Return\",\"\\ufb33\":\"Hebrew Letter Dalet With Dagesh\","
	  "\"1\":\"One\",\"\\ud83d\\ude00\":\"Emoji: Grinning Face\",\"\\u0080\":\"Control\","
	  "\"\\u00f6\":\"Latin Small Letter O With Diaeresis\"}",
	  "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xc2\x80\":\"Control\","
	  "\"\xc3\xb6\":\"Latin Small Letter O With Diaeresis\",\"\xe2\x82\xac\":\"Euro Sign\","
	  "\"\xf0\x9f\x98\x80\":\"Emoji: Grinning Face\",\"\xef\xac\xb3\":\"Hebrew Letter Dalet With Dagesh\"}",
	  NULL },
	/* RFC 8785 §3.2.2 example, without its numbers (reals, refused below). */
	{ "rfc8785 string and literals",
	  "{\"string\":\"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\",\"literals\":[null,true,false]}",
	  "{\"literals\":[null,true,false],\"string\":\"\xe2\x82\xac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}", NULL },
	{ "rfc8785 numbers are reals",
	  "{\"numbers\":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001]}", NULL,
	  "numbers[0]: real number" },
	{ "whitespace dropped", " { \"a\" : [ 1 , 2 ] , \"b\" : { } } ", "{\"a\":[1,2],\"b\":{}}", NULL },
	{ "nested objects sorted",
	  "{\"b\":[1,{\"d\":2,\"c\":[]}],\"a\":{\"z\":null,\"y\":{\"x\":true}}}",
	  "{\"a\":{\"y\":{\"x\":true},\"z\":null},\"b\":[1,{\"c\":[],\"d\":2}]}", NULL },
	{ "prefix sorts first", "{\"ab\":1,\"a\":2,\"B\":3,\"\":4}", "{\"\":4,\"B\":3,\"a\":2,\"ab\":1}", NULL },
	{ "two supplementary keys by code point",
	  "{\"\\ud83d\\ude01\":1,\"\\ud83d\\ude00\":2,\"\\ud800\\udc00\":3}",
	  "{\"\xf0\x90\x80\x80\":3,\"\xf0\x9f\x98\x80\":2,\"\xf0\x9f\x98\x81\":1}", NULL },
	{ "BMP above U+E000 vs supplementary",
	  "{\"\\uffff\":1,\"\\ue000\":2,\"\\ud7ff\":3,\"\\udbff\\udfff\":4}",
	  "{\"\xed\x9f\xbf\":3,\"\xf4\x8f\xbf\xbf\":4,\"\xee\x80\x80\":2,\"\xef\xbf\xbf\":1}", NULL },
	{ "escapes", "[\"\\b\\f\\n\\r\\t\\u0000\\u0001\\u001f \\u007f\"]",
	  "[\"\\b\\f\\n\\r\\t\\u0000\\u0001\\u001f \x7f\"]", NULL },
	{ "solidus and non-ASCII literal", "\"/\\u2028\\u2029\\ufeff\xc3\xa9\"",
	  "\"/\xe2\x80\xa8\xe2\x80\xa9\xef\xbb\xbf\xc3\xa9\"", NULL },
	{ "integers", "[0,-0,1,-1,9007199254740991,-9007199254740991,1000000]",
	  "[0,0,1,-1,9007199254740991,-9007199254740991,1000000]", NULL },
	{ "integer past 2^53-1", "{\"usage\":{\"bytes\":9007199254740992}}", NULL,
	  "usage.bytes: integer outside" },
	{ "negative integer past 2^53-1", "[-9007199254740992]", NULL, "[0]: integer outside" },
	{ "real that looks whole", "{\"a\":[1,2.0]}", NULL, "a[1]: real number" },
	{ "scalars", "true", "true", NULL },
	{ "empty containers", "[{},[],\"\"]", "[{},[],\"\"]", NULL },
};

static void test_dump_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(dump_cases); i++) {
		const struct dump_case *c = &dump_cases[i];
		struct sbx_error err = { 0 };
		json_t *v = parse(c->in);
		char *out = NULL;
		size_t len = 0;
		int r = sbx_canonjson_dump(v, &out, &len, &err);

		if (c->out) {
			if (r != 0)
				fail_msg("%s: refused: %s", c->name, err.msg);
			if (strcmp(out, c->out))
				fail_msg("%s:\n got  %s\n want %s", c->name, out, c->out);
			assert_int_equal(len, strlen(c->out));
		} else {
			if (r != -1)
				fail_msg("%s: accepted as %s", c->name, out);
			assert_int_equal(err.code, SBX_EXIT_SOFTWARE);
			if (!strstr(err.msg, c->why))
				fail_msg("%s: message \"%s\" lacks \"%s\"", c->name, err.msg, c->why);
		}
		free(out);
		json_decref(v);
	}
}

static void test_dump_refuses_invalid_utf8(void **state)
{
	struct sbx_error err = { 0 };
	json_t *v = json_pack("{s:o}", "s", json_string_nocheck("a\xff"));
	char *out = NULL;
	size_t len = 0;

	assert_int_equal(sbx_canonjson_dump(v, &out, &len, &err), -1);
	assert_non_null(strstr(err.msg, "s: string is not valid UTF-8"));
	assert_null(out);
	json_decref(v);
}

static void test_dump_refuses_deep_nesting(void **state)
{
	struct sbx_error err = { 0 };
	json_t *v = json_array();
	char *out = NULL;
	size_t len = 0;

	for (int i = 0; i < SBX_CANONJSON_DEPTH_MAX + 5; i++) {
		json_t *outer = json_array();
		json_array_append_new(outer, v);
		v = outer;
	}
	assert_int_equal(sbx_canonjson_dump(v, &out, &len, &err), -1);
	assert_non_null(strstr(err.msg, "nested too deeply"));
	json_decref(v);
}

static void test_dump_nul_in_key(void **state)
{
	struct sbx_error err = { 0 };
	json_t *v = json_object();
	char *out = NULL;
	size_t len = 0;

	json_object_setn_new(v, "a\0b", 3, json_integer(1));
	json_object_set_new(v, "a", json_integer(2));
	assert_int_equal(sbx_canonjson_dump(v, &out, &len, &err), 0);
	assert_string_equal(out, "{\"a\":2,\"a\\u0000b\":1}");
	free(out);
	json_decref(v);
}

#define FFFD "\xef\xbf\xbd"

static const struct clean_case {
	const char *name;
	const char *in;
	size_t len;
	size_t max;
	const char *out;
	bool truncated;
} clean_cases[] = {
	{ "plain", "abc", 3, 100, "abc", false },
	{ "empty", "", 0, 100, "", false },
	{ "newline and tab", "a\nb\tc", 5, 100, "a" FFFD "b" FFFD "c", false },
	{ "NUL", "a\0b", 3, 100, "a" FFFD "b", false },
	{ "ESC sequence", "\x1b[31m", 5, 100, FFFD "[31m", false },
	{ "DEL", "x\x7fy", 3, 100, "x" FFFD "y", false },
	{ "two-byte kept", "\xc3\xa9", 2, 100, "\xc3\xa9", false },
	{ "C1 kept (jq and JCS agree)", "\xc2\x9b", 2, 100, "\xc2\x9b", false },
	{ "U+2028 kept", "\xe2\x80\xa8", 3, 100, "\xe2\x80\xa8", false },
	{ "emoji kept", "\xf0\x9f\x98\x80", 4, 100, "\xf0\x9f\x98\x80", false },
	{ "U+10FFFF kept", "\xf4\x8f\xbf\xbf", 4, 100, "\xf4\x8f\xbf\xbf", false },
	{ "lone continuation", "\x80", 1, 100, FFFD, false },
	{ "truncated sequence at end", "a\xe2\x82", 3, 100, "a" FFFD, false },
	{ "truncated sequence mid", "\xe2\x82" "A", 3, 100, FFFD "A", false },
	{ "overlong slash", "\xc0\xaf", 2, 100, FFFD FFFD, false },
	{ "overlong three-byte", "\xe0\x80\xaf", 3, 100, FFFD FFFD FFFD, false },
	{ "surrogate", "\xed\xa0\x80", 3, 100, FFFD FFFD FFFD, false },
	{ "past U+10FFFF", "\xf4\x90\x80\x80", 4, 100, FFFD FFFD FFFD FFFD, false },
	{ "invalid lead bytes", "\xf5\xff\xfe", 3, 100, FFFD FFFD FFFD, false },
	{ "cut at boundary", "h\xc3\xa9llo", 6, 2, "h", true },
	{ "exact fit", "h\xc3\xa9", 3, 3, "h\xc3\xa9", false },
	{ "cut before emoji", "ab\xf0\x9f\x98\x80", 6, 5, "ab", true },
	{ "replacement counts", "\n\n", 2, 5, FFFD, true },
	{ "zero budget", "a", 1, 0, "", true },
	{ "zero budget, empty input", "", 0, 0, "", false },
};

static void test_clean_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(clean_cases); i++) {
		const struct clean_case *c = &clean_cases[i];
		bool truncated = !c->truncated;
		char *out = sbx_canonjson_clean_string(c->in, c->len, c->max, &truncated);

		if (strcmp(out, c->out))
			fail_msg("%s: got \"%s\", want \"%s\"", c->name, out, c->out);
		if (truncated != c->truncated)
			fail_msg("%s: truncated %d, want %d", c->name, truncated, c->truncated);
		assert_true(strlen(out) <= c->max);
		assert_true(sbx_utf8_valid(out, strlen(out)));
		assert_false(sbx_has_control(out, strlen(out)));
		free(out);
	}
}

/* Text keeps its C0 controls; NUL, DEL and bad UTF-8 still go. */
static const struct clean_case text_cases[] = {
	{ "plain", "abc", 3, 100, "abc", false },
	{ "newline and tab kept", "a\nb\tc\r\n", 7, 100, "a\nb\tc\r\n", false },
	{ "traceback", "Traceback (most recent call last):\n  File \"x\", line 1\nValueError: boom\n",
	  71, 100, "Traceback (most recent call last):\n  File \"x\", line 1\nValueError: boom\n", false },
	{ "ESC and BEL kept", "\x1b[31m\x07", 6, 100, "\x1b[31m\x07", false },
	{ "every C0 but NUL kept", "\x01\x02\x08\x0b\x0c\x0e\x1f", 7, 100,
	  "\x01\x02\x08\x0b\x0c\x0e\x1f", false },
	{ "NUL replaced", "a\0b", 3, 100, "a" FFFD "b", false },
	{ "DEL replaced", "x\x7fy", 3, 100, "x" FFFD "y", false },
	{ "C1 kept", "\xc2\x9b", 2, 100, "\xc2\x9b", false },
	{ "invalid UTF-8 replaced", "\n\xff\xc0\xaf\n", 5, 100, "\n" FFFD FFFD FFFD "\n", false },
	{ "cut after a newline", "ab\ncd", 5, 3, "ab\n", true },
	{ "controls count one byte", "\n\n\n", 3, 2, "\n\n", true },
	{ "replacement counts three", "\n\x7f", 2, 3, "\n", true },
};

static void test_clean_text_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(text_cases); i++) {
		const struct clean_case *c = &text_cases[i];
		bool truncated = !c->truncated;
		char *out = sbx_canonjson_clean_text(c->in, c->len, c->max, &truncated);

		if (strcmp(out, c->out))
			fail_msg("%s: got \"%s\", want \"%s\"", c->name, out, c->out);
		if (truncated != c->truncated)
			fail_msg("%s: truncated %d, want %d", c->name, truncated, c->truncated);
		assert_true(strlen(out) <= c->max);
		assert_true(sbx_utf8_valid(out, strlen(out)));
		assert_null(strchr(out, 0x7f));
		free(out);
	}
}

/* For any bytes, clean_text gives valid UTF-8 without NUL or DEL, and
 * differs from clean_string only where clean_string put U+FFFD for a C0
 * control. */
static void test_clean_text_invariants(void **state)
{
	unsigned seed = 4242;
	char in[64];

	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)(rand_r(&seed) % sizeof(in));
		bool truncated;
		char *text, *str;

		for (size_t k = 0; k < len; k++)
			in[k] = (char)(rand_r(&seed) % 256);
		text = sbx_canonjson_clean_text(in, len, 4 * sizeof(in), &truncated);
		str = sbx_canonjson_clean_string(in, len, 4 * sizeof(in), NULL);
		assert_false(truncated);
		assert_true(sbx_utf8_valid(text, strlen(text)));
		assert_null(strchr(text, 0x7f));
		/* Valid input without NUL or DEL comes back as is. */
		if (sbx_utf8_valid(in, len) && !memchr(in, 0, len) && !memchr(in, 0x7f, len))
			assert_memory_equal(text, in, len);
		/* Map each kept control to U+FFFD: clean_string's result. */
		{
			char *mapped = sbx_xmalloc(3 * strlen(text) + 1), *o = mapped;

			for (const char *p = text; *p; p++) {
				if ((unsigned char)*p < 0x20) {
					memcpy(o, FFFD, 3);
					o += 3;
				} else {
					*o++ = *p;
				}
			}
			*o = '\0';
			assert_string_equal(mapped, str);
			free(mapped);
		}
		free(text);
		free(str);
	}
}

/* Whatever the bytes, the cleaner's output is valid UTF-8 without controls
 * and within budget: every single byte, and pseudo-random strings. */
static void test_clean_invariants(void **state)
{
	unsigned seed = 12345;
	char in[64];

	for (int b = 0; b < 256; b++) {
		char c = (char)b;
		char *out = sbx_canonjson_clean_string(&c, 1, 16, NULL);
		assert_true(sbx_utf8_valid(out, strlen(out)));
		assert_false(sbx_has_control(out, strlen(out)));
		free(out);
	}
	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)(rand_r(&seed) % sizeof(in));
		size_t max = (size_t)(rand_r(&seed) % 80);
		bool truncated;
		char *out;

		for (size_t k = 0; k < len; k++)
			in[k] = (char)(rand_r(&seed) % 256);
		out = sbx_canonjson_clean_string(in, len, max, &truncated);
		assert_true(strlen(out) <= max);
		assert_true(sbx_utf8_valid(out, strlen(out)));
		assert_false(sbx_has_control(out, strlen(out)));
		/* Valid, control-free input within budget comes back as is. */
		if (sbx_utf8_valid(in, len) && !sbx_has_control(in, len) && len <= max &&
		    !memchr(in, 0, len)) {
			assert_false(truncated);
			assert_memory_equal(out, in, len);
		}
		free(out);
	}
}

/* Run `jq -cjS .` on @in and return its output. */
static char *run_jq(const char *in, size_t len)
{
	char path[] = "/tmp/sbx-test-canonjson-XXXXXX";
	int fd = mkstemp(path);
	char *cmd, *out = sbx_xmalloc(1 << 20);
	size_t n;
	FILE *p;

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, in, len), (ssize_t)len);
	close(fd);
	cmd = sbx_xasprintf("jq -cjS . < %s", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, (1 << 20) - 1, p);
	out[n] = '\0';
	if (pclose(p) != 0)
		fail_msg("jq failed (is jq installed? the manifest's interop promise needs it)");
	unlink(path);
	free(cmd);
	return out;
}

/*
 * The promise of SPEC §7, tested against the real jq: for strings that went
 * through the cleaner, `jq -cjS` prints exactly sbx_canonjson_dump()'s
 * bytes.  Values and keys cover every byte value, the characters JCS and jq
 * might treat differently, and the key orders of ASCII and BMP keys.
 */
static void test_jq_reproduces_cleaned(void **state)
{
	static const char *const tricky[] = {
		"\"quotes\" and \\backslashes\\", "/solidus/", "\xe2\x80\xa8\xe2\x80\xa9",
		"\xef\xbb\xbf" "bom", "\xef\xbf\xbe\xef\xbf\xbf", "\xf0\x9f\x98\x80 emoji",
		"\xf4\x8f\xbf\xbf", "\xc2\x80\xc2\x9f\xc2\xa0", "\xed\x9f\xbf\xee\x80\x80",
		"<script>&amp;'", "line\nbreak\r\n", "\x7f\x1b[2J", "\xc0\xaf\xed\xa0\x80\xff",
		"\xe2\x82", "\xd8\x80\xdb\x9d", "\xef\xb7\x90",
	};
	struct sbx_error err = { 0 };
	json_t *obj = json_object(), *arr = json_array();
	char *text = NULL, *jq;
	size_t len = 0;

	for (int b = 0; b < 256; b++) {
		char c = (char)b;
		char *s = sbx_canonjson_clean_string(&c, 1, 16, NULL);
		json_array_append_new(arr, json_string(s));
		free(s);
	}
	for (size_t i = 0; i < ARRAY_SIZE(tricky); i++) {
		char *s = sbx_canonjson_clean_string(tricky[i], strlen(tricky[i]), 1024, NULL);
		json_array_append_new(arr, json_string(s));
		/* BMP keys: JCS and jq order them alike. */
		char *k = sbx_canonjson_clean_string(tricky[i], strlen(tricky[i]), 1024, NULL);
		if (!strstr(k, "\xf0") && !strstr(k, "\xf4"))
			json_object_set_new(obj, k, json_integer((json_int_t)i));
		free(k);
		free(s);
	}
	json_object_set_new(obj, "values", arr);
	json_object_set_new(obj, "ints", json_pack("[I,I,i]", SBX_CANONJSON_INT_MAX,
						     -SBX_CANONJSON_INT_MAX, 0));
	json_object_set_new(obj, "ZZ", json_true());
	json_object_set_new(obj, "a", json_null());

	assert_int_equal(sbx_canonjson_dump(obj, &text, &len, &err), 0);
	jq = run_jq(text, len);
	if (strcmp(jq, text))
		fail_msg("jq -cjS differs:\n jq  %s\n sbx %s", jq, text);
	free(jq);
	free(text);
	json_decref(obj);
}

/*
 * The excerpts' side of the promise: text with every C0 control, tabs,
 * CRLF, ESC sequences, a traceback, as sbx_canonjson_clean_text() leaves
 * it, is printed by jq -cjS exactly as sbx_canonjson_dump() prints it, as
 * a value and inside a signed-looking object; and each control is written
 * in the RFC 8785 form (\b \t \n \f \r, else \u00xx in lower case).
 */
static void test_jq_reproduces_text(void **state)
{
#define S(x) { x, sizeof(x) - 1 }
	static const struct {
		const char *s;
		size_t len;
	} tricky[] = {
		S("Traceback (most recent call last):\n  File \"/work/main.py\", line 1, in <module>\n"
		  "    raise ValueError(\"boom\")\nValueError: boom\n"),
		S("col1\tcol2\r\nrow\tx\r\n"), S("\x1b[31mred\x1b[0m\x07"), S("\x1b]52;c;eA==\x07"),
		S("\x7f DEL and \0 NUL"), S("\xff\xfe bad \xc0\xaf"), S("\\n literally, \"quoted\""),
		S("\xe2\x80\xa8\n\xc2\x85\n"), S("\b\f\v"),
	};
#undef S
	struct sbx_error err = { 0 };
	json_t *obj = json_object(), *arr = json_array();
	char *text = NULL, *jq, *s;
	char all[32];
	size_t len = 0;

	for (int b = 0; b < 32; b++)
		all[b] = (char)b;
	for (int b = 0; b < 256; b++) {
		char c = (char)b;

		s = sbx_canonjson_clean_text(&c, 1, 16, NULL);
		json_array_append_new(arr, json_string(s));
		free(s);
	}
	for (size_t i = 0; i < ARRAY_SIZE(tricky); i++) {
		s = sbx_canonjson_clean_text(tricky[i].s, tricky[i].len, 1024, NULL);
		json_array_append_new(arr, json_string(s));
		free(s);
	}
	s = sbx_canonjson_clean_text(all, sizeof(all), 1024, NULL);
	json_object_set_new(obj, "c0", json_string(s));
	free(s);
	json_object_set_new(obj, "excerpts", arr);
	json_object_set_new(obj, "signature", json_pack("{s:s}", "alg", "ed25519"));

	assert_int_equal(sbx_canonjson_dump(obj, &text, &len, &err), 0);
	assert_non_null(strstr(text, "\"c0\":\"" FFFD "\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006"
				     "\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\\u0010"
				     "\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018"
				     "\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\""));
	jq = run_jq(text, len);
	if (strcmp(jq, text))
		fail_msg("jq -cjS differs:\n jq  %s\n sbx %s", jq, text);
	free(jq);
	free(text);
	json_decref(obj);
}

/* The reasons the cleaner exists, pinned: jq prints DEL escaped and orders
 * supplementary keys by code point, so raw JCS output would not survive. */
static void test_jq_differs_without_cleaning(void **state)
{
	struct sbx_error err = { 0 };
	json_t *v = json_pack("{s:s}", "a", "\x7f");
	char *text = NULL, *jq;
	size_t len = 0;

	assert_int_equal(sbx_canonjson_dump(v, &text, &len, &err), 0);
	jq = run_jq(text, len);
	assert_string_not_equal(jq, text);
	free(jq);
	free(text);
	json_decref(v);

	v = parse("{\"\\ufb33\":1,\"\\ud83d\\ude00\":2}");
	assert_int_equal(sbx_canonjson_dump(v, &text, &len, &err), 0);
	jq = run_jq(text, len);
	assert_string_not_equal(jq, text);
	free(jq);
	free(text);
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_table),
		cmocka_unit_test(test_dump_refuses_invalid_utf8),
		cmocka_unit_test(test_dump_refuses_deep_nesting),
		cmocka_unit_test(test_dump_nul_in_key),
		cmocka_unit_test(test_clean_table),
		cmocka_unit_test(test_clean_invariants),
		cmocka_unit_test(test_clean_text_table),
		cmocka_unit_test(test_clean_text_invariants),
		cmocka_unit_test(test_jq_reproduces_cleaned),
		cmocka_unit_test(test_jq_reproduces_text),
		cmocka_unit_test(test_jq_differs_without_cleaning),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
