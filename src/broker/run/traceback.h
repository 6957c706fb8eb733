/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * traceback.h - the exception a Python payload says it died of, read from
 * the last lines of its captured stderr for the manifest's "error" (python
 * profiles only).
 *
 * The bytes are the payload's, so what is found is its claim and nothing
 * more: the manifest marks it "claimed_by": "payload", and it changes no
 * status.  The broker holds the signing key, so the reading is as small as
 * it can be: only the last SBX_TRACEBACK_TAIL bytes are looked at, once,
 * byte by byte, with no regular expression, no allocation and no number
 * longer than nine digits; a stderr of any size costs the same.
 */
#ifndef SBX_TRACEBACK_H
#define SBX_TRACEBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of the end of stderr looked at: the innermost frame and the
 * exception line of a traceback fit, however deep its stack. */
#define SBX_TRACEBACK_TAIL 4096

struct sbx_traceback {
	char type[128];     /* "KeyError", "pandas.errors.ParserError" */
	char message[256];  /* the first line of the message, "" when none */
	char file[256];     /* of the innermost frame, as printed */
	uint64_t line;      /* its line number */
};

/*
 * sbx_traceback_find() - the last traceback's exception in the last
 * SBX_TRACEBACK_TAIL bytes of @buf (@len bytes captured).  Found when that
 * tail has a frame line ('  File "F", line N') followed, after the
 * indented source and caret lines, by an exception line ("Type" or
 * "Type: message", Type a dotted Python name).  The strings are cut to
 * their fields' sizes; they may hold any bytes but NUL (the manifest
 * cleans them).
 * Return: true when found (@tb filled in), false when not.
 */
bool sbx_traceback_find(const char *buf, size_t len, struct sbx_traceback *tb);

#endif
