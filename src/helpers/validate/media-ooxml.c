/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-ooxml.c - xlsx, docx and pptx: Office Open XML packages.
 *
 * An OOXML file is a ZIP (checked by zip-read.c as an archive input is:
 * caps, names, ratio, no encryption, one view of the members) whose parts
 * are XML, plus images.  What makes one dangerous to the person who opens
 * it is not its structure but what Office does with it: runs macros
 * (vbaProject.bin, Excel 4 macro sheets), instantiates ActiveX controls
 * and OLE objects, fetches what an external relationship names (a remote
 * template, linked data, a remote image: also a tracking beacon and an
 * NTLM hash leak), runs a DDE command, imports another document.  Each of
 * those is refused, wherever in the package it appears:
 *   - parts: nothing but XML (.xml, .rels, .vml, and .svg images
 *     without scripts) and images by their magic (PNG, JPEG, GIF, BMP, TIFF, EMF, WMF); so no vbaProject.bin,
 *     OLE compound file, executable or embedded package, whatever its
 *     name; nothing under activeX/ or embeddings/, no part named for VBA;
 *   - content types naming macros, VBA, ActiveX, OLE objects or macro and
 *     dialog sheets;
 *   - relationships of those kinds, and of linked workbooks, data
 *     connections and query tables (refreshed on opening), attached
 *     templates, imported chunks, subdocuments, frames and mail-merge
 *     sources; any relationship with TargetMode="External" except a
 *     hyperlink to http, https or mailto (which opens only when clicked);
 *     internal targets that climb out of the package;
 *   - elements: DDE and OLE links, OLE objects, controls, altChunk;
 *     PowerPoint actions that run programs or macros (ppaction://program,
 *     macro, ole); Word fields that run or fetch (DDE, DDEAUTO,
 *     INCLUDETEXT, INCLUDEPICTURE, LINK, IMPORT, DATABASE), also when the
 *     field code is split across runs.
 * Every XML part is parsed by expat, with namespaces, and a DOCTYPE is
 * refused where it starts: no DTD, no entity is ever expanded.
 *
 * The package must be what its name says: [Content_Types].xml and
 * _rels/.rels present, the officeDocument relationship naming a part that
 * exists, with the content type of a workbook, a document or a
 * presentation as the extension says.
 *
 * xlsx cells flag formula_cells as CSV's do: any formula (<f>: HYPERLINK,
 * WEBSERVICE and FILTERXML are formulas; and those of conditional formats
 * and data validations, which Excel evaluates too), and any string (shared or
 * inline) that starts, after spaces, with = + - @ TAB or CR or a
 * full-width form: what a cell becomes once converted to text and opened
 * again.  Numbers are not flagged: "-5" converts back to the number.
 */
#include "config.h"

#include <expat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"
#include "validate.h"
#include "zip-read.h"

enum kind { XLSX, DOCX, PPTX };

static const struct {
	const char *what;
	const char *main_type;
	const char *noun;
} kinds[] = {
	[XLSX] = { "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
		   "a workbook" },
	[DOCX] = { "docx",
		   "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
		   "a Word document" },
	[PPTX] = { "pptx",
		   "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
		   "a presentation" },
};

#define MAX_DEPTH 256
#define MAX_FIELDS 32
#define FIELD_HEAD 32

struct pkg {
	enum kind kind;
	const char *what;
	struct sbx_zip *z;
	struct sbx_media_report *rep;
	char main_part[SBX_ZIP_MAX_PATH + 1]; /* from _rels/.rels, "" until then */
	char main_ct[256];                    /* its Override, or the Default of its extension */
	bool main_override;
	bool formula;
};

/* One XML part being parsed. */
struct scan {
	struct pkg *pkg;
	XML_Parser p;
	const char *part;
	char dir[SBX_ZIP_MAX_PATH + 1]; /* the source folder of a .rels part's targets */
	bool is_rels, is_ct, is_svg, failed;
	unsigned depth;
	/* xlsx strings: inside <si> or <is>, in a <t> not in <rPh>. */
	bool in_string, in_t, lead_done;
	unsigned in_rph;
	unsigned char lead[2];
	unsigned nlead;
	/* docx fields: the first bytes of each open field's instruction. */
	bool in_instr;
	unsigned nfields;
	char field[MAX_FIELDS + 1][FIELD_HEAD + 1];
	size_t flen[MAX_FIELDS + 1];
};

static const char *shown(const char *s, char *buf, size_t len)
{
	size_t n = strnlen(s, len - 4);

	memcpy(buf, s, n);
	buf[n] = '\0';
	if (s[n]) {
		while (n > 0 && ((unsigned char)buf[n] & 0xc0) == 0x80)
			n--;
		strcpy(buf + n, "...");
	}
	for (char *q = buf; *q; q++)
		if ((unsigned char)*q < 0x20 || *q == 0x7f)
			*q = '?';
	return buf;
}

/* Refuse the package: the reason, once, and the parser stopped. */
static _printf_(2, 3) int stop(struct scan *s, const char *fmt, ...);

/* The refusals of what runs or fetches when the document is opened
 * (macros, controls, embeddings, external links, fields, actions): a
 * reason_code of active_content rather than invalid_content. */
#define stop_active(s, ...) ((s)->pkg->rep->code = SBX_RC_ACTIVE_CONTENT, stop((s), __VA_ARGS__))

static _printf_(2, 3) int stop(struct scan *s, const char *fmt, ...)
{
	char msg[200], b[80];
	va_list ap;

	if (s->failed)
		return -1;
	s->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sbx_media_fail(s->pkg->rep, "%s: part %s: %s", s->pkg->what, shown(s->part, b, sizeof(b)),
		       msg);
	XML_StopParser(s->p, XML_FALSE);
	return -1;
}

/* Expat names with namespaces are "URI local". */
static const char *local(const char *name)
{
	const char *sp = strrchr(name, ' ');

	return sp ? sp + 1 : name;
}

static bool in_ns(const char *name, const char *const *uris)
{
	const char *sp = strrchr(name, ' ');

	for (; sp && *uris; uris++)
		if (strlen(*uris) == (size_t)(sp - name) && strncmp(name, *uris, (size_t)(sp - name)) == 0)
			return true;
	return false;
}

static const char *attr(const char **atts, const char *name)
{
	for (; atts[0]; atts += 2)
		if (strcmp(local(atts[0]), name) == 0)
			return atts[1];
	return NULL;
}

static bool contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	return false;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* --- content types and relationships -------------------------------------- */

static const char *content_type_refusal(const char *ct)
{
	static const struct {
		const char *needle, *why;
	} bad[] = {
		{ "macroEnabled", "a macro-enabled content type" },
		{ "vbaProject", "a VBA project (macros)" },
		{ "vbaData", "VBA data (macros)" },
		{ "ms-office.vba", "VBA (macros)" },
		{ "macrosheet", "a macro sheet (Excel 4 macros)" },
		{ "dialogsheet", "a dialog sheet (Excel 5 dialogs run macros)" },
		{ "keyMapCustomizations", "key bindings to macros" },
		{ "activeX", "an ActiveX control" },
		{ "oleObject", "an OLE object" },
		{ "spreadsheetml.connections", "data connections (linked data)" },
		{ "spreadsheetml.queryTable", "a query table (linked data)" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (contains_nocase(ct, bad[i].needle))
			return bad[i].why;
	return NULL;
}

static int on_content_type(struct scan *s, const char *el, const char **atts)
{
	struct pkg *k = s->pkg;
	const char *ct = attr(atts, "ContentType"), *why, *dot;

	if (strcmp(el, "Default") != 0 && strcmp(el, "Override") != 0)
		return 0;
	if (!ct)
		return stop(s, "%s without a ContentType", el);
	why = content_type_refusal(ct);
	if (why)
		return stop_active(s, "%s (%.80s)", why, ct);
	if (!k->main_part[0])
		return 0;
	if (strcmp(el, "Override") == 0) {
		const char *name = attr(atts, "PartName");

		if (name && name[0] == '/' && strcasecmp(name + 1, k->main_part) == 0) {
			snprintf(k->main_ct, sizeof(k->main_ct), "%s", ct);
			k->main_override = true;
		}
		return 0;
	}
	dot = strrchr(k->main_part, '.');
	if (!k->main_override && dot && attr(atts, "Extension") &&
	    strcasecmp(attr(atts, "Extension"), dot + 1) == 0)
		snprintf(k->main_ct, sizeof(k->main_ct), "%s", ct);
	return 0;
}

static const char *rel_type_refusal(const char *type)
{
	static const struct {
		const char *last, *why;
	} bad[] = {
		{ "vbaProject", "a VBA project (macros)" },
		{ "vbaProjectSignature", "a VBA project signature (macros)" },
		{ "wordVbaData", "VBA data (macros)" },
		{ "keyMapCustomizations", "key bindings to macros" },
		{ "xlMacrosheet", "a macro sheet (Excel 4 macros)" },
		{ "xlIntlMacrosheet", "a macro sheet (Excel 4 macros)" },
		{ "dialogsheet", "a dialog sheet" },
		{ "oleObject", "an OLE object" },
		{ "control", "an ActiveX control" },
		{ "activeXControlBinary", "an ActiveX control" },
		{ "ctrlProp", "a form control" },
		{ "package", "an embedded document" },
		{ "externalLink", "a link to another workbook" },
		{ "externalLinkPath", "a link to another workbook" },
		{ "connections", "data connections (linked data)" },
		{ "queryTable", "a query table (linked data)" },
		{ "attachedTemplate", "an attached template" },
		{ "aFChunk", "an imported chunk (altChunk)" },
		{ "subDocument", "a subdocument" },
		{ "frame", "a frame" },
		{ "mailMergeSource", "a mail-merge data source" },
		{ "mailMergeHeaderSource", "a mail-merge data source" },
		{ "recipientData", "mail-merge recipient data" },
	};
	const char *last = strrchr(type, '/');

	last = last ? last + 1 : type;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (strcasecmp(last, bad[i].last) == 0)
			return bad[i].why;
	return NULL;
}

/* A hyperlink a reader opens only when clicked, to the web or mail. */
static bool plain_hyperlink(const char *type, const char *target)
{
	const char *last = strrchr(type, '/');

	return last && strcmp(last + 1, "hyperlink") == 0 &&
	       (strncasecmp(target, "http://", 7) == 0 || strncasecmp(target, "https://", 8) == 0 ||
		strncasecmp(target, "mailto:", 7) == 0);
}

/* @target resolved against the .rels part's source folder into @out;
 * false when it climbs out of the package. */
static bool resolve(const char *dir, const char *target, char *out, size_t len)
{
	size_t n = 0;

	if (target[0] == '/')
		target++;
	else if (snprintf(out, len, "%s", dir) >= (int)len)
		return false;
	else
		n = strlen(out);
	while (*target) {
		const char *slash = strchr(target, '/');
		size_t c = slash ? (size_t)(slash - target) : strlen(target);

		if (c == 2 && target[0] == '.' && target[1] == '.') {
			if (n == 0)
				return false;
			n--; /* the '/' of the last folder */
			while (n > 0 && out[n - 1] != '/')
				n--;
		} else if (!(c == 1 && target[0] == '.') && c > 0) {
			if (n + c + 2 > len)
				return false;
			memcpy(out + n, target, c);
			n += c;
			if (slash)
				out[n++] = '/';
		}
		target += c + (slash ? 1 : 0);
	}
	out[n] = '\0';
	return true;
}

static int on_relationship(struct scan *s, const char **atts)
{
	const char *type = attr(atts, "Type"), *target = attr(atts, "Target");
	const char *mode = attr(atts, "TargetMode"), *why, *last;
	char resolved[SBX_ZIP_MAX_PATH + 1], b[80];

	if (!type || !target)
		return stop(s, "a Relationship without Type or Target");
	why = rel_type_refusal(type);
	if (why)
		return stop_active(s, "a relationship to %s (%s)", why, shown(target, b, sizeof(b)));
	if (mode && strcasecmp(mode, "External") == 0) {
		if (!plain_hyperlink(type, target))
			return stop_active(s, "an external relationship (%s) to %s: a reader would fetch "
				    "or open it", strrchr(type, '/') ? strrchr(type, '/') + 1 : type,
				    shown(target, b, sizeof(b)));
		return 0;
	}
	if (!resolve(s->dir, target, resolved, sizeof(resolved)))
		return stop(s, "a relationship target outside the package (%s)",
			    shown(target, b, sizeof(b)));
	last = strrchr(type, '/');
	if (strcasecmp(s->part, "_rels/.rels") == 0 && last && strcmp(last + 1, "officeDocument") == 0) {
		if (s->pkg->main_part[0])
			return stop(s, "two officeDocument relationships");
		snprintf(s->pkg->main_part, sizeof(s->pkg->main_part), "%s", resolved);
	}
	return 0;
}

/* --- what runs: elements, actions, fields ---------------------------------- */

static const char *const sml_ns[] = {
	"http://schemas.openxmlformats.org/spreadsheetml/2006/main",
	"http://purl.oclc.org/ooxml/spreadsheetml/main", NULL,
};

static const char *element_refusal(const char *el)
{
	static const struct {
		const char *name, *why;
	} bad[] = {
		{ "ddeLink", "a DDE link (it runs a command)" },
		{ "oleLink", "an OLE link" },
		{ "oleObj", "an OLE object" },
		{ "oleObject", "an OLE object" },
		{ "OLEObject", "an OLE object" },
		{ "control", "an ActiveX or form control" },
		{ "altChunk", "an imported chunk (altChunk)" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (strcmp(el, bad[i].name) == 0)
			return bad[i].why;
	return NULL;
}

/* Word field codes that run a program or fetch a file. */
static const char *field_refusal(const char *code)
{
	static const char *const bad[] = { "DDEAUTO", "DDE", "INCLUDETEXT", "INCLUDEPICTURE",
					   "LINK", "IMPORT", "DATABASE" };

	while (*code == ' ' || *code == '\t' || *code == '\n' || *code == '\r')
		code++;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		size_t n = strlen(bad[i]);
		char next = code[n];

		if (strncasecmp(code, bad[i], n) == 0 &&
		    (next == '\0' || next == ' ' || next == '\t' || next == '"' || next == '\\' ||
		     next == '\n' || next == '\r'))
			return bad[i];
	}
	return NULL;
}

static int check_field(struct scan *s, unsigned i)
{
	const char *bad = field_refusal(s->field[i]);

	if (!bad)
		return 0;
	return stop_active(s, "the field code %s: it %s", bad,
		     bad[0] == 'D' && bad[1] == 'D' ? "runs a command (DDE)" :
						     "reads or fetches another file");
}

static void field_append(struct scan *s, const char *p, int n)
{
	unsigned i = s->nfields;
	size_t *len = &s->flen[i];

	/* Leading whitespace is not kept: the keyword must fit. */
	for (int j = 0; j < n && *len < FIELD_HEAD; j++) {
		if (*len == 0 && (p[j] == ' ' || p[j] == '\t' || p[j] == '\n' || p[j] == '\r'))
			continue;
		s->field[i][(*len)++] = p[j];
	}
	s->field[i][*len] = '\0';
}

/* The first characters of a string: = + - @ TAB CR after spaces, or the
 * full-width = + - @ (U+FF1D U+FF0B U+FF0D U+FF20: EF BC 9D/8B/8D/A0). */
static void string_chars(struct scan *s, const char *p, int n)
{
	for (int i = 0; i < n && !s->lead_done; i++) {
		unsigned char c = (unsigned char)p[i];

		if (s->nlead == 0) {
			if (c == ' ')
				continue;
			if (c == 0xef) {
				s->nlead = 1;
				continue;
			}
			s->lead_done = true;
			if (c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r')
				s->pkg->formula = true;
		} else if (s->nlead == 1) {
			s->nlead = 2;
			s->lead_done = c != 0xbc;
		} else {
			s->lead_done = true;
			if (c == 0x9d || c == 0x8b || c == 0x8d || c == 0xa0)
				s->pkg->formula = true;
		}
	}
}

static int start_element(struct scan *s, const char *name, const char **atts)
{
	const char *el = local(name), *why, *v;

	if (++s->depth > MAX_DEPTH)
		return stop(s, "elements nested deeper than %d", MAX_DEPTH);
	if (s->is_ct)
		return on_content_type(s, el, atts);
	if (s->is_rels)
		return strcmp(el, "Relationship") == 0 ? on_relationship(s, atts) : 0;
	why = element_refusal(el);
	if (why)
		return stop_active(s, "%s", why);
	/* SVG images (Office writes them beside a PNG fallback) are opened
	 * in browsers once extracted: no scripts, no foreign HTML. */
	if (s->is_svg && (strcmp(el, "script") == 0 || strcmp(el, "foreignObject") == 0))
		return stop_active(s, "an SVG image with a %s element", el);
	if (strncmp(el, "hlink", 5) == 0 && (v = attr(atts, "action")) &&
	    (strncasecmp(v, "ppaction://program", 18) == 0 ||
	     strncasecmp(v, "ppaction://macro", 16) == 0 || strncasecmp(v, "ppaction://ole", 14) == 0))
		return stop_active(s, "an action that runs a program or macro (%.40s)", v);
	if (s->pkg->kind == XLSX && in_ns(name, sml_ns)) {
		/* A cell's formula, and the formulas of conditional formats
		 * and data validations, which Excel evaluates as well. */
		if (strcmp(el, "f") == 0 || strcmp(el, "formula") == 0 ||
		    strcmp(el, "formula1") == 0 || strcmp(el, "formula2") == 0)
			s->pkg->formula = true;
		else if (strcmp(el, "si") == 0 || strcmp(el, "is") == 0)
			s->in_string = true, s->nlead = 0, s->lead_done = false;
		else if (strcmp(el, "rPh") == 0)
			s->in_rph++;
		else if (strcmp(el, "t") == 0)
			s->in_t = s->in_string && !s->in_rph;
	}
	if (s->pkg->kind != DOCX)
		return 0;
	if (strcmp(el, "fldSimple") == 0 && (v = attr(atts, "instr"))) {
		snprintf(s->field[MAX_FIELDS], FIELD_HEAD + 1, "%s", v);
		return check_field(s, MAX_FIELDS);
	}
	if (strcmp(el, "fldChar") == 0 && (v = attr(atts, "fldCharType"))) {
		if (strcmp(v, "begin") == 0) {
			if (s->nfields >= MAX_FIELDS)
				return stop(s, "fields nested deeper than %d", MAX_FIELDS);
			s->nfields++;
			s->flen[s->nfields] = 0;
			s->field[s->nfields][0] = '\0';
		} else if (s->nfields > 0) {
			if (check_field(s, s->nfields) < 0)
				return -1;
			if (strcmp(v, "end") == 0)
				s->nfields--;
		}
	} else if (strcmp(el, "instrText") == 0) {
		s->in_instr = true;
		if (s->nfields == 0)
			s->flen[0] = 0, s->field[0][0] = '\0';
	}
	return 0;
}

static void XMLCALL on_start(void *ud, const char *name, const char **atts)
{
	struct scan *s = ud;

	if (!s->failed)
		start_element(s, name, atts);
}

static void XMLCALL on_end(void *ud, const char *name)
{
	struct scan *s = ud;
	const char *el = local(name);

	if (s->failed)
		return;
	s->depth--;
	if (s->pkg->kind == XLSX && in_ns(name, sml_ns)) {
		if (strcmp(el, "t") == 0)
			s->in_t = false;
		else if (strcmp(el, "rPh") == 0 && s->in_rph)
			s->in_rph--;
		else if (strcmp(el, "si") == 0 || strcmp(el, "is") == 0)
			s->in_string = false;
	}
	if (s->pkg->kind == DOCX && strcmp(el, "instrText") == 0) {
		s->in_instr = false;
		/* An instruction outside fldChar begin/end stands alone. */
		if (s->nfields == 0)
			(void)check_field(s, 0);
	}
}

static void XMLCALL on_chars(void *ud, const char *p, int n)
{
	struct scan *s = ud;

	if (s->failed)
		return;
	if (s->in_t)
		string_chars(s, p, n);
	if (s->in_instr)
		field_append(s, p, n);
}

/* No DTD: refused where it starts, before its internal subset is read. */
static void XMLCALL on_doctype(void *ud, const char *name, const char *sysid, const char *pubid,
			       int has_internal)
{
	(void)name, (void)sysid, (void)pubid, (void)has_internal;
	(void)stop(ud, "a DOCTYPE (DTDs and entities are refused)");
}

static void XMLCALL on_entity(void *ud, const char *name, int pe, const char *value, int len,
			      const char *base, const char *sysid, const char *pubid,
			      const char *notation)
{
	(void)name, (void)pe, (void)value, (void)len, (void)base, (void)sysid, (void)pubid;
	(void)notation;
	(void)stop(ud, "an entity declaration (DTDs and entities are refused)");
}

static int XMLCALL on_external(XML_Parser p, const char *ctx, const char *base, const char *sysid,
			       const char *pubid)
{
	(void)p, (void)ctx, (void)base, (void)sysid, (void)pubid;
	return XML_STATUS_ERROR;
}

static int xml_sink(void *ud, const unsigned char *p, size_t n, struct sbx_media_report *rep)
{
	struct scan *s = ud;

	(void)rep;
	if (XML_Parse(s->p, (const char *)p, (int)n, 0) == XML_STATUS_ERROR)
		return -1;
	return 0;
}

/* Parse one XML part; 0 or -1 with the reason in the report. */
static int scan_part(struct pkg *k, const struct sbx_zip_entry *e)
{
	struct scan *s = sbx_xcalloc(1, sizeof(*s));
	const char *slash;
	char b[80];
	int r;

	s->pkg = k;
	s->part = e->name;
	s->is_ct = strcasecmp(e->name, "[Content_Types].xml") == 0;
	s->is_rels = !s->is_ct && ends_with(e->name, ".rels");
	s->is_svg = ends_with(e->name, ".svg");
	/* "word/_rels/document.xml.rels" holds targets relative to "word/". */
	slash = strstr(e->name, "_rels/");
	if (s->is_rels && slash && (slash == e->name || slash[-1] == '/'))
		snprintf(s->dir, sizeof(s->dir), "%.*s", (int)(slash - e->name), e->name);
	s->p = XML_ParserCreateNS(NULL, ' ');
	if (!s->p) {
		free(s);
		return sbx_media_fail(k->rep, "%s: expat: out of memory", k->what);
	}
	XML_SetUserData(s->p, s);
	XML_SetElementHandler(s->p, on_start, on_end);
	XML_SetCharacterDataHandler(s->p, on_chars);
	XML_SetStartDoctypeDeclHandler(s->p, on_doctype);
	XML_SetEntityDeclHandler(s->p, on_entity);
	XML_SetExternalEntityRefHandler(s->p, on_external);
	XML_SetParamEntityParsing(s->p, XML_PARAM_ENTITY_PARSING_NEVER);
	r = sbx_zip_read(k->z, e, xml_sink, s, k->what, k->rep);
	if (r == 0 && !s->failed && XML_Parse(s->p, NULL, 0, 1) == XML_STATUS_ERROR)
		r = -1;
	if (r < 0 && !s->failed && XML_GetErrorCode(s->p) != XML_ERROR_NONE)
		sbx_media_fail(k->rep, "%s: part %s: not well-formed XML: %s at line %lu", k->what,
			       shown(e->name, b, sizeof(b)), XML_ErrorString(XML_GetErrorCode(s->p)),
			       (unsigned long)XML_GetCurrentLineNumber(s->p));
	if (s->failed)
		r = -1;
	XML_ParserFree(s->p);
	free(s);
	return r;
}

/* --- binary parts ------------------------------------------------------------ */

struct head {
	unsigned char b[16];
	size_t n;
};

static int head_sink(void *ud, const unsigned char *p, size_t n, struct sbx_media_report *rep)
{
	struct head *h = ud;
	size_t k = n < sizeof(h->b) - h->n ? n : sizeof(h->b) - h->n;

	(void)rep;
	memcpy(h->b + h->n, p, k);
	h->n += k;
	return 0; /* read on: the CRC and sizes are checked to the end */
}

static bool has(const struct head *h, const char *magic, size_t len)
{
	return h->n >= len && memcmp(h->b, magic, len) == 0;
}

/* What a binary part is, when not an image: NULL for an image. */
static const char *binary_refusal(const struct head *h, bool printer_settings)
{
	if (has(h, "\x89PNG\r\n\x1a\n", 8) || has(h, "\xff\xd8\xff", 3) || has(h, "GIF8", 4) ||
	    has(h, "BM", 2) || has(h, "II*\0", 4) || has(h, "MM\0*", 4) ||
	    has(h, "\x01\0\0\0", 4) /* EMF */ || has(h, "\xd7\xcd\xc6\x9a", 4) /* WMF */ ||
	    has(h, "\x01\0\x09\0", 4) || has(h, "\x02\0\x09\0", 4))
		return NULL;
	if (has(h, "MZ", 2))
		return "a Windows executable";
	if (has(h, "\x7f" "ELF", 4))
		return "an ELF executable";
	if (has(h, "\xca\xfe\xba\xbe", 4) || has(h, "\xcf\xfa\xed\xfe", 4) ||
	    has(h, "\xce\xfa\xed\xfe", 4))
		return "a Mach-O executable";
	if (has(h, "#!", 2))
		return "a script";
	if (has(h, "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", 8))
		return "an OLE compound file (macros or an embedded object)";
	if (has(h, "PK", 2))
		return "an embedded ZIP archive or document";
	/* Excel's printer settings are a Windows DEVMODE: inert bytes. */
	if (printer_settings)
		return NULL;
	return "neither XML nor an image";
}

static bool is_xml_part(const char *name)
{
	return ends_with(name, ".xml") || ends_with(name, ".rels") || ends_with(name, ".vml") ||
	       ends_with(name, ".svg");
}

static bool has_folder(const char *name, const char *folder)
{
	size_t n = strlen(folder);

	for (const char *p = name; p; p = strchr(p, '/')) {
		if (*p == '/')
			p++;
		if (strncasecmp(p, folder, n) == 0 && p[n] == '/')
			return true;
	}
	return false;
}

/* Names and bytes of the parts that are not XML. */
static int check_part(struct pkg *k, const struct sbx_zip_entry *e)
{
	struct head h = { 0 };
	const char *why;
	char b[80];

	if (contains_nocase(e->name, "vbaProject") || contains_nocase(e->name, "vbaData"))
		return sbx_media_fail_code(k->rep, SBX_RC_ACTIVE_CONTENT, "%s: part %s: a VBA project (macros)", k->what,
				      shown(e->name, b, sizeof(b)));
	if (has_folder(e->name, "activeX"))
		return sbx_media_fail_code(k->rep, SBX_RC_ACTIVE_CONTENT, "%s: part %s: an ActiveX control", k->what,
				      shown(e->name, b, sizeof(b)));
	if (has_folder(e->name, "embeddings"))
		return sbx_media_fail_code(k->rep, SBX_RC_ACTIVE_CONTENT, "%s: part %s: an embedded object or document "
				      "(save charts and objects as images)",
				      k->what, shown(e->name, b, sizeof(b)));
	if (e->is_dir || is_xml_part(e->name))
		return 0;
	if (sbx_zip_read(k->z, e, head_sink, &h, k->what, k->rep) < 0)
		return -1;
	why = binary_refusal(&h, has_folder(e->name, "printerSettings"));
	if (why)
		return sbx_media_fail(k->rep, "%s: part %s: %s", k->what,
				      shown(e->name, b, sizeof(b)), why);
	return 0;
}

static int ooxml_validate(enum kind kind, int fd, uint64_t size, struct sbx_media_report *rep)
{
	struct pkg k = { .kind = kind, .what = kinds[kind].what, .rep = rep };
	const struct sbx_zip_entry *rels, *ct, *main_e;
	struct sbx_zip_limits lim;
	char b[80];
	int r = -1;

	sbx_zip_limits_default(&lim);
	if (sbx_zip_open(fd, size, &lim, k.what, &k.z, rep) < 0)
		return -1;
	ct = sbx_zip_find(k.z, "[Content_Types].xml");
	rels = sbx_zip_find(k.z, "_rels/.rels");
	if (!ct || !rels) {
		sbx_media_fail(rep, "%s: not an Office Open XML package: no %s", k.what,
			       ct ? "_rels/.rels" : "[Content_Types].xml");
		goto out;
	}
	for (size_t i = 0; i < k.z->n; i++)
		if (check_part(&k, &k.z->v[i]) < 0)
			goto out;
	/* The package's relationships first: they name the main part,
	 * whose content type [Content_Types].xml then gives. */
	if (scan_part(&k, rels) < 0 || scan_part(&k, ct) < 0)
		goto out;
	main_e = k.main_part[0] ? sbx_zip_find(k.z, k.main_part) : NULL;
	if (!main_e) {
		sbx_media_fail(rep, "%s: not an Office Open XML package: %s", k.what,
			       k.main_part[0] ? "its main part is missing" :
						"_rels/.rels names no main part");
		goto out;
	}
	if (strcasecmp(k.main_ct, kinds[kind].main_type) != 0) {
		sbx_media_fail(rep, "%s: the main part %s is not %s (content type %s)", k.what,
			       shown(k.main_part, b, sizeof(b)), kinds[kind].noun,
			       k.main_ct[0] ? k.main_ct : "none");
		goto out;
	}
	for (size_t i = 0; i < k.z->n; i++) {
		const struct sbx_zip_entry *e = &k.z->v[i];

		if (e != ct && e != rels && !e->is_dir && is_xml_part(e->name) &&
		    scan_part(&k, e) < 0)
			goto out;
	}
	rep->formula_cells = k.formula;
	r = 0;
out:
	sbx_zip_free(k.z);
	return r;
}

int sbx_media_xlsx_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	return ooxml_validate(XLSX, fd, size, rep);
}

int sbx_media_docx_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	return ooxml_validate(DOCX, fd, size, rep);
}

int sbx_media_pptx_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	return ooxml_validate(PPTX, fd, size, rep);
}
