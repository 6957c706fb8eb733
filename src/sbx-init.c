/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbx-init - the sandbox's pid 1 (init.c), a program of its own.
 *
 * The broker's clone executes it straight away (sandbox.c), so the
 * sandbox's first process shares nothing with the broker: no copy of its
 * memory, no copy-on-write page the broker pays for on every write while
 * the sandbox runs.  It is small and linked statically, so starting it
 * costs a few page faults rather than a dynamic link of sbx's libraries.
 *
 * Usage (by sbx only): sbx-init SOCK-FD STDOUT-FD STDERR-FD
 * SOCK-FD is the setup and report socket, on which the broker's go-ahead
 * brings the sealed memfd of the sandbox's description (spec-blob.c); the
 * other two are the payload's capture pipes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"

/*
 * libcap-ng's capng_change_id(), which sbx-init never calls, refers to
 * getpwuid() and initgroups(); in a static binary they would bring in
 * glibc's whole NSS (some 150 KiB) and a link-time warning
 * that NSS needs glibc's shared libraries at run time.  sbx-init looks up
 * no user: these definitions take their place and fail.
 */
struct passwd *getpwuid(uid_t uid)
{
	errno = ENOSYS;
	return NULL;
}

int initgroups(const char *user, gid_t group)
{
	errno = ENOSYS;
	return -1;
}

static int fd_arg(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < 0 || v > 1 << 20)
		return -1;
	return (int)v;
}

int main(int argc, char **argv)
{
	int fds[3];

	if (argc != 4) {
		fputs("sbx-init: started by sbx only\n", stderr);
		return 64;
	}
	for (int i = 0; i < 3; i++)
		if ((fds[i] = fd_arg(argv[i + 1])) < 0 || fcntl(fds[i], F_SETFD, FD_CLOEXEC) < 0) {
			fputs("sbx-init: started by sbx only\n", stderr);
			return 64;
		}
	sbx_init_main(fds[0], fds[1], fds[2]);
}
