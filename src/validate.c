/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * validate.c - media type detection, the extension table, the dispatcher
 * and the bounded reader the per-type validators share.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util.h"
#include "validate.h"

static const struct {
	const char *ext;
	const char *type;
} extensions[] = {
	{ "png", "image/png" },   { "jpg", "image/jpeg" },	 { "jpeg", "image/jpeg" },
	{ "pdf", "application/pdf" }, { "csv", "text/csv" },	 { "json", "application/json" },
	{ "txt", "text/plain" },  { "log", "text/plain" },	 { "md", "text/plain" },
};

static const struct {
	const char *type;
	int (*validate)(int fd, uint64_t size, struct sbx_media_report *rep);
} validators[] = {
	{ "image/png", sbx_media_png_validate },
	{ "image/jpeg", sbx_media_jpeg_validate },
	{ "application/pdf", sbx_media_pdf_validate },
	{ "text/plain", sbx_media_text_validate },
	{ "text/csv", sbx_media_csv_validate },
	{ "application/json", sbx_media_json_validate },
};

const char *sbx_media_type_for_name(const char *name)
{
	const char *dot = name ? strrchr(name, '.') : NULL;

	/* ".png" alone is a hidden file without an extension. */
	if (!dot || dot == name || strchr(dot, '/'))
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(extensions); i++)
		if (strcasecmp(dot + 1, extensions[i].ext) == 0)
			return extensions[i].type;
	return NULL;
}

static bool is_text_family(const char *type)
{
	return type && (strncmp(type, "text/", 5) == 0 || strcmp(type, "application/json") == 0);
}

/*
 * The head is text when it is UTF-8 without NUL; a multi-byte character cut
 * by the end of the head is fine as long as what is there is a valid prefix.
 */
static bool head_is_text(const unsigned char *head, size_t n, bool whole_file)
{
	struct sbx_media_utf8 u = { 0 };

	for (size_t i = 0; i < n; i++)
		if (head[i] == 0 || !sbx_media_utf8_feed(&u, head[i]))
			return false;
	return !whole_file || sbx_media_utf8_end(&u);
}

const char *sbx_media_detect(const unsigned char *head, size_t n, const char *name)
{
	static const unsigned char png[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	const char *by_name;

	if (n >= sizeof(png) && memcmp(head, png, sizeof(png)) == 0)
		return "image/png";
	if (n >= 3 && head[0] == 0xff && head[1] == 0xd8 && head[2] == 0xff)
		return "image/jpeg";
	if (n >= 5 && memcmp(head, "%PDF-", 5) == 0)
		return "application/pdf";
	if (!head_is_text(head, n, n < SBX_MEDIA_HEAD))
		return NULL;
	by_name = sbx_media_type_for_name(name);
	return is_text_family(by_name) ? by_name : "text/plain";
}

int sbx_media_validate(const char *type, int fd, uint64_t size, struct sbx_media_report *rep)
{
	memset(rep, 0, sizeof(*rep));
	for (size_t i = 0; i < ARRAY_SIZE(validators); i++)
		if (type && strcmp(type, validators[i].type) == 0)
			return validators[i].validate(fd, size, rep);
	return sbx_media_fail(rep, "no validator for media type %s", type ? type : "(unknown)");
}

int sbx_media_fail(struct sbx_media_report *rep, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep->reason, sizeof(rep->reason), fmt, ap);
	va_end(ap);
	return -1;
}

/* --- the reader ----------------------------------------------------------- */

struct sbx_media_reader *sbx_media_reader_new(int fd, uint64_t size)
{
	struct sbx_media_reader *r = sbx_xcalloc(1, sizeof(*r));

	r->fd = fd;
	r->size = size;
	return r;
}

uint64_t sbx_media_reader_tell(const struct sbx_media_reader *r)
{
	return r->off + r->pos;
}

uint64_t sbx_media_reader_left(const struct sbx_media_reader *r)
{
	return r->size - sbx_media_reader_tell(r);
}

/* Refill when the buffer is used up: 1 with data, 0 at the end, -1 on error. */
static int fill(struct sbx_media_reader *r)
{
	uint64_t at = sbx_media_reader_tell(r);
	size_t want;
	ssize_t got;

	if (r->pos < r->len)
		return 1;
	if (r->error)
		return -1;
	if (at >= r->size)
		return 0;
	want = sizeof(r->buf);
	if (r->size - at < want)
		want = (size_t)(r->size - at);
	do
		got = pread(r->fd, r->buf, want, (off_t)at);
	while (got < 0 && errno == EINTR);
	if (got <= 0) {
		/* A file shorter than its recorded size is as bad as a read error. */
		r->error = true;
		r->errnum = got < 0 ? errno : EIO;
		return -1;
	}
	r->off = at;
	r->pos = 0;
	r->len = (size_t)got;
	return 1;
}

int sbx_media_reader_byte(struct sbx_media_reader *r)
{
	if (fill(r) <= 0)
		return -1;
	return r->buf[r->pos++];
}

ssize_t sbx_media_reader_chunk(struct sbx_media_reader *r, const unsigned char **p, size_t max)
{
	int k = fill(r);
	size_t n;

	if (k <= 0)
		return k;
	n = r->len - r->pos;
	if (n > max)
		n = max;
	*p = r->buf + r->pos;
	r->pos += n;
	return (ssize_t)n;
}

int sbx_media_reader_get(struct sbx_media_reader *r, void *dst, size_t n)
{
	unsigned char *d = dst;

	if (sbx_media_reader_left(r) < n)
		return -1;
	while (n > 0) {
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, n);

		if (k <= 0)
			return -1;
		memcpy(d, p, (size_t)k);
		d += k;
		n -= (size_t)k;
	}
	return 0;
}

int sbx_media_reader_skip(struct sbx_media_reader *r, uint64_t n)
{
	uint64_t in_buf = r->len - r->pos;

	if (sbx_media_reader_left(r) < n)
		return -1;
	if (n <= in_buf) {
		r->pos += (size_t)n;
		return 0;
	}
	/* Jump: the next fill() reads from the new offset. */
	r->off = sbx_media_reader_tell(r) + n;
	r->pos = 0;
	r->len = 0;
	return 0;
}

/* --- streaming UTF-8 ------------------------------------------------------- */

size_t sbx_media_ascii_span(const unsigned char *p, size_t n)
{
	const uint64_t high = 0x8080808080808080ull, ones = 0x0101010101010101ull;
	size_t i = 0;

	/* A word passes when no byte has the top bit set and none is zero. */
	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, sizeof(w));
		if ((w & high) || ((w - ones) & ~w & high))
			break;
	}
	while (i < n && p[i] && p[i] < 0x80)
		i++;
	return i;
}

bool sbx_media_utf8_end(const struct sbx_media_utf8 *u)
{
	return !u->bad && u->need == 0;
}

/* --- flags ------------------------------------------------------------------ */

const char *sbx_media_flag_name(unsigned i)
{
	static const char *const names[SBX_MEDIA_FLAG_COUNT] = {
		"terminal_controls",
		"terminal_colors",
	};

	return i < SBX_MEDIA_FLAG_COUNT ? names[i] : NULL;
}
