/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup-v2.c - the unified hierarchy: one directory "sbx-<run_id>" under
 * the delegated parent holds every limit.
 *
 * Files read and written, all relative to the parent P or the run R:
 *   P/cgroup.subtree_control   read; "+memory +pids +cpu" (the missing ones)
 *   P/sbx.supervisor/          made, and every pid of P (sbx, its init, what
 *                              started sbx in the same unit) moved into it,
 *                              only when P is our own cgroup and the kernel
 *                              refuses controllers because processes live in it;
 *                              when P is the configured cgroup_parent and sbx
 *                              was started in it, only sbx and its children
 *                              (a process of someone else there: refused)
 *   R/memory.max               bytes (socket buffers included: v2 charges
 *                              them to memory.current with every other
 *                              page, so nothing like v1's
 *                              memory.kmem.tcp.limit_in_bytes is needed)
 *   R/memory.swap.max          "0" (absent: no swap accounting, recorded)
 *   R/memory.oom.group         "1" (absent on old kernels: skipped), so an
 *                              OOM kills the whole sandbox, not one worker
 *   R/pids.max                 count
 *   R/cpu.max                  "<quota> 100000"
 *   R/cgroup.procs             pid written by attach; read by the kill
 *   R/cgroup.kill              "1" (5.14+); else R/cgroup.freeze "1",
 *                              R/cgroup.events "frozen 1", SIGKILL, "0"
 *   R/cgroup.events            "populated 0" when empty
 *   R/memory.peak (optional), R/memory.events (oom_kill: each process an
 *   OOM kill took, group kills included), R/pids.peak (optional),
 *   R/pids.events, R/cpu.stat  read by stats
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"

static const char *const needed[] = { "memory", "pids", "cpu" };

struct leaf_move {
	int leaf_fd;
	const char *leaf;
	struct sbx_error *err;
};

static int move_one(pid_t pid, void *data)
{
	struct leaf_move *m = data;
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	if (sbx_cgroup_write(m->leaf_fd, m->leaf, "cgroup.procs", v, 0, NULL) == 0)
		return 0;
	/* Gone since cgroup.procs was read: nothing to move. */
	if (errno == ESRCH)
		return 0;
	sbx_error_set(m->err, SBX_EXIT_UNAVAILABLE, errno, "cgroup: %s/cgroup.procs: cannot move %d",
		      m->leaf, (int)pid);
	sbx_cgroup_hint_set(m->err, NULL, 2, NULL, NULL);
	return -1;
}

/*
 * Empty our own cgroup into the leaf "sbx.supervisor": not only sbx but
 * every process in it - the sandbox's init, cloned before the run's cgroup
 * exists, and whatever started sbx in the same unit (a shell, timeout(1)).
 * A cgroup delegated to us (Delegate=yes) is ours to arrange, and the
 * kernel's no-internal-processes rule leaves no other way to give the runs
 * their controllers.  Processes forked meanwhile are caught by reading
 * cgroup.procs again, a bounded number of times.
 */
static int move_self_to_leaf(const struct sbx_cgroup_host *h, struct sbx_error *err)
{
	_cleanup_close_ int fd = sbx_cgroup_mkdir(h, h->v2_fd, "unified", "sbx.supervisor");
	_cleanup_free_ char *leaf = sbx_xasprintf("%s/sbx.supervisor", h->v2_path);
	struct leaf_move m = { .leaf = leaf, .err = err };
	int n = 0;

	if (fd < 0 && errno == EEXIST)
		fd = openat(h->v2_fd, "sbx.supervisor", O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "cgroup: %s: cannot create", leaf);
		sbx_cgroup_hint_set(err, NULL, 2, NULL, NULL);
		return -1;
	}
	m.leaf_fd = fd;
	for (int round = 0; round < 8; round++) {
		n = sbx_cgroup_for_each_pid(h->v2_fd, move_one, &m);
		if (n <= 0)
			break;
	}
	/* The first error set wins: a failed move above is the one reported. */
	if (n < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno,
				     "cgroup: %s/cgroup.procs: cannot read", h->v2_path);
	if (n > 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, EBUSY,
				     "cgroup: %s: processes keep appearing in it", h->v2_path);
	return 0;
}

/* Is @pid sbx itself or a child of it (sbx check's waiting child)?  A
 * pid whose status cannot be read is gone, or not ours. */
static bool ours(pid_t pid)
{
	char path[64], buf[2048];
	const char *pp;
	ssize_t n;
	int fd;

	if (pid == getpid())
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	pp = strstr(buf, "\nPPid:");
	return pp && (pid_t)strtol(pp + 7, NULL, 10) == getpid();
}

/* Is @pid running this same sbx binary (another run starting up, which
 * will move itself)?  Unreadable (another user's): no. */
static bool kin(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	return stat(path, &a) == 0 && stat("/proc/self/exe", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

struct own_move {
	struct leaf_move m;
	int others;     /* processes of P that are not ours */
	int kin;        /* ... of which other sbx processes */
	pid_t an_other; /* one of them, for the message */
};

static int move_own(pid_t pid, void *data)
{
	struct own_move *o = data;

	if (ours(pid))
		return move_one(pid, &o->m);
	if (!o->an_other)
		o->an_other = pid;
	o->others++;
	if (kin(pid))
		o->kin++;
	return 0;
}

static int move_back_one(pid_t pid, void *data)
{
	const struct sbx_cgroup_host *h = data;
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	if (ours(pid))
		(void)sbx_cgroup_write(h->v2_fd, h->v2_path, "cgroup.procs", v, 0, NULL);
	return 0;
}

/* Back into P (which has no controllers enabled, so it may hold
 * processes), and the leaf removed unless another sbx is in it: a refusal
 * leaves P as it was. */
static void move_own_back(const struct sbx_cgroup_host *h)
{
	_cleanup_close_ int fd = openat(h->v2_fd, "sbx.supervisor",
					O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return;
	(void)sbx_cgroup_for_each_pid(fd, move_back_one, (void *)h);
	sbx_cgroup_test_event(h, SBX_CGROUP_TEST_RMDIR, h->v2_fd, "unified", "sbx.supervisor");
	(void)unlinkat(h->v2_fd, "sbx.supervisor", AT_REMOVEDIR);
}

/*
 * sbx was started in its configured cgroup_parent P itself, and P holds
 * processes, so the kernel refuses P's controllers (EBUSY).  That cgroup
 * is the administrator's, not a unit delegated to sbx alone: sbx moves
 * only itself and its children into the leaf "sbx.supervisor", and when
 * other processes stay in P it refuses rather than move them.
 *
 * Several sbx may be started in P at the same moment: each moves itself
 * into the same leaf (made by the first, EEXIST for the others), and the
 * last one out of P enables the controllers; the others find them
 * enabled.  Another process of the same sbx binary (/proc/PID/exe) is a
 * run that has not moved yet: sbx waits for it, up to 10 s; any other
 * process gets about a second (it may be about to exec sbx) before sbx
 * refuses.
 * The leaf stays after the run, empty once sbx exits, and is reused by the
 * next: P cannot take processes any more once its controllers are on, so a
 * later sbx is started in the leaf (or another leaf of P).  On refusal sbx
 * moves back into P and removes the leaf if no other sbx is in it.
 */
static int move_own_to_leaf(const struct sbx_cgroup_host *h, const char *add,
			    struct sbx_error *err)
{
	_cleanup_free_ char *leaf = sbx_xasprintf("%s/sbx.supervisor", h->v2_path);
	struct own_move o = { .m = { .leaf = leaf, .err = err } };
	int wrote = -1, e = EBUSY;

	/* 20 rounds of 50 ms for a stranger; while the only others are sbx
	 * itself, starting up (slow on a loaded host), up to 10 s. */
	for (int round = 0; round < 200 && (round < 20 || o.others == o.kin); round++) {
		_cleanup_close_ int fd = sbx_cgroup_mkdir(h, h->v2_fd, "unified", "sbx.supervisor");

		if (fd < 0 && errno == EEXIST)
			fd = openat(h->v2_fd, "sbx.supervisor",
				    O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "cgroup: %s: cannot create",
				      leaf);
			sbx_cgroup_hint_set(err, NULL, 2, NULL, NULL);
			return -1;
		}
		o.m.leaf_fd = fd;
		o.others = 0;
		o.kin = 0;
		o.an_other = 0;
		if (sbx_cgroup_for_each_pid(h->v2_fd, move_own, &o) < 0) {
			/* The leaf removed under us by another sbx that gave
			 * up: make it again. */
			if (errno == ENOENT || errno == ENODEV) {
				*err = (struct sbx_error){ 0 };
				continue;
			}
			if (!err->msg[0])
				sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno,
					      "cgroup: %s/cgroup.procs: cannot read", h->v2_path);
			return -1;
		}
		wrote = sbx_cgroup_write(h->v2_fd, h->v2_path, "cgroup.subtree_control", add, 0,
					 NULL);
		e = errno;
		if (wrote == 0 || e != EBUSY)
			break;
		/* Enabled meanwhile by another sbx in the same leaf. */
		if (sbx_cgroup_write(h->v2_fd, h->v2_path, "cgroup.subtree_control", add, 0,
				     NULL) == 0) {
			wrote = 0;
			break;
		}
		sbx_cgroup_pause_ms(50);
	}
	if (wrote == 0)
		return 0;
	move_own_back(h);
	if (e != EBUSY || o.others == 0) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, e,
			      "cgroup: %s/cgroup.subtree_control: cannot write \"%s\"", h->v2_path,
			      add);
		sbx_cgroup_hint_set(err, NULL, 2, NULL, NULL);
		return -1;
	}
	sbx_error_set(err, SBX_EXIT_UNAVAILABLE, EBUSY,
		      "cgroup: %s: sbx was started in its cgroup_parent, which holds other "
		      "processes, so it cannot enable controllers for its runs there", h->v2_path);
	sbx_error_hint(err,
		       "cgroup_parent %s holds %d other process%s (pid %d) beside sbx; on cgroup v2 "
		       "a cgroup that holds processes gives its children no controllers, and sbx "
		       "moves only its own: start sbx alone there, or from a leaf below it (as "
		       "root, write the starting shell's pid to %s/<leaf>/cgroup.procs)%s",
		       h->v2_path, o.others, o.others == 1 ? "" : "es", (int)o.an_other, h->v2_path,
		       sbx_cgroup_systemd_booted(NULL) ?
			       ", or drop cgroup_parent and use systemd-run --scope -p Delegate=yes "
			       "sbx run ..." : "");
	return -1;
}

/*
 * Children only get a controller's files when the parent lists it in
 * cgroup.subtree_control.  The kernel refuses (EBUSY) while the parent
 * itself holds processes, which is the case when the parent is the cgroup
 * sbx was started in (systemd-run --scope, a Delegate=yes service): then
 * sbx first moves that cgroup's processes into a leaf beside the runs, as
 * systemd asks of delegated services.
 */
static int enable_controllers(const struct sbx_cgroup_host *h, struct sbx_error *err)
{
	_cleanup_free_ char *enabled = NULL;
	char add[64] = "";

	if (sbx_cgroup_read(h->v2_fd, "cgroup.subtree_control", &enabled) < 0) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno,
			      "cgroup: %s/cgroup.subtree_control: cannot read", h->v2_path);
		sbx_cgroup_hint_set(err, NULL, 2, NULL, NULL);
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(needed); i++) {
		bool on = false;
		for (const char *p = enabled; *p;) {
			size_t l = strcspn(p, " \n");
			if (l == strlen(needed[i]) && strncmp(p, needed[i], l) == 0)
				on = true;
			p += l;
			p += strspn(p, " \n");
		}
		if (!on)
			snprintf(add + strlen(add), sizeof(add) - strlen(add), "%s+%s",
				 add[0] ? " " : "", needed[i]);
	}
	if (!add[0])
		return 0;
	if (sbx_cgroup_write(h->v2_fd, h->v2_path, "cgroup.subtree_control", add, 0, NULL) == 0)
		return 0;
	if (errno == EBUSY && h->v2_in_parent)
		return move_own_to_leaf(h, add, err);
	if (errno != EBUSY || !h->v2_parent_is_self) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno,
			      "cgroup: %s/cgroup.subtree_control: cannot write \"%s\"", h->v2_path,
			      add);
		sbx_cgroup_hint_set(err, NULL, 2, NULL, NULL);
		return -1;
	}
	if (move_self_to_leaf(h, err) < 0)
		return -1;
	if (sbx_cgroup_write(h->v2_fd, h->v2_path, "cgroup.subtree_control", add,
			     SBX_EXIT_UNAVAILABLE, err) < 0) {
		sbx_cgroup_hint_set(err, NULL, 2, NULL, NULL);
		return -1;
	}
	return 0;
}

static int v2_create(struct sbx_cgroup *cg, struct sbx_error *err)
{
	const struct sbx_cgroup_host *h = cg->host;

	if (enable_controllers(h, err) < 0)
		return -1;
	cg->v2_fd = sbx_cgroup_mkdir(h, h->v2_fd, "unified", cg->name);
	if (cg->v2_fd < 0) {
		int e = errno;
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, e, "cgroup: %s/%s: cannot create",
			      h->v2_path, cg->name);
		if (e == EACCES || e == EPERM || e == EROFS)
			sbx_cgroup_hint_set(err, NULL, 2, NULL, NULL);
		return -1;
	}
	return 0;
}

static int v2_limits(struct sbx_cgroup *cg, const struct sbx_cgroup_limits *lim,
		     struct sbx_error *err)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/%s", cg->host->v2_path, cg->name);
	char v[64];
	int fd = cg->v2_fd;

	/* One limit for all of the run's memory: on v2, socket buffers (TCP,
	 * UDP, unix) are charged to memory.current like any page, so unread
	 * data queued on loopback counts against memory.max and shows in
	 * memory.peak; the kernel refuses the sends rather than exceed it. */
	snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->memory_bytes);
	if (sbx_cgroup_write(fd, dir, "memory.max", v, SBX_EXIT_UNAVAILABLE, err) < 0)
		return -1;
	/* Without swap accounting (swapaccount=0, or no swap configured in
	 * the kernel) there is no file and no swap to escape into through
	 * this cgroup's accounting; record it rather than refuse. */
	cg->swap_limited = sbx_cgroup_has_file(fd, "memory.swap.max");
	if (cg->swap_limited &&
	    sbx_cgroup_write(fd, dir, "memory.swap.max", "0", SBX_EXIT_UNAVAILABLE, err) < 0)
		return -1;
	if (sbx_cgroup_has_file(fd, "memory.oom.group") &&
	    sbx_cgroup_write(fd, dir, "memory.oom.group", "1", SBX_EXIT_UNAVAILABLE, err) < 0)
		return -1;
	snprintf(v, sizeof(v), "%llu", (unsigned long long)lim->pids);
	if (sbx_cgroup_write(fd, dir, "pids.max", v, SBX_EXIT_UNAVAILABLE, err) < 0)
		return -1;
	snprintf(v, sizeof(v), "%llu %d",
		 (unsigned long long)sbx_cgroup_cpu_quota_us(lim->cpu_millicores),
		 SBX_CGROUP_CPU_PERIOD_US);
	return sbx_cgroup_write(fd, dir, "cpu.max", v, SBX_EXIT_UNAVAILABLE, err);
}

static int v2_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_error *err)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/%s", cg->host->v2_path, cg->name);
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	if (sbx_cgroup_write(cg->v2_fd, dir, "cgroup.procs", v, SBX_EXIT_UNAVAILABLE, err) == 0)
		return 0;
	/* The usual cause of EACCES here: write access to the run's
	 * cgroup.procs is not enough on v2, the mover must also be allowed to
	 * write cgroup.procs of the common ancestor of both cgroups - so a
	 * user's sbx must already live inside the directory delegated to it. */
	if ((errno == EACCES || errno == EPERM) && cg->host->v2_self_outside_parent)
		sbx_error_hint(err,
			       "sbx runs in %s, outside cgroup_parent %s: on cgroup v2 a move also "
			       "needs write access to the common ancestor's cgroup.procs; start sbx "
			       "from inside it (as root, write the shell's pid to a leaf of it that "
			       "this user owns)%s",
			       cg->host->v2_own_path, cg->host->v2_path,
			       sbx_cgroup_systemd_booted(NULL) ?
				       ", or drop cgroup_parent and use systemd-run --user --scope "
				       "-p Delegate=yes sbx run ..." : "");
	return -1;
}

/* "populated 0" in cgroup.events: no live task in the group. */
static int populated(int fd, bool *pop)
{
	_cleanup_free_ char *ev = NULL;
	uint64_t v;

	if (sbx_cgroup_read(fd, "cgroup.events", &ev) < 0)
		return -1;
	if (sbx_cgroup_keyed_u64(ev, "populated", &v) < 0) {
		errno = EINVAL;
		return -1;
	}
	*pop = v != 0;
	return 0;
}

static int wait_frozen(int fd)
{
	for (int i = 0; i < 100; i++) {
		_cleanup_free_ char *ev = NULL;
		uint64_t v;

		if (sbx_cgroup_read(fd, "cgroup.events", &ev) < 0)
			return -1;
		if (sbx_cgroup_keyed_u64(ev, "frozen", &v) == 0 && v == 1)
			return 0;
		sbx_cgroup_pause_ms(10);
	}
	errno = ETIMEDOUT;
	return -1;
}

static int sigkill_pid(pid_t pid, void *data)
{
	if (kill(pid, SIGKILL) < 0 && errno != ESRCH)
		return -1;
	return 0;
}

/* Wait up to @ms for "populated 0". */
static int wait_empty(int fd, unsigned int ms, bool *pop)
{
	for (unsigned int waited = 0;; waited += 10) {
		if (populated(fd, pop) < 0)
			return -1;
		if (!*pop || waited >= ms)
			return 0;
		sbx_cgroup_pause_ms(10);
	}
}

static int v2_kill(struct sbx_cgroup *cg, struct sbx_error *err)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/%s", cg->host->v2_path, cg->name);
	int fd = cg->v2_fd;
	bool pop = true;

	if (sbx_cgroup_has_file(fd, "cgroup.kill")) {
		if (sbx_cgroup_write(fd, dir, "cgroup.kill", "1", SBX_EXIT_SOFTWARE, err) < 0)
			return -1;
		sbx_cgroup_test_event(cg->host, SBX_CGROUP_TEST_KILLED, fd, "unified", NULL);
	} else {
		/* Before 5.14: freeze first, so that no pid read from
		 * cgroup.procs can exit and be reused before the signal
		 * (cgroup.freeze is 5.2+; without it the race remains). */
		bool freezer = sbx_cgroup_has_file(fd, "cgroup.freeze");

		for (int round = 0; round < 5; round++) {
			if (wait_empty(fd, 0, &pop) < 0)
				break;
			if (!pop)
				return 0;
			if (freezer &&
			    (sbx_cgroup_write(fd, dir, "cgroup.freeze", "1", SBX_EXIT_SOFTWARE, err) < 0 ||
			     wait_frozen(fd) < 0))
				return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
						     "cgroup: %s: cannot freeze", dir);
			if (sbx_cgroup_for_each_pid(fd, sigkill_pid, NULL) < 0)
				return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
						     "cgroup: %s/cgroup.procs: cannot kill", dir);
			/* SIGKILL reaches frozen tasks on v2; thawing lets
			 * the rest of the group run on to its own death. */
			if (freezer &&
			    sbx_cgroup_write(fd, dir, "cgroup.freeze", "0", SBX_EXIT_SOFTWARE, err) < 0)
				return -1;
			sbx_cgroup_test_event(cg->host, SBX_CGROUP_TEST_KILLED, fd, "unified", NULL);
			if (wait_empty(fd, 1000, &pop) < 0 || !pop)
				break;
		}
	}
	if (wait_empty(fd, 2000, &pop) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
				     "cgroup: %s/cgroup.events: cannot read", dir);
	if (pop)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "cgroup: %s: processes remain after SIGKILL", dir);
	return 0;
}

static int read_required(int fd, const char *dir, const char *file, char **text,
			 struct sbx_error *err)
{
	if (sbx_cgroup_read(fd, file, text) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "cgroup: %s/%s: cannot read",
				     dir, file);
	return 0;
}

/* A key that must be present: absent or malformed is an error. */
static int keyed(const char *text, const char *dir, const char *file, const char *key,
		 uint64_t *out, struct sbx_error *err)
{
	int r = sbx_cgroup_keyed_u64(text, key, out);

	if (r < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "cgroup: %s/%s: %s: %s", dir, file,
				     key, r == -ENOENT ? "missing" : "not a number");
	return 0;
}

/* An optional single-number file: absent clears *has. */
static int optional_u64(int fd, const char *dir, const char *file, uint64_t *out, bool *has,
			struct sbx_error *err)
{
	_cleanup_free_ char *text = NULL;

	*has = false;
	if (sbx_cgroup_read(fd, file, &text) < 0) {
		if (errno == ENOENT)
			return 0;
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "cgroup: %s/%s: cannot read",
				     dir, file);
	}
	if (sbx_cgroup_parse_u64(text, out) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "cgroup: %s/%s: not a number", dir,
				     file);
	*has = true;
	return 0;
}

static int v2_stats(struct sbx_cgroup *cg, struct sbx_cgroup_stats *st, struct sbx_error *err)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/%s", cg->host->v2_path, cg->name);
	_cleanup_free_ char *mev = NULL, *pev = NULL, *cpu = NULL;
	int fd = cg->v2_fd;

	/* memory.peak is 5.19+; without it there is no truthful peak. */
	if (optional_u64(fd, dir, "memory.peak", &st->peak_memory_bytes, &st->has_peak_memory,
			 err) < 0 ||
	    optional_u64(fd, dir, "pids.peak", &st->pids_peak, &st->has_pids_peak, err) < 0)
		return -1;
	if (read_required(fd, dir, "memory.events", &mev, err) < 0 ||
	    keyed(mev, dir, "memory.events", "oom_kill", &st->oom_kills, err) < 0 ||
	    keyed(mev, dir, "memory.events", "max", &st->memory_events_max, err) < 0)
		return -1;
	st->has_memory_events_max = true;
	/* A memory.oom.group kill adds one to oom_kill for every process it
	 * takes, and one to oom_group_kill (6.0+) for the event: oom_kill
	 * alone counts each killed process once. */
	if (read_required(fd, dir, "pids.events", &pev, err) < 0 ||
	    keyed(pev, dir, "pids.events", "max", &st->pids_events_max, err) < 0)
		return -1;
	if (read_required(fd, dir, "cpu.stat", &cpu, err) < 0 ||
	    keyed(cpu, dir, "cpu.stat", "user_usec", &st->cpu_user_usec, err) < 0 ||
	    keyed(cpu, dir, "cpu.stat", "system_usec", &st->cpu_system_usec, err) < 0)
		return -1;
	return 0;
}

static int v2_destroy(struct sbx_cgroup *cg, struct sbx_error *err)
{
	const struct sbx_cgroup_host *h = cg->host;
	bool pop = false;
	int r = 0;

	/* Only a directory this run made (or gc found) is removed: after a
	 * failed mkdir (EEXIST) the fd is -1 and another run's is left. */
	if (cg->v2_fd < 0) {
		cg->destroyed = true;
		return 0;
	}
	if (populated(cg->v2_fd, &pop) < 0 || pop)
		r = v2_kill(cg, err);
	if (sbx_cgroup_rmdir(h, h->v2_fd, "unified", cg->name) < 0)
		r = sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "cgroup: %s/%s: cannot remove",
				  h->v2_path, cg->name);
	closep(&cg->v2_fd);
	cg->v2_fd = -1;
	cg->destroyed = true;
	return r;
}

const struct sbx_cgroup_ops sbx_cgroup_v2_ops = {
	.version = 2,
	.create = v2_create,
	.limits = v2_limits,
	.attach_pid = v2_attach,
	.kill = v2_kill,
	.stats = v2_stats,
	.destroy = v2_destroy,
};
