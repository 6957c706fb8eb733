/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-validate.c - media detection and validators, on samples built in
 * samples.c and here.
 *
 * Each case names the piece of the reason it expects, so a file rejected
 * for the wrong cause fails the test.
 * The PNG and JPEG validators are tested in test-media-images.c.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "samples.h"
#include "util.h"
#include "validate.h"

static struct buf deep_json(unsigned depth)
{
	struct buf b = { 0 };

	for (unsigned i = 0; i < depth; i++)
		puts_(&b, "[");
	for (unsigned i = 0; i < depth; i++)
		puts_(&b, "]");
	return b;
}

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

static struct buf mk_deep(int d) { return deep_json((unsigned)d); }
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

	{ "json good", "application/json", mk_text, 19, 0, NULL, -1 },
	{ "json trailing comma", "application/json", mk_text, 20, -1, "json: line 1", -1 },
	{ "json duplicate key", "application/json", mk_text, 21, -1, "duplicate", -1 },
	{ "json scalar", "application/json", mk_text, 22, 0, NULL, -1 },
	{ "json brackets in string", "application/json", mk_text, 23, 0, NULL, -1 },
	{ "json escaped quote", "application/json", mk_text, 26, 0, NULL, -1 },
	{ "json invalid utf8", "application/json", mk_text, 24, -1, "invalid UTF-8", -1 },
	{ "json NUL", "application/json", mk_text, 1, -1, "NUL byte", -1 },
	{ "json empty", "application/json", mk_text, 25, -1, "json:", -1 },
	{ "json depth 64", "application/json", mk_deep, 64, 0, NULL, -1 },
	{ "json depth 65", "application/json", mk_deep, 65, -1, "nesting deeper than 64", -1 },
	{ "json depth 100000", "application/json", mk_deep, 100000, -1, "nesting deeper", -1 },

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
	{ "json escaped ESC", "application/json", mk_text, 56, 0, NULL, -1, SBX_MEDIA_FLAG_CONTROLS },
	{ "json raw DEL", "application/json", mk_text, 57, 0, NULL, -1, SBX_MEDIA_FLAG_CONTROLS },
	{ "json C1 in key and value", "application/json", mk_text, 58, 0, NULL, -1,
	  SBX_MEDIA_FLAG_CONTROLS },
	{ "json no controls", "application/json", mk_text, 59, 0, NULL, -1 },

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

	{ "unknown type", "text/html", mk_text, 0, -1, "no validator for media type text/html",
	  -1 },
};
#pragma GCC diagnostic pop

static void test_validators(void **state)
{
	check_vcases(vcases, ARRAY_SIZE(vcases));
}

/* A file shorter than the size the caller passes reads as an error, not as
 * uninitialized data. */
static void test_short_file(void **state)
{
	struct buf b = make_png(PNG_GOOD), t = TEXT("short text");
	struct sbx_media_report rep;
	int fd = memfd_of(&b), tfd = memfd_of(&t);

	assert_int_equal(sbx_media_validate("image/png", fd, b.n + 100, &rep), -1);
	assert_int_equal(sbx_media_validate("text/plain", tfd, t.n + 100, &rep), -1);
	assert_non_null(strstr(rep.reason, "read error"));
	assert_int_equal(sbx_media_validate("text/csv", tfd, t.n + 1, &rep), -1);
	assert_non_null(strstr(rep.reason, "read error"));
	close(fd);
	close(tfd);
	free(b.p);
	free(t.p);
}

static void test_report_fields(void **state)
{
	struct buf b = make_png(PNG_GOOD);
	struct buf c = TEXT("a,b,c\n1,2,3\n4,5,6\n");
	struct sbx_media_report rep;
	int fd = memfd_of(&b), fd2 = memfd_of(&c);

	assert_int_equal(sbx_media_validate("image/png", fd, b.n, &rep), 0);
	assert_int_equal(rep.width, 1);
	assert_int_equal(rep.height, 1);
	assert_int_equal(sbx_media_validate("text/csv", fd2, c.n, &rep), 0);
	assert_int_equal(rep.rows, 3);
	assert_int_equal(rep.columns, 3);
	close(fd2);
	/* The "sep=" line names the separator and is not a record. */
	c.n = 0;
	puts_(&c, "sep=;\na;b;c\n1,5;2;3\n");
	fd2 = memfd_of(&c);
	assert_int_equal(sbx_media_validate("text/csv", fd2, c.n, &rep), 0);
	assert_int_equal(rep.rows, 2);
	assert_int_equal(rep.columns, 3);
	close(fd);
	close(fd2);
	free(b.p);
	free(c.p);
}

struct dcase {
	const char *name;
	struct buf (*make)(int arg);
	int arg;
	const char *detected; /* NULL: not a known type */
	const char *by_name;
};

static struct buf mk_binary(int arg)
{
	return text("\x7f" "ELF\x02\x01\x01\x00\x00\x00", 10);
}

static const struct dcase dcases[] = {
	{ "a.png", mk_png, PNG_GOOD, "image/png", "image/png" },
	{ "A.PNG", mk_png, PNG_GOOD, "image/png", "image/png" },
	{ "totals.csv", mk_png, PNG_GOOD, "image/png", "text/csv" }, /* misleading extension */
	{ "p.jpeg", mk_jpeg, JPEG_GOOD, "image/jpeg", "image/jpeg" },
	{ "p.jpg", mk_jpeg, JPEG_GOOD, "image/jpeg", "image/jpeg" },
	{ "r.pdf", mk_pdf, 0, "application/pdf", "application/pdf" },
	{ "t.csv", mk_text, 6, "text/csv", "text/csv" },
	{ "t.json", mk_text, 19, "application/json", "application/json" },
	{ "t.txt", mk_text, 0, "text/plain", "text/plain" },
	{ "t.log", mk_text, 0, "text/plain", "text/plain" },
	{ "t.md", mk_text, 0, "text/plain", "text/plain" },
	{ "fake.png", mk_text, 0, "text/plain", "image/png" },
	{ "page.html", mk_text, 0, "text/plain", NULL },
	{ "noext", mk_text, 0, "text/plain", NULL },
	{ ".png", mk_text, 0, "text/plain", NULL },
	{ "x.csv", mk_text, 1, NULL, "text/csv" },  /* NUL: not text */
	{ "x.txt", mk_text, 5, NULL, "text/plain" }, /* whole file, cut sequence */
	{ "prog.csv", mk_binary, 0, NULL, "text/csv" },
	{ "empty.txt", mk_text, 25, "text/plain", "text/plain" },
};

static void test_detect(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(dcases); i++) {
		const struct dcase *c = &dcases[i];
		struct buf b = c->make(c->arg);
		const char *d = sbx_media_detect(b.p, b.n < SBX_MEDIA_HEAD ? b.n : SBX_MEDIA_HEAD,
						 c->name);
		const char *e = sbx_media_type_for_name(c->name);

		print_message("# %s: detected %s, extension %s\n", c->name, d ? d : "-", e ? e : "-");
		if (c->detected)
			assert_string_equal(d, c->detected);
		else
			assert_null(d);
		if (c->by_name)
			assert_string_equal(e, c->by_name);
		else
			assert_null(e);
		free(b.p);
	}
}

/* A head cut in the middle of a multi-byte character is still text. */
static void test_detect_cut_head(void **state)
{
	unsigned char head[SBX_MEDIA_HEAD];

	memset(head, 'a', sizeof(head));
	head[sizeof(head) - 2] = 0xe2;
	head[sizeof(head) - 1] = 0x82;
	assert_string_equal(sbx_media_detect(head, sizeof(head), "x.txt"), "text/plain");
	head[sizeof(head) - 1] = 'a';
	assert_null(sbx_media_detect(head, sizeof(head), "x.txt"));
}


/* --- JSON: the streaming checker against jansson ---------------------------- */

#include "fuzz/json-reference.h"

#define DBL_OVER_MID "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792"

static const char *const json_cases[] = {
	/* valid */
	"0", "-0", "1.5e3", "1E+2", "-1.0e-2", "0.0", "123", "\"a\"", "\"\\u00e9\"",
	"\"\\ud83d\\ude00\"", "\"\\uD83D\\uDE00\"", "[]", "{}", " [ 1 , 2 ] \r\n\t", "{\"a\":{\"a\":1}}",
	"[{\"a\":1},{\"a\":2}]", "{\"a\":1,\"b\":2}", "{\"ab\":1,\"ba\":2}", "{\"a\":1,\"A\":2}",
	"9223372036854775807", "-9223372036854775808", "0000", "1e308", "1.7976931348623157e308",
	"1.7976931348623158e308", "1e-400", "-1e-99999", "0e99999999999", "0.000e400", "true",
	"false", "null", "[true,false,null]", "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"", "{\"\":1}",
	"\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "\"\x7f\"", "\"\xc2\x85\"",
	"{\"a\":[1,{\"b\":[{}]}],\"c\":{\"d\":{\"e\":null}}}", "[\"\\u001b[31m\"]",
	"{\"x\":1,\"y\":{\"x\":2,\"y\":3},\"z\":4}", "1.7976931348623157e+308",
	DBL_OVER_MID ".0", "0." DBL_OVER_MID "e309", "[" DBL_OVER_MID "e-1]",
	/* just below the midpoint between DBL_MAX and 2^1024: rounds to DBL_MAX */
	"179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791.99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999",
	/* invalid */
	"", " ", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}", "{,}", "{\"a\":1,}", "01", "-01", "-", "1.",
	".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "-Infinity", "tru", "truex", "nul",
	"nulll", "\"\x01\"", "\"\x1f\"", "\"\\u0000\"", "{\"\\u0000\":1}", "\"\\ud800\"",
	"\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\ud800x\"", "\"\\ud800\\n\"", "\"\\q\"", "\"\\u12\"",
	"\"\\u12g4\"", "\"abc", "[1 2]", "1 2", "{\"a\":1 \"b\":2}", "\xef\xbb\xbf[]", "[1]x", "[1]]",
	"[[]", "{\"a\":1}}", "'a'", "[-]", "[1,2", "{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}",
	"{\"\\ud83d\\ude00\":1,\"\xf0\x9f\x98\x80\":2}", "{\"x\":{\"y\":1,\"y\":2}}",
	"[{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,\"i\":9,\"a\":0}]",
	"9223372036854775808", "-9223372036854775809", "12345678901234567890123", "1e400", "-1e400",
	"[1e309]", "123e99999999999999999999999", "\f[]", "[\v]", "{\"a\" 1}", "{1:2}",
	"{\"a\":1,,\"b\":2}", "[\"a\",]", "\"\t\"", "\"\n\"", "[01]", "[1.e1]", "[1e1.5]", "{\"a\"::1}",
	"[}", "{]", "]", "}", ",", ":", "\"\\u00\"", "\"\\", "[\"\\ud800\\ud800\"]",
	DBL_OVER_MID ".000000000000000000000000000000000000000000000000000000000000000000000000000000"
		     "000000000000000000000000000000000000000000000000000000000000000000000000000000"
		     "000000000000000000000000000000000000000000000000000000000000000000000000000000"
		     "000000000000000000000000000000000000000000000000000000000000000000000000000000"
		     "000000000000000000000000000000000000000000000000000000000000000000000000000001",
	DBL_OVER_MID, "-" DBL_OVER_MID ".5", "[" DBL_OVER_MID "0e-1]", "1e308000", "\"\xc0\xaf\"",
	"\"\xed\xa0\x80\"", "\"\xe2\x82\"", "[1]\0", "\"a\0b\"",
};
static const size_t json_case_len[] = {
	[ARRAY_SIZE(json_cases) - 2] = 4, [ARRAY_SIZE(json_cases) - 1] = 5,
};

static int json_verdict(int fd, const unsigned char *p, size_t n, struct sbx_media_report *rep)
{
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, p, n, 0), (ssize_t)n);
	return sbx_media_validate("application/json", fd, n, rep);
}

static void check_same(int fd, const unsigned char *p, size_t n)
{
	struct sbx_media_report rep;
	int ours = json_verdict(fd, p, n, &rep);
	bool theirs = jansson_accepts(p, n);

	if ((ours == 0) != theirs)
		fail_msg("verdicts differ on %zu bytes \"%.*s\": streaming %s, jansson %s", n,
			 (int)(n > 200 ? 200 : n), (const char *)p, ours == 0 ? "accepts" : rep.reason,
			 theirs ? "accepts" : "rejects");
	if (ours < 0)
		assert_true(rep.reason[0] != '\0');
}

/* The table, then mutations of each case: bytes inserted, deleted and
 * replaced, drawn from JSON's own alphabet so that most stay near-valid. */
static void test_json_matches_jansson(void **state)
{
	static const char alphabet[] = "[]{}\",:0123456789-+.eE\\u tfnrla\x01\x7f\xc3\xa9\xed\xa0\xf0";
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int fd = memfd_create("json", MFD_CLOEXEC);
	size_t accepted = 0, total = 0;

	assert_true(fd >= 0);
	for (size_t i = 0; i < ARRAY_SIZE(json_cases); i++) {
		size_t n = i < ARRAY_SIZE(json_case_len) && json_case_len[i] ? json_case_len[i]
									    : strlen(json_cases[i]);
		check_same(fd, (const unsigned char *)json_cases[i], n);
		for (int m = 0; m < 300; m++) {
			unsigned char buf[1200];
			size_t len = n < 1000 ? n : 1000;
			int edits = 1 + (int)(x % 3);

			memcpy(buf, json_cases[i], len);
			while (edits-- > 0) {
				size_t at;
				unsigned char c;

				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				at = len ? (size_t)(x >> 8) % (len + 1) : 0;
				c = (unsigned char)alphabet[(x >> 40) % (sizeof(alphabet) - 1)];
				switch (x % 3) {
				case 0: /* insert */
					memmove(buf + at + 1, buf + at, len - at);
					buf[at] = c;
					len++;
					break;
				case 1: /* delete */
					if (at < len) {
						memmove(buf + at, buf + at + 1, len - at - 1);
						len--;
					}
					break;
				default: /* replace */
					if (at < len)
						buf[at] = c;
				}
			}
			check_same(fd, buf, len);
			accepted += jansson_accepts(buf, len);
			total++;
		}
	}
	print_message("# %zu cases + %zu mutations, %zu of them valid\n", ARRAY_SIZE(json_cases),
		      total, accepted);
	/* The mutations must exercise both verdicts to prove anything. */
	assert_true(accepted > total / 20 && accepted < total - total / 20);
	close(fd);
}

/* Documents around the depth and key bounds, and keys that need decoding. */
static void test_json_bounds(void **state)
{
	int fd = memfd_create("json", MFD_CLOEXEC);
	struct sbx_media_report rep;
	struct buf b = { 0 };
	char k[32];

	assert_true(fd >= 0);
	/* Reals with millions of digits: the exponent comes from the digit
	 * counts (3e6 integer digits and 1e6 after the point overflow, one
	 * integer digit and 3e6 after it do not). */
	for (int over = 0; over < 2; over++) {
		size_t ni = over ? 3000000 : 1, nf = over ? 1000000 : 3000000;

		b.p = sbx_xmalloc(ni + nf + 2);
		memset(b.p, '1', ni);
		b.p[ni] = '.';
		memset(b.p + ni + 1, '2', nf);
		b.n = ni + nf + 1;
		assert_int_equal(json_verdict(fd, b.p, b.n, &rep), over ? -1 : 0);
		assert_int_equal(jansson_accepts(b.p, b.n), !over);
		free(b.p);
		b = (struct buf){ 0 };
	}
	/* An object with SBX_MEDIA_JSON_MAX_KEYS keys is fine... */
	puts_(&b, "{");
	for (unsigned i = 0; i < SBX_MEDIA_JSON_MAX_KEYS; i++) {
		snprintf(k, sizeof(k), "%s\"%x\":0", i ? "," : "", i);
		puts_(&b, k);
	}
	puts_(&b, "}");
	assert_int_equal(json_verdict(fd, b.p, b.n, &rep), 0);
	/* ... one more is refused, with the bound in the reason. */
	b.n--;
	puts_(&b, ",\"last\":1}");
	assert_int_equal(json_verdict(fd, b.p, b.n, &rep), -1);
	assert_non_null(strstr(rep.reason, "more than 1048576 keys"));
	free(b.p);
	/* A duplicate far apart, past the reader's buffer. */
	b = (struct buf){ 0 };
	puts_(&b, "{\"dup\":1");
	for (unsigned i = 0; i < 20000; i++) {
		snprintf(k, sizeof(k), ",\"k%u\":[%u]", i, i);
		puts_(&b, k);
	}
	puts_(&b, ",\"d\\u0075p\":2}");
	assert_int_equal(json_verdict(fd, b.p, b.n, &rep), -1);
	assert_non_null(strstr(rep.reason, "duplicate"));
	assert_false(jansson_accepts(b.p, b.n));
	free(b.p);
	close(fd);
}

/* Build the worst allowed kinds of JSON: flat [0,0,...] and nesting at the
 * depth limit around the same. */
static struct buf zeros_json(size_t bytes, unsigned depth)
{
	struct buf b = { 0 };

	b.p = sbx_xmalloc(bytes + 2 * depth + 4);
	for (unsigned i = 0; i < depth; i++)
		b.p[b.n++] = '[';
	while (b.n + 2 + depth < bytes) {
		b.p[b.n++] = '0';
		b.p[b.n++] = ',';
	}
	b.p[b.n++] = '0';
	for (unsigned i = 0; i < depth; i++)
		b.p[b.n++] = ']';
	return b;
}

static uint64_t vm_size(void)
{
	FILE *f = fopen("/proc/self/statm", "re");
	unsigned long pages = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 * The validator runs in the broker, outside every cgroup: 16 MiB of
 * [0,0,...] must validate within an address space 32 MiB larger than the
 * test's own (a parse tree needs ~20 times the file).
 */
static void test_json_bounded_memory(void **state)
{
	static const unsigned depths[] = { 1, SBX_MEDIA_JSON_MAX_DEPTH };

	for (size_t i = 0; i < ARRAY_SIZE(depths); i++) {
		struct buf b = zeros_json(16u << 20, depths[i]);
		int fd = memfd_of(&b);
		size_t n = b.n;
		struct sbx_media_report rep;
		struct rlimit old, lim;
		int r;

		free(b.p);
		assert_int_equal(getrlimit(RLIMIT_AS, &old), 0);
		lim = old;
		lim.rlim_cur = vm_size() + (32u << 20);
		assert_int_equal(setrlimit(RLIMIT_AS, &lim), 0);
		r = sbx_media_validate("application/json", fd, n, &rep);
		assert_int_equal(setrlimit(RLIMIT_AS, &old), 0);
		print_message("# 16 MiB of zeros at depth %u: %s\n", depths[i],
			      r == 0 ? "valid" : rep.reason);
		assert_int_equal(r, 0);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validators),
		cmocka_unit_test(test_short_file),
		cmocka_unit_test(test_report_fields),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_detect_cut_head),
		cmocka_unit_test(test_json_matches_jansson),
		cmocka_unit_test(test_json_bounds),
		cmocka_unit_test(test_json_bounded_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
