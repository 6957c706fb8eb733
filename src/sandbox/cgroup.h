/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.h - the run's cgroup: memory (no swap), pids and cpu limits,
 * placement, a race-free kill, accounting and removal (SPEC §5).
 *
 * Two backends sit behind one small ops table: cgroup v2 (a per-run child
 * "sbx-<run_id>" of one delegated parent) and cgroup v1 (one such child per
 * controller hierarchy).  The host is detected once; memory, pids and cpu
 * are required, and when any of them cannot be applied sbx refuses with 69
 * and a Hint on how to delegate.  It never runs without them.
 *
 * Every file is reached through a directory fd, never a path string, and
 * the places detection reads (/proc/self/mountinfo, /proc/self/cgroup and
 * the root under which the mount points live) are options, so the unit
 * tests run both backends against a fake tree of plain files.  On a real
 * cgroupfs the control files appear when the directory is made; a plain
 * directory starts empty, so the host carries a test-only hook called after
 * each mkdir that lets a test lay the kernel's files out.  The backends
 * never create a control file (no O_CREAT), so a missing required file is
 * an error in the tests exactly as it would be on a real host.
 */
#ifndef SBX_CGROUP_H
#define SBX_CGROUP_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "error.h"

/* The hierarchies sbx uses.  v2 has one directory for all of them. */
enum sbx_cgroup_controller {
	SBX_CGROUP_MEMORY,
	SBX_CGROUP_PIDS,
	SBX_CGROUP_CPU,
	SBX_CGROUP_CPUACCT, /* v1 only: accounting lives apart from cpu */
	SBX_CGROUP_FREEZER, /* v1 only, optional: makes the kill race-free */
	_SBX_CGROUP_CONTROLLER_MAX,
};

const char *sbx_cgroup_controller_name(enum sbx_cgroup_controller c);

enum sbx_cgroup_test_event {
	SBX_CGROUP_TEST_MKDIR,
	SBX_CGROUP_TEST_RMDIR,
	SBX_CGROUP_TEST_KILLED,
};

struct sbx_cgroup_detect_opts {
	/* Host config "cgroup_parent": a cgroup path below the root of each
	 * hierarchy ("/sbx.slice"); the v2 mount point in front of it
	 * ("/sys/fs/cgroup/sbx.slice") is accepted and stripped.  NULL: the
	 * caller's own cgroup, read from @proc_cgroup. */
	const char *cgroup_parent;
	const char *mountinfo;   /* NULL: /proc/self/mountinfo */
	const char *proc_cgroup; /* NULL: /proc/self/cgroup */
	const char *cmdline;     /* NULL: /proc/cmdline */
	const char *root;        /* prefix for every mount point; NULL: none */
	/* Tests only: copied into the host's test_hook/test_data. */
	void (*test_hook)(void *data, enum sbx_cgroup_test_event ev, int dirfd,
			  const char *hierarchy, const char *name);
	void *test_data;
};

struct sbx_cgroup_ops;


/* What detection found.  Owned by the caller; release with
 * sbx_cgroup_host_free().  fds are O_PATH directory fds. */
struct sbx_cgroup_host {
	int version; /* 1 or 2; 0 before detection */
	const struct sbx_cgroup_ops *ops;

	/* v2: the parent under which "sbx-<run_id>" is made. */
	int v2_fd;
	char *v2_path;
	/* The parent is the caller's own cgroup: if it holds processes, sbx
	 * moves itself into a leaf beside the runs before enabling
	 * controllers (the "no internal processes" rule). */
	bool v2_parent_is_self;
	/* sbx was started in the configured cgroup_parent itself: on EBUSY
	 * it moves its own processes (only) into the leaf, and refuses when
	 * others stay (cgroup-v2.c, move_own_to_leaf). */
	bool v2_in_parent;
	/* A configured parent that does not contain our own cgroup: moving the
	 * init into a run's cgroup then needs write access to cgroup.procs of
	 * their common ancestor (v2's rule for moves), which a user seldom
	 * has.  Only used to make the refusal's Hint exact. */
	bool v2_self_outside_parent;
	char *v2_own_path; /* our own cgroup's directory, or NULL */

	/* v1: one parent per controller; -1/NULL when not mounted (only the
	 * freezer may be missing).  cpu and cpuacct may share a directory. */
	int v1_fd[_SBX_CGROUP_CONTROLLER_MAX];
	char *v1_path[_SBX_CGROUP_CONTROLLER_MAX];

	/* Tests only: the kernel's side of a fake tree.  Called after every
	 * mkdir (with the new directory's fd), before every rmdir (with the
	 * parent's fd) and after each round of SIGKILLs (with the directory
	 * whose cgroup.procs was read), so a test can lay out, remove or
	 * empty the files as the kernel would.  @hierarchy is "unified" for
	 * v2, else the v1 controller name. */
	void (*test_hook)(void *data, enum sbx_cgroup_test_event ev, int dirfd,
			  const char *hierarchy, const char *name);
	void *test_data;
};

/* Limits to apply.  Zero is not "unlimited": it is refused (70), because
 * sbx never runs without a memory, pids and cpu limit. */
struct sbx_cgroup_limits {
	uint64_t memory_bytes;
	uint64_t pids;
	uint64_t cpu_millicores; /* 1000 = one core; at least 10 is applied */
};

/* One run's cgroup(s).  Fields are read-only for callers. */
struct sbx_cgroup {
	const struct sbx_cgroup_host *host;
	char *name;                           /* "sbx-<run_id>" */
	int v2_fd;                            /* v2: the run's directory (O_PATH) */
	int v1_fd[_SBX_CGROUP_CONTROLLER_MAX]; /* v1: per controller, or -1 */
	bool swap_limited; /* false: the host has no swap accounting to cap */
	bool destroyed;
};

struct sbx_cgroup_stats {
	/* v2 memory.peak (socket buffers included); v1 memory.max_usage_in_bytes
	 * plus memory.kmem.tcp.max_usage_in_bytes */
	uint64_t peak_memory_bytes;
	bool has_peak_memory;
	/* Processes the OOM killer killed in the run's cgroup, each once:
	 * v2 memory.events oom_kill (which already counts every member of a
	 * memory.oom.group kill; oom_group_kill, the number of such group
	 * kills, is not added to it), v1 memory.oom_control oom_kill. */
	uint64_t oom_kills;
	uint64_t memory_events_max;  /* v2 memory.events max (allocations over the limit) */
	bool has_memory_events_max;  /* false on v1: its failcnt is unreliable */
	uint64_t pids_peak;          /* pids.peak where the kernel has it */
	bool has_pids_peak;
	uint64_t pids_events_max;    /* forks refused by pids.max */
	uint64_t cpu_user_usec;
	uint64_t cpu_system_usec;
};

/*
 * sbx_cgroup_detect() - find the cgroup hierarchy sbx will use.
 * v2 is chosen when a cgroup2 mount reaches the parent and the parent's
 * cgroup.controllers has memory, pids and cpu; else v1 when memory, pids,
 * cpu and cpuacct are mounted and the parent exists in each; else error.
 * v2 is refused when the kernel command line has cgroup.memory=nosocket,
 * which stops v2 from charging socket buffers to memory.current.
 * Side-effect free: nothing is created or moved.
 * Errors: -1 with SBX_EXIT_UNAVAILABLE naming what is missing, and a Hint
 * on how to delegate a cgroup (or to drop nosocket).  On error @h holds
 * nothing to free.
 */
int sbx_cgroup_detect(struct sbx_cgroup_host *h, const struct sbx_cgroup_detect_opts *o,
		      struct sbx_error *err);
void sbx_cgroup_host_free(struct sbx_cgroup_host *h);

/*
 * sbx_cgroup_create() - make "sbx-<run_id>" and apply @lim.
 * v2: enables +memory +pids +cpu in the parent's cgroup.subtree_control
 * when needed, writes memory.max, memory.swap.max 0 (when the kernel has
 * swap accounting), memory.oom.group 1, pids.max and cpu.max.  v1: the
 * same limits through memory.limit_in_bytes + memory.memsw.limit_in_bytes
 * (memory.swappiness 0 when memsw is absent), memory.kmem.tcp.limit_in_bytes
 * (socket buffers, which v2 charges to memory.max itself), pids.max,
 * cpu.cfs_period_us and cpu.cfs_quota_us, plus a freezer group when the
 * freezer is mounted.
 * An existing directory of that name is an error (EEXIST), never reused.
 * Errors: SBX_EXIT_UNAVAILABLE (no permission, a controller or limit file
 * missing, v1 without memory.kmem.tcp.limit_in_bytes) with a Hint;
 * SBX_EXIT_SOFTWARE for a zero limit or a bad run_id.
 * On error nothing is left behind.
 */
int sbx_cgroup_create(const struct sbx_cgroup_host *h, const char *run_id,
		      const struct sbx_cgroup_limits *lim, struct sbx_cgroup **cg,
		      struct sbx_error *err);

/*
 * sbx_cgroup_attach() - move @pid into the run's cgroup (v2: one
 * cgroup.procs; v1: each controller's).  Errors: SBX_EXIT_UNAVAILABLE.
 */
int sbx_cgroup_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_error *err);

/*
 * sbx_cgroup_clone_fd() - the run's cgroup as clone3's CLONE_INTO_CGROUP
 * wants it (v2: the directory's fd, owned by @cg), or -1 on v1, which has
 * no such clone.
 */
int sbx_cgroup_clone_fd(const struct sbx_cgroup *cg);

/*
 * sbx_cgroup_kill() - SIGKILL everything in the run's cgroup and wait
 * (bounded, about two seconds) until it is empty.  v2: cgroup.kill, else
 * freeze and kill each pid; v1: freeze, kill each pid, thaw.  Signalling
 * pids read from cgroup.procs is safe from pid reuse only while the group
 * is frozen; without a freezer a pid may be reused between the read and the
 * kill (a residual race, documented in docs/cgroups.md).
 * Errors: SBX_EXIT_SOFTWARE when processes remain.
 */
int sbx_cgroup_kill(struct sbx_cgroup *cg, struct sbx_error *err);

/*
 * sbx_cgroup_stats() - accounting for the manifest.  Optional files that
 * the kernel lacks clear the matching has_* flag.  Errors: a required file
 * unreadable or malformed (SBX_EXIT_SOFTWARE).
 */
int sbx_cgroup_stats(struct sbx_cgroup *cg, struct sbx_cgroup_stats *st, struct sbx_error *err);

/*
 * sbx_cgroup_destroy() - kill what is left, remove the directories (EBUSY
 * retried briefly) and free @cg.  Idempotent; NULL is fine.  @cg is freed
 * even on error; the first error is reported.
 */
int sbx_cgroup_destroy(struct sbx_cgroup *cg, struct sbx_error *err);

/*
 * sbx_cgroup_release() - free @cg's handle and leave the directories and
 * what runs in them: a profile's template lives on in its cgroup after
 * the broker that made it is gone (sbx gc removes it once empty).
 */
void sbx_cgroup_release(struct sbx_cgroup *cg);

/*
 * sbx_cgroup_describe() - the manifest's isolation.cgroup:
 * {"version":N,"controllers":[...]} with the controllers a run's cgroup is
 * placed in, sorted.  Returns 0; *@out is a new reference.
 */
int sbx_cgroup_describe(const struct sbx_cgroup_host *h, json_t **out);

/*
 * sbx_cgroup_host_report() - for `sbx check`: detect with @o and print one
 * line "cgroup           ok: ..." (or "unusable: ...") to @f, in the
 * column layout of `sbx check`, saying what is there and whether this user
 * can write it, plus an indented "Hint:" line when not.  Returns 0 when
 * usable, else -1.
 */
int sbx_cgroup_host_report(FILE *f, const struct sbx_cgroup_detect_opts *o);

/* The hint printed whenever a cgroup cannot be used. */
extern const char sbx_cgroup_hint[];
/*
 * sbx_cgroup_hint_set() - set @err's Hint for a cgroup sbx cannot use
 * (cgroup-hint.c).  @version: the host's hierarchy, 1 or 2 (0: none
 * mounted); @missing: the required controllers that are not there
 * ("cpuacct, pids"), or NULL when they are but the cgroup is not this
 * user's to write; @where: the v2 cgroup lacking them (may be NULL).
 * Offers systemd's delegation only when systemd is the init, judged under
 * @root (a test's prefix, as in sbx_cgroup_detect_opts; NULL: none).
 */
void sbx_cgroup_hint_set(struct sbx_error *err, const char *root, int version,
			 const char *missing, const char *where);
/* Whether systemd is the init: @root/run/systemd/system is a directory. */
bool sbx_cgroup_systemd_booted(const char *root);
/* The hint for a v1 memory controller that cannot limit socket buffers. */
extern const char sbx_cgroup_v1_tcp_hint[];

/* v1 memory.kmem.tcp.limit_in_bytes for a memory limit: a quarter of it
 * (socket buffers are charged apart from memory.limit_in_bytes there). */
static inline uint64_t sbx_cgroup_v1_tcp_bytes(uint64_t memory_bytes)
{
	return memory_bytes / 4;
}

/* --- Backend interface: src/sandbox/cgroup*.c only -------------------- */

struct sbx_cgroup_ops {
	int version;
	/* Make the run's directories (nothing written yet). */
	int (*create)(struct sbx_cgroup *cg, struct sbx_error *err);
	/* Write @lim into them. */
	int (*limits)(struct sbx_cgroup *cg, const struct sbx_cgroup_limits *lim,
		      struct sbx_error *err);
	int (*attach_pid)(struct sbx_cgroup *cg, pid_t pid, struct sbx_error *err);
	int (*kill)(struct sbx_cgroup *cg, struct sbx_error *err);
	int (*stats)(struct sbx_cgroup *cg, struct sbx_cgroup_stats *st, struct sbx_error *err);
	int (*destroy)(struct sbx_cgroup *cg, struct sbx_error *err);
};

extern const struct sbx_cgroup_ops sbx_cgroup_v1_ops;
extern const struct sbx_cgroup_ops sbx_cgroup_v2_ops;

/* Largest control file sbx reads (cgroup.procs of a big group included). */
#define SBX_CGROUP_FILE_MAX (1024 * 1024)

/* Write @value to @dirfd/@file (no O_CREAT: the kernel makes control
 * files).  On error, sets @err naming @dir_path/@file with @code.  Returns
 * 0, or -1 with errno preserved. */
int sbx_cgroup_write(int dirfd, const char *dir_path, const char *file, const char *value,
		     int code, struct sbx_error *err);
/* Read @dirfd/@file whole (capped) into a new NUL-terminated string.
 * Returns 0, or -1 with errno set (ENOENT for an absent optional file);
 * sets no error. */
int sbx_cgroup_read(int dirfd, const char *file, char **out);
/* Parse "key value" lines (memory.events, cpu.stat, oom_control, ...):
 * the value of @key as u64.  Returns 0, -ENOENT when the key is absent,
 * -EINVAL when its value is not a number. */
int sbx_cgroup_keyed_u64(const char *text, const char *key, uint64_t *out);
/* Parse a single-value file ("123\n"; "max" gives UINT64_MAX).  Returns 0
 * or -EINVAL. */
int sbx_cgroup_parse_u64(const char *text, uint64_t *out);
/* Call @fn for every pid listed in @dirfd's cgroup.procs.  Returns the
 * number of pids seen, or -1 with errno set. */
int sbx_cgroup_for_each_pid(int dirfd, int (*fn)(pid_t pid, void *data), void *data);
/* Make @name under @parent_fd (0755) and open it O_PATH; calls the test
 * hook.  EEXIST is an error.  Returns the fd or -1 with errno set. */
int sbx_cgroup_mkdir(const struct sbx_cgroup_host *h, int parent_fd, const char *hierarchy,
		     const char *name);
/* rmdir @name under @parent_fd, retrying EBUSY for about a second.  ENOENT
 * is success.  Returns 0 or -1 with errno set. */
int sbx_cgroup_rmdir(const struct sbx_cgroup_host *h, int parent_fd, const char *hierarchy,
		     const char *name);
/* Call the test hook, if any. */
void sbx_cgroup_test_event(const struct sbx_cgroup_host *h, enum sbx_cgroup_test_event ev,
			   int dirfd, const char *hierarchy, const char *name);
/* cpu quota in microseconds per SBX_CGROUP_CPU_PERIOD_US for @millicores:
 * millicores * 100, at least the kernel's minimum of 1000. */
#define SBX_CGROUP_CPU_PERIOD_US 100000
uint64_t sbx_cgroup_cpu_quota_us(uint64_t millicores);
/* Does @dirfd/@file exist?  (Optional control files.) */
bool sbx_cgroup_has_file(int dirfd, const char *file);
/* Sleep @ms milliseconds (bounded retry loops only). */
void sbx_cgroup_pause_ms(unsigned int ms);

#endif
