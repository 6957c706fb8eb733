/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gc.c - reap what dead runs left behind: processes in their cgroups, the
 * cgroups, host temp directories, and the state entries themselves.
 *
 * Two phases.  The scan holds no global lock: it lists runs/ and tries
 * each entry's lock without blocking, so `sbx run` can call it at start
 * for the price of one readdir.  Only when some entry looks dead does gc
 * take gc.lock exclusively (entries are created and finished under it
 * shared) and look again, entry by entry, before it touches anything.
 *
 * Nothing here follows a symlink out of a temp dir: the tree is walked
 * with one directory fd at a time, opened O_NOFOLLOW relative to its
 * parent and checked by device and inode on the way back up.  Mount
 * points are not crossed (there are none on the host side: a run's mounts
 * live in its own mount namespace and died with it).
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "state-internal.h"

/* How long gc waits for killed tasks to leave a cgroup: 300 x 10 ms. */
#define KILL_ROUNDS 300
#define CGROUP_DEPTH_MAX 32
#define TREE_DEPTH_MAX 4096

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}
#define _cleanup_dir_ _cleanup_(closedirp)

/* A fresh DIR on @fd's directory that does not share @fd's offset. */
static DIR *dir_open_at(int fd, const char *name)
{
	int nfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;

	if (nfd < 0)
		return NULL;
	d = fdopendir(nfd);
	if (!d)
		close(nfd);
	return d;
}

/* --- cgroups --------------------------------------------------------------- */

static int write_file(const char *dir, const char *name, const char *value)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", dir, name);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	return sbx_write_all(fd, value, strlen(value)) < 0 ? -1 : 0;
}

/* SIGKILL every task listed in @dir's cgroup.procs and in its children's.
 * Returns how many were found (so 0 means the subtree is empty). */
static unsigned kill_tree(const char *dir, int depth)
{
	_cleanup_free_ char *procs = sbx_xasprintf("%s/cgroup.procs", dir);
	_cleanup_dir_ DIR *d = NULL;
	unsigned found = 0;
	FILE *f;
	long pid;
	struct dirent *de;

	f = fopen(procs, "re");
	if (f) {
		while (fscanf(f, "%ld", &pid) == 1) {
			if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
				found++;
			else if (pid > 0 && errno != ESRCH)
				found++; /* still there, cannot kill it: count it */
		}
		fclose(f);
	}
	if (depth >= CGROUP_DEPTH_MAX)
		return found;
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		_cleanup_free_ char *child = sbx_xasprintf("%s/%s", dir, de->d_name);
		found += kill_tree(child, depth + 1);
	}
	return found;
}

static bool is_v1_freezer(const char *dir)
{
	static const char root[] = "/sys/fs/cgroup/freezer/";
	_cleanup_free_ char *state = sbx_xasprintf("%s/freezer.state", dir);

	return strncmp(dir, root, sizeof(root) - 1) == 0 && access(state, F_OK) == 0;
}

/* Kill everything in the cgroup at @dir.  v2 has cgroup.kill, atomic
 * against forks.  v1 has not: freeze the tree first where the freezer is
 * one of the run's cgroups, so a fork bomb cannot outrun the kill loop;
 * elsewhere repeat SIGKILL until the tree is empty, with a bound. */
static int cgroup_kill(const char *dir)
{
	bool frozen = false;
	unsigned left = 0;

	if (access(dir, F_OK) < 0)
		return errno == ENOENT ? 0 : -1;
	if (write_file(dir, "cgroup.kill", "1") < 0 && is_v1_freezer(dir))
		frozen = write_file(dir, "freezer.state", "FROZEN") == 0;
	for (int round = 0; round < KILL_ROUNDS; round++) {
		left = kill_tree(dir, 0);
		if (frozen && round == 0)
			/* SIGKILL is delivered to frozen tasks only once they
			 * thaw; they cannot fork in between. */
			write_file(dir, "freezer.state", "THAWED");
		if (left == 0)
			return 0;
		sleep_ms(10);
	}
	sbx_warn("gc: %s: %u tasks still there after SIGKILL", dir, left);
	return -1;
}

/* rmdir the cgroup at @dir after its children.  A cgroup that just lost
 * its last task may stay busy for a moment: retry briefly. */
static int cgroup_remove(const char *dir, int depth)
{
	_cleanup_dir_ DIR *d = NULL;
	struct dirent *de;
	int r = 0;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -1;
	if (depth < CGROUP_DEPTH_MAX) {
		while ((de = readdir(d))) {
			if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") ||
			    !strcmp(de->d_name, ".."))
				continue;
			_cleanup_free_ char *child = sbx_xasprintf("%s/%s", dir, de->d_name);
			if (cgroup_remove(child, depth + 1) < 0)
				r = -1;
		}
	}
	for (int i = 0; i < 100; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return r;
		if (errno != EBUSY)
			break;
		sleep_ms(10);
	}
	sbx_warn("gc: %s: cannot remove cgroup: %s", dir, strerror(errno));
	return -1;
}

static int longer_first(const void *a, const void *b)
{
	size_t la = strlen(*(char *const *)a), lb = strlen(*(char *const *)b);

	return la < lb ? 1 : la > lb ? -1 : 0;
}

static int reap_cgroups(const struct sbx_state_record *rec)
{
	int r = 0;

	for (char **c = rec->cgroups; *c; c++) {
		if (!sbx_state_cgroup_path_ok(*c, rec->run_id)) {
			sbx_warn("gc: %s: cgroup %s is not one of sbx's: left alone", rec->run_id, *c);
			continue;
		}
		if (cgroup_kill(*c) < 0)
			r = -1;
	}
	/* Nested paths (v2 leaf under the run's cgroup) go before parents. */
	qsort(rec->cgroups, sbx_strv_length(rec->cgroups), sizeof(char *), longer_first);
	for (char **c = rec->cgroups; *c; c++)
		if (sbx_state_cgroup_path_ok(*c, rec->run_id) && cgroup_remove(*c, 0) < 0)
			r = -1;
	return r;
}

/* --- temp trees --------------------------------------------------------------- */

struct frame {
	char *name;
	dev_t dev;
	ino_t ino;
};

/* Open @name below @parent as a directory without following a symlink,
 * making it readable and writable for us (the payload may have left a
 * mode 0 directory behind; it is ours, so we may). */
static int open_subdir(int parent, const char *name, struct stat *st)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && errno == EACCES) {
		struct stat lst;
		if (fstatat(parent, name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(lst.st_mode) &&
		    fchmodat(parent, name, 0700, 0) == 0)
			fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0 || ((st->st_mode & 0700) != 0700 && fchmod(fd, 0700) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Remove the directory @name below @parent_fd and everything in it, one
 * level open at a time so depth costs memory for names, not fds.
 */
static int remove_tree(int parent_fd, const char *name)
{
	struct frame *stack = NULL;
	size_t depth = 0;
	int cur = -1, r = -1;
	struct stat st;
	dev_t dev;

	cur = open_subdir(parent_fd, name, &st);
	if (cur < 0)
		return errno == ENOENT ? 0 : -1;
	dev = st.st_dev;
	stack = sbx_xmalloc(sizeof(*stack));
	stack[0] = (struct frame){ sbx_xstrdup(name), st.st_dev, st.st_ino };
	depth = 1;

	for (;;) {
		_cleanup_dir_ DIR *d = dir_open_at(cur, ".");
		_cleanup_free_ char *sub = NULL;
		struct dirent *de;

		if (!d)
			goto out;
		while ((de = readdir(d))) {
			struct stat es;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (fstatat(cur, de->d_name, &es, AT_SYMLINK_NOFOLLOW) < 0) {
				if (errno == ENOENT)
					continue;
				goto out;
			}
			if (!S_ISDIR(es.st_mode)) {
				/* Files, symlinks, fifos, sockets: the name goes,
				 * whatever a symlink points at stays. */
				if (unlinkat(cur, de->d_name, 0) < 0 && errno != ENOENT)
					goto out;
			} else if (es.st_dev != dev) {
				errno = EXDEV; /* a mount point: not ours to empty */
				goto out;
			} else if (!sub) {
				sub = sbx_xstrdup(de->d_name);
			}
		}
		if (sub) {
			int nfd;

			if (depth >= TREE_DEPTH_MAX) {
				errno = ELOOP;
				goto out;
			}
			nfd = open_subdir(cur, sub, &st);
			if (nfd < 0)
				goto out;
			close(cur);
			cur = nfd;
			stack = sbx_xrealloc(stack, (depth + 1) * sizeof(*stack));
			stack[depth++] = (struct frame){ TAKE_PTR(sub), st.st_dev, st.st_ino };
			continue;
		}
		if (depth == 1)
			break;
		/* Up one level; the parent must be the directory we came from,
		 * else something moved the tree under us: stop. */
		{
			int pfd = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (pfd < 0)
				goto out;
			if (fstat(pfd, &st) < 0 || st.st_dev != stack[depth - 2].dev ||
			    st.st_ino != stack[depth - 2].ino) {
				close(pfd);
				errno = ESTALE;
				goto out;
			}
			close(cur);
			cur = pfd;
		}
		depth--;
		if (unlinkat(cur, stack[depth].name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
			free(stack[depth].name);
			goto out;
		}
		free(stack[depth].name);
	}
	close(cur);
	cur = -1;
	r = unlinkat(parent_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -1 : 0;
out:
	if (cur >= 0) {
		int saved = errno;
		close(cur);
		errno = saved;
	}
	for (size_t i = 0; i < depth; i++)
		free(stack[i].name);
	free(stack);
	return r;
}

int sbx_state_remove_tree(int parent_fd, const char *name)
{
	return remove_tree(parent_fd, name);
}

/* Remove one recorded temp path; its shape was checked by the caller. */
static int remove_temp(const char *path)
{
	_cleanup_free_ char *parent = sbx_xstrdup(path);
	_cleanup_close_ int pfd = -1;
	char *slash = strrchr(parent, '/');
	const char *name = path + (slash - parent) + 1;
	struct stat st;

	*slash = '\0';
	pfd = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return errno == ENOENT ? 0 : -1;
	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	/* In a world-writable /tmp, anyone may have planted this name: a
	 * file or directory that is not ours is left alone. */
	if (st.st_uid != geteuid()) {
		sbx_warn("gc: %s: owned by uid %u, not ours: left alone", path, (unsigned)st.st_uid);
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return unlinkat(pfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	return remove_tree(pfd, name);
}

static int reap_temps(const struct sbx_state_record *rec)
{
	int r = 0;

	for (char **t = rec->temps; *t; t++) {
		if (!sbx_state_temp_path_ok(*t, rec->run_id)) {
			sbx_warn("gc: %s: temp path %s is not one of sbx's: left alone", rec->run_id,
				 *t);
			continue;
		}
		if (remove_temp(*t) < 0) {
			sbx_warn("gc: %s: cannot remove: %s", *t, strerror(errno));
			r = -1;
		}
	}
	return r;
}

/* --- entries ------------------------------------------------------------------- */

/* True when @name's lock can be taken (or is missing): its sbx is gone,
 * or it is being created or finished right now (decided under gc.lock). */
static bool entry_maybe_dead(int runs_fd, const char *name)
{
	_cleanup_close_ int dfd = openat(runs_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
	_cleanup_close_ int lfd = -1;

	if (dfd < 0)
		return false;
	lfd = openat(dfd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0)
		return errno == ENOENT;
	return flock(lfd, LOCK_EX | LOCK_NB) == 0;
}

/* Under gc.lock: reap @name if dead.  1 reaped, 0 live or gone, -1 kept. */
static int reap_entry(int runs_fd, const char *name)
{
	_cleanup_close_ int dfd = -1, lfd = -1;
	struct sbx_state_record rec;
	struct sbx_error e = { 0 };
	char buf[sizeof(e.msg) + 128];
	int r = 0;

	dfd = openat(runs_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	/* Creation holds gc.lock shared, so a missing lock file here is a
	 * crash between mkdir and open, or a finish half done: dead. */
	lfd = openat(dfd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) < 0)
		return 0;

	if (sbx_state_record_read(dfd, &rec, &e) == 0) {
		if (strcmp(rec.run_id, name) != 0) {
			sbx_warn("gc: %s: state.json names run %s: its paths are ignored", name,
				 rec.run_id);
		} else {
			if (reap_cgroups(&rec) < 0)
				r = -1;
			if (reap_temps(&rec) < 0)
				r = -1;
		}
		sbx_state_record_free(&rec);
	} else if (e.errnum != ENOENT) {
		sbx_warn("gc: %s: %s: removing the entry anyway", name,
			 sbx_error_text(&e, buf, sizeof(buf)));
	}
	if (r < 0) {
		sbx_warn("gc: %s: not everything could be cleaned; kept for a later gc", name);
		return -1;
	}
	unlinkat(dfd, "state.json", 0);
	unlinkat(dfd, "state.json.tmp", 0);
	unlinkat(dfd, "lock", 0);
	if (unlinkat(runs_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
		sbx_warn("gc: %s: cannot remove the entry: %s", name, strerror(errno));
		return -1;
	}
	return 1;
}

int sbx_state_gc(const char *state_dir, unsigned *reaped, struct sbx_error *err)
{
	_cleanup_free_ char *runs = sbx_xasprintf("%s/runs", state_dir);
	_cleanup_close_ int runs_fd = -1, gc_fd = -1;
	_cleanup_strv_free_ char **dead = NULL;
	_cleanup_dir_ DIR *d = NULL;
	size_t n = 0;
	struct dirent *de;
	unsigned count = 0;

	if (reaped)
		*reaped = 0;
	runs_fd = open(runs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (runs_fd < 0) {
		if (errno == ENOENT)
			return 0;
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: cannot open", runs);
	}
	d = dir_open_at(runs_fd, ".");
	if (!d)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: cannot read", runs);
	dead = sbx_xcalloc(1, sizeof(char *));
	while ((de = readdir(d))) {
		/* Only names sbx gives entries; anything else is not ours. */
		if (!sbx_run_id_valid(de->d_name) || !entry_maybe_dead(runs_fd, de->d_name))
			continue;
		dead = sbx_xrealloc(dead, (n + 2) * sizeof(char *));
		dead[n++] = sbx_xstrdup(de->d_name);
		dead[n] = NULL;
	}
	if (n == 0)
		return 0;

	gc_fd = sbx_state_lock_file(state_dir, "gc.lock", LOCK_EX, err);
	if (gc_fd < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (reap_entry(runs_fd, dead[i]) > 0)
			count++;
	if (reaped)
		*reaped = count;
	return 0;
}
