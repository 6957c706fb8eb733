/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve.c - the template's loop: the broker's requests on the listening
 * socket (template-proto.h), the runs' pid 1s it is the parent of, and
 * its own lifetime.
 *
 * One poll over the listener, every connection and a signalfd (SIGCHLD,
 * and SIGTERM/SIGINT/SIGHUP for a graceful stop).  A connection is taken
 * only from a process of the template's own uid (SO_PEERCRED); it brings
 * one request.  A SPAWN's connection stays open for its run: when the
 * run's pid 1 ends the template reaps it and sends EXITED with its wait
 * status; when the broker's end closes first (the broker died) the
 * template kills pid 1 through its pidfd, so the sandbox never outlives
 * the broker that supervises it.
 *
 * The template stops taking runs (and unlinks its socket) on STOP, on a
 * signal, after idle_seconds without a run, after max_runs runs or
 * max_seconds of life; it exits once its last run has ended.  The caps
 * bound how long the runs share its hash secret and address layout.
 */
#include "config.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "template.h"

/* Connections at once: runs in flight and requests not yet read.  The
 * broker's own caps on concurrent runs are far below. */
#define MAX_CONNS 256

struct conn {
	int fd;
	pid_t pid;   /* the run's pid 1, 0 before SPAWN */
	int pidfd;   /* its pidfd, -1 before SPAWN */
	bool killed; /* SIGKILL sent: the broker's end closed first */
};

static struct conn conns[MAX_CONNS];
static size_t n_conns;
static int listen_fd = -1;
static bool stopping;
static uint32_t runs, active;
static int64_t started, last_used;

static int64_t now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static int64_t now_real(void)
{
	return (int64_t)time(NULL);
}

static void send_reply(int fd, const struct sbx_template_reply *r, int pass_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)r, .iov_len = sizeof(*r) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (pass_fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
	}
	/* Best effort: a broker that is gone reads nothing; never block on
	 * one that stopped reading. */
	(void)!sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void reply_error(int fd, int err, const char *msg)
{
	struct sbx_template_reply r = { .kind = SBX_TEMPLATE_ERROR, .err = err };

	snprintf(r.msg, sizeof(r.msg), "%s", msg);
	send_reply(fd, &r, -1);
}

static void drop_conn(size_t i)
{
	close(conns[i].fd);
	if (conns[i].pidfd >= 0)
		close(conns[i].pidfd);
	conns[i] = conns[--n_conns];
}

/* Stop taking runs: the socket's path goes, so that the next run the
 * broker starts finds no template and starts a new one (or runs cold). */
static void stop(void)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);

	if (stopping)
		return;
	stopping = true;
	if (getsockname(listen_fd, (struct sockaddr *)&sa, &len) == 0 && sa.sun_family == AF_UNIX &&
	    len > offsetof(struct sockaddr_un, sun_path) && sa.sun_path[0] == '/')
		unlink(sa.sun_path);
	close(listen_fd);
	listen_fd = -1;
}

static void fill_status(struct sbx_template_reply *r, const struct sbx_template_args *a)
{
	r->kind = SBX_TEMPLATE_STATUS_REPLY;
	/* Our own pid: SO_PEERCRED on the broker's side names the process
	 * that called listen(), which is the broker that started us. */
	r->pid = (int32_t)getpid();
	r->started = started;
	r->last_used = last_used;
	r->runs = runs;
	r->active = active;
	r->max_runs = a->max_runs;
	memcpy(r->digest, a->digest, sizeof(r->digest));
	snprintf(r->msg, sizeof(r->msg), "%s", a->argv[0]);
}

static void close_fds(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* A SPAWN with its @nfds fds: clone the run's pid 1. */
static void spawn(size_t i, const struct sbx_template_request *rq, int *fds, size_t nfds)
{
	struct sbx_template_spawn sp = { .fds = { -1, -1, -1, -1, -1 } };
	struct sbx_template_reply r = { .kind = SBX_TEMPLATE_CLONED };
	size_t want = 3 + !!(rq->flags & SBX_TEMPLATE_HAS_STDIN) +
		      !!(rq->flags & SBX_TEMPLATE_HAS_CGROUP);
	size_t k = 3;
	bool in_cgroup;
	int pidfd;
	pid_t pid;

	if (nfds != want) {
		close_fds(fds, nfds);
		reply_error(conns[i].fd, EBADMSG, "SPAWN: the fds do not match the flags");
		return;
	}
	memcpy(sp.fds, fds, 3 * sizeof(int));
	if (rq->flags & SBX_TEMPLATE_HAS_STDIN)
		sp.fds[3] = fds[k++];
	if (rq->flags & SBX_TEMPLATE_HAS_CGROUP)
		sp.fds[4] = fds[k++];
	sp.owner_uid = rq->flags & SBX_TEMPLATE_OWNER_ID ? (uid_t)rq->owner_uid : (uid_t)-1;
	pid = sbx_template_clone(&sp, &pidfd, &in_cgroup);
	/* The run's fds are the child's now (or nobody's). */
	close_fds(fds, nfds);
	if (pid < 0) {
		char msg[120];

		snprintf(msg, sizeof(msg), "clone3 of the run's pid 1: %s", strerror(errno));
		reply_error(conns[i].fd, errno, msg);
		return;
	}
	conns[i].pid = pid;
	conns[i].pidfd = pidfd;
	runs++;
	active++;
	last_used = now_real();
	r.pid = pid;
	r.in_cgroup = in_cgroup;
	send_reply(conns[i].fd, &r, pidfd);
}

/*
 * One request on connection @i.  Returns true to keep the connection
 * (a run in flight), false to drop it.
 */
static bool request(size_t i, const struct sbx_template_args *a)
{
	union {
		char buf[CMSG_SPACE(SBX_TEMPLATE_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct sbx_template_request rq;
	struct iovec iov = { .iov_base = &rq, .iov_len = sizeof(rq) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	int fds[SBX_TEMPLATE_MAX_FDS];
	size_t nfds = 0;
	ssize_t n;

	n = recvmsg(conns[i].fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); n >= 0 && c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t j = 0; j < k; j++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + j * sizeof(int), sizeof(int));
				if (nfds < SBX_TEMPLATE_MAX_FDS)
					fds[nfds++] = fd;
				else
					close(fd);
			}
		}
	if (n <= 0)
		return close_fds(fds, nfds), false;
	if (n != (ssize_t)sizeof(rq) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    rq.magic != SBX_TEMPLATE_MAGIC || rq.version != SBX_TEMPLATE_VERSION ||
	    (rq.flags & ~SBX_TEMPLATE_FLAGS_ALL)) {
		close_fds(fds, nfds);
		reply_error(conns[i].fd, EBADMSG, "not a request of this template's version");
		return false;
	}
	rq.digest[SBX_TEMPLATE_DIGEST_LEN] = '\0';
	/* A request names this template's digest; STATUS and STOP may name
	 * none (all zero) - `sbx template` and `sbx gc` ask a socket whose
	 * digest they may not know, and STATUS answers with it. */
	if (strcmp(rq.digest, a->digest) &&
	    (rq.kind == SBX_TEMPLATE_SPAWN || rq.digest[0] != '\0')) {
		close_fds(fds, nfds);
		reply_error(conns[i].fd, ESTALE, "the template's digest is another");
		return false;
	}
	switch (rq.kind) {
	case SBX_TEMPLATE_SPAWN:
		if (stopping) {
			close_fds(fds, nfds);
			reply_error(conns[i].fd, ESHUTDOWN, "the template is stopping");
			return false;
		}
		spawn(i, &rq, fds, nfds);
		if (runs >= a->max_runs)
			stop();
		return conns[i].pid > 0;
	case SBX_TEMPLATE_STATUS:
	case SBX_TEMPLATE_STOP: {
		struct sbx_template_reply r = { 0 };

		close_fds(fds, nfds);
		if (rq.kind == SBX_TEMPLATE_STOP)
			stop();
		fill_status(&r, a);
		send_reply(conns[i].fd, &r, -1);
		return false;
	}
	default:
		close_fds(fds, nfds);
		reply_error(conns[i].fd, EBADMSG, "unknown request");
		return false;
	}
}

static void accept_one(void)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	/* Only the broker's uid: anyone else who can reach the socket's
	 * path (its directory is 0700) is refused without a word. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid() ||
	    n_conns == MAX_CONNS) {
		close(fd);
		return;
	}
	conns[n_conns++] = (struct conn){ .fd = fd, .pidfd = -1 };
}

/* Reap every ended pid 1 and tell its broker. */
static void reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
		for (size_t i = 0; i < n_conns; i++)
			if (conns[i].pid == pid) {
				struct sbx_template_reply r = { .kind = SBX_TEMPLATE_EXITED,
								.pid = pid, .status = status };

				if (!conns[i].killed)
					send_reply(conns[i].fd, &r, -1);
				active--;
				drop_conn(i);
				break;
			}
}

/* The broker's end of a run's connection closed: it died, and with it
 * the run's supervision.  The sandbox goes too. */
static void broker_gone(size_t i)
{
	if (!conns[i].killed)
		syscall(SYS_pidfd_send_signal, conns[i].pidfd, SIGKILL, NULL, 0);
	conns[i].killed = true;
}

int sbx_template_serve(const struct sbx_template_args *a)
{
	struct pollfd pfd[MAX_CONNS + 2];
	int64_t born, idle_since;
	sigset_t mask;
	int sfd;

	listen_fd = a->listen_fd;
	if (fcntl(listen_fd, F_SETFL, O_NONBLOCK) < 0)
		return 71;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
	    (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		return 71;
	started = last_used = now_real();
	born = idle_since = now_mono();

	for (;;) {
		size_t np = 0, base;
		int64_t t = now_mono(), timeout;

		if (!stopping && (t - born >= a->max_seconds ||
				  (active == 0 && t - idle_since >= a->idle_seconds)))
			stop();
		if (stopping && active == 0)
			return 0;
		pfd[np++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (listen_fd >= 0)
			pfd[np++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
		base = np;
		for (size_t i = 0; i < n_conns; i++)
			/* A killed run's connection waits for the reaping
			 * alone (poll skips a negative fd). */
			pfd[np++] = (struct pollfd){ .fd = conns[i].killed ? -1 : conns[i].fd,
						     .events = conns[i].pid ? POLLRDHUP : POLLIN };
		timeout = a->max_seconds - (t - born);
		if (active == 0 && a->idle_seconds - (t - idle_since) < timeout)
			timeout = a->idle_seconds - (t - idle_since);
		if (timeout < 0)
			timeout = 0;
		if (poll(pfd, np, stopping ? -1 : (int)(timeout * 1000 + 1)) < 0) {
			if (errno == EINTR)
				continue;
			return 71;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				if (si.ssi_signo != SIGCHLD)
					stop();
			reap();
			if (active == 0)
				idle_since = now_mono();
			continue; /* the connections moved */
		}
		if (listen_fd >= 0 && (pfd[1].revents & POLLIN))
			accept_one();
		/* Connections from the last one down: drop_conn() moves the
		 * last into the hole. */
		for (size_t j = np; j-- > base;) {
			size_t i = j - base;

			if (!pfd[j].revents || i >= n_conns || pfd[j].fd != conns[i].fd || conns[i].killed)
				continue;
			if (conns[i].pid) {
				if (pfd[j].revents & (POLLRDHUP | POLLHUP | POLLERR))
					broker_gone(i);
				continue;
			}
			if (!request(i, a))
				drop_conn(i);
		}
	}
}
