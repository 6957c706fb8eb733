/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-parquet.c - structural Apache Parquet validation.
 *
 * A Parquet file is "PAR1", the column chunks, the footer (a Thrift
 * compact-protocol FileMetaData), the footer's length as 4 little-endian
 * bytes, and "PAR1" again.  A reader seeks to the end, trusts the length,
 * and decodes the footer before anything else, so that is what is checked
 * here, before a reader downstream allocates by it:
 *   - both magics (an encrypted footer, "PARE", is refused: nothing in it
 *     could be checked);
 *   - the footer length: at most SBX_MEDIA_PARQUET_MAX_FOOTER, and the
 *     footer lies between the leading magic and the length field;
 *   - the whole footer decodes as Thrift compact, with every length and
 *     element count within the bytes that remain, nesting at most
 *     SBX_MEDIA_PARQUET_MAX_DEPTH, nothing after the FileMetaData;
 *   - FileMetaData holds version, schema, num_rows and row_groups; the
 *     schema is a tree whose num_children add up, with every name valid
 *     UTF-8; num_rows is not negative and is the sum of the row groups';
 *     each row group has one column chunk per leaf column;
 *   - no column chunk names another file (file_path: a reader would open a
 *     path the payload chose), and every chunk's pages lie between the
 *     leading magic and the footer;
 *   - no ZIP end record or ZIP64 locator near the end, where ZIP readers
 *     look, whatever it says (sbx_media_zip_tail()).
 * Pages are not decoded or decompressed: a reader downstream must still cap
 * what it inflates.  rep->rows is num_rows, rep->columns the leaf columns.
 *
 * The footer is read through the bounded reader, one byte at a time: no
 * buffer sized by the file, and every step consumes a byte, so the work is
 * bounded by the footer's length.
 */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "util.h"
#include "validate.h"

/* Thrift compact protocol types. */
enum {
	T_STOP = 0,
	T_TRUE = 1,
	T_FALSE = 2,
	T_BYTE = 3,
	T_I16 = 4,
	T_I32 = 5,
	T_I64 = 6,
	T_DOUBLE = 7,
	T_BINARY = 8,
	T_LIST = 9,
	T_SET = 10,
	T_MAP = 11,
	T_STRUCT = 12,
	T_UUID = 13,
};

struct tin {
	struct sbx_media_reader *r;
	uint64_t left;	   /* footer bytes not yet read */
	uint64_t data_end; /* where the footer starts: pages end before */
	unsigned depth;
	struct sbx_media_report *rep;
};

static int tfail(struct tin *t, const char *what)
{
	return sbx_media_fail(t->rep, "parquet: footer: %s", what);
}

static int tbyte(struct tin *t, unsigned char *c)
{
	int b;

	if (t->left == 0)
		return tfail(t, "ends inside a value");
	b = sbx_media_reader_byte(t->r);
	if (b < 0)
		return sbx_media_fail(t->rep, "parquet: read error");
	t->left--;
	*c = (unsigned char)b;
	return 0;
}

/* An unsigned LEB128 varint of at most MAXB bytes. */
static int tvarint(struct tin *t, uint64_t *v, unsigned maxb)
{
	uint64_t x = 0;

	for (unsigned i = 0; i < maxb; i++) {
		unsigned char c = 0;

		if (tbyte(t, &c) < 0)
			return -1;
		if (i == 9 && c > 1)
			return tfail(t, "varint overflows 64 bits");
		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return tfail(t, "varint too long");
}

static int64_t unzigzag(uint64_t u)
{
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static int ti64(struct tin *t, int64_t *v)
{
	uint64_t u;

	if (tvarint(t, &u, 10) < 0)
		return -1;
	*v = unzigzag(u);
	return 0;
}

static int ti32(struct tin *t, int32_t *v)
{
	uint64_t u;

	if (tvarint(t, &u, 5) < 0)
		return -1;
	if (u > 0xffffffffu)
		return tfail(t, "i32 out of range");
	*v = (int32_t)unzigzag(u);
	return 0;
}

static int tskip_bytes(struct tin *t, uint64_t n)
{
	if (n > t->left)
		return tfail(t, "a length beyond the footer");
	if (sbx_media_reader_skip(t->r, n) < 0)
		return sbx_media_fail(t->rep, "parquet: read error");
	t->left -= n;
	return 0;
}

/* A list or set header: element type and a count that fits the bytes left
 * (every element takes at least one). */
static int tlist(struct tin *t, unsigned *etype, uint64_t *count)
{
	unsigned char h;

	if (tbyte(t, &h) < 0)
		return -1;
	*etype = h & 0x0f;
	*count = h >> 4;
	if (*count == 15 && tvarint(t, count, 5) < 0)
		return -1;
	if (*count > t->left)
		return tfail(t, "a list longer than the footer");
	return 0;
}

static int tenter(struct tin *t)
{
	if (++t->depth > SBX_MEDIA_PARQUET_MAX_DEPTH)
		return sbx_media_fail(t->rep, "parquet: footer: Thrift nesting deeper than %d",
				      SBX_MEDIA_PARQUET_MAX_DEPTH);
	return 0;
}

typedef int (*field_fn)(struct tin *t, void *ctx, int id, unsigned type);

static int tskip(struct tin *t, unsigned type, bool in_list);

/* The fields of a struct up to its STOP; FN (or a skip) consumes each. */
static int tstruct(struct tin *t, field_fn fn, void *ctx)
{
	int last = 0;

	if (tenter(t) < 0)
		return -1;
	for (;;) {
		unsigned char h;
		unsigned type;
		int id, r;

		if (tbyte(t, &h) < 0)
			return -1;
		if (h == T_STOP)
			break;
		type = h & 0x0f;
		if (type == T_STOP)
			return tfail(t, "invalid field header");
		if (h >> 4) {
			id = last + (h >> 4);
		} else {
			int64_t v;

			if (ti64(t, &v) < 0)
				return -1;
			if (v < -32768 || v > 32767)
				return tfail(t, "field id out of range");
			id = (int)v;
		}
		last = id;
		r = fn ? fn(t, ctx, id, type) : tskip(t, type, false);
		if (r < 0)
			return -1;
	}
	t->depth--;
	return 0;
}

static int tskip(struct tin *t, unsigned type, bool in_list)
{
	uint64_t n, u;
	unsigned et;
	unsigned char c;

	switch (type) {
	case T_TRUE:
	case T_FALSE:
		/* in a struct the value is the type; in a list, one byte */
		return in_list ? tbyte(t, &c) : 0;
	case T_BYTE:
		return tbyte(t, &c);
	case T_I16:
		return tvarint(t, &u, 3);
	case T_I32:
		return tvarint(t, &u, 5);
	case T_I64:
		return tvarint(t, &u, 10);
	case T_DOUBLE:
		return tskip_bytes(t, 8);
	case T_UUID:
		return tskip_bytes(t, 16);
	case T_BINARY:
		if (tvarint(t, &n, 5) < 0)
			return -1;
		return tskip_bytes(t, n);
	case T_LIST:
	case T_SET:
		if (tlist(t, &et, &n) < 0 || tenter(t) < 0)
			return -1;
		for (uint64_t i = 0; i < n; i++)
			if (tskip(t, et, true) < 0)
				return -1;
		t->depth--;
		return 0;
	case T_MAP:
		if (tvarint(t, &n, 5) < 0)
			return -1;
		if (n == 0)
			return 0;
		if (n > t->left / 2)
			return tfail(t, "a map longer than the footer");
		if (tbyte(t, &c) < 0 || tenter(t) < 0)
			return -1;
		for (uint64_t i = 0; i < n; i++)
			if (tskip(t, c >> 4, true) < 0 || tskip(t, c & 0x0f, true) < 0)
				return -1;
		t->depth--;
		return 0;
	case T_STRUCT:
		return tstruct(t, NULL, NULL);
	default:
		return tfail(t, "unknown Thrift type");
	}
}

static int expect(struct tin *t, unsigned type, unsigned want, const char *field)
{
	if (type == want)
		return 0;
	return sbx_media_fail(t->rep, "parquet: footer: %s has the wrong Thrift type", field);
}

/* --- ColumnChunk, ColumnMetaData ------------------------------------------------ */

struct colmeta {
	bool have_size, have_data;
	int64_t size, data, dict;
};

static int colmeta_field(struct tin *t, void *ctx, int id, unsigned type)
{
	struct colmeta *m = ctx;

	switch (id) {
	case 7: /* total_compressed_size */
		m->have_size = true;
		return expect(t, type, T_I64, "ColumnMetaData.total_compressed_size") ?: ti64(t, &m->size);
	case 9: /* data_page_offset */
		m->have_data = true;
		return expect(t, type, T_I64, "ColumnMetaData.data_page_offset") ?: ti64(t, &m->data);
	case 11: /* dictionary_page_offset */
		return expect(t, type, T_I64, "ColumnMetaData.dictionary_page_offset") ?: ti64(t, &m->dict);
	default:
		return tskip(t, type, false);
	}
}

static int chunk_field(struct tin *t, void *ctx, int id, unsigned type)
{
	struct colmeta m = { 0 };
	int64_t start;

	(void)ctx;
	if (id == 1) /* file_path */
		return sbx_media_fail(t->rep, "parquet: a column chunk names another file "
					      "(file_path)");
	if (id != 3) /* meta_data */
		return tskip(t, type, false);
	if (expect(t, type, T_STRUCT, "ColumnChunk.meta_data") < 0 ||
	    tstruct(t, colmeta_field, &m) < 0)
		return -1;
	if (!m.have_size || !m.have_data)
		return tfail(t, "ColumnMetaData without total_compressed_size or data_page_offset");
	/* The pages start at the dictionary page when there is one; 0 is
	 * how writers say there is none (and Arrow writes a data_page_offset
	 * of 0 for a chunk that holds only a dictionary page).  An empty chunk
	 * is read from nowhere. */
	if (m.size == 0)
		return 0;
	start = m.dict > 0 && (m.data <= 0 || m.dict < m.data) ? m.dict : m.data;
	if (start < 4 || m.size < 0 || (uint64_t)m.size > t->data_end ||
	    (uint64_t)start > t->data_end - (uint64_t)m.size)
		return sbx_media_fail(t->rep, "parquet: a column chunk's pages (offset %lld, "
					      "%lld bytes) lie outside the data before the footer",
				      (long long)start, (long long)m.size);
	return 0;
}

/* --- RowGroup -------------------------------------------------------------------- */

struct rowgroup {
	bool have_rows, have_columns;
	int64_t rows;
	uint64_t columns;
};

static int rowgroup_field(struct tin *t, void *ctx, int id, unsigned type)
{
	struct rowgroup *g = ctx;
	unsigned et;

	switch (id) {
	case 1: /* columns */
		if (expect(t, type, T_LIST, "RowGroup.columns") < 0 ||
		    tlist(t, &et, &g->columns) < 0)
			return -1;
		if (g->columns && et != T_STRUCT)
			return tfail(t, "RowGroup.columns holds no structs");
		g->have_columns = true;
		if (tenter(t) < 0)
			return -1;
		for (uint64_t i = 0; i < g->columns; i++)
			if (tstruct(t, chunk_field, NULL) < 0)
				return -1;
		t->depth--;
		return 0;
	case 3: /* num_rows */
		g->have_rows = true;
		return expect(t, type, T_I64, "RowGroup.num_rows") ?: ti64(t, &g->rows);
	default:
		return tskip(t, type, false);
	}
}

/* --- SchemaElement ------------------------------------------------------------------ */

struct element {
	bool have_name, have_children;
	int32_t children;
	bool bad_name;
};

static int element_field(struct tin *t, void *ctx, int id, unsigned type)
{
	struct element *e = ctx;
	struct sbx_media_utf8 u = { 0 };
	uint64_t n;

	switch (id) {
	case 4: /* name */
		if (expect(t, type, T_BINARY, "SchemaElement.name") < 0 || tvarint(t, &n, 5) < 0)
			return -1;
		if (n > t->left)
			return tfail(t, "a length beyond the footer");
		e->have_name = true;
		for (uint64_t i = 0; i < n; i++) {
			unsigned char c;

			if (tbyte(t, &c) < 0)
				return -1;
			if (c == 0 || !sbx_media_utf8_feed(&u, c))
				e->bad_name = true;
		}
		if (!sbx_media_utf8_end(&u))
			e->bad_name = true;
		return 0;
	case 5: /* num_children */
		e->have_children = true;
		return expect(t, type, T_I32, "SchemaElement.num_children") ?: ti32(t, &e->children);
	default:
		return tskip(t, type, false);
	}
}

/* --- FileMetaData -------------------------------------------------------------------- */

struct filemeta {
	bool have_version, have_schema, have_rows, have_groups;
	int32_t version;
	int64_t rows;
	uint64_t elements, leaves;
	uint64_t groups;
	int64_t group_rows; /* their sum */
	bool rows_overflow;
	bool columns_mismatch;
	uint64_t min_columns, max_columns;
};

static int schema_list(struct tin *t, struct filemeta *f)
{
	/* children still expected at each open level of the schema tree */
	int32_t pending[SBX_MEDIA_PARQUET_MAX_DEPTH + 1];
	unsigned level = 0;
	unsigned et;

	if (tlist(t, &et, &f->elements) < 0)
		return -1;
	if (f->elements == 0)
		return tfail(t, "an empty schema");
	if (et != T_STRUCT)
		return tfail(t, "FileMetaData.schema holds no structs");
	if (tenter(t) < 0)
		return -1;
	pending[level++] = 1; /* the root */
	for (uint64_t i = 0; i < f->elements; i++) {
		struct element e = { 0 };

		if (tstruct(t, element_field, &e) < 0)
			return -1;
		if (!e.have_name || e.bad_name)
			return tfail(t, e.have_name ? "a schema name is not UTF-8 (or holds NUL)"
						    : "a schema element without a name");
		if (level == 0)
			return tfail(t, "schema elements after the schema tree ends");
		pending[level - 1]--;
		if (e.have_children && e.children < 0)
			return tfail(t, "negative num_children");
		if (e.have_children && e.children > 0) {
			if (level > SBX_MEDIA_PARQUET_MAX_DEPTH)
				return sbx_media_fail(t->rep, "parquet: schema nested deeper than %d",
						      SBX_MEDIA_PARQUET_MAX_DEPTH);
			pending[level++] = e.children;
		} else if (i > 0) {
			f->leaves++;
		}
		while (level > 0 && pending[level - 1] == 0)
			level--;
	}
	t->depth--;
	if (level != 0)
		return tfail(t, "the schema's num_children promise more elements than it has");
	return 0;
}

static int filemeta_field(struct tin *t, void *ctx, int id, unsigned type)
{
	struct filemeta *f = ctx;
	unsigned et;

	switch (id) {
	case 1:
		f->have_version = true;
		return expect(t, type, T_I32, "FileMetaData.version") ?: ti32(t, &f->version);
	case 2:
		if (f->have_schema)
			return tfail(t, "FileMetaData.schema twice");
		f->have_schema = true;
		return expect(t, type, T_LIST, "FileMetaData.schema") ?: schema_list(t, f);
	case 3:
		f->have_rows = true;
		return expect(t, type, T_I64, "FileMetaData.num_rows") ?: ti64(t, &f->rows);
	case 4:
		if (f->have_groups)
			return tfail(t, "FileMetaData.row_groups twice");
		f->have_groups = true;
		if (expect(t, type, T_LIST, "FileMetaData.row_groups") < 0 ||
		    tlist(t, &et, &f->groups) < 0)
			return -1;
		if (f->groups && et != T_STRUCT)
			return tfail(t, "FileMetaData.row_groups holds no structs");
		if (tenter(t) < 0)
			return -1;
		for (uint64_t i = 0; i < f->groups; i++) {
			struct rowgroup g = { 0 };

			if (tstruct(t, rowgroup_field, &g) < 0)
				return -1;
			if (!g.have_rows || !g.have_columns)
				return tfail(t, "a RowGroup without num_rows or columns");
			if (g.rows < 0)
				return tfail(t, "a RowGroup with negative num_rows");
			if (__builtin_add_overflow(f->group_rows, g.rows, &f->group_rows))
				f->rows_overflow = true;
			if (i == 0 || g.columns < f->min_columns)
				f->min_columns = g.columns;
			if (i == 0 || g.columns > f->max_columns)
				f->max_columns = g.columns;
		}
		t->depth--;
		return 0;
	default:
		return tskip(t, type, false);
	}
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int sbx_media_parquet_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = NULL;
	unsigned char head[4], tail[8];
	struct filemeta f = { 0 };
	struct tin t = { .rep = rep };
	uint64_t len;

	/* "PAR1", a footer of at least one byte, its length, "PAR1" */
	if (size < 13)
		return sbx_media_fail(rep, "parquet: shorter than the magic and a footer");
	if (pread(fd, head, 4, 0) != 4 || pread(fd, tail, 8, (off_t)(size - 8)) != 8)
		return sbx_media_fail(rep, "parquet: read error");
	if (memcmp(head, "PAR1", 4) != 0)
		return sbx_media_fail(rep, "parquet: no PAR1 magic at the start");
	if (memcmp(tail + 4, "PARE", 4) == 0)
		return sbx_media_fail(rep, "parquet: an encrypted footer (PARE) cannot be checked");
	if (memcmp(tail + 4, "PAR1", 4) != 0)
		return sbx_media_fail(rep, "parquet: no PAR1 magic at the end");
	len = le32(tail);
	if (len == 0 || len > SBX_MEDIA_PARQUET_MAX_FOOTER)
		return sbx_media_fail(rep, "parquet: footer length %llu (at most %u)",
				      (unsigned long long)len, SBX_MEDIA_PARQUET_MAX_FOOTER);
	if (len > size - 12)
		return sbx_media_fail(rep, "parquet: footer length %llu reaches before the "
					   "start of the file",
				      (unsigned long long)len);

	r = sbx_media_reader_new(fd, size - 8);
	t.r = r;
	t.left = len;
	t.data_end = size - 8 - len;
	if (sbx_media_reader_skip(r, t.data_end) < 0)
		return sbx_media_fail(rep, "parquet: read error");
	if (tstruct(&t, filemeta_field, &f) < 0)
		return -1;
	if (t.left)
		return sbx_media_fail(rep, "parquet: %llu bytes after the FileMetaData in the footer",
				      (unsigned long long)t.left);
	if (!f.have_version || !f.have_schema || !f.have_rows || !f.have_groups)
		return sbx_media_fail(rep, "parquet: FileMetaData without version, schema, "
					   "num_rows or row_groups");
	if (f.rows < 0)
		return sbx_media_fail(rep, "parquet: negative num_rows");
	if (f.rows_overflow || f.group_rows != f.rows)
		return sbx_media_fail(rep, "parquet: num_rows %lld is not the sum of the row "
					   "groups' rows",
				      (long long)f.rows);
	if (f.groups && (f.min_columns != f.leaves || f.max_columns != f.leaves))
		return sbx_media_fail(rep, "parquet: a row group's column chunks do not match the "
					   "schema's %llu columns",
				      (unsigned long long)f.leaves);
	rep->rows = (uint64_t)f.rows;
	rep->columns = f.leaves;
	return sbx_media_zip_tail(fd, size, "parquet", rep);
}
