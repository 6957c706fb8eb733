/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jschema-validate.c - the validating half of the JSON Schema subset
 * (jschema.c has the compiling half and the theory): the payload's JSON
 * document parsed with jansson's limits and walked with the compiled
 * schema, in bounded work.  Runs only in the confined validator.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jschema-internal.h"
#include "regex.h"
#include "util.h"

/* --- validating ---------------------------------------------------------------- */

struct walk {
	struct ptr at;
	sbx_jschema_fail_fn fail;
	void *arg;
	int failures;
	bool stop;
	uint64_t work;		 /* units left */
	uint64_t regex_work;  /* units of pattern matching left (regex.h) */
};

static void vfail(struct walk *w, const char *keyword, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void vfail(struct walk *w, const char *keyword, const char *fmt, ...)
{
	char detail[256];
	va_list ap;

	if (w->stop)
		return;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	w->failures++;
	if (w->fail(w->arg, w->at.buf, keyword, detail) || w->failures >= SBX_JSCHEMA_MAX_FAILURES)
		w->stop = true;
}

/* Take N units of work; false (and a "limit" failure) when they are not
 * there any more. */
static bool spend(struct walk *w, uint64_t n)
{
	if (w->stop)
		return false;
	if (w->work < n) {
		w->work = 0;
		vfail(w, "limit", "validation stopped: more work than the bound of %llu steps",
		      (unsigned long long)SBX_JSCHEMA_MAX_WORK);
		w->stop = true;
		return false;
	}
	w->work -= n;
	return true;
}

static bool is_integral(const json_t *v)
{
	if (json_is_integer(v))
		return true;
	if (json_is_real(v)) {
		double d = json_real_value(v);

		/* from 2^53 on, every double is an integer; below, the cast
		 * truncates exactly (no libm needed) */
		return isfinite(d) && (fabs(d) >= 9007199254740992.0 || d == (double)(int64_t)d);
	}
	return false;
}

/* Compare two numbers by their mathematical value: <0, 0, >0.  Exact for
 * every mix of int64 and double (a double converted to int64 or back would
 * round above 2^53). */
static int num_cmp(const json_t *a, const json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);

		return (x > y) - (x < y);
	}
	if (json_is_real(a) && json_is_real(b)) {
		double x = json_real_value(a), y = json_real_value(b);

		return (x > y) - (x < y);
	}
	if (json_is_real(a))
		return -num_cmp(b, a);
	/* a is an integer, b a real */
	{
		json_int_t i = json_integer_value(a);
		double d = json_real_value(b), t;
		json_int_t ti;

		if (d >= 9223372036854775808.0)
			return -1;
		if (d < -9223372036854775808.0)
			return 1;
		ti = (json_int_t)d; /* truncates; in range: -2^63 <= d < 2^63 */
		t = (double)ti;      /* exact: |ti| <= 2^53, or d was already integral */
		if (i != ti)
			return (i > ti) - (i < ti);
		return (d > t) ? -1 : (d < t) ? 1 : 0;
	}
}

/* JSON Schema equality: numbers by value (1 == 1.0), objects regardless of
 * key order.  Recursion ends with the schema's value, which is at most
 * SBX_JSCHEMA_MAX_DEPTH deep. */
static bool equal(struct walk *w, const json_t *schema_v, const json_t *doc)
{
	if (!spend(w, 1))
		return false;
	if (json_is_number(schema_v) && json_is_number(doc))
		return num_cmp(schema_v, doc) == 0;
	if (json_typeof(schema_v) != json_typeof(doc))
		return false;
	switch (json_typeof(schema_v)) {
	case JSON_STRING:
		return json_string_length(schema_v) == json_string_length(doc) &&
		       memcmp(json_string_value(schema_v), json_string_value(doc),
			      json_string_length(doc)) == 0;
	case JSON_ARRAY:
		if (json_array_size(schema_v) != json_array_size(doc))
			return false;
		for (size_t i = 0; i < json_array_size(doc); i++)
			if (!equal(w, json_array_get(schema_v, i), json_array_get(doc, i)))
				return false;
		return true;
	case JSON_OBJECT: {
		const char *k;
		json_t *e;

		if (json_object_size(schema_v) != json_object_size(doc))
			return false;
		json_object_foreach((json_t *)schema_v, k, e) {
			const json_t *d = json_object_get(doc, k);

			if (!d || !equal(w, e, d))
				return false;
		}
		return true;
	}
	default: /* true, false, null: the type said it all */
		return true;
	}
}

static unsigned doc_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL:
		return T_NULL;
	case JSON_TRUE:
	case JSON_FALSE:
		return T_BOOLEAN;
	case JSON_OBJECT:
		return T_OBJECT;
	case JSON_ARRAY:
		return T_ARRAY;
	case JSON_STRING:
		return T_STRING;
	default:
		return is_integral(v) ? T_NUMBER | T_INTEGER : T_NUMBER;
	}
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL:
		return "null";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	default:
		return is_integral(v) ? "integer" : "number";
	}
}

static void types_text(unsigned types, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < sizeof(jschema_type_names) / sizeof(jschema_type_names[0]); k++)
		if (types & jschema_type_names[k].bit)
			at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s",
					       at ? " or " : "", jschema_type_names[k].name);
}

static void num_text(const json_t *v, char *buf, size_t len)
{
	if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else
		snprintf(buf, len, "%.17g", json_real_value(v));
}

static void check_bound(struct walk *w, const json_t *doc, const json_t *bound,
			const char *keyword, bool ok_if_less, bool strict)
{
	char a[32], b[32];
	int c;

	if (!bound)
		return;
	c = num_cmp(doc, bound);
	if (ok_if_less ? (strict ? c < 0 : c <= 0) : (strict ? c > 0 : c >= 0))
		return;
	num_text(doc, a, sizeof(a));
	num_text(bound, b, sizeof(b));
	vfail(w, keyword, "%s is %s %s", a,
	      ok_if_less ? (strict ? "not less than" : "greater than")
			 : (strict ? "not greater than" : "less than"),
	      b);
}

static uint64_t code_points(const char *s, size_t len)
{
	uint64_t n = 0;

	/* jansson decoded the document: the string is valid UTF-8, so
	 * every byte that is not a continuation byte starts a code point */
	for (size_t i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

static void check_string(struct walk *w, const struct node *n, const json_t *doc)
{
	const char *s = json_string_value(doc);
	size_t len = json_string_length(doc);

	if (n->min_length < 0 && n->max_length < 0 && !n->pattern)
		return;
	if (!spend(w, len / 64 + 1))
		return;
	if (n->min_length >= 0 || n->max_length >= 0) {
		uint64_t cp = code_points(s, len);

		if (n->min_length >= 0 && cp < (uint64_t)n->min_length)
			vfail(w, "minLength", "%llu characters, fewer than %lld",
			      (unsigned long long)cp, (long long)n->min_length);
		if (n->max_length >= 0 && cp > (uint64_t)n->max_length)
			vfail(w, "maxLength", "%llu characters, more than %lld",
			      (unsigned long long)cp, (long long)n->max_length);
	}
	if (n->pattern && !w->stop) {
		int r = sbx_regex_match_budget(n->pattern, s, len, &w->regex_work);

		if (r == SBX_REGEX_NOMATCH)
			vfail(w, "pattern", "does not match the pattern");
		else if (r != SBX_REGEX_MATCH)
			/* LIMIT, or -ENOMEM: not decided is not a match */
			vfail(w, "pattern", "the pattern could not be decided within its work limit");
	}
}

static const struct node *prop_find(const struct node *n, const char *key)
{
	size_t lo = 0, hi = n->nprops;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(key, n->props[mid].name);

		if (c == 0)
			return n->props[mid].schema;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static void walk(struct walk *w, const struct node *n, const json_t *doc)
{
	unsigned t;

	if (!spend(w, 1))
		return;
	if (n->never) {
		vfail(w, "false", "no value is allowed here");
		return;
	}
	t = doc_type(doc);
	if (n->types && !(n->types & t)) {
		char want[96];

		types_text(n->types, want, sizeof(want));
		vfail(w, "type", "expected %s, got %s", want, type_name(doc));
	}
	if (n->const_value && !equal(w, n->const_value, doc) && !w->stop)
		vfail(w, "const", "the value is not the one the schema requires");
	if (n->enum_values && !w->stop) {
		size_t i, cnt = json_array_size(n->enum_values);

		for (i = 0; i < cnt && !w->stop; i++)
			if (equal(w, json_array_get(n->enum_values, i), doc))
				break;
		if (i == cnt)
			vfail(w, "enum", "the value is none of the %zu the schema lists", cnt);
	}
	if (t & T_NUMBER) {
		check_bound(w, doc, n->minimum, "minimum", false, false);
		check_bound(w, doc, n->exclusive_minimum, "exclusiveMinimum", false, true);
		check_bound(w, doc, n->maximum, "maximum", true, false);
		check_bound(w, doc, n->exclusive_maximum, "exclusiveMaximum", true, true);
	} else if (t & T_STRING) {
		check_string(w, n, doc);
	} else if (t & T_ARRAY) {
		size_t cnt = json_array_size(doc);

		if (n->min_items >= 0 && cnt < (uint64_t)n->min_items)
			vfail(w, "minItems", "%zu items, fewer than %lld", cnt, (long long)n->min_items);
		if (n->max_items >= 0 && cnt > (uint64_t)n->max_items)
			vfail(w, "maxItems", "%zu items, more than %lld", cnt, (long long)n->max_items);
		for (size_t i = 0; n->items && i < cnt && !w->stop; i++) {
			size_t m = jschema_ptr_push_index(&w->at, i);

			walk(w, n->items, json_array_get(doc, i));
			jschema_ptr_pop(&w->at, m);
		}
	} else if (t & T_OBJECT) {
		const char *k;
		json_t *e;

		for (size_t i = 0; i < n->nrequired && !w->stop; i++) {
			if (!json_object_get(doc, n->required[i])) {
				struct ptr name = { .len = 0 };

				/* the name, cleaned the way pointers are */
				jschema_ptr_push(&name, n->required[i]);
				vfail(w, "required", "no property \"%s\"", name.buf + 1);
			}
		}
		if (!n->nprops && !n->additional && !n->no_additional)
			return;
		json_object_foreach((json_t *)doc, k, e) {
			const struct node *sub = prop_find(n, k);
			size_t m;

			if (w->stop)
				break;
			m = jschema_ptr_push(&w->at, k);
			if (sub)
				walk(w, sub, e);
			else if (n->no_additional)
				vfail(w, "additionalProperties", "the schema allows no such property");
			else if (n->additional)
				walk(w, n->additional, e);
			jschema_ptr_pop(&w->at, m);
		}
	}
}

/*
 * What jansson's tree of DOC will cost, from one pass over the text: an
 * upper bound measured on jansson 2.14 (an empty object takes ~230 bytes
 * with its hash table, an array ~140, a short string ~90, a number ~40,
 * allocator overhead included; every value but
 * the first follows a ',' or is a container's first, so counting the
 * commas and the containers counts the scalars).
 */
static uint64_t tree_cost(const char *doc, size_t len)
{
	uint64_t cost = 0;
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		char c = doc[i];

		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
			else
				cost++;
			continue;
		}
		switch (c) {
		case '"':
			in_string = true;
			cost += 128;
			break;
		case '{':
			cost += 320;
			break;
		case '[':
			cost += 160;
			break;
		case ',':
		case ':':
			cost += 64;
			break;
		default:
			break;
		}
	}
	return cost + 64;
}

int sbx_jschema_validate(const struct sbx_jschema *s, const char *doc, size_t len,
			 sbx_jschema_fail_fn fail, void *arg)
{
	struct walk w = { .fail = fail, .arg = arg, .work = SBX_JSCHEMA_MAX_WORK,
			  .regex_work = sbx_regex_budget(len) };
	json_error_t jerr;
	json_t *v;

	/* The broker parses outside every cgroup: refuse a document whose
	 * tree would be large before building it. */
	if (len > SBX_JSCHEMA_MAX_DOC || tree_cost(doc, len) > SBX_JSCHEMA_MAX_TREE)
		return -EINVAL;
	/* The grammar media-json.c checks: duplicate keys refused (two
	 * readers could see two documents), any value at the top, and
	 * jansson's depth limit. */
	v = json_loadb(doc, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!v)
		return json_error_code(&jerr) == json_error_out_of_memory ? -ENOMEM : -EINVAL;
	walk(&w, s->root, v);
	json_decref(v);
	return w.failures;
}
