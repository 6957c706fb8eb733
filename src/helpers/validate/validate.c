/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * validate.c - media type detection, the extension table, the dispatcher
 * and the bounded reader the per-type validators share.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "mediatype.h"
#include "util.h"
#include "validate.h"

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
	{ "text/tab-separated-values", sbx_media_tsv_validate },
	{ "application/x-ndjson", sbx_media_ndjson_validate },
	{ "image/svg+xml", sbx_media_svg_validate },
	{ "text/html", sbx_media_html_validate },
	{ "text/markdown", sbx_media_markdown_validate },
	{ "application/vnd.apache.parquet", sbx_media_parquet_validate },
	{ "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", sbx_media_xlsx_validate },
	{ "application/vnd.openxmlformats-officedocument.wordprocessingml.document", sbx_media_docx_validate },
	{ "application/vnd.openxmlformats-officedocument.presentationml.presentation", sbx_media_pptx_validate },
	{ "image/webp", sbx_media_webp_validate },
	{ "text/x-tex", sbx_media_tex_validate },
	{ "application/x-npy", sbx_media_npy_validate },
};

static bool is_text_family(const char *type)
{
	/* SVG is XML, text by content: its validator decides. */
	return type && (strncmp(type, "text/", 5) == 0 || strcmp(type, "application/json") == 0 ||
			strcmp(type, "application/x-ndjson") == 0 ||
			strcmp(type, "image/svg+xml") == 0);
}

static bool is_ooxml(const char *type)
{
	return strcmp(type, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet") == 0 ||
	       strcmp(type, "application/vnd.openxmlformats-officedocument.wordprocessingml.document") == 0 ||
	       strcmp(type, "application/vnd.openxmlformats-officedocument.presentationml.presentation") == 0;
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
	if (n >= 12 && memcmp(head, "RIFF", 4) == 0 && memcmp(head + 8, "WEBP", 4) == 0)
		return "image/webp";
	/* NumPy's magic; a pickled (object) array is refused by the
	 * validator, with the reason for pickles. */
	if (n >= 6 && memcmp(head, "\x93NUMPY", 6) == 0)
		return "application/x-npy";
	by_name = sbx_media_type_for_name(name);
	/* "PAR1" is also four letters of text: a text file that starts with
	 * them stays text unless it is named .parquet. */
	if (n >= 4 && memcmp(head, "PAR1", 4) == 0 &&
	    ((by_name && strcmp(by_name, "application/vnd.apache.parquet") == 0) ||
	     !head_is_text(head, n, n < SBX_MEDIA_HEAD)))
		return "application/vnd.apache.parquet";
	/* A ZIP's local header: an Office Open XML package when the name
	 * says which one (its validator then checks that the parts say so
	 * too), application/zip when it is named .zip (its members are
	 * checked one by one, serve-zip.c); any other ZIP (.npz, .jar, no
	 * name) is not a type sbx knows. */
	if (n >= 4 && memcmp(head, "PK\3\4", 4) == 0)
		return by_name && (is_ooxml(by_name) || strcmp(by_name, "application/zip") == 0) ?
			       by_name : NULL;
	if (!head_is_text(head, n, n < SBX_MEDIA_HEAD))
		return NULL;
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

int sbx_media_fail_code(struct sbx_media_report *rep, const char *code, const char *fmt, ...)
{
	va_list ap;

	rep->code = code;
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

/* --- signatures of other formats ------------------------------------------- */

static const struct {
	const char *name;
	const char *bytes;
	unsigned char len;
	bool nocase; /* ASCII letters match either case */
	bool jpeg;
} sigs[] = {
	{ "ZIP local header", "PK\x03\x04", 4, false, false },
	{ "ZIP central directory", "PK\x01\x02", 4, false, false },
	{ "ZIP end record", "PK\x05\x06", 4, false, false },
	{ "PDF header", "%PDF-", 5, false, false },
	{ "PNG signature", "\x89PNG\r\n\x1a\n", 8, false, false },
	{ "JPEG SOI", "\xff\xd8\xff", 3, false, true },
	{ "GIF header", "GIF87a", 6, false, false },
	{ "GIF header", "GIF89a", 6, false, false },
	{ "7z header", "7z\xbc\xaf\x27\x1c", 6, false, false },
	{ "RAR header", "Rar!\x1a\x07", 6, false, false },
	{ "OLE2 header", "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 8, false, false },
	{ "ELF header", "\x7f" "ELF", 4, false, false },
	{ "HTML <script", "<script", 7, true, false },
	{ "HTML <html", "<html", 5, true, false },
	{ "HTML <!doctype", "<!doctype html", 14, true, false },
	{ "HTML <iframe", "<iframe", 7, true, false },
	{ "SVG <svg", "<svg", 4, true, false },
	{ "PHP <?php", "<?php", 5, true, false },
};
#define SIG_MAX 14

static bool sig_at(size_t k, const unsigned char *p)
{
	for (size_t i = 0; i < sigs[k].len; i++) {
		unsigned char a = p[i], b = (unsigned char)sigs[k].bytes[i];

		if (sigs[k].nocase && a >= 'A' && a <= 'Z')
			a = (unsigned char)(a - 'A' + 'a');
		if (a != b)
			return false;
	}
	return true;
}

/* First bytes of any signature: the scan's fast path skips all others. */
static bool sig_first[256];

void sbx_media_sigscan_init(struct sbx_media_sigscan *s, enum sbx_media_sigset set, uint64_t at)
{
	memset(s, 0, sizeof(*s));
	s->set = set;
	s->at = at;
	if (!sig_first['P'])
		for (size_t k = 0; k < ARRAY_SIZE(sigs); k++) {
			unsigned char c = (unsigned char)sigs[k].bytes[0];
			sig_first[c] = true;
			if (sigs[k].nocase && c >= 'a' && c <= 'z')
				sig_first[c - 'a' + 'A'] = true;
		}
}

/* Look for a signature starting at p[0..starts) with p[0..n) readable. */
static void sig_search(struct sbx_media_sigscan *s, const unsigned char *p, size_t starts,
		       size_t n, uint64_t at)
{
	for (size_t i = 0; i < starts && !s->found; i++) {
		if (!sig_first[p[i]])
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(sigs); k++) {
			if (sigs[k].len > n - i || (sigs[k].jpeg && s->set == SBX_SIG_NO_JPEG))
				continue;
			if (sig_at(k, p + i)) {
				s->found = sigs[k].name;
				s->found_at = at + i;
				break;
			}
		}
	}
}

bool sbx_media_sigscan_feed(struct sbx_media_sigscan *s, const unsigned char *p, size_t n)
{
	if (s->found)
		return true;
	if (n == 0)
		return false;
	if (s->ntail) {
		/* Signatures that straddle the previous piece and this one. */
		unsigned char buf[2 * SIG_MAX];
		size_t take = n < SIG_MAX ? n : SIG_MAX;

		memcpy(buf, s->tail, s->ntail);
		memcpy(buf + s->ntail, p, take);
		sig_search(s, buf, s->ntail, s->ntail + take, s->at - s->ntail);
	}
	/* A signature cut by the end of p is found with the next piece. */
	sig_search(s, p, n, n, s->at);
	if (n >= SIG_MAX - 1) {
		s->ntail = SIG_MAX - 1;
		memcpy(s->tail, p + n - s->ntail, s->ntail);
	} else {
		size_t keep = s->ntail + n > SIG_MAX - 1 ? SIG_MAX - 1 - n : s->ntail;

		memmove(s->tail, s->tail + s->ntail - keep, keep);
		memcpy(s->tail + keep, p, n);
		s->ntail = keep + n;
	}
	s->at += n;
	return s->found != NULL;
}

/* --- a ZIP reader's view ----------------------------------------------------- */

/*
 * Readers find a ZIP from its end: they search the tail backwards for the
 * end-of-central-directory signature and take the record there, and most
 * of them believe little of what it says.  Python's zipfile reads the
 * directory at "record minus directory size" and ignores the entry counts,
 * the disk numbers and a comment length that does not match (issue 23:
 * counts 0 and 1 were let through here and zipfile read an index.html);
 * Info-ZIP unzip carries on past inconsistent fields with a warning; Go's
 * archive/zip checks only the total count, against what it read; an older
 * libarchive seeking reader took a ZIP64 locator found on its own.  So no
 * field is trusted: any end record or ZIP64 locator signature in the
 * window is a ZIP a lenient reader may open, and the file is refused.
 *
 * The window, SBX_MEDIA_ZIP_TAIL, is the widest search of a reader that
 * extracts: Go's 65 KiB (Python's zipfile searches 65558 bytes in 3.11,
 * 65557 in newer versions; unzip 66000; libarchive 16 KiB; zipinfo
 * searches the whole file, but only lists).  A signature in the last 21
 * bytes has no room for a record and could not be read; it is refused
 * all the same, as the simpler rule.
 * A ZIP64 end record (PK\6\6) is not looked for: readers reach it only
 * through a locator, which is.  Nor are local headers: a reader that
 * finds them by scanning (libarchive's streaming reader, which skips
 * ahead to the next one) only starts on a file whose first bytes are a
 * ZIP signature, and PNG, JPEG, PDF and Parquet start with their own.
 *
 * The cost is a false refusal when compressed data near the end holds one
 * of the two signatures by chance: about 2 * 66560 / 2^32, 1 in 32000
 * files with 65 KiB of such data at the end.  Refusing is the safe way to
 * fail, and the message says why.
 */
int sbx_media_zip_tail(int fd, uint64_t size, const char *what, struct sbx_media_report *rep)
{
	size_t n = size < SBX_MEDIA_ZIP_TAIL ? (size_t)size : SBX_MEDIA_ZIP_TAIL;
	_cleanup_free_ unsigned char *buf = sbx_xmalloc(n ? n : 1);
	uint64_t off = size - n;
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(fd, buf + got, n - got, (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return sbx_media_fail(rep, "%s: read error", what);
		got += (size_t)k;
	}
	/* From the end, as readers search: the record they would take is the
	 * one reported. */
	for (size_t i = n < 4 ? 0 : n - 3; i-- > 0;) {
		if (buf[i] != 'P' || buf[i + 1] != 'K')
			continue;
		if (buf[i + 2] == 5 && buf[i + 3] == 6)
			return sbx_media_fail_code(rep, SBX_RC_POLYGLOT,
					      "%s: a ZIP end-of-central-directory record at offset %llu: "
					      "the file is also a ZIP archive",
					      what, (unsigned long long)(off + i));
		if (buf[i + 2] == 6 && buf[i + 3] == 7)
			return sbx_media_fail_code(rep, SBX_RC_POLYGLOT,
					      "%s: a ZIP64 end-of-central-directory locator at offset "
					      "%llu: the file is also a ZIP archive",
					      what, (unsigned long long)(off + i));
	}
	return 0;
}
