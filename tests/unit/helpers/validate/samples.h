/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * samples.h - the sample files the validator tests build, and the shape
 * of a validator case with its runner.  Linked, with samples.c, into each
 * validator test program.
 */
#ifndef SBX_TEST_SAMPLES_H
#define SBX_TEST_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	unsigned char *p;
	size_t n, cap;
};

/* Append @n bytes, or the string @s, to @b. */
void put(struct buf *b, const void *d, size_t n);
void puts_(struct buf *b, const char *s);

enum png_variant {
	PNG_GOOD,
	PNG_PALETTE,
	PNG_HUGE,
	PNG_BAD_CRC,
	PNG_TRUNCATED,
	PNG_AFTER_IEND,
	PNG_IHDR_NOT_FIRST,
	PNG_BAD_DEPTH,
	PNG_ZERO_WIDTH,
	PNG_PALETTE_NO_PLTE,
	PNG_UNKNOWN_CRITICAL,
	PNG_NO_IDAT,
	PNG_SPLIT_IDAT,
	PNG_HUGE_LENGTH,
	PNG_BIG_IDAT,
	PNG_NO_SIGNATURE,
	PNG_ZIP_UNKNOWN_CHUNK,
	PNG_SMALL_PRIVATE,
	PNG_ZIP_IN_TEXT,
	PNG_HTML_IN_ITXT,
	PNG_ZIP_IN_IDAT,
	PNG_SIG_IN_IDAT,
	PNG_EXIF_THUMB,
};

enum jpeg_variant {
	JPEG_GOOD,
	JPEG_HUGE,
	JPEG_NO_SOI,
	JPEG_NO_EOI,
	JPEG_AFTER_EOI,
	JPEG_SOS_FIRST,
	JPEG_BAD_LENGTH,
	JPEG_TWO_SOF,
	JPEG_ZERO_HEIGHT,
	JPEG_PROGRESSIVE,
	JPEG_ZIP_IN_COM,
	JPEG_HTML_IN_APP,
	JPEG_PNG_IN_APP,
	JPEG_JPEG_IN_COM,
	JPEG_EXIF_THUMB,
	JPEG_SIG_IN_SCAN,
	JPEG_ZIP_IN_SCAN,
};

/* A small ZIP: a local header, data, and an end record a reader takes. */
void put_zip(struct buf *b);
struct buf make_png(enum png_variant v);

/*
 * ZIP end records whose fields no longer describe a consistent archive,
 * each after a local header and a central directory header for an
 * index.html holding <script>.  Put in a PNG's image data, each of the
 * first six yields index.html to Python 3.11's zipfile, whatever the
 * counts, disks or comment length say (it finds the directory as "end
 * record minus directory size"), and the first five to Info-ZIP unzip 6.0,
 * with warnings; the last two are refused all the same, because the check
 * reads no field.
 */
enum zip_end_variant {
	ZIP_END_COUNTS_0_1,   /* the finding: 0 entries on this disk, 1 in all */
	ZIP_END_COUNTS_1_0,
	ZIP_END_DISKS,	      /* this is disk 3, the directory starts on disk 7 */
	ZIP_END_COMMENT_LONG, /* a comment length past the end of the file */
	ZIP_END_COUNTS_FFFF,  /* 0xFFFF (ZIP64's "see the ZIP64 record") and 1 */
	ZIP_END_ZIP64,	      /* a ZIP64 end record and locator, then an end
			       * record of sentinels with counts 0xFFFF and 0 */
	ZIP_END_CD_ELSEWHERE, /* directory offset and size that point nowhere */
	ZIP_END_ZIP64_ONLY,   /* a ZIP64 end record and locator, no end record:
			       * older libarchive seeking readers looked for
			       * the locator on its own */
	ZIP_END_VARIANTS
};
/* Whether @v's bytes hold 0xFF, which JPEG entropy-coded data cannot carry
 * unstuffed (the ZIP64 sentinels). */
int zip_end_has_ff(enum zip_end_variant v);
/* "counts 0 and 1", ...: for the test's messages. */
extern const char *const zip_end_what[ZIP_END_VARIANTS];
/* What the check says of @v. */
const char *zip_end_reason(enum zip_end_variant v);
/* Run @mk(v) through the validator of @type for every variant (but those
 * with 0xFF when @no_ff) and expect each refused as a ZIP archive. */
void check_zip_ends(const char *type, struct buf (*mk)(int), int no_ff);
void put_zip_end(struct buf *b, enum zip_end_variant v);
/* @n bytes of @s. */
struct buf text(const char *s, size_t n);

#define TEXT(s) text(s, sizeof(s) - 1)

/* The file the validator reads: a memfd, as in the fuzzers. */
int memfd_of(const struct buf *b);

struct vcase {
	const char *what;
	const char *type;
	struct buf (*make)(int arg);
	int arg;
	int expect;         /* 0 valid, -1 rejected */
	const char *reason; /* substring of the reason when rejected */
	int formula;        /* -1 do not check */
	unsigned flags;     /* SBX_MEDIA_FLAG_* expected of a valid file */
};

/* The builders a case names, with its arg: a png_variant, a jpeg_variant,
 * an index in the text samples or in the PDF samples of samples.c. */
struct buf mk_png(int v);
struct buf mk_jpeg(int v);
struct buf mk_text(int i);
struct buf mk_pdf(int i);
/* A good PNG with the ZIP of put_zip_end(@v) in its image data, and a good
 * JPEG with it after the scan's entropy-coded data: places where another
 * format's signature is only flagged, so the ZIP tail check must refuse. */
struct buf mk_png_zip_end(int v);
struct buf mk_jpeg_zip_end(int v);

/* Run the @n cases of @vcases, each on a memfd of its sample; a reason
 * that does not hold the expected piece fails the test. */
void check_vcases(const struct vcase *vcases, size_t n);

#endif
