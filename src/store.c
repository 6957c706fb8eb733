/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.c - the principal-scoped input store and materialization into the
 * run's /work/in (see store.h).
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <sys/sendfile.h>
#include <sys/wait.h>

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

int sbx_store_root(const char *opt, const char *config_store, char **out, struct sbx_error *err)
{
	const char *xdg = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");

	if (opt) {
		*out = sbx_xstrdup(opt);
		return 0;
	}
	if (config_store) {
		*out = sbx_xstrdup(config_store);
		return 0;
	}
	/* The XDG spec says relative values are to be ignored. */
	if (xdg && xdg[0] == '/') {
		*out = sbx_xasprintf("%s/sbx/store", xdg);
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
	return 0;
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

int sbx_store_open_principal(const char *root, const char *principal, int *dirfd,
			     struct sbx_error *err)
{
	_cleanup_close_ int root_fd = -1;
	int fd;

	*dirfd = -1;
	if (!sbx_principal_name_valid(principal))
		return sbx_error_set(err, SBX_EXIT_USAGE, 0,
				     "--principal: \"%s\" is not a valid principal name "
				     "(^[a-z_][a-z0-9_-]{0,31}$)",
				     principal ? principal : "");
	/* The root is the operator's path, trusted as a string. */
	root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0) {
		if (errno == ENOENT)
			return 0; /* an empty store: every handle is not found */
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "store \"%s\"", root);
	}
	fd = open_beneath(root_fd, principal, O_PATH | O_DIRECTORY);
	if (fd >= 0) {
		*dirfd = fd;
		return 0;
	}
	switch (errno) {
	case ENOENT:
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

static int not_found(struct sbx_error *err, const char *principal, const char *handle)
{
	return sbx_error_set(err, SBX_EXIT_REFUSED, 0, "handle \"%s\" not found for principal \"%s\"",
			     handle, principal ? principal : "");
}

int sbx_store_resolve(int principal_fd, const char *principal, const char *handle, int *fd,
		      struct stat *st, struct sbx_error *err)
{
	_cleanup_close_ int f = -1;

	*fd = -1;
	/* The job parser checked the name already; checked again because a
	 * name with "/" or ".." must never reach openat2 from any caller. */
	if (!sbx_handle_name_valid(handle))
		return sbx_error_set(err, SBX_EXIT_INVALID, 0, "\"%s\": not a valid handle name",
				     handle ? handle : "");
	if (principal_fd < 0)
		return not_found(err, principal, handle);
	/* O_NONBLOCK: opening a fifo must not wait for a writer. */
	f = open_beneath(principal_fd, handle, O_RDONLY | O_NONBLOCK);
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
			return not_found(err, principal, handle);
		default:
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
					     "handle \"%s\": open", handle);
		}
	}
	if (fstat(f, st) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "handle \"%s\": fstat", handle);
	if (!S_ISREG(st->st_mode))
		return not_found(err, principal, handle);
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

/* What the helper wrote, made safe for a one-line message whatever a
 * compromised helper put there. */
static void clean_line(char *s)
{
	for (; *s; s++) {
		if (*s == '\n') {
			*s = '\0';
			return;
		}
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
	}
}

static char *extractor_path(void)
{
	return sbx_libexec_path("sbx-extract");
}

/*
 * As root, the helper must not be root: it runs as the ids the caller
 * set as its fsuid/fsgid (the id the sandbox user maps to, see run.c), so
 * that the parser holds no privilege and what it creates in the run's
 * /work/in is owned by an id that exists in the sandbox's user namespace
 * (tmpfs refuses other owners with EOVERFLOW).  posix_spawn cannot change
 * ids, so this is fork and execve, with only async-signal-safe calls in
 * the child.  Returns 0 or an errno value, like posix_spawn.
 */
static int spawn_unprivileged(pid_t *pid, const char *path, int a, int wr, int d, char **argv,
			      char **envp)
{
	/* setfsuid/setfsgid with an invalid id change nothing and return
	 * the current value. */
	uid_t uid = (uid_t)setfsuid((uid_t)-1);
	gid_t gid = (gid_t)setfsgid((gid_t)-1);
	sigset_t none;
	pid_t p;

	if (uid == 0 || gid == 0)
		return EPERM; /* the caller forgot to pick an id: never run as root */
	/* What posix_spawn would report, before there is a child to fail. */
	if (access(path, X_OK) < 0)
		return errno;
	sigemptyset(&none);
	p = fork();
	if (p < 0)
		return errno;
	if (p == 0) {
		for (int sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(a, 0) < 0 || dup2(wr, 1) < 0 || dup2(d, 3) < 0 ||
		    setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			_exit(127);
		execve(path, argv, envp);
		_exit(127);
	}
	*pid = p;
	return 0;
}

/*
 * Validate and extract @archive_fd into @dst_fd with the sbx-extract
 * helper.  The helper gets the archive as fd 0, the destination as fd 3
 * and its status pipe as fd 1, an empty environment and nothing else:
 * every other fd of sbx is close-on-exec.
 */
static int run_extractor(int archive_fd, int dst_fd, const struct sbx_archive_limits *lim,
			 const char *handle, uint64_t *bytes, struct sbx_error *err)
{
	_cleanup_free_ char *path = extractor_path();
	_cleanup_close_ int a = -1, d = -1, rd = -1, wr = -1;
	char args[7][40], line[1024] = "";
	char *argv[16], *envp[] = { NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t mask, defaults;
	size_t len = 0, argc = 0;
	uint64_t entries = 0;
	int pipefd[2], r, wstatus;
	pid_t pid;

	static const char *const names[7] = { "--max-entries", "--max-entry-bytes",
					      "--max-total-bytes", "--max-ratio", "--max-depth",
					      "--max-name", "--max-path" };
	const uint64_t values[7] = { lim->max_entries, lim->max_entry_bytes, lim->max_total_bytes,
				     lim->max_ratio, lim->max_depth, lim->max_name,
				     lim->max_path };

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "archive \"%s\": pipe", handle);
	rd = pipefd[0];
	/* Sources above the target numbers, so that no dup2 below can
	 * overwrite a source that a later one still needs. */
	wr = fcntl(pipefd[1], F_DUPFD_CLOEXEC, 10);
	close(pipefd[1]);
	a = fcntl(archive_fd, F_DUPFD_CLOEXEC, 10);
	d = fcntl(dst_fd, F_DUPFD_CLOEXEC, 10);
	if (wr < 0 || a < 0 || d < 0 || lseek(a, 0, SEEK_SET) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "archive \"%s\": dup", handle);

	argv[argc++] = (char *)"sbx-extract";
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(args[i], sizeof(args[i]), "%" PRIu64, values[i]);
		argv[argc++] = (char *)names[i];
		argv[argc++] = args[i];
	}
	argv[argc] = NULL;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, ENOMEM, "archive \"%s\"", handle);
	if (posix_spawnattr_init(&attr) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, ENOMEM, "archive \"%s\"", handle);
	}
	posix_spawn_file_actions_adddup2(&fa, a, 0);
	posix_spawn_file_actions_adddup2(&fa, wr, 1);
	posix_spawn_file_actions_adddup2(&fa, d, 3);
	/* sbx may block or ignore signals for its supervisor loop; the
	 * helper starts with none blocked and every default handler, so that
	 * a SIGTERM or SIGKILL from sbx (or the user) ends it. */
	sigemptyset(&mask);
	sigfillset(&defaults);
	posix_spawnattr_setsigmask(&attr, &mask);
	posix_spawnattr_setsigdefault(&attr, &defaults);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (geteuid() == 0)
		r = spawn_unprivileged(&pid, path, a, wr, d, argv, envp);
	else
		r = posix_spawn(&pid, path, &fa, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0) {
		sbx_error_set(err, SBX_EXIT_SOFTWARE, r, "archive \"%s\": cannot run %s", handle,
			      path);
		sbx_error_hint(err, "the archive helper is installed in pkglibexecdir; "
				    "SBX_LIBEXECDIR overrides where sbx looks for it");
		return -1;
	}
	closep(&wr);
	/* One short line; whatever follows it is drained, not kept. */
	for (;;) {
		char scratch[256];
		ssize_t n = len + 1 < sizeof(line) ? read(rd, line + len, sizeof(line) - 1 - len) :
						     read(rd, scratch, sizeof(scratch));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (len + 1 < sizeof(line))
			len += (size_t)n;
	}
	line[len] = '\0';
	clean_line(line);
	while (waitpid(pid, &wstatus, 0) < 0)
		if (errno != EINTR)
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno,
					     "archive \"%s\": waitpid", handle);

	if (WIFSIGNALED(wstatus))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "archive \"%s\": the extractor was killed by signal %d", handle,
				     WTERMSIG(wstatus));
	switch (WEXITSTATUS(wstatus)) {
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
	case SBX_EXIT_UNAVAILABLE:
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "archive \"%s\": %s", handle,
			      strncmp(line, "error ", 6) == 0 ? line + 6 : line);
		sbx_error_hint(err, "the archive extractor confines itself with Landlock and "
				    "seccomp; this kernel does not offer what it needs");
		return -1;
	default:
		break;
	}
	return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
			     "archive \"%s\": the extractor failed (exit %d): %s", handle,
			     WEXITSTATUS(wstatus), line[0] ? line : "no status");
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

int sbx_store_materialize(int principal_fd, const char *principal, char *const *handles,
			  char *const *extract, int in_dirfd, uint64_t per_input_max,
			  uint64_t total_max, struct sbx_error *err)
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
		if (sbx_store_resolve(principal_fd, principal, handles[i], &fds[i], &sts[i],
				      err) < 0) {
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
			if (run_extractor(fds[i], dir, &lim, handles[i], &bytes, err) < 0) {
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
