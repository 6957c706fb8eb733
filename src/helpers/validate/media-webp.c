/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-webp.c - image/webp: the RIFF structure checked here, the image
 * decoded by libwebp.
 *
 * A WebP file is a RIFF container ("RIFF" size "WEBP") of chunks, each a
 * four-letter tag, a 32-bit little-endian size and the data padded to an
 * even length.  Decoders believe little of the container: libwebp reads a
 * RIFF size smaller than the file and ignores the rest (where a polyglot
 * puts its ZIP or HTML), and skips chunks it does not know.  So before a
 * byte reaches the decoder the walk below requires
 *   - the RIFF size to be exactly the file's size minus 8: no trailing
 *     data, no file shorter than it says;
 *   - every chunk inside the RIFF payload, its padding byte zero, at most
 *     WEBP_MAX_CHUNKS of them;
 *   - the simple layouts, one VP8 or one VP8L chunk and nothing else, or
 *     the extended one: VP8X first (10 bytes), then ICCP, ALPH, VP8/VP8L,
 *     EXIF, XMP in that order with one image chunk; unknown chunks at most
 *     WEBP_UNKNOWN_MAX bytes each (the extended format allows them);
 *   - no animation (ANIM/ANMF, or the VP8X animation flag): an output is
 *     one image, and an animation's frames are many images to validate,
 *     each with a canvas of its own;
 *   - the VP8X canvas at most SBX_MEDIA_MAX_PIXELS, checked before the
 *     decoder sees it: a 16383x16383 canvas around a tiny frame is the
 *     WebP form of the decompression bomb, and a viewer allocates the
 *     canvas, not the frame;
 *   - EXIF and XMP metadata allowed (cameras and PIL write them) but, like
 *     PNG's metadata chunks, searched for another format's signature and
 *     refused when one is found (a JPEG SOI is fine in EXIF: a thumbnail);
 *     the image data is searched too but only flagged, since compressed
 *     data matches a short signature by chance;
 *   - and, as for PNG and JPEG, no ZIP end record near the end.
 * Then libwebp reads the features (WebPGetFeatures), the frame's size must
 * be the canvas's and at most SBX_MEDIA_MAX_PIXELS, and the image is
 * decoded in full into a buffer of width * height * 4 bytes allocated
 * here: a file that does not decode is refused, so what is promoted is an
 * image a viewer can show.  The decoder runs without threads, in the
 * validator's confinement (its memory limit covers the buffer).
 *
 * Reasons start "webp:" and name what failed, so that a short code
 * (webp_canvas_too_large, webp_riff_size, webp_animation, webp_decode...)
 * can be read off them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <webp/decode.h>

#include "util.h"
#include "validate.h"

/* The most chunks a still WebP needs is six (VP8X ICCP ALPH VP8 EXIF XMP);
 * room for a few unknown ones. */
#define WEBP_MAX_CHUNKS 16
/* Largest unknown chunk accepted, in bytes, as PNG_UNKNOWN_MAX. */
#define WEBP_UNKNOWN_MAX 256

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t le24(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}

/* Order of the chunks of the extended layout; 0 for an unknown chunk. */
static int chunk_rank(const unsigned char *tag)
{
	static const char order[][5] = { "VP8X", "ICCP", "ALPH", "VP8 ", "EXIF", "XMP " };

	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		if (!memcmp(tag, order[i], 4))
			return (int)i + 1;
	if (!memcmp(tag, "VP8L", 4))
		return 4;
	return 0;
}

static bool is_image(const unsigned char *tag)
{
	return !memcmp(tag, "VP8 ", 4) || !memcmp(tag, "VP8L", 4);
}

static bool tag_ok(const unsigned char *tag)
{
	for (int i = 0; i < 4; i++)
		if (tag[i] < 0x20 || tag[i] > 0x7e)
			return false;
	return true;
}

/* The walk over the chunks of @d[0..size); fills the canvas from VP8X. */
static int walk(const unsigned char *d, uint64_t size, uint64_t *canvas_w, uint64_t *canvas_h,
		struct sbx_media_report *rep)
{
	uint64_t at = 12, nchunks = 0;
	int last_rank = 0;
	bool extended = false, have_image = false;
	uint32_t riff;

	if (size < 12 || memcmp(d, "RIFF", 4) != 0 || memcmp(d + 8, "WEBP", 4) != 0)
		return sbx_media_fail(rep, "webp: not a RIFF WEBP file");
	riff = le32(d + 4);
	if ((uint64_t)riff + 8 != size)
		return sbx_media_fail(rep,
				      "webp: RIFF size %u says the file has %llu bytes, it has %llu "
				      "(trailing or missing data)",
				      riff, (unsigned long long)riff + 8, (unsigned long long)size);
	if (size < 20)
		return sbx_media_fail(rep, "webp: no chunk");
	while (at < size) {
		const unsigned char *tag = d + at;
		uint64_t len, padded;
		int rank;
		struct sbx_media_sigscan scan;

		if (size - at < 8)
			return sbx_media_fail(rep, "webp: truncated chunk header at offset %llu",
					      (unsigned long long)at);
		if (++nchunks > WEBP_MAX_CHUNKS)
			return sbx_media_fail(rep, "webp: more than %d chunks", WEBP_MAX_CHUNKS);
		if (!tag_ok(tag))
			return sbx_media_fail(rep, "webp: bad chunk tag at offset %llu",
					      (unsigned long long)at);
		len = le32(d + at + 4);
		padded = len + (len & 1);
		if (padded > size - at - 8)
			return sbx_media_fail(rep,
					      "webp: %.4s chunk at offset %llu: size %llu runs past the "
					      "end of the RIFF data",
					      tag, (unsigned long long)at, (unsigned long long)len);
		if ((len & 1) && d[at + 8 + len] != 0)
			return sbx_media_fail(rep, "webp: %.4s chunk: padding byte is not zero", tag);
		if (!memcmp(tag, "ANIM", 4) || !memcmp(tag, "ANMF", 4))
			return sbx_media_fail(rep, "webp: animation (%.4s chunk): an animated WebP is "
						   "not accepted; write a still image",
					      tag);
		rank = chunk_rank(tag);
		if (nchunks == 1) {
			extended = !memcmp(tag, "VP8X", 4);
			if (!extended && !is_image(tag))
				return sbx_media_fail(rep,
						      "webp: first chunk is %.4s, not VP8, VP8L or VP8X",
						      tag);
		} else if (!extended) {
			return sbx_media_fail(rep, "webp: %.4s chunk after the image of a simple "
						   "(not VP8X) file",
					      tag);
		} else if (rank == 1) {
			return sbx_media_fail(rep, "webp: second VP8X chunk");
		} else if (rank && rank <= last_rank) {
			return sbx_media_fail(rep, "webp: %.4s chunk out of order or repeated", tag);
		}
		if (rank == 0 && len > WEBP_UNKNOWN_MAX)
			return sbx_media_fail(rep, "webp: unknown chunk %.4s of %llu bytes (at most %d)",
					      tag, (unsigned long long)len, WEBP_UNKNOWN_MAX);
		if (rank == 1) {
			const unsigned char *x = d + at + 8;

			if (len != 10)
				return sbx_media_fail(rep, "webp: VP8X chunk of %llu bytes, not 10",
						      (unsigned long long)len);
			/* Flags: R R I L E X A R; A is animation. */
			if (x[0] & 0x02)
				return sbx_media_fail(rep, "webp: animation (VP8X flag): an animated "
							   "WebP is not accepted; write a still image");
			*canvas_w = (uint64_t)le24(x + 4) + 1;
			*canvas_h = (uint64_t)le24(x + 7) + 1;
			rep->width = *canvas_w;
			rep->height = *canvas_h;
			if (*canvas_w * *canvas_h > SBX_MEDIA_MAX_PIXELS)
				return sbx_media_fail_code(rep, SBX_RC_TOO_LARGE, "webp: VP8X canvas %llux%llu exceeds %llu pixels",
						      (unsigned long long)*canvas_w,
						      (unsigned long long)*canvas_h,
						      (unsigned long long)SBX_MEDIA_MAX_PIXELS);
		}
		/* The ranks keep ALPH before the image and one image chunk;
		 * this says so for VP8 beside VP8L, which share a rank. */
		if (is_image(tag)) {
			if (have_image)
				return sbx_media_fail(rep, "webp: more than one image chunk");
			have_image = true;
		}
		if (rank > 1)
			last_rank = rank;
		/* Metadata and unknown chunks are where a second format hides:
		 * refused; image data (VP8, VP8L, ALPH, and ICCP's binary
		 * profile) only flagged. */
		sbx_media_sigscan_init(&scan, !memcmp(tag, "EXIF", 4) || is_image(tag) ||
							      !memcmp(tag, "ALPH", 4) ||
							      !memcmp(tag, "ICCP", 4)
						      ? SBX_SIG_NO_JPEG
						      : SBX_SIG_ALL,
				       at + 8);
		if (sbx_media_sigscan_feed(&scan, d + at + 8, (size_t)len)) {
			if (is_image(tag) || !memcmp(tag, "ALPH", 4) || !memcmp(tag, "ICCP", 4))
				rep->flags |= SBX_MEDIA_FLAG_EMBEDDED;
			else
				return sbx_media_fail_code(rep, SBX_RC_POLYGLOT, "webp: %.4s chunk holds a %s at offset %llu",
						      tag, scan.found,
						      (unsigned long long)scan.found_at);
		}
		at += 8 + padded;
	}
	if (!have_image)
		return sbx_media_fail(rep, "webp: no VP8 or VP8L image chunk");
	return 0;
}

static const char *status_name(VP8StatusCode s)
{
	switch (s) {
	case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
	case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
	case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
	case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
	case VP8_STATUS_NOT_ENOUGH_DATA: return "truncated image data";
	default: return "error";
	}
}

int sbx_media_webp_check(const unsigned char *d, size_t size, struct sbx_media_report *rep)
{
	uint64_t canvas_w = 0, canvas_h = 0, bytes;
	WebPBitstreamFeatures f;
	VP8StatusCode st;
	_cleanup_free_ uint8_t *out = NULL;

	if (walk(d, size, &canvas_w, &canvas_h, rep) < 0)
		return -1;
	st = WebPGetFeatures(d, size, &f);
	if (st != VP8_STATUS_OK)
		return sbx_media_fail(rep, "webp: libwebp cannot read the header: %s",
				      status_name(st));
	if (f.width <= 0 || f.height <= 0)
		return sbx_media_fail(rep, "webp: bad dimensions %dx%d", f.width, f.height);
	rep->width = (uint64_t)f.width;
	rep->height = (uint64_t)f.height;
	if (f.has_animation)
		return sbx_media_fail(rep, "webp: animation: an animated WebP is not accepted; "
					   "write a still image");
	if (canvas_w && (canvas_w != rep->width || canvas_h != rep->height))
		return sbx_media_fail(rep, "webp: VP8X canvas %llux%llu is not the image's %dx%d",
				      (unsigned long long)canvas_w, (unsigned long long)canvas_h,
				      f.width, f.height);
	if (rep->width * rep->height > SBX_MEDIA_MAX_PIXELS)
		return sbx_media_fail_code(rep, SBX_RC_TOO_LARGE, "webp: %dx%d exceeds %llu pixels", f.width, f.height,
				      (unsigned long long)SBX_MEDIA_MAX_PIXELS);
	/* At most 4 * SBX_MEDIA_MAX_PIXELS bytes (200 MB), inside the
	 * validator's memory limit, which is the run's. */
	bytes = rep->width * rep->height * 4;
	out = malloc((size_t)bytes);
	if (!out)
		return sbx_media_fail_code(rep, SBX_RC_TOO_LARGE, "webp: %dx%d needs %llu MiB to decode, more than the "
					   "validator may use (raise limits.memory_mib)",
				      f.width, f.height, (unsigned long long)(bytes >> 20) + 1);
	if (!WebPDecodeRGBAInto(d, size, out, (size_t)bytes, f.width * 4))
		return sbx_media_fail(rep, "webp: the image does not decode (libwebp)");
	return 0;
}

int sbx_media_webp_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ unsigned char *d = NULL;
	_cleanup_free_ struct sbx_media_reader *r = NULL;

	if (size > SBX_MEDIA_WEBP_MAX_BYTES)
		return sbx_media_fail_code(rep, SBX_RC_TOO_LARGE, "webp: %llu bytes, more than %llu",
				      (unsigned long long)size,
				      (unsigned long long)SBX_MEDIA_WEBP_MAX_BYTES);
	/* libwebp reads from memory; the size is capped above, and a run
	 * too small to hold it gets a reason, not a dead validator. */
	d = malloc(size ? (size_t)size : 1);
	if (!d)
		return sbx_media_fail(rep, "webp: %llu bytes do not fit the validator's memory "
					   "(raise limits.memory_mib)",
				      (unsigned long long)size);
	r = sbx_media_reader_new(fd, size);
	if (sbx_media_reader_get(r, d, (size_t)size) < 0)
		return sbx_media_fail(rep, "webp: read error");
	if (sbx_media_webp_check(d, (size_t)size, rep) < 0)
		return -1;
	return sbx_media_zip_tail(fd, size, "webp", rep);
}
