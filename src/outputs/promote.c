/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * promote.c - delivery of the validated files into --artifacts.
 *
 * The walk and the quarantine (collect.c) face the payload's tree; this
 * file faces the caller's: the artifacts directory is resolved once when
 * the run starts and, after the run, made and filled relative to that fd
 * (mkdirat, openat2 without following symlinks, renameat2 with
 * RENAME_NOREPLACE, a copy made O_EXCL when the quarantine is on another
 * filesystem), so a file already there is never replaced.  Its own file
 * because its trust question (a path of the caller's, possibly changed
 * while the payload ran) is not the walk's.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect-internal.h"
#include "collect.h"
#include "syscalls.h"
#include "util.h"

/*
 * --artifacts DIR is the caller's path, trusted as it stands when the run
 * starts, and only then: the deepest part of it that exists is opened once,
 * and everything below is made and opened relative to that fd with openat2
 * (no symlink followed), so neither a symlink at DIR nor a component swapped
 * for one while the payload runs can send the artifacts anywhere else.
 */
static int open_nofollow(int dirfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	return sbx_openat2(dirfd, path, &how, sizeof(how));
}

/* Does the directory @fd hold nothing?  (A fresh open: our own offset.) */
static int dir_empty(int fd, bool *empty)
{
	_cleanup_dir_ DIR *d = NULL;
	struct dirent *de;
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -1;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -1;
	}
	*empty = true;
	errno = 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			*empty = false;
			return 0;
		}
	return errno ? -1 : 0;
}

/* After a failed open_nofollow(): was it a symlink that was refused?  (With
 * O_DIRECTORY the kernel says ENOTDIR for a symlink, not ELOOP.) */
static bool refused_symlink(int dirfd, const char *path)
{
	struct stat st;
	int e = errno;
	bool r = e == ELOOP ||
		 (e == ENOTDIR && fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		  S_ISLNK(st.st_mode));

	errno = e;
	return r;
}

static bool dot_or_dotdot(const char *c)
{
	return !strcmp(c, ".") || !strcmp(c, "..");
}

int sbx_artifacts_dir_open(const char *dir, struct sbx_artifacts_dir *ad, struct sbx_error *err)
{
	_cleanup_free_ char *parent = sbx_xstrdup(dir);
	_cleanup_free_ char *rest = NULL;
	_cleanup_close_ int base = -1, fd = -1;
	size_t n = strlen(parent);
	bool empty;
	char *slash;

	ad->base_fd = -1;
	ad->rest = NULL;
	ad->shown = NULL;
	while (n > 1 && parent[n - 1] == '/')
		parent[--n] = '\0';
	slash = strrchr(parent, '/');
	rest = sbx_xstrdup(slash ? slash + 1 : parent);
	if (!*rest || dot_or_dotdot(rest))
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "--artifacts: \"%s\": must end in a directory name", dir);
	/* Up from DIR's parent to the first directory that exists. */
	for (;;) {
		if (!slash)
			strcpy(parent, ".");
		else if (slash == parent)
			parent[1] = '\0';
		else
			*slash = '\0';
		base = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (base >= 0)
			break;
		if (errno != ENOENT || !slash || slash == parent)
			return sbx_error_set(err, SBX_EXIT_USAGE, errno, "--artifacts: %s", parent);
		n = strlen(parent);
		while (n > 1 && parent[n - 1] == '/')
			parent[--n] = '\0';
		slash = strrchr(parent, '/');
		{
			const char *comp = slash ? slash + 1 : parent;
			char *longer;

			/* Missing parts are made by sbx: plain names only. */
			if (dot_or_dotdot(comp))
				return sbx_error_set(err, SBX_EXIT_USAGE, ENOENT, "--artifacts: %s",
						     parent);
			longer = sbx_xasprintf("%s/%s", comp, rest);
			free(rest);
			rest = longer;
		}
	}
	/* With more than one component left, the first was missing a moment
	 * ago: DIR does not exist.  Otherwise DIR is one name below @base,
	 * opened without following it (no openat2 needed yet: without it,
	 * the run is refused at its first openat2, with a manifest). */
	if (strchr(rest, '/')) {
		fd = -1;
		errno = ENOENT;
	} else {
		fd = openat(base, rest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0 && refused_symlink(base, rest))
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "--artifacts: %s: is a symbolic link (not followed); name the directory itself",
				     dir);
	if (fd < 0 && errno == ENOTDIR)
		return sbx_error_set(err, SBX_EXIT_USAGE, 0, "--artifacts: %s: not a directory", dir);
	if (fd < 0 && errno != ENOENT)
		return sbx_error_set(err, SBX_EXIT_USAGE, errno, "--artifacts: %s", dir);
	if (fd >= 0) {
		/* DIR exists: it is the directory the artifacts go to. */
		if (dir_empty(fd, &empty) < 0)
			return sbx_error_set(err, SBX_EXIT_USAGE, errno, "--artifacts: %s", dir);
		if (!empty)
			return sbx_error_set(err, SBX_EXIT_USAGE, 0,
					     "--artifacts: %s: exists and is not empty", dir);
		ad->base_fd = TAKE_FD(fd);
		ad->rest = sbx_xstrdup("");
	} else {
		ad->base_fd = TAKE_FD(base);
		ad->rest = TAKE_PTR(rest);
	}
	ad->shown = sbx_xstrdup(dir);
	return 0;
}

void sbx_artifacts_dir_close(struct sbx_artifacts_dir *ad)
{
	if (ad->base_fd >= 0)
		close(ad->base_fd);
	ad->base_fd = -1;
	free(ad->rest);
	free(ad->shown);
	ad->rest = ad->shown = NULL;
}

int sbx_collect_check_artifacts_dir(const char *dir, struct sbx_error *err)
{
	struct sbx_artifacts_dir ad;
	int r = sbx_artifacts_dir_open(dir, &ad, err);

	sbx_artifacts_dir_close(&ad);
	return r;
}

int sbx_artifacts_dir_make(const struct sbx_artifacts_dir *ad, bool must_be_empty,
			   struct sbx_error *err)
{
	_cleanup_free_ char *rel = NULL;
	_cleanup_close_ int cur = -1;
	char *comp, *next;
	bool empty;

	if (ad->base_fd < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, EBADF, "--artifacts: not opened");
	rel = sbx_xstrdup(ad->rest);
	comp = rel;
	cur = *rel ? fcntl(ad->base_fd, F_DUPFD_CLOEXEC, 0) :
		     openat(ad->base_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "--artifacts: %s", ad->shown);
	for (; *comp; comp = next) {
		int fd;

		next = strchr(comp, '/');
		next = next ? (*next = '\0', next + 1) : comp + strlen(comp);
		if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "--artifacts: %s",
					     ad->shown);
		fd = open_nofollow(cur, comp, O_RDONLY | O_DIRECTORY);
		if (fd < 0 && refused_symlink(cur, comp))
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
					     "--artifacts: %s: a symbolic link took the place of \"%s\" during the run; not followed, nothing promoted",
					     ad->shown, comp);
		if (fd < 0)
			return sbx_error_set(err, errno == ENOSYS ? SBX_EXIT_UNAVAILABLE : SBX_EXIT_SOFTWARE,
					     errno, "--artifacts: %s", ad->shown);
		close(cur);
		cur = fd;
	}
	if (!must_be_empty)
		return TAKE_FD(cur);
	/* It may have been made, and filled, since the start. */
	if (dir_empty(cur, &empty) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "--artifacts: %s", ad->shown);
	if (!empty)
		return sbx_error_set(err, SBX_EXIT_USAGE, 0, "--artifacts: %s: exists and is not empty",
				     ad->shown);
	return TAKE_FD(cur);
}

/* Copy for the EXDEV case; the new file is O_EXCL, never through a link. */
static int copy_into(int src, int dirfd, const char *leaf)
{
	_cleanup_close_ int dst = openat(dirfd, leaf,
					 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	char buf[65536];
	ssize_t r;

	if (dst < 0 || fchmod(dst, 0644) < 0)
		return -1;
	while ((r = read(src, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || sbx_write_all(dst, buf, (size_t)r) < 0) {
			int e = errno;
			unlinkat(dirfd, leaf, 0);
			errno = e;
			return -1;
		}
	}
	return 0;
}

static int move_into_mode(struct sbx_collection *c, struct sbx_artifact *a, int dirfd,
			  const char *leaf, mode_t mode)
{
	_cleanup_close_ int src = openat(c->quarantine_dirfd, a->qname,
					 O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	/* The quarantine copy is 0600; artifacts are world-readable files,
	 * held ones stay private. */
	if (src < 0 || fchmod(src, mode) < 0)
		return -1;
	if (renameat2(c->quarantine_dirfd, a->qname, dirfd, leaf, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EINVAL) {
		/* No RENAME_NOREPLACE here: linkat never replaces either. */
		if (linkat(c->quarantine_dirfd, a->qname, dirfd, leaf, 0) == 0) {
			unlinkat(c->quarantine_dirfd, a->qname, 0);
			return 0;
		}
		if (errno != EXDEV)
			return -1;
	} else if (errno != EXDEV) {
		return -1;
	}
	if (copy_into(src, dirfd, leaf) < 0 || fchmodat(dirfd, leaf, mode, 0) < 0)
		return -1;
	unlinkat(c->quarantine_dirfd, a->qname, 0);
	return 0;
}

static int move_into(struct sbx_collection *c, struct sbx_artifact *a, int dirfd,
		     const char *leaf)
{
	return move_into_mode(c, a, dirfd, leaf, 0644);
}

static int place(struct sbx_collection *c, struct sbx_artifact *a, int rootfd,
		 struct sbx_error *err)
{
	_cleanup_free_ char *rel = sbx_xstrdup(a->path);
	_cleanup_close_ int cur = dup(rootfd);
	char *comp = rel, *slash;
	int e;

	if (cur < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "artifacts: dup");
	while ((slash = strchr(comp, '/'))) {
		int next;

		*slash = '\0';
		if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST)
			goto fail;
		next = collect_open_beneath(cur, comp, O_RDONLY | O_DIRECTORY, err);
		if (next < 0)
			goto fail;
		close(cur);
		cur = next;
		comp = slash + 1;
	}
	if (move_into(c, a, cur, comp) < 0)
		goto fail;
	a->qname[0] = '\0';
	return 0;
fail:
	e = errno;
	collect_set_rejected(a, SBX_RC_IO_ERROR, "promotion failed: %s", strerror(e));
	collect_drop_quarantined(c, a);
	return sbx_error_set(err, e == ENOSYS ? SBX_EXIT_UNAVAILABLE : SBX_EXIT_SOFTWARE, e,
			     "artifacts: %s", a->path);
}

int sbx_collect_promote(struct sbx_collection *c, const struct sbx_artifacts_dir *ad,
			bool partial, bool retain_partial, struct sbx_error *err)
{
	_cleanup_close_ int rootfd = -1;
	int ret = 0;

	rootfd = sbx_artifacts_dir_make(ad, true, err);
	if (rootfd < 0) {
		/* Nothing can be delivered: the listing says so, per file. */
		for (size_t i = 0; i < c->n; i++) {
			struct sbx_artifact *a = &c->items[i];
			if (a->status != SBX_ARTIFACT_PROMOTED)
				continue;
			collect_set_rejected(a, SBX_RC_IO_ERROR, "not promoted: the artifacts directory could not be used");
			collect_drop_quarantined(c, a);
		}
		return -1;
	}
	for (size_t i = 0; i < c->n; i++) {
		struct sbx_artifact *a = &c->items[i];

		if (a->status != SBX_ARTIFACT_PROMOTED)
			continue;
		if (!a->validated || !a->qname[0]) {
			collect_set_rejected(a, SBX_RC_NOT_VALIDATED, "not validated");
			continue;
		}
		if (partial && !retain_partial) {
			a->status = SBX_ARTIFACT_DISCARDED;
			a->reason = sbx_xstrdup("run did not complete");
			a->reason_code = SBX_RC_RUN_INCOMPLETE;
			collect_drop_quarantined(c, a);
			continue;
		}
		a->partial = partial;
		if (place(c, a, rootfd, err) < 0)
			ret = -1;
	}
	return ret;
}

/* --- held outputs ------------------------------------------------------------------ */

int sbx_collect_hold(struct sbx_collection *c, struct sbx_artifact *a, int hold_fd,
		     const char *name, struct sbx_error *err)
{
	int e;

	if (!a->hold || a->status != SBX_ARTIFACT_PROMOTED || !a->validated || !a->qname[0])
		return 0;
	if (move_into_mode(c, a, hold_fd, name, 0600) == 0) {
		a->qname[0] = '\0';
		a->status = SBX_ARTIFACT_HELD;
		return 1;
	}
	e = errno;
	collect_set_rejected(a, SBX_RC_IO_ERROR, "could not be held: %s", strerror(e));
	collect_drop_quarantined(c, a);
	return sbx_error_set(err, SBX_EXIT_SOFTWARE, e, "held outputs: %s", a->path);
}

/*
 * Copy @src (at offset 0) to the new file @leaf below @dirfd, hashing on
 * the way; at most @size + 1 bytes are read, so a file that grew shows.
 * Return: 0 with @hex set and *@copied the bytes written, -1 with errno.
 */
static int copy_hashed(int src, int dirfd, const char *leaf, uint64_t size, char hex[65],
		       uint64_t *copied)
{
	struct sha256_ctx md;
	_cleanup_close_ int dst = openat(dirfd, leaf,
					 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	uint8_t buf[65536], digest[SHA256_DIGEST_SIZE];
	uint64_t total = 0;
	ssize_t r;

	if (dst < 0)
		return -1;
	sha256_init(&md);
	if (fchmod(dst, 0644) < 0)
		goto fail;
	while (total <= size) {
		r = read(src, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		total += (uint64_t)r;
		sha256_update(&md, (size_t)r, buf);
		if (sbx_write_all(dst, buf, (size_t)r) < 0)
			goto fail;
	}
	sha256_digest(&md, sizeof(digest), digest);
	sbx_hex(digest, sizeof(digest), hex);
	*copied = total;
	return 0;
fail: {
	int e = errno ? errno : EIO;
	unlinkat(dirfd, leaf, 0);
	errno = e;
	return -1;
}
}

int sbx_collect_release(int hold_fd, const char *name, uint64_t size, const char *sha256,
			int rootfd, const char *path, const char **why, struct sbx_error *err)
{
	_cleanup_free_ char *rel = sbx_xstrdup(path);
	_cleanup_close_ int src = -1, cur = -1;
	char *comp = rel, *slash, hex[65];
	uint64_t copied = 0;
	struct stat st;

	*why = NULL;
	src = collect_open_beneath(hold_fd, name, O_RDONLY | O_NONBLOCK, err);
	if (src < 0 && errno == ENOSYS)
		return -1;
	if (src < 0) {
		*why = errno == ELOOP ? "the held file was replaced by a symbolic link" :
		       errno == ENOENT ? "the held file is gone" :
					 "the held file cannot be opened";
		return 1;
	}
	/* The owner of the held area can write there: what was held is
	 * trusted only as far as its digest still says so. */
	if (fstat(src, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		*why = "the held file is no longer a regular file with one link";
		return 1;
	}
	if ((uint64_t)st.st_size != size) {
		*why = "the held file changed since it was held (size)";
		return 1;
	}
	cur = dup(rootfd);
	if (cur < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "artifacts: dup");
	while ((slash = strchr(comp, '/'))) {
		int next;

		*slash = '\0';
		if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "artifacts: %s", path);
		next = collect_open_beneath(cur, comp, O_RDONLY | O_DIRECTORY, err);
		if (next < 0 && errno == ENOSYS)
			return -1;
		if (next < 0) {
			*why = errno == ELOOP || errno == ENOTDIR ?
				       "a directory on the way in the artifacts directory is a symbolic link or a file" :
				       "a directory on the way cannot be opened";
			return 1;
		}
		close(cur);
		cur = next;
		comp = slash + 1;
	}
	if (copy_hashed(src, cur, comp, size, hex, &copied) < 0) {
		if (errno == EEXIST) {
			*why = "a file of that name exists in the artifacts directory";
			return 1;
		}
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "artifacts: %s", path);
	}
	if (copied != size || strcmp(hex, sha256) != 0) {
		unlinkat(cur, comp, 0);
		*why = "the held file changed since it was held (sha256)";
		return 1;
	}
	if (unlinkat(hold_fd, name, 0) < 0 && errno != ENOENT)
		sbx_warn("held outputs: %s: cannot remove the held copy: %m", path);
	return 0;
}
