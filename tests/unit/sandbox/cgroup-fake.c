/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup-fake.c - the fake cgroupfs trees of cgroup-fake.h: the temp dir,
 * the two host layouts (pure v2, and this host's v1 hybrid), and the hook
 * that plays the kernel.  Its own file so that the detection, v2 and v1
 * tests share one fake kernel instead of three copies of it.
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
#include <dirent.h>

#include <cmocka.h>

#include "cgroup-fake.h"

/* --- fake tree ---------------------------------------------------------- */

static void xwrite_at(int dirfd, const char *name, const char *text)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

void xwrite(const char *path, const char *text)
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

void assert_file(const char *dir, const char *name, const char *want)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", dir, name);
	_cleanup_free_ char *got = slurp(path);

	if (strcmp(got, want) != 0)
		fail_msg("%s: got \"%s\", want \"%s\"", path, got, want);
}

void mkdir_p(const char *path)
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

struct fake *fake_new(const char *mountinfo, const char *proc)
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

void fake_free(struct fake *f)
{
	rm_rf_at(AT_FDCWD, f->dir);
	free(f);
}

/* Make dir @rel (under root) with @files given as name, content pairs. */
void fake_dir(struct fake *f, const char *rel, ...)
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

char *fake_path(struct fake *f, const char *rel)
{
	return sbx_xasprintf("%s%s", f->root, rel);
}

struct sbx_cgroup_detect_opts fake_opts(struct fake *f, const char *parent)
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

void detect_ok(struct fake *f, const char *parent, struct sbx_cgroup_host *h)
{
	struct sbx_cgroup_detect_opts o = fake_opts(f, parent);
	struct sbx_error err = { 0 };

	if (sbx_cgroup_detect(h, &o, &err) < 0)
		fail_msg("detect: %s (hint: %s)", err.msg, err.hint);
	h->test_hook = fake_hook;
	h->test_data = f;
}

bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

bool exists_in(const char *dir, const char *name)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/%s", dir, name);
	return exists(p);
}

void xwrite_in(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/%s", dir, name);
	xwrite(p, text);
}

const struct sbx_cgroup_limits std_limits = {
	.memory_bytes = 256ull << 20,
	.pids = 64,
	.cpu_millicores = 500,
};

/* --- layouts ------------------------------------------------------------- */

/* A production host: pure v2, sbx in a delegated systemd scope. */
const char v2_mountinfo[] =
	"22 1 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw\n"
	"26 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 "
	"cgroup2 rw,nsdelegate,memory_recursiveprot\n";
const char v2_proc[] = "0::" V2_SCOPE "\n";

struct fake *fake_v2(const char *controllers, const char *subtree)
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

struct fake *fake_hybrid(void)
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

/* --- children ------------------------------------------------------------ */

/* A child that waits to be killed. */
pid_t sleeper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

void assert_sigkilled(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
}
