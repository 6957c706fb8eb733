/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-cgroup-v2.c - the v2 backend on a fake unified hierarchy
 * (cgroup-fake.h): what a run's cgroup is made with, the limits written
 * byte for byte, the refusals (missing files, an existing directory, bad
 * arguments, no write permission), the stats, and the kill with and
 * without cgroup.kill.
 */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "cgroup-fake.h"

/* --- v2 backend ---------------------------------------------------------- */

static void test_v2_create_writes(void **state)
{
	static const struct {
		const char *subtree_before, *subtree_after;
		uint64_t mc;
		const char *cpu_max;
	} cases[] = {
		{ "", "+memory +pids +cpu", 500, "50000 100000" },
		{ "memory\n", "+pids +cpu", 1000, "100000 100000" },
		{ "cpu io memory pids\n", "cpu io memory pids\n", 2500, "250000 100000" },
		{ "io", "+memory +pids +cpu", 5, "1000 100000" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fake *f = fake_v2("cpuset cpu io memory pids\n", cases[i].subtree_before);
		_cleanup_free_ char *parent = fake_path(f, "/sys/fs/cgroup" V2_SCOPE);
		_cleanup_free_ char *run = sbx_xasprintf("%s/sbx-r%zu", parent, i);
		_cleanup_free_ char *id = sbx_xasprintf("r%zu", i);
		struct sbx_cgroup_limits lim = std_limits;
		struct sbx_error err = { 0 };
		struct sbx_cgroup_host h;
		struct sbx_cgroup *cg = NULL;

		detect_ok(f, NULL, &h);
		lim.cpu_millicores = cases[i].mc;
		if (sbx_cgroup_create(&h, id, &lim, &cg, &err) < 0)
			fail_msg("create: %s", err.msg);
		assert_file(parent, "cgroup.subtree_control", cases[i].subtree_after);
		assert_file(run, "memory.max", "268435456");
		assert_file(run, "memory.swap.max", "0");
		assert_file(run, "memory.oom.group", "1");
		assert_file(run, "pids.max", "64");
		assert_file(run, "cpu.max", cases[i].cpu_max);
		assert_true(cg->swap_limited);
		/* the parent's processes are not moved when it is not needed */
		assert_false(exists_in(parent, "sbx.supervisor"));

		assert_int_equal(sbx_cgroup_attach(cg, 31337, &err), 0);
		assert_file(run, "cgroup.procs", "31337");

		assert_int_equal(sbx_cgroup_destroy(cg, &err), 0);
		assert_false(exists(run));
		sbx_cgroup_host_free(&h);
		fake_free(f);
	}
}

static void test_v2_no_swap_accounting(void **state)
{
	struct fake *f = fake_v2("cpu memory pids\n", "");
	_cleanup_free_ char *run = fake_path(f, "/sys/fs/cgroup" V2_SCOPE "/sbx-ns");
	struct sbx_error err = { 0 };
	struct sbx_cgroup_host h;
	struct sbx_cgroup *cg = NULL;

	f->no_swap = true;
	detect_ok(f, NULL, &h);
	assert_int_equal(sbx_cgroup_create(&h, "ns", &std_limits, &cg, &err), 0);
	assert_false(cg->swap_limited);
	assert_file(run, "memory.swap.max", "<absent>");
	assert_file(run, "memory.max", "268435456");
	assert_int_equal(sbx_cgroup_destroy(cg, &err), 0);
	sbx_cgroup_host_free(&h);
	fake_free(f);
}

/* A limit file the kernel did not make: 69 naming it, nothing left. */
static void test_v2_missing_controller_file(void **state)
{
	struct fake *f = fake_v2("cpu memory pids\n", "");
	_cleanup_free_ char *run = fake_path(f, "/sys/fs/cgroup" V2_SCOPE "/sbx-np");
	struct sbx_error err = { 0 };
	struct sbx_cgroup_host h;
	struct sbx_cgroup *cg = NULL;

	f->no_pids_files = true;
	detect_ok(f, NULL, &h);
	assert_int_equal(sbx_cgroup_create(&h, "np", &std_limits, &cg, &err), -1);
	assert_null(cg);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	assert_int_equal(err.errnum, ENOENT);
	assert_non_null(strstr(err.msg, "/sbx-np/pids.max: cannot write \"64\""));
	assert_false(exists(run));
	sbx_cgroup_host_free(&h);
	fake_free(f);
}

/* An existing run directory is never reused, and never removed. */
static void test_v2_exists(void **state)
{
	struct fake *f = fake_v2("cpu memory pids\n", "");
	_cleanup_free_ char *run = fake_path(f, "/sys/fs/cgroup" V2_SCOPE "/sbx-dup");
	struct sbx_error err = { 0 };
	struct sbx_cgroup_host h;
	struct sbx_cgroup *cg = NULL;

	fake_dir(f, "/sys/fs/cgroup" V2_SCOPE "/sbx-dup", "memory.max", "7\n", NULL);
	detect_ok(f, NULL, &h);
	assert_int_equal(sbx_cgroup_create(&h, "dup", &std_limits, &cg, &err), -1);
	assert_int_equal(err.errnum, EEXIST);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	assert_file(run, "memory.max", "7\n");
	sbx_cgroup_host_free(&h);
	fake_free(f);
}

static void test_bad_arguments(void **state)
{
	static const struct {
		const char *id;
		struct sbx_cgroup_limits lim;
	} cases[] = {
		{ "../x", { 1 << 20, 8, 100 } }, { "", { 1 << 20, 8, 100 } },
		{ ".hidden", { 1 << 20, 8, 100 } }, { "a/b", { 1 << 20, 8, 100 } },
		{ "ok", { 0, 8, 100 } },          { "ok", { 1 << 20, 0, 100 } },
		{ "ok", { 1 << 20, 8, 0 } },
	};
	struct fake *f = fake_v2("cpu memory pids\n", "");
	struct sbx_cgroup_host h;

	detect_ok(f, NULL, &h);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbx_error err = { 0 };
		struct sbx_cgroup *cg = NULL;
		assert_int_equal(sbx_cgroup_create(&h, cases[i].id, &cases[i].lim, &cg, &err), -1);
		assert_int_equal(err.code, SBX_EXIT_SOFTWARE);
		assert_null(cg);
	}
	/* nothing was made */
	assert_file(h.v2_path, "cgroup.subtree_control", "");
	sbx_cgroup_host_free(&h);
	fake_free(f);
}

/* A user who may not write the parent gets 69 and the hint. */
static void test_v2_not_writable(void **state)
{
	struct fake *f = fake_v2("cpu memory pids\n", "cpu memory pids\n");
	_cleanup_free_ char *scope = fake_path(f, "/sys/fs/cgroup" V2_SCOPE);
	int pipefd[2], status;
	pid_t pid;
	char buf[1200] = "";

	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sbx_cgroup_detect_opts o = fake_opts(f, NULL);
		struct sbx_error err = { 0 };
		struct sbx_cgroup_host h;
		struct sbx_cgroup *cg = NULL;
		char out[1200];
		int r;

		/* A builder who is not root owns the fake tree: take the
		 * write permission away instead of the identity. */
		if (geteuid() != 0 && chmod(scope, 0555) < 0)
			_exit(4);
		if (geteuid() == 0 && setresgid(65534, 65534, 65534) + setresuid(65534, 65534, 65534))
			_exit(2);
		if (sbx_cgroup_detect(&h, &o, &err) < 0)
			_exit(3);
		r = sbx_cgroup_create(&h, "nw", &std_limits, &cg, &err);
		snprintf(out, sizeof(out), "%d|%d|%s|%s", r, err.code, err.msg, err.hint);
		(void)!write(pipefd[1], out, strlen(out));
		_exit(0);
	}
	close(pipefd[1]);
	(void)!read(pipefd[0], buf, sizeof(buf) - 1);
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	chmod(scope, 0755);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!strstr(buf, "-1|69|cgroup: ") || !strstr(buf, "/sbx-nw: cannot create|") ||
	    !strstr(buf, "chown it to this user"))
		fail_msg("unexpected: %s", buf);
	assert_false(exists_in(scope, "sbx-nw"));
	fake_free(f);
}

static void test_v2_stats(void **state)
{
	static const struct {
		bool no_peaks;
		const char *mev, *cpu;
		int r;
		uint64_t oom_kills;
	} cases[] = {
		/* the fake kernel's memory.events: oom_kill 2, oom_group_kill 1 */
		{ false, NULL, NULL, 0, 2 },
		/* before 5.19 and 6.0: no memory.peak, pids.peak, oom_group_kill */
		{ true, "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\n", NULL, 0, 2 },
		/* memory.oom.group took the init, the shell and its child: one
		 * group kill, three processes, each counted once (not 3 + 1) */
		{ false, "low 0\nhigh 0\nmax 12\noom 1\noom_kill 3\noom_group_kill 1\n", NULL, 0,
		  3 },
		{ false, "low 0\nmax 1\n", NULL, -1, 0 },
		{ false, NULL, "usage_usec 9000\nuser_usec 7x000\n", -1, 0 },
		{ false, NULL, "system_usec 2000\n\nuser_usec 7000", 0, 2 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fake *f = fake_v2("cpu memory pids\n", "");
		_cleanup_free_ char *run = fake_path(f, "/sys/fs/cgroup" V2_SCOPE "/sbx-st");
		struct sbx_error err = { 0 };
		struct sbx_cgroup_host h;
		struct sbx_cgroup *cg = NULL;
		struct sbx_cgroup_stats st;

		f->no_peaks = cases[i].no_peaks;
		detect_ok(f, NULL, &h);
		assert_int_equal(sbx_cgroup_create(&h, "st", &std_limits, &cg, &err), 0);
		if (cases[i].mev)
			xwrite_in(run, "memory.events", cases[i].mev);
		if (cases[i].cpu)
			xwrite_in(run, "cpu.stat", cases[i].cpu);
		if (sbx_cgroup_stats(cg, &st, &err) != cases[i].r)
			fail_msg("case %zu: %s", i, err.msg);
		if (cases[i].r == 0) {
			assert_int_equal(st.has_peak_memory, !cases[i].no_peaks);
			assert_int_equal(st.has_pids_peak, !cases[i].no_peaks);
			if (!cases[i].no_peaks) {
				assert_int_equal(st.peak_memory_bytes, 805306368);
				assert_int_equal(st.pids_peak, 17);
			}
			assert_int_equal(st.oom_kills, cases[i].oom_kills);
			assert_true(st.has_memory_events_max);
			assert_int_equal(st.memory_events_max, 12);
			assert_int_equal(st.pids_events_max, 5);
			assert_int_equal(st.cpu_user_usec, 7000);
			assert_int_equal(st.cpu_system_usec, 2000);
		} else {
			assert_int_equal(err.code, SBX_EXIT_SOFTWARE);
			assert_non_null(strstr(err.msg, "sbx-st/"));
		}
		assert_int_equal(sbx_cgroup_destroy(cg, NULL), 0);
		sbx_cgroup_host_free(&h);
		fake_free(f);
	}
}

static void test_v2_kill(void **state)
{
	for (int with_kill_file = 1; with_kill_file >= 0; with_kill_file--) {
		struct fake *f = fake_v2("cpu memory pids\n", "");
		_cleanup_free_ char *run = fake_path(f, "/sys/fs/cgroup" V2_SCOPE "/sbx-k");
		struct sbx_error err = { 0 };
		struct sbx_cgroup_host h;
		struct sbx_cgroup *cg = NULL;
		pid_t child;
		char pids[32];

		f->no_kill = !with_kill_file;
		detect_ok(f, NULL, &h);
		assert_int_equal(sbx_cgroup_create(&h, "k", &std_limits, &cg, &err), 0);
		child = sleeper();
		snprintf(pids, sizeof(pids), "%d\n", (int)child);
		xwrite_in(run, "cgroup.procs", pids);
		xwrite_in(run, "cgroup.events", "populated 1\nfrozen 1\n");
		if (sbx_cgroup_kill(cg, &err) < 0)
			fail_msg("kill: %s", err.msg);
		if (with_kill_file) {
			/* the kernel kills; the fake only sees the request */
			assert_file(run, "cgroup.kill", "1");
			assert_file(run, "cgroup.freeze", "0\n");
			kill(child, SIGKILL);
		} else {
			assert_file(run, "cgroup.kill", "<absent>");
			/* frozen for the kill, thawed after */
			assert_file(run, "cgroup.freeze", "0");
		}
		assert_sigkilled(child);
		assert_true(f->killed_rounds >= 1);
		assert_int_equal(sbx_cgroup_destroy(cg, &err), 0);
		assert_false(exists(run));
		sbx_cgroup_host_free(&h);
		fake_free(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v2_create_writes),
		cmocka_unit_test(test_v2_no_swap_accounting),
		cmocka_unit_test(test_v2_missing_controller_file),
		cmocka_unit_test(test_v2_exists),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_v2_not_writable),
		cmocka_unit_test(test_v2_stats),
		cmocka_unit_test(test_v2_kill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
