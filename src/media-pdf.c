/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-pdf.c - PDF header and trailer sanity.
 *
 * Checks the "%PDF-1.0".."%PDF-1.7" / "%PDF-2.0" header, and in the last
 * KiB a "startxref" with an offset inside the file followed by "%%EOF" and
 * nothing but whitespace.  This catches truncated files and other formats
 * dressed up as PDF; it does not parse objects, so a PDF carrying scripts
 * or embedded files passes.  Consumers must open PDFs with a viewer that
 * disables active content.
 */
#include "config.h"

#include <string.h>

#include "util.h"
#include "validate.h"

#define PDF_TAIL 1024

static const unsigned char *find_last(const unsigned char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	if (n < k)
		return NULL;
	for (size_t i = n - k + 1; i-- > 0;)
		if (memcmp(hay + i, needle, k) == 0)
			return hay + i;
	return NULL;
}

static bool pdf_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == 0;
}

int sbx_media_pdf_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	unsigned char head[8], tail[PDF_TAIL];
	const unsigned char *eof, *sx, *p, *end;
	size_t n;
	uint64_t xref = 0;
	bool digits = false;

	if (sbx_media_reader_get(r, head, sizeof(head)) < 0 || memcmp(head, "%PDF-", 5) != 0 ||
	    head[6] != '.' ||
	    !((head[5] == '1' && head[7] >= '0' && head[7] <= '7') ||
	      (head[5] == '2' && head[7] == '0')))
		return sbx_media_fail(rep, "pdf: no %%PDF-1.x header");
	/* The tail is the last KiB after the header (less for a tiny file). */
	n = size - sizeof(head) < PDF_TAIL ? (size_t)(size - sizeof(head)) : PDF_TAIL;
	if (sbx_media_reader_skip(r, size - sizeof(head) - n) < 0 ||
	    sbx_media_reader_get(r, tail, n) < 0)
		return sbx_media_fail(rep, "pdf: read error");

	eof = find_last(tail, n, "%%EOF");
	if (!eof)
		return sbx_media_fail(rep, "pdf: no %%%%EOF in the last %d bytes", PDF_TAIL);
	for (p = eof + 5; p < tail + n; p++)
		if (!pdf_space(*p))
			return sbx_media_fail(rep, "pdf: data after the last %%%%EOF");

	sx = find_last(tail, (size_t)(eof - tail), "startxref");
	if (!sx)
		return sbx_media_fail(rep, "pdf: no startxref before %%%%EOF");
	for (p = sx + 9, end = eof; p < end && pdf_space(*p); p++)
		;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (xref > size)
			break;
		xref = xref * 10 + (uint64_t)(*p - '0');
		digits = true;
	}
	while (p < end && pdf_space(*p))
		p++;
	if (!digits || p != end || xref >= size)
		return sbx_media_fail(rep, "pdf: startxref offset missing or outside the file");
	return 0;
}
