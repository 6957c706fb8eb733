/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-ooxml.c - libFuzzer entry point for the xlsx, docx and pptx
 * validators, application/zip and the ZIP container check under them
 * (media-ooxml.c, serve-zip.c, zip-read.c).  The first byte picks what the rest is:
 *   bits 0-1  the type: xlsx, docx or pptx; 3: application/zip, whose
 *             members go through serve-zip.c, each as an output;
 *   bit 2     set: the rest is the parts of a package, separated by
 *             "\n--\n", zipped here under fixed names (stored, with their
 *             CRCs), so that most runs get past the container and reach
 *             the XML handlers; clear: the rest is the whole file.
 * Every verdict goes through the broker's parser (fuzz-media.h).
 */
#include "fuzz-media.h"

#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const types[] = {
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation",
	"application/zip",
};
static const char *const names[] = { "x.xlsx", "x.docx", "x.pptx", "x.zip" };

/* Part names, in the order the parts come. */
static const char *const parts[] = {
	"[Content_Types].xml",	    "_rels/.rels",	       "xl/workbook.xml",
	"xl/_rels/workbook.xml.rels", "xl/worksheets/sheet1.xml", "xl/sharedStrings.xml",
	"word/document.xml",	    "ppt/presentation.xml",    "ppt/slides/slide1.xml",
	"docProps/core.xml",
};
/* A ZIP output's members: one name of each kind of rule. */
static const char *const members[] = {
	"t/a.csv", "b.json", "c.svg", "d.html", "e.md", "f.txt", "g.npy", "h.tex", "i.zip", "j.pkl",
};

static void le16(uint8_t *p, size_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8 & 0xff;
}

static void le32(uint8_t *p, uint32_t v)
{
	le16(p, v & 0xffff);
	le16(p + 2, v >> 16);
}

#define NPARTS 10
_Static_assert(ARRAY_SIZE(parts) == NPARTS && ARRAY_SIZE(members) == NPARTS, "ten names each");

/* A stored ZIP of the parts named @parts into @out (big enough); returns
 * its size. */
static size_t zip_parts(const uint8_t *data, size_t size, uint8_t *out,
			const char *const *parts)
{
	uint32_t offs[NPARTS], crcs[NPARTS], lens[NPARTS];
	size_t n = 0, o = 0, cd;

	while (n < NPARTS) {
		const uint8_t *sep = memmem(data, size, "\n--\n", 4);
		size_t len = sep ? (size_t)(sep - data) : size, nl = strlen(parts[n]);

		offs[n] = (uint32_t)o;
		crcs[n] = (uint32_t)crc32(0, data, (uInt)len);
		lens[n] = (uint32_t)len;
		memset(out + o, 0, 30);
		memcpy(out + o, "PK\3\4", 4);
		le16(out + o + 4, 20);
		le32(out + o + 14, crcs[n]);
		le32(out + o + 18, lens[n]);
		le32(out + o + 22, lens[n]);
		le16(out + o + 26, nl);
		memcpy(out + o + 30, parts[n], nl);
		memcpy(out + o + 30 + nl, data, len);
		o += 30 + nl + len;
		n++;
		if (!sep)
			break;
		size -= len + 4;
		data = sep + 4;
	}
	cd = o;
	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(parts[i]);

		memset(out + o, 0, 46);
		memcpy(out + o, "PK\1\2", 4);
		le16(out + o + 4, 20);
		le16(out + o + 6, 20);
		le32(out + o + 16, crcs[i]);
		le32(out + o + 20, lens[i]);
		le32(out + o + 24, lens[i]);
		le16(out + o + 28, nl);
		le32(out + o + 42, offs[i]);
		memcpy(out + o + 46, parts[i], nl);
		o += 46 + nl;
	}
	memset(out + o, 0, 22);
	memcpy(out + o, "PK\5\6", 4);
	le16(out + o + 8, n);
	le16(out + o + 10, n);
	le32(out + o + 12, (uint32_t)(o - cd));
	le32(out + o + 16, (uint32_t)cd);
	return o + 22;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t zipped[65536 + 1024 * 10];
	unsigned t;

	if (size == 0 || size > 65536)
		return 0;
	t = data[0] & 3;
	if (!(data[0] & 4))
		return fuzz_media(types[t], names[t], data + 1, size - 1);
	return fuzz_media(types[t], names[t], zipped,
			  zip_parts(data + 1, size - 1, zipped, t == 3 ? members : parts));
}
