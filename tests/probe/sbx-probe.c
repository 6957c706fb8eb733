/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbx-probe - a small static program that the end-to-end tests run as the
 * payload (through a test-only profile that binds it at /opt/sbx-probe).
 *
 * Each subcommand attempts one thing a hostile payload would try and
 * prints one line "<name> <result>" where result is "ok" (it worked) or
 * the errno name.  The tests decide what must fail.  The probe is safe
 * even when the sandbox is broken: it never signals or traces a process
 * it did not create (pid 1 is probed only after checking it is sbx's
 * init, by its empty cmdline and our parent pid), and every fork, memory
 * or disk consumer is bounded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/ioprio.h>
#include <linux/perf_event.h>
#include <linux/vm_sockets.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <netinet/in.h>
#include <asm/ldt.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static void result(const char *name, long r)
{
	if (r >= 0)
		printf("%s ok\n", name);
	else
		printf("%s %s\n", name, strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
	fflush(stdout);
}

static void syscalls(void)
{
	struct file_handle *fh = calloc(1, sizeof(*fh) + 128);
	int mnt_id;

	result("unshare_user", unshare(CLONE_NEWUSER));
	result("unshare_net", unshare(CLONE_NEWNET));
	result("unshare_ns", unshare(CLONE_NEWNS));
	result("clone3", syscall(SYS_clone3, NULL, 0));
	result("setns", setns(0, 0));
	result("mount_tmpfs", mount("none", "/tmp", "tmpfs", 0, NULL));
	result("umount_proc", umount2("/proc", MNT_DETACH));
	result("pivot_root", syscall(SYS_pivot_root, "/tmp", "/tmp"));
	result("chroot", chroot("/tmp"));
	result("open_tree", syscall(SYS_open_tree, -100, "/", 0));
	result("fsopen", syscall(SYS_fsopen, "tmpfs", 0));
	result("keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
	result("add_key", syscall(SYS_add_key, "user", "x", "y", 1, -3));
	result("bpf", syscall(SYS_bpf, BPF_PROG_LOAD, NULL, 0));
	{
		struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(a),
					     .config = PERF_COUNT_SW_CPU_CLOCK };
		result("perf_event_open", syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
	}
	result("userfaultfd", syscall(SYS_userfaultfd, 0));
	{
		struct io_uring_params p = { 0 };
		result("io_uring_setup", syscall(SYS_io_uring_setup, 1, &p));
	}
	result("open_by_handle_at", syscall(SYS_open_by_handle_at, AT_FDCWD, fh, O_RDONLY));
	fh->handle_bytes = 128;
	result("name_to_handle_at", syscall(SYS_name_to_handle_at, AT_FDCWD, "/", fh, &mnt_id, 0));
	result("kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
	result("init_module", syscall(SYS_init_module, NULL, 0, ""));
	result("acct", syscall(SYS_acct, NULL));
	result("swapoff", syscall(SYS_swapoff, "/x"));
	result("reboot", syscall(SYS_reboot, 0, 0, 0, NULL));
	{
		struct timespec ts = { 0 };
		result("clock_settime", clock_settime(CLOCK_REALTIME, &ts));
	}
	result("mknod_char", mknod("/tmp/null2", S_IFCHR | 0666, makedev(1, 3)));
	result("personality_query", syscall(SYS_personality, 0xffffffff));
	result("personality_linux32", syscall(SYS_personality, PER_LINUX32));
	result("ptrace_traceme", ptrace(PTRACE_TRACEME, 0, 0, 0));
	free(fh);
}

/* TIOCSTI on stdin (/dev/null inside: ENOTTY if the call gets through,
 * EPERM when seccomp stops it).  The high-bits variant must be stopped
 * too: the kernel truncates the command to 32 bits. */
static void tiocsti(void)
{
	char c = 'x';
	result("tiocsti", syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI, &c));
	result("tiocsti_high", syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | (1UL << 32), &c));
	result("tioclinux", syscall(SYS_ioctl, 0, (unsigned long)TIOCLINUX, &c));
}

/* Touch pid 1 only if it is sbx's init, never the host's init of a
 * broken sandbox: sbx's init is the program sbx-init, started with the
 * command line "sbx-init" and three fd numbers, and named so in comm. */
static bool pid1_is_sbx_init(void)
{
	char cmd[256] = "", comm[32] = "";
	int fd = open("/proc/1/cmdline", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, cmd, sizeof(cmd) - 1) : -1;

	if (fd >= 0)
		close(fd);
	cmd[n > 0 ? n : 0] = '\0';
	fd = open("/proc/1/comm", O_RDONLY);
	n = fd >= 0 ? read(fd, comm, sizeof(comm) - 1) : -1;
	if (fd >= 0)
		close(fd);
	comm[n > 0 ? n : 0] = '\0';
	return strcmp(cmd, "sbx-init") == 0 && strcmp(comm, "sbx-init\n") == 0;
}

static void ptrace_init(void)
{
	if (!pid1_is_sbx_init()) {
		printf("ptrace_init skipped-not-our-init\n");
		return;
	}
	result("ptrace_init", ptrace(PTRACE_ATTACH, 1, 0, 0));
}

#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* Three calls with no use in an analysis job: modify_ldt writing a
 * 32-bit code segment into the process's LDT (the start of a far jump
 * into 32-bit code, a mode the x86-64 filter never sees), memfd_secret,
 * memory the kernel removes from its own direct map, and pidfd_getfd,
 * which copies an fd out of another process under ptrace's rules - here
 * out of the probe's own child, which exits when the probe is done.
 * Each prints "ok" when the kernel did it; the fds, the LDT entry and
 * the child are the probe's own. */
static void ldt_secret(void)
{
	struct user_desc d = {
		.entry_number = 0,
		.base_addr = 0,
		.limit = 0xfffff,
		.seg_32bit = 1,
		.contents = MODIFY_LDT_CONTENTS_CODE,
		.read_exec_only = 0,
		.limit_in_pages = 1,
		.seg_not_present = 0,
		.useable = 1,
	};
	long fd;

	result("modify_ldt_write_code32", syscall(SYS_modify_ldt, 1, &d, sizeof(d)));
	fd = syscall(SYS_memfd_secret, 0);
	result("memfd_secret", fd);
	if (fd >= 0)
		close((int)fd);

	int p[2];
	pid_t child;

	if (pipe2(p, O_CLOEXEC) < 0 || (child = fork()) < 0) {
		result("pidfd_getfd_setup", -1);
		return;
	}
	if (child == 0) {
		char c;

		close(p[1]);
		(void)!read(p[0], &c, 1); /* until the parent closes its end */
		_exit(0);
	}
	close(p[0]);
	long pidfd = syscall(SYS_pidfd_open, child, 0);
	if (pidfd < 0) {
		result("pidfd_getfd_setup", -1);
	} else {
		fd = syscall(SYS_pidfd_getfd, (int)pidfd, 0, 0);
		result("pidfd_getfd_child", fd);
		if (fd >= 0)
			close((int)fd);
		close((int)pidfd);
	}
	close(p[1]);
	waitpid(child, NULL, 0);
}

/* An x32 system call (getpid | __X32_SYSCALL_BIT): the filter kills us. */
static void x32(void)
{
	printf("x32 calling\n");
	fflush(stdout);
	syscall(0x40000000 | 39);
	printf("x32 survived\n");
}

/* Fork up to @n children that sleep; report how many forks succeeded. */
static void forkbomb(int n)
{
	int made = 0, failed_errno = 0;
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0) {
			failed_errno = errno;
			break;
		}
		if (p == 0) {
			sleep(30);
			_exit(0);
		}
		made++;
	}
	printf("forkbomb made=%d errno=%s\n", made,
	       failed_errno ? strerrorname_np(failed_errno) : "none");
	fflush(stdout);
}

/* Touch @mib MiB, one page at a time, reporting progress. */
static void memhog(long mib)
{
	for (long i = 0; i < mib; i++) {
		char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			printf("memhog mmap failed at %ld MiB\n", i);
			return;
		}
		memset(p, 0xa5, 1 << 20);
	}
	printf("memhog survived %ld MiB\n", mib);
}

/* Write up to @bytes into @path; report what was written and the error. */
static void fill(const char *path, long bytes)
{
	static char buf[65536];
	long done = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0) {
		result("fill_open", -1);
		return;
	}
	memset(buf, 'x', sizeof(buf));
	while (done < bytes) {
		ssize_t n = write(fd, buf, (size_t)(bytes - done < (long)sizeof(buf) ? bytes - done : (long)sizeof(buf)));
		if (n < 0) {
			printf("fill wrote=%ld errno=%s\n", done, strerrorname_np(errno));
			close(fd);
			return;
		}
		done += n;
	}
	close(fd);
	printf("fill wrote=%ld errno=none\n", done);
}

/*
 * Every address family 0..45 through socket() with each type, and
 * socketpair() with each type that pairs: one line "socket F T result" or
 * "socketpair F T result" (F, T numbers).  The tests expect EAFNOSUPPORT
 * for every family outside the policy's allowlist, and anything else
 * (success or the family's own errno) inside it.  Then the edge cases:
 * family numbers with bits above 31 (the kernel reads an int), negative
 * and large families, and the netlink protocols (only NETLINK_ROUTE).
 */
static void families(void)
{
	static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET };
	char name[64];

	for (int f = 0; f <= 45; f++) {
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
			int fd = socket(f, types[t] | SOCK_CLOEXEC, 0), sv[2];

			snprintf(name, sizeof(name), "socket %d %d", f, types[t]);
			result(name, fd);
			if (fd >= 0)
				close(fd);
			if (types[t] == SOCK_RAW)
				continue;
			snprintf(name, sizeof(name), "socketpair %d %d", f, types[t]);
			fd = socketpair(f, types[t] | SOCK_CLOEXEC, 0, sv);
			result(name, fd);
			if (fd >= 0) {
				close(sv[0]);
				close(sv[1]);
			}
		}
	}
	/* The kernel takes the low 32 bits: 40 | 1 << 32 is AF_VSOCK to it. */
	result("socket_vsock_high", syscall(SYS_socket, (long)AF_VSOCK | (1L << 32), SOCK_STREAM, 0));
	result("socketpair_vsock_high",
	       syscall(SYS_socketpair, (long)AF_VSOCK | (1L << 32), SOCK_STREAM, 0, (int[2]){ 0 }));
	result("socket_family_minus1", syscall(SYS_socket, -1L, SOCK_STREAM, 0));
	result("socket_family_46", socket(46, SOCK_STREAM, 0));
	result("socket_family_255", socket(255, SOCK_STREAM, 0));
	result("socket_family_intmax", socket(0x7fffffff, SOCK_STREAM, 0));
	/* Netlink: route only (0); the others reach other kernel subsystems. */
	static const int protos[] = { 0, 4, 6, 9, 15, 16, 21 };
	for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protos[i]);

		snprintf(name, sizeof(name), "netlink_proto %d", protos[i]);
		result(name, fd);
		if (fd >= 0)
			close(fd);
	}
	result("netlink_proto_high", syscall(SYS_socket, (long)AF_NETLINK, SOCK_RAW, 1L << 32));
	result("netlink_dgram_route", socket(AF_NETLINK, SOCK_DGRAM, 0));
}

/* AF_VSOCK socket, bind and listen on @port: the port space is the host's,
 * so all three must fail (the socket with EAFNOSUPPORT, and the others
 * with EBADF because there is no socket). */
static void vsock(unsigned port)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY, .svm_port = port };
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);

	result("vsock_socket", fd);
	result("vsock_bind", bind(fd, (struct sockaddr *)&a, sizeof(a)));
	result("vsock_listen", listen(fd, 1));
	if (fd >= 0)
		close(fd);
}

/* sched_setattr has no glibc wrapper or struct in this libc. */
struct probe_sched_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

/*
 * Everything a payload could aim at the init's limits and scheduling
 * (it shares the init's credentials, so only the filter stops it), then
 * the same calls on itself and on its own child, which ordinary programs
 * make and which must keep working.  Pid 1 is touched only after checking
 * it is sbx's init.
 */
static void init_sched(void)
{
	struct rlimit one = { 1, 1 }, eight = { 8, 8 }, cur;
	struct probe_sched_attr attr = { .size = sizeof(attr), .policy = SCHED_OTHER, .nice = 19 };
	struct sched_param sp = { 0 };
	cpu_set_t cpus;
	pid_t child;
	char line[256];
	FILE *f;

	if (!pid1_is_sbx_init()) {
		printf("init_sched skipped-not-our-init\n");
		return;
	}
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	/* Self and own child first (the attacks, when they work, renice the
	 * whole uid): these must work. */
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	result("prlimit_self", prlimit(0, RLIMIT_NOFILE, NULL, &cur) ?: prlimit(0, RLIMIT_NOFILE, &cur, NULL));
	result("setrlimit_self", getrlimit(RLIMIT_CPU, &cur) ?: setrlimit(RLIMIT_CPU, &cur));
	result("prlimit_child", child > 0 ? prlimit(child, RLIMIT_NOFILE, &eight, NULL) : -1);
	result("setpriority_self", setpriority(PRIO_PROCESS, 0, 1));
	result("setpriority_pgrp_self", setpriority(PRIO_PGRP, 0, 2));
	result("setpriority_child", child > 0 ? setpriority(PRIO_PROCESS, child, 5) : -1);
	result("sched_setaffinity_self", sched_getaffinity(0, sizeof(cpus), &cpus) ?:
					 sched_setaffinity(0, sizeof(cpus), &cpus));
	result("sched_setscheduler_self", sched_setscheduler(0, SCHED_BATCH, &sp));
	result("sched_setscheduler_child", child > 0 ? sched_setscheduler(child, SCHED_IDLE, &sp) : -1);
	result("ioprio_set_self", syscall(SYS_ioprio_set, (long)IOPRIO_WHO_PROCESS, 0L,
					  (long)IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 7)));
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	result("prlimit_init_cpu", prlimit(1, RLIMIT_CPU, &one, NULL));
	result("prlimit_init_nofile", prlimit(1, RLIMIT_NOFILE, &eight, NULL));
	result("prlimit_init_high",
	       syscall(SYS_prlimit64, 1L | (1L << 32), (long)RLIMIT_CPU, &one, NULL));
	result("prlimit_init_read", prlimit(1, RLIMIT_CPU, NULL, &cur));
	result("setpriority_init", setpriority(PRIO_PROCESS, 1, 19));
	result("setpriority_init_high_which",
	       syscall(SYS_setpriority, (long)PRIO_PROCESS | (1L << 32), 1L, 19L));
	result("setpriority_init_high_who",
	       syscall(SYS_setpriority, (long)PRIO_PROCESS, 1L | (1L << 32), 19L));
	result("setpriority_pgrp1", setpriority(PRIO_PGRP, 1, 19));
	result("setpriority_user", setpriority(PRIO_USER, 0, 19));
	result("setpriority_user_uid", setpriority(PRIO_USER, getuid(), 19));
	result("sched_setscheduler_init", sched_setscheduler(1, SCHED_IDLE, &sp));
	result("sched_setparam_init", sched_setparam(1, &sp));
	result("sched_setattr_init", syscall(SYS_sched_setattr, 1L, &attr, 0L));
	result("sched_setaffinity_init", sched_setaffinity(1, sizeof(cpus), &cpus));
	result("sched_setaffinity_init_high",
	       syscall(SYS_sched_setaffinity, 1L | (1L << 32), sizeof(cpus), &cpus));
	result("ioprio_set_init", syscall(SYS_ioprio_set, (long)IOPRIO_WHO_PROCESS, 1L,
					  (long)IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)));
	result("ioprio_set_init_high_which",
	       syscall(SYS_ioprio_set, (long)IOPRIO_WHO_PROCESS | (1L << 32), 1L,
		       (long)IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)));
	result("ioprio_set_pgrp1", syscall(SYS_ioprio_set, (long)IOPRIO_WHO_PGRP, 1L,
					   (long)IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)));
	result("ioprio_set_user", syscall(SYS_ioprio_set, (long)IOPRIO_WHO_USER, (long)getuid(),
					  (long)IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0)));
	/* What the init's limits and niceness are now, as it sees them. */
	f = fopen("/proc/1/limits", "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Max cpu time", 12) || !strncmp(line, "Max open files", 14)) {
			line[strcspn(line, "\n")] = '\0';
			for (char *c = line; *c; c++)
				if (*c == ' ')
					*c = '_';
			printf("init_limit %s\n", line);
		}
	if (f)
		fclose(f);
	errno = 0;
	printf("init_nice %d\n", getpriority(PRIO_PROCESS, 1));
	printf("init_policy %d\n", sched_getscheduler(1));
}

/* utime + stime of pid 1 in milliseconds, from /proc/1/stat. */
static long init_cpu_ms(void)
{
	char buf[1024], *p;
	unsigned long ut = 0, st = 0;
	int fd = open("/proc/1/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* after ") ": state is field 3; utime and stime are 14 and 15 */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (long)((ut + st) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

/*
 * The review's attack on the init: lower its RLIMIT_CPU to 1 s, then make
 * it burn CPU - @n children that ignore SIGTERM, and a flood of SIGTERM to
 * pid 1, which the init forwards to every process of the namespace.  Ends
 * when the init has used @ms of CPU or after @secs seconds, then kills its
 * children and exits 0.  With the limit in place the init dies at 1 s of
 * CPU and with it the whole run.
 */
static void init_flood(int n, long ms, int secs)
{
	struct rlimit one = { 1, 1 };
	pid_t kids[256];
	int made = 0;
	long sent = 0, used = 0;
	time_t end = time(NULL) + secs;

	if (!pid1_is_sbx_init()) {
		printf("init_flood skipped-not-our-init\n");
		return;
	}
	result("flood_prlimit_init_cpu", prlimit(1, RLIMIT_CPU, &one, NULL));
	signal(SIGTERM, SIG_IGN);
	for (; made < n && made < 256; made++) {
		kids[made] = fork();
		if (kids[made] < 0)
			break;
		if (kids[made] == 0) {
			for (;;)
				pause();
		}
	}
	while (time(NULL) < end && (used = init_cpu_ms()) >= 0 && used < ms) {
		for (int i = 0; i < 1000; i++)
			if (kill(1, SIGTERM) == 0)
				sent++;
	}
	printf("flood children=%d sent=%ld init_cpu_ms=%ld\n", made, sent, used);
	for (int i = 0; i < made; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
}

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020
#endif

/*
 * A memfd holding a copy of this (static) program, executed three ways:
 * execveat on the fd, execve of /proc/self/fd/N, and after making it
 * executable with fchmod.  The copy, when it runs, prints
 * "<how> ok" (argv[1] "memfd-ran").  Then memfd_create with MFD_EXEC, and
 * the seals a plain memfd gets.  Each exec runs in a child we wait for.
 */
static void memfd_try(const char *how, int fd)
{
	char path[64], *args[] = { "sbx-probe", "memfd-ran", (char *)how, NULL };
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		result(how, -1);
		return;
	}
	if (pid == 0) {
		if (!strcmp(how, "memfd_exec_procfd")) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			execve(path, args, NULL);
		} else {
			syscall(SYS_execveat, fd, "", args, NULL, AT_EMPTY_PATH);
		}
		result(how, -1);
		_exit(0);
	}
	waitpid(pid, &status, 0);
}

static void memfd_exec(void)
{
	static char buf[65536];
	int fd = (int)syscall(SYS_memfd_create, "sbx-probe", 0U);
	int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	result("memfd_create", fd);
	if (fd < 0 || self < 0)
		return;
	while ((n = read(self, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n) {
			result("memfd_write", -1);
			return;
		}
	close(self);
	fstat(fd, &st);
	printf("memfd_mode %o\n", st.st_mode & 07777);
	printf("memfd_seal_exec %s\n", (fcntl(fd, F_GET_SEALS) & F_SEAL_EXEC) ? "yes" : "no");
	memfd_try("memfd_exec_at", fd);
	memfd_try("memfd_exec_procfd", fd);
	result("memfd_chmod", fchmod(fd, 0755));
	memfd_try("memfd_exec_chmod", fd);
	close(fd);
	fd = (int)syscall(SYS_memfd_create, "sbx-probe-x", MFD_EXEC);
	result("memfd_create_exec", fd);
	if (fd >= 0)
		close(fd);
}

/*
 * Take as much of the per-user kernel quotas as the kernel gives: inotify
 * instances, fanotify groups (the unprivileged kind) and queued realtime
 * signals (SIGRTMIN blocked, queued to ourselves), each bounded.  Then
 * write the counts to @ready (via a rename, so it appears whole) and hold
 * everything for @hold seconds; the test looks from the host meanwhile
 * and cancels the run.
 */
static void hog_quotas(const char *ready, int hold)
{
	int ino = 0, fan = 0, sig = 0, ino_err = 0, fan_err = 0, sig_err = 0, fd;
	char tmp[256], line[256];
	union sigval v = { 0 };
	sigset_t rt;

	while (ino < 4096) {
		if (inotify_init1(IN_CLOEXEC) < 0) {
			ino_err = errno;
			break;
		}
		ino++;
	}
	while (fan < 4096) {
		if (fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC, O_RDONLY) < 0) {
			fan_err = errno;
			break;
		}
		fan++;
	}
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &rt, NULL);
	while (sig < 1 << 20) {
		if (sigqueue(getpid(), SIGRTMIN, v) < 0) {
			sig_err = errno;
			break;
		}
		sig++;
	}
	snprintf(line, sizeof(line), "inotify %d %s\nfanotify %d %s\nsigqueue %d %s\n", ino,
		 ino_err ? strerrorname_np(ino_err) : "none", fan,
		 fan_err ? strerrorname_np(fan_err) : "none", sig,
		 sig_err ? strerrorname_np(sig_err) : "none");
	fputs(line, stdout);
	snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, strlen(line)) < 0 || close(fd) < 0 || rename(tmp, ready) < 0)
		result("hog_ready", -1);
	sleep((unsigned)hold);
}

/*
 * Fill /dev/shm (a tmpfs, whose pages are charged to the run's memory
 * cgroup but to no process's RSS) with up to @mib MiB from a 64 KiB
 * buffer, so that the writer itself stays small.  Prints what it wrote
 * only if it survives.
 */
static void shmfill(long mib)
{
	static char buf[65536];
	long done = 0, want = mib << 20;
	int fd = open("/dev/shm/sbx-probe-fill", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0) {
		result("shmfill_open", -1);
		return;
	}
	memset(buf, 0x5a, sizeof(buf));
	while (done < want) {
		ssize_t n = write(fd, buf, sizeof(buf));
		if (n < 0) {
			printf("shmfill wrote=%ld errno=%s\n", done, strerrorname_np(errno));
			close(fd);
			return;
		}
		done += n;
	}
	close(fd);
	printf("shmfill wrote=%ld errno=none\n", done);
}

/*
 * Loopback TCP buffers that are never read: @n connections to our own
 * listener on 127.0.0.1 (in the sandbox's net namespace), with @buf bytes
 * asked for as SO_SNDBUF and SO_RCVBUF, and each client sending with
 * MSG_DONTWAIT until EAGAIN (or ENOBUFS/ENOMEM), never reading the
 * server side.  Stops once @cap_mib MiB are queued in all, so a host
 * without a limit is not run out of memory.  Prints how much the kernel
 * took.
 */
static void tcpfill(int n, int buf, long cap_mib)
{
	static char chunk[65536];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	long long queued = 0, cap = (long long)cap_mib << 20;
	int made = 0, lerr = 0;
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (l < 0 || (buf > 0 && setsockopt(l, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf)) < 0) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, n + 8) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) < 0) {
		result("tcpfill_listen", -1);
		return;
	}
	memset(chunk, 0x33, sizeof(chunk));
	for (int i = 0; i < n && queued < cap; i++) {
		int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s;

		if (c < 0 || (buf > 0 && setsockopt(c, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf)) < 0) ||
		    connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    (s = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0) {
			lerr = errno;
			break;
		}
		made++;
		/* s stays open and unread: its receive queue fills. */
		(void)s;
		while (queued < cap) {
			ssize_t k = send(c, chunk, sizeof(chunk), MSG_DONTWAIT | MSG_NOSIGNAL);
			if (k < 0) {
				if (errno != EAGAIN && errno != ENOBUFS && errno != ENOMEM)
					lerr = errno;
				break;
			}
			queued += k;
		}
	}
	printf("tcpfill conns=%d queued=%lld errno=%s\n", made, queued,
	       lerr ? strerrorname_np(lerr) : "none");
	fflush(stdout);
}

/*
 * The same with UDP: @n receivers on 127.0.0.1 with @buf bytes asked for
 * as SO_RCVBUF, never read, each sent up to @per_mib MiB of 60000-byte
 * datagrams (a full receiver drops them, so the send count says nothing).
 * What the kernel holds is the receive queues, read from /proc/net/udp of
 * the sandbox's own net namespace, where only these sockets exist.
 */
static void udpfill(int n, int buf, long per_mib)
{
	static char dgram[60000];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	long long queued = 0;
	char line[512];
	int made = 0;
	FILE *f;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0) {
		result("udpfill_socket", -1);
		return;
	}
	memset(dgram, 0x44, sizeof(dgram));
	for (int i = 0; i < n; i++) {
		socklen_t alen = sizeof(a);
		int r = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

		a.sin_port = 0;
		if (r < 0 || setsockopt(r, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf)) < 0 ||
		    bind(r, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    getsockname(r, (struct sockaddr *)&a, &alen) < 0)
			break;
		made++;
		for (long k = 0; k < (per_mib << 20) / (long)sizeof(dgram); k++)
			if (sendto(s, dgram, sizeof(dgram), MSG_DONTWAIT, (struct sockaddr *)&a,
				   sizeof(a)) < 0 && errno != EAGAIN && errno != ENOBUFS &&
			    errno != ENOMEM)
				break;
	}
	f = fopen("/proc/net/udp", "re");
	if (!f) {
		result("udpfill_proc", -1);
		return;
	}
	/* "sl local rem st tx_queue:rx_queue ..." in hex */
	while (fgets(line, sizeof(line), f)) {
		unsigned long tx, rx;
		if (sscanf(line, "%*s %*s %*s %*s %lx:%lx", &tx, &rx) == 2)
			queued += (long long)rx;
	}
	fclose(f);
	printf("udpfill socks=%d queued=%lld\n", made, queued);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: sbx-probe MODE [ARGS...]: the modes are the names main() dispatches on\n");
		return 2;
	}
	if (!strcmp(argv[1], "syscalls"))
		syscalls();
	else if (!strcmp(argv[1], "tiocsti"))
		tiocsti();
	else if (!strcmp(argv[1], "ptrace-init"))
		ptrace_init();
	else if (!strcmp(argv[1], "families"))
		families();
	else if (!strcmp(argv[1], "vsock") && argc > 2)
		vsock((unsigned)atoi(argv[2]));
	else if (!strcmp(argv[1], "init-sched"))
		init_sched();
	else if (!strcmp(argv[1], "init-flood") && argc > 4)
		init_flood(atoi(argv[2]), atol(argv[3]), atoi(argv[4]));
	else if (!strcmp(argv[1], "hog-quotas") && argc > 3)
		hog_quotas(argv[2], atoi(argv[3]));
	else if (!strcmp(argv[1], "memfd-exec"))
		memfd_exec();
	else if (!strcmp(argv[1], "memfd-ran") && argc > 2)
		printf("%s ok\n", argv[2]);
	else if (!strcmp(argv[1], "x32"))
		x32();
	else if (!strcmp(argv[1], "ldt-secret"))
		ldt_secret();
	else if (!strcmp(argv[1], "forkbomb") && argc > 2)
		forkbomb(atoi(argv[2]));
	else if (!strcmp(argv[1], "memhog") && argc > 2)
		memhog(atol(argv[2]));
	else if (!strcmp(argv[1], "shmfill") && argc > 2)
		shmfill(atol(argv[2]));
	else if (!strcmp(argv[1], "udpfill") && argc > 4)
		udpfill(atoi(argv[2]), atoi(argv[3]), atol(argv[4]));
	else if (!strcmp(argv[1], "tcpfill") && argc > 4)
		tcpfill(atoi(argv[2]), atoi(argv[3]), atol(argv[4]));
	else if (!strcmp(argv[1], "fill") && argc > 3)
		fill(argv[2], atol(argv[3]));
	else if (!strcmp(argv[1], "ignore-term")) {
		signal(SIGTERM, SIG_IGN);
		printf("ignoring SIGTERM\n");
		for (;;)
			pause();
	} else if (!strcmp(argv[1], "spin") && argc > 2) {
		time_t end = time(NULL) + atoi(argv[2]);
		volatile unsigned long x = 0;
		while (time(NULL) < end)
			x++;
		printf("spin done\n");
	} else {
		fprintf(stderr, "sbx-probe: unknown command %s\n", argv[1]);
		return 2;
	}
	return 0;
}
