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

/* Run the @n cases of @vcases, each on a memfd of its sample; a reason
 * that does not hold the expected piece fails the test. */
void check_vcases(const struct vcase *vcases, size_t n);

#endif
