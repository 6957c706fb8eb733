/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * init.c - the sandbox's init: everything between clone and the payload's
 * execve, read top to bottom.  It is the body of sbx-init, a small static
 * program of its own (sbx-init.c) that the broker's clone executes at once.
 *
 * The broker's clone makes new user and pid namespaces and executes
 * sbx-init, which is pid 1 of the new pid namespace and holds every
 * capability of the new user namespace (none on the host).  It:
 *
 *   1. while the broker admits the job and computes the spec: makes new
 *      mount, net, ipc and uts namespaces, passes the broker a netlink
 *      socket of the new net namespace (over which the broker brings lo
 *      up), makes memfds non-executable in its pid namespace where it may,
 *      names the host "sbx" and resets ignored signals; then waits
 *      for the go-ahead - the uid/gid maps written, the init placed in the
 *      run's cgroup, the spec attached - becomes the sandbox user and makes
 *      a new cgroup namespace rooted at that cgroup,
 *   2. builds the new root: a tmpfs with the profile's read-only binds
 *      (the host's site trees in them covered unless named), a
 *      generated /etc, the CPUs it pins itself to (and so the payload)
 *      in /sys/devices/system/cpu/online, a minimal /dev, a fresh /proc with sensitive entries
 *      masked, tmpfs /tmp, /work, /work/in (filled, then read-only) and
 *      /work/out, and pivots into it,
 *   3. hands directory fds of /work/in and /work/out to the broker, which
 *      copies the inputs in and later collects the outputs without ever
 *      resolving a path through the sandbox (and, for an egress network
 *      profile, the proxy's listening socket on 127.0.0.1:3128, which the
 *      broker serves from outside),
 *   4. drops every capability (ambient included: that is how they crossed
 *      the execve), sets no_new_privs, makes itself undumpable, restricts
 *      itself with Landlock where the kernel has it and loads the seccomp
 *      filter - so from here on it is no more powerful than the payload,
 *   5. sets the rlimits and spawns the payload in its own session with
 *      only stdin (/dev/null), stdout and stderr open and oom_score_adj
 *      1000 (the OOM killer's first choice, the init staying lower),
 *      exec'ing the profile's interpreter,
 *   6. reaps: forwards SIGTERM/SIGINT/SIGHUP to every process in the
 *      namespace, and when the payload ends kills whatever it left behind
 *      and reports the payload's wait status to the broker.
 *
 * A failing step sends one fixed-size struct sbx_report naming the step
 * and _exits.  Being a program of its own, the init holds nothing of the
 * broker's memory: not the caller's environment or command line, not the
 * signing key.
 *
 * The init is a library (init.h) run by two programs: sbx-init, which
 * execs the payload, and sbx-template, whose pid 1 is cloned from a
 * process that holds an interpreter with its imports done and which
 * forks the payload into that interpreter.  Only step 5's start of the
 * payload differs: each program passes its own spawn hook.
 *
 * This file keeps the order of the steps (sbx_init_run), the failure
 * report, and the small pieces of step 1 that touch only the init itself
 * (namespaces, vm.memfd_noexec, the host name, the signals, the uid
 * change).  The other steps are in files named for them:
 *
 *   handover.c  what the init and the broker pass over the setup socket:
 *               the netlink socket, the go-ahead with the spec, lo's word
 *               and the proxy listener, the /work fds (steps 1 and 3),
 *   root.c      the new root, from the private mount tree to the pivot
 *               and the read-only root (step 2, and the code file of 3),
 *   creds.c     what the init gives up and the limits it sets: inherited
 *               fds, capabilities, no_new_privs, Landlock, seccomp, the
 *               rlimits and the user namespace's quotas (steps 4 and 5),
 *   reaper.c    the payload's clone and exec, its oom_score_adj, signal
 *               forwarding, reaping and the exit report (steps 5 and 6),
 *
 * and init-internal.h declares what they share.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/securebits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "init-internal.h"
#include "init.h"
#include "spec.h"

int report_sock = -1;

void send_report(int fd, const struct sbx_report *rep)
{
	/* SOCK_SEQPACKET or a pipe: one record, whole or not at all. */
	(void)!write(fd, rep, sizeof(*rep));
}

_printf_(4, 5) _noreturn_ void fail_to(int fd, enum sbx_stage stage, bool unavailable,
				       const char *fmt, ...)
{
	struct sbx_report rep = {
		.kind = SBX_REPORT_FAILED,
		.stage = stage,
		.err = errno,
		.unavailable = unavailable,
	};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep.msg, sizeof(rep.msg), fmt, ap);
	va_end(ap);
	send_report(fd, &rep);
	_exit(127);
}

/*
 * The clone made the user and pid namespaces (sandbox.c).  Mount, net,
 * ipc and uts are made here, with the user namespace's capabilities,
 * while the broker creates the cgroup and computes the spec (cgroup comes
 * once the init is in the run's cgroup) - a new network
 * namespace alone takes 0.5-1.3 ms of kernel time on some hosts.  Nothing
 * of the host's is touched before: until this returns the process only
 * exists, and if it fails the broker refuses the run.
 */
static void unshare_namespaces(void)
{
	if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0)
		unavailable(SBX_STAGE_NAMESPACES,
			    "new mount, network, ipc and uts namespaces");
}

/*
 * vm.memfd_noexec 2 in the sandbox's pid namespace (Linux 6.3 and later):
 * a memfd is never executable, MFD_EXEC is refused, and memfd_create
 * without either flag gets MFD_NOEXEC_SEAL - so a program written into a
 * memfd cannot be run, as nothing written to the noexec tmpfs mounts can.
 * The setting is per pid namespace (it acts on the writer's, whichever
 * /proc the file is opened in) and a child namespace can only raise it.
 * The kernel lets a namespace's root write it only while its effective
 * uid is the host's root: so root's runs set it here, before the uid
 * change, and an unprivileged caller's runs keep the host's value, which
 * setup_proc() reads back for the manifest.  -1: no such setting; -2: not
 * written, read it back.
 */
static int memfd_noexec = -2;

static void set_memfd_noexec(void)
{
	int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			memfd_noexec = -1;
		return; /* EACCES: not the host's root */
	}
	if (write(fd, "2", 1) == 1)
		memfd_noexec = 2;
	close(fd);
}

/* The pid namespace's effective setting, when it was not set above. */
void read_memfd_noexec(void)
{
	char path[512], buf[16];
	ssize_t n;
	int fd;

	if (memfd_noexec != -2)
		return;
	fd = open(in_root(path, sizeof(path), "/proc/sys/vm/memfd_noexec"), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail(SBX_STAGE_PROC, "reading vm.memfd_noexec");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || buf[0] < '0' || buf[0] > '2') {
		errno = n < 0 ? errno : EPROTO;
		fail(SBX_STAGE_PROC, "reading vm.memfd_noexec");
	}
	memfd_noexec = buf[0] - '0';
}

static void setup_identity(void)
{
	/* A fixed name: the host's name is information about the host. */
	if (sethostname("sbx", 3) < 0 || setdomainname("sbx", 3) < 0) {
		/* The init holds CAP_SYS_ADMIN over its own UTS namespace, so
		 * EPERM is a seccomp filter's answer: container runtimes'
		 * default profiles allow sethostname only to processes with
		 * CAP_SYS_ADMIN in the container. */
		if (errno == EPERM)
			unavailable(SBX_STAGE_IDENTITY, "sethostname in the sandbox's UTS namespace");
		fail(SBX_STAGE_IDENTITY, "sethostname");
	}
}

/*
 * An ignored signal stays ignored across execve, so whatever the caller of
 * sbx ignored (nohup, a shell's background job, or glibc's posix_spawn,
 * which leaves its two internal signals ignored in every child) would
 * reach the payload.  The init has no handlers of its own: set every
 * ignored signal back to its default, once, while the broker is busy.
 * rt_sigaction directly: glibc's sigaction() refuses its internal ones.
 */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

static void reset_signals(void)
{
	for (int sig = 1; sig < NSIG; sig++) {
		struct kernel_sigaction sa, dfl = { .handler = SIG_DFL };

		if (sig == SIGKILL || sig == SIGSTOP ||
		    syscall(SYS_rt_sigaction, sig, NULL, &sa, sizeof(sa.mask)) < 0 ||
		    sa.handler != SIG_IGN)
			continue;
		if (syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask)) < 0)
			fail(SBX_STAGE_SYNC, "resetting signal %d", sig);
	}
}

/*
 * Point fds 0, 1 and 2 at /dev/null.  What the init inherits there is the
 * broker's (or the template's) stdio - the manifest's output file, the caller's terminal or
 * stderr - which nothing in the sandbox may hold, even through /proc/1/fd.
 * When sbx was started with stdio closed, the fds on the command line may
 * themselves be 0, 1 or 2: they move above 2 first (@fds is updated).
 */
int sbx_init_stdio_to_null(int *fds, int n)
{
	int null;

	for (int i = 0; i < n; i++) {
		int moved;

		if (fds[i] > 2)
			continue;
		moved = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
		if (moved < 0)
			return -1;
		/* The same fd may be named twice; move it once. */
		for (int j = i + 1; j < n; j++)
			if (fds[j] == fds[i])
				fds[j] = moved;
		fds[i] = moved;
	}
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		return -1;
	for (int fd = 0; fd < 3; fd++)
		if (fd != null && dup2(null, fd) < 0)
			return -1;
	if (null > 2)
		close(null);
	return 0;
}

void sbx_init_run(int sock, int out_fd, int err_fd, int in_fd, sbx_init_spawn_fn spawn)
{
	const struct sbx_spec *spec;
	sigset_t mask;
	int landlock_abi;
	struct sbx_report rep;
	char cpus[256];
	pid_t pid;

	report_sock = sock;

	/* If the broker dies, so does the sandbox: the init's death tears
	 * down the whole pid namespace.  The broker may have died before
	 * this was set; then the wait below sees EOF. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		fail(SBX_STAGE_SYNC, "PR_SET_PDEATHSIG");
	open_oom_score_adj();
	unshare_namespaces();
	send_netlink(sock);
	set_memfd_noexec();
	setup_identity();
	reset_signals();
	spec = wait_for_go(sock);

	/* Become the sandbox user (the maps are written now).  Keep the
	 * namespace's capabilities across the uid change: they are needed to
	 * build the root, and are dropped as a whole below. */
	if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED, 0, 0,
		  0) < 0 ||
	    setresgid(SBX_SANDBOX_GID, SBX_SANDBOX_GID, SBX_SANDBOX_GID) < 0 ||
	    setresuid(SBX_SANDBOX_UID, SBX_SANDBOX_UID, SBX_SANDBOX_UID) < 0)
		fail(SBX_STAGE_IDENTITY, "becoming uid %d", SBX_SANDBOX_UID);
	/* The caller's supplementary groups came with the clone; with
	 * subordinate ids one of them is mapped (the caller's, as the
	 * namespace's gid 0), and none is the payload's business. */
	if (spec->clear_groups && setgroups(0, NULL) < 0)
		fail(SBX_STAGE_IDENTITY, "clearing the supplementary groups");
	/* The kernel clears the parent-death signal when the effective uid
	 * or gid changes, which it just did when the sandbox user maps to
	 * another host id than the broker's (root's runs).  Set it again,
	 * and since the broker may have died in between, look for the
	 * hang-up of its end of the socket. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		fail(SBX_STAGE_SYNC, "PR_SET_PDEATHSIG");
	if (broker_gone(sock))
		_exit(127);

	/* Only now, placed in the run's cgroup: that cgroup is the root of
	 * the sandbox's cgroup namespace. */
	if (unshare(CLONE_NEWCGROUP) < 0)
		unavailable(SBX_STAGE_NAMESPACES, "a new cgroup namespace");
	setup_root(spec);
	setup_binds(spec);
	setup_etc(spec);
	pin_cpus(spec, cpus, sizeof(cpus));
	if (cpus[0])
		setup_sys_cpus(cpus);
	setup_dev(spec);
	setup_proc(spec);
	setup_work(spec);
	setup_net(spec, sock);
	hand_over_work(sock);
	setup_code(spec);
	setup_seed(spec);
	setup_pivot();
	/* Without --stdin, the socket stands in for the stdin pipe. */
	close_inherited((int[5]){ sock, out_fd, err_fd, oom_adj_fd, in_fd >= 0 ? in_fd : sock });
	drop_credentials();
	landlock_abi = apply_landlock(spec);
	load_seccomp(spec);

	/* Signals are taken synchronously by the reaper; the payload gets the
	 * default dispositions back before exec. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		fail(SBX_STAGE_FORK, "sigprocmask");

	setup_rlimits(spec);
	pid = spawn_payload(spec, out_fd, err_fd, in_fd, spawn);
	close(out_fd);
	close(err_fd);
	/* The payload's alone: the broker sees its EOF or EPIPE. */
	if (in_fd >= 0)
		close(in_fd);
	/* The report says what was applied: the Landlock ABI, or 0. */
	rep = (struct sbx_report){ .kind = SBX_REPORT_STARTED, .status = landlock_abi,
				   .memfd_noexec = memfd_noexec };
	send_report(sock, &rep);
	reap(pid, &mask);
}
