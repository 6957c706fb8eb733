/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jschema.c - the JSON Schema 2020-12 subset of output contracts.
 *
 * Two halves with different trust.  sbx_jschema_compile() reads the job's
 * schema: it refuses every keyword outside the subset (a check silently
 * skipped would let a caller believe in a guarantee nobody gave), refuses a
 * schema deeper or larger than the bounds below, compiles each `pattern`
 * once, and turns the schema into a tree of nodes.  sbx_jschema_validate()
 * reads the payload's output: it parses it with jansson's limits, then
 * walks schema and document together.
 *
 * Why the walk is bounded: no keyword of the subset applies a schema to
 * anything but the value itself or one of its direct children (no $ref,
 * no allOf/anyOf), so the recursion is never deeper than the schema, and
 * every document node is visited by at most one schema node.  What remains
 * is counted against a budget: one unit per visit, per node compared by
 * enum/const, per 64 bytes of a string whose length or pattern is checked;
 * PCRE2 steps have a budget of their own, shared by every pattern match of
 * the document.  A document that exhausts either fails with keyword
 * "limit": an unfinished check is a failed one.
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

#include "jschema.h"
#include "regex.h"
#include "util.h"

enum {
	T_NULL = 1u << 0,
	T_BOOLEAN = 1u << 1,
	T_OBJECT = 1u << 2,
	T_ARRAY = 1u << 3,
	T_NUMBER = 1u << 4,
	T_STRING = 1u << 5,
	T_INTEGER = 1u << 6,
};

static const struct {
	const char *name;
	unsigned bit;
} type_names[] = {
	{ "null", T_NULL },	{ "boolean", T_BOOLEAN }, { "object", T_OBJECT },
	{ "array", T_ARRAY },	{ "number", T_NUMBER },	  { "string", T_STRING },
	{ "integer", T_INTEGER },
};

struct node;

struct prop {
	const char *name; /* points into the schema copy */
	struct node *schema;
};

struct node {
	bool never;	/* the schema `false` */
	unsigned types; /* 0: any type */
	struct prop *props;
	size_t nprops;	/* sorted by name */
	const char **required;
	size_t nrequired;
	bool no_additional;	/* additionalProperties: false */
	struct node *additional; /* additionalProperties as a schema */
	struct node *items;
	const json_t *enum_values; /* an array, in the schema copy */
	const json_t *const_value;
	const json_t *minimum, *maximum, *exclusive_minimum, *exclusive_maximum;
	int64_t min_length, max_length, min_items, max_items; /* -1: absent */
	struct sbx_regex *pattern;
	const char *pattern_src;
};

struct sbx_jschema {
	json_t *copy; /* the schema; nodes point into it */
	struct node *root;
};

/* --- JSON Pointers --------------------------------------------------------- */

/* A pointer being built: pushes append "/token", pops cut back.  Longer
 * pointers are cut with "/..." (messages stay one short line). */
struct ptr {
	char buf[SBX_JSCHEMA_MAX_POINTER + 8];
	size_t len;
	bool cut;
};

static size_t ptr_push(struct ptr *p, const char *tok)
{
	size_t mark = p->len;

	if (p->cut)
		return mark;
	if (p->len + 1 >= SBX_JSCHEMA_MAX_POINTER) {
		memcpy(p->buf + p->len, "/...", 5);
		p->len += 4;
		p->cut = true;
		return mark;
	}
	p->buf[p->len++] = '/';
	for (const unsigned char *s = (const unsigned char *)tok; *s; s++) {
		size_t need = (*s == '~' || *s == '/') ? 2 : 1;
		/* Do not cut a UTF-8 sequence: stop before a lead byte. */
		if (p->len + need + 4 > SBX_JSCHEMA_MAX_POINTER && (*s & 0xc0) != 0x80) {
			memcpy(p->buf + p->len, "...", 4);
			p->len += 3;
			p->cut = true;
			return mark;
		}
		if (*s == '~') {
			p->buf[p->len++] = '~', p->buf[p->len++] = '0';
		} else if (*s == '/') {
			p->buf[p->len++] = '~', p->buf[p->len++] = '1';
		} else if (*s < 0x20 || *s == 0x7f) {
			/* a control character would reach a terminal */
			p->buf[p->len++] = '?';
		} else if (*s == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) {
			p->buf[p->len++] = '?'; /* C1 */
			s++;
		} else {
			p->buf[p->len++] = (char)*s;
		}
	}
	p->buf[p->len] = '\0';
	return mark;
}

static size_t ptr_push_index(struct ptr *p, size_t i)
{
	char tok[24];

	snprintf(tok, sizeof(tok), "%zu", i);
	return ptr_push(p, tok);
}

static void ptr_pop(struct ptr *p, size_t mark)
{
	p->len = mark;
	p->buf[mark] = '\0';
	if (mark < SBX_JSCHEMA_MAX_POINTER)
		p->cut = false;
}

/* --- compiling --------------------------------------------------------------- */

struct compiler {
	struct ptr at;
	char *err;
	size_t errlen;
	size_t nodes; /* JSON values of the schema seen */
};

static int cfail(struct compiler *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cfail(struct compiler *c, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (c->at.len)
		snprintf(c->err, c->errlen, "%s: %s", c->at.buf, what);
	else
		snprintf(c->err, c->errlen, "%s", what);
	return -EINVAL;
}

/* Depth and size of the whole schema value (const and enum values
 * included), before anything else reads it. */
static int measure(struct compiler *c, const json_t *v, unsigned depth)
{
	if (depth > SBX_JSCHEMA_MAX_DEPTH)
		return cfail(c, "nested deeper than %d", SBX_JSCHEMA_MAX_DEPTH);
	if (++c->nodes > SBX_JSCHEMA_MAX_NODES)
		return cfail(c, "the schema has more than %d values", SBX_JSCHEMA_MAX_NODES);
	if (json_is_object(v)) {
		const char *k;
		json_t *e;

		json_object_foreach((json_t *)v, k, e) {
			size_t m = ptr_push(&c->at, k);
			int r = measure(c, e, depth + 1);

			if (r < 0)
				return r;
			ptr_pop(&c->at, m);
		}
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			size_t m = ptr_push_index(&c->at, i);
			int r = measure(c, json_array_get(v, i), depth + 1);

			if (r < 0)
				return r;
			ptr_pop(&c->at, m);
		}
	}
	return 0;
}

static void node_free(struct node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nprops; i++)
		node_free(n->props[i].schema);
	free(n->props);
	free(n->required);
	node_free(n->additional);
	node_free(n->items);
	sbx_regex_free(n->pattern);
	free(n);
}

static int cmp_prop(const void *a, const void *b)
{
	return strcmp(((const struct prop *)a)->name, ((const struct prop *)b)->name);
}

/* A non-negative integer, the way 2020-12 counts one (1.0 is one). */
static int get_count(struct compiler *c, const json_t *v, int64_t *out)
{
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);

		if (d >= 0 && d < 9.2e18 && d == floor(d)) {
			*out = (int64_t)d;
			return 0;
		}
	}
	return cfail(c, "expected a non-negative integer");
}

static int compile_node(struct compiler *c, const json_t *s, struct node **out);

/* Compile the subschema at key KEY of the object S (the pointer names it). */
static int compile_sub(struct compiler *c, const json_t *s, struct node **out)
{
	return compile_node(c, s, out);
}

static int compile_type(struct compiler *c, const json_t *v, unsigned *types)
{
	const json_t *one = v;
	size_t n = 1;

	if (json_is_array(v)) {
		n = json_array_size(v);
		if (n == 0)
			return cfail(c, "expected a type name or a non-empty array of them");
	} else if (!json_is_string(v)) {
		return cfail(c, "expected a type name or a non-empty array of them");
	}
	for (size_t i = 0; i < n; i++) {
		size_t k, m = json_is_array(v) ? ptr_push_index(&c->at, i) : c->at.len;

		if (json_is_array(v))
			one = json_array_get(v, i);
		if (!json_is_string(one))
			return cfail(c, "expected a type name");
		for (k = 0; k < sizeof(type_names) / sizeof(type_names[0]); k++)
			if (strcmp(json_string_value(one), type_names[k].name) == 0)
				break;
		if (k == sizeof(type_names) / sizeof(type_names[0]))
			return cfail(c, "expected one of null, boolean, object, array, number, "
					"string, integer");
		if (*types & type_names[k].bit)
			return cfail(c, "type listed twice");
		*types |= type_names[k].bit;
		ptr_pop(&c->at, m);
	}
	return 0;
}

static int compile_keyword(struct compiler *c, struct node *n, const char *key, const json_t *v)
{
	if (strcmp(key, "$schema") == 0 || strcmp(key, "title") == 0 ||
	    strcmp(key, "description") == 0) {
		if (!json_is_string(v))
			return cfail(c, "expected a string");
		return 0;
	}
	if (strcmp(key, "type") == 0)
		return compile_type(c, v, &n->types);
	if (strcmp(key, "properties") == 0) {
		const char *k;
		json_t *e;
		size_t i = 0;

		if (!json_is_object(v))
			return cfail(c, "expected an object of schemas");
		n->props = calloc(json_object_size(v) ? json_object_size(v) : 1, sizeof(*n->props));
		if (!n->props)
			return -ENOMEM;
		json_object_foreach((json_t *)v, k, e) {
			size_t m = ptr_push(&c->at, k);
			int r;

			n->props[i].name = k;
			r = compile_sub(c, e, &n->props[i].schema);
			n->nprops = ++i;
			if (r < 0)
				return r;
			ptr_pop(&c->at, m);
		}
		qsort(n->props, n->nprops, sizeof(*n->props), cmp_prop);
		return 0;
	}
	if (strcmp(key, "required") == 0) {
		size_t cnt = json_is_array(v) ? json_array_size(v) : 0;

		if (!json_is_array(v))
			return cfail(c, "expected an array of property names");
		n->required = calloc(cnt ? cnt : 1, sizeof(*n->required));
		if (!n->required)
			return -ENOMEM;
		for (size_t i = 0; i < cnt; i++) {
			const json_t *e = json_array_get(v, i);
			size_t m = ptr_push_index(&c->at, i);

			if (!json_is_string(e))
				return cfail(c, "expected a property name");
			/* uniqueness: the schema is small and bounded */
			for (size_t j = 0; j < i; j++)
				if (strcmp(n->required[j], json_string_value(e)) == 0)
					return cfail(c, "property listed twice");
			n->required[n->nrequired++] = json_string_value(e);
			ptr_pop(&c->at, m);
		}
		return 0;
	}
	if (strcmp(key, "additionalProperties") == 0) {
		if (json_is_false(v)) {
			n->no_additional = true;
			return 0;
		}
		return compile_sub(c, v, &n->additional);
	}
	if (strcmp(key, "items") == 0) {
		if (json_is_array(v))
			return cfail(c, "expected a schema (an array of schemas is "
					"prefixItems, which is not supported)");
		return compile_sub(c, v, &n->items);
	}
	if (strcmp(key, "enum") == 0) {
		if (!json_is_array(v) || json_array_size(v) == 0)
			return cfail(c, "expected a non-empty array");
		n->enum_values = v;
		return 0;
	}
	if (strcmp(key, "const") == 0) {
		n->const_value = v;
		return 0;
	}
	if (strcmp(key, "minimum") == 0 || strcmp(key, "maximum") == 0 ||
	    strcmp(key, "exclusiveMinimum") == 0 || strcmp(key, "exclusiveMaximum") == 0) {
		if (!json_is_number(v))
			return cfail(c, "expected a number");
		if (key[0] == 'm')
			*(key[1] == 'i' ? &n->minimum : &n->maximum) = v;
		else
			*(key[10] == 'i' ? &n->exclusive_minimum : &n->exclusive_maximum) = v;
		return 0;
	}
	if (strcmp(key, "minLength") == 0)
		return get_count(c, v, &n->min_length);
	if (strcmp(key, "maxLength") == 0)
		return get_count(c, v, &n->max_length);
	if (strcmp(key, "minItems") == 0)
		return get_count(c, v, &n->min_items);
	if (strcmp(key, "maxItems") == 0)
		return get_count(c, v, &n->max_items);
	if (strcmp(key, "pattern") == 0) {
		char why[200];
		int r;

		if (!json_is_string(v))
			return cfail(c, "expected a string");
		if (strlen(json_string_value(v)) != json_string_length(v))
			return cfail(c, "a pattern may not contain U+0000");
		r = sbx_regex_compile(json_string_value(v), SBX_REGEX_SEARCH | SBX_REGEX_DOLLAR_END,
				      &n->pattern, why, sizeof(why));
		if (r == -EINVAL)
			return cfail(c, "invalid regular expression: %s", why);
		if (r < 0)
			return r;
		n->pattern_src = json_string_value(v);
		return 0;
	}
	return cfail(c, "unsupported keyword");
}

static int compile_node(struct compiler *c, const json_t *s, struct node **out)
{
	struct node *n = calloc(1, sizeof(*n));
	const char *k;
	json_t *v;

	*out = n;
	if (!n)
		return -ENOMEM;
	n->min_length = n->max_length = n->min_items = n->max_items = -1;
	if (json_is_boolean(s)) {
		n->never = json_is_false(s);
		return 0;
	}
	if (!json_is_object(s))
		return cfail(c, "expected a schema (an object or a boolean)");
	json_object_foreach((json_t *)s, k, v) {
		size_t m = ptr_push(&c->at, k);
		int r = compile_keyword(c, n, k, v);

		if (r < 0)
			return r;
		ptr_pop(&c->at, m);
	}
	return 0;
}

int sbx_jschema_compile(const json_t *schema, struct sbx_jschema **out, char *err, size_t errlen)
{
	struct compiler c = { .err = err, .errlen = errlen };
	struct sbx_jschema *s;
	int r;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	r = measure(&c, schema, 0);
	if (r < 0)
		return r;
	c.at.len = 0;
	c.at.buf[0] = '\0';
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	/* Our own copy: the nodes point into it, whatever the caller does
	 * with its value afterwards. */
	s->copy = json_deep_copy(schema);
	if (!s->copy) {
		free(s);
		return -ENOMEM;
	}
	r = compile_node(&c, s->copy, &s->root);
	if (r < 0) {
		sbx_jschema_free(s);
		return r;
	}
	*out = s;
	return 0;
}

void sbx_jschema_free(struct sbx_jschema *s)
{
	if (!s)
		return;
	node_free(s->root);
	json_decref(s->copy);
	free(s);
}

/* --- validating ---------------------------------------------------------------- */

struct walk {
	struct ptr at;
	sbx_jschema_fail_fn fail;
	void *arg;
	int failures;
	bool stop;
	uint64_t work;		 /* units left */
	uint64_t regex_steps; /* PCRE2 steps left */
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

		return isfinite(d) && d == floor(d);
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
		t = trunc(d);
		ti = (json_int_t)t; /* in range: |t| < 2^63 or t == -2^63 */
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
	for (size_t k = 0; k < sizeof(type_names) / sizeof(type_names[0]); k++)
		if (types & type_names[k].bit)
			at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s",
					       at ? " or " : "", type_names[k].name);
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
		int r = sbx_regex_match_budget(n->pattern, s, len, &w->regex_steps);

		if (r == SBX_REGEX_NOMATCH)
			vfail(w, "pattern", "does not match the pattern");
		else if (r != SBX_REGEX_MATCH)
			/* LIMIT, or -ENOMEM: not decided is not a match */
			vfail(w, "pattern", "the pattern could not be decided within its step limit");
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
			size_t m = ptr_push_index(&w->at, i);

			walk(w, n->items, json_array_get(doc, i));
			ptr_pop(&w->at, m);
		}
	} else if (t & T_OBJECT) {
		const char *k;
		json_t *e;

		for (size_t i = 0; i < n->nrequired && !w->stop; i++) {
			if (!json_object_get(doc, n->required[i])) {
				struct ptr name = { .len = 0 };

				/* the name, cleaned the way pointers are */
				ptr_push(&name, n->required[i]);
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
			m = ptr_push(&w->at, k);
			if (sub)
				walk(w, sub, e);
			else if (n->no_additional)
				vfail(w, "additionalProperties", "the schema allows no such property");
			else if (n->additional)
				walk(w, n->additional, e);
			ptr_pop(&w->at, m);
		}
	}
}

int sbx_jschema_validate(const struct sbx_jschema *s, const char *doc, size_t len,
			 sbx_jschema_fail_fn fail, void *arg)
{
	struct walk w = { .fail = fail, .arg = arg, .work = SBX_JSCHEMA_MAX_WORK,
			  .regex_steps = SBX_JSCHEMA_MAX_REGEX_STEPS };
	json_error_t jerr;
	json_t *v;

	if (len > SBX_JSCHEMA_MAX_DOC)
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
