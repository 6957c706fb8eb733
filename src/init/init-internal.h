/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * init-internal.h - what the files of sbx-init share: the failure report
 * (init.c), where the new root is built, and the steps sbx_init_main()
 * calls, one section for each file that holds them.  Included only from
 * src/init; the init sees nothing of the broker but spec.h.
 *
 * Between clone and execve there is no error object: a step that fails
 * calls fail() or unavailable(), which send the broker one struct
 * sbx_report with errno and the message and _exit(127).  Nothing here
 * returns an error.
 */
#ifndef SBX_INIT_INTERNAL_H
#define SBX_INIT_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "spec.h"

/* The new root is assembled on a tmpfs mounted over /tmp of our private
 * copy of the host's mount tree: /tmp exists everywhere, and nothing of
 * the host's /tmp is visible through it. */
#define NEWROOT "/tmp"

/* --- init.c ---------------------------------------------------------------- */

/* The setup and report socket (SOCK-FD), set first thing in sbx_init_main(). */
extern int report_sock;

/**
 * send_report() - send @rep on @fd as one record.
 * Best effort: a broker that no longer reads has given up on the run.
 */
void send_report(int fd, const struct sbx_report *rep);

/**
 * fail_to() - report a failed @stage on @fd and _exit(127).
 * @unavailable: a missing kernel feature rather than a bug (the broker
 * exits 69).  The report carries the current errno and the message.
 */
_printf_(4, 5) _noreturn_ void fail_to(int fd, enum sbx_stage stage, bool unavailable,
				       const char *fmt, ...);

#define fail(stage, ...) fail_to(report_sock, stage, false, __VA_ARGS__)
/* A missing kernel feature rather than a bug: the broker exits 69. */
#define unavailable(stage, ...) fail_to(report_sock, stage, true, __VA_ARGS__)

/**
 * read_memfd_noexec() - read vm.memfd_noexec through the new root's /proc
 * when the init could not set it; called from setup_proc() once that
 * /proc is mounted.  Fails the run on an unreadable value.
 */
void read_memfd_noexec(void);

/* --- root.c: step 2, in the order sbx_init_main() calls them -------------- */

/**
 * in_root() - build "NEWROOT<path>" into @buf of @len bytes.
 * Returns @buf; a path too long fails the run (SBX_STAGE_ROOT).
 */
const char *in_root(char *buf, size_t len, const char *path);

/* Make / private, take the binds, mount the new root's tmpfs. */
void setup_root(const struct sbx_spec *spec);
/* The profile's read-only binds, the masks over site trees, the symlinks. */
void setup_binds(const struct sbx_spec *spec);
void setup_etc(const struct sbx_spec *spec);
/* /sys/devices/system/cpu/online holding @online (pin_cpus()). */
void setup_sys_cpus(const char *online);
void setup_dev(const struct sbx_spec *spec);
/* A fresh /proc, masked; sets the user namespace's quotas meanwhile. */
void setup_proc(const struct sbx_spec *spec);
/* /tmp, /work, /work/in and /work/out. */
void setup_work(const struct sbx_spec *spec);
/* The code file, then /work/in read-only (after hand_over_work()). */
void setup_code(const struct sbx_spec *spec);

/* --- seed.c ------------------------------------------------------------------ */

/* The prepared tree's writable seed copied into the workspace, if any. */
void setup_seed(const struct sbx_spec *spec);
/* Into the new root, the old one detached, the root read-only. */
void setup_pivot(void);

/* --- handover.c: the setup socket ------------------------------------------ */

/* Pass the broker a NETLINK_ROUTE socket of the new net namespace. */
void send_netlink(int sock);
/**
 * wait_for_go() - wait for the broker's go-ahead and map the spec it
 * brings.  Returns the spec (never NULL); the broker's EOF ends the init.
 */
const struct sbx_spec *wait_for_go(int sock);
/* Has the broker closed its end of @sock (it died)? */
bool broker_gone(int sock);
/* Wait for lo; for an egress profile, make the proxy's listener. */
void setup_net(const struct sbx_spec *spec, int sock);
/* Hand /work/in, /work/out (and the listener) over; wait for the inputs. */
void hand_over_work(int sock);

/* --- creds.c: step 4 and the limits ---------------------------------------- */

/* Limits of the run's own user namespace; from setup_proc(). */
void setup_user_quotas(const struct sbx_spec *spec);
/* Close every inherited fd but the five in @keep (sorted in place; the
 * same fd may be named twice). */
void close_inherited(int keep[5]);
/* Every capability, no_new_privs, undumpable. */
void drop_credentials(void);
/**
 * apply_landlock() - restrict the init (and so the payload) with Landlock,
 * best effort by ABI.  Returns the ABI applied, or 0 without Landlock.
 */
int apply_landlock(const struct sbx_spec *spec);
void load_seccomp(const struct sbx_spec *spec);
void setup_rlimits(const struct sbx_spec *spec);
/**
 * pin_cpus() - pin the init (and so the payload) to spec->n_cpus of the
 * CPUs it may run on, starting at the one it runs on; their list
 * ("0-1,3") into @list of @len bytes, "" when spec->n_cpus is 0.
 */
void pin_cpus(const struct sbx_spec *spec, char *list, size_t len);

/* --- reaper.c: steps 5 and 6 ----------------------------------------------- */

/* /proc/self/oom_score_adj, opened by open_oom_score_adj() while the init
 * may still open it; kept across close_inherited(). */
extern int oom_adj_fd;
void open_oom_score_adj(void);
/**
 * spawn_payload() - start the payload with @spawn (the program's hook,
 * init.h) with @out_fd and @err_fd as its stdout and stderr, and @in_fd
 * as its stdin (-1: /dev/null), at oom_score_adj 1000.
 * Returns its pid; a failure before its code runs fails the run
 * (SBX_STAGE_FDS, SBX_STAGE_EXEC).
 */
pid_t spawn_payload(const struct sbx_spec *spec, int out_fd, int err_fd, int in_fd,
		    pid_t (*spawn)(const struct sbx_spec *, int, int, int));
/**
 * reap() - pid 1's loop: forward the signals in @mask other than SIGCHLD
 * to the whole namespace, reap, and when @payload ends kill the rest,
 * report its wait status and _exit(0).
 */
_noreturn_ void reap(pid_t payload, const sigset_t *mask);

#endif
