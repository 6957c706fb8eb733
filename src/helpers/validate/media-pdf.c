/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-pdf.c - PDF header and trailer sanity.
 *
 * Checks the "%PDF-1.0".."%PDF-1.7" / "%PDF-2.0" header, and in the last
 * KiB a "startxref" with an offset inside the file followed by "%%EOF" and
 * nothing but whitespace.  This catches truncated files and other formats
 * dressed up as PDF.
 *
 * Then the body must be PDF objects and nothing else, the one place a
 * polyglot could put a second format a PDF reader skips: a lexer walks the
 * whole file with bounded state (a 255-byte token buffer, counters) and
 * the top level may hold only comments, "N G obj ... endobj", an xref
 * table, "trailer << ... >>" and "startxref N".  Inside an object every
 * token must be a number, a name (printable ASCII, #xx escapes), a string,
 * a delimiter or one of the keywords true false null R stream; a stream's
 * data runs to "endstream" and is not decoded.  Brackets must balance in
 * each object.  The data of strings, streams and comments is searched for
 * other formats' signatures (flagged: compressed data matches four bytes
 * by chance), a ZIP end record or ZIP64 locator near the end (where ZIP
 * readers look) is refused whatever it says, and the names of active content (JavaScript, JS, OpenAction,
 * AA, Launch, EmbeddedFile(s), RichMedia, XFA, SubmitForm, ImportData,
 * GoToR, GoToE) are flagged.  Compressed object streams are not inflated,
 * so what they hold is not seen: a consumer must still open PDFs with a
 * viewer that disables active content.
 */
#include "config.h"

#include <string.h>

#include "util.h"
#include "validate.h"

#define PDF_TAIL 1024

static const unsigned char *find_last(const unsigned char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	if (n < k)
		return NULL;
	for (size_t i = n - k + 1; i-- > 0;)
		if (memcmp(hay + i, needle, k) == 0)
			return hay + i;
	return NULL;
}

static bool pdf_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == 0;
}

/* --- the body walk ------------------------------------------------------------ */

enum lex_state {
	L_WS,
	L_COMMENT,
	L_REGULAR,    /* a number or keyword */
	L_NAME,
	L_LITERAL,    /* ( ... ) */
	L_HEX,        /* < ... > */
	L_LT,         /* '<': a dict or a hex string */
	L_GT,         /* '>': must be '>>' */
	L_STREAM_EOL, /* after "stream": CRLF or LF */
	L_STREAM_CR,
	L_STREAM,     /* raw data up to "endstream" */
};

enum parse_state {
	P_TOP,
	P_NUM1,      /* "N" */
	P_NUM2,      /* "N G" */
	P_OBJ,       /* inside N G obj */
	P_XREF,
	P_TRAILER,   /* "trailer": a dictionary must follow */
	P_STARTXREF, /* a number must follow */
};

enum tok {
	T_NUMBER,
	T_INT,
	T_KEYWORD,
	T_NAME,
	T_STRING,
	T_OPEN,  /* << or [ */
	T_CLOSE, /* >> or ] */
	T_ENDSTREAM,
};

#define TOKEN_MAX 255

struct pdfwalk {
	enum lex_state lex;
	enum parse_state parse;
	char tok[TOKEN_MAX + 1];
	size_t ntok;
	uint64_t tok_at;
	uint64_t paren;  /* literal string nesting */
	bool escape;
	uint64_t nest;   /* << and [ open in this object or trailer */
	bool trailer_dict;
	unsigned kmp;    /* characters of "endstream" matched */
	uint64_t at;     /* offset of the byte being looked at */
};

static bool is_delim(unsigned char c)
{
	return c == '(' || c == ')' || c == '<' || c == '>' || c == '[' || c == ']' || c == '{' ||
	       c == '}' || c == '/' || c == '%';
}

static int wfail(struct pdfwalk *w, struct sbx_media_report *rep, const char *what)
{
	return sbx_media_fail(rep, "pdf: offset %llu: %s", (unsigned long long)w->tok_at, what);
}

/* [+-]?(digits[.digits]|.digits): an integer when there is no point. */
static enum tok classify(const char *t, size_t n)
{
	size_t i = 0, digits = 0;
	bool point = false;

	if (n > 0 && (t[0] == '+' || t[0] == '-'))
		i++;
	for (; i < n; i++) {
		if (t[i] >= '0' && t[i] <= '9')
			digits++;
		else if (t[i] == '.' && !point)
			point = true;
		else
			return T_KEYWORD;
	}
	if (digits == 0)
		return T_KEYWORD;
	return point || t[0] == '+' || t[0] == '-' ? T_NUMBER : T_INT;
}

static void active_name(const char *name, struct sbx_media_report *rep)
{
	static const char *const active[] = {
		"JavaScript", "JS", "OpenAction", "AA", "Launch", "EmbeddedFile", "EmbeddedFiles",
		"RichMedia", "XFA", "SubmitForm", "ImportData", "GoToR", "GoToE",
	};

	for (size_t i = 0; i < ARRAY_SIZE(active); i++)
		if (strcmp(name, active[i]) == 0)
			rep->flags |= SBX_MEDIA_FLAG_PDF_ACTIVE;
}

/* One token for the parser. */
static int token(struct pdfwalk *w, enum tok t, struct sbx_media_report *rep)
{
	const char *kw = w->tok;

	switch (w->parse) {
	case P_TOP:
		if (t == T_INT)
			w->parse = P_NUM1;
		else if (t == T_KEYWORD && !strcmp(kw, "xref"))
			w->parse = P_XREF;
		else if (t == T_KEYWORD && !strcmp(kw, "trailer"))
			w->parse = P_TRAILER, w->trailer_dict = false;
		else if (t == T_KEYWORD && !strcmp(kw, "startxref"))
			w->parse = P_STARTXREF;
		else
			return wfail(w, rep, "not a PDF object (only objects, xref, trailer and "
					     "startxref may be at the top level)");
		return 0;
	case P_NUM1:
		if (t != T_INT)
			return wfail(w, rep, "expected a generation number after an object number");
		w->parse = P_NUM2;
		return 0;
	case P_NUM2:
		if (t != T_KEYWORD || strcmp(kw, "obj"))
			return wfail(w, rep, "expected \"obj\"");
		w->parse = P_OBJ;
		w->nest = 0;
		return 0;
	case P_STARTXREF:
		if (t != T_INT)
			return wfail(w, rep, "expected an offset after startxref");
		w->parse = P_TOP;
		return 0;
	case P_XREF:
		if (t == T_INT || (t == T_KEYWORD && (!strcmp(kw, "f") || !strcmp(kw, "n"))))
			return 0;
		if (t == T_KEYWORD && !strcmp(kw, "trailer")) {
			w->parse = P_TRAILER, w->trailer_dict = false;
			return 0;
		}
		return wfail(w, rep, "not an xref table entry");
	case P_TRAILER:
		if (!w->trailer_dict) {
			if (t != T_OPEN || strcmp(kw, "<<"))
				return wfail(w, rep, "expected a dictionary after trailer");
			w->trailer_dict = true;
			w->nest = 0;
		}
		break;
	case P_OBJ:
		if (t == T_KEYWORD && !strcmp(kw, "endobj")) {
			if (w->nest != 0)
				return wfail(w, rep, "unbalanced brackets in the object");
			w->parse = P_TOP;
			return 0;
		}
		if (t == T_KEYWORD && !strcmp(kw, "stream")) {
			if (w->nest != 0)
				return wfail(w, rep, "stream inside a dictionary or array");
			w->lex = L_STREAM_EOL;
			return 0;
		}
		if (t == T_ENDSTREAM)
			return 0;
		break;
	}
	/* An object's (or the trailer's) content. */
	switch (t) {
	case T_OPEN:
		w->nest++;
		return 0;
	case T_CLOSE:
		if (w->nest == 0)
			return wfail(w, rep, "unbalanced brackets in the object");
		w->nest--;
		if (w->parse == P_TRAILER && w->nest == 0)
			w->parse = P_TOP;
		return 0;
	case T_KEYWORD:
		if (!strcmp(kw, "true") || !strcmp(kw, "false") || !strcmp(kw, "null") ||
		    !strcmp(kw, "R"))
			return 0;
		return wfail(w, rep, "not a PDF token");
	case T_NAME:
		active_name(kw, rep);
		return 0;
	case T_ENDSTREAM:
		return wfail(w, rep, "endstream outside an object");
	default:
		return 0;
	}
}

static int end_regular(struct pdfwalk *w, struct sbx_media_report *rep)
{
	w->tok[w->ntok] = '\0';
	w->lex = L_WS;
	return token(w, classify(w->tok, w->ntok), rep);
}

static int end_name(struct pdfwalk *w, struct sbx_media_report *rep)
{
	size_t o = 0;

	/* Decode #xx, so that /J#61vaScript is seen as /JavaScript. */
	for (size_t i = 0; i < w->ntok; i++) {
		int hi, lo;

		if (w->tok[i] == '#' && i + 2 < w->ntok &&
		    (hi = sbx_hex_digit((unsigned char)w->tok[i + 1])) >= 0 &&
		    (lo = sbx_hex_digit((unsigned char)w->tok[i + 2])) >= 0) {
			w->tok[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else if (w->tok[i] == '#') {
			return wfail(w, rep, "bad # escape in a name");
		} else {
			w->tok[o++] = w->tok[i];
		}
	}
	w->tok[o] = '\0';
	w->lex = L_WS;
	return token(w, T_NAME, rep);
}

static int tok_add(struct pdfwalk *w, unsigned char c, struct sbx_media_report *rep)
{
	if (w->ntok >= TOKEN_MAX)
		return wfail(w, rep, "token longer than 255 bytes");
	w->tok[w->ntok++] = (char)c;
	return 0;
}

static bool pdf_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == 0;
}

/* Start a token at @c (lexer in L_WS). */
static int lex_start(struct pdfwalk *w, unsigned char c, struct sbx_media_report *rep)
{
	w->tok_at = w->at;
	w->ntok = 0;
	/* Strings, names and brackets exist only inside objects. */
	if (c != '%' && is_delim(c) && w->parse != P_OBJ && w->parse != P_TRAILER)
		return wfail(w, rep, "not a PDF object (only objects, xref, trailer and startxref "
				     "may be at the top level)");
	switch (c) {
	case '%':
		w->lex = L_COMMENT;
		return 0;
	case '/':
		w->lex = L_NAME;
		return 0;
	case '(':
		w->lex = L_LITERAL;
		w->paren = 1;
		w->escape = false;
		return 0;
	case '<':
		w->lex = L_LT;
		return 0;
	case '>':
		w->lex = L_GT;
		return 0;
	case '[':
		strcpy(w->tok, "[");
		return token(w, T_OPEN, rep);
	case ']':
		strcpy(w->tok, "]");
		return token(w, T_CLOSE, rep);
	case ')':
	case '{':
	case '}':
		return wfail(w, rep, "unexpected delimiter");
	default:
		w->lex = L_REGULAR;
		return tok_add(w, c, rep);
	}
}

static const char endstream[] = "endstream";
/* KMP failure function of "endstream" (only the second 'e' has a border). */
static const unsigned char endstream_fail[9] = { 0, 0, 0, 0, 0, 0, 1, 0, 0 };

static int walk_byte(struct pdfwalk *w, unsigned char c, struct sbx_media_report *rep)
{
	switch (w->lex) {
	case L_WS:
		if (pdf_ws(c))
			return 0;
		return lex_start(w, c, rep);
	case L_COMMENT:
		if (c == '\r' || c == '\n')
			w->lex = L_WS;
		return 0;
	case L_REGULAR:
		if (pdf_ws(c) || is_delim(c)) {
			if (end_regular(w, rep) < 0)
				return -1;
			/* "stream" switched the lexer: its EOL is this byte. */
			if (w->lex == L_STREAM_EOL)
				return walk_byte(w, c, rep);
			return pdf_ws(c) ? 0 : lex_start(w, c, rep);
		}
		return tok_add(w, c, rep);
	case L_NAME:
		if (pdf_ws(c) || is_delim(c)) {
			if (end_name(w, rep) < 0)
				return -1;
			return pdf_ws(c) ? 0 : lex_start(w, c, rep);
		}
		if (c < 0x21 || c > 0x7e)
			return wfail(w, rep, "a name with a byte outside printable ASCII");
		return tok_add(w, c, rep);
	case L_LITERAL:
		if (w->escape)
			w->escape = false;
		else if (c == '\\')
			w->escape = true;
		else if (c == '(')
			w->paren++;
		else if (c == ')' && --w->paren == 0) {
			w->lex = L_WS;
			return token(w, T_STRING, rep);
		}
		return 0;
	case L_LT:
		if (c == '<') {
			strcpy(w->tok, "<<");
			w->lex = L_WS;
			return token(w, T_OPEN, rep);
		}
		w->lex = L_HEX;
		/* fall through */
	case L_HEX:
		if (c == '>') {
			w->lex = L_WS;
			return token(w, T_STRING, rep);
		}
		if (sbx_hex_digit(c) < 0 && !pdf_ws(c))
			return wfail(w, rep, "not a hex digit in a hex string");
		return 0;
	case L_GT:
		if (c != '>')
			return wfail(w, rep, "unexpected delimiter");
		strcpy(w->tok, ">>");
		w->lex = L_WS;
		return token(w, T_CLOSE, rep);
	case L_STREAM_EOL:
		if (c == '\r') {
			w->lex = L_STREAM_CR;
			return 0;
		}
		/* fall through */
	case L_STREAM_CR:
		if (c != '\n')
			return wfail(w, rep, "\"stream\" not followed by CRLF or LF");
		w->lex = L_STREAM;
		w->kmp = 0;
		return 0;
	case L_STREAM:
		while (w->kmp > 0 && c != (unsigned char)endstream[w->kmp])
			w->kmp = endstream_fail[w->kmp - 1];
		if (c == (unsigned char)endstream[w->kmp] && ++w->kmp == sizeof(endstream) - 1) {
			w->lex = L_WS;
			w->tok_at = w->at;
			return token(w, T_ENDSTREAM, rep);
		}
		return 0;
	}
	return 0;
}

static int walk_body(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	_cleanup_free_ struct pdfwalk *w = sbx_xcalloc(1, sizeof(*w));
	struct sbx_media_sigscan scan;

	/* The header itself is a "%PDF-" signature: search past it. */
	sbx_media_sigscan_init(&scan, SBX_SIG_NO_JPEG, 8);
	for (;;) {
		uint64_t at = sbx_media_reader_tell(r);
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, SIZE_MAX);

		if (k < 0)
			return sbx_media_fail(rep, "pdf: read error");
		if (k == 0)
			break;
		for (size_t i = 0; i < (size_t)k; i++) {
			w->at = at + i;
			if (walk_byte(w, p[i], rep) < 0)
				return -1;
		}
		if (at >= 8)
			sbx_media_sigscan_feed(&scan, p, (size_t)k);
		else if ((uint64_t)k > 8 - at)
			sbx_media_sigscan_feed(&scan, p + (8 - at), (size_t)k - (size_t)(8 - at));
	}
	/* The file ends in "%%EOF" (checked before): a comment. */
	if (w->lex == L_REGULAR && end_regular(w, rep) < 0)
		return -1;
	if (w->parse != P_TOP || (w->lex != L_WS && w->lex != L_COMMENT)) {
		w->tok_at = size;
		return wfail(w, rep, "the file ends inside an object");
	}
	if (scan.found)
		rep->flags |= SBX_MEDIA_FLAG_EMBEDDED;
	return 0;
}

int sbx_media_pdf_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	unsigned char head[8], tail[PDF_TAIL];
	const unsigned char *eof, *sx, *p, *end;
	size_t n;
	uint64_t xref = 0;
	bool digits = false;

	if (sbx_media_reader_get(r, head, sizeof(head)) < 0 || memcmp(head, "%PDF-", 5) != 0 ||
	    head[6] != '.' ||
	    !((head[5] == '1' && head[7] >= '0' && head[7] <= '7') ||
	      (head[5] == '2' && head[7] == '0')))
		return sbx_media_fail(rep, "pdf: no %%PDF-1.x header");
	/* The tail is the last KiB after the header (less for a tiny file). */
	n = size - sizeof(head) < PDF_TAIL ? (size_t)(size - sizeof(head)) : PDF_TAIL;
	if (sbx_media_reader_skip(r, size - sizeof(head) - n) < 0 ||
	    sbx_media_reader_get(r, tail, n) < 0)
		return sbx_media_fail(rep, "pdf: read error");

	eof = find_last(tail, n, "%%EOF");
	if (!eof)
		return sbx_media_fail(rep, "pdf: no %%%%EOF in the last %d bytes", PDF_TAIL);
	for (p = eof + 5; p < tail + n; p++)
		if (!pdf_space(*p))
			return sbx_media_fail(rep, "pdf: data after the last %%%%EOF");

	sx = find_last(tail, (size_t)(eof - tail), "startxref");
	if (!sx)
		return sbx_media_fail(rep, "pdf: no startxref before %%%%EOF");
	for (p = sx + 9, end = eof; p < end && pdf_space(*p); p++)
		;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (xref > size)
			break;
		xref = xref * 10 + (uint64_t)(*p - '0');
		digits = true;
	}
	while (p < end && pdf_space(*p))
		p++;
	if (!digits || p != end || xref >= size)
		return sbx_media_fail(rep, "pdf: startxref offset missing or outside the file");
	if (walk_body(fd, size, rep) < 0)
		return -1;
	return sbx_media_zip_tail(fd, size, "pdf", rep);
}
