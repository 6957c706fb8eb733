/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-cgroup-detect.c - which cgroup hierarchy sbx uses, on fake cgroupfs
 * trees (cgroup-fake.h): v2, v1 and hybrid hosts, cgroup_parent, mounts
 * inside a cgroup namespace, the refusals with their Hint, and the line
 * `sbx check` prints.  Apart from the backends' tests because detection
 * reads only the kernel's texts and the parent's directory, whichever
 * backend it then picks.
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

/* --- detection -------------------------------------------------------------- */

static void test_detect_v2_delegated(void **state)
{
	struct fake *f = fake_v2("cpuset cpu io memory pids\n", "");
	struct sbx_cgroup_host h;
	_cleanup_free_ char *want = fake_path(f, "/sys/fs/cgroup" V2_SCOPE);
	json_t *j = NULL;
	char *s;

	detect_ok(f, NULL, &h);
	assert_int_equal(h.version, 2);
	assert_string_equal(h.v2_path, want);
	assert_true(h.v2_parent_is_self);
	assert_true(h.v2_fd >= 0);
	sbx_cgroup_describe(&h, &j);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "{\"controllers\":[\"cpu\",\"memory\",\"pids\"],\"version\":2}");
	free(s);
	json_decref(j);
	sbx_cgroup_host_free(&h);
	assert_int_equal(h.v2_fd, -1);
	fake_free(f);
}

static void test_detect_hybrid_this_host(void **state)
{
	struct fake *f = fake_hybrid();
	struct sbx_cgroup_host h;
	json_t *j = NULL;
	char *s;
	static const struct {
		int k;
		const char *rel;
	} want[] = {
		{ SBX_CGROUP_MEMORY, "/sys/fs/cgroup/memory/process_api/abc123" },
		{ SBX_CGROUP_PIDS, "/sys/fs/cgroup/pids" },
		{ SBX_CGROUP_CPU, "/sys/fs/cgroup/cpu" },
		{ SBX_CGROUP_CPUACCT, "/sys/fs/cgroup/cpuacct" },
		{ SBX_CGROUP_FREEZER, "/sys/fs/cgroup/freezer" },
	};

	detect_ok(f, NULL, &h);
	assert_int_equal(h.version, 1);
	assert_int_equal(h.v2_fd, -1);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		_cleanup_free_ char *p = fake_path(f, want[i].rel);
		assert_true(h.v1_fd[want[i].k] >= 0);
		assert_string_equal(h.v1_path[want[i].k], p);
	}
	sbx_cgroup_describe(&h, &j);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(
		s, "{\"controllers\":[\"cpu\",\"cpuacct\",\"freezer\",\"memory\",\"pids\"],\"version\":1}");
	free(s);
	json_decref(j);
	sbx_cgroup_host_free(&h);
	fake_free(f);
}

static void test_detect_v1_only_no_freezer(void **state)
{
	struct fake *f = fake_new(
		"31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
		"34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		"38 30 0:35 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
		"4:pids:/user.slice\n3:memory:/user.slice\n2:cpu,cpuacct:/user.slice\n");
	struct sbx_cgroup_host h;
	json_t *j = NULL;
	char *s;

	fake_dir(f, "/sys/fs/cgroup/cpu,cpuacct/user.slice", "cgroup.procs", "", NULL);
	fake_dir(f, "/sys/fs/cgroup/memory/user.slice", "cgroup.procs", "", NULL);
	fake_dir(f, "/sys/fs/cgroup/pids/user.slice", "cgroup.procs", "", NULL);
	detect_ok(f, NULL, &h);
	assert_int_equal(h.version, 1);
	assert_int_equal(h.v1_fd[SBX_CGROUP_FREEZER], -1);
	assert_string_equal(h.v1_path[SBX_CGROUP_CPU], h.v1_path[SBX_CGROUP_CPUACCT]);
	sbx_cgroup_describe(&h, &j);
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s,
			    "{\"controllers\":[\"cpu\",\"cpuacct\",\"memory\",\"pids\"],\"version\":1}");
	free(s);
	json_decref(j);
	sbx_cgroup_host_free(&h);
	fake_free(f);
}

/* Nothing usable: 69, the reason for each version, and the hint. */
static void test_detect_unusable(void **state)
{
	static const struct {
		const char *mountinfo, *proc, *mkdir, *controllers, *reason;
	} cases[] = {
		/* v1 without pids, and no cgroup2 at all */
		{ "31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct\n"
		  "34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
		  "3:memory:/\n2:cpu,cpuacct:/\n", NULL, NULL,
		  "(v2: no cgroup2 mount; v1: the pids controller is not mounted)" },
		/* cgroup2 whose parent lacks delegated controllers, no v1 */
		{ v2_mountinfo, v2_proc, "/sys/fs/cgroup" V2_SCOPE, "cpu io\n",
		  "cgroup.controllers lacks memory, pids; v1: the memory controller is not "
		  "mounted)" },
		/* the configured parent does not exist */
		{ v2_mountinfo, v2_proc, NULL, NULL, "No such file or directory" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fake *f = fake_new(cases[i].mountinfo, cases[i].proc);
		struct sbx_cgroup_detect_opts o = fake_opts(f, i == 2 ? "/sbx.slice" : NULL);
		struct sbx_error err = { 0 };
		struct sbx_cgroup_host h;

		if (cases[i].mkdir)
			fake_dir(f, cases[i].mkdir, "cgroup.controllers", cases[i].controllers,
				 NULL);
		assert_int_equal(sbx_cgroup_detect(&h, &o, &err), -1);
		assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
		if (!strstr(err.msg, cases[i].reason))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].reason);
		assert_non_null(strstr(err.msg, "memory, pids and cpu limits cannot be applied"));
		/* What the Hint says is test-cgroup-hint's. */
		assert_true(err.hint[0] != '\0');
		assert_int_equal(h.version, 0);
		assert_int_equal(h.v2_fd, -1);
		fake_free(f);
	}
}

/* cgroup_parent: a cgroup path, or the same behind the v2 mount point. */
static void test_detect_cgroup_parent(void **state)
{
	static const struct {
		const char *parent;
		int ok;
	} cases[] = {
		{ "/sbx.slice", 1 },
		{ "/sys/fs/cgroup/sbx.slice", 1 },
		{ "/sys/fs/cgroup/sbx.slice/", 1 },
		{ "/sbx.slice/../../etc", 0 },
		{ "sbx.slice", 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fake *f = fake_v2("cpu memory pids\n", "");
		_cleanup_free_ char *want = fake_path(f, "/sys/fs/cgroup/sbx.slice");
		struct sbx_cgroup_detect_opts o = fake_opts(f, cases[i].parent);
		struct sbx_error err = { 0 };
		struct sbx_cgroup_host h;
		int r;

		fake_dir(f, "/sys/fs/cgroup/sbx.slice", "cgroup.controllers", "cpu memory pids\n",
			 NULL);
		r = sbx_cgroup_detect(&h, &o, &err);
		if (cases[i].ok) {
			if (r < 0)
				fail_msg("%s: %s", cases[i].parent, err.msg);
			assert_int_equal(h.version, 2);
			assert_false(h.v2_parent_is_self);
			if (strncmp(h.v2_path, want, strlen(want)) != 0)
				fail_msg("%s: path %s", cases[i].parent, h.v2_path);
			sbx_cgroup_host_free(&h);
		} else {
			assert_int_equal(r, -1);
			assert_non_null(strstr(err.msg, "not absolute and clean"));
		}
		fake_free(f);
	}
}

/* Inside a cgroup namespace the mount shows only part of the hierarchy, and
 * mount points may hold escaped spaces. */
static void test_detect_mount_root_and_escapes(void **state)
{
	struct fake *f = fake_new(
		"26 22 0:23 /user.slice /sys/fs/cg\\040two rw - cgroup2 cgroup2 rw\n",
		"0::/user.slice/job\n");
	_cleanup_free_ char *want = fake_path(f, "/sys/fs/cg two/job");
	struct sbx_cgroup_host h;

	fake_dir(f, "/sys/fs/cg two/job", "cgroup.controllers", "memory pids cpu\n", NULL);
	detect_ok(f, NULL, &h);
	assert_int_equal(h.version, 2);
	assert_string_equal(h.v2_path, want);
	sbx_cgroup_host_free(&h);
	fake_free(f);
}

static void test_host_report(void **state)
{
	struct fake *f = fake_v2("cpu memory pids\n", "");
	struct fake *g = fake_new(v2_mountinfo, "0::/nowhere\n");
	struct sbx_cgroup_detect_opts o = fake_opts(f, NULL), og = fake_opts(g, NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_int_equal(sbx_cgroup_host_report(m, &o), 0);
	fflush(m);
	assert_non_null(strstr(buf, "cgroup           ok: v2 at "));
	assert_non_null(strstr(buf, ", a trial run's cgroup works\n"));
	assert_null(strstr(buf, "Hint:"));
	fclose(m);
	free(buf);

	buf = NULL;
	m = open_memstream(&buf, &len);
	assert_int_equal(sbx_cgroup_host_report(m, &og), -1);
	fflush(m);
	assert_non_null(strstr(buf, "cgroup           unusable: memory, pids and cpu limits"));
	assert_non_null(strstr(buf, "\n                 Hint: sbx needs a cgroup"));
	fclose(m);
	free(buf);

	/* Writable, but a run's cgroup cannot get its limits: the trial run
	 * says so, as sbx run would. */
	f->no_pids_files = true;
	buf = NULL;
	m = open_memstream(&buf, &len);
	assert_int_equal(sbx_cgroup_host_report(m, &o), -1);
	fflush(m);
	assert_non_null(strstr(buf, "cgroup           blocked: v2 at "));
	assert_non_null(strstr(buf, "a trial run's cgroup failed: "));
	assert_non_null(strstr(buf, "pids.max"));
	assert_non_null(strstr(buf, "\n                 Hint: "));
	fclose(m);
	free(buf);
	fake_free(f);
	fake_free(g);
}

/* cgroup.memory=nosocket: v2 would not charge socket buffers, so it is
 * refused with its own Hint, in sbx run and sbx check alike; other
 * cgroup.memory options are fine. */
static void test_v2_nosocket(void **state)
{
	static const struct {
		const char *cmdline;
		bool refused;
	} cases[] = {
		{ "root=/dev/vda1 cgroup.memory=nosocket\n", true },
		{ "cgroup.memory=nokmem,nosocket quiet", true },
		{ "cgroup.memory=nokmem cgroup.memory=nosocket", true },
		{ "cgroup.memory=nokmem quiet\n", false },
		{ "xcgroup.memory=nosocket nosocket", false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fake *f = fake_v2("cpu memory pids\n", "");
		struct sbx_cgroup_detect_opts o = fake_opts(f, NULL);
		struct sbx_error err = { 0 };
		struct sbx_cgroup_host h;
		char *buf = NULL;
		size_t len = 0;
		FILE *m;

		xwrite(f->cmdline, cases[i].cmdline);
		if (!cases[i].refused) {
			detect_ok(f, NULL, &h);
			assert_int_equal(h.version, 2);
			sbx_cgroup_host_free(&h);
			fake_free(f);
			continue;
		}
		assert_int_equal(sbx_cgroup_detect(&h, &o, &err), -1);
		assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
		assert_non_null(strstr(err.msg, "cgroup.memory=nosocket"));
		assert_non_null(strstr(err.hint, "remove cgroup.memory=nosocket"));
		m = open_memstream(&buf, &len);
		assert_int_equal(sbx_cgroup_host_report(m, &o), -1);
		fclose(m);
		assert_non_null(strstr(buf, "cgroup           unusable: v2: the kernel was booted with "
					    "cgroup.memory=nosocket"));
		assert_non_null(strstr(buf, "Hint: remove cgroup.memory=nosocket"));
		free(buf);
		fake_free(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_detect_v2_delegated),
		cmocka_unit_test(test_detect_hybrid_this_host),
		cmocka_unit_test(test_detect_v1_only_no_freezer),
		cmocka_unit_test(test_detect_unusable),
		cmocka_unit_test(test_detect_cgroup_parent),
		cmocka_unit_test(test_detect_mount_root_and_escapes),
		cmocka_unit_test(test_host_report),
		cmocka_unit_test(test_v2_nosocket),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
