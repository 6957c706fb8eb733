/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * streams.c - the payload's captured stdout and stderr as files: where
 * they go (--stdout, --stderr, else DIR/.sbx/), checked when the run
 * starts and written once the artifacts are promoted.
 *
 * The same rules as for the artifacts: the caller's paths are resolved
 * once, at the start, and held as directory fds; every file is created
 * with O_EXCL | O_NOFOLLOW beneath such an fd, so nothing that appears in
 * the meantime (a symlink, a file of someone else's, an output of the
 * payload's) is followed or overwritten.
 */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "streams.h"
#include "syscalls.h"
#include "util.h"

static const char *const option[_SBX_STREAM_MAX] = { "--stdout", "--stderr" };
static const char *const file_name[_SBX_STREAM_MAX] = { "stdout", "stderr" };

static bool dot_or_dotdot(const char *c)
{
	return !strcmp(c, ".") || !strcmp(c, "..");
}

static int open_target(const char *opt, const char *path, struct sbx_stream_target *t,
		       struct sbx_error *err)
{
	_cleanup_free_ char *dir = NULL;
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	struct stat st;

	/* "-" would be a file of that name: standard output is the
	 * manifest's, and a capture on standard error would garble both. */
	if (!strcmp(path, "-"))
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "%s: \"-\" is not supported (standard output carries the manifest); name a file",
				     opt);
	if (!*name || dot_or_dotdot(name))
		return sbx_error_set(err, SBX_EXIT_USAGE, 0, "%s: \"%s\": must end in a file name",
				     opt, path);
	if (!slash)
		dir = sbx_xstrdup(".");
	else if (slash == path)
		dir = sbx_xstrdup("/");
	else
		dir = sbx_xstrndup(path, (size_t)(slash - path));
	/* The directory as the caller wrote it, symlinks included, held from
	 * now on: renaming it or a component of it later changes nothing. */
	t->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->dir_fd < 0)
		return sbx_error_set(err, SBX_EXIT_USAGE, errno, "%s: %s", opt, dir);
	t->shown = sbx_xstrdup(path);
	t->name = sbx_xstrdup(name);
	if (fstat(t->dir_fd, &st) < 0)
		return sbx_error_set(err, SBX_EXIT_USAGE, errno, "%s: %s", opt, dir);
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	/* FILE must be new, as --artifacts DIR must be empty: what is there
	 * is the caller's (or someone else's) and is left alone. */
	if (fstatat(t->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return sbx_error_set(err, SBX_EXIT_USAGE, 0,
					     "%s: %s: is a symbolic link (not followed); name a new file",
					     opt, path);
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "%s: %s: exists (not overwritten); name a new file", opt, path);
	}
	if (errno != ENOENT)
		return sbx_error_set(err, SBX_EXIT_USAGE, errno, "%s: %s", opt, path);
	/* Told now rather than after the payload has run. */
	if (faccessat(t->dir_fd, ".", W_OK | X_OK, AT_EACCESS) < 0)
		return sbx_error_set(err, SBX_EXIT_USAGE, errno, "%s: %s: cannot create a file in %s",
				     opt, path, dir);
	return 0;
}

/* The first component of @rest ("a/b/c" -> "a"), as a new string. */
static char *first_component(const char *rest)
{
	const char *slash = strchr(rest, '/');

	return slash ? sbx_xstrndup(rest, (size_t)(slash - rest)) : sbx_xstrdup(rest);
}

/* FILE must not land in the artifacts directory: there it would be an
 * entry that the manifest does not list, or collide with an artifact. */
static int outside_artifacts(const char *opt, const struct sbx_stream_target *t,
			     const struct sbx_artifacts_dir *ad, struct sbx_error *err)
{
	_cleanup_free_ char *first = NULL;
	struct stat st;

	if (ad->base_fd < 0 || fstat(ad->base_fd, &st) < 0)
		return 0;
	if (st.st_dev != t->dev || st.st_ino != t->ino)
		return 0;
	/* DIR exists and is empty, so nothing below it exists yet: only DIR
	 * itself can be FILE's directory. */
	if (!*ad->rest)
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "%s: %s: inside the --artifacts directory %s; name a file outside it",
				     opt, t->shown, ad->shown);
	first = first_component(ad->rest);
	if (!strcmp(first, t->name))
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "%s: %s: is where the --artifacts directory %s is to be made",
				     opt, t->shown, ad->shown);
	return 0;
}

int sbx_streams_open(struct sbx_streams *st, const char *const paths[_SBX_STREAM_MAX],
		     const struct sbx_artifacts_dir *ad, struct sbx_error *err)
{
	struct sbx_stream_target *o = &st->t[SBX_STREAM_STDOUT], *e = &st->t[SBX_STREAM_STDERR];

	for (int i = 0; i < _SBX_STREAM_MAX; i++)
		st->t[i] = (struct sbx_stream_target){ .dir_fd = -1 };
	for (int i = 0; i < _SBX_STREAM_MAX; i++) {
		if (!paths[i])
			continue;
		if (open_target(option[i], paths[i], &st->t[i], err) < 0 ||
		    outside_artifacts(option[i], &st->t[i], ad, err) < 0)
			return -1;
	}
	if (o->dir_fd >= 0 && e->dir_fd >= 0 && o->dev == e->dev && o->ino == e->ino &&
	    !strcmp(o->name, e->name))
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "--stdout, --stderr: %s: the same file for both; name two files",
				     e->shown);
	return 0;
}

void sbx_streams_close(struct sbx_streams *st)
{
	for (int i = 0; i < _SBX_STREAM_MAX; i++) {
		struct sbx_stream_target *t = &st->t[i];

		/* Only sbx_streams_open() sets shown, and with it the fd. */
		if (!t->shown)
			continue;
		if (t->dir_fd >= 0)
			close(t->dir_fd);
		t->dir_fd = -1;
		free(t->name);
		free(t->shown);
		t->name = t->shown = NULL;
	}
}

void sbx_streams_reserve(struct sbx_collection *c)
{
	for (size_t i = 0; i < c->n; i++) {
		struct sbx_artifact *a = &c->items[i];
		const char *p = a->path;

		if (a->status != SBX_ARTIFACT_PROMOTED || !p ||
		    strncasecmp(p, SBX_STREAMS_DIR, strlen(SBX_STREAMS_DIR)) ||
		    (p[strlen(SBX_STREAMS_DIR)] && p[strlen(SBX_STREAMS_DIR)] != '/'))
			continue;
		/* Not validated, never promoted; its quarantine copy goes with
		 * the collection. */
		a->status = SBX_ARTIFACT_REJECTED;
		a->reason_code = SBX_RC_RESERVED_NAME;
		free(a->reason);
		a->reason = sbx_xstrdup("name reserved: " SBX_STREAMS_DIR
					"/ in the artifacts directory holds sbx's captures of stdout and stderr");
	}
}

/* Create @name beneath @dirfd, new, and fill it with @s's capture. */
static int write_capture(int dirfd, const char *name, const char *shown, const char *opt,
			 const struct sbx_stream *s, struct sbx_error *err)
{
	_cleanup_close_ int fd = openat(dirfd, name,
					O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
					0644);
	int e;

	if (fd < 0 && errno == EEXIST)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "%s: %s: exists now (it appeared during the run); not overwritten, the capture is not kept",
				     opt, shown);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s: %s", opt, shown);
	if (sbx_write_all(fd, s->buf, s->len) == (ssize_t)s->len && close(TAKE_FD(fd)) == 0)
		return 0;
	/* Half a capture would not match its sha256: none is better. */
	e = errno;
	unlinkat(dirfd, name, 0);
	return sbx_error_set(err, SBX_EXIT_SOFTWARE, e, "%s: %s: write", opt, shown);
}

int sbx_streams_keep(const struct sbx_streams *st, const struct sbx_artifacts_dir *ad,
		     const struct sbx_stream *const s[_SBX_STREAM_MAX], struct sbx_error *err)
{
	_cleanup_close_ int root = -1, dir = -1;
	_cleanup_free_ char *shown_dir = NULL;

	for (int i = 0; i < _SBX_STREAM_MAX; i++) {
		const struct sbx_stream_target *t = &st->t[i];
		_cleanup_free_ char *shown = NULL;

		/* A capture the supervisor never finished has no sha256 to
		 * match, and an empty one nothing to read: nothing to keep.
		 * (So a run that printed nothing and wrote no outputs - most
		 * runs of a service - makes no directory and no file.) */
		if (!s[i]->sha256[0] || s[i]->len == 0)
			continue;
		if (t->dir_fd >= 0) {
			if (write_capture(t->dir_fd, t->name, t->shown, option[i], s[i], err) < 0)
				return -1;
			continue;
		}
		if (dir < 0) {
			root = sbx_artifacts_dir_make(ad, false, err);
			if (root < 0)
				return -1;
			shown_dir = sbx_xasprintf("%s/%s", ad->shown, SBX_STREAMS_DIR);
			/* New, or not used: nothing of the payload's is promoted
			 * there, so what is there came from elsewhere. */
			if (mkdirat(root, SBX_STREAMS_DIR, 0755) < 0)
				return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
						     "--artifacts: %s: cannot be made; the captures are not kept",
						     shown_dir);
			dir = sbx_open_beneath(root, SBX_STREAMS_DIR, O_RDONLY | O_DIRECTORY);
			if (dir < 0)
				return sbx_error_set(err, errno == ENOSYS ? SBX_EXIT_UNAVAILABLE : SBX_EXIT_SOFTWARE,
						     errno, "--artifacts: %s", shown_dir);
		}
		shown = sbx_xasprintf("%s/%s", shown_dir, file_name[i]);
		if (write_capture(dir, file_name[i], shown, "--artifacts", s[i], err) < 0)
			return -1;
	}
	return 0;
}
