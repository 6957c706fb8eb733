/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-contract.c - output contracts: the parser (65 with the JSON path),
 * the type admission (77), each check on ordinary and hostile files (a
 * CSV with a million columns, a 10 MB line, a catastrophic pattern, a PNG
 * whose header lies about its size, NaN/inf/overflowing numbers, dates
 * that do not exist, a unique column past its cap).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "contract-check.h"
#include "json.h"
#include "samples.h"
#include "util.h"
#include "validate.h"

static int parse(const char *text, struct sbx_contracts *cs, struct sbx_error *err)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	int r;

	assert_non_null(v);
	memset(err, 0, sizeof(*err));
	r = sbx_contracts_parse(v, "job.json", cs, err);
	json_decref(v);
	return r;
}

/* --- the parser ------------------------------------------------------------ */

static const struct {
	const char *json;
	const char *error; /* NULL: valid */
} pcases[] = {
	{ "{\"totals.csv\": {\"columns\": {\"total\": {\"type\": \"number\", \"sum\": {\"equals\": 26, \"tolerance\": 0.005}}}}}",
	  NULL },
	{ "{\"totals.csv\": {\"columns\": {\"total\": {\"type\": \"number\", \"sum\": {\"equals\": 1, \"tolerance\": -1}}}}}",
	  "job.json: outputs[\"totals.csv\"].columns.total.sum.tolerance: expected a non-negative number, got -1" },
	{ "{\"t.csv\": {\"columns\": {\"total\": {\"sum\": {\"equals\": 1}}}}}",
	  "outputs[\"t.csv\"].columns.total.sum: needs \"type\" integer or number" },
	{ "{\"t.csv\": {\"columns\": {\"total\": {\"type\": \"number\", \"sum\": {}}}}}",
	  "outputs[\"t.csv\"].columns.total.sum.equals: missing required key" },
	{ "{\"t.csv\": {\"columns\": {\"d\": {\"type\": \"date\", \"min\": \"2026-02-30\"}}}}",
	  "outputs[\"t.csv\"].columns.d.min: expected an ISO 8601 date" },
	{ "{\"t.csv\": {\"columns\": {\"d\": {\"type\": \"timestamp\"}}}}",
	  "outputs[\"t.csv\"].columns.d.type: expected \"string\", \"integer\", \"number\" or \"date\"" },
	{ "{\"t.csv\": {\"columns\": {\"d\": {\"min\": 1}}}}",
	  "outputs[\"t.csv\"].columns.d.min: needs \"type\"" },
	{ "{\"t.csv\": {\"columns\": {\"n\": {\"type\": \"integer\", \"min\": 5, \"max\": 1}}}}",
	  "outputs[\"t.csv\"].columns.n.max: must not be less than min" },
	{ "{\"t.csv\": {\"columns\": {\"n\": {\"pattern\": \"(a+\"}}}}",
	  "outputs[\"t.csv\"].columns.n.pattern: expected a regular expression (PCRE2)" },
	{ "{\"t.csv\": {\"columns\": {\"n\": {\"colour\": 1}}}}", "outputs[\"t.csv\"].columns.n.colour" },
	{ "{\"t.csv\": {\"columns\": {}}}", "outputs[\"t.csv\"].columns: expected an object of 1 to 64" },
	{ "{\"t.csv\": {\"columns\": {\"a\": {\"unique\": true}, \"b\": {\"unique\": true}, \"c\": {\"unique\": true}, \"d\": {\"unique\": true}, \"e\": {\"unique\": true}}}}",
	  "outputs[\"t.csv\"].columns.e.unique: at most 4 unique columns" },
	{ "{\"t.csv\": {\"rows\": {\"min\": 3, \"max\": 2}}}", "outputs[\"t.csv\"].rows.max: must not be less than min" },
	{ "{\"t.csv\": {\"rows\": {}}}", "outputs[\"t.csv\"].rows: expected an object with" },
	{ "{\"t.csv\": {\"rows\": {\"min\": -1}}}", "outputs[\"t.csv\"].rows.min: expected" },
	{ "{\"t.csv\": {\"rows\": {\"min\": 1.5}}}", "outputs[\"t.csv\"].rows.min: expected" },
	{ "{\"t.csv\": {\"header\": []}}", "outputs[\"t.csv\"].header: expected a non-empty array" },
	{ "{\"t.csv\": {\"header\": [\"a\", 1]}}", "outputs[\"t.csv\"].header[1]: expected" },
	{ "{\"t.csv\": {\"width\": {\"min\": 1}}}", "outputs[\"t.csv\"].width: applies to image/png, image/jpeg and image/webp outputs only" },
	{ "{\"chart.png\": {\"rows\": {\"min\": 1}}}", "outputs[\"chart.png\"].rows: applies to text/csv and TSV" },
	{ "{\"chart.png\": {\"width\": {\"min\": 100, \"max\": 2000}, \"height\": {\"max\": 2000}}}", NULL },
	{ "{\"chart.png\": {\"media_type\": \"text/csv\"}}",
	  "outputs[\"chart.png\"].media_type: expected image/png, the type of the path's extension" },
	{ "{\"chart.png\": {\"media_type\": \"image/gif\"}}", "outputs[\"chart.png\"].media_type: expected image/png" },
	{ "{\"run.sh\": {}}", "outputs[\"run.sh\"]: expected a path whose extension names a media type" },
	{ "{\"note.txt\": {\"pattern\": \"^ok$\", \"lines\": {\"max\": 3}, \"required\": false, \"hold\": true}}", NULL },
	{ "{\"note.txt\": {\"required\": \"no\"}}", "outputs[\"note.txt\"].required: expected" },
	{ "{\"note.txt\": {\"hold\": 1}}", "outputs[\"note.txt\"].hold: expected" },
	{ "{\"data.json\": {\"schema\": {\"type\": \"object\"}}}", NULL },
	{ "{\"data.json\": {\"schema\": {\"properties\": {\"total\": {\"minimum\": \"x\"}}}}}",
	  "job.json: outputs[\"data.json\"].schema: /properties/total/minimum: expected a number" },
	{ "{\"data.json\": {\"schema\": {\"$ref\": \"#\"}}}", "outputs[\"data.json\"].schema: /$ref: unsupported keyword" },
	{ "{\"t.csv\": {\"bytes\": {\"max\": 100}, \"lines\": {\"max\": 1}}}", "outputs[\"t.csv\"].lines: applies to text/plain" },
	{ "{\"t.csv\": []}", "outputs[\"t.csv\"]: expected an object" },
	{ "[]", "job.json: outputs: expected an object" },
};

static void test_parse(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(pcases); i++) {
		struct sbx_contracts cs;
		struct sbx_error err;
		int r = parse(pcases[i].json, &cs, &err);

		if (!pcases[i].error) {
			if (r != 0)
				fail_msg("case %zu: %s", i, err.msg);
		} else {
			if (r == 0)
				fail_msg("case %zu: accepted %s", i, pcases[i].json);
			assert_int_equal(err.code, SBX_EXIT_INVALID);
			if (!strstr(err.msg, pcases[i].error))
				fail_msg("case %zu: got \"%s\", wanted \"%s\"", i, err.msg, pcases[i].error);
		}
		sbx_contracts_free(&cs);
	}
}

static void test_parse_hold_required(void **state)
{
	struct sbx_contracts cs;
	struct sbx_error err;

	assert_int_equal(parse("{\"a.txt\": {\"hold\": true, \"required\": false}, \"b.md\": {\"media_type\": \"text/plain\"}}",
			       &cs, &err), 0);
	assert_int_equal(cs.n, 2);
	assert_true(cs.v[0].hold);
	assert_false(cs.v[0].required);
	assert_false(cs.v[1].hold);
	assert_true(cs.v[1].required);
	assert_string_equal(cs.v[1].media_type, "text/plain");
	sbx_contracts_free(&cs);
}

static void test_admit(void **state)
{
	char *profile[] = { "text/csv", "text/plain", NULL };
	char **allowed = sbx_xcalloc(2, sizeof(char *));
	struct sbx_contracts cs;
	struct sbx_error err;

	allowed[0] = sbx_xstrdup("text/plain");
	assert_int_equal(parse("{\"t.csv\": {}}", &cs, &err), 0);
	assert_int_equal(sbx_contracts_admit(&cs, "job.json", "shell", profile, &allowed, &err), 0);
	/* The entry allows its type. */
	assert_string_equal(allowed[1], "text/csv");
	assert_null(allowed[2]);
	sbx_contracts_free(&cs);
	assert_int_equal(parse("{\"photo.jpg\": {}}", &cs, &err), 0);
	assert_int_equal(sbx_contracts_admit(&cs, "job.json", "shell", profile, &allowed, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_REFUSED);
	assert_non_null(strstr(err.msg, "job.json: outputs[\"photo.jpg\"]: profile \"shell\" does not allow output type image/jpeg"));
	sbx_contracts_free(&cs);
	sbx_strv_free(allowed);
}

/* --- checks ----------------------------------------------------------------- */

static int memfd_text(const char *s, size_t n)
{
	int fd = memfd_create("contract", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, s, n), (ssize_t)n);
	return fd;
}

/* Check @content as @path against @contract; the failures as
 * "check@row check ..." in order, "" when it passes. */
static char *run_check(const char *path, const char *contract, const char *content, size_t n,
		       uint64_t width, uint64_t height, struct sbx_contract_result *res)
{
	char json[4096];
	struct sbx_contracts cs;
	struct sbx_error err;
	int fd = memfd_text(content, n);
	char *out = sbx_xstrdup("");

	snprintf(json, sizeof(json), "{\"%s\": %s}", path, contract);
	if (parse(json, &cs, &err) < 0)
		fail_msg("%s: %s", json, err.msg);
	assert_int_equal(sbx_contract_check(&cs.v[0], fd, n, cs.v[0].media_type, width, height, res), 0);
	for (size_t i = 0; i < res->n; i++) {
		char *o = out;

		out = res->fail[i].row ? sbx_xasprintf("%s%s%s@%llu", o, *o ? " " : "", res->fail[i].check,
						       (unsigned long long)res->fail[i].row) :
					 sbx_xasprintf("%s%s%s", o, *o ? " " : "", res->fail[i].check);
		free(o);
	}
	assert_int_equal(res->ok, res->count == 0);
	close(fd);
	sbx_contracts_free(&cs);
	return out;
}

static const struct {
	const char *name, *path, *contract, *content, *want;
} ccases[] = {
	{ "sum ok", "t.csv", "{\"columns\": {\"total\": {\"type\": \"number\", \"sum\": {\"equals\": 26, \"tolerance\": 0.005}}}}",
	  "month,total\n2026-01,14.75\n2026-02,8.25\n2026-03,3.00\n", "" },
	{ "sum off by one row", "t.csv", "{\"columns\": {\"total\": {\"type\": \"number\", \"sum\": {\"equals\": 26, \"tolerance\": 0.005}}}}",
	  "month,total\n2026-01,4.25\n2026-02,8.25\n2026-03,3.00\n", "columns.total.sum" },
	{ "decimal fractions sum without a tolerance", "t.csv", "{\"columns\": {\"x\": {\"type\": \"number\", \"sum\": {\"equals\": 0.3}}}}",
	  "x\n0.1\n0.2\n", "" },
	{ "integer sum exact", "t.csv", "{\"columns\": {\"n\": {\"type\": \"integer\", \"sum\": {\"equals\": 6}}}}",
	  "n\n1\n2\n3\n", "" },
	{ "integer sum past int64", "t.csv", "{\"columns\": {\"n\": {\"type\": \"integer\", \"sum\": {\"equals\": 0}}}}",
	  "n\n9223372036854775807\n9223372036854775807\n", "columns.n.sum" },
	/* Issue 23: the running sum wrapped and the wrapped value was kept. */
	{ "integer sum wraps past int64", "t.csv", "{\"columns\": {\"n\": {\"type\": \"integer\", \"sum\": {\"equals\": 0}}}}",
	  "n\n2\n9223372036854775807\n", "columns.n.sum" },
	{ "integer sum past int64 and back", "t.csv", "{\"columns\": {\"n\": {\"type\": \"integer\", \"sum\": {\"equals\": 9223372036854775806}}}}",
	  "n\n9223372036854775807\n9223372036854775807\n-9223372036854775807\n-1\n", "" },
	/* An integer equals is compared exactly, also past 2^53. */
	{ "integer sum exact past 2^53", "t.csv", "{\"columns\": {\"n\": {\"type\": \"integer\", \"sum\": {\"equals\": 9007199254740993}}}}",
	  "n\n9007199254740992\n1\n", "" },
	{ "integer sum off by one past 2^53", "t.csv", "{\"columns\": {\"n\": {\"type\": \"integer\", \"sum\": {\"equals\": 9007199254740992}}}}",
	  "n\n9007199254740992\n1\n", "columns.n.sum" },
	/* Issue 23: 1e6 vanished between two huge values that cancel. */
	{ "number sum cancels huge values", "t.csv", "{\"columns\": {\"n\": {\"type\": \"number\", \"sum\": {\"equals\": 0}}}}",
	  "n\n1e300\n1000000\n-1e300\n", "columns.n.sum" },
	{ "number sum keeps what huge values leave", "t.csv", "{\"columns\": {\"n\": {\"type\": \"number\", \"sum\": {\"equals\": 1000000}}}}",
	  "n\n1e300\n1000000\n-1e300\n", "" },
	{ "number sum of tiny values", "t.csv", "{\"columns\": {\"n\": {\"type\": \"number\", \"sum\": {\"equals\": 3e-300}}}}",
	  "n\n1e-300\n2E-300\n0.0\n", "" },
	{ "number sum of fractions, exactly", "t.csv", "{\"columns\": {\"n\": {\"type\": \"number\", \"sum\": {\"equals\": 1}}}}",
	  "n\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n0.1\n", "" },
	{ "number sum misses by 1e-15", "t.csv", "{\"columns\": {\"n\": {\"type\": \"number\", \"sum\": {\"equals\": 1}}}}",
	  "n\n0.999999999999999\n", "columns.n.sum" },
	{ "number sum within the tolerance", "t.csv", "{\"columns\": {\"n\": {\"type\": \"number\", \"sum\": {\"equals\": 1, \"tolerance\": 1e-15}}}}",
	  "n\n0.999999999999999\n", "" },
	{ "number sum overflows to inf", "t.csv", "{\"columns\": {\"n\": {\"type\": \"number\", \"sum\": {\"equals\": 0}}}}",
	  "n\n1e308\n1e308\n1e308\n1e308\n1e308\n1e308\n1e308\n1e308\n1e308\n1e308\n", "columns.n.sum" },
	{ "NaN, inf, hex, spaces are not numbers", "t.csv", "{\"columns\": {\"n\": {\"type\": \"number\"}}}",
	  "n\nnan\ninf\n-Infinity\n0x10\n\" 1\"\n1e999\n1.\n.5\n-2.5e-3\n",
	  "columns.n.type@1 columns.n.type@2 columns.n.type@3 columns.n.type@4 columns.n.type@5 columns.n.type@6" },
	{ "integers: overflow, decimals, signs", "t.csv", "{\"columns\": {\"n\": {\"type\": \"integer\"}}}",
	  "n\n9223372036854775808\n-9223372036854775808\n1.0\n+7\n1e3\n",
	  "columns.n.type@1 columns.n.type@3 columns.n.type@5" },
	{ "dates that do not exist", "t.csv", "{\"columns\": {\"d\": {\"type\": \"date\"}}}",
	  "d\n2026-02-30\n2024-02-29\n2100-02-29\n2000-02-29\n2026-13-01\n2026-10\n2026-10-01T25:00\n2026-10-01T12:30:00Z\n2026-10-01T12:30:59.5+02:00\n26-10-01\n",
	  "columns.d.type@1 columns.d.type@3 columns.d.type@5 columns.d.type@7 columns.d.type@10" },
	{ "date range", "t.csv", "{\"columns\": {\"d\": {\"type\": \"date\", \"min\": \"2026-01-01\", \"max\": \"2026-12-31\"}}}",
	  "d\n2025-12-31\n2026-06-01\n2027-01-01\n", "columns.d.min@1 columns.d.max@3" },
	{ "number range", "t.csv", "{\"columns\": {\"n\": {\"type\": \"number\", \"min\": 0, \"max\": 10}}}",
	  "n\n-0.5\n10\n10.01\n", "columns.n.min@1 columns.n.max@3" },
	{ "not_null, empty cells skip the type", "t.csv", "{\"columns\": {\"a\": {\"not_null\": true}, \"b\": {\"type\": \"integer\"}}}",
	  "a,b\n,\n\"\",1\nx,y\n", "columns.a.not_null@1 columns.a.not_null@2 columns.b.type@3" },
	{ "unique", "t.csv", "{\"columns\": {\"id\": {\"unique\": true}}}", "id\n1\n2\n1\n\"2\"\n3\n",
	  "columns.id.unique@3 columns.id.unique@4" },
	{ "pattern is the whole cell", "t.csv", "{\"columns\": {\"code\": {\"pattern\": \"[A-Z]{3}\"}}}",
	  "code\nEUR\nEURO\neur\n", "columns.code.pattern@2 columns.code.pattern@3" },
	{ "quoted cells with separators, quotes and line breaks", "t.csv",
	  "{\"header\": [\"name\", \"n\"], \"columns\": {\"n\": {\"type\": \"integer\", \"sum\": {\"equals\": 3}}, \"name\": {\"pattern\": \"a,\\\"b\\\"\\nc\"}}}",
	  "name,n\r\n\"a,\"\"b\"\"\nc\",1\r\n\"a,\"\"b\"\"\nc\",2\r\n", "" },
	{ "header exact", "t.csv", "{\"header\": [\"month\", \"total\"]}", "month,sum\n1,2\n", "header" },
	{ "header too long", "t.csv", "{\"header\": [\"a\"]}", "a,b\n1,2\n", "header" },
	{ "byte order mark before the header", "t.csv", "{\"header\": [\"a\", \"b\"], \"columns\": {\"a\": {}}}",
	  "\xef\xbb\xbf" "a,b\n1,2\n", "" },
	{ "a missing column", "t.csv", "{\"columns\": {\"total\": {\"type\": \"number\"}}}", "month,sum\n1,2\n",
	  "columns.total" },
	{ "rows", "t.csv", "{\"rows\": {\"min\": 3}}", "a\n1\n2", "rows" },
	{ "rows max", "t.csv", "{\"rows\": {\"max\": 1}}", "a\n1\n2\n", "rows" },
	{ "semicolon separated", "t.csv", "{\"columns\": {\"b\": {\"type\": \"integer\", \"sum\": {\"equals\": 5}}}}",
	  "a;b\n1,5;2\n1,5;3\n", "" },
	{ "sep= line", "t.csv", "{\"header\": [\"a\", \"b\"]}", "sep=|\na|b\n1|2\n", "" },
	{ "tsv", "t.tsv", "{\"columns\": {\"b\": {\"type\": \"integer\", \"min\": 2}}}", "a\tb\n1\t2\n1\t1\n", "columns.b.min@2" },
	{ "bytes", "t.csv", "{\"bytes\": {\"min\": 100}}", "a\n1\n", "bytes" },
	{ "text lines and pattern", "n.txt", "{\"lines\": {\"min\": 2, \"max\": 3}, \"pattern\": \"^total: [0-9]+$\"}",
	  "header\ntotal: 42\nfooter", "" },
	{ "text: no line matches, too many lines", "n.txt", "{\"lines\": {\"max\": 2}, \"pattern\": \"^total\"}",
	  "a\nb\nc\n", "lines pattern" },
	{ "text: an empty file has no lines", "n.txt", "{\"lines\": {\"min\": 1}}", "", "lines" },
	{ "json schema", "d.json", "{\"schema\": {\"type\": \"object\", \"required\": [\"total\"], \"properties\": {\"total\": {\"type\": \"number\", \"minimum\": 0}}}}",
	  "{\"total\": -1}", "schema.minimum" },
	{ "json schema: required", "d.json", "{\"schema\": {\"required\": [\"total\"]}}", "{\"sum\": 1}", "schema.required" },
	{ "json schema: valid", "d.json", "{\"schema\": {\"type\": \"array\", \"maxItems\": 3}}", "[1, 2]", "" },
	{ "catastrophic pattern on a cell fails, does not hang", "t.csv", "{\"columns\": {\"a\": {\"pattern\": \"(a+)+b\"}}}",
	  "a\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!b\n",
	  "columns.a.pattern@1" },
};

static void test_checks(void **state)
{
	int bad = 0;

	for (size_t i = 0; i < ARRAY_SIZE(ccases); i++) {
		struct sbx_contract_result res;
		char *got = run_check(ccases[i].path, ccases[i].contract, ccases[i].content,
				      strlen(ccases[i].content), 0, 0, &res);

		if (strcmp(got, ccases[i].want) != 0) {
			print_message("# %s: got \"%s\", wanted \"%s\" (first: %s)\n", ccases[i].name,
				      got, ccases[i].want, res.n ? res.fail[0].detail : "-");
			bad++;
		}
		free(got);
	}
	assert_int_equal(bad, 0);
}

/* The article's case: the manifest says which column and by how much. */
static void test_sum_detail(void **state)
{
	struct sbx_contract_result res;
	const char *csv = "month,total\n2026-01,4.25\n2026-02,8.25\n2026-03,3.00\n";
	char *got = run_check("t.csv", "{\"columns\": {\"total\": {\"type\": \"number\", \"sum\": {\"equals\": 26, \"tolerance\": 0.005}}}}",
			      csv, strlen(csv), 0, 0, &res);

	assert_string_equal(got, "columns.total.sum");
	assert_string_equal(res.fail[0].detail, "sum is 15.5, expected 26 (tolerance 0.005): off by -10.5");
	assert_int_equal(res.fail[0].row, 0);
	free(got);
}

/* The sum, the expected value and the difference, exact (or cut with
 * "..." when too long to show). */
static void test_sum_details(void **state)
{
	static const struct {
		const char *type, *sum, *rows, *detail;
	} cases[] = {
		{ "integer", "{\"equals\": 0}", "2\n9223372036854775807\n",
		  "sum is 9223372036854775809, expected 0 (tolerance 0): off by +9223372036854775809" },
		{ "integer", "{\"equals\": 0}", "-9223372036854775808\n-9223372036854775808\n",
		  "sum is -18446744073709551616, expected 0 (tolerance 0): off by -18446744073709551616" },
		{ "number", "{\"equals\": 0}", "1e300\n1000000\n-1e300\n",
		  "sum is 1000000, expected 0 (tolerance 0): off by +1000000" },
		{ "number", "{\"equals\": 1e300}", "1e300\n1000000\n",
		  "sum is 1.0000000000000000...e+300, expected 1e+300 (tolerance 0): off by +1000000" },
		{ "number", "{\"equals\": 1, \"tolerance\": 1e-16}", "0.999999999999999\n",
		  "sum is 0.999999999999999, expected 1 (tolerance 1e-16): off by -1e-15" },
		{ "number", "{\"equals\": 0.3}", "0.1\n0.2\n0.00000000000000000000001\n",
		  "sum is 0.30000000000000000000001, expected 0.3 (tolerance 0): off by +1e-23" },
		{ "number", "{\"equals\": 0}", "1e308\n1e308\n",
		  "sum is 2e+308, expected 0 (tolerance 0): off by +2e+308" },
		{ "number", "{\"equals\": -2.5}", "-1.25E0\n-125e-2\n", "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbx_contract_result res;
		char contract[256], csv[256];
		char *got;

		snprintf(contract, sizeof(contract), "{\"columns\": {\"n\": {\"type\": \"%s\", \"sum\": %s}}}",
			 cases[i].type, cases[i].sum);
		snprintf(csv, sizeof(csv), "n\n%s", cases[i].rows);
		got = run_check("t.csv", contract, csv, strlen(csv), 0, 0, &res);
		if (strcmp(res.n ? res.fail[0].detail : "", cases[i].detail) != 0)
			fail_msg("case %zu: got \"%s\", wanted \"%s\"", i, res.n ? res.fail[0].detail : "",
				 cases[i].detail);
		free(got);
	}
}

/* The exact sum itself: every spelling of a number, the edges of what it
 * keeps, the carries. */
static void test_sum_exact(void **state)
{
	static const struct {
		const char *cells[4];
		const char *want;
	} cases[] = {
		{ { ".5", "1.", "-0", "+0.25" }, "1.75" },
		{ { "1e-351", "-0.5e-350", "1E-352" }, "-4e-351" },
		{ { "1e-400", "0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001" },
		  "0" },
		{ { "1.7976931348623157e308", "1.7976931348623157e308", "-1.7976931348623157E+308" },
		  "1.7976931348623157e+308" },
		{ { "123456789012345678901234567890", "-123456789012345678901234567889.5" }, "0.5" },
		{ { "-1e-300" }, "-1e-300" },
		{ { "-3", "2.000000000000000000000000000001" }, "-0.999999999999999999999999999999" },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbx_contract_sum s = { 0 };

		for (size_t j = 0; j < 4 && cases[i].cells[j]; j++) {
			double v;

			assert_int_equal(sbx_contract_parse_number(cases[i].cells[j], &v), 0);
			sbx_contract_sum_add_text(&s, cases[i].cells[j], false);
		}
		sbx_contract_sum_format(&s, buf, sizeof(buf));
		if (strcmp(buf, cases[i].want) != 0)
			fail_msg("case %zu: got %s, wanted %s", i, buf, cases[i].want);
	}
	/* Integers, to the edges of int64, carried midway and at the end. */
	{
		struct sbx_contract_sum s = { 0 };

		for (int i = 0; i < 1000; i++) {
			sbx_contract_sum_add_int(&s, INT64_MIN);
			sbx_contract_sum_add_int(&s, INT64_MAX);
			if (i == 500)
				assert_int_equal(sbx_contract_sum_sign(&s), -1);
		}
		sbx_contract_sum_format(&s, buf, sizeof(buf));
		assert_string_equal(buf, "-1000");
		sbx_contract_sum_add_text(&s, "1000", false);
		assert_int_equal(sbx_contract_sum_sign(&s), 0);
		sbx_contract_sum_format(&s, buf, sizeof(buf));
		assert_string_equal(buf, "0");
	}
}

/* A contract built without the parser's decimal text (only the doubles)
 * is compared with their shortest decimals. */
static void test_sum_without_text(void **state)
{
	struct sbx_contracts cs;
	struct sbx_error err;
	struct sbx_contract_result res;
	const char *csv = "x\n0.1\n0.2\n";
	int fd = memfd_text(csv, strlen(csv));

	(void)state;
	assert_int_equal(parse("{\"t.csv\": {\"columns\": {\"x\": {\"type\": \"number\", \"sum\": {\"equals\": 0.3, \"tolerance\": 0}}}}}",
			       &cs, &err), 0);
	cs.v[0].cols[0].sum_equals_text[0] = '\0';
	cs.v[0].cols[0].sum_tolerance_text[0] = '\0';
	assert_int_equal(sbx_contract_check(&cs.v[0], fd, strlen(csv), "text/csv", 0, 0, &res), 0);
	assert_true(res.ok);
	cs.v[0].cols[0].sum_equals = 0.30000000000000004;
	assert_int_equal(sbx_contract_check(&cs.v[0], fd, strlen(csv), "text/csv", 0, 0, &res), 0);
	assert_false(res.ok);
	assert_string_equal(res.fail[0].detail,
			    "sum is 0.3, expected 0.30000000000000004 (tolerance 0): off by -4e-17");
	close(fd);
	sbx_contracts_free(&cs);
}

/* Many failures: 20 listed, all counted. */
static void test_failures_bounded(void **state)
{
	struct buf b = { 0 };
	struct sbx_contract_result res;
	char *got;

	puts_(&b, "n\n");
	for (int i = 0; i < 1000; i++)
		puts_(&b, "x\n");
	got = run_check("t.csv", "{\"columns\": {\"n\": {\"type\": \"integer\"}}}", (char *)b.p, b.n, 0, 0, &res);
	assert_int_equal(res.n, SBX_CONTRACT_MAX_FAILURES);
	assert_int_equal(res.count, 1000);
	assert_false(res.ok);
	assert_int_equal(res.fail[19].row, 20);
	free(got);
	free(b.p);
}

/* A header of a million columns: the contract names the last one. */
static void test_million_columns(void **state)
{
	struct buf b = { 0 };
	struct sbx_contract_result res;
	char cell[32];
	char *got;

	for (int i = 0; i < 1000000; i++) {
		snprintf(cell, sizeof(cell), "%sc%d", i ? "," : "", i);
		puts_(&b, cell);
	}
	puts_(&b, "\n");
	for (int i = 0; i < 1000000; i++)
		puts_(&b, i ? ",1" : "1");
	puts_(&b, "\n");
	got = run_check("t.csv", "{\"columns\": {\"c999999\": {\"type\": \"integer\", \"sum\": {\"equals\": 2}}}}",
			(char *)b.p, b.n, 0, 0, &res);
	assert_string_equal(got, "columns.c999999.sum");
	assert_non_null(strstr(res.fail[0].detail, "sum is 1, expected 2"));
	free(got);
	got = run_check("t.csv", "{\"header\": [\"c0\", \"c1\"]}", (char *)b.p, b.n, 0, 0, &res);
	assert_string_equal(got, "header");
	assert_string_equal(res.fail[0].detail, "1000000 columns, expected 2");
	free(got);
	free(b.p);
}

/* A 10 MB cell in a checked column, and a 10 MB line of text. */
static void test_long_line(void **state)
{
	size_t n = 10u << 20;
	char *p = sbx_xmalloc(n + 16);
	struct sbx_contract_result res;
	char *got;

	memcpy(p, "a\n", 2);
	memset(p + 2, 'x', n);
	got = run_check("t.csv", "{\"columns\": {\"a\": {\"pattern\": \"x+\"}}}", p, n + 2, 0, 0, &res);
	assert_string_equal(got, "columns.a@1");
	assert_non_null(strstr(res.fail[0].detail, "longer than 65536"));
	free(got);
	/* Text: one line; the pattern sees its first 64 KiB. */
	got = run_check("n.txt", "{\"lines\": {\"max\": 1}, \"pattern\": \"^x+$\"}", p + 2, n, 0, 0, &res);
	assert_string_equal(got, "");
	free(got);
	memcpy(p + 2 + n - 6, "needle", 6);
	got = run_check("n.txt", "{\"pattern\": \"needle\"}", p + 2, n, 0, 0, &res);
	assert_string_equal(got, "pattern");
	free(got);
	free(p);
}

/* (a+)+$ against a long line that almost matches: the work limit ends it. */
static void test_catastrophic_text(void **state)
{
	size_t n = 30000;
	char *p = sbx_xmalloc(n + 2);
	struct sbx_contract_result res;
	char *got;

	memset(p, 'a', n);
	p[n] = '!';
	got = run_check("n.txt", "{\"pattern\": \"^(a+)+$\"}", p, n + 1, 0, 0, &res);
	assert_string_equal(got, "pattern");
	assert_non_null(strstr(res.fail[0].detail, "limit"));
	free(got);
	free(p);
}

/* A catastrophic pattern on every row of a column: each match has its own
 * work limit, and all of them one budget, so 5000 rows cost the budget
 * (20 full limits), not 5000 full limits (minutes); every row still fails. */
static void test_catastrophic_column(void **state)
{
	struct buf b = { 0 };
	struct sbx_contract_result res;
	char *got;

	puts_(&b, "a\n");
	for (int i = 0; i < 5000; i++)
		puts_(&b, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!b\n");
	got = run_check("t.csv", "{\"columns\": {\"a\": {\"pattern\": \"(a+)+b\"}}}", (char *)b.p, b.n, 0, 0,
			&res);
	assert_int_equal(res.count, 5000);
	assert_false(res.ok);
	assert_non_null(strstr(res.fail[0].detail, "limit"));
	free(got);
	free(b.p);
}

/*
 * Issue 23: a CSV column pattern was charged the whole per-match limit for
 * every cell, so the 21st cell of any table failed.  Tables of 1, 21,
 * 10,000 and 1,000,000 rows pass with a simple pattern, and fail at
 * exactly their last row when it does not match.
 */
static void table(struct buf *b, unsigned rows, const char *cell, const char *last)
{
	char line[64];

	b->n = 0;
	puts_(b, "id,code\n");
	for (unsigned i = 1; i <= rows; i++) {
		snprintf(line, sizeof(line), "%u,%s\n", i, i == rows ? last : cell);
		puts_(b, line);
	}
}

static void test_pattern_tables(void **state)
{
	static const unsigned sizes[] = { 1, 21, 10000, 1000000 };
	static const struct {
		const char *pattern, *good, *bad;
	} pats[] = {
		{ "^[A-Z]{2}[0-9]+$", "AB12345", "AB1234x" },
		{ "x", "x", "xx" },
	};
	struct buf b = { 0 };
	struct sbx_contract_result res;
	char contract[256], want[64];
	char *got;

	for (size_t p = 0; p < ARRAY_SIZE(pats); p++)
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
			snprintf(contract, sizeof(contract),
				 "{\"columns\": {\"code\": {\"pattern\": \"%s\"}}}", pats[p].pattern);
			table(&b, sizes[i], pats[p].good, pats[p].good);
			got = run_check("t.csv", contract, (char *)b.p, b.n, 0, 0, &res);
			if (strcmp(got, "") != 0)
				fail_msg("%s, %u rows: got \"%s\" (%llu failures, first: %s)", pats[p].pattern,
					 sizes[i], got, (unsigned long long)res.count,
					 res.n ? res.fail[0].detail : "-");
			free(got);
			table(&b, sizes[i], pats[p].good, pats[p].bad);
			got = run_check("t.csv", contract, (char *)b.p, b.n, 0, 0, &res);
			snprintf(want, sizeof(want), "columns.code.pattern@%u", sizes[i]);
			if (strcmp(got, want) != 0 || res.count != 1)
				fail_msg("%s, %u rows, the last bad: got \"%s\" (%llu failures)", pats[p].pattern,
					 sizes[i], got, (unsigned long long)res.count);
			assert_non_null(strstr(res.fail[0].detail, "does not match"));
			free(got);
		}
	free(b.p);
}

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * Issue 23: a repeat of one character scans its whole run in one PCRE2
 * step, so \w+$ over 20 lines of 65,535 letters and a '!' took 35 s of
 * CPU, and (?=(a+))\1$ over 40 lines 33 s, inside the step budget.  Both
 * must end with a limit failure, quickly.
 */
static void test_scanning_patterns_text(void **state)
{
	static const struct {
		const char *pattern;
		char letter;
		unsigned lines;
	} cases[] = {
		{ "\\\\w+$", 'q', 20 },
		{ "(?=(a+))\\\\1$", 'a', 40 },
	};

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct buf b = { 0 };
		struct sbx_contract_result res;
		char contract[128], line[65537];
		double t0;
		char *got;

		memset(line, cases[c].letter, 65535);
		memcpy(line + 65535, "!\n", 2);
		for (unsigned i = 0; i < cases[c].lines; i++)
			put(&b, line, sizeof(line));
		snprintf(contract, sizeof(contract), "{\"pattern\": \"%s\"}", cases[c].pattern);
		t0 = cpu_seconds();
		got = run_check("n.txt", contract, (char *)b.p, b.n, 0, 0, &res);
		t0 = cpu_seconds() - t0;
		print_message("# %s over %u lines: %.3f s of CPU\n", cases[c].pattern, cases[c].lines, t0);
		assert_string_equal(got, "pattern");
		assert_non_null(strstr(res.fail[0].detail, "limit"));
		/* Well under a second on a real machine; generous for sanitizers. */
		assert_true(t0 < 3.0);
		free(got);
		free(b.p);
	}
}

/*
 * Ordinary searches over a few megabytes of prose stay within the budget
 * of the file, though each line costs tens of units a byte: a repeated
 * word (a backreference, charged the rest of the line at every step) or
 * an address found only on the last line.
 */
static void test_text_search_budget(void **state)
{
	static const char *const patterns[] = {
		"\\\\b(\\\\w+)\\\\s+\\\\1\\\\b",
		"[a-z]+@[a-z]+\\\\.com",
		"\\\\w+ment\\\\b",
	};
	struct buf b = { 0 };
	struct sbx_contract_result res;
	char contract[160];

	for (int i = 0; i < 40000; i++)
		puts_(&b, "Payments are made in the month after the agreed delivery of the goods, "
			  "net of any discount agreed in writing.\n");
	puts_(&b, "Write to billing@example.com about the settlement the the invoice.\n");
	for (size_t p = 0; p < ARRAY_SIZE(patterns); p++) {
		char *got;

		snprintf(contract, sizeof(contract), "{\"pattern\": \"%s\"}", patterns[p]);
		got = run_check("n.txt", contract, (char *)b.p, b.n, 0, 0, &res);
		if (strcmp(got, "") != 0)
			fail_msg("%s over %zu bytes: %s", patterns[p], b.n, res.n ? res.fail[0].detail : "");
		free(got);
	}
	free(b.p);
}

/* unique past its cap fails the check rather than growing the table. */
static void test_unique_cap(void **state)
{
	struct buf b = { 0 };
	struct sbx_contract_result res;
	char cell[32];
	char *got;

	puts_(&b, "id\n");
	for (unsigned i = 0; i <= SBX_CONTRACT_UNIQUE_MAX_ROWS; i++) {
		snprintf(cell, sizeof(cell), "%u\n", i);
		puts_(&b, cell);
	}
	got = run_check("t.csv", "{\"columns\": {\"id\": {\"unique\": true}}}", (char *)b.p, b.n, 0, 0, &res);
	assert_string_equal(got, "columns.id.unique@1048577");
	assert_non_null(strstr(res.fail[0].detail, "more than 1048576 rows"));
	free(got);
	free(b.p);
}

/* Images: the dimensions are the validator's; a header that claims more
 * than the pixel cap never reaches the contract. */
static void test_images(void **state)
{
	struct buf good = make_png(PNG_GOOD), huge = make_png(PNG_HUGE);
	struct sbx_media_report rep;
	struct sbx_contract_result res;
	int fd = memfd_of(&huge);
	char *got;

	assert_int_equal(sbx_media_validate("image/png", fd, huge.n, &rep), -1);
	close(fd);
	fd = memfd_of(&good);
	assert_int_equal(sbx_media_validate("image/png", fd, good.n, &rep), 0);
	close(fd);
	got = run_check("c.png", "{\"width\": {\"min\": 2}, \"height\": {\"max\": 1}}", (char *)good.p, good.n,
			rep.width, rep.height, &res);
	assert_string_equal(got, "width");
	assert_string_equal(res.fail[0].detail, "1 pixels wide, expected at least 2");
	free(got);
	got = run_check("c.png", "{\"width\": {\"max\": 100}, \"height\": {\"min\": 1}}", (char *)good.p, good.n,
			rep.width, rep.height, &res);
	assert_string_equal(got, "");
	free(got);
	free(good.p);
	free(huge.p);
}

/* A content type other than the contract's (cannot happen after the
 * collector's checks, but the check does not rely on that). */
static void test_media_type_mismatch(void **state)
{
	struct sbx_contracts cs;
	struct sbx_error err;
	struct sbx_contract_result res;
	int fd = memfd_text("a\n", 2);

	assert_int_equal(parse("{\"t.csv\": {}}", &cs, &err), 0);
	assert_int_equal(sbx_contract_check(&cs.v[0], fd, 2, "text/plain", 0, 0, &res), 0);
	assert_false(res.ok);
	assert_string_equal(res.fail[0].check, "media_type");
	close(fd);
	sbx_contracts_free(&cs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_hold_required),
		cmocka_unit_test(test_admit),
		cmocka_unit_test(test_checks),
		cmocka_unit_test(test_sum_detail),
		cmocka_unit_test(test_sum_details),
		cmocka_unit_test(test_sum_exact),
		cmocka_unit_test(test_sum_without_text),
		cmocka_unit_test(test_failures_bounded),
		cmocka_unit_test(test_million_columns),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_catastrophic_text),
		cmocka_unit_test(test_catastrophic_column),
		cmocka_unit_test(test_pattern_tables),
		cmocka_unit_test(test_scanning_patterns_text),
		cmocka_unit_test(test_text_search_budget),
		cmocka_unit_test(test_unique_cap),
		cmocka_unit_test(test_images),
		cmocka_unit_test(test_media_type_mismatch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
