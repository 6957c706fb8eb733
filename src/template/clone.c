/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * clone.c - one run's pid 1, cloned from the template.
 *
 * The broker clones sbx-init and execs it (src/sandbox/sandbox.c); here
 * the clone is the whole start: a raw clone3 without CLONE_VM makes a
 * real copy of this process - the interpreter with its imports done - as
 * pid 1 of new user and pid namespaces, born in the run's cgroup where
 * the kernel allows (CLONE_INTO_CGROUP), with a pidfd for the broker.
 * The child then runs the same steps as sbx-init (src/init, init.h) with
 * the template's payload hook (payload.c).
 *
 * Why pid 1 runs only C: a raw clone3 does not update glibc's cached
 * thread id, so in the child anything that trusts it (raise(), pthread
 * locks' owner checks, the interpreter's thread state) would act for the
 * template's thread.  src/init uses none of that; the payload is then
 * started with glibc's fork(), which sets the child's cached id right,
 * and only that child runs the interpreter again.  So the interpreter's
 * fork hooks are split: PyOS_BeforeFork() here before the clone,
 * PyOS_AfterFork_Parent() here after it, and PyOS_AfterFork_Child() in
 * the payload's process (payload.c), never in pid 1.
 */
#include "config.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <linux/sched.h>
#include <linux/securebits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init.h"
#include "syscalls.h"
#include "template.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/*
 * Close every fd but @keep's (-1 entries ignored): the listening socket,
 * the other runs' connections and pidfds, whatever the interpreter holds.
 * First thing in the child, so that no other run's fd lives in this one
 * for even the set-up's time; src/init's close_inherited() closes the
 * rest (the cgroup fd) once the root is built.
 */
static int close_all_but(const int *keep, size_t n)
{
	int sorted[SBX_TEMPLATE_MAX_FDS];
	size_t k = 0;
	unsigned lo = 3;

	for (size_t i = 0; i < n; i++)
		if (keep[i] > 2)
			sorted[k++] = keep[i];
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			int t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (size_t i = 0; i < k; i++) {
		if ((unsigned)sorted[i] > lo && close_range(lo, (unsigned)sorted[i] - 1, 0) < 0)
			return -1;
		if ((unsigned)sorted[i] + 1 > lo)
			lo = (unsigned)sorted[i] + 1;
	}
	return close_range(lo, ~0U, 0);
}

/* The template's handlers are the interpreter's; pid 1 starts as an
 * exec'd sbx-init does: every disposition default, nothing blocked (the
 * init blocks what its reaper takes itself).  Raw rt_sigaction: glibc's
 * sigaction() refuses its two internal signals. */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

static void plain_signals(void)
{
	struct kernel_sigaction dfl = { .handler = SIG_DFL };
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* The child, pid 1 of the new namespaces.  C only from here on. */
_Noreturn static void child(const struct sbx_template_spawn *sp)
{
	int fds[4] = { sp->fds[0], sp->fds[1], sp->fds[2], sp->fds[3] };
	int n = fds[3] >= 0 ? 4 : 3;

	/* The template's death ends the run: the init's too (and so the
	 * namespace's).  The broker, which sees the template's EOF, reports
	 * the run as an error. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(127);
	/* Dumpable, as the execve of sbx-init makes it: the change of
	 * effective uid around the clone (root's runs) left the template, and
	 * so this copy, undumpable, and the init must open its own
	 * /proc/self/oom_score_adj.  It makes itself undumpable again when it
	 * drops its credentials, before any payload exists. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		_exit(127);
	plain_signals();
	/* What an exec'd sbx-init shows: its name, no environment. */
	sbx_template_show((char *const[]){ (char *)"sbx-init", NULL }, (char *const[]){ NULL });
	prctl(PR_SET_NAME, "sbx-init", 0, 0, 0);
	if (close_all_but(fds, (size_t)n) < 0)
		_exit(127);
	/* fds 0-2 are the template's /dev/null already; as sbx-init does,
	 * whatever they are, they become /dev/null. */
	if (sbx_init_stdio_to_null(fds, n) < 0)
		_exit(127);
	sbx_init_run(fds[0], fds[1], fds[2], n == 4 ? fds[3] : -1, sbx_template_spawn_payload);
}

/*
 * Root's runs: the sandbox's user namespace is made with the run's id as
 * its owner, as sandbox.c's become_owner() explains (the kernel charges
 * the namespace's ucounts to its owner, and the owner's id is what may
 * enter it).  The template is root: it takes that id as real and
 * effective uid around the clone, with SECBIT_NO_SETUID_FIXUP so that no
 * capability is lost, and its saved uid 0 brings it back.
 */
struct owner_ids {
	int securebits;
	uid_t fsuid;
	bool changed;
};

static int become_owner(uid_t owner, struct owner_ids *o)
{
	o->changed = false;
	if (owner == (uid_t)-1 || geteuid() != 0)
		return 0;
	o->securebits = prctl(PR_GET_SECUREBITS);
	if (o->securebits < 0 ||
	    prctl(PR_SET_SECUREBITS, o->securebits | SECBIT_NO_SETUID_FIXUP) < 0)
		return -1;
	o->fsuid = (uid_t)setfsuid((uid_t)-1);
	if (setresuid(owner, owner, (uid_t)-1) < 0) {
		int e = errno;

		prctl(PR_SET_SECUREBITS, o->securebits);
		errno = e;
		return -1;
	}
	o->changed = true;
	return 0;
}

static void back_to_root(const struct owner_ids *o)
{
	if (!o->changed)
		return;
	if (setresuid(0, 0, (uid_t)-1) < 0)
		abort(); /* cannot happen with the saved uid 0; never go on as another */
	setfsuid(o->fsuid);
	prctl(PR_SET_SECUREBITS, o->securebits);
}

pid_t sbx_template_clone(const struct sbx_template_spawn *sp, int *pidfd, bool *in_cgroup)
{
	struct clone_args args = { 0 };
	struct owner_ids owner;
	pid_t pid = -1;
	int e;

	*pidfd = -1;
	*in_cgroup = false;
	/* The user namespace (whose capabilities the init uses for the rest)
	 * and the pid namespace (the child must be its pid 1) come with the
	 * clone, as in sandbox.c; the init makes the other five itself.  No
	 * CLONE_VM: the child is a copy, copy-on-write, of the interpreter. */
	args.flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_PIDFD;
	args.pidfd = (uint64_t)(uintptr_t)pidfd;
	args.exit_signal = SIGCHLD;
	if (become_owner(sp->owner_uid, &owner) < 0)
		return -1;
	/* The interpreter's locks (the import lock) held across the clone,
	 * so that no copy is taken half-way through an import. */
	PyOS_BeforeFork();
	if (sp->fds[4] >= 0 && !sbx_syscall_forced_enosys("clone_into_cgroup")) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)sp->fds[4];
		pid = sbx_clone3(&args, sizeof(args));
		if (pid == 0)
			child(sp);
		if (pid > 0)
			*in_cgroup = true;
		args.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
		args.cgroup = 0;
	}
	/* Whatever the kernel refused with the cgroup (before 5.7, a cgroup
	 * this uid may not clone into) is left to the broker's attach, which
	 * says why with a Hint - as for cold runs. */
	if (pid < 0)
		pid = sbx_clone3(&args, sizeof(args));
	if (pid == 0)
		child(sp);
	e = errno;
	PyOS_AfterFork_Parent();
	back_to_root(&owner);
	errno = e;
	return pid;
}
