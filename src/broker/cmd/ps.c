/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ps.c - `sbx ps` (see ps.h and docs/state.md).
 *
 * A run is live while its sbx holds the entry's lock (state.h); the stage
 * is the word the run keeps in that lock file (sbx_state_set_stage), and
 * the memory is what its cgroup uses now.  Nothing here writes: the lock
 * is only probed, shared and without blocking, and let go at once.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "hostconfig.h"
#include "ps.h"
#include "state-internal.h"

#define STATE_JSON_MAX (1024 * 1024)
#define SHOWN_MAX 64 /* bytes of a recorded name shown or listed */

static const char *const stages[] = {
	"queued", "materializing", "running", "terminating", "collecting", "validating",
	"cleaning",
};

/* The stage word of a lock file's record, or "starting" for an empty
 * record (the entry was made an instant ago), or "unknown". */
static const char *stage_of(const char *w, size_t n)
{
	size_t len = 0;

	while (len < n && w[len] != ' ' && w[len] != '\n')
		len++;
	if (len == 0)
		return "starting";
	for (size_t i = 0; i < ARRAY_SIZE(stages); i++)
		if (strlen(stages[i]) == len && !memcmp(stages[i], w, len))
			return stages[i];
	return "unknown";
}

/* A recorded name, capped; NULL when absent or not a string. */
static char *name_from(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? sbx_xstrndup(s, SHOWN_MAX) : NULL;
}

/* "2026-11-30T02:10:27.123Z" -> ms since the epoch; 0 when malformed. */
static uint64_t parse_rfc3339_ms(const char *s)
{
	struct tm tm = { 0 };
	unsigned ms = 0;
	int used = 0;
	time_t t;

	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3uZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			 &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &used) != 7 || s[used])
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t = timegm(&tm);
	return t < 0 ? 0 : (uint64_t)t * 1000 + ms;
}

int sbx_ps_entry_parse(const char *run_id, uid_t owner, const char *state_json, size_t n,
		       const char *lock_word, size_t lock_n, bool live, struct sbx_ps_entry *e,
		       struct sbx_error *err)
{
	struct sbx_state_record rec;
	_cleanup_state_json_ json_t *o = NULL;

	memset(e, 0, sizeof(*e));
	if (sbx_state_record_parse(state_json, n, &rec, err) < 0)
		return -1;
	sbx_state_record_free(&rec);
	if (strcmp(rec.run_id, run_id) != 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "state.json: names run %s", rec.run_id);
	if (rec.uid != owner)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "state.json: names uid %u, not %u",
				     (unsigned)rec.uid, (unsigned)owner);
	/* Parsed once more for what only ps shows: the record checks above
	 * passed, so this cannot fail. */
	o = json_loadb(state_json, n, 0, NULL);
	memcpy(e->run_id, rec.run_id, sizeof(e->run_id));
	e->uid = rec.uid;
	e->pid = rec.broker_pid;
	e->principal = name_from(o, "principal");
	e->profile = name_from(o, "profile");
	e->started_ms = parse_rfc3339_ms(json_string_value(json_object_get(o, "started_at")));
	e->state = live ? stage_of(lock_word, lock_n) : "stale";
	return 0;
}

/* --- reading an entry ------------------------------------------------------- */

/* Open @name in @dir_fd for reading: a regular file of @owner, never a
 * link, never a fifo that would block. */
static int open_owned(int dir_fd, const char *name, uid_t owner, struct stat *st)
{
	_cleanup_close_ int fd = openat(dir_fd, name,
					O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, st) < 0)
		return -1;
	if (!S_ISREG(st->st_mode) || st->st_uid != owner) {
		errno = EPERM;
		return -1;
	}
	return TAKE_FD(fd);
}

/* Current memory of the run's cgroup: memory.current (v2) or
 * memory.usage_in_bytes (v1) of a recorded cgroup that is the run's. */
static bool read_memory(char **cgroups, const char *run_id, uint64_t *out)
{
	static const char *const files[] = { "memory.current", "memory.usage_in_bytes" };

	for (char **c = cgroups; c && *c; c++) {
		if (!sbx_state_cgroup_path_ok(*c, run_id))
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
			_cleanup_free_ char *p = sbx_xasprintf("%s/%s", *c, files[i]);
			_cleanup_close_ int fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			char buf[32];
			ssize_t n;
			char *end;

			if (fd < 0)
				continue;
			n = sbx_read_all(fd, buf, sizeof(buf) - 1);
			if (n <= 0)
				continue;
			buf[n] = '\0';
			errno = 0;
			*out = strtoull(buf, &end, 10);
			if (!errno && end != buf && (*end == '\n' || *end == '\0'))
				return true;
		}
	}
	return false;
}

static void scan_one(int runs_fd, const char *name, uid_t owner, struct sbx_ps_list *l)
{
	_cleanup_close_ int dfd = -1, sfd = -1, lfd = -1;
	_cleanup_free_ char *buf = NULL;
	struct sbx_state_record rec;
	struct sbx_ps_entry e;
	char word[SBX_STATE_STAGE_LEN];
	struct stat st;
	ssize_t n, wn;
	bool live;

	dfd = openat(runs_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_uid != owner)
		return;
	lfd = open_owned(dfd, "lock", owner, &st);
	sfd = open_owned(dfd, "state.json", owner, &st);
	if (lfd < 0 || sfd < 0 || st.st_size > STATE_JSON_MAX)
		return;
	/* Free to take: no sbx holds it, the run is over. */
	live = flock(lfd, LOCK_SH | LOCK_NB) < 0;
	if (!live)
		flock(lfd, LOCK_UN);
	wn = pread(lfd, word, sizeof(word), 0);
	buf = sbx_xmalloc(STATE_JSON_MAX + 1);
	n = sbx_read_all(sfd, buf, STATE_JSON_MAX + 1);
	if (n < 0 ||
	    sbx_ps_entry_parse(name, owner, buf, (size_t)n, word, wn > 0 ? (size_t)wn : 0, live, &e,
			       NULL) < 0)
		return;
	if (sbx_state_record_parse(buf, (size_t)n, &rec, NULL) == 0) {
		e.has_memory = read_memory(rec.cgroups, e.run_id, &e.memory_bytes);
		sbx_state_record_free(&rec);
	}
	l->v = sbx_xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = e;
}

int sbx_ps_scan(int state_fd, uid_t owner, struct sbx_ps_list *l, struct sbx_error *err)
{
	int runs_fd = openat(state_fd, "runs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	if (runs_fd < 0) {
		if (errno == ENOENT)
			return 0; /* no run has been made here yet */
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "runs: cannot open");
	}
	d = fdopendir(runs_fd);
	if (!d) {
		close(runs_fd);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "runs: cannot read");
	}
	while ((de = readdir(d)))
		if (sbx_run_id_valid(de->d_name))
			scan_one(dirfd(d), de->d_name, owner, l);
	closedir(d);
	return 0;
}

static int by_run_id(const void *a, const void *b)
{
	return strcmp(((const struct sbx_ps_entry *)a)->run_id,
		      ((const struct sbx_ps_entry *)b)->run_id);
}

void sbx_ps_sort(struct sbx_ps_list *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), by_run_id);
}

void sbx_ps_list_free(struct sbx_ps_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].user);
		free(l->v[i].principal);
		free(l->v[i].profile);
	}
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* --- output ------------------------------------------------------------------ */

void sbx_ps_format_elapsed(uint64_t ms, char out[16])
{
	uint64_t s = ms / 1000;

	if (s < 60)
		snprintf(out, 16, "%llu.%llus", (unsigned long long)s,
			 (unsigned long long)(ms % 1000 / 100));
	else if (s < 3600)
		snprintf(out, 16, "%llum%02llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else if (s < 86400)
		snprintf(out, 16, "%lluh%02llum", (unsigned long long)(s / 3600),
			 (unsigned long long)(s % 3600 / 60));
	else
		snprintf(out, 16, "%llud%02lluh", (unsigned long long)(s / 86400),
			 (unsigned long long)(s % 86400 / 3600));
}

static uint64_t elapsed_of(const struct sbx_ps_entry *e, uint64_t now_ms)
{
	return e->started_ms && now_ms > e->started_ms ? now_ms - e->started_ms : 0;
}

json_t *sbx_ps_json(const struct sbx_ps_list *l, uint64_t now_ms)
{
	json_t *a = json_array();

	for (size_t i = 0; i < l->n; i++) {
		const struct sbx_ps_entry *e = &l->v[i];
		char when[32];
		json_t *o = json_object();

		json_object_set_new(o, "run_id", json_string(e->run_id));
		json_object_set_new(o, "uid", json_integer(e->uid));
		json_object_set_new(o, "user", e->user ? json_string(e->user) : json_null());
		json_object_set_new(o, "principal", e->principal ? json_string(e->principal) : json_null());
		json_object_set_new(o, "profile", e->profile ? json_string(e->profile) : json_null());
		json_object_set_new(o, "state", json_string(e->state));
		json_object_set_new(o, "pid", json_integer(e->pid));
		if (e->started_ms) {
			sbx_format_rfc3339_ms(e->started_ms, when);
			json_object_set_new(o, "started_at", json_string(when));
			json_object_set_new(o, "elapsed_ms", json_integer((json_int_t)elapsed_of(e, now_ms)));
		} else {
			json_object_set_new(o, "started_at", json_null());
			json_object_set_new(o, "elapsed_ms", json_null());
		}
		json_object_set_new(o, "memory_bytes",
				    e->has_memory ? json_integer((json_int_t)e->memory_bytes) : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

/* A recorded name for a terminal: anything but printable ASCII (escape
 * sequences a forged entry could carry, blanks that would break the
 * columns) becomes '?'; absent is "-". */
static char *cell(const char *s)
{
	char *c;

	if (!s || !*s)
		return sbx_xstrdup("-");
	c = sbx_xstrdup(s);
	for (char *p = c; *p; p++)
		if (*p <= ' ' || *p >= 0x7f)
			*p = '?';
	return c;
}

#define NCOLS 7

char *sbx_ps_table(const struct sbx_ps_list *l, uint64_t now_ms)
{
	static const char *const head[NCOLS] = { "RUN ID", "USER", "PRINCIPAL", "PROFILE",
						 "STATE", "ELAPSED", "MEMORY" };
	char ***rows = sbx_xcalloc(l->n, sizeof(char **));
	size_t width[NCOLS];
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	for (int c = 0; c < NCOLS; c++)
		width[c] = strlen(head[c]);
	for (size_t i = 0; i < l->n; i++) {
		const struct sbx_ps_entry *e = &l->v[i];
		char el[16];

		rows[i] = sbx_xcalloc(NCOLS, sizeof(char *));
		rows[i][0] = sbx_xstrdup(e->run_id);
		rows[i][1] = e->user ? cell(e->user) : sbx_xasprintf("%u", (unsigned)e->uid);
		rows[i][2] = cell(e->principal);
		rows[i][3] = cell(e->profile);
		rows[i][4] = sbx_xstrdup(e->state);
		if (e->started_ms) {
			sbx_ps_format_elapsed(elapsed_of(e, now_ms), el);
			rows[i][5] = sbx_xstrdup(el);
		} else {
			rows[i][5] = sbx_xstrdup("-");
		}
		rows[i][6] = e->has_memory ?
			sbx_xasprintf("%llu.%llu MiB", (unsigned long long)(e->memory_bytes >> 20),
				      (unsigned long long)((e->memory_bytes & ((1u << 20) - 1)) * 10 >> 20)) :
			sbx_xstrdup("-");
		for (int c = 0; c < NCOLS; c++)
			if (strlen(rows[i][c]) > width[c])
				width[c] = strlen(rows[i][c]);
	}
	f = open_memstream(&out, &len);
	for (size_t i = 0; f && i <= l->n; i++) {
		for (int c = 0; c < NCOLS; c++) {
			const char *s = i == 0 ? head[c] : rows[i - 1][c];
			if (c < NCOLS - 1)
				fprintf(f, "%-*s  ", (int)width[c], s);
			else
				fprintf(f, "%s\n", s);
		}
	}
	if (f && fclose(f) != 0) {
		free(out);
		out = NULL;
	}
	for (size_t i = 0; i < l->n; i++) {
		for (int c = 0; c < NCOLS; c++)
			free(rows[i][c]);
		free(rows[i]);
	}
	free(rows);
	return out;
}

/* --- root: every user's default state directory ------------------------------- */

/* "<prefix><uid>" -> uid; false for anything else (leading zeros too). */
static bool uid_name(const char *name, const char *prefix, uid_t *uid)
{
	size_t pl = strlen(prefix);
	const char *d = name + pl;
	unsigned long long v = 0;

	if (strncmp(name, prefix, pl) != 0 || !*d || (d[0] == '0' && d[1]) || strlen(d) > 10)
		return false;
	for (const char *c = d; *c; c++) {
		if (*c < '0' || *c > '9')
			return false;
		v = v * 10 + (unsigned)(*c - '0');
	}
	if (v == 0 || v >= UINT32_MAX)
		return false;
	*uid = (uid_t)v;
	return true;
}

/*
 * Where `sbx run` puts a user's state directory by default:
 * /run/user/<uid>/sbx ($XDG_RUNTIME_DIR under systemd-logind) and
 * /tmp/sbx-<uid>.  Each must be a directory, reached without following a
 * link, owned by the uid its name gives and writable by no one else: a
 * user can make /tmp/sbx-<someone else's uid>, but not one owned by that
 * uid, so no user can pass runs off as another's.  Root's own directory
 * (@own) is not listed twice.
 */
static void scan_users(const struct stat *own, struct sbx_ps_list *l)
{
	static const struct {
		const char *base, *prefix, *sub;
	} places[] = {
		{ "/run/user", "", "sbx" },
		{ "/tmp", "sbx-", NULL },
	};

	for (size_t p = 0; p < ARRAY_SIZE(places); p++) {
		int bfd = open(places[p].base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *d = bfd >= 0 ? fdopendir(bfd) : NULL;
		struct dirent *de;

		if (!d) {
			if (bfd >= 0)
				close(bfd);
			continue;
		}
		while ((de = readdir(d))) {
			_cleanup_close_ int ufd = -1, sfd = -1;
			struct stat st;
			uid_t uid;

			if (!uid_name(de->d_name, places[p].prefix, &uid))
				continue;
			ufd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (ufd < 0)
				continue;
			sfd = places[p].sub ? openat(ufd, places[p].sub,
						     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) :
					      TAKE_FD(ufd);
			if (sfd < 0 || fstat(sfd, &st) < 0 || st.st_uid != uid || (st.st_mode & 022) ||
			    (st.st_dev == own->st_dev && st.st_ino == own->st_ino))
				continue;
			sbx_ps_scan(sfd, uid, l, NULL);
		}
		closedir(d);
	}
}

/* --- sbx ps -------------------------------------------------------------------- */

int sbx_cmd_ps(const struct sbx_common_opts *o, bool json)
{
	struct sbx_error err = { 0 };
	struct sbx_hostconfig cfg = { 0 };
	struct sbx_ps_list l = { 0 };
	_cleanup_free_ char *dir = NULL, *text = NULL;
	_cleanup_close_ int fd = -1;
	uint64_t now = sbx_now_real_ms();
	int r;

	if (sbx_hostconfig_load(&cfg, o->config, &err) < 0) {
		sbx_error_print(&err);
		return err.code;
	}
	r = sbx_state_dir(cfg.state_dir, &dir, &err);
	sbx_hostconfig_free(&cfg);
	if (r < 0) {
		sbx_error_print(&err);
		return err.code;
	}
	/* sbx_state_dir() checked it is the caller's own, not a link. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		sbx_error_set(&err, SBX_EXIT_SOFTWARE, errno, "%s: cannot open", dir);
		sbx_error_print(&err);
		return err.code;
	}
	if (sbx_ps_scan(fd, geteuid(), &l, &err) < 0) {
		sbx_error_prefix(&err, "%s/", dir);
		sbx_error_print(&err);
		return err.code;
	}
	/* Root sees every user's runs, as `sudo docker ps` or ps(1) would
	 * show them: those in the users' default state directories. */
	if (geteuid() == 0) {
		struct stat own;
		if (fstat(fd, &own) == 0)
			scan_users(&own, &l);
	}
	sbx_ps_sort(&l);
	for (size_t i = 0; i < l.n; i++) {
		struct passwd *pw = getpwuid(l.v[i].uid);
		if (pw)
			l.v[i].user = sbx_xstrdup(pw->pw_name);
	}
	if (json) {
		json_t *a = sbx_ps_json(&l, now);
		text = json_dumps(a, JSON_COMPACT);
		json_decref(a);
		if (text)
			printf("%s\n", text);
	} else {
		text = sbx_ps_table(&l, now);
		if (text)
			fputs(text, stdout);
	}
	sbx_ps_list_free(&l);
	if (fflush(stdout) != 0 || !text) {
		sbx_warn("ps: cannot write the list: %s", strerror(errno ? errno : EIO));
		return SBX_EXIT_SOFTWARE;
	}
	return SBX_EXIT_OK;
}
