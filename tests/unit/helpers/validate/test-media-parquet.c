/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-media-parquet.c - application/vnd.apache.parquet: files built here
 * with a small Thrift compact-protocol writer, one good and the ways a
 * hostile one lies (truncated, footer length too long, zero, pointing
 * before the start, a footer that ends early or has bytes after it, huge
 * or negative num_rows, lists that claim more than the footer holds,
 * nesting 1000 deep, a column chunk in another file or outside the data),
 * and detection by magic and name.
 */
#define _GNU_SOURCE
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "samples.h"
#include "validate.h"

struct tb {
	unsigned char p[1 << 16];
	size_t n;
};

static void b_byte(struct tb *b, unsigned c)
{
	assert_true(b->n < sizeof(b->p));
	b->p[b->n++] = (unsigned char)c;
}

static void b_raw(struct tb *b, const void *d, size_t n)
{
	assert_true(b->n + n <= sizeof(b->p));
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void b_varint(struct tb *b, uint64_t v)
{
	while (v >= 0x80) {
		b_byte(b, (unsigned)(v & 0x7f) | 0x80);
		v >>= 7;
	}
	b_byte(b, (unsigned)v);
}

static void b_zz(struct tb *b, int64_t v)
{
	b_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* A field header with a delta from the previous id (1..15). */
static void b_field(struct tb *b, int delta, unsigned type)
{
	b_byte(b, (unsigned)delta << 4 | type);
}

static void b_list(struct tb *b, uint64_t n, unsigned etype)
{
	if (n < 15) {
		b_byte(b, (unsigned)n << 4 | etype);
	} else {
		b_byte(b, 0xf0 | etype);
		b_varint(b, n);
	}
}

static void b_string(struct tb *b, const char *s)
{
	b_varint(b, strlen(s));
	b_raw(b, s, strlen(s));
}

enum variant {
	GOOD,
	GOOD_TWO_GROUPS,
	ROWS_NOT_SUM,
	ROWS_NEGATIVE,
	ROWS_HUGE,	  /* num_rows 2^63-1, one group of 2^63-1 and one of 1 */
	SCHEMA_SHORT,	  /* root promises 2 children, 1 follows */
	SCHEMA_EXTRA,	  /* an element after the tree */
	SCHEMA_BAD_NAME,  /* a name that is not UTF-8 */
	COLUMNS_MISMATCH, /* a row group with 2 chunks for 1 column */
	FILE_PATH,	  /* a column chunk in another file */
	CHUNK_OUTSIDE,	  /* pages that reach into the footer */
	CHUNK_BEFORE,	  /* pages before the leading magic */
	LIST_LIE,	  /* a schema list of 10^9 elements */
	STRING_LIE,	  /* a name of 10^9 bytes */
	DEEP,		  /* an unknown field nested 1000 deep */
	VARINT_LONG,	  /* an 11-byte varint */
	NO_ROW_GROUPS,	  /* a required field missing */
	WRONG_TYPE,	  /* num_rows as a string */
	UNKNOWN_TYPE,	  /* Thrift type 14 */
	TRAILING,	  /* bytes after the FileMetaData */
	EMPTY_TABLE,	  /* no rows, no row groups: valid */
	ZIP_TAIL,	  /* created_by holds a ZIP end record: a polyglot */
};

/* FileMetaData of a one-column table of @rows rows. */
static void footer(struct tb *b, enum variant v)
{
	int64_t rows = v == ROWS_NOT_SUM ? 5 : v == ROWS_NEGATIVE ? -1 : v == ROWS_HUGE ? INT64_MAX : 3;
	unsigned ngroups = v == GOOD_TWO_GROUPS || v == ROWS_HUGE ? 2 : v == EMPTY_TABLE ? 0 : 1;

	if (v == GOOD_TWO_GROUPS)
		rows = 6;
	if (v == EMPTY_TABLE)
		rows = 0;
	/* 1: version */
	b_field(b, 1, 5);
	b_zz(b, 2);
	/* 2: schema */
	b_field(b, 1, 9);
	if (v == LIST_LIE) {
		b_list(b, 1000000000, 12);
		return;
	}
	b_list(b, v == SCHEMA_EXTRA ? 3 : 2, 12);
	/* root: 4 name, 5 num_children */
	b_field(b, 4, 8);
	b_string(b, "schema");
	b_field(b, 1, 5);
	b_zz(b, v == SCHEMA_SHORT ? 2 : 1);
	b_byte(b, 0);
	/* leaf: 1 type INT32, 3 repetition, 4 name */
	b_field(b, 1, 5);
	b_zz(b, 1);
	b_field(b, 2, 5);
	b_zz(b, 0);
	b_field(b, 1, 8);
	if (v == STRING_LIE) {
		b_varint(b, 1000000000);
		return;
	}
	b_string(b, v == SCHEMA_BAD_NAME ? "a\xff" : "total");
	b_byte(b, 0);
	if (v == SCHEMA_EXTRA) {
		b_field(b, 4, 8);
		b_string(b, "extra");
		b_byte(b, 0);
	}
	/* 3: num_rows */
	b_field(b, 1, v == WRONG_TYPE ? 8 : 6);
	if (v == WRONG_TYPE)
		b_string(b, "3");
	else
		b_zz(b, rows);
	if (v == NO_ROW_GROUPS)
		goto tail;
	/* 4: row_groups */
	b_field(b, 1, 9);
	b_list(b, ngroups, 12);
	for (unsigned g = 0; g < ngroups; g++) {
		unsigned nchunks = v == COLUMNS_MISMATCH ? 2 : 1;

		/* 1: columns */
		b_field(b, 1, 9);
		b_list(b, nchunks, 12);
		for (unsigned c = 0; c < nchunks; c++) {
			if (v == FILE_PATH) {
				b_field(b, 1, 8);
				b_string(b, "../../etc/passwd");
				b_field(b, 1, 6);
			} else {
				/* 2: file_offset */
				b_field(b, 2, 6);
			}
			b_zz(b, 4);
			/* 3: meta_data: 7 total_compressed_size, 9 data_page_offset */
			b_field(b, 1, 12);
			b_field(b, 7, 6);
			b_zz(b, v == CHUNK_OUTSIDE ? 40 : 4);
			b_field(b, 2, 6);
			b_zz(b, v == CHUNK_BEFORE ? 2 : 4);
			b_byte(b, 0);
			b_byte(b, 0);
		}
		/* 2: total_byte_size, 3: num_rows */
		b_field(b, 1, 6);
		b_zz(b, 4);
		b_field(b, 1, 6);
		b_zz(b, v == ROWS_HUGE ? (g ? 1 : INT64_MAX) : v == GOOD_TWO_GROUPS || v == ROWS_NOT_SUM ? 3 : rows);
		b_byte(b, 0);
	}
tail:
	/* 6: created_by, then unknown fields a newer writer may add */
	b_field(b, 2, 8);
	if (v == ZIP_TAIL) {
		static const unsigned char eocd[22] = { 'P', 'K', 5, 6 };

		b_varint(b, sizeof(eocd));
		b_raw(b, eocd, sizeof(eocd));
	} else {
		b_string(b, "sbx test");
	}
	if (v == DEEP) {
		b_field(b, 4, 12);
		for (int i = 0; i < 1000; i++)
			b_field(b, 1, 12);
		return;
	}
	if (v == VARINT_LONG) {
		b_field(b, 4, 6);
		for (int i = 0; i < 10; i++)
			b_byte(b, 0xff);
		b_byte(b, 1);
		return;
	}
	if (v == UNKNOWN_TYPE) {
		b_field(b, 4, 14);
		return;
	}
	/* 10: an unknown map<string,list<bool>>, skipped */
	b_field(b, 4, 11);
	b_varint(b, 1);
	b_byte(b, 8 << 4 | 9);
	b_string(b, "k");
	b_list(b, 2, 1);
	b_byte(b, 1);
	b_byte(b, 2);
	b_byte(b, 0); /* STOP */
	if (v == TRAILING)
		b_byte(b, 0);
}

/* The whole file: magic, 4 bytes of "pages", footer, length, magic. */
static void file(struct tb *b, enum variant v)
{
	size_t start;
	uint32_t len;

	b->n = 0;
	b_raw(b, "PAR1", 4);
	b_raw(b, "\x15\x00\x15\x08", 4);
	start = b->n;
	footer(b, v);
	len = (uint32_t)(b->n - start);
	b_byte(b, len & 0xff);
	b_byte(b, len >> 8 & 0xff);
	b_byte(b, len >> 16 & 0xff);
	b_byte(b, len >> 24);
	b_raw(b, "PAR1", 4);
}

/* A good file with a ZIP between the pages and the footer, where nothing
 * reads it as Parquet: the ZIP of put_zip_end(@zv), then the footer. */
static void file_zip_end(struct tb *b, enum zip_end_variant zv)
{
	struct buf z = { 0 };
	size_t start;
	uint32_t len;

	b->n = 0;
	b_raw(b, "PAR1", 4);
	b_raw(b, "\x15\x00\x15\x08", 4);
	put_zip_end(&z, zv);
	b_raw(b, z.p, z.n);
	free(z.p);
	start = b->n;
	footer(b, GOOD);
	len = (uint32_t)(b->n - start);
	b_byte(b, len & 0xff);
	b_byte(b, len >> 8 & 0xff);
	b_byte(b, len >> 16 & 0xff);
	b_byte(b, len >> 24);
	b_raw(b, "PAR1", 4);
}

static int validate(const unsigned char *p, size_t n, struct sbx_media_report *rep)
{
	int fd = memfd_create("parquet", MFD_CLOEXEC), r;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, p, n), (ssize_t)n);
	r = sbx_media_validate("application/vnd.apache.parquet", fd, n, rep);
	close(fd);
	return r;
}

static void set_len(struct tb *b, uint32_t len)
{
	unsigned char *l = b->p + b->n - 8;

	l[0] = len & 0xff, l[1] = len >> 8 & 0xff, l[2] = len >> 16 & 0xff, l[3] = len >> 24;
}

static const struct {
	enum variant v;
	const char *reason; /* NULL: valid */
} cases[] = {
	{ GOOD, NULL },
	{ GOOD_TWO_GROUPS, NULL },
	{ EMPTY_TABLE, NULL },
	{ ROWS_NOT_SUM, "not the sum of the row groups" },
	{ ROWS_NEGATIVE, "negative num_rows" },
	{ ROWS_HUGE, "not the sum of the row groups" },
	{ SCHEMA_SHORT, "promise more elements" },
	{ SCHEMA_EXTRA, "after the schema tree ends" },
	{ SCHEMA_BAD_NAME, "not UTF-8" },
	{ COLUMNS_MISMATCH, "do not match the schema's 1 columns" },
	{ FILE_PATH, "names another file" },
	{ CHUNK_OUTSIDE, "outside the data before the footer" },
	{ CHUNK_BEFORE, "outside the data before the footer" },
	{ LIST_LIE, "a list longer than the footer" },
	{ STRING_LIE, "a length beyond the footer" },
	{ DEEP, "nesting deeper than 32" },
	{ VARINT_LONG, "varint" },
	{ NO_ROW_GROUPS, "without version, schema, num_rows or row_groups" },
	{ WRONG_TYPE, "FileMetaData.num_rows has the wrong Thrift type" },
	{ UNKNOWN_TYPE, "unknown Thrift type" },
	{ TRAILING, "1 bytes after the FileMetaData" },
	{ ZIP_TAIL, "the file is also a ZIP archive" },
};

static void test_footers(void **state)
{
	static struct tb b;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbx_media_report rep;
		int r;

		file(&b, cases[i].v);
		r = validate(b.p, b.n, &rep);
		if (cases[i].reason ? r == 0 || !strstr(rep.reason, cases[i].reason) : r != 0)
			fail_msg("case %zu: %d \"%s\", expected %s", i, r, rep.reason,
				 cases[i].reason ? cases[i].reason : "valid");
	}
}

/* A Parquet file that is also a ZIP, whatever the ZIP's end record says
 * (issue 23: counts 0 and 1 passed). */
static void test_zip_ends(void **state)
{
	static struct tb b;

	(void)state;
	for (int v = 0; v < ZIP_END_VARIANTS; v++) {
		struct sbx_media_report rep;
		int r;

		file_zip_end(&b, (enum zip_end_variant)v);
		r = validate(b.p, b.n, &rep);
		print_message("# %s: %s\n", zip_end_what[v], r == 0 ? "valid" : rep.reason);
		if (r == 0 || !strstr(rep.reason, zip_end_reason((enum zip_end_variant)v)))
			fail_msg("%s: %d \"%s\", expected refused as a ZIP", zip_end_what[v], r,
				 rep.reason);
	}
}

static void test_good_reports(void **state)
{
	static struct tb b;
	struct sbx_media_report rep;

	(void)state;
	file(&b, GOOD_TWO_GROUPS);
	assert_int_equal(validate(b.p, b.n, &rep), 0);
	assert_int_equal(rep.rows, 6);
	assert_int_equal(rep.columns, 1);
}

static void test_magic_and_length(void **state)
{
	static struct tb b;
	struct sbx_media_report rep;
	size_t len;

	(void)state;
	file(&b, GOOD);
	len = b.n - 16;
	/* every truncation fails: the end no longer has the magic and a
	 * length that fits */
	for (size_t n = 0; n < b.n; n++)
		if (validate(b.p, n, &rep) == 0)
			fail_msg("truncated to %zu bytes: accepted", n);
	/* the magics */
	b.p[0] = 'X';
	assert_int_equal(validate(b.p, b.n, &rep), -1);
	assert_non_null(strstr(rep.reason, "no PAR1 magic at the start"));
	b.p[0] = 'P';
	memcpy(b.p + b.n - 4, "PARE", 4);
	assert_int_equal(validate(b.p, b.n, &rep), -1);
	assert_non_null(strstr(rep.reason, "encrypted footer"));
	memcpy(b.p + b.n - 4, "PAR2", 4);
	assert_int_equal(validate(b.p, b.n, &rep), -1);
	assert_non_null(strstr(rep.reason, "no PAR1 magic at the end"));
	memcpy(b.p + b.n - 4, "PAR1", 4);
	assert_int_equal(validate(b.p, b.n, &rep), 0);
	/* lying lengths: zero, huge, past the file, one byte into the
	 * leading magic, and pointing into the pages */
	set_len(&b, 0);
	assert_int_equal(validate(b.p, b.n, &rep), -1);
	assert_non_null(strstr(rep.reason, "footer length 0"));
	set_len(&b, 0xffffffffu);
	assert_int_equal(validate(b.p, b.n, &rep), -1);
	assert_non_null(strstr(rep.reason, "at most"));
	set_len(&b, (uint32_t)b.n);
	assert_int_equal(validate(b.p, b.n, &rep), -1);
	assert_non_null(strstr(rep.reason, "before the start"));
	set_len(&b, (uint32_t)(b.n - 11));
	assert_int_equal(validate(b.p, b.n, &rep), -1);
	assert_non_null(strstr(rep.reason, "before the start"));
	set_len(&b, (uint32_t)(len + 4));
	assert_int_equal(validate(b.p, b.n, &rep), -1); /* the pages read as Thrift */
	set_len(&b, (uint32_t)(len - 1));
	assert_int_equal(validate(b.p, b.n, &rep), -1);
	set_len(&b, (uint32_t)len);
	assert_int_equal(validate(b.p, b.n, &rep), 0);
	/* the shortest thing with both magics */
	assert_int_equal(validate((const unsigned char *)"PAR1PAR1", 8, &rep), -1);
	assert_int_equal(validate((const unsigned char *)"PAR1\x01\x00\x00\x00PAR1", 12, &rep), -1);
}

/* Every single-byte change of the good file is refused or accepted, never
 * a crash, and the reason is one line. */
static void test_mutations(void **state)
{
	static struct tb b;

	(void)state;
	file(&b, GOOD);
	for (size_t i = 0; i < b.n; i++) {
		unsigned char keep = b.p[i];

		for (unsigned x = 1; x < 256; x <<= 1) {
			struct sbx_media_report rep;

			b.p[i] = keep ^ (unsigned char)x;
			if (validate(b.p, b.n, &rep) < 0)
				assert_null(strchr(rep.reason, '\n'));
		}
		b.p[i] = keep;
	}
}

static void test_detect(void **state)
{
	static struct tb b;

	(void)state;
	file(&b, GOOD);
	assert_string_equal(sbx_media_detect(b.p, b.n, "t.parquet"), "application/vnd.apache.parquet");
	assert_string_equal(sbx_media_detect(b.p, b.n, "t.bin"), "application/vnd.apache.parquet");
	assert_string_equal(sbx_media_type_for_name("T.PARQUET"), "application/vnd.apache.parquet");
	/* text that starts with PAR1 stays text unless named .parquet */
	assert_string_equal(sbx_media_detect((const unsigned char *)"PAR1 minutes", 12, "notes.txt"),
			    "text/plain");
	assert_string_equal(sbx_media_detect((const unsigned char *)"PAR1 minutes", 12, "x.parquet"),
			    "application/vnd.apache.parquet");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_footers),
		cmocka_unit_test(test_zip_ends),
		cmocka_unit_test(test_good_reports),
		cmocka_unit_test(test_magic_and_length),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_detect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
