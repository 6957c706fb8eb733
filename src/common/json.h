/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.h - strict jansson helpers shared by the job, catalog and host
 * configuration parsers.
 *
 * Every parser walks a json_t tree with a context that knows the file name
 * and the exit class of its errors (65 for a job, 69 for the catalog and the
 * host configuration), and a JSON path string ("limits.memory_mib",
 * "args[3]", "env.TZ") that it extends as it descends.  A failed check sets
 * one line "<file>: <path>: expected ..., got <value>" where the value is
 * shown briefly, truncated and with control characters escaped, so a
 * hostile job cannot smuggle terminal escapes into the caller's stderr.
 */
#ifndef SBX_JSON_H
#define SBX_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* jansson ships json_decrefp() (NULL-safe) for exactly this. */
#ifndef _cleanup_json_
#define _cleanup_json_ _cleanup_(json_decrefp)
#endif

/* Longest JSON path kept for messages; longer ones end in "...". */
#define SBX_JSON_PATH_MAX 256

struct sbx_jctx {
	const char *source;     /* file name in messages */
	int code;               /* exit class of errors: SBX_EXIT_INVALID, ... */
	struct sbx_error *err;
};

/*
 * sbx_json_read() - read a whole file, or stdin for "-", refusing when it is
 * larger than @max bytes.  The cap is enforced while reading (at most @max+1
 * bytes are ever read), so an endless stdin or a huge file costs nothing.
 * On success *@data is NUL-terminated and owned by the caller.
 * Errors: -1 with @code, naming @path.
 */
int sbx_json_read(const char *path, size_t max, int code, char **data, size_t *len,
		  struct sbx_error *err);

/*
 * sbx_json_parse() - parse @len bytes as one JSON object-or-value with
 * duplicate keys rejected and NUL in strings rejected (jansson's default).
 * Errors: NULL with "<source>: line L column C: <path>: <jansson text>",
 * the path found by sbx_json_path_at() from the error's byte offset.
 */
json_t *sbx_json_parse(const struct sbx_jctx *c, const char *data, size_t len);

/*
 * sbx_json_path_at() - the JSON path ("limits.wall_seconds", "args[2]", ""
 * for the top level) of the value or key being read at byte @offset of
 * @data, found by a tolerant scan of the bytes before it.  For errors that
 * jansson reports at load time with an offset only ("real number overflow"
 * at 1e400, a duplicate key, a truncated file); @data need not be valid
 * JSON.  Paths deeper than the scan tracks end at the deepest level kept.
 */
void sbx_json_path_at(const char *data, size_t len, size_t offset, char out[SBX_JSON_PATH_MAX]);

/* Extend @parent with ".key" (or ["key"] when the key is not a plain
 * identifier, escaped) / "[i]" into @out of SBX_JSON_PATH_MAX bytes. */
void sbx_json_path_key(char out[SBX_JSON_PATH_MAX], const char *parent, const char *key);
void sbx_json_path_index(char out[SBX_JSON_PATH_MAX], const char *parent, size_t i);

/* A short printable rendering of @v for messages: "lots" (quoted, escaped,
 * truncated), 1.5, true, an array, an object. */
void sbx_json_describe(const json_t *v, char *out, size_t len);

/* Escape @s for a message: C0 controls, DEL and bytes that are not UTF-8
 * as \xNN, C1 controls as \u00NN, truncated with "..."; the result is
 * valid UTF-8 without control characters. */
void sbx_json_escape(const char *s, char *out, size_t len);

/* "<source>: <path>: <what>" with the context's exit class.  Returns -1. */
int sbx_json_error(const struct sbx_jctx *c, const char *path, const char *fmt, ...)
	_printf_(3, 4);
/* "<source>: <path>: expected <what>, got <describe(v)>".  Returns -1. */
int sbx_json_expected(const struct sbx_jctx *c, const char *path, const json_t *v,
		      const char *what);

/*
 * sbx_json_check_keys() - @v must be an object whose keys are all in the
 * NULL-terminated @known; the first other key is reported by its path.
 */
int sbx_json_check_keys(const struct sbx_jctx *c, const char *path, const json_t *v,
			const char *const *known);

/* Type checks and getters.  Each reports "expected ..." at @path. */
int sbx_json_object(const struct sbx_jctx *c, const char *path, const json_t *v);
int sbx_json_array(const struct sbx_jctx *c, const char *path, const json_t *v, size_t max);
int sbx_json_string(const struct sbx_jctx *c, const char *path, const json_t *v, size_t max_len,
		    char **out);
int sbx_json_bool(const struct sbx_jctx *c, const char *path, const json_t *v, bool *out);
/* A JSON integer (1.0 is not one) in [@min, @max]. */
int sbx_json_uint(const struct sbx_jctx *c, const char *path, const json_t *v, uint64_t min,
		  uint64_t max, uint64_t *out);
/* An integer, or a string "0x..." / decimal for values past JSON's safe
 * integer range (seccomp masks). */
int sbx_json_u64(const struct sbx_jctx *c, const char *path, const json_t *v, uint64_t *out);

/*
 * sbx_json_env() - an object of environment variables at @path (may be
 * absent: an empty list): at most @max_vars names matching
 * [A-Za-z_][A-Za-z0-9_]{0,127}, string values of at most @max_value bytes
 * without control characters.  *@out holds "KEY=VALUE", NULL-terminated.
 */
int sbx_json_env(const struct sbx_jctx *c, const char *path, const json_t *v, size_t max_vars,
		 size_t max_value, char ***out);

/*
 * sbx_json_strv() - an array of at most @max_items strings, each at most
 * @max_len bytes and, when @valid is given, accepted by it (else "expected
 * @what").  Duplicates are an error when @unique.  *@out is NULL-terminated.
 */
int sbx_json_strv(const struct sbx_jctx *c, const char *path, const json_t *v, size_t max_items,
		  size_t max_len, bool (*valid)(const char *), const char *what, bool unique,
		  char ***out);

/* Fetch a member that must be present: "missing required key". */
const json_t *sbx_json_required(const struct sbx_jctx *c, const char *path, const json_t *obj,
				const char *key);

#endif
