/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-verdict.c - the broker's reader of the validator's answers
 * (src/outputs/verdict.c): what a compromised validator could send, each
 * refused with its reason, and the round trip of what a sound one sends.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mediatype.h"
#include "reasoncode.h"
#include "verdict.h"

#define HEAD "{\"v\":1,\"i\":4,"
#define OKTAIL "\"flags\":[],\"formula_cells\":false,\"width\":0,\"height\":0}"

#define SHA "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define MEMBER_OK                                                                         \
	"{\"path\":\"d/a.csv\",\"size\":3,\"sha256\":\"" SHA "\",\"media_type\":\"text/csv\","  \
	"\"ok\":true,\"flags\":[],\"formula_cells\":true}"
#define MEMBER_BAD                                                                        \
	"{\"path\":\"m.pkl\",\"size\":3,\"sha256\":\"" SHA "\",\"media_type\":null,"          \
	"\"ok\":false,\"reason\":\"pickle\",\"code\":\"code_as_data\",\"flags\":[],"          \
	"\"formula_cells\":false}"
#define ZIPTAIL(m) "\"flags\":[],\"formula_cells\":false,\"width\":0,\"height\":0,\"members\":[" m "]}"

static const struct {
	const char *text;
	const char *why; /* NULL: accepted */
} cases[] = {
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\"," OKTAIL, NULL },
	{ HEAD "\"ok\":false,\"media_type\":null,\"reason\":\"no\",\"code\":\"unknown_type\"," OKTAIL,
	  NULL },
	/* a refusal's code: one of sbx's names, and only on a refusal */
	{ HEAD "\"ok\":false,\"media_type\":null,\"reason\":\"no\"," OKTAIL, "reason code" },
	{ HEAD "\"ok\":false,\"media_type\":null,\"reason\":\"no\",\"code\":\"all_good\"," OKTAIL,
	  "reason code" },
	{ HEAD "\"ok\":false,\"media_type\":null,\"reason\":\"no\",\"code\":1," OKTAIL,
	  "reason code" },
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\",\"code\":\"unknown_type\"," OKTAIL,
	  "reason code" },
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\",\"flags\":[\"active_content\","
	       "\"terminal_colors\"],\"formula_cells\":true,\"width\":3,\"height\":4,"
	       "\"contract\":{\"ok\":false,\"count\":1,\"failures\":[{\"check\":\"rows\","
	       "\"detail\":\"2 rows\",\"row\":0}]}}", NULL },
	/* not JSON, not an object, or an unknown key */
	{ "", "not an answer object" },
	{ "[1]", "not an answer object" },
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\",\"extra\":1," OKTAIL, "not an answer object" },
	/* two values for one key: the two sides could read different answers */
	{ HEAD "\"ok\":false,\"ok\":true,\"media_type\":\"text/csv\"," OKTAIL, "not an answer object" },
	/* another version, another item */
	{ "{\"v\":2,\"i\":4,\"ok\":true,\"media_type\":\"text/csv\"," OKTAIL, "unknown version" },
	{ "{\"v\":1,\"i\":5,\"ok\":true,\"media_type\":\"text/csv\"," OKTAIL, "another item" },
	{ "{\"v\":1,\"i\":-1,\"ok\":true,\"media_type\":\"text/csv\"," OKTAIL, "another item" },
	/* types sbx does not know, and valid without a type */
	{ HEAD "\"ok\":true,\"media_type\":\"text/x-evil\"," OKTAIL, "not a type sbx knows" },
	{ HEAD "\"ok\":true,\"media_type\":\"TEXT/CSV\"," OKTAIL, "not a type sbx knows" },
	{ HEAD "\"ok\":true,\"media_type\":null," OKTAIL, "disagree" },
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\",\"reason\":\"x\"," OKTAIL, "disagree" },
	/* a rejection without a reason, or with one a terminal would obey */
	{ HEAD "\"ok\":false,\"media_type\":null," OKTAIL, "disagree" },
	{ HEAD "\"ok\":false,\"media_type\":null,\"reason\":\"\"," OKTAIL, "disagree" },
	{ HEAD "\"ok\":false,\"media_type\":null,\"reason\":\"a\\u001b[2Jb\"," OKTAIL, "disagree" },
	{ HEAD "\"ok\":false,\"media_type\":null,\"reason\":\"a\\u009bb\"," OKTAIL, "disagree" },
	/* (jansson refuses a NUL in a string outright) */
	{ HEAD "\"ok\":false,\"media_type\":null,\"reason\":\"a\\u0000b\"," OKTAIL,
	  "not an answer object" },
	/* flags: unknown, twice, not strings; a rejected file has none */
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\",\"flags\":[\"safe\"],\"formula_cells\":false,"
	       "\"width\":0,\"height\":0}", "flags" },
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\",\"flags\":[\"active_content\","
	       "\"active_content\"],\"formula_cells\":false,\"width\":0,\"height\":0}", "flags" },
	{ HEAD "\"ok\":false,\"media_type\":null,\"reason\":\"r\",\"code\":\"symlink\","
	       "\"flags\":[\"active_content\"],"
	       "\"formula_cells\":false,\"width\":0,\"height\":0}", "no flags or contract" },
	/* numbers out of range */
	{ HEAD "\"ok\":true,\"media_type\":\"image/png\",\"flags\":[],\"formula_cells\":false,"
	       "\"width\":-1,\"height\":0}", "width and height" },
	{ HEAD "\"ok\":true,\"media_type\":\"image/png\",\"flags\":[],\"formula_cells\":false,"
	       "\"width\":4294967296,\"height\":0}", "width and height" },
	{ HEAD "\"ok\":true,\"media_type\":\"image/png\",\"flags\":[],\"formula_cells\":0,"
	       "\"width\":1,\"height\":1}", "booleans" },
	/* contracts whose parts disagree */
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\",\"flags\":[],\"formula_cells\":false,"
	       "\"width\":0,\"height\":0,\"contract\":{\"ok\":true,\"count\":1,\"failures\":"
	       "[{\"check\":\"rows\",\"detail\":\"x\",\"row\":0}]}}", "disagree" },
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\",\"flags\":[],\"formula_cells\":false,"
	       "\"width\":0,\"height\":0,\"contract\":{\"ok\":false,\"count\":3,\"failures\":"
	       "[{\"check\":\"rows\",\"detail\":\"x\",\"row\":0}]}}", "disagree" },
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\",\"flags\":[],\"formula_cells\":false,"
	       "\"width\":0,\"height\":0,\"contract\":{\"ok\":false,\"count\":1,\"failures\":"
	       "[{\"check\":\"\",\"detail\":\"x\",\"row\":0}]}}", "failure is not" },
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\",\"flags\":[],\"formula_cells\":false,"
	       "\"width\":0,\"height\":0,\"contract\":{\"ok\":false,\"count\":1,\"failures\":"
	       "[{\"check\":\"rows\",\"detail\":\"x\",\"row\":0,\"more\":1}]}}", "failure is not" },
	/* application/zip: its members, and only for it */
	{ HEAD "\"ok\":true,\"media_type\":\"application/zip\"," ZIPTAIL(MEMBER_OK "," MEMBER_OK),
	  NULL },
	{ HEAD "\"ok\":false,\"media_type\":\"application/zip\",\"reason\":\"m\","
	       "\"code\":\"code_as_data\"," ZIPTAIL(MEMBER_OK "," MEMBER_BAD), NULL },
	{ HEAD "\"ok\":true,\"media_type\":\"application/zip\"," OKTAIL,
	  "without its members" },
	{ HEAD "\"ok\":true,\"media_type\":\"text/csv\"," ZIPTAIL(MEMBER_OK), "no application/zip" },
	{ HEAD "\"ok\":true,\"media_type\":\"application/zip\"," ZIPTAIL(MEMBER_OK "," MEMBER_BAD),
	  "a refused member in a valid archive" },
	{ HEAD "\"ok\":false,\"media_type\":\"application/zip\",\"reason\":\"m\","
	       "\"code\":\"code_as_data\"," ZIPTAIL(MEMBER_BAD "," MEMBER_OK), "not the last" },
	{ HEAD "\"ok\":true,\"media_type\":\"application/zip\","
	       ZIPTAIL("{\"path\":\"a.csv\",\"size\":1,\"sha256\":\"AB\",\"media_type\":\"text/csv\","
		       "\"ok\":true,\"flags\":[],\"formula_cells\":false}"), "a member is not" },
	{ HEAD "\"ok\":true,\"media_type\":\"application/zip\","
	       ZIPTAIL("{\"path\":\"a.csv\",\"size\":1,\"sha256\":\"" SHA "\",\"media_type\":"
		       "\"text/x-evil\",\"ok\":true,\"flags\":[],\"formula_cells\":false}"),
	  "does not know" },
	{ HEAD "\"ok\":true,\"media_type\":\"application/zip\","
	       ZIPTAIL("{\"path\":\"a\\u001bb.csv\",\"size\":1,\"sha256\":\"" SHA "\",\"media_type\":"
		       "\"text/csv\",\"ok\":true,\"flags\":[],\"formula_cells\":false}"),
	  "a member is not" },
};

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbx_verdict v;
		char why[256] = "";
		int r = sbx_verdict_parse(cases[i].text, strlen(cases[i].text), 4, &v, why,
					  sizeof(why));

		if (!cases[i].why) {
			if (r != 0)
				fail_msg("case %zu refused: %s", i, why);
			continue;
		}
		if (r == 0 || !strstr(why, cases[i].why))
			fail_msg("case %zu: got %d \"%s\", wanted a refusal with \"%s\"", i, r, why,
				 cases[i].why);
	}
}

/* An answer over the bound is refused whatever it holds. */
static void test_too_long(void **state)
{
	size_t n = SBX_VERDICT_MAX_ANSWER + 1;
	char *buf = malloc(n);
	struct sbx_verdict v;
	char why[256];

	(void)state;
	assert_non_null(buf);
	memset(buf, ' ', n);
	memcpy(buf, HEAD "\"ok\":true,\"media_type\":\"text/csv\"," OKTAIL,
	       strlen(HEAD "\"ok\":true,\"media_type\":\"text/csv\"," OKTAIL));
	assert_int_equal(sbx_verdict_parse(buf, n, 4, &v, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "too long"));
	free(buf);
}

/* What a sound validator writes, the broker reads back: the type as sbx's
 * own static string, the flags, the contract's failures. */
static void test_round_trip(void **state)
{
	struct sbx_verdict v = { .index = 9, .ok = true, .media_type = "text/csv",
				 .flags = SBX_MEDIA_FLAG_ACTIVE | SBX_MEDIA_FLAG_CONTROLS,
				 .formula_cells = true, .has_contract = true,
				 .contract = { .ok = false, .count = 25, .n = SBX_CONTRACT_MAX_FAILURES } };
	struct sbx_verdict back;
	char why[256], *text;

	(void)state;
	for (size_t i = 0; i < v.contract.n; i++) {
		strcpy(v.contract.fail[i].check, "columns.total.sum");
		strcpy(v.contract.fail[i].detail, "sum 3, expected 0");
		v.contract.fail[i].row = i + 1;
	}
	text = sbx_verdict_format(&v);
	assert_int_equal(sbx_verdict_parse(text, strlen(text), 9, &back, why, sizeof(why)), 0);
	assert_ptr_equal(back.media_type, sbx_media_type_static("text/csv"));
	assert_int_equal(back.flags, v.flags);
	assert_true(back.formula_cells);
	assert_int_equal(back.contract.count, 25);
	assert_int_equal(back.contract.n, SBX_CONTRACT_MAX_FAILURES);
	assert_int_equal(back.contract.fail[19].row, 20);
	free(text);

	/* A refusal's code comes back as the table's own string; none set is
	 * invalid_content. */
	v = (struct sbx_verdict){ .index = 2, .reason = "r", .reason_code = SBX_RC_POLYGLOT };
	text = sbx_verdict_format(&v);
	assert_int_equal(sbx_verdict_parse(text, strlen(text), 2, &back, why, sizeof(why)), 0);
	assert_ptr_equal(back.reason_code, sbx_reason_code_static("polyglot"));
	free(text);
	v.reason_code = NULL;
	text = sbx_verdict_format(&v);
	assert_int_equal(sbx_verdict_parse(text, strlen(text), 2, &back, why, sizeof(why)), 0);
	assert_string_equal(back.reason_code, "invalid_content");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
