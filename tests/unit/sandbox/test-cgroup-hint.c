/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-cgroup-hint.c - the Hint of an unusable cgroup names exactly what
 * is missing in which hierarchy, and offers systemd's delegation only
 * where systemd is the init.
 *
 * Detection runs against fake trees (a mountinfo and a /proc/self/cgroup
 * text, and plain directories under a root prefix, as test-cgroup does);
 * "systemd is the init" is a run/systemd/system directory under the same
 * prefix, which is where sbx looks, as sd_booted(3) does.
 */
#include "config.h"

#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "cgroup.h"

struct tree {
	char dir[256];
	char root[300];
	char mountinfo[300];
	char proc[300];
	char cmdline[300];
};

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void mkdir_p(const char *path)
{
	_cleanup_free_ char *p = sbx_xstrdup(path);

	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	mkdir(p, 0755);
}

/* @dir (under the root) with @files given as name, content pairs. */
static void tree_dir(struct tree *t, const char *rel, ...)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s%s", t->root, rel);
	va_list ap;
	const char *name;

	mkdir_p(path);
	va_start(ap, rel);
	while ((name = va_arg(ap, const char *))) {
		_cleanup_free_ char *p = sbx_xasprintf("%s/%s", path, name);
		put(p, va_arg(ap, const char *));
	}
	va_end(ap);
}

static struct tree *tree_new(const char *mountinfo, const char *proc, bool systemd)
{
	struct tree *t = sbx_xcalloc(1, sizeof(*t));

	snprintf(t->dir, sizeof(t->dir), "/tmp/sbx-test-cgroup-hint.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->root, sizeof(t->root), "%s/mnt", t->dir);
	snprintf(t->mountinfo, sizeof(t->mountinfo), "%s/mountinfo", t->dir);
	snprintf(t->proc, sizeof(t->proc), "%s/cgroup", t->dir);
	snprintf(t->cmdline, sizeof(t->cmdline), "%s/cmdline", t->dir);
	mkdir_p(t->root);
	put(t->mountinfo, mountinfo);
	put(t->proc, proc);
	put(t->cmdline, "ro quiet\n");
	if (systemd)
		tree_dir(t, "/run/systemd/system", NULL);
	return t;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void tree_free(struct tree *t)
{
	nftw(t->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(t);
}

/* Detection must fail (69); the Hint it set is returned in @err. */
static void detect_fails(struct tree *t, const char *parent, struct sbx_error *err)
{
	struct sbx_cgroup_detect_opts o = {
		.cgroup_parent = parent,
		.mountinfo = t->mountinfo,
		.proc_cgroup = t->proc,
		.cmdline = t->cmdline,
		.root = t->root,
	};
	struct sbx_cgroup_host h;

	*err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_cgroup_detect(&h, &o, err), -1);
	assert_int_equal(err->code, SBX_EXIT_UNAVAILABLE);
	print_message("# hint: %s\n", err->hint);
}

static void has(const char *hint, const char *s)
{
	if (!strstr(hint, s))
		fail_msg("the Hint \"%s\" lacks \"%s\"", hint, s);
}

static void lacks(const char *hint, const char *s)
{
	if (strstr(hint, s))
		fail_msg("the Hint \"%s\" has \"%s\"", hint, s);
}

/* A v1 host with memory and cpu only: pids and cpuacct are named, the
 * freezer (optional) is not, and the advice is to mount them. */
static const char v1_partial[] =
	"30 22 0:27 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
	"31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
	"34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";

static void test_v1_missing(void **state)
{
	for (int systemd = 0; systemd <= 1; systemd++) {
		struct tree *t = tree_new(v1_partial, "4:memory:/\n1:cpu:/\n", systemd);
		struct sbx_error err;

		detect_fails(t, NULL, &err);
		has(err.hint, "cgroup v1: pids, cpuacct not mounted");
		has(err.hint, "memory, pids, cpu and cpuacct");
		has(err.hint, "freezer is optional");
		has(err.hint, "mount -t cgroup -o pids cgroup /sys/fs/cgroup/pids");
		/* Delegation cannot mount a hierarchy, with systemd or not. */
		lacks(err.hint, "Delegate");
		/* The message itself is unchanged: the first one missing. */
		has(err.msg, "v1: the pids controller is not mounted");
		tree_free(t);
	}
}

/* Only the freezer missing: not an error at all. */
static void test_v1_freezer_optional(void **state)
{
	struct tree *t = tree_new("31 30 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct\n"
				  "34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
				  "38 30 0:35 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n",
				  "8:pids:/\n4:memory:/\n1:cpu,cpuacct:/\n", false);
	struct sbx_cgroup_detect_opts o = {
		.mountinfo = t->mountinfo, .proc_cgroup = t->proc, .cmdline = t->cmdline,
		.root = t->root,
	};
	struct sbx_error err = { 0 };
	struct sbx_cgroup_host h;

	tree_dir(t, "/sys/fs/cgroup/cpu", NULL);
	tree_dir(t, "/sys/fs/cgroup/memory", NULL);
	tree_dir(t, "/sys/fs/cgroup/pids", NULL);
	if (sbx_cgroup_detect(&h, &o, &err) < 0)
		fail_msg("detect: %s (Hint: %s)", err.msg, err.hint);
	assert_int_equal(h.version, 1);
	sbx_cgroup_host_free(&h);
	tree_free(t);
}

/* v2 whose parent lacks pids and memory: the path and the controllers are
 * named, the subtree_control to write is the parent's parent's; systemd's
 * Delegate=yes only where systemd is the init. */
#define SCOPE "/user.slice/app.slice/run-1.scope"
static const char v2_mi[] = "26 22 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";

static void test_v2_missing(void **state)
{
	for (int systemd = 0; systemd <= 1; systemd++) {
		struct tree *t = tree_new(v2_mi, "0::" SCOPE "\n", systemd);
		_cleanup_free_ char *where = sbx_xasprintf("%s/sys/fs/cgroup%s does not offer memory, pids", t->root, SCOPE);
		_cleanup_free_ char *sub = sbx_xasprintf("%s/sys/fs/cgroup/user.slice/app.slice/cgroup.subtree_control", t->root);
		struct sbx_error err;

		tree_dir(t, "/sys/fs/cgroup" SCOPE, "cgroup.controllers", "cpu io\n", NULL);
		detect_fails(t, NULL, &err);
		has(err.hint, "cgroup v2: ");
		has(err.hint, where);
		has(err.hint, sub);
		if (systemd) {
			has(err.hint, "Delegate=yes");
			has(err.hint, geteuid() == 0 ? "systemd-run --scope -p Delegate=yes" :
						       "systemd-run --user --scope -p Delegate=yes");
		} else {
			lacks(err.hint, "Delegate");
			lacks(err.hint, "systemd");
		}
		tree_free(t);
	}
}

/* No cgroup mounted at all. */
static void test_none_mounted(void **state)
{
	struct tree *t = tree_new("22 1 0:21 / /sys rw - sysfs sysfs rw\n", "0::/\n", false);
	struct sbx_error err;

	detect_fails(t, NULL, &err);
	has(err.hint, "no cgroup hierarchy with memory, pids and cpu is mounted");
	has(err.hint, "mount -t cgroup2");
	lacks(err.hint, "systemd");
	tree_free(t);
}

/* There but not writable: the cgroupfs recipe always, systemd's only
 * under systemd; v1 names cpuacct and the freezer too. */
static void test_not_writable(void **state)
{
	for (int systemd = 0; systemd <= 1; systemd++) {
		struct tree *t = tree_new("", "", systemd);

		for (int v = 1; v <= 2; v++) {
			struct sbx_error err = { 0 };

			sbx_cgroup_hint_set(&err, t->root, v, NULL, NULL);
			print_message("# v%d, systemd %d: %s\n", v, systemd, err.hint);
			has(err.hint, "sbx needs a cgroup it may write");
			has(err.hint, "chown it to this user");
			has(err.hint, "cgroup_parent");
			if (v == 1)
				has(err.hint, "(v1: and cpuacct; freezer is optional)");
			else
				lacks(err.hint, "cpuacct");
			if (systemd)
				has(err.hint, "Delegate=yes");
			else
				lacks(err.hint, "systemd");
		}
		tree_free(t);
	}
}

/* systemd is the init only when run/systemd/system is a directory. */
static void test_systemd_booted(void **state)
{
	struct tree *t = tree_new("", "", false);
	_cleanup_free_ char *f = sbx_xasprintf("%s/run/systemd/system", t->root);

	assert_false(sbx_cgroup_systemd_booted(t->root));
	tree_dir(t, "/run/systemd", NULL);
	put(f, "not a directory");
	assert_false(sbx_cgroup_systemd_booted(t->root));
	unlink(f);
	tree_dir(t, "/run/systemd/system", NULL);
	assert_true(sbx_cgroup_systemd_booted(t->root));
	tree_free(t);
}

/* sbx check's cgroup line carries the same Hint. */
static void test_host_report(void **state)
{
	struct tree *t = tree_new(v1_partial, "4:memory:/\n1:cpu:/\n", false);
	struct sbx_cgroup_detect_opts o = {
		.mountinfo = t->mountinfo, .proc_cgroup = t->proc, .cmdline = t->cmdline,
		.root = t->root,
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_int_equal(sbx_cgroup_host_report(m, &o), -1);
	fflush(m);
	has(buf, "Hint: cgroup v1: pids, cpuacct not mounted");
	lacks(buf, "Delegate");
	fclose(m);
	free(buf);
	tree_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v1_missing),
		cmocka_unit_test(test_v1_freezer_optional),
		cmocka_unit_test(test_v2_missing),
		cmocka_unit_test(test_none_mounted),
		cmocka_unit_test(test_not_writable),
		cmocka_unit_test(test_systemd_booted),
		cmocka_unit_test(test_host_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
