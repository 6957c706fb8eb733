/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hold.c - held outputs: making a run's hold, `sbx promote`, and the age
 * limit `sbx gc` applies (the layout is in hold.h and docs/state.md).
 *
 * Trust: the held area belongs to the invoking user, who can write in it
 * between the run and the promote.  So nothing in it is taken on its word:
 * every name is opened relative to a directory fd without following a
 * symlink (openat2 where a name could have been swapped), the record must
 * match the signed run manifest kept beside it (whose sha256 it names),
 * and each file is copied out while hashed and delivered only when the
 * digest is still the one recorded at hold time.  A path given to promote
 * is only ever compared with the record's paths, never opened in the held
 * area; in --artifacts it is placed by the same code as a run's artifacts.
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
#include "hold.h"
#include "json.h"
#include "run.h"
#include "runid.h"
#include "sign.h"
#include "syscalls.h"

#define HOLD_RECORD "hold.json"
#define HOLD_RECORD_TMP "hold.json.new"
#define HOLD_MANIFEST "manifest.json"
#define HOLD_FILES "files"
/* A record or a kept manifest larger than this was not written by sbx. */
#define HOLD_JSON_MAX (16u * 1024 * 1024)
#define PROMOTE_MANIFEST_VERSION 1

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

/*
 * Open the held area (@create: making it, for a run), refusing one that is
 * a symlink, not a directory, writable by group or others, or not the
 * caller's (root may promote and gc any user's holds, but a run's holds
 * go only into an area of the caller's own).  ENOENT without @create: returns
 * -1 with errno ENOENT and @err unset.
 */
static int area_open(const struct sbx_hostconfig *cfg, bool create, char **path_out,
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
static int remove_hold(int area_fd, const char *name)
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
	int fd = area_open(cfg, true, path, err);

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

static int write_record(int run_fd, json_t *rec, struct sbx_error *err)
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
	if (write_record(h->run_fd, rec, err) < 0)
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
	if (h->run_fd >= 0 && remove_hold(h->area_fd, run->run_id) < 0)
		sbx_warn("%s/%s: cannot remove the abandoned hold: %m", h->area, run->run_id);
	h->held = 0;
}

/* --- reading a hold -------------------------------------------------------- */

/* All of the regular file @name below @dirfd (not followed), capped. */
static int read_small(int dirfd, const char *name, char **data, size_t *len)
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

static bool is_sha256_hex(const char *s)
{
	if (!s || strlen(s) != SBX_SHA256_HEX_LEN)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* "h" and the artifact's index, at least six digits (sbx_hold_collect). */
static bool is_held_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 7 || n > 12 || s[0] != 'h')
		return false;
	for (size_t i = 1; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* The run manifest's entry for @path with status "held", or NULL. */
static const json_t *manifest_held(const json_t *manifest, const char *path)
{
	const json_t *a;
	size_t i;

	json_array_foreach(json_object_get(manifest, "artifacts"), i, a) {
		const char *p = json_string_value(json_object_get(a, "path"));
		const char *s = json_string_value(json_object_get(a, "status"));

		if (p && s && !strcmp(p, path) && !strcmp(s, "held"))
			return a;
	}
	return NULL;
}

/*
 * hold.json, checked: its shape, its run id, and that it says what the
 * kept manifest (whose sha256 it names) says of every file.  Returns the
 * record, or NULL with @err set (1: the hold cannot be trusted).
 */
static json_t *load_record(int run_fd, const char *run_id, char **manifest_sha,
			   struct sbx_error *err)
{
	_cleanup_free_ char *data = NULL, *mdata = NULL;
	_cleanup_json_ json_t *rec = NULL, *man = NULL;
	size_t len = 0, mlen = 0, i;
	char sha[SBX_SHA256_HEX_LEN + 1];
	const char *want;
	json_t *f;

	if (read_small(run_fd, HOLD_RECORD, &data, &len) < 0)
		return errno == ENOENT ? (sbx_error_set(err, SBX_EXIT_FAILED, 0,
							"promote: %s: no held outputs (never held, promoted already, or removed by sbx gc)",
							run_id),
					  NULL) :
					 (sbx_error_set(err, SBX_EXIT_FAILED, errno,
							"promote: %s: %s", run_id, HOLD_RECORD),
					  NULL);
	rec = json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
	want = json_string_value(json_object_get(rec, "manifest_sha256"));
	if (!json_is_object(rec) || !json_is_array(json_object_get(rec, "files")) ||
	    !is_sha256_hex(want) || !json_is_string(json_object_get(rec, "principal")) ||
	    !json_is_integer(json_object_get(rec, "uid")) ||
	    strcmp(json_string_value(json_object_get(rec, "run_id")) ?: "", run_id)) {
		sbx_error_set(err, SBX_EXIT_FAILED, 0, "promote: %s: %s: not a hold record of this run",
			      run_id, HOLD_RECORD);
		return NULL;
	}
	if (read_small(run_fd, HOLD_MANIFEST, &mdata, &mlen) < 0 ||
	    sbx_sha256_buf(mdata, mlen, sha, err) < 0 || strcmp(sha, want) != 0 ||
	    !(man = json_loadb(mdata, mlen, JSON_REJECT_DUPLICATES, NULL))) {
		sbx_error_set(err, SBX_EXIT_FAILED, 0,
			      "promote: %s: the kept run manifest is missing or does not have the sha256 recorded at hold time",
			      run_id);
		return NULL;
	}
	json_array_foreach(json_object_get(rec, "files"), i, f) {
		const char *path = json_string_value(json_object_get(f, "path"));
		const char *s = json_string_value(json_object_get(f, "sha256"));
		const json_t *size = json_object_get(f, "size"), *m;

		if (!path || !sbx_hold_valid_path(path) || !is_sha256_hex(s) ||
		    !is_held_name(json_string_value(json_object_get(f, "name"))) ||
		    !json_is_integer(size) || json_integer_value(size) < 0 ||
		    !json_is_boolean(json_object_get(f, "promoted")) ||
		    !(m = manifest_held(man, path)) ||
		    strcmp(json_string_value(json_object_get(m, "sha256")) ?: "", s) ||
		    !json_equal(json_object_get(m, "size"), size)) {
			sbx_error_set(err, SBX_EXIT_FAILED, 0,
				      "promote: %s: %s: files[%zu] does not match the run manifest's held artifacts",
				      run_id, HOLD_RECORD, i);
			return NULL;
		}
	}
	*manifest_sha = sbx_xstrdup(want);
	return TAKE_PTR(rec);
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

/* --- sbx promote ----------------------------------------------------------- */

static json_t *find_file(json_t *files, const char *path)
{
	json_t *f;
	size_t i;

	json_array_foreach(files, i, f)
		if (!strcmp(json_string_value(json_object_get(f, "path")), path))
			return f;
	return NULL;
}

static void refuse(json_t *refused, const char *path, const char *why)
{
	_cleanup_free_ char *p = sbx_canonjson_clean_string(path, strlen(path), 512, NULL);

	sbx_warn("promote: %s: %s", p, why);
	json_array_append_new(refused, json_pack("{s:s,s:s}", "path", p, "reason", why));
}

int sbx_cmd_promote(const struct sbx_promote_opts *o)
{
	struct sbx_error err = { 0 };
	struct sbx_hostconfig cfg = { 0 };
	struct sbx_key key = { 0 };
	struct sbx_artifacts_dir ad = { .base_fd = -1 };
	_cleanup_free_ char *area = NULL, *man_sha = NULL, *dir = NULL, *line = NULL;
	_cleanup_close_ int area_fd = -1, run_fd = -1, files_fd = -1, rootfd = -1;
	_cleanup_json_ json_t *rec = NULL, *m = NULL;
	json_t *promoted = json_array(), *refused = json_array(), *files, *f;
	uint64_t started = sbx_now_real_ms(), t0 = sbx_now_mono_ns();
	size_t i, remaining = 0, len = 0;
	char at[32], end[32];
	struct stat st;
	int code = SBX_EXIT_OK;
	bool io_failed = false;

	if (!sbx_run_id_valid(o->run_id)) {
		sbx_warn("promote: malformed run id (expected 32 lowercase hex digits)");
		code = SBX_EXIT_USAGE;
		goto out;
	}
	for (i = 0; i < o->n_paths; i++)
		if (!sbx_hold_valid_path(o->paths[i])) {
			_cleanup_free_ char *p = sbx_canonjson_clean_string(o->paths[i], strlen(o->paths[i]), 256, NULL);
			sbx_warn("promote: \"%s\": expected a path relative to /work/out without \".\", \"..\" or empty components",
				 p);
			code = SBX_EXIT_USAGE;
			goto out;
		}
	dir = o->artifacts ? sbx_xstrdup(o->artifacts) :
			     sbx_xasprintf("sbx-runs/%s/promoted", o->run_id);
	if (sbx_artifacts_dir_open(dir, &ad, &err) < 0 ||
	    sbx_hostconfig_load(&cfg, o->common.config, &err) < 0 ||
	    sbx_sign_default_key(o->key, cfg.signing_key, &key, &err) < 0)
		goto fail;

	area_fd = area_open(&cfg, false, &area, &err);
	if (area_fd < 0 && !err.code) {
		sbx_error_set(&err, SBX_EXIT_FAILED, 0,
			      "promote: %s: no held outputs (never held, promoted already, or removed by sbx gc)",
			      o->run_id);
		goto fail;
	}
	if (area_fd < 0)
		goto fail;
	run_fd = openat(area_fd, o->run_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (run_fd < 0) {
		sbx_error_set(&err, SBX_EXIT_FAILED, errno == ENOENT ? 0 : errno,
			      errno == ENOENT ?
				      "promote: %s: no held outputs (never held, promoted already, or removed by sbx gc)" :
				      "promote: %s: the hold is not a directory (or a symlink)",
			      o->run_id);
		goto fail;
	}
	if (fstat(run_fd, &st) < 0 || (st.st_uid != geteuid() && geteuid() != 0)) {
		sbx_error_set(&err, SBX_EXIT_REFUSED, 0,
			      "promote: %s: held by uid %u; only its owner or root may promote it",
			      o->run_id, (unsigned)st.st_uid);
		goto fail;
	}
	/* gc leaves a locked hold alone; a second promote waits here, and then
	 * finds the files promoted (or the hold gone). */
	while (flock(run_fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			sbx_error_set(&err, SBX_EXIT_SOFTWARE, errno, "promote: %s: cannot lock", o->run_id);
			goto fail;
		}
	rec = load_record(run_fd, o->run_id, &man_sha, &err);
	if (!rec)
		goto fail;
	if (json_integer_value(json_object_get(rec, "uid")) != (json_int_t)geteuid() && geteuid() != 0) {
		sbx_error_set(&err, SBX_EXIT_REFUSED, 0,
			      "promote: %s: held for uid %" JSON_INTEGER_FORMAT "; only its owner or root may promote it",
			      o->run_id, json_integer_value(json_object_get(rec, "uid")));
		goto fail;
	}
	files_fd = openat(run_fd, HOLD_FILES, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (files_fd < 0) {
		sbx_error_set(&err, SBX_EXIT_FAILED, errno, "promote: %s: %s/", o->run_id, HOLD_FILES);
		goto fail;
	}
	files = json_object_get(rec, "files");

	/* What is asked for: the named paths, else all not yet promoted. */
	for (i = 0; i < o->n_paths; i++) {
		f = find_file(files, o->paths[i]);
		if (!f)
			refuse(refused, o->paths[i], "not held for this run");
		else if (json_is_true(json_object_get(f, "promoted")))
			refuse(refused, o->paths[i], "already promoted");
		else
			json_object_set_new(f, "selected", json_true());
	}
	json_array_foreach(files, i, f)
		if (!o->n_paths && !json_is_true(json_object_get(f, "promoted")))
			json_object_set_new(f, "selected", json_true());

	json_array_foreach(files, i, f) {
		const char *path = json_string_value(json_object_get(f, "path"));
		const char *why = NULL;
		int r;

		if (!json_is_true(json_object_get(f, "selected")))
			continue;
		json_object_del(f, "selected");
		if (rootfd < 0 && (rootfd = sbx_artifacts_dir_make(&ad, true, &err)) < 0)
			goto fail;
		r = sbx_collect_release(files_fd, json_string_value(json_object_get(f, "name")),
					(uint64_t)json_integer_value(json_object_get(f, "size")),
					json_string_value(json_object_get(f, "sha256")), rootfd, path, &why,
					&err);
		if (r < 0) {
			/* What was delivered so far is still recorded and signed. */
			sbx_error_print(&err);
			refuse(refused, path, "not promoted: an I/O error stopped the promote");
			io_failed = true;
			break;
		}
		if (r > 0) {
			refuse(refused, path, why);
			continue;
		}
		json_object_set_new(f, "promoted", json_true());
		json_array_append_new(promoted,
				      json_pack("{s:s,s:O,s:O,s:O,s:s}", "path", path, "size",
						json_object_get(f, "size"), "sha256",
						json_object_get(f, "sha256"), "media_type",
						json_object_get(f, "media_type"), "status", "promoted"));
	}
	json_array_foreach(files, i, f) {
		json_object_del(f, "selected");
		remaining += !json_is_true(json_object_get(f, "promoted"));
	}
	/* Nothing held is left: the hold goes (under the lock still). */
	if (remaining == 0) {
		if (remove_hold(area_fd, o->run_id) < 0)
			sbx_warn("promote: %s/%s: cannot remove the emptied hold: %m", area, o->run_id);
	} else if (json_array_size(promoted) && write_record(run_fd, rec, &err) < 0) {
		goto fail;
	}

	sbx_format_rfc3339_ms(started, at);
	sbx_format_rfc3339_ms(sbx_now_real_ms(), end);
	m = json_pack("{s:s,s:i,s:s,s:s,s:O,s:s,s:I,s:o,s:o,s:I,s:{s:s,s:s,s:I}}", "kind", "promote",
		      "manifest_version", PROMOTE_MANIFEST_VERSION, "sbx_version", PACKAGE_VERSION,
		      "run_id", o->run_id, "principal", json_object_get(rec, "principal"),
		      "run_manifest_sha256", man_sha, "promoted_by_uid", (json_int_t)geteuid(),
		      "artifacts", promoted, "refused", refused, "held_remaining",
		      (json_int_t)remaining, "timing", "started_at", at, "ended_at", end, "wall_ms",
		      (json_int_t)((sbx_now_mono_ns() - t0) / 1000000));
	promoted = refused = NULL;
	if (!m || sbx_manifest_finish(m, &key, &line, &len, &err) < 0) {
		if (!err.code)
			sbx_error_set(&err, SBX_EXIT_SOFTWARE, 0, "promote: manifest: out of memory");
		goto fail;
	}
	fwrite(line, 1, len, stdout);
	fflush(stdout);
	code = io_failed ? (err.code ? err.code : SBX_EXIT_SOFTWARE) :
	       json_array_size(json_object_get(m, "refused")) ? SBX_EXIT_FAILED : SBX_EXIT_OK;
	goto out;
fail:
	sbx_error_print(&err);
	code = err.code ? err.code : SBX_EXIT_SOFTWARE;
out:
	json_decref(promoted);
	json_decref(refused);
	sbx_key_clear(&key);
	sbx_hostconfig_free(&cfg);
	sbx_artifacts_dir_close(&ad);
	return code;
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

	if (read_small(run_fd, HOLD_RECORD, &data, &len) == 0 &&
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
	_cleanup_close_ int area_fd = area_open(cfg, false, &area, err);
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
		if (remove_hold(area_fd, de->d_name) < 0) {
			sbx_warn("gc: %s/%s: cannot remove the hold: %m", area, de->d_name);
			continue;
		}
		(*removed)++;
	}
	return 0;
}
