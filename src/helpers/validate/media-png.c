/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-png.c - structural PNG validation.
 *
 * Walks every chunk and checks what a decoder would trust before it
 * allocates: the signature, IHDR first with sane fields and at most
 * SBX_MEDIA_MAX_PIXELS pixels (a 100000x100000 header is the classic
 * decompression-bomb opener), PLTE where the colour type needs it, IDAT
 * chunks present and consecutive, IEND last and empty, nothing after it, a
 * CRC on every chunk, no unknown critical chunk.  Image data is not
 * inflated: a decoder downstream must still cap its own output.
 *
 * Polyglots (a PNG that is also a ZIP, an HTML page...) hide the second
 * format in chunks a decoder skips.  So an ancillary chunk that is not in
 * the known set below may hold at most PNG_UNKNOWN_MAX bytes (private
 * chunks in the wild, vpAg, iDOT, orNT, are a few dozen); the data of
 * every ancillary chunk is searched for another format's signature (a JPEG
 * SOI is fine in eXIf, the Exif thumbnail) and refused when one is found;
 * image data (IDAT, fdAT, PLTE) is searched too but only flagged, since
 * compressed data matches four bytes by chance; and a ZIP end record or
 * ZIP64 locator near the end, where ZIP readers look, is refused whatever
 * it says (sbx_media_zip_tail()).
 */
#include "config.h"

#include <string.h>

#include "util.h"
#include "validate.h"

/* PNG's own limit on a chunk length (2^31 - 1). */
#define PNG_CHUNK_MAX 0x7fffffffu

static uint32_t crc_table[256];

static void crc_init(void)
{
	if (crc_table[1])
		return;
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[n] = c;
	}
}

static uint32_t crc_update(uint32_t crc, const unsigned char *p, size_t n)
{
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Allowed bit depths per colour type (PNG spec table 11.1), as a bit mask. */
static bool depth_ok(unsigned color, unsigned depth)
{
	unsigned mask;

	switch (color) {
	case 0: mask = 1u << 1 | 1u << 2 | 1u << 4 | 1u << 8 | 1u << 16; break;
	case 3: mask = 1u << 1 | 1u << 2 | 1u << 4 | 1u << 8; break;
	case 2:
	case 4:
	case 6: mask = 1u << 8 | 1u << 16; break;
	default: return false;
	}
	return depth <= 16 && (mask & (1u << depth));
}

static int check_ihdr(const unsigned char *d, struct sbx_media_report *rep)
{
	uint32_t w = be32(d), h = be32(d + 4);

	if (w == 0 || h == 0 || w > PNG_CHUNK_MAX || h > PNG_CHUNK_MAX)
		return sbx_media_fail(rep, "png: IHDR: bad dimensions %ux%u", w, h);
	rep->width = w;
	rep->height = h;
	if ((uint64_t)w * h > SBX_MEDIA_MAX_PIXELS)
		return sbx_media_fail_code(rep, SBX_RC_TOO_LARGE, "png: IHDR: %ux%u exceeds %llu pixels", w, h,
				      (unsigned long long)SBX_MEDIA_MAX_PIXELS);
	if (!depth_ok(d[9], d[8]))
		return sbx_media_fail(rep, "png: IHDR: bit depth %u invalid for colour type %u", d[8],
				      d[9]);
	if (d[10] != 0 || d[11] != 0 || d[12] > 1)
		return sbx_media_fail(rep, "png: IHDR: unknown compression, filter or interlace method");
	return 0;
}

/* Ancillary chunks of the PNG specification (third edition), APNG and the
 * registered extensions: any size. */
static const char known_ancillary[][5] = {
	"bKGD", "cHRM", "cICP", "cLLI", "mDCV", "mDCv", "eXIf", "gAMA", "hIST", "iCCP", "iTXt",
	"pHYs", "sBIT", "sPLT", "sRGB", "tEXt", "tIME", "tRNS", "zTXt", "acTL", "fcTL", "fdAT",
	"oFFs", "pCAL", "sCAL", "sTER", "gIFg", "gIFx", "dSIG",
};
/* Largest unknown ancillary chunk accepted, in bytes. */
#define PNG_UNKNOWN_MAX 256

static bool is_known_ancillary(const unsigned char *t)
{
	for (size_t i = 0; i < ARRAY_SIZE(known_ancillary); i++)
		if (!memcmp(t, known_ancillary[i], 4))
			return true;
	return false;
}

static bool known_critical(const unsigned char *t)
{
	return !memcmp(t, "IHDR", 4) || !memcmp(t, "PLTE", 4) || !memcmp(t, "IDAT", 4) ||
	       !memcmp(t, "IEND", 4);
}

int sbx_media_png_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	unsigned char hdr[8], ihdr[13], tail[4];
	bool seen_plte = false, in_idat = false, idat_done = false, image_data;
	struct sbx_media_sigscan scan;
	unsigned color = 0;
	uint64_t chunks = 0;

	crc_init();
	if (sbx_media_reader_get(r, hdr, sizeof(sig)) < 0 || memcmp(hdr, sig, sizeof(sig)) != 0)
		return sbx_media_fail(rep, "png: bad signature");

	for (;;) {
		uint64_t at = sbx_media_reader_tell(r);
		uint32_t len, crc, left;
		const unsigned char *type = hdr + 4;

		if (sbx_media_reader_get(r, hdr, 8) < 0)
			return sbx_media_fail(rep, "png: truncated at offset %llu (no IEND)",
					      (unsigned long long)at);
		len = be32(hdr);
		for (int i = 0; i < 4; i++)
			if (!((type[i] >= 'A' && type[i] <= 'Z') || (type[i] >= 'a' && type[i] <= 'z')))
				return sbx_media_fail(rep, "png: bad chunk type at offset %llu",
						      (unsigned long long)at);
		if (len > PNG_CHUNK_MAX || (uint64_t)len + 4 > sbx_media_reader_left(r))
			return sbx_media_fail(rep, "png: %.4s: length %u runs past the end of the file",
					      type, len);
		chunks++;
		if (chunks == 1 && (memcmp(type, "IHDR", 4) != 0 || len != 13))
			return sbx_media_fail(rep, "png: first chunk is not a 13-byte IHDR");
		if (chunks > 1 && !memcmp(type, "IHDR", 4))
			return sbx_media_fail(rep, "png: second IHDR");
		if (!(type[0] & 0x20) && !known_critical(type))
			return sbx_media_fail(rep, "png: unknown critical chunk %.4s", type);
		image_data = !memcmp(type, "IDAT", 4) || !memcmp(type, "fdAT", 4) ||
			     !memcmp(type, "PLTE", 4);
		if ((type[0] & 0x20) && !image_data && !is_known_ancillary(type) &&
		    len > PNG_UNKNOWN_MAX)
			return sbx_media_fail(rep,
					      "png: unknown ancillary chunk %.4s of %u bytes (at most %d)",
					      type, len, PNG_UNKNOWN_MAX);
		sbx_media_sigscan_init(&scan, !memcmp(type, "eXIf", 4) || image_data ? SBX_SIG_NO_JPEG
										     : SBX_SIG_ALL,
				       sbx_media_reader_tell(r));

		/* The CRC covers the type and the data, streamed in pieces. */
		crc = crc_update(0xffffffffu, type, 4);
		for (left = len; left > 0;) {
			const unsigned char *p;
			ssize_t k = sbx_media_reader_chunk(r, &p, left);

			if (k <= 0)
				return sbx_media_fail(rep, "png: read error");
			crc = crc_update(crc, p, (size_t)k);
			if (chunks > 1)
				sbx_media_sigscan_feed(&scan, p, (size_t)k);
			/* IHDR's 13 bytes are checked below; keep a copy. */
			if (chunks == 1)
				memcpy(ihdr + (13 - left), p, (size_t)k);
			left -= (uint32_t)k;
		}
		if (sbx_media_reader_get(r, tail, 4) < 0)
			return sbx_media_fail(rep, "png: truncated CRC");
		if ((crc ^ 0xffffffffu) != be32(tail))
			return sbx_media_fail(rep, "png: %.4s: CRC mismatch at offset %llu", type,
					      (unsigned long long)at);
		if (scan.found && image_data)
			rep->flags |= SBX_MEDIA_FLAG_EMBEDDED;
		else if (scan.found)
			return sbx_media_fail_code(rep, SBX_RC_POLYGLOT, "png: %.4s chunk holds a %s at offset %llu", type,
					      scan.found, (unsigned long long)scan.found_at);

		if (chunks == 1) {
			if (check_ihdr(ihdr, rep) < 0)
				return -1;
			color = ihdr[9];
		} else if (!memcmp(type, "PLTE", 4)) {
			if (seen_plte || in_idat || idat_done || len == 0 || len % 3 || len > 768 ||
			    color == 0 || color == 4)
				return sbx_media_fail(rep, "png: misplaced or malformed PLTE");
			seen_plte = true;
		} else if (!memcmp(type, "IDAT", 4)) {
			if (idat_done)
				return sbx_media_fail(rep, "png: IDAT chunks are not consecutive");
			if (color == 3 && !seen_plte)
				return sbx_media_fail(rep, "png: palette image without PLTE");
			in_idat = true;
		} else if (!memcmp(type, "IEND", 4)) {
			if (len != 0)
				return sbx_media_fail(rep, "png: IEND with data");
			if (!in_idat && !idat_done)
				return sbx_media_fail(rep, "png: no IDAT");
			if (sbx_media_reader_left(r) != 0)
				return sbx_media_fail(rep, "png: %llu bytes after IEND",
						      (unsigned long long)sbx_media_reader_left(r));
			return sbx_media_zip_tail(fd, size, "png", rep);
		} else if (in_idat) {
			in_idat = false;
			idat_done = true;
		}
	}
}
