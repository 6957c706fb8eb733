/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * canonjson.h - RFC 8785 (JSON Canonicalization Scheme) serialization of a
 * jansson value, restricted to the manifest's profile: integers only.
 *
 * The manifest is signed over these bytes, and SPEC §7 promises that
 * `jq -cjS 'del(.signature)'` reproduces them, so a user can check a
 * signature with jq and openssl alone.  JCS and jq 1.6 agree on everything
 * sbx emits once three things are kept out of the manifest:
 *   - DEL (U+007F): JCS writes it literally, jq as "\u007f";
 *   - integers outside ±(2^53-1): jq goes through a double and prints
 *     1e+20 or rounds; JCS forbids them anyway (I-JSON);
 *   - object keys with characters above U+FFFF: JCS sorts keys by UTF-16
 *     code units, jq by code points, and the two orders differ there.
 * sbx_canonjson_clean_string() and sbx_canonjson_clean_text() take care of
 * the first (and of invalid UTF-8) for every string that comes from
 * outside; sbx_canonjson_dump() refuses the second; the manifest signer
 * refuses the third (manifest keys are names sbx chose).  C0 control
 * characters need no cleaning for jq's sake: both write \b \t \n \f \r
 * and \u00XX (lower-case hex) for the rest, so text such as a traceback
 * keeps its lines (sbx_canonjson_clean_text()); names, where a control
 * character is only ever a trick, go through sbx_canonjson_clean_string().
 */
#ifndef SBX_CANONJSON_H
#define SBX_CANONJSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* The largest integer magnitude that survives a trip through an IEEE
 * double exactly (RFC 7493 §2.2), and so prints the same everywhere. */
#define SBX_CANONJSON_INT_MAX 9007199254740991LL

/* Deepest nesting sbx_canonjson_dump() accepts. */
#define SBX_CANONJSON_DEPTH_MAX 64

/**
 * sbx_canonjson_dump() - serialize @v canonically (RFC 8785).
 * @v: any jansson value; objects are written with their keys sorted by
 *     UTF-16 code units, no whitespace anywhere.
 * @out: on success a NUL-terminated buffer owned by the caller (no trailing
 *       newline).
 * @len: on success its length without the NUL.
 * @err: error object.
 *
 * Return: 0, or -1 with SBX_EXIT_SOFTWARE and the JSON path of the value at
 * fault when @v holds a real number, an integer beyond
 * ±SBX_CANONJSON_INT_MAX, a string or key that is not valid UTF-8, or
 * nesting deeper than SBX_CANONJSON_DEPTH_MAX.
 */
int sbx_canonjson_dump(const json_t *v, char **out, size_t *len, struct sbx_error *err);

/**
 * sbx_canonjson_clean_string() - make untrusted bytes safe for the manifest.
 * @s: the bytes (need not be NUL-terminated, may contain NUL).
 * @len: their count.
 * @max_bytes: the longest result, in bytes, without the NUL.
 * @truncated: set to whether the result was cut short; may be NULL.
 *
 * Each C0 control character (including NUL), DEL, and each ill-formed UTF-8
 * sequence (one U+FFFD per maximal ill-formed subpart, as Unicode §3.9
 * recommends) is replaced with U+FFFD; the result is cut at a character
 * boundary so that it is at most @max_bytes long.  What comes back is
 * valid UTF-8 that JCS and jq print identically.
 *
 * Return: a NUL-terminated string owned by the caller; never NULL.
 */
char *sbx_canonjson_clean_string(const char *s, size_t len, size_t max_bytes, bool *truncated);

/**
 * sbx_canonjson_clean_text() - sbx_canonjson_clean_string() for text that
 * keeps its layout: the payload's stdout and stderr excerpts.
 *
 * The same, except that C0 control characters other than NUL (newline,
 * tab, carriage return, ESC, ...) are kept as they are; the canonical
 * writer escapes them as RFC 8785 and jq both do.  NUL, DEL and ill-formed
 * UTF-8 still become U+FFFD.  A consumer that prints the result to a
 * terminal must escape it itself: an ESC sequence is kept.
 *
 * Return: a NUL-terminated string owned by the caller; never NULL.
 */
char *sbx_canonjson_clean_text(const char *s, size_t len, size_t max_bytes, bool *truncated);

#endif
