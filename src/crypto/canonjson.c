/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * canonjson.c - RFC 8785 canonical JSON and the string cleaner that keeps
 * manifest strings inside what jq reproduces byte for byte.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "canonjson.h"
#include "json.h"

#define PATH_MAX_LEN 256

struct buf {
	char *data;
	size_t len;
	size_t cap;
};

static void buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->cap - b->len < n + 1) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->len < n + 1)
			cap *= 2;
		b->data = sbx_xrealloc(b->data, cap);
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void buf_addc(struct buf *b, char c)
{
	buf_add(b, &c, 1);
}

/*
 * Length of the well-formed UTF-8 sequence at @s (Unicode table 3-7), or,
 * when it is ill-formed, 0 with *@bad set to the length of its maximal
 * ill-formed subpart (at least 1), which becomes one U+FFFD.
 */
static size_t utf8_seq(const unsigned char *s, size_t avail, size_t *bad)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else {
		*bad = 1;
		return 0;
	}
	/* The second byte's range excludes overlongs, surrogates and values
	 * past U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (size_t k = 1; k < n; k++) {
		if (k >= avail || s[k] < lo || s[k] > hi) {
			*bad = k;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

/* Is the ASCII byte @c replaced?  DEL always (jq writes it as \u007f, JCS
 * literally); NUL always (many JSON readers, jansson among them, refuse
 * \u0000, and a C string would end there); other C0 controls unless
 * @keep_controls, since both escape them alike. */
static bool replaced(unsigned char c, bool keep_controls)
{
	if (c == 0x7f || c == 0)
		return true;
	return c < 0x20 && !keep_controls;
}

static char *clean(const char *str, size_t len, size_t max_bytes, bool *truncated,
		   bool keep_controls)
{
	static const char replacement[] = "\xef\xbf\xbd";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, o = 0, cap;
	bool cut = false;
	char *out;

	/* Every input byte yields at most 3 output bytes (U+FFFD). */
	cap = len > max_bytes / 3 ? max_bytes : len * 3;
	out = sbx_xmalloc(cap + 1);
	while (i < len) {
		size_t bad = 0, n = utf8_seq(s + i, len - i, &bad);
		const char *emit = (const char *)s + i;
		size_t emit_len = n;

		if (n == 0 || (n == 1 && replaced(s[i], keep_controls))) {
			emit = replacement;
			emit_len = 3;
			n = n ? n : bad;
		}
		if (emit_len > cap - o) {
			cut = true;
			break;
		}
		memcpy(out + o, emit, emit_len);
		o += emit_len;
		i += n;
	}
	out[o] = '\0';
	if (truncated)
		*truncated = cut;
	return out;
}

char *sbx_canonjson_clean_string(const char *s, size_t len, size_t max_bytes, bool *truncated)
{
	return clean(s, len, max_bytes, truncated, false);
}

char *sbx_canonjson_clean_text(const char *s, size_t len, size_t max_bytes, bool *truncated)
{
	return clean(s, len, max_bytes, truncated, true);
}

/* Next code point of valid UTF-8 at *@p, advancing it. */
static uint32_t next_cp(const unsigned char **p)
{
	const unsigned char *s = *p;
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80) {
		*p += 1;
		return s[0];
	}
	n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	cp = s[0] & (0x7f >> n);
	for (size_t k = 1; k < n; k++)
		cp = (cp << 6) | (s[k] & 0x3f);
	*p += n;
	return cp;
}

/* The first UTF-16 code unit of @cp: itself in the BMP, else the high
 * surrogate. */
static uint32_t utf16_lead(uint32_t cp)
{
	return cp < 0x10000 ? cp : 0xd800 + ((cp - 0x10000) >> 10);
}

struct member {
	const char *key;
	size_t key_len;
	json_t *value;
};

/*
 * RFC 8785 §3.2.3: compare keys as arrays of UTF-16 code units.  Code
 * point order agrees with it except between a supplementary character
 * (lead unit D800..DBFF) and a BMP character at or above U+E000.
 */
static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	const unsigned char *p = (const unsigned char *)x->key, *pe = p + x->key_len;
	const unsigned char *q = (const unsigned char *)y->key, *qe = q + y->key_len;

	while (p < pe && q < qe) {
		uint32_t cp = next_cp(&p), cq = next_cp(&q);
		uint32_t up = utf16_lead(cp), uq = utf16_lead(cq);

		if (cp == cq)
			continue;
		if (up != uq)
			return up < uq ? -1 : 1;
		/* Same high surrogate: the low ones follow code point order. */
		return cp < cq ? -1 : 1;
	}
	if (p < pe)
		return 1;
	return q < qe ? -1 : 0;
}

struct dumper {
	struct buf b;
	char path[PATH_MAX_LEN];
	struct sbx_error *err;
};

static int dump_fail(struct dumper *d, const char *what)
{
	return sbx_error_set(d->err, SBX_EXIT_SOFTWARE, 0, "canonical JSON: %s: %s",
			     d->path[0] ? d->path : "(top level)", what);
}

/* Append ".key" to @path for messages, escaped as every message is
 * (sbx_json_escape: no C0 or C1 control, never half a character) so
 * that a hostile manifest cannot put terminal escapes on stderr.  A key
 * holding NUL is shown up to it. */
static void path_add_key(char *path, size_t at, const char *key, size_t len)
{
	_cleanup_free_ char *k = sbx_xstrndup(key, len);
	size_t o = at;

	if (at && o < PATH_MAX_LEN - 1)
		path[o++] = '.';
	sbx_json_escape(k, path + o, PATH_MAX_LEN - o);
}

static void dump_string(struct buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t run = 0;

	buf_addc(b, '"');
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6] = { '\\', 0 };
		size_t esc_len = 2;

		switch (c) {
		case '"':
		case '\\':
			esc[1] = (char)c;
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			if (c >= 0x20)
				continue;
			/* ECMAScript's JSON.stringify: lowercase hex. */
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			esc_len = 6;
		}
		/* Flush the literal run before this escape. */
		buf_add(b, s + run, i - run);
		buf_add(b, esc, esc_len);
		run = i + 1;
	}
	buf_add(b, s + run, len - run);
	buf_addc(b, '"');
}

static int dump_value(struct dumper *d, const json_t *v, unsigned depth);

static int dump_object(struct dumper *d, const json_t *v, unsigned depth)
{
	size_t n = json_object_size(v), i = 0, path_len = strlen(d->path);
	_cleanup_free_ struct member *m = sbx_xcalloc(n, sizeof(*m));
	void *it;

	for (it = json_object_iter((json_t *)v); it; it = json_object_iter_next((json_t *)v, it)) {
		m[i].key = json_object_iter_key(it);
		m[i].key_len = json_object_iter_key_len(it);
		m[i].value = json_object_iter_value(it);
		if (!sbx_utf8_valid(m[i].key, m[i].key_len))
			return dump_fail(d, "object key is not valid UTF-8");
		i++;
	}
	qsort(m, n, sizeof(*m), member_cmp);

	buf_addc(&d->b, '{');
	for (i = 0; i < n; i++) {
		if (i)
			buf_addc(&d->b, ',');
		dump_string(&d->b, m[i].key, m[i].key_len);
		buf_addc(&d->b, ':');
		path_add_key(d->path, path_len, m[i].key, m[i].key_len);
		if (dump_value(d, m[i].value, depth + 1) < 0)
			return -1;
		d->path[path_len] = '\0';
	}
	buf_addc(&d->b, '}');
	return 0;
}

static int dump_array(struct dumper *d, const json_t *v, unsigned depth)
{
	size_t path_len = strlen(d->path);

	buf_addc(&d->b, '[');
	for (size_t i = 0; i < json_array_size(v); i++) {
		if (i)
			buf_addc(&d->b, ',');
		snprintf(d->path + path_len, sizeof(d->path) - path_len, "[%zu]", i);
		if (dump_value(d, json_array_get(v, i), depth + 1) < 0)
			return -1;
		d->path[path_len] = '\0';
	}
	buf_addc(&d->b, ']');
	return 0;
}

static int dump_value(struct dumper *d, const json_t *v, unsigned depth)
{
	char num[24];
	json_int_t i;

	if (depth > SBX_CANONJSON_DEPTH_MAX)
		return dump_fail(d, "nested too deeply");
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return dump_object(d, v, depth);
	case JSON_ARRAY:
		return dump_array(d, v, depth);
	case JSON_STRING:
		if (!sbx_utf8_valid(json_string_value(v), json_string_length(v)))
			return dump_fail(d, "string is not valid UTF-8");
		dump_string(&d->b, json_string_value(v), json_string_length(v));
		return 0;
	case JSON_INTEGER:
		i = json_integer_value(v);
		if (i > SBX_CANONJSON_INT_MAX || i < -SBX_CANONJSON_INT_MAX)
			return dump_fail(d, "integer outside +-(2^53-1)");
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, i);
		buf_add(&d->b, num, strlen(num));
		return 0;
	case JSON_REAL:
		return dump_fail(d, "real number (the manifest holds integers only)");
	case JSON_TRUE:
		buf_add(&d->b, "true", 4);
		return 0;
	case JSON_FALSE:
		buf_add(&d->b, "false", 5);
		return 0;
	case JSON_NULL:
		buf_add(&d->b, "null", 4);
		return 0;
	}
	return dump_fail(d, "unknown JSON type");
}

int sbx_canonjson_dump(const json_t *v, char **out, size_t *len, struct sbx_error *err)
{
	struct dumper d = { .err = err };

	if (!v)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "canonical JSON: no value");
	if (dump_value(&d, v, 0) < 0) {
		free(d.b.data);
		return -1;
	}
	*out = d.b.data;
	*len = d.b.len;
	return 0;
}
