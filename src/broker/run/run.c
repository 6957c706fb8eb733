/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run.c - `sbx run`: one job, start to finish.
 *
 * Theory of operation
 * -------------------
 * Processes: the broker (this process, never sandboxed) and the sandbox's
 * init (pid 1 of a new pid namespace, sbx-init: see init.c), which starts
 * the payload.  Channels between them: a SOCK_SEQPACKET socket (the
 * sealed spec, setup reports, the /work/in and /work/out directory fds,
 * the payload's start and wait status), two pipes for the payload's
 * stdout and stderr, and with --stdin a third for its stdin, which the
 * broker fills from its own (deliver.h).  Nothing else crosses.  A job with archives has a
 * third process for a while: sbx-extract, exec'd by the broker into the
 * run's cgroup (and an IPC namespace of its own) to fill /work/in through
 * its fd before the payload starts; see store.c.  A run with outputs has
 * one after the payload: sbx-validate, which parses them (validation.c).
 *
 * Stages, each emitting an event:
 *   admission       options, host config, signing key, catalog (errors
 *                   here print no manifest); the job read and admitted
 *                   against its profile; a slot and memory reserved
 *                   against the host budget                 -> admitted
 *   materialization state entry, cgroup, namespaces and root built,
 *                   inputs copied into /work/in, archives extracted there
 *                   by sbx-extract in the run's cgroup, on the run's wall
 *                   clock (which starts here when there are archives) and
 *                   stopped by cancellation               -> materialized
 *   execution       the supervisor waits on pidfd, signalfd and timerfds
 *                                         -> started, soft_timeout,
 *                                            terminating, exited
 *   collection      /work/out walked through its fd into quarantine
 *                                                          -> collected
 *   validation      each quarantined copy handed to sbx-validate, the
 *                   confined validator, exec'd into the run's cgroup on
 *                   the run's wall clock plus validate_seconds
 *                   (validation.c); artifacts promoted    -> validated;
 *                   then the captured stdout and stderr written beside
 *                   them (or to --stdout/--stderr FILE): streams.c
 *   cleanup         cgroup removed, state entry removed    -> cleaned
 * and finally the signed manifest on stdout, or where deliver.c puts it
 * for an attached run or --manifest.  The signing key is checked
 * at admission but read for good only to sign: it is not in this
 * process's memory while the payload runs or its outputs are parsed
 * (and no byte of the outputs is parsed here, only copied and hashed).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/fsuid.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "admission.h"
#include "budgets.h"
#include "digest.h"
#include "events.h"
#include "fetch-run.h"
#include "hold.h"
#include "nproc.h"
#include "prepare.h"
#include "proxy.h"
#include "report.h"
#include "results.h"
#include "opener.h"
#include "rootids.h"
#include "run.h"
#include "sign.h"
#include "sandbox.h"
#include "store.h"
#include "subids.h"
#include "template-life.h"
#include "validation.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct sbx_admission *, sbx_admission_release)

#define STREAM_CAP_DEFAULT (1u << 20)

void sbx_run_event(struct sbx_run *run, const char *event, const char *detail)
{
	uint64_t t = (sbx_now_mono_ns() - run->t0_ns) / 1000000ull;
	json_t *e = json_pack("{s:s,s:I}", "event", event, "t_ms", (json_int_t)t);

	if (detail)
		json_object_set_new(e, "detail", json_string(detail));
	json_array_append_new(run->events, e);
	sbx_report_event(run, event, detail, t);
	if (run->ev)
		sbx_events_emit(run->ev, event,
				detail ? json_pack("{s:s}", "detail", detail) : NULL);
}

static void on_supervisor_event(void *ud, const char *name, const char *detail)
{
	struct sbx_run *run = ud;

	if (!strcmp(name, "started")) {
		run->stage = "running";
		sbx_state_set_stage(run->state, "running");
	} else if (!strcmp(name, "soft_timeout")) {
		run->stage = "running (slow)";
	} else if (!strcmp(name, "terminating")) {
		run->stage = "terminating";
		sbx_state_set_stage(run->state, "terminating");
	} else if (!strcmp(name, "exited")) {
		run->stage = "exited";
	}
	sbx_run_event(run, name, detail);
}

/* Redraw the live status line: the cgroup's peak memory so far. */
static void on_tick(void *ud)
{
	struct sbx_run *run = ud;
	struct sbx_cgroup_stats st = { 0 };
	bool mem = run->cg && sbx_cgroup_stats(run->cg, &st, NULL) == 0 && st.has_peak_memory;

	sbx_status_line_show(&run->status_line, run->stage, mem, st.peak_memory_bytes);
}

/* The proxy's decisions go to the events stream; the manifest gets the
 * summary at the end. */
static void on_net_event(void *ud, const char *name, json_t *detail)
{
	struct sbx_run *run = ud;
	sbx_events_emit(run->ev, name, detail);
}

static uint64_t on_net_clock(void *ud)
{
	struct sbx_run *run = ud;
	return sbx_events_t_ms(run->ev);
}

_Static_assert(SBX_PROXY_POLL_MAX <= SBX_SUPERVISE_NET_MAX, "the proxy's fds fit the wait");

static size_t on_net_fds(void *ud, struct pollfd *pfd, size_t max)
{
	struct sbx_run *run = ud;
	(void)max; /* SBX_PROXY_POLL_MAX, at most */
	return sbx_proxy_pollfds(run->proxy, pfd);
}

static void on_net_ready(void *ud, const struct pollfd *pfd, size_t n)
{
	struct sbx_run *run = ud;
	sbx_proxy_dispatch(run->proxy, pfd, n);
}

/* End the proxy with the sandbox: every connection closed and recorded. */
static void stop_proxy(struct sbx_run *run)
{
	if (!run->proxy)
		return;
	sbx_proxy_stop(run->proxy);
	if (!run->network)
		run->network = sbx_proxy_summary(run->proxy);
	sbx_proxy_free(run->proxy);
	run->proxy = NULL;
}

static void on_queued(void *ud)
{
	sbx_run_event(ud, "queued", NULL);
}

static void kill_cgroup(void *ud)
{
	struct sbx_run *run = ud;
	if (run->cg)
		sbx_cgroup_kill(run->cg, NULL);
}

/* Block the cancellation signals before anything is created, so that a
 * SIGINT during setup is a cancellation and not a death that leaves state
 * behind; the supervisor reads them from a signalfd. */
static int cancellation_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static bool cancel_pending(int sfd)
{
	struct signalfd_siginfo ssi;
	return sfd >= 0 && read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi);
}

/* Did a payload fill the output root (ENOSPC for its writes)? */
static bool output_root_full(int fd)
{
	struct statfs sf;
	return fstatfs(fd, &sf) == 0 && (sf.f_bfree == 0 || sf.f_ffree == 0);
}

/* Does the directory at @fd hold nothing but "." and ".."? */
static bool dir_is_empty(int fd)
{
	char buf[1024];
	_cleanup_close_ int d = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ssize_t n;

	if (d < 0)
		return false;
	while ((n = getdents64(d, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				return false;
			off += e->d_reclen;
		}
	return n == 0;
}

/* Tell the state entry where the run's cgroups will be, before they exist. */
static int record_cgroups(struct sbx_run *run)
{
	const struct sbx_cgroup_host *h = &run->cg_host;

	if (h->version == 2) {
		_cleanup_free_ char *p = sbx_xasprintf("%s/sbx-%s", h->v2_path, run->run_id);
		return sbx_state_add_cgroup(run->state, p, &run->err);
	}
	for (int i = 0; i < _SBX_CGROUP_CONTROLLER_MAX; i++) {
		_cleanup_free_ char *p = NULL;
		bool seen = false;

		if (!h->v1_path[i])
			continue;
		/* cpu and cpuacct may be one hierarchy. */
		for (int k = 0; k < i; k++)
			if (h->v1_path[k] && !strcmp(h->v1_path[k], h->v1_path[i]))
				seen = true;
		if (seen)
			continue;
		p = sbx_xasprintf("%s/sbx-%s", h->v1_path[i], run->run_id);
		if (sbx_state_add_cgroup(run->state, p, &run->err) < 0)
			return -1;
	}
	return 0;
}

/* Helpers that ran in the run's cgroup before the payload: archives'
 * and remote inputs'.  Their time is the run's (wall_seconds) and their
 * usage too. */
static bool helpers_before(const struct sbx_run *run)
{
	return (run->job.extract && run->job.extract[0]) || run->job.n_fetch;
}

/*
 * The job's remote inputs (fetch-run.h), after the store's and the local
 * ones, in what input_bytes_max leaves of @max: their records join the
 * manifest's "inputs", a refusal or failure names its reason_code.
 */
static int fetch_inputs(struct sbx_run *run, int in_fd, uint64_t max,
			const struct sbx_extract_ctl *x)
{
	struct sbx_fetch_ctl ctl = {
		.cg = x->cg,
		.cancel_fd = x->cancel_fd,
		.deadline_ns = x->deadline_ns,
		.wall_seconds = x->wall_seconds,
		.memory_mib = x->memory_mib,
		.own_id = x->own_id,
		.state_dir = run->state_dir,
		.cache_bytes = run->cfg.fetch_cache_bytes,
		.extract = x,
	};
	uint64_t taken = 0, used = 0;
	size_t i;
	json_t *e;

	if (!run->job.n_fetch)
		return 0;
	json_array_foreach(run->inputs, i, e)
		taken += (uint64_t)json_integer_value(json_object_get(e, "size"));
	return sbx_fetch_materialize(run->plan.fetch, &run->job, in_fd,
				     max > taken ? max - taken : 0, &ctl, run->inputs,
				     &run->fetch_code, &used, &run->err);
}

/*
 * Copy the inputs into /work/in.  That tmpfs belongs to the sandbox's user
 * namespace, where host root is not mapped: root writes as the id the
 * sandbox user maps to (which also keeps root's power out of the copy).
 */
static int materialize(struct sbx_run *run, const struct sbx_spec *spec,
		       const struct sbx_store *store, int in_fd, int sfd)
{
	/* With subordinate ids the broker writes as itself, the namespace's
	 * root (sandbox.c mounts /work/in so). */
	bool root = run->host_id != (uid_t)-1;
	struct sbx_extract_ctl ctl;
	uint64_t max = run->plan.profile->input_bytes_max, local = 0;
	_cleanup_strv_free_ char **store_extract = NULL;
	int r;

	if (!run->job.input_handles[0] && !run->locals.n && !run->job.n_fetch)
		return 0;
	/* An archive's helper runs in the run's cgroup, under its wall clock
	 * and its cancellation (store.c). */
	ctl = (struct sbx_extract_ctl){
		.cg = run->cg,
		.cancel_fd = sfd,
		.deadline_ns = sbx_now_mono_ns() + run->plan.limits.v[SBX_LIMIT_WALL_SECONDS] * 1000000000ull,
		.wall_seconds = run->plan.limits.v[SBX_LIMIT_WALL_SECONDS],
		.memory_mib = run->plan.limits.v[SBX_LIMIT_MEMORY_MIB],
		/* Host root always maps a root_ids id; uid 0 that is the
		 * sandbox's outer id is root of a user namespace acting as an
		 * ordinary user (rootids.c). */
		.own_id = !root && geteuid() == 0,
	};
	if (root) {
		setfsgid(spec->outer_gid);
		setfsuid(spec->outer_uid);
	}
	/* Local files first: the store's handles get what is left of the
	 * total, so both together stay under input_bytes_max. */
	/* The store's archives here; fetched ones are extracted by
	 * fetch-run.c once they are in. */
	store_extract = sbx_xcalloc(sbx_strv_length(run->job.extract) + 1, sizeof(char *));
	for (size_t i = 0, n = 0; run->job.extract && run->job.extract[i]; i++)
		for (size_t k = 0; run->job.input_handles[k]; k++)
			if (!strcmp(run->job.input_handles[k], run->job.extract[i])) {
				store_extract[n++] = sbx_xstrdup(run->job.extract[i]);
				break;
			}
	r = sbx_local_inputs_copy(&run->locals, in_fd, max, max, &local, &run->err) < 0 ||
	    sbx_store_materialize(store, run->job.input_handles, store_extract, in_fd, max,
				  max - local, &ctl, &run->err) < 0 ||
	    !(run->inputs = sbx_inputs_record(in_fd, run->job.input_handles, run->job.extract,
					      &run->locals, &run->err)) ||
	    fetch_inputs(run, in_fd, max, &ctl) < 0 ? -1 : 0;
	if (root) {
		setfsuid(0);
		setfsgid(0);
	}
	return r;
}

/*
 * The program named by code_handle: a file of the principal's store,
 * resolved like any input (so it is refused, 77, on the same terms) and
 * read with the cap that applies to inline code.
 */
static int read_code_handle(struct sbx_run *run, const struct sbx_store *store, char **code,
			    size_t *len)
{
	const char *h = run->job.code_handle;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	ssize_t n;

	if (sbx_store_resolve(store, h, &fd, &st, &run->err) < 0) {
		sbx_error_prefix(&run->err, "code_handle: ");
		return -1;
	}
	/* One byte past the cap, so that a file that grew since fstat is
	 * noticed without reading it all. */
	buf = sbx_xmalloc(SBX_JOB_MAX_CODE_BYTES + 1);
	n = sbx_read_all(fd, buf, SBX_JOB_MAX_CODE_BYTES + 1);
	if (n < 0)
		return sbx_error_set(&run->err, SBX_EXIT_SOFTWARE, errno, "code_handle: \"%s\": read", h);
	if ((size_t)n > SBX_JOB_MAX_CODE_BYTES)
		return sbx_error_set(&run->err, SBX_EXIT_REFUSED, 0,
				     "code_handle: \"%s\": larger than the limit of %u bytes", h,
				     (unsigned)SBX_JOB_MAX_CODE_BYTES);
	*code = TAKE_PTR(buf);
	*len = (size_t)n;
	return 0;
}

/* The job's store handles: every input resolves and the code handle is
 * read, or the run is refused before the sandbox is used. */
static int check_handles(struct sbx_run *run, struct sbx_store *store, char **code,
			 size_t *code_len)
{
	_cleanup_free_ char *store_root = NULL;
	const char *store_origin = NULL;

	if (sbx_store_root(run->opts->store, run->cfg.store, &store_root, &store_origin, &run->err) < 0 ||
	    sbx_store_open(store_root, store_origin, run->principal, store, &run->err) < 0)
		return -1;
	for (size_t i = 0; run->job.input_handles[i]; i++) {
		_cleanup_close_ int fd = -1;
		struct stat st;
		if (sbx_store_resolve(store, run->job.input_handles[i], &fd, &st, &run->err) < 0) {
			sbx_error_prefix(&run->err, "input_handles[%zu]: ", i);
			return -1;
		}
	}
	if (sbx_local_inputs_open(&run->locals, run->job.input_handles,
				  run->plan.profile->input_bytes_max,
				  run->plan.profile->input_bytes_max, &run->err) < 0)
		return -1;
	if (run->job.code_handle && read_code_handle(run, store, code, code_len) < 0)
		return -1;
	return 0;
}

/* The run's cgroup (on the detected host), recorded in the state entry
 * before it exists, and the manifest's description of it. */
static int make_cgroup(struct sbx_run *run, const struct sbx_cgroup_limits *clim)
{
	if (record_cgroups(run) < 0 || sbx_state_save(run->state, &run->err) < 0 ||
	    sbx_cgroup_create(&run->cg_host, run->run_id, clim, &run->cg, &run->err) < 0 ||
	    sbx_cgroup_describe(&run->cg_host, &run->cg_isolation) < 0)
		return -1;
	/* Whether swap is capped too (v2 memory.swap.max 0, v1 memsw equal
	 * to the memory limit): a host without swap accounting cannot, and
	 * the manifest says so rather than claiming "no swap". */
	json_object_set_new(run->cg_isolation, "swap_limited", json_boolean(run->cg->swap_limited));
	return 0;
}

/*
 * The outputs' verdicts, from the confined validator (validation.c): on
 * the run's wall clock, which ends at @wall_end_ns, plus the profile's
 * validate_seconds; in the run's cgroup; as the sandbox's id when sbx is
 * root.  Its CPU time is the run's: the cgroup's counters are read again
 * after it.
 */
static int validate(struct sbx_run *run, const struct sbx_spec *spec, int sfd,
		    uint64_t wall_end_ns)
{
	/* An ordinary user's validator is the caller's, as the quarantine
	 * is, with or without subordinate ids. */
	bool root = run->host_id != (uid_t)-1;
	uint64_t now = sbx_now_mono_ns(), allowance = run->plan.profile->validate_seconds;
	struct sbx_validation_ctl ctl = {
		.cg = run->cg,
		.cancel_fd = sfd,
		.deadline_ns = (wall_end_ns > now ? wall_end_ns : now) + allowance * 1000000000ull,
		.allowance_s = run->plan.limits.v[SBX_LIMIT_WALL_SECONDS] + allowance,
		.memory_mib = run->plan.limits.v[SBX_LIMIT_MEMORY_MIB],
		/* Root of a container's user namespace acting as an ordinary
		 * user keeps its own id, as for the archive helper. */
		.uid = root ? spec->outer_uid : (uid_t)-1,
		.gid = root ? spec->outer_gid : (gid_t)-1,
		.allowed = run->plan.allowed_outputs,
		.refuse_active = run->plan.profile->refuse_active,
		.outputs = run->job.outputs,
		.contracts = &run->contracts,
	};
	struct sbx_validation_stats st;
	uint64_t files = 0, bytes = 0;
	int r;

	/* A ZIP's members are outputs too: they count in what is left of
	 * output_files and output_bytes once the files themselves are. */
	for (size_t i = 0; i < run->coll.n; i++)
		if (run->coll.items[i].status == SBX_ARTIFACT_PROMOTED) {
			files++;
			bytes += run->coll.items[i].size;
		}
	ctl.output_files = files < run->plan.limits.v[SBX_LIMIT_OUTPUT_FILES] ?
				   run->plan.limits.v[SBX_LIMIT_OUTPUT_FILES] - files : 0;
	ctl.output_bytes = bytes < run->plan.limits.v[SBX_LIMIT_OUTPUT_BYTES] ?
				   run->plan.limits.v[SBX_LIMIT_OUTPUT_BYTES] - bytes : 0;
	sbx_state_set_stage(run->state, "validating");
	r = sbx_validation_run(&run->coll, &ctl, &st, &run->err);
	if (st.files) {
		run->validated = true;
		run->validate_ms = st.ms;
		if (sbx_cgroup_stats(run->cg, &run->stats, NULL) == 0)
			run->have_stats = true;
	}
	if (r == 0 && st.cancelled && run->status != SBX_STATUS_CANCELLED) {
		/* Cancellation reaches validation too: the run is cancelled,
		 * and what was not validated is not promoted. */
		run->status = SBX_STATUS_CANCELLED;
		snprintf(run->reason, sizeof(run->reason),
			 "cancelled by the caller while the outputs were validated");
		run->reason_code = "cancelled";
	}
	return r;
}

/* Materialization and execution: from the cgroup to the payload's end. */
static int execute(struct sbx_run *run, int sfd)
{
	struct sbx_spawn sp = SBX_SPAWN_INIT;
	_cleanup_(sbx_template_place_free) struct sbx_template_place tpl = { 0 };
	struct sbx_opener opener = SBX_OPENER_INIT;
	struct sbx_cgroup_detect_opts copts = { .cgroup_parent = run->cfg.cgroup_parent };
	struct sbx_cgroup_limits clim = {
		.memory_bytes = run->plan.limits.v[SBX_LIMIT_MEMORY_MIB] << 20,
		.pids = run->plan.limits.v[SBX_LIMIT_PIDS],
		.cpu_millicores = run->plan.limits.v[SBX_LIMIT_CPU_MILLICORES],
	};
	struct sbx_supervise_opts so = {
		.soft_ms = run->plan.limits.v[SBX_LIMIT_SOFT_SECONDS] * 1000,
		.wall_ms = run->plan.limits.v[SBX_LIMIT_WALL_SECONDS] * 1000,
		.grace_ms = run->plan.limits.v[SBX_LIMIT_GRACE_SECONDS] * 1000,
		.stream_cap = run->plan.profile->stream_bytes_max ? run->plan.profile->stream_bytes_max :
								    STREAM_CAP_DEFAULT,
		.signal_fd = sfd,
		.event = on_supervisor_event,
		.kill_all = kill_cgroup,
		.tick = sbx_status_line_enabled(&run->status_line) ? on_tick : NULL,
		.tick_ms = 250,
		.ud = run,
	};
	_cleanup_(sbx_store_close) struct sbx_store store = SBX_STORE_INIT;
	_cleanup_free_ char *code = NULL;
	size_t code_len = 0;
	uint64_t t_extract, t_payload = 0;
	int r = -1;

	/* Where the sandbox's first process starts, and when.  On cgroup v1
	 * it comes before anything else: the kernel makes its namespaces and
	 * sbx-init starts up (~2.5 ms here) while this process checks the
	 * inputs, creates the cgroup and computes the spec, and the init is
	 * then moved into the cgroup.  On v2 it is cloned straight into the
	 * run's cgroup (CLONE_INTO_CGROUP), so the cgroup comes first: a
	 * migration's write to cgroup.procs waits for an RCU grace period,
	 * longer than the overlap saves.  Either way nothing runs in it
	 * before the go-ahead, a refusal of the inputs comes before any
	 * cgroup or mount exists, and errors come in the same order (the
	 * cgroup's detection, done first, is reported where it was). */
	struct sbx_error spawn_err = { 0 }, detect_err = { 0 };
	int detected;
	bool born_in_cgroup;
	int spawned;

	/* Before the clone: root's run's id owns its namespace (sandbox.c). */
	sp.host_id = run->host_id;
	sp.sub_uid = run->sub_uid;
	sp.sub_gid = run->sub_gid;
	sbx_deliver_wire(&run->deliver, run->opts, &sp, &so);
	sbx_run_template_choose(run, &sp, &tpl);
	detected = sbx_cgroup_detect(&run->cg_host, &copts, &detect_err);
	born_in_cgroup = detected == 0 && run->cg_host.version == 2;
	spawned = born_in_cgroup ? 0 : sbx_spawn_start(&sp, &spawn_err);

	/* The run's private temp dir (for the quarantine), known to gc by
	 * its name and recorded before it exists, so a crash leaves nothing
	 * unknown; made only if there are outputs to collect. */
	run->temp_dir = sbx_run_temp_path(run->run_id);
	if (sbx_state_add_temp(run->state, run->temp_dir, &run->err) < 0)
		goto out;

	/* Handles first: a refusal comes before any cgroup or mount exists
	 * (the sandbox's process, if any, only waits so far, and is killed). */
	if (check_handles(run, &store, &code, &code_len) < 0)
		goto out;
	if (spawned < 0) {
		run->err = spawn_err;
		goto out;
	}
	if (detected < 0) {
		run->err = detect_err;
		goto out;
	}
	if (make_cgroup(run, &clim) < 0)
		goto out;
	if (born_in_cgroup) {
		sp.cgroup_fd = sbx_cgroup_clone_fd(run->cg);
		if (sbx_spawn_start(&sp, &run->err) < 0)
			goto out;
		born_in_cgroup = sp.in_cgroup;
	}
	sbx_run_template_note(run, &sp);
	/* Into the run's cgroup before the go-ahead: nothing the init runs
	 * is ever outside the limits.  (v1: each cgroup.procs write waits
	 * for an RCU grace period, while the init is still starting up.) */
	if (!born_in_cgroup && sbx_cgroup_attach(run->cg, sp.pid, &run->err) < 0)
		goto out;
	sp.state_dir = run->state_dir;
	sp.code = code ? code : run->job.code;
	sp.code_len = code ? code_len : run->job.code_len;
	if (sbx_spawn_prepare(&sp, &run->plan, &run->job, &run->err) < 0)
		goto out;
	if (sbx_spawn_release(&sp, &run->err) < 0)
		goto out;
	/* While the init builds the sandbox's root, and before the payload
	 * starts: the place for the quarantine must exist. */
	if (sbx_run_temp_check_base(run) < 0)
		goto out;
	if (sbx_spawn_receive_work(&sp, &run->err) < 0)
		goto out;
	run->sandboxed = true; /* all seven namespaces exist */
	if (sp.proxy_fd >= 0) {
		struct sbx_proxy_hooks hooks = { .event = on_net_event, .t_ms = on_net_clock, .ud = run };
		if (sbx_proxy_new(run->plan.network, TAKE_FD(sp.proxy_fd), &hooks, &run->proxy,
				  &run->err) < 0)
			goto out;
		so.net_fds = on_net_fds;
		so.net_ready = on_net_ready;
	}
	t_extract = sbx_now_mono_ns();
	if (materialize(run, &sp.spec, &store, sp.in_fd, sfd) < 0) {
		/* An archive's helper ran in the cgroup: its usage (an OOM
		 * kill, the peak) is the run's. */
		if (helpers_before(run) && sbx_cgroup_stats(run->cg, &run->stats, NULL) == 0)
			run->have_stats = true;
		goto out;
	}
	/* wall_seconds bounds extraction and payload together: what the
	 * archives took is taken from the payload's deadlines.  (Without
	 * archives nothing is taken: copying is not on the clock.) */
	if (helpers_before(run)) {
		uint64_t spent_ms = (sbx_now_mono_ns() - t_extract) / 1000000ull;

		so.wall_ms = so.wall_ms > spent_ms ? so.wall_ms - spent_ms : 1;
		if (so.soft_ms)
			so.soft_ms = so.soft_ms > spent_ms ? so.soft_ms - spent_ms : 1;
	}
	if (sbx_spawn_continue(&sp, &run->err) < 0)
		goto out;
	sbx_run_event(run, "materialized", NULL);

	if (cancel_pending(sfd)) {
		/* Cancelled while the sandbox was being built. */
		run->outcome.term = SBX_TERM_CANCEL;
		run->ran = false;
		run->status = SBX_STATUS_CANCELLED;
		snprintf(run->reason, sizeof(run->reason), "cancelled by the caller before the payload started");
		run->reason_code = "cancelled";
		r = 0;
		goto out;
	}

	run->stage = "starting";
	t_payload = sbx_now_mono_ns();
	r = sbx_supervise(&sp, &so, &run->outcome, &run->err);
	stop_proxy(run);
	sbx_status_line_clear(&run->status_line);
	sbx_state_set_stage(run->state, "collecting");
	run->ran = true;
	run->seccomp_applied = run->outcome.started;
	if (sbx_cgroup_stats(run->cg, &run->stats, NULL) == 0)
		run->have_stats = true;
	if (r < 0)
		goto out;
	/* Before the status: a failing payload that filled the output root
	 * is limit_exceeded, not failed. */
	run->output_quota_hit = output_root_full(sp.outroot_fd);
	sbx_run_decide(run);
	if (run->opts->prepare) {
		/* sbx prepare: the output root is the prepared tree, taken once
		 * nothing the command left behind runs any more. */
		if (run->status == SBX_STATUS_SUCCEEDED)
			r = sbx_cgroup_kill(run->cg, &run->err) < 0 ? -1 :
				run->opts->prepare->take(run->opts->prepare, sp.outroot_fd, &run->err);
		goto out;
	}

	/* Collection and validation. */
	{
		struct sbx_collect_limits lim = {
			.max_files = run->plan.limits.v[SBX_LIMIT_OUTPUT_FILES],
			.max_bytes = run->plan.limits.v[SBX_LIMIT_OUTPUT_BYTES],
			.max_depth = 16,
			.max_name = 255,
			.max_entries_seen = 4 * run->plan.limits.v[SBX_LIMIT_OUTPUT_FILES] + 64,
		};
		if (dir_is_empty(sp.outroot_fd)) {
			/* Nothing to collect: no quarantine on the host. */
			run->collected = true;
			sbx_run_event(run, "collected", NULL);
			sbx_run_event(run, "validated", NULL);
			goto required;
		}
		/* The payload's files are not the caller's with subordinate
		 * ids: they are opened from inside its user namespace. */
		if (sp.userns_fd >= 0) {
			if (sbx_opener_start(&opener, sp.userns_fd, &run->err) < 0) {
				r = -1;
				goto out;
			}
			lim.open_at = sbx_opener_open;
			lim.open_ud = &opener;
		}
		if (sbx_run_temp_make(run) < 0 ||
		    sbx_collect(sp.outroot_fd, &lim, run->temp_dir, &run->coll, &run->err) < 0) {
			r = -1;
			goto out;
		}
		sbx_opener_stop(&opener);
		run->collected = true;
		sbx_run_event(run, "collected", NULL);
		/* DIR/.sbx is where the captures go: never the payload's. */
		sbx_streams_reserve(&run->coll);
		if (validate(run, &sp.spec, sfd, t_payload + so.wall_ms * 1000000ull) < 0 ||
		    sbx_hold_collect(run) < 0 ||
		    sbx_collect_promote(&run->coll, &run->artifacts, run->partial,
					run->job.partial_outputs == SBX_PARTIAL_RETAIN, &run->err) < 0) {
			r = -1;
			goto out;
		}
		sbx_run_event(run, "validated", NULL);
	}
required:
	sbx_run_check_required(run);
	r = 0;
out:
	stop_proxy(run);
	sbx_opener_stop(&opener);
	sbx_spawn_free(&sp);
	return r;
}

/* The captured streams as files, once the artifacts are promoted (the
 * artifacts directory must be empty until then).  A failure is the run's
 * error, unless it has one already. */
static void keep_streams(struct sbx_run *run)
{
	const struct sbx_stream *const s[_SBX_STREAM_MAX] = { &run->outcome.out, &run->outcome.err };
	struct sbx_error e = { 0 };

	if (!run->ran || sbx_streams_keep(&run->streams, &run->artifacts, s, &e) == 0)
		return;
	if (run->err.code)
		sbx_error_print(&e);
	else
		run->err = e;
}

/* Nothing of the run may remain: kill and remove its cgroup (the mounts
 * died with the mount namespace, the quarantine goes with the collection). */
static void cleanup(struct sbx_run *run)
{
	if (run->cg) {
		sbx_cgroup_destroy(run->cg, NULL);
		run->cg = NULL;
	}
}

/* The catalog's seccomp policies are its largest files; one whose program
 * this caller's cache holds was parsed and accepted by this build before,
 * and is parsed again only if the program must be compiled after all
 * (seccomp-cache.c).  No state dir yet: parse it (the error, if any, comes
 * in its place below). */
static bool seccomp_known(void *ud, const char *raw, size_t len)
{
	const struct sbx_run *run = ud;
	_cleanup_free_ char *dir = NULL;
	struct sbx_error e = { 0 };

	return sbx_state_dir(run->cfg.state_dir, &dir, &e) == 0 &&
	       sbx_seccomp_cache_known(dir, raw, len);
}

/* The caller's subordinate ids for admission slot @slot, if it has a
 * range (subids.h); a range that cannot be used refuses the run. */
static int choose_sub_ids(struct sbx_run *run, const struct sbx_admission *slot)
{
	struct sbx_sub_ids ids;
	int r = sbx_sub_ids_lookup(&ids, &run->err);

	if (r <= 0)
		return r;
	return sbx_sub_ids_pick(&ids, sbx_admission_slot(slot), &run->sub_uid, &run->sub_gid,
				&run->err);
}

int sbx_cmd_run(const struct sbx_run_opts *o)
{
	struct sbx_run run = { .opts = o, .status = SBX_STATUS_ERROR, .temp_fd = -1,
				.host_id = (uid_t)-1, .sub_uid = (uid_t)-1, .sub_gid = (gid_t)-1,
				.deliver = SBX_DELIVER_INIT };
	_cleanup_(sbx_admission_releasep) struct sbx_admission *slot = NULL;
	_cleanup_free_ char *state_dir = NULL;
	_cleanup_close_ int sfd = -1;
	struct sbx_run_state *state = NULL;
	_cleanup_(sbx_oneliner_job_free) struct sbx_oneliner_job one = { 0 };
	_cleanup_(sbx_deliver_closep) _unused_ struct sbx_deliver *deliver = &run.deliver;
	uint64_t nofile;
	int code;

	if (o->print_job || o->dry_run)
		return sbx_run_preview(o);
	run.t0_ns = sbx_now_mono_ns();
	run.started_at_ms = sbx_now_real_ms();
	run.events = json_array();
	sbx_run_id_new(run.run_id);

	/* Options, host config, signing key, catalog: no manifest yet. */
	if (sbx_run_principal(o, &run.principal) < 0)
		return SBX_EXIT_USAGE;
	if (o->one.profile && ((code = sbx_oneliner_prepare(&o->one, &one)) != 0 ||
			       (code = sbx_oneliner_locals(&o->one, &run.locals)) != 0)) {
		free(run.principal);
		return code;
	}
	/* SPEC order: options, host config, signing key, catalog, job; the
	 * results area without --artifacts comes from the config.  The
	 * per-uid budgets the sandbox's set-up and processes share with the
	 * caller are raised before any sandbox exists (budgets.c). */
	if (sbx_results_open(o, run.run_id, &run.cfg, &run.artifacts, &run.streams, &run.err) < 0 ||
	    sbx_deliver_open(&run.deliver, o, &run.err) < 0 ||
	    sbx_budget_nofile(&nofile, &run.err) < 0 ||
	    sbx_budget_nproc(&run.nproc_budget, &run.err) < 0 ||
	    (!o->prepare &&
	     sbx_sign_default_key(o->key, run.cfg.signing_key, &run.key, &run.err) < 0)) {
		sbx_error_print(&run.err);
		sbx_streams_close(&run.streams);
		sbx_artifacts_dir_close(&run.artifacts);
		return run.err.code;
	}
	/* Checked (and made, the first time), not kept: deliver.c
	 * reads it again when it signs. */
	sbx_key_clear(&run.key);
	sfd = cancellation_fd();
	/* Events on stderr are the progress report then, and in an attached
	 * run the payload's stderr: a status line redrawn between them would
	 * garble both. */
	sbx_status_line_init(&run.status_line, STDERR_FILENO,
			     (o->events && !strcmp(o->events, "-")) || o->attach ? -1 :
										   o->common.verbosity,
			     run.t0_ns);
	if (sbx_catalog_load_with(&run.cat, sbx_catalog_default_dir(o->common.policy, &run.cfg),
				  &(struct sbx_catalog_hooks){ .seccomp_known = seccomp_known, .ud = &run },
				  &run.err) < 0 ||
	    sbx_events_open(o->events, run.run_id, &run.ev, &run.err) < 0) {
		sbx_error_print(&run.err);
		sbx_key_clear(&run.key);
		sbx_streams_close(&run.streams);
		sbx_artifacts_dir_close(&run.artifacts);
		return run.err.code;
	}

	/* From the job on, every outcome prints a manifest. */
	if ((o->one.profile ? sbx_oneliner_load(&run.job, &one, &run.err) :
			      sbx_job_load(&run.job, o->job, &run.err)) < 0) {
		run.job_read = run.err.code == SBX_EXIT_INVALID;
		if (!run.job_read) {
			sbx_error_print(&run.err);
			sbx_key_clear(&run.key);
			sbx_streams_close(&run.streams);
			sbx_artifacts_dir_close(&run.artifacts);
			return run.err.code;
		}
		goto done;
	}
	run.job_read = true;
	/* Output contracts: malformed is 65, before the policy's 77s. */
	if (sbx_contracts_parse(run.job.outputs, run.job.source, &run.contracts, &run.err) < 0)
		goto done;
	if (sbx_policy_admit(&run.plan, &run.job, &run.cat, &run.err) < 0 ||
	    sbx_contracts_admit(&run.contracts, run.job.source, run.plan.profile->name,
				run.plan.profile->allowed_outputs, &run.plan.allowed_outputs,
				&run.err) < 0 ||
	    (o->prepare ? o->prepare->admit(o->prepare, &run.plan, &run.err) :
			  sbx_prepared_admit(&run.plan, &run.cfg, &run.cat, &run.err)) < 0)
		goto done;
	run.admitted = true;
	if ((run.job.partial_outputs == SBX_PARTIAL_HOLD || sbx_contracts_hold(&run.contracts)) &&
	    sbx_hold_check(&run.cfg, &run.err) < 0)
		goto done;

	if (sbx_state_dir(run.cfg.state_dir, &state_dir, &run.err) < 0)
		goto done;
	/* Reap what crashed runs left behind; cheap when there is nothing. */
	sbx_state_gc(state_dir, NULL, NULL);
	/* The entry before admission, so that a queued run is listed by
	 * `sbx ps` and can be cancelled by `sbx cancel`. */
	if (sbx_state_create_run(state_dir, run.run_id, run.principal, run.plan.profile->name, &state,
				 &run.err) < 0)
		goto done;
	run.state = state;
	run.state_dir = state_dir;
	sbx_state_set_stage(state, "queued");
	sbx_report_started(&run);
	{
		struct sbx_admission_limits lim;
		if (sbx_admission_limits_default(&lim, run.cfg.max_concurrent, run.cfg.memory_budget_mib,
						 &run.err) < 0 ||
		    sbx_admission_reserve_cancellable(state_dir, &lim,
						      run.plan.limits.v[SBX_LIMIT_MEMORY_MIB],
						      o->queue_timeout_ms, run.run_id, sfd, on_queued,
						      &run, &slot, &run.err) < 0)
			goto done;
	}
	/* Root's sandbox gets a host id of its own, tied to the slot just
	 * taken: no other live run can hold the same.  Before any cgroup or
	 * temp dir exists, so a refusal leaves only the entry to remove. */
	if (sbx_root_ids_choose(run.cfg.root_ids_first, run.cfg.root_ids_count,
				sbx_admission_slot(slot), &run.host_id, &run.err) < 0)
		goto done;
	/* An ordinary user with subordinate ids: the same, from its range
	 * (`sbx prepare` builds a trusted tree as the caller itself). */
	if (run.host_id == (uid_t)-1 && !o->prepare && choose_sub_ids(&run, slot) < 0)
		goto done;
	sbx_state_set_stage(state, "materializing");
	sbx_run_event(&run, "admitted", NULL);

	execute(&run, sfd);
	keep_streams(&run);

done:
	if (run.err.code) {
		sbx_status_line_clear(&run.status_line);
		sbx_error_print(&run.err);
		sbx_run_fail(&run);
	}
	sbx_state_set_stage(state, "cleaning");
	cleanup(&run);
	sbx_run_event(&run, "cleaned", NULL);
	run.ended_at_ms = sbx_now_real_ms();

	/* A run that failed keeps nothing held: there would be no record. */
	if (run.hold && run.err.code)
		sbx_hold_abandon(&run, "not held: the run ended with an error");
	if (o->prepare) {
		/* No manifest: the state written by prepare.c is the record. */
		code = run.err.code ? run.err.code : sbx_status_exit(run.status);
		o->prepare->ended(o->prepare, &run.err, code, run.reason);
	} else if (sbx_deliver_manifest(&run) < 0) {
		sbx_error_print(&run.err);
		code = SBX_EXIT_SOFTWARE;
	} else {
		code = sbx_status_exit(run.status);
		sbx_report_end(&run);
	}
	sbx_outcome_free(&run.outcome);
	if (run.collected)
		sbx_collection_free(&run.coll);
	sbx_run_temp_remove(&run);
	free(run.temp_dir);
	sbx_hold_close(run.hold);
	free(run.hold);
	if (state)
		sbx_state_finish(state);
	json_decref(run.events);
	json_decref(run.cg_isolation);
	json_decref(run.network);
	sbx_events_close(run.ev);
	sbx_key_clear(&run.key);
	sbx_plan_free(&run.plan);
	sbx_contracts_free(&run.contracts);
	sbx_job_free(&run.job);
	sbx_local_inputs_free(&run.locals);
	json_decref(run.inputs);
	sbx_catalog_free(&run.cat);
	sbx_hostconfig_free(&run.cfg);
	sbx_cgroup_host_free(&run.cg_host);
	free(run.principal);
	sbx_streams_close(&run.streams);
	sbx_artifacts_dir_close(&run.artifacts);
	return code;
}
