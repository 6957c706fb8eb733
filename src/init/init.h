/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * init.h - the init as a library (libsbx-init.a), for the two programs
 * that run it as a sandbox's pid 1: sbx-init, which the broker's clone
 * executes (sbx-init.c), and sbx-template, which clones pid 1 from a
 * process whose interpreter has its imports done (src/template).  Both
 * run the same steps (init.c); they differ only in how the payload
 * starts, which each passes as the spawn hook: sbx-init execs the
 * profile's argv, the template forks and runs the job's code in the
 * interpreter it already holds.
 */
#ifndef SBX_INIT_H
#define SBX_INIT_H

#include <sys/types.h>

#include "spec.h"

/**
 * sbx_init_spawn_fn - start the payload with @out_fd and @err_fd as its
 * stdout and stderr and @in_fd as its stdin (-1: /dev/null).
 * Called by pid 1 once the sandbox is sealed (credentials dropped,
 * Landlock and seccomp in force, rlimits set, SIGCHLD, SIGTERM, SIGINT
 * and SIGHUP blocked) and with oom_score_adj 1000, which the payload
 * inherits.  Returns the payload's pid; a failure calls fail() (the run
 * fails at SBX_STAGE_FDS or SBX_STAGE_EXEC) and never returns.
 */
typedef pid_t (*sbx_init_spawn_fn)(const struct sbx_spec *spec, int out_fd, int err_fd,
				   int in_fd);

/* sbx-init's hook: a vfork-style clone that execs spec->argv (reaper.c). */
pid_t sbx_init_exec_payload(const struct sbx_spec *spec, int out_fd, int err_fd, int in_fd);

/**
 * sbx_init_payload_process() - in the payload's process, before its code
 * runs: its own session, stdin (@in_fd, or /dev/null for -1), stdout and
 * stderr, nothing else open but @keep (above 2; -1 for none), /work as
 * its directory, no signal blocked.  Only system calls (it runs in a
 * child that shares the init's memory).
 * Returns 0, or -1 with errno set.
 */
int sbx_init_payload_process(int in_fd, int out_fd, int err_fd, int keep);

/**
 * sbx_init_stdio_to_null() - point fds 0, 1 and 2 at /dev/null, first
 * moving above 2 any of the @n fds in @fds that is 0, 1 or 2 (@fds is
 * updated).  Returns 0, or -1 with errno set.
 */
int sbx_init_stdio_to_null(int *fds, int n);

/**
 * sbx_init_run() - be the sandbox's pid 1 (init.c): set up, seal, start
 * the payload with @spawn, reap, report.  Never returns.
 */
_noreturn_ void sbx_init_run(int sock, int out_fd, int err_fd, int in_fd, sbx_init_spawn_fn spawn);

#endif
