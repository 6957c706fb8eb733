/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-text.c - text/plain and text/csv (application/json: media-json.c).
 *
 * Both must be valid UTF-8 without NUL bytes, checked in one streaming
 * pass, and free of terminal controls (see "control characters" below).
 * CSV is read as RFC 4180 (quoted fields may hold separators, quotes as ""
 * and line breaks; records end in LF or CRLF; a bare CR outside quotes or
 * a quote inside an unquoted field is an error) with the separator picked
 * as spreadsheets do (csv_pick_sep()), and every record must have as many
 * fields as the first.  A cell that a spreadsheet would run as a formula
 * is not an error, but the report flags it so the manifest can warn; the
 * check looks at the cells of every candidate separator (, ; TAB), since
 * the consumer's spreadsheet may split on another one than the file means.
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

/* --- control characters ------------------------------------------------------ */

/*
 * Text is shown in terminals, and a terminal obeys what it is sent: OSC 52
 * writes the clipboard, other OSC/DCS/APC strings set titles or query the
 * terminal, CSI sequences clear the screen or move the cursor over what
 * was printed, BS overwrites it, and C1 bytes (U+0080..U+009F) are the
 * same commands in one character.  Per type:
 *   text/plain: C0 controls other than TAB LF CR, DEL and C1 are refused,
 *               except ESC as the start of an SGR (colour) sequence,
 *               ESC [ <digits ; :> m, which is allowed and flagged
 *               (logs keep their colours); any other escape is refused;
 *   text/csv:   C0 controls other than TAB LF CR, DEL and C1 are refused
 *               (a spreadsheet has no use for them).
 * application/json has no raw controls by its grammar; strings that
 * decode to one are flagged (media-json.c).
 */
enum ctl_state {
	CTL_TEXT,
	CTL_ESC, /* after ESC: '[' must follow */
	CTL_CSI, /* inside ESC [ ...: parameters, then 'm' */
};

/* Longest SGR parameter string accepted. */
#define SGR_MAX 64

struct ctl {
	bool colours_ok; /* text/plain */
	enum ctl_state state;
	unsigned csi_len;
	unsigned char prev;
};

static const bool ctl_special[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1, [0x06] = 1,
	[0x07] = 1, [0x08] = 1, [0x0b] = 1, [0x0c] = 1, [0x0e] = 1, [0x0f] = 1, [0x10] = 1,
	[0x11] = 1, [0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1,
	[0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1, [0x1e] = 1,
	[0x1f] = 1, [0x7f] = 1, [0xc2] = 1,
};

/* Eight bytes of printable ASCII (0x20..0x7e): no byte has the top bit,
 * none borrows when 0x20 is taken away, none carries when 1 is added. */
static inline bool word_printable(const unsigned char *p)
{
	const uint64_t high = 0x8080808080808080ull;
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return ((w | (w - 0x2020202020202020ull) | (w + 0x0101010101010101ull)) & high) == 0;
}

/* The index of the next byte at or after @i that ctl_feed() must look at,
 * or @n: words of printable ASCII at a time, bytes in between. */
static size_t ctl_skip(const unsigned char *p, size_t i, size_t n)
{
	for (;;) {
		size_t lim;

		while (i + 8 <= n && word_printable(p + i))
			i += 8;
		lim = i + 8 < n ? i + 8 : n;
		while (i < lim && !ctl_special[p[i]])
			i++;
		if (i >= n || ctl_special[p[i]])
			return i;
	}
}

static int ctl_feed(const char *what, struct ctl *t, const unsigned char *p, size_t n, uint64_t at,
		    struct sbx_media_report *rep)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];

		if (t->state == CTL_TEXT) {
			if (t->prev != 0xc2) {
				i = ctl_skip(p, i, n);
				if (i == n) {
					t->prev = p[n - 1];
					return 0;
				}
				c = p[i];
			}
			if (t->prev == 0xc2 && c >= 0x80 && c <= 0x9f)
				return sbx_media_fail(rep, "%s: C1 control character U+%04X at offset %llu",
						      what, c, (unsigned long long)(at + i - 1));
			if (c == 0x1b && t->colours_ok) {
				t->state = CTL_ESC;
			} else if (c < 0x20 || c == 0x7f) {
				return sbx_media_fail(rep, "%s: control character 0x%02x at offset %llu%s",
						      what, c, (unsigned long long)(at + i),
						      c == 0x1b ? " (terminal escape)" : "");
			}
		} else if (t->state == CTL_ESC) {
			if (c != '[')
				return sbx_media_fail(rep, "%s: terminal escape ESC 0x%02x at offset %llu "
							   "(only SGR colours are allowed)",
						      what, c, (unsigned long long)(at + i - 1));
			t->state = CTL_CSI;
			t->csi_len = 0;
		} else if (c == 'm') {
			rep->flags |= SBX_MEDIA_FLAG_COLORS;
			t->state = CTL_TEXT;
		} else if (((c >= '0' && c <= '9') || c == ';' || c == ':') && ++t->csi_len <= SGR_MAX) {
			/* an SGR parameter */
		} else {
			return sbx_media_fail(rep, "%s: terminal control sequence at offset %llu (only "
						   "SGR colours, ESC [ ... m, are allowed)",
					      what, (unsigned long long)(at + i));
		}
		t->prev = c;
	}
	return 0;
}

static int ctl_end(const char *what, const struct ctl *t, struct sbx_media_report *rep)
{
	if (t->state != CTL_TEXT)
		return sbx_media_fail(rep, "%s: unterminated terminal escape at the end", what);
	return 0;
}

/*
 * A browser, or any program that sniffs, takes a file for HTML (scripts
 * run) or XML when its first bytes after whitespace are one of these
 * (WHATWG MIME Sniffing, "identifying a resource with an unknown MIME
 * type"), whatever its name says; the tags must end in SP or '>'.  Text
 * and CSV that start so are refused: a page with <script> named .txt is
 * still a page.  (Markdown must not open with an HTML tag.)
 */
const char *sbx_media_sniffs_as_markup(const unsigned char *p, size_t n)
{
	static const struct {
		const char *pat;
		bool tag; /* must be followed by SP or '>' */
	} pats[] = {
		{ "<!doctype html", true }, { "<html", true }, { "<head", true }, { "<script", true },
		{ "<iframe", true }, { "<h1", true }, { "<div", true }, { "<font", true },
		{ "<table", true }, { "<a", true }, { "<style", true }, { "<title", true },
		{ "<b", true }, { "<body", true }, { "<br", true }, { "<p", true },
		{ "<!--", false }, { "<?xml", false },
	};
	size_t i = 0;

	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r' || p[i] == '\f'))
		i++;
	for (size_t k = 0; k < ARRAY_SIZE(pats); k++) {
		size_t len = strlen(pats[k].pat), j;

		if (n - i < len + pats[k].tag)
			continue;
		for (j = 0; j < len; j++) {
			unsigned char c = p[i + j];

			if (c >= 'A' && c <= 'Z')
				c = (unsigned char)(c - 'A' + 'a');
			if (c != (unsigned char)pats[k].pat[j])
				break;
		}
		if (j == len && (!pats[k].tag || p[i + len] == ' ' || p[i + len] == '>'))
			return pats[k].pat;
	}
	return NULL;
}

int sbx_media_text_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	struct sbx_media_utf8 u = { 0 };
	struct ctl t = { .colours_ok = true };

	for (;;) {
		uint64_t at = sbx_media_reader_tell(r);
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, SIZE_MAX);

		if (k < 0)
			return sbx_media_fail(rep, "text: read error");
		if (k == 0)
			return sbx_media_text_end("text", &u, rep) < 0 ? -1 : ctl_end("text", &t, rep);
		if (at == 0 && sbx_media_sniffs_as_markup(p, (size_t)k))
			return sbx_media_fail(rep, "text: starts like an HTML or XML document (%s)",
					      sbx_media_sniffs_as_markup(p, (size_t)k));
		if (sbx_media_text_feed("text", &u, p, (size_t)k, at, rep) < 0 ||
		    ctl_feed("text", &t, p, (size_t)k, at, rep) < 0)
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

/*
 * Where a cell's first character may be: a spreadsheet runs a cell as a
 * formula when it starts, after spaces, with = + - @ (or their full-width
 * forms U+FF1D U+FF0B U+FF0D U+FF20, which some normalize), TAB or CR.
 */
enum csv_lead {
	LEAD_NONE,  /* inside a cell's content */
	LEAD_START, /* a cell may start here */
	LEAD_EF,    /* after EF at a start: a full-width form? */
	LEAD_EFBC,  /* after EF BC */
};

struct csv {
	const char *what; /* "csv" or "tsv", for messages */
	enum csv_state state;
	enum csv_lead lead;
	unsigned char sep;
	bool cell_start;  /* nothing of the current record read yet */
	uint64_t fields;  /* fields in the current record so far */
	uint64_t columns; /* fields in the first record */
	uint64_t rows;
	bool formula;
	bool special[256]; /* bytes that end an unquoted run */
};

static bool formula_lead(unsigned char c)
{
	return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
}

/*
 * The separator, as spreadsheets pick it: a first line "sep=X" names it
 * (Excel's convention; the line is not a record), else the most frequent
 * of , ; TAB outside quotes in the first line (ties in that order), else
 * ','.  Returns the bytes of a "sep=" line to skip.
 */
static size_t csv_pick_sep(const unsigned char *p, size_t n, unsigned char *sep)
{
	static const unsigned char cand[] = { ',', ';', '\t' };
	size_t count[3] = { 0 }, best = 0;
	bool quoted = false;

	if (n >= 5 && memcmp(p, "sep=", 4) == 0 && p[4] != '"' && p[4] != '\n' && p[4] != '\r' &&
	    p[4] >= 0x09 && p[4] < 0x7f) {
		if (n == 5 || p[5] == '\n') {
			*sep = p[4];
			return n == 5 ? 5 : 6;
		}
		if (n >= 7 && p[5] == '\r' && p[6] == '\n') {
			*sep = p[4];
			return 7;
		}
	}
	for (size_t i = 0; i < n && (quoted || p[i] != '\n'); i++) {
		if (p[i] == '"')
			quoted = !quoted;
		for (size_t k = 0; !quoted && k < sizeof(cand); k++)
			count[k] += p[i] == cand[k];
	}
	for (size_t k = 1; k < sizeof(cand); k++)
		if (count[k] > count[best])
			best = k;
	*sep = cand[best];
	return 0;
}

size_t sbx_media_csv_pick_sep(const unsigned char *p, size_t n, unsigned char *sep)
{
	return csv_pick_sep(p, n, sep);
}

static void csv_init(struct csv *s, unsigned char sep)
{
	memset(s, 0, sizeof(*s));
	s->state = CSV_FIELD_START;
	s->lead = LEAD_START;
	s->cell_start = true;
	s->sep = sep;
	/* The other candidate separators end a run too: a spreadsheet set to
	 * split on them would start a cell there. */
	s->special[sep] = s->special[','] = s->special[';'] = s->special['\t'] = true;
	s->special['"'] = s->special['\n'] = s->special['\r'] = true;
}

static int csv_end_record(struct csv *s, struct sbx_media_report *rep)
{
	s->fields++;
	if (s->rows == 0)
		s->columns = s->fields;
	else if (s->fields != s->columns)
		return sbx_media_fail(rep, "%s: record %llu has %llu fields, expected %llu", s->what,
				      (unsigned long long)s->rows + 1, (unsigned long long)s->fields,
				      (unsigned long long)s->columns);
	s->rows++;
	s->fields = 0;
	s->state = CSV_FIELD_START;
	s->cell_start = true;
	s->lead = LEAD_START;
	return 0;
}

static inline void csv_content(struct csv *s, unsigned char c)
{
	s->cell_start = false;
	switch (s->lead) {
	case LEAD_START:
		if (c == ' ')
			return; /* leading spaces: a spreadsheet looks past them */
		if (formula_lead(c))
			s->formula = true;
		s->lead = c == 0xef ? LEAD_EF : LEAD_NONE;
		return;
	case LEAD_EF:
		s->lead = c == 0xbc ? LEAD_EFBC : LEAD_NONE;
		return;
	case LEAD_EFBC:
		if (c == 0x9d || c == 0x8b || c == 0x8d || c == 0xa0)
			s->formula = true;
		s->lead = LEAD_NONE;
		return;
	case LEAD_NONE:
		return;
	}
}

static inline void csv_next_field(struct csv *s)
{
	s->fields++;
	s->state = CSV_FIELD_START;
	s->lead = LEAD_START;
	s->cell_start = false;
}

static inline int csv_byte(struct csv *s, unsigned char c, uint64_t at,
			    struct sbx_media_report *rep)
{
	switch (s->state) {
	case CSV_CR:
		if (c != '\n')
			return sbx_media_fail(rep, "%s: bare CR at offset %llu", s->what,
					      (unsigned long long)at - 1);
		return csv_end_record(s, rep);
	case CSV_FIELD_START:
		if (c == '"') {
			s->state = CSV_QUOTED;
			s->cell_start = false;
			return 0;
		}
		s->state = CSV_UNQUOTED;
		/* fall through */
	case CSV_UNQUOTED:
		if (c == s->sep) {
			csv_next_field(s);
		} else if (c == '\n') {
			return csv_end_record(s, rep);
		} else if (c == '\r') {
			s->state = CSV_CR;
		} else if (c == '"') {
			return sbx_media_fail(rep, "%s: quote inside an unquoted field at offset %llu", s->what,
					      (unsigned long long)at);
		} else if (c == ',' || c == ';' || c == '\t') {
			/* Another candidate separator: a cell starts here for a
			 * spreadsheet that splits on it (a TAB at a start is
			 * itself a formula lead). */
			if (c == '\t' && s->lead == LEAD_START)
				s->formula = true;
			s->cell_start = false;
			s->lead = LEAD_START;
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
		} else if (c == s->sep) {
			csv_next_field(s);
		} else if (c == '\n') {
			return csv_end_record(s, rep);
		} else if (c == '\r') {
			s->state = CSV_CR;
		} else {
			return sbx_media_fail(rep, "%s: text after a closing quote at offset %llu", s->what,
					      (unsigned long long)at);
		}
		return 0;
	}
	return 0;
}

/*
 * Bytes that cannot change the state: cell content after a cell's first
 * character.  Skipping them keeps the byte-at-a-time machine off the bulk
 * of a large file.
 */
static size_t csv_skip(const struct csv *s, const unsigned char *p, size_t n)
{
	size_t i = 0;

	if (s->lead != LEAD_NONE)
		return 0;
	if (s->state == CSV_QUOTED) {
		const unsigned char *q = memchr(p, '"', n);
		return q ? (size_t)(q - p) : n;
	}
	if (s->state == CSV_UNQUOTED)
		while (i < n && !s->special[p[i]])
			i++;
	return i;
}

/* text/csv, or with @tsv text/tab-separated-values: the same rules with
 * TAB as the separator whatever the first line holds. */
static int csv_validate(int fd, uint64_t size, bool tsv, struct sbx_media_report *rep)
{
	const char *what = tsv ? "tsv" : "csv";
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	_cleanup_free_ struct csv *s = sbx_xcalloc(1, sizeof(*s));
	struct sbx_media_utf8 u = { 0 };
	struct ctl t = { .colours_ok = false };
	bool first = true;
	int ret = 0;

	for (;;) {
		uint64_t at = sbx_media_reader_tell(r);
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, SIZE_MAX);
		size_t i = 0;

		if (k < 0) {
			ret = sbx_media_fail(rep, "%s: read error", what);
			break;
		}
		if (first) {
			unsigned char sep;

			/* The first chunk holds the first line (or 64 KiB of it). */
			if (tsv)
				sep = '\t';
			else
				i = csv_pick_sep(p, k > 0 ? (size_t)k : 0, &sep);
			csv_init(s, sep);
			s->what = what;
			first = false;
			if (k > 0 && sbx_media_sniffs_as_markup(p, (size_t)k))
				return sbx_media_fail(rep, "%s: starts like an HTML or XML document (%s)", s->what,
						      sbx_media_sniffs_as_markup(p, (size_t)k));
		}
		if (k == 0)
			break;
		if (sbx_media_text_feed(what, &u, p, (size_t)k, at, rep) < 0 ||
		    ctl_feed(what, &t, p, (size_t)k, at, rep) < 0)
			return -1;
		for (; i < (size_t)k; i++) {
			i += csv_skip(s, p + i, (size_t)k - i);
			if (i == (size_t)k)
				break;
			if (csv_byte(s, p[i], at + (uint64_t)i, rep) < 0) {
				ret = -1;
				goto out;
			}
		}
	}
	if (ret == 0 && sbx_media_text_end(what, &u, rep) < 0)
		ret = -1;
	else if (ret == 0 && s->state == CSV_QUOTED)
		ret = sbx_media_fail(rep, "%s: unterminated quoted field", s->what);
	else if (ret == 0 && s->state == CSV_CR)
		ret = sbx_media_fail(rep, "%s: bare CR at the end", s->what);
	/* A last record without a line break still counts. */
	else if (ret == 0 && !(s->state == CSV_FIELD_START && s->fields == 0 && s->cell_start))
		ret = csv_end_record(s, rep);
out:
	rep->formula_cells = s->formula;
	rep->rows = s->rows;
	rep->columns = s->columns;
	return ret;
}

int sbx_media_csv_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	return csv_validate(fd, size, false, rep);
}

int sbx_media_tsv_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	return csv_validate(fd, size, true, rep);
}

/* The text/csv control rule for the other text types (media-html.c). */
int sbx_media_controls_feed(const char *what, unsigned char *prev, const unsigned char *p,
			    size_t n, uint64_t at, struct sbx_media_report *rep)
{
	struct ctl t = { .colours_ok = false, .prev = *prev };

	if (ctl_feed(what, &t, p, n, at, rep) < 0)
		return -1;
	*prev = t.prev;
	return 0;
}
