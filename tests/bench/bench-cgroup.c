/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-cgroup - the cost of a run's cgroup on this host: create with
 * limits, place a process, read the stats, destroy.  Uses sbx's own
 * backend (v2 or v1, whichever the host offers), so the numbers are what a
 * run pays.  Prints medians in milliseconds.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "state.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 30;
	struct sbx_cgroup_host host = { 0 };
	struct sbx_cgroup_detect_opts opts = { .cgroup_parent = getenv("SBX_BENCH_CGROUP_PARENT") };
	struct sbx_cgroup_limits lim = { .memory_bytes = 256 << 20, .pids = 64, .cpu_millicores = 1000 };
	struct sbx_error err = { 0 };
	double *create = calloc((size_t)runs, sizeof(double));
	double *attach = calloc((size_t)runs, sizeof(double));
	double *destroy = calloc((size_t)runs, sizeof(double));

	if (runs < 1 || sbx_cgroup_detect(&host, &opts, &err) < 0) {
		sbx_error_print(&err);
		return 1;
	}
	for (int i = 0; i < runs; i++) {
		char id[SBX_RUN_ID_LEN + 1];
		struct sbx_cgroup *cg = NULL;
		struct sbx_cgroup_stats st;
		double t0, t1, t2, t3;
		pid_t pid;

		sbx_run_id_new(id);
		pid = fork();
		if (pid == 0) {
			pause();
			_exit(0);
		}
		t0 = now_ms();
		if (sbx_cgroup_create(&host, id, &lim, &cg, &err) < 0)
			goto fail;
		t1 = now_ms();
		if (sbx_cgroup_attach(cg, pid, &err) < 0)
			goto fail;
		t2 = now_ms();
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (sbx_cgroup_stats(cg, &st, &err) < 0 || sbx_cgroup_destroy(cg, &err) < 0)
			goto fail;
		t3 = now_ms();
		create[i] = t1 - t0;
		attach[i] = t2 - t1;
		destroy[i] = t3 - t2;
		continue;
fail:
		sbx_error_print(&err);
		kill(pid, SIGKILL);
		return 1;
	}
	qsort(create, (size_t)runs, sizeof(double), cmp);
	qsort(attach, (size_t)runs, sizeof(double), cmp);
	qsort(destroy, (size_t)runs, sizeof(double), cmp);
	printf("cgroup v%d, %d runs, median ms: create+limits %.2f, attach %.2f%s, "
	       "stats+kill+destroy %.2f\n",
	       host.version, runs, create[runs / 2], attach[runs / 2],
	       host.version == 2 ? " (v2 runs use CLONE_INTO_CGROUP instead)" : "",
	       destroy[runs / 2]);
	sbx_cgroup_host_free(&host);
	return 0;
}
