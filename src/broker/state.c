/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * state.c - the state directory and one run's entry in it; `sbx cancel`.
 *
 * An entry is created under gc.lock held shared, and reaped under gc.lock
 * held exclusively (gc.c), so gc never sees a half-created entry: inside
 * the exclusive section, an entry whose lock file is missing or free is
 * certainly a dead run's.  Every path in state.json is checked against the
 * shape sbx itself gives such paths, here when it is recorded and again in
 * gc before anything is deleted or killed, so a tampered state.json cannot
 * direct gc at arbitrary files or cgroups.
 */
#include "config.h"

#include <fcntl.h>
#include <linux/limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/pidfd.h>
#include <sys/stat.h>

#include "state-internal.h"
#include "trustdir.h"

#define STATE_JSON_MAX (1024 * 1024)
#define STATE_LIST_MAX 64

struct sbx_run_state {
	char *state_dir;
	char *dir; /* <state>/runs/<run_id> */
	int dir_fd;
	int lock_fd;
	char run_id[SBX_RUN_ID_LEN + 1];
	char *principal;
	char *profile;
	pid_t broker_pid;
	uint64_t broker_start;
	uint64_t start_ms;
	uid_t uid;
	char **cgroups; /* NULL-terminated */
	char **temps;
};

/* --- paths ------------------------------------------------------------- */

/* Absolute, no empty, "." or ".." components, no trailing slash, no
 * control characters: a path whose meaning is its spelling. */
static bool path_clean(const char *p)
{
	size_t len = strlen(p);

	if (len < 2 || len >= PATH_MAX || p[0] != '/' || p[len - 1] == '/')
		return false;
	if (sbx_has_control(p, len))
		return false;
	for (const char *c = p; *c;) {
		const char *end;
		size_t n;

		c++; /* skip '/' */
		end = strchrnul(c, '/');
		n = (size_t)(end - c);
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c = end;
	}
	return true;
}

bool sbx_state_cgroup_path_ok(const char *path, const char *run_id)
{
	static const char root[] = "/sys/fs/cgroup/";

	if (!path_clean(path) || strncmp(path, root, sizeof(root) - 1) != 0)
		return false;
	/* The run id must appear in a component below the cgroupfs root, so
	 * neither a hierarchy root nor another run's cgroup qualifies. */
	return strstr(path + sizeof(root) - 1, run_id) != NULL;
}

/* $TMPDIR when usable, else /tmp, without trailing slashes. */
char *sbx_state_temp_base(void)
{
	const char *t = getenv("TMPDIR");
	char *s;
	size_t n;

	if (!t || t[0] != '/')
		return sbx_xstrdup("/tmp");
	s = sbx_xstrdup(t);
	n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	if (!path_clean(s) && strcmp(s, "/") != 0) {
		free(s);
		return sbx_xstrdup("/tmp");
	}
	return s;
}

char *sbx_state_temp_path(const char *run_id, const char *suffix)
{
	_cleanup_free_ char *base = sbx_state_temp_base();

	return sbx_xasprintf("%s/sbx-run-%s%s", strcmp(base, "/") ? base : "", run_id, suffix);
}

bool sbx_state_temp_path_ok(const char *path, const char *run_id)
{
	_cleanup_free_ char *base = sbx_state_temp_base();
	_cleanup_free_ char *prefix = sbx_xasprintf("sbx-run-%s", run_id);
	const char *slash, *name;
	size_t dlen;

	if (!path_clean(path))
		return false;
	slash = strrchr(path, '/');
	name = slash + 1;
	dlen = (size_t)(slash - path);
	if (strncmp(name, prefix, strlen(prefix)) != 0)
		return false;
	/* Directly inside /tmp or $TMPDIR: never deeper, never elsewhere. */
	if (dlen == 4 && strncmp(path, "/tmp", 4) == 0)
		return true;
	if (strcmp(base, "/") == 0)
		return dlen == 0;
	return strlen(base) == dlen && strncmp(path, base, dlen) == 0;
}

/* --- the state directory ------------------------------------------------- */

int sbx_state_dir(const char *config_state_dir, char **out, struct sbx_error *err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct sbx_trust self = { 0 };
	struct stat st;

	/* Root gets /run/sbx whatever its environment says, so that runs
	 * started from a login shell and from sudo see each other. */
	if (config_state_dir) {
		if (config_state_dir[0] != '/')
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
					     "config: state_dir: must be an absolute path");
		path = sbx_xstrdup(config_state_dir);
	} else if (geteuid() == 0) {
		path = sbx_xstrdup("/run/sbx");
	} else if (xdg && xdg[0] == '/') {
		path = sbx_xasprintf("%s/sbx", xdg);
	} else {
		path = sbx_xasprintf("/tmp/sbx-%u", (unsigned)geteuid());
	}

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: cannot create state directory",
				     path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno,
				     "%s: state directory: not a directory (or a symlink)", path);
	if (fstat(fd, &st) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: state directory", path);
	/* Another user's directory (say a pre-created /tmp/sbx-<uid>) could
	 * feed us forged entries and steal our locks: refuse it. */
	sbx_trust_add(&self, geteuid());
	if (sbx_dir_check(&st, path, "state directory", &self, err) < 0)
		return -1;
	*out = TAKE_PTR(path);
	return 0;
}

int sbx_state_lock_file(const char *state_dir, const char *name, int op, struct sbx_error *err)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", state_dir, name);
	_cleanup_close_ int fd = -1;

	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: cannot open", path);
	while (flock(fd, op) < 0) {
		if (errno == EINTR)
			continue;
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: cannot lock", path);
	}
	return TAKE_FD(fd);
}

/* --- /proc --------------------------------------------------------------- */

int sbx_state_proc_start(pid_t pid, uint64_t *out)
{
	char path[64], buf[1024];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	char *p, *end;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = sbx_read_all(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	/* comm may contain spaces and parentheses: fields start after the
	 * last ')'.  Then state is field 3 and starttime field 22. */
	p = strrchr(buf, ')');
	if (!p) {
		errno = EINVAL;
		return -1;
	}
	p++;
	for (int field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (!*p) {
			errno = EINVAL;
			return -1;
		}
		if (field == 22) {
			errno = 0;
			*out = strtoull(p, &end, 10);
			if (errno || end == p) {
				errno = EINVAL;
				return -1;
			}
			return 0;
		}
		p = strchrnul(p, ' ');
	}
	errno = EINVAL;
	return -1;
}

/* --- state.json -------------------------------------------------------------- */

static json_t *strv_json(char **v)
{
	json_t *a = json_array();

	for (; v && *v; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

int sbx_state_save(struct sbx_run_state *st, struct sbx_error *err)
{
	_cleanup_state_json_ json_t *o = json_object();
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	char when[32];

	sbx_format_rfc3339_ms(st->start_ms, when);
	json_object_set_new(o, "run_id", json_string(st->run_id));
	json_object_set_new(o, "broker_pid", json_integer(st->broker_pid));
	json_object_set_new(o, "broker_start", json_integer((json_int_t)st->broker_start));
	json_object_set_new(o, "started_at", json_string(when));
	json_object_set_new(o, "uid", json_integer(st->uid));
	json_object_set_new(o, "principal", st->principal ? json_string(st->principal) : json_null());
	json_object_set_new(o, "profile", st->profile ? json_string(st->profile) : json_null());
	json_object_set_new(o, "cgroups", strv_json(st->cgroups));
	json_object_set_new(o, "temps", strv_json(st->temps));
	text = json_dumps(o, JSON_INDENT(1));
	if (!text)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, ENOMEM, "%s/state.json: cannot encode",
				     st->dir);

	/* tmp + rename: a reader (gc after a crash) sees the old or the new
	 * file, never half of one. */
	fd = openat(st->dir_fd, "state.json.tmp",
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s/state.json.tmp: cannot create",
				     st->dir);
	if (sbx_write_all(fd, text, strlen(text)) < 0 || sbx_write_all(fd, "\n", 1) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s/state.json.tmp: cannot write",
				     st->dir);
	if (renameat(st->dir_fd, "state.json.tmp", st->dir_fd, "state.json") < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s/state.json: cannot replace",
				     st->dir);
	return 0;
}

static int get_strv(json_t *o, const char *key, char ***out)
{
	json_t *a = json_object_get(o, key);
	size_t i;
	json_t *v;
	char **r;

	if (!json_is_array(a) || json_array_size(a) > STATE_LIST_MAX)
		return -1;
	r = sbx_xcalloc(json_array_size(a) + 1, sizeof(char *));
	json_array_foreach(a, i, v) {
		if (!json_is_string(v)) {
			sbx_strv_free(r);
			return -1;
		}
		r[i] = sbx_xstrdup(json_string_value(v));
	}
	*out = r;
	return 0;
}

static bool get_int(json_t *o, const char *key, json_int_t min, json_int_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < min)
		return false;
	*out = json_integer_value(v);
	return true;
}

int sbx_state_record_read(int entry_fd, struct sbx_state_record *rec, struct sbx_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = sbx_xmalloc(STATE_JSON_MAX + 1);
	ssize_t n;

	memset(rec, 0, sizeof(*rec));
	fd = openat(entry_fd, "state.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "state.json: cannot open");
	n = sbx_read_all(fd, buf, STATE_JSON_MAX + 1);
	if (n < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "state.json: cannot read");
	return sbx_state_record_parse(buf, (size_t)n, rec, err);
}

int sbx_state_record_parse(const char *buf, size_t n, struct sbx_state_record *rec,
			   struct sbx_error *err)
{
	_cleanup_state_json_ json_t *o = NULL;
	json_int_t pid, start, uid;
	const char *id;

	memset(rec, 0, sizeof(*rec));
	if (n > STATE_JSON_MAX)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "state.json: larger than 1 MiB");
	o = json_loadb(buf, n, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(o))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "state.json: not a JSON object");
	id = json_string_value(json_object_get(o, "run_id"));
	if (!sbx_run_id_valid(id))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "state.json: run_id: malformed");
	if (!get_int(o, "broker_pid", 1, &pid) || pid > INT32_MAX)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "state.json: broker_pid: malformed");
	if (!get_int(o, "broker_start", 0, &start))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "state.json: broker_start: malformed");
	if (!get_int(o, "uid", 0, &uid) || uid > UINT32_MAX)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "state.json: uid: malformed");
	memcpy(rec->run_id, id, SBX_RUN_ID_LEN + 1);
	rec->broker_pid = (pid_t)pid;
	rec->broker_start = (uint64_t)start;
	rec->uid = (uid_t)uid;
	if (get_strv(o, "cgroups", &rec->cgroups) < 0 || get_strv(o, "temps", &rec->temps) < 0) {
		sbx_state_record_free(rec);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "state.json: cgroups/temps: expected arrays of strings");
	}
	return 0;
}

void sbx_state_record_free(struct sbx_state_record *rec)
{
	sbx_strv_free(rec->cgroups);
	sbx_strv_free(rec->temps);
	rec->cgroups = rec->temps = NULL;
}

/* --- one run's entry ------------------------------------------------------------ */

static void state_free(struct sbx_run_state *st)
{
	if (st->dir_fd >= 0)
		close(st->dir_fd);
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	free(st->state_dir);
	free(st->dir);
	free(st->principal);
	free(st->profile);
	sbx_strv_free(st->cgroups);
	sbx_strv_free(st->temps);
	free(st);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct sbx_run_state *, state_free)

/* Remove the entry's files and directory; errors are ignored because the
 * caller is either finishing (nothing to report to) or undoing a failed
 * create (the first error is what matters). */
static void entry_remove(struct sbx_run_state *st)
{
	unlinkat(st->dir_fd, "state.json", 0);
	unlinkat(st->dir_fd, "state.json.tmp", 0);
	unlinkat(st->dir_fd, "lock", 0);
	rmdir(st->dir);
}

int sbx_state_create(const char *state_dir, const char *run_id, const char *principal,
		     struct sbx_run_state **out, struct sbx_error *err)
{
	return sbx_state_create_run(state_dir, run_id, principal, NULL, out, err);
}

int sbx_state_create_run(const char *state_dir, const char *run_id, const char *principal,
			 const char *profile, struct sbx_run_state **out, struct sbx_error *err)
{
	_cleanup_(state_freep) struct sbx_run_state *st = NULL;
	_cleanup_close_ int gc_fd = -1;
	_cleanup_free_ char *runs = NULL;
	int locked = -1;

	if (!sbx_run_id_valid(run_id))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "state: malformed run id");
	/* Shared: many runs may register at once, but not while gc reaps. */
	gc_fd = sbx_state_lock_file(state_dir, "gc.lock", LOCK_SH, err);
	if (gc_fd < 0)
		return -1;

	runs = sbx_xasprintf("%s/runs", state_dir);
	if (mkdir(runs, 0700) < 0 && errno != EEXIST)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: cannot create", runs);

	st = sbx_xcalloc(1, sizeof(*st));
	st->dir_fd = st->lock_fd = -1;
	st->state_dir = sbx_xstrdup(state_dir);
	st->dir = sbx_xasprintf("%s/%s", runs, run_id);
	memcpy(st->run_id, run_id, sizeof(st->run_id));
	st->principal = principal ? sbx_xstrdup(principal) : NULL;
	st->profile = profile ? sbx_xstrdup(profile) : NULL;
	st->broker_pid = getpid();
	st->uid = getuid();
	st->start_ms = sbx_now_real_ms();
	st->cgroups = sbx_xcalloc(1, sizeof(char *));
	st->temps = sbx_xcalloc(1, sizeof(char *));
	if (sbx_state_proc_start(st->broker_pid, &st->broker_start) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "/proc/self/stat: cannot read");

	if (mkdir(st->dir, 0700) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: cannot create run entry",
				     st->dir);
	st->dir_fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (st->dir_fd < 0) {
		sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: cannot open", st->dir);
		rmdir(st->dir);
		return -1;
	}
	st->lock_fd = openat(st->dir_fd, "lock", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			     0600);
	/* Blocking: between the create and the flock, another run's gc
	 * probe (entry_maybe_dead) or a cancel may hold this lock for an
	 * instant - they take it without blocking and let go at once, and
	 * none of them reaps while this holds gc.lock shared. */
	if (st->lock_fd >= 0)
		do
			locked = flock(st->lock_fd, LOCK_EX);
		while (locked < 0 && errno == EINTR);
	if (locked < 0) {
		sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s/lock: cannot create and lock",
			      st->dir);
		entry_remove(st);
		return -1;
	}
	if (sbx_state_save(st, err) < 0) {
		entry_remove(st);
		return -1;
	}
	*out = TAKE_PTR(st);
	return 0;
}

const char *sbx_state_run_id(const struct sbx_run_state *st)
{
	return st->run_id;
}

void sbx_state_set_stage(struct sbx_run_state *st, const char *stage)
{
	char word[SBX_STATE_STAGE_LEN];

	if (!st)
		return;
	/* One pwrite of a fixed-size record over the old one: no rename,
	 * no new file, ~1 us on the run's path; a reader that catches a
	 * torn record sees no known word and says "unknown". */
	snprintf(word, sizeof(word), "%-*s", (int)sizeof(word) - 1, stage);
	word[sizeof(word) - 1] = '\n';
	(void)!pwrite(st->lock_fd, word, sizeof(word), 0);
}

static int add_path(struct sbx_run_state *st, char ***list, const char *path, const char *what,
		    struct sbx_error *err)
{
	size_t n = sbx_strv_length(*list);

	if (n >= STATE_LIST_MAX)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "state: more than %d %s paths",
				     STATE_LIST_MAX, what);
	*list = sbx_xrealloc(*list, (n + 2) * sizeof(char *));
	(*list)[n] = sbx_xstrdup(path);
	(*list)[n + 1] = NULL;
	/* Not saved here: a run records all its paths, then saves once
	 * (each save is a write and a rename on the start-up path). */
	return 0;
}

int sbx_state_add_cgroup(struct sbx_run_state *st, const char *path, struct sbx_error *err)
{
	if (!sbx_state_cgroup_path_ok(path, st->run_id))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "state: cgroup %s: not under /sys/fs/cgroup or not named for run %s",
				     path, st->run_id);
	return add_path(st, &st->cgroups, path, "cgroup", err);
}

int sbx_state_add_temp(struct sbx_run_state *st, const char *path, struct sbx_error *err)
{
	if (!sbx_state_temp_path_ok(path, st->run_id))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "state: temp %s: not $TMPDIR/sbx-run-%s*", path, st->run_id);
	return add_path(st, &st->temps, path, "temp", err);
}

void sbx_state_finish(struct sbx_run_state *st)
{
	_cleanup_close_ int gc_fd = -1;

	if (!st)
		return;
	/* Shared with other runs, exclusive of gc, which then never finds
	 * a half-removed entry.  Failing to take it only loses that nicety. */
	gc_fd = sbx_state_lock_file(st->state_dir, "gc.lock", LOCK_SH, NULL);
	entry_remove(st);
	state_free(st);
}

/* --- sbx cancel ------------------------------------------------------------------ */

/* "no such live run" and where to look instead; @why is "" or " (...)". */
static int no_live_run(struct sbx_error *err, const char *run_id, const char *why)
{
	sbx_error_set(err, SBX_EXIT_FAILED, 0, "cancel: %s: no such live run%s", run_id, why);
	sbx_error_hint(err, "'sbx ps' lists the live runs you may cancel; a run that has ended "
			    "is over, and its manifest has its outcome");
	return -1;
}

int sbx_state_cancel(const char *state_dir, const char *run_id, struct sbx_error *err)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dir_fd = -1, lock_fd = -1, pidfd = -1;
	struct sbx_state_record rec;
	uint64_t start;

	if (!sbx_run_id_valid(run_id))
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "cancel: malformed run id (expected 32 lowercase hex digits)");
	dir = sbx_xasprintf("%s/runs/%s", state_dir, run_id);
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir_fd >= 0)
		lock_fd = openat(dir_fd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (lock_fd < 0)
		return no_live_run(err, run_id, "");
	/* Taking the lock means no sbx holds it: the run is over. */
	if (flock(lock_fd, LOCK_EX | LOCK_NB) == 0)
		return no_live_run(err, run_id, " (its sbx has exited)");
	if (sbx_state_record_read(dir_fd, &rec, err) < 0) {
		sbx_error_prefix(err, "cancel: %s: ", run_id);
		return -1;
	}
	sbx_strv_free(TAKE_PTR(rec.cgroups));
	sbx_strv_free(TAKE_PTR(rec.temps));
	if (strcmp(rec.run_id, run_id) != 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "cancel: %s: state.json names another run", run_id);
	if (getuid() != 0 && rec.uid != getuid())
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "cancel: %s: not your run (owned by uid %u)", run_id,
				     (unsigned)rec.uid);

	/* Pin the process first, then check it is the one recorded: if the
	 * pid was reused after pidfd_open, /proc shows the new process's
	 * start time and the check fails; if it matches, the pidfd refers
	 * to our sbx and the signal cannot reach anyone else. */
	pidfd = pidfd_open(rec.broker_pid, 0);
	if (pidfd < 0) {
		if (errno == ESRCH)
			return no_live_run(err, run_id, " (its sbx has exited)");
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "cancel: %s: pidfd_open(%d)",
				     run_id, (int)rec.broker_pid);
	}
	if (sbx_state_proc_start(rec.broker_pid, &start) < 0 || start != rec.broker_start)
		return no_live_run(err, run_id, " (its pid is another process now)");
	if (pidfd_send_signal(pidfd, SIGTERM, NULL, 0) < 0) {
		if (errno == ESRCH)
			return no_live_run(err, run_id, " (its sbx has exited)");
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "cancel: %s: cannot signal pid %d",
				     run_id, (int)rec.broker_pid);
	}
	return 0;
}
