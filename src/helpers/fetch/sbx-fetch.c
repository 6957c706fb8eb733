/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbx-fetch - get a job's remote inputs into the run's /work/in, as a
 * separate process so that libcurl, TLS and every byte a server sends
 * stay out of sbx (the broker holds the signing key) and out of the
 * payload (which stays offline).
 *
 * Protocol (the caller is sbx, see src/broker/run/fetch-run.c):
 *   fd 3   the destination directory (/work/in)
 *   fd 1   status lines: per input fetched, in order,
 *            "ok NAME STATUS SIZE SHA256 FINAL_URL"
 *          then, if one failed, "refused CODE TEXT" or "failed CODE TEXT"
 *          (CODE one of reasoncode.h's fetch codes), or "error TEXT"
 *   fd 2   diagnostics; sbx reads a bounded amount and shows it
 *   argv   the fetch profile's rules (--allow HOST=PORT[,PORT...],
 *          --cidr CIDR, --allow-http, --timeout S, --max-redirects N,
 *          --ca-file PATH, --max-total BYTES), the limits (--max-memory
 *          BYTES, --max-cpu-seconds N), then NAME MAX_BYTES MEDIA|- URL
 *          for each input
 *   exit   0 all fetched, 77 refused, 1 failed, 69 could not confine
 *          itself, 70 anything else
 *
 * Where it runs is sbx's part: in the run's cgroup (the job's memory,
 * pids and cpu limits cover it), with oom_score_adj 1000, as the
 * sandbox's unprivileged id when sbx is root, under the run's wall
 * deadline, SIGINT and `sbx cancel`, which kill it.  It runs in the
 * host's network namespace (it is the one process of the run that may
 * reach the network), with an empty environment (no proxy variables).
 *
 * Before it sends a byte it confines itself: no_new_privs, not dumpable,
 * every other fd closed, RLIMIT_AS and RLIMIT_CPU, a Landlock domain in
 * which it may read files (the CA store, /etc/hosts, its libraries) but
 * write nothing except new files beneath fd 3 and, where the kernel has
 * Landlock's network rules, connect to no TCP port but the allowlist's
 * (and 53, DNS over TCP), and a seccomp filter that takes away exec,
 * fork, ptrace, mounts and the other calls an exploited TLS or HTTP
 * parser would reach for next.  A kernel without Landlock is refused (69).
 */
#include "config.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch.h"
#include "syscalls.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

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
#define LL_RULE_NET_PORT 2

struct ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
};

struct net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

/* Room beyond --max-memory for the helper's own mappings (libcurl,
 * OpenSSL and their libraries, stack). */
#define AS_OVERHEAD (128ull << 20)
#define MAX_RULES 256

static int status(int code, const char *word, const char *text)
{
	printf("%s %s\n", word, text);
	fflush(stdout);
	return code;
}

static int add_path_rule(int ruleset, int fd, uint64_t access, char *why, size_t why_len)
{
	struct landlock_path_beneath_attr beneath = { .allowed_access = access, .parent_fd = fd };

	if (sbx_landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) < 0) {
		snprintf(why, why_len, "landlock_add_rule: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int confine_landlock(const struct sbx_fetch_rules *r, char *why, size_t why_len)
{
	struct ruleset_attr attr = { 0 };
	_cleanup_close_ int ruleset = -1, root = -1;
	size_t attr_size = sizeof(attr.handled_access_fs);
	uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	uint64_t write = LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_WRITE_FILE |
			 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	int abi;

	abi = sbx_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		snprintf(why, why_len, "landlock: %s (%s)", strerror(errno),
			 errno == EOPNOTSUPP ? "disabled at boot: add landlock to lsm=" :
					       "kernel without CONFIG_SECURITY_LANDLOCK");
		return -1;
	}
	attr.handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
				 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
				 LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
				 LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
				 LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
				 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
				 LANDLOCK_ACCESS_FS_MAKE_SYM;
	if (abi >= 2)
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3) {
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
		write |= LANDLOCK_ACCESS_FS_TRUNCATE;
	}
	if (abi >= 4) {
		/* No TCP but connects to the allowlist's ports (rules below). */
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		attr_size = sizeof(attr);
	}
	if (abi >= 5)
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	ruleset = sbx_landlock_create_ruleset((const struct landlock_ruleset_attr *)&attr,
					      attr_size, 0);
	if (ruleset < 0) {
		snprintf(why, why_len, "landlock_create_ruleset: %s", strerror(errno));
		return -1;
	}
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || add_path_rule(ruleset, root, read, why, why_len) < 0 ||
	    add_path_rule(ruleset, 3, write, why, why_len) < 0)
		return -1;
	for (size_t i = 0; abi >= 4 && i <= r->net.n_allow; i++) {
		/* Every port of every entry, and DNS over TCP (a resolver
		 * falls back to it for long answers). */
		size_t n = i < r->net.n_allow ? r->net.allow[i].n_ports : 1;

		for (size_t k = 0; k < n; k++) {
			struct net_port_attr np = {
				.allowed_access = LL_NET_CONNECT_TCP,
				.port = i < r->net.n_allow ? r->net.allow[i].ports[k] : 53,
			};

			if (sbx_landlock_add_rule(ruleset, LL_RULE_NET_PORT, &np, 0) < 0) {
				snprintf(why, why_len, "landlock_add_rule (port): %s", strerror(errno));
				return -1;
			}
		}
	}
	if (sbx_landlock_restrict_self(ruleset, 0) < 0) {
		snprintf(why, why_len, "landlock_restrict_self: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * What an exploited HTTP or TLS parser would try next, each denied with
 * EPERM.  Sockets stay (this helper's job is to use them; Landlock limits
 * where TCP goes), and clone stays for libcurl's resolver thread, but not
 * a new process: fork and vfork are denied, and clone3 is answered ENOSYS
 * so that a thread is made with clone, whose flags are checked.
 */
static const char *const denied_syscalls[] = {
	"execve", "execveat", "fork", "vfork",
	"ptrace", "process_vm_readv", "process_vm_writev", "kill", "pidfd_open",
	"pidfd_getfd", "pidfd_send_signal",
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "open_tree",
	"move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "rename", "renameat",
	"renameat2", "rmdir", "chown", "fchown", "lchown", "fchownat", "setxattr",
	"lsetxattr", "fsetxattr", "open_by_handle_at", "name_to_handle_at",
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "init_module",
	"finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot", "swapon",
	"swapoff", "personality", "acct", "quotactl",
	"shmget", "shmat", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget",
	"semop", "semtimedop", "semctl", "mq_open", "mq_unlink",
};

static int confine_seccomp(char *why, size_t why_len)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = 0, nr;

	if (!ctx) {
		snprintf(why, why_len, "seccomp_init failed");
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(denied_syscalls) && r == 0; i++) {
		nr = seccomp_syscall_resolve_name(denied_syscalls[i]);
		if (nr == __NR_SCMP_ERROR)
			continue;
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
	}
	/* clone3's flags are in memory, out of the filter's sight. */
	nr = seccomp_syscall_resolve_name("clone3");
	if (r == 0 && nr != __NR_SCMP_ERROR)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
	/* clone without CLONE_THREAD would be a new process. */
	nr = seccomp_syscall_resolve_name("clone");
	if (r == 0 && nr != __NR_SCMP_ERROR)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	if (r < 0) {
		snprintf(why, why_len, "seccomp: %s", strerror(-r));
		return -1;
	}
	return 0;
}

static int confine(const struct sbx_fetch_rules *r, uint64_t max_memory, uint64_t cpu_seconds,
		   char *why, size_t why_len)
{
	struct rlimit no_core = { 0, 0 }, files = { 64, 64 };
	struct stat st;

#ifdef __SANITIZE_ADDRESS__
	/* Sanitizer builds: the exit-time leak check needs ptrace, which
	 * the filter takes away, so it runs now instead (as sbx-extract's). */
	__lsan_do_leak_check();
#endif
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		snprintf(why, why_len, "prctl: %s", strerror(errno));
		return -1;
	}
	if (close_range(4, ~0U, 0) < 0) {
		snprintf(why, why_len, "close_range: %s", strerror(errno));
		return -1;
	}
	if (fstat(3, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, why_len, "fd 3 is not a directory");
		return -1;
	}
	if (setrlimit(RLIMIT_CORE, &no_core) < 0 || setrlimit(RLIMIT_NOFILE, &files) < 0) {
		snprintf(why, why_len, "setrlimit: %s", strerror(errno));
		return -1;
	}
#if !defined(__SANITIZE_ADDRESS__)
	if (max_memory) {
		struct rlimit as = { max_memory + AS_OVERHEAD, max_memory + AS_OVERHEAD };

		if (setrlimit(RLIMIT_AS, &as) < 0) {
			snprintf(why, why_len, "setrlimit RLIMIT_AS: %s", strerror(errno));
			return -1;
		}
	}
#endif
	if (cpu_seconds) {
		struct rlimit cpu = { cpu_seconds, cpu_seconds + 1 };

		if (setrlimit(RLIMIT_CPU, &cpu) < 0) {
			snprintf(why, why_len, "setrlimit RLIMIT_CPU: %s", strerror(errno));
			return -1;
		}
	}
	if (confine_landlock(r, why, why_len) < 0)
		return -1;
	return confine_seccomp(why, why_len);
}

/* "HOST=PORT[,PORT...]" into the next allow rule. */
static int add_allow(struct sbx_fetch_rules *r, char *arg)
{
	char *eq = strchr(arg, '='), *save = NULL;
	struct sbx_egress_rule *e;

	if (!eq || r->net.n_allow >= MAX_RULES)
		return -1;
	*eq = '\0';
	e = &r->net.allow[r->net.n_allow];
	e->host = arg;
	e->ports = calloc(64, sizeof(*e->ports));
	if (!e->ports)
		return -1;
	for (char *p = strtok_r(eq + 1, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		uint64_t port;

		if (e->n_ports >= 64 || sbx_parse_u64(p, &port) < 0 || port == 0 || port > 65535)
			return -1;
		e->ports[e->n_ports++] = (uint16_t)port;
	}
	if (!e->n_ports)
		return -1;
	r->net.n_allow++;
	return 0;
}

int main(int argc, char **argv)
{
	static struct sbx_egress_rule allow[MAX_RULES];
	static char *cidrs[MAX_RULES + 1];
	struct sbx_fetch_rules r = {
		.net = { .kind = SBX_NET_EGRESS, .allow = allow, .allow_cidrs = cidrs },
		.timeout_seconds = 30,
		.max_redirects = 5,
	};
	uint64_t max_total = 0, used = 0, max_memory = 0, cpu_seconds = 0;
	size_t n_cidrs = 0;
	char text[1024];
	int i;

	for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		const char *o = argv[i];
		uint64_t *slot = NULL;

		if (strcmp(o, "--allow-http") == 0) {
			r.allow_http = true;
			continue;
		}
		if (i + 1 >= argc)
			return status(SBX_EXIT_SOFTWARE, "error", "usage: an option without its value");
		if (strcmp(o, "--allow") == 0) {
			if (add_allow(&r, argv[++i]) < 0)
				return status(SBX_EXIT_SOFTWARE, "error", "usage: bad --allow");
			continue;
		}
		if (strcmp(o, "--cidr") == 0) {
			if (n_cidrs >= MAX_RULES)
				return status(SBX_EXIT_SOFTWARE, "error", "usage: too many --cidr");
			cidrs[n_cidrs++] = argv[++i];
			continue;
		}
		if (strcmp(o, "--ca-file") == 0) {
			r.ca_file = argv[++i];
			continue;
		}
		if (strcmp(o, "--timeout") == 0)
			slot = &r.timeout_seconds;
		else if (strcmp(o, "--max-redirects") == 0)
			slot = &r.max_redirects;
		else if (strcmp(o, "--max-total") == 0)
			slot = &max_total;
		else if (strcmp(o, "--max-memory") == 0)
			slot = &max_memory;
		else if (strcmp(o, "--max-cpu-seconds") == 0)
			slot = &cpu_seconds;
		else
			return status(SBX_EXIT_SOFTWARE, "error", "usage: unknown option");
		if (sbx_parse_u64(argv[++i], slot) < 0)
			return status(SBX_EXIT_SOFTWARE, "error", "usage: bad number");
	}
	/* --max-total 0 is a budget spent: any byte is too many. */
	if ((argc - i) % 4 != 0)
		return status(SBX_EXIT_SOFTWARE, "error", "usage: NAME MAX_BYTES MEDIA URL ...");

	/* Before confinement: OpenSSL reads its configuration and the
	 * engines it names now, not later from a denied path. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return status(SBX_EXIT_SOFTWARE, "error", "curl_global_init failed");
	if (confine(&r, max_memory, cpu_seconds, text, sizeof(text)) < 0)
		return status(SBX_EXIT_UNAVAILABLE, "error", text);

	for (; i < argc; i += 4) {
		const char *name = argv[i], *media = strcmp(argv[i + 2], "-") ? argv[i + 2] : NULL;
		const char *url = argv[i + 3];
		struct sbx_fetch_result res;
		uint64_t max;
		_cleanup_close_ int fd = -1;

		if (sbx_parse_u64(argv[i + 1], &max) < 0 || strchr(name, '/') || name[0] == '.')
			return status(SBX_EXIT_SOFTWARE, "error", "usage: bad input");
		if (max > max_total - used)
			max = max_total - used;
		fd = openat(3, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 || fchmod(fd, 0644) < 0) {
			snprintf(text, sizeof(text), "%s: create: %s", name, strerror(errno));
			return status(SBX_EXIT_SOFTWARE, "error", text);
		}
		if (sbx_fetch_one(&r, url, fd, max, media, &res) < 0) {
			unlinkat(3, name, 0);
			snprintf(text, sizeof(text), "%s %s: %s", res.code, name, res.text);
			return status(res.refused ? SBX_EXIT_REFUSED : SBX_EXIT_FAILED,
				      res.refused ? "refused" : "failed", text);
		}
		used += res.size;
		printf("ok %s %ld %" PRIu64 " %s %s\n", name, res.status, res.size, res.sha256,
		       res.final_url);
		fflush(stdout);
	}
	return SBX_EXIT_OK;
}
