/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * helper.h - starting a confined helper (sbx-extract, sbx-validate): the
 * broker's side of the fork and execve, shared by both.
 *
 * A helper parses untrusted bytes, so it never runs in the broker's
 * memory: it is exec'd, not forked and called (a forked copy would still
 * hold the signing key and the caller's environment).  The child, between
 * fork and execve, only arranges its fds, waits for the go byte (the
 * parent moves it into the run's cgroup first, so that nothing the helper
 * does is outside the run's limits), makes itself the OOM killer's first
 * choice, and, when the broker is root, gives up root for the sandbox's
 * unprivileged id.  Everything else a helper confines itself with is the
 * helper's own business, done after execve (see its main()).
 */
#ifndef SBX_HELPER_H
#define SBX_HELPER_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

struct sbx_cgroup;

struct sbx_helper_args {
	const char *what;      /* "archive \"data\"", "validation": for messages */
	const char *name;      /* the program in pkglibexecdir */
	char **argv;           /* argv[0] included; NULL-terminated */
	int fd0, fd1, fd3;     /* become its fds 0, 1 and 3 (fd 2 is a pipe to the broker) */
	uid_t uid;             /* (uid_t)-1: keep the broker's ids */
	gid_t gid;
	/* sbx-extract: an IPC namespace made before execve (and, keeping
	 * the broker's ids, the user namespace an unprivileged one needs);
	 * sbx-validate makes its own namespaces. */
	bool ipc_namespace;
	struct sbx_cgroup *cg; /* moved in before it runs; NULL: stays in sbx's */
};

struct sbx_helper {
	pid_t pid;
	int pidfd;
	int err_fd;            /* the read end of its stderr, non-blocking */
};

/*
 * sbx_helper_start() - fork, place in the cgroup, let it execve.
 * Return: 0 with @h filled in, or -1 with @err set (SBX_EXIT_SOFTWARE,
 * with a Hint when the program is not installed); no child is left then.
 */
int sbx_helper_start(const struct sbx_helper_args *a, struct sbx_helper *h,
		     struct sbx_error *err);

/* SIGKILL through the pidfd (nothing else can be signalled by mistake). */
void sbx_helper_kill(struct sbx_helper *h);

/* Reap it (after it exited, or after sbx_helper_kill): 0, or -1 (errno). */
int sbx_helper_wait(struct sbx_helper *h, siginfo_t *si);

/* Close the fds; a helper not yet reaped is killed and reaped first. */
void sbx_helper_close(struct sbx_helper *h);

/*
 * What a helper wrote on stderr, cleaned for one-line messages whatever a
 * compromised helper put there.  sbx_helper_capture reads what is there
 * now (the first @cap bytes kept, the rest dropped so the helper never
 * blocks), and says whether the pipe is still open.
 */
struct sbx_helper_text {
	char buf[4096];
	size_t len;
	bool truncated, closed;
};
bool sbx_helper_capture(int fd, struct sbx_helper_text *t);
/* Control bytes and non-ASCII become '?', the first newline ends it. */
void sbx_helper_clean_line(char *s);
/* At most a few lines of @t as warnings "<what>: <name>: line". */
void sbx_helper_show(const struct sbx_helper_text *t, const char *what, const char *name);

#endif
