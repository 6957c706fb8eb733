/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * contract-csv.c - the CSV and TSV checks of an output contract: header,
 * columns by name (type, min/max, pattern, unique, not_null, sum), rows.
 *
 * The file already passed the CSV validator (media-text.c), so it is
 * well-formed RFC 4180 with as many fields in every record as in the
 * first, and the separator is picked the same way.  One streaming pass:
 *
 *  - the first record is the header; each of its cells is compared with
 *    the names the contract gives, so a header of a million columns costs
 *    time but no memory;
 *  - in the data records only the cells of the named columns are copied
 *    (at most SBX_CONTRACT_MAX_CELL bytes each); all other bytes are
 *    skipped in runs, as the validator does;
 *  - `unique` keeps a keyed 64-bit hash a row in an open-addressing table,
 *    at most SBX_CONTRACT_UNIQUE_MAX_ROWS of them, and fails a longer
 *    column rather than growing without bound;
 *  - `sum` adds the cells' decimal text exactly (contract-sum.c) and
 *    compares the sum with the job's number exactly.
 *
 * Rows are counted from the first record after the header (row 1).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "contract-check.h"
#include "regex.h"
#include "runid.h"
#include "util.h"
#include "validate.h"

/* How many rows ahead a unique column's table slot is fetched. */
#define UNIQUE_AHEAD 16

struct col {
	const struct sbx_contract_column *k;
	char check[128];       /* "columns.<name>" */
	uint64_t field;        /* its index in a record */
	bool found;
	struct sbx_contract_sum sum;
	uint64_t *tab;         /* unique: hashes, 0 = empty */
	size_t cap, used;
	size_t first_cap;      /* the table's first size: rows the file may hold */
	bool uniq_over;
	/* Hashes looked up UNIQUE_AHEAD cells later (check_cell()): a ring. */
	unsigned npending, first_pending;
	struct {
		uint64_t h, row;
		char cell[48];
	} pending[UNIQUE_AHEAD];
};

enum state { F_START, F_UNQ, F_Q, F_QQ };

struct csvc {
	const struct sbx_contract *k;
	struct sbx_contract_result *res;
	unsigned char sep;
	enum state state;
	bool in_record;       /* a byte of the current record was read */
	uint64_t field, record; /* record 0 is the header */
	struct col *cols;
	struct col **order;   /* found columns by field index */
	size_t norder, cursor;
	struct col *cur;      /* the column of the current field, or NULL */
	bool capture;
	char *cell;
	size_t clen;
	bool over;
	uint64_t key[2];
	uint64_t regex_budget;  /* sbx_regex_budget(size), spent by patterns */
	uint64_t size;        /* of the file */
	uint64_t at;          /* bytes fed so far */
	uint64_t nl_at;       /* offset after the LF that ends a record */
	uint64_t header_len;  /* bytes of the header record */
	bool special[256];
};

/* --- values -------------------------------------------------------------------- */

int sbx_contract_parse_integer(const char *s, int64_t *out)
{
	const char *p = s;
	bool neg = *p == '-';
	uint64_t v = 0;

	if (*p == '+' || *p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10) {
			/* Still an integer, only too large: read to its end. */
			while (*p >= '0' && *p <= '9')
				p++;
			return *p ? -1 : -ERANGE;
		}
		v = v * 10 + d;
	}
	if (*p)
		return -1;
	if (v > (uint64_t)INT64_MAX + neg)
		return -ERANGE;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/*
 * The common case without strtod: at most 15 significant digits and no
 * exponent, where the digits as an integer and the power of ten are both
 * exact doubles, so one multiplication or division rounds correctly
 * (Clinger's fast path).  False when the text needs strtod.
 */
static bool fast_decimal(const char *s, double *out)
{
	static const double pow10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8,
					1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };
	const char *p = s;
	bool neg = *p == '-';
	uint64_t m = 0;
	unsigned nd = 0, frac = 0;
	double v;

	if (*p == '+' || *p == '-')
		p++;
	for (; *p >= '0' && *p <= '9'; p++, nd++)
		m = m * 10 + (uint64_t)(*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, nd++, frac++)
			m = m * 10 + (uint64_t)(*p - '0');
	if (*p || nd > 15)
		return false;
	v = frac ? (double)m / pow10[frac] : (double)m;
	*out = neg ? -v : v;
	return true;
}

int sbx_contract_parse_number(const char *s, double *out)
{
	const char *p = s;
	bool digits = false;
	char *end;
	double v;

	/* Decimal only: strtod would take "nan", "inf", hex floats and
	 * leading spaces, none of which is a number in a table. */
	if (*p == '+' || *p == '-')
		p++;
	for (; *p >= '0' && *p <= '9'; p++)
		digits = true;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits = true;
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p)
		return -1;
	if (fast_decimal(s, out))
		return 0;
	errno = 0;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || (errno == ERANGE && fabs(v) > 1))
		return -ERANGE;
	*out = v;
	return 0;
}

/* --- unique --------------------------------------------------------------------- */

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* A keyed hash: the payload cannot aim collisions at a key it never sees
 * (a collision would only fail its own output, but should not be free). */
static uint64_t cell_hash(const uint64_t key[2], const char *s, size_t n)
{
	uint64_t h = key[0] ^ (n * 0x9e3779b97f4a7c15ull);

	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = 0;
		size_t k = n - i < 8 ? n - i : 8;

		memcpy(&w, s + i, k);
		h = mix(h ^ w ^ key[1]);
	}
	h = mix(h ^ key[1]);
	return h ? h : 1;
}

/*
 * A zeroed table of @cap hashes.  A large one asks for transparent huge
 * pages: its lookups land anywhere in it, and with 4 KiB pages nearly every
 * one of them is a TLB miss as well as a cache miss.
 */
static uint64_t *table_new(size_t cap)
{
	const size_t huge = 2u << 20;
	size_t bytes = cap * sizeof(uint64_t);
	void *t;

	if (bytes < huge)
		return sbx_xcalloc(cap, sizeof(uint64_t));
	t = aligned_alloc(huge, bytes);
	if (!t)
		return sbx_xcalloc(cap, sizeof(uint64_t));
	madvise(t, bytes, MADV_HUGEPAGE);
	memset(t, 0, bytes);
	return t;
}

/* True when @h was already in the table (a duplicate). */
static bool seen_before(struct col *c, uint64_t h)
{
	size_t i;

	if (c->used * 2 >= c->cap) {
		size_t cap = c->cap ? 2 * c->cap : c->first_cap;
		uint64_t *t = table_new(cap);

		for (size_t j = 0; j < c->cap; j++)
			if (c->tab[j]) {
				for (i = c->tab[j] & (cap - 1); t[i]; i = (i + 1) & (cap - 1))
					;
				t[i] = c->tab[j];
			}
		free(c->tab);
		c->tab = t;
		c->cap = cap;
	}
	for (i = h & (c->cap - 1); c->tab[i]; i = (i + 1) & (c->cap - 1))
		if (c->tab[i] == h)
			return true;
	c->tab[i] = h;
	c->used++;
	return false;
}

/* --- cells ------------------------------------------------------------------------ */

static void fail_at(struct csvc *s, struct col *c, const char *what, const char *msg,
		    const char *cell);

/* The oldest lookup put off (check_cell()), in the order of the rows. */
static void unique_resolve(struct csvc *s, struct col *c)
{
	uint64_t row = s->record;
	unsigned k = c->first_pending;

	if (!c->npending)
		return;
	if (!c->tab) {
		/* Growing by doubling moves every hash again, at random: size
		 * the table once, for as many rows as records like those read
		 * so far (at least the UNIQUE_AHEAD put off) make of the
		 * file, within the cap. */
		uint64_t done = s->record > 1 ? s->record - 1 : 0;
		uint64_t len = done ? (s->nl_at - s->header_len) / done : s->header_len;
		uint64_t est = s->size / (len ? len : 1) + 1;
		size_t cap = 1024;

		if (est > SBX_CONTRACT_UNIQUE_MAX_ROWS)
			est = SBX_CONTRACT_UNIQUE_MAX_ROWS;
		while (cap < 2 * est + 2)
			cap *= 2;
		c->first_cap = cap;
	}
	c->first_pending = (k + 1) % UNIQUE_AHEAD;
	c->npending--;
	if (!seen_before(c, c->pending[k].h))
		return;
	s->record = c->pending[k].row;
	fail_at(s, c, "unique", "is a duplicate", c->pending[k].cell);
	s->record = row;
}

/* A cell for a message: escaped, at most 40 bytes. */
static const char *shown(const char *s, char buf[64])
{
	size_t n = 0;

	for (; *s && n < 40; s++) {
		unsigned char c = (unsigned char)*s;
		buf[n++] = c < 0x20 || c == 0x7f || c == '"' ? '?' : (char)c;
	}
	buf[n] = '\0';
	if (*s)
		snprintf(buf + n, 64 - n, "...");
	return buf;
}

/* A failure of the current row's cell: "\"<cell>\" <msg>", or @msg alone. */
static void fail_at(struct csvc *s, struct col *c, const char *what, const char *msg,
		    const char *cell)
{
	char check[160], b[64];

	snprintf(check, sizeof(check), "%s.%s", c->check, what);
	if (cell)
		sbx_contract_fail(s->res, s->record, check, "\"%s\" %s", shown(cell, b), msg);
	else
		sbx_contract_fail(s->res, s->record, check, "%s", msg);
}

static void check_cell(struct csvc *s, struct col *c)
{
	const struct sbx_contract_column *k = c->k;
	const char *cell = s->cell;
	double v = 0;
	int64_t iv = 0;
	int r;

	s->cell[s->clen] = '\0';
	if (s->over) {
		sbx_contract_fail(s->res, s->record, c->check, "cell longer than %d bytes",
				  SBX_CONTRACT_MAX_CELL);
		return;
	}
	if (s->clen == 0) {
		if (k->not_null)
			fail_at(s, c, "not_null", "empty cell", NULL);
		return;
	}
	switch (k->type) {
	case SBX_COL_INTEGER:
		r = sbx_contract_parse_integer(cell, &iv);
		if (r < 0) {
			fail_at(s, c, "type", r == -ERANGE ? "is out of the 64-bit range" :
							   "is not an integer", cell);
			return;
		}
		v = (double)iv;
		break;
	case SBX_COL_NUMBER:
		r = sbx_contract_parse_number(cell, &v);
		if (r < 0) {
			fail_at(s, c, "type", r == -ERANGE ? "is out of the range of a double" :
							   "is not a decimal number", cell);
			return;
		}
		break;
	case SBX_COL_DATE:
		if (!sbx_contract_date_valid(cell)) {
			fail_at(s, c, "type", "is not an ISO 8601 date", cell);
			return;
		}
		if (k->has_min && strcmp(cell, k->min_date) < 0)
			fail_at(s, c, "min", "is before min", cell);
		if (k->has_max && strcmp(cell, k->max_date) > 0)
			fail_at(s, c, "max", "is after max", cell);
		break;
	default:
		break;
	}
	if (k->type == SBX_COL_INTEGER || k->type == SBX_COL_NUMBER) {
		if (k->has_min && v < k->min)
			fail_at(s, c, "min", "is less than min", cell);
		if (k->has_max && v > k->max)
			fail_at(s, c, "max", "is more than max", cell);
		if (k->has_sum && k->type == SBX_COL_INTEGER)
			sbx_contract_sum_add_int(&c->sum, iv);
		else if (k->has_sum)
			sbx_contract_sum_add_text(&c->sum, cell, false);
	}
	if (k->pattern) {
		r = sbx_regex_match_budget(k->pattern, cell, s->clen, &s->regex_budget);
		if (r == SBX_REGEX_NOMATCH)
			fail_at(s, c, "pattern", "does not match", cell);
		else if (r != SBX_REGEX_MATCH)
			fail_at(s, c, "pattern", "not decided within the pattern's work limit", cell);
	}
	if (k->unique && !c->uniq_over) {
		if (c->used + c->npending >= SBX_CONTRACT_UNIQUE_MAX_ROWS) {
			char check[160];

			c->uniq_over = true;
			snprintf(check, sizeof(check), "%s.unique", c->check);
			sbx_contract_fail(s->res, s->record, check,
					  "more than %u rows: uniqueness not checked past them",
					  SBX_CONTRACT_UNIQUE_MAX_ROWS);
		} else {
			uint64_t h = cell_hash(s->key, cell, s->clen);

			unsigned slot;
			size_t n = s->clen < sizeof(c->pending[0].cell) - 1 ?
					   s->clen : sizeof(c->pending[0].cell) - 1;

			/* The table is larger than the caches: fetch this
			 * hash's slot now and look it up UNIQUE_AHEAD rows
			 * later, while those are read, instead of waiting for
			 * memory on every row. */
			if (c->cap)
				__builtin_prefetch(&c->tab[h & (c->cap - 1)]);
			if (c->npending == UNIQUE_AHEAD)
				unique_resolve(s, c);
			slot = (c->first_pending + c->npending++) % UNIQUE_AHEAD;
			c->pending[slot].h = h;
			c->pending[slot].row = s->record;
			memcpy(c->pending[slot].cell, cell, n);
			c->pending[slot].cell[n] = '\0';
		}
	}
}

/* --- the record machine ------------------------------------------------------------- */

static void header_cell(struct csvc *s)
{
	const struct sbx_contract *k = s->k;
	char *name = s->cell;
	char b1[64], b2[64];

	s->cell[s->clen] = '\0';
	/* A UTF-8 byte order mark before the first name is not part of it. */
	if (s->field == 0 && s->clen >= 3 && memcmp(name, "\xef\xbb\xbf", 3) == 0)
		name += 3;
	if (k->header && s->field < k->nheader && (s->over || strcmp(name, k->header[s->field]) != 0))
		sbx_contract_fail(s->res, 0, "header", "column %llu is \"%s\", expected \"%s\"",
				  (unsigned long long)s->field + 1, shown(name, b1),
				  shown(k->header[s->field], b2));
	if (s->over)
		return;
	for (size_t i = 0; i < k->ncols; i++)
		if (!s->cols[i].found && strcmp(name, k->cols[i].name) == 0) {
			s->cols[i].found = true;
			s->cols[i].field = s->field;
			break;
		}
}

static int by_field(const void *a, const void *b)
{
	const struct col *x = *(struct col *const *)a, *y = *(struct col *const *)b;

	return x->field < y->field ? -1 : x->field > y->field;
}

static void header_done(struct csvc *s)
{
	const struct sbx_contract *k = s->k;

	if (k->header && s->field != k->nheader)
		sbx_contract_fail(s->res, 0, "header", "%llu columns, expected %zu",
				  (unsigned long long)s->field, k->nheader);
	for (size_t i = 0; i < k->ncols; i++) {
		if (s->cols[i].found) {
			s->order[s->norder++] = &s->cols[i];
			continue;
		}
		sbx_contract_fail(s->res, 0, s->cols[i].check, "no column \"%s\" in the header",
				  k->cols[i].name);
	}
	qsort(s->order, s->norder, sizeof(*s->order), by_field);
}

/* Which column the field now starting is, if any. */
static void next_column(struct csvc *s)
{
	s->clen = 0;
	s->over = false;
	if (s->record == 0) {
		s->cur = NULL;
		s->capture = true;
		return;
	}
	if (s->cursor < s->norder && s->order[s->cursor]->field == s->field)
		s->cur = s->order[s->cursor++];
	else
		s->cur = NULL;
	s->capture = s->cur != NULL;
}

static void end_field(struct csvc *s)
{
	if (s->record == 0)
		header_cell(s);
	else if (s->cur)
		check_cell(s, s->cur);
	s->field++;
	s->state = F_START;
	next_column(s);
}

static void end_record(struct csvc *s)
{
	end_field(s);
	if (s->record == 0) {
		s->header_len = s->nl_at;
		header_done(s);
	}
	s->record++;
	s->field = 0;
	s->cursor = 0;
	s->in_record = false;
	next_column(s);
}

static inline void append(struct csvc *s, const unsigned char *p, size_t n)
{
	if (!s->capture || s->over)
		return;
	if (n > SBX_CONTRACT_MAX_CELL - s->clen) {
		s->over = true;
		return;
	}
	memcpy(s->cell + s->clen, p, n);
	s->clen += n;
}

static void feed(struct csvc *s, const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = p[i];
		size_t j;

		s->in_record = true;
		switch (s->state) {
		case F_START:
			if (c == '"') {
				s->state = F_Q;
				i++;
				continue;
			}
			s->state = F_UNQ;
			/* fall through */
		case F_UNQ:
			for (j = i; j < n && !s->special[p[j]]; j++)
				;
			append(s, p + i, j - i);
			i = j;
			if (i == n)
				goto done;
			c = p[i++];
			if (c == s->sep)
				end_field(s);
			else if (c == '\n')
				s->nl_at = s->at + i, end_record(s);
			/* CR: the validator let it through only before LF. */
			continue;
		case F_Q: {
			const unsigned char *q = memchr(p + i, '"', n - i);

			j = q ? (size_t)(q - p) : n;
			append(s, p + i, j - i);
			i = j;
			if (q) {
				s->state = F_QQ;
				i++;
			}
			continue;
		}
		case F_QQ:
			i++;
			if (c == '"') {
				append(s, &c, 1);
				s->state = F_Q;
			} else if (c == s->sep) {
				end_field(s);
			} else if (c == '\n') {
				s->nl_at = s->at + i;
				end_record(s);
			}
			continue;
		}
	}
done:
	s->at += n;
}

/* @text, the parser's decimal for @v, or (a contract built by other
 * means) the shortest decimal that reads back as @v. */
static const char *decimal(const char *text, double v, char buf[32])
{
	if (*text)
		return text;
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, 32, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

/* |sum - equals| <= tolerance, exactly (sbx-job(5)). */
static void check_sum(struct sbx_contract_result *res, const struct col *c)
{
	const struct sbx_contract_column *kc = c->k;
	struct sbx_contract_sum diff = c->sum, over;
	char check[160], sum[64], off[64], b1[32], b2[32];
	const char *equals = decimal(kc->sum_equals_text, kc->sum_equals, b1);
	const char *tolerance = decimal(kc->sum_tolerance_text, kc->sum_tolerance, b2);

	sbx_contract_sum_add_text(&diff, equals, true);
	over = diff;
	sbx_contract_sum_abs(&over);
	sbx_contract_sum_add_text(&over, tolerance, true);
	if (sbx_contract_sum_sign(&over) <= 0)
		return;
	snprintf(check, sizeof(check), "%s.sum", c->check);
	sbx_contract_sum_format(&c->sum, sum, sizeof(sum));
	sbx_contract_sum_format(&diff, off, sizeof(off));
	sbx_contract_fail(res, 0, check, "sum is %s, expected %s (tolerance %s): off by %s%s", sum,
			  equals, tolerance, sbx_contract_sum_sign(&diff) > 0 ? "+" : "", off);
}

int sbx_contract_check_csv(const struct sbx_contract *k, int fd, uint64_t size, bool tsv,
			   struct sbx_contract_result *res)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	_cleanup_free_ struct csvc *s = sbx_xcalloc(1, sizeof(*s));
	_cleanup_free_ struct col *cols = sbx_xcalloc(k->ncols + 1, sizeof(*cols));
	_cleanup_free_ struct col **order = sbx_xcalloc(k->ncols + 1, sizeof(*order));
	_cleanup_free_ char *cell = sbx_xmalloc(SBX_CONTRACT_MAX_CELL + 1);
	bool first = true;
	int ret = 0;

	s->k = k;
	s->res = res;
	s->cols = cols;
	s->order = order;
	s->cell = cell;
	s->size = size;
	s->regex_budget = sbx_regex_budget(size);
	sbx_random_bytes((unsigned char *)s->key, sizeof(s->key));
	for (size_t i = 0; i < k->ncols; i++) {
		cols[i].k = &k->cols[i];
		snprintf(cols[i].check, sizeof(cols[i].check), "columns.%s", k->cols[i].name);
	}
	next_column(s);
	for (;;) {
		const unsigned char *p;
		ssize_t n = sbx_media_reader_chunk(r, &p, SIZE_MAX);
		size_t skip = 0;

		if (n < 0) {
			sbx_contract_fail(res, 0, "read", "read error");
			ret = -1;
			break;
		}
		if (first) {
			s->sep = '\t';
			if (!tsv)
				skip = sbx_media_csv_pick_sep(p, (size_t)n, &s->sep);
			s->special[s->sep] = s->special['"'] = s->special['\n'] = s->special['\r'] = true;
			first = false;
		}
		if (n == 0)
			break;
		feed(s, p + skip, (size_t)n - skip);
	}
	/* A last record without a line break still counts. */
	if (s->in_record)
		end_record(s);
	if (ret == 0) {
		uint64_t rows = s->record ? s->record - 1 : 0;
		const struct sbx_contract_range *rr = &k->rows;

		if (s->record == 0 && (k->header || k->ncols))
			sbx_contract_fail(res, 0, "header", "the file has no header record");
		if (rr->has_min && rows < rr->min)
			sbx_contract_fail(res, 0, "rows", "%llu rows, expected at least %llu",
					  (unsigned long long)rows, (unsigned long long)rr->min);
		if (rr->has_max && rows > rr->max)
			sbx_contract_fail(res, 0, "rows", "%llu rows, expected at most %llu",
					  (unsigned long long)rows, (unsigned long long)rr->max);
	}
	for (size_t i = 0; i < k->ncols; i++)
		while (cols[i].npending)
			unique_resolve(s, &cols[i]);
	for (size_t i = 0; i < k->ncols; i++) {
		struct col *c = &cols[i];
		const struct sbx_contract_column *kc = c->k;

		if (ret == 0 && c->found && kc->has_sum)
			check_sum(res, c);
		free(c->tab);
	}
	return ret;
}
