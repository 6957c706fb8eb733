/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prepare-tree.c - the prepared tree itself (prepare.h): taken out of the
 * prepare step's output root, walked, digested, sealed read-only, its
 * entries' identities recorded, and removed again.
 *
 * The digest is of what the tree says, not of how it came to be: each
 * entry's type, relative path and content digest, the entries sorted by
 * path in byte order.  Owners, modes (all sealed to 0444/0555 anyway),
 * timestamps, inode numbers and the order in which the command made its
 * files or getdents(2) lists them are left out, so that two prepares of
 * the same bytes give the same prepared_sha256 in any catalog,
 * prepared_dir or host.  Making the same bytes from the same inputs is the
 * command's part (sbx-policy(5)).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Remove what @name at @dfd holds, depth first, never following a link. */
void sbx_prepare_remove_tree(int dfd, const char *name, int depth)
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
					sbx_prepare_remove_tree(fd, e->d_name, depth + 1);
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
static int copy_tree(struct sbx_prepare_ctx *c, int src, int dst, const char *prefix, int depth,
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
int sbx_prepare_record_identities(int tfd, json_t *entries, struct sbx_error *err)
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

int sbx_prepare_take_tree(struct sbx_prepare_run *h, int outroot_fd, struct sbx_error *err)
{
	struct sbx_prepare_ctx *c = h->ud;
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

/* --- the digest ---------------------------------------------------------------- */

/* Hash the tree at @fd (entries in the order recorded), into @hex. */
int sbx_prepared_hash_tree(int root_fd, const json_t *entries, char hex[65],
			   struct sbx_error *err)
{
	_cleanup_sha256_ struct sbx_sha256 h = { 0 };
	size_t i;
	json_t *e;

	if (sbx_sha256_init(&h, err) < 0)
		return -1;
	json_array_foreach(entries, i, e) {
		const char *path = json_string_value(json_object_get(e, "path"));
		const char *type = json_string_value(json_object_get(e, "type"));
		char line[4096 + 128], fh[65] = "";

		if (!path || !type)
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "malformed entry");
		if (!strcmp(type, "file")) {
			_cleanup_close_ int fd = strcmp(path, ".") ?
				openat(root_fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
			if (fd < 0 || sbx_sha256_fd(fd, fh, NULL, err) < 0)
				return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s", path);
		}
		snprintf(line, sizeof(line), "%s %s %s\n", type, fh, path);
		if (sbx_sha256_update(&h, line, strlen(line), err) < 0)
			return -1;
	}
	return sbx_sha256_final_hex(&h, hex, err);
}
