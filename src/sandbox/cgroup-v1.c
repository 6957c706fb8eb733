/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup-v1.c - one directory "sbx-<run_id>" per controller hierarchy,
 * each under the parent detection found for that controller.
 *
 * Files written (R = the run's directory in that hierarchy):
 *   memory  R/memory.limit_in_bytes       bytes, first: memsw may not be
 *                                          set below it
 *           R/memory.memsw.limit_in_bytes  the same bytes, so memory+swap
 *                                          cannot exceed memory: no swap
 *           R/memory.swappiness            "0", only when memsw is absent
 *                                          (swapaccount=0); recorded
 *           R/memory.kmem.tcp.limit_in_bytes  a quarter of the bytes: v1
 *                                          charges socket buffers to this
 *                                          counter only, and only for
 *                                          sockets made after it is set
 *   pids    R/pids.max                     count
 *   cpu     R/cpu.cfs_period_us            "100000", before the quota
 *           R/cpu.cfs_quota_us             quota
 *   freezer R/freezer.state                "FROZEN"/"THAWED" by the kill
 *   every   R/cgroup.procs                 pid written by attach
 * Read by stats: memory.max_usage_in_bytes plus
 * memory.kmem.tcp.max_usage_in_bytes, memory.oom_control (oom_kill;
 * memory.failcnt is not used: it is unreliable on current kernels),
 * pids.peak (optional), pids.events, cpuacct.usage_user/usage_sys in ns
 * (optional) else cpuacct.stat in USER_HZ ticks.
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"

/* cpu and cpuacct are often mounted together ("cpu,cpuacct"): one
 * directory serves both, and must be made and removed once.  Returns the
 * earlier controller sharing @k's parent, or -1. */
static int shares_dir_with(const struct sbx_cgroup_host *h, int k)
{
	for (int j = 0; j < k; j++)
		if (h->v1_path[j] && h->v1_path[k] && strcmp(h->v1_path[j], h->v1_path[k]) == 0)
			return j;
	return -1;
}

static char *run_dir(const struct sbx_cgroup *cg, int k)
{
	return sbx_xasprintf("%s/%s", cg->host->v1_path[k], cg->name);
}

static int v1_create(struct sbx_cgroup *cg, struct sbx_error *err)
{
	const struct sbx_cgroup_host *h = cg->host;

	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++) {
		int j;

		if (h->v1_fd[k] < 0)
			continue;
		j = shares_dir_with(h, k);
		if (j >= 0) {
			cg->v1_fd[k] = fcntl(cg->v1_fd[j], F_DUPFD_CLOEXEC, 3);
			if (cg->v1_fd[k] < 0)
				return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "cgroup: dup");
			continue;
		}
		cg->v1_fd[k] = sbx_cgroup_mkdir(h, h->v1_fd[k], sbx_cgroup_controller_name(k),
						cg->name);
		if (cg->v1_fd[k] < 0) {
			int e = errno;
			sbx_error_set(err, SBX_EXIT_UNAVAILABLE, e, "cgroup: %s/%s: cannot create",
				      h->v1_path[k], cg->name);
			if (e == EACCES || e == EPERM || e == EROFS)
				sbx_cgroup_hint_set(err, NULL, 1, NULL, NULL);
			return -1;
		}
	}
	return 0;
}

static int put(struct sbx_cgroup *cg, int k, const char *file, const char *value,
	       struct sbx_error *err)
{
	_cleanup_free_ char *dir = run_dir(cg, k);

	return sbx_cgroup_write(cg->v1_fd[k], dir, file, value, SBX_EXIT_UNAVAILABLE, err);
}

const char sbx_cgroup_v1_tcp_hint[] =
	"this kernel's cgroup v1 memory controller has no memory.kmem.tcp.limit_in_bytes, so "
	"socket buffers would not count against memory_mib: boot with the unified hierarchy "
	"(systemd.unified_cgroup_hierarchy=1 on the kernel command line), where they are "
	"charged to memory.current, or a kernel with CONFIG_MEMCG_KMEM and CONFIG_MEMCG_V1";

/*
 * Socket buffers on v1.  Unread TCP data is memory the payload holds but
 * no process owns; v2 charges it to memory.current like any page, but v1
 * does not count it at all until memory.kmem.tcp.limit_in_bytes is
 * written, and then only for sockets created afterwards and against that
 * separate counter.  So it is written here, before the init (and with it
 * any socket of the sandbox) is attached, to a quarter of the memory
 * limit: a v1 run holds at most 1.25 x memory_mib, and a payload whose
 * sockets reach it sees its sends wait or fail with EAGAIN as under
 * memory pressure, not an OOM kill.  Without the file sbx refuses.
 */
static int v1_tcp_limit(struct sbx_cgroup *cg, uint64_t memory_bytes, struct sbx_error *err)
{
	_cleanup_free_ char *dir = run_dir(cg, SBX_CGROUP_MEMORY);
	int fd = cg->v1_fd[SBX_CGROUP_MEMORY];
	char v[64];

	if (!sbx_cgroup_has_file(fd, "memory.kmem.tcp.limit_in_bytes")) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, ENOENT,
			      "cgroup: %s/memory.kmem.tcp.limit_in_bytes: socket memory cannot be limited",
			      dir);
		sbx_error_hint(err, "%s", sbx_cgroup_v1_tcp_hint);
		return -1;
	}
	snprintf(v, sizeof(v), "%llu", (unsigned long long)sbx_cgroup_v1_tcp_bytes(memory_bytes));
	return sbx_cgroup_write(fd, dir, "memory.kmem.tcp.limit_in_bytes", v, SBX_EXIT_UNAVAILABLE,
				err);
}

static int v1_limits(struct sbx_cgroup *cg, const struct sbx_cgroup_limits *lim,
		     struct sbx_error *err)
{
	char v[64];

	snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->memory_bytes);
	if (put(cg, SBX_CGROUP_MEMORY, "memory.limit_in_bytes", v, err) < 0)
		return -1;
	cg->swap_limited = sbx_cgroup_has_file(cg->v1_fd[SBX_CGROUP_MEMORY],
					       "memory.memsw.limit_in_bytes");
	if (cg->swap_limited) {
		if (put(cg, SBX_CGROUP_MEMORY, "memory.memsw.limit_in_bytes", v, err) < 0)
			return -1;
	} else {
		/* Without swap accounting the best v1 offers is to tell
		 * reclaim not to swap this group's anonymous memory. */
		if (put(cg, SBX_CGROUP_MEMORY, "memory.swappiness", "0", err) < 0)
			return -1;
	}
	if (v1_tcp_limit(cg, lim->memory_bytes, err) < 0)
		return -1;
	snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->pids);
	if (put(cg, SBX_CGROUP_PIDS, "pids.max", v, err) < 0)
		return -1;
	snprintf(v, sizeof(v), "%d", SBX_CGROUP_CPU_PERIOD_US);
	if (put(cg, SBX_CGROUP_CPU, "cpu.cfs_period_us", v, err) < 0)
		return -1;
	snprintf(v, sizeof(v), "%llu",
		 (unsigned long long)sbx_cgroup_cpu_quota_us(lim->cpu_millicores));
	return put(cg, SBX_CGROUP_CPU, "cpu.cfs_quota_us", v, err);
}

static int v1_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_error *err)
{
	const struct sbx_cgroup_host *h = cg->host;
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++)
		if (cg->v1_fd[k] >= 0 && shares_dir_with(h, k) < 0 &&
		    put(cg, k, "cgroup.procs", v, err) < 0)
			return -1;
	return 0;
}

static int sigkill_pid(pid_t pid, void *data)
{
	if (kill(pid, SIGKILL) < 0 && errno != ESRCH)
		return -1;
	return 0;
}

static int set_freezer(struct sbx_cgroup *cg, const char *state, struct sbx_error *err)
{
	_cleanup_free_ char *dir = run_dir(cg, SBX_CGROUP_FREEZER);
	int fd = cg->v1_fd[SBX_CGROUP_FREEZER];

	if (sbx_cgroup_write(fd, dir, "freezer.state", state, SBX_EXIT_SOFTWARE, err) < 0)
		return -1;
	/* FREEZING means some task is still on its way into the
	 * refrigerator; only FROZEN guarantees none can exit or fork. */
	for (int i = 0; i < 100; i++) {
		_cleanup_free_ char *now = NULL;

		if (sbx_cgroup_read(fd, "freezer.state", &now) < 0)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
					     "cgroup: %s/freezer.state: cannot read", dir);
		if (strncmp(now, state, strlen(state)) == 0)
			return 0;
		sbx_cgroup_pause_ms(10);
	}
	return sbx_error_set(err, SBX_EXIT_SOFTWARE, ETIMEDOUT, "cgroup: %s/freezer.state: not %s",
			     dir, state);
}

/* SIGKILL every pid in every hierarchy's cgroup.procs; returns how many. */
static int kill_listed(struct sbx_cgroup *cg, struct sbx_error *err)
{
	const struct sbx_cgroup_host *h = cg->host;
	int total = 0;

	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++) {
		int n;

		if (cg->v1_fd[k] < 0 || shares_dir_with(h, k) >= 0)
			continue;
		n = sbx_cgroup_for_each_pid(cg->v1_fd[k], sigkill_pid, NULL);
		if (n < 0) {
			_cleanup_free_ char *dir = run_dir(cg, k);
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
					     "cgroup: %s/cgroup.procs: cannot kill", dir);
		}
		if (n > 0)
			sbx_cgroup_test_event(h, SBX_CGROUP_TEST_KILLED, cg->v1_fd[k],
					      sbx_cgroup_controller_name(k), NULL);
		total += n;
	}
	return total;
}

/*
 * Each round: freeze, so that no listed task can exit and have its pid
 * reused before our signal arrives; SIGKILL what is listed; thaw, because
 * a v1-frozen task only acts on SIGKILL once it runs again.  Rounds repeat
 * until every hierarchy lists nothing (dying tasks linger a moment).
 * Without a freezer a listed task may exit and its pid be reused between
 * the read and the kill: that residual race is documented.
 */
static int v1_kill(struct sbx_cgroup *cg, struct sbx_error *err)
{
	bool freezer = cg->v1_fd[SBX_CGROUP_FREEZER] >= 0;

	for (int round = 0; round < 200; round++) {
		int n;

		if (freezer && set_freezer(cg, "FROZEN", err) < 0)
			return -1;
		n = kill_listed(cg, err);
		if (freezer && set_freezer(cg, "THAWED", err) < 0)
			return -1;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		sbx_cgroup_pause_ms(10);
	}
	return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
			     "cgroup: %s: processes remain after SIGKILL", cg->name);
}

static int read_required(struct sbx_cgroup *cg, int k, const char *file, char **text,
			 struct sbx_error *err)
{
	if (sbx_cgroup_read(cg->v1_fd[k], file, text) < 0) {
		_cleanup_free_ char *dir = run_dir(cg, k);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "cgroup: %s/%s: cannot read",
				     dir, file);
	}
	return 0;
}

static int bad(struct sbx_cgroup *cg, int k, const char *file, const char *key,
	       struct sbx_error *err)
{
	_cleanup_free_ char *dir = run_dir(cg, k);

	return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "cgroup: %s/%s: %s%smissing or not a number",
			     dir, file, key ? key : "", key ? ": " : "");
}

static int v1_cpu_stats(struct sbx_cgroup *cg, struct sbx_cgroup_stats *st, struct sbx_error *err)
{
	int fd = cg->v1_fd[SBX_CGROUP_CPUACCT];
	_cleanup_free_ char *user = NULL, *sys = NULL, *stat = NULL;
	uint64_t u, s;
	long hz;

	/* usage_user/usage_sys (4.7+) count nanoseconds exactly. */
	if (sbx_cgroup_read(fd, "cpuacct.usage_user", &user) == 0 &&
	    sbx_cgroup_read(fd, "cpuacct.usage_sys", &sys) == 0) {
		if (sbx_cgroup_parse_u64(user, &u) < 0 || u == UINT64_MAX)
			return bad(cg, SBX_CGROUP_CPUACCT, "cpuacct.usage_user", NULL, err);
		if (sbx_cgroup_parse_u64(sys, &s) < 0 || s == UINT64_MAX)
			return bad(cg, SBX_CGROUP_CPUACCT, "cpuacct.usage_sys", NULL, err);
		st->cpu_user_usec = u / 1000;
		st->cpu_system_usec = s / 1000;
		return 0;
	}
	/* cpuacct.stat counts USER_HZ ticks. */
	if (read_required(cg, SBX_CGROUP_CPUACCT, "cpuacct.stat", &stat, err) < 0)
		return -1;
	if (sbx_cgroup_keyed_u64(stat, "user", &u) < 0)
		return bad(cg, SBX_CGROUP_CPUACCT, "cpuacct.stat", "user", err);
	if (sbx_cgroup_keyed_u64(stat, "system", &s) < 0)
		return bad(cg, SBX_CGROUP_CPUACCT, "cpuacct.stat", "system", err);
	hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		hz = 100;
	st->cpu_user_usec = u * (1000000 / (uint64_t)hz);
	st->cpu_system_usec = s * (1000000 / (uint64_t)hz);
	return 0;
}

static int v1_stats(struct sbx_cgroup *cg, struct sbx_cgroup_stats *st, struct sbx_error *err)
{
	_cleanup_free_ char *peak = NULL, *tcp = NULL, *oom = NULL, *pev = NULL, *ppeak = NULL;
	uint64_t tcp_peak;

	if (read_required(cg, SBX_CGROUP_MEMORY, "memory.max_usage_in_bytes", &peak, err) < 0)
		return -1;
	if (sbx_cgroup_parse_u64(peak, &st->peak_memory_bytes) < 0)
		return bad(cg, SBX_CGROUP_MEMORY, "memory.max_usage_in_bytes", NULL, err);
	/* Socket buffers are a counter of their own on v1: the peak the
	 * manifest shows is the sum of both peaks, a bound on what the run
	 * held at any one time (v2's memory.peak has both in one). */
	if (read_required(cg, SBX_CGROUP_MEMORY, "memory.kmem.tcp.max_usage_in_bytes", &tcp, err) < 0)
		return -1;
	if (sbx_cgroup_parse_u64(tcp, &tcp_peak) < 0 || tcp_peak == UINT64_MAX)
		return bad(cg, SBX_CGROUP_MEMORY, "memory.kmem.tcp.max_usage_in_bytes", NULL, err);
	st->peak_memory_bytes += tcp_peak;
	st->has_peak_memory = true;
	if (read_required(cg, SBX_CGROUP_MEMORY, "memory.oom_control", &oom, err) < 0)
		return -1;
	if (sbx_cgroup_keyed_u64(oom, "oom_kill", &st->oom_kills) < 0)
		return bad(cg, SBX_CGROUP_MEMORY, "memory.oom_control", "oom_kill", err);
	st->has_memory_events_max = false;

	/* pids.peak is recent (6.x) on v1 too; optional. */
	if (sbx_cgroup_read(cg->v1_fd[SBX_CGROUP_PIDS], "pids.peak", &ppeak) == 0) {
		if (sbx_cgroup_parse_u64(ppeak, &st->pids_peak) < 0)
			return bad(cg, SBX_CGROUP_PIDS, "pids.peak", NULL, err);
		st->has_pids_peak = true;
	} else if (errno != ENOENT) {
		return read_required(cg, SBX_CGROUP_PIDS, "pids.peak", &ppeak, err);
	}
	if (read_required(cg, SBX_CGROUP_PIDS, "pids.events", &pev, err) < 0)
		return -1;
	if (sbx_cgroup_keyed_u64(pev, "max", &st->pids_events_max) < 0)
		return bad(cg, SBX_CGROUP_PIDS, "pids.events", "max", err);
	return v1_cpu_stats(cg, st, err);
}

static bool any_listed(struct sbx_cgroup *cg)
{
	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++)
		if (cg->v1_fd[k] >= 0 && sbx_cgroup_for_each_pid(cg->v1_fd[k], NULL, NULL) != 0)
			return true;
	return false;
}

static int v1_destroy(struct sbx_cgroup *cg, struct sbx_error *err)
{
	const struct sbx_cgroup_host *h = cg->host;
	int r = 0;

	if (any_listed(cg))
		r = v1_kill(cg, err);
	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++) {
		/* Only directories this run made (or gc found) have an fd. */
		if (cg->v1_fd[k] < 0)
			continue;
		closep(&cg->v1_fd[k]);
		cg->v1_fd[k] = -1;
		if (shares_dir_with(h, k) >= 0)
			continue;
		if (sbx_cgroup_rmdir(h, h->v1_fd[k], sbx_cgroup_controller_name(k), cg->name) < 0)
			r = sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
					  "cgroup: %s/%s: cannot remove", h->v1_path[k], cg->name);
	}
	cg->destroyed = true;
	return r;
}

const struct sbx_cgroup_ops sbx_cgroup_v1_ops = {
	.version = 1,
	.create = v1_create,
	.limits = v1_limits,
	.attach_pid = v1_attach,
	.kill = v1_kill,
	.stats = v1_stats,
	.destroy = v1_destroy,
};
