/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * root.c - step 2 of the init (init.c): the sandbox's new root, built on
 * a tmpfs at NEWROOT in the init's private copy of the host's mount tree.
 * The profile's binds (taken as detached trees before the tmpfs covers
 * /tmp) and the masks over the host's site trees in them, the generated
 * /etc, a minimal /dev, a fresh /proc with the host's entries masked,
 * /tmp and /work; once the broker has filled /work/in, the code file and
 * /work/in read-only; then the pivot and the read-only root.
 *
 * Its own file because it is the one part of the init that mounts: every
 * mount flag and its reason is here, and nothing here touches credentials
 * or the payload.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init-internal.h"
#include "spec.h"
#include "syscalls.h"

/* Build "NEWROOT<path>" into @buf. */
const char *in_root(char *buf, size_t len, const char *path)
{
	if ((size_t)snprintf(buf, len, NEWROOT "%s", path) >= len) {
		errno = ENAMETOOLONG;
		fail(SBX_STAGE_ROOT, "path too long: %s", path);
	}
	return buf;
}

/* mkdir -p for absolute @path, without allocating. */
static int mkdir_p(const char *path, mode_t mode)
{
	char buf[512];
	size_t len = strlen(path);

	if (len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int write_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = sbx_write_all(fd, data, len);
	close(fd);
	return r < 0 ? -1 : 0;
}

/* Set mount attributes on @path (and, with @recursive, everything below).
 * mount_setattr is the only way to make a recursive bind read-only in one
 * step; a kernel without it (< 5.12) cannot give the guarantee, so refuse. */
static void set_attr(enum sbx_stage stage, const char *path, bool recursive, uint64_t set)
{
	struct mount_attr attr = { .attr_set = set };

	if (sbx_mount_setattr(AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr, sizeof(attr)) < 0) {
		if (errno == ENOSYS)
			unavailable(stage, "mount_setattr: not supported by this kernel (5.12 or later needed)");
		fail(stage, "mount_setattr %s", path);
	}
}

static void mount_tmpfs(enum sbx_stage stage, const char *path, unsigned long flags, const char *opts)
{
	/* Every writable mount: no setuid, no device nodes, and no execution
	 * but where a profile's workspace_exec asks for it (@flags).  The
	 * kernel also locks these flags against the payload, which lacks
	 * CAP_SYS_ADMIN anyway. */
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | flags, opts) < 0)
		fail(stage, "mount tmpfs on %s (%s)", path, opts);
}

/* Detached copies of the profile's binds, taken before the new root's
 * tmpfs covers /tmp (a bind source may live there). */
static int bind_trees[SBX_MAX_MOUNTS];

static void take_binds(const struct sbx_spec *spec)
{
	for (size_t i = 0; i < spec->n_binds; i++) {
		/* A recursive clone of the source's mount tree, not yet
		 * attached anywhere: nothing can be bound from a path that
		 * the new root later hides or changes. */
		bind_trees[i] = sbx_open_tree(AT_FDCWD, spec->binds[i].src,
					      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (bind_trees[i] < 0) {
			if (errno == ENOSYS)
				unavailable(SBX_STAGE_BINDS, "open_tree: not supported by this kernel");
			fail(SBX_STAGE_BINDS, "bind %s", spec->binds[i].src);
		}
	}
}

void setup_root(const struct sbx_spec *spec)
{
	/* Nothing we mount may propagate back to the host's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		fail(SBX_STAGE_MOUNT_PRIVATE, "making / private");
	take_binds(spec);
	/* A small root: it holds only mount points, symlinks and /etc files. */
	mount_tmpfs(SBX_STAGE_ROOT, NEWROOT, 0, "mode=0755,size=1m,nr_inodes=1024");
}

/* The tmpfs over each site tree (spec->masks), until it is read-only. */
static int mask_fds[SBX_MAX_MASKS];

void setup_binds(const struct sbx_spec *spec)
{
	char dst[512];

	for (size_t i = 0; i < spec->n_binds; i++) {
		const struct sbx_spec_bind *b = &spec->binds[i];

		in_root(dst, sizeof(dst), b->dst);
		if (b->is_dir) {
			if (mkdir_p(dst, 0755) < 0)
				fail(SBX_STAGE_BINDS, "mkdir %s", b->dst);
		} else {
			char *slash = strrchr(dst, '/');
			*slash = '\0';
			if (mkdir_p(dst, 0755) < 0)
				fail(SBX_STAGE_BINDS, "mkdir for %s", b->dst);
			*slash = '/';
			if (write_file(dst, "", 0, 0644) < 0 && errno != EEXIST)
				fail(SBX_STAGE_BINDS, "mount point %s", b->dst);
		}
		/* Read-only, no setuid, no devices, for the bind and every mount
		 * below it (a recursive bind of /usr may carry submounts), set
		 * while the tree is still detached, then attached in place. */
		{
			struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
							      MOUNT_ATTR_NODEV };
			if (sbx_mount_setattr(bind_trees[i], "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
					      sizeof(attr)) < 0)
				fail(SBX_STAGE_BINDS, "read-only bind of %s", b->src);
		}
		if (sbx_move_mount(bind_trees[i], "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			fail(SBX_STAGE_BINDS, "bind %s", b->src);
		close(bind_trees[i]);
		bind_trees[i] = -1;
		/* A host site tree this bind carries (/usr/local in /usr):
		 * covered, writable until the binds inside it are made. */
		for (size_t m = 0; m < spec->n_masks; m++) {
			if (spec->masks[m].after_bind != i)
				continue;
			in_root(dst, sizeof(dst), spec->masks[m].path);
			mount_tmpfs(SBX_STAGE_BINDS, dst, MS_NOEXEC, "mode=0755,size=64k,nr_inodes=256");
			/* Its own handle: a bind of the profile's may cover
			 * the path by the time it becomes read-only. */
			mask_fds[m] = open(dst, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (mask_fds[m] < 0)
				fail(SBX_STAGE_BINDS, "mask %s", spec->masks[m].path);
		}
	}

	for (size_t i = 0; i < spec->n_symlinks; i++) {
		const struct sbx_symlink *l = &spec->symlinks[i];
		char *slash;

		in_root(dst, sizeof(dst), l->path);
		slash = strrchr(dst, '/');
		*slash = '\0';
		if (mkdir_p(dst, 0755) < 0)
			fail(SBX_STAGE_BINDS, "mkdir for %s", l->path);
		*slash = '/';
		if (symlink(l->target, dst) < 0)
			fail(SBX_STAGE_BINDS, "symlink %s", l->path);
	}
	for (size_t m = 0; m < spec->n_masks; m++) {
		struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };

		if (sbx_mount_setattr(mask_fds[m], "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
			fail(SBX_STAGE_BINDS, "read-only mask of %s", spec->masks[m].path);
		close(mask_fds[m]);
	}
}

void setup_etc(const struct sbx_spec *spec)
{
	char path[512];

	if (mkdir_p(in_root(path, sizeof(path), "/etc"), 0755) < 0)
		fail(SBX_STAGE_ETC, "mkdir /etc");
	for (size_t i = 0; i < spec->n_etc; i++)
		if (write_file(in_root(path, sizeof(path), spec->etc[i].path), spec->etc[i].data,
			       spec->etc[i].len, 0644) < 0)
			fail(SBX_STAGE_ETC, "writing %s", spec->etc[i].path);
}

void setup_sys_cpus(const char *online)
{
	char path[512];

	/* The one file of /sys: glibc counts the online CPUs there first
	 * (sysconf(_SC_NPROCESSORS_ONLN), os.cpu_count()), and without it
	 * it counts the host's in /proc/stat.  On the read-only root, so
	 * nothing else of /sys can appear. */
	if (mkdir_p(in_root(path, sizeof(path), "/sys/devices/system/cpu"), 0755) < 0)
		fail(SBX_STAGE_ETC, "mkdir /sys/devices/system/cpu");
	if (write_file(in_root(path, sizeof(path), "/sys/devices/system/cpu/online"), online,
		       strlen(online), 0444) < 0)
		fail(SBX_STAGE_ETC, "writing /sys/devices/system/cpu/online");
}

void setup_dev(const struct sbx_spec *spec)
{
	/* Device nodes cannot be created in a user namespace; the few harmless
	 * ones are bound from the host.  No tty, pts or ptmx: nothing that
	 * reaches a terminal. */
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom" };
	static const char *const links[][2] = {
		{ "/dev/fd", "/proc/self/fd" },
		{ "/dev/stdin", "/proc/self/fd/0" },
		{ "/dev/stdout", "/proc/self/fd/1" },
		{ "/dev/stderr", "/proc/self/fd/2" },
	};
	char path[512], src[64];

	in_root(path, sizeof(path), "/dev");
	if (mkdir(path, 0755) < 0)
		fail(SBX_STAGE_DEV, "mkdir /dev");
	mount_tmpfs(SBX_STAGE_DEV, path, MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64");

	for (size_t i = 0; i < ARRAY_SIZE(nodes); i++) {
		snprintf(src, sizeof(src), "/dev/%s", nodes[i]);
		in_root(path, sizeof(path), src);
		if (write_file(path, "", 0, 0666) < 0)
			fail(SBX_STAGE_DEV, "mount point %s", src);
		if (mount(src, path, NULL, MS_BIND, NULL) < 0)
			fail(SBX_STAGE_DEV, "bind %s", src);
		set_attr(SBX_STAGE_DEV, path, false, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	}
	for (size_t i = 0; i < ARRAY_SIZE(links); i++)
		if (symlink(links[i][1], in_root(path, sizeof(path), links[i][0])) < 0)
			fail(SBX_STAGE_DEV, "symlink %s", links[i][0]);

	/* POSIX shared memory (python's multiprocessing uses it): private to
	 * this run, sized like the workspace. */
	in_root(path, sizeof(path), "/dev/shm");
	if (mkdir(path, 01777) < 0)
		fail(SBX_STAGE_DEV, "mkdir /dev/shm");
	mount_tmpfs(SBX_STAGE_DEV, path, MS_NOEXEC, spec->workspace_opts);

	/* Nothing may be created in /dev itself afterwards. */
	set_attr(SBX_STAGE_DEV, in_root(path, sizeof(path), "/dev"), false, MOUNT_ATTR_RDONLY);
}

void setup_proc(const struct sbx_spec *spec)
{
	/* Entries that describe or control the host rather than this pid
	 * namespace.  Files are covered with /dev/null, directories with an
	 * empty read-only tmpfs; /proc/sys and friends are made read-only. */
	static const char *const mask_files[] = {
		"/proc/kcore", "/proc/keys", "/proc/key-users", "/proc/timer_list",
		"/proc/sched_debug", "/proc/latency_stats", "/proc/kallsyms", "/proc/kpagecount",
		"/proc/kpageflags", "/proc/kpagecgroup", "/proc/sysrq-trigger", "/proc/config.gz",
	};
	static const char *const mask_dirs[] = { "/proc/acpi", "/proc/scsi", "/proc/asound" };
	static const char *const readonly[] = { "/proc/sys", "/proc/irq", "/proc/bus", "/proc/fs" };
	char path[512], null[64];

	in_root(path, sizeof(path), "/proc");
	if (mkdir(path, 0555) < 0)
		fail(SBX_STAGE_PROC, "mkdir /proc");
	/* A proc of the new pid namespace: the payload sees only its own
	 * processes, and the host's pids do not exist here. */
	if (mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		unavailable(SBX_STAGE_PROC, "mounting a fresh /proc");
	read_memfd_noexec();
	setup_user_quotas(spec);

	in_root(null, sizeof(null), "/dev/null");
	for (size_t i = 0; i < ARRAY_SIZE(mask_files); i++) {
		in_root(path, sizeof(path), mask_files[i]);
		if (access(path, F_OK) < 0)
			continue;
		if (mount(null, path, NULL, MS_BIND, NULL) < 0)
			fail(SBX_STAGE_PROC, "masking %s", mask_files[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(mask_dirs); i++) {
		in_root(path, sizeof(path), mask_dirs[i]);
		if (access(path, F_OK) < 0)
			continue;
		if (mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "size=0,nr_inodes=1") < 0)
			fail(SBX_STAGE_PROC, "masking %s", mask_dirs[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(readonly); i++) {
		in_root(path, sizeof(path), readonly[i]);
		if (access(path, F_OK) < 0)
			continue;
		if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
			fail(SBX_STAGE_PROC, "binding %s", readonly[i]);
		set_attr(SBX_STAGE_PROC, path, true,
			 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	}
}

void setup_work(const struct sbx_spec *spec)
{
	char path[512];

	/* The workspace is noexec unless the profile says otherwise
	 * (workspace_exec, sbx-policy(5)); /work/in and /work/out hold data
	 * only, and are noexec in every profile. */
	unsigned long ws_exec = spec->workspace_exec ? 0 : MS_NOEXEC;

	/* /tmp: scratch, sized by the workspace limit. */
	in_root(path, sizeof(path), "/tmp");
	if (mkdir(path, 01777) < 0)
		fail(SBX_STAGE_WORK, "mkdir /tmp");
	mount_tmpfs(SBX_STAGE_WORK, path, ws_exec, spec->workspace_opts);

	/* /work: the code file and scratch space; /work/in and /work/out are
	 * mounts of their own so that each gets its own size and inode cap. */
	in_root(path, sizeof(path), "/work");
	if (mkdir(path, 0755) < 0)
		fail(SBX_STAGE_WORK, "mkdir /work");
	mount_tmpfs(SBX_STAGE_WORK, path, ws_exec, spec->workspace_opts);
	if (mkdir(in_root(path, sizeof(path), "/work/in"), 0755) < 0 ||
	    mkdir(in_root(path, sizeof(path), "/work/out"), 0755) < 0)
		fail(SBX_STAGE_WORK, "mkdir /work/in, /work/out");
	mount_tmpfs(SBX_STAGE_WORK, in_root(path, sizeof(path), "/work/in"), MS_NOEXEC,
		    spec->in_opts);
	/* The output root's size and inode count enforce output_bytes and
	 * output_files while the payload writes (ENOSPC), not afterwards. */
	mount_tmpfs(SBX_STAGE_WORK, in_root(path, sizeof(path), "/work/out"), MS_NOEXEC,
		    spec->out_opts);
}

void setup_code(const struct sbx_spec *spec)
{
	char path[512];

	if (write_file(in_root(path, sizeof(path), spec->code_path), spec->code, spec->code_len,
		       0644) < 0)
		fail(SBX_STAGE_INPUTS, "writing %s", spec->code_path);
	/* Inputs are data to read, never to change. */
	set_attr(SBX_STAGE_INPUTS, in_root(path, sizeof(path), "/work/in"), false,
		 MOUNT_ATTR_RDONLY);
}

void setup_pivot(void)
{
	/* pivot_root(".", ".") stacks the old root on top of the new one;
	 * detaching it leaves only the new root, with no path back. */
	if (chdir(NEWROOT) < 0)
		fail(SBX_STAGE_PIVOT, "chdir to the new root");
	if (sbx_pivot_root(".", ".") < 0)
		fail(SBX_STAGE_PIVOT, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		fail(SBX_STAGE_PIVOT, "detaching the old root");
	if (chdir("/") < 0)
		fail(SBX_STAGE_PIVOT, "chdir /");
	/* The root itself (not the mounts on it) becomes read-only: nothing
	 * new may appear next to /usr or /etc. */
	set_attr(SBX_STAGE_READONLY, "/", false,
		 MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
}
