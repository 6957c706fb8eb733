/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.c - the principal-scoped input store and materialization into the
 * run's /work/in (see store.h).
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <sys/pidfd.h>
#include <sys/sendfile.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "cgroup.h"
#include "helper.h"
#include "sbx-archive.h"
#include "job.h"
#include "libexec.h"
#include "store.h"
#include "syscalls.h"

#define COPY_CHUNK (8u << 20)
#define RW_BUFFER (64u * 1024)

bool sbx_principal_name_valid(const char *s)
{
	size_t n = 0;

	if (!s || !((*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (const char *p = s; *p; p++, n++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
		      *p == '-'))
			return false;
	return n <= 32;
}

int sbx_store_root(const char *opt, const char *config_store, char **out, const char **origin,
		   struct sbx_error *err)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	const char *dummy;

	if (!origin)
		origin = &dummy;
	if (opt) {
		*out = sbx_xstrdup(opt);
		*origin = "--store";
		return 0;
	}
	if (config_store) {
		*out = sbx_xstrdup(config_store);
		*origin = "the host config's \"store\"";
		return 0;
	}
	/* The XDG spec says relative values are to be ignored. */
	if (xdg && xdg[0] == '/') {
		*out = sbx_xasprintf("%s/sbx/store", xdg);
		*origin = "the default, $XDG_DATA_HOME/sbx/store";
		return 0;
	}
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());

		home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
	}
	if (!home)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				     "store: no --store, no \"store\" in the host config and no "
				     "home directory for the default");
	*out = sbx_xasprintf("%s/.local/share/sbx/store", home);
	*origin = "the default, ~/.local/share/sbx/store";
	return 0;
}

void sbx_store_close(struct sbx_store *s)
{
	closep(&s->fd);
	free(s->root);
	free(s->dir);
	*s = (struct sbx_store)SBX_STORE_INIT;
}

static int open_beneath(int dirfd, const char *name, int flags)
{
	/* Beneath the directory, no symlink anywhere on the way, no /proc
	 * magic links, and no mount point: a handle names a file of this
	 * principal's directory and nothing else. */
	return sbx_open_beneath(dirfd, name, flags);
}

static int openat2_missing(struct sbx_error *err, const char *what)
{
	sbx_error_set(err, SBX_EXIT_UNAVAILABLE, ENOSYS, "%s: openat2", what);
	sbx_error_hint(err, "sbx needs openat2 (Linux 5.6 or later) to resolve input handles "
			    "safely; it does not fall back to path strings");
	return -1;
}

int sbx_store_open(const char *root, const char *origin, const char *principal,
		   struct sbx_store *s, struct sbx_error *err)
{
	_cleanup_close_ int root_fd = -1;
	int fd;

	*s = (struct sbx_store)SBX_STORE_INIT;
	s->root = sbx_xstrdup(root);
	s->origin = origin;
	s->principal = principal;
	if (!sbx_principal_name_valid(principal))
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "--principal: \"%s\" is not a valid principal name "
				     "(^[a-z_][a-z0-9_-]{0,31}$)",
				     principal ? principal : "");
	s->dir = sbx_xasprintf("%s/%s", root, principal);
	/* The root is the operator's path, trusted as a string. */
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		if (errno == ENOENT) {
			/* An empty store: every handle is refused, saying so. */
			s->missing = SBX_STORE_NO_ROOT;
			return 0;
		}
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "store \"%s\"", root);
	}
	fd = open_beneath(root_fd, principal, O_PATH | O_DIRECTORY);
	if (fd >= 0) {
		s->fd = fd;
		return 0;
	}
	switch (errno) {
	case ENOENT:
		s->missing = SBX_STORE_NO_PRINCIPAL;
		return 0;
	case ENOSYS:
		return openat2_missing(err, "store");
	case ELOOP:
	case EXDEV:
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "store \"%s\": principal \"%s\"",
			      root, principal);
		sbx_error_hint(err, "a principal's store must be a plain directory of the "
				    "store, not a symlink or another mount");
		return -1;
	default:
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno,
				     "store \"%s\": principal \"%s\"", root, principal);
	}
}

/* What kind of file a name of the principal's directory is, for the
 * refusal (lstat: the name itself, never what a link points at). */
static const char *file_kind(const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a fifo";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFLNK:
		return "a symlink";
	default:
		return "not a regular file";
	}
}

/*
 * The refusal of @handle, 77, naming the path at fault and what is wrong
 * with it: what to create or fix is then plain.  Only the principal's own
 * directory (or the store itself) is looked at, so nothing tells whether
 * the name exists for another principal.  @errnum is open's errno, or 0
 * when the open worked but the file is no regular file (@st, may be NULL).
 */
static int refuse(struct sbx_error *err, const struct sbx_store *s, const char *handle,
		  int errnum, const struct stat *st)
{
	const char *p = s->principal ? s->principal : "";
	struct stat lst;

	if (s->fd < 0 && s->missing == SBX_STORE_NO_ROOT) {
		sbx_error_set(err, SBX_EXIT_REFUSED, 0,
			      "handle \"%s\" not found for principal \"%s\": the store %s (%s) "
			      "does not exist",
			      handle, p, s->root ? s->root : "", s->origin ? s->origin : "?");
		sbx_error_hint(err, "create the store directory with a directory per principal, "
				    "or name the store with --store or the host config's \"store\"");
		return -1;
	}
	if (s->fd < 0)
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "handle \"%s\" not found for principal \"%s\": the principal's "
				     "directory %s does not exist in the store",
				     handle, p, s->dir ? s->dir : "");
	switch (errnum) {
	case 0:
		break;
	case ENOENT:
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "handle \"%s\" not found for principal \"%s\": %s/%s does not exist",
				     handle, p, s->dir, handle);
	case EACCES:
	case EPERM:
		return sbx_error_set(err, SBX_EXIT_REFUSED, errnum,
				     "handle \"%s\" not found for principal \"%s\": %s/%s",
				     handle, p, s->dir, handle);
	case EXDEV:
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "handle \"%s\" not found for principal \"%s\": %s/%s is a mount "
				     "point; a handle must be a regular file of the principal's directory",
				     handle, p, s->dir, handle);
	default:
		/* ELOOP, ENXIO, ENODEV: a symlink, a socket or a device; say
		 * which. */
		if (fstatat(s->fd, handle, &lst, AT_SYMLINK_NOFOLLOW) == 0) {
			st = &lst;
			break;
		}
		return sbx_error_set(err, SBX_EXIT_REFUSED, errnum,
				     "handle \"%s\" not found for principal \"%s\": %s/%s", handle,
				     p, s->dir, handle);
	}
	if (st && S_ISLNK(st->st_mode))
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "handle \"%s\" not found for principal \"%s\": %s/%s is a symlink; "
				     "a handle must be a regular file",
				     handle, p, s->dir, handle);
	return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
			     "handle \"%s\" not found for principal \"%s\": %s/%s is %s, not a "
			     "regular file",
			     handle, p, s->dir, handle, st ? file_kind(st) : "not a regular file");
}

int sbx_store_resolve(const struct sbx_store *s, const char *handle, int *fd, struct stat *st,
		      struct sbx_error *err)
{
	_cleanup_close_ int f = -1;
	const char *principal = s->principal;

	*fd = -1;
	/* The job parser checked the name already; checked again because a
	 * name with "/" or ".." must never reach openat2 from any caller. */
	if (!sbx_handle_name_valid(handle))
		return sbx_error_set(err, SBX_EXIT_INVALID, 0, "\"%s\": not a valid handle name",
				     handle ? handle : "");
	if (s->fd < 0)
		return refuse(err, s, handle, ENOENT, NULL);
	/* O_NONBLOCK: opening a fifo must not wait for a writer. */
	f = open_beneath(s->fd, handle, O_RDONLY | O_NONBLOCK);
	if (f < 0) {
		switch (errno) {
		case ENOSYS:
			return openat2_missing(err, "input_handles");
		case ENOENT:  /* missing */
		case ELOOP:   /* a symlink */
		case EXDEV:   /* a mount point, or would leave the directory */
		case ENOTDIR:
		case EACCES:
		case EPERM:
		case ENXIO:   /* a socket, or a device without a driver */
		case ENODEV:
		case ENAMETOOLONG:
			return refuse(err, s, handle, errno, NULL);
		default:
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
					     "handle \"%s\": open", handle);
		}
	}
	if (fstat(f, st) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "handle \"%s\": fstat", handle);
	if (!S_ISREG(st->st_mode))
		return refuse(err, s, handle, 0, st);
	/* A second name of a file can sit in any directory the file's owner
	 * or root could link from: in this principal's directory it would
	 * make another principal's file (or any file of the host the linker
	 * could read) a handle of this one.  Nothing tells the two names
	 * apart, so a store file has exactly one. */
	if (st->st_nlink > 1)
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "handle \"%s\" of principal \"%s\" is a hard link (%ju names); a store file must have one name",
				     handle, principal ? principal : "", (uintmax_t)st->st_nlink);
	*fd = TAKE_FD(f);
	return 0;
}

/* One step of the copy; which mechanism is decided by *@mode and lowered
 * when the kernel or file system cannot do it.  Returns bytes, 0 at EOF. */
enum copy_mode { COPY_RANGE, COPY_SENDFILE, COPY_RW };

static ssize_t copy_step(int src, int dst, off_t *in_off, size_t want, enum copy_mode *mode,
			 char **buf)
{
	ssize_t r;

	for (;;) {
		switch (*mode) {
		case COPY_RANGE:
			r = copy_file_range(src, in_off, dst, NULL, want, 0);
			break;
		case COPY_SENDFILE:
			r = sendfile(dst, src, in_off, want);
			break;
		default:
			if (!*buf)
				*buf = sbx_xmalloc(RW_BUFFER);
			if (want > RW_BUFFER)
				want = RW_BUFFER;
			r = pread(src, *buf, want, *in_off);
			if (r > 0) {
				if (sbx_write_all(dst, *buf, (size_t)r) < 0)
					return -1;
				*in_off += r;
			}
			break;
		}
		if (r >= 0)
			return r;
		if (errno == EINTR)
			continue;
		/* Another file system, an old kernel, a file type the fast
		 * path does not take: the slower path copies the same bytes. */
		if (*mode != COPY_RW &&
		    (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
			(*mode)++;
			continue;
		}
		return -1;
	}
}

int sbx_store_copy(int src_fd, int dst_dirfd, const char *name, uint64_t max_bytes,
		   uint64_t *copied, struct sbx_error *err)
{
	_cleanup_close_ int dst = -1;
	_cleanup_free_ char *buf = NULL;
	enum copy_mode mode = COPY_RANGE;
	off_t in_off = 0;
	uint64_t total = 0;

	if (copied)
		*copied = 0;
	dst = openat(dst_dirfd, name, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0644);
	if (dst < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "\"%s\": create", name);
	/* The umask must not decide what the payload can read. */
	if (fchmod(dst, 0644) < 0)
		goto fail_errno;
	for (;;) {
		uint64_t room = max_bytes - total;
		/* Ask for one byte past the cap so that a file that grew
		 * beyond it while being copied is noticed. */
		size_t want = room >= COPY_CHUNK ? COPY_CHUNK : (size_t)room + 1;
		ssize_t r = copy_step(src_fd, dst, &in_off, want, &mode, &buf);

		if (r < 0)
			goto fail_errno;
		if (r == 0)
			break;
		total += (uint64_t)r;
		if (total > max_bytes) {
			unlinkat(dst_dirfd, name, 0);
			return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
					     "\"%s\": larger than the limit of %" PRIu64 " bytes",
					     name, max_bytes);
		}
	}
	if (copied)
		*copied = total;
	return 0;

fail_errno:
	sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "\"%s\": copy", name);
	unlinkat(dst_dirfd, name, 0);
	return -1;
}

static char *extractor_path(void)
{
	return sbx_libexec_path("sbx-extract");
}

enum stop_reason { STOP_NONE, STOP_CANCEL, STOP_TIMEOUT };

/*
 * Validate and extract @archive_fd into @dst_fd with the sbx-extract
 * helper.  The helper gets the archive as fd 0, the destination as fd 3,
 * its status pipe as fd 1 and a diagnostics pipe as fd 2, an empty
 * environment and nothing else: every other fd of sbx is close-on-exec.
 * While it runs, sbx waits on its pidfd, both pipes, the cancellation
 * signalfd and a timer for the deadline; cancellation and the deadline
 * SIGKILL it (it holds nothing worth a grace period: its output is
 * discarded with the run).
 */
static int run_extractor(int archive_fd, int dst_fd, const struct sbx_archive_limits *lim,
			 const struct sbx_extract_ctl *ctl, const char *handle, uint64_t *bytes,
			 struct sbx_error *err)
{
	_cleanup_free_ char *path = extractor_path();
	_cleanup_free_ char *what = sbx_xasprintf("archive \"%s\"", handle);
	_cleanup_close_ int rd = -1, wr = -1, timer = -1;
	struct sbx_helper h = { .pid = -1, .pidfd = -1, .err_fd = -1 };
	struct sbx_helper_text out = { 0 }, errc = { 0 };
	char args[9][40], *line = out.buf;
	char *argv[24];
	enum stop_reason stop = STOP_NONE;
	size_t argc = 0;
	uint64_t entries = 0;
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	siginfo_t si = { 0 };
	int pipefd[2];

	static const char *const names[9] = { "--max-entries", "--max-entry-bytes",
					      "--max-total-bytes", "--max-ratio", "--max-depth",
					      "--max-name", "--max-path", "--max-memory",
					      "--max-cpu-seconds" };
	uint64_t values[9] = { lim->max_entries, lim->max_entry_bytes, lim->max_total_bytes,
			       lim->max_ratio, lim->max_depth, lim->max_name,
			       lim->max_path, 0, 0 };

	if (ctl)
		values[7] = ctl->memory_mib << 20;
	if (ctl && ctl->deadline_ns) {
		uint64_t now = sbx_now_mono_ns();
		/* CPU seconds: what is left of the wall clock, rounded up. */
		values[8] = ctl->deadline_ns > now ? (ctl->deadline_ns - now) / 1000000000ull + 1 : 1;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "archive \"%s\": pipe", handle);
	rd = pipefd[0];
	wr = pipefd[1];
	if (lseek(archive_fd, 0, SEEK_SET) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "archive \"%s\": seek", handle);

	argv[argc++] = (char *)"sbx-extract";
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (i >= 7 && !values[i])
			continue; /* no memory or CPU limit given */
		snprintf(args[i], sizeof(args[i]), "%" PRIu64, values[i]);
		argv[argc++] = (char *)names[i];
		argv[argc++] = args[i];
	}
	argv[argc] = NULL;

	if (geteuid() == 0 && !(ctl && ctl->own_id)) {
		/* setfsuid/setfsgid with an invalid id change nothing and
		 * return the current value: the caller set the sandbox's. */
		uid = (uid_t)setfsuid((uid_t)-1);
		gid = (gid_t)setfsgid((gid_t)-1);
	}
	if (sbx_helper_start(&(struct sbx_helper_args){ .what = what, .name = "sbx-extract",
							.argv = argv, .fd0 = archive_fd, .fd1 = wr,
							.fd3 = dst_fd, .uid = uid, .gid = gid,
							.ipc_namespace = true,
							.cg = ctl ? ctl->cg : NULL },
			     &h, err) < 0)
		return -1;
	closep(&wr);
	if (ctl && ctl->deadline_ns) {
		struct itimerspec its = { .it_value = {
			.tv_sec = (time_t)(ctl->deadline_ns / 1000000000ull),
			.tv_nsec = (long)(ctl->deadline_ns % 1000000000ull) } };

		timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (timer < 0 || timerfd_settime(timer, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
			sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "archive \"%s\": timerfd", handle);
			sbx_helper_close(&h);
			return -1;
		}
	}
	fcntl(rd, F_SETFL, O_NONBLOCK);

	for (bool exited = false; !exited;) {
		struct pollfd pf[5] = {
			{ .fd = h.pidfd, .events = POLLIN },
			{ .fd = out.closed ? -1 : rd, .events = POLLIN },
			{ .fd = errc.closed ? -1 : h.err_fd, .events = POLLIN },
			{ .fd = ctl && stop == STOP_NONE ? ctl->cancel_fd : -1, .events = POLLIN },
			{ .fd = stop == STOP_NONE ? timer : -1, .events = POLLIN },
		};

		if (poll(pf, ARRAY_SIZE(pf), -1) < 0) {
			if (errno == EINTR)
				continue;
			sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "archive \"%s\": poll", handle);
			sbx_helper_close(&h);
			return -1;
		}
		if (pf[1].revents)
			sbx_helper_capture(rd, &out);
		if (pf[2].revents)
			sbx_helper_capture(h.err_fd, &errc);
		if (pf[3].revents) {
			struct signalfd_siginfo ssi;

			if (read(ctl->cancel_fd, &ssi, sizeof(ssi)) == sizeof(ssi)) {
				stop = STOP_CANCEL;
				sbx_helper_kill(&h);
			}
		}
		if (pf[4].revents) {
			stop = STOP_TIMEOUT;
			sbx_helper_kill(&h);
		}
		if (pf[0].revents) {
			/* Gone: what it wrote is all in the pipes now. */
			sbx_helper_capture(rd, &out);
			sbx_helper_capture(h.err_fd, &errc);
			exited = true;
		}
	}
	if (sbx_helper_wait(&h, &si) < 0) {
		sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "archive \"%s\": waitid", handle);
		sbx_helper_close(&h);
		return -1;
	}
	sbx_helper_close(&h);
	if (out.len > 1023)
		line[1023] = '\0';
	sbx_helper_clean_line(line);
	if (!line[0] && errc.len) {
		/* No status (a failure before execve reports on stderr): its
		 * first line of stderr says more than nothing. */
		snprintf(out.buf, sizeof(out.buf), "%.1023s", errc.buf);
		sbx_helper_clean_line(line);
	} else {
		sbx_helper_show(&errc, what, "sbx-extract");
	}
	if (stop == STOP_CANCEL)
		return sbx_error_set(err, SBX_EXIT_CANCELLED, 0,
				     "archive \"%s\": cancelled by the caller while extracting", handle);
	if (stop == STOP_TIMEOUT)
		return sbx_error_set(err, SBX_EXIT_TIMEOUT, 0,
				     "archive \"%s\": wall_seconds %" PRIu64 " reached while extracting",
				     handle, ctl->wall_seconds);
	if (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) {
		struct sbx_cgroup_stats st = { 0 };

		/* SIGXCPU, or the SIGKILL at the hard limit: RLIMIT_CPU, set
		 * from what was left of the wall clock. */
		if (si.si_status == SIGXCPU)
			return sbx_error_set(err, SBX_EXIT_TIMEOUT, 0,
					     "archive \"%s\": wall_seconds %" PRIu64
					     " reached while extracting (its CPU limit)",
					     handle, ctl ? ctl->wall_seconds : 0);
		if (si.si_status == SIGKILL && ctl && ctl->cg &&
		    sbx_cgroup_stats(ctl->cg, &st, NULL) == 0 && st.oom_kills > 0)
			return sbx_error_set(err, SBX_EXIT_LIMIT, 0,
					     "archive \"%s\": memory: memory_mib %" PRIu64
					     " exceeded while extracting (OOM kill)",
					     handle, ctl->memory_mib);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "archive \"%s\": the extractor was killed by signal %d", handle,
				     si.si_status);
	}
	switch (si.si_status) {
	case 0:
		if (sscanf(line, "ok %" SCNu64 " %" SCNu64, &entries, bytes) != 2 ||
		    *bytes > lim->max_total_bytes)
			break;
		return 0;
	case SBX_EXIT_REFUSED:
		if (strncmp(line, "refused ", 8) != 0)
			break;
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0, "archive \"%s\": %s", handle,
				     line + 8);
	case SBX_EXIT_LIMIT:
		if (strncmp(line, "limit ", 6) != 0)
			break;
		return sbx_error_set(err, SBX_EXIT_LIMIT, 0, "archive \"%s\": %s", handle, line + 6);
	case SBX_EXIT_UNAVAILABLE:
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "archive \"%s\": %s", handle,
			      strncmp(line, "error ", 6) == 0 ? line + 6 : line);
		if (strstr(line, "unshare"))
			sbx_error_hint(err, "the archive helper needs an IPC namespace of its own; "
					    "unprivileged, that takes a user namespace "
					    "(sysctl user.max_user_namespaces > 0)");
		else
			sbx_error_hint(err, "the archive extractor confines itself with Landlock "
					    "and seccomp; this kernel does not offer what it needs");
		return -1;
	case 127:
		sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "archive \"%s\": cannot run %s: %s", handle,
			      path, line[0] ? line : "no status");
		sbx_error_hint(err, "the archive helper is installed in pkglibexecdir; "
				    "SBX_LIBEXECDIR overrides where sbx looks for it");
		return -1;
	default:
		break;
	}
	return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
			     "archive \"%s\": the extractor failed (exit %d): %s", handle,
			     si.si_status, line[0] ? line : "no status");
}

int sbx_store_extract(int archive_fd, int in_dirfd, const char *name, uint64_t budget,
		      const struct sbx_extract_ctl *ctl, uint64_t *bytes, struct sbx_error *err)
{
	struct sbx_archive_limits lim;
	_cleanup_close_ int dir = -1;

	if (mkdirat(in_dirfd, name, 0755) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "\"%s\": mkdir", name);
	dir = openat(in_dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || fchmod(dir, 0755) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "\"%s\": open", name);
	sbx_archive_limits_default(&lim, budget);
	return run_extractor(archive_fd, dir, &lim, ctl, name, bytes, err);
}

static bool strv_contains(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

static void close_all(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		closep(&fds[i]);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int sbx_store_materialize(const struct sbx_store *store, char *const *handles,
			  char *const *extract, int in_dirfd, uint64_t per_input_max,
			  uint64_t total_max, const struct sbx_extract_ctl *ctl,
			  struct sbx_error *err)
{
	size_t n = sbx_strv_length(handles);
	_cleanup_free_ int *fds = sbx_xcalloc(n, sizeof(int));
	_cleanup_free_ struct stat *sts = sbx_xcalloc(n, sizeof(struct stat));
	uint64_t planned = 0, used = 0;
	uid_t write_uid;
	gid_t write_gid;
	int r = -1;

	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	for (size_t j = 0; extract && extract[j]; j++)
		if (!strv_contains(handles, extract[j]))
			return sbx_error_set(err, SBX_EXIT_INVALID, 0,
					     "extract[%zu]: \"%s\" is not one of input_handles", j,
					     extract[j]);

	/* The caller may write /work/in as another id than its own (run.c,
	 * as root, sets the fsuid to the sandbox's); the store is the
	 * caller's, so handles are opened with its own rights and only the
	 * writes are done as that id.  setfs*id return the previous value. */
	write_uid = (uid_t)setfsuid(geteuid());
	write_gid = (gid_t)setfsgid(getegid());

	/* Pass 1: resolve everything and check what can be checked without
	 * writing, so that a refused job leaves /work/in untouched. */
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < i; k++)
			if (strcmp(handles[k], handles[i]) == 0) {
				sbx_error_set(err, SBX_EXIT_INVALID, 0,
					      "input_handles[%zu]: duplicate handle \"%s\"", i,
					      handles[i]);
				goto out;
			}
		if (sbx_store_resolve(store, handles[i], &fds[i], &sts[i], err) < 0) {
			sbx_error_prefix(err, "input_handles[%zu]: ", i);
			goto out;
		}
		if (strv_contains(extract, handles[i]))
			continue;
		if ((uint64_t)sts[i].st_size > per_input_max) {
			sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				      "input_handles[%zu]: \"%s\" is %" PRIu64
				      " bytes, above the limit of %" PRIu64 " bytes per input",
				      i, handles[i], (uint64_t)sts[i].st_size, per_input_max);
			goto out;
		}
		planned += (uint64_t)sts[i].st_size;
		if (planned > total_max) {
			sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				      "input_handles[%zu]: \"%s\": inputs exceed the limit of %" PRIu64
				      " bytes in total",
				      i, handles[i], total_max);
			goto out;
		}
	}

	setfsgid(write_gid);
	setfsuid(write_uid);

	/* Pass 2: copy or extract, each against what is left of the caps
	 * (sizes are measured again while copying: files may change). */
	for (size_t i = 0; i < n; i++) {
		uint64_t budget = min_u64(per_input_max, total_max - used), bytes = 0;

		if (strv_contains(extract, handles[i])) {
			struct sbx_archive_limits lim;
			_cleanup_close_ int dir = -1;

			if (mkdirat(in_dirfd, handles[i], 0755) < 0) {
				sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
					      "input_handles[%zu]: \"%s\": mkdir", i, handles[i]);
				goto out;
			}
			dir = openat(in_dirfd, handles[i],
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (dir < 0 || fchmod(dir, 0755) < 0) {
				sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
					      "input_handles[%zu]: \"%s\": open", i, handles[i]);
				goto out;
			}
			sbx_archive_limits_default(&lim, budget);
			if (run_extractor(fds[i], dir, &lim, ctl, handles[i], &bytes, err) < 0) {
				sbx_error_prefix(err, "input_handles[%zu]: ", i);
				goto out;
			}
		} else if (sbx_store_copy(fds[i], in_dirfd, handles[i], budget, &bytes, err) < 0) {
			sbx_error_prefix(err, "input_handles[%zu]: ", i);
			goto out;
		}
		used += bytes;
	}
	r = 0;
out:
	setfsgid(write_gid);
	setfsuid(write_uid);
	close_all(fds, n);
	return r;
}
