/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * oneliner.h - `sbx run -p PROFILE ... (-c CODE | -- FILE) [ARGS...]`: a
 * job built from command-line options.
 *
 * The options become a JSON object exactly as a job file would hold it,
 * serialized canonically (RFC 8785), and those bytes go through the job
 * file's parser and admission: the same rules, the same errors, and the
 * manifest's job_sha256 is the digest of the job shown by --print-job.
 */
#ifndef SBX_ONELINER_H
#define SBX_ONELINER_H

#include <stddef.h>

#include "error.h"
#include "job.h"

struct sbx_oneliner {
	const char *profile;          /* -p; NULL: no one-line run */
	const char *network;          /* -n */
	const char **handles;         /* -i, NULL-terminated (or NULL): store handles,
				       * and local files (NAME=PATH, PATH with '/') */
	const char **limits;          /* --limit KEY=VALUE */
	const char **allow;           /* --allow TYPE */
	const char **require;         /* --require PATH */
	const char *code;             /* -c */
	const char *file;             /* -- FILE: its bytes are the code ("-": stdin) */
	const char *const *args;      /* the job's args, NULL-terminated */
};

/* What a one-line job is called in messages, where a job file's name goes. */
#define SBX_ONELINER_SOURCE "<command line>"

/*
 * sbx_oneliner_build() - the canonical job bytes for @o.
 * Errors: SBX_EXIT_USAGE for an option that cannot be a job member at all
 * (a --limit without "=", one given twice); SBX_EXIT_INVALID when FILE
 * cannot be read, is larger than a job's code may be, or a text is not
 * UTF-8 (as a job file with such code would be).  Whatever the JSON
 * holds is judged later by the job parser, as in a file.
 */
int sbx_oneliner_build(const struct sbx_oneliner *o, char **job, size_t *len,
		       struct sbx_error *err);

/*
 * A run builds its one-line job at the start, with the options (a usage
 * error stops it there, 64), and parses it where a job file is read, so
 * that SPEC §2's order holds and an invalid one gets a manifest.
 */
struct sbx_oneliner_job {
	char *bytes;
	size_t len;
	struct sbx_error err;     /* a build error other than usage, for the job stage */
};

/* A usage error of the one-liner's options, and where to look (64). */
void sbx_oneliner_usage_print(const struct sbx_error *err);

/* Returns 0, or the exit code after printing a usage error. */
int sbx_oneliner_prepare(const struct sbx_oneliner *o, struct sbx_oneliner_job *j);

/* The local files of -i (inputs.h) into @li: 0, or the exit code after
 * printing a usage error.  Release @li with sbx_local_inputs_free(). */
struct sbx_local_inputs;
int sbx_oneliner_locals(const struct sbx_oneliner *o, struct sbx_local_inputs *li);

/* sbx_job_parse() of the prepared bytes, or the build's error with
 * job->source set (as sbx_job_load() does for an unreadable file). */
int sbx_oneliner_load(struct sbx_job *job, const struct sbx_oneliner_job *j,
		      struct sbx_error *err);

void sbx_oneliner_job_free(struct sbx_oneliner_job *j);

/* `sbx run --print-job` and `--dry-run` (preview.c): the exit code. */
struct sbx_run_opts;
int sbx_run_preview(const struct sbx_run_opts *o);

#endif
