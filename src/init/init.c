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
 *      generated /etc, a minimal /dev, a fresh /proc with sensitive entries
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
 * This file keeps the order of the steps (sbx_init_main) and the failure
 * report.  Steps of their own are in files named for them:
 *
 *   handover.c  what the init and the broker pass over the setup socket:
 *               the netlink socket, the go-ahead with the spec, lo's word
 *               and the proxy listener, the /work fds (steps 1 and 3),
 *   root.c      the new root, from the private mount tree to the pivot
 *               and the read-only root (step 2, and the code file of 3),
 *
 * and init-internal.h declares what they share.
 */
#include "config.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/prctl.h>
#include <netinet/in.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init-internal.h"
#include "spec.h"
#include "syscalls.h"

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
	if (sethostname("sbx", 3) < 0 || setdomainname("sbx", 3) < 0)
		fail(SBX_STAGE_IDENTITY, "sethostname");
}

/*
 * Limits of the run's own user namespace, in its /proc/sys/user (the
 * files there belong to the namespace of the process that opens them, and
 * its root - this process, with CAP_SYS_RESOURCE in it - may set them).
 *
 * Why limits here protect the caller: the kernel charges these objects
 * (inotify instances and watches, fanotify groups and marks, namespaces)
 * to a chain of counters, one per user namespace from the creating
 * process's up to the host's.  In each parent the charge goes to the
 * namespace's owner - the uid that created it, i.e. sbx's caller, host
 * root for root's runs - against that parent's limit.  So without a
 * limit of its own, a payload draws straight from the caller's budget
 * (128 inotify instances for root) and can exhaust it; with one, the run
 * takes at most its own limit from it.  The rlimits (setup_rlimits) do
 * the same for queued signals, message queues and locked memory, which
 * are counted per namespace the same way and checked against the
 * payload's rlimit in the run's namespace.
 *
 * Nothing in the sandbox makes a namespace after this point (the init's
 * own are all made: the cgroup one was the last), so those counts are 0.
 * A file the kernel lacks is a quota it does not have (fanotify before
 * 5.13, time namespaces before 5.6): nothing to exhaust, skipped.
 */
void setup_user_quotas(const struct sbx_spec *spec)
{
	const struct {
		const char *name;
		uint64_t value;
	} quotas[] = {
		{ "max_inotify_instances", spec->quotas.inotify_instances },
		{ "max_inotify_watches", spec->quotas.inotify_watches },
		{ "max_fanotify_groups", spec->quotas.fanotify_groups },
		{ "max_fanotify_marks", spec->quotas.fanotify_marks },
		{ "max_user_namespaces", 0 },
		{ "max_mnt_namespaces", 0 },
		{ "max_pid_namespaces", 0 },
		{ "max_net_namespaces", 0 },
		{ "max_ipc_namespaces", 0 },
		{ "max_uts_namespaces", 0 },
		{ "max_cgroup_namespaces", 0 },
		{ "max_time_namespaces", 0 },
	};
	char path[512], num[24];
	int dir, fd, n;

	dir = open(in_root(path, sizeof(path), "/proc/sys/user"), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		unavailable(SBX_STAGE_PROC, "/proc/sys/user: the user namespace's quotas");
	for (size_t i = 0; i < ARRAY_SIZE(quotas); i++) {
		fd = openat(dir, quotas[i].name, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			continue;
		n = snprintf(num, sizeof(num), "%llu", (unsigned long long)quotas[i].value);
		if (fd < 0 || write(fd, num, (size_t)n) != n)
			unavailable(SBX_STAGE_PROC, "setting user.%s to %s", quotas[i].name, num);
		close(fd);
	}
	close(dir);
}

/* Close every inherited fd of the broker's but the four the init uses. */
static void close_inherited(int keep[4])
{
	unsigned lo = 3;

	/* keep[] sorted ascending */
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3 - i; j++)
			if (keep[j] > keep[j + 1]) {
				int t = keep[j];
				keep[j] = keep[j + 1];
				keep[j + 1] = t;
			}
	for (int i = 0; i < 4; i++) {
		if ((unsigned)keep[i] > lo && close_range(lo, (unsigned)keep[i] - 1, 0) < 0)
			fail(SBX_STAGE_FDS, "close_range");
		lo = (unsigned)keep[i] + 1;
	}
	if (close_range(lo, ~0U, 0) < 0)
		fail(SBX_STAGE_FDS, "close_range");
}

static void drop_credentials(void)
{
	/* Clear effective, permitted, inheritable, ambient and bounding sets.
	 * libcap-ng drops the bounding set while CAP_SETPCAP is still held. */
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_apply(CAPNG_SELECT_ALL) < 0) {
		errno = EPERM;
		fail(SBX_STAGE_CREDENTIALS, "dropping capabilities");
	}
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) > 0)
			fail(SBX_STAGE_CREDENTIALS, "capability %d still in the bounding set", cap);
	/* No exec may ever grant privileges back (setuid bits, file caps). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail(SBX_STAGE_CREDENTIALS, "PR_SET_NO_NEW_PRIVS");
	/* Undumpable: the payload cannot read the init's memory (the spec,
	 * with the job's code and environment) or open its fds through
	 * /proc/1 even as the same uid. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		fail(SBX_STAGE_CREDENTIALS, "PR_SET_DUMPABLE");
}

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#endif

static void landlock_allow(int ruleset, const char *path, uint64_t access)
{
	struct landlock_path_beneath_attr rule = { .allowed_access = access };

	rule.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (rule.parent_fd < 0)
		fail(SBX_STAGE_LANDLOCK, "landlock: %s", path);
	if (sbx_landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0)
		fail(SBX_STAGE_LANDLOCK, "landlock rule for %s", path);
	close(rule.parent_fd);
}

/*
 * Landlock, as defense in depth behind the mounts: the whole tree is
 * readable and executable, only the scratch mounts (/tmp, /work with
 * /work/out, /dev/shm) may be written, /dev and /proc files may be opened
 * for writing (/dev/null, /proc/self/...), and device nodes can be made
 * nowhere.  The mounts already say the same; this holds even if a mount
 * were wrong.  Best effort by ABI version: a kernel without Landlock runs
 * without it (the policy does not require it) and the manifest says null.
 * Returns the ABI applied, or 0.
 */
static int apply_landlock(void)
{
	const uint64_t read = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
			      LANDLOCK_ACCESS_FS_READ_DIR;
	uint64_t all = (1ULL << 13) - 1; /* ABI 1: EXECUTE .. MAKE_SYM */
	uint64_t scratch, dev;
	struct landlock_ruleset_attr attr;
	int abi, ruleset;

	abi = sbx_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		if (errno == ENOSYS || errno == EOPNOTSUPP)
			return 0;
		fail(SBX_STAGE_LANDLOCK, "landlock ABI version");
	}
	if (abi >= 2)
		all |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		all |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		all |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	scratch = all & ~(LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK);
	dev = read | LANDLOCK_ACCESS_FS_WRITE_FILE | (all & (LANDLOCK_ACCESS_FS_TRUNCATE |
							     LANDLOCK_ACCESS_FS_IOCTL_DEV));

	attr.handled_access_fs = all;
	ruleset = sbx_landlock_create_ruleset(&attr, sizeof(attr), 0);
	if (ruleset < 0)
		fail(SBX_STAGE_LANDLOCK, "landlock ruleset");
	landlock_allow(ruleset, "/", read);
	landlock_allow(ruleset, "/tmp", scratch);
	landlock_allow(ruleset, "/work", scratch);
	landlock_allow(ruleset, "/dev/shm", scratch);
	landlock_allow(ruleset, "/dev", dev);
	landlock_allow(ruleset, "/proc", dev);
	if (sbx_landlock_restrict_self(ruleset, 0) < 0)
		fail(SBX_STAGE_LANDLOCK, "landlock_restrict_self");
	close(ruleset);
	return abi;
}

/* The filter binds the init too, for everything it does after this: its
 * setrlimit calls (prlimit64 on pid 0), the payload's clone, kill(-1),
 * waitpid and the reports on an existing socket.  It opens no socket and
 * touches no other process's limits or scheduling, which the default
 * policy denies. */
static void load_seccomp(const struct sbx_spec *spec)
{
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &spec->seccomp, 0, 0) < 0) {
		if (errno == EINVAL)
			unavailable(SBX_STAGE_SECCOMP, "seccomp filters are not supported by this kernel");
		fail(SBX_STAGE_SECCOMP, "loading the seccomp filter");
	}
}

static void set_rlimit(int resource, rlim_t value, const char *name)
{
	struct rlimit rl = { .rlim_cur = value, .rlim_max = value };
	if (setrlimit(resource, &rl) < 0)
		fail(SBX_STAGE_RLIMITS, "setrlimit %s", name);
}

/* Lower @resource to @value, or to the hard limit the broker passed down
 * if that is lower still (raising a hard limit needs host privilege). */
static void lower_rlimit(int resource, rlim_t value, const char *name)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) < 0)
		fail(SBX_STAGE_RLIMITS, "getrlimit %s", name);
	set_rlimit(resource, value < rl.rlim_max ? value : rl.rlim_max, name);
}

static void setup_rlimits(const struct sbx_spec *spec)
{
	/* Set on the init and inherited by the payload.  Core dumps would
	 * write the payload's memory into its workspace; nofile and fsize
	 * bound what one process can hold and write; nproc is a second line
	 * behind the pids cgroup (counted per user namespace). */
	set_rlimit(RLIMIT_CORE, 0, "core");
	set_rlimit(RLIMIT_NOFILE, spec->rlimit_nofile, "nofile");
	set_rlimit(RLIMIT_FSIZE, spec->rlimit_fsize, "fsize");
	set_rlimit(RLIMIT_NPROC, spec->rlimit_nproc, "nproc");
	/* Charged to the caller as well as to the payload (see
	 * setup_user_quotas): the profile's kernel_quotas.  sigpending also
	 * bounds POSIX timers, each of which holds a queued signal; the
	 * kernel's own signals to the init (SIGCHLD) are never refused. */
	lower_rlimit(RLIMIT_SIGPENDING, spec->quotas.sigpending, "sigpending");
	lower_rlimit(RLIMIT_MSGQUEUE, spec->quotas.msgqueue_bytes, "msgqueue");
	lower_rlimit(RLIMIT_MEMLOCK, spec->quotas.memlock_bytes, "memlock");
}

/*
 * The payload's first moments, in a vfork-style child that shares the
 * init's memory and stack region until its execve (so nothing is copied),
 * while the init waits: only system calls, and on failure the errno left
 * where the init reads it.  The payload gets its own session (no
 * controlling terminal shared with the caller, and a process group the
 * init can signal as a whole), stdin /dev/null, the capture pipes,
 * nothing else open, /work as its directory, and normal signal semantics:
 * no signal blocked (the broker blocks its cancellation signals, and a
 * mask survives execve) and every disposition at its default (the init
 * has no handlers and reset every ignored signal when it started).
 *
 * glibc's posix_spawn would do the same, plus one sigaction call per
 * signal (64, each through the seccomp filter) and an mmap and munmap of
 * a stack, on every run's critical path.
 */
struct payload_exec {
	const struct sbx_spec *spec;
	int out_fd, err_fd;
	int err;     /* errno of the failed step, read by the init */
	bool exec;   /* the failed step was the execve itself */
};

static int exec_payload(void *arg)
{
	struct payload_exec *x = arg;
	sigset_t none;
	int fd, in, out, err;

	if (setsid() < 0)
		goto fail;
	/* Copies above 2 first: when sbx was started with stdio closed, the
	 * pipes may themselves be 0, 1 or 2. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (in = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0 ||
	    (out = fcntl(x->out_fd, F_DUPFD_CLOEXEC, 3)) < 0 ||
	    (err = fcntl(x->err_fd, F_DUPFD_CLOEXEC, 3)) < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
	    dup2(err, 2) < 0 || close_range(3, ~0U, 0) < 0 || chdir("/work") < 0)
		goto fail;
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		goto fail;
	x->exec = true;
	execve(x->spec->argv[0], x->spec->argv, x->spec->envp);
fail:
	x->err = errno;
	_exit(127);
}

/*
 * The OOM killer's first choice in the run's cgroup is the payload (and
 * whatever it starts: children inherit the value), never the init.  A
 * payload whose memory is tmpfs pages or socket buffers has a tiny RSS,
 * and without this the kernel may well pick the init and end the run
 * without the payload's exit status.  Raising a value needs no privilege,
 * lowering it needs none down to the least value inherited, which is the
 * init's: so the init writes 1000 into its own oom_score_adj just before
 * the clone (which copies it to the child) and puts its own back once the
 * child has exec'd.  It uses an fd opened when it started, because from
 * the uid change on it is not dumpable and /proc/self belongs to a root it
 * does not have; and the child cannot write its own for the same reason
 * (it shares the init's memory until execve).  The payload may lower its
 * value again to the init's; run.c reads an OOM-killed init as the memory
 * limit too.
 */
static int oom_adj_fd = -1;
static char oom_adj_init[16];

static void open_oom_score_adj(void)
{
	ssize_t n;

	oom_adj_fd = open("/proc/self/oom_score_adj", O_RDWR | O_CLOEXEC);
	if (oom_adj_fd < 0)
		fail(SBX_STAGE_SYNC, "opening /proc/self/oom_score_adj");
	n = read(oom_adj_fd, oom_adj_init, sizeof(oom_adj_init) - 1);
	if (n <= 0)
		fail(SBX_STAGE_SYNC, "reading /proc/self/oom_score_adj");
	oom_adj_init[n] = '\0';
}

static void set_oom_score_adj(const char *v)
{
	if (write(oom_adj_fd, v, strlen(v)) != (ssize_t)strlen(v))
		fail(SBX_STAGE_FORK, "oom_score_adj %s", v);
}

static pid_t spawn_payload(const struct sbx_spec *spec, int out_fd, int err_fd)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	struct payload_exec x = { .spec = spec, .out_fd = out_fd, .err_fd = err_fd };
	pid_t pid;

	set_oom_score_adj("1000");
	/* The legacy clone: the seccomp filter already loaded answers
	 * clone3 with ENOSYS, as it does for the payload. */
	pid = clone(exec_payload, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &x);
	if (pid < 0)
		fail(SBX_STAGE_FORK, "clone for the payload");
	/* The child has exec'd (or failed): its memory is its own now, so
	 * this changes the init's value alone. */
	set_oom_score_adj(oom_adj_init);
	if (x.err) {
		/* The child has exited; reap it so no zombie is mistaken for
		 * the payload. */
		waitpid(pid, NULL, 0);
		errno = x.err;
		if (x.exec)
			fail(SBX_STAGE_EXEC, "execve %s", spec->argv[0]);
		fail(SBX_STAGE_FDS, "setting up the payload's session, fds and directory");
	}
	return pid;
}

/* Kill everything in the pid namespace but ourselves and reap it all. */
static void kill_and_reap_all(void)
{
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

static _noreturn_ void reap(pid_t payload, const sigset_t *mask)
{
	struct sbx_report rep = { .kind = SBX_REPORT_EXITED };

	for (;;) {
		siginfo_t si;
		int status;
		pid_t pid;

		if (sigwaitinfo(mask, &si) < 0)
			continue;
		if (si.si_signo != SIGCHLD) {
			/* From the broker (deadline, cancellation): the whole
			 * sandbox gets it, not just the main process. */
			kill(-1, si.si_signo);
			continue;
		}
		while ((pid = waitpid(-1, &status, WNOHANG | __WALL)) > 0) {
			if (pid != payload)
				continue;
			/* The run ends with the main process; whatever it
			 * left running is killed. */
			rep.status = status;
			kill_and_reap_all();
			send_report(report_sock, &rep);
			_exit(0);
		}
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

void sbx_init_main(int sock, int out_fd, int err_fd)
{
	const struct sbx_spec *spec;
	sigset_t mask;
	int landlock_abi;
	struct sbx_report rep;
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
	setup_dev(spec);
	setup_proc(spec);
	setup_work(spec);
	setup_net(spec, sock);
	hand_over_work(sock);
	setup_code(spec);
	setup_pivot();
	close_inherited((int[4]){ sock, out_fd, err_fd, oom_adj_fd });
	drop_credentials();
	landlock_abi = apply_landlock();
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
	pid = spawn_payload(spec, out_fd, err_fd);
	close(out_fd);
	close(err_fd);
	/* The report says what was applied: the Landlock ABI, or 0. */
	rep = (struct sbx_report){ .kind = SBX_REPORT_STARTED, .status = landlock_abi,
				   .memfd_noexec = memfd_noexec };
	send_report(sock, &rep);
	reap(pid, &mask);
}
