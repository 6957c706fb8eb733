/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-svg.c - image/svg+xml, checked in one streaming pass.
 *
 * An SVG is a document a browser runs: it may hold scripts, event handler
 * attributes, HTML inside foreignObject, and references that fetch other
 * resources.  A full XML parser is not linked into the broker (its entity
 * and DTD machinery is the attack surface this check is meant to keep
 * away); this is a strict tokenizer for the subset SVG generators write,
 * fed the reader's fixed chunks, with bounded state:
 *   - UTF-8 without NUL or C0 controls other than TAB LF CR, no BOM;
 *   - at most SBX_MEDIA_SVG_MAX_BYTES, elements nested at most
 *     SBX_MEDIA_SVG_MAX_DEPTH deep, at most SBX_MEDIA_SVG_MAX_ATTRS
 *     attributes an element, names of ASCII letters, digits, '_' '-' '.'
 *     and one ':' of at most SBX_MEDIA_SVG_MAX_NAME bytes;
 *   - well-formed: tags balanced and matched, attributes quoted and not
 *     repeated, one root element and it is <svg>, only whitespace and
 *     comments around it, references only &lt; &gt; &amp; &quot; &apos;
 *     and character references to XML characters;
 *   - an XML declaration only at the start; no other processing
 *     instruction; a DOCTYPE only as the plain SVG 1.0/1.1 declaration
 *     matplotlib and Inkscape write (public and system identifier, no
 *     internal subset: no entity can be declared), so no entity expansion
 *     ("billion laughs") and no external DTD of the file's choosing;
 * and it refuses what runs or fetches:
 *   - elements (local name, any case, any prefix) script, foreignObject,
 *     handler, listener, and the HTML ones that run, load or submit
 *     (iframe, frame, embed, object, applet, link, meta, base, html, body,
 *     form, input, button, textarea, select, audio, video, source, track);
 *   - attributes on* (event handlers) and xml:base; href and src (with any
 *     prefix, so xlink:href), and the HTML attributes that fetch (srcset,
 *     action, formaction, poster, ...) other than a same-document
 *     "#fragment" or a data:image/png or data:image/jpeg URI;
 *     attributeName naming a reference attribute or an event handler
 *     (an animation that sets one), by its local name whatever the prefix:
 *     the whole value is read, so a long prefix does not push the name
 *     out of sight;
 *   - javascript: and vbscript: anywhere in an attribute value (after
 *     character references are decoded; whitespace and controls inside
 *     the word do not hide it);
 *   - CSS in style attributes, presentation attributes and <style>: url()
 *     other than url(#fragment), the functions that fetch a bare string
 *     (image-set(), -webkit-image-set(), cross-fade(), image(), src()),
 *     @import, @font-face, expression(), and backslash escapes (which
 *     could spell any of them);
 *   - markup an HTML parser would see in a polyglot: '<' inside a comment
 *     or CDATA section (an HTML parser ends CDATA at the first '>'),
 *     comments opening with '>' or '->' (HTML closes those at once), and
 *     '<' or '>' inside the XML declaration (HTML reads "<?" as a bogus
 *     comment that ends at the first '>').
 *
 * Two views, one verdict.  A browser reads an .svg as XML when served as
 * image/svg+xml, and as HTML when it is sniffed, inlined or renamed.  The
 * accepted language is a subset on which the two tokenizations agree up to
 * text that the HTML view hides (RAWTEXT and RCDATA elements, which can
 * only end at an end tag the XML view also sees, since '<' is refused in
 * values, comments, CDATA and the declaration): every tag and attribute
 * the HTML tokenizer can produce from an accepted file is one this check
 * saw.  docs/design.md says why this is a tokenizer of its own rather than
 * expat, and tests/markup-diff.py holds it to libexpat's and html5lib's
 * views of generated hostile documents in every `make check`.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "util.h"
#include "validate.h"

#define STR_(x) #x
#define STR(x) STR_(x)

enum xstate {
	X_TEXT,        /* content, or whitespace around the root */
	X_LT,          /* after '<' */
	X_BANG,        /* after "<!": collecting "--", "[CDATA[" or "DOCTYPE" */
	X_COMMENT,     /* inside <!-- ... --> */
	X_CDATA,       /* inside <![CDATA[ ... ]]> */
	X_PI,          /* inside <?xml ... ?> */
	X_DOCTYPE,     /* inside <!DOCTYPE ... > */
	X_STAG,        /* start tag name */
	X_TAG,         /* in a start tag: an attribute, '>' or "/>" */
	X_ANAME,       /* attribute name */
	X_AEQ,         /* after the attribute name: '=' */
	X_AQ,          /* after '=': a quote */
	X_AVAL,        /* attribute value */
	X_SLASH,       /* "/" in a start tag: '>' must follow */
	X_ETAG,        /* end tag name */
	X_ETAG_WS,     /* after the end tag name: '>' */
	X_REF,         /* inside &...; */
};

/* What a decoded character of an attribute value or style text is checked
 * for: a window of its last characters, lowercased, without whitespace
 * and controls. */
struct pat {
	char dense[16];
	bool url_open;  /* after "url(": '#' must come before anything but
			 * whitespace and quotes */
};

#define DOCTYPE_MAX 256
#define PI_MAX 256

struct svg {
	enum xstate state, ref_ret;
	uint64_t line, line_start;

	/* names */
	char name[SBX_MEDIA_SVG_MAX_NAME + 1];
	size_t nlen;
	unsigned colons;

	/* open elements */
	unsigned depth;
	bool root_seen, root_done, doctype_seen;
	unsigned style_depth; /* depth of an open <style>, 0 when none */
	char stack[SBX_MEDIA_SVG_MAX_DEPTH][SBX_MEDIA_SVG_MAX_NAME + 1];

	/* the start tag being read */
	unsigned nattrs;
	char attrs[SBX_MEDIA_SVG_MAX_ATTRS][SBX_MEDIA_SVG_MAX_NAME + 1];
	unsigned char quote;
	bool need_ws; /* after a value: whitespace before the next attribute */
	enum { V_PLAIN, V_HREF, V_ATTRNAME } vkind;
	/* First characters of the value, leading spaces skipped, lowercased:
	 * enough for an attributeName, whose whole value is a name (longer
	 * ones are refused). */
	char vhead[2 * SBX_MEDIA_SVG_MAX_NAME + 2];
	size_t vhlen;
	bool vhtrunc; /* the value did not fit in vhead */
	struct pat pat; /* of the attribute value being read */
	struct pat css; /* of the text of the open <style> */

	/* comments, CDATA, PIs, DOCTYPE */
	char bang[10];
	size_t blen;
	unsigned dashes;     /* '-' in a row (comments), ']' in a row (CDATA) */
	uint64_t tok_len;    /* bytes of a comment so far */
	char buf[DOCTYPE_MAX + 1];
	size_t buflen;

	/* &...; */
	char ref[12];
	size_t rlen;
};

static int xfail(struct svg *s, uint64_t at, struct sbx_media_report *rep, const char *what,
		 const char *arg)
{
	return sbx_media_fail(rep, "svg: line %llu column %llu: %s%s%s%s",
			      (unsigned long long)s->line + 1,
			      (unsigned long long)(at - s->line_start + 1), what, arg ? " (" : "",
			      arg ? arg : "", arg ? ")" : "");
}

/* A refusal for what runs or fetches when the image is opened. */
static int afail(struct svg *s, uint64_t at, struct sbx_media_report *rep, const char *what,
		 const char *arg)
{
	rep->code = SBX_RC_ACTIVE_CONTENT;
	return xfail(s, at, rep, what, arg);
}

static bool name_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool name_char(unsigned char c)
{
	return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == ':';
}

static bool xml_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *local_name(const char *n)
{
	const char *c = strchr(n, ':');
	return c ? c + 1 : n;
}

static int name_add(struct svg *s, unsigned char c, uint64_t at, struct sbx_media_report *rep)
{
	if (s->nlen >= SBX_MEDIA_SVG_MAX_NAME)
		return xfail(s, at, rep, "name longer than " STR(SBX_MEDIA_SVG_MAX_NAME) " bytes",
			     NULL);
	if (c == ':' && (s->nlen == 0 || ++s->colons > 1))
		return xfail(s, at, rep, "invalid qualified name", NULL);
	s->name[s->nlen++] = (char)c;
	s->name[s->nlen] = '\0';
	return 0;
}

static int name_done(struct svg *s, uint64_t at, struct sbx_media_report *rep)
{
	if (s->nlen == 0 || s->name[s->nlen - 1] == ':')
		return xfail(s, at, rep, "invalid name", NULL);
	return 0;
}

/* --- patterns in attribute values and CSS -------------------------------------- */

static void win_push(char *w, char c)
{
	memmove(w, w + 1, 15);
	w[15] = c;
}

static bool win_ends(const char *w, const char *pat)
{
	size_t n = strlen(pat);
	return memcmp(w + 16 - n, pat, n) == 0;
}

/* CSS functions that take a bare string as a URL and fetch it when the
 * document is drawn (a vendor prefix ends the same way). */
static const char *const css_fetching[] = {
	"image-set(", "cross-fade(", "image(", "src(",
};

/* One decoded character @cp of an attribute value or of style text. */
static int pat_feed(struct svg *s, struct pat *p, uint32_t cp, uint64_t at,
		    struct sbx_media_report *rep)
{
	char c = cp < 0x80 ? (char)cp : '?';

	if (c >= 'A' && c <= 'Z')
		c = (char)(c - 'A' + 'a');
	if (c == '\\')
		return xfail(s, at, rep, "backslash in an attribute value or style sheet "
				         "(CSS escapes are refused)", NULL);
	if (p->url_open) {
		if (c == '#')
			p->url_open = false;
		else if (!xml_ws((unsigned char)c) && c != '"' && c != '\'')
			return afail(s, at, rep, "external reference", "CSS url() other than "
								      "url(#fragment)");
	}
	if (!(cp <= 0x20 || cp == 0x7f))
		win_push(p->dense, c);
	/* Without whitespace: "url (" is no function to CSS, but refusing
	 * it is cheaper than proving that no reader takes it for one. */
	if (win_ends(p->dense, "url("))
		p->url_open = true;
	if (win_ends(p->dense, "@import"))
		return afail(s, at, rep, "CSS @import", NULL);
	if (win_ends(p->dense, "@font-face"))
		return afail(s, at, rep, "CSS @font-face (its src fetches)", NULL);
	for (size_t i = 0; i < ARRAY_SIZE(css_fetching); i++)
		if (win_ends(p->dense, css_fetching[i]))
			return afail(s, at, rep, "CSS function that fetches", css_fetching[i]);
	if (win_ends(p->dense, "expression("))
		return afail(s, at, rep, "CSS expression()", NULL);
	if (win_ends(p->dense, "javascript:") || win_ends(p->dense, "vbscript:"))
		return afail(s, at, rep, "script URI", "javascript: or vbscript:");
	return 0;
}

/* --- attributes ------------------------------------------------------------------ */

/* Attributes that name a resource to fetch, in SVG or in the HTML that an
 * XHTML namespace brings in: the href rule applies to all. */
static const char *const reference_attrs[] = {
	"href", "src", "srcset", "action", "formaction", "poster", "background", "data",
	"ping", "codebase", "cite", "longdesc", "usemap", "manifest", "lowsrc", "dynsrc",
};

static int attr_name_done(struct svg *s, uint64_t at, struct sbx_media_report *rep)
{
	const char *ln;

	if (name_done(s, at, rep) < 0)
		return -1;
	ln = local_name(s->name);
	if (strncasecmp(ln, "on", 2) == 0)
		return afail(s, at, rep, "event handler attribute", s->name);
	if (strcasecmp(s->name, "xml:base") == 0)
		return xfail(s, at, rep, "xml:base is refused", NULL);
	for (unsigned i = 0; i < s->nattrs; i++)
		if (strcmp(s->attrs[i], s->name) == 0)
			return xfail(s, at, rep, "attribute given twice", s->name);
	if (s->nattrs >= SBX_MEDIA_SVG_MAX_ATTRS)
		return xfail(s, at, rep,
			     "more than " STR(SBX_MEDIA_SVG_MAX_ATTRS) " attributes in one element",
			     NULL);
	memcpy(s->attrs[s->nattrs++], s->name, s->nlen + 1);
	s->vkind = V_PLAIN;
	for (size_t i = 0; i < ARRAY_SIZE(reference_attrs); i++)
		if (strcasecmp(ln, reference_attrs[i]) == 0)
			s->vkind = V_HREF;
	if (strcasecmp(ln, "attributename") == 0)
		s->vkind = V_ATTRNAME;
	s->vhlen = 0;
	s->vhtrunc = false;
	memset(&s->pat, 0, sizeof(s->pat));
	return 0;
}

static int value_cp(struct svg *s, uint32_t cp, uint64_t at, struct sbx_media_report *rep)
{
	if (s->vhlen > 0 || !xml_ws(cp < 0x80 ? (unsigned char)cp : 'x')) {
		char c = cp < 0x80 ? (char)cp : '?';

		if (s->vhlen < sizeof(s->vhead) - 1)
			s->vhead[s->vhlen++] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
		else
			s->vhtrunc = true;
	}
	return pat_feed(s, &s->pat, cp, at, rep);
}

static bool head_is(const struct svg *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return s->vhlen >= n && memcmp(s->vhead, prefix, n) == 0;
}

/*
 * The value of attributeName, whole: the attribute an animation sets.
 * Refused when its local name, whatever the prefix and the namespace that
 * prefix is bound to, is one an element may not carry (an event handler,
 * a reference, xml:base): the element rules match those by local name
 * too, and an animation must not reach what markup cannot.
 */
static int attribute_name_done(struct svg *s, uint64_t at, struct sbx_media_report *rep)
{
	const char *ln;
	size_t n = s->vhlen;

	if (s->vhtrunc)
		return xfail(s, at, rep, "attributeName longer than a name may be", NULL);
	while (n > 0 && xml_ws((unsigned char)s->vhead[n - 1]))
		n--;
	s->vhead[n] = '\0';
	ln = strrchr(s->vhead, ':');
	ln = ln ? ln + 1 : s->vhead;
	if (strncmp(ln, "on", 2) == 0 || strcmp(s->vhead, "xml:base") == 0)
		return afail(s, at, rep, "animation of an event handler or xml:base", s->vhead);
	for (size_t i = 0; i < ARRAY_SIZE(reference_attrs); i++)
		if (strcmp(ln, reference_attrs[i]) == 0)
			return xfail(s, at, rep, "animation of a reference attribute", s->vhead);
	return 0;
}

static int value_done(struct svg *s, uint64_t at, struct sbx_media_report *rep)
{
	s->vhead[s->vhlen] = '\0';
	if (s->pat.url_open)
		return xfail(s, at, rep, "unterminated CSS url(", NULL);
	if (s->vkind == V_HREF && !(head_is(s, "#") && s->vhlen > 1) &&
	    !head_is(s, "data:image/png;") && !head_is(s, "data:image/png,") &&
	    !head_is(s, "data:image/jpeg;") && !head_is(s, "data:image/jpeg,"))
		return afail(s, at, rep, "external reference",
			     "href to something other than #fragment or a PNG or JPEG data: URI");
	if (s->vkind == V_ATTRNAME)
		return attribute_name_done(s, at, rep);
	return 0;
}

/* --- elements --------------------------------------------------------------------- */

static int start_tag_name_done(struct svg *s, uint64_t at, struct sbx_media_report *rep)
{
	static const char *const refused[] = {
		"script", "foreignobject", "handler", "listener", "iframe", "frame", "embed",
		"object", "applet", "link", "meta", "base", "html", "body", "form", "input",
		"button", "textarea", "select", "audio", "video", "source", "track",
	};
	const char *ln;

	if (name_done(s, at, rep) < 0)
		return -1;
	ln = local_name(s->name);
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		if (strcasecmp(ln, refused[i]) == 0)
			return xfail(s, at, rep, "refused element", s->name);
	if (s->root_done)
		return xfail(s, at, rep, "a second root element", NULL);
	if (!s->root_seen && strcmp(ln, "svg") != 0)
		return xfail(s, at, rep, "the root element is not <svg>", s->name);
	if (s->depth >= SBX_MEDIA_SVG_MAX_DEPTH)
		return xfail(s, at, rep, "elements nested deeper than "
				         STR(SBX_MEDIA_SVG_MAX_DEPTH), NULL);
	s->root_seen = true;
	memcpy(s->stack[s->depth++], s->name, s->nlen + 1);
	if (!s->style_depth && strcasecmp(ln, "style") == 0) {
		s->style_depth = s->depth;
		memset(&s->css, 0, sizeof(s->css));
	}
	s->nattrs = 0;
	return 0;
}

static void element_closed(struct svg *s)
{
	if (s->style_depth == s->depth + 1) {
		s->style_depth = 0;
	}
	if (s->depth == 0)
		s->root_done = true;
}

static int end_tag_done(struct svg *s, uint64_t at, struct sbx_media_report *rep)
{
	if (s->depth == 0 || strcmp(s->stack[s->depth - 1], s->name) != 0)
		return xfail(s, at, rep, "end tag does not match the open element", s->name);
	if (s->style_depth == s->depth && s->css.url_open)
		return xfail(s, at, rep, "unterminated CSS url(", NULL);
	s->depth--;
	element_closed(s);
	return 0;
}

/* A decoded character of content. */
static int text_cp(struct svg *s, uint32_t cp, uint64_t at, struct sbx_media_report *rep)
{
	if (s->depth == 0 && !xml_ws(cp < 0x80 ? (unsigned char)cp : 'x'))
		return xfail(s, at, rep, "text outside the root element", NULL);
	if (s->style_depth && s->depth == s->style_depth)
		return pat_feed(s, &s->css, cp, at, rep);
	return 0;
}

/* --- the DOCTYPE and the XML declaration -------------------------------------------- */

static int doctype_done(struct svg *s, uint64_t at, struct sbx_media_report *rep)
{
	/* The declarations SVG 1.0 and 1.1 define, the only ones accepted;
	 * whitespace is normalized to one space before comparing. */
	static const char *const allowed[] = {
		" svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		"\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\"",
		" svg PUBLIC \"-//W3C//DTD SVG 1.0//EN\" "
		"\"http://www.w3.org/TR/2001/REC-SVG-20010904/DTD/svg10.dtd\"",
	};
	char norm[DOCTYPE_MAX + 2];
	size_t n = 0;

	for (size_t i = 0; i < s->buflen; i++) {
		char c = s->buf[i];

		if (xml_ws((unsigned char)c)) {
			if (n == 0 || norm[n - 1] != ' ')
				norm[n++] = ' ';
		} else {
			norm[n++] = c;
		}
	}
	while (n > 0 && norm[n - 1] == ' ')
		n--;
	norm[n] = '\0';
	if (s->doctype_seen || s->root_seen)
		return xfail(s, at, rep, "DOCTYPE in the wrong place", NULL);
	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
		if (strcmp(norm, allowed[i]) == 0) {
			s->doctype_seen = true;
			return 0;
		}
	return xfail(s, at, rep, "DOCTYPE other than the plain SVG 1.0 or 1.1 one "
			         "(entity declarations and other DTDs are refused)", NULL);
}

static int xmldecl_done(struct svg *s, uint64_t at, struct sbx_media_report *rep)
{
	const char *enc;

	s->buf[s->buflen] = '\0';
	/* "<?xml" then whitespace; the pseudo-attributes are not parsed beyond
	 * the encoding, which must be UTF-8 when named. */
	if (s->buflen < 4 || memcmp(s->buf, "xml", 3) != 0 || !xml_ws((unsigned char)s->buf[3]))
		return xfail(s, at, rep, "processing instruction", "only the XML declaration is "
								   "allowed");
	for (size_t i = 0; i < s->buflen; i++)
		if ((unsigned char)s->buf[i] < 0x20 && !xml_ws((unsigned char)s->buf[i]))
			return xfail(s, at, rep, "invalid XML declaration", NULL);
	enc = strstr(s->buf, "encoding");
	if (enc) {
		enc += strlen("encoding");
		while (xml_ws((unsigned char)*enc) || *enc == '=')
			enc++;
		if (strncasecmp(enc, "\"utf-8\"", 7) != 0 && strncasecmp(enc, "'utf-8'", 7) != 0)
			return xfail(s, at, rep, "XML declaration names an encoding other than UTF-8",
				     NULL);
	}
	return 0;
}

/* --- references ----------------------------------------------------------------------- */

static int ref_done(struct svg *s, uint64_t at, struct sbx_media_report *rep)
{
	static const struct {
		const char *name;
		char c;
	} named[] = {
		{ "lt", '<' }, { "gt", '>' }, { "amp", '&' }, { "quot", '"' }, { "apos", '\'' },
	};
	uint32_t cp = 0;
	bool ok = false;

	s->ref[s->rlen] = '\0';
	if (s->ref[0] == '#') {
		bool hex = s->ref[1] == 'x';
		size_t i = hex ? 2 : 1;

		ok = s->rlen > i;
		for (; ok && i < s->rlen; i++) {
			int d = hex ? sbx_hex_digit((unsigned char)s->ref[i])
				    : (s->ref[i] >= '0' && s->ref[i] <= '9' ? s->ref[i] - '0' : -1);

			if (d < 0 || cp > 0x10ffff)
				ok = false;
			else
				cp = cp * (hex ? 16 : 10) + (uint32_t)d;
		}
		/* XML's Char production. */
		if (ok && ((cp < 0x20 && !xml_ws((unsigned char)cp)) || (cp >= 0xd800 && cp <= 0xdfff) ||
			   cp == 0xfffe || cp == 0xffff || cp > 0x10ffff))
			return xfail(s, at, rep, "character reference to a character XML does not allow",
				     NULL);
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(named); i++)
			if (strcmp(s->ref, named[i].name) == 0) {
				cp = (unsigned char)named[i].c;
				ok = true;
			}
	}
	if (!ok)
		return xfail(s, at, rep, "undefined or invalid entity reference", NULL);
	s->state = s->ref_ret;
	if (s->state == X_AVAL)
		return value_cp(s, cp, at, rep);
	return text_cp(s, cp, at, rep);
}

/* --- the machine -------------------------------------------------------------------------- */

static int lt_byte(struct svg *s, unsigned char c, uint64_t at, struct sbx_media_report *rep)
{
	s->nlen = 0;
	s->colons = 0;
	if (c == '!') {
		s->state = X_BANG;
		s->blen = 0;
	} else if (c == '?') {
		if (at != 1)
			return xfail(s, at, rep, "processing instruction",
				     "only the XML declaration, at the start, is allowed");
		s->state = X_PI;
		s->buflen = 0;
	} else if (c == '/') {
		s->state = X_ETAG;
	} else if (name_start(c)) {
		s->state = X_STAG;
		return name_add(s, c, at, rep);
	} else {
		return xfail(s, at, rep, "invalid markup after '<'", NULL);
	}
	return 0;
}

static int bang_byte(struct svg *s, unsigned char c, uint64_t at, struct sbx_media_report *rep)
{
	s->bang[s->blen++] = (char)c;
	if (s->blen == 2 && memcmp(s->bang, "--", 2) == 0) {
		s->state = X_COMMENT;
		s->dashes = 0;
		s->tok_len = 0;
		return 0;
	}
	if (s->blen == 7 && memcmp(s->bang, "[CDATA[", 7) == 0) {
		if (s->depth == 0)
			return xfail(s, at, rep, "CDATA section outside the root element", NULL);
		s->state = X_CDATA;
		s->dashes = 0;
		return 0;
	}
	if (s->blen == 7 && memcmp(s->bang, "DOCTYPE", 7) == 0) {
		s->state = X_DOCTYPE;
		s->buflen = 0;
		return 0;
	}
	if (s->blen >= 7 || (memcmp(s->bang, "--", s->blen < 2 ? s->blen : 2) != 0 &&
			     memcmp(s->bang, "[CDATA[", s->blen) != 0 &&
			     memcmp(s->bang, "DOCTYPE", s->blen) != 0))
		return xfail(s, at, rep, "markup declaration other than a comment, CDATA or the "
				         "SVG DOCTYPE (entity declarations are refused)", NULL);
	return 0;
}

static int comment_byte(struct svg *s, unsigned char c, uint64_t at, struct sbx_media_report *rep)
{
	if (s->tok_len++ == 0 && c == '>')
		return xfail(s, at, rep, "comment opening with '>' (an HTML parser ends it there)",
			     NULL);
	if (s->tok_len == 2 && s->dashes == 1 && c == '>')
		return xfail(s, at, rep, "comment opening with '->' (an HTML parser ends it there)",
			     NULL);
	if (c == '<')
		return xfail(s, at, rep, "'<' inside a comment", NULL);
	if (s->dashes >= 2) {
		if (c != '>')
			return xfail(s, at, rep, "\"--\" inside a comment", NULL);
		s->state = X_TEXT;
		return 0;
	}
	s->dashes = c == '-' ? s->dashes + 1 : 0;
	return 0;
}

static int cdata_byte(struct svg *s, unsigned char c, uint64_t at, struct sbx_media_report *rep)
{
	if (c == '<')
		return xfail(s, at, rep, "'<' inside a CDATA section (an HTML parser would see markup)",
			     NULL);
	if (c == '>' && s->dashes >= 2) {
		s->state = X_TEXT;
		/* The "]]" were fed as style text: harmless characters. */
		return 0;
	}
	s->dashes = c == ']' ? s->dashes + 1 : 0;
	return text_cp(s, c, at, rep);
}

static int svg_byte(struct svg *s, unsigned char c, uint64_t at, struct sbx_media_report *rep)
{
	if (c == '\n')
		s->line++, s->line_start = at + 1;
	if (c < 0x20 && !xml_ws(c))
		return xfail(s, at, rep, "control character", NULL);
	switch (s->state) {
	case X_TEXT:
		if (c == '<') {
			s->state = X_LT;
			return 0;
		}
		if (c == '&') {
			s->state = X_REF;
			s->ref_ret = X_TEXT;
			s->rlen = 0;
			return 0;
		}
		/* Multi-byte characters reach text_cp() byte by byte: only
		 * ASCII decides anything there. */
		return text_cp(s, c < 0x80 ? c : '?', at, rep);
	case X_LT:
		return lt_byte(s, c, at, rep);
	case X_BANG:
		return bang_byte(s, c, at, rep);
	case X_COMMENT:
		return comment_byte(s, c, at, rep);
	case X_CDATA:
		return cdata_byte(s, c, at, rep);
	case X_PI:
		if (c == '>' && s->buflen > 0 && s->buf[s->buflen - 1] == '?') {
			s->buflen--;
			s->state = X_TEXT;
			return xmldecl_done(s, at, rep);
		}
		/* An HTML tokenizer reads "<?" as a bogus comment and ends it
		 * at the first '>': what follows would be markup to it. */
		if (c == '>' || c == '<')
			return xfail(s, at, rep, c == '>' ? "'>' inside the XML declaration"
							    : "'<' inside the XML declaration",
				     "an HTML parser ends it at the first '>'");
		if (s->buflen >= PI_MAX)
			return xfail(s, at, rep, "XML declaration too long", NULL);
		s->buf[s->buflen++] = (char)c;
		return 0;
	case X_DOCTYPE:
		if (c == '>') {
			s->state = X_TEXT;
			return doctype_done(s, at, rep);
		}
		if (c == '[' || c == '<' || c == '%' || c == '&')
			return xfail(s, at, rep, "DOCTYPE with an internal subset "
					         "(entity declarations are refused)", NULL);
		if (s->buflen >= DOCTYPE_MAX)
			return xfail(s, at, rep, "DOCTYPE too long", NULL);
		s->buf[s->buflen++] = (char)c;
		return 0;
	case X_STAG:
		if (name_char(c))
			return name_add(s, c, at, rep);
		if (start_tag_name_done(s, at, rep) < 0)
			return -1;
		s->state = X_TAG;
		s->need_ws = false;
		/* fall through */
	case X_TAG:
		if (xml_ws(c)) {
			s->need_ws = false;
			return 0;
		}
		if (c == '>') {
			s->state = X_TEXT;
			return 0;
		}
		if (c == '/') {
			s->state = X_SLASH;
			return 0;
		}
		if (!name_start(c))
			return xfail(s, at, rep, "invalid attribute name", NULL);
		if (s->need_ws)
			return xfail(s, at, rep, "whitespace expected before an attribute", NULL);
		s->nlen = 0;
		s->colons = 0;
		s->state = X_ANAME;
		return name_add(s, c, at, rep);
	case X_ANAME:
		if (name_char(c))
			return name_add(s, c, at, rep);
		if (attr_name_done(s, at, rep) < 0)
			return -1;
		s->state = X_AEQ;
		/* fall through */
	case X_AEQ:
		if (xml_ws(c))
			return 0;
		if (c != '=')
			return xfail(s, at, rep, "'=' expected after an attribute name", NULL);
		s->state = X_AQ;
		return 0;
	case X_AQ:
		if (xml_ws(c))
			return 0;
		if (c != '"' && c != '\'')
			return xfail(s, at, rep, "quoted attribute value expected", NULL);
		s->quote = c;
		s->state = X_AVAL;
		return 0;
	case X_AVAL:
		if (c == s->quote) {
			s->state = X_TAG;
			s->need_ws = true;
			return value_done(s, at, rep);
		}
		if (c == '<')
			return xfail(s, at, rep, "'<' in an attribute value", NULL);
		if (c == '&') {
			s->state = X_REF;
			s->ref_ret = X_AVAL;
			s->rlen = 0;
			return 0;
		}
		/* XML normalizes TAB LF CR in values to spaces. */
		return value_cp(s, xml_ws(c) ? ' ' : (c < 0x80 ? c : '?'), at, rep);
	case X_SLASH:
		if (c != '>')
			return xfail(s, at, rep, "'>' expected after '/'", NULL);
		s->depth--;
		element_closed(s);
		s->state = X_TEXT;
		return 0;
	case X_ETAG:
		if (name_char(c) && (s->nlen > 0 || name_start(c)))
			return name_add(s, c, at, rep);
		if (name_done(s, at, rep) < 0)
			return -1;
		s->state = X_ETAG_WS;
		/* fall through */
	case X_ETAG_WS:
		if (xml_ws(c))
			return 0;
		if (c != '>')
			return xfail(s, at, rep, "'>' expected in an end tag", NULL);
		s->state = X_TEXT;
		return end_tag_done(s, at, rep);
	case X_REF:
		if (c == ';')
			return ref_done(s, at, rep);
		if (s->rlen >= sizeof(s->ref) - 1 || !(name_char(c) || c == '#'))
			return xfail(s, at, rep, "invalid entity reference", NULL);
		s->ref[s->rlen++] = (char)c;
		return 0;
	}
	return xfail(s, at, rep, "internal state error", NULL);
}

/* Bytes of path data and numbers: no pattern holds one. */
static const bool value_plain[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1,
	['7'] = 1, ['8'] = 1, ['9'] = 1, ['.'] = 1, [','] = 1, ['-'] = 1, ['+'] = 1,
	[' '] = 1,
};

/*
 * The run @p, @n bytes of value_plain, into the window of @w as if fed one
 * by one: no pattern ends in such a byte, so only the window's contents
 * matter, and those are the run's last 16 bytes other than space.
 * Pushing a stand-in instead would join the letters on either side of a
 * '-' ("image-set(" read as "image0set(").
 */
static void windows_skip(struct pat *w, const unsigned char *p, size_t n)
{
	size_t dense = 0, d = n;

	while (d > 0 && dense < 16)
		if (p[--d] != ' ')
			dense++;
	for (size_t i = d; i < n; i++)
		if (p[i] != ' ')
			win_push(w->dense, (char)p[i]);
}

/*
 * The end of a run from p[i] that cannot change the state: content that is
 * not style text (up to markup, a reference or a control or line break),
 * and the digits, spaces and signs of a value that is not a reference and
 * where no url( waits for its '#' (windows_skip() keeps the pattern
 * window as the byte machine would).  Keeps the byte machine off the bulk
 * of large drawings.
 */
static size_t svg_skip(struct svg *s, const unsigned char *p, size_t i, size_t n)
{
	size_t j = i;

	if (s->state == X_TEXT && s->depth > 0 &&
	    !(s->style_depth && s->depth == s->style_depth)) {
		while (j < n && p[j] >= 0x20 && p[j] != '<' && p[j] != '&')
			j++;
	} else if (s->state == X_AVAL && s->vkind == V_PLAIN && !s->pat.url_open) {
		while (j < n && value_plain[p[j]])
			j++;
		if (j > i)
			windows_skip(&s->pat, p + i, j - i);
	}
	return j;
}

int sbx_media_svg_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = NULL;
	_cleanup_free_ struct svg *s = NULL;
	struct sbx_media_utf8 u = { 0 };

	if (size > SBX_MEDIA_SVG_MAX_BYTES)
		return sbx_media_fail_code(rep, SBX_RC_TOO_LARGE, "svg: larger than %llu bytes",
				      (unsigned long long)SBX_MEDIA_SVG_MAX_BYTES);
	r = sbx_media_reader_new(fd, size);
	s = sbx_xcalloc(1, sizeof(*s));
	s->state = X_TEXT;
	for (;;) {
		uint64_t at = sbx_media_reader_tell(r);
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, SIZE_MAX);

		if (k < 0)
			return sbx_media_fail(rep, "svg: read error");
		if (k == 0)
			break;
		if (at == 0 && k >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
			return sbx_media_fail(rep, "svg: starts with a byte order mark");
		if (sbx_media_text_feed("svg", &u, p, (size_t)k, at, rep) < 0)
			return -1;
		for (size_t i = 0; i < (size_t)k; i++) {
			size_t j = svg_skip(s, p, i, (size_t)k);

			if (j > i) {
				i = j - 1;
				continue;
			}
			if (svg_byte(s, p[i], at + i, rep) < 0)
				return -1;
		}
	}
	if (sbx_media_text_end("svg", &u, rep) < 0)
		return -1;
	if (s->state != X_TEXT || s->depth > 0 || !s->root_done)
		return xfail(s, size, rep, size == 0 ? "empty document" : "premature end of input",
			     NULL);
	return 0;
}
