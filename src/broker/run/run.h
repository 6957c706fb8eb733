/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run.h - one run, as the orchestrator (run.c) carries it through its
 * stages and the manifest (manifest.c) reports it.
 */
#ifndef SBX_RUN_H
#define SBX_RUN_H

#include <jansson.h>
#include <sys/resource.h>

#include "catalog.h"
#include "cgroup.h"
#include "cli.h"
#include "collect.h"
#include "contract.h"
#include "deliver.h"
#include "hostconfig.h"
#include "inputs.h"
#include "job.h"
#include "policy.h"
#include "sign.h"
#include "state.h"
#include "status-line.h"
#include "streams.h"
#include "supervisor.h"

struct sbx_events;
struct sbx_hold;
struct sbx_proxy;

struct sbx_run {
	const struct sbx_run_opts *opts;
	char run_id[SBX_RUN_ID_LEN + 1];
	char *principal;
	struct sbx_artifacts_dir artifacts; /* --artifacts, opened at the start */
	struct sbx_streams streams; /* --stdout, --stderr, opened at the start */
	struct sbx_deliver deliver; /* --attach, --stdin, --manifest (deliver.h) */
	uint64_t t0_ns;           /* sbx started (monotonic) */
	uint64_t started_at_ms;   /* sbx started (real time) */
	uint64_t ended_at_ms;

	struct sbx_hostconfig cfg;
	struct sbx_key key;       /* the signing key (wiped at the end) */
	struct sbx_catalog cat;
	struct sbx_job job;
	struct sbx_local_inputs locals; /* -i NAME=PATH of a one-line run (inputs.h) */
	json_t *inputs;           /* the manifest's "inputs", once materialized */
	bool job_read;            /* from here on a manifest is printed */
	struct sbx_plan plan;
	bool admitted;
	uid_t host_id;            /* root: the sandbox user's host uid/gid
				   * (rootids.h); (uid_t)-1: the caller's */
	/* An ordinary user with subordinate ids: the sandbox user's host
	 * ids (subids.h); (uid_t)-1 otherwise. */
	uid_t sub_uid;
	gid_t sub_gid;

	/* What happened. */
	enum sbx_status status;
	char reason[256];
	const char *reason_code;  /* a stable name for reason (sbx(1)); NULL with it */
	const char *fetch_code;   /* a remote input's refusal or failure (reasoncode.h) */
	struct sbx_error err;     /* sbx's own failure, if any */
	bool sandboxed;           /* the namespaces were created */
	bool seccomp_applied;
	struct sbx_outcome outcome;
	bool ran;                 /* the supervisor ran */
	bool sandbox_oom_killed;  /* the init was OOM-killed before it could
				   * report the payload's end */
	struct sbx_collection coll;
	struct sbx_contracts contracts; /* the job's outputs (contract.h) */
	bool collected;
	bool partial;
	struct sbx_hold *hold;    /* held outputs (hold.h), NULL when none */

	/* Accounting. */
	struct sbx_cgroup_host cg_host;
	struct sbx_cgroup *cg;
	json_t *cg_isolation;     /* {"version", "controllers"} */
	struct sbx_cgroup_stats stats;
	bool have_stats;
	bool output_quota_hit;
	/* The cap the kernel puts on the caller's processes, the sandbox's
	 * included (nproc.h); RLIM_INFINITY for host root. */
	rlim_t nproc_budget;
	bool nproc_hit;           /* a fork was refused by it, not by pids */
	uint64_t nproc_count;     /* the caller's other tasks, when counted */
	/* How the run started (timing.start): from the profile's template
	 * (@template_digest, its 16 hex digits) or cold; when a template
	 * was wanted but not used, @template_fallback says why. */
	bool from_template;
	char template_digest[17];
	char template_fallback[192];   /* "": none */
	bool validated;           /* the validator ran: validate_ms is its time */
	uint64_t validate_ms;     /* wall time of validation (timing.validate_ms) */

	/* Network: the egress proxy while the payload runs, and its summary
	 * for the manifest ("network"; NULL for a disabled profile). */
	struct sbx_proxy *proxy;
	json_t *network;

	struct sbx_run_state *state;
	char *temp_dir;           /* $TMPDIR/sbx-run-<id>-<random>: holds the quarantine */
	const char *state_dir;    /* the caller's state dir (state.h) */
	int temp_fd;              /* that directory, opened when made; -1 */

	struct sbx_events *ev;
	json_t *events;           /* [{"event", "t_ms"}] for the manifest */
	struct sbx_status_line status_line; /* on a terminal, while the payload runs */
	const char *stage;        /* what the status line says */
};

/* principal.c: --principal, else the caller's login name; -1 after
 * saying why there is none (a usage error). */
int sbx_run_principal(const struct sbx_run_opts *o, char **out);

/* manifest.c: the manifest of @run as a JSON object (unsigned). */
json_t *sbx_manifest_build(const struct sbx_run *run);

/* run-status.c: the run's status, reason and reason_code.  sbx_run_decide
 * judges the payload's end (and the caller's RLIMIT_NPROC, nproc.h);
 * sbx_run_check_required turns a success into a failure when a required
 * output was not promoted, or (on_rejected_output "fail") any was refused; sbx_run_fail records sbx's own error. */
void sbx_run_decide(struct sbx_run *run);
void sbx_run_check_required(struct sbx_run *run);
void sbx_run_fail(struct sbx_run *run);

/* run-temp.c: the run's private temp dir (run->temp_dir, run->temp_fd).
 * A fresh unpredictable path; whether one can be made in the temp base
 * at all (69 with a Hint, before the payload runs); made 0700 when there
 * is something to collect; removed if the name is still that directory. */
char *sbx_run_temp_path(const char *run_id);
int sbx_run_temp_check_base(struct sbx_run *run);
int sbx_run_temp_make(struct sbx_run *run);
void sbx_run_temp_remove(struct sbx_run *run);

/* run-template.c: whether the run starts from its profile's template
 * (sets @sp's template_sock and template_digest, with @pl holding them,
 * or run->template_fallback), and, after sbx_spawn_start(), what the
 * manifest says of it. */
struct sbx_spawn;
struct sbx_template_place;
void sbx_run_template_choose(struct sbx_run *run, struct sbx_spawn *sp,
			     struct sbx_template_place *pl);
void sbx_run_template_note(struct sbx_run *run, const struct sbx_spawn *sp);

/* Record a lifecycle event in the manifest and the --events stream. */
void sbx_run_event(struct sbx_run *run, const char *event, const char *detail);

#endif
