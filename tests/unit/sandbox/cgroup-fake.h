/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup-fake.h - fake cgroupfs trees for the cgroup unit tests.
 *
 * A fake tree is plain directories in a temp dir: a mountinfo and a
 * /proc/self/cgroup text point detection at them (through the "root"
 * prefix), and the host's test hook plays the kernel: it lays out the
 * control files after each mkdir, empties a directory before rmdir, and
 * forgets killed pids.  Every file a backend writes is then read back and
 * compared byte for byte.  Shared by test-cgroup-detect, test-cgroup-v2
 * and test-cgroup-v1, so each tree is built the same way in all three.
 */
#ifndef SBX_TEST_CGROUP_FAKE_H
#define SBX_TEST_CGROUP_FAKE_H

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup.h"

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

/* Write @text to @path (created or truncated); fails the test on error. */
void xwrite(const char *path, const char *text);
/* The same for @name in directory @dir. */
void xwrite_in(const char *dir, const char *name, const char *text);
/* Fail the test unless @dir/@name holds exactly @want ("<absent>": no
 * such file). */
void assert_file(const char *dir, const char *name, const char *want);
/* mkdir -p @path. */
void mkdir_p(const char *path);
bool exists(const char *path);
bool exists_in(const char *dir, const char *name);

/* A new fake tree with @mountinfo and @proc as the kernel's texts; free
 * with fake_free(), which removes the whole temp dir. */
struct fake *fake_new(const char *mountinfo, const char *proc);
void fake_free(struct fake *f);
/* Make dir @rel (under root) with files given as name, content pairs,
 * ending with NULL. */
void fake_dir(struct fake *f, const char *rel, ...);
/* @rel under the fake root, newly allocated. */
char *fake_path(struct fake *f, const char *rel);
/* Detection options that read @f's texts and call its fake kernel. */
struct sbx_cgroup_detect_opts fake_opts(struct fake *f, const char *parent);
/* sbx_cgroup_detect() on @f that must succeed, hook installed in @h. */
void detect_ok(struct fake *f, const char *parent, struct sbx_cgroup_host *h);

/* 256 MiB, 64 pids, half a core. */
extern const struct sbx_cgroup_limits std_limits;

/* A production host: pure v2, sbx in a delegated systemd scope. */
#define V2_SCOPE "/user.slice/user-1000.slice/user@1000.service/app.slice/run-1.scope"
extern const char v2_mountinfo[];
extern const char v2_proc[];
/* That host, with @controllers and @subtree in the scope's
 * cgroup.controllers and cgroup.subtree_control. */
struct fake *fake_v2(const char *controllers, const char *subtree);
/* This host: v1 controllers, our memory cgroup nested, an empty cgroup2. */
struct fake *fake_hybrid(void);

/* A child that waits to be killed. */
pid_t sleeper(void);
/* Reap @pid and fail the test unless SIGKILL ended it. */
void assert_sigkilled(pid_t pid);

#endif
