/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * html-view.c - what a browser would run or fetch on opening an HTML
 * document, read from the tree an HTML5 parser builds.
 *
 * The bytes are parsed with gumbo, which implements the WHATWG tokenizer
 * and tree construction: attributes are split where a browser splits them
 * (a handler straight after a quoted value is an attribute), character
 * references are decoded as a browser decodes them (a numeric reference
 * without ';', the named ones such as &colon; and &Tab;), RAWTEXT and
 * RCDATA elements hide what a browser does not see.  The tree is then
 * walked, and the document is active when it has
 *   - an element that runs, loads or submits (script, iframe, object,
 *     embed, link, meta, base, form, style, img, media, input, ...), any
 *     SVG or MathML element, or noscript (below);
 *   - an attribute whose name starts with "on" (an event handler) or that
 *     fetches on its own (src, srcset, background, poster, data, action,
 *     ...);
 *   - an attribute value that holds javascript:, vbscript: or
 *     data:text/html once whitespace and controls are taken out;
 *   - a style attribute whose CSS fetches or may (css_fetches());
 * and, since gumbo follows the HTML of 2016, start tags its tree builder
 * dropped are parsed again and judged on their own (dropped_tags_active()).
 *
 * gumbo allocates the whole tree and does not check its allocator.  The
 * allocator here keeps every block on a list and counts them against
 * SBX_MEDIA_HTML_MAX_PARSE bytes; past that it jumps back to the caller,
 * which frees the list whole (gumbo holds nothing else: no fd, no lock).
 * The list also spares freeing the tree node by node, which gumbo does by
 * recursion as deep as the document.  Some shapes cost the parser time
 * quadratic in their size (elements nested a few hundred thousand deep:
 * every start tag scans the stack of open elements), so the allocator,
 * which every token calls, also jumps back once the parse has used
 * SBX_MEDIA_HTML_MAX_CPU_MS of CPU time.  The walk goes by parent links,
 * without a stack.
 */
#include "config.h"

#include <gumbo.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util.h"
#include "validate.h"

/* --- the heap of one parse ----------------------------------------------------------- */

/* Every block gumbo holds, on a list: dropped whole after the walk or a
 * jump, so that neither gumbo's recursive free nor a half-built tree
 * matters.*/
struct link {
	struct link *prev, *next;
};

struct blk {
	struct link l; /* first: a struct link * of a block is the block */
	size_t size;
	max_align_t data[];
};

struct arena {
	struct link head;   /* of the circular list of live blocks */
	size_t total;       /* bytes of them, headers included */
	unsigned calls;     /* allocations since the clock was last read */
	uint64_t deadline;  /* thread CPU time, in ns, the parse must end by */
	jmp_buf full;       /* longjmp()ed with ARENA_FULL or ARENA_SLOW */
};

enum { ARENA_FULL = 1, ARENA_SLOW = 2 };

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *arena_alloc(void *userdata, size_t n)
{
	struct arena *a = userdata;
	struct blk *b;

	if (++a->calls >= 1024) {
		a->calls = 0;
		if (cpu_ns() > a->deadline)
			longjmp(a->full, ARENA_SLOW);
	}
	if (n > SBX_MEDIA_HTML_MAX_PARSE || a->total + sizeof(*b) + n > SBX_MEDIA_HTML_MAX_PARSE)
		longjmp(a->full, ARENA_FULL);
	b = malloc(sizeof(*b) + n);
	if (!b)
		longjmp(a->full, ARENA_FULL);
	b->size = sizeof(*b) + n;
	b->l.prev = &a->head;
	b->l.next = a->head.next;
	a->head.next->prev = &b->l;
	a->head.next = &b->l;
	a->total += b->size;
	return b->data;
}

static void arena_free(void *userdata, void *p)
{
	struct arena *a = userdata;
	struct blk *b;

	if (!p)
		return;
	b = (struct blk *)((char *)p - offsetof(struct blk, data));
	b->l.prev->next = b->l.next;
	b->l.next->prev = b->l.prev;
	a->total -= b->size;
	free(b);
}

static void arena_init(struct arena *a)
{
	a->head.prev = a->head.next = &a->head;
}

static void arena_drop(struct arena *a)
{
	while (a->head.next != &a->head)
		arena_free(a, ((struct blk *)a->head.next)->data);
}

/* --- the rules ---------------------------------------------------------------------- */

/* @s lowercased, without ASCII whitespace and controls, into @out of @max
 * bytes, which the callers size to hold all of @s and its NUL. */
static void dense_lower(const char *s, char *out, size_t max)
{
	size_t n = 0;

	for (; *s && n + 1 < max; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= 0x20 || c == 0x7f)
			continue;
		out[n++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	out[n] = '\0';
}

/*
 * CSS that fetches when the document is drawn, or might: url(), the
 * functions that take a bare string (image-set() and its -webkit- form,
 * cross-fade(), image(), src()), @import, @font-face (its src), IE's
 * expression(), and any backslash, since a CSS escape can spell each of
 * those out of sight.  Whitespace is dropped first: "url (" is not a
 * function, but flagging it costs nothing.
 */
static bool css_fetches(const char *css)
{
	static const char *const pats[] = {
		"url(", "image-set(", "cross-fade(", "image(", "src(",
		"@import", "@font-face", "expression(", "\\",
	};
	size_t n = strlen(css) + 1;
	_cleanup_free_ char *d = sbx_xmalloc(n);

	dense_lower(css, d, n);
	for (size_t i = 0; i < ARRAY_SIZE(pats); i++)
		if (strstr(d, pats[i]))
			return true;
	return false;
}

/*
 * Elements a browser runs, loads from elsewhere, or submits; and noscript,
 * the one element whose parse depends on whether scripts run.  gumbo
 * parses as if they did not, and reads noscript's content as markup; a
 * browser that runs scripts reads it as raw text up to "</noscript", so
 * that "<noscript><p title="</noscript><img src=x onerror=...>">" is an
 * inert title to gumbo and a live handler to the browser.
 */
static const char *const active_elements[] = {
	"script", "iframe", "frame", "frameset", "object", "embed", "applet", "param",
	"link", "meta", "base", "form", "style", "img", "image", "picture", "video",
	"audio", "source", "track", "bgsound", "input", "portal", "keygen", "isindex",
	"svg", "math", "noscript",
};

/* Attributes that fetch by themselves, on whatever element they stand. */
static const char *const fetching_attrs[] = {
	"src", "srcset", "imagesrcset", "background", "poster", "data", "action",
	"formaction", "ping", "codebase", "archive", "classid", "lowsrc", "dynsrc",
	"manifest", "longdesc", "profile", "xlink:href",
};

static bool in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(name, list[i]) == 0)
			return true;
	return false;
}

static bool attr_active(const GumboAttribute *at)
{
	const char *name = at->name;
	size_t n = strlen(at->value) + 1;
	_cleanup_free_ char *d = NULL;

	if (strncasecmp(name, "on", 2) == 0)
		return true;
	if (in_list(name, fetching_attrs, ARRAY_SIZE(fetching_attrs)))
		return true;
	if (strcasecmp(name, "style") == 0 && css_fetches(at->value))
		return true;
	/* The value as the browser decoded it; a scheme anywhere in it, not
	 * only at the start, since a srcset or a refresh holds several. */
	d = sbx_xmalloc(n);
	dense_lower(at->value, d, n);
	return strstr(d, "javascript:") || strstr(d, "vbscript:") || strstr(d, "data:text/html");
}

static bool element_active(const GumboNode *node)
{
	const GumboElement *e = &node->v.element;
	char name[32] = "";

	if (e->tag_namespace != GUMBO_NAMESPACE_HTML)
		return true;
	if (e->tag != GUMBO_TAG_UNKNOWN) {
		snprintf(name, sizeof(name), "%s", gumbo_normalized_tagname(e->tag));
	} else {
		GumboStringPiece t = e->original_tag;

		gumbo_tag_from_original_text(&t);
		if (t.length < sizeof(name))
			memcpy(name, t.data, t.length), name[t.length] = '\0';
	}
	if (in_list(name, active_elements, ARRAY_SIZE(active_elements)))
		return true;
	for (unsigned i = 0; i < e->attributes.length; i++)
		if (attr_active(e->attributes.data[i]))
			return true;
	return false;
}

static const GumboVector *children(const GumboNode *n)
{
	if (n->type == GUMBO_NODE_DOCUMENT)
		return &n->v.document.children;
	if (n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE)
		return &n->v.element.children;
	return NULL;
}

static bool is_element(const GumboNode *n)
{
	return n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE;
}

/* The node after @n under @root, depth first, by parent links: no stack,
 * however deep the tree; NULL at the end. */
static const GumboNode *next_node(const GumboNode *n, const GumboNode *root)
{
	const GumboVector *kids = children(n);

	if (kids && kids->length > 0)
		return kids->data[0];
	/* The next sibling of the nearest ancestor that has one. */
	for (; n != root; n = n->parent) {
		const GumboVector *sib = children(n->parent);

		if (n->index_within_parent + 1 < sib->length)
			return sib->data[n->index_within_parent + 1];
	}
	return NULL;
}

/* Whether anything under @root is active; *@elements counts the elements. */
static bool tree_active(const GumboNode *root, size_t *elements)
{
	for (const GumboNode *n = root; n; n = next_node(n, root)) {
		if (!is_element(n))
			continue;
		++*elements;
		if (element_active(n))
			return true;
	}
	return false;
}

/* --- what the tree builder dropped ---------------------------------------------------- */

/*
 * The tree holds the start tags the tree builder kept; a start tag it
 * ignored leaves no node.  Browsers and this parser disagree on some of
 * those: gumbo follows the HTML of 2016, where "<select><img src=x
 * onerror=...>" drops the img, and browsers since 2025 keep it.  So the
 * source is read for start tags no node accounts for, and each such stretch
 * is parsed again where nearly every tag is kept (a template's contents)
 * and judged; a stretch that yields no element even there counts as
 * active, since what it held cannot be seen.
 *
 * A '<' and a letter in the source is a start tag unless it lies in a
 * start tag (an attribute value), a comment, or the text of an element
 * whose content is raw text or CDATA: the spans below.
 */
struct span {
	const char *b, *e;
};

static int span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;

	return a->b < b->b ? -1 : a->b > b->b;
}

static bool raw_text_parent(const GumboNode *n)
{
	static const GumboTag raw[] = {
		GUMBO_TAG_SCRIPT,   GUMBO_TAG_STYLE, GUMBO_TAG_XMP,	  GUMBO_TAG_IFRAME,
		GUMBO_TAG_NOEMBED,  GUMBO_TAG_NOFRAMES, GUMBO_TAG_TEXTAREA, GUMBO_TAG_TITLE,
		GUMBO_TAG_PLAINTEXT, GUMBO_TAG_NOSCRIPT,
	};

	if (!n || !is_element(n))
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(raw); i++)
		if (n->v.element.tag == raw[i])
			return true;
	return false;
}

/* The spans of @root's nodes in the source, sorted; their count in *@n. */
static struct span *spans_of(const GumboNode *root, size_t *n)
{
	struct span *sp;
	size_t count = 0, k = 0;

	for (const GumboNode *x = root; x; x = next_node(x, root))
		count++;
	sp = sbx_xcalloc(count + 1, sizeof(*sp));
	for (const GumboNode *x = root; x; x = next_node(x, root)) {
		GumboStringPiece t = { 0 };

		if (is_element(x))
			t = x->v.element.original_tag;
		else if (x->type == GUMBO_NODE_COMMENT || x->type == GUMBO_NODE_CDATA ||
			 ((x->type == GUMBO_NODE_TEXT || x->type == GUMBO_NODE_WHITESPACE) &&
			  raw_text_parent(x->parent)))
			t = x->v.text.original_text;
		if (t.data && t.length > 0)
			sp[k++] = (struct span){ t.data, t.data + t.length };
	}
	qsort(sp, k, sizeof(*sp), span_cmp);
	*n = k;
	return sp;
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The stretch @b..@e (a start tag the tree dropped, up to the next node)
 * parsed again as a template's contents; the blocks it took are freed. */
static bool dropped_active(struct arena *a, const GumboOptions *base, const char *b,
			   const char *e)
{
	GumboOptions opt = *base;
	struct link *mark = a->head.next;
	size_t elements = 0;
	bool active;

	opt.fragment_context = GUMBO_TAG_TEMPLATE;
	opt.fragment_namespace = GUMBO_NAMESPACE_HTML;
	active = tree_active(gumbo_parse_with_options(&opt, b, (size_t)(e - b))->document,
			     &elements);
	while (a->head.next != mark)
		arena_free(a, ((struct blk *)a->head.next)->data);
	return active || elements == 0;
}

static bool dropped_tags_active(struct arena *a, const GumboOptions *opt, const char *p,
				size_t n, const struct span *sp, size_t nsp)
{
	const char *covered = p; /* the end of the spans that start at or before q */
	size_t k = 0;

	for (const char *q = p; q + 1 < p + n; q++) {
		const char *e;

		while (k < nsp && sp[k].b <= q) {
			if (sp[k].e > covered)
				covered = sp[k].e;
			k++;
		}
		if (q < covered || *q != '<' || !is_alpha(q[1]))
			continue;
		e = k < nsp ? sp[k].b : p + n;
		if (dropped_active(a, opt, q, e))
			return true;
		q = e - 1;
	}
	return false;
}

int sbx_media_html_view(const char *what, const char *p, size_t n, unsigned *flags,
			struct sbx_media_report *rep)
{
	struct arena *a = sbx_xcalloc(1, sizeof(*a));
	GumboOptions opt = kGumboDefaultOptions;
	GumboOutput *volatile out = NULL;
	struct span *volatile sp = NULL;
	size_t nsp = 0, elements = 0;

	opt.allocator = arena_alloc;
	opt.deallocator = arena_free;
	opt.userdata = a;
	/* Every parse error is recorded (in the counted heap): with a cap
	 * on them, gumbo 0.10.1 keeps a repeated attribute's name in its
	 * buffer once the cap is reached, and "<p a a onclick=...>" then has
	 * an attribute "aonclick" (found by tests/markup-diff.py). */
	opt.max_errors = -1;
	arena_init(a);
	a->deadline = cpu_ns() + (uint64_t)SBX_MEDIA_HTML_MAX_CPU_MS * 1000000u;
	switch (setjmp(a->full)) {
	case 0:
		break;
	case ARENA_FULL:
		arena_drop(a);
		free(a);
		free(sp);
		return sbx_media_fail(rep, "%s: parsing it as HTML takes more than %u MiB", what,
				      (unsigned)(SBX_MEDIA_HTML_MAX_PARSE >> 20));
	default:
		arena_drop(a);
		free(a);
		free(sp);
		return sbx_media_fail(rep, "%s: parsing it as HTML takes more than %u ms of CPU time",
				      what, (unsigned)SBX_MEDIA_HTML_MAX_CPU_MS);
	}
	out = gumbo_parse_with_options(&opt, p, n);
	if (tree_active(out->document, &elements)) {
		*flags |= SBX_MEDIA_FLAG_ACTIVE;
	} else {
		/* The spans point into @p, not into the tree: it can go first. */
		sp = spans_of(out->document, &nsp);
		arena_drop(a);
		if (dropped_tags_active(a, &opt, p, n, sp, nsp))
			*flags |= SBX_MEDIA_FLAG_ACTIVE;
	}
	arena_drop(a);
	free(a);
	free(sp);
	return 0;
}
