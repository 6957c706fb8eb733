/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-media-documents.c - the text, CSV and PDF validators, on samples
 * built here and in samples.c: UTF-8, terminal controls and HTML dressed
 * as text; CSV records, separators and formula cells; PDF headers,
 * trailers and bodies.  Each case names the piece of the reason it
 * expects, so a file rejected for the wrong cause fails the test.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "samples.h"
#include "util.h"
#include "validate.h"

/* A CSV bigger than the reader's buffer with multi-byte characters
 * straddling the buffer edges, and one formula cell at the very end. */
static struct buf big_csv(bool formula)
{
	struct buf b = { 0 };

	puts_(&b, "name,city,n\r\n");
	for (int i = 0; i < 8000; i++)
		puts_(&b, "\"Zoë, \"\"the\"\" one\",Kraków,12\r\n");
	puts_(&b, formula ? "x,y,=1+1\r\n" : "x,y,1\r\n");
	return b;
}

static struct buf mk_bigcsv(int f) { return big_csv(f); }

/* PDFs whose header and trailer are right; only the body varies. */
static struct buf mk_pdf_body(int i)
{
	struct buf b = { 0 };

	puts_(&b, "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n");
	switch (i) {
	case 0: /* a ZIP between two objects */
		puts_(&b, "1 0 obj\n<< /Type /Catalog >>\nendobj\n");
		put_zip(&b);
		puts_(&b, "\n2 0 obj\n<< >>\nendobj\n");
		break;
	case 1: /* an HTML page */
		puts_(&b, "<html><body><script>alert(document.cookie)</script></body></html>\n");
		break;
	case 2: /* a ZIP in the last stream, its end record near the end */
		puts_(&b, "1 0 obj\n<< /Length 120 >>\nstream\n");
		put_zip(&b);
		puts_(&b, "\nendstream\nendobj\n");
		break;
	case 3: /* scripts: valid, flagged */
		puts_(&b, "1 0 obj\n<< /Type /Catalog /OpenAction 2 0 R >>\nendobj\n"
			  "2 0 obj\n<< /S /J#61vaScript /JS (app.alert\\(1\\)) >>\nendobj\n");
		break;
	case 4: /* a signature by chance in compressed data: valid, flagged */
		puts_(&b, "1 0 obj\n<< /Length 8 /Filter /FlateDecode >>\nstream\r\nx\x9cPK\x03\x04\x01\x02"
			  "\nendstream\nendobj\n");
		break;
	case 5: /* binary bytes as a token */
		puts_(&b, "1 0 obj\n<< /A \x01\x02\x03 >>\nendobj\n");
		break;
	case 6: /* an ordinary body: strings, arrays, references, a stream */
		puts_(&b, "1 0 obj\n<< /Type /Catalog /Pages 2 0 R /Names [(a\\)b) <48656c6c6f> 1.5 -2 +.5] >>\n"
			  "endobj\n2 0 obj\n<< /Length 44 >>\nstream\nBT /F1 12 Tf 72 712 Td (endstrea m) Tj ET\n"
			  "endstream\nendobj\n3 0 obj\n[true false null]\nendobj\n");
		break;
	case 7: /* unbalanced */
		puts_(&b, "1 0 obj\n<< /A [1 2 >>\nendobj\n");
		break;
	}
	puts_(&b, "xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 >>\nstartxref\n16\n%%EOF\n");
	return b;
}

/* Most cases expect no flags: leave .flags out. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct vcase vcases[] = {
	{ "text good", "text/plain", mk_text, 0, 0, NULL, -1 },
	{ "text NUL", "text/plain", mk_text, 1, -1, "NUL byte at offset 4", -1 },
	{ "text bad byte", "text/plain", mk_text, 2, -1, "invalid UTF-8 at offset 4", -1 },
	{ "text overlong", "text/plain", mk_text, 3, -1, "invalid UTF-8", -1 },
	{ "text surrogate", "text/plain", mk_text, 4, -1, "invalid UTF-8", -1 },
	{ "text cut sequence", "text/plain", mk_text, 5, -1, "truncated UTF-8", -1 },
	{ "text empty", "text/plain", mk_text, 25, 0, NULL, -1 },
	{ "text NUL past words", "text/plain", mk_text, 28, -1, "NUL byte at offset 37", -1 },
	{ "text stray continuation", "text/plain", mk_text, 29, -1, "invalid UTF-8 at offset 45",
	  -1 },

	{ "csv rfc4180", "text/csv", mk_text, 6, 0, NULL, 0 },
	{ "csv ragged", "text/csv", mk_text, 7, -1, "record 3 has 2 fields, expected 3", -1 },
	{ "csv formula =", "text/csv", mk_text, 8, 0, NULL, 1 },
	{ "csv formula +", "text/csv", mk_text, 9, 0, NULL, 1 },
	{ "csv formula @", "text/csv", mk_text, 10, 0, NULL, 1 },
	{ "csv formula -", "text/csv", mk_text, 11, 0, NULL, 1 },
	{ "csv formula tab", "text/csv", mk_text, 12, 0, NULL, 1 },
	{ "csv quote in field", "text/csv", mk_text, 13, -1, "quote inside an unquoted field", -1 },
	{ "csv unterminated", "text/csv", mk_text, 14, -1, "unterminated quoted field", -1 },
	{ "csv bare CR", "text/csv", mk_text, 15, -1, "bare CR", -1 },
	{ "csv no final newline", "text/csv", mk_text, 16, 0, NULL, 0 },
	{ "csv text after quote", "text/csv", mk_text, 17, -1, "text after a closing quote", -1 },
	{ "csv NUL", "text/csv", mk_text, 18, -1, "NUL byte", -1 },
	{ "csv invalid utf8", "text/csv", mk_text, 2, -1, "invalid UTF-8", -1 },
	{ "csv blank line", "text/csv", mk_text, 27, -1, "record 3 has 1 fields", -1 },
	{ "csv big, clean", "text/csv", mk_bigcsv, 0, 0, NULL, 0 },
	{ "csv big, formula at end", "text/csv", mk_bigcsv, 1, 0, NULL, 1 },

	{ "pdf 1.7", "application/pdf", mk_pdf, 0, 0, NULL, -1 },
	{ "pdf 2.0 CRLF", "application/pdf", mk_pdf, 1, 0, NULL, -1 },
	{ "pdf version 3.1", "application/pdf", mk_pdf, 2, -1, "no %PDF-1.x header", -1 },
	{ "pdf no EOF", "application/pdf", mk_pdf, 3, -1, "no %%EOF", -1 },
	{ "pdf data after EOF", "application/pdf", mk_pdf, 4, -1, "data after the last %%EOF", -1 },
	{ "pdf no startxref", "application/pdf", mk_pdf, 5, -1, "no startxref", -1 },
	{ "pdf startxref outside", "application/pdf", mk_pdf, 6, -1, "outside the file", -1 },
	{ "pdf startxref empty", "application/pdf", mk_pdf, 7, -1, "startxref offset missing", -1 },
	{ "pdf bad header", "application/pdf", mk_pdf, 8, -1, "header", -1 },

	{ "csv sep=; line", "text/csv", mk_text, 30, 0, NULL, 1 },
	{ "csv sniffed ;", "text/csv", mk_text, 31, 0, NULL, 1 },
	{ "csv sniffed TAB", "text/csv", mk_text, 32, 0, NULL, 1 },
	{ "csv full-width =", "text/csv", mk_text, 33, 0, NULL, 1 },
	{ "csv leading space =", "text/csv", mk_text, 34, 0, NULL, 1 },
	{ "csv quoted space @", "text/csv", mk_text, 35, 0, NULL, 1 },
	{ "csv = after ; in a , file", "text/csv", mk_text, 36, 0, NULL, 1 },
	{ "csv ; with decimal commas", "text/csv", mk_text, 37, 0, NULL, 0 },
	{ "csv sep=; CRLF", "text/csv", mk_text, 38, 0, NULL, 0 },
	{ "csv full-width +", "text/csv", mk_text, 39, 0, NULL, 1 },
	{ "csv full-width @", "text/csv", mk_text, 40, 0, NULL, 1 },
	{ "csv spaces -", "text/csv", mk_text, 41, 0, NULL, 1 },
	{ "csv OSC 52", "text/csv", mk_text, 42, -1, "control character 0x1b at offset 6", -1 },
	{ "csv DEL", "text/csv", mk_text, 43, -1, "control character 0x7f", -1 },
	{ "csv C1 CSI", "text/csv", mk_text, 44, -1, "C1 control character U+009B", -1 },
	{ "csv backspace", "text/csv", mk_text, 45, -1, "control character 0x08", -1 },
	{ "text SGR colours", "text/plain", mk_text, 46, 0, NULL, -1, SBX_MEDIA_FLAG_COLORS },
	{ "text OSC 52", "text/plain", mk_text, 47, -1, "terminal escape ESC 0x5d at offset 5", -1 },
	{ "text clear screen", "text/plain", mk_text, 48, -1, "terminal control sequence", -1 },
	{ "text backspace", "text/plain", mk_text, 49, -1, "control character 0x08 at offset 4", -1 },
	{ "text C1 OSC", "text/plain", mk_text, 50, -1, "C1 control character U+009D at offset 0",
	  -1 },
	{ "text DEL", "text/plain", mk_text, 51, -1, "control character 0x7f", -1 },
	{ "text TAB CR LF NBSP", "text/plain", mk_text, 52, 0, NULL, -1 },
	{ "text cut escape", "text/plain", mk_text, 53, -1, "unterminated terminal escape", -1 },
	{ "text long SGR", "text/plain", mk_text, 54, -1, "terminal control sequence", -1 },
	{ "text BEL", "text/plain", mk_text, 55, -1, "control character 0x07", -1 },

	{ "pdf ZIP between objects", "application/pdf", mk_pdf_body, 0, -1, "not a PDF object", -1 },
	{ "pdf HTML body", "application/pdf", mk_pdf_body, 1, -1, "offset 15: not a PDF object", -1 },
	{ "pdf ZIP in a stream", "application/pdf", mk_pdf_body, 2, -1,
	  "ZIP end-of-central-directory record", -1 },
	{ "pdf JavaScript", "application/pdf", mk_pdf_body, 3, 0, NULL, -1,
	  SBX_MEDIA_FLAG_PDF_ACTIVE },
	{ "pdf signature in a stream", "application/pdf", mk_pdf_body, 4, 0, NULL, -1,
	  SBX_MEDIA_FLAG_EMBEDDED },
	{ "pdf binary token", "application/pdf", mk_pdf_body, 5, -1, "not a PDF token", -1 },
	{ "pdf ordinary body", "application/pdf", mk_pdf_body, 6, 0, NULL, -1 },
	{ "pdf unbalanced", "application/pdf", mk_pdf_body, 7, -1, "unbalanced brackets", -1 },
	{ "text HTML page", "text/plain", mk_text, 60, -1, "starts like an HTML or XML document", -1 },
	{ "text script after spaces", "text/plain", mk_text, 61, -1, "(<script)", -1 },
	{ "text <p>", "text/plain", mk_text, 62, -1, "(<p)", -1 },
	{ "text XML", "text/plain", mk_text, 63, -1, "(<?xml)", -1 },
	{ "text mentions <script>", "text/plain", mk_text, 64, 0, NULL, -1 },
	{ "text <pre", "text/plain", mk_text, 65, 0, NULL, -1 },
	{ "csv HTML", "text/csv", mk_text, 66, -1, "csv: starts like an HTML", -1 },
};
#pragma GCC diagnostic pop

static void test_validators(void **state)
{
	check_vcases(vcases, ARRAY_SIZE(vcases));
}

/* A good PDF whose last stream holds a ZIP (a stream's bytes are only
 * flagged): refused whatever the ZIP's end record says. */
static struct buf mk_pdf_zip_end(int v)
{
	struct buf b = { 0 };

	puts_(&b, "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Length 300 >>\nstream\n");
	put_zip_end(&b, (enum zip_end_variant)v);
	puts_(&b, "\nendstream\nendobj\n"
		  "xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 >>\nstartxref\n16\n%%EOF\n");
	return b;
}

static void test_zip_ends(void **state)
{
	check_zip_ends("application/pdf", mk_pdf_zip_end, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validators),
		cmocka_unit_test(test_zip_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
