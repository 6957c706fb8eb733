/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * template-spawn.c - the sandbox's pid 1 cloned by the profile's template
 * (sbx-template) instead of exec'd afresh (sandbox.c): the other way
 * sbx_spawn_start() may take.
 *
 * The broker hands the template what it would hand a fresh sbx-init (the
 * setup socket, the payload's stdout and stderr pipes, its stdin, the
 * run's cgroup) and gets back the init's pidfd.  From there the run is
 * the same: id maps written by the broker, the sealed spec and every
 * report over the socket.  Two things differ, and are kept here:
 *
 *   - the broker is not the init's parent, so it cannot waitid() it: it
 *     polls the pidfd for the exit and takes the wait status from the
 *     template's EXITED record on the connection, which stays open for
 *     the run (the template kills the init if that connection closes:
 *     the broker's death takes the sandbox with it);
 *   - anything that fails before the template answered CLONED leaves
 *     nothing behind and the run starts cold (the reason is kept for the
 *     manifest); after CLONED, a failure is the run's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"
#include "template-proto.h"
#include "util.h"

/* How long the broker waits for the template's CLONED: a clone and a
 * reply, a few ms; past this the template is taken for broken. */
#define TEMPLATE_REPLY_MS 5000
/* How long, once the init is gone, for the template's EXITED. */
#define TEMPLATE_EXITED_MS 2000

static void close_all(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

/* The SPAWN request with its fds (up to five: more than sbx_send_fds
 * takes). */
static ssize_t send_spawn(int conn, const struct sbx_template_request *req, const int *fds,
			  size_t nfds)
{
	union {
		char buf[CMSG_SPACE(SBX_TEMPLATE_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u = { 0 };
	struct iovec iov = { .iov_base = (void *)req, .iov_len = sizeof(*req) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = CMSG_SPACE(nfds * sizeof(int)) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	return sendmsg(conn, &msg, MSG_NOSIGNAL);
}

/* One reply, waiting at most @ms: its size, 0 at EOF, -1 on error or
 * timeout (errno ETIMEDOUT). */
static ssize_t recv_reply(int conn, struct sbx_template_reply *rep, int *pidfd, int ms)
{
	struct pollfd p = { .fd = conn, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		errno = ETIMEDOUT;
	if (r <= 0)
		return -1;
	return sbx_recv_fds(conn, rep, sizeof(*rep), pidfd, pidfd ? 1 : 0);
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	/* A template of the caller's uid only: the fds of the run go to no
	 * one else. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
		goto fail;
	if (cred.uid != geteuid()) {
		errno = EPERM;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

int sbx_spawn_start_template(struct sbx_spawn *sp)
{
	struct sbx_template_request req = {
		.magic = SBX_TEMPLATE_MAGIC,
		.version = SBX_TEMPLATE_VERSION,
		.kind = SBX_TEMPLATE_SPAWN,
	};
	struct sbx_template_reply rep = { 0 };
	int sv[2] = { -1, -1 }, outp[2] = { -1, -1 }, errp[2] = { -1, -1 }, inp[2] = { -1, -1 };
	int fds[SBX_TEMPLATE_MAX_FDS], pidfd = -1, conn;
	size_t nfds = 0;
	ssize_t n;

	conn = connect_to(sp->template_sock);
	if (conn < 0) {
		sp->template_fallback = errno == EPERM ? "the template's socket is not the caller's" :
							 "no template answered";
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 ||
	    (sp->want_stdin && pipe2(inp, O_CLOEXEC) < 0)) {
		sp->template_fallback = "no fds for the template's run";
		goto fail;
	}
	fds[nfds++] = sv[1];
	fds[nfds++] = outp[1];
	fds[nfds++] = errp[1];
	if (inp[0] >= 0) {
		req.flags |= SBX_TEMPLATE_HAS_STDIN;
		fds[nfds++] = inp[0];
	}
	if (sp->cgroup_fd >= 0) {
		req.flags |= SBX_TEMPLATE_HAS_CGROUP;
		fds[nfds++] = sp->cgroup_fd;
	}
	/* Root's runs: the run's own id owns the user namespace, as in a
	 * cold run (become_owner() in sandbox.c); the template (root too)
	 * takes that id around its clone. */
	if (sp->host_id != (uid_t)-1 && geteuid() == 0) {
		req.flags |= SBX_TEMPLATE_OWNER_ID;
		req.owner_uid = sp->host_id;
	}
	snprintf(req.digest, sizeof(req.digest), "%s", sp->template_digest);
	if (send_spawn(conn, &req, fds, nfds) != (ssize_t)sizeof(req)) {
		sp->template_fallback = "the template did not take the request";
		goto fail;
	}
	n = recv_reply(conn, &rep, &pidfd, TEMPLATE_REPLY_MS);
	if (n == (ssize_t)sizeof(rep) && rep.kind == SBX_TEMPLATE_ERROR) {
		sp->template_fallback = rep.err == ESTALE ? "the template was stale" :
							    "the template refused the run";
		goto fail;
	}
	if (n != (ssize_t)sizeof(rep) || rep.kind != SBX_TEMPLATE_CLONED || pidfd < 0 ||
	    rep.pid <= 0) {
		/* Whatever it cloned dies when this connection closes, before
		 * the go-ahead: the payload never started. */
		sp->template_fallback = n < 0 && errno == ETIMEDOUT ?
						"the template did not answer in time" :
						"the template's answer was not a clone";
		goto fail;
	}
	close(sv[1]);
	close(outp[1]);
	close(errp[1]);
	if (inp[0] >= 0)
		close(inp[0]);
	sp->template_fd = conn;
	sp->from_template = true;
	sp->in_cgroup = rep.in_cgroup != 0;
	sp->pid = rep.pid;
	sp->pidfd = pidfd;
	sp->sock = sv[0];
	sp->out_rd = outp[0];
	sp->err_rd = errp[0];
	sp->in_wr = inp[1];
	return 0;
fail:
	if (pidfd >= 0)
		close(pidfd);
	close_all(sv, 2);
	close_all(outp, 2);
	close_all(errp, 2);
	close_all(inp, 2);
	close(conn);
	return -1;
}

int sbx_spawn_template_exited(struct sbx_spawn *sp, int *status)
{
	struct sbx_template_reply rep;
	ssize_t n;

	/* The pidfd said the init is gone; the template, which reaps it,
	 * says how.  Its silence means it died first: the init went with
	 * it (PR_SET_PDEATHSIG), killed. */
	*status = W_EXITCODE(0, SIGKILL);
	if (sp->template_fd < 0)
		return -1;
	n = recv_reply(sp->template_fd, &rep, NULL, TEMPLATE_EXITED_MS);
	close(sp->template_fd);
	sp->template_fd = -1;
	if (n != (ssize_t)sizeof(rep) || rep.kind != SBX_TEMPLATE_EXITED) {
		sp->template_lost = true;
		return -1;
	}
	*status = rep.status;
	return 0;
}

void sbx_spawn_template_reap(struct sbx_spawn *sp)
{
	struct pollfd p = { .fd = sp->pidfd, .events = POLLIN };
	int status;

	/* Not our child: kill it and wait until the pidfd says it is gone
	 * (the template reaps it), never longer than the template takes. */
	pidfd_send_signal(sp->pidfd, SIGKILL, NULL, 0);
	while (poll(&p, 1, TEMPLATE_EXITED_MS) < 0 && errno == EINTR)
		;
	sbx_spawn_template_exited(sp, &status);
}
