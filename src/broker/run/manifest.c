/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * manifest.c - what a run did, as one JSON object (SPEC §7).
 *
 * Every field is always present (null where it does not apply), so that a
 * consumer can rely on the shape for refused and failed runs too.  Strings
 * that came from the job or the payload go through
 * sbx_canonjson_clean_string(): valid UTF-8, no control characters, bounded;
 * the stdout and stderr excerpts through sbx_canonjson_clean_text(), which
 * keeps their newlines, tabs and escape sequences (escaped in the JSON).
 * Signing and canonical serialization happen in manifest-sign.c.
 */
#include "config.h"

#include <sys/resource.h>

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "canonjson.h"
#include "excerpt.h"
#include "traceback.h"
#include "run.h"
#include "mediatype.h"
#include "verdict.h"

/* 2: excerpts keep C0 control characters (escaped); in 1 they were
 * U+FFFD, and a consumer could print an excerpt to a terminal as it was.
 * 3: an excerpt is the capture's head and tail (excerpt.h), with
 * excerpt_truncated beside the capture's own truncated, and "stdin". */
#define MANIFEST_VERSION 3
#define REASON_BYTES 512

static json_t *clean(const char *s, size_t len, size_t max)
{
	bool truncated;
	char *c;
	json_t *j;

	if (!s)
		return json_null();
	c = sbx_canonjson_clean_string(s, len, max, &truncated);
	j = json_string(c ? c : "");
	free(c);
	return j;
}


static json_t *cstr(const char *s)
{
	return s ? clean(s, strlen(s), REASON_BYTES) : json_null();
}

/* {"name", "sha256"} of a catalog entry: the name the job asked for, and
 * the digest of the file that applied (null when none did). */
static json_t *catalog_ref(const char *requested, const char *raw, size_t raw_len)
{
	char sha[65];

	if (!requested)
		return json_null();
	return json_pack("{s:o,s:o}", "name", cstr(requested), "sha256",
			 raw && sbx_catalog_sha256(raw, raw_len, sha) == 0 ? json_string(sha) :
									      json_null());
}

static const char *signal_name(int sig)
{
	static char buf[16];
	const char *abbrev = sigabbrev_np(sig);

	if (!abbrev) {
		snprintf(buf, sizeof(buf), "SIG%d", sig);
		return buf;
	}
	snprintf(buf, sizeof(buf), "SIG%s", abbrev);
	return buf;
}

static json_t *exit_record(const struct sbx_run *run)
{
	const struct sbx_outcome *o = &run->outcome;

	if (!run->ran || !o->exited) {
		/* Killed with the whole namespace before the init could
		 * report: by us after the grace period, or by the OOM killer. */
		if (run->ran && (o->killed || run->sandbox_oom_killed))
			return json_pack("{s:s}", "signal", "SIGKILL");
		return json_null();
	}
	if (WIFEXITED(o->wait_status))
		return json_pack("{s:i}", "code", WEXITSTATUS(o->wait_status));
	if (WIFSIGNALED(o->wait_status))
		return json_pack("{s:s}", "signal", signal_name(WTERMSIG(o->wait_status)));
	return json_null();
}

static uint64_t ms(uint64_t ns)
{
	return ns / 1000000ull;
}

/* The broker's own CPU time so far (its threads, not its children): what
 * sbx itself cost, outside the run's cgroup. */
static uint64_t sbx_cpu_ms(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (uint64_t)ru.ru_utime.tv_sec * 1000 + (uint64_t)ru.ru_utime.tv_usec / 1000 +
	       (uint64_t)ru.ru_stime.tv_sec * 1000 + (uint64_t)ru.ru_stime.tv_usec / 1000;
}

static json_t *timing(const struct sbx_run *run)
{
	const struct sbx_outcome *o = &run->outcome;
	char started[32], ended[32];
	uint64_t wall = 0, startup = 0;

	sbx_format_rfc3339_ms(run->started_at_ms, started);
	sbx_format_rfc3339_ms(run->ended_at_ms, ended);
	if (run->ran && o->started && o->t_end_ns > o->t_exec_ns)
		wall = ms(o->t_end_ns - o->t_exec_ns);
	if (run->ran && o->started)
		startup = ms(o->t_exec_ns - run->t0_ns);
	return json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:o,s:o}", "started_at", started,
			 "ended_at", ended, "wall_ms", (json_int_t)wall, "startup_ms",
			 (json_int_t)startup, "validate_ms",
			 (json_int_t)(run->validated ? run->validate_ms : 0), "sbx_cpu_ms",
			 (json_int_t)sbx_cpu_ms(), "cpu_user_ms",
			 (json_int_t)(run->have_stats ? run->stats.cpu_user_usec / 1000 : 0),
			 "cpu_system_ms",
			 (json_int_t)(run->have_stats ? run->stats.cpu_system_usec / 1000 : 0),
			 "start", run->from_template ? "template" : "cold", "template",
			 run->from_template ? json_string(run->template_digest) : json_null(),
			 "template_fallback",
			 run->template_fallback[0] ? json_string(run->template_fallback) :
						     json_null());
}

static json_t *usage(const struct sbx_run *run)
{
	json_t *u = json_pack(
		"{s:I,s:I,s:I,s:I,s:b}", "peak_memory_bytes",
		(json_int_t)(run->have_stats && run->stats.has_peak_memory ? run->stats.peak_memory_bytes : 0),
		"output_bytes", (json_int_t)(run->collected ? run->coll.bytes_found : 0), "output_files",
		(json_int_t)(run->collected ? run->coll.files_found : 0), "oom_kills",
		(json_int_t)(run->have_stats ? run->stats.oom_kills : 0),
		"output_quota_hit", run->output_quota_hit);

	json_object_set_new(u, "pids_peak",
			    run->have_stats && run->stats.has_pids_peak ?
				    json_integer((json_int_t)run->stats.pids_peak) :
				    json_null());
	json_object_set_new(u, "pids_limit_hit",
			    json_boolean(run->have_stats && run->stats.pids_events_max > 0));
	return u;
}

static json_t *stream(const struct sbx_run *run, const struct sbx_stream *s)
{
	size_t left_out;
	_cleanup_free_ char *ex = NULL;

	if (!run->ran)
		return json_null();
	ex = sbx_excerpt(s->buf, s->len, &left_out);
	return json_pack("{s:I,s:s,s:b,s:s,s:b}", "bytes", (json_int_t)s->bytes, "sha256", s->sha256,
			 "truncated", s->truncated, "excerpt", ex, "excerpt_truncated",
			 left_out > 0);
}

/*
 * The exception a Python payload's stderr ends with (traceback.h), for
 * python profiles (the interpreter is python*): null when there is none,
 * when the capture was cut short (its end is not the stream's end), or for
 * another interpreter.  "claimed_by": the payload printed it; sbx checked
 * nothing of it, and the run's status does not depend on it.
 */
static json_t *error_claim(const struct sbx_run *run)
{
	const struct sbx_stream *s = &run->outcome.err;
	const char *argv0, *base;
	struct sbx_traceback tb;

	if (!run->ran || !run->admitted || !run->plan.profile->argv || s->truncated || !s->buf)
		return json_null();
	argv0 = run->plan.profile->argv[0];
	base = argv0 ? strrchr(argv0, '/') : NULL;
	base = base ? base + 1 : argv0;
	if (!base || strncmp(base, "python", 6) != 0 || !sbx_traceback_find(s->buf, s->len, &tb))
		return json_null();
	return json_pack("{s:s,s:o,s:o,s:o,s:I}", "claimed_by", "payload", "type", cstr(tb.type),
			 "message", cstr(tb.message), "file", cstr(tb.file), "line",
			 (json_int_t)tb.line);
}

/* --stdin: what was passed to the payload; null without it. */
static json_t *stdin_record(const struct sbx_run *run)
{
	const struct sbx_stdin_tally *t = &run->outcome.in;

	if (!run->ran || !t->used)
		return json_null();
	return json_pack("{s:I,s:s,s:b}", "bytes", (json_int_t)t->bytes, "sha256", t->sha256,
			 "complete", t->complete);
}

static json_t *isolation(const struct sbx_run *run)
{
	static const char *const ns[] = { "user", "mount", "pid", "net", "ipc", "uts", "cgroup" };
	json_t *names = json_array();

	if (run->sandboxed)
		for (size_t i = 0; i < ARRAY_SIZE(ns); i++)
			json_array_append_new(names, json_string(ns[i]));
	/* memfd_noexec: the sandbox's vm.memfd_noexec (2: no memfd can be
	 * executed), null where the kernel has no such setting. */
	return json_pack("{s:o,s:o,s:b,s:o,s:o,s:b,s:[]}", "namespaces", names, "cgroup",
			 run->cg_isolation ? json_incref(run->cg_isolation) : json_null(), "seccomp",
			 run->seccomp_applied, "landlock_abi",
			 run->seccomp_applied && run->outcome.landlock_abi > 0 ?
				 json_integer(run->outcome.landlock_abi) :
				 json_null(),
			 "memfd_noexec",
			 run->seccomp_applied && run->outcome.memfd_noexec >= 0 ?
				 json_integer(run->outcome.memfd_noexec) :
				 json_null(),
			 "no_new_privs", run->seccomp_applied, "capabilities");
}

static json_t *limits(const struct sbx_run *run)
{
	json_t *l;

	if (!run->admitted)
		return json_null();
	l = json_object();
	for (int i = 0; i < _SBX_LIMIT_MAX; i++)
		json_object_set_new(l, sbx_limit_table[i].manifest_key,
				    json_integer((json_int_t)run->plan.limits.v[i]));
	return l;
}

static const char *artifact_status(enum sbx_artifact_status s)
{
	switch (s) {
	case SBX_ARTIFACT_PROMOTED:
		return "promoted";
	case SBX_ARTIFACT_REJECTED:
		return "rejected";
	case SBX_ARTIFACT_DISCARDED:
		return "discarded";
	case SBX_ARTIFACT_HELD:
		return "held";
	}
	return "rejected";
}

/* An artifact's contract result: null when it had none, or when it was
 * rejected before its contract could be checked. */
static json_t *contract(const struct sbx_contract_result *r)
{
	json_t *f = json_array();

	if (!r) {
		json_decref(f);
		return json_null();
	}
	for (size_t i = 0; i < r->n; i++)
		json_array_append_new(f, json_pack("{s:o,s:o,s:o}", "check", cstr(r->fail[i].check),
						   "detail", cstr(r->fail[i].detail), "row",
						   r->fail[i].row ? json_integer((json_int_t)r->fail[i].row) :
								    json_null()));
	return json_pack("{s:b,s:o,s:I}", "ok", r->ok, "failures", f, "failure_count",
			 (json_int_t)r->count);
}

/*
 * An application/zip's members, as the confined validator listed them:
 * up to and including the first one refused, each "valid" or "rejected"
 * (a member is delivered only inside its archive, whose status is the
 * artifact's).  Paths, digests and sizes are the validator's word; the
 * broker held them to their shapes (verdict.c) and does not open ZIPs.
 */
static json_t *members(const struct sbx_artifact *x)
{
	json_t *a = json_array();

	for (size_t i = 0; i < x->n_members; i++) {
		const struct sbx_verdict_member *m = &x->members[i];
		json_t *flags = json_array();

		for (unsigned b = 0; b < SBX_MEDIA_FLAG_COUNT; b++)
			if (m->flags & (1u << b))
				json_array_append_new(flags, json_string(sbx_media_flag_name(b)));
		json_array_append_new(
			a, json_pack("{s:s,s:I,s:s,s:o,s:s,s:o,s:o,s:b,s:o}", "path", m->path, "size",
				     (json_int_t)m->size, "sha256", m->sha256, "media_type",
				     m->media_type ? json_string(m->media_type) : json_null(), "status",
				     m->ok ? "valid" : "rejected", "reason",
				     m->ok ? json_null() : json_string(m->reason), "reason_code",
				     m->ok || !m->reason_code ? json_null() : json_string(m->reason_code),
				     "formula_cells", m->formula_cells, "flags", flags));
	}
	return a;
}

static json_t *artifacts(const struct sbx_run *run)
{
	json_t *a = json_array();

	if (!run->collected)
		return a;
	for (size_t i = 0; i < run->coll.n; i++) {
		const struct sbx_artifact *x = &run->coll.items[i];
		json_t *flags = json_array();

		/* In bit order: the same flags always list the same way. */
		for (unsigned b = 0; b < SBX_MEDIA_FLAG_COUNT; b++)
			if (x->flags & (1u << b))
				json_array_append_new(flags, json_string(sbx_media_flag_name(b)));
		json_array_append_new(
			a, json_pack("{s:o,s:I,s:o,s:o,s:s,s:o,s:b,s:b,s:o}", "path", cstr(x->path), "size",
				     (json_int_t)x->size, "sha256",
				     x->sha256[0] ? json_string(x->sha256) : json_null(), "media_type",
				     x->media_type ? json_string(x->media_type) : json_null(), "status",
				     artifact_status(x->status), "reason", cstr(x->reason), "partial",
				     x->partial, "formula_cells", x->formula_cells, "flags", flags));
		json_object_set_new(json_array_get(a, json_array_size(a) - 1), "contract",
				    contract(x->contract));
		/* The reason's stable name (reasoncode.h); null with no reason. */
		json_object_set_new(json_array_get(a, json_array_size(a) - 1), "reason_code",
				    x->reason && x->reason_code ? json_string(x->reason_code) :
								  json_null());
		if (x->members)
			json_object_set_new(json_array_get(a, json_array_size(a) - 1), "members",
					    members(x));
	}
	return a;
}

/* How many artifacts ended in each status, so that a program need not
 * count them; every artifact listed is counted once. */
static json_t *summary(const struct sbx_run *run)
{
	json_int_t n[4] = { 0 };

	for (size_t i = 0; run->collected && i < run->coll.n; i++)
		switch (run->coll.items[i].status) {
		case SBX_ARTIFACT_PROMOTED:
			n[0]++;
			break;
		case SBX_ARTIFACT_REJECTED:
			n[1]++;
			break;
		case SBX_ARTIFACT_HELD:
			n[2]++;
			break;
		case SBX_ARTIFACT_DISCARDED:
			n[3]++;
			break;
		}
	return json_pack("{s:I,s:I,s:I,s:I}", "promoted", n[0], "rejected", n[1], "held", n[2],
			 "discarded", n[3]);
}

json_t *sbx_manifest_build(const struct sbx_run *run)
{
	const struct sbx_job *job = run->job_read ? &run->job : NULL;
	char job_sha[65] = "";
	json_t *m;

	if (job && sbx_job_digest((struct sbx_job *)job) == 0)
		sbx_hex(job->sha256, 32, job_sha);
	m = json_pack("{s:i,s:s,s:s,s:o}", "manifest_version", MANIFEST_VERSION, "sbx_version",
		      PACKAGE_VERSION, "run_id", run->run_id, "principal", cstr(run->principal));
	json_object_set_new(m, "job_sha256", job_sha[0] ? json_string(job_sha) : json_null());
	json_object_set_new(m, "profile",
			    catalog_ref(job ? job->runtime_profile : NULL,
					run->admitted ? run->plan.profile->raw : NULL,
					run->admitted ? run->plan.profile->raw_len : 0));
	/* The prepared tree the run had bound, by its content digest. */
	if (run->plan.prepared_tree)
		json_object_set_new(json_object_get(m, "profile"), "prepared_sha256",
				    json_string(run->plan.prepared_sha256));
	json_object_set_new(m, "network_profile",
			    catalog_ref(job ? (job->network_profile ? job->network_profile : "disabled") :
					      NULL,
					run->admitted ? run->plan.network->raw : NULL,
					run->admitted ? run->plan.network->raw_len : 0));
	/* What the egress proxy decided; null when the profile has none. */
	json_object_set_new(m, "network", run->network ? json_incref(run->network) : json_null());
	json_object_set_new(m, "isolation", isolation(run));
	json_object_set_new(m, "limits", limits(run));
	json_object_set_new(m, "status", json_string(sbx_status_name(run->status)));
	json_object_set_new(m, "reason", run->reason[0] ? cstr(run->reason) : json_null());
	json_object_set_new(m, "reason_code", run->reason[0] && run->reason_code ?
						      json_string(run->reason_code) : json_null());
	json_object_set_new(m, "exit", exit_record(run));
	json_object_set_new(m, "timing", timing(run));
	json_object_set_new(m, "usage", usage(run));
	json_object_set_new(m, "events", json_incref(run->events));
	json_object_set_new(m, "stdin", stdin_record(run));
	json_object_set_new(m, "stdout", stream(run, &run->outcome.out));
	json_object_set_new(m, "stderr", stream(run, &run->outcome.err));
	json_object_set_new(m, "error", error_claim(run));
	json_object_set_new(m, "artifacts", artifacts(run));
	json_object_set_new(m, "summary", summary(run));
	/* What the payload got in /work/in, with digests (inputs.h). */
	json_object_set_new(m, "inputs", run->inputs ? json_incref(run->inputs) : json_array());
	return m;
}
