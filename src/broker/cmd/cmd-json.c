/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-json.c - --json for the subcommands that report one outcome
 * (verify, keygen, gc, cancel): one object on one line on stdout.  The
 * stderr lines stay as they are, so a person watching a script sees the
 * same as without --json; but for usage (64) and job file (65) errors,
 * which are one JSON line there too (sbx_error_print(), error.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "cmd-json.h"

int sbx_cmd_json_print(json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	int bad = !text || puts(text) == EOF || fflush(stdout) == EOF;

	free(text);
	json_decref(o);
	if (bad) {
		sbx_warn("--json: cannot write the result on stdout");
		return SBX_EXIT_SOFTWARE;
	}
	return 0;
}

json_t *sbx_cmd_json_error(json_t *o, const struct sbx_error *err)
{
	char buf[sizeof(err->msg) + 128];

	if (!o)
		o = json_object();
	json_object_set_new(o, "ok", json_false());
	json_object_set_new(o, "exit", json_integer(err->code));
	/* A message quoting bytes that are not UTF-8 is still an error. */
	json_object_set_new(o, "error", json_string(sbx_error_text(err, buf, sizeof(buf))) ?:
						json_string("(the message is not UTF-8; see stderr)"));
	json_object_set_new(o, "hint", err->hint[0] ? json_string(err->hint) : json_null());
	return o;
}
