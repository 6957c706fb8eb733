/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "syscalls.h"

bool sbx_syscall_forced_enosys(const char *name)
{
	static const char *list;
	static bool loaded;
	const char *p;
	size_t n = strlen(name);

	if (!loaded) {
		list = getenv("SBX_TEST_ENOSYS");
		loaded = true;
	}
	if (!list)
		return false;
	/* Comma-separated list of names. */
	for (p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
			return true;
	return false;
}

#define FORCED_ENOSYS(name)                              \
	do {                                             \
		if (sbx_syscall_forced_enosys(name)) {   \
			errno = ENOSYS;                  \
			return -1;                       \
		}                                        \
	} while (0)

int sbx_openat2(int dirfd, const char *path, struct open_how *how, size_t size)
{
	FORCED_ENOSYS("openat2");
	return (int)syscall(SYS_openat2, dirfd, path, how, size);
}

int sbx_open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};

	return sbx_openat2(dirfd, path, &how, sizeof(how));
}

pid_t sbx_clone3(struct clone_args *args, size_t size)
{
	FORCED_ENOSYS("clone3");
	return (pid_t)syscall(SYS_clone3, args, size);
}

int sbx_pivot_root(const char *new_root, const char *put_old)
{
	return (int)syscall(SYS_pivot_root, new_root, put_old);
}

int sbx_mount_setattr(int dirfd, const char *path, unsigned int flags, struct mount_attr *attr,
		      size_t size)
{
	return (int)syscall(SYS_mount_setattr, dirfd, path, flags, attr, size);
}

int sbx_open_tree(int dirfd, const char *path, unsigned int flags)
{
	return (int)syscall(SYS_open_tree, dirfd, path, flags);
}

int sbx_move_mount(int from_dirfd, const char *from_path, int to_dirfd, const char *to_path,
		   unsigned int flags)
{
	return (int)syscall(SYS_move_mount, from_dirfd, from_path, to_dirfd, to_path, flags);
}

int sbx_landlock_create_ruleset(const struct landlock_ruleset_attr *attr, size_t size,
				uint32_t flags)
{
	FORCED_ENOSYS("landlock");
	return (int)syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

int sbx_landlock_add_rule(int ruleset_fd, enum landlock_rule_type type, const void *attr,
			  uint32_t flags)
{
	return (int)syscall(SYS_landlock_add_rule, ruleset_fd, type, attr, flags);
}

int sbx_landlock_restrict_self(int ruleset_fd, uint32_t flags)
{
	return (int)syscall(SYS_landlock_restrict_self, ruleset_fd, flags);
}
