/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * template-life.c - a profile's template from start to exit, as the broker
 * sees it (sbx(1) TEMPLATES).
 *
 * Theory of operation
 * -------------------
 * A run that wants a template and finds none answering at its socket
 * (<state_dir>/templates/<catalog>-<profile>-<digest>.sock) runs cold and
 * has one started in the background (template-want.c), which lands here:
 * under the profile's lock (<catalog>-<profile>.lock), the starter binds
 * and listens on that socket, makes the template's cgroup
 * (sbx-template-<profile>-<digest>, twice the profile's default memory,
 * charged to the caller like a run), and forks twice (setsid between) so
 * that sbx-template is nobody's child but init's and outlives the
 * starter.  The grandchild waits until it has been put in the cgroup,
 * then execs sbx-template with the listening socket, a ready pipe and the
 * imports; nothing else of the broker's (no key, no catalog, no job)
 * crosses.  sbx-template writes "ok <pid>" once its imports are done and
 * it has no thread, or "error <why>"; the starter waits
 * template_start_seconds at most.  A record (.json) beside the socket
 * names the pid and the cgroup for `sbx template status` and `sbx gc`; a
 * start that failed leaves <...>.failed with the reason instead, which
 * runs report (and do not retry) for TEMPLATE_RETRY_SECONDS.  The lock
 * is held until the template answers or is gone, so whoever can take it
 * knows that no start is under way.  The template exits by itself (idle,
 * runs, age: the config keys, which are part of the digest) or on STOP;
 * a template of an older digest of the same profile is stopped when a
 * new one starts.
 *
 * Any failure on the way is a reason for a cold run, never a refusal.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "json.h"
#include "libexec.h"
#include "sandbox.h"
#include "template-life.h"
#include "template-proto.h"
#include "util.h"

static int remove_cgroup(const char *path);

void sbx_template_place_free(struct sbx_template_place *pl)
{
	free(pl->dir);
	free(pl->sock_path);
	free(pl->record_path);
	free(pl->binary);
	memset(pl, 0, sizeof(*pl));
}

/* Whether the profile's interpreter is the one sbx-template embeds. */
static bool interpreter_ok(const char *real, char *why, size_t why_len)
{
#ifdef SBX_TEMPLATE_PYTHON
	char want[PATH_MAX];

	if (!realpath(SBX_TEMPLATE_PYTHON, want) || strcmp(real, want) != 0) {
		snprintf(why, why_len, "a template needs python%s (%s), and argv[0] is %s",
			 SBX_TEMPLATE_PYTHON_VERSION, SBX_TEMPLATE_PYTHON, real);
		return false;
	}
#endif
	(void)why, (void)why_len, (void)real;
	return true;
}

int sbx_template_locate(const struct sbx_hostconfig *cfg, const struct sbx_catalog *cat,
			const struct sbx_profile *pr, const char *prepared_sha256,
			const char *state_dir, struct sbx_template_place *pl, char *why,
			size_t why_len)
{
	struct sbx_template_ident id = {
		.profile = pr,
		.prepared_sha256 = prepared_sha256,
		.idle_seconds = cfg->template_idle_seconds,
		.max_runs = cfg->template_max_runs,
		.max_seconds = cfg->template_max_seconds,
	};
	struct sbx_error err = { 0 };
	char real[PATH_MAX], key[9];

	memset(pl, 0, sizeof(*pl));
	if (!pr->template) {
		snprintf(why, why_len, "profile %s has no template", pr->name);
		return -1;
	}
	if (!realpath(pr->argv[0], real) || sbx_file_ident_get(real, &id.interpreter) < 0) {
		snprintf(why, why_len, "%s: %s", pr->argv[0], strerror(errno));
		return -1;
	}
	if (!interpreter_ok(real, why, why_len))
		return -1;
	pl->binary = sbx_libexec_path("sbx-template");
	if (sbx_file_ident_get(pl->binary, &id.binary) < 0) {
		snprintf(why, why_len, "%s: %s", pl->binary, strerror(errno));
		sbx_template_place_free(pl);
		return -1;
	}
	if (sbx_template_digest(&id, pl->digest, &err) < 0) {
		snprintf(why, why_len, "%s", err.msg);
		sbx_template_place_free(pl);
		return -1;
	}
	sbx_template_catalog_key(cat->dir, key);
	memcpy(pl->catalog_key, key, sizeof(key));
	pl->dir = sbx_xasprintf("%s/templates", state_dir);
	pl->sock_path = sbx_template_socket_path(state_dir, key, pr->name, pl->digest);
	pl->record_path = sbx_xasprintf("%.*s.json", (int)(strlen(pl->sock_path) - 5),
					pl->sock_path);
	return 0;
}

/* The environment sbx-template gets: the profile's, thread variables at
 * 1 (no thread pools at import), and a value under the prepared seed's
 * place inside (MPLCONFIGDIR=/tmp/mpl) pointed at @seed_copy, the
 * template's own writable copy of the seed, so the imports read the
 * prepared caches as a run's would (writable: a module that finds its
 * directory read-only makes a temporary one instead, on the host, and
 * registers its removal at exit, which every run would then inherit). */
static char **template_env(const struct sbx_profile *pr, const char *seed_copy)
{
	size_t n = 0, k = 0;
	char **env;

	for (; pr->env[n]; n++)
		;
	for (size_t i = 0; pr->thread_env[i]; i++)
		n++;
	env = sbx_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; pr->env[i]; i++) {
		const char *eq = strchr(pr->env[i], '=');
		const char *val = eq ? eq + 1 : "";
		bool thread = false;

		for (size_t t = 0; pr->thread_env[t]; t++)
			thread |= eq && strlen(pr->thread_env[t]) == (size_t)(eq - pr->env[i]) &&
				  !strncmp(pr->env[i], pr->thread_env[t], (size_t)(eq - pr->env[i]));
		if (thread)
			continue;
		if (seed_copy && !strncmp(val, pr->prepare->seed_dst, strlen(pr->prepare->seed_dst)) &&
		    (val[strlen(pr->prepare->seed_dst)] == '\0' ||
		     val[strlen(pr->prepare->seed_dst)] == '/'))
			env[k++] = sbx_xasprintf("%.*s%s%s", (int)(val - pr->env[i]), pr->env[i],
						 seed_copy, val + strlen(pr->prepare->seed_dst));
		else
			env[k++] = sbx_xstrdup(pr->env[i]);
	}
	for (size_t t = 0; pr->thread_env[t]; t++)
		env[k++] = sbx_xasprintf("%s=1", pr->thread_env[t]);
	return env;
}

/*
 * Whether the sandbox covers @tree, a host site tree, for this profile:
 * spawn-spec.c masks it wherever a bind carries it (a real directory
 * only), so the template must not import from it either (--hide).
 */
static bool profile_covers(const struct sbx_profile *pr, const char *tree)
{
	struct stat st;

	if (lstat(tree, &st) < 0 || !S_ISDIR(st.st_mode))
		return false;
	for (size_t i = 0; i < pr->n_binds; i++)
		if (sbx_bind_carries(pr->binds[i].src, tree))
			return true;
	return false;
}

static char **template_argv(const struct sbx_hostconfig *cfg, const struct sbx_profile *pr,
			    const struct sbx_template_place *pl, bool reset, json_t *own_cgroups)
{
	const struct sbx_template *t = pr->template;
	size_t n = 24 + pr->template->argc + 2 * json_array_size(own_cgroups), k = 0;
	char **argv;

	for (size_t i = 0; t->imports[i]; i++)
		n += 2;
	argv = sbx_xcalloc(n, sizeof(char *));
	argv[k++] = sbx_xstrdup("sbx-template");
	argv[k++] = sbx_xstrdup("--listen");
	argv[k++] = sbx_xstrdup("3");
	argv[k++] = sbx_xstrdup("--ready");
	argv[k++] = sbx_xstrdup("4");
	argv[k++] = sbx_xstrdup("--digest");
	argv[k++] = sbx_xstrdup(pl->digest);
	argv[k++] = sbx_xstrdup("--idle");
	argv[k++] = sbx_xasprintf("%llu", (unsigned long long)cfg->template_idle_seconds);
	argv[k++] = sbx_xstrdup("--max-runs");
	argv[k++] = sbx_xasprintf("%llu", (unsigned long long)cfg->template_max_runs);
	argv[k++] = sbx_xstrdup("--max-seconds");
	argv[k++] = sbx_xasprintf("%llu", (unsigned long long)cfg->template_max_seconds);
	if (reset) {
		argv[k++] = sbx_xstrdup("--reset-file");
		argv[k++] = sbx_xstrdup("5");
	}
	for (size_t i = 0; t->imports[i]; i++) {
		argv[k++] = sbx_xstrdup("--import");
		argv[k++] = sbx_xstrdup(t->imports[i]);
	}
	if (t->warm) {
		argv[k++] = sbx_xstrdup("--warm");
		argv[k++] = sbx_xstrdup(t->warm);
	}
	/* The site trees the sandbox masks (spawn-spec.c's list). */
	for (size_t i = 0; sbx_site_trees[i]; i++)
		if (profile_covers(pr, sbx_site_trees[i])) {
			argv[k++] = sbx_xstrdup("--hide");
			argv[k++] = sbx_xstrdup(sbx_site_trees[i]);
		}
	/* Its own cgroups, which it removes when it exits. */
	for (size_t i = 0; i < json_array_size(own_cgroups); i++) {
		argv[k++] = sbx_xstrdup("--cgroup");
		argv[k++] = sbx_xstrdup(json_string_value(json_array_get(own_cgroups, i)));
	}
	argv[k++] = sbx_xstrdup("--");
	for (size_t i = 0; i < t->argc; i++)
		argv[k++] = sbx_xstrdup(pr->argv[i]);
	return argv;
}

/* Copy the directory @src (of the prepared tree: directories and regular
 * files only, sbx's own) to @dst, which does not exist. */
static int copy_dir(int src_parent, const char *src, int dst_parent, const char *dst)
{
	_cleanup_close_ int sfd = openat(src_parent, src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int dfd = -1;
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (sfd < 0 || mkdirat(dst_parent, dst, 0700) < 0)
		return -1;
	dfd = openat(dst_parent, dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dup(sfd))))
		return -1;
	while (r == 0 && (de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = -1;
		else if (S_ISDIR(st.st_mode))
			r = copy_dir(sfd, de->d_name, dfd, de->d_name);
		else if (S_ISREG(st.st_mode)) {
			_cleanup_close_ int in = openat(sfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			_cleanup_close_ int out = openat(dfd, de->d_name,
							 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			char buf[65536];
			ssize_t n = 0;

			if (in < 0 || out < 0)
				r = -1;
			while (r == 0 && (n = read(in, buf, sizeof(buf))) > 0)
				if (sbx_write_all(out, buf, (size_t)n) < 0)
					r = -1;
			if (n < 0)
				r = -1;
		}
	}
	closedir(d);
	return r;
}

/* Remove what copy_dir() made (and only directories and files). */
static void remove_dir(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (fd >= 0 && !d)
		close(fd);
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_DIR)
			remove_dir(dirfd(d), de->d_name);
		else
			unlinkat(dirfd(d), de->d_name, 0);
	}
	if (d)
		closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

/* "<record without .json>.seed": the template's copy of the seed. */
static char *seed_copy_path(const char *record_path)
{
	return sbx_xasprintf("%.*s.seed", (int)(strlen(record_path) - 5), record_path);
}

/* The cgroup directories of the template's cgroup, for its record. */
static json_t *cgroup_paths(const struct sbx_cgroup_host *h, const char *name)
{
	json_t *a = json_array();

	if (h->version == 2) {
		json_array_append_new(a, json_sprintf("%s/sbx-%s", h->v2_path, name));
		return a;
	}
	for (int i = 0; i < _SBX_CGROUP_CONTROLLER_MAX; i++) {
		bool seen = false;

		if (!h->v1_path[i])
			continue;
		for (int k = 0; k < i; k++)
			if (h->v1_path[k] && !strcmp(h->v1_path[k], h->v1_path[i]))
				seen = true;
		if (!seen)
			json_array_append_new(a, json_sprintf("%s/sbx-%s", h->v1_path[i], name));
	}
	return a;
}

char *sbx_template_lock_path(const struct sbx_template_place *pl, const char *profile)
{
	return sbx_xasprintf("%s/%s-%s.lock", pl->dir, pl->catalog_key, profile);
}

char *sbx_template_failed_path(const struct sbx_template_place *pl)
{
	return sbx_xasprintf("%.*s.failed", (int)(strlen(pl->record_path) - 5), pl->record_path);
}

/* Why the start failed, for the runs that would retry it (template-want.c)
 * and for sbx template status. */
static void write_failed(const struct sbx_template_place *pl, const char *why)
{
	_cleanup_json_ json_t *rec = json_pack("{s:s,s:I}", "why", why, "at", (json_int_t)time(NULL));
	_cleanup_free_ char *path = sbx_template_failed_path(pl);
	_cleanup_free_ char *tmp = sbx_xasprintf("%s.tmp", path);

	if (!rec || json_dump_file(rec, tmp, JSON_COMPACT) < 0 || rename(tmp, path) < 0)
		unlink(tmp);
}

static int write_record(const struct sbx_template_place *pl, const struct sbx_profile *pr,
			const struct sbx_catalog *cat, pid_t pid, json_t *cgroups)
{
	_cleanup_json_ json_t *rec = json_pack(
		"{s:s,s:s,s:s,s:i,s:I,s:s,s:O}", "profile", pr->name, "digest", pl->digest,
		"catalog", cat->dir, "pid", (int)pid, "started", (json_int_t)time(NULL), "socket",
		pl->sock_path, "cgroups", cgroups);
	_cleanup_free_ char *tmp = sbx_xasprintf("%s.tmp", pl->record_path);

	if (!rec || json_dump_file(rec, tmp, JSON_COMPACT) < 0 || rename(tmp, pl->record_path) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Stop the templates of older digests of this profile: their sockets
 * go (the broker owns the paths), their runs finish. */
static void stop_others(const struct sbx_template_place *pl, const char *profile)
{
	_cleanup_free_ char *prefix = sbx_xasprintf("%s-%s-", pl->catalog_key, profile);
	DIR *d = opendir(pl->dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		_cleanup_free_ char *sock = NULL;
		struct sbx_error ignored = { 0 };

		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 ||
		    n != strlen(prefix) + SBX_TEMPLATE_DIGEST_LEN + 5 ||
		    strcmp(de->d_name + n - 5, ".sock") != 0 ||
		    !strncmp(de->d_name + strlen(prefix), pl->digest, SBX_TEMPLATE_DIGEST_LEN))
			continue;
		sock = sbx_xasprintf("%s/%s", pl->dir, de->d_name);
		(void)sbx_template_query(sock, true, NULL, &ignored);
		/* The record stays: sbx gc removes it with the cgroup once
		 * the template has finished its runs and exited. */
		unlink(sock);
	}
	closedir(d);
}

/* Move fd @from to exactly @to in the child (no malloc there). */
static int place_fd(int from, int to)
{
	return from == to ? fcntl(from, F_SETFD, 0) : dup2(from, to);
}

static int spawn(const struct sbx_template_place *pl, char **argv, char **envp, int listen_fd,
		 int ready_wr, int reset_fd, struct sbx_cgroup *cg, char *why, size_t why_len)
{
	int pidp[2] = { -1, -1 }, gop[2] = { -1, -1 }, null_fd;
	pid_t mid, pid = -1;
	int status;
	char go = 'g';

	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0 || pipe2(pidp, O_CLOEXEC) < 0 || pipe2(gop, O_CLOEXEC) < 0) {
		snprintf(why, why_len, "cannot start the template: %s", strerror(errno));
		goto fail;
	}
	mid = fork();
	if (mid < 0) {
		snprintf(why, why_len, "cannot start the template: fork: %s", strerror(errno));
		goto fail;
	}
	if (mid == 0) {
		pid_t g;

		/* A session of its own, and then not even our child: the
		 * template outlives this broker and ends on its own terms. */
		setsid();
		signal(SIGPIPE, SIG_DFL);
		g = fork();
		if (g != 0) {
			(void)!write(pidp[1], &g, sizeof(g));
			_exit(g < 0);
		}
		if (read(gop[0], &go, 1) != 1)
			_exit(1);
		/* Nothing of the broker's state but what is passed: not the
		 * signals it blocks for its signalfd (a template must take
		 * SIGTERM), not its working directory (which it would pin). */
		{
			sigset_t none;

			sigemptyset(&none);
			if (sigprocmask(SIG_SETMASK, &none, NULL) < 0 || chdir("/") < 0)
				_exit(1);
		}
		/* Above every fd it is to land on, then on 3, 4, 5. */
		listen_fd = fcntl(listen_fd, F_DUPFD_CLOEXEC, 10);
		ready_wr = fcntl(ready_wr, F_DUPFD_CLOEXEC, 10);
		if (reset_fd >= 0)
			reset_fd = fcntl(reset_fd, F_DUPFD_CLOEXEC, 10);
		if (listen_fd < 0 || ready_wr < 0 || place_fd(null_fd, 0) < 0 ||
		    place_fd(null_fd, 1) < 0 || place_fd(null_fd, 2) < 0 ||
		    place_fd(listen_fd, 3) < 0 || place_fd(ready_wr, 4) < 0 ||
		    (reset_fd >= 0 && place_fd(reset_fd, 5) < 0))
			_exit(1);
		syscall(SYS_close_range, reset_fd >= 0 ? 6 : 5, ~0u, 0);
		execve(pl->binary, argv, envp);
		_exit(127);
	}
	close(pidp[1]);
	pidp[1] = -1;
	close(gop[0]);
	gop[0] = -1;
	if (read(pidp[0], &pid, sizeof(pid)) != sizeof(pid) || pid <= 0)
		pid = -1;
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	if (pid < 0) {
		snprintf(why, why_len, "cannot start the template: fork failed");
		goto fail;
	}
	/* Into its cgroup before it imports anything: every page of it is
	 * charged there, to the caller. */
	if (cg) {
		struct sbx_error err = { 0 };

		if (sbx_cgroup_attach(cg, pid, &err) < 0) {
			kill(pid, SIGKILL);
			snprintf(why, why_len, "the template's cgroup: %s", err.msg);
			goto fail;
		}
	}
	if (write(gop[1], &go, 1) != 1) {
		snprintf(why, why_len, "the template did not start");
		goto fail;
	}
	close(gop[1]);
	close(pidp[0]);
	close(null_fd);
	return pid;
fail:
	if (null_fd >= 0)
		close(null_fd);
	for (int i = 0; i < 2; i++) {
		if (pidp[i] >= 0)
			close(pidp[i]);
		if (gop[i] >= 0)
			close(gop[i]);
	}
	return -1;
}

/* "ok <pid>" within @seconds, else why not. */
static int wait_ready(int ready_rd, uint64_t seconds, char *why, size_t why_len)
{
	char line[256];
	size_t n = 0;
	uint64_t end = sbx_now_mono_ns() + seconds * 1000000000;

	while (n < sizeof(line) - 1) {
		struct pollfd p = { .fd = ready_rd, .events = POLLIN };
		uint64_t now = sbx_now_mono_ns();
		ssize_t k;
		int r;

		if (now >= end) {
			snprintf(why, why_len,
				 "the template was not ready within %llu s (template_start_seconds)",
				 (unsigned long long)seconds);
			return -1;
		}
		r = poll(&p, 1, (int)((end - now) / 1000000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		k = read(ready_rd, line + n, sizeof(line) - 1 - n);
		if (k <= 0)
			break;
		n += (size_t)k;
		if (memchr(line, '\n', n))
			break;
	}
	line[n] = '\0';
	line[strcspn(line, "\n")] = '\0';
	if (!strncmp(line, "ok ", 3))
		return 0;
	if (!strncmp(line, "error ", 6)) {
		char esc[sizeof(line) * 4];

		sbx_json_escape(line + 6, esc, sizeof(esc));
		snprintf(why, why_len, "the template failed: %s", esc);
	} else {
		snprintf(why, why_len, "the template exited before it was ready");
	}
	return -1;
}

int sbx_template_start(const struct sbx_hostconfig *cfg, const struct sbx_catalog *cat,
		       const struct sbx_profile *pr, const char *prepared_tree,
		       const struct sbx_template_place *pl, char *why, size_t why_len)
{
	struct sbx_cgroup_detect_opts copts = { .cgroup_parent = cfg->cgroup_parent };
	struct sbx_cgroup_limits clim = {
		.memory_bytes = (pr->defaults.v[SBX_LIMIT_MEMORY_MIB] << 20) * 2,
		.pids = pr->defaults.v[SBX_LIMIT_PIDS],
		.cpu_millicores = pr->defaults.v[SBX_LIMIT_CPU_MILLICORES],
	};
	struct sbx_cgroup_host host = { 0 };
	struct sbx_cgroup *cg = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sbx_error err = { 0 };
	_cleanup_close_ int lock_fd = -1, listen_fd = -1, reset_fd = -1;
	_cleanup_free_ char *lock_path = NULL, *cg_name = NULL, *seed_copy = NULL;
	_cleanup_strv_free_ char **argv = NULL, **envp = NULL;
	_cleanup_json_ json_t *cgroups = NULL, *old_rec = NULL, *own_cgroups = NULL;
	const json_t *old_cgs = NULL;
	int ready[2] = { -1, -1 };
	pid_t pid;
	int r = -1;

	if (mkdir(pl->dir, 0700) < 0 && errno != EEXIST) {
		snprintf(why, why_len, "%s: %s", pl->dir, strerror(errno));
		return -1;
	}
	/* One starter per profile at a time: a second one waits here, then
	 * finds the first one's template answering.  Runs that find it
	 * taken run cold (template-want.c). */
	lock_path = sbx_template_lock_path(pl, pr->name);
	lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX) < 0) {
		snprintf(why, why_len, "%s: %s", lock_path, strerror(errno));
		return -1;
	}
	if (sbx_template_query(pl->sock_path, false, NULL, &err) == 0)
		return 0;
	err = (struct sbx_error){ 0 };
	stop_others(pl, pr->name);
	unlink(pl->sock_path);
	if (strlen(pl->sock_path) >= sizeof(sa.sun_path)) {
		snprintf(why, why_len, "%s: the path is too long for a socket", pl->sock_path);
		return -1;
	}
	strcpy(sa.sun_path, pl->sock_path);
	listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(listen_fd, 64) < 0) {
		snprintf(why, why_len, "%s: %s", pl->sock_path, strerror(errno));
		return -1;
	}
	if (pr->template->reset) {
		reset_fd = memfd_create("sbx-template-reset", MFD_CLOEXEC);
		if (reset_fd < 0 ||
		    sbx_write_all(reset_fd, pr->template->reset, strlen(pr->template->reset)) < 0 ||
		    lseek(reset_fd, 0, SEEK_SET) < 0) {
			snprintf(why, why_len, "the reset code: %s", strerror(errno));
			goto out;
		}
	}
	cg_name = sbx_xasprintf("template-%s-%s", pr->name, pl->digest);
	if (sbx_cgroup_detect(&host, &copts, &err) < 0) {
		snprintf(why, why_len, "the template's cgroup: %s", err.msg);
		goto out;
	}
	cgroups = cgroup_paths(&host, cg_name);
	/* A template of this digest that ran before (none answers, and this
	 * is under the lock) left a record: its cgroups go if empty, and
	 * those still busy (a template finishing its runs after a stop)
	 * stay listed in the new record, for gc. */
	old_rec = json_load_file(pl->record_path, 0, NULL);
	old_cgs = old_rec ? json_object_get(old_rec, "cgroups") : NULL;
	for (size_t i = 0; json_is_array(old_cgs) && i < json_array_size(old_cgs); i++)
		(void)remove_cgroup(json_string_value(json_array_get(old_cgs, i)) ?: "");
	if (sbx_cgroup_create(&host, cg_name, &clim, &cg, &err) < 0 && err.errnum == EEXIST) {
		/* A template of this digest ran before and exited (none
		 * answers, and this is under the lock): its empty cgroup
		 * goes.  One still finishing runs after a stop keeps its
		 * own, and this one gets a name of its own. */
		for (size_t i = 0; i < json_array_size(cgroups); i++)
			(void)rmdir(json_string_value(json_array_get(cgroups, i)));
		err = (struct sbx_error){ 0 };
		if (sbx_cgroup_create(&host, cg_name, &clim, &cg, &err) < 0 && err.errnum == EEXIST) {
			json_t *old = cgroups;

			free(cg_name);
			cg_name = sbx_xasprintf("template-%s-%s-%d", pr->name, pl->digest, (int)getpid());
			cgroups = cgroup_paths(&host, cg_name);
			/* This record replaces the old one's: it lists the old
			 * cgroup too, for gc to remove once it is empty. */
			json_array_extend(cgroups, old);
			json_decref(old);
			err = (struct sbx_error){ 0 };
			sbx_cgroup_create(&host, cg_name, &clim, &cg, &err);
		}
	}
	if (!cg) {
		snprintf(why, why_len, "the template's cgroup: %s", err.msg);
		goto out;
	}
	for (size_t i = 0; json_is_array(old_cgs) && i < json_array_size(old_cgs); i++) {
		const char *p = json_string_value(json_array_get(old_cgs, i));
		bool listed = false;

		for (size_t k = 0; p && k < json_array_size(cgroups); k++)
			listed |= !strcmp(p, json_string_value(json_array_get(cgroups, k)));
		if (p && !listed && access(p, F_OK) == 0)
			json_array_append_new(cgroups, json_string(p));
	}
	if (pipe2(ready, O_CLOEXEC) < 0) {
		snprintf(why, why_len, "pipe: %s", strerror(errno));
		goto out;
	}
	if (prepared_tree && pr->prepare && pr->prepare->seed_src && pr->prepare->seed_dst) {
		_cleanup_free_ char *src = sbx_xasprintf("%s/%s", prepared_tree, pr->prepare->seed_src);

		seed_copy = seed_copy_path(pl->record_path);
		remove_dir(AT_FDCWD, seed_copy);
		if (copy_dir(AT_FDCWD, src, AT_FDCWD, seed_copy) < 0) {
			snprintf(why, why_len, "copying the prepared seed %s: %s", src, strerror(errno));
			goto out;
		}
	}
	own_cgroups = cgroup_paths(&host, cg_name);
	argv = template_argv(cfg, pr, pl, reset_fd >= 0, own_cgroups);
	envp = template_env(pr, seed_copy);
	pid = spawn(pl, argv, envp, listen_fd, ready[1], reset_fd, cg, why, why_len);
	close(ready[1]);
	ready[1] = -1;
	if (pid < 0 || wait_ready(ready[0], cfg->template_start_seconds, why, why_len) < 0)
		goto out;
	if (write_record(pl, pr, cat, pid, cgroups) < 0) {
		snprintf(why, why_len, "%s: %s", pl->record_path, strerror(errno));
		goto out;
	}
	{
		_cleanup_free_ char *failed = sbx_template_failed_path(pl);

		unlink(failed);
	}
	r = 0;
out:
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	if (r < 0) {
		struct sbx_error ignored = { 0 };

		/* Nothing of a template that did not come up stays: its
		 * socket, its cgroup (and whatever is in it). */
		unlink(pl->sock_path);
		if (seed_copy)
			remove_dir(AT_FDCWD, seed_copy);
		if (cg)
			sbx_cgroup_destroy(cg, &ignored);
		write_failed(pl, why);
	} else if (cg) {
		/* The cgroup outlives this handle: the template lives in it
		 * until it exits, and gc removes it then. */
		sbx_cgroup_release(cg);
	}
	sbx_cgroup_host_free(&host);
	return r;
}

/* Remove the template cgroup @path if it is one (a name sbx gives) and
 * empty: rmdir refuses a cgroup with a process in it, so a template still
 * finishing its runs keeps its cgroup.  0 when it is gone. */
static int remove_cgroup(const char *path)
{
	static const char root[] = "/sys/fs/cgroup/";

	if (strncmp(path, root, sizeof(root) - 1) != 0 || strstr(path, "/../") ||
	    !strstr(path, "/sbx-template-"))
		return -1;
	return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* The lock file of the profile whose template file is @name (its
 * extension @ext_len long, with the dot), or NULL when @name is not one. */
static char *lock_path_of(const char *dir, const char *name, size_t ext_len)
{
	size_t n = strlen(name);

	if (n < ext_len + 1 + SBX_TEMPLATE_DIGEST_LEN + 1)
		return NULL;
	return sbx_xasprintf("%s/%.*s.lock", dir, (int)(n - ext_len - 1 - SBX_TEMPLATE_DIGEST_LEN),
			     name);
}

/*
 * The lock of the profile whose template file is @name
 * ("<catalog>-<profile>-<digest>.<ext>", @ext_len with its dot), taken
 * without waiting: -1 while a start of that profile is under way (its
 * socket may be bound before the template answers), else the locked fd.
 */
static int lock_profile_of(const char *dir, const char *name, size_t ext_len)
{
	_cleanup_free_ char *path = lock_path_of(dir, name, ext_len);
	int fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;

	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

bool sbx_template_starting(const char *dir, const char *name)
{
	_cleanup_free_ char *path = lock_path_of(dir, name, 5);
	_cleanup_close_ int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;

	return fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
}

int sbx_template_gc(const char *state_dir, unsigned *removed)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/templates", state_dir);
	DIR *d = opendir(dir);
	struct dirent *de;

	*removed = 0;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		_cleanup_free_ char *base = NULL, *sock = NULL, *rec = NULL;
		_cleanup_json_ json_t *r = NULL;
		_cleanup_close_ int lock_fd = -1;
		struct sbx_error err = { 0 };
		const json_t *cgs;
		bool gone = true;
		struct stat st;

		/* A failed start's reason, once runs would retry anyway. */
		if (n > 7 && !strcmp(de->d_name + n - 7, ".failed") &&
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    time(NULL) - st.st_mtime > SBX_TEMPLATE_RETRY_SECONDS) {
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (n < 6 || strcmp(de->d_name + n - 5, ".json") != 0 || de->d_name[0] == '.')
			continue;
		/* Not while its profile's template is starting. */
		if ((lock_fd = lock_profile_of(dir, de->d_name, 5)) < 0)
			continue;
		base = sbx_xasprintf("%s/%.*s", dir, (int)(n - 5), de->d_name);
		sock = sbx_xasprintf("%s.sock", base);
		rec = sbx_xasprintf("%s.json", base);
		/* A template that answers is alive; one stopped (its socket
		 * gone) may still be finishing runs: its cgroup says. */
		if (sbx_template_query(sock, false, NULL, &err) == 0)
			continue;
		r = json_load_file(rec, 0, NULL);
		cgs = r ? json_object_get(r, "cgroups") : NULL;
		for (size_t i = 0; json_is_array(cgs) && i < json_array_size(cgs); i++) {
			const char *p = json_string_value(json_array_get(cgs, i));
			gone &= p && remove_cgroup(p) == 0;
		}
		if (!gone)
			continue;
		unlink(sock);
		{
			_cleanup_free_ char *seed = seed_copy_path(rec);
			remove_dir(AT_FDCWD, seed);
		}
		if (unlink(rec) == 0)
			(*removed)++;
	}
	closedir(d);
	/* Sockets without a record (a crash between bind and record) that
	 * no one answers at. */
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		_cleanup_free_ char *sock = NULL, *rec = NULL;
		_cleanup_close_ int lock_fd = -1;
		struct sbx_error err = { 0 };

		if (n < 6 || strcmp(de->d_name + n - 5, ".sock") != 0 ||
		    (lock_fd = lock_profile_of(dir, de->d_name, 5)) < 0)
			continue;
		sock = sbx_xasprintf("%s/%s", dir, de->d_name);
		rec = sbx_xasprintf("%.*s.json", (int)(strlen(sock) - 5), sock);
		if (access(rec, F_OK) == 0 || sbx_template_query(sock, false, NULL, &err) == 0)
			continue;
		if (unlink(sock) == 0)
			(*removed)++;
	}
	if (d)
		closedir(d);
	return 0;
}
