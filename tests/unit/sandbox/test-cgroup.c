/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-cgroup.c - both cgroup backends against fake cgroupfs trees, and
 * one real run on this host's hierarchy.
 *
 * A fake tree is plain directories in a temp dir: a mountinfo and a
 * /proc/self/cgroup text point detection at them (through the "root"
 * prefix), and the host's test hook plays the kernel: it lays out the
 * control files after each mkdir, empties a directory before rmdir, and
 * forgets killed pids.  Every file a backend writes is then read back and
 * compared byte for byte.
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
#include <dirent.h>

#include <cmocka.h>

#include "cgroup.h"
#include "skip.h"

/* --- fake tree ---------------------------------------------------------- */

struct fake {
	char dir[256];   /* the temp dir */
	char root[300];  /* dir/mnt: prefix of every mount point */
	char mountinfo[300];
	char proc[300];
	char cmdline[300];
	/* What the fake kernel omits from a new cgroup directory. */
	bool no_swap;        /* v2 memory.swap.max, v1 memory.memsw.* */
	bool no_pids_files;  /* pids.max and friends: controller not enabled */
	bool no_kill;        /* v2 cgroup.kill (before 5.14) */
	bool no_peaks;       /* memory.peak, pids.peak */
	bool no_usage_split; /* v1 cpuacct.usage_user/usage_sys */
	bool no_tcp;         /* v1 memory.kmem.tcp.* (no socket accounting) */
	int killed_rounds;
};

static void xwrite_at(int dirfd, const char *name, const char *text)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void xwrite(const char *path, const char *text)
{
	xwrite_at(AT_FDCWD, path, text);
}

/* The file's content, or "<absent>". */
static char *slurp_at(int dirfd, const char *name)
{
	char *s = NULL;

	if (sbx_cgroup_read(dirfd, name, &s) < 0)
		return sbx_xstrdup("<absent>");
	return s;
}

static char *slurp(const char *path)
{
	return slurp_at(AT_FDCWD, path);
}

static void assert_file(const char *dir, const char *name, const char *want)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", dir, name);
	_cleanup_free_ char *got = slurp(path);

	if (strcmp(got, want) != 0)
		fail_msg("%s: got \"%s\", want \"%s\"", path, got, want);
}

static void mkdir_p(const char *path)
{
	_cleanup_free_ char *p = sbx_xstrdup(path);

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
}

static void rm_rf_at(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	DIR *d;
	struct dirent *e;

	if (fd < 0) {
		unlinkat(parent, name, 0);
		return;
	}
	d = fdopendir(fd);
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (e->d_type == DT_DIR)
			rm_rf_at(dirfd(d), e->d_name);
		else
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

static void fake_hook(void *data, enum sbx_cgroup_test_event ev, int fd_,
		      const char *hierarchy, const char *name)
{
	struct fake *f = data;
	int dfd = fd_;

	switch (ev) {
	case SBX_CGROUP_TEST_MKDIR:
		xwrite_at(dfd, "cgroup.procs", "");
		if (strcmp(hierarchy, "unified") == 0) {
			if (strcmp(name, "sbx.supervisor") == 0)
				return;
			xwrite_at(dfd, "cgroup.events", "populated 0\nfrozen 0\n");
			xwrite_at(dfd, "cgroup.freeze", "0\n");
			if (!f->no_kill)
				xwrite_at(dfd, "cgroup.kill", "");
			xwrite_at(dfd, "memory.max", "max\n");
			if (!f->no_swap)
				xwrite_at(dfd, "memory.swap.max", "max\n");
			xwrite_at(dfd, "memory.oom.group", "0\n");
			xwrite_at(dfd, "memory.events",
				  "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 1\n");
			if (!f->no_peaks) {
				xwrite_at(dfd, "memory.peak", "805306368\n");
				xwrite_at(dfd, "pids.peak", "17\n");
			}
			if (!f->no_pids_files) {
				xwrite_at(dfd, "pids.max", "max\n");
				xwrite_at(dfd, "pids.events", "max 5\n");
			}
			xwrite_at(dfd, "cpu.max", "max 100000\n");
			xwrite_at(dfd, "cpu.stat",
				  "usage_usec 9000\nuser_usec 7000\nsystem_usec 2000\n"
				  "nr_periods 0\nnr_throttled 0\nthrottled_usec 0\n");
		} else if (strcmp(hierarchy, "memory") == 0) {
			xwrite_at(dfd, "memory.limit_in_bytes", "9223372036854771712\n");
			if (!f->no_swap)
				xwrite_at(dfd, "memory.memsw.limit_in_bytes",
					  "9223372036854771712\n");
			xwrite_at(dfd, "memory.swappiness", "60\n");
			xwrite_at(dfd, "memory.max_usage_in_bytes", "123456789\n");
			if (!f->no_tcp) {
				xwrite_at(dfd, "memory.kmem.tcp.limit_in_bytes",
					  "9223372036854771712\n");
				xwrite_at(dfd, "memory.kmem.tcp.max_usage_in_bytes", "1000000\n");
			}
			xwrite_at(dfd, "memory.failcnt", "999\n");
			xwrite_at(dfd, "memory.oom_control",
				  "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
		} else if (strcmp(hierarchy, "pids") == 0) {
			xwrite_at(dfd, "pids.max", "max\n");
			xwrite_at(dfd, "pids.events", "max 7\n");
			if (!f->no_peaks)
				xwrite_at(dfd, "pids.peak", "9\n");
		} else if (strcmp(hierarchy, "cpu") == 0) {
			xwrite_at(dfd, "cpu.cfs_period_us", "100000\n");
			xwrite_at(dfd, "cpu.cfs_quota_us", "-1\n");
			/* co-mounted cpu,cpuacct: one directory has both */
			xwrite_at(dfd, "cpuacct.stat", "user 250\nsystem 100\n");
		} else if (strcmp(hierarchy, "cpuacct") == 0) {
			xwrite_at(dfd, "cpuacct.stat", "user 250\nsystem 100\n");
			if (!f->no_usage_split) {
				xwrite_at(dfd, "cpuacct.usage_user", "2500000000\n");
				xwrite_at(dfd, "cpuacct.usage_sys", "1000000999\n");
			}
		} else if (strcmp(hierarchy, "freezer") == 0) {
			xwrite_at(dfd, "freezer.state", "THAWED\n");
		}
		break;
	case SBX_CGROUP_TEST_RMDIR: {
		/* The kernel removes control files with the directory. */
		int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		DIR *d;
		struct dirent *e;

		if (fd < 0)
			return;
		d = fdopendir(fd);
		while ((e = readdir(d)))
			if (e->d_type == DT_REG)
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
		break;
	}
	case SBX_CGROUP_TEST_KILLED:
		/* Killed tasks leave the group. */
		f->killed_rounds++;
		xwrite_at(dfd, "cgroup.procs", "");
		if (strcmp(hierarchy, "unified") == 0)
			xwrite_at(dfd, "cgroup.events", "populated 0\nfrozen 0\n");
		break;
	}
}

static struct fake *fake_new(const char *mountinfo, const char *proc)
{
	struct fake *f = sbx_xcalloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/sbx-test-cgroup.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	chmod(f->dir, 0755);
	snprintf(f->root, sizeof(f->root), "%s/mnt", f->dir);
	snprintf(f->mountinfo, sizeof(f->mountinfo), "%s/mountinfo", f->dir);
	snprintf(f->proc, sizeof(f->proc), "%s/cgroup", f->dir);
	snprintf(f->cmdline, sizeof(f->cmdline), "%s/cmdline", f->dir);
	mkdir_p(f->root);
	xwrite(f->mountinfo, mountinfo);
	xwrite(f->proc, proc);
	xwrite(f->cmdline, "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet\n");
	return f;
}

static void fake_free(struct fake *f)
{
	rm_rf_at(AT_FDCWD, f->dir);
	free(f);
}

/* Make dir @rel (under root) with @files given as name, content pairs. */
static void fake_dir(struct fake *f, const char *rel, ...)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s%s", f->root, rel);
	va_list ap;
	const char *name;

	mkdir_p(path);
	va_start(ap, rel);
	while ((name = va_arg(ap, const char *))) {
		_cleanup_free_ char *p = sbx_xasprintf("%s/%s", path, name);
		xwrite(p, va_arg(ap, const char *));
	}
	va_end(ap);
}

static char *fake_path(struct fake *f, const char *rel)
{
	return sbx_xasprintf("%s%s", f->root, rel);
}

static struct sbx_cgroup_detect_opts fake_opts(struct fake *f, const char *parent)
{
	return (struct sbx_cgroup_detect_opts){
		.cgroup_parent = parent,
		.mountinfo = f->mountinfo,
		.proc_cgroup = f->proc,
		.cmdline = f->cmdline,
		.root = f->root,
		.test_hook = fake_hook,
		.test_data = f,
	};
}

static void detect_ok(struct fake *f, const char *parent, struct sbx_cgroup_host *h)
{
	struct sbx_cgroup_detect_opts o = fake_opts(f, parent);
	struct sbx_error err = { 0 };

	if (sbx_cgroup_detect(h, &o, &err) < 0)
		fail_msg("detect: %s (hint: %s)", err.msg, err.hint);
	h->test_hook = fake_hook;
	h->test_data = f;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static bool exists_in(const char *dir, const char *name)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/%s", dir, name);
	return exists(p);
}

static void xwrite_in(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/%s", dir, name);
	xwrite(p, text);
}

static const struct sbx_cgroup_limits std_limits = {
	.memory_bytes = 256ull << 20,
	.pids = 64,
	.cpu_millicores = 500,
};

/* --- layouts ------------------------------------------------------------- */

/* A production host: pure v2, sbx in a delegated systemd scope. */
#define V2_SCOPE "/user.slice/user-1000.slice/user@1000.service/app.slice/run-1.scope"
static const char v2_mountinfo[] =
	"22 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw\n"
	"26 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 "
	"cgroup2 rw,nsdelegate,memory_recursiveprot\n";
static const char v2_proc[] = "0::" V2_SCOPE "\n";

static struct fake *fake_v2(const char *controllers, const char *subtree)
{
	struct fake *f = fake_new(v2_mountinfo, v2_proc);

	fake_dir(f, "/sys/fs/cgroup" V2_SCOPE, "cgroup.controllers", controllers,
		 "cgroup.subtree_control", subtree, "cgroup.procs", "4242\n", NULL);
	return f;
}

/* This host: v1 controllers, our memory cgroup nested, an empty cgroup2. */
static const char hybrid_mountinfo[] =
	"30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
	"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"36 30 0:33 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
	"38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
	"39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
static const char hybrid_proc[] = "9:name=systemd:/\n8:pids:/\n6:freezer:/\n"
				  "4:memory:/process_api/abc123\n3:cpuset:/\n2:cpuacct:/\n"
				  "1:cpu:/\n0::/\n";

static struct fake *fake_hybrid(void)
{
	struct fake *f = fake_new(hybrid_mountinfo, hybrid_proc);

	fake_dir(f, "/sys/fs/cgroup/unified", "cgroup.controllers", "hugetlb\n", NULL);
	fake_dir(f, "/sys/fs/cgroup/memory/process_api/abc123", "cgroup.procs", "", NULL);
	fake_dir(f, "/sys/fs/cgroup/pids", "cgroup.procs", "", NULL);
	fake_dir(f, "/sys/fs/cgroup/cpu", "cgroup.procs", "", NULL);
	fake_dir(f, "/sys/fs/cgroup/cpuacct", "cgroup.procs", "", NULL);
	fake_dir(f, "/sys/fs/cgroup/freezer", "cgroup.procs", "", NULL);
	return f;
}

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

/* A child that waits to be killed. */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void assert_sigkilled(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
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
		cmocka_unit_test(test_detect_v2_delegated),
		cmocka_unit_test(test_detect_hybrid_this_host),
		cmocka_unit_test(test_detect_v1_only_no_freezer),
		cmocka_unit_test(test_detect_unusable),
		cmocka_unit_test(test_detect_cgroup_parent),
		cmocka_unit_test(test_detect_mount_root_and_escapes),
		cmocka_unit_test(test_host_report),
		cmocka_unit_test(test_v2_nosocket),
		cmocka_unit_test(test_v2_create_writes),
		cmocka_unit_test(test_v2_no_swap_accounting),
		cmocka_unit_test(test_v2_missing_controller_file),
		cmocka_unit_test(test_v2_exists),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_v2_not_writable),
		cmocka_unit_test(test_v2_stats),
		cmocka_unit_test(test_v2_kill),
		cmocka_unit_test(test_v1_create_writes),
		cmocka_unit_test(test_v1_comounted),
		cmocka_unit_test(test_v1_stats),
		cmocka_unit_test(test_v1_kill_and_destroy),
		cmocka_unit_test(test_v1_rollback),
		cmocka_unit_test(test_v1_no_tcp_accounting),
		cmocka_unit_test(test_v1_host_report_tcp),
		cmocka_unit_test(test_real_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
