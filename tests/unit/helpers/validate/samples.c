/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * samples.c - sample files for the validator tests, built here rather than
 * stored: PNGs with CRCs from a bitwise CRC-32 written independently of the
 * validator's table version, JPEG marker streams, text, CSV and JSON
 * strings, and PDF skeletons.  The tests of more than one program use the
 * same samples (detection meets every type), hence a file of their own.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "samples.h"
#include "util.h"
#include "validate.h"

/* Appends grow the buffer geometrically: the bounds tests append a million
 * keys, and a realloc per append is quadratic (minutes under ASan). */
void put(struct buf *b, const void *d, size_t n)
{
	if (n == 0)
		return;
	if (b->n + n > b->cap) {
		b->cap = b->n + n > 2 * b->cap ? b->n + n : 2 * b->cap;
		b->p = sbx_xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void put8(struct buf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;
	put(b, &c, 1);
}

static void put16(struct buf *b, unsigned v)
{
	put8(b, v >> 8);
	put8(b, v);
}

static void put32(struct buf *b, uint32_t v)
{
	put16(b, v >> 16);
	put16(b, v & 0xffff);
}

/* Bitwise CRC-32 (PNG/zlib polynomial), deliberately not table driven. */
static uint32_t crc32_bits(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return c ^ 0xffffffffu;
}

static void png_chunk(struct buf *b, const char *type, const void *data, size_t len)
{
	struct buf tmp = { 0 };

	put32(b, (uint32_t)len);
	put(&tmp, type, 4);
	if (len)
		put(&tmp, data, len);
	put(b, tmp.p, tmp.n);
	put32(b, crc32_bits(tmp.p, tmp.n));
	free(tmp.p);
}

static void png_sig(struct buf *b)
{
	put(b, "\x89PNG\r\n\x1a\n", 8);
}

static void png_ihdr(struct buf *b, uint32_t w, uint32_t h, unsigned depth, unsigned color)
{
	struct buf d = { 0 };

	put32(&d, w);
	put32(&d, h);
	put8(&d, depth);
	put8(&d, color);
	put8(&d, 0);
	put8(&d, 0);
	put8(&d, 0);
	png_chunk(b, "IHDR", d.p, d.n);
	free(d.p);
}

/* Bytes standing in for a zlib stream: the validator does not inflate. */
static const unsigned char idat[] = { 0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01 };

/* A small ZIP: a local header, data, and an end record a reader takes. */
void put_zip(struct buf *b)
{
	put(b, "PK\x03\x04\x14\x00\x00\x00\x00\x00", 10);
	puts_(b, "hidden archive entry data ........................................");
	put(b, "PK\x01\x02\x14\x00", 6);
	put(b, "PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00\x2e\x00\x00\x00\x10\x00\x00\x00"
	       "\x00\x00", 22);
}

static void put16le(struct buf *b, unsigned v)
{
	put8(b, v & 0xff);
	put8(b, v >> 8 & 0xff);
}

static void put32le(struct buf *b, uint32_t v)
{
	put16le(b, v & 0xffff);
	put16le(b, v >> 16);
}

static void put64le(struct buf *b, uint64_t v)
{
	put32le(b, (uint32_t)v);
	put32le(b, (uint32_t)(v >> 32));
}

const char *const zip_end_what[ZIP_END_VARIANTS] = {
	[ZIP_END_COUNTS_0_1] = "ZIP end record, counts 0 and 1",
	[ZIP_END_COUNTS_1_0] = "ZIP end record, counts 1 and 0",
	[ZIP_END_DISKS] = "ZIP end record of disk 3, directory on disk 7",
	[ZIP_END_COMMENT_LONG] = "ZIP end record, comment length past the end",
	[ZIP_END_COUNTS_FFFF] = "ZIP end record, counts 0xffff and 1",
	[ZIP_END_ZIP64] = "ZIP64 end record and locator, end record of sentinels",
	[ZIP_END_CD_ELSEWHERE] = "ZIP end record, directory elsewhere",
	[ZIP_END_ZIP64_ONLY] = "ZIP64 end record and locator, no end record",
};

const char *zip_end_reason(enum zip_end_variant v)
{
	return v == ZIP_END_ZIP64_ONLY ? "a ZIP64 end-of-central-directory locator at offset"
				       : "a ZIP end-of-central-directory record at offset";
}

void check_zip_ends(const char *type, struct buf (*mk)(int), int no_ff)
{
	for (int v = 0; v < ZIP_END_VARIANTS; v++) {
		char what[128];
		struct vcase c = {
			.what = what, .type = type, .make = mk, .arg = v, .expect = -1,
			.reason = zip_end_reason((enum zip_end_variant)v), .formula = -1,
		};

		if (no_ff && zip_end_has_ff((enum zip_end_variant)v))
			continue;
		snprintf(what, sizeof(what), "%s: %s", type, zip_end_what[v]);
		check_vcases(&c, 1);
	}
}

int zip_end_has_ff(enum zip_end_variant v)
{
	return v == ZIP_END_COUNTS_FFFF || v == ZIP_END_ZIP64;
}

/* A stored index.html, its directory entry, and the end of @v; offsets
 * relative to the ZIP's first byte, as a ZIP appended to a file has them
 * (readers add the difference). */
void put_zip_end(struct buf *b, enum zip_end_variant v)
{
	static const char name[] = "index.html";
	static const char data[] = "<html><script>alert(document.cookie)</script></html>\n";
	const size_t nlen = sizeof(name) - 1, dlen = sizeof(data) - 1;
	const uint32_t crc = crc32_bits((const unsigned char *)data, dlen);
	const size_t start = b->n;
	uint32_t cd_off, cd_size;
	unsigned disk = 0, cd_disk = 0, here = 1, all = 1, comment = 0;

	/* local file header: version 2.0, stored, 1980-01-01 */
	put(b, "PK\x03\x04", 4);
	put16le(b, 20);
	put16le(b, 0);
	put16le(b, 0);
	put16le(b, 0);
	put16le(b, 0x21);
	put32le(b, crc);
	put32le(b, (uint32_t)dlen);
	put32le(b, (uint32_t)dlen);
	put16le(b, (unsigned)nlen);
	put16le(b, 0);
	put(b, name, nlen);
	put(b, data, dlen);
	/* central directory header */
	cd_off = (uint32_t)(b->n - start);
	put(b, "PK\x01\x02", 4);
	put16le(b, 20);
	put16le(b, 20);
	put16le(b, 0);
	put16le(b, 0);
	put16le(b, 0);
	put16le(b, 0x21);
	put32le(b, crc);
	put32le(b, (uint32_t)dlen);
	put32le(b, (uint32_t)dlen);
	put16le(b, (unsigned)nlen);
	put16le(b, 0);
	put16le(b, 0);
	put16le(b, 0);
	put16le(b, 0);
	put32le(b, 0);
	put32le(b, 0);
	put(b, name, nlen);
	cd_size = (uint32_t)(b->n - start) - cd_off;

	if (v == ZIP_END_ZIP64 || v == ZIP_END_ZIP64_ONLY) {
		uint64_t rec = b->n - start;

		/* ZIP64 end of central directory record (44 bytes after its
		 * size field), then its locator */
		put(b, "PK\x06\x06", 4);
		put64le(b, 44);
		put16le(b, 45);
		put16le(b, 45);
		put32le(b, 0);
		put32le(b, 0);
		put64le(b, 1);
		put64le(b, 1);
		put64le(b, cd_size);
		put64le(b, cd_off);
		put(b, "PK\x06\x07", 4);
		put32le(b, 0);
		put64le(b, rec);
		put32le(b, 1);
		if (v == ZIP_END_ZIP64_ONLY)
			return;
	}
	switch (v) {
	case ZIP_END_COUNTS_0_1:
		here = 0;
		break;
	case ZIP_END_COUNTS_1_0:
		all = 0;
		break;
	case ZIP_END_DISKS:
		disk = 3, cd_disk = 7;
		break;
	case ZIP_END_COMMENT_LONG:
		here = 0, comment = 0x1234;
		break;
	case ZIP_END_COUNTS_FFFF:
		here = 0xffff;
		break;
	case ZIP_END_ZIP64:
		here = 0xffff, all = 0, cd_off = cd_size = 0xffffffffu;
		break;
	case ZIP_END_CD_ELSEWHERE:
		cd_off = 0x10203040, cd_size = 0x00345678;
		break;
	default:
		break;
	}
	put(b, "PK\x05\x06", 4);
	put16le(b, disk);
	put16le(b, cd_disk);
	put16le(b, here);
	put16le(b, all);
	put32le(b, cd_size);
	put32le(b, cd_off);
	put16le(b, comment);
}

static struct buf png_of(enum png_variant v, int zip_end);

struct buf make_png(enum png_variant v)
{
	return png_of(v, -1);
}

/* @zip_end: a zip_end_variant to put in the image data, or -1. */
static struct buf png_of(enum png_variant v, int zip_end)
{
	struct buf b = { 0 };

	if (v == PNG_NO_SIGNATURE)
		put(&b, "\x89PNG\r\n\x1a\r", 8);
	else
		png_sig(&b);
	if (v == PNG_IHDR_NOT_FIRST)
		png_chunk(&b, "tEXt", "a\0b", 3);
	png_ihdr(&b, v == PNG_HUGE ? 100000 : v == PNG_ZERO_WIDTH ? 0 : 1, v == PNG_HUGE ? 100000 : 1,
		 v == PNG_BAD_DEPTH ? 4 : 8,
		 v == PNG_PALETTE || v == PNG_PALETTE_NO_PLTE ? 3 : v == PNG_BAD_DEPTH ? 2 : 6);
	if (v == PNG_PALETTE)
		png_chunk(&b, "PLTE", "\xff\x00\x00", 3);
	if (v == PNG_UNKNOWN_CRITICAL)
		png_chunk(&b, "ABCD", "x", 1);
	if (v == PNG_ZIP_UNKNOWN_CHUNK || v == PNG_ZIP_IN_TEXT || v == PNG_HTML_IN_ITXT ||
	    v == PNG_SMALL_PRIVATE || v == PNG_EXIF_THUMB) {
		struct buf d = { 0 };

		if (v == PNG_ZIP_UNKNOWN_CHUNK) {
			put_zip(&d);
			while (d.n < 300)
				put8(&d, 0);
		} else if (v == PNG_ZIP_IN_TEXT) {
			put(&d, "Comment\0", 8);
			put_zip(&d);
		} else if (v == PNG_HTML_IN_ITXT) {
			put(&d, "Comment\0\0\0\0\0", 12);
			puts_(&d, "<html><SCRIPT>alert(1)</script></html>");
		} else if (v == PNG_SMALL_PRIVATE) {
			put(&d, "\x00\x00\x00\x01\x00\x00\x00\x01\x00", 9);
		} else {
			put(&d, "MM\x00\x2a\x00\x00\x00\x08", 8);
			put(&d, "\xff\xd8\xff\xe0 thumbnail \xff\xd9", 17);
		}
		png_chunk(&b, v == PNG_ZIP_UNKNOWN_CHUNK ? "zIPp"
			      : v == PNG_ZIP_IN_TEXT	 ? "tEXt"
			      : v == PNG_HTML_IN_ITXT	 ? "iTXt"
			      : v == PNG_SMALL_PRIVATE	 ? "vpAg"
						 : "eXIf",
			  d.p, d.n);
		free(d.p);
	}
	if (v == PNG_HUGE_LENGTH) {
		put32(&b, 0x7fffffffu);
		puts_(&b, "IDAT");
	}
	if (v == PNG_BIG_IDAT) {
		/* Larger than the reader's buffer: the CRC is streamed. */
		size_t n = 200000;
		unsigned char *big = sbx_xmalloc(n);
		for (size_t i = 0; i < n; i++)
			big[i] = (unsigned char)(i * 7 + 3);
		png_chunk(&b, "IDAT", big, n);
		free(big);
	} else if (v == PNG_ZIP_IN_IDAT || v == PNG_SIG_IN_IDAT || zip_end >= 0) {
		/* What a stored deflate block would carry through as pixels. */
		struct buf d = { 0 };

		put(&d, idat, sizeof(idat));
		if (zip_end >= 0)
			put_zip_end(&d, (enum zip_end_variant)zip_end);
		else if (v == PNG_ZIP_IN_IDAT)
			put_zip(&d);
		else
			put(&d, "PK\x03\x04 by chance", 14);
		png_chunk(&b, "IDAT", d.p, d.n);
		free(d.p);
	} else if (v != PNG_NO_IDAT) {
		png_chunk(&b, "IDAT", idat, sizeof(idat));
	}
	if (v == PNG_SPLIT_IDAT) {
		png_chunk(&b, "tEXt", "a\0b", 3);
		png_chunk(&b, "IDAT", idat, sizeof(idat));
	}
	png_chunk(&b, "IEND", NULL, 0);
	if (v == PNG_BAD_CRC)
		b.p[b.n - 20] ^= 0x01; /* a byte of IDAT's data */
	if (v == PNG_TRUNCATED)
		b.n -= 5;
	if (v == PNG_AFTER_IEND)
		puts_(&b, "<script>alert(1)</script>");
	return b;
}

static void jpeg_segment(struct buf *b, unsigned marker, const struct buf *d)
{
	put16(b, marker);
	put16(b, (unsigned)d->n + 2);
	put(b, d->p, d->n);
}

static void jpeg_sof(struct buf *b, unsigned marker, unsigned w, unsigned h)
{
	put16(b, marker);
	put16(b, 8 + 3 * 3);
	put8(b, 8);
	put16(b, h);
	put16(b, w);
	put8(b, 3);
	for (unsigned c = 1; c <= 3; c++) {
		put8(b, c);
		put8(b, 0x11);
		put8(b, 0);
	}
}

static void jpeg_sos(struct buf *b)
{
	put16(b, 0xffda);
	put16(b, 6 + 2 * 3);
	put8(b, 3);
	for (unsigned c = 1; c <= 3; c++) {
		put8(b, c);
		put8(b, 0);
	}
	put8(b, 0);
	put8(b, 63);
	put8(b, 0);
	/* Entropy-coded data with a stuffed 0xFF and a restart marker. */
	put(b, "\x12\x34\xff\x00\x56\xff\xd0\x78\x9a", 9);
}

/* @zip_end: a zip_end_variant to put after the scan's data, or -1. */
static struct buf make_jpeg(enum jpeg_variant v, int zip_end)
{
	struct buf b = { 0 };
	unsigned char q[64];

	if (v != JPEG_NO_SOI)
		put16(&b, 0xffd8);
	put16(&b, 0xffe0);
	put16(&b, 16);
	put(&b, "JFIF\0\x01\x01\x00\x00\x01\x00\x01\x00\x00", 14);
	memset(q, 1, sizeof(q));
	put16(&b, 0xffdb);
	put16(&b, 67);
	put8(&b, 0);
	put(&b, q, sizeof(q));
	if (v == JPEG_SOS_FIRST)
		jpeg_sos(&b);
	if (v == JPEG_BAD_LENGTH) {
		put16(&b, 0xfffe);
		put16(&b, 60000);
		puts_(&b, "short comment");
	}
	if (v >= JPEG_ZIP_IN_COM && v <= JPEG_EXIF_THUMB) {
		struct buf d = { 0 };
		unsigned marker = 0xfffe;

		if (v == JPEG_ZIP_IN_COM) {
			puts_(&d, "comment ");
			put_zip(&d);
		} else if (v == JPEG_HTML_IN_APP) {
			marker = 0xffed;
			puts_(&d, "Photoshop 3.0\n<!DOCTYPE html><p>hi");
		} else if (v == JPEG_PNG_IN_APP) {
			marker = 0xffe2;
			put(&d, "ICC_PROFILE\0\x01\x01", 14);
			put(&d, "\x89PNG\r\n\x1a\n", 8);
		} else if (v == JPEG_JPEG_IN_COM) {
			put(&d, "x\xff\xd8\xff\xdb", 5);
		} else {
			marker = 0xffe1;
			put(&d, "Exif\0\0MM\x00\x2a", 10);
			put(&d, "\xff\xd8\xff\xe0 thumbnail \xff\xd9", 17);
		}
		jpeg_segment(&b, marker, &d);
		free(d.p);
	}
	jpeg_sof(&b, v == JPEG_PROGRESSIVE ? 0xffc2 : 0xffc0, v == JPEG_HUGE ? 65535 : 1,
		 v == JPEG_HUGE ? 65535 : v == JPEG_ZERO_HEIGHT ? 0 : 1);
	if (v == JPEG_TWO_SOF)
		jpeg_sof(&b, 0xffc0, 1, 1);
	jpeg_sos(&b);
	if (v == JPEG_PROGRESSIVE) {
		/* A table between scans, then a second scan. */
		put16(&b, 0xffc4);
		put16(&b, 2 + 17 + 1);
		put8(&b, 0);
		put8(&b, 1);
		for (int i = 0; i < 15; i++)
			put8(&b, 0);
		put8(&b, 0);
		jpeg_sos(&b);
	}
	if (v == JPEG_SIG_IN_SCAN || v == JPEG_ZIP_IN_SCAN) {
		/* More entropy-coded data (no 0xFF inside) after the scan's. */
		if (v == JPEG_ZIP_IN_SCAN)
			put_zip(&b);
		else
			put(&b, "PK\x03\x04", 4);
	}
	if (zip_end >= 0)
		put_zip_end(&b, (enum zip_end_variant)zip_end);
	if (v != JPEG_NO_EOI)
		put16(&b, 0xffd9);
	if (v == JPEG_AFTER_EOI)
		puts_(&b, "PK\x03\x04 hidden zip");
	return b;
}

struct buf text(const char *s, size_t n)
{
	struct buf b = { 0 };
	put(&b, s, n);
	return b;
}

static struct buf pdf(const char *version, const char *tail)
{
	struct buf b = { 0 };

	puts_(&b, version);
	puts_(&b, "\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
		  "2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\n"
		  "xref\n0 3\n0000000000 65535 f \n0000000015 00000 n \n0000000074 00000 n \n"
		  "trailer\n<< /Size 3 /Root 1 0 R >>\n");
	puts_(&b, tail);
	return b;
}

/* The file the validator reads: a memfd, as in the fuzzers. */
int memfd_of(const struct buf *b)
{
	int fd = memfd_create("sample", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, b->p, b->n), (ssize_t)b->n);
	return fd;
}

struct buf mk_png(int v) { return make_png((enum png_variant)v); }
struct buf mk_jpeg(int v) { return make_jpeg((enum jpeg_variant)v, -1); }
struct buf mk_png_zip_end(int v) { return png_of(PNG_GOOD, v); }
struct buf mk_jpeg_zip_end(int v) { return make_jpeg(JPEG_GOOD, v); }

static const char *const texts[] = {
	/* 0 */ "plain text, caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n",
	/* 1 */ "nul \0 inside",
	/* 2 */ "bad \xff byte",
	/* 3 */ "overlong \xc0\xaf slash",
	/* 4 */ "surrogate \xed\xa0\x80",
	/* 5 */ "cut at the end \xe2\x82",
	/* 6 */ "a,b,c\r\n1,\"two, with comma\",3\r\n\"multi\nline\",\"q\"\"uote\",x\r\n",
	/* 7 */ "a,b,c\n1,2,3\n4,5\n",
	/* 8 */ "a,b\n\"=cmd|' /C calc'!A0\",2\n",
	/* 9 */ "a,b\n1,+2\n",
	/* 10 */ "a,b\n@SUM(1),2\n",
	/* 11 */ "a,b\n-1,2\n",
	/* 12 */ "a,b\n\"\tx\",2\n",
	/* 13 */ "a,b\nx\"y,2\n",
	/* 14 */ "a,b\n\"open,2\n",
	/* 15 */ "a,b\rc,d\n",
	/* 16 */ "a,b\n1,2",
	/* 17 */ "a,b\n\"x\"y,2\n",
	/* 18 */ "a,b\n1,\0\n",
	/* 19 */ "{\"a\": [1, 2, {\"b\": null}], \"c\": \"\xc3\xa9\"}",
	/* 20 */ "{\"a\": 1,}",
	/* 21 */ "{\"a\": 1, \"a\": 2}",
	/* 22 */ "42",
	/* 23 */ "{\"s\": \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"}",
	/* 24 */ "{\"a\": \"\xff\"}",
	/* 25 */ "",
	/* 26 */ "{\"a\": \"\\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"}",
	/* 27 */ "a,b\n1,2\n\n",
	/* 28 */ "0123456789abcdef0123456789abcdef01234\0tail",
	/* 29 */ "0123456789abcdef0123456789abcdef01234\xc3\xa9 then \x80 bad",
	/* CSV separators and formula leads */
	/* 30 */ "sep=;\na;b\n1;=cmd\n",
	/* 31 */ "a;b\n1;=cmd\n",
	/* 32 */ "a\tb\n1\t=cmd\n",
	/* 33 */ "a,b\n1,\xef\xbc\x9d" "cmd\n",
	/* 34 */ "a,b\n1, =1+1\n",
	/* 35 */ "a,b\n1,\" @SUM(A1)\"\n",
	/* 36 */ "a,b\n1;=x,2\n",
	/* 37 */ "a;b\n1,5;2,5\n",
	/* 38 */ "sep=;\r\na;b\r\n1,5;2\r\n",
	/* 39 */ "a,b\n1,\xef\xbc\x8b" "1\n",
	/* 40 */ "a,b\n1,\xef\xbc\xa0" "SUM\n",
	/* 41 */ "a,b\n1,  -2\n",
	/* terminal controls */
	/* 42 */ "a,b\n1,\x1b]52;c;Zm9v\x07\n",
	/* 43 */ "a,b\n1,\x7f\n",
	/* 44 */ "a,b\n1,\xc2\x9b" "2J\n",
	/* 45 */ "a,b\n1,x\x08\n",
	/* 46 */ "hello \x1b[31mred\x1b[0m and \x1b[38;5;196mmore\x1b[m\n",
	/* 47 */ "copy \x1b]52;c;ZWNobyBwd25lZA==\x07 done\n",
	/* 48 */ "\x1b[2J\x1b[Hclean screen\n",
	/* 49 */ "safe\b\b\b\bevil\n",
	/* 50 */ "\xc2\x9d" "52;c;eA==\xc2\x9c\n",
	/* 51 */ "DEL \x7f\n",
	/* 52 */ "tab\tcr\r\nlf\n\xc2\xa0nbsp \xc3\x85\n",
	/* 53 */ "cut \x1b[3",
	/* 54 */ "\x1b[1111111111111111111111111111111111111111111111111111111111111111111m",
	/* 55 */ "bell \x07\n",
	/* 56 */ "[\"\\u001b[31m\"]",
	/* 57 */ "[\"\x7f\"]",
	/* 58 */ "{\"k\\u0085\": \"\xc2\x85\"}",
	/* 59 */ "[\"plain \\u00e9\\n\"]",
	/* HTML and XML dressed as text */
	/* 60 */ "<!DOCTYPE html><html><script>alert(1)</script></html>\n",
	/* 61 */ " \r\n<SCRIPT>fetch('//192.0.2.1/')</SCRIPT>\n",
	/* 62 */ "<p>hello</p>\n",
	/* 63 */ "<?xml version=\"1.0\"?><svg onload=\"alert(1)\"/>",
	/* 64 */ "Use <script> tags with care.\n",
	/* 65 */ "<pre is not a tag we sniff\n",
	/* 66 */ "<html>,b\n1,2\n",
};
static const size_t text_len[] = {
	[1] = 12, [18] = 8, [28] = 42,
};

struct buf mk_text(int i)
{
	size_t n = (size_t)i < ARRAY_SIZE(text_len) && text_len[i] ? text_len[i] : strlen(texts[i]);
	return text(texts[i], n);
}

static const char *const pdfs[][2] = {
	/* 0 */ { "%PDF-1.7", "startxref\n140\n%%EOF\n" },
	/* 1 */ { "%PDF-2.0", "startxref\r\n140\r\n%%EOF" },
	/* 2 */ { "%PDF-3.1", "startxref\n140\n%%EOF\n" },
	/* 3 */ { "%PDF-1.4", "startxref\n140\n" },
	/* 4 */ { "%PDF-1.4", "startxref\n140\n%%EOF\n<html>trailing</html>" },
	/* 5 */ { "%PDF-1.4", "%%EOF\n" },
	/* 6 */ { "%PDF-1.4", "startxref\n999999\n%%EOF\n" },
	/* 7 */ { "%PDF-1.4", "startxref\n%%EOF\n" },
	/* 8 */ { "%PDF1.4x", "startxref\n140\n%%EOF\n" },
};

struct buf mk_pdf(int i)
{
	return pdf(pdfs[i][0], pdfs[i][1]);
}

void check_vcases(const struct vcase *vcases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct vcase *c = &vcases[i];
		struct buf b = c->make(c->arg);
		struct sbx_media_report rep;
		int fd = memfd_of(&b);
		int r = sbx_media_validate(c->type, fd, b.n, &rep);

		print_message("# %s: %s\n", c->what, r == 0 ? "valid" : rep.reason);
		assert_int_equal(r, c->expect);
		if (c->expect < 0) {
			assert_non_null(strstr(rep.reason, c->reason));
		} else {
			assert_string_equal(rep.reason, "");
			assert_int_equal(rep.flags, c->flags);
		}
		if (c->formula >= 0)
			assert_int_equal(rep.formula_cells, c->formula);
		close(fd);
		free(b.p);
	}
}
