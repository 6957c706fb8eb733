/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-jpeg.c - structural JPEG validation.
 *
 * Walks the marker segments from SOI to EOI: every segment length must stay
 * inside the file, exactly one SOFn frame header must come before the first
 * scan, its dimensions must be non-zero and at most SBX_MEDIA_MAX_PIXELS,
 * and the entropy-coded data after each SOS must end in a marker.  Nothing
 * may follow EOI (trailing data is where polyglots hide), and a ZIP end
 * record or ZIP64 locator near the end is refused (sbx_media_zip_tail()).
 * The image is not decoded.
 */
#include "config.h"

#include <string.h>

#include "util.h"
#include "validate.h"

static bool is_sof(int m)
{
	/* C4 (DHT), C8 (JPG) and CC (DAC) share the range but are not frames. */
	return m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc;
}

static int check_sof(struct sbx_media_reader *r, unsigned len, struct sbx_media_report *rep)
{
	unsigned char d[6];
	unsigned w, h, ncomp;

	if (len < 8 || sbx_media_reader_get(r, d, 6) < 0)
		return sbx_media_fail(rep, "jpeg: SOF: truncated frame header");
	h = (unsigned)d[1] << 8 | d[2];
	w = (unsigned)d[3] << 8 | d[4];
	ncomp = d[5];
	rep->width = w;
	rep->height = h;
	if (w == 0 || h == 0)
		return sbx_media_fail(rep, "jpeg: SOF: bad dimensions %ux%u", w, h);
	if ((uint64_t)w * h > SBX_MEDIA_MAX_PIXELS)
		return sbx_media_fail_code(rep, SBX_RC_TOO_LARGE, "jpeg: SOF: %ux%u exceeds %llu pixels", w, h,
				      (unsigned long long)SBX_MEDIA_MAX_PIXELS);
	if (ncomp < 1 || ncomp > 4 || len != 8 + 3 * ncomp)
		return sbx_media_fail(rep, "jpeg: SOF: bad component count %u", ncomp);
	if (sbx_media_reader_skip(r, len - 8) < 0)
		return sbx_media_fail(rep, "jpeg: SOF: truncated");
	return 0;
}

/*
 * Skip entropy-coded data, searching it for signatures: it ends at 0xFF
 * followed by something other than 0x00 (a stuffed 0xFF) or a restart
 * marker.  Returns that marker, the reader just after it; -1 when the file
 * ends first.
 */
static int skip_scan(struct sbx_media_reader *r, struct sbx_media_sigscan *scan)
{
	bool ff = false;

	for (;;) {
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, SIZE_MAX);
		size_t n = k > 0 ? (size_t)k : 0;

		if (k <= 0)
			return -1;
		for (size_t i = 0; i < n; i++) {
			unsigned char c = p[i];

			if (!ff) {
				const unsigned char *q = memchr(p + i, 0xff, n - i);

				if (!q)
					break;
				i = (size_t)(q - p);
				ff = true;
				continue;
			}
			if (c == 0xff)
				continue;
			ff = false;
			if (c == 0x00 || (c >= 0xd0 && c <= 0xd7))
				continue;
			sbx_media_sigscan_feed(scan, p, i + 1);
			/* Give back what follows the marker: it is the segment's. */
			r->pos -= n - i - 1;
			return c;
		}
		sbx_media_sigscan_feed(scan, p, n);
	}
}

/* Read a metadata segment's data, refusing another format inside. */
static int check_metadata(struct sbx_media_reader *r, int m, unsigned len,
			  struct sbx_media_report *rep)
{
	struct sbx_media_sigscan scan;
	unsigned char head[6];
	size_t nh = len - 2 < sizeof(head) ? len - 2 : sizeof(head);
	uint64_t left = len - 2 - nh;

	sbx_media_sigscan_init(&scan, SBX_SIG_ALL, sbx_media_reader_tell(r));
	if (sbx_media_reader_get(r, head, nh) < 0)
		return sbx_media_fail(rep, "jpeg: truncated segment");
	if (m == 0xe1 && nh == 6 && memcmp(head, "Exif\0\0", 6) == 0)
		scan.set = SBX_SIG_NO_JPEG; /* the thumbnail */
	sbx_media_sigscan_feed(&scan, head, nh);
	while (left > 0) {
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, left);

		if (k <= 0)
			return sbx_media_fail(rep, "jpeg: truncated segment");
		sbx_media_sigscan_feed(&scan, p, (size_t)k);
		left -= (uint64_t)k;
	}
	if (scan.found)
		return sbx_media_fail_code(rep, SBX_RC_POLYGLOT, "jpeg: %s segment holds a %s at offset %llu",
				      m == 0xfe ? "COM" : "APPn", scan.found,
				      (unsigned long long)scan.found_at);
	return 0;
}

int sbx_media_jpeg_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	bool seen_sof = false, seen_sos = false;
	struct sbx_media_sigscan scan;
	int m = -1;

	sbx_media_sigscan_init(&scan, SBX_SIG_NO_JPEG, 0);
	if (sbx_media_reader_byte(r) != 0xff || sbx_media_reader_byte(r) != 0xd8)
		return sbx_media_fail(rep, "jpeg: no SOI marker");

	for (;;) {
		unsigned char lb[2];
		unsigned len;

		if (m < 0) {
			/* Markers start with 0xFF; more 0xFF bytes are fill. */
			if (sbx_media_reader_byte(r) != 0xff)
				return sbx_media_fail(rep, "jpeg: expected a marker at offset %llu",
						      (unsigned long long)sbx_media_reader_tell(r) - 1);
			do
				m = sbx_media_reader_byte(r);
			while (m == 0xff);
			if (m < 0)
				return sbx_media_fail(rep, "jpeg: truncated (no EOI)");
		}

		if (m == 0xd9) {
			if (!seen_sos)
				return sbx_media_fail(rep, "jpeg: EOI before any scan");
			if (sbx_media_reader_left(r) != 0)
				return sbx_media_fail(rep, "jpeg: %llu bytes after EOI",
						      (unsigned long long)sbx_media_reader_left(r));
			if (scan.found)
				rep->flags |= SBX_MEDIA_FLAG_EMBEDDED;
			return sbx_media_zip_tail(fd, size, "jpeg", rep);
		}
		if (m == 0xd8 || m == 0x00)
			return sbx_media_fail(rep, "jpeg: unexpected marker 0x%02x", (unsigned)m);
		/* TEM and RSTn stand alone, without a length. */
		if (m == 0x01 || (m >= 0xd0 && m <= 0xd7)) {
			m = -1;
			continue;
		}

		if (sbx_media_reader_get(r, lb, 2) < 0)
			return sbx_media_fail(rep, "jpeg: truncated segment length");
		len = (unsigned)lb[0] << 8 | lb[1];
		if (len < 2 || len - 2 > sbx_media_reader_left(r))
			return sbx_media_fail(rep, "jpeg: marker 0x%02x: length %u runs past the end",
					      (unsigned)m, len);

		if (is_sof(m)) {
			if (seen_sof)
				return sbx_media_fail(rep, "jpeg: more than one frame header");
			if (check_sof(r, len, rep) < 0)
				return -1;
			seen_sof = true;
			m = -1;
		} else if (m == 0xda) {
			if (!seen_sof)
				return sbx_media_fail(rep, "jpeg: scan before frame header");
			if (sbx_media_reader_skip(r, len - 2) < 0)
				return sbx_media_fail(rep, "jpeg: truncated SOS");
			seen_sos = true;
			/* Offsets of the scan's matches are not reported; any will do. */
			m = skip_scan(r, &scan);
			if (m < 0)
				return sbx_media_fail(rep, "jpeg: truncated scan data (no EOI)");
		} else if ((m >= 0xe0 && m <= 0xef) || m == 0xfe) {
			if (check_metadata(r, m, len, rep) < 0)
				return -1;
			m = -1;
		} else {
			if (sbx_media_reader_skip(r, len - 2) < 0)
				return sbx_media_fail(rep, "jpeg: truncated segment");
			m = -1;
		}
	}
}
