/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-jschema.c - the JSON Schema subset of output contracts: every
 * keyword passing and failing, the schemas compile refuses, and hostile
 * documents and schemas (deep, huge numbers, catastrophic patterns,
 * invalid UTF-8, duplicate keys, work bombs).
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jschema.h"

struct seen {
	int n;
	char path[8][300];
	char keyword[8][32];
	char detail[8][300];
	int stop_after; /* 0: never */
};

static int record(void *arg, const char *doc_path, const char *keyword, const char *detail)
{
	struct seen *s = arg;

	if (s->n < 8) {
		snprintf(s->path[s->n], sizeof(s->path[0]), "%s", doc_path);
		snprintf(s->keyword[s->n], sizeof(s->keyword[0]), "%s", keyword);
		snprintf(s->detail[s->n], sizeof(s->detail[0]), "%s", detail);
	}
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

static struct sbx_jschema *compile_text(const char *text)
{
	json_error_t jerr;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &jerr);
	struct sbx_jschema *s = NULL;
	char err[300];
	int r;

	if (!j)
		fail_msg("test schema does not parse: %s: %s", text, jerr.text);
	r = sbx_jschema_compile(j, &s, err, sizeof(err));
	json_decref(j);
	if (r != 0)
		fail_msg("schema %s: %s", text, err);
	return s;
}

static int validate_text(const char *schema, const char *doc, struct seen *seen)
{
	struct sbx_jschema *s = compile_text(schema);
	int r = sbx_jschema_validate(s, doc, strlen(doc), record, seen);

	sbx_jschema_free(s);
	return r;
}

/* --- documents ------------------------------------------------------------------ */

static const struct vcase {
	const char *schema, *doc;
	int failures;	      /* expected return */
	const char *keyword;  /* of the first failure */
	const char *path;     /* of the first failure */
} vcases[] = {
	/* boolean schemas */
	{ "true", "{\"a\":1}", 0, NULL, NULL },
	{ "false", "1", 1, "false", "" },
	{ "{}", "[1,\"x\",null]", 0, NULL, NULL },
	/* type */
	{ "{\"type\":\"string\"}", "\"x\"", 0, NULL, NULL },
	{ "{\"type\":\"string\"}", "1", 1, "type", "" },
	{ "{\"type\":\"null\"}", "null", 0, NULL, NULL },
	{ "{\"type\":\"null\"}", "false", 1, "type", "" },
	{ "{\"type\":\"boolean\"}", "true", 0, NULL, NULL },
	{ "{\"type\":\"boolean\"}", "0", 1, "type", "" },
	{ "{\"type\":\"object\"}", "{}", 0, NULL, NULL },
	{ "{\"type\":\"object\"}", "[]", 1, "type", "" },
	{ "{\"type\":\"array\"}", "[]", 0, NULL, NULL },
	{ "{\"type\":\"array\"}", "{}", 1, "type", "" },
	{ "{\"type\":\"number\"}", "1.5", 0, NULL, NULL },
	{ "{\"type\":\"number\"}", "7", 0, NULL, NULL },
	{ "{\"type\":\"number\"}", "\"7\"", 1, "type", "" },
	{ "{\"type\":[\"string\",\"null\"]}", "null", 0, NULL, NULL },
	{ "{\"type\":[\"string\",\"null\"]}", "3", 1, "type", "" },
	/* integer: a number without a fractional part, 1.0 included */
	{ "{\"type\":\"integer\"}", "3", 0, NULL, NULL },
	{ "{\"type\":\"integer\"}", "1.0", 0, NULL, NULL },
	{ "{\"type\":\"integer\"}", "-0.0", 0, NULL, NULL },
	{ "{\"type\":\"integer\"}", "1e300", 0, NULL, NULL },
	{ "{\"type\":\"integer\"}", "1.5", 1, "type", "" },
	{ "{\"type\":\"integer\"}", "1e-300", 1, "type", "" },
	/* properties, additionalProperties, required */
	{ "{\"properties\":{\"a\":{\"type\":\"integer\"}}}", "{\"a\":1,\"b\":\"x\"}", 0, NULL, NULL },
	{ "{\"properties\":{\"a\":{\"type\":\"integer\"}}}", "{\"b\":\"x\",\"a\":\"1\"}", 1, "type",
	  "/a" },
	{ "{\"properties\":{\"a\":true},\"additionalProperties\":false}", "{\"a\":1}", 0, NULL,
	  NULL },
	{ "{\"properties\":{\"a\":true},\"additionalProperties\":false}", "{\"a\":1,\"b\":2}", 1,
	  "additionalProperties", "/b" },
	{ "{\"additionalProperties\":{\"type\":\"string\"}}", "{\"x\":\"1\",\"y\":2}", 1, "type",
	  "/y" },
	{ "{\"additionalProperties\":true}", "{\"x\":2}", 0, NULL, NULL },
	{ "{\"required\":[\"a\",\"b\"]}", "{\"a\":1,\"b\":null}", 0, NULL, NULL },
	{ "{\"required\":[\"a\",\"b\"]}", "{\"a\":1}", 1, "required", "" },
	{ "{\"required\":[\"a\"]}", "[1]", 0, NULL, NULL }, /* applies to objects only */
	/* JSON Pointer escapes in the failure's path */
	{ "{\"additionalProperties\":false}", "{\"a/b~c\":1}", 1, "additionalProperties",
	  "/a~1b~0c" },
	/* items, minItems, maxItems */
	{ "{\"items\":{\"type\":\"integer\"}}", "[1,2,3]", 0, NULL, NULL },
	{ "{\"items\":{\"type\":\"integer\"}}", "[1,\"2\",3.5]", 2, "type", "/1" },
	{ "{\"items\":false}", "[]", 0, NULL, NULL },
	{ "{\"items\":false}", "[0]", 1, "false", "/0" },
	{ "{\"minItems\":2}", "[1,2]", 0, NULL, NULL },
	{ "{\"minItems\":2}", "[1]", 1, "minItems", "" },
	{ "{\"maxItems\":1}", "[1]", 0, NULL, NULL },
	{ "{\"maxItems\":1}", "[1,2]", 1, "maxItems", "" },
	{ "{\"maxItems\":1.0}", "[1,2]", 1, "maxItems", "" },
	{ "{\"properties\":{\"rows\":{\"items\":{\"properties\":{\"total\":{\"minimum\":0}}}}}}",
	  "{\"rows\":[{\"total\":1},{\"total\":-1}]}", 1, "minimum", "/rows/1/total" },
	/* enum, const: by value, numbers by mathematical value */
	{ "{\"enum\":[\"a\",1,null]}", "1.0", 0, NULL, NULL },
	{ "{\"enum\":[\"a\",1,null]}", "null", 0, NULL, NULL },
	{ "{\"enum\":[\"a\",1,null]}", "\"b\"", 1, "enum", "" },
	{ "{\"enum\":[[1,2]]}", "[1,2]", 0, NULL, NULL },
	{ "{\"enum\":[[1,2]]}", "[2,1]", 1, "enum", "" },
	{ "{\"const\":{\"a\":[1,{\"b\":true}]}}", "{\"a\":[1.0,{\"b\":true}]}", 0, NULL, NULL },
	{ "{\"const\":{\"a\":[1,{\"b\":true}]}}", "{\"a\":[1,{\"b\":false}]}", 1, "const", "" },
	{ "{\"const\":{\"a\":1}}", "{\"a\":1,\"b\":2}", 1, "const", "" },
	{ "{\"const\":false}", "0", 1, "const", "" },
	{ "{\"const\":null}", "null", 0, NULL, NULL },
	{ "{\"const\":\"a\"}", "\"a\"", 0, NULL, NULL },
	{ "{\"const\":\"a\"}", "\"ab\"", 1, "const", "" },
	/* 2^53 + 1 is not the double 2^53 */
	{ "{\"const\":9007199254740993}", "9007199254740992.0", 1, "const", "" },
	{ "{\"const\":9007199254740992}", "9007199254740992.0", 0, NULL, NULL },
	/* minimum, maximum, exclusive bounds; mixed integers and reals */
	{ "{\"minimum\":5}", "5", 0, NULL, NULL },
	{ "{\"minimum\":5}", "4.999", 1, "minimum", "" },
	{ "{\"minimum\":5}", "\"4\"", 0, NULL, NULL }, /* applies to numbers only */
	{ "{\"maximum\":5.5}", "5", 0, NULL, NULL },
	{ "{\"maximum\":5.5}", "6", 1, "maximum", "" },
	{ "{\"exclusiveMinimum\":0}", "0.0", 1, "exclusiveMinimum", "" },
	{ "{\"exclusiveMinimum\":0}", "1e-300", 0, NULL, NULL },
	{ "{\"exclusiveMaximum\":10}", "10", 1, "exclusiveMaximum", "" },
	{ "{\"exclusiveMaximum\":10}", "9.999999", 0, NULL, NULL },
	{ "{\"maximum\":9223372036854775807}", "9223372036854775807", 0, NULL, NULL },
	{ "{\"maximum\":9223372036854775806}", "9223372036854775807", 1, "maximum", "" },
	{ "{\"maximum\":9223372036854775807}", "1e19", 1, "maximum", "" },
	{ "{\"minimum\":-9223372036854775808}", "-1e19", 1, "minimum", "" },
	{ "{\"minimum\":1e308}", "9223372036854775807", 1, "minimum", "" },
	/* minLength, maxLength: code points, not bytes */
	{ "{\"minLength\":2}", "\"ab\"", 0, NULL, NULL },
	{ "{\"minLength\":2}", "\"\xc3\xa9\"", 1, "minLength", "" },
	{ "{\"maxLength\":1}", "\"\xc3\xa9\"", 0, NULL, NULL },
	{ "{\"maxLength\":1}", "\"\\ud83d\\ude00\"", 0, NULL, NULL },
	{ "{\"maxLength\":1}", "\"ab\"", 1, "maxLength", "" },
	{ "{\"maxLength\":0}", "5", 0, NULL, NULL },
	/* pattern: a search, not anchored */
	{ "{\"pattern\":\"[0-9]{4}-[0-9]{2}\"}", "\"month 2026-11\"", 0, NULL, NULL },
	{ "{\"pattern\":\"^[0-9]{4}-[0-9]{2}$\"}", "\"month 2026-11\"", 1, "pattern", "" },
	{ "{\"pattern\":\"^.$\"}", "\"\xc3\xa9\"", 0, NULL, NULL },
	/* $ is the end of the string, not also before a final newline */
	{ "{\"pattern\":\"^[0-9]+$\"}", "\"123\\n\"", 1, "pattern", "" },
	{ "{\"pattern\":\"^[0-9]+$\"}", "\"123\"", 0, NULL, NULL },
	{ "{\"pattern\":\"x\"}", "17", 0, NULL, NULL },
	/* ignored keywords */
	{ "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"title\":\"t\","
	  "\"description\":\"d\"}",
	  "1", 0, NULL, NULL },
	/* every applicable keyword reports, in document order */
	{ "{\"type\":\"object\",\"required\":[\"z\"],\"properties\":{\"a\":{\"type\":\"string\"},"
	  "\"b\":{\"type\":\"string\"}}}",
	  "{\"b\":1,\"a\":2}", 3, "required", "" },
};

static void test_keywords(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		const struct vcase *c = &vcases[i];
		struct seen seen = { 0 };
		int r = validate_text(c->schema, c->doc, &seen);

		if (r != c->failures)
			fail_msg("case %zu: %s on %s: %d failures, expected %d (first: %s %s: %s)", i,
				 c->schema, c->doc, r, c->failures, seen.n ? seen.path[0] : "-",
				 seen.n ? seen.keyword[0] : "-", seen.n ? seen.detail[0] : "-");
		assert_int_equal(seen.n, r);
		if (c->keyword) {
			assert_string_equal(seen.keyword[0], c->keyword);
			assert_string_equal(seen.path[0], c->path);
			assert_true(seen.detail[0][0] != '\0');
		}
	}
}

static void test_failure_order(void **state)
{
	struct seen seen = { 0 };

	(void)state;
	assert_int_equal(validate_text("{\"type\":\"object\",\"required\":[\"z\"],\"properties\":"
				       "{\"a\":{\"type\":\"string\"},\"b\":{\"type\":\"string\"}}}",
				       "{\"b\":1,\"a\":2}", &seen),
			 3);
	assert_string_equal(seen.path[1], "/b");
	assert_string_equal(seen.path[2], "/a");
	assert_non_null(strstr(seen.detail[0], "\"z\""));
	assert_non_null(strstr(seen.detail[1], "expected string, got integer"));
}

/* --- schemas compile refuses ------------------------------------------------------ */

static const struct ccase {
	const char *schema, *err;
} ccases[] = {
	{ "1", "expected a schema (an object or a boolean)" },
	{ "[]", "expected a schema" },
	{ "{\"oneOf\":[]}", "/oneOf: unsupported keyword" },
	{ "{\"$ref\":\"#\"}", "/$ref: unsupported keyword" },
	{ "{\"properties\":{\"a\":{\"format\":\"date\"}}}", "/properties/a/format: unsupported keyword" },
	{ "{\"items\":{\"items\":{\"uniqueItems\":true}}}", "/items/items/uniqueItems: unsupported keyword" },
	{ "{\"prefixItems\":[]}", "/prefixItems: unsupported keyword" },
	{ "{\"$comment\":\"x\"}", "/$comment: unsupported keyword" },
	{ "{\"type\":\"int\"}", "/type: expected one of" },
	{ "{\"type\":[]}", "/type: expected a type name or a non-empty array" },
	{ "{\"type\":[\"string\",\"string\"]}", "/type/1: type listed twice" },
	{ "{\"type\":[\"string\",3]}", "/type/1: expected a type name" },
	{ "{\"type\":3}", "/type: expected a type name" },
	{ "{\"properties\":[]}", "/properties: expected an object of schemas" },
	{ "{\"properties\":{\"a\":3}}", "/properties/a: expected a schema" },
	{ "{\"properties\":{\"a/b\":3}}", "/properties/a~1b: expected a schema" },
	{ "{\"required\":\"a\"}", "/required: expected an array" },
	{ "{\"required\":[\"a\",1]}", "/required/1: expected a property name" },
	{ "{\"required\":[\"a\",\"a\"]}", "/required/1: property listed twice" },
	{ "{\"additionalProperties\":1}", "/additionalProperties: expected a schema" },
	{ "{\"items\":[{}]}", "/items: expected a schema (an array of schemas is prefixItems" },
	{ "{\"enum\":[]}", "/enum: expected a non-empty array" },
	{ "{\"enum\":1}", "/enum: expected a non-empty array" },
	{ "{\"minimum\":\"1\"}", "/minimum: expected a number" },
	{ "{\"exclusiveMaximum\":true}", "/exclusiveMaximum: expected a number" },
	{ "{\"minLength\":-1}", "/minLength: expected a non-negative integer" },
	{ "{\"maxLength\":1.5}", "/maxLength: expected a non-negative integer" },
	{ "{\"minItems\":\"2\"}", "/minItems: expected a non-negative integer" },
	{ "{\"maxItems\":1e30}", "/maxItems: expected a non-negative integer" },
	{ "{\"pattern\":\"(a\"}", "/pattern: invalid regular expression: missing closing parenthesis" },
	{ "{\"pattern\":3}", "/pattern: expected a string" },
	{ "{\"pattern\":\"a\\u0000b\"}", "/pattern: a pattern may not contain U+0000" },
	{ "{\"title\":3}", "/title: expected a string" },
	{ "{\"$schema\":{}}", "/$schema: expected a string" },
};

static void test_compile_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ccases) / sizeof(ccases[0]); i++) {
		json_error_t jerr;
		json_t *j = json_loads(ccases[i].schema, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
		struct sbx_jschema *s = (struct sbx_jschema *)1;
		char err[300];

		assert_non_null(j);
		assert_int_equal(sbx_jschema_compile(j, &s, err, sizeof(err)), -EINVAL);
		assert_null(s);
		if (strncmp(err, ccases[i].err, strlen(ccases[i].err)) != 0)
			fail_msg("case %zu: %s: got \"%s\", expected \"%s...\"", i, ccases[i].schema,
				 err, ccases[i].err);
		json_decref(j);
	}
}

/* The compiled schema does not depend on the caller's value. */
static void test_schema_is_copied(void **state)
{
	json_t *j = json_pack("{s:{s:{s:s}}}", "properties", "a", "type", "string");
	struct sbx_jschema *s;
	struct seen seen = { 0 };
	char err[100];

	(void)state;
	assert_int_equal(sbx_jschema_compile(j, &s, err, sizeof(err)), 0);
	json_decref(j);
	assert_int_equal(sbx_jschema_validate(s, "{\"a\":1}", 7, record, &seen), 1);
	sbx_jschema_free(s);
}

/* --- hostile ----------------------------------------------------------------------- */

static char *repeat(const char *open, size_t n, const char *mid, const char *close)
{
	size_t lo = strlen(open), lm = strlen(mid), lc = strlen(close);
	char *s = malloc(n * (lo + lc) + lm + 1), *p = s;

	assert_non_null(s);
	for (size_t i = 0; i < n; i++, p += lo)
		memcpy(p, open, lo);
	memcpy(p, mid, lm);
	p += lm;
	for (size_t i = 0; i < n; i++, p += lc)
		memcpy(p, close, lc);
	*p = '\0';
	return s;
}

static void test_deep_document(void **state)
{
	struct sbx_jschema *s = compile_text("{\"items\":{\"items\":{\"type\":\"string\"}}}");
	struct seen seen = { 0 };
	char *doc = repeat("[", 10000, "1", "]");

	(void)state;
	/* beyond jansson's depth limit: not a document we walk */
	assert_int_equal(sbx_jschema_validate(s, doc, strlen(doc), record, &seen), -EINVAL);
	assert_int_equal(seen.n, 0);
	free(doc);
	/* 1000 deep parses; the walk goes only as deep as the schema */
	doc = repeat("[", 1000, "1", "]");
	assert_int_equal(sbx_jschema_validate(s, doc, strlen(doc), record, &seen), 1);
	assert_string_equal(seen.path[0], "/0/0");
	assert_string_equal(seen.keyword[0], "type");
	free(doc);
	sbx_jschema_free(s);
}

static void test_deep_schema(void **state)
{
	char *text = repeat("{\"items\":", 1000, "true", "}");
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);
	struct sbx_jschema *s = (struct sbx_jschema *)1;
	char err[400];

	(void)state;
	assert_non_null(j);
	assert_int_equal(sbx_jschema_compile(j, &s, err, sizeof(err)), -EINVAL);
	assert_null(s);
	assert_non_null(strstr(err, "nested deeper than 64"));
	assert_true(strncmp(err, "/items/items/", 13) == 0);
	json_decref(j);
	free(text);
	/* A deep const counts too. */
	text = repeat("[", 100, "1", "]");
	j = json_pack("{s:o}", "const", json_loads(text, 0, &jerr));
	assert_int_equal(sbx_jschema_compile(j, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nested deeper than"));
	json_decref(j);
	free(text);
}

static void test_large_schema(void **state)
{
	json_t *e = json_array(), *j;
	struct sbx_jschema *s;
	char err[200];

	(void)state;
	for (int i = 0; i < SBX_JSCHEMA_MAX_NODES; i++)
		json_array_append_new(e, json_integer(i));
	j = json_pack("{s:o}", "enum", e);
	assert_int_equal(sbx_jschema_compile(j, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than 10000 values"));
	json_decref(j);
}

static void test_many_patterns(void **state)
{
	json_t *props = json_object(), *j;
	struct sbx_jschema *s;
	char err[200], name[16];

	(void)state;
	for (int i = 0; i < SBX_JSCHEMA_MAX_PATTERNS; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		json_object_set_new(props, name, json_pack("{s:s}", "pattern", "^[a-z]+$"));
	}
	j = json_pack("{s:O}", "properties", props);
	assert_int_equal(sbx_jschema_compile(j, &s, err, sizeof(err)), 0);
	sbx_jschema_free(s);
	json_decref(j);
	json_object_set_new(props, "one-more", json_pack("{s:s}", "pattern", "x"));
	j = json_pack("{s:O}", "properties", props);
	assert_int_equal(sbx_jschema_compile(j, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than 128 patterns"));
	json_decref(j);
	json_decref(props);
}

static void test_catastrophic_pattern(void **state)
{
	/* (a+)+$ searched over blocks of a's that each end in b: without a
	 * budget over all start positions and all strings, minutes. */
	size_t blk = 20, nblk = 200, nstr = 200;
	size_t slen = nblk * (blk + 1);
	char *doc = malloc(nstr * (slen + 3) + 3), *p = doc;
	struct sbx_jschema *s = compile_text("{\"items\":{\"pattern\":\"(a+)+$\"}}");
	struct seen seen = { 0 };
	int r;

	(void)state;
	assert_non_null(doc);
	*p++ = '[';
	for (size_t i = 0; i < nstr; i++) {
		if (i)
			*p++ = ',';
		*p++ = '"';
		for (size_t b = 0; b < nblk; b++) {
			memset(p, 'a', blk);
			p += blk;
			*p++ = 'b';
		}
		*p++ = '"';
	}
	*p++ = ']';
	r = sbx_jschema_validate(s, doc, (size_t)(p - doc), record, &seen);
	/* every string failed (undecided is not a match), until the failure
	 * cap stopped the walk */
	assert_int_equal(r, SBX_JSCHEMA_MAX_FAILURES);
	assert_string_equal(seen.keyword[0], "pattern");
	assert_non_null(strstr(seen.detail[0], "work limit"));
	free(doc);
	sbx_jschema_free(s);
}

/* Many strings each just under the per-match limit: the shared budget
 * ends it. */
static void test_pattern_budget_shared(void **state)
{
	struct sbx_jschema *s = compile_text("{\"items\":{\"pattern\":\"^(a+)+$\"}}");
	struct seen seen = { 0 };
	size_t nstr = 5000, slen = 17;
	char *doc = malloc(nstr * (slen + 3) + 3), *p = doc;
	int r;

	(void)state;
	*p++ = '[';
	for (size_t i = 0; i < nstr; i++) {
		if (i)
			*p++ = ',';
		*p++ = '"';
		memset(p, 'a', slen - 1);
		p += slen - 1;
		*p++ = 'b';
		*p++ = '"';
	}
	*p++ = ']';
	seen.stop_after = 0;
	r = sbx_jschema_validate(s, doc, (size_t)(p - doc), record, &seen);
	assert_true(r > 0 && r <= SBX_JSCHEMA_MAX_FAILURES);
	assert_string_equal(seen.keyword[0], "pattern");
	free(doc);
	sbx_jschema_free(s);
}

static void test_work_bound(void **state)
{
	/* an enum of 4000 one-item arrays; 6000 items that each match only
	 * its last value: 48M nodes compared -> the work bound ends it, with
	 * one failure that says so */
	json_t *e = json_array(), *j;
	struct sbx_jschema *s;
	struct seen seen = { 0 };
	char err[200], *doc, *p;
	size_t n = 6000, nenum = 4000;

	(void)state;
	for (size_t i = 0; i < nenum; i++)
		json_array_append_new(e, json_pack("[i]", (int)i));
	j = json_pack("{s:{s:o}}", "items", "enum", e);
	assert_int_equal(sbx_jschema_compile(j, &s, err, sizeof(err)), 0);
	json_decref(j);
	doc = p = malloc(n * 8 + 3);
	*p++ = '[';
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, i ? ",[%zu]" : "[%zu]", nenum - 1);
	*p++ = ']';
	assert_int_equal(sbx_jschema_validate(s, doc, (size_t)(p - doc), record, &seen), 1);
	assert_string_equal(seen.keyword[0], "limit");
	free(doc);
	sbx_jschema_free(s);
}

static void test_hostile_documents(void **state)
{
	struct sbx_jschema *s = compile_text("{\"type\":\"integer\"}");
	struct seen seen = { 0 };
	static const char *const invalid[] = {
		"1e400",		    /* overflows a double: jansson refuses */
		"-1e400",
		"123456789012345678901234567890", /* beyond int64 */
		"\"\xff\"",		    /* invalid UTF-8 in a string */
		"\"\xc3\"",
		"\"\xed\xa0\x80\"",	    /* an encoded surrogate */
		"{\"a\":1,\"a\":2}",	    /* duplicate keys */
		"{\"a\":1,\"\\u0061\":2}",  /* the same key, escaped */
		"\"a\\u0000b\"",	    /* NUL in a string */
		"",
		"1 2",
		"[1,]",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
		int r = sbx_jschema_validate(s, invalid[i], strlen(invalid[i]), record, &seen);

		if (r != -EINVAL)
			fail_msg("case %zu: %s: %d, expected -EINVAL", i, invalid[i], r);
	}
	assert_int_equal(seen.n, 0);
	/* not NUL-terminated: only LEN bytes are read */
	assert_int_equal(sbx_jschema_validate(s, "12x", 2, record, &seen), 0);
	/* huge but finite numbers compare exactly */
	assert_int_equal(sbx_jschema_validate(s, "1.7976931348623157e308", 22, record, &seen), 0);
	assert_int_equal(sbx_jschema_validate(s, "4.9e-324", 8, record, &seen), 1);
	sbx_jschema_free(s);
}

/* 4 MiB of empty objects would take ~300 MB of jansson tree in the
 * broker: refused before parsing.  Half a MiB of them is fine. */
static void test_tree_bound(void **state)
{
	struct sbx_jschema *s = compile_text("{\"items\":{\"type\":\"object\"}}");
	struct seen seen = { 0 };
	size_t n = 4u << 20;
	char *doc = malloc(n + 2);

	(void)state;
	for (size_t i = 0; i + 3 <= n; i += 3)
		memcpy(doc + i, i ? ",{}" : "[{}", 3);
	doc[n / 3 * 3] = ']';
	assert_int_equal(sbx_jschema_validate(s, doc, n / 3 * 3 + 1, record, &seen), -EINVAL);
	n = 512u << 10;
	doc[n / 3 * 3] = ']';
	assert_int_equal(sbx_jschema_validate(s, doc, n / 3 * 3 + 1, record, &seen), 0);
	free(doc);
	sbx_jschema_free(s);
}

static void test_callback_stops(void **state)
{
	struct seen seen = { .stop_after = 2 };

	(void)state;
	assert_int_equal(validate_text("{\"items\":{\"type\":\"string\"}}", "[1,2,3,4,5]", &seen), 2);
	assert_int_equal(seen.n, 2);
}

static void test_failure_cap(void **state)
{
	struct sbx_jschema *s = compile_text("{\"items\":{\"type\":\"string\"}}");
	struct seen seen = { 0 };
	char *doc = malloc(2 * 1000 + 3);

	(void)state;
	strcpy(doc, "[");
	for (int i = 0; i < 1000; i++)
		strcat(doc, i ? ",1" : "1");
	strcat(doc, "]");
	assert_int_equal(sbx_jschema_validate(s, doc, strlen(doc), record, &seen),
			 SBX_JSCHEMA_MAX_FAILURES);
	free(doc);
	sbx_jschema_free(s);
}

/* Keys that hold control characters, '~', '/' or are very long make a
 * clean, bounded pointer. */
static void test_hostile_paths(void **state)
{
	struct seen seen = { 0 };
	char doc[3000], *p = doc;

	(void)state;
	assert_int_equal(validate_text("{\"additionalProperties\":false}",
				       "{\"a\\u001b[2Jb\\u0085c\":1}", &seen),
			 1);
	assert_string_equal(seen.path[0], "/a?[2Jb?c");
	memset(&seen, 0, sizeof(seen));
	p += sprintf(p, "{\"");
	for (int i = 0; i < 1000; i++)
		p += sprintf(p, "\xc3\xa9");
	sprintf(p, "\":1}");
	assert_int_equal(validate_text("{\"additionalProperties\":false}", doc, &seen), 1);
	assert_true(strlen(seen.path[0]) <= SBX_JSCHEMA_MAX_POINTER + 8);
	assert_non_null(strstr(seen.path[0], "..."));
	/* cut at a character boundary */
	assert_string_equal(strstr(seen.path[0], "..."), "...");
	assert_true(((unsigned char)strstr(seen.path[0], "...")[-1]) == 0xa9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keywords),
		cmocka_unit_test(test_failure_order),
		cmocka_unit_test(test_compile_errors),
		cmocka_unit_test(test_schema_is_copied),
		cmocka_unit_test(test_deep_document),
		cmocka_unit_test(test_deep_schema),
		cmocka_unit_test(test_large_schema),
		cmocka_unit_test(test_many_patterns),
		cmocka_unit_test(test_catastrophic_pattern),
		cmocka_unit_test(test_pattern_budget_shared),
		cmocka_unit_test(test_work_bound),
		cmocka_unit_test(test_hostile_documents),
		cmocka_unit_test(test_tree_bound),
		cmocka_unit_test(test_callback_stops),
		cmocka_unit_test(test_failure_cap),
		cmocka_unit_test(test_hostile_paths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
