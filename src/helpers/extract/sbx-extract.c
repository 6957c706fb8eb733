/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbx-extract - validate an input archive and extract it, as a separate
 * process so that libarchive is never linked into sbx and a parser bug
 * cannot reach anything but the destination directory.
 *
 * Protocol (the caller is sbx, see store.c):
 *   fd 0   the archive, a regular file (seekable)
 *   fd 3   the destination directory
 *   fd 1   one status line: "ok ENTRIES BYTES", "refused REASON",
 *          "limit REASON" (memory) or "error REASON"
 *   fd 2   diagnostics; sbx reads a bounded amount and shows it
 *   argv   the limits, --max-entries N --max-entry-bytes N ...,
 *          --max-memory BYTES and --max-cpu-seconds N; or --probe:
 *          confine, then report that reads outside fd 3, sockets and
 *          exec are denied ("probe ..." line)
 *   exit   0 extracted, 77 refused, 137 over the memory limit, 69 could
 *          not confine itself, 70 anything else
 *
 * Where it runs is sbx's part (store.c): in the run's cgroup, so the
 * job's memory, pids and cpu limits cover it; in an IPC namespace of its
 * own; with oom_score_adj 1000; as the sandbox's unprivileged id when sbx
 * is root; under the run's wall deadline, SIGINT and `sbx cancel`, which
 * kill it.  It is not inside the sandbox's mount namespace (its libraries
 * are the host's), which is why Landlock is required.
 *
 * Before it reads a byte of the archive it confines itself: no_new_privs,
 * not dumpable, every other fd closed, RLIMIT_AS from --max-memory (plus
 * room for its own code and stack) and RLIMIT_CPU from --max-cpu-seconds,
 * a Landlock domain in which the only file system access left is creating
 * directories and files beneath fd 3, and a seccomp filter that takes away
 * the system calls an exploited parser would reach for next (sockets,
 * exec, fork, ptrace, mounts, SysV and POSIX IPC, ...).  A kernel without
 * Landlock is refused (69).
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <locale.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "sbx-archive.h"
#include "syscalls.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif
/* Sanitizer builds reserve terabytes of shadow memory: no RLIMIT_AS.
 * (gcc defines __SANITIZE_ADDRESS__, clang answers __has_feature.) */
#if defined(__SANITIZE_ADDRESS__)
#define SBX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SBX_ASAN 1
#endif
#endif

/* Newer Landlock rights than the build headers may know; the kernel is
 * asked for its ABI and only what it knows is requested. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

/* struct landlock_ruleset_attr as of ABI 6; older kernels get a prefix. */
struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

enum { EXIT_CONFINE = SBX_EXIT_UNAVAILABLE };

/* Address space beyond --max-memory: the helper's own mappings (code and
 * libraries ~45 MiB, stack, libarchive's buffers). */
#define AS_OVERHEAD (64ull << 20)

static int landlock_abi;

static int status(int code, const char *word, const char *text)
{
	printf("%s %s\n", word, text);
	fflush(stdout);
	return code;
}

static int confine_landlock(char *why, size_t why_len)
{
	struct ruleset_attr attr = { 0 };
	struct landlock_path_beneath_attr beneath = { 0 };
	_cleanup_close_ int ruleset = -1;
	size_t attr_size = sizeof(attr.handled_access_fs);
	int abi;

	abi = sbx_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		snprintf(why, why_len, "landlock: %s (%s)", strerror(errno),
			 errno == EOPNOTSUPP ? "disabled at boot: add landlock to lsm=" :
					       "kernel without CONFIG_SECURITY_LANDLOCK");
		return -1;
	}
	/* Every right the kernel knows is handled, i.e. denied unless a
	 * rule below grants it. */
	attr.handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
				 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
				 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
				 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
				 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
				 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
				 LANDLOCK_ACCESS_FS_MAKE_SYM;
	if (abi >= 2)
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 4) {
		/* No TCP at all: no rule grants a port. */
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		attr_size = offsetof(struct ruleset_attr, scoped);
	}
	if (abi >= 5)
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	if (abi >= 6) {
		/* No abstract unix sockets or signals outside the domain. */
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	ruleset = sbx_landlock_create_ruleset((const struct landlock_ruleset_attr *)&attr,
					      attr_size, 0);
	if (ruleset < 0) {
		snprintf(why, why_len, "landlock_create_ruleset: %s", strerror(errno));
		return -1;
	}
	/* The one grant: make directories and regular files beneath fd 3,
	 * write them, and open directories there to walk down. */
	beneath.parent_fd = 3;
	beneath.allowed_access = LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
				 LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	if (sbx_landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) < 0) {
		snprintf(why, why_len, "landlock_add_rule: %s", strerror(errno));
		return -1;
	}
	if (sbx_landlock_restrict_self(ruleset, 0) < 0) {
		snprintf(why, why_len, "landlock_restrict_self: %s", strerror(errno));
		return -1;
	}
	return abi;
}

/*
 * What an exploited parser would try next, each denied with EPERM (not
 * a kill, so that a legitimate library probe fails softly and the archive
 * is refused with a message instead of a crash).
 */
static const char *const denied_syscalls[] = {
	/* no network, no talking to local daemons */
	"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
	/* no other program, no other process */
	"execve", "execveat", "fork", "vfork", "clone", "clone3",
	/* no reaching into other processes (kill(-1, ...) would hit every
	 * process of the user; abort() uses tgkill on itself) */
	"ptrace", "process_vm_readv", "process_vm_writev", "kill", "pidfd_open",
	"pidfd_getfd", "pidfd_send_signal",
	/* no changing the view of the file system */
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "open_tree",
	"move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	/* nothing but new files and directories: no links, nodes, renames,
	 * deletions, owners or attributes (Landlock says the same for paths;
	 * this also covers the kernels without it) */
	"link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "rename", "renameat",
	"renameat2", "unlink", "unlinkat", "rmdir", "chown", "fchown", "lchown", "fchownat",
	"chmod", "fchmodat", "setxattr", "lsetxattr", "fsetxattr", "open_by_handle_at",
	"name_to_handle_at",
	/* ioctl: TIOCSTI on an inherited terminal would type into the shell */
	"ioctl",
	/* kernel attack surface a parser never needs */
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "init_module",
	"finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon",
	"swapoff", "personality", "acct", "quotactl",
	/* no shared memory, queues or semaphores (the IPC namespace is the
	 * helper's own as well) */
	"shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl", "semget",
	"semop", "semtimedop", "semctl", "mq_open", "mq_unlink", "mq_timedsend",
	"mq_timedreceive", "mq_notify", "mq_getsetattr",
};

static int confine_seccomp(char *why, size_t why_len)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = 0;

	if (!ctx) {
		snprintf(why, why_len, "seccomp_init failed");
		return -1;
	}
	/* Other architectures' syscall tables (i386, x32) keep libseccomp's
	 * default bad-arch action: the process is killed. */
	for (size_t i = 0; i < ARRAY_SIZE(denied_syscalls) && r == 0; i++) {
		int nr = seccomp_syscall_resolve_name(denied_syscalls[i]);

		if (nr == __NR_SCMP_ERROR)
			continue; /* not on this architecture */
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
	}
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0) {
		snprintf(why, why_len, "seccomp: %s", strerror(-r));
		return -1;
	}
	return 0;
}

/* The job's limits as rlimits: the address space (a backstop below the
 * run's memory cgroup, so that a huge allocation fails as ENOMEM and is
 * reported instead of an OOM kill) and CPU seconds (a backstop behind
 * sbx's wall deadline).  0: not set. */
static int apply_limits(uint64_t max_memory, uint64_t cpu_seconds, char *why, size_t why_len)
{
	if (max_memory) {
		struct rlimit as = { max_memory + AS_OVERHEAD, max_memory + AS_OVERHEAD };

#ifndef SBX_ASAN
		if (setrlimit(RLIMIT_AS, &as) < 0) {
			snprintf(why, why_len, "setrlimit RLIMIT_AS: %s", strerror(errno));
			return -1;
		}
#else
		(void)as;
#endif
	}
	if (cpu_seconds) {
		struct rlimit cpu = { cpu_seconds, cpu_seconds + 1 };

		if (setrlimit(RLIMIT_CPU, &cpu) < 0) {
			snprintf(why, why_len, "setrlimit RLIMIT_CPU: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int confine(bool probe, char *why, size_t why_len)
{
	struct rlimit no_core = { 0, 0 }, few_files = { 32, 32 };
	struct stat st;

#ifdef __SANITIZE_ADDRESS__
	/* Sanitizer builds: the exit-time leak check needs clone and
	 * ptrace, which the filter takes away, so it runs now instead. */
	__lsan_do_leak_check();
#endif
	/* If sbx dies, so does its helper: nothing may outlive the run. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) {
		snprintf(why, why_len, "prctl: %s", strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		snprintf(why, why_len, "prctl: %s", strerror(errno));
		return -1;
	}
	/* Nothing but the protocol's fds may be reachable. */
	if (close_range(4, ~0U, 0) < 0) {
		snprintf(why, why_len, "close_range: %s", strerror(errno));
		return -1;
	}
	if (!probe && (fstat(0, &st) < 0 || !S_ISREG(st.st_mode))) {
		snprintf(why, why_len, "fd 0 is not a regular file");
		return -1;
	}
	if (fstat(3, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, why_len, "fd 3 is not a directory");
		return -1;
	}
	/* The walk needs a handful of fds; a core dump would write outside. */
	if (setrlimit(RLIMIT_CORE, &no_core) < 0 || setrlimit(RLIMIT_NOFILE, &few_files) < 0) {
		snprintf(why, why_len, "setrlimit: %s", strerror(errno));
		return -1;
	}
	landlock_abi = confine_landlock(why, why_len);
	if (landlock_abi < 0)
		return -1;
	return confine_seccomp(why, why_len);
}

/*
 * --probe: after confining, try what an exploited parser would try and
 * report whether each was stopped.  For tests and for `sbx check`; exits
 * 0 only when everything was denied.
 */
static int probe(void)
{
	char *argv[] = { (char *)"/bin/true", NULL }, *envp[] = { NULL };
	char text[256];
	int fd, sock, denied = 0;
	bool read_ok, sock_ok, exec_ok;

	fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	read_ok = fd >= 0;
	if (fd >= 0)
		close(fd);
	sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sock_ok = sock >= 0;
	if (sock >= 0)
		close(sock);
	execve(argv[0], argv, envp); /* returns only when denied */
	exec_ok = false;
	denied = !read_ok + !sock_ok + !exec_ok;
	snprintf(text, sizeof(text), "landlock=%d read-outside=%s socket=%s exec=denied",
		 landlock_abi, read_ok ? "allowed" : "denied", sock_ok ? "allowed" : "denied");
	return status(denied == 3 ? SBX_EXIT_OK : SBX_EXIT_SOFTWARE, "probe", text);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "max-entries", required_argument, NULL, 'n' },
		{ "max-entry-bytes", required_argument, NULL, 'e' },
		{ "max-total-bytes", required_argument, NULL, 't' },
		{ "max-ratio", required_argument, NULL, 'r' },
		{ "max-depth", required_argument, NULL, 'd' },
		{ "max-name", required_argument, NULL, 'l' },
		{ "max-path", required_argument, NULL, 'p' },
		{ "max-memory", required_argument, NULL, 'm' },
		{ "max-cpu-seconds", required_argument, NULL, 'c' },
		{ "probe", no_argument, NULL, 'P' },
		{ 0 },
	};
	struct sbx_archive_limits lim;
	struct sbx_archive_report rep;
	uint64_t max_memory = 0, cpu_seconds = 0;
	bool want_probe = false;
	char text[1024];
	int c;

	sbx_archive_limits_default(&lim, 0);
	while ((c = getopt_long(argc, argv, "", options, NULL)) != -1) {
		uint64_t *slot = NULL;

		switch (c) {
		case 'n': slot = &lim.max_entries; break;
		case 'e': slot = &lim.max_entry_bytes; break;
		case 't': slot = &lim.max_total_bytes; break;
		case 'r': slot = &lim.max_ratio; break;
		case 'd': slot = &lim.max_depth; break;
		case 'l': slot = &lim.max_name; break;
		case 'p': slot = &lim.max_path; break;
		case 'm': slot = &max_memory; break;
		case 'c': slot = &cpu_seconds; break;
		case 'P': want_probe = true; continue;
		default: return status(SBX_EXIT_SOFTWARE, "error", "usage: bad option");
		}
		if (sbx_parse_u64(optarg, slot) < 0)
			return status(SBX_EXIT_SOFTWARE, "error", "usage: bad number");
	}
	if (optind != argc)
		return status(SBX_EXIT_SOFTWARE, "error", "usage: unexpected argument");

	/* Before confinement, while locale files can still be read:
	 * libarchive converts UTF-8 entry names to the locale's charset and
	 * fails on names it cannot convert, so non-ASCII names need a UTF-8
	 * locale.  Without one they are refused: fail closed.  (Zip names
	 * without the UTF-8 flag come through raw and must be valid UTF-8.) */
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		setlocale(LC_CTYPE, "C.utf8");
	/* The xz decoder gets three quarters of the memory: the rest is for
	 * libarchive, the names and the helper itself. */
	if (max_memory)
		lim.xz_memlimit = max_memory / 4 * 3;
	if (apply_limits(max_memory, cpu_seconds, text, sizeof(text)) < 0)
		return status(SBX_EXIT_SOFTWARE, "error", text);
	if (confine(want_probe, text, sizeof(text)) < 0)
		return status(EXIT_CONFINE, "error", text);
	if (want_probe)
		return probe();

	if (sbx_archive_check(0, &lim, &rep) < 0 || sbx_archive_extract(0, 3, &lim, &rep) < 0)
		return status(rep.code,
			      rep.code == SBX_EXIT_REFUSED ? "refused" :
			      rep.code == SBX_EXIT_LIMIT   ? "limit" :
							     "error",
			      sbx_archive_report_text(&rep, text, sizeof(text)));
	snprintf(text, sizeof(text), "%" PRIu64 " %" PRIu64, rep.entries, rep.bytes);
	return status(SBX_EXIT_OK, "ok", text);
}
