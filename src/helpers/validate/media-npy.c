/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-npy.c - code as data (Python pickles) and application/x-npy.
 *
 * A pickle is a program for Python's unpickler: loading one imports and
 * calls whatever it names (os.system included).  pickle.dump, joblib.dump,
 * torch.save and numpy.save of an object array all write one, and the
 * program that loads the output runs it.  So pickles are never promoted,
 * whatever the profile allows, and the reason says what to write instead
 * (SBX_MEDIA_PICKLE_REASON).  They are found
 *   - by content: the PROTO opcode (0x80) and a protocol of 2 to 5 at the
 *     head, which every pickle of protocol 2 and later starts with (the
 *     default since Python 3.0); a renamed pickle is found so too;
 *   - by name: .pkl, .pickle, .joblib, .dill and .npz, whatever the
 *     content (joblib compresses, an .npz is a ZIP of .npy whose object
 *     arrays are pickles, and protocols 0 and 1 are ASCII with no magic);
 *   - in a .npy: a header whose dtype is or holds an object ('O').
 * Protocol 0 and 1 pickles under a text name pass as text; they are text
 * too, and no loader takes a .txt or .csv for a pickle.
 *
 * application/x-npy without objects is accepted, as NumPy's format for
 * one array that loads with allow_pickle=False: "\x93NUMPY", version 1, 2
 * or 3, the header's length, then a Python dict literal with exactly the
 * keys descr, fortran_order and shape.  Accepted are a plain dtype
 * (byte order, a kind of b i u f c m M S U V and an item size; datetimes
 * with a [unit]), a shape of at most NPY_MAX_DIMS non-negative integers
 * and a data size that is exactly the product of the shape and the item
 * size.  Structured (record) dtypes are refused: Parquet is the format
 * for records.  The data is not read (any bytes are some number), except
 * for a ZIP end record near the end (sbx_media_zip_tail()).
 *
 * Reasons for pickles start "pickle:", the others "npy:".
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util.h"
#include "validate.h"

/* NumPy's own limit on dimensions (NPY_MAXDIMS is 32, 64 since 2.0). */
#define NPY_MAX_DIMS 64

const char *sbx_media_code_as_data(const unsigned char *head, size_t n, const char *name)
{
	static const char *const exts[] = { ".pkl", ".pickle", ".joblib", ".dill", ".npz" };
	static char what[40];
	size_t len = name ? strlen(name) : 0;

	if (n >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5) {
		snprintf(what, sizeof(what), "pickle protocol %u", head[1]);
		return what;
	}
	for (size_t i = 0; i < ARRAY_SIZE(exts); i++) {
		size_t e = strlen(exts[i]);

		if (len > e && strcasecmp(name + len - e, exts[i]) == 0) {
			snprintf(what, sizeof(what), "a %s file", exts[i]);
			return what;
		}
	}
	return NULL;
}

/* --- the .npy header ---------------------------------------------------------- */

struct hdr {
	const char *p, *end;
};

static void skip_ws(struct hdr *h)
{
	while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n'))
		h->p++;
}

static bool take(struct hdr *h, char c)
{
	skip_ws(h);
	if (h->p < h->end && *h->p == c) {
		h->p++;
		return true;
	}
	return false;
}

/* A quoted string ('...' or "...") without escapes into @buf. */
static bool string(struct hdr *h, char *buf, size_t cap)
{
	char q;
	size_t n = 0;

	skip_ws(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return false;
	q = *h->p++;
	while (h->p < h->end && *h->p != q) {
		if (*h->p == '\\' || n + 1 >= cap)
			return false;
		buf[n++] = *h->p++;
	}
	if (h->p >= h->end)
		return false;
	h->p++;
	buf[n] = '\0';
	return true;
}

/* Whether a dtype string names Python objects: 'O', '|O', '<O8'... */
static bool is_object(const char *s)
{
	if (*s == '<' || *s == '>' || *s == '|' || *s == '=')
		s++;
	if (*s++ != 'O')
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	return *s == '\0';
}

/* A plain dtype string: [<>|=]? kind size, datetimes with a [unit]. */
static int dtype_size(const char *s, uint64_t *item)
{
	uint64_t n = 0;
	char kind;

	if (*s == '<' || *s == '>' || *s == '|' || *s == '=')
		s++;
	kind = *s++;
	if (!kind || !strchr("biufcmMSUV", kind) || *s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		n = n * 10 + (uint64_t)(*s - '0');
		if (n > (1u << 30))
			return -1;
	}
	if ((kind == 'm' || kind == 'M') && *s == '[') {
		for (s++; (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9');
		     s++)
			;
		if (*s++ != ']')
			return -1;
	}
	if (*s || n == 0)
		return -1;
	/* 'U' counts characters of UCS-4. */
	*item = kind == 'U' ? n * 4 : n;
	return 0;
}

/* The object dtypes inside a structured descr (a list of tuples): any
 * quoted string that is an object dtype. */
static bool list_has_object(const char *p, const char *end)
{
	for (; p < end; p++) {
		const char *s;
		char q = *p;

		if (q != '\'' && q != '"')
			continue;
		s = ++p;
		while (p < end && *p != q)
			p++;
		if (p - s >= 1 && p - s <= 8) {
			char buf[9];

			memcpy(buf, s, (size_t)(p - s));
			buf[p - s] = '\0';
			if (is_object(buf))
				return true;
		}
	}
	return false;
}

int sbx_media_npy_header(const char *text, size_t len, uint64_t data, struct sbx_media_report *rep)
{
	struct hdr h = { text, text + len };
	char key[16], descr[32];
	bool seen_descr = false, seen_order = false, seen_shape = false;
	uint64_t item = 0, count = 1;
	unsigned dims = 0;

	if (!take(&h, '{'))
		return sbx_media_fail(rep, "npy: header is not a dict");
	while (!take(&h, '}')) {
		if (!string(&h, key, sizeof(key)) || !take(&h, ':'))
			return sbx_media_fail(rep, "npy: header: expected a quoted key");
		if (!strcmp(key, "descr") && !seen_descr) {
			seen_descr = true;
			skip_ws(&h);
			if (h.p < h.end && *h.p == '[') {
				if (list_has_object(h.p, h.end))
					return sbx_media_fail_code(rep, SBX_RC_CODE_AS_DATA, "pickle: npy structured dtype with "
								   "object fields: " SBX_MEDIA_PICKLE_REASON);
				return sbx_media_fail(rep, "npy: structured (record) dtype: not accepted; "
							   "write Parquet or CSV for records");
			}
			if (!string(&h, descr, sizeof(descr)))
				return sbx_media_fail(rep, "npy: header: descr is not a dtype string");
			if (is_object(descr))
				return sbx_media_fail_code(rep, SBX_RC_CODE_AS_DATA, "pickle: npy object array (dtype '%s'): "
							   SBX_MEDIA_PICKLE_REASON, descr);
			if (dtype_size(descr, &item) < 0)
				return sbx_media_fail(rep, "npy: header: unsupported dtype '%s'", descr);
		} else if (!strcmp(key, "fortran_order") && !seen_order) {
			seen_order = true;
			skip_ws(&h);
			if ((size_t)(h.end - h.p) >= 4 && !memcmp(h.p, "True", 4))
				h.p += 4;
			else if ((size_t)(h.end - h.p) >= 5 && !memcmp(h.p, "False", 5))
				h.p += 5;
			else
				return sbx_media_fail(rep, "npy: header: fortran_order is not True or False");
		} else if (!strcmp(key, "shape") && !seen_shape) {
			seen_shape = true;
			if (!take(&h, '('))
				return sbx_media_fail(rep, "npy: header: shape is not a tuple");
			while (!take(&h, ')')) {
				uint64_t d = 0;
				bool digits = false;

				skip_ws(&h);
				for (; h.p < h.end && *h.p >= '0' && *h.p <= '9'; h.p++) {
					if (d > (UINT64_MAX - 9) / 10)
						return sbx_media_fail(rep, "npy: header: shape overflows");
					d = d * 10 + (uint64_t)(*h.p - '0');
					digits = true;
				}
				if (!digits || ++dims > NPY_MAX_DIMS)
					return sbx_media_fail(rep, "npy: header: bad shape");
				if (d && count > UINT64_MAX / d)
					return sbx_media_fail(rep, "npy: header: shape overflows");
				count *= d;
				if (!take(&h, ',')) {
					if (!take(&h, ')'))
						return sbx_media_fail(rep, "npy: header: bad shape");
					break;
				}
			}
		} else {
			return sbx_media_fail(rep, "npy: header: unknown or repeated key '%s'", key);
		}
		if (take(&h, ','))
			continue;
		if (!take(&h, '}'))
			return sbx_media_fail(rep, "npy: header: expected , or }");
		break;
	}
	skip_ws(&h);
	if (h.p != h.end)
		return sbx_media_fail(rep, "npy: header: bytes after the dict");
	if (!seen_descr || !seen_order || !seen_shape)
		return sbx_media_fail(rep, "npy: header: needs descr, fortran_order and shape");
	if (count && item > UINT64_MAX / count)
		return sbx_media_fail(rep, "npy: header: shape overflows");
	if (count * item != data)
		return sbx_media_fail(rep, "npy: shape and dtype make %llu bytes of data, the file "
					   "has %llu",
				      (unsigned long long)(count * item), (unsigned long long)data);
	return 0;
}

int sbx_media_npy_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	_cleanup_free_ char *text = NULL;
	unsigned char pre[12];
	uint64_t hlen, start;

	if (sbx_media_reader_get(r, pre, 10) < 0 || memcmp(pre, "\x93NUMPY", 6) != 0)
		return sbx_media_fail(rep, "npy: bad magic");
	if (pre[6] == 1) {
		hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
		start = 10;
	} else if (pre[6] == 2 || pre[6] == 3) {
		if (sbx_media_reader_get(r, pre + 10, 2) < 0)
			return sbx_media_fail(rep, "npy: truncated header");
		hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
		       (uint64_t)pre[11] << 24;
		start = 12;
	} else {
		return sbx_media_fail(rep, "npy: unknown format version %u.%u", pre[6], pre[7]);
	}
	if (hlen > SBX_MEDIA_NPY_MAX_HEADER || hlen > size - start)
		return sbx_media_fail(rep, "npy: header of %llu bytes runs past the end or past %u",
				      (unsigned long long)hlen, SBX_MEDIA_NPY_MAX_HEADER);
	text = sbx_xmalloc((size_t)hlen + 1);
	if (sbx_media_reader_get(r, text, (size_t)hlen) < 0)
		return sbx_media_fail(rep, "npy: read error");
	text[hlen] = '\0';
	for (uint64_t i = 0; i < hlen; i++)
		if ((unsigned char)text[i] < 0x20 && text[i] != '\n' && text[i] != ' ')
			return sbx_media_fail(rep, "npy: header: control character");
	if (sbx_media_npy_header(text, (size_t)hlen, size - start - hlen, rep) < 0)
		return -1;
	return sbx_media_zip_tail(fd, size, "npy", rep);
}
