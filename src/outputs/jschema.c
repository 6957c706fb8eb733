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
 * pattern matching has a budget of its own (regex.h's units, in
 * proportion to the document's size), shared by every pattern match of
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

#include "jschema-internal.h"
#include "regex.h"
#include "util.h"

const struct jschema_type_name jschema_type_names[7] = {
	{ "null", T_NULL },	{ "boolean", T_BOOLEAN }, { "object", T_OBJECT },
	{ "array", T_ARRAY },	{ "number", T_NUMBER },	  { "string", T_STRING },
	{ "integer", T_INTEGER },
};

/* --- JSON Pointers --------------------------------------------------------- */


size_t jschema_ptr_push(struct ptr *p, const char *tok)
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

size_t jschema_ptr_push_index(struct ptr *p, size_t i)
{
	char tok[24];

	snprintf(tok, sizeof(tok), "%zu", i);
	return jschema_ptr_push(p, tok);
}

void jschema_ptr_pop(struct ptr *p, size_t mark)
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
	size_t nodes;	 /* JSON values of the schema seen */
	size_t patterns; /* compiled so far */
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
			size_t m = jschema_ptr_push(&c->at, k);
			int r = measure(c, e, depth + 1);

			if (r < 0)
				return r;
			jschema_ptr_pop(&c->at, m);
		}
	} else if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			size_t m = jschema_ptr_push_index(&c->at, i);
			int r = measure(c, json_array_get(v, i), depth + 1);

			if (r < 0)
				return r;
			jschema_ptr_pop(&c->at, m);
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

		if (d >= 0 && d < 9.2e18 && d == (double)(int64_t)d) {
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
		size_t k, m = json_is_array(v) ? jschema_ptr_push_index(&c->at, i) : c->at.len;

		if (json_is_array(v))
			one = json_array_get(v, i);
		if (!json_is_string(one))
			return cfail(c, "expected a type name");
		for (k = 0; k < sizeof(jschema_type_names) / sizeof(jschema_type_names[0]); k++)
			if (strcmp(json_string_value(one), jschema_type_names[k].name) == 0)
				break;
		if (k == sizeof(jschema_type_names) / sizeof(jschema_type_names[0]))
			return cfail(c, "expected one of null, boolean, object, array, number, "
					"string, integer");
		if (*types & jschema_type_names[k].bit)
			return cfail(c, "type listed twice");
		*types |= jschema_type_names[k].bit;
		jschema_ptr_pop(&c->at, m);
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
			size_t m = jschema_ptr_push(&c->at, k);
			int r;

			n->props[i].name = k;
			r = compile_sub(c, e, &n->props[i].schema);
			n->nprops = ++i;
			if (r < 0)
				return r;
			jschema_ptr_pop(&c->at, m);
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
			size_t m = jschema_ptr_push_index(&c->at, i);

			if (!json_is_string(e))
				return cfail(c, "expected a property name");
			/* uniqueness: the schema is small and bounded */
			for (size_t j = 0; j < i; j++)
				if (strcmp(n->required[j], json_string_value(e)) == 0)
					return cfail(c, "property listed twice");
			n->required[n->nrequired++] = json_string_value(e);
			jschema_ptr_pop(&c->at, m);
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
		/* each is a compiled program with its own match state */
		if (++c->patterns > SBX_JSCHEMA_MAX_PATTERNS)
			return cfail(c, "more than %d patterns in the schema",
				     SBX_JSCHEMA_MAX_PATTERNS);
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
		size_t m = jschema_ptr_push(&c->at, k);
		int r = compile_keyword(c, n, k, v);

		if (r < 0)
			return r;
		jschema_ptr_pop(&c->at, m);
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
