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
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <netinet/in.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
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

/* ptrace pid 1 only if it is sbx's init, never the host's init of a
 * broken sandbox: sbx's init is the program sbx-init, started with the
 * command line "sbx-init" and three fd numbers, and named so in comm. */
static void ptrace_init(void)
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
	if (strcmp(cmd, "sbx-init") || strcmp(comm, "sbx-init\n")) {
		printf("ptrace_init skipped-not-our-init\n");
		return;
	}
	result("ptrace_init", ptrace(PTRACE_ATTACH, 1, 0, 0));
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
		fprintf(stderr, "usage: sbx-probe syscalls|tiocsti|ptrace-init|x32|forkbomb N|memhog MIB|fill PATH BYTES|shmfill MIB|tcpfill CONNS BUFBYTES CAPMIB|udpfill SOCKS BUFBYTES MIB|ignore-term|spin SECONDS\n");
		return 2;
	}
	if (!strcmp(argv[1], "syscalls"))
		syscalls();
	else if (!strcmp(argv[1], "tiocsti"))
		tiocsti();
	else if (!strcmp(argv[1], "ptrace-init"))
		ptrace_init();
	else if (!strcmp(argv[1], "x32"))
		x32();
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
