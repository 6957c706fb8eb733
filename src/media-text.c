/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-text.c - text/plain and text/csv (application/json: media-json.c).
 *
 * Both must be valid UTF-8 without NUL bytes, checked in one streaming
 * pass.  CSV is read as RFC 4180 (quoted fields may hold commas, quotes as
 * "" and line breaks; records end in LF or CRLF; a bare CR outside quotes
 * or a quote inside an unquoted field is an error) and every record must
 * have as many fields as the first.  A cell whose content starts with = + -
 * @ TAB or CR would run as a formula when opened in a spreadsheet; it is
 * not an error, but the report flags it so the manifest can warn.
 */
#include "config.h"

#include <string.h>

#include "util.h"
#include "validate.h"

int sbx_media_text_feed(const char *what, struct sbx_media_utf8 *u, const unsigned char *p,
			size_t n, uint64_t at, struct sbx_media_report *rep)
{
	for (size_t i = 0; i < n; i++) {
		if (u->need == 0) {
			i += sbx_media_ascii_span(p + i, n - i);
			if (i == n)
				break;
		}
		if (p[i] == 0)
			return sbx_media_fail(rep, "%s: NUL byte at offset %llu", what,
					      (unsigned long long)(at + i));
		if (!sbx_media_utf8_feed(u, p[i]))
			return sbx_media_fail(rep, "%s: invalid UTF-8 at offset %llu", what,
					      (unsigned long long)(at + i));
	}
	return 0;
}

int sbx_media_text_end(const char *what, const struct sbx_media_utf8 *u,
		       struct sbx_media_report *rep)
{
	if (!sbx_media_utf8_end(u))
		return sbx_media_fail(rep, "%s: truncated UTF-8 sequence at the end", what);
	return 0;
}

int sbx_media_text_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	struct sbx_media_utf8 u = { 0 };

	for (;;) {
		uint64_t at = sbx_media_reader_tell(r);
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, SIZE_MAX);

		if (k < 0)
			return sbx_media_fail(rep, "text: read error");
		if (k == 0)
			return sbx_media_text_end("text", &u, rep);
		if (sbx_media_text_feed("text", &u, p, (size_t)k, at, rep) < 0)
			return -1;
	}
}

/* --- CSV --------------------------------------------------------------------- */

enum csv_state {
	CSV_FIELD_START, /* at the start of a field */
	CSV_UNQUOTED,    /* inside an unquoted field */
	CSV_QUOTED,      /* inside a quoted field */
	CSV_QUOTE,       /* saw a quote inside a quoted field: end or "" */
	CSV_CR,          /* saw CR outside quotes: LF must follow */
};

struct csv {
	enum csv_state state;
	bool cell_start;  /* the next content byte is the cell's first */
	uint64_t fields;  /* fields in the current record so far */
	uint64_t columns; /* fields in the first record */
	uint64_t rows;
	bool formula;
};

static bool formula_lead(unsigned char c)
{
	return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
}

static int csv_end_record(struct csv *s, struct sbx_media_report *rep)
{
	s->fields++;
	if (s->rows == 0)
		s->columns = s->fields;
	else if (s->fields != s->columns)
		return sbx_media_fail(rep, "csv: record %llu has %llu fields, expected %llu",
				      (unsigned long long)s->rows + 1, (unsigned long long)s->fields,
				      (unsigned long long)s->columns);
	s->rows++;
	s->fields = 0;
	s->state = CSV_FIELD_START;
	s->cell_start = true;
	return 0;
}

static inline void csv_content(struct csv *s, unsigned char c)
{
	if (s->cell_start && formula_lead(c))
		s->formula = true;
	s->cell_start = false;
}

static inline int csv_byte(struct csv *s, unsigned char c, uint64_t at,
			    struct sbx_media_report *rep)
{
	switch (s->state) {
	case CSV_CR:
		if (c != '\n')
			return sbx_media_fail(rep, "csv: bare CR at offset %llu",
					      (unsigned long long)at - 1);
		return csv_end_record(s, rep);
	case CSV_FIELD_START:
		if (c == '"') {
			s->state = CSV_QUOTED;
			return 0;
		}
		s->state = CSV_UNQUOTED;
		/* fall through */
	case CSV_UNQUOTED:
		if (c == ',') {
			s->fields++;
			s->state = CSV_FIELD_START;
			s->cell_start = true;
		} else if (c == '\n') {
			return csv_end_record(s, rep);
		} else if (c == '\r') {
			s->state = CSV_CR;
		} else if (c == '"') {
			return sbx_media_fail(rep, "csv: quote inside an unquoted field at offset %llu",
					      (unsigned long long)at);
		} else {
			csv_content(s, c);
		}
		return 0;
	case CSV_QUOTED:
		if (c == '"')
			s->state = CSV_QUOTE;
		else
			csv_content(s, c);
		return 0;
	case CSV_QUOTE:
		if (c == '"') {
			csv_content(s, c);
			s->state = CSV_QUOTED;
		} else if (c == ',') {
			s->fields++;
			s->state = CSV_FIELD_START;
			s->cell_start = true;
		} else if (c == '\n') {
			return csv_end_record(s, rep);
		} else if (c == '\r') {
			s->state = CSV_CR;
		} else {
			return sbx_media_fail(rep, "csv: text after a closing quote at offset %llu",
					      (unsigned long long)at);
		}
		return 0;
	}
	return 0;
}

/*
 * Bytes that cannot change the state: cell content after a cell's first
 * byte.  Skipping them keeps the byte-at-a-time machine off the bulk of a
 * large file.
 */
static const bool csv_special[256] = { [','] = true, ['"'] = true, ['\n'] = true, ['\r'] = true };

static size_t csv_skip(const struct csv *s, const unsigned char *p, size_t n)
{
	size_t i = 0;

	if (s->cell_start)
		return 0;
	if (s->state == CSV_QUOTED) {
		const unsigned char *q = memchr(p, '"', n);
		return q ? (size_t)(q - p) : n;
	}
	if (s->state == CSV_UNQUOTED)
		while (i < n && !csv_special[p[i]])
			i++;
	return i;
}

int sbx_media_csv_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	struct sbx_media_utf8 u = { 0 };
	struct csv s = { .state = CSV_FIELD_START, .cell_start = true };
	int ret = 0;

	for (;;) {
		uint64_t at = sbx_media_reader_tell(r);
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, SIZE_MAX);

		if (k < 0) {
			ret = sbx_media_fail(rep, "csv: read error");
			break;
		}
		if (k == 0)
			break;
		if (sbx_media_text_feed("csv", &u, p, (size_t)k, at, rep) < 0)
			return -1;
		for (size_t i = 0; i < (size_t)k; i++) {
			i += csv_skip(&s, p + i, (size_t)k - i);
			if (i == (size_t)k)
				break;
			if (csv_byte(&s, p[i], at + (uint64_t)i, rep) < 0) {
				ret = -1;
				goto out;
			}
		}
	}
	if (ret == 0 && sbx_media_text_end("csv", &u, rep) < 0)
		ret = -1;
	else if (ret == 0 && s.state == CSV_QUOTED)
		ret = sbx_media_fail(rep, "csv: unterminated quoted field");
	else if (ret == 0 && s.state == CSV_CR)
		ret = sbx_media_fail(rep, "csv: bare CR at the end");
	/* A last record without a line break still counts. */
	else if (ret == 0 && !(s.state == CSV_FIELD_START && s.fields == 0 && s.cell_start))
		ret = csv_end_record(&s, rep);
out:
	rep->formula_cells = s.formula;
	rep->rows = s.rows;
	rep->columns = s.columns;
	return ret;
}
