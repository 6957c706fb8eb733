/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog-template.c - a profile's "template" (sbx-policy(5)): the
 * modules a long-lived sbx-template process imports once, so that each
 * run of the profile is cloned from an interpreter that already has them.
 *
 * What is checked here is what the template can honour: the profile's
 * argv is a Python 3 interpreter with only the options sbx-template
 * turns into PyConfig settings, followed by "{code}" and "{args}"; the
 * imports are module names (the template imports them with
 * PyImport_ImportModule, never by running a string).  Whether argv[0]
 * is the very interpreter sbx-template embeds is a question about the
 * host, asked where a template is wanted (src/broker/template.c), not
 * at every catalog load: a run of another profile must not pay for it.
 */
#include "config.h"

#include <string.h>

#include "catalog-internal.h"

/* Python options the template applies as PyConfig settings: -I isolated,
 * -B no .pyc writing, -E ignore PYTHON* variables, -s no user site,
 * -S no site import, -u unbuffered stdio.  Any other option would change
 * the interpreter in a way the template could not reproduce. */
static const char template_options[] = "IBEsSu";

/* The most modules one template imports, and the longest dotted name. */
#define TEMPLATE_IMPORTS_MAX 64
#define TEMPLATE_MODULE_MAX 128
/* The reset code runs in every child: a short trusted snippet. */
#define TEMPLATE_RESET_MAX 65536
/* The warm-up code runs once, in the template: passed as one argument. */
#define TEMPLATE_WARM_MAX 4096

/* ^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$: a dotted module
 * name.  Relative imports and anything with spaces or quotes are not
 * names the template could import. */
static bool module_name_valid(const char *s)
{
	bool start = true;

	if (!*s)
		return false;
	for (; *s; s++) {
		char ch = *s;

		if (ch == '.') {
			if (start)
				return false;
			start = true;
			continue;
		}
		if (!(ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (!start && ch >= '0' && ch <= '9')))
			return false;
		start = false;
	}
	return !start;
}

/* "python3" or "python3.N" as the last component of argv[0]: the only
 * interpreters a template can hold (the realpath check comes later). */
static bool python3_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strncmp(base, "python3", 7) != 0)
		return false;
	base += 7;
	if (!*base)
		return true;
	if (*base++ != '.' || !*base)
		return false;
	for (; *base; base++)
		if (*base < '0' || *base > '9')
			return false;
	return true;
}

/* [python3, -X..., "{code}", "{args}"] with -X among template_options,
 * each option its own argument ("-IB" is refused: one spelling each). */
static int check_argv(const struct sbx_jctx *c, const struct sbx_profile *pr,
		      struct sbx_template *t)
{
	size_t i;

	if (!python3_name(pr->argv[0]))
		return sbx_json_error(c, "template",
				      "a template needs argv[0] to be a python3 interpreter, not %s",
				      pr->argv[0]);
	for (i = 1; pr->argv[i] && strcmp(pr->argv[i], "{code}") != 0; i++) {
		const char *a = pr->argv[i];
		char p[SBX_JSON_PATH_MAX];

		sbx_json_path_index(p, "argv", i);
		if (a[0] != '-' || !a[1] || a[2] || !strchr(template_options, a[1]))
			return sbx_json_error(c, p,
					      "a profile with a template allows only the options "
					      "-I, -B, -E, -s, -S and -u before \"{code}\", got \"%s\"",
					      a);
		if (strchr(t->options, a[1]))
			return sbx_json_error(c, p, "%s is given twice", a);
		t->options[strlen(t->options)] = a[1];
	}
	t->argc = i;
	/* parse_argv() made sure "{code}" is there once. */
	if (!pr->argv[i + 1] || strcmp(pr->argv[i + 1], "{args}") != 0 || pr->argv[i + 2])
		return sbx_json_error(c, "argv",
				      "a profile with a template needs \"{code}\", \"{args}\" as "
				      "its last two arguments");
	return 0;
}

int parse_template(const struct sbx_jctx *c, const json_t *v, struct sbx_profile *pr)
{
	static const char *const keys[] = { "imports", "reset", "warm", NULL };
	struct sbx_template *t;
	const json_t *f;

	if (!v)
		return 0;
	if (sbx_json_check_keys(c, "template", v, keys) < 0)
		return -1;
	t = pr->template = sbx_xcalloc(1, sizeof(*t));
	if (check_argv(c, pr, t) < 0)
		return -1;
	if (!(f = sbx_json_required(c, "template", v, "imports")) ||
	    sbx_json_strv(c, "template.imports", f, TEMPLATE_IMPORTS_MAX, TEMPLATE_MODULE_MAX,
			  module_name_valid, "a module name such as \"matplotlib.pyplot\"", true,
			  &t->imports) < 0)
		return -1;
	if (!t->imports[0])
		return sbx_json_error(c, "template.imports",
				      "expected at least one module (a template that imports "
				      "nothing only makes runs slower)");
	if ((f = json_object_get(v, "reset")) &&
	    sbx_json_string(c, "template.reset", f, TEMPLATE_RESET_MAX, &t->reset) < 0)
		return -1;
	/* On the template's command line (sbx-template --warm): short. */
	if ((f = json_object_get(v, "warm")) &&
	    sbx_json_string(c, "template.warm", f, TEMPLATE_WARM_MAX, &t->warm) < 0)
		return -1;
	return 0;
}

void template_free(struct sbx_template *t)
{
	if (!t)
		return;
	sbx_strv_free(t->imports);
	free(t->reset);
	free(t->warm);
	free(t);
}
