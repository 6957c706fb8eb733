/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job.h - the typed job file (SPEC §3), parsed strictly.
 *
 * Parsing checks the schema only (types, shapes, bounds): what a job
 * *may* do is decided later against the catalog by sbx_policy_admit().
 */
#ifndef SBX_JOB_H
#define SBX_JOB_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "joblimits.h"

/* Schema bounds.  A job over any of these is invalid (65). */
#define SBX_JOB_MAX_BYTES (1u << 20)     /* the job file itself */
#define SBX_JOB_MAX_HANDLES 64
#define SBX_JOB_MAX_ARGS 256
#define SBX_JOB_MAX_ARG_LEN 4096
#define SBX_JOB_MAX_ENV 64
#define SBX_JOB_MAX_ENV_KEY 128
#define SBX_JOB_MAX_ENV_VALUE 4096
#define SBX_JOB_MAX_CODE_BYTES (SBX_JOB_MAX_BYTES - 1024)
#define SBX_JOB_MAX_OUTPUT_TYPES 32
#define SBX_JOB_MAX_REQUIRED 64
#define SBX_JOB_MAX_PATH_LEN 255
#define SBX_JOB_MAX_NAME_LEN 64  /* profile names */

/* hold: kept outside --artifacts until `sbx promote` (src/broker/hold.c). */
#define SBX_JOB_MAX_FETCH 32
#define SBX_JOB_MAX_URL_LEN 2048

/* One remote input (job "fetch"): got by the confined fetcher before the
 * payload starts, under the job's fetch_profile, into /work/in/<as>. */
struct sbx_fetch_entry {
	char *url;        /* http:// or https://, printable ASCII */
	char *as;         /* an input name, as a handle's */
	uint64_t max_bytes; /* 0: the profile's max_file_bytes */
	char *media_type; /* NULL: any; else the response's Content-Type */
	char *sha256;     /* 64 lowercase hex digits, or NULL: not pinned */
};

enum sbx_partial { SBX_PARTIAL_DISCARD, SBX_PARTIAL_RETAIN, SBX_PARTIAL_HOLD };

struct sbx_job {
	char *source;            /* file name for messages ("job.json", "<stdin>") */
	unsigned char sha256[32];/* of the raw job bytes, after sbx_job_digest() */
	bool digested;
	char *raw;               /* the bytes as read */
	size_t raw_len;
	char **input_handles;    /* NULL-terminated, never NULL after parse */
	char **extract;          /* subset of input_handles */
	char *runtime_profile;
	char *network_profile;   /* NULL: "disabled" */
	char *fetch_profile;     /* NULL: none (then no fetch entries) */
	struct sbx_fetch_entry *fetch;
	size_t n_fetch;
	char *code;              /* exactly one of code / code_handle */
	size_t code_len;
	char *code_handle;
	char **args;
	char **env;              /* "KEY=VALUE" strings */
	struct sbx_limits limits;/* only the keys the job gave */
	char **allowed_outputs;  /* NULL when the job omitted it: profile's list */
	char **required_outputs;
	json_t *outputs;         /* the contracts' object as given, or NULL
				  * (parsed at admission: contract.h) */
	enum sbx_partial partial_outputs;
	/* on_rejected_output "fail": a refused output fails the run (exit 1,
	 * reason_code output_rejected); "keep", the default, leaves the
	 * status to the payload's exit and required_outputs. */
	bool fail_on_rejected;
};

/*
 * sbx_job_parse() - parse job bytes.
 * @source: name used in messages.  On error returns -1 with @err set to
 * SBX_EXIT_INVALID and a message "<source>: <json path>: expected ..., got ...".
 * job->source and job->raw (the bytes, for sbx_job_digest) are set even on error, so an
 * invalid job still gets a manifest; call sbx_job_free() in every case.
 */
int sbx_job_parse(struct sbx_job *job, const char *source, const char *data, size_t len,
		  struct sbx_error *err);

/* Read @path ("-" = stdin) with the size cap, then sbx_job_parse(). */
int sbx_job_load(struct sbx_job *job, const char *path, struct sbx_error *err);

/* Fill job->sha256 from the bytes as read (also after a parse error).
 * Returns 0, or -1 when libcrypto fails or nothing was read. */
int sbx_job_digest(struct sbx_job *job);

void sbx_job_free(struct sbx_job *job);

/* ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$ */
bool sbx_handle_name_valid(const char *s);

/*
 * sbx_job_parse_fetch() - the job's "fetch" and "fetch_profile" (job-fetch.c):
 * the shape of each entry (65 naming the JSON path); whether the catalog
 * allows it is admission's (policy.c).  An "as" that is also one of
 * input_handles, or given twice, is invalid.
 */
struct sbx_jctx;
int sbx_job_parse_fetch(const struct sbx_jctx *c, const json_t *root, struct sbx_job *job);
void sbx_job_free_fetch(struct sbx_job *job);

#endif
