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

struct sbx_common_opts {
	const char *config;  /* --config FILE */
	const char *policy;  /* --policy DIR */
	int verbosity;       /* -q: -1, default 0, -v: 1.. */
};

struct sbx_run_opts {
	struct sbx_common_opts common;
	const char *job;          /* path or "-" */
	const char *principal;
	const char *store;
	const char *artifacts;
	const char *key;
	const char *events;
	uint64_t queue_timeout_ms;
};

int sbx_cmd_run(const struct sbx_run_opts *o);
int sbx_cmd_check(const struct sbx_common_opts *o);
int sbx_cmd_profiles(const struct sbx_common_opts *o);
int sbx_cmd_verify(const struct sbx_common_opts *o, const char *manifest, const char *pubkey,
		   const char *artifacts);
int sbx_cmd_keygen(const struct sbx_common_opts *o, const char *out);
int sbx_cmd_cancel(const struct sbx_common_opts *o, const char *run_id);
int sbx_cmd_gc(const struct sbx_common_opts *o);
/* ps.c: the live runs the caller may see, as a table or (@json) a JSON array. */
int sbx_cmd_ps(const struct sbx_common_opts *o, bool json);

#endif
