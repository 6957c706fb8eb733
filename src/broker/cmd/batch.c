/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * batch.c - `sbx batch DIR|-`: many job files, each one `sbx run`.
 *
 * Theory of operation
 * -------------------
 * This process only schedules.  Each job runs in a child forked from it
 * that calls the run path in-process (sbx_cmd_run, exactly as `sbx run
 * JOB` does, stdout a file in the output directory): a fork costs less
 * than an exec of sbx, which maps and relocates its libraries again, and
 * keeps every guarantee of `sbx run`, since a run's isolation is built
 * from scratch in its own process either way.  The children take their
 * slots through admission like any `sbx run`: at most --jobs of them
 * exist at once, and the host-wide budget (max_concurrent, memory) is
 * the one every sbx process shares, not a second scheduler.
 *
 * Each child writes its manifest to OUT/.NAME.partial; when it exits,
 * the parent renames that to OUT/NAME (so a manifest in OUT is always
 * whole) and copies the line to stdout.  A job whose OUT/NAME is its
 * result is skipped: that is how a batch resumes.  OUT is only a
 * directory, which others may have written to, so a result is one only
 * when it verifies: a regular file of at most SBX_MANIFEST_MAX_BYTES, read
 * with one read(2), the canonical line signed with the key the runs sign
 * with (the parent loads it, before any job, and keeps its public half),
 * recording the job file's sha256 as the file is now, and a status other
 * than cancelled.  Anything else there is overwritten by the job's new
 * run.  A cancelled run's manifest goes to stdout only, so that the next
 * batch runs the job again.  OUT is locked (flock on its fd, which the
 * children share) for the life of the batch and its runs: two batches
 * never share it.
 *
 * Signals: SIGINT, SIGTERM and SIGHUP stop the batch: no job is started
 * any more, each running child gets SIGTERM (a cancellation for `sbx
 * run`, ending with a signed `cancelled` manifest), and the batch exits
 * 130 once all are reaped.  A child also gets SIGTERM when this process
 * dies (PR_SET_PDEATHSIG) and then removes its .partial file, so even a
 * SIGKILLed batch leaves no run and no file behind.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "admission.h"
#include "batch-progress.h"
#include "batch.h"
#include "cli.h"
#include "digest.h"
#include "error.h"
#include "hostconfig.h"
#include "job.h"
#include "json.h"
#include "sign.h"
#include "util.h"

/* The longest --queue-timeout: a batch's runs wait for capacity. */
#define BATCH_QUEUE_TIMEOUT_MS (86400ull * 1000)
#define PARTIAL_SUFFIX ".partial"

struct job {
	char *path;        /* as given, for sbx run and messages */
	char *shown;       /* the path for messages: control characters escaped */
	char *name;        /* the manifest's name in OUT */
	const char *bad;   /* why it is not a job file, or NULL */
	pid_t pid;         /* running child, or 0 */
	int partial_fd;    /* OUT/.NAME.partial while running */
};

struct batch {
	const struct sbx_batch_opts *o;
	struct job *jobs;
	size_t n, next;
	int out_fd;
	struct sbx_key pub; /* the public half of the key the runs sign with */
	unsigned running, max_running;
	/* Counts by manifest status, and of what ran no job. */
	unsigned by_status[SBX_STATUS_ERROR + 1];
	unsigned skipped, skipped_bad, not_job, no_manifest;
	unsigned untrusted; /* files in OUT under a job's name that were no result */
	bool stopping, cancelled;
	/* Standard output is a terminal: a person reads it, and 200 lines
	 * of JSON would bury the summary; the manifests stay in OUT, which
	 * the summary names (as sbx run on a terminal keeps its manifest in
	 * the run's directory). */
	bool quiet_stdout;
	int host_code; /* a run that printed no manifest: config, key, catalog */
	struct sbx_batch_progress progress; /* on a terminal */
};

static void jobs_free(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->jobs[i].path);
		free(b->jobs[i].shown);
		free(b->jobs[i].name);
	}
	free(b->jobs);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* Is what @st describes a job file?  Only a regular file, never through a
 * symbolic link: a link in a job directory would let whoever can write
 * there have the batch read (and quote in its errors) any file the caller
 * can read, and a FIFO would block its reader. */
static const char *not_a_job(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "a symbolic link";
	if (!S_ISREG(st->st_mode))
		return S_ISFIFO(st->st_mode) ? "a FIFO" : "not a regular file";
	return NULL;
}

/* @s for a message: a name with a newline in it must not forge a line. */
static char *escaped(const char *s)
{
	size_t len = 6 * strlen(s) + 8;
	char *out = sbx_xmalloc(len);

	sbx_json_escape(s, out, len);
	return out;
}

static void add_job(struct batch *b, size_t *cap, char *path, char *name, const char *bad)
{
	if (b->n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		b->jobs = sbx_xrealloc(b->jobs, *cap * sizeof(*b->jobs));
	}
	b->jobs[b->n++] = (struct job){ .path = path, .shown = escaped(path), .name = name, .bad = bad,
					.partial_fd = -1 };
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct job *)a)->name, ((const struct job *)b)->name);
}

/* DIR: its *.json entries (not hidden ones, as a shell glob), sorted. */
static int list_dir(struct batch *b, const char *dir, struct sbx_error *err)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	size_t cap = 0;
	DIR *d;

	if (dfd < 0)
		return sbx_error_set(err, SBX_EXIT_INVALID, errno, "batch: %s: cannot open", dir);
	d = fdopendir(dup(dfd));
	if (!d)
		return sbx_error_set(err, SBX_EXIT_INVALID, errno, "batch: %s: cannot read", dir);
	while ((errno = 0, de = readdir(d))) {
		struct stat st;
		const char *bad;

		if (de->d_name[0] == '.' || !ends_with(de->d_name, ".json"))
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			bad = "cannot stat";
		else
			bad = not_a_job(&st);
		add_job(b, &cap, sbx_xasprintf("%s/%s", dir, de->d_name), sbx_xstrdup(de->d_name), bad);
	}
	if (errno) {
		int e = errno;
		closedir(d);
		return sbx_error_set(err, SBX_EXIT_INVALID, e, "batch: %s: cannot read", dir);
	}
	closedir(d);
	qsort(b->jobs, b->n, sizeof(*b->jobs), by_name);
	return 0;
}

char *sbx_batch_manifest_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return NULL;
	return ends_with(base, ".json") ? sbx_xstrdup(base) : sbx_xasprintf("%s.json", base);
}

/* -: one path a line on stdin, in that order; blank lines are ignored. */
static int list_stdin(struct batch *b, struct sbx_error *err)
{
	_cleanup_free_ char *line = NULL;
	size_t len = 0, cap = 0;
	unsigned lineno = 0;
	ssize_t n;

	while ((n = getline(&line, &len, stdin)) >= 0) {
		const char *bad;
		char *name;
		struct stat st;

		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n == 0)
			continue;
		if (strlen(line) != (size_t)n)
			return sbx_error_set(err, SBX_EXIT_INVALID, 0, "batch: <stdin> line %u: a NUL byte",
					     lineno);
		name = sbx_batch_manifest_name(line);
		if (!name)
			return sbx_error_set(err, SBX_EXIT_INVALID, 0,
					     "batch: <stdin> line %u: \"%s\" names no file", lineno, line);
		if (lstat(line, &st) < 0)
			bad = "cannot stat";
		else
			bad = not_a_job(&st);
		add_job(b, &cap, sbx_xstrdup(line), name, bad);
	}
	if (ferror(stdin))
		return sbx_error_set(err, SBX_EXIT_INVALID, errno, "batch: <stdin>: cannot read");
	return 0;
}

static const char *const *clash_names;

static int by_clash_name(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, k = *(const size_t *)b;
	int c = strcmp(clash_names[i], clash_names[k]);

	return c ? c : (i > k) - (i < k);
}

bool sbx_batch_names_clash(const char *const *names, size_t n, size_t *first, size_t *second)
{
	_cleanup_free_ size_t *v = sbx_xcalloc(n ? n : 1, sizeof(*v));

	for (size_t i = 0; i < n; i++)
		v[i] = i;
	clash_names = names;
	qsort(v, n, sizeof(*v), by_clash_name);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(names[v[i - 1]], names[v[i]])) {
			*first = v[i - 1];
			*second = v[i];
			return true;
		}
	return false;
}

/* Two jobs with one manifest name would overwrite each other's record
 * and the second would be skipped as done: refused before anything runs. */
static int check_names(struct batch *b, struct sbx_error *err)
{
	_cleanup_free_ const char **names = sbx_xcalloc(b->n ? b->n : 1, sizeof(*names));
	size_t i, k;

	for (i = 0; i < b->n; i++)
		names[i] = b->jobs[i].name;
	if (sbx_batch_names_clash(names, b->n, &i, &k)) {
		_cleanup_free_ char *name = escaped(b->jobs[i].name);
		return sbx_error_set(err, SBX_EXIT_INVALID, 0,
				     "batch: %s and %s would both have the manifest %s",
				     b->jobs[i].shown, b->jobs[k].shown, name);
	}
	return 0;
}

/* OUT: made if missing, locked for this batch, and not a directory a job
 * file lives in (its manifests would take the jobs' names). */
static int open_out(struct batch *b, const char *out, struct sbx_error *err)
{
	struct stat ost;

	if (mkdir(out, 0777) < 0 && errno != EEXIST)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "batch: --out %s: cannot create",
				     out);
	b->out_fd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->out_fd < 0 || fstat(b->out_fd, &ost) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "batch: --out %s: cannot open",
				     out);
	if (flock(b->out_fd, LOCK_EX | LOCK_NB) < 0)
		return sbx_error_set(err, errno == EWOULDBLOCK ? SBX_EXIT_CAPACITY : SBX_EXIT_UNAVAILABLE,
				     errno == EWOULDBLOCK ? 0 : errno,
				     "batch: --out %s: %s", out,
				     errno == EWOULDBLOCK ? "in use by another sbx batch" : "cannot lock");
	for (size_t i = 0; i < b->n; i++) {
		_cleanup_free_ char *dir = sbx_xstrdup(b->jobs[i].path);
		char *slash = strrchr(dir, '/');
		struct stat st;

		if (slash)
			slash[slash == dir] = '\0';
		if (stat(slash ? dir : ".", &st) == 0 && st.st_dev == ost.st_dev &&
		    st.st_ino == ost.st_ino)
			return sbx_error_set(err, SBX_EXIT_USAGE, 0,
					     "batch: --out %s: holds the job file %s; name another directory",
					     out, b->jobs[i].path);
	}
	/* With the lock held, a .partial file is what a killed batch left. */
	{
		DIR *d = fdopendir(dup(b->out_fd));
		struct dirent *de;

		while (d && (de = readdir(d)))
			if (de->d_name[0] == '.' && ends_with(de->d_name, ".json" PARTIAL_SUFFIX))
				unlinkat(b->out_fd, de->d_name, 0);
		if (d)
			closedir(d);
	}
	return 0;
}

/* The sha256 of @j's job file as it is now, into @hex; false when it is no
 * regular file of at most SBX_JOB_MAX_BYTES (sbx run records no digest
 * for a file it does not read, so no manifest can match then). */
static bool job_digest(const struct job *j, char hex[SBX_SHA256_HEX_LEN + 1])
{
	_cleanup_close_ int fd = open(j->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct sbx_error err = { 0 };
	uint64_t size = 0;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > SBX_JOB_MAX_BYTES)
		return false;
	return sbx_sha256_fd(fd, hex, &size, &err) == 0 && size <= SBX_JOB_MAX_BYTES;
}

enum stored {
	STORED_NONE,      /* nothing there, or a cancelled run: the job runs */
	STORED_DONE,      /* a result that verifies: the job is skipped */
	STORED_UNTRUSTED, /* something else (@why says what): the job runs */
};

/* Whether the manifest open as @fd is the result of @j as it is now,
 * signed with the batch's key; its status into *@status.  @shown names
 * it in @why. */
static enum stored check_result(const struct batch *b, const struct job *j, int fd, const char *shown,
				enum sbx_status *status, struct sbx_error *why)
{
	_cleanup_(json_decrefp) json_t *m = NULL;
	char hex[SBX_SHA256_HEX_LEN + 1];
	const char *sha, *s, *bad;

	if (sbx_manifest_load(fd, shown, &b->pub, &m, why) < 0) {
		/* (the signature's reasons name no file) */
		if (strncmp(why->msg, shown, strlen(shown)))
			sbx_error_prefix(why, "%s: ", shown);
		return STORED_UNTRUSTED;
	}
	sha = json_string_value(json_object_get(m, "job_sha256"));
	s = json_string_value(json_object_get(m, "status"));
	if (!sha) {
		bad = "records no job_sha256";
	} else if (!job_digest(j, hex)) {
		bad = "the job file cannot be read to compare its sha256";
	} else if (strcmp(sha, hex)) {
		/* Signed with this batch's key, but for another job file, or
		 * this one before an edit: not a result of the job as it is. */
		bad = "the result of another job file (its job_sha256 is not the file's)";
	} else {
		for (int i = 0; s && i <= SBX_STATUS_ERROR; i++)
			if (!strcmp(s, sbx_status_name((enum sbx_status)i))) {
				*status = (enum sbx_status)i;
				/* Never kept by a batch: a run that did not end. */
				return i == SBX_STATUS_CANCELLED ? STORED_NONE : STORED_DONE;
			}
		bad = "records no status sbx knows";
	}
	sbx_error_set(why, SBX_EXIT_FAILED, 0, "%s: %s", shown, bad);
	return STORED_UNTRUSTED;
}

/* What OUT holds under @j's manifest name; for STORED_DONE, *@status is
 * the status the result records. */
static enum stored stored_result(const struct batch *b, const struct job *j, enum sbx_status *status,
				 struct sbx_error *why)
{
	_cleanup_free_ char *shown = sbx_xasprintf("%s/%s", b->o->out, j->name);
	_cleanup_close_ int fd = -1;
	const char *bad;
	struct stat st;

	if (fstatat(b->out_fd, j->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return STORED_NONE;
		sbx_error_set(why, SBX_EXIT_FAILED, errno, "%s: cannot stat", shown);
		return STORED_UNTRUSTED;
	}
	/* Only a regular file, opened without following a link or waiting
	 * on a FIFO (it may have been swapped since the look): whoever can
	 * write to OUT must not have the batch read elsewhere, or hang.  The
	 * size is capped before a byte is read (sbx_manifest_read). */
	if ((bad = not_a_job(&st))) {
		sbx_error_set(why, SBX_EXIT_FAILED, 0, "%s: %s", shown, bad);
		return STORED_UNTRUSTED;
	}
	fd = openat(b->out_fd, j->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		sbx_error_set(why, SBX_EXIT_FAILED, fd < 0 ? errno : 0, "%s: %s", shown,
			      fd < 0 ? "cannot open" : "not a regular file");
		return STORED_UNTRUSTED;
	}
	return check_result(b, j, fd, shown, status, why);
}

static _noreturn_ void child(struct batch *b, struct job *j, pid_t batch_pid, int sfd)
{
	struct sbx_run_opts o = b->o->run;
	sigset_t chld;
	int null, code;

	/* The batch's end is the run's cancellation, however it ends (also
	 * when it died before this line). */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != batch_pid)
		kill(getpid(), SIGTERM);
	close(sfd);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(j->partial_fd, STDOUT_FILENO) < 0)
		_exit(SBX_EXIT_SOFTWARE);
	close(null);
	close(j->partial_fd);
	/* SIGINT, SIGTERM and SIGHUP stay blocked: the run reads them from
	 * its own signalfd (a cancellation), as `sbx run` does. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_UNBLOCK, &chld, NULL);
	/* An ignored signal stays ignored across exec: the sandbox's init
	 * must not inherit the batch's SIG_IGN. */
	signal(SIGPIPE, SIG_DFL);
	o.job = j->path;
	/* --artifacts DIR: each run's own DIR/RUN_ID, as sbx-runs/RUN_ID is
	 * for `sbx run`. */
	o.artifacts_parent = o.artifacts;
	o.artifacts = NULL;
	/* N runs drawing a status line each on one terminal would garble it;
	 * the batch reports instead (-v still shows each run's events). */
	if (o.common.verbosity == 0)
		o.common.verbosity = -1;
	if (!b->o->queue_timeout_set)
		o.queue_timeout_ms = BATCH_QUEUE_TIMEOUT_MS;
	code = sbx_cmd_run(&o);
	fflush(NULL);
	/* No batch to keep the manifest: a killed batch leaves no .partial
	 * file behind.  (OUT's fd, and with it the batch's lock on OUT, is
	 * held until here: no other batch starts on OUT meanwhile.) */
	if (getppid() != batch_pid) {
		_cleanup_free_ char *partial = sbx_xasprintf(".%s" PARTIAL_SUFFIX, j->name);
		unlinkat(b->out_fd, partial, 0);
	}
	/* _exit: the atexit handlers are the batch's, not this run's. */
	_exit(code);
}

static void say_not_run(struct job *j, const char *what)
{
	fprintf(stderr, "sbx: batch: %s: %s; not run\n", j->shown, what);
}

/* Start the next job; false when none is left to start. */
static bool start_next(struct batch *b, int sfd)
{
	pid_t self = getpid();

	while (b->next < b->n) {
		struct job *j = &b->jobs[b->next++];
		_cleanup_free_ char *partial = NULL;
		struct sbx_error why = { 0 };
		enum sbx_status s = SBX_STATUS_ERROR;

		if (j->bad) {
			say_not_run(j, j->bad);
			b->not_job++;
			continue;
		}
		switch (stored_result(b, j, &s, &why)) {
		case STORED_DONE:
			b->skipped++;
			if (s != SBX_STATUS_SUCCEEDED)
				b->skipped_bad++;
			continue;
		case STORED_UNTRUSTED:
			b->untrusted++;
			if (b->o->run.common.verbosity >= 0) {
				char text[sizeof(why.msg) + 128];
				_cleanup_free_ char *shown = escaped(sbx_error_text(&why, text, sizeof(text)));

				fprintf(stderr, "sbx: batch: %s: no result to trust in --out (%s); running it again\n",
					j->shown, shown);
			}
			break;
		case STORED_NONE:
			break;
		}
		partial = sbx_xasprintf(".%s" PARTIAL_SUFFIX, j->name);
		j->partial_fd = openat(b->out_fd, partial,
				       O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (j->partial_fd < 0) {
			fprintf(stderr, "sbx: batch: %s: cannot create its manifest in --out: %m\n",
				j->shown);
			b->no_manifest++;
			b->host_code = SBX_EXIT_UNAVAILABLE;
			b->stopping = true;
			return false;
		}
		fflush(NULL);
		j->pid = fork();
		if (j->pid == 0)
			child(b, j, self, sfd);
		if (j->pid < 0) {
			fprintf(stderr, "sbx: batch: fork: %m\n");
			unlinkat(b->out_fd, partial, 0);
			close(j->partial_fd);
			j->partial_fd = -1;
			j->pid = 0;
			b->no_manifest++;
			b->host_code = SBX_EXIT_SOFTWARE;
			b->stopping = true;
			return false;
		}
		b->running++;
		return true;
	}
	return false;
}

/* A child ended: its manifest to OUT (unless cancelled) and to stdout. */
static void finish(struct batch *b, struct job *j, int wstatus)
{
	_cleanup_free_ char *partial = sbx_xasprintf(".%s" PARTIAL_SUFFIX, j->name);
	_cleanup_free_ char *line = NULL;
	int code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : SBX_EXIT_SOFTWARE;
	struct stat st;
	ssize_t n = 0;

	b->running--;
	j->pid = 0;
	if (fstat(j->partial_fd, &st) == 0 && st.st_size > 0) {
		line = sbx_xmalloc((size_t)st.st_size);
		n = pread(j->partial_fd, line, (size_t)st.st_size, 0);
	}
	close(j->partial_fd);
	j->partial_fd = -1;
	if (n <= 0 || line[n - 1] != '\n') {
		/* No manifest: an error before the job was read (options,
		 * config, key, catalog), the same for every job; stop. */
		unlinkat(b->out_fd, partial, 0);
		if (WIFSIGNALED(wstatus))
			fprintf(stderr, "sbx: batch: %s: the run died of signal %d without a manifest\n",
				j->shown, WTERMSIG(wstatus));
		else
			fprintf(stderr, "sbx: batch: %s: exit %d without a manifest; stopping\n", j->shown,
				code);
		b->no_manifest++;
		if (!b->host_code)
			b->host_code = code ? code : SBX_EXIT_SOFTWARE;
		b->stopping = true;
		return;
	}
	if (code == SBX_EXIT_CANCELLED || renameat(b->out_fd, partial, b->out_fd, j->name) < 0) {
		if (code != SBX_EXIT_CANCELLED)
			fprintf(stderr, "sbx: batch: %s: cannot keep its manifest in --out: %m\n",
				j->shown);
		unlinkat(b->out_fd, partial, 0);
	}
	if (!b->quiet_stdout && sbx_write_all(STDOUT_FILENO, line, (size_t)n) < 0 && errno == EPIPE)
		b->stopping = true;
	b->by_status[sbx_status_from_exit(code)]++;
	if (code && code != SBX_EXIT_CANCELLED) {
		/* What went wrong, on one line with the job's name: the
		 * manifest's reason (the run's own diagnostics may not name
		 * the file). */
		json_t *m = json_loadb(line, (size_t)n, 0, NULL);
		const char *reason = json_string_value(json_object_get(m, "reason"));
		_cleanup_free_ char *why = reason ? escaped(reason) : NULL;

		fprintf(stderr, "sbx: batch: %s: %s (%d)%s%s\n", j->shown,
			sbx_status_name(sbx_status_from_exit(code)), code, why ? ": " : "", why ? why : "");
		json_decref(m);
	}
}

static void reap(struct batch *b)
{
	int wstatus;
	pid_t pid;

	while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0)
		for (size_t i = 0; i < b->next; i++)
			if (b->jobs[i].pid == pid) {
				finish(b, &b->jobs[i], wstatus);
				break;
			}
}

/* Cancel every running child: each is our own fork, not yet reaped. */
static void cancel_running(struct batch *b)
{
	for (size_t i = 0; i < b->next; i++)
		if (b->jobs[i].pid > 0)
			kill(b->jobs[i].pid, SIGTERM);
}

/* What the progress line shows. */
static void counts(const struct batch *b, struct sbx_batch_counts *c)
{
	size_t ran = 0;

	for (int i = 0; i <= SBX_STATUS_ERROR; i++)
		ran += b->by_status[i];
	c->ran = ran;
	c->done = ran + b->skipped + b->not_job + b->no_manifest;
	c->running = b->running;
	c->failed = ran - b->by_status[SBX_STATUS_SUCCEEDED] + b->skipped_bad + b->not_job +
		    b->no_manifest;
	c->queued = b->n - b->next;
}

/*
 * --json: the summary as one object, the last line on stdout after the
 * manifests.  Its "kind" tells it from them (a run's manifest has none,
 * a promote manifest says "promote").
 */
static void summary_json(const struct batch *b, uint64_t ms, int code)
{
	json_t *by = json_object(), *doc;
	size_t ran = 0;
	char *line;

	for (int i = 0; i <= SBX_STATUS_ERROR; i++) {
		ran += b->by_status[i];
		json_object_set_new(by, sbx_status_name((enum sbx_status)i),
				    json_integer(b->by_status[i]));
	}
	doc = json_pack("{s:s, s:I, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:i}", "kind",
			"batch-summary", "jobs", (json_int_t)b->n, "ran", (json_int_t)ran,
			"elapsed_ms", (json_int_t)ms, "by_status", by, "skipped",
			(json_int_t)b->skipped, "skipped_not_succeeded", (json_int_t)b->skipped_bad,
			"run_again", (json_int_t)b->untrusted, "not_job_files", (json_int_t)b->not_job,
			"without_manifest", (json_int_t)b->no_manifest, "not_started",
			(json_int_t)(b->n - b->next), "exit", code);
	line = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(doc);
	/* Like the manifests: a reader that went away costs nothing more. */
	if (line) {
		_cleanup_free_ char *nl = sbx_xasprintf("%s\n", line);

		(void)!sbx_write_all(STDOUT_FILENO, nl, strlen(nl));
	}
	free(line);
}

static void summary(const struct batch *b, uint64_t t0, int code)
{
	uint64_t ms = (sbx_now_mono_ns() - t0) / 1000000ull;
	unsigned ran = 0;
	char buf[512];
	int len;

	if (b->o->run.common.json)
		summary_json(b, ms, code);

	for (int i = 0; i <= SBX_STATUS_ERROR; i++)
		ran += b->by_status[i];
	len = snprintf(buf, sizeof(buf), "sbx: batch: %zu jobs, %u run in %llu.%03llu s (%.1f/s)", b->n,
		       ran, (unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000),
		       ms ? ran * 1000.0 / (double)ms : 0.0);
	for (int i = 0; i <= SBX_STATUS_ERROR && len < (int)sizeof(buf); i++)
		if (b->by_status[i])
			len += snprintf(buf + len, sizeof(buf) - (size_t)len, ", %u %s", b->by_status[i],
					sbx_status_name((enum sbx_status)i));
	if (b->skipped && len < (int)sizeof(buf))
		len += snprintf(buf + len, sizeof(buf) - (size_t)len,
				"; %u skipped (manifest in --out; %u of them not succeeded)", b->skipped,
				b->skipped_bad);
	if (b->untrusted && len < (int)sizeof(buf))
		len += snprintf(buf + len, sizeof(buf) - (size_t)len,
				"; %u run again (what --out held under their names did not verify)",
				b->untrusted);
	if (b->not_job && len < (int)sizeof(buf))
		len += snprintf(buf + len, sizeof(buf) - (size_t)len, "; %u not job files", b->not_job);
	if (b->no_manifest && len < (int)sizeof(buf))
		len += snprintf(buf + len, sizeof(buf) - (size_t)len, "; %u without a manifest",
				b->no_manifest);
	if (b->next < b->n && len < (int)sizeof(buf))
		len += snprintf(buf + len, sizeof(buf) - (size_t)len, "; %zu not started", b->n - b->next);
	if (b->quiet_stdout && len < (int)sizeof(buf))
		len += snprintf(buf + len, sizeof(buf) - (size_t)len, "; manifests in %s%s", b->o->out,
				b->o->out[0] && b->o->out[strlen(b->o->out) - 1] == '/' ? "" : "/");
	fprintf(stderr, "%s\n", buf);
}

int sbx_cmd_batch(const struct sbx_batch_opts *o)
{
	struct batch b = { .o = o, .out_fd = -1, .quiet_stdout = isatty(STDOUT_FILENO) == 1 };
	struct sbx_hostconfig cfg = { 0 };
	struct sbx_admission_limits lim;
	struct sbx_error err = { 0 };
	struct sbx_key key = { 0 };
	_cleanup_close_ int sfd = -1;
	uint64_t t0 = sbx_now_mono_ns();
	sigset_t set;
	int code, r;

	/* max_concurrent bounds --jobs: more children would only queue.
	 * The key is the one each run will sign with (created here when it
	 * is the default one and missing, once rather than by N runs at
	 * once); only its public half is kept, to verify what OUT holds. */
	if (sbx_hostconfig_load(&cfg, o->run.common.config, &err) < 0 ||
	    /* (a memory budget is not needed here: 1 spares reading meminfo) */
	    sbx_admission_limits_default(&lim, cfg.max_concurrent, 1, &err) < 0 ||
	    sbx_sign_default_key(o->run.key, cfg.signing_key, &key, &err) < 0) {
		sbx_key_clear(&key);
		sbx_hostconfig_free(&cfg);
		sbx_error_print(&err);
		return err.code;
	}
	memcpy(b.pub.pub, key.pub, sizeof(b.pub.pub));
	sbx_key_clear(&key);
	sbx_hostconfig_free(&cfg);
	b.max_running = o->jobs && o->jobs < lim.max_concurrent ? o->jobs : (unsigned)lim.max_concurrent;
	if (o->jobs > lim.max_concurrent && o->run.common.verbosity >= 0)
		fprintf(stderr, "sbx: batch: --jobs %u is above max_concurrent %u; running %u at a time\n",
			o->jobs, (unsigned)lim.max_concurrent, b.max_running);

	if ((strcmp(o->source, "-") ? list_dir(&b, o->source, &err) : list_stdin(&b, &err)) < 0 ||
	    check_names(&b, &err) < 0 || open_out(&b, o->out, &err) < 0) {
		sbx_error_print(&err);
		jobs_free(&b);
		if (b.out_fd >= 0)
			close(b.out_fd);
		return err.code;
	}

	/* Blocked before the first child, so that a signal is never lost
	 * between a look and a wait; children inherit the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		fprintf(stderr, "sbx: batch: signalfd: %m\n");
		jobs_free(&b);
		close(b.out_fd);
		return SBX_EXIT_SOFTWARE;
	}
	/* A reader that went away ends the batch, not this process. */
	signal(SIGPIPE, SIG_IGN);

	/* On a terminal a progress line, redrawn each second and after each
	 * change, and erased while anything else is written to stderr
	 * (starting and reaping jobs print their one-line notes). */
	sbx_batch_progress_init(&b.progress, STDERR_FILENO, o->run.common.verbosity, t0);
	for (;;) {
		struct signalfd_siginfo ssi;
		struct pollfd pfd = { .fd = sfd, .events = POLLIN };
		struct sbx_batch_counts c;

		while (!b.stopping && b.running < b.max_running && start_next(&b, sfd))
			;
		if (b.running == 0 && (b.stopping || b.next >= b.n))
			break;
		counts(&b, &c);
		sbx_batch_progress_show(&b.progress, &c);
		r = poll(&pfd, 1, sbx_batch_progress_enabled(&b.progress) ? 1000 : -1);
		sbx_batch_progress_clear(&b.progress);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "sbx: batch: poll: %m\n");
			b.stopping = true;
			cancel_running(&b);
		}
		while (read(sfd, &ssi, sizeof(ssi)) == sizeof(ssi)) {
			if (ssi.ssi_signo == SIGCHLD)
				continue;
			if (!b.cancelled)
				fprintf(stderr, "sbx: batch: %s: cancelling %u running, not starting %zu\n",
					strsignal((int)ssi.ssi_signo), b.running, b.n - b.next);
			b.cancelled = b.stopping = true;
			cancel_running(&b);
		}
		reap(&b);
	}
	if (b.cancelled)
		code = SBX_EXIT_CANCELLED;
	else if (b.host_code)
		code = b.host_code;
	else if (b.by_status[SBX_STATUS_SUCCEEDED] + b.skipped - b.skipped_bad == b.n)
		code = SBX_EXIT_OK;
	else
		code = SBX_EXIT_FAILED;
	summary(&b, t0, code);
	jobs_free(&b);
	close(b.out_fd);
	return code;
}
