/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * args.c - sbx-template's command line, which only the broker writes:
 *
 *   sbx-template --listen FD --ready FD --digest HEX16 --idle S
 *                --max-runs N --max-seconds S [--reset-file FD]
 *                [--import MODULE]... [--hide DIR]...
 *                -- INTERPRETER [OPTION]...
 *
 * --hide names a host tree the sandbox covers (the site trees sbx masks,
 * /usr/local in a bind of /usr): its site directories leave sys.path
 * before the imports, so that they resolve as in the sandbox.
 *
 * INTERPRETER [OPTION]... is the profile's argv up to "{code}".  The
 * options are the few that change how the interpreter starts and that a
 * template can apply as PyConfig settings (-I -B -E -s -S -u); the
 * broker refuses a template for any other at catalog load, and this
 * parser refuses it again.  No Python here: unit-tested on its own.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template.h"

static int number(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end || *v > max ? -1 : 0;
}

int sbx_template_parse_pyopt(const char *word, struct sbx_template_pyopts *o)
{
	if (word[0] != '-' || !word[1])
		return -1;
	for (const char *c = word + 1; *c; c++)
		switch (*c) {
		case 'I': o->isolated = true; break;
		case 'B': o->no_bytecode = true; break;
		case 'E': o->ignore_env = true; break;
		case 's': o->no_user_site = true; break;
		case 'S': o->no_site = true; break;
		case 'u': o->unbuffered = true; break;
		default: return -1;
		}
	return 0;
}

void sbx_template_pyconfig(const struct sbx_template_pyopts *o, struct sbx_template_pyconfig *c)
{
	*c = (struct sbx_template_pyconfig){
		.isolated = o->isolated,
		.use_environment = !(o->isolated || o->ignore_env),
		.user_site_directory = !(o->isolated || o->no_user_site),
		.safe_path = o->isolated,
		.write_bytecode = !o->no_bytecode,
		.site_import = !o->no_site,
		.buffered_stdio = !o->unbuffered,
	};
}

/* A module name as `import` takes it: dotted identifiers of ASCII. */
static bool module_name(const char *s)
{
	bool start = true;

	if (!*s || strlen(s) > 200)
		return false;
	for (; *s; s++) {
		if (*s == '.') {
			if (start)
				return false;
			start = true;
			continue;
		}
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (!start && *s >= '0' && *s <= '9')))
			return false;
		start = false;
	}
	return !start;
}

#define WHY(...) (snprintf(why, len, __VA_ARGS__), -1)

int sbx_template_parse_args(int argc, char **argv, struct sbx_template_args *a, char *why,
			    size_t len)
{
	bool seen_digest = false, seen_idle = false, seen_runs = false, seen_secs = false;
	int i;

	*a = (struct sbx_template_args){ .listen_fd = -1, .ready_fd = -1, .reset_fd = -1 };
	for (i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned long v;

		if (!strcmp(opt, "--"))
			break;
		if (!val)
			return WHY("%s: a value is expected", opt);
		i++;
		if (!strcmp(opt, "--listen") || !strcmp(opt, "--ready") ||
		    !strcmp(opt, "--reset-file")) {
			int *fd = opt[2] == 'l' ? &a->listen_fd : opt[4] == 'a' ? &a->ready_fd
										 : &a->reset_fd;
			if (number(val, INT_MAX, &v) < 0 || v < 3)
				return WHY("%s: an fd above 2 is expected, not '%s'", opt, val);
			*fd = (int)v;
		} else if (!strcmp(opt, "--digest")) {
			if (strlen(val) != SBX_TEMPLATE_DIGEST_LEN ||
			    strspn(val, "0123456789abcdef") != SBX_TEMPLATE_DIGEST_LEN)
				return WHY("--digest: %d lowercase hex digits are expected",
					   SBX_TEMPLATE_DIGEST_LEN);
			memcpy(a->digest, val, SBX_TEMPLATE_DIGEST_SIZE);
			seen_digest = true;
		} else if (!strcmp(opt, "--idle") || !strcmp(opt, "--max-seconds")) {
			if (number(val, 366UL * 86400, &v) < 0 || v == 0)
				return WHY("%s: seconds from 1 to 31622400 are expected, not '%s'",
					   opt, val);
			if (opt[2] == 'i')
				a->idle_seconds = (uint32_t)v, seen_idle = true;
			else
				a->max_seconds = (uint32_t)v, seen_secs = true;
		} else if (!strcmp(opt, "--max-runs")) {
			if (number(val, UINT32_MAX, &v) < 0 || v == 0)
				return WHY("--max-runs: a count from 1 is expected, not '%s'", val);
			a->max_runs = (uint32_t)v;
			seen_runs = true;
		} else if (!strcmp(opt, "--import")) {
			if (!module_name(val))
				return WHY("--import: '%s' is not a module name", val);
			if (a->n_imports == SBX_TEMPLATE_MAX_IMPORTS)
				return WHY("--import: more than %d modules", SBX_TEMPLATE_MAX_IMPORTS);
			a->imports[a->n_imports++] = val;
		} else if (!strcmp(opt, "--hide")) {
			if (val[0] != '/' || strlen(val) > 255 || strstr(val, "/../") ||
			    strstr(val, "/./"))
				return WHY("--hide: '%s' is not an absolute path", val);
			if (a->n_hide == SBX_TEMPLATE_MAX_HIDE)
				return WHY("--hide: more than %d trees", SBX_TEMPLATE_MAX_HIDE);
			a->hide[a->n_hide++] = val;
		} else if (!strcmp(opt, "--warm")) {
			if (strlen(val) > 4096)
				return WHY("--warm: more than 4096 bytes");
			a->warm = val;
		} else if (!strcmp(opt, "--cgroup")) {
			/* Only a cgroup of a template's name under the cgroup
			 * file system: it is removed at exit. */
			const char *base = strrchr(val, '/');

			if (strncmp(val, "/sys/fs/cgroup/", 15) || strstr(val, "/../") ||
			    strstr(val, "/./") || strlen(val) > 4095 || !base ||
			    strncmp(base + 1, "sbx-template-", 13))
				return WHY("--cgroup: '%s' is not a template's cgroup directory", val);
			if (a->n_cgroups == SBX_TEMPLATE_MAX_CGROUPS)
				return WHY("--cgroup: more than %d directories", SBX_TEMPLATE_MAX_CGROUPS);
			a->cgroups[a->n_cgroups++] = val;
		} else {
			return WHY("%s: unknown option", opt);
		}
	}
	if (a->listen_fd < 0 || a->ready_fd < 0 || !seen_digest || !seen_idle || !seen_runs ||
	    !seen_secs)
		return WHY("--listen, --ready, --digest, --idle, --max-runs and --max-seconds are required");
	if (a->listen_fd == a->ready_fd || a->reset_fd == a->listen_fd || a->reset_fd == a->ready_fd)
		return WHY("--listen, --ready and --reset-file must be different fds");
	if (i >= argc || i + 1 >= argc)
		return WHY("the interpreter's argv is expected after --");
	a->argv = argv + i + 1;
	a->argc = (size_t)(argc - i - 1);
	if (a->argv[0][0] != '/')
		return WHY("the interpreter '%s' is not an absolute path", a->argv[0]);
	if (a->argc > SBX_TEMPLATE_MAX_ARGV)
		return WHY("more than %d interpreter words", SBX_TEMPLATE_MAX_ARGV);
	for (size_t k = 1; k < a->argc; k++)
		if (sbx_template_parse_pyopt(a->argv[k], &a->py) < 0)
			return WHY("interpreter option '%s': only -I, -B, -E, -s, -S and -u can be applied by a template",
				   a->argv[k]);
	return 0;
}
