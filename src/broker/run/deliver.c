/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deliver.c - see deliver.h.  The manifest is written with the same care
 * as the captures (streams.c): beneath directory fds opened at the start,
 * O_NOFOLLOW, and in the run's directory O_EXCL.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deliver.h"
#include "hold.h"
#include "run.h"
#include "syscalls.h"

int sbx_deliver_open(struct sbx_deliver *d, const struct sbx_run_opts *o, struct sbx_error *err)
{
	struct stat st;
	int fl;

	*d = (struct sbx_deliver)SBX_DELIVER_INIT;
	d->attached = o->attach;
	if (o->manifest_file && o->manifest_fd_set)
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "--manifest, --manifest-fd: name one place for the manifest");
	if (o->stdin_pipe && o->job && !strcmp(o->job, "-"))
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "--stdin: the job is read from stdin (JOB is -); pass the job as a file");
	if (o->manifest_file) {
		/* Emptied and rewritten: the same command run twice writes the
		 * same FILE.  Never through a symlink, never a device or FIFO
		 * whose open would block or do something else. */
		d->fd = open(o->manifest_file,
			     O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
		if (d->fd < 0 && errno == ELOOP)
			return sbx_error_set(err, SBX_EXIT_USAGE, 0,
					     "--manifest: %s: is a symbolic link (not followed); name a regular file",
					     o->manifest_file);
		if (d->fd < 0)
			return sbx_error_set(err, SBX_EXIT_USAGE, errno, "--manifest: %s",
					     o->manifest_file);
		d->own_fd = true;
		if (fstat(d->fd, &st) < 0 || !S_ISREG(st.st_mode))
			return sbx_error_set(err, SBX_EXIT_USAGE, 0,
					     "--manifest: %s: not a regular file; name a regular file",
					     o->manifest_file);
		if (ftruncate(d->fd, 0) < 0 || fcntl(d->fd, F_SETFL, 0) < 0)
			return sbx_error_set(err, SBX_EXIT_USAGE, errno, "--manifest: %s",
					     o->manifest_file);
		d->shown = sbx_xstrdup(o->manifest_file);
	} else if (o->manifest_fd_set) {
		fl = fcntl(o->manifest_fd, F_GETFL);
		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
			sbx_error_set(err, SBX_EXIT_USAGE, fl < 0 ? errno : 0,
				      "--manifest-fd: %d: not open for writing", o->manifest_fd);
			sbx_error_hint(err,
				       "open it for sbx in the shell, as in: sbx run --manifest-fd %d ... %d>m.json",
				       o->manifest_fd, o->manifest_fd);
			return -1;
		}
		d->fd = o->manifest_fd;
		d->shown = sbx_xasprintf("fd %d", o->manifest_fd);
	}
	/* A reader that went away is the supervisor's EPIPE to handle. */
	if (d->attached || o->stdin_pipe)
		signal(SIGPIPE, SIG_IGN);
	return 0;
}

void sbx_deliver_close(struct sbx_deliver *d)
{
	if (d->own_fd && d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	free(d->shown);
	d->shown = NULL;
}

void sbx_deliver_wire(const struct sbx_deliver *d, const struct sbx_run_opts *o,
		      struct sbx_spawn *sp, struct sbx_supervise_opts *so)
{
	so->mirror = d->attached;
	so->mirror_fd[0] = STDOUT_FILENO;
	so->mirror_fd[1] = STDERR_FILENO;
	sp->want_stdin = so->pump_stdin = o->stdin_pipe;
	so->stdin_fd = STDIN_FILENO;
}

/* DIR/.sbx/manifest.json, new, beside the captures (streams.c made
 * DIR/.sbx if there were any; nothing of the payload's is ever there). */
static int write_in_run_dir(struct sbx_run *run, const char *line, size_t len)
{
	const struct sbx_artifacts_dir *ad = &run->artifacts;
	_cleanup_close_ int root = -1, dir = -1, fd = -1;
	_cleanup_free_ char *shown = sbx_xasprintf("%s/%s/%s", ad->shown, SBX_STREAMS_DIR,
						   SBX_MANIFEST_FILE);

	root = sbx_artifacts_dir_make(ad, false, &run->err);
	if (root < 0)
		return -1;
	if (mkdirat(root, SBX_STREAMS_DIR, 0755) < 0 && errno != EEXIST)
		return sbx_error_set(&run->err, SBX_EXIT_SOFTWARE, errno, "manifest: %s", shown);
	dir = sbx_open_beneath(root, SBX_STREAMS_DIR, O_RDONLY | O_DIRECTORY);
	if (dir < 0)
		return sbx_error_set(&run->err, errno == ENOSYS ? SBX_EXIT_UNAVAILABLE : SBX_EXIT_SOFTWARE,
				     errno, "manifest: %s", shown);
	fd = openat(dir, SBX_MANIFEST_FILE,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0)
		return sbx_error_set(&run->err, SBX_EXIT_SOFTWARE, errno, "manifest: %s", shown);
	if (sbx_write_all(fd, line, len) != (ssize_t)len || close(TAKE_FD(fd)) < 0) {
		int e = errno;

		unlinkat(dir, SBX_MANIFEST_FILE, 0);
		return sbx_error_set(&run->err, SBX_EXIT_SOFTWARE, e, "manifest: %s: write", shown);
	}
	free(run->deliver.shown);
	run->deliver.shown = TAKE_PTR(shown);
	return 0;
}

/*
 * The signed manifest, and for a run that holds outputs the hold's record.
 * The record names the manifest's digest, so it is written after signing;
 * if it cannot be, the manifest is made again, truthful (nothing held).
 */
static int sign(struct sbx_run *run, char **line, size_t *len)
{
	struct sbx_error herr = { 0 };
	json_t *manifest;
	int code;

	/* The key is read now, for the signature, and wiped right after: it
	 * is not in memory while the payload runs or its outputs are
	 * validated (it was read at the start only to refuse a run that
	 * could not be signed before anything ran). */
	if (sbx_sign_default_key(run->opts->key, run->cfg.signing_key, &run->key, &run->err) < 0)
		return -1;
	manifest = sbx_manifest_build(run);
	code = sbx_manifest_finish(manifest, &run->key, line, len, &run->err);
	if (code == 0 && run->hold && sbx_hold_record(run, *line, *len, &herr) < 0) {
		sbx_error_print(&herr);
		sbx_hold_abandon(run, "not held: the hold could not be recorded");
		json_decref(manifest);
		free(*line);
		*line = NULL;
		manifest = sbx_manifest_build(run);
		code = sbx_manifest_finish(manifest, &run->key, line, len, &run->err);
	}
	json_decref(manifest);
	sbx_key_clear(&run->key);
	return code;
}

int sbx_deliver_manifest(struct sbx_run *run)
{
	struct sbx_deliver *d = &run->deliver;
	_cleanup_free_ char *line = NULL;
	size_t len = 0;

	if (sign(run, &line, &len) < 0)
		return -1;
	if (d->fd >= 0) {
		if (sbx_write_all(d->fd, line, len) != (ssize_t)len)
			return sbx_error_set(&run->err, SBX_EXIT_SOFTWARE, errno, "--manifest: %s: write",
					     d->shown);
		return 0;
	}
	if (d->attached)
		return write_in_run_dir(run, line, len);
	fwrite(line, 1, len, stdout);
	fflush(stdout);
	return 0;
}
