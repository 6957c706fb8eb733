/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nproc.c - the caller's RLIMIT_NPROC, which a run shares with its caller.
 *
 * The kernel checks RLIMIT_NPROC at every level of the user namespace
 * chain (kernel/ucount.c, is_rlimit_overlimit): a fork in the sandbox is
 * counted in the sandbox's namespace against the payload's own limit, and
 * again as the namespace owner's in the host's namespace, against the soft
 * limit the owner had when it made the namespace (create_user_ns ->
 * enforced_nproc_rlimit; unlimited for host root).  For a user, that
 * count holds every task of the user's uid on the host.  The broker
 * raises its soft limit to the hard one before it clones the sandbox
 * (budgets.c, with the other per-uid budgets); here, when a payload fails
 * without reaching pids.max, it counts the user's tasks to tell whether
 * this limit was the one that refused its fork.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nproc.h"
#include "util.h"

/* Real uid and thread count from /proc/<pid>/status. */
static int task_status(int procfd, const char *pid, uid_t *uid, uint64_t *threads)
{
	char path[64], buf[4096];
	const char *u, *t;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/status", pid);
	fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	u = strstr(buf, "\nUid:");
	t = strstr(buf, "\nThreads:");
	if (!u || !t)
		return -1;
	*uid = (uid_t)strtoul(u + 5, NULL, 10);
	*threads = strtoull(t + 9, NULL, 10);
	return 0;
}

int sbx_nproc_count(uid_t uid, uint64_t *count)
{
	/* opendir(3) opens with O_CLOEXEC. */
	DIR *d = opendir("/proc");
	struct dirent *de;
	uint64_t n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		uid_t u;
		uint64_t threads;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		/* Gone meanwhile, or not ours to read: not counted. */
		if (task_status(dirfd(d), de->d_name, &u, &threads) == 0 && u == uid)
			n += threads;
	}
	closedir(d);
	*count = n;
	return 0;
}
