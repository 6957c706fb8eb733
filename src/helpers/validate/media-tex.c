/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * media-tex.c - text/x-tex: LaTeX and TeX source.
 *
 * A .tex file is a program for TeX, and the one who compiles it runs it:
 * with shell escape on (\write18, or --shell-escape) it runs commands, and
 * even without it it reads and writes files the compiling user can reach
 * and copies them into the document.  So beyond the text rules (UTF-8,
 * no NUL, the C0/DEL/C1 controls of text/csv, no HTML or XML opening),
 * one streaming pass over the control sequences refuses
 *   - \write (any stream: \write18 is shell escape, and the stream number
 *     can be spelt 18, "12, '22 or \count...) and \special;
 *   - \catcode, \csname, \scantokens and ^^ notation: each builds or
 *     re-reads a control sequence this scan cannot see (^^5c is a
 *     backslash, \csname write\endcsname is \write, a catcode change
 *     makes any character an escape), so a file that uses them is
 *     refused rather than half-checked;
 *   - the primitives and commands that open, dump or embed a file by
 *     name (\openin, \openout, \pdffiledump, \pdfobj, \pdfximage, the
 *     file size, date and MD5 primitives, \XeTeXpicfile, \embedfile,
 *     \attachfile) and the two-argument readers of the import package and
 *     \inputminted (table refused[]);
 *   - \directlua, \latelua, \luaexec and \ShellEscape (LuaTeX runs Lua);
 *   - the file commands (table file_cmds[]: \input and LaTeX's internal
 *     forms, \include, \InputIfFileExists, \lstinputlisting,
 *     \VerbatimInput, \includegraphics, \usepackage, \documentclass,
 *     \bibliography...) of a path that is absolute (/ or ~), a drive
 *     (C:), goes up (..), is a pipe (|cmd, run with shell escape) or holds
 *     a control sequence, a comment, a line end or a brace (whose meaning
 *     is TeX's, not this scan's), and any of them not followed by a
 *     literal path at all (\let\x=\input and \def\y{\input} would name
 *     a file through a macro); a relative path below the document is
 *     allowed;
 * and flags (SBX_MEDIA_FLAG_LINKS, "links") \url and \href: the links
 * are the author's to check.  Comments are scanned like the rest (a
 * commented-out \write18 is refused too), and so is verbatim text: the
 * scan does not know environments.  What statsmodels, pandas (to_latex)
 * and tabulate write passes.
 *
 * Reasons start "tex:" and name the control sequence, so a short code
 * (tex_shell_escape, tex_catcode, tex_path...) can be read off them.
 */
#include "config.h"

#include <string.h>

#include "util.h"
#include "validate.h"

/* Longest control word looked at; longer ones are none of ours. */
#define TEX_NAME_MAX 24
/* Longest path argument and [options] accepted after a file command. */
#define TEX_ARG_MAX 1024

enum tex_state {
	TEX_TEXT,
	TEX_ESCAPE,  /* after '\': a letter starts a control word */
	TEX_NAME,    /* inside a control word */
	TEX_ARG,     /* after a file command: spaces, [options] or the path */
	TEX_OPTIONS, /* inside [...] */
	TEX_BRACED,  /* inside {path} */
	TEX_BARE,    /* \input path, ended by a space */
};

struct tex {
	enum tex_state state;
	char name[TEX_NAME_MAX + 1];
	size_t nlen;
	bool long_name;
	const char *file_cmd; /* the file command whose argument is read */
	bool bare_ok;         /* it takes \input's syntax, a path ended by a space */
	char arg[TEX_ARG_MAX + 1];
	size_t alen;
	unsigned char caret; /* the previous byte was '^' */
};

static bool is_letter(unsigned char c)
{
	/* TeX's letters (catcode 11) are ASCII letters; '@' is one inside
	 * packages, and names with it are none of the ones below. */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '@';
}

/* Refused wherever they occur, with the reason of their group. */
static const struct {
	const char *name;
	const char *why;
} refused[] = {
#define RUNS "writes files or runs commands (\\write18 is shell escape)"
#define HIDES "builds control sequences this check cannot see; write the document without it"
#define OPENS "opens or embeds files outside the document"
#define CODE "runs code when the document is compiled"
#define TWO "reads a file named by two arguments; write \\input of a relative path"
	{ "write", RUNS }, { "special", RUNS },
	{ "catcode", HIDES }, { "csname", HIDES }, { "scantokens", HIDES },
	{ "openout", OPENS }, { "openin", OPENS }, { "pdffiledump", OPENS }, { "filedump", OPENS },
	{ "pdfobj", OPENS }, { "pdfximage", OPENS }, { "pdfmdfivesum", OPENS },
	{ "filemdfivesum", OPENS }, { "pdffilesize", OPENS }, { "filesize", OPENS },
	{ "pdffilemoddate", OPENS }, { "filemoddate", OPENS }, { "XeTeXpicfile", OPENS },
	{ "XeTeXpdffile", OPENS }, { "embedfile", OPENS }, { "attachfile", OPENS },
	{ "textattachfile", OPENS }, { "noteattachfile", OPENS },
	{ "directlua", CODE }, { "latelua", CODE }, { "luaexec", CODE }, { "ShellEscape", CODE },
	{ "import", TWO }, { "subimport", TWO }, { "inputfrom", TWO }, { "subinputfrom", TWO },
	{ "includefrom", TWO }, { "subincludefrom", TWO }, { "inputminted", TWO },
};
/* Read a file named by their argument, which must be a literal path.
 * The first two take TeX's own syntax too (\input file). */
static const char *const file_cmds[] = {
	"input", "@@input", "@input", "@iinput", "include", "InputIfFileExists",
	"IfFileExists", "lstinputlisting", "verbatiminput", "VerbatimInput", "includegraphics",
	"includepdf", "includesvg", "includestandalone", "usepackage", "RequirePackage",
	"documentclass", "LoadClass", "bibliography", "addbibresource",
};

/* The path argument of t->file_cmd, collected in t->arg. */
static int check_path(struct tex *t, uint64_t at, struct sbx_media_report *rep)
{
	const char *p = t->arg;

	t->arg[t->alen] = '\0';
	while (*p == ' ' || *p == '"')
		p++;
	/* '%' and line ends: a comment TeX drops could join ". ." into
	 * ".."; '{': a nested group whose braces TeX may strip. */
	if (*p == '/' || *p == '~' || *p == '|' || (p[0] && p[1] == ':') || strstr(p, "..") ||
	    strpbrk(p, "\\%{\n\r"))
		return sbx_media_fail_code(rep, SBX_RC_ACTIVE_CONTENT,
				      "tex: \\%s of \"%.64s\" before offset %llu: only a relative path "
				      "below the document is allowed (no /, ~, .., drive, pipe or "
				      "control sequence)",
				      t->file_cmd, t->arg, (unsigned long long)at);
	t->state = TEX_TEXT;
	return 0;
}

/* A control word ended: refuse, flag, or start reading a file argument. */
static int end_name(struct tex *t, uint64_t at, unsigned *flags, struct sbx_media_report *rep)
{
	t->name[t->nlen] = '\0';
	t->state = TEX_TEXT;
	if (t->long_name)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		if (!strcmp(refused[i].name, t->name))
			return sbx_media_fail_code(rep, SBX_RC_ACTIVE_CONTENT, "tex: \\%s at offset %llu: %s", t->name,
					      (unsigned long long)(at - t->nlen - 1), refused[i].why);
	if (!strcmp(t->name, "url") || !strcmp(t->name, "href"))
		*flags |= SBX_MEDIA_FLAG_LINKS;
	for (size_t i = 0; i < ARRAY_SIZE(file_cmds); i++)
		if (!strcmp(file_cmds[i], t->name)) {
			t->file_cmd = file_cmds[i];
			t->bare_ok = i < 2;
			t->state = TEX_ARG;
			t->alen = 0;
		}
	return 0;
}

static int tex_byte(struct tex *t, unsigned char c, uint64_t at, unsigned *flags,
		    struct sbx_media_report *rep)
{
	switch (t->state) {
	case TEX_NAME:
		if (is_letter(c)) {
			if (t->nlen < TEX_NAME_MAX)
				t->name[t->nlen++] = (char)c;
			else
				t->long_name = true;
			return 0;
		}
		if (end_name(t, at, flags, rep) < 0)
			return -1;
		/* The byte after the name is read in the new state. */
		return tex_byte(t, c, at, flags, rep);
	case TEX_ESCAPE:
		if (is_letter(c)) {
			t->state = TEX_NAME;
			t->nlen = 1;
			t->long_name = false;
			t->name[0] = (char)c;
		} else {
			/* A control symbol (\\, \%, \{...): one character.  A
			 * second backslash does not start a control word. */
			t->state = TEX_TEXT;
		}
		return 0;
	case TEX_ARG:
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			return 0;
		if (c == '*' && !t->bare_ok)
			return 0; /* \includegraphics* */
		if (c == '[' && !t->bare_ok) {
			t->state = TEX_OPTIONS;
			t->alen = 0;
			return 0;
		}
		if (c == '{') {
			t->state = TEX_BRACED;
			t->alen = 0;
			return 0;
		}
		/* Anything but a literal path is refused: a macro or an alias
		 * (\let\x=\input, \def\y{\input}) could name any file. */
		if (!t->bare_ok || c == '\\' || c == '}' || c == '#' || c == '%' || c == '=')
			return sbx_media_fail_code(rep, SBX_RC_ACTIVE_CONTENT, "tex: \\%s without a literal path at offset %llu: "
						   "a macro or an alias could name any file",
					      t->file_cmd, (unsigned long long)at);
		/* \input path, TeX's own syntax. */
		t->state = TEX_BARE;
		t->alen = 0;
		return tex_byte(t, c, at, flags, rep);
	case TEX_OPTIONS:
		if (c == ']') {
			t->state = TEX_ARG;
		} else if (++t->alen > TEX_ARG_MAX) {
			return sbx_media_fail(rep, "tex: \\%s: options longer than %d bytes",
					      t->file_cmd, TEX_ARG_MAX);
		}
		return 0;
	case TEX_BRACED:
	case TEX_BARE:
		if ((t->state == TEX_BRACED && c == '}') ||
		    (t->state == TEX_BARE && (c == ' ' || c == '\n' || c == '\r' || c == '\t' ||
					      c == '}' || c == '{' || c == '%')))
			return check_path(t, at, rep);
		if (t->alen >= TEX_ARG_MAX)
			return sbx_media_fail(rep, "tex: \\%s: path longer than %d bytes",
					      t->file_cmd, TEX_ARG_MAX);
		t->arg[t->alen++] = (char)c;
		return 0;
	case TEX_TEXT:
		if (c == '\\')
			t->state = TEX_ESCAPE;
		return 0;
	}
	return 0;
}

static int tex_end(struct tex *t, uint64_t at, unsigned *flags, struct sbx_media_report *rep)
{
	if (t->state == TEX_NAME && end_name(t, at, flags, rep) < 0)
		return -1;
	if (t->state == TEX_BARE || t->state == TEX_BRACED)
		return check_path(t, at, rep);
	return 0;
}

int sbx_media_tex_validate(int fd, uint64_t size, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_media_reader *r = sbx_media_reader_new(fd, size);
	_cleanup_free_ struct tex *t = sbx_xcalloc(1, sizeof(*t));
	struct sbx_media_utf8 u = { 0 };
	unsigned char prev = 0;

	for (;;) {
		uint64_t at = sbx_media_reader_tell(r);
		const unsigned char *p;
		ssize_t k = sbx_media_reader_chunk(r, &p, SIZE_MAX);

		if (k < 0)
			return sbx_media_fail(rep, "tex: read error");
		if (k == 0)
			return sbx_media_text_end("tex", &u, rep) < 0 ? -1
								      : tex_end(t, at, &rep->flags, rep);
		if (at == 0 && sbx_media_sniffs_as_markup(p, (size_t)k))
			return sbx_media_fail(rep, "tex: starts like an HTML or XML document (%s)",
					      sbx_media_sniffs_as_markup(p, (size_t)k));
		if (sbx_media_text_feed("tex", &u, p, (size_t)k, at, rep) < 0 ||
		    sbx_media_controls_feed("tex", &prev, p, (size_t)k, at, rep) < 0)
			return -1;
		for (size_t i = 0; i < (size_t)k; i++) {
			/* TeX turns ^^ notation into characters as it reads
			 * its input, before it sees control sequences. */
			if (p[i] == '^' && t->caret)
				return sbx_media_fail_code(rep, SBX_RC_ACTIVE_CONTENT, "tex: ^^ notation at offset %llu: it can "
							   "spell any character, a backslash too; "
							   "write the character itself",
						      (unsigned long long)(at + i - 1));
			t->caret = p[i] == '^';
			if (tex_byte(t, p[i], at + i, &rep->flags, rep) < 0)
				return -1;
		}
	}
}
