/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h - what each subcommand receives from sbx.c once its options are
 * parsed, and the entry points that implement them.  Each returns the
 * process exit code; diagnostics have been printed on stderr.
 */
#ifndef SBX_CLI_H
#define SBX_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "oneliner.h"

struct sbx_common_opts {
	const char *config;  /* --config FILE */
	const char *policy;  /* --policy DIR */
	int verbosity;       /* -q: -1, default 0, -v: 1.. */
	bool json;           /* --json (check, profiles): JSON on stdout */
};

struct sbx_run_opts {
	struct sbx_common_opts common;
	const char *job;          /* path or "-" */
	const char *principal;
	const char *store;
	const char *artifacts;
	const char *artifacts_parent; /* no --artifacts: PARENT/RUN_ID (default sbx-runs) */
	const char *stdout_file;  /* --stdout FILE, or NULL: beside the artifacts */
	const char *stderr_file;  /* --stderr FILE */
	/* --attach (or stdout a terminal, decided by sbx.c): the payload's
	 * stdout and stderr reach sbx's live, the manifest goes elsewhere
	 * (deliver.h).  Never for a batch's runs. */
	bool attach;
	bool stdin_pipe;          /* --stdin: sbx's stdin is the payload's, through a pipe */
	const char *manifest_file; /* --manifest FILE */
	bool manifest_fd_set;     /* --manifest-fd N */
	int manifest_fd;
	const char *key;
	const char *events;
	uint64_t queue_timeout_ms;
	struct sbx_oneliner one;  /* -p PROFILE ...: the job built from options */
	bool print_job;           /* --print-job: print the one-liner's job, run nothing */
	bool dry_run;             /* --dry-run: admit and print the plan, run nothing */
	bool no_template;         /* --no-template: start cold (sbx(1) TEMPLATES) */
	/* sbx prepare (prepare.c): the step's command instead of the job's,
	 * its output root taken as the prepared tree, no manifest. */
	struct sbx_prepare_run *prepare;
};

struct sbx_promote_opts {
	struct sbx_common_opts common;
	const char *run_id;
	char *const *paths;      /* PATH... (n_paths of them), or none: all */
	size_t n_paths;
	const char *artifacts;   /* --artifacts DIR, or NULL: sbx-runs/RUN_ID/promoted */
	const char *key;         /* --key FILE */
};

struct sbx_prepare_run;
int sbx_cmd_run(const struct sbx_run_opts *o);
/* hold.c: release held outputs, print a signed promote manifest. */
int sbx_cmd_promote(const struct sbx_promote_opts *o);
int sbx_cmd_check(const struct sbx_common_opts *o);
int sbx_cmd_profiles(const struct sbx_common_opts *o);
int sbx_cmd_verify(const struct sbx_common_opts *o, const char *manifest, const char *pubkey,
		   const char *artifacts);
int sbx_cmd_keygen(const struct sbx_common_opts *o, const char *out);
int sbx_cmd_cancel(const struct sbx_common_opts *o, const char *run_id);
int sbx_cmd_gc(const struct sbx_common_opts *o);
/* prepare.c: `sbx prepare [PROFILE...]`; @names NULL-terminated, may be empty. */
int sbx_cmd_prepare(const struct sbx_common_opts *o, char *const *names);
/* template.c: `sbx template start|stop|status [-p PROFILE]`; @profile NULL:
 * every profile with a template. */
int sbx_cmd_template(const struct sbx_common_opts *o, const char *verb, const char *profile);
/* ps.c: the live runs the caller may see, as a table or (@json) a JSON array. */
int sbx_cmd_ps(const struct sbx_common_opts *o, bool json);

#endif
