/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * helper.c - starting a confined helper (helper.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "helper.h"
#include "libexec.h"
#include "syscalls.h"

/* What the child may write before execve: no allocation, no stdio (the
 * broker may have threads, the proxy's), only write(2) of fixed text and
 * a number. */
static void child_fail(const char *what, int errnum)
{
	char num[16];
	size_t n = sizeof(num);

	do {
		num[--n] = (char)('0' + errnum % 10);
		errnum /= 10;
	} while (errnum && n > 0);
	(void)!write(2, "error ", 6);
	(void)!write(2, what, strlen(what));
	(void)!write(2, ": errno ", 8);
	(void)!write(2, num + n, sizeof(num) - n);
	(void)!write(2, "\n", 1);
}

/*
 * The helper's process, between fork and execve: its fds, the go byte, the
 * OOM score, and the ids.  As root that is the ids the sandbox user maps
 * to: the parser holds no privilege, and what sbx-extract creates in the
 * run's /work/in is owned by an id the sandbox's user namespace maps
 * (tmpfs refuses other owners with EOVERFLOW).  With ipc_namespace, an
 * IPC namespace of its own first (as root), or with the user namespace an
 * unprivileged process needs around it; the helper's uid is not mapped
 * there, so the execve leaves it no capability in it.
 */
static _noreturn_ void child(const struct sbx_helper_args *a, const char *path, int exe, int fd0,
			     int fd1, int fd2, int fd3, int go)
{
	char *envp[] = { NULL };
	sigset_t none;
	char byte;
	int fd;

	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(fd2, 2) < 0 || dup2(fd0, 0) < 0 || dup2(fd1 >= 0 ? fd1 : fd2, 1) < 0 ||
	    dup2(fd3, 3) < 0)
		_exit(127);
	if (read(go, &byte, 1) != 1)
		_exit(127); /* the parent gave up */
	if (a->uid != (uid_t)-1) {
		/* The caller's fsuid may be the sandbox's: /proc/self is root's. */
		setfsuid(0);
		setfsgid(0);
	}
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1000", 4) != 4) {
		child_fail("oom_score_adj", errno);
		_exit(SBX_EXIT_SOFTWARE);
	}
	close(fd);
	if (a->ipc_namespace && a->uid != (uid_t)-1 && unshare(CLONE_NEWIPC) < 0) {
		child_fail("unshare(CLONE_NEWIPC)", errno);
		_exit(SBX_EXIT_UNAVAILABLE);
	}
	if (a->uid != (uid_t)-1 &&
	    (setgroups(0, NULL) < 0 || setresgid(a->gid, a->gid, a->gid) < 0 ||
	     setresuid(a->uid, a->uid, a->uid) < 0)) {
		child_fail("setresuid", errno);
		_exit(SBX_EXIT_SOFTWARE);
	}
	if (a->ipc_namespace && a->uid == (uid_t)-1 && unshare(CLONE_NEWUSER | CLONE_NEWIPC) < 0) {
		child_fail("unshare(CLONE_NEWUSER|CLONE_NEWIPC)", errno);
		_exit(SBX_EXIT_UNAVAILABLE);
	}
	/* By its path first, so that the process is named for it; when the
	 * helper's id cannot reach that path (a build tree in root's 0700
	 * home), through the fd sbx opened with its own rights, as sbx-init
	 * is started. */
	execve(path, a->argv, envp);
	if (errno == EACCES)
		fexecve(exe, a->argv, envp);
	child_fail("execve", errno);
	_exit(127);
}

/* @fd copied above the target numbers, so that no dup2 in the child can
 * overwrite a source that a later one still needs; -1 stays -1. */
static int high(int fd)
{
	return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

int sbx_helper_start(const struct sbx_helper_args *a, struct sbx_helper *h,
		     struct sbx_error *err)
{
	_cleanup_free_ char *path = sbx_libexec_path(a->name);
	_cleanup_close_ int fd0 = -1, fd1 = -1, fd3 = -1, erd = -1, ewr = -1, go_rd = -1,
			    go_wr = -1, pidfd = -1, exe = -1;
	int epipe[2], go[2];
	pid_t pid;

	*h = (struct sbx_helper){ .pid = -1, .pidfd = -1, .err_fd = -1 };
	if (a->uid == 0 || a->gid == 0) /* a caller forgot to pick an id: never run as root */
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, EPERM, "%s: the helper would run as root",
				     a->what);
	/* What execve would report, before there is a child to fail. */
	if (access(path, X_OK) == 0) {
		/* Above the numbers the child dup2()s onto, like the others. */
		int t = open(path, O_PATH | O_CLOEXEC);

		exe = t < 0 ? -1 : high(t);
		if (t >= 0)
			close(t);
	}
	if (exe < 0) {
		sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: cannot run %s", a->what, path);
		sbx_error_hint(err, SBX_LIBEXEC_HINT);
		return -1;
	}
	if (pipe2(epipe, O_CLOEXEC) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: pipe", a->what);
	erd = epipe[0];
	ewr = high(epipe[1]);
	close(epipe[1]);
	if (pipe2(go, O_CLOEXEC) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: pipe", a->what);
	go_rd = high(go[0]);
	close(go[0]);
	go_wr = go[1];
	fd0 = high(a->fd0);
	fd1 = high(a->fd1);
	fd3 = high(a->fd3);
	if (ewr < 0 || go_rd < 0 || fd0 < 0 || fd3 < 0 || (a->fd1 >= 0 && fd1 < 0))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: dup", a->what);

	pid = fork();
	if (pid < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: fork", a->what);
	if (pid == 0)
		child(a, path, exe, fd0, fd1, ewr, fd3, go_rd);
	closep(&ewr);
	closep(&go_rd);
	pidfd = pidfd_open(pid, 0);
	if (pidfd >= 0 && a->cg) {
		/* The cgroup is written with sbx's own rights, not with the
		 * sandbox's id that the caller may have set for copies. */
		uid_t fsuid = (uid_t)setfsuid(geteuid());
		gid_t fsgid = (gid_t)setfsgid(getegid());
		int r = sbx_cgroup_attach(a->cg, pid, err);

		setfsgid(fsgid);
		setfsuid(fsuid);
		if (r < 0) {
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			return -1;
		}
	}
	if (pidfd < 0 || write(go_wr, "g", 1) != 1) {
		sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: start the helper", a->what);
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return -1;
	}
	fcntl(erd, F_SETFL, O_NONBLOCK);
	h->pid = pid;
	h->pidfd = TAKE_FD(pidfd);
	h->err_fd = TAKE_FD(erd);
	return 0;
}

void sbx_helper_kill(struct sbx_helper *h)
{
	if (h->pidfd >= 0)
		pidfd_send_signal(h->pidfd, SIGKILL, NULL, 0);
}

int sbx_helper_wait(struct sbx_helper *h, siginfo_t *si)
{
	memset(si, 0, sizeof(*si));
	if (h->pidfd < 0) {
		errno = ECHILD;
		return -1;
	}
	while (waitid(P_PIDFD, (id_t)h->pidfd, si, WEXITED) < 0)
		if (errno != EINTR)
			return -1;
	h->pid = -1;
	return 0;
}

void sbx_helper_close(struct sbx_helper *h)
{
	siginfo_t si;

	if (h->pid > 0) {
		sbx_helper_kill(h);
		sbx_helper_wait(h, &si);
	}
	closep(&h->pidfd);
	closep(&h->err_fd);
}

bool sbx_helper_capture(int fd, struct sbx_helper_text *t)
{
	char scratch[4096];

	while (!t->closed) {
		size_t room = sizeof(t->buf) - 1 - t->len;
		ssize_t n = room ? read(fd, t->buf + t->len, room) : read(fd, scratch, sizeof(scratch));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			t->closed = true;
			break;
		}
		if (room)
			t->len += (size_t)n;
		else
			t->truncated = true;
	}
	t->buf[t->len] = '\0';
	return !t->closed;
}

void sbx_helper_clean_line(char *s)
{
	for (; *s; s++) {
		if (*s == '\n') {
			*s = '\0';
			return;
		}
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
	}
}

void sbx_helper_show(const struct sbx_helper_text *t, const char *what, const char *name)
{
	const char *p = t->buf, *end = t->buf + t->len;
	int shown = 0;

	while (p < end && shown < 8) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end;
		char line[256];
		size_t n = (size_t)(stop - p) < sizeof(line) - 1 ? (size_t)(stop - p) : sizeof(line) - 1;

		memcpy(line, p, n);
		line[n] = '\0';
		sbx_helper_clean_line(line);
		if (line[0])
			sbx_warn("%s: %s: %s%s", what, name, line, (size_t)(stop - p) > n ? "..." : "");
		shown++;
		p = stop + 1;
	}
	if (t->truncated || p < end)
		sbx_warn("%s: %s: (more on its stderr, not shown)", what, name);
}
