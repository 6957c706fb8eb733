/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-html.c - text/html and text/markdown.
 *
 * Both are text first: valid UTF-8, no NUL, no C0 control other than TAB
 * LF CR, no DEL or C1, at most SBX_MEDIA_HTML_MAX_BYTES.  The manifest then
 * flags the file "active_content" when a reader's browser would run or
 * fetch something on opening it, and that is decided on the tree an HTML5
 * parser builds from the bytes (html-view.c), not on patterns: a pattern
 * scan and a browser disagree on where an attribute starts and on which
 * character references decode, and each disagreement was a bypass.
 *
 * Markdown is read twice.  Renderers pass its raw HTML through, so the
 * same HTML view runs over the whole text; and its own syntax makes links
 * and images whose destinations no HTML parser sees ("[x](javascript:...)",
 * "<javascript:...>"), so the scan below, which looks for javascript:,
 * vbscript:, data:text/html, src=, url(, @import and the loading elements
 * anywhere after character references are decoded and backslashes (Markdown
 * escapes) dropped, adds to the verdict.
 * It over-flags (prose that mentions url( is flagged), which a warning
 * may.
 *
 * The flag is a warning to whoever opens the file, not a refusal: the
 * profile that allows text/html decided that such files may leave.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "util.h"
#include "validate.h"

static void active_push(struct sbx_media_active *a, unsigned char c, unsigned *flags)
{
	static const char *const pats[] = {
		"<script", "<iframe", "<frame", "<object", "<embed", "<applet", "<link",
		"<meta", "<base", "<form", "<style", "<svg", "<math", "<img", "<video",
		"<audio", "<source", "<input", "<portal", "javascript:", "vbscript:",
		"data:text/html", "src=", "srcset=", "url(", "@import",
	};

	/* Markdown removes a backslash before punctuation, in link
	 * destinations too: "[x](javascript\:...)" links to javascript:. */
	if (c <= 0x20 || c == 0x7f || c == '\\')
		return;
	if (c >= 'A' && c <= 'Z')
		c = (unsigned char)(c - 'A' + 'a');
	memmove(a->dense, a->dense + 1, sizeof(a->dense) - 1);
	a->dense[sizeof(a->dense) - 1] = (char)c;
	for (size_t k = 0; k < ARRAY_SIZE(pats); k++) {
		size_t n = strlen(pats[k]);

		if (memcmp(a->dense + sizeof(a->dense) - n, pats[k], n) == 0) {
			*flags |= SBX_MEDIA_FLAG_ACTIVE;
			return;
		}
	}
}

/* The reference in a->ent ended (@term is the byte that ended it, 0 for
 * ';'): push what it decodes to, or its bytes when it decodes to nothing
 * that matters ('<' and '>' stay text: "&lt;script" is not a tag). */
static void ent_done(struct sbx_media_active *a, unsigned char term, unsigned *flags)
{
	static const struct {
		const char *name;
		char c;
	} named[] = {
		{ "colon", ':' }, { "tab", '\t' }, { "newline", '\n' }, { "lpar", '(' }, { "sol", '/' },
	};
	uint32_t cp = 0;
	bool ok = false;

	a->ent[a->elen] = '\0';
	a->in_ent = false;
	if (a->ent[0] == '#') {
		bool hex = a->ent[1] == 'x' || a->ent[1] == 'X';
		size_t i = hex ? 2 : 1;

		ok = a->elen > i;
		for (; ok && i < a->elen; i++) {
			int d = hex ? sbx_hex_digit((unsigned char)a->ent[i])
				    : (a->ent[i] >= '0' && a->ent[i] <= '9' ? a->ent[i] - '0' : -1);

			if (d < 0)
				ok = false;
			else if (cp < 0x110000)
				cp = cp * (hex ? 16 : 10) + (uint32_t)d;
		}
	} else if (term == 0) {
		for (size_t i = 0; i < ARRAY_SIZE(named); i++)
			if (strcasecmp(a->ent, named[i].name) == 0) {
				cp = (unsigned char)named[i].c;
				ok = true;
			}
	}
	if (ok && cp < 0x80 && cp != '<' && cp != '>') {
		active_push(a, (unsigned char)cp, flags);
	} else {
		active_push(a, '&', flags);
		for (size_t i = 0; i < a->elen; i++)
			active_push(a, (unsigned char)a->ent[i], flags);
		if (term == 0)
			active_push(a, ';', flags);
	}
}

static bool is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Whether @c continues the numeric reference in a->ent ("#", "#x", digits). */
static bool ref_digit(const struct sbx_media_active *a, unsigned char c)
{
	bool hex = a->elen >= 2 && (a->ent[1] | 0x20) == 'x';

	if (a->elen == 1 && (c | 0x20) == 'x')
		return true;
	return hex ? sbx_hex_digit(c) >= 0 : (c >= '0' && c <= '9');
}

static void active_tag(struct sbx_media_active *a, unsigned char c, unsigned *flags)
{
	bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';

	if (!a->in_tag) {
		if (a->prev == '<' && ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) {
			a->in_tag = true;
			a->attr_start = false;
			a->quote = 0;
		}
		return;
	}
	if (a->quote) {
		if (c == a->quote)
			a->quote = 0;
		return;
	}
	if ((c == '"' || c == '\'') && a->prev == '=') {
		a->quote = c;
	} else if (c == '>') {
		a->in_tag = false;
	} else if (ws || c == '/') {
		a->attr_start = true;
		a->alen = 0;
	} else if (c == '=') {
		a->attr_start = false;
	} else if (a->attr_start) {
		if (a->alen < sizeof(a->attr))
			a->attr[a->alen++] = (char)(c | 0x20);
		if (a->alen >= 3 && a->attr[0] == 'o' && a->attr[1] == 'n')
			*flags |= SBX_MEDIA_FLAG_ACTIVE;
	}
}

void sbx_media_active_feed(struct sbx_media_active *a, const unsigned char *p, size_t n,
			   unsigned *flags)
{
	for (size_t i = 0; i < n && !(*flags & SBX_MEDIA_FLAG_ACTIVE); i++) {
		unsigned char c = p[i];

		active_tag(a, c, flags);
		/* Whitespace after "=" keeps '=' as the byte a quote follows. */
		if (!(a->prev == '=' && (c == ' ' || c == '\t' || c == '\n' || c == '\r')))
			a->prev = c;
		if (a->in_ent) {
			if (c == ';') {
				ent_done(a, 0, flags);
				continue;
			}
			/* Browsers take any number of leading zeros: keep none, so
			 * that "&#0000000000106;" still fits. */
			if (c == '0' && a->elen >= 1 && a->ent[0] == '#' &&
			    (a->elen == 1 || (a->elen == 2 && (a->ent[1] | 0x20) == 'x')))
				continue;
			/* A numeric reference ends at its first non-digit, ';' or
			 * not: "&#106avascript" is "javascript" to a browser. */
			if (a->elen >= 1 && a->ent[0] == '#' && !ref_digit(a, c))
				goto ended;
			if ((is_alnum(c) || (c == '#' && a->elen == 0)) && a->elen < sizeof(a->ent) - 1) {
				a->ent[a->elen++] = (char)c;
				continue;
			}
ended:
			ent_done(a, c, flags);
		}
		if (c == '&') {
			a->in_ent = true;
			a->elen = 0;
			continue;
		}
		active_push(a, c, flags);
	}
}

/* UTF-8 and controls as for text/csv, then the HTML view of the whole
 * text; @markdown: refused when it starts like an HTML or XML document, as
 * text/plain is, and scanned for links in Markdown's own syntax. */
static int html_like(const char *what, bool markdown, int fd, uint64_t size,
		     struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = NULL;
	_cleanup_free_ struct sbx_media_active *a = NULL;
	_cleanup_free_ char *text = NULL;
	struct sbx_media_utf8 u = { 0 };
	unsigned char prev = 0;
	size_t len = 0;

	if (size > SBX_MEDIA_HTML_MAX_BYTES)
		return sbx_media_fail_code(rep, SBX_RC_TOO_LARGE, "%s: larger than %llu bytes", what,
				      (unsigned long long)SBX_MEDIA_HTML_MAX_BYTES);
	r = sbx_media_reader_new(fd, size);
	a = sbx_xcalloc(1, sizeof(*a));
	text = sbx_xmalloc((size_t)size + 1);
	for (;;) {
		uint64_t at = sbx_media_reader_tell(r);
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, SIZE_MAX);

		if (k < 0)
			return sbx_media_fail(rep, "%s: read error", what);
		if (k == 0)
			break;
		if ((uint64_t)len + (uint64_t)k > size)
			return sbx_media_fail(rep, "%s: grew while read", what);
		if (markdown && at == 0 && sbx_media_sniffs_as_markup(p, (size_t)k))
			return sbx_media_fail(rep, "%s: starts like an HTML or XML document (%s)", what,
					      sbx_media_sniffs_as_markup(p, (size_t)k));
		if (sbx_media_text_feed(what, &u, p, (size_t)k, at, rep) < 0 ||
		    sbx_media_controls_feed(what, &prev, p, (size_t)k, at, rep) < 0)
			return -1;
		memcpy(text + len, p, (size_t)k);
		len += (size_t)k;
		if (markdown)
			sbx_media_active_feed(a, p, (size_t)k, &rep->flags);
	}
	text[len] = '\0';
	if (markdown && a->in_ent)
		ent_done(a, ' ', &rep->flags);
	if (sbx_media_text_end(what, &u, rep) < 0)
		return -1;
	/* Only now: the parser is given valid UTF-8 without NUL, whole. */
	return sbx_media_html_view(what, text, len, &rep->flags, rep);
}

int sbx_media_html_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	return html_like("html", false, fd, size, rep);
}

int sbx_media_markdown_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	return html_like("markdown", true, fd, size, rep);
}
