/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-cgroup.c - the helpers both cgroup backends share (control file
 * parsing, the cpu quota), and one real run on this host's hierarchy.
 *
 * The backends against fake cgroupfs trees are in test-cgroup-detect.c
 * (which hierarchy, and the `sbx check` line), test-cgroup-v2.c and
 * test-cgroup-v1.c; this one needs no fake tree.
 */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "cgroup.h"
#include "skip.h"

/* --- parsing helpers ------------------------------------------------------ */

static void test_parse_u64(void **state)
{
	static const struct {
		const char *in;
		int r;
		uint64_t v;
	} cases[] = {
		{ "0\n", 0, 0 },
		{ "123456789\n", 0, 123456789 },
		{ "  42  \n", 0, 42 },
		{ "max\n", 0, UINT64_MAX },
		{ "max", 0, UINT64_MAX },
		{ "18446744073709551615\n", 0, UINT64_MAX },
		{ "18446744073709551616\n", -EINVAL, 0 },
		{ "-1\n", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
		{ "12abc\n", -EINVAL, 0 },
		{ "maximum\n", -EINVAL, 0 },
		{ "1 2\n", -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t v = 7;
		int r = sbx_cgroup_parse_u64(cases[i].in, &v);
		if (r != cases[i].r || (r == 0 && v != cases[i].v))
			fail_msg("parse_u64(\"%s\"): r=%d v=%llu", cases[i].in, r,
				 (unsigned long long)v);
	}
}

static void test_keyed_u64(void **state)
{
	static const struct {
		const char *text, *key;
		int r;
		uint64_t v;
	} cases[] = {
		{ "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\n", "oom_kill", 0, 2 },
		{ "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\n", "oom", 0, 2 },
		{ "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\n", "max", 0, 12 },
		{ "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\n", "oom_group_kill", -ENOENT, 0 },
		/* prefix of a longer key is not a match */
		{ "oom_kill_disable 1\nunder_oom 0\noom_kill 5\n", "oom_kill", 0, 5 },
		{ "usage_usec 10\nuser_usec 7\nsystem_usec 3", "system_usec", 0, 3 },
		{ "user\t250\nsystem  100\n", "system", 0, 100 },
		{ "user_usec abc\n", "user_usec", -EINVAL, 0 },
		{ "user_usec\n", "user_usec", -ENOENT, 0 },
		{ "user_usec -3\n", "user_usec", -EINVAL, 0 },
		{ "", "max", -ENOENT, 0 },
		{ "\n\nmax 1\n", "max", 0, 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t v = 77;
		int r = sbx_cgroup_keyed_u64(cases[i].text, cases[i].key, &v);
		if (r != cases[i].r || (r == 0 && v != cases[i].v))
			fail_msg("case %zu keyed(%s): r=%d v=%llu", i, cases[i].key, r,
				 (unsigned long long)v);
	}
}

static void test_cpu_quota(void **state)
{
	static const struct {
		uint64_t mc, q;
	} cases[] = { { 1000, 100000 }, { 500, 50000 }, { 2500, 250000 },
		      { 10, 1000 },     { 5, 1000 },    { 1, 1000 } };

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_int_equal(sbx_cgroup_cpu_quota_us(cases[i].mc), cases[i].q);
}

/* --- the real hierarchy of this host --------------------------------------- */

static int read_back(const struct sbx_cgroup *cg, int k, const char *file, char *buf, size_t len)
{
	int fd = cg->host->version == 2 ? cg->v2_fd : cg->v1_fd[k];
	_cleanup_free_ char *s = NULL;

	if (sbx_cgroup_read(fd, file, &s) < 0)
		return -1;
	snprintf(buf, len, "%s", s);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * Create a run's cgroup under this process's own cgroups, check that the
 * kernel took every limit, let a child blow the memory limit and a fork
 * loop hit the pids limit, kill, and remove.  CI runs as root on a v1
 * host; a builder who is not root and has no delegated cgroup gets a skip
 * that says so (a failure under SBX_TEST_NO_SKIP=1), root gets a failure.
 */
static void test_real_host(void **state)
{
	const struct sbx_cgroup_limits lim = {
		.memory_bytes = 64ull << 20, .pids = 8, .cpu_millicores = 500
	};
	struct sbx_cgroup_host h;
	struct sbx_error err = { 0 };
	struct sbx_cgroup *cg = NULL;
	struct sbx_cgroup_stats st;
	char buf[128], id[64];
	int go[2], status;
	pid_t pid;

	if (sbx_cgroup_detect(&h, NULL, &err) < 0)
		fail_msg("this test needs a usable cgroup hierarchy: %s (Hint: %s)", err.msg,
			 err.hint);
	snprintf(id, sizeof(id), "unit-%d", (int)getpid());
	if (sbx_cgroup_create(&h, id, &lim, &cg, &err) < 0) {
		if (geteuid() != 0)
			SBX_TEST_SKIP("needs root or a delegated cgroup: %s", err.msg);
		fail_msg("creating a cgroup here needs root or a delegated cgroup (euid %d): %s "
			 "(Hint: %s)",
			 (int)geteuid(), err.msg, err.hint);
	}

	if (h.version == 1) {
		assert_int_equal(read_back(cg, SBX_CGROUP_MEMORY, "memory.limit_in_bytes", buf,
					   sizeof(buf)), 0);
		assert_string_equal(buf, "67108864");
		if (cg->swap_limited) {
			read_back(cg, SBX_CGROUP_MEMORY, "memory.memsw.limit_in_bytes", buf,
				  sizeof(buf));
			assert_string_equal(buf, "67108864");
		}
		assert_int_equal(read_back(cg, SBX_CGROUP_MEMORY, "memory.kmem.tcp.limit_in_bytes",
					   buf, sizeof(buf)), 0);
		assert_string_equal(buf, "16777216");
		read_back(cg, SBX_CGROUP_CPU, "cpu.cfs_quota_us", buf, sizeof(buf));
		assert_string_equal(buf, "50000");
		read_back(cg, SBX_CGROUP_CPU, "cpu.cfs_period_us", buf, sizeof(buf));
		assert_string_equal(buf, "100000");
	} else {
		read_back(cg, 0, "memory.max", buf, sizeof(buf));
		assert_string_equal(buf, "67108864");
		read_back(cg, 0, "cpu.max", buf, sizeof(buf));
		assert_string_equal(buf, "50000 100000");
	}
	read_back(cg, SBX_CGROUP_PIDS, "pids.max", buf, sizeof(buf));
	assert_string_equal(buf, "8");

	/* A memory hog, placed before it starts: OOM-killed, counted. */
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		size_t n = 256u << 20;
		char *p;

		close(go[1]);
		(void)!read(go[0], buf, 1);
		p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(3);
		for (size_t i = 0; i < n; i += 4096)
			p[i] = 1;
		_exit(0);
	}
	close(go[0]);
	if (sbx_cgroup_attach(cg, pid, &err) < 0) {
		kill(pid, SIGKILL);
		fail_msg("attach: %s", err.msg);
	}
	close(go[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		fail_msg("the memory hog was not OOM-killed (status 0x%x)", status);
	assert_int_equal(sbx_cgroup_stats(cg, &st, &err), 0);
	assert_true(st.oom_kills >= 1);
	assert_true(st.has_peak_memory);
	assert_true(st.peak_memory_bytes >= (lim.memory_bytes / 10) * 9);

	/* A fork loop: pids.max refuses the ninth, the rest wait to be
	 * killed by sbx_cgroup_kill. */
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int refused = 0;

		close(go[1]);
		(void)!read(go[0], buf, 1);
		for (int i = 0; i < 16; i++) {
			pid_t c = fork();
			if (c == 0) {
				for (;;)
					pause();
			}
			if (c < 0)
				refused++;
		}
		_exit(refused > 0 ? 42 : 1);
	}
	close(go[0]);
	assert_int_equal(sbx_cgroup_attach(cg, pid, &err), 0);
	close(go[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);
	assert_int_equal(sbx_cgroup_stats(cg, &st, &err), 0);
	assert_true(st.pids_events_max >= 1);
	if (st.has_pids_peak)
		assert_int_equal(st.pids_peak, 8);

	/* The orphans (reparented to init, or to a subreaper) are killed. */
	if (sbx_cgroup_kill(cg, &err) < 0)
		fail_msg("kill: %s", err.msg);
	if (h.version == 1)
		assert_int_equal(sbx_cgroup_for_each_pid(cg->v1_fd[SBX_CGROUP_PIDS], NULL, NULL), 0);
	else
		assert_int_equal(sbx_cgroup_for_each_pid(cg->v2_fd, NULL, NULL), 0);

	if (sbx_cgroup_destroy(cg, &err) < 0)
		fail_msg("destroy: %s", err.msg);
	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++) {
		int pfd = h.version == 2 ? h.v2_fd : h.v1_fd[k];
		char name[80];
		struct stat sb;

		snprintf(name, sizeof(name), "sbx-%s", id);
		if (pfd >= 0 && fstatat(pfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0)
			fail_msg("%s still exists", name);
	}
	sbx_cgroup_host_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_keyed_u64),
		cmocka_unit_test(test_cpu_quota),
		cmocka_unit_test(test_real_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
