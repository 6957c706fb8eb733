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
 *     embed, link, meta, base, form, style, img, media, input, ...) or any
 *     SVG or MathML element;
 *   - an attribute whose name starts with "on" (an event handler) or that
 *     fetches on its own (src, srcset, background, poster, data, action,
 *     ...);
 *   - an attribute value that holds javascript:, vbscript: or
 *     data:text/html once whitespace and controls are taken out;
 *   - a style attribute whose CSS fetches or may (css_fetches()).
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

/* Elements a browser runs, loads from elsewhere, or submits. */
static const char *const active_elements[] = {
	"script", "iframe", "frame", "frameset", "object", "embed", "applet", "param",
	"link", "meta", "base", "form", "style", "img", "image", "picture", "video",
	"audio", "source", "track", "bgsound", "input", "portal", "keygen", "isindex",
	"svg", "math",
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

/* Depth first by parent links: no stack, however deep the tree. */
static bool tree_active(const GumboNode *root)
{
	const GumboNode *n = root;

	while (n) {
		const GumboVector *kids = children(n);

		if ((n->type == GUMBO_NODE_ELEMENT || n->type == GUMBO_NODE_TEMPLATE) &&
		    element_active(n))
			return true;
		if (kids && kids->length > 0) {
			n = kids->data[0];
			continue;
		}
		/* The next sibling of the nearest ancestor that has one. */
		while (n != root) {
			const GumboVector *sib = children(n->parent);

			if (n->index_within_parent + 1 < sib->length) {
				n = sib->data[n->index_within_parent + 1];
				break;
			}
			n = n->parent;
		}
		if (n == root)
			break;
	}
	return false;
}

int sbx_media_html_view(const char *what, const char *p, size_t n, unsigned *flags,
			struct sbx_media_report *rep)
{
	struct arena *a = sbx_xcalloc(1, sizeof(*a));
	GumboOptions opt = kGumboDefaultOptions;
	GumboOutput *volatile out = NULL;

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
		return sbx_media_fail(rep, "%s: parsing it as HTML takes more than %u MiB", what,
				      (unsigned)(SBX_MEDIA_HTML_MAX_PARSE >> 20));
	default:
		arena_drop(a);
		free(a);
		return sbx_media_fail(rep, "%s: parsing it as HTML takes more than %u ms of CPU time",
				      what, (unsigned)SBX_MEDIA_HTML_MAX_CPU_MS);
	}
	out = gumbo_parse_with_options(&opt, p, n);
	if (tree_active(out->document))
		*flags |= SBX_MEDIA_FLAG_ACTIVE;
	arena_drop(a);
	free(a);
	return 0;
}
