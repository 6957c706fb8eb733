/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * error.h - the error object and the public exit codes.
 *
 * A function that can fail returns int (< 0 on error) and takes a
 * struct sbx_error * last.  The error carries the exit class the CLI will
 * use, so a refusal deep inside policy code surfaces as 77 without the
 * callers having to know.  Outcomes of the payload (failed, timed out, ...)
 * are not errors and travel in struct sbx_outcome instead.
 */
#ifndef SBX_ERROR_H
#define SBX_ERROR_H

#include "util.h"

/* Public exit codes of `sbx run` (SPEC §2).  Fixed forever. */
enum sbx_exit {
	SBX_EXIT_OK = 0,
	SBX_EXIT_FAILED = 1,
	SBX_EXIT_USAGE = 64,
	SBX_EXIT_INVALID = 65,
	SBX_EXIT_UNAVAILABLE = 69,
	SBX_EXIT_SOFTWARE = 70,
	SBX_EXIT_CAPACITY = 75,
	SBX_EXIT_REFUSED = 77,
	SBX_EXIT_TIMEOUT = 124,
	SBX_EXIT_CANCELLED = 130,
	SBX_EXIT_LIMIT = 137,
};

/* Run status; the names match the manifest's status strings one to one. */
enum sbx_status {
	SBX_STATUS_SUCCEEDED,
	SBX_STATUS_FAILED,
	SBX_STATUS_INVALID,
	SBX_STATUS_REFUSED,
	SBX_STATUS_REJECTED_CAPACITY,
	SBX_STATUS_TIMED_OUT,
	SBX_STATUS_CANCELLED,
	SBX_STATUS_LIMIT_EXCEEDED,
	SBX_STATUS_ISOLATION_UNAVAILABLE,
	SBX_STATUS_ERROR,
};

const char *sbx_status_name(enum sbx_status s);
int sbx_status_exit(enum sbx_status s);
/* Status for an error's exit class (65 -> invalid, 77 -> refused, ...). */
enum sbx_status sbx_status_from_exit(int code);

struct sbx_error {
	int code;      /* enum sbx_exit; 0 when no error is set */
	int errnum;    /* errno at the failure, or 0 */
	char msg[1024];
	char hint[1024]; /* room for the host config file (sbx_hint_add_config) */
	/* Where in the input the error is, for --json (sbx_error_locate()):
	 * the file as named and the JSON path ("" for the whole document);
	 * has_path false when the error is not at a JSON value. */
	char file[256];
	char path[256];
	bool has_path;
};

/*
 * sbx_error_set() - record an error and return -1.
 * @code: enum sbx_exit class; @errnum: errno or 0 (appended as ": %m").
 * The first error set wins: later calls do not overwrite it, so the root
 * cause survives cleanup failures.  @err may be NULL.
 */
int sbx_error_set(struct sbx_error *err, int code, int errnum, const char *fmt, ...) _printf_(4, 5);
/* Attach a "Hint:" line (what host setting to change). */
void sbx_error_hint(struct sbx_error *err, const char *fmt, ...) _printf_(2, 3);
/*
 * The host config file in use, as a note for hints: "the host config is
 * FILE", or where to create one.  Once set, every hint that mentions the
 * host config gets it appended in parentheses (sbx_hint_add_config() does
 * that to a hint made elsewhere).  NULL clears it.
 */
void sbx_error_config_note(const char *note);
void sbx_hint_add_config(char *hint, size_t size);
/* Prepend context ("job.json: ") to an already set message. */
void sbx_error_prefix(struct sbx_error *err, const char *fmt, ...) _printf_(2, 3);
/*
 * sbx_error_locate() - the file (and, @path not NULL, the JSON path) the
 * error just set is about; sets nothing when @err has none set.
 */
void sbx_error_locate(struct sbx_error *err, const char *file, const char *path);
/*
 * Print "sbx: <msg>[: <strerror>]" and, if set, "sbx: Hint: <hint>".
 * Under sbx_error_json(true) a usage (64) or data (65) error is one JSON
 * line instead, schema/error.schema.json: {"error", "hint", "exit", "file",
 * "path"}, so that a back end never parses the prose.
 */
void sbx_error_print(const struct sbx_error *err);
/* --json: print 64 and 65 as one JSON line on stderr from here on. */
void sbx_error_json(bool on);
bool sbx_error_json_on(void);
/* The JSON line of an error of class @code with @msg and @hint (NULL: no
 * hint), @file and @path (NULL: none), on stderr (for errors that are not
 * in a struct sbx_error, such as usage errors of the command line). */
void sbx_error_print_json(int code, const char *msg, const char *hint, const char *file,
			  const char *path);
/* The message with errno text, as one string, into @buf. */
const char *sbx_error_text(const struct sbx_error *err, char *buf, size_t len);

/* One-line diagnostics on stderr, "sbx: ..." */
void sbx_warn(const char *fmt, ...) _printf_(1, 2);

#endif
