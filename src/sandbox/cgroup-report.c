/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup-report.c - the cgroup line of `sbx check`: detection, the v1
 * socket buffer check, write permission, and a trial run's cgroup made,
 * joined and removed for real.  Its own file because it is the one place
 * that runs a cgroup's whole lifecycle outside a run, only to predict
 * whether `sbx run` will get one.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "runid.h"

/*
 * What sbx run does with its cgroup, done for real on a child that only
 * waits: the controllers enabled (our cgroup's processes moved into a leaf
 * if the kernel asks), a run cgroup made with limits, the child moved in,
 * all removed.  Permissions alone cannot predict v2's refusals (the
 * no-internal-processes rule, the common-ancestor rule for moves), and
 * `sbx check` must say what `sbx run` will do.
 */
static int trial_run(const struct sbx_cgroup_host *h, struct sbx_error *err)
{
	const struct sbx_cgroup_limits lim = { .memory_bytes = 64ull << 20, .pids = 16,
					       .cpu_millicores = 1000 };
	struct sbx_cgroup *cg = NULL;
	struct sbx_error e2 = { 0 };
	char id[SBX_RUN_ID_LEN + 1];
	int gate[2], r;
	pid_t pid;

	if (pipe2(gate, O_CLOEXEC) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "cgroup: pipe");
	/* Before the cgroup exists, like the sandbox's init. */
	pid = fork();
	if (pid == 0) {
		char c;

		close(gate[1]);
		(void)!read(gate[0], &c, 1);
		_exit(0);
	}
	close(gate[0]);
	if (pid < 0) {
		close(gate[1]);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "cgroup: fork");
	}
	sbx_run_id_new(id);
	r = sbx_cgroup_create(h, id, &lim, &cg, err);
	if (r == 0)
		r = sbx_cgroup_attach(cg, pid, err);
	close(gate[1]);
	(void)waitpid(pid, NULL, 0);
	if (sbx_cgroup_destroy(cg, r == 0 ? err : &e2) < 0)
		r = -1;
	return r;
}

int sbx_cgroup_host_report(FILE *f, const struct sbx_cgroup_detect_opts *o)
{
	struct sbx_cgroup_host h;
	struct sbx_error err = { 0 };
	char buf[sizeof(err.msg) + 128];
	const char *path;
	bool writable;

	if (sbx_cgroup_detect(&h, o, &err) < 0) {
		/* err.msg starts "cgroup: "; the column already says it. */
		sbx_error_text(&err, buf, sizeof(buf));
		fprintf(f, "%-16s unusable: %s\n", "cgroup",
			strncmp(buf, "cgroup: ", 8) == 0 ? buf + 8 : buf);
		fprintf(f, "%-16s Hint: %s\n", "", err.hint[0] ? err.hint : sbx_cgroup_hint);
		return -1;
	}
	path = h.version == 2 ? h.v2_path : h.v1_path[SBX_CGROUP_MEMORY];
	/* v1 holds socket buffers to the limit only through
	 * memory.kmem.tcp.limit_in_bytes, which a run's cgroup has exactly
	 * when its parent has it; without it `sbx run` refuses. */
	if (h.version == 1 &&
	    !sbx_cgroup_has_file(h.v1_fd[SBX_CGROUP_MEMORY], "memory.kmem.tcp.limit_in_bytes")) {
		fprintf(f, "%-16s unusable: v1 (memory at %s): no memory.kmem.tcp.limit_in_bytes, "
			   "socket buffers cannot be limited\n",
			"cgroup", path);
		fprintf(f, "%-16s Hint: %s\n", "", sbx_cgroup_v1_tcp_hint);
		sbx_cgroup_host_free(&h);
		return -1;
	}
	/* Writable for this user is what creating a run's cgroup needs; on
	 * v1 every required controller's parent must be.  Then the trial. */
	writable = true;
	if (h.version == 2) {
		writable = faccessat(h.v2_fd, ".", W_OK, AT_EACCESS) == 0;
	} else {
		for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++)
			if (h.v1_fd[k] >= 0 && faccessat(h.v1_fd[k], ".", W_OK, AT_EACCESS) < 0)
				writable = false;
	}
	if (writable && trial_run(&h, &err) < 0) {
		sbx_error_text(&err, buf, sizeof(buf));
		fprintf(f, "%-16s blocked: v%d at %s: a trial run's cgroup failed: %s\n", "cgroup",
			h.version, path, strncmp(buf, "cgroup: ", 8) == 0 ? buf + 8 : buf);
		fprintf(f, "%-16s Hint: %s\n", "", err.hint[0] ? err.hint : sbx_cgroup_hint);
		sbx_cgroup_host_free(&h);
		return -1;
	}
	/* Present but not writable is as unusable as absent: say "blocked". */
	if (h.version == 2)
		fprintf(f, "%-16s %s: v2 at %s, controllers cpu memory pids, socket buffers in "
			   "memory.max, %s\n", "cgroup",
			writable ? "ok" : "blocked", path,
			writable ? "a trial run's cgroup works" : "not writable by this user");
	else
		fprintf(f,
			"%-16s %s: v1 (memory at %s), controllers cpu cpuacct memory pids%s, "
			"socket buffers limited, %s\n",
			"cgroup", writable ? "ok" : "blocked", path,
			h.v1_fd[SBX_CGROUP_FREEZER] >= 0 ? " freezer" : " (no freezer)",
			writable ? "a trial run's cgroup works" : "not writable by this user");
	if (!writable) {
		err = (struct sbx_error){ 0 };
		sbx_cgroup_hint_set(&err, o ? o->root : NULL, h.version, NULL, NULL);
		fprintf(f, "%-16s Hint: %s\n", "", err.hint);
	}
	sbx_cgroup_host_free(&h);
	return writable ? 0 : -1;
}
