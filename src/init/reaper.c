/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reaper.c - steps 5 and 6 of the init (init.c): the payload's clone and
 * exec (its session, fds and oom_score_adj), then the init's life as
 * pid 1: forwarding the broker's signals to the whole namespace, reaping,
 * and when the payload ends, killing what it left behind and sending the
 * broker the payload's wait status.
 *
 * Its own file because this is what runs after the sandbox is sealed:
 * nothing here mounts or changes credentials, and all of it but
 * open_oom_score_adj() (called first thing, while /proc/self is still
 * the init's to open) runs under the seccomp filter already loaded.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "init-internal.h"
#include "init.h"
#include "spec.h"

/*
 * The payload's first moments, in a vfork-style child that shares the
 * init's memory and stack region until its execve (so nothing is copied),
 * while the init waits: only system calls, and on failure the errno left
 * where the init reads it.  The payload gets its own session (no
 * controlling terminal shared with the caller, and a process group the
 * init can signal as a whole), stdin /dev/null (or with --stdin the pipe
 * the broker fills from its own stdin), the capture pipes,
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
	int in_fd;   /* -1: /dev/null */
	int err;     /* errno of the failed step, read by the init */
	bool exec;   /* the failed step was the execve itself */
};

int sbx_init_payload_process(int in_fd, int out_fd, int err_fd, int keep)
{
	sigset_t none;
	int fd, in, out, err;

	if (setsid() < 0)
		return -1;
	/* Copies above 2 first: when sbx was started with stdio closed, the
	 * pipes may themselves be 0, 1 or 2. */
	fd = in_fd >= 0 ? in_fd : open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || (in = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0 ||
	    (out = fcntl(out_fd, F_DUPFD_CLOEXEC, 3)) < 0 ||
	    (err = fcntl(err_fd, F_DUPFD_CLOEXEC, 3)) < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
	    dup2(err, 2) < 0)
		return -1;
	if (keep > 3 && close_range(3, (unsigned)keep - 1, 0) < 0)
		return -1;
	if (close_range(keep > 2 ? (unsigned)keep + 1 : 3, ~0U, 0) < 0 || chdir("/work") < 0)
		return -1;
	sigemptyset(&none);
	return sigprocmask(SIG_SETMASK, &none, NULL);
}

static int exec_payload(void *arg)
{
	struct payload_exec *x = arg;

	if (sbx_init_payload_process(x->in_fd, x->out_fd, x->err_fd, -1) < 0)
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
int oom_adj_fd = -1;
static char oom_adj_init[16];

void open_oom_score_adj(void)
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

pid_t sbx_init_exec_payload(const struct sbx_spec *spec, int out_fd, int err_fd, int in_fd)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	struct payload_exec x = { .spec = spec, .out_fd = out_fd, .err_fd = err_fd, .in_fd = in_fd };
	pid_t pid;

	/* The legacy clone: the seccomp filter already loaded answers
	 * clone3 with ENOSYS, as it does for the payload. */
	pid = clone(exec_payload, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &x);
	if (pid < 0)
		fail(SBX_STAGE_FORK, "clone for the payload");
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

pid_t spawn_payload(const struct sbx_spec *spec, int out_fd, int err_fd, int in_fd,
		    pid_t (*spawn)(const struct sbx_spec *, int, int, int))
{
	pid_t pid;

	set_oom_score_adj("1000");
	pid = spawn(spec, out_fd, err_fd, in_fd);
	/* The child has exec'd (or, the template's, has its own copy of the
	 * memory): this changes the init's value alone. */
	set_oom_score_adj(oom_adj_init);
	return pid;
}

/* Kill everything in the pid namespace but ourselves and reap it all. */
static void kill_and_reap_all(void)
{
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
		;
}

_noreturn_ void reap(pid_t payload, const sigset_t *mask)
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
