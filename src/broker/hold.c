/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hold.c - held outputs: the held area, making a run's hold, and the age
 * limit `sbx gc` applies (the layout is in hold.h and docs/state.md);
 * `sbx promote` is hold-promote.c.
 *
 * Trust: the held area belongs to the invoking user, who can write in it
 * between the run and the promote.  So every name is opened relative to a
 * directory fd without following a symlink (openat2 where a name could
 * have been swapped), a hold is made with mkdirat and never reused, and
 * removal unlinks names, never following one.  What promote may believe
 * of a hold is its signed run manifest's word only (hold-promote.c).
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "canonjson.h"
#include "collect.h"
#include "digest.h"
#include "hold-internal.h"
#include "hold.h"
#include "json.h"
#include "run.h"
#include "runid.h"
#include "syscalls.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir)

/* --- the held area --------------------------------------------------------- */

static char *area_path(const struct sbx_hostconfig *cfg, struct sbx_error *err)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");

	if (cfg->hold_dir)
		return sbx_xstrdup(cfg->hold_dir);
	if (xdg && xdg[0] == '/')
		return sbx_xasprintf("%s/sbx/holds", xdg);
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());

		home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
	}
	if (!home) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "held outputs: no \"hold_dir\" in the host config and no home directory for the default");
		sbx_error_hint(err, "set hold_dir in the host configuration, or HOME");
		return NULL;
	}
	return sbx_xasprintf("%s/.local/share/sbx/holds", home);
}

/* mkdir -p, the last component 0700, the ones above 0755 as usual. */
static void make_parents(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
}

/* Ownership first, then the mode (hold-internal.h). */
int sbx_hold_area_open(const struct sbx_hostconfig *cfg, bool create, char **path_out,
		     struct sbx_error *err)
{
	_cleanup_free_ char *path = area_path(cfg, err);
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (!path)
		return -1;
	if (create) {
		make_parents(path);
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno,
					     "%s: cannot create the held area", path);
	}
	/* Ownership first: another user's area is a refusal (77) whether or
	 * not its mode lets us open it. */
	if (lstat(path, &st) == 0 && st.st_uid != geteuid() && (create || geteuid() != 0))
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "%s: held area: owned by uid %u, not by uid %u",
				     path, (unsigned)st.st_uid, (unsigned)geteuid());
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && !create) {
		*path_out = TAKE_PTR(path);
		errno = ENOENT;
		return -1;
	}
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno,
				     "%s: held area: not a directory (or a symlink)", path);
	if (fstat(fd, &st) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: held area", path);
	if (st.st_uid != geteuid() && (create || geteuid() != 0))
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "%s: held area: owned by uid %u, not by uid %u",
				     path, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 022)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				     "%s: held area: writable by group or others (mode %04o)", path,
				     (unsigned)(st.st_mode & 07777));
	*path_out = TAKE_PTR(path);
	return TAKE_FD(fd);
}

/* Remove the hold directory @name below @area_fd: it holds files only,
 * and "files/" holds files only; anything else is left, and said. */
int sbx_hold_remove(int area_fd, const char *name)
{
	_cleanup_close_ int run_fd = openat(area_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r = 0;

	if (run_fd < 0)
		return errno == ENOENT ? 0 : -1;
	for (int pass = 0; pass < 2; pass++) {
		int dfd = pass == 0 ? openat(run_fd, HOLD_FILES, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) :
				      openat(run_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		_cleanup_(closedirp) DIR *d = NULL;
		struct dirent *de;

		if (dfd < 0)
			continue;
		d = fdopendir(dfd);
		if (!d) {
			close(dfd);
			return -1;
		}
		while ((de = readdir(d))) {
			struct stat st;

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			if (S_ISDIR(st.st_mode)) {
				if (pass == 1 && !strcmp(de->d_name, HOLD_FILES) &&
				    unlinkat(run_fd, HOLD_FILES, AT_REMOVEDIR) == 0)
					continue;
				r = -1;
				continue;
			}
			/* A symlink goes as a name; what it points at stays. */
			if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno != ENOENT)
				r = -1;
		}
	}
	if (unlinkat(area_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -1;
	return r;
}

/* --- the run's side -------------------------------------------------------- */

/* For a run, an unusable held area is the host's setting, not a policy
 * decision about the job: 69, with what to change. */
static int area_open_for_run(const struct sbx_hostconfig *cfg, char **path, struct sbx_error *err)
{
	int fd = sbx_hold_area_open(cfg, true, path, err);

	if (fd < 0 && err->code == SBX_EXIT_REFUSED) {
		err->code = SBX_EXIT_UNAVAILABLE;
		sbx_error_hint(err, "set hold_dir in the host configuration to a directory of your own");
	}
	return fd;
}

int sbx_hold_check(const struct sbx_hostconfig *cfg, struct sbx_error *err)
{
	_cleanup_free_ char *path = NULL;
	int fd = area_open_for_run(cfg, &path, err);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

void sbx_hold_close(struct sbx_hold *h)
{
	if (!h)
		return;
	if (h->files_fd >= 0)
		close(h->files_fd);
	if (h->run_fd >= 0)
		close(h->run_fd);
	if (h->area_fd >= 0)
		close(h->area_fd);
	h->files_fd = h->run_fd = h->area_fd = -1;
	free(h->area);
	h->area = NULL;
}

static int hold_open(struct sbx_run *run, struct sbx_hold *h)
{
	h->area_fd = area_open_for_run(&run->cfg, &h->area, &run->err);
	if (h->area_fd < 0)
		return -1;
	/* A new directory, never one that exists: whoever made it first
	 * would own what it holds. */
	if (mkdirat(h->area_fd, run->run_id, 0700) < 0)
		return sbx_error_set(&run->err, SBX_EXIT_SOFTWARE, errno, "%s/%s: cannot create the hold",
				     h->area, run->run_id);
	h->run_fd = openat(h->area_fd, run->run_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (h->run_fd < 0 || mkdirat(h->run_fd, HOLD_FILES, 0700) < 0 ||
	    (h->files_fd = openat(h->run_fd, HOLD_FILES,
				  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return sbx_error_set(&run->err, SBX_EXIT_SOFTWARE, errno, "%s/%s: cannot create the hold",
				     h->area, run->run_id);
	return 0;
}

int sbx_hold_collect(struct sbx_run *run)
{
	struct sbx_collection *c = &run->coll;
	bool hold_all = run->partial && run->job.partial_outputs == SBX_PARTIAL_HOLD;
	size_t want = 0;

	for (size_t i = 0; i < c->n; i++) {
		struct sbx_artifact *a = &c->items[i];

		if (a->status != SBX_ARTIFACT_PROMOTED || !a->validated || !a->qname[0])
			continue;
		if (hold_all)
			a->hold = true;
		want += a->hold;
	}
	if (!want)
		return 0;
	run->hold = sbx_xcalloc(1, sizeof(*run->hold));
	run->hold->area_fd = run->hold->run_fd = run->hold->files_fd = -1;
	if (hold_open(run, run->hold) < 0) {
		for (size_t i = 0; i < c->n; i++)
			if (c->items[i].hold && c->items[i].status == SBX_ARTIFACT_PROMOTED) {
				c->items[i].status = SBX_ARTIFACT_REJECTED;
				free(c->items[i].reason);
				c->items[i].reason =
					sbx_xstrdup("could not be held: the held area could not be used");
			}
		return -1;
	}
	for (size_t i = 0; i < c->n; i++) {
		struct sbx_artifact *a = &c->items[i];
		char name[16];
		int r;

		snprintf(name, sizeof(name), "h%06zu", i + 1);
		r = sbx_collect_hold(c, a, run->hold->files_fd, name, &run->err);
		if (r < 0)
			return -1;
		if (r == 0)
			continue;
		run->hold->held++;
		a->partial = run->partial;
		free(a->reason);
		a->reason = sbx_xstrdup(run->partial ?
						"run did not complete; held for review (sbx promote)" :
						"held for review (sbx promote)");
	}
	return 0;
}

/* Write @len bytes as @name below @dirfd through a new temp file and a
 * rename, so a reader sees the old content or the new, never half. */
static int write_atomic(int dirfd, const char *name, const char *data, size_t len)
{
	_cleanup_free_ char *tmp = sbx_xasprintf("%s.new", name);
	_cleanup_close_ int fd = -1;
	struct stat st;

	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	/* Root promoting a user's hold: the record stays the user's. */
	if (fstat(dirfd, &st) < 0 || (st.st_uid != geteuid() && fchown(fd, st.st_uid, st.st_gid) < 0)) {
		int e = errno;
		unlinkat(dirfd, tmp, 0);
		errno = e;
		return -1;
	}
	if (sbx_write_all(fd, data, len) < 0 || fsync(fd) < 0 || renameat(dirfd, tmp, dirfd, name) < 0) {
		int e = errno;
		unlinkat(dirfd, tmp, 0);
		errno = e;
		return -1;
	}
	return 0;
}

int sbx_hold_write_record(int run_fd, json_t *rec, struct sbx_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;

	if (sbx_canonjson_dump(rec, &text, &len, err) < 0)
		return -1;
	if (write_atomic(run_fd, HOLD_RECORD, text, len) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "held outputs: cannot write %s",
				     HOLD_RECORD);
	return 0;
}

int sbx_hold_record(struct sbx_run *run, const char *line, size_t len, struct sbx_error *err)
{
	struct sbx_hold *h = run->hold;
	_cleanup_json_ json_t *rec = NULL;
	json_t *files = json_array();
	char sha[SBX_SHA256_HEX_LEN + 1];

	if (!h || !h->held)
		return 0;
	for (size_t i = 0; i < run->coll.n; i++) {
		const struct sbx_artifact *a = &run->coll.items[i];
		char name[16];

		if (a->status != SBX_ARTIFACT_HELD)
			continue;
		snprintf(name, sizeof(name), "h%06zu", i + 1);
		json_array_append_new(files,
				      json_pack("{s:s,s:s,s:I,s:s,s:o,s:b}", "path", a->path, "name", name,
						"size", (json_int_t)a->size, "sha256", a->sha256,
						"media_type",
						a->media_type ? json_string(a->media_type) : json_null(),
						"promoted", 0));
	}
	if (sbx_sha256_buf(line, len, sha, err) < 0)
		return -1;
	rec = json_pack("{s:i,s:s,s:s,s:I,s:I,s:s,s:o}", "hold_version", 1, "run_id", run->run_id,
			"principal", run->principal ? run->principal : "", "uid",
			(json_int_t)geteuid(), "held_at_ms", (json_int_t)sbx_now_real_ms(),
			"manifest_sha256", sha, "files", files);
	if (!rec)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "held outputs: out of memory");
	if (write_atomic(h->run_fd, HOLD_MANIFEST, line, len) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "held outputs: cannot write %s",
				     HOLD_MANIFEST);
	if (sbx_hold_write_record(h->run_fd, rec, err) < 0)
		return -1;
	h->recorded = true;
	return 0;
}

void sbx_hold_abandon(struct sbx_run *run, const char *why)
{
	struct sbx_hold *h = run->hold;

	if (!h)
		return;
	for (size_t i = 0; i < run->coll.n; i++) {
		struct sbx_artifact *a = &run->coll.items[i];

		if (a->status != SBX_ARTIFACT_HELD)
			continue;
		a->status = SBX_ARTIFACT_DISCARDED;
		free(a->reason);
		a->reason = sbx_xstrdup(why);
	}
	/* Only a hold this run made (run_fd): never a directory that was
	 * there before it. */
	if (h->run_fd >= 0 && sbx_hold_remove(h->area_fd, run->run_id) < 0)
		sbx_warn("%s/%s: cannot remove the abandoned hold: %m", h->area, run->run_id);
	h->held = 0;
}

/* --- reading a hold -------------------------------------------------------- */

/* fstat before reading: a fifo or a huge file is refused, never read. */
int sbx_hold_read_small(int dirfd, const char *name, char **data, size_t *len)
{
	_cleanup_close_ int fd = sbx_open_beneath(dirfd, name, O_RDONLY | O_NONBLOCK);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t used = 0;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode) || st.st_size > HOLD_JSON_MAX) {
		errno = EINVAL;
		return -1;
	}
	buf = sbx_xmalloc((size_t)st.st_size + 1);
	while (used < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + used, (size_t)st.st_size - used);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		used += (size_t)r;
	}
	buf[used] = '\0';
	*data = TAKE_PTR(buf);
	*len = used;
	return 0;
}

bool sbx_hold_valid_path(const char *p)
{
	const char *c = p;

	if (!p || !*p || *p == '/' || strlen(p) > 4095)
		return false;
	for (;;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!e)
			return true;
		c = e + 1;
	}
}

/* --- sbx gc ---------------------------------------------------------------- */

/* When was it held: the record's held_at_ms, else (a hold whose record was
 * never written, or is unreadable) the directory's last change. */
static uint64_t held_at_ms(int run_fd)
{
	_cleanup_free_ char *data = NULL;
	_cleanup_json_ json_t *rec = NULL;
	const json_t *t;
	struct stat st;
	size_t len = 0;

	if (sbx_hold_read_small(run_fd, HOLD_RECORD, &data, &len) == 0 &&
	    (rec = json_loadb(data, len, 0, NULL)) && json_is_integer(t = json_object_get(rec, "held_at_ms")) &&
	    json_integer_value(t) >= 0)
		return (uint64_t)json_integer_value(t);
	if (fstat(run_fd, &st) < 0)
		return UINT64_MAX;
	return (uint64_t)st.st_mtim.tv_sec * 1000 + (uint64_t)st.st_mtim.tv_nsec / 1000000;
}

int sbx_hold_gc(const struct sbx_hostconfig *cfg, unsigned *removed, struct sbx_error *err)
{
	_cleanup_free_ char *area = NULL;
	_cleanup_close_ int area_fd = sbx_hold_area_open(cfg, false, &area, err);
	_cleanup_(closedirp) DIR *d = NULL;
	uint64_t now = sbx_now_real_ms(), max_ms = cfg->hold_max_age_hours * 3600u * 1000u;
	struct dirent *de;
	int dfd;

	*removed = 0;
	if (area_fd < 0)
		return err->code ? -1 : 0;
	dfd = openat(area_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: cannot read", area);
	}
	while ((de = readdir(d))) {
		_cleanup_close_ int run_fd = -1;
		struct stat st;
		uint64_t t;

		/* Only names sbx gives holds; anything else is not ours. */
		if (!sbx_run_id_valid(de->d_name))
			continue;
		run_fd = openat(area_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (run_fd < 0 || fstat(run_fd, &st) < 0 || (st.st_uid != geteuid() && geteuid() != 0))
			continue;
		/* A promote at work: its hold is not gc's to judge now. */
		if (flock(run_fd, LOCK_EX | LOCK_NB) < 0)
			continue;
		t = held_at_ms(run_fd);
		if (t == UINT64_MAX || t > now || now - t <= max_ms)
			continue;
		if (sbx_hold_remove(area_fd, de->d_name) < 0) {
			sbx_warn("gc: %s/%s: cannot remove the hold: %m", area, de->d_name);
			continue;
		}
		(*removed)++;
	}
	return 0;
}
