/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-media-ooxml.c - xlsx, docx and pptx, and the ZIP check under them
 * (media-ooxml.c, zip-read.c): packages built here by a small ZIP writer,
 * one minimal valid package of each kind and the ways a hostile one
 * differs.  The ZIP cases are the ones zipfile cannot write and the e2e
 * corpus therefore lacks: headers that disagree, an entry hidden in
 * another's data, gaps, trailing bytes, a second end record, a symlink,
 * a lying size or CRC, another method; then what the parts may say
 * (fields, strings, relationships), and every single-bit mutation of a
 * valid package.
 */
#define _GNU_SOURCE
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "samples.h"
#include "serve.h"
#include "validate.h"
#include "zip-read.h"

#define XLSX "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
#define DOCX "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
#define PPTX "application/vnd.openxmlformats-officedocument.presentationml.presentation"
#define SML "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
#define WML "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
#define RELS "http://schemas.openxmlformats.org/package/2006/relationships"
#define RT "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

struct tb {
	unsigned char p[1 << 18];
	size_t n;
};

static void b_raw(struct tb *b, const void *d, size_t n)
{
	assert_true(b->n + n <= sizeof(b->p));
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void b16(struct tb *b, unsigned v)
{
	unsigned char x[2] = { v & 0xff, v >> 8 & 0xff };
	b_raw(b, x, 2);
}

static void b32(struct tb *b, uint32_t v)
{
	b16(b, v & 0xffff);
	b16(b, v >> 16);
}

static void put32at(struct tb *b, size_t at, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		b->p[at + (size_t)k] = (unsigned char)(v >> (8 * k));
}

struct part {
	const char *name;
	const char *data;
};

/* How the writer lies; all zero: an honest ZIP, deflated. */
enum zlie {
	Z_HONEST,
	Z_STORED,
	Z_DESCRIPTOR,     /* sizes and CRC after the data, local header zero */
	Z_LOCAL_NAME,     /* the first local header names another part */
	Z_GAP,            /* 4 bytes between the first and second entries */
	Z_PREFIX,         /* 4 bytes before the first entry */
	Z_HIDDEN,         /* the last entry's local header inside the first's data */
	Z_TRAILING,       /* bytes after the end record */
	Z_SECOND_END,     /* an end record in the archive comment */
	Z_END_AT_END,     /* ... the comment ending with it */
	Z_SYMLINK,        /* the last entry is a Unix symlink */
	Z_BAD_CRC,
	Z_USIZE_SHORT,    /* declares one byte less than it inflates to */
	Z_BZIP2,          /* method 12 */
	Z_ENCRYPTED,
	Z_EMPTY,          /* an end record and nothing else */
};

static uint32_t deflate_into(const char *s, size_t n, unsigned char *out, size_t cap)
{
	z_stream z = { 0 };

	assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (unsigned char *)s;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	deflateEnd(&z);
	return (uint32_t)z.total_out;
}

static void zip(struct tb *b, const struct part *parts, size_t n, enum zlie lie)
{
	static unsigned char data[16][1 << 14];
	uint32_t off[16], crc[16], cs[16], us[16];
	uint16_t method = lie == Z_STORED ? 0 : lie == Z_BZIP2 ? 12 : 8;
	size_t cd;

	assert_true(n <= 16);
	b->n = 0;
	if (lie == Z_PREFIX)
		b_raw(b, "JUNK", 4);
	for (size_t i = 0; i < n && lie != Z_EMPTY; i++) {
		size_t len = strlen(parts[i].data);
		const char *name = parts[i].name;
		bool desc = lie == Z_DESCRIPTOR;

		crc[i] = (uint32_t)crc32(0, (const unsigned char *)parts[i].data, (uInt)len);
		us[i] = (uint32_t)len;
		if (method == 8) {
			cs[i] = deflate_into(parts[i].data, len, data[i], sizeof(data[i]));
		} else {
			memcpy(data[i], parts[i].data, len);
			cs[i] = (uint32_t)len;
		}
		if (lie == Z_HIDDEN && i == n - 1) {
			/* Not written: its header goes inside entry 0's data. */
			off[i] = off[0] + 30 + (uint32_t)strlen(parts[0].name);
			continue;
		}
		off[i] = (uint32_t)b->n;
		if (lie == Z_LOCAL_NAME && i == 0)
			name = "xl/other.xml";
		b_raw(b, "PK\3\4", 4);
		b16(b, 20);
		b16(b, (desc ? 8 : 0) | (lie == Z_ENCRYPTED && i == 0 ? 1 : 0));
		b16(b, method);
		b32(b, 0);
		b32(b, desc ? 0 : lie == Z_BAD_CRC && i == 0 ? crc[i] ^ 1 : crc[i]);
		b32(b, desc ? 0 : cs[i]);
		b32(b, desc ? 0 : lie == Z_USIZE_SHORT && i == 0 ? us[i] - 1 : us[i]);
		b16(b, strlen(name));
		b16(b, 0);
		b_raw(b, name, strlen(name));
		if (lie == Z_HIDDEN && i == 0) {
			/* Entry 0 is stored and its data is the hidden entry. */
			const struct part *h = &parts[n - 1];
			size_t hl = strlen(h->data);
			struct tb in = { .n = 0 };

			b_raw(&in, "PK\3\4", 4);
			b16(&in, 20), b16(&in, 0), b16(&in, 0), b32(&in, 0);
			b32(&in, (uint32_t)crc32(0, (const unsigned char *)h->data, (uInt)hl));
			b32(&in, (uint32_t)hl), b32(&in, (uint32_t)hl);
			b16(&in, strlen(h->name)), b16(&in, 0);
			b_raw(&in, h->name, strlen(h->name));
			b_raw(&in, h->data, hl);
			memcpy(data[0], in.p, in.n);
			cs[0] = us[0] = (uint32_t)in.n;
			crc[0] = (uint32_t)crc32(0, in.p, (uInt)in.n);
			/* Patch the local header written above: stored. */
			b->p[off[0] + 8] = 0, b->p[off[0] + 9] = 0;
			put32at(b, off[0] + 14, crc[0]);
			put32at(b, off[0] + 18, cs[0]);
			put32at(b, off[0] + 22, cs[0]);
		}
		b_raw(b, data[i], cs[i]);
		if (desc) {
			b_raw(b, "PK\7\10", 4);
			b32(b, crc[i]), b32(b, cs[i]), b32(b, us[i]);
		}
		if (lie == Z_GAP && i == 0)
			b_raw(b, "GAP!", 4);
	}
	cd = b->n;
	for (size_t i = 0; i < n && lie != Z_EMPTY; i++) {
		bool stored0 = lie == Z_HIDDEN && i == 0;

		b_raw(b, "PK\1\2", 4);
		b16(b, lie == Z_SYMLINK && i == n - 1 ? 0x031e : 20);
		b16(b, 20);
		b16(b, (lie == Z_DESCRIPTOR ? 8 : 0) | (lie == Z_ENCRYPTED && i == 0 ? 1 : 0));
		b16(b, stored0 ? 0 : method);
		b32(b, 0);
		b32(b, lie == Z_BAD_CRC && i == 0 ? crc[i] ^ 1 : crc[i]);
		b32(b, cs[i]);
		b32(b, lie == Z_USIZE_SHORT && i == 0 ? us[i] - 1 : us[i]);
		b16(b, strlen(parts[i].name));
		b16(b, 0), b16(b, 0), b16(b, 0), b16(b, 0);
		b32(b, lie == Z_SYMLINK && i == n - 1 ? 0120777u << 16 : 0);
		b32(b, off[i]);
		b_raw(b, parts[i].name, strlen(parts[i].name));
	}
	b_raw(b, "PK\5\6", 4);
	b16(b, 0), b16(b, 0);
	b16(b, lie == Z_EMPTY ? 0 : n), b16(b, lie == Z_EMPTY ? 0 : n);
	b32(b, (uint32_t)(b->n - cd - 12));
	b32(b, (uint32_t)cd);
	if (lie == Z_END_AT_END) {
		b16(b, 22);
		b_raw(b, "PK\5\6", 4);
		b_raw(b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 18);
	} else if (lie == Z_SECOND_END) {
		/* Not last: a record at the very end would be the one every
		 * reader takes (and is then refused as an empty archive). */
		b16(b, 26);
		b_raw(b, "PK\5\6", 4);
		b_raw(b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 18);
		b_raw(b, "abcd", 4);
	} else {
		b16(b, 0);
	}
	if (lie == Z_TRAILING)
		b_raw(b, "tail", 4);
}

static int validate(const char *type, const struct tb *b, struct sbx_media_report *rep)
{
	struct buf f = { .p = (unsigned char *)b->p, .n = b->n };
	int fd = memfd_of(&f);
	int r = sbx_media_validate(type, fd, b->n, rep);

	close(fd);
	return r;
}

/* --- packages ---------------------------------------------------------------- */

#define CT_HEAD                                                                          \
	"<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/" \
	"2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/"     \
	"vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" "     \
	"ContentType=\"application/xml\"/>"
#define XLSX_CT                                                                              \
	CT_HEAD "<Override PartName=\"/xl/workbook.xml\" ContentType=\"application/vnd." \
		"openxmlformats-officedocument.spreadsheetml.sheet.main+xml\"/></Types>"
#define DOCX_CT                                                                                  \
	CT_HEAD "<Override PartName=\"/word/document.xml\" ContentType=\"application/vnd."   \
		"openxmlformats-officedocument.wordprocessingml.document.main+xml\"/></Types>"
#define ROOT_RELS(target)                                                              \
	"<Relationships xmlns=\"" RELS "\"><Relationship Id=\"rId1\" Type=\"" RT      \
	"/officeDocument\" Target=\"" target "\"/></Relationships>"

/* A package: its kind and what differs from the minimal one. */
struct pkgcase {
	const char *what;
	const char *type;    /* XLSX or DOCX */
	const char *body;    /* xl/worksheets/sheet1.xml or word/document.xml */
	const char *strings; /* xl/sharedStrings.xml (xlsx) */
	const char *rels;    /* the main part's relationships, inside <Relationships> */
	const char *extra_name, *extra;
	const char *ct;      /* [Content_Types].xml instead of the kind's */
	enum zlie lie;
	int expect;
	const char *reason;
	int formula;         /* -1: not checked */
};

static void build(struct tb *b, const struct pkgcase *c)
{
	static char rels[4096];
	bool x = strcmp(c->type, XLSX) == 0;
	struct part parts[8];
	size_t n = 0;

	snprintf(rels, sizeof(rels), "<Relationships xmlns=\"" RELS "\">%s</Relationships>",
		 c->rels ? c->rels : "");
	parts[n++] = (struct part){ "[Content_Types].xml", c->ct ? c->ct : x ? XLSX_CT : DOCX_CT };
	parts[n++] = (struct part){ "_rels/.rels",
				    x ? ROOT_RELS("xl/workbook.xml") : ROOT_RELS("word/document.xml") };
	if (x) {
		parts[n++] = (struct part){ "xl/workbook.xml",
					    "<workbook xmlns=\"" SML "\"><sheets/></workbook>" };
		parts[n++] = (struct part){ "xl/_rels/workbook.xml.rels", rels };
		parts[n++] = (struct part){ "xl/worksheets/sheet1.xml",
					    c->body ? c->body :
						      "<worksheet xmlns=\"" SML "\"><sheetData/></worksheet>" };
		if (c->strings)
			parts[n++] = (struct part){ "xl/sharedStrings.xml", c->strings };
	} else {
		parts[n++] = (struct part){ "word/document.xml",
					    c->body ? c->body :
						      "<w:document xmlns:w=\"" WML "\"><w:body/></w:document>" };
		parts[n++] = (struct part){ "word/_rels/document.xml.rels", rels };
	}
	if (c->extra_name)
		parts[n++] = (struct part){ c->extra_name, c->extra };
	zip(b, parts, n, c->lie);
}

#define SHEET(cells) "<worksheet xmlns=\"" SML "\"><sheetData><row>" cells "</row></sheetData></worksheet>"
#define SST(items) "<sst xmlns=\"" SML "\">" items "</sst>"
#define DOC(body) "<w:document xmlns:w=\"" WML "\"><w:body><w:p>" body "</w:p></w:body></w:document>"
#define FLD(t) "<w:r><w:fldChar w:fldCharType=\"" t "\"/></w:r>"
#define INSTR(s) "<w:r><w:instrText>" s "</w:instrText></w:r>"
#define REL(type, target, mode) \
	"<Relationship Id=\"rId9\" Type=\"" RT "/" type "\" Target=\"" target "\"" mode "/>"
#define EXT " TargetMode=\"External\""

static const struct pkgcase cases[] = {
	{ "minimal xlsx", XLSX, .formula = 0 },
	{ "minimal docx", DOCX, .formula = 0 },
	{ "stored", XLSX, .lie = Z_STORED, .formula = 0 },
	{ "data descriptors", XLSX, .lie = Z_DESCRIPTOR, .formula = 0 },
	/* The ZIP. */
	{ "a local header with another name", XLSX, .lie = Z_LOCAL_NAME, .expect = -1,
	  .reason = "disagrees with the central directory" },
	{ "bytes between entries", XLSX, .lie = Z_GAP, .expect = -1, .reason = "data between entries" },
	{ "bytes before the first entry", XLSX, .lie = Z_PREFIX, .expect = -1,
	  .reason = "data before the first entry" },
	{ "an entry hidden in another's data", XLSX, .extra_name = "xl/vbaThing.xml",
	  .extra = "<a/>", .lie = Z_HIDDEN, .expect = -1, .reason = "entries overlap" },
	{ "bytes after the end record", XLSX, .lie = Z_TRAILING, .expect = -1,
	  .reason = "no end record at the end" },
	{ "an end record in the comment", XLSX, .lie = Z_SECOND_END, .expect = -1,
	  .reason = "another ZIP end record" },
	{ "an end record ending the comment", XLSX, .lie = Z_END_AT_END, .expect = -1,
	  .reason = "an empty archive" },
	{ "a symbolic link", XLSX, .extra_name = "xl/link.xml", .extra = "/etc/passwd",
	  .lie = Z_SYMLINK, .expect = -1, .reason = "symbolic links" },
	{ "a wrong CRC", XLSX, .lie = Z_BAD_CRC, .expect = -1, .reason = "CRC-32 mismatch" },
	{ "inflates past its declared size", XLSX, .lie = Z_USIZE_SHORT, .expect = -1,
	  .reason = "inflates to more than" },
	{ "bzip2", XLSX, .lie = Z_BZIP2, .expect = -1, .reason = "compression method 12" },
	{ "encrypted", XLSX, .lie = Z_ENCRYPTED, .expect = -1, .reason = "encrypted" },
	{ "no entries", XLSX, .lie = Z_EMPTY, .expect = -1, .reason = "an empty archive" },
	{ "an absolute name", XLSX, .extra_name = "/etc/x.xml", .extra = "<a/>", .expect = -1,
	  .reason = "absolute path" },
	{ "a backslash", XLSX, .extra_name = "..\\x.xml", .extra = "<a/>", .expect = -1,
	  .reason = "backslash" },
	{ "a file where a folder is needed", XLSX, .extra_name = "xl", .extra = "x",
	  .expect = -1, .reason = "a parent directory is also a file" },
	{ "a folder and a file of one name", XLSX, .extra_name = "XL/WORKBOOK.XML/",
	  .extra = "", .expect = -1, .reason = "duplicate name" },
	/* The package. */
	{ "no main part", XLSX, .ct = CT_HEAD "</Types>", .expect = -1, .reason = "is not a workbook" },
	{ "a docx named xlsx", XLSX, .ct = DOCX_CT, .expect = -1, .reason = "is not a workbook" },
	{ "a DOCTYPE in the content types", XLSX,
	  .ct = "<!DOCTYPE Types [<!ENTITY x \"y\">]><Types/>", .expect = -1, .reason = "a DOCTYPE" },
	{ "not well-formed", XLSX, .body = "<worksheet>", .expect = -1,
	  .reason = "not well-formed XML" },
	{ "a VBA content type", XLSX,
	  .ct = CT_HEAD "<Default Extension=\"bin\" ContentType=\"application/vnd.ms-office.vbaProject\"/></Types>",
	  .expect = -1, .reason = "a VBA project" },
	{ "a macro sheet relationship", XLSX, .rels = REL("xlMacrosheet", "m.xml", ""), .expect = -1,
	  .reason = "macro sheet" },
	{ "a target above the package", XLSX, .rels = REL("worksheet", "../../etc/x.xml", ""),
	  .expect = -1, .reason = "outside the package" },
	{ "an https hyperlink", XLSX, .rels = REL("hyperlink", "https://example.org/", EXT), .formula = 0 },
	{ "a mailto hyperlink", DOCX, .rels = REL("hyperlink", "mailto:a@example.org", EXT), .formula = 0 },
	{ "a javascript: hyperlink", DOCX, .rels = REL("hyperlink", "javascript:alert(1)", EXT),
	  .expect = -1, .reason = "an external relationship (hyperlink)" },
	{ "a UNC path", DOCX, .rels = REL("image", "\\\\192.0.2.1\\share\\x.png", EXT), .expect = -1,
	  .reason = "an external relationship (image)" },
	{ "a subdocument", DOCX, .rels = REL("subDocument", "sub.docx", ""), .expect = -1,
	  .reason = "a subdocument" },
	{ "a script part", DOCX, .extra_name = "word/x.bin", .extra = "#!/bin/sh\n", .expect = -1,
	  .reason = "a script" },
	{ "a part that is neither", DOCX, .extra_name = "word/x.txt", .extra = "hello", .expect = -1,
	  .reason = "neither XML nor an image" },
	{ "an image part", DOCX, .extra_name = "word/media/i.gif", .extra = "GIF89a", .formula = 0 },
	/* xlsx cells. */
	{ "a formula", XLSX, .body = SHEET("<c><f>1+1</f><v>2</v></c>"), .formula = 1 },
	{ "a negative number", XLSX, .body = SHEET("<c><v>-5</v></c>"), .formula = 0 },
	{ "a shared string with =", XLSX, .strings = SST("<si><t>  =cmd</t></si>"), .formula = 1 },
	{ "a rich shared string with -", XLSX,
	  .strings = SST("<si><r><t> </t></r><r><t>-x</t></r></si>"), .formula = 1 },
	{ "a full-width @", XLSX, .strings = SST("<si><t>\xef\xbc\xa0x</t></si>"), .formula = 1 },
	{ "a full-width letter", XLSX, .strings = SST("<si><t>\xef\xbc\xa1x</t></si>"), .formula = 0 },
	{ "an inline string with +", XLSX, .body = SHEET("<c t=\"inlineStr\"><is><t>+1</t></is></c>"),
	  .formula = 1 },
	{ "a phonetic run with =", XLSX,
	  .strings = SST("<si><rPh><t>=x</t></rPh><t>abc</t></si>"), .formula = 0 },
	{ "plain strings", XLSX, .strings = SST("<si><t>a=b</t></si><si><t> x-</t></si>"),
	  .formula = 0 },
	{ "a chart's formula reference", XLSX,
	  .extra_name = "xl/charts/chart1.xml",
	  .extra = "<c:chartSpace xmlns:c=\"http://schemas.openxmlformats.org/drawingml/2006/chart\">"
		   "<c:f>Sheet1!$A$1</c:f></c:chartSpace>",
	  .formula = 0 },
	{ "a conditional format's formula", XLSX,
	  .body = "<worksheet xmlns=\"" SML "\"><sheetData/><conditionalFormatting sqref=\"A1\">"
		  "<cfRule type=\"expression\"><formula>WEBSERVICE(\"http://x\")</formula></cfRule>"
		  "</conditionalFormatting></worksheet>",
	  .formula = 1 },
	{ "a data validation's formula", XLSX,
	  .body = "<worksheet xmlns=\"" SML "\"><sheetData/><dataValidations><dataValidation>"
		  "<formula1>1</formula1></dataValidation></dataValidations></worksheet>",
	  .formula = 1 },
	{ "data connections", XLSX, .rels = REL("connections", "connections.xml", ""), .expect = -1,
	  .reason = "data connections" },
	{ "an SVG image with a script", DOCX, .extra_name = "word/media/image2.svg",
	  .extra = "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>",
	  .expect = -1, .reason = "an SVG image with a script element" },
	{ "an SVG image", DOCX, .extra_name = "word/media/image2.svg",
	  .extra = "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect width=\"1\"/></svg>", .formula = 0 },
	{ "a DDE link", XLSX, .extra_name = "xl/externalLinks/x.xml",
	  .extra = "<externalLink xmlns=\"" SML "\"><ddeLink ddeService=\"cmd\"/></externalLink>",
	  .expect = -1, .reason = "a DDE link" },
	/* docx fields. */
	{ "a HYPERLINK field", DOCX, .body = DOC(FLD("begin") INSTR(" HYPERLINK \"https://x\" ")
						FLD("separate") FLD("end")), .formula = 0 },
	{ "DDE split in three", DOCX, .body = DOC(FLD("begin") INSTR(" D") INSTR("D") INSTR("E x")
						  FLD("end")), .expect = -1, .reason = "the field code DDE:" },
	{ "INCLUDEPICTURE nested in a field", DOCX,
	  .body = DOC(FLD("begin") INSTR("IF 1 = 1 ") FLD("begin") INSTR("includepicture \"http://x\"")
		      FLD("end") FLD("end")), .expect = -1, .reason = "the field code INCLUDEPICTURE" },
	{ "an instruction outside a field", DOCX, .body = DOC(INSTR("DDEAUTO x")), .expect = -1,
	  .reason = "the field code DDEAUTO" },
	{ "DDEAUTOMATIC is not DDEAUTO", DOCX, .body = DOC(FLD("begin") INSTR("DDEAUTOMATIC")
							   FLD("end")), .formula = 0 },
	{ "fields 40 deep", DOCX,
	  .body = DOC(FLD("begin") FLD("begin") FLD("begin") FLD("begin") FLD("begin") FLD("begin")
		      FLD("begin") FLD("begin") FLD("begin") FLD("begin") FLD("begin") FLD("begin")
		      FLD("begin") FLD("begin") FLD("begin") FLD("begin") FLD("begin") FLD("begin")
		      FLD("begin") FLD("begin") FLD("begin") FLD("begin") FLD("begin") FLD("begin")
		      FLD("begin") FLD("begin") FLD("begin") FLD("begin") FLD("begin") FLD("begin")
		      FLD("begin") FLD("begin") FLD("begin")),
	  .expect = -1, .reason = "fields nested deeper than 32" },
	{ "an altChunk", DOCX, .body = DOC("<w:altChunk/>"), .expect = -1, .reason = "altChunk" },
	{ "an OLE object under another prefix", DOCX,
	  .body = DOC("<v:x xmlns:v=\"urn:x\"><o:OLEObject xmlns:o=\"urn:o\"/></v:x>"), .expect = -1,
	  .reason = "an OLE object" },
};

static void test_packages(void **state)
{
	static struct tb b;

	size_t failed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pkgcase *c = &cases[i];
		struct sbx_media_report rep;
		int r;

		build(&b, c);
		r = validate(c->type, &b, &rep);
		assert_null(strchr(rep.reason, '\n'));
		if (r == c->expect && (!c->reason || strstr(rep.reason, c->reason)) &&
		    (r != 0 || c->formula < 0 || rep.formula_cells == (c->formula == 1)))
			continue;
		/* Every case is reported, not only the first. */
		print_error("%s: got %d (%s), formula_cells %d; wanted %d (%s)\n", c->what, r,
			    rep.reason, rep.formula_cells, c->expect, c->reason ? c->reason : "");
		failed++;
	}
	if (failed)
		fail_msg("%zu of %zu cases failed", failed, sizeof(cases) / sizeof(cases[0]));
}

/* Elements 300 deep: refused at 257, not parsed on. */
static void test_depth(void **state)
{
	static char body[300 * 7 + 200];
	static struct tb b;
	struct sbx_media_report rep;
	struct pkgcase c = { .what = "deep", .type = XLSX };
	size_t n = 0;

	(void)state;
	n += (size_t)sprintf(body, "<worksheet xmlns=\"" SML "\">");
	for (int i = 0; i < 300; i++)
		n += (size_t)sprintf(body + n, "<a>");
	for (int i = 0; i < 300; i++)
		n += (size_t)sprintf(body + n, "</a>");
	sprintf(body + n, "</worksheet>");
	c.body = body;
	build(&b, &c);
	assert_int_equal(validate(XLSX, &b, &rep), -1);
	assert_non_null(strstr(rep.reason, "nested deeper than 256"));
}

/*
 * Files LibreOffice 7.4 (Debian 12) wrote, checked in once, since the
 * test suite does not install it: office/libreoffice-calc.xlsx from a CSV
 * with a cell "=1+1" (a formula there), -writer.docx and -roundtrip.xlsx
 * from python-docx and openpyxl files with images, a chart and a comment
 * (soffice --headless --convert-to), -impress.pptx from the hand-made
 * deck of tests/e2e/office-corpus.py.
 */
static void test_libreoffice(void **state)
{
	static const struct {
		const char *name, *type;
		bool formula;
	} files[] = {
		{ "libreoffice-calc.xlsx", XLSX, true },
		{ "libreoffice-roundtrip.xlsx", XLSX, false },
		{ "libreoffice-writer.docx", DOCX, false },
		{ "libreoffice-impress.pptx", PPTX, false },
	};
	const char *src = getenv("SBX_SRCDIR");

	(void)state;
	assert_non_null(src);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		static struct tb b;
		struct sbx_media_report rep;
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/tests/unit/helpers/validate/office/%s", src,
			 files[i].name);
		f = fopen(path, "rb");
		assert_non_null(f);
		b.n = fread(b.p, 1, sizeof(b.p), f);
		fclose(f);
		assert_string_equal(sbx_media_detect(b.p, 512, files[i].name), files[i].type);
		if (validate(files[i].type, &b, &rep) != 0)
			fail_msg("%s: %s", files[i].name, rep.reason);
		assert_int_equal(rep.formula_cells, files[i].formula);
	}
}

/* What a reader of application/zip outputs gets: the members in order,
 * found without case, read whole; a sink may stop early or refuse. */
struct collect {
	char data[256];
	size_t n;
	int stop_after; /* 0: never; 1: stop quietly; -1: refuse */
};

static int collect(void *ud, const unsigned char *p, size_t n, struct sbx_media_report *rep)
{
	struct collect *c = ud;

	assert_true(c->n + n < sizeof(c->data));
	memcpy(c->data + c->n, p, n);
	c->n += n;
	if (c->stop_after < 0)
		return sbx_media_fail(rep, "the sink says no");
	return c->stop_after;
}

static void test_zip_api(void **state)
{
	static const struct part parts[] = {
		{ "a.csv", "x,y\n1,2\n" }, { "dir/B.csv", "z\n3\n" }, { "dir/", "" },
	};
	static struct tb b;
	struct sbx_zip_limits lim;
	struct sbx_media_report rep = { 0 };
	struct sbx_zip *z = NULL;
	struct buf f;
	int fd;

	(void)state;
	zip(&b, parts, 3, Z_HONEST);
	f = (struct buf){ .p = b.p, .n = b.n };
	fd = memfd_of(&f);
	sbx_zip_limits_default(&lim);
	assert_int_equal(sbx_zip_open(fd, b.n, &lim, "zip", &z, &rep), 0);
	assert_int_equal(z->n, 3);
	assert_string_equal(z->v[1].name, "dir/B.csv");
	assert_true(z->v[2].is_dir);
	assert_ptr_equal(sbx_zip_find(z, "DIR/b.csv"), &z->v[1]);
	assert_null(sbx_zip_find(z, "c.csv"));
	for (size_t i = 0; i < 2; i++) {
		struct collect c = { .n = 0 };

		assert_int_equal(sbx_zip_read(z, &z->v[i], collect, &c, "zip", &rep), 0);
		assert_int_equal(c.n, strlen(parts[i].data));
		assert_memory_equal(c.data, parts[i].data, c.n);
	}
	{
		struct collect quiet = { .stop_after = 1 }, refuse = { .stop_after = -1 };

		assert_int_equal(sbx_zip_read(z, &z->v[0], collect, &quiet, "zip", &rep), 0);
		assert_int_equal(sbx_zip_read(z, &z->v[0], collect, &refuse, "zip", &rep), -1);
		assert_string_equal(rep.reason, "the sink says no");
	}
	sbx_zip_free(z);
	/* Caps from the caller: two entries are too many. */
	lim.max_entries = 2;
	assert_int_equal(sbx_zip_open(fd, b.n, &lim, "zip", &z, &rep), -1);
	assert_string_equal(rep.reason, "zip: more than 2 entries");
	assert_null(z);
	close(fd);
}

/* Detection: a ZIP head is the type its name says, and only then. */
static void test_detect(void **state)
{
	static const unsigned char zip[] = "PK\3\4\24\0\0\0";

	(void)state;
	assert_string_equal(sbx_media_detect(zip, 8, "a.xlsx"), XLSX);
	assert_string_equal(sbx_media_detect(zip, 8, "a.DOCX"), DOCX);
	assert_string_equal(sbx_media_detect(zip, 8, "a.pptx"), PPTX);
	/* A .zip is application/zip, its members checked one by one. */
	assert_string_equal(sbx_media_detect(zip, 8, "a.zip"), "application/zip");
	assert_null(sbx_media_detect(zip, 8, "a.npz"));
	assert_null(sbx_media_detect(zip, 8, "a.jar"));
	assert_null(sbx_media_detect(zip, 8, "a.csv"));
	assert_string_equal(sbx_media_detect((const unsigned char *)"a,b\n", 4, "a.xlsx"), "text/plain");
}

/* Every single-bit change of a valid package: a verdict, one line. */
static void test_mutations(void **state)
{
	static struct tb b;
	const struct pkgcase c = { "m", XLSX, .body = SHEET("<c><f>1</f></c>"),
				   .strings = SST("<si><t>x</t></si>") };

	(void)state;
	build(&b, &c);
	for (size_t i = 0; i < b.n; i++) {
		unsigned char keep = b.p[i];

		for (unsigned x = 1; x < 256; x <<= 1) {
			struct sbx_media_report rep;

			b.p[i] = keep ^ (unsigned char)x;
			if (validate(XLSX, &b, &rep) < 0) {
				assert_true(rep.reason[0] != '\0');
				assert_null(strchr(rep.reason, '\n'));
			}
		}
		b.p[i] = keep;
	}
}

/* application/zip (serve-zip.c): each member as an output, under the
 * run's caps from the request. */
static void zip_verdict(const char *caps, const struct part *parts, size_t n,
			struct sbx_verdict *v)
{
	char req[256];
	struct sbx_validator *val = NULL;
	static struct tb b;
	struct buf f;
	char why[256];
	int fd;

	snprintf(req, sizeof(req),
		 "{\"sbx_validate\":1,\"outputs\":null,\"allowed\":[\"text/csv\",\"text/plain\","
		 "\"application/zip\"]%s}", caps);
	assert_int_equal(sbx_validator_new(req, strlen(req), &val, why, sizeof(why)), 0);
	zip(&b, parts, n, Z_HONEST);
	f = (struct buf){ .p = b.p, .n = b.n };
	fd = memfd_of(&f);
	sbx_validator_check(val, fd, "out/t.zip", b.n, v);
	close(fd);
	sbx_validator_free(val);
}

static void test_zip_output(void **state)
{
	static const struct part good[] = { { "d/a.csv", "x,y\n1,2\n" }, { "b.txt", "hi\n" } };
	static const struct part pkl[] = { { "a.csv", "x,y\n1,2\n" }, { "m.pkl", "\x80\x04K\x01." } };
	static const struct part nested[] = { { "a.csv", "x,y\n" }, { "in.csv", "PK\3\4zz" } };
	static const struct part json[] = { { "a.json", "{}" } };
	struct sbx_verdict v;

	(void)state;
	zip_verdict("", good, 2, &v);
	assert_true(v.ok);
	assert_string_equal(v.media_type, "application/zip");
	assert_true(v.has_members);
	assert_int_equal(v.n_members, 2);
	assert_string_equal(v.members[0].path, "d/a.csv");
	assert_string_equal(v.members[0].media_type, "text/csv");
	assert_int_equal(v.members[0].size, 8);
	assert_string_equal(v.members[0].sha256,
			    "81bf9fa83c6f7f151bd491a98cd7d933de3965289e3ebd77c6c425f7eaa16392");
	assert_string_equal(v.members[1].media_type, "text/plain");
	/* The first member refused refuses the archive, and is named. */
	zip_verdict("", pkl, 2, &v);
	assert_false(v.ok);
	assert_string_equal(v.reason_code, "code_as_data");
	assert_non_null(strstr(v.reason, "member \"m.pkl\": pickle"));
	assert_int_equal(v.n_members, 2);
	assert_false(v.members[1].ok);
	zip_verdict("", nested, 2, &v);
	assert_string_equal(v.reason_code, "nested_archive");
	zip_verdict("", json, 1, &v);
	assert_string_equal(v.reason_code, "not_allowed_type");
	/* The run's caps: what is left of output_files and output_bytes. */
	zip_verdict(",\"output_files\":1", good, 2, &v);
	assert_string_equal(v.reason_code, "over_count");
	assert_false(v.has_members);
	zip_verdict(",\"output_bytes\":10", good, 2, &v);
	assert_string_equal(v.reason_code, "too_large");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_packages),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_libreoffice),
		cmocka_unit_test(test_zip_api),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_zip_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
