/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * syscalls.h - one wrapper per raw system call that glibc does not wrap.
 * Everything else goes through libc.  Each returns what the kernel returns
 * (-1 with errno set on failure), so callers can tell ENOSYS (old kernel)
 * from EPERM (blocked by policy) and refuse with a precise hint.
 */
#ifndef SBX_SYSCALLS_H
#define SBX_SYSCALLS_H

#include <linux/landlock.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

int sbx_openat2(int dirfd, const char *path, struct open_how *how, size_t size);
/* openat2 confined to @dirfd's tree: RESOLVE_BENEATH, no symlink anywhere on
 * the way, no /proc magic links, no mount crossing; O_NOFOLLOW|O_CLOEXEC
 * added to @flags.  How sbx opens every path that untrusted data names. */
int sbx_open_beneath(int dirfd, const char *path, int flags);
pid_t sbx_clone3(struct clone_args *args, size_t size);
/* clone3 with the child running fn(arg) on the stack that @args names
 * (args->stack, args->stack_size), then exiting with its return value: for
 * CLONE_VM children, which share the parent's memory and so cannot return
 * into its frames. */
pid_t sbx_clone3_on_stack(struct clone_args *args, int (*fn)(void *), void *arg);
int sbx_pivot_root(const char *new_root, const char *put_old);
int sbx_mount_setattr(int dirfd, const char *path, unsigned int flags, struct mount_attr *attr,
		      size_t size);
int sbx_open_tree(int dirfd, const char *path, unsigned int flags);
int sbx_move_mount(int from_dirfd, const char *from_path, int to_dirfd, const char *to_path,
		   unsigned int flags);
int sbx_landlock_create_ruleset(const struct landlock_ruleset_attr *attr, size_t size,
				uint32_t flags);
int sbx_landlock_add_rule(int ruleset_fd, enum landlock_rule_type type, const void *attr,
			  uint32_t flags);
int sbx_landlock_restrict_self(int ruleset_fd, uint32_t flags);

/* Test hook: when SBX_TEST_ENOSYS names a syscall ("openat2", "clone3",
 * "landlock"), the wrapper fails with ENOSYS, so the failure harness can
 * check that sbx refuses (69) instead of falling back.  Read once. */
bool sbx_syscall_forced_enosys(const char *name);

/* Test hook: SBX_TEST_ERRNO lists steps that must fail, as "name:ERRNO"
 * pairs ("uid_map:EPERM,lo:EACCES"; ERRNO one of EPERM, EACCES, ENOSPC,
 * EINVAL, EUSERS, ENOSYS).  Returns the errno for @name, or 0.  Steps:
 * "setgroups", "gid_map", "uid_map" (the id map writes) and "lo" (the
 * sandbox's loopback), which strace cannot reach by system call alone;
 * the clone and the init's unshare are injected with strace instead.
 * Read once. */
int sbx_test_forced_errno(const char *name);

#endif
