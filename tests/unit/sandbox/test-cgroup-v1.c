/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-cgroup-v1.c - the v1 backend on fake per-controller hierarchies
 * (cgroup-fake.h), laid out like this host's: one directory per hierarchy
 * made, limited, attached to and removed, co-mounted cpu,cpuacct, the
 * stats, the kill through the freezer, the rollback of a half-made
 * cgroup, and the refusal without socket buffer accounting (in sbx run
 * and in sbx check).
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

/* --- v1 backend ---------------------------------------------------------- */

static const char *const v1_dirs[] = {
	"/sys/fs/cgroup/memory/process_api/abc123", "/sys/fs/cgroup/pids",
	"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/freezer",
};

static void test_v1_create_writes(void **state)
{
	for (int swap = 1; swap >= 0; swap--) {
		struct fake *f = fake_hybrid();
		_cleanup_free_ char *mem = fake_path(f, "/sys/fs/cgroup/memory/process_api/abc123/sbx-v");
		_cleanup_free_ char *pids = fake_path(f, "/sys/fs/cgroup/pids/sbx-v");
		_cleanup_free_ char *cpu = fake_path(f, "/sys/fs/cgroup/cpu/sbx-v");
		struct sbx_error err = { 0 };
		struct sbx_cgroup_host h;
		struct sbx_cgroup *cg = NULL;

		f->no_swap = !swap;
		detect_ok(f, NULL, &h);
		if (sbx_cgroup_create(&h, "v", &std_limits, &cg, &err) < 0)
			fail_msg("create: %s", err.msg);
		assert_file(mem, "memory.limit_in_bytes", "268435456");
		/* socket buffers: a quarter of the limit, on their own counter */
		assert_file(mem, "memory.kmem.tcp.limit_in_bytes", "67108864");
		if (swap) {
			assert_file(mem, "memory.memsw.limit_in_bytes", "268435456");
			assert_file(mem, "memory.swappiness", "60\n");
			assert_true(cg->swap_limited);
		} else {
			assert_file(mem, "memory.memsw.limit_in_bytes", "<absent>");
			assert_file(mem, "memory.swappiness", "0");
			assert_false(cg->swap_limited);
		}
		assert_file(pids, "pids.max", "64");
		assert_file(cpu, "cpu.cfs_period_us", "100000");
		assert_file(cpu, "cpu.cfs_quota_us", "50000");

		assert_int_equal(sbx_cgroup_attach(cg, 4321, &err), 0);
		for (size_t i = 0; i < ARRAY_SIZE(v1_dirs); i++) {
			_cleanup_free_ char *d = sbx_xasprintf("%s%s/sbx-v", f->root, v1_dirs[i]);
			assert_file(d, "cgroup.procs", "4321");
			assert_file(d, "freezer.state",
				    i == 4 ? "THAWED\n" : "<absent>");
		}
		assert_int_equal(sbx_cgroup_destroy(cg, &err), 0);
		for (size_t i = 0; i < ARRAY_SIZE(v1_dirs); i++) {
			_cleanup_free_ char *d = sbx_xasprintf("%s%s/sbx-v", f->root, v1_dirs[i]);
			assert_false(exists(d));
		}
		sbx_cgroup_host_free(&h);
		fake_free(f);
	}
}

/* cpu,cpuacct mounted together: one directory, made and removed once. */
static void test_v1_comounted(void **state)
{
	struct fake *f = fake_new(
		"31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
		"34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		"38 30 0:35 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
		"4:pids:/\n3:memory:/\n2:cpu,cpuacct:/\n");
	_cleanup_free_ char *cpu = fake_path(f, "/sys/fs/cgroup/cpu,cpuacct/sbx-c");
	struct sbx_error err = { 0 };
	struct sbx_cgroup_host h;
	struct sbx_cgroup *cg = NULL;
	struct sbx_cgroup_stats st;
	long hz = sysconf(_SC_CLK_TCK);

	fake_dir(f, "/sys/fs/cgroup/cpu,cpuacct", "cgroup.procs", "", NULL);
	fake_dir(f, "/sys/fs/cgroup/memory", "cgroup.procs", "", NULL);
	fake_dir(f, "/sys/fs/cgroup/pids", "cgroup.procs", "", NULL);
	detect_ok(f, NULL, &h);
	if (sbx_cgroup_create(&h, "c", &std_limits, &cg, &err) < 0)
		fail_msg("create: %s", err.msg);
	assert_file(cpu, "cpu.cfs_quota_us", "50000");
	assert_true(cg->v1_fd[SBX_CGROUP_CPUACCT] >= 0);
	/* no usage_user/usage_sys here: cpuacct.stat ticks are converted */
	assert_int_equal(sbx_cgroup_stats(cg, &st, &err), 0);
	assert_int_equal(st.cpu_user_usec, 250 * (1000000 / hz));
	assert_int_equal(st.cpu_system_usec, 100 * (1000000 / hz));
	assert_int_equal(sbx_cgroup_attach(cg, 99, &err), 0);
	assert_file(cpu, "cgroup.procs", "99");
	assert_int_equal(sbx_cgroup_destroy(cg, &err), 0);
	assert_false(exists(cpu));
	sbx_cgroup_host_free(&h);
	fake_free(f);
}

static void test_v1_stats(void **state)
{
	static const struct {
		bool no_peaks, no_split;
		const char *oom;
		int r;
	} cases[] = {
		{ false, false, NULL, 0 },
		{ true, true, NULL, 0 },
		/* before 4.13 oom_control has no oom_kill: refuse to guess */
		{ false, false, "oom_kill_disable 0\nunder_oom 0\n", -1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fake *f = fake_hybrid();
		_cleanup_free_ char *mem = fake_path(f, "/sys/fs/cgroup/memory/process_api/abc123/sbx-s");
		struct sbx_error err = { 0 };
		struct sbx_cgroup_host h;
		struct sbx_cgroup *cg = NULL;
		struct sbx_cgroup_stats st;
		long hz = sysconf(_SC_CLK_TCK);

		f->no_peaks = cases[i].no_peaks;
		f->no_usage_split = cases[i].no_split;
		detect_ok(f, NULL, &h);
		assert_int_equal(sbx_cgroup_create(&h, "s", &std_limits, &cg, &err), 0);
		if (cases[i].oom)
			xwrite_in(mem, "memory.oom_control", cases[i].oom);
		assert_int_equal(sbx_cgroup_stats(cg, &st, &err), cases[i].r);
		if (cases[i].r == 0) {
			assert_true(st.has_peak_memory);
			/* memory.max_usage_in_bytes + memory.kmem.tcp.max_usage_in_bytes */
			assert_int_equal(st.peak_memory_bytes, 123456789 + 1000000);
			/* oom_kill from oom_control, never failcnt (999) */
			assert_int_equal(st.oom_kills, 3);
			assert_false(st.has_memory_events_max);
			assert_int_equal(st.has_pids_peak, !cases[i].no_peaks);
			if (!cases[i].no_peaks)
				assert_int_equal(st.pids_peak, 9);
			assert_int_equal(st.pids_events_max, 7);
			if (cases[i].no_split) {
				assert_int_equal(st.cpu_user_usec, 250 * (1000000 / hz));
				assert_int_equal(st.cpu_system_usec, 100 * (1000000 / hz));
			} else {
				assert_int_equal(st.cpu_user_usec, 2500000);
				assert_int_equal(st.cpu_system_usec, 1000000);
			}
		} else {
			assert_non_null(strstr(err.msg, "memory.oom_control: oom_kill"));
		}
		assert_int_equal(sbx_cgroup_destroy(cg, NULL), 0);
		sbx_cgroup_host_free(&h);
		fake_free(f);
	}
}

static void test_v1_kill_and_destroy(void **state)
{
	struct fake *f = fake_hybrid();
	_cleanup_free_ char *frz = fake_path(f, "/sys/fs/cgroup/freezer/sbx-kk");
	_cleanup_free_ char *mem = fake_path(f, "/sys/fs/cgroup/memory/process_api/abc123/sbx-kk");
	struct sbx_error err = { 0 };
	struct sbx_cgroup_host h;
	struct sbx_cgroup *cg = NULL;
	pid_t a, b;
	char pids[64];

	detect_ok(f, NULL, &h);
	assert_int_equal(sbx_cgroup_create(&h, "kk", &std_limits, &cg, &err), 0);
	a = sleeper();
	b = sleeper();
	snprintf(pids, sizeof(pids), "%d\n%d\n", (int)a, (int)b);
	xwrite_in(frz, "cgroup.procs", pids);
	xwrite_in(mem, "cgroup.procs", pids);
	if (sbx_cgroup_kill(cg, &err) < 0)
		fail_msg("kill: %s", err.msg);
	assert_sigkilled(a);
	assert_sigkilled(b);
	assert_file(frz, "freezer.state", "THAWED");

	assert_int_equal(sbx_cgroup_destroy(cg, &err), 0);
	for (size_t i = 0; i < ARRAY_SIZE(v1_dirs); i++) {
		_cleanup_free_ char *d = sbx_xasprintf("%s%s/sbx-kk", f->root, v1_dirs[i]);
		assert_false(exists(d));
	}
	sbx_cgroup_host_free(&h);
	fake_free(f);
}

/* A v1 limit file missing (controller half there): 69, every hierarchy's
 * directory removed again. */
static void test_v1_rollback(void **state)
{
	struct fake *f = fake_hybrid();
	struct sbx_error err = { 0 };
	struct sbx_cgroup_host h;
	struct sbx_cgroup *cg = NULL;
	_cleanup_free_ char *pre = fake_path(f, "/sys/fs/cgroup/cpu/sbx-rb");

	/* cpu's directory exists already: EEXIST after memory and pids were
	 * made; those are removed, the stranger's is kept. */
	mkdir_p(pre);
	detect_ok(f, NULL, &h);
	assert_int_equal(sbx_cgroup_create(&h, "rb", &std_limits, &cg, &err), -1);
	assert_int_equal(err.errnum, EEXIST);
	assert_true(exists(pre));
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *d = sbx_xasprintf("%s%s/sbx-rb", f->root, v1_dirs[i]);
		assert_false(exists(d));
	}
	sbx_cgroup_host_free(&h);
	fake_free(f);
}

/* A v1 memory controller without memory.kmem.tcp.limit_in_bytes could
 * not hold socket buffers to the limit: 69 with a Hint that says how to
 * get one that can, and nothing left behind. */
static void test_v1_no_tcp_accounting(void **state)
{
	struct fake *f = fake_hybrid();
	struct sbx_error err = { 0 };
	struct sbx_cgroup_host h;
	struct sbx_cgroup *cg = NULL;

	f->no_tcp = true;
	detect_ok(f, NULL, &h);
	assert_int_equal(sbx_cgroup_create(&h, "nt", &std_limits, &cg, &err), -1);
	assert_null(cg);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	assert_non_null(strstr(err.msg, "sbx-nt/memory.kmem.tcp.limit_in_bytes: socket memory "
					"cannot be limited"));
	assert_non_null(strstr(err.hint, "systemd.unified_cgroup_hierarchy=1"));
	for (size_t i = 0; i < ARRAY_SIZE(v1_dirs); i++) {
		_cleanup_free_ char *d = sbx_xasprintf("%s%s/sbx-nt", f->root, v1_dirs[i]);
		assert_false(exists(d));
	}
	sbx_cgroup_host_free(&h);
	fake_free(f);
}

/* sbx check says the same before any run: the v1 parent's memory
 * directory has the file (every memory cgroup has it where the kernel
 * supports it), or the line is "unusable" with that Hint. */
static void test_v1_host_report_tcp(void **state)
{
	for (int tcp = 1; tcp >= 0; tcp--) {
		struct fake *f = fake_hybrid();
		struct sbx_cgroup_detect_opts o = fake_opts(f, NULL);
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		if (tcp)
			fake_dir(f, "/sys/fs/cgroup/memory/process_api/abc123",
				 "memory.kmem.tcp.limit_in_bytes", "9223372036854771712\n", NULL);
		assert_int_equal(sbx_cgroup_host_report(m, &o), tcp ? 0 : -1);
		fflush(m);
		if (tcp) {
			assert_non_null(strstr(buf, "cgroup           ok: v1 "));
			assert_non_null(strstr(buf, "socket buffers limited"));
			assert_null(strstr(buf, "Hint:"));
		} else {
			assert_non_null(strstr(buf, "cgroup           unusable: v1 "));
			assert_non_null(strstr(buf, "memory.kmem.tcp.limit_in_bytes"));
			assert_non_null(strstr(buf, "Hint: this kernel's cgroup v1"));
		}
		fclose(m);
		free(buf);
		fake_free(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1_create_writes),
		cmocka_unit_test(test_v1_comounted),
		cmocka_unit_test(test_v1_stats),
		cmocka_unit_test(test_v1_kill_and_destroy),
		cmocka_unit_test(test_v1_rollback),
		cmocka_unit_test(test_v1_no_tcp_accounting),
		cmocka_unit_test(test_v1_host_report_tcp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
