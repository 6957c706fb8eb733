/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-json.h - the one JSON line a subcommand prints with --json.  Every
 * such line is an object with "ok"; a failure adds "exit", "error" and
 * "hint", the same words as the stderr lines, so that a script never has
 * to parse text (a schema in schema/ for each).
 */
#ifndef SBX_CMD_JSON_H
#define SBX_CMD_JSON_H

#include <jansson.h>

#include "error.h"

/*
 * sbx_cmd_json_print() - print @o on stdout as one compact line and drop
 * the reference.  Returns 0, or SBX_EXIT_SOFTWARE when stdout cannot take
 * it (a message is printed).
 */
int sbx_cmd_json_print(json_t *o);

/* @o with "ok": false and the error's exit code, message and hint added;
 * @o NULL starts a new object.  Returns @o. */
json_t *sbx_cmd_json_error(json_t *o, const struct sbx_error *err);

#endif
