/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbx-validate - the confined validator: every parser of the payload's
 * output bytes (media types, contracts, JSON Schema, patterns) runs here,
 * never in the broker, which holds the signing key.
 *
 * Protocol (the caller is sbx, src/broker/run/validation.c; the wire format
 * is src/outputs/verdict.h):
 *   fd 0   the request (allowed types, the job's contracts), a memfd
 *   fd 3   a SOCK_SEQPACKET socket: one item with one quarantined file's
 *          fd in, one verdict out, until the broker shuts its side down
 *   fd 1, 2  diagnostics; sbx reads a bounded amount and shows it
 *   argv   --max-memory BYTES, --max-cpu-seconds N; or --probe: confine,
 *          then report that files, sockets and exec are out of reach;
 *          --misbehave HOW for the failure tests (serve.h)
 *   exit   0 done, 69 could not confine itself, 70 anything else
 *
 * Where it runs is sbx's part (helper.c): in the run's cgroup, so the
 * job's memory, pids and cpu limits cover it; with oom_score_adj 1000; as
 * the sandbox's unprivileged id when sbx is root; under the run's wall
 * clock plus the profile's validate_seconds, and `sbx cancel`, which kill
 * it.
 *
 * Before it reads a byte of the payload's it confines itself, in this
 * order:
 *   1. no_new_privs, killed with its parent, every fd but the protocol's
 *      closed (not dumpable once step 3 wrote its id maps);
 *   2. rlimits: RLIMIT_AS from --max-memory (plus room for its own code),
 *      RLIMIT_CPU from --max-cpu-seconds, no core, no file growth past a
 *      ZIP member's cap (memfds, serve-zip.c), few fds;
 *   3. new user, mount, IPC, network and UTS namespaces, and an empty,
 *      read-only tmpfs as its root (pivot_root): no path leads anywhere,
 *      no socket reaches any network or SysV object of the host;
 *   4. every capability dropped;
 *   5. the request read and the contracts compiled (patterns and schemas:
 *      the job's, not the payload's);
 *   6. a seccomp allowlist: reading any fd it holds, writing only its
 *      diagnostics and its own memfds, the socket's recvmsg and send,
 *      memory without PROT_EXEC, and exit.  Anything else kills it.
 * A kernel that refuses a step is refused in turn (69): validation does
 * not run less confined.
 */
#include "config.h"

#include <cap-ng.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "serve.h"
#include "zip-read.h"
#include "syscalls.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define SBX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SBX_ASAN 1
#endif
#endif

enum { EXIT_CONFINE = SBX_EXIT_UNAVAILABLE };

/* Address space beyond --max-memory: the helper's own mappings (code and
 * libraries, stack, PCRE2's and jansson's heaps). */
#define AS_OVERHEAD (64ull << 20)

static int fail(int code, const char *what, int errnum)
{
	if (errnum)
		fprintf(stderr, "error %s: %s\n", what, strerror(errnum));
	else
		fprintf(stderr, "error %s\n", what);
	return code;
}

static int write_file(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t n = strlen(text);

	return fd >= 0 && write(fd, text, n) == (ssize_t)n ? 0 : -1;
}

static int apply_limits(uint64_t max_memory, uint64_t cpu_seconds, bool probe)
{
	struct rlimit no_core = { 0, 0 }, few_files = { 16, 16 },
		      no_growth = { SBX_ZIP_MAX_BYTES, SBX_ZIP_MAX_BYTES };

	/* No core file to write, no file to grow beyond the largest ZIP
	 * member it inflates (into a memfd: the only file it can create, as
	 * its root is empty and read-only; otherwise it writes only to its
	 * pipe and socket; the probe reports on whatever stdout it has),
	 * a handful of fds. */
	if (setrlimit(RLIMIT_CORE, &no_core) < 0 || setrlimit(RLIMIT_NOFILE, &few_files) < 0 ||
	    (!probe && setrlimit(RLIMIT_FSIZE, &no_growth) < 0))
		return fail(SBX_EXIT_SOFTWARE, "setrlimit", errno);
	if (max_memory) {
		struct rlimit as = { max_memory + AS_OVERHEAD, max_memory + AS_OVERHEAD };

#ifndef SBX_ASAN
		/* Sanitizer builds reserve terabytes of shadow memory. */
		if (setrlimit(RLIMIT_AS, &as) < 0)
			return fail(SBX_EXIT_SOFTWARE, "setrlimit RLIMIT_AS", errno);
#else
		(void)as;
#endif
	}
	if (cpu_seconds) {
		struct rlimit cpu = { cpu_seconds, cpu_seconds + 1 };

		if (setrlimit(RLIMIT_CPU, &cpu) < 0)
			return fail(SBX_EXIT_SOFTWARE, "setrlimit RLIMIT_CPU", errno);
	}
	return 0;
}

/*
 * Step 3: namespaces of its own and an empty root.  The user namespace
 * comes first and maps only the helper's own ids (an unprivileged process
 * may map itself), so that it may make the others and mount in its own
 * mount namespace; nothing of the host is mapped, so its capabilities
 * there reach nothing of the host's.  The new root is a tmpfs mounted on
 * /proc (a directory every host has) and pivoted to with the
 * pivot_root(".", ".") idiom, the old root then detached: no path in
 * this process leads anywhere but to one empty, read-only directory.
 */
static int isolate(void)
{
	static const char *const mountpoints[] = { "/proc", "/tmp", "/dev" };
	uid_t uid = getuid();
	gid_t gid = getgid();
	char map[64];
	size_t i;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS) < 0)
		return fail(EXIT_CONFINE, "unshare", errno);
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	if (write_file("/proc/self/setgroups", "deny") < 0 ||
	    write_file("/proc/self/uid_map", map) < 0)
		return fail(EXIT_CONFINE, "uid_map", errno);
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	if (write_file("/proc/self/gid_map", map) < 0)
		return fail(EXIT_CONFINE, "gid_map", errno);
	/* Nothing done below may reach the host's mount tree. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return fail(EXIT_CONFINE, "mount --make-rprivate /", errno);
	for (i = 0; i < ARRAY_SIZE(mountpoints); i++)
		if (mount("sbx-validate", mountpoints[i], "tmpfs",
			  MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=4,mode=0555") == 0)
			break;
	if (i == ARRAY_SIZE(mountpoints))
		return fail(EXIT_CONFINE, "mount tmpfs", errno);
	if (chdir(mountpoints[i]) < 0 || sbx_pivot_root(".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return fail(EXIT_CONFINE, "pivot_root", errno);
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0)
		return fail(EXIT_CONFINE, "remount / read-only", errno);
	return 0;
}

static int drop_capabilities(void)
{
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_apply(CAPNG_SELECT_BOTH) < 0)
		return fail(EXIT_CONFINE, "capng_apply", 0);
	return 0;
}

static int allow(scmp_filter_ctx ctx, const char *name, unsigned n, const struct scmp_arg_cmp *a)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR)
		return 0; /* not on this architecture */
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, n, a);
}

/*
 * Step 6.  What the validators, jansson, PCRE2 and glibc's malloc need, and
 * nothing to reach further with: no open (the root is empty anyway), no
 * socket, no exec, no fork, no signal to another process, no executable
 * memory.  The default is to kill the process: a compromised parser that
 * tries anything else ends the validation, and the artifact is rejected.
 */
static int confine_seccomp(void)
{
	const struct scmp_arg_cmp no_exec = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
	const struct scmp_arg_cmp diagnostics = SCMP_A0(SCMP_CMP_LE, 2);
	const struct scmp_arg_cmp sock = SCMP_A0(SCMP_CMP_EQ, 3);
	const struct scmp_arg_cmp self = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid());
	const struct scmp_arg_cmp memfd_flags = SCMP_A1(SCMP_CMP_EQ, MFD_CLOEXEC);
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int r = ctx ? 0 : -ENOMEM;

	/* Reading what it was given: the request, the quarantined copies. */
	static const char *const plain[] = {
		"read", "pread64", "readv", "lseek", "fstat", "newfstatat", "close",
		"munmap", "mremap", "brk", "madvise", "futex", "exit", "exit_group",
		"rt_sigreturn", "rt_sigprocmask", "rt_sigaction", "clock_gettime",
		"gettimeofday", "getpid", "gettid", "getrandom", "sched_yield",
	};
	for (size_t i = 0; i < ARRAY_SIZE(plain) && r == 0; i++)
		r = allow(ctx, plain[i], 0, NULL);
	/* Memory, never executable. */
	if (r == 0)
		r = allow(ctx, "mmap", 1, &no_exec);
	if (r == 0)
		r = allow(ctx, "mprotect", 1, &no_exec);
	/* Diagnostics on fds 1 and 2 only. */
	if (r == 0)
		r = allow(ctx, "write", 1, &diagnostics);
	if (r == 0)
		r = allow(ctx, "writev", 1, &diagnostics);
	/* The exchange with the broker, on fd 3 only. */
	if (r == 0)
		r = allow(ctx, "recvmsg", 1, &sock);
	if (r == 0)
		r = allow(ctx, "sendto", 1, &sock);
	if (r == 0)
		r = allow(ctx, "sendmsg", 1, &sock);
	/* A ZIP output's members are inflated into memfds, one at a time,
	 * so that each type's validator reads them by pread() as it reads
	 * a file (serve-zip.c): anonymous memory, charged to the run's
	 * cgroup, no name in any file system.  pwrite64 reaches nothing
	 * else: the request is a sealed memfd, the quarantined copies are
	 * read-only, the socket has no offset. */
	if (r == 0)
		r = allow(ctx, "memfd_create", 1, &memfd_flags);
	if (r == 0)
		r = allow(ctx, "pwrite64", 0, NULL);
	/* abort() signals itself, and only itself. */
	if (r == 0)
		r = allow(ctx, "tgkill", 1, &self);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0)
		return fail(EXIT_CONFINE, "seccomp", -r);
	return 0;
}

static int confine(uint64_t max_memory, uint64_t cpu_seconds, bool probe)
{
	struct stat st;
	int r;

#ifdef __SANITIZE_ADDRESS__
	/* The exit-time leak check needs what the filter takes away. */
	__lsan_disable();
#endif
	/* If sbx dies, so does its helper: nothing may outlive the run. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail(SBX_EXIT_SOFTWARE, "prctl", errno);
	/* Nothing but the protocol's fds may be reachable. */
	if (close_range(4, ~0U, 0) < 0)
		return fail(SBX_EXIT_SOFTWARE, "close_range", errno);
	if (!probe && (fstat(0, &st) < 0 || !S_ISREG(st.st_mode)))
		return fail(SBX_EXIT_SOFTWARE, "fd 0 is not the request", 0);
	if (!probe && (fstat(3, &st) < 0 || !S_ISSOCK(st.st_mode)))
		return fail(SBX_EXIT_SOFTWARE, "fd 3 is not a socket", 0);
	if ((r = apply_limits(max_memory, cpu_seconds, probe)) != 0 || (r = isolate()) != 0 ||
	    (r = drop_capabilities()) != 0)
		return r;
	/* Not dumpable only now: it makes /proc/self root's, and the id
	 * maps above are written there. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return fail(SBX_EXIT_SOFTWARE, "prctl", errno);
	return 0;
}

/* Step 5: the request, read whole, at most SBX_VERDICT_MAX_REQUEST bytes. */
static int read_request(struct sbx_validator **val)
{
	_cleanup_free_ char *buf = NULL;
	char why[512];
	struct stat st;
	ssize_t n;

	if (fstat(0, &st) < 0 || st.st_size < 0 || (uint64_t)st.st_size > SBX_VERDICT_MAX_REQUEST)
		return fail(SBX_EXIT_SOFTWARE, "the request is too large", 0);
	buf = sbx_xmalloc((size_t)st.st_size + 1);
	n = pread(0, buf, (size_t)st.st_size, 0);
	if (n != st.st_size)
		return fail(SBX_EXIT_SOFTWARE, "reading the request", errno);
	if (sbx_validator_new(buf, (size_t)n, val, why, sizeof(why)) < 0)
		return fail(SBX_EXIT_SOFTWARE, why, 0);
	return 0;
}

/*
 * --probe: after confining, try what an exploited parser would try first
 * and report whether each was stopped.  The filter kills on the first
 * forbidden call, so the probe tries them before loading it and reports
 * what the namespaces and the empty root left; tests/e2e checks that the
 * filter kills the rest.
 */
static int probe(void)
{
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	bool read_ok = fd >= 0;
	int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_port = htons(9),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	/* A new network namespace has only lo, and it is down. */
	bool net_ok = sock >= 0 && connect(sock, (struct sockaddr *)&lo, sizeof(lo)) == 0;

	if (fd >= 0)
		close(fd);
	if (sock >= 0)
		close(sock);
	printf("probe read-outside=%s network=%s\n", read_ok ? "allowed" : "denied",
	       net_ok ? "allowed" : "denied");
	fflush(stdout);
	if (confine_seccomp() != 0)
		return EXIT_CONFINE;
	/* The filter's own word: this open kills the process (SIGSYS). */
	fd = open("/", O_RDONLY | O_CLOEXEC);
	printf("probe open-after-seccomp=allowed\n");
	return SBX_EXIT_SOFTWARE;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "max-memory", required_argument, NULL, 'm' },
		{ "max-cpu-seconds", required_argument, NULL, 'c' },
		{ "probe", no_argument, NULL, 'P' },
		{ "misbehave", required_argument, NULL, 'X' },
		{ 0 },
	};
	struct sbx_validator *val = NULL;
	uint64_t max_memory = 0, cpu_seconds = 0;
	bool want_probe = false;
	char why[512];
	int c, r;

	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		uint64_t *slot;

		switch (c) {
		case 'm': slot = &max_memory; break;
		case 'c': slot = &cpu_seconds; break;
		case 'P': want_probe = true; continue;
		case 'X': sbx_validator_misbehave = optarg; continue;
		default: return fail(SBX_EXIT_SOFTWARE, "usage: bad option", 0);
		}
		if (sbx_parse_u64(optarg, slot) < 0)
			return fail(SBX_EXIT_SOFTWARE, "usage: bad number", 0);
	}
	if (optind != argc)
		return fail(SBX_EXIT_SOFTWARE, "usage: unexpected argument", 0);
	if ((r = confine(max_memory, cpu_seconds, want_probe)) != 0)
		return r;
	if (want_probe)
		return probe();
	if ((r = read_request(&val)) != 0)
		return r;
	if ((r = confine_seccomp()) != 0)
		return r;
	if (sbx_validator_serve(val, 3, why, sizeof(why)) < 0)
		return fail(SBX_EXIT_SOFTWARE, why, 0);
	/* The process ends here: its memory goes with it. */
	return SBX_EXIT_OK;
}
