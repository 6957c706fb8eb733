/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run-status.c - what a run's status, reason and reason_code are: from the
 * payload's end and the cgroup's counters (sbx_run_decide), from the
 * required outputs after validation (sbx_run_check_required), or from
 * sbx's own error (sbx_run_fail).  Nothing here acts on the run; it only
 * reads what the stages recorded in struct sbx_run and names the outcome.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nproc.h"
#include "run.h"

/* The reason_code of an error's exit class: what a run that ended in an
 * error (not in its payload's outcome) says beside its reason.  The
 * errors of 124, 130 and 137 come from extracting archives, before the
 * payload: the deadline, a cancellation, the memory limit. */
static const char *error_reason_code(int code)
{
	switch (code) {
	case SBX_EXIT_INVALID:
		return "invalid_job";
	case SBX_EXIT_REFUSED:
		return "policy_refused";
	case SBX_EXIT_CAPACITY:
		return "no_capacity";
	case SBX_EXIT_UNAVAILABLE:
		return "isolation_unavailable";
	case SBX_EXIT_TIMEOUT:
		return "wall_timeout";
	case SBX_EXIT_CANCELLED:
		return "cancelled";
	case SBX_EXIT_LIMIT:
		return "memory_limit";
	default:
		return "internal_error";
	}
}

/* The end of a run that sbx itself could not carry out. */
void sbx_run_fail(struct sbx_run *run)
{
	char buf[sizeof(run->err.msg) + 128];

	run->status = sbx_status_from_exit(run->err.code);
	snprintf(run->reason, sizeof(run->reason), "%s", sbx_error_text(&run->err, buf, sizeof(buf)));
	run->reason_code = error_reason_code(run->err.code);
	/* A remote input that ended the run names its own cause. */
	if (run->fetch_code && (run->err.code == SBX_EXIT_REFUSED || run->err.code == SBX_EXIT_FAILED))
		run->reason_code = run->fetch_code;
}

/* The sandbox's most tasks at once: pids.peak, else its limit. */
static uint64_t nproc_peak(const struct sbx_run *run)
{
	return run->have_stats && run->stats.has_pids_peak ? run->stats.pids_peak :
							     run->plan.limits.v[SBX_LIMIT_PIDS];
}

/*
 * A payload that failed without a fork refused by pids.max may have had
 * one refused by the caller's RLIMIT_NPROC instead, which also counts the
 * caller's processes outside the sandbox (nproc.c).  No counter records
 * that refusal, so it is judged from the counts: the caller's tasks now
 * (the sandbox's are gone with its init), the sandbox's peak and the
 * refused fork together at the cap.  Only then is the limit named; a
 * payload that failed with room to spare failed on its own.
 */
static void check_nproc(struct sbx_run *run)
{
	const struct sbx_outcome *o = &run->outcome;

	if (run->nproc_budget == RLIM_INFINITY || !o->exited || o->term != SBX_TERM_NONE ||
	    (WIFEXITED(o->wait_status) && WEXITSTATUS(o->wait_status) == 0) ||
	    (run->have_stats && (run->stats.pids_events_max > 0 || run->stats.oom_kills > 0)))
		return;
	if (sbx_nproc_count(getuid(), &run->nproc_count) < 0)
		return;
	/* Slack: the broker's helper threads and processes that came and
	 * went between the refused fork and the count. */
	run->nproc_hit = sbx_nproc_exhausted(run->nproc_count, nproc_peak(run), run->nproc_budget, 2);
}

static void decide_status(struct sbx_run *run)
{
	const struct sbx_outcome *o = &run->outcome;
	bool oom = run->have_stats && run->stats.oom_kills > 0;
	bool pids = run->have_stats && run->stats.pids_events_max > 0;

	run->partial = true;
	if (o->term == SBX_TERM_CANCEL) {
		run->status = SBX_STATUS_CANCELLED;
		snprintf(run->reason, sizeof(run->reason), "cancelled by the caller");
		run->reason_code = "cancelled";
		return;
	}
	if (o->term == SBX_TERM_TIMEOUT) {
		run->status = SBX_STATUS_TIMED_OUT;
		snprintf(run->reason, sizeof(run->reason), "wall_seconds %llu reached%s",
			 (unsigned long long)run->plan.limits.v[SBX_LIMIT_WALL_SECONDS],
			 o->killed ? "; killed after grace_seconds" : "");
		run->reason_code = "wall_timeout";
		return;
	}
	if (!o->exited && o->init_sigkilled && oom) {
		/* The OOM killer took the init itself before it could report:
		 * on v2 memory.oom.group kills the whole group at once, and on
		 * v1 a payload that lowered its oom_score_adj back to the
		 * init's, with memory no process owns (tmpfs pages, socket
		 * buffers), can leave the init the kernel's choice.  Either way
		 * the payload ran into its memory limit; it died with the pid
		 * namespace, of SIGKILL. */
		run->status = SBX_STATUS_LIMIT_EXCEEDED;
		run->sandbox_oom_killed = true;
		snprintf(run->reason, sizeof(run->reason),
			 "memory: memory_mib %llu exceeded (OOM kill of the whole sandbox)",
			 (unsigned long long)run->plan.limits.v[SBX_LIMIT_MEMORY_MIB]);
		run->reason_code = "memory_limit";
		return;
	}
	if (!o->exited) {
		run->status = SBX_STATUS_ERROR;
		snprintf(run->reason, sizeof(run->reason), "%s",
			 o->template_lost ? "the template exited, and the sandbox with it, before "
					    "the payload's exit was reported" :
					    "the sandbox ended without reporting the payload's exit");
		run->reason_code = "sandbox_lost";
		return;
	}
	if (WIFSIGNALED(o->wait_status) && WTERMSIG(o->wait_status) == SIGKILL && oom) {
		run->status = SBX_STATUS_LIMIT_EXCEEDED;
		snprintf(run->reason, sizeof(run->reason), "memory: memory_mib %llu exceeded (OOM kill)",
			 (unsigned long long)run->plan.limits.v[SBX_LIMIT_MEMORY_MIB]);
		run->reason_code = "memory_limit";
		return;
	}
	if (!(WIFEXITED(o->wait_status) && WEXITSTATUS(o->wait_status) == 0)) {
		/* The payload's own exit decides; a limit it ran into is the
		 * likely cause and is named. */
		if (pids || run->output_quota_hit) {
			run->status = SBX_STATUS_LIMIT_EXCEEDED;
			snprintf(run->reason, sizeof(run->reason), "%s",
				 pids ? "pids: fork failed at the pids limit" :
					"output: the output quota (output_bytes/output_files) was exhausted");
			run->reason_code = pids ? "pids_limit" : "output_quota";
			return;
		}
		if (run->nproc_hit) {
			run->status = SBX_STATUS_LIMIT_EXCEEDED;
			snprintf(run->reason, sizeof(run->reason),
				 "nproc: fork failed at the caller's RLIMIT_NPROC %llu, which counts "
				 "every process of uid %u on the host (%llu outside the sandbox, "
				 "%llu in it at the peak; pids %llu not reached)",
				 (unsigned long long)run->nproc_budget, (unsigned)getuid(),
				 (unsigned long long)run->nproc_count,
				 (unsigned long long)nproc_peak(run),
				 (unsigned long long)run->plan.limits.v[SBX_LIMIT_PIDS]);
			run->reason_code = "nproc_limit";
			return;
		}
		/* A payload that ran to its own end is complete, only
		 * unsuccessful: partial_outputs is for runs cut short. */
		run->partial = false;
		run->status = SBX_STATUS_FAILED;
		if (WIFEXITED(o->wait_status))
			snprintf(run->reason, sizeof(run->reason), "payload exited with code %d",
				 WEXITSTATUS(o->wait_status));
		else
			snprintf(run->reason, sizeof(run->reason), "payload died of signal %d",
				 WTERMSIG(o->wait_status));
		run->reason_code = WIFEXITED(o->wait_status) ? "exit_nonzero" : "signal";
		return;
	}
	run->partial = false;
	run->status = SBX_STATUS_SUCCEEDED;
}

/* One required output must have been promoted for "succeeded". */
static bool required_ok(struct sbx_run *run, const char *path)
{
	const struct sbx_artifact *a = run->collected ? sbx_collection_find(&run->coll, path) : NULL;

	if (a && a->status == SBX_ARTIFACT_PROMOTED)
		return true;
	run->status = SBX_STATUS_FAILED;
	if (a && a->contract && !a->contract->ok) {
		const struct sbx_contract_failure *f = &a->contract->fail[0];

		snprintf(run->reason, sizeof(run->reason),
			 "required output \"%s\" failed its contract: %s: %s%s", path, f->check,
			 f->detail, a->contract->count > 1 ? " (and more)" : "");
		run->reason_code = "output_contract";
		return false;
	}
	snprintf(run->reason, sizeof(run->reason), "required output \"%s\" %s", path,
		 a ? "was rejected" : "is missing");
	run->reason_code = a ? "required_output_rejected" : "required_output_missing";
	return false;
}

/* Required outputs (required_outputs, and every contract not marked
 * "required": false) must have been promoted for "succeeded". */
void sbx_run_check_required(struct sbx_run *run)
{
	if (run->status != SBX_STATUS_SUCCEEDED)
		return;
	for (char **r = run->job.required_outputs; r && *r; r++)
		if (!required_ok(run, *r))
			return;
	for (size_t i = 0; i < run->contracts.n; i++)
		if (run->contracts.v[i].required && !required_ok(run, run->contracts.v[i].path))
			return;
	/* on_rejected_output "fail": any refused output, the first named.
	 * What passed is still promoted; the status tells a back end that
	 * the run did not give it everything it wrote. */
	for (size_t i = 0; run->job.fail_on_rejected && run->collected && i < run->coll.n; i++) {
		const struct sbx_artifact *a = &run->coll.items[i];

		if (a->status != SBX_ARTIFACT_REJECTED)
			continue;
		run->status = SBX_STATUS_FAILED;
		snprintf(run->reason, sizeof(run->reason),
			 "output \"%s\" was rejected (%s) and on_rejected_output is \"fail\"", a->path,
			 a->reason_code ? a->reason_code : "rejected");
		run->reason_code = "output_rejected";
		return;
	}
}

void sbx_run_decide(struct sbx_run *run)
{
	check_nproc(run);
	decide_status(run);
}
