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
 * Usage (by sbx only): sbx-init SOCK-FD STDOUT-FD STDERR-FD [STDIN-FD]
 * SOCK-FD is the setup and report socket, on which the broker's go-ahead
 * brings the sealed memfd of the sandbox's description (spec-blob.c); the
 * next two are the payload's capture pipes, and STDIN-FD (sbx run
 * --stdin) the read end of the pipe the broker fills from its own stdin:
 * the payload's stdin, which is /dev/null without it.  Its own fds 0-2
 * are /dev/null from its first instructions on.
 *
 * The init's steps are a library (init.h) that sbx-template runs too;
 * this program's part is its command line and exec'ing the payload.
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

#include "init.h"
#include "spec.h"

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
	int fds[4] = { -1, -1, -1, -1 };
	int n = argc - 1;

	if (argc != 4 && argc != 5) {
		fputs("sbx-init: started by sbx only\n", stderr);
		return 64;
	}
	for (int i = 0; i < n; i++)
		if ((fds[i] = fd_arg(argv[i + 1])) < 0 || fcntl(fds[i], F_SETFD, FD_CLOEXEC) < 0) {
			fputs("sbx-init: started by sbx only\n", stderr);
			return 64;
		}
	if (sbx_init_stdio_to_null(fds, n) < 0) {
		/* Nothing to report on yet but the socket, which the broker
		 * reads as an init that ended during setup. */
		fputs("sbx-init: cannot point stdio at /dev/null\n", stderr);
		return 71;
	}
	sbx_init_run(fds[0], fds[1], fds[2], fds[3], sbx_init_exec_payload);
}
