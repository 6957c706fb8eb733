/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-json.c - application/json, checked in one streaming pass.
 *
 * The broker validates whatever the payload wrote, outside every cgroup,
 * so the check must not cost memory in proportion to the file: building a
 * jansson tree took ~20 times the file's size (1 GiB of allowed output,
 * ~20 GiB of broker heap).  This is a syntax checker instead: a state
 * machine fed the file in the reader's fixed 64 KiB chunks, with a stack of
 * at most SBX_MEDIA_JSON_MAX_DEPTH containers and no copy of any value.
 *
 * It gives the verdicts that parsing with jansson (JSON_DECODE_ANY |
 * JSON_REJECT_DUPLICATES) after the UTF-8 and depth checks gave, so the
 * next consumer sees the same documents accepted as before; the unit test
 * runs both over a table of cases and thousands of mutations of them:
 *   - strict RFC 8259 grammar, any value at the top, whitespace only
 *     SP TAB LF CR, no BOM, nothing after the value;
 *   - strings: no raw control character, escapes \" \\ \/ \b \f \n \r \t
 *     \uXXXX only, surrogates paired, no \u0000 (a C consumer would cut
 *     the string there);
 *   - numbers: an integer must fit in a signed 64-bit integer, a real must
 *     not overflow a double (underflow is fine), as jansson decides;
 *   - duplicate keys in one object are refused (two consumers could read
 *     two different documents).  Keys are compared decoded ("a" and
 *     "\u0061" are the same key) through a 64-bit hash of their bytes; a
 *     hash collision refuses a valid document, never accepts a duplicate.
 *
 * The one deliberate difference: the hashes of the keys of the objects that
 * are open at once are kept (8 bytes each, a stack: an inner object's keys
 * are dropped when it closes), and a document with more than
 * SBX_MEDIA_JSON_MAX_KEYS of them is refused, which bounds the checker at
 * 8 MiB whatever the file holds.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "validate.h"

/* Significant digits of a real kept for the overflow decision; more than
 * the 309 digits of the smallest overflowing value, so with a sticky digit
 * for what is dropped, strtod rounds the kept string the same way. */
#define NUM_KEEP 400
/* Exponents beyond this are overflow or underflow whatever the digits. */
#define EXP_CLAMP 1000000

enum jstate {
	J_VALUE,          /* a value must come: top level, after ':', after ',' in an array */
	J_VALUE_OR_CLOSE, /* after '[': a value or ']' */
	J_KEY,            /* after ',' in an object: a key */
	J_KEY_OR_CLOSE,   /* after '{': a key or '}' */
	J_COLON,          /* after a key */
	J_AFTER,          /* after a value inside a container: ',' or its closer */
	J_STRING,         /* inside a string */
	J_ESCAPE,         /* after a backslash */
	J_HEX,            /* inside \uXXXX */
	J_LOW_BS,         /* after a high surrogate: a backslash must follow */
	J_LOW_U,          /* ... and then 'u' */
	J_NUMBER,
	J_LITERAL,
	J_DONE,           /* the top-level value is complete */
};

enum nphase {
	N_MINUS, /* after '-': a digit must follow */
	N_ZERO,  /* a leading 0: '.', 'e' or the end */
	N_INT,
	N_DOT,   /* after '.': a digit must follow */
	N_FRAC,
	N_E,     /* after 'e': sign or digit */
	N_ESIGN, /* after the exponent's sign: a digit */
	N_EXP,
};

struct jnum {
	enum nphase phase;
	bool neg, real, sticky;
	uint64_t sig;  /* significant digits seen (leading zeros excluded) */
	uint64_t frac; /* digits after the point */
	uint64_t exp;  /* exponent, saturated */
	bool eneg;
	size_t nd;
	char digits[NUM_KEEP + 1];
};

struct json {
	enum jstate state;
	unsigned depth;
	char stack[SBX_MEDIA_JSON_MAX_DEPTH + 1]; /* '[' or '{' per open container */
	size_t key_start[SBX_MEDIA_JSON_MAX_DEPTH + 1];

	/* the string being read */
	bool is_key;
	uint64_t key_hash;
	unsigned hex_left;
	uint32_t hex;
	uint32_t high; /* pending high surrogate, 0 when none */

	/* the literal being read */
	const char *lit;
	unsigned lit_pos;

	struct jnum num;

	/* hashes of the keys of every open object, innermost last */
	uint64_t *keys;
	size_t nkeys, cap;

	/* where we are, for messages */
	uint64_t line, line_start;
	const char *what; /* "json" or "ndjson" */
};

static const uint64_t HASH_SEED = 0xcbf29ce484222325ull;

/* FNV-1a, one byte at a time: keys are short, and a collision only costs a
 * false refusal. */
static inline uint64_t hash_byte(uint64_t h, unsigned char c)
{
	return (h ^ c) * 0x100000001b3ull;
}

static uint64_t hash_final(uint64_t h)
{
	/* splitmix64's finalizer spreads FNV's weak high bits. */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static int jfail(struct json *j, uint64_t at, struct sbx_media_report *rep, const char *what)
{
	return sbx_media_fail(rep, "%s: line %llu column %llu: %s", j->what ? j->what : "json",
			      (unsigned long long)j->line + 1,
			      (unsigned long long)(at - j->line_start + 1), what);
}

/* Feed a decoded code point of a key into its hash, as UTF-8. */
static void key_cp(struct json *j, uint32_t cp)
{
	unsigned char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp, n = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6), b[1] = (unsigned char)(0x80 | (cp & 0x3f)), n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	for (size_t i = 0; i < n; i++)
		j->key_hash = hash_byte(j->key_hash, b[i]);
}

/* A decoded character of a string (from an escape). */
static void string_cp(struct json *j, uint32_t cp, struct sbx_media_report *rep)
{
	if (j->is_key)
		key_cp(j, cp);
	/* An escaped control character is valid JSON, and becomes the real
	 * byte when a consumer prints the decoded value (jq -r). */
	if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || (cp >= 0x7f && cp <= 0x9f))
		rep->flags |= SBX_MEDIA_FLAG_CONTROLS;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int push(struct json *j, char kind, struct sbx_media_report *rep)
{
	if (j->depth >= SBX_MEDIA_JSON_MAX_DEPTH)
		return sbx_media_fail(rep, "%s: nesting deeper than %d", j->what ? j->what : "json",
				      SBX_MEDIA_JSON_MAX_DEPTH);
	j->stack[++j->depth] = kind;
	j->key_start[j->depth] = j->nkeys;
	j->state = kind == '[' ? J_VALUE_OR_CLOSE : J_KEY_OR_CLOSE;
	return 0;
}

static void value_done(struct json *j)
{
	j->state = j->depth == 0 ? J_DONE : J_AFTER;
}

static int add_key(struct json *j, uint64_t at, struct sbx_media_report *rep)
{
	if (j->nkeys >= SBX_MEDIA_JSON_MAX_KEYS)
		return jfail(j, at, rep, "more than 1048576 keys in the objects open at once");
	if (j->nkeys == j->cap) {
		j->cap = j->cap ? 2 * j->cap : 64;
		j->keys = sbx_xrealloc(j->keys, j->cap * sizeof(*j->keys));
	}
	j->keys[j->nkeys++] = hash_final(j->key_hash);
	return 0;
}

/* Close the innermost container with @c; for an object, look for a key
 * that came twice among its own keys. */
static int pop(struct json *j, unsigned char c, uint64_t at, struct sbx_media_report *rep)
{
	char want = c == ']' ? '[' : '{';

	if (j->depth == 0 || j->stack[j->depth] != want)
		return jfail(j, at, rep, "unexpected closing bracket");
	if (want == '{') {
		size_t s = j->key_start[j->depth], n = j->nkeys - s;

		if (n > 1) {
			uint64_t *k = j->keys + s;

			qsort(k, n, sizeof(*k), cmp_u64);
			for (size_t i = 1; i < n; i++)
				if (k[i] == k[i - 1])
					return jfail(j, at, rep, "duplicate object key in the object "
								 "closing here");
		}
		j->nkeys = s;
	}
	j->depth--;
	value_done(j);
	return 0;
}

/* --- numbers ------------------------------------------------------------------ */

static void num_digit(struct jnum *n, unsigned char c)
{
	if (n->sig == 0 && c == '0')
		return; /* a leading zero carries no digit of the value */
	if (n->nd < NUM_KEEP)
		n->digits[n->nd++] = (char)c;
	else if (c != '0')
		n->sticky = true;
	n->sig++;
}

/* The number is complete: does it fit, the way jansson decides it? */
static int num_end(struct json *j, uint64_t at, struct sbx_media_report *rep)
{
	struct jnum *n = &j->num;

	if (n->phase != N_ZERO && n->phase != N_INT && n->phase != N_FRAC && n->phase != N_EXP)
		return jfail(j, at, rep, "invalid number");
	if (!n->real) {
		/* strtoll's range: -9223372036854775808 .. 9223372036854775807 */
		const char *max = n->neg ? "9223372036854775808" : "9223372036854775807";

		if (n->sig > 19 || (n->sig == 19 && memcmp(n->digits, max, 19) > 0))
			return jfail(j, at, rep, n->neg ? "too big negative integer" : "too big integer");
	} else if (n->sig > 0) {
		/* value = 0.<digits> x 10^e, e = sig - frac +- exp */
		char buf[NUM_KEEP + 32];
		/* sig and frac count bytes of the file; exp is saturated near
		 * 10^7: no overflow in int64, and only the sum is clamped. */
		int64_t e = (int64_t)n->sig - (int64_t)n->frac;
		double v;

		e += n->eneg ? -(int64_t)n->exp : (int64_t)n->exp;
		if (e > EXP_CLAMP)
			e = EXP_CLAMP;
		if (e < -EXP_CLAMP)
			e = -EXP_CLAMP;
		snprintf(buf, sizeof(buf), "0.%.*s%se%lld", (int)n->nd, n->digits,
			 n->sticky ? "1" : "", (long long)e);
		errno = 0;
		v = strtod(buf, NULL);
		if (v == HUGE_VAL && errno == ERANGE)
			return jfail(j, at, rep, "real number overflow");
	}
	value_done(j);
	return 0;
}

/* One byte of a number; 1 when the byte is not part of it (the number is
 * then complete and the byte must be looked at again), 0 when consumed. */
static int num_byte(struct json *j, unsigned char c, uint64_t at, struct sbx_media_report *rep)
{
	struct jnum *n = &j->num;
	bool digit = c >= '0' && c <= '9';

	switch (n->phase) {
	case N_MINUS:
		if (!digit)
			return jfail(j, at, rep, "invalid number");
		n->phase = c == '0' ? N_ZERO : N_INT;
		num_digit(n, c);
		return 0;
	case N_ZERO:
		if (digit)
			return jfail(j, at, rep, "invalid number (leading zero)");
		/* fall through */
	case N_INT:
		if (digit) {
			num_digit(n, c);
			return 0;
		}
		if (c == '.') {
			n->phase = N_DOT, n->real = true;
			return 0;
		}
		if (c == 'e' || c == 'E') {
			n->phase = N_E, n->real = true;
			return 0;
		}
		break;
	case N_DOT:
	case N_FRAC:
		if (digit) {
			num_digit(n, c);
			n->frac++;
			n->phase = N_FRAC;
			return 0;
		}
		if (n->phase == N_DOT)
			return jfail(j, at, rep, "invalid number");
		if (c == 'e' || c == 'E') {
			n->phase = N_E;
			return 0;
		}
		break;
	case N_E:
		if (c == '+' || c == '-') {
			n->eneg = c == '-';
			n->phase = N_ESIGN;
			return 0;
		}
		/* fall through */
	case N_ESIGN:
	case N_EXP:
		if (digit) {
			if (n->exp < EXP_CLAMP)
				n->exp = n->exp * 10 + (uint64_t)(c - '0');
			n->phase = N_EXP;
			return 0;
		}
		if (n->phase != N_EXP)
			return jfail(j, at, rep, "invalid number");
		break;
	}
	if (num_end(j, at, rep) < 0)
		return -1;
	return 1;
}

/* --- the machine --------------------------------------------------------------- */

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Bytes that end the plain run of a string. */
static const bool string_special[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
	[0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1, [0x0c] = 1, [0x0d] = 1,
	[0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1,
	[0x15] = 1, [0x16] = 1, [0x17] = 1, [0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1,
	[0x1c] = 1, [0x1d] = 1, [0x1e] = 1, [0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x7f] = 1,
	[0xc2] = 1,
};

static int start_value(struct json *j, unsigned char c, uint64_t at, struct sbx_media_report *rep)
{
	switch (c) {
	case '[':
	case '{':
		return push(j, (char)c, rep);
	case '"':
		j->state = J_STRING;
		j->is_key = false;
		return 0;
	case 't':
		j->lit = "true";
		break;
	case 'f':
		j->lit = "false";
		break;
	case 'n':
		j->lit = "null";
		break;
	default:
		if (c == '-' || (c >= '0' && c <= '9')) {
			memset(&j->num, 0, offsetof(struct jnum, digits));
			j->num.neg = c == '-';
			j->state = J_NUMBER;
			if (c == '-') {
				j->num.phase = N_MINUS;
			} else {
				j->num.phase = c == '0' ? N_ZERO : N_INT;
				num_digit(&j->num, c);
			}
			return 0;
		}
		return jfail(j, at, rep, "invalid token");
	}
	j->lit_pos = 1;
	j->state = J_LITERAL;
	return 0;
}

/* The four hex digits of a \u escape are in j->hex. */
static int escape_done(struct json *j, uint64_t at, struct sbx_media_report *rep)
{
	uint32_t v = j->hex;

	j->state = J_STRING;
	if (j->high) {
		if (v < 0xdc00 || v > 0xdfff)
			return jfail(j, at, rep, "invalid Unicode (high surrogate without a low one)");
		v = ((j->high - 0xd800) << 10) + (v - 0xdc00) + 0x10000;
		j->high = 0;
	} else if (v >= 0xd800 && v <= 0xdbff) {
		j->high = v;
		j->state = J_LOW_BS;
		return 0;
	} else if (v >= 0xdc00 && v <= 0xdfff) {
		return jfail(j, at, rep, "invalid Unicode (lone low surrogate)");
	} else if (v == 0) {
		return jfail(j, at, rep, "\\u0000 is not allowed");
	}
	string_cp(j, v, rep);
	return 0;
}

static int string_end(struct json *j, uint64_t at, struct sbx_media_report *rep)
{
	if (j->is_key) {
		j->state = J_COLON;
		return add_key(j, at, rep);
	}
	value_done(j);
	return 0;
}

static int json_chunk(struct json *j, const unsigned char *p, size_t n, uint64_t base,
		      unsigned char *prev, struct sbx_media_report *rep)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		uint64_t at = base + i;

		switch (j->state) {
		case J_STRING:
			if (!j->is_key && *prev != 0xc2) {
				/* The bulk of a string: nothing to decide until the next
				 * special byte (UTF-8 is checked by the caller). */
				size_t k = i;

				while (k < n && !string_special[p[k]])
					k++;
				if (k > i) {
					*prev = p[k - 1];
					i = k - 1;
					continue;
				}
			}
			if (c == '"') {
				if (string_end(j, at, rep) < 0)
					return -1;
			} else if (c == '\\') {
				j->state = J_ESCAPE;
			} else if (c < 0x20) {
				return jfail(j, at, rep, "control character in a string");
			} else {
				if (j->is_key)
					j->key_hash = hash_byte(j->key_hash, c);
				/* DEL, or the second byte of U+0080..U+009F (C1). */
				if (c == 0x7f || (*prev == 0xc2 && c >= 0x80 && c <= 0x9f))
					rep->flags |= SBX_MEDIA_FLAG_CONTROLS;
			}
			break;
		case J_ESCAPE: {
			static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
			const char *e = c ? strchr(from, c) : NULL;

			if (c == 'u') {
				j->state = J_HEX;
				j->hex_left = 4;
				j->hex = 0;
			} else if (e) {
				j->state = J_STRING;
				string_cp(j, (unsigned char)to[e - from], rep);
			} else {
				return jfail(j, at, rep, "invalid escape");
			}
			break;
		}
		case J_HEX: {
			int d = sbx_hex_digit(c);

			if (d < 0)
				return jfail(j, at, rep, "invalid escape");
			j->hex = j->hex << 4 | (uint32_t)d;
			if (--j->hex_left == 0 && escape_done(j, at, rep) < 0)
				return -1;
			break;
		}
		case J_LOW_BS:
			if (c != '\\')
				return jfail(j, at, rep, "invalid Unicode (high surrogate without a low one)");
			j->state = J_LOW_U;
			break;
		case J_LOW_U:
			if (c != 'u')
				return jfail(j, at, rep, "invalid Unicode (high surrogate without a low one)");
			j->state = J_HEX;
			j->hex_left = 4;
			j->hex = 0;
			break;
		case J_NUMBER: {
			int r = num_byte(j, c, at, rep);

			if (r < 0)
				return -1;
			if (r > 0)
				i--; /* the byte after the number, again in the new state */
			break;
		}
		case J_LITERAL:
			if (c != (unsigned char)j->lit[j->lit_pos])
				return jfail(j, at, rep, "invalid token");
			if (j->lit[++j->lit_pos] == '\0')
				value_done(j);
			break;
		default:
			if (is_ws(c)) {
				if (c == '\n')
					j->line++, j->line_start = at + 1;
				break;
			}
			switch (j->state) {
			case J_VALUE_OR_CLOSE:
				if (c == ']') {
					if (pop(j, c, at, rep) < 0)
						return -1;
					break;
				}
				/* fall through */
			case J_VALUE:
				if (start_value(j, c, at, rep) < 0)
					return -1;
				break;
			case J_KEY_OR_CLOSE:
				if (c == '}') {
					if (pop(j, c, at, rep) < 0)
						return -1;
					break;
				}
				/* fall through */
			case J_KEY:
				if (c != '"')
					return jfail(j, at, rep, "string or '}' expected");
				j->state = J_STRING;
				j->is_key = true;
				j->key_hash = HASH_SEED;
				break;
			case J_COLON:
				if (c != ':')
					return jfail(j, at, rep, "':' expected");
				j->state = J_VALUE;
				break;
			case J_AFTER:
				if (c == ',')
					j->state = j->stack[j->depth] == '[' ? J_VALUE : J_KEY;
				else if (c == ']' || c == '}') {
					if (pop(j, c, at, rep) < 0)
						return -1;
				} else
					return jfail(j, at, rep, j->stack[j->depth] == '['
									 ? "',' or ']' expected"
									 : "',' or '}' expected");
				break;
			case J_DONE:
				return jfail(j, at, rep, "end of file expected");
			default:
				return jfail(j, at, rep, "internal state error");
			}
		}
		*prev = c;
	}
	return 0;
}

int sbx_media_json_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	_cleanup_free_ struct json *j = sbx_xcalloc(1, sizeof(*j));
	struct sbx_media_utf8 u = { 0 };
	unsigned char prev = 0;
	int ret = 0;

	j->state = J_VALUE;
	for (;;) {
		uint64_t at = sbx_media_reader_tell(r);
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, SIZE_MAX);

		if (k < 0) {
			ret = sbx_media_fail(rep, "json: read error");
			goto out;
		}
		if (k == 0)
			break;
		if (sbx_media_text_feed("json", &u, p, (size_t)k, at, rep) < 0 ||
		    json_chunk(j, p, (size_t)k, at, &prev, rep) < 0) {
			ret = -1;
			goto out;
		}
	}
	if (sbx_media_text_end("json", &u, rep) < 0) {
		ret = -1;
		goto out;
	}
	if (j->state == J_NUMBER && num_end(j, size, rep) < 0) {
		ret = -1;
		goto out;
	}
	if (j->state != J_DONE)
		ret = jfail(j, size, rep, size == 0 ? "empty document" : "premature end of input");
out:
	free(j->keys);
	return ret;
}

/* --- application/x-ndjson ----------------------------------------------------------- */

/*
 * JSON Lines: every line is one JSON value, checked by the machine above
 * with the same rules (the state is reset at each line break, which a
 * valid value cannot hold outside whitespace); a line break ends the last
 * value or the file just ends after it.  An empty line is refused (readers
 * disagree on it), and so is a line longer than SBX_MEDIA_NDJSON_MAX_LINE,
 * so that no consumer that reads a line into memory is made to hold the
 * whole file.  An empty file holds no records and is valid.
 */
static int ndjson_line_end(struct json *j, uint64_t at, struct sbx_media_report *rep)
{
	if (j->state == J_NUMBER && num_end(j, at, rep) < 0)
		return -1;
	if (j->state == J_VALUE)
		return jfail(j, at, rep, "empty line");
	if (j->state != J_DONE)
		return jfail(j, at, rep, "the line ends inside a value");
	return 0;
}

static void ndjson_reset(struct json *j, uint64_t line_start)
{
	j->state = J_VALUE;
	j->depth = 0;
	j->nkeys = 0;
	j->line++;
	j->line_start = line_start;
}

int sbx_media_ndjson_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	_cleanup_free_ struct json *j = sbx_xcalloc(1, sizeof(*j));
	struct sbx_media_utf8 u = { 0 };
	unsigned char prev = 0;
	uint64_t records = 0;
	int ret = 0;

	j->what = "ndjson";
	j->state = J_VALUE;
	for (;;) {
		uint64_t at = sbx_media_reader_tell(r);
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, SIZE_MAX);
		size_t i = 0;

		if (k < 0) {
			ret = sbx_media_fail(rep, "ndjson: read error");
			goto out;
		}
		if (k == 0)
			break;
		if (sbx_media_text_feed("ndjson", &u, p, (size_t)k, at, rep) < 0) {
			ret = -1;
			goto out;
		}
		while (i < (size_t)k) {
			const unsigned char *nl = memchr(p + i, '\n', (size_t)k - i);
			size_t end = nl ? (size_t)(nl - p) : (size_t)k;

			if (json_chunk(j, p + i, end - i, at + i, &prev, rep) < 0) {
				ret = -1;
				goto out;
			}
			if (at + end - j->line_start > SBX_MEDIA_NDJSON_MAX_LINE) {
				ret = jfail(j, at + end, rep, "line longer than 16 MiB");
				goto out;
			}
			if (!nl)
				break;
			if (ndjson_line_end(j, at + end, rep) < 0) {
				ret = -1;
				goto out;
			}
			records++;
			ndjson_reset(j, at + end + 1);
			prev = '\n';
			i = end + 1;
		}
	}
	if (sbx_media_text_end("ndjson", &u, rep) < 0) {
		ret = -1;
		goto out;
	}
	/* The last line without a line break still counts. */
	if (size > j->line_start) {
		if (ndjson_line_end(j, size, rep) < 0) {
			ret = -1;
			goto out;
		}
		records++;
	}
	rep->rows = records;
out:
	free(j->keys);
	return ret;
}
