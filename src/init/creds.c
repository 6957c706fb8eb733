/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * creds.c - step 4 of the init (init.c) and the limits of step 5: what
 * the init gives up before the payload starts and what it bounds.  The
 * broker's inherited fds, every capability, privileges through exec
 * (no_new_privs), dumpability; then Landlock and the seccomp filter,
 * which bind the init as well as the payload; the rlimits, and the user
 * namespace's quotas (set while the new root's /proc is mounted and
 * /proc/sys still writable, from setup_proc()).
 *
 * Its own file because after drop_credentials() the init is no more
 * powerful than the payload: each step here is one piece of the security
 * argument, and each says what it denies and why.
 */
#include "config.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "init-internal.h"
#include "spec.h"
#include "syscalls.h"

/* Close every inherited fd of the broker's but the five the init uses. */
void close_inherited(int keep[5])
{
	unsigned lo = 3;

	/* keep[] sorted ascending; a repeated fd is skipped (keep[i] < lo) */
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4 - i; j++)
			if (keep[j] > keep[j + 1]) {
				int t = keep[j];
				keep[j] = keep[j + 1];
				keep[j + 1] = t;
			}
	for (int i = 0; i < 5; i++) {
		if ((unsigned)keep[i] > lo && close_range(lo, (unsigned)keep[i] - 1, 0) < 0)
			fail(SBX_STAGE_FDS, "close_range");
		lo = (unsigned)keep[i] + 1;
	}
	if (close_range(lo, ~0U, 0) < 0)
		fail(SBX_STAGE_FDS, "close_range");
}

void drop_credentials(void)
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
 * readable, only the profile's binds are executable - and /tmp and /work
 * where the profile's workspace_exec says so - only the scratch mounts
 * (/tmp, /work with /work/out, /dev/shm) may be written, /dev and /proc
 * files may be opened for writing (/dev/null, /proc/self/...), and device
 * nodes can be made nowhere.  The mounts already say the same; this
 * holds even if a mount were wrong.  Best effort by ABI version: a kernel
 * without Landlock runs without it (the policy does not require it) and
 * the manifest says null.  Returns the ABI applied, or 0.
 */
int apply_landlock(const struct sbx_spec *spec)
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
	landlock_allow(ruleset, "/", read & ~LANDLOCK_ACCESS_FS_EXECUTE);
	/* Where the programs are.  A rule on a file takes only the rights
	 * of a file (a bound program, like the probe of the tests). */
	for (size_t i = 0; i < spec->n_binds; i++)
		landlock_allow(ruleset, spec->binds[i].dst,
			       spec->binds[i].is_dir ? read
						     : LANDLOCK_ACCESS_FS_EXECUTE |
							       LANDLOCK_ACCESS_FS_READ_FILE);
	if (!spec->workspace_exec)
		scratch &= ~LANDLOCK_ACCESS_FS_EXECUTE;
	landlock_allow(ruleset, "/tmp", scratch);
	landlock_allow(ruleset, "/work", scratch);
	landlock_allow(ruleset, "/dev/shm", scratch & ~LANDLOCK_ACCESS_FS_EXECUTE);
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
void load_seccomp(const struct sbx_spec *spec)
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

void setup_rlimits(const struct sbx_spec *spec)
{
	/* Set on the init and inherited by the payload.  Core dumps would
	 * write the payload's memory into its workspace; nofile and fsize
	 * bound what one process can hold and write; nproc is a second line
	 * behind the pids cgroup (counted per user namespace). */
	set_rlimit(RLIMIT_CORE, 0, "core");
	set_rlimit(RLIMIT_NOFILE, spec->rlimit_nofile, "nofile");
	set_rlimit(RLIMIT_FSIZE, spec->rlimit_fsize, "fsize");
	/* A caller's hard limit below it is the tighter bound anyway: the
	 * kernel also counts the sandbox's tasks as the caller's, against
	 * its limit (the broker's nproc.c). */
	lower_rlimit(RLIMIT_NPROC, spec->rlimit_nproc, "nproc");
	/* Charged to the caller as well as to the payload (see
	 * setup_user_quotas): the profile's kernel_quotas.  sigpending also
	 * bounds POSIX timers, each of which holds a queued signal; the
	 * kernel's own signals to the init (SIGCHLD) are never refused. */
	lower_rlimit(RLIMIT_SIGPENDING, spec->quotas.sigpending, "sigpending");
	lower_rlimit(RLIMIT_MSGQUEUE, spec->quotas.msgqueue_bytes, "msgqueue");
	lower_rlimit(RLIMIT_MEMLOCK, spec->quotas.memlock_bytes, "memlock");
}

/* Append "a" or "a-b" to @list (with a comma after the first). */
static void list_range(char *list, size_t len, int a, int b)
{
	size_t used = strlen(list);

	snprintf(list + used, len - used, a == b ? "%s%d" : "%s%d-%d", used ? "," : "", a, b);
}

/*
 * The CPUs the payload sees (cpus.c in the broker says why): spec->n_cpus
 * of those the init may run on - its cgroup's cpuset, as it is already in
 * the run's cgroup - starting at the CPU it runs on now, which the
 * scheduler chose as a free one, so that concurrent runs spread out.
 * Before the seccomp filter, which denies changing pid 1's affinity.
 */
void pin_cpus(const struct sbx_spec *spec, char *list, size_t len)
{
	cpu_set_t have, pick;
	int cpu = sched_getcpu(), first = -1, last = -1;
	uint32_t n = 0;

	list[0] = '\0';
	if (!spec->n_cpus)
		return;
	if (sched_getaffinity(0, sizeof(have), &have) < 0) {
		/* More CPUs than a cpu_set_t holds (1024): left alone, the
		 * pinning is a hint and the quota still holds. */
		if (errno == EINVAL)
			return;
		fail(SBX_STAGE_RLIMITS, "sched_getaffinity");
	}
	if (cpu < 0 || cpu >= CPU_SETSIZE)
		cpu = 0;
	CPU_ZERO(&pick);
	for (int i = 0; i < CPU_SETSIZE && n < spec->n_cpus; i++) {
		int c = (cpu + i) % CPU_SETSIZE;

		if (CPU_ISSET(c, &have)) {
			CPU_SET(c, &pick);
			n++;
		}
	}
	if (sched_setaffinity(0, sizeof(pick), &pick) < 0)
		fail(SBX_STAGE_RLIMITS, "sched_setaffinity");
	/* In ascending order, as the kernel writes its own lists. */
	for (int c = 0; c <= CPU_SETSIZE; c++) {
		if (c < CPU_SETSIZE && CPU_ISSET(c, &pick)) {
			if (first < 0)
				first = c;
			last = c;
		} else if (first >= 0) {
			list_range(list, len, first, last);
			first = -1;
		}
	}
	/* A newline, as the kernel ends it. */
	if (strlen(list) + 1 < len)
		strcat(list, "\n");
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
