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

int sbx_test_forced_errno(const char *name)
{
	static const struct {
		const char *name;
		int err;
	} names[] = { { "EPERM", EPERM }, { "EACCES", EACCES }, { "ENOSPC", ENOSPC },
		      { "EINVAL", EINVAL }, { "EUSERS", EUSERS }, { "ENOSYS", ENOSYS } };
	static const char *list;
	static bool loaded;
	const char *p;
	size_t n = strlen(name);

	if (!loaded) {
		list = getenv("SBX_TEST_ERRNO");
		loaded = true;
	}
	if (!list)
		return 0;
	/* Comma-separated "name:ERRNO" pairs. */
	for (p = list; (p = strstr(p, name)); p += n) {
		if ((p != list && p[-1] != ',') || p[n] != ':')
			continue;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			size_t k = strlen(names[i].name);
			if (!strncmp(p + n + 1, names[i].name, k) &&
			    (p[n + 1 + k] == '\0' || p[n + 1 + k] == ','))
				return names[i].err;
		}
	}
	return 0;
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

/*
 * clone3 for a child that starts on a stack of its own (CLONE_VM): the
 * child cannot return through C code, whose frames belong to the parent,
 * so it starts in a few instructions that call fn(arg) on the new stack
 * and exit with its result - what glibc's clone() does for the older
 * clone system call, for which glibc has a wrapper and clone3 none.
 * Returns the child's pid to the parent, or -errno.
 */
long sbx_clone3_raw(struct clone_args *args, size_t size, int (*fn)(void *), void *arg);
#if defined(__x86_64__)
__asm__(".text\n"
	".globl sbx_clone3_raw\n"
	".type sbx_clone3_raw, @function\n"
	"sbx_clone3_raw:\n"
	"	.cfi_startproc\n"
	"	mov %rdx, %r8\n"       /* fn and arg survive the syscall in r8/r9 */
	"	mov %rcx, %r9\n"
	"	mov $435, %eax\n"      /* __NR_clone3 */
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"
	"	ret\n"
	"1:	.cfi_undefined %rip\n" /* the child: no caller to unwind to */
	"	xor %ebp, %ebp\n"
	"	mov %r9, %rdi\n"
	"	call *%r8\n"
	"	mov %eax, %edi\n"
	"	mov $60, %eax\n"       /* __NR_exit */
	"	syscall\n"
	"	hlt\n"
	"	.cfi_endproc\n"
	".size sbx_clone3_raw, .-sbx_clone3_raw\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl sbx_clone3_raw\n"
	".type sbx_clone3_raw, %function\n"
	"sbx_clone3_raw:\n"
	"	mov x9, x2\n"
	"	mov x10, x3\n"
	"	mov x8, #435\n"
	"	svc #0\n"
	"	cbz x0, 1f\n"
	"	ret\n"
	"1:	mov x29, xzr\n"
	"	mov x0, x10\n"
	"	blr x9\n"
	"	mov x8, #93\n"         /* __NR_exit */
	"	svc #0\n"
	"	brk #0\n"
	".size sbx_clone3_raw, .-sbx_clone3_raw\n");
#else
#error "sbx_clone3_raw: no clone3 trampoline for this architecture"
#endif

pid_t sbx_clone3_on_stack(struct clone_args *args, int (*fn)(void *), void *arg)
{
	long r;

	FORCED_ENOSYS("clone3");
	r = sbx_clone3_raw(args, sizeof(*args), fn, arg);
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (pid_t)r;
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
