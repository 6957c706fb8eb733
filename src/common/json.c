/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "suggest.h"

int sbx_json_read(const char *path, size_t max, int code, char **data, size_t *len,
		  struct sbx_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	bool is_stdin = strcmp(path, "-") == 0;
	struct stat st;
	ssize_t n;

	if (is_stdin) {
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	} else {
		/* O_NONBLOCK so that a FIFO without a writer cannot hang us
		 * before the type check below rejects it. */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	}
	if (fd < 0)
		return sbx_error_set(err, code, errno, "%s: cannot open", is_stdin ? "<stdin>" : path);
	if (fstat(fd, &st) < 0)
		return sbx_error_set(err, code, errno, "%s: cannot stat", path);
	if (!is_stdin) {
		if (!S_ISREG(st.st_mode))
			return sbx_error_set(err, code, 0, "%s: not a regular file", path);
		/* Refuse before reading anything when the size is known. */
		if ((uint64_t)st.st_size > max)
			return sbx_error_set(err, code, 0,
					     "%s: file is %jd bytes, more than the %zu allowed", path,
					     (intmax_t)st.st_size, max);
		if (fcntl(fd, F_SETFL, 0) < 0)
			return sbx_error_set(err, code, errno, "%s: cannot read", path);
	}

	/* One byte more than allowed tells "exactly max" from "too big"
	 * without trusting st_size (stdin, or a file growing under us).  A
	 * regular file is read into a buffer of its size first (a buffer of
	 * max bytes would be fresh pages, each a page fault), and only one
	 * that grew meanwhile gets the rest. */
	size_t cap = is_stdin ? max + 1 : (size_t)st.st_size + 1;
	buf = sbx_xmalloc(cap + 1);
	n = sbx_read_all(fd, buf, cap);
	if (n == (ssize_t)cap && cap < max + 1) {
		ssize_t more;
		buf = sbx_xrealloc(buf, max + 2);
		more = sbx_read_all(fd, buf + n, max + 1 - cap);
		n = more < 0 ? more : n + more;
	}
	if (n < 0)
		return sbx_error_set(err, code, errno, "%s: cannot read", is_stdin ? "<stdin>" : path);
	if ((size_t)n > max)
		return sbx_error_set(err, code, 0, "%s: more than the %zu bytes allowed",
				     is_stdin ? "<stdin>" : path, max);
	buf[n] = '\0';
	*data = TAKE_PTR(buf);
	*len = (size_t)n;
	return 0;
}

void sbx_json_escape(const char *s, char *out, size_t len)
{
	static const char ellipsis[] = "...";
	size_t o = 0, i = 0;

	if (len == 0)
		return;
	while (s[i]) {
		unsigned char ch = (unsigned char)s[i];
		char piece[8];
		size_t plen, clen = 1;

		if (ch < 0x20 || ch == 0x7f) {
			snprintf(piece, sizeof(piece), "\\x%02x", ch);
		} else if (ch == '"' || ch == '\\') {
			piece[0] = '\\';
			piece[1] = (char)ch;
			piece[2] = '\0';
		} else if (ch < 0x80) {
			piece[0] = (char)ch;
			piece[1] = '\0';
		} else {
			/* Keep a UTF-8 sequence whole so truncation never
			 * leaves half a character.  A byte that starts no
			 * valid sequence (jansson quotes tokens cut in the
			 * middle of one) is written as \xNN, and a C1 control
			 * (U+0080..U+009F; U+009B is CSI to some terminals)
			 * as \u00NN, so a message is always clean UTF-8. */
			clen = (ch & 0xe0) == 0xc0 ? 2 : (ch & 0xf0) == 0xe0 ? 3 : (ch & 0xf8) == 0xf0 ? 4 : 0;
			for (size_t k = 1; k < clen; k++)
				if (((unsigned char)s[i + k] & 0xc0) != 0x80)
					clen = 0;
			if (!clen || !sbx_utf8_valid(s + i, clen)) {
				clen = 1;
				snprintf(piece, sizeof(piece), "\\x%02x", ch);
			} else if (ch == 0xc2 && (unsigned char)s[i + 1] <= 0x9f) {
				snprintf(piece, sizeof(piece), "\\u%04x", (unsigned char)s[i + 1]);
			} else {
				memcpy(piece, s + i, clen);
				piece[clen] = '\0';
			}
		}
		plen = strlen(piece);
		if (o + plen + sizeof(ellipsis) > len) {
			if (o + sizeof(ellipsis) <= len) {
				memcpy(out + o, ellipsis, sizeof(ellipsis));
				return;
			}
			break;
		}
		memcpy(out + o, piece, plen);
		o += plen;
		i += clen;
	}
	out[o] = '\0';
}

static bool plain_key(const char *k)
{
	if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || *k == '_'))
		return false;
	for (k++; *k; k++)
		if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') ||
		      (*k >= '0' && *k <= '9') || *k == '_'))
			return false;
	return true;
}

/* Append @s to @out (holding *@n bytes) as snprintf would: truncated to
 * SBX_JSON_PATH_MAX - 1 bytes and always terminated.  The catalog builds
 * a path for every key and element it reads, most of them never shown, so
 * this runs thousands of times a run; snprintf's format machinery was a
 * tenth of the catalog's parse time. */
static void path_append(char out[SBX_JSON_PATH_MAX], size_t *n, const char *s)
{
	size_t len = strlen(s), room = SBX_JSON_PATH_MAX - 1 - *n;

	if (len > room)
		len = room;
	memcpy(out + *n, s, len);
	*n += len;
	out[*n] = '\0';
}

void sbx_json_path_key(char out[SBX_JSON_PATH_MAX], const char *parent, const char *key)
{
	const char *dot = parent && *parent ? "." : "";
	char esc[80];
	size_t n = 0;

	if (!parent)
		parent = "";
	if (plain_key(key) && strlen(key) < 80) {
		out[0] = '\0';
		path_append(out, &n, parent);
		path_append(out, &n, dot);
		path_append(out, &n, key);
		return;
	}
	sbx_json_escape(key, esc, sizeof(esc));
	snprintf(out, SBX_JSON_PATH_MAX, "%s[\"%s\"]", parent, esc);
}

void sbx_json_path_index(char out[SBX_JSON_PATH_MAX], const char *parent, size_t i)
{
	char num[24], *d = num + sizeof(num);
	size_t n = 0;

	*--d = '\0';
	*--d = ']';
	do
		*--d = (char)('0' + i % 10);
	while ((i /= 10));
	*--d = '[';
	out[0] = '\0';
	path_append(out, &n, parent ? parent : "");
	path_append(out, &n, d);
}

void sbx_json_describe(const json_t *v, char *out, size_t len)
{
	char esc[64];

	switch (json_typeof(v)) {
	case JSON_STRING:
		sbx_json_escape(json_string_value(v), esc, sizeof(esc));
		snprintf(out, len, "\"%s\"", esc);
		break;
	case JSON_INTEGER:
		snprintf(out, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL: {
		/* Keep a visible fraction so "1.0" does not read as 1. */
		double d = json_real_value(v);
		/* Range first: converting a double outside long long
		 * (5.5e123) is undefined behaviour. */
		if (d > -1e15 && d < 1e15 && d == (double)(long long)d)
			snprintf(out, len, "%.1f", d);
		else
			snprintf(out, len, "%g", d);
		break;
	}
	case JSON_TRUE:
		snprintf(out, len, "true");
		break;
	case JSON_FALSE:
		snprintf(out, len, "false");
		break;
	case JSON_NULL:
		snprintf(out, len, "null");
		break;
	case JSON_ARRAY:
		snprintf(out, len, "an array");
		break;
	case JSON_OBJECT:
		snprintf(out, len, "an object");
		break;
	}
}

static const char *shown_path(const char *path)
{
	return path && *path ? path : "(top level)";
}

int sbx_json_error(const struct sbx_jctx *c, const char *path, const char *fmt, ...)
{
	char what[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (c->err && c->err->code)
		return -1; /* the first error stands */
	sbx_error_set(c->err, c->code, 0, "%s: %s: %s", c->source, shown_path(path), what);
	sbx_error_locate(c->err, c->source, path ? path : "");
	return -1;
}

int sbx_json_expected(const struct sbx_jctx *c, const char *path, const json_t *v,
		      const char *what)
{
	char got[96];

	sbx_json_describe(v, got, sizeof(got));
	return sbx_json_error(c, path, "expected %s, got %s", what, got);
}

/* The string starting at data[*i] (a '"'), decoded into @out when it is
 * short, valid UTF-8 and without NUL; *@i moves past it.  False when it
 * does not end before @end or is not usable as a key in a path. */
static bool scan_string(const char *data, size_t end, size_t *i, char *out, size_t cap)
{
	size_t o = 0;
	bool usable = true;

	for ((*i)++; *i < end; (*i)++) {
		unsigned char ch = (unsigned char)data[*i];
		unsigned long cp;

		if (ch == '"') {
			(*i)++;
			out[o] = '\0';
			return usable && sbx_utf8_valid(out, o);
		}
		if (ch != '\\') {
			if (o + 1 < cap)
				out[o++] = (char)ch;
			else
				usable = false;
			continue;
		}
		if (++*i >= end)
			return false;
		switch (data[*i]) {
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			cp = 0;
			for (int k = 0; k < 4; k++) {
				char h = *i + 1 < end ? data[*i + 1] : '\0';
				int d = h >= '0' && h <= '9' ? h - '0' :
					h >= 'a' && h <= 'f' ? h - 'a' + 10 :
					h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
				if (d < 0)
					return false;
				cp = cp << 4 | (unsigned long)d;
				(*i)++;
			}
			/* A surrogate pair is one character; anything else in
			 * that range is not (jansson refuses it too). */
			if (cp >= 0xd800 && cp < 0xdc00 && *i + 6 < end && data[*i + 1] == '\\' &&
			    data[*i + 2] == 'u') {
				unsigned long lo = 0;
				for (int k = 3; k < 7; k++) {
					char h = data[*i + k];
					int d = h >= '0' && h <= '9' ? h - '0' :
						h >= 'a' && h <= 'f' ? h - 'a' + 10 :
						h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
					if (d < 0)
						return false;
					lo = lo << 4 | (unsigned long)d;
				}
				if (lo < 0xdc00 || lo > 0xdfff)
					return false;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				*i += 6;
			}
			if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))
				usable = false;
			break;
		default:
			cp = (unsigned char)data[*i];
			break;
		}
		/* UTF-8 of cp; the validity check at the end covers the rest. */
		if (o + 5 >= cap) {
			usable = false;
		} else if (cp < 0x80) {
			out[o++] = (char)cp;
		} else if (cp < 0x800) {
			out[o++] = (char)(0xc0 | cp >> 6);
			out[o++] = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			out[o++] = (char)(0xe0 | cp >> 12);
			out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (cp & 0x3f));
		} else {
			out[o++] = (char)(0xf0 | cp >> 18);
			out[o++] = (char)(0x80 | ((cp >> 12) & 0x3f));
			out[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (cp & 0x3f));
		}
	}
	return false;
}

void sbx_json_path_at(const char *data, size_t len, size_t offset, char out[SBX_JSON_PATH_MAX])
{
	/* 64 levels of "[0]" already fill a path; deeper ones are counted
	 * (so their brackets and commas are skipped) but not named. */
	struct {
		size_t base, index;
		bool object;
	} f[64];
	size_t depth = 0, lost = 0, end = offset < len ? offset : len, i = 0;
	bool want_key = false;
	char tmp[SBX_JSON_PATH_MAX];

	out[0] = '\0';
	while (i < end) {
		char ch = data[i];
		char key[128];

		switch (ch) {
		case '{':
		case '[':
			i++;
			if (lost || depth == ARRAY_SIZE(f)) {
				lost++;
				break;
			}
			f[depth].base = strlen(out);
			f[depth].index = 0;
			f[depth].object = ch == '{';
			depth++;
			want_key = ch == '{';
			if (ch == '[') {
				sbx_json_path_index(tmp, out, 0);
				memcpy(out, tmp, SBX_JSON_PATH_MAX);
			}
			break;
		case '}':
		case ']':
			i++;
			if (lost) {
				lost--;
			} else if (depth) {
				depth--;
				out[f[depth].base] = '\0';
			}
			want_key = false;
			break;
		case ',':
			i++;
			if (lost || !depth)
				break;
			out[f[depth - 1].base] = '\0';
			if (f[depth - 1].object) {
				want_key = true;
			} else {
				sbx_json_path_index(tmp, out, ++f[depth - 1].index);
				memcpy(out, tmp, SBX_JSON_PATH_MAX);
			}
			break;
		case '"':
			if (scan_string(data, end, &i, key, sizeof(key)) && want_key && !lost &&
			    depth && f[depth - 1].object) {
				sbx_json_path_key(tmp, out, key);
				memcpy(out, tmp, SBX_JSON_PATH_MAX);
			}
			want_key = false;
			break;
		default:
			i++;
			break;
		}
	}
}

json_t *sbx_json_parse(const struct sbx_jctx *c, const char *data, size_t len)
{
	json_error_t jerr;
	char text[sizeof(jerr.text) * 4 + 4];
	char path[SBX_JSON_PATH_MAX];
	json_t *root;

	/* Duplicate keys are an error, not "last one wins": a reviewer
	 * reading the first "memory_mib" must see what runs.  NUL inside
	 * strings stays rejected (no JSON_ALLOW_NUL), so every string is a
	 * C string. */
	root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root)
		return root;
	/* jansson gives a position only; an overflowing number (1e400) or
	 * a duplicate key is named by its path like every other error. */
	sbx_json_escape(jerr.text, text, sizeof(text));
	sbx_json_path_at(data, len, jerr.position > 0 ? (size_t)jerr.position : 0, path);
	if (c->err && !c->err->code) {
		sbx_error_set(c->err, c->code, 0, "%s: line %d column %d: %s: %s", c->source,
			      jerr.line, jerr.column, shown_path(path), text);
		sbx_error_locate(c->err, c->source, path);
	}
	return NULL;
}

int sbx_json_check_keys(const struct sbx_jctx *c, const char *path, const json_t *v,
			const char *const *known)
{
	const char *key;
	json_t *val;

	if (sbx_json_object(c, path, v) < 0)
		return -1;
	json_object_foreach((json_t *)v, key, val) {
		bool ok = false;
		for (const char *const *k = known; *k; k++)
			if (strcmp(*k, key) == 0) {
				ok = true;
				break;
			}
		if (!ok) {
			char p[SBX_JSON_PATH_MAX];
			sbx_json_path_key(p, path, key);
			return sbx_json_error(c, p, "unknown key%s",
					      sbx_did_you_mean(sbx_suggest_strv(key, known)));
		}
	}
	return 0;
}

int sbx_json_object(const struct sbx_jctx *c, const char *path, const json_t *v)
{
	return json_is_object(v) ? 0 : sbx_json_expected(c, path, v, "an object");
}

int sbx_json_array(const struct sbx_jctx *c, const char *path, const json_t *v, size_t max)
{
	if (!json_is_array(v))
		return sbx_json_expected(c, path, v, "an array");
	if (json_array_size(v) > max)
		return sbx_json_error(c, path, "expected at most %zu entries, got %zu", max,
				      json_array_size(v));
	return 0;
}

int sbx_json_string(const struct sbx_jctx *c, const char *path, const json_t *v, size_t max_len,
		    char **out)
{
	if (!json_is_string(v))
		return sbx_json_expected(c, path, v, "a string");
	if (json_string_length(v) > max_len)
		return sbx_json_error(c, path, "expected a string of at most %zu bytes, got %zu bytes",
				      max_len, json_string_length(v));
	if (out)
		*out = sbx_xstrdup(json_string_value(v));
	return 0;
}

int sbx_json_bool(const struct sbx_jctx *c, const char *path, const json_t *v, bool *out)
{
	if (!json_is_boolean(v))
		return sbx_json_expected(c, path, v, "true or false");
	*out = json_is_true(v);
	return 0;
}

int sbx_json_uint(const struct sbx_jctx *c, const char *path, const json_t *v, uint64_t min,
		  uint64_t max, uint64_t *out)
{
	char what[96];
	json_int_t i;

	if (min == 1)
		snprintf(what, sizeof(what), "a positive integer");
	else if (min == 0)
		snprintf(what, sizeof(what), "a non-negative integer");
	else
		snprintf(what, sizeof(what), "an integer of at least %" PRIu64, min);
	/* json_is_integer() is false for reals, so 1.0 is refused here. */
	if (!json_is_integer(v))
		return sbx_json_expected(c, path, v, what);
	i = json_integer_value(v);
	if (i < 0 || (uint64_t)i < min)
		return sbx_json_expected(c, path, v, what);
	if ((uint64_t)i > max) {
		size_t n = strlen(what);
		snprintf(what + n, sizeof(what) - n, " of at most %" PRIu64, max);
		return sbx_json_expected(c, path, v, what);
	}
	*out = (uint64_t)i;
	return 0;
}

int sbx_json_u64(const struct sbx_jctx *c, const char *path, const json_t *v, uint64_t *out)
{
	static const char what[] = "a non-negative integer or a string \"0x...\"";
	const char *s, *p;
	uint64_t r = 0;
	bool hex;

	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0)
			return sbx_json_expected(c, path, v, what);
		*out = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v))
		return sbx_json_expected(c, path, v, what);
	/* Parsed by hand: strtoull accepts signs, spaces and locale quirks. */
	s = json_string_value(v);
	hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	p = hex ? s + 2 : s;
	if (!*p || strlen(p) > (hex ? 16u : 20u))
		return sbx_json_expected(c, path, v, what);
	for (; *p; p++) {
		unsigned d;
		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (hex && *p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (hex && *p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			return sbx_json_expected(c, path, v, what);
		if (!hex && r > (UINT64_MAX - d) / 10)
			return sbx_json_expected(c, path, v, what);
		r = hex ? (r << 4) | d : r * 10 + d;
	}
	*out = r;
	return 0;
}

int sbx_json_strv(const struct sbx_jctx *c, const char *path, const json_t *v, size_t max_items,
		  size_t max_len, bool (*valid)(const char *), const char *what, bool unique,
		  char ***out)
{
	_cleanup_strv_free_ char **r = NULL;
	size_t n;

	if (sbx_json_array(c, path, v, max_items) < 0)
		return -1;
	n = json_array_size(v);
	r = sbx_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		const json_t *e = json_array_get(v, i);
		char p[SBX_JSON_PATH_MAX];

		sbx_json_path_index(p, path, i);
		if (sbx_json_string(c, p, e, max_len, &r[i]) < 0)
			return -1;
		if (valid && !valid(r[i]))
			return sbx_json_expected(c, p, e, what);
		if (unique)
			for (size_t k = 0; k < i; k++)
				if (strcmp(r[k], r[i]) == 0)
					return sbx_json_error(c, p, "duplicate entry (same as [%zu])", k);
	}
	*out = TAKE_PTR(r);
	return 0;
}

const json_t *sbx_json_required(const struct sbx_jctx *c, const char *path, const json_t *obj,
				const char *key)
{
	const json_t *v = json_object_get(obj, key);
	char p[SBX_JSON_PATH_MAX];

	if (!v) {
		sbx_json_path_key(p, path, key);
		sbx_json_error(c, p, "missing required key");
	}
	return v;
}

int sbx_json_env(const struct sbx_jctx *c, const char *path, const json_t *v, size_t max_vars,
		 size_t max_value, char ***out)
{
	_cleanup_strv_free_ char **env = NULL;
	const char *key;
	json_t *val;
	size_t n = 0;

	if (!v) {
		*out = sbx_xcalloc(1, sizeof(char *));
		return 0;
	}
	if (sbx_json_object(c, path, v) < 0)
		return -1;
	if (json_object_size(v) > max_vars)
		return sbx_json_error(c, path, "expected at most %zu variables, got %zu", max_vars,
				      json_object_size(v));
	env = sbx_xcalloc(json_object_size(v) + 1, sizeof(char *));
	json_object_foreach((json_t *)v, key, val) {
		char p[SBX_JSON_PATH_MAX];

		sbx_json_path_key(p, path, key);
		if (!sbx_env_name_valid(key))
			return sbx_json_error(c, p, "expected a variable name matching "
						    "[A-Za-z_][A-Za-z0-9_]{0,127}");
		if (sbx_json_string(c, p, val, max_value, NULL) < 0)
			return -1;
		if (sbx_has_control(json_string_value(val), json_string_length(val)))
			return sbx_json_expected(c, p, val, "a value without control characters");
		env[n++] = sbx_xasprintf("%s=%s", key, json_string_value(val));
	}
	*out = TAKE_PTR(env);
	return 0;
}
