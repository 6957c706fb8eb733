/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-validate.c - media detection and the validators' common contract
 * (a short file, the report's fields, a type with no validator), on the
 * samples of samples.c.  The validators of each family have their own
 * programs: test-media-images.c (PNG, JPEG), test-media-documents.c (text,
 * CSV, PDF) and test-media-json.c.
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

/* Most cases expect no flags: leave .flags out. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct vcase vcases[] = {
	{ "unknown type", "text/x-shellscript", mk_text, 0, -1,
	  "no validator for media type text/x-shellscript",
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
	{ "t.md", mk_text, 0, "text/markdown", "text/markdown" },
	{ "c.svg", mk_text, 0, "image/svg+xml", "image/svg+xml" },
	{ "t.jsonl", mk_text, 0, "application/x-ndjson", "application/x-ndjson" },
	{ "fake.png", mk_text, 0, "text/plain", "image/png" },
	{ "page.html", mk_text, 0, "text/html", "text/html" },
	{ "run.sh", mk_text, 0, "text/plain", NULL },
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

/*
 * Where the ZIP check looks: a 4-byte signature @back bytes before the end
 * of a 200000-byte file of zeros.  Readers search from the end: Python's
 * zipfile the last 65557 bytes (65558 before 3.12: 64 KiB + 22), Info-ZIP
 * unzip 66000, Go's archive/zip 65 KiB (66560), libarchive 16 KiB.
 */
static int zip_sig_at(const char *sig, size_t back, struct sbx_media_report *rep)
{
	struct buf b = { 0 };
	unsigned char zero[4096] = { 0 };
	int fd, r;

	while (b.n < 200000)
		put(&b, zero, sizeof(zero) < 200000 - b.n ? sizeof(zero) : 200000 - b.n);
	memcpy(b.p + b.n - back, sig, 4);
	fd = memfd_of(&b);
	memset(rep, 0, sizeof(*rep));
	r = sbx_media_zip_tail(fd, b.n, "png", rep);
	print_message("# PK%u%u %zu bytes before the end: %s\n", (unsigned)sig[2], (unsigned)sig[3],
		      back, r == 0 ? "accepted" : rep->reason);
	close(fd);
	free(b.p);
	return r;
}

static void test_zip_tail_window(void **state)
{
	static const size_t refused[] = { 4, 21, 22, 1024, 16384, 65557, 65558, 66000, 66560 };
	struct sbx_media_report rep;
	char want[128];

	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		assert_int_equal(zip_sig_at("PK\x05\x06", refused[i], &rep), -1);
		snprintf(want, sizeof(want),
			 "png: a ZIP end-of-central-directory record at offset %zu: "
			 "the file is also a ZIP archive",
			 200000 - refused[i]);
		assert_string_equal(rep.reason, want);
		assert_int_equal(zip_sig_at("PK\x06\x07", refused[i], &rep), -1);
		assert_non_null(strstr(rep.reason, "a ZIP64 end-of-central-directory locator"));
	}
	/* Beyond every reader's search. */
	assert_int_equal(zip_sig_at("PK\x05\x06", 66561, &rep), 0);
	assert_int_equal(zip_sig_at("PK\x06\x07", 66561, &rep), 0);
	assert_int_equal(zip_sig_at("PK\x05\x06", 150000, &rep), 0);
	/* A ZIP64 end record is found only through the locator before an end
	 * record, both refused above: alone it is nothing a reader opens. */
	assert_int_equal(zip_sig_at("PK\x06\x06", 100, &rep), 0);
	/* Other ZIP signatures are not end records. */
	assert_int_equal(zip_sig_at("PK\x03\x04", 100, &rep), 0);
	assert_int_equal(zip_sig_at("PK\x01\x02", 100, &rep), 0);
}

/* A file shorter than the window, the record at its first byte; and one
 * shorter than a record. */
static void test_zip_tail_short(void **state)
{
	struct buf b = TEXT("PK\x05\x06 and not much else");
	struct sbx_media_report rep;
	int fd = memfd_of(&b);

	assert_int_equal(sbx_media_zip_tail(fd, b.n, "pdf", &rep), -1);
	assert_non_null(strstr(rep.reason, "pdf: a ZIP end-of-central-directory record at offset 0"));
	assert_int_equal(sbx_media_zip_tail(fd, 3, "pdf", &rep), 0);
	assert_int_equal(sbx_media_zip_tail(fd, 4, "pdf", &rep), -1);
	close(fd);
	free(b.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validators),
		cmocka_unit_test(test_short_file),
		cmocka_unit_test(test_report_fields),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_detect_cut_head),
		cmocka_unit_test(test_zip_tail_window),
		cmocka_unit_test(test_zip_tail_short),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
