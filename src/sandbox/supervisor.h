/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * supervisor.h - the broker's loop while the payload runs: deadlines,
 * cancellation, draining stdout/stderr, and the payload's end.
 */
#ifndef SBX_SUPERVISOR_H
#define SBX_SUPERVISOR_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "relay.h"
#include "sandbox.h"

struct sha256_ctx;

/* A captured output stream: everything is counted, the first @cap bytes
 * are kept and hashed. */
struct sbx_stream {
	uint64_t bytes;      /* produced */
	char *buf;           /* captured, at most cap bytes */
	size_t len;
	size_t cap;
	bool truncated;
	char sha256[65];     /* of the captured bytes */
	struct sha256_ctx *md; /* Nettle's, while running */
};

/* --stdin: what was passed from sbx's stdin into the payload's. */
struct sbx_stdin_tally {
	bool used;           /* the run had --stdin */
	uint64_t bytes;      /* written into the payload's stdin pipe */
	bool complete;       /* sbx's stdin ended and every byte was passed */
	char sha256[65];     /* of those bytes */
	struct sha256_ctx *md;
};

/* Why the broker ended the run early.  The first one wins: a late exit
 * or a second signal never overwrites it. */
/* The most fds opts.net_fds may add to the wait (the proxy's, at most). */
#define SBX_SUPERVISE_NET_MAX 160

enum sbx_termination {
	SBX_TERM_NONE,
	SBX_TERM_TIMEOUT,
	SBX_TERM_CANCEL,
	SBX_TERM_LIMIT,
};

struct sbx_outcome {
	bool started;        /* the payload's execve succeeded */
	int landlock_abi;    /* Landlock ABI the sandbox applied, 0 for none */
	int memfd_noexec;    /* vm.memfd_noexec in the sandbox, -1 for none */
	bool exited;         /* we have its wait status */
	int wait_status;
	enum sbx_termination term;
	const char *limit_reason; /* with SBX_TERM_LIMIT */
	bool soft_fired;
	bool killed;         /* SIGKILL had to be sent after the grace period */
	bool template_lost;  /* the init's template died before saying how the
			      * init ended (template-spawn.c) */
	bool init_sigkilled; /* the init itself died of SIGKILL (ours, or the
			      * kernel's: an OOM kill, a group OOM kill) */
	uint64_t t_started_ns;
	uint64_t t_exec_ns;  /* STARTED received */
	uint64_t t_end_ns;
	struct sbx_stream out, err;
	struct sbx_stdin_tally in;
};

struct sbx_supervise_opts {
	uint64_t soft_ms;    /* 0: none */
	uint64_t wall_ms;
	uint64_t grace_ms;
	size_t stream_cap;
	int signal_fd;       /* signalfd for SIGINT/SIGTERM/SIGHUP: cancellation */
	/* Called for lifecycle events ("started", "soft_timeout",
	 * "terminating", "exited"); may be NULL. */
	void (*event)(void *ud, const char *name, const char *detail);
	/* Called once when termination starts: e.g. to kill the cgroup after
	 * the grace period; may be NULL (the pid namespace goes with init). */
	void (*kill_all)(void *ud);
	/* Called every @tick_ms while the loop runs (e.g. to redraw a live
	 * status line); NULL or 0: no tick. */
	void (*tick)(void *ud);
	uint64_t tick_ms;
	/* The egress proxy's fds: @net_fds fills at most @max pollfds (fd
	 * and events) before each wait, and @net_ready gets them back with
	 * their revents after it; unused when @net_ready is NULL. */
	size_t (*net_fds)(void *ud, struct pollfd *pfd, size_t max);
	void (*net_ready)(void *ud, const struct pollfd *pfd, size_t n);
	/* An attached run: the payload's stdout and stderr are also copied,
	 * as they come, to mirror_fd[0] and mirror_fd[1] (relay.h).  When
	 * the reader of mirror_fd[0] goes away (EPIPE), the payload's stdout
	 * pipe is closed, so that its next write fails as it would in a
	 * shell pipeline; the capture keeps what came before. */
	bool mirror;
	int mirror_fd[2];
	/* --stdin: @stdin_fd (sbx's own stdin) is read while the payload
	 * runs and copied into its stdin pipe (sp->in_wr), closed at the end
	 * of @stdin_fd so that the payload sees its end. */
	bool pump_stdin;
	int stdin_fd;
	void *ud;
};

/*
 * sbx_supervise() - run the loop until the sandbox's init is gone.
 * Payload outcomes land in @out; a return < 0 is a failure of sbx itself
 * or of the sandbox setup (with @err set: 69 for missing isolation).
 */
int sbx_supervise(struct sbx_spawn *sp, const struct sbx_supervise_opts *o, struct sbx_outcome *out,
		  struct sbx_error *err);
void sbx_outcome_free(struct sbx_outcome *out);

#endif
