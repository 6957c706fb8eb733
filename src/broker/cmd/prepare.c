/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prepare.c - `sbx prepare`: a profile's prepared runtime state
 * (prepare.h) built; prepared.c is the check runs make of it.
 *
 * `sbx prepare NAME` is a run of the profile like any other (run.c), with
 * two differences: the command is the profile's "prepare.argv" with its
 * "prepare.env" (trusted, from the catalog, not a job), and what it leaves
 * in /work/out is not validated as artifacts but taken as the prepared
 * tree: copied out through directory fds, directories and regular files
 * only (a symlink, a hard link, a fifo or socket, or a seed that is not a
 * plain directory of files refuses the whole tree), hashed, made
 * read-only, and committed by two renames, the tree and then its state.
 * A command that fails or times out, or a tree that is refused, leaves
 * the old state as it was and nothing of the new.  A lock file per
 * profile keeps two `sbx prepare` of it apart.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog-suggest.h"
#include "cli.h"
#include "cmd-json.h"
#include "digest.h"
#include "json.h"
#include "runid.h"
#include "prepare-internal.h"

/* --- identities ------------------------------------------------------------ */

static json_t *identity(const struct stat *st)
{
	return json_pack("{s:s,s:I,s:I,s:I,s:I,s:I}", "type", type_name(st->st_mode),
			 "ino", (json_int_t)st->st_ino, "dev", (json_int_t)st->st_dev,
			 "size", (json_int_t)st->st_size, "mtime_ns", (json_int_t)ns(&st->st_mtim),
			 "ctime_ns", (json_int_t)ns(&st->st_ctim));
}

/* --- sbx prepare ----------------------------------------------------------- */

struct prepare_ctx {
	const struct sbx_profile *pr;
	int dir_fd;               /* DIR/<profile> */
	char staging[64];         /* ".new-<random>" in it, while it exists */
	json_t *entries;
	char sha256[65];
};

/* Remove what @name at @dfd holds, depth first, never following a link. */
static void remove_tree_at(int dfd, const char *name, int depth)
{
	int fd;
	char buf[4096];
	ssize_t n;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT || depth > TREE_MAX_DEPTH + 2)
		return;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	/* Read-only trees: make each directory writable before emptying it;
	 * read again from the start while a pass removed something. */
	fchmod(fd, 0700);
	for (int pass = 0; pass < 3; pass++) {
		bool removed = false;

		lseek(fd, 0, SEEK_SET);
		while ((n = getdents64(fd, buf, sizeof(buf))) > 0)
			for (ssize_t off = 0; off < n;) {
				struct dirent64 *e = (struct dirent64 *)(buf + off);
				off += e->d_reclen;
				if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
					remove_tree_at(fd, e->d_name, depth + 1);
					removed = true;
				}
			}
		if (!removed)
			break;
	}
	close(fd);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

static int copy_data(int in, int out, uint64_t size)
{
	char buf[65536];

	while (size > 0) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, size, 0);

		if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
			      errno == EOPNOTSUPP)) {
			n = read(in, buf, size < sizeof(buf) ? size : sizeof(buf));
			if (n > 0 && sbx_write_all(out, buf, (size_t)n) < 0)
				return -1;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		size -= (uint64_t)n;
	}
	return 0;
}

/* Copy directory @src into @dst (both open), recording entries under
 * @prefix; refuses anything but directories and single-link files. */
static int copy_tree(struct prepare_ctx *c, int src, int dst, const char *prefix, int depth,
		     uint64_t *bytes, struct sbx_error *err)
{
	char buf[4096];
	ssize_t n;

	if (depth > TREE_MAX_DEPTH)
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0, "prepare: %s: deeper than %d levels",
				     prefix, TREE_MAX_DEPTH);
	while ((n = getdents64(src, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);
			_cleanup_free_ char *path = NULL;
			_cleanup_close_ int in = -1, out = -1;
			struct stat st;

			off += e->d_reclen;
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			path = prefix[0] ? sbx_xasprintf("%s/%s", prefix, e->d_name) :
					   sbx_xstrdup(e->d_name);
			/* The state file holds a path at the end of a line. */
			if (sbx_has_control(e->d_name, strlen(e->d_name)) || e->d_name[0] == ' ')
				return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
						     "prepare: %s: a name with control characters or "
						     "a leading space", prefix[0] ? prefix : "/work/out");
			if (json_array_size(c->entries) >= TREE_MAX_ENTRIES)
				return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
						     "prepare: more than %d entries", TREE_MAX_ENTRIES);
			if (fstatat(src, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: %s", path);
			if (S_ISDIR(st.st_mode)) {
				in = openat(src, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (in < 0 || mkdirat(dst, e->d_name, 0700) < 0 ||
				    (out = openat(dst, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
							       O_CLOEXEC)) < 0)
					return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: %s",
							     path);
				json_array_append_new(c->entries, json_pack("{s:s,s:s}", "path", path,
									    "type", "dir"));
				if (copy_tree(c, in, out, path, depth + 1, bytes, err) < 0)
					return -1;
				continue;
			}
			/* A link could make the tree (or its seed) name a place
			 * outside itself, or share an inode the payload writes. */
			if (!S_ISREG(st.st_mode))
				return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
						     "prepare: %s: not a regular file or directory "
						     "(symlinks, fifos, sockets and devices are refused)",
						     path);
			if (st.st_nlink != 1)
				return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
						     "prepare: %s: a hard link (%ju links)", path,
						     (uintmax_t)st.st_nlink);
			*bytes += (uint64_t)st.st_size;
			if (*bytes > TREE_MAX_BYTES)
				return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
						     "prepare: the tree is larger than %ju bytes",
						     (uintmax_t)TREE_MAX_BYTES);
			/* What was opened must be what was looked at: a process the
			 * command left behind may still be running until the run's
			 * cgroup goes. */
			in = openat(src, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			if (in >= 0) {
				struct stat ist;
				if (fstat(in, &ist) < 0 || ist.st_ino != st.st_ino ||
				    ist.st_dev != st.st_dev || !S_ISREG(ist.st_mode) || ist.st_nlink != 1 ||
				    ist.st_size != st.st_size)
					return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
							     "prepare: %s changed while it was copied", path);
			}
			out = openat(dst, e->d_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				     0600);
			if (in < 0 || out < 0 || copy_data(in, out, (uint64_t)st.st_size) < 0)
				return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: copying %s",
						     path);
			json_array_append_new(c->entries, json_pack("{s:s,s:s}", "path", path,
								    "type", "file"));
		}
	}
	if (n < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: reading %s",
				     prefix[0] ? prefix : "/work/out");
	return 0;
}

/* Sort entries by path, so that the digest does not depend on getdents. */
static int entry_cmp(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "path")),
		      json_string_value(json_object_get(*(json_t *const *)b, "path")));
}

static void sort_entries(json_t *entries)
{
	size_t n = json_array_size(entries);
	json_t **v = sbx_xcalloc(n + 1, sizeof(*v));

	for (size_t i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(entries, i));
	qsort(v, n, sizeof(*v), entry_cmp);
	json_array_clear(entries);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(entries, v[i]);
	free(v);
}

/* Read-only: files 0444, directories 0555, children before parents. */
static int seal_tree(int tfd, json_t *entries, struct sbx_error *err)
{
	for (size_t i = json_array_size(entries); i-- > 0;) {
		const json_t *e = json_array_get(entries, i);
		const char *path = json_string_value(json_object_get(e, "path"));
		bool dir = !strcmp(json_string_value(json_object_get(e, "type")), "dir");

		if (!strcmp(path, "."))
			continue;
		if (fchmodat(tfd, path, dir ? 0555 : 0444, 0) < 0)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: chmod %s", path);
	}
	if (fchmod(tfd, 0555) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: chmod");
	return 0;
}

/* Each entry's identity as runs will check it: after the rename into
 * place, which changes the tree's own ctime. */
static int record_identities(int tfd, json_t *entries, struct sbx_error *err)
{
	size_t i;
	json_t *e;

	json_array_foreach(entries, i, e) {
		const char *path = json_string_value(json_object_get(e, "path"));
		struct stat st;
		json_t *id;

		if (fstatat(tfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: stat %s", path);
		id = identity(&st);
		json_object_update(e, id);
		json_decref(id);
	}
	return 0;
}

static int take_tree(struct sbx_prepare_run *h, int outroot_fd, struct sbx_error *err)
{
	struct prepare_ctx *c = h->ud;
	const struct sbx_prepare *pp = c->pr->prepare;
	_cleanup_close_ int src = -1, tfd = -1;
	unsigned char rnd[8];
	uint64_t bytes = 0;
	struct stat st;

	sbx_random_bytes(rnd, sizeof(rnd));
	memcpy(c->staging, ".new-", 5);
	sbx_hex(rnd, sizeof(rnd), c->staging + 5);
	src = openat(outroot_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (src < 0 || mkdirat(c->dir_fd, c->staging, 0700) < 0 ||
	    (tfd = openat(c->dir_fd, c->staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: staging %s", c->staging);
	c->entries = json_array();
	if (copy_tree(c, src, tfd, "", 0, &bytes, err) < 0)
		return -1;
	/* The seed must be a plain directory of regular files: it is copied
	 * into every run, where a link would point the payload elsewhere. */
	if (pp->seed_src) {
		if (fstatat(tfd, pp->seed_src, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
					     "prepare: seed %s: the command left no such directory",
					     pp->seed_src);
		for (size_t i = 0; i < json_array_size(c->entries); i++) {
			const char *p = json_string_value(json_object_get(json_array_get(c->entries, i),
									  "path"));
			size_t n = strlen(pp->seed_src);
			if (!strncmp(p, pp->seed_src, n) && p[n] == '/' &&
			    (strchr(p + n + 1, '/') ||
			     strcmp(json_string_value(json_object_get(json_array_get(c->entries, i),
								      "type")), "file")))
				return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
						     "prepare: seed %s: holds %s, not a plain file",
						     pp->seed_src, p);
		}
	}
	sort_entries(c->entries);
	/* The tree's root is an entry too: a file added at the top changes it. */
	json_array_insert_new(c->entries, 0, json_pack("{s:s,s:s}", "path", ".", "type", "dir"));
	if (sbx_prepared_hash_tree(tfd, c->entries, c->sha256, err) < 0)
		return -1;
	return seal_tree(tfd, c->entries, err);
}

static int prepare_admit(struct sbx_prepare_run *h, struct sbx_plan *plan, struct sbx_error *err)
{
	struct prepare_ctx *c = h->ud;
	const struct sbx_prepare *pp = c->pr->prepare;
	size_t n = sbx_strv_length(plan->env), m = sbx_strv_length(pp->env), k = 0;
	char **env = sbx_xcalloc(n + m + 1, sizeof(char *));

	(void)err;
	/* The profile's env with the step's on top. */
	for (size_t i = 0; i < n; i++) {
		size_t kl = strcspn(plan->env[i], "=");
		bool over = false;
		for (size_t j = 0; j < m; j++)
			over |= !strncmp(pp->env[j], plan->env[i], kl + 1);
		if (!over)
			env[k++] = sbx_xstrdup(plan->env[i]);
	}
	for (size_t j = 0; j < m; j++)
		env[k++] = sbx_xstrdup(pp->env[j]);
	sbx_strv_free(plan->env);
	plan->env = env;
	plan->argv = sbx_strv_copy(pp->argv);
	return 0;
}

/* The state file (sbx_prepared_lookup), written beside and renamed over
 * the old one. */
static int write_state(struct prepare_ctx *c, const char *tree, struct sbx_error *err)
{
	const struct sbx_profile *pr = c->pr;
	char psha[65];
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = 0, i;
	FILE *m;
	json_t *e;

	if (sbx_sha256_buf(pr->raw, pr->raw_len, psha, err) < 0)
		return -1;
	if (!(m = open_memstream(&text, &len)))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: state");
	fprintf(m, "sbx-prepared 1\nprofile %016llx %zu %s\ntree %s %s\n",
		(unsigned long long)fnv1a64(pr->raw, pr->raw_len), pr->raw_len, psha, tree, c->sha256);
	for (i = 0; pr->prepare->inputs[i]; i++) {
		struct stat st;

		/* An input's ctime moves with every chmod and backup restore
		 * of the host: its size and mtime say whether it changed. */
		if (stat(pr->prepare->inputs[i], &st) < 0)
			fprintf(m, "input absent %s\n", pr->prepare->inputs[i]);
		else
			fprintf(m, "input %s %llu %llu %llu %lld %s\n", type_name(st.st_mode),
				(unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
				(unsigned long long)st.st_size, (long long)ns(&st.st_mtim),
				pr->prepare->inputs[i]);
	}
	json_array_foreach(c->entries, i, e)
		fprintf(m, "entry %s %lld %lld %lld %lld %lld %s\n",
			json_string_value(json_object_get(e, "type")),
			(long long)json_integer_value(json_object_get(e, "dev")),
			(long long)json_integer_value(json_object_get(e, "ino")),
			(long long)json_integer_value(json_object_get(e, "size")),
			(long long)json_integer_value(json_object_get(e, "mtime_ns")),
			(long long)json_integer_value(json_object_get(e, "ctime_ns")),
			json_string_value(json_object_get(e, "path")));
	if (fclose(m) != 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: state");
	unlinkat(c->dir_fd, STATE_FILE ".new", 0);
	fd = openat(c->dir_fd, STATE_FILE ".new", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd < 0 || sbx_write_all(fd, text, len) < 0 || fsync(fd) < 0 ||
	    renameat(c->dir_fd, STATE_FILE ".new", c->dir_fd, STATE_FILE) < 0) {
		sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: writing %s", STATE_FILE);
		unlinkat(c->dir_fd, STATE_FILE ".new", 0);
		return -1;
	}
	return 0;
}

/* Old trees (and what a killed prepare left) once the new state is in place. */
static void remove_others(int dir_fd, const char *keep)
{
	char buf[4096];
	ssize_t n;
	_cleanup_close_ int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = getdents64(fd, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);
			off += e->d_reclen;
			if ((!strncmp(e->d_name, "tree-", 5) || !strncmp(e->d_name, ".new-", 5) ||
			     !strncmp(e->d_name, ".run-", 5)) && strcmp(e->d_name, keep))
				remove_tree_at(dir_fd, e->d_name, 0);
		}
}

/* The tree the state file names (in static storage), or "": kept whether
 * or not it is stale for this catalog, as another catalog's profile of the
 * same name may be what it was prepared for. */
static const char *current_tree(int dir_fd)
{
	static char name[128];
	_cleanup_close_ int fd = openat(dir_fd, STATE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char buf[4096], *t;
	ssize_t n;

	name[0] = '\0';
	if (fd < 0 || (n = sbx_read_all(fd, buf, sizeof(buf) - 1)) <= 0)
		return name;
	buf[n] = '\0';
	if ((t = strstr(buf, "\ntree ")) && sscanf(t + 6, "%127s", name) != 1)
		name[0] = '\0';
	return name;
}

/* A failed command's last words (its captured stderr, as the run kept it
 * beside its artifacts), for whoever runs sbx prepare: up to 2 KiB. */
static void show_stderr(const char *art)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/.sbx/stderr", art);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char buf[2048], *save = NULL, *line;
	off_t size;
	ssize_t n;

	if (fd < 0 || (size = lseek(fd, 0, SEEK_END)) <= 0 ||
	    lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET) < 0 ||
	    (n = sbx_read_all(fd, buf, sizeof(buf) - 1)) <= 0)
		return;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!sbx_has_control(line, strlen(line)))
			sbx_warn("prepare: stderr: %s", line);
}

/* @done: with --json, each prepared profile is added to it instead of
 * printed. */
static int prepare_one(const struct sbx_common_opts *o, const struct sbx_hostconfig *cfg,
		       const struct sbx_catalog *cat, const struct sbx_profile *pr, json_t *done)
{
	struct sbx_error err = { 0 };
	_cleanup_free_ char *base = NULL, *dir = NULL, *run_dir = NULL, *art = NULL, *store = NULL,
			    *wall = NULL, *tree = NULL;
	_cleanup_close_ int dir_fd = -1, lock_fd = -1;
	struct prepare_ctx c = { .pr = pr, .dir_fd = -1 };
	struct sbx_prepare_run hook = { .admit = prepare_admit, .take = take_tree, .ud = &c };
	struct sbx_run_opts ro = { .common = *o };
	const char *limits[2];
	unsigned char rnd[8];
	char rhex[17];
	struct sbx_trust who = { 0 };
	struct stat st;
	int code;

	if (sbx_prepared_base(cfg, cat, &base, &who, &err) < 0) {
		err.code = SBX_EXIT_REFUSED;
		sbx_error_print(&err);
		return SBX_EXIT_REFUSED;
	}
	dir = sbx_xasprintf("%s/%s", base, pr->name);
	/* Made 0755 where missing: root's sandboxes, a uid of their own,
	 * must reach the tree.  Only below directories no one else can
	 * write, or they could have made it first. */
	dir_fd = sbx_prepared_open_dir(dir, pr, &who, true, &err);
	if (dir_fd < 0 && err.errnum != EACCES && err.errnum != EPERM && err.errnum != EROFS) {
		sbx_error_print(&err);
		return err.code;
	}
	/* As the owner of the prepared state only: a run trusts the state by
	 * whose it is (sbx_prepared_lookup). */
	if (dir_fd < 0 || fstat(dir_fd, &st) < 0 || st.st_uid != geteuid() ||
	    faccessat(dir_fd, ".", W_OK, AT_EACCESS) < 0) {
		int e = dir_fd < 0 ? err.errnum : st.st_uid != geteuid() ? 0 : errno;

		err = (struct sbx_error){ 0 };
		sbx_error_set(&err, SBX_EXIT_REFUSED, e,
			      "prepare: %s: this user (uid %u) may not write the prepared state",
			      dir, (unsigned)geteuid());
		if (dir_fd >= 0)
			sbx_error_hint(&err, "run sbx prepare as uid %u, who owns %s",
				       (unsigned)st.st_uid, dir);
		else
			sbx_error_hint(&err, "run sbx prepare as the owner of the prepared_dir, or set "
				       "\"prepared_dir\" in the host config to a directory of this user's");
		sbx_error_print(&err);
		return SBX_EXIT_REFUSED;
	}
	c.dir_fd = dir_fd;
	lock_fd = openat(dir_fd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
		sbx_error_set(&err, errno == EWOULDBLOCK ? SBX_EXIT_CAPACITY : SBX_EXIT_SOFTWARE, errno,
			      "prepare: %s: another sbx prepare of %s holds its lock", dir, pr->name);
		sbx_error_print(&err);
		return err.code;
	}

	/* The run's artifacts (its captured streams) go to a directory of
	 * its own beside the state, removed afterwards. */
	sbx_random_bytes(rnd, sizeof(rnd));
	sbx_hex(rnd, sizeof(rnd), rhex);
	run_dir = sbx_xasprintf("%s/.run-%s", dir, rhex);
	art = sbx_xasprintf("%s/art", run_dir);
	store = sbx_xasprintf("%s/store", run_dir);
	wall = sbx_xasprintf("wall_seconds=%llu", (unsigned long long)pr->prepare->timeout_seconds);
	limits[0] = wall;
	limits[1] = NULL;
	if (mkdir(run_dir, 0700) < 0) {
		sbx_error_set(&err, SBX_EXIT_SOFTWARE, errno, "prepare: %s", run_dir);
		sbx_error_print(&err);
		return err.code;
	}
	ro.artifacts = art;
	ro.store = store;
	ro.principal = "sbx-prepare";
	ro.one.profile = pr->name;
	ro.one.network = pr->prepare->network ? pr->prepare->network : "disabled";
	ro.one.code = "# sbx prepare\n";
	ro.one.limits = limits;
	ro.prepare = &hook;
	code = sbx_cmd_run(&ro);
	if (code != 0)
		show_stderr(art);
	if (code == 0 && c.entries) {
		/* Commit: the tree under its digest, then the state naming it. */
		_cleanup_close_ int tfd = -1;

		/* A name of its own even for the same content: the tree the
		 * current state names stays until the new state replaces it. */
		tree = sbx_xasprintf("tree-%.16s-%s", c.sha256, rhex);
		if (renameat(dir_fd, c.staging, dir_fd, tree) < 0 ||
		    (tfd = openat(dir_fd, tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			sbx_error_set(&err, SBX_EXIT_SOFTWARE, errno, "prepare: %s", tree);
			sbx_error_print(&err);
			code = err.code;
		} else if (record_identities(tfd, c.entries, &err) < 0 ||
			   write_state(&c, tree, &err) < 0) {
			sbx_error_print(&err);
			code = err.code;
		} else if (done) {
			_cleanup_free_ char *path = sbx_xasprintf("%s/%s", dir, tree);

			json_array_append_new(done, json_pack("{s:s, s:s, s:s}", "profile", pr->name,
							      "prepared_sha256", c.sha256, "tree",
							      path));
		} else {
			printf("%s sha256:%s %s/%s\n", pr->name, c.sha256, dir, tree);
		}
	} else if (code == 0) {
		code = SBX_EXIT_SOFTWARE;
	}
	/* Whatever did not become the state goes: the staging tree, this
	 * run's directory, older trees. */
	remove_others(dir_fd, current_tree(dir_fd));
	json_decref(c.entries);
	return code;
}

int sbx_cmd_prepare(const struct sbx_common_opts *o, char *const *names)
{
	struct sbx_hostconfig cfg = { 0 };
	struct sbx_catalog cat = { 0 };
	struct sbx_error err = { 0 };
	json_t *done = o->json ? json_array() : NULL;
	int code = 0;

	if (sbx_hostconfig_load(&cfg, o->config, &err) < 0 ||
	    sbx_catalog_load(&cat, sbx_catalog_default_dir(o->policy, &cfg), &err) < 0) {
		sbx_error_print(&err);
		sbx_hostconfig_free(&cfg);
		code = err.code;
		goto out;
	}
	for (size_t i = 0; names && names[i]; i++) {
		const struct sbx_profile *pr = sbx_catalog_profile(&cat, names[i]);
		if (!pr || !pr->prepare) {
			sbx_warn("prepare: %s: %s%s", names[i],
				 pr ? "the profile has no prepare step" : "no such runtime profile",
				 pr ? "" : sbx_did_you_mean(sbx_catalog_suggest_profile(&cat, names[i])));
			code = SBX_EXIT_USAGE;
		}
	}
	for (size_t i = 0; !code && i < cat.n_profiles; i++) {
		const struct sbx_profile *pr = &cat.profiles[i];
		bool named = !names || !names[0];
		int r;

		for (size_t k = 0; names && names[k]; k++)
			named |= !strcmp(names[k], pr->name);
		if (!named || !pr->prepare)
			continue;
		if ((r = prepare_one(o, &cfg, &cat, pr, done)) != 0)
			code = r;
	}
	sbx_catalog_free(&cat);
	sbx_hostconfig_free(&cfg);
out:
	/* The reasons are on stderr; the JSON says what was prepared and
	 * how it ended. */
	if (done) {
		int w = sbx_cmd_json_print(json_pack("{s:b, s:i, s:o}", "ok", code == 0, "exit", code,
						     "prepared", done));

		if (w && !code)
			code = w;
	}
	return code;
}
