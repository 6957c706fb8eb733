/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * opener.c - the child that opens the payload's outputs from inside the
 * sandbox's user namespace (see opener.h for why).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opener.h"
#include "syscalls.h"
#include "util.h"

#define ALLOWED_FLAGS (O_DIRECTORY | O_NONBLOCK | O_PATH)

struct request {
	int flags;
	char name[256];
};

struct reply {
	int err; /* 0: the fd is attached */
};

/* The child's loop, until the broker closes its end.  System calls only:
 * the broker's other threads, if any, are not here. */
static _Noreturn void serve(int sock)
{
	for (;;) {
		struct request rq;
		struct reply rp = { 0 };
		int dirfd = -1, fd = -1;
		ssize_t n = sbx_recv_fds(sock, &rq, sizeof(rq), &dirfd, 1);

		if (n <= 0)
			_exit(0);
		if (n != (ssize_t)sizeof(rq) || dirfd < 0 || (rq.flags & ~ALLOWED_FLAGS) ||
		    memchr(rq.name, '\0', sizeof(rq.name)) == NULL) {
			rp.err = EINVAL;
		} else {
			fd = sbx_open_beneath(dirfd, rq.name, rq.flags | O_RDONLY);
			if (fd < 0)
				rp.err = errno;
		}
		if (dirfd >= 0)
			close(dirfd);
		if (sbx_send_fds(sock, &rp, sizeof(rp), fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0) < 0)
			_exit(1);
		if (fd >= 0)
			close(fd);
	}
}

int sbx_opener_start(struct sbx_opener *o, int userns_fd, struct sbx_error *err)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "outputs: opener: socketpair");
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "outputs: opener: fork");
	}
	if (pid == 0) {
		close(sv[0]);
		/* Dies with the broker; no ptrace and no core of a process
		 * that holds capabilities over the payload's files. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
		    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || getppid() == 1)
			_exit(1);
		/* The user namespace only: the output root is reached through
		 * the broker's fds, never through the sandbox's mounts. */
		{
			struct reply rp = { 0 };

			if (setns(userns_fd, CLONE_NEWUSER) < 0)
				rp.err = errno;
			if (write(sv[1], &rp, sizeof(rp)) != sizeof(rp) || rp.err)
				_exit(1);
		}
		/* Nothing of the broker's but the socket stays open. */
		if (sv[1] != 3 && (dup2(sv[1], 3) < 0 || close(sv[1]) < 0))
			_exit(1);
		if (close_range(4, ~0U, 0) < 0) {
			for (int fd = 4; fd < 1024; fd++)
				close(fd);
		}
		serve(3);
	}
	close(sv[1]);
	o->pid = pid;
	o->sock = sv[0];
	/* Its first word: whether it joined the namespace. */
	{
		struct reply rp = { 0 };
		ssize_t n = sbx_read_all(o->sock, &rp, sizeof(rp));

		if (n != (ssize_t)sizeof(rp) || rp.err) {
			int e = n == (ssize_t)sizeof(rp) ? rp.err : EPIPE;

			sbx_opener_stop(o);
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, e,
					     "outputs: opener: joining the sandbox's user namespace");
		}
	}
	return 0;
}

int sbx_opener_open(void *ud, int dirfd, const char *name, int flags)
{
	struct sbx_opener *o = ud;
	struct request rq = { .flags = flags & ~(O_NOFOLLOW | O_CLOEXEC) };
	struct reply rp = { 0 };
	int fd = -1;
	ssize_t n;

	if (strlen(name) >= sizeof(rq.name)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(rq.name, name);
	if (o->sock < 0 || sbx_send_fds(o->sock, &rq, sizeof(rq), &dirfd, 1) != sizeof(rq)) {
		errno = EPIPE;
		return -1;
	}
	n = sbx_recv_fds(o->sock, &rp, sizeof(rp), &fd, 1);
	if (n != (ssize_t)sizeof(rp) || (rp.err == 0 && fd < 0)) {
		if (fd >= 0)
			close(fd);
		errno = n < 0 ? errno : EPIPE;
		return -1;
	}
	if (rp.err) {
		if (fd >= 0)
			close(fd);
		errno = rp.err;
		return -1;
	}
	return fd;
}

void sbx_opener_stop(struct sbx_opener *o)
{
	if (o->sock >= 0)
		close(o->sock);
	o->sock = -1;
	if (o->pid > 0) {
		/* EOF ends its loop; it holds nothing worth waiting for. */
		kill(o->pid, SIGKILL);
		while (waitpid(o->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	o->pid = -1;
}
