/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-media-json.c - the streaming JSON validator: the table cases on
 * samples of samples.c, its verdicts against jansson's on a table and its
 * mutations, the depth, key and number bounds, and its memory on the
 * largest documents allowed.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "samples.h"
#include "util.h"
#include "validate.h"

static struct buf deep_json(unsigned depth)
{
	struct buf b = { 0 };

	for (unsigned i = 0; i < depth; i++)
		puts_(&b, "[");
	for (unsigned i = 0; i < depth; i++)
		puts_(&b, "]");
	return b;
}

static struct buf mk_deep(int d) { return deep_json((unsigned)d); }

/* Most cases expect no flags: leave .flags out. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct vcase vcases[] = {
	{ "json good", "application/json", mk_text, 19, 0, NULL, -1 },
	{ "json trailing comma", "application/json", mk_text, 20, -1, "json: line 1", -1 },
	{ "json duplicate key", "application/json", mk_text, 21, -1, "duplicate", -1 },
	{ "json scalar", "application/json", mk_text, 22, 0, NULL, -1 },
	{ "json brackets in string", "application/json", mk_text, 23, 0, NULL, -1 },
	{ "json escaped quote", "application/json", mk_text, 26, 0, NULL, -1 },
	{ "json invalid utf8", "application/json", mk_text, 24, -1, "invalid UTF-8", -1 },
	{ "json NUL", "application/json", mk_text, 1, -1, "NUL byte", -1 },
	{ "json empty", "application/json", mk_text, 25, -1, "json:", -1 },
	{ "json depth 64", "application/json", mk_deep, 64, 0, NULL, -1 },
	{ "json depth 65", "application/json", mk_deep, 65, -1, "nesting deeper than 64", -1 },
	{ "json depth 100000", "application/json", mk_deep, 100000, -1, "nesting deeper", -1 },

	{ "json escaped ESC", "application/json", mk_text, 56, 0, NULL, -1, SBX_MEDIA_FLAG_CONTROLS },
	{ "json raw DEL", "application/json", mk_text, 57, 0, NULL, -1, SBX_MEDIA_FLAG_CONTROLS },
	{ "json C1 in key and value", "application/json", mk_text, 58, 0, NULL, -1,
	  SBX_MEDIA_FLAG_CONTROLS },
	{ "json no controls", "application/json", mk_text, 59, 0, NULL, -1 },
};
#pragma GCC diagnostic pop

static void test_validators(void **state)
{
	check_vcases(vcases, ARRAY_SIZE(vcases));
}

/* --- JSON: the streaming checker against jansson ---------------------------- */

#include "fuzz/json-reference.h"

#define DBL_OVER_MID "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792"

static const char *const json_cases[] = {
	/* valid */
	"0", "-0", "1.5e3", "1E+2", "-1.0e-2", "0.0", "123", "\"a\"", "\"\\u00e9\"",
	"\"\\ud83d\\ude00\"", "\"\\uD83D\\uDE00\"", "[]", "{}", " [ 1 , 2 ] \r\n\t", "{\"a\":{\"a\":1}}",
	"[{\"a\":1},{\"a\":2}]", "{\"a\":1,\"b\":2}", "{\"ab\":1,\"ba\":2}", "{\"a\":1,\"A\":2}",
	"9223372036854775807", "-9223372036854775808", "0000", "1e308", "1.7976931348623157e308",
	"1.7976931348623158e308", "1e-400", "-1e-99999", "0e99999999999", "0.000e400", "true",
	"false", "null", "[true,false,null]", "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "{\"\":1}",
	"\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "\"\x7f\"", "\"\xc2\x85\"",
	"{\"a\":[1,{\"b\":[{}]}],\"c\":{\"d\":{\"e\":null}}}", "[\"\\u001b[31m\"]",
	"{\"x\":1,\"y\":{\"x\":2,\"y\":3},\"z\":4}", "1.7976931348623157e+308",
	DBL_OVER_MID ".0", "0." DBL_OVER_MID "e309", "[" DBL_OVER_MID "e-1]",
	/* just below the midpoint between DBL_MAX and 2^1024: rounds to DBL_MAX */
	"179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791.99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999",
	/* invalid */
	"", " ", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{,}", "{\"a\":1,}", "01", "-01", "-", "1.",
	".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "-Infinity", "tru", "truex", "nul",
	"nulll", "\"\x01\"", "\"\x1f\"", "\"\\u0000\"", "{\"\\u0000\":1}", "\"\\ud800\"",
	"\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\ud800x\"", "\"\\ud800\\n\"", "\"\\q\"", "\"\\u12\"",
	"\"\\u12g4\"", "\"abc", "[1 2]", "1 2", "{\"a\":1 \"b\":2}", "\xef\xbb\xbf[]", "[1]x", "[1]]",
	"[[]", "{\"a\":1}}", "'a'", "[-]", "[1,2", "{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}",
	"{\"\\ud83d\\ude00\":1,\"\xf0\x9f\x98\x80\":2}", "{\"x\":{\"y\":1,\"y\":2}}",
	"[{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,\"a\":0}]",
	"9223372036854775808", "-9223372036854775809", "12345678901234567890123", "1e400", "-1e400",
	"[1e309]", "123e99999999999999999999999", "\f[]", "[\v]", "{\"a\" 1}", "{1:2}",
	"{\"a\":1,,\"b\":2}", "[\"a\",]", "\"\t\"", "\"\n\"", "[01]", "[1.e1]", "[1e1.5]", "{\"a\"::1}",
	"[}", "{]", "]", "}", ",", ":", "\"\\u00\"", "\"\\", "[\"\\ud800\\ud800\"]",
	DBL_OVER_MID ".000000000000000000000000000000000000000000000000000000000000000000000000000000"
		     "000000000000000000000000000000000000000000000000000000000000000000000000000000"
		     "000000000000000000000000000000000000000000000000000000000000000000000000000000"
		     "000000000000000000000000000000000000000000000000000000000000000000000000000000"
		     "000000000000000000000000000000000000000000000000000000000000000000000000000001",
	DBL_OVER_MID, "-" DBL_OVER_MID ".5", "[" DBL_OVER_MID "0e-1]", "1e308000", "\"\xc0\xaf\"",
	"\"\xed\xa0\x80\"", "\"\xe2\x82\"", "[1]\0", "\"a\0b\"",
};
static const size_t json_case_len[] = {
	[ARRAY_SIZE(json_cases) - 2] = 4, [ARRAY_SIZE(json_cases) - 1] = 5,
};

static int json_verdict(int fd, const unsigned char *p, size_t n, struct sbx_media_report *rep)
{
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, p, n, 0), (ssize_t)n);
	return sbx_media_validate("application/json", fd, n, rep);
}

static void check_same(int fd, const unsigned char *p, size_t n)
{
	struct sbx_media_report rep;
	int ours = json_verdict(fd, p, n, &rep);
	bool theirs = jansson_accepts(p, n);

	if ((ours == 0) != theirs)
		fail_msg("verdicts differ on %zu bytes \"%.*s\": streaming %s, jansson %s", n,
			 (int)(n > 200 ? 200 : n), (const char *)p, ours == 0 ? "accepts" : rep.reason,
			 theirs ? "accepts" : "rejects");
	if (ours < 0)
		assert_true(rep.reason[0] != '\0');
}

/* The table, then mutations of each case: bytes inserted, deleted and
 * replaced, drawn from JSON's own alphabet so that most stay near-valid. */
static void test_json_matches_jansson(void **state)
{
	static const char alphabet[] = "[]{}\",:0123456789-+.eE\\u tfnrla\x01\x7f\xc3\xa9\xed\xa0\xf0";
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int fd = memfd_create("json", MFD_CLOEXEC);
	size_t accepted = 0, total = 0;

	assert_true(fd >= 0);
	for (size_t i = 0; i < ARRAY_SIZE(json_cases); i++) {
		size_t n = i < ARRAY_SIZE(json_case_len) && json_case_len[i] ? json_case_len[i]
									    : strlen(json_cases[i]);
		check_same(fd, (const unsigned char *)json_cases[i], n);
		for (int m = 0; m < 300; m++) {
			unsigned char buf[1200];
			size_t len = n < 1000 ? n : 1000;
			int edits = 1 + (int)(x % 3);

			memcpy(buf, json_cases[i], len);
			while (edits-- > 0) {
				size_t at;
				unsigned char c;

				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				at = len ? (size_t)(x >> 8) % (len + 1) : 0;
				c = (unsigned char)alphabet[(x >> 40) % (sizeof(alphabet) - 1)];
				switch (x % 3) {
				case 0: /* insert */
					memmove(buf + at + 1, buf + at, len - at);
					buf[at] = c;
					len++;
					break;
				case 1: /* delete */
					if (at < len) {
						memmove(buf + at, buf + at + 1, len - at - 1);
						len--;
					}
					break;
				default: /* replace */
					if (at < len)
						buf[at] = c;
				}
			}
			check_same(fd, buf, len);
			accepted += jansson_accepts(buf, len);
			total++;
		}
	}
	print_message("# %zu cases + %zu mutations, %zu of them valid\n", ARRAY_SIZE(json_cases),
		      total, accepted);
	/* The mutations must exercise both verdicts to prove anything. */
	assert_true(accepted > total / 20 && accepted < total - total / 20);
	close(fd);
}

/* Documents around the depth and key bounds, and keys that need decoding. */
static void test_json_bounds(void **state)
{
	int fd = memfd_create("json", MFD_CLOEXEC);
	struct sbx_media_report rep;
	struct buf b = { 0 };
	char k[32];

	assert_true(fd >= 0);
	/* Reals with millions of digits: the exponent comes from the digit
	 * counts (3e6 integer digits and 1e6 after the point overflow, one
	 * integer digit and 3e6 after it do not). */
	for (int over = 0; over < 2; over++) {
		size_t ni = over ? 3000000 : 1, nf = over ? 1000000 : 3000000;

		b.p = sbx_xmalloc(ni + nf + 2);
		memset(b.p, '1', ni);
		b.p[ni] = '.';
		memset(b.p + ni + 1, '2', nf);
		b.n = ni + nf + 1;
		assert_int_equal(json_verdict(fd, b.p, b.n, &rep), over ? -1 : 0);
		assert_int_equal(jansson_accepts(b.p, b.n), !over);
		free(b.p);
		b = (struct buf){ 0 };
	}
	/* An object with SBX_MEDIA_JSON_MAX_KEYS keys is fine... */
	puts_(&b, "{");
	for (unsigned i = 0; i < SBX_MEDIA_JSON_MAX_KEYS; i++) {
		snprintf(k, sizeof(k), "%s\"%x\":0", i ? "," : "", i);
		puts_(&b, k);
	}
	puts_(&b, "}");
	assert_int_equal(json_verdict(fd, b.p, b.n, &rep), 0);
	/* ... one more is refused, with the bound in the reason. */
	b.n--;
	puts_(&b, ",\"last\":1}");
	assert_int_equal(json_verdict(fd, b.p, b.n, &rep), -1);
	assert_non_null(strstr(rep.reason, "more than 1048576 keys"));
	free(b.p);
	/* A duplicate far apart, past the reader's buffer. */
	b = (struct buf){ 0 };
	puts_(&b, "{\"dup\":1");
	for (unsigned i = 0; i < 20000; i++) {
		snprintf(k, sizeof(k), ",\"k%u\":[%u]", i, i);
		puts_(&b, k);
	}
	puts_(&b, ",\"d\\u0075p\":2}");
	assert_int_equal(json_verdict(fd, b.p, b.n, &rep), -1);
	assert_non_null(strstr(rep.reason, "duplicate"));
	assert_false(jansson_accepts(b.p, b.n));
	free(b.p);
	close(fd);
}

/* Build the worst allowed kinds of JSON: flat [0,0,...] and nesting at the
 * depth limit around the same. */
static struct buf zeros_json(size_t bytes, unsigned depth)
{
	struct buf b = { 0 };

	b.p = sbx_xmalloc(bytes + 2 * depth + 4);
	for (unsigned i = 0; i < depth; i++)
		b.p[b.n++] = '[';
	while (b.n + 2 + depth < bytes) {
		b.p[b.n++] = '0';
		b.p[b.n++] = ',';
	}
	b.p[b.n++] = '0';
	for (unsigned i = 0; i < depth; i++)
		b.p[b.n++] = ']';
	return b;
}

static uint64_t vm_size(void)
{
	FILE *f = fopen("/proc/self/statm", "re");
	unsigned long pages = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 * The validator runs in the broker, outside every cgroup: 16 MiB of
 * [0,0,...] must validate within an address space 32 MiB larger than the
 * test's own (a parse tree needs ~20 times the file).
 */
static void test_json_bounded_memory(void **state)
{
	static const unsigned depths[] = { 1, SBX_MEDIA_JSON_MAX_DEPTH };

	for (size_t i = 0; i < ARRAY_SIZE(depths); i++) {
		struct buf b = zeros_json(16u << 20, depths[i]);
		int fd = memfd_of(&b);
		size_t n = b.n;
		struct sbx_media_report rep;
		struct rlimit old, lim;
		int r;

		free(b.p);
		assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
		lim = old;
		lim.rlim_cur = vm_size() + (32u << 20);
		assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
		r = sbx_media_validate("application/json", fd, n, &rep);
		assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
		print_message("# 16 MiB of zeros at depth %u: %s\n", depths[i],
			      r == 0 ? "valid" : rep.reason);
		assert_int_equal(r, 0);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validators),
		cmocka_unit_test(test_json_matches_jansson),
		cmocka_unit_test(test_json_bounds),
		cmocka_unit_test(test_json_bounded_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
