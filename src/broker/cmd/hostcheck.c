/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostcheck.c - `sbx check`: what this host can enforce, and whether the
 * catalog is valid.
 *
 * Each probe asks the kernel the way a run will, and tells "missing"
 * (ENOSYS: the kernel is too old) from "blocked" (EPERM/EACCES: a setting
 * or a security module; ENOSPC: a namespace limit such as
 * user.max_user_namespaces=0), because the fix differs.  A feature the catalog
 * needs and the host lacks makes the exit status 69 - the same features
 * whose absence makes `sbx run` refuse.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "budgets.h"
#include "catalog.h"
#include "cgroup.h"
#include "cli.h"
#include "container.h"
#include "hostconfig.h"
#include "prepare.h"
#include "state.h"
#include "libexec.h"
#include "admission.h"
#include "rootids.h"
#include "subids.h"
#include "sandbox.h"
#include "syscalls.h"
#include "template-life.h"
#include "userns.h"

struct probe {
	const char *name;
	bool required;
	int (*fn)(char *detail, size_t len, char *hint, size_t hlen); /* 0 ok, -errno otherwise */
	const char *hint; /* unless the probe wrote one */
};

/*
 * What a run does up to its go-ahead (sandbox.c): clone3 into new user
 * and pid namespaces executing sbx-init, the id maps, the init's mount,
 * net, ipc and uts namespaces, lo; then, in a child, a cgroup namespace
 * too (a run makes it after the go-ahead).  A refusal is explained the
 * way a run explains it: the restriction, and a Hint with the fix.
 */
static int probe_userns(char *detail, size_t len, char *hint, size_t hlen)
{
	struct sbx_userns_diagnosis diag;
	struct sbx_error err = { 0 };
	char text[sizeof(err.msg) + 128];
	int status;
	pid_t pid;

	if (sbx_spawn_probe(&diag, &err) < 0) {
		sbx_error_text(&err, text, sizeof(text));
		snprintf(detail, len, "%s%s%s", diag.setting, diag.setting[0] ? ": " : "", text);
		snprintf(hint, hlen, "%s", err.hint);
		return err.errnum ? -err.errnum : -EIO;
	}
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		/* sethostname in a UTS namespace of its own, as the init
		 * does: a container's seccomp profile may refuse it alone. */
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWCGROUP | CLONE_NEWUTS) < 0 ? (errno & 0x7f) :
		      sethostname("sbx", 3) < 0 ? (errno & 0x7f) : 0);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		int e = WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
		sbx_userns_explain(SBX_USERNS_NAMESPACES, e, &diag);
		snprintf(detail, len, "%s%sunshare(user, cgroup, uts), sethostname: %s", diag.setting,
			 diag.setting[0] ? ": " : "", strerror(e));
		snprintf(hint, hlen, "%s", diag.hint);
		return -e;
	}
	snprintf(detail, len, "user, mount, pid, net, ipc, uts, cgroup; id maps, lo");
	return 0;
}

/*
 * What the sandbox's init does after the go-ahead (root.c): mount a fresh
 * /proc for its new pid namespace from inside a new user namespace.  The
 * kernel allows that only where a proc mount with nothing hidden under it
 * is already visible, which a container's masked /proc is not.  In a
 * throwaway mount namespace of a child; the child's exit status is the
 * errno.
 */
static int probe_proc(char *detail, size_t len, char *hint, size_t hlen)
{
	char engine[64];
	int status, e;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		pid_t inner;

		if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0)
			_exit(0); /* the user namespaces probe reports that */
		inner = fork(); /* pid 1 of the new pid namespace */
		if (inner < 0)
			_exit(errno & 0x7f);
		if (inner == 0) {
			if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
			    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
				_exit(errno & 0x7f);
			_exit(0);
		}
		if (waitpid(inner, &status, 0) < 0)
			_exit(errno & 0x7f);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : EIO);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	e = WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
	if (e == 0) {
		snprintf(detail, len, "a fresh /proc in a new pid namespace");
		return 0;
	}
	snprintf(detail, len, "mounting a fresh /proc in a new user and pid namespace: %s",
		 strerror(e));
	if (sbx_container_engine(NULL, engine, sizeof(engine)))
		sbx_container_hint(SBX_CONTAINER_PROC, engine, hint, hlen);
	return -e;
}

static int probe_clone3(char *detail, size_t len, char *hint, size_t hlen)
{
	/* An empty argument struct is EINVAL on a kernel that has clone3. */
	if (sbx_clone3(NULL, 0) < 0 && errno == ENOSYS)
		return -ENOSYS;
	return 0;
}

/* Relative to "/", not the working directory: sbx run never resolves
 * anything there, and a caller may well sit in a directory it cannot
 * search (a root-owned 0700 one), which would make EACCES look like a
 * blocked openat2. */
static int probe_openat2(char *detail, size_t len, char *hint, size_t hlen)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd;

	if (root < 0)
		return -errno;
	fd = sbx_openat2(root, ".", &how, sizeof(how));
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int probe_mount_setattr(char *detail, size_t len, char *hint, size_t hlen)
{
	/* Invalid flags: EINVAL when the call exists. */
	if (sbx_mount_setattr(-1, "", ~0u, NULL, 0) < 0 && errno == ENOSYS)
		return -ENOSYS;
	return 0;
}

static int probe_pidfd(char *detail, size_t len, char *hint, size_t hlen)
{
	int fd = pidfd_open(getpid(), 0);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * A run sets its own user namespace's quotas (/proc/sys/user/max_*, see
 * init.c) and refuses when it cannot: try one in a user namespace of a
 * child's own, as the run's init does.
 */
static int probe_userns_quotas(char *detail, size_t len, char *hint, size_t hlen)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd;

		if (unshare(CLONE_NEWUSER) < 0)
			_exit(errno & 0x7f);
		fd = open("/proc/sys/user/max_inotify_instances", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "16", 2) != 2)
			_exit(errno & 0x7f);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		int e = WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
		snprintf(detail, len, "setting user.max_inotify_instances in a new user namespace: %s",
			 strerror(e));
		return -e;
	}
	snprintf(detail, len, "inotify, fanotify and namespace limits per run");
	return 0;
}

static int probe_seccomp(char *detail, size_t len, char *hint, size_t hlen)
{
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0)
		return -errno;
	snprintf(detail, len, "filter API level %u", seccomp_api_get());
	/* Level 3 brings SCMP_ACT_KILL_PROCESS, used for foreign ABIs. */
	return seccomp_api_get() >= 3 ? 0 : -ENOSYS;
}

static int probe_landlock(char *detail, size_t len, char *hint, size_t hlen)
{
	int abi = sbx_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0)
		return -errno;
	snprintf(detail, len, "ABI %d (needed by the archive helper; for payloads, reported in the manifest)",
		 abi);
	return 0;
}

/* Is this process the host's root (the initial user namespace's uid 0)? */
static bool host_root(void)
{
	unsigned long inside = 1, outside = 1, count = 0;
	FILE *f = fopen("/proc/self/uid_map", "re");
	bool yes;

	if (!f)
		return false;
	yes = fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0 &&
	      outside == 0 && count == 4294967295UL && geteuid() == 0;
	fclose(f);
	return yes;
}

/*
 * vm.memfd_noexec as a run will have it (init.c): 2 when sbx runs as the
 * host's root, which alone may raise it in the run's pid namespace;
 * otherwise the host's value, which the run inherits.  Not required: the
 * manifest reports the value, or null on kernels before 6.3.
 */
static int probe_memfd_noexec(char *detail, size_t len, char *hint, size_t hlen)
{
	char buf[16] = "";
	int fd = open("/proc/sys/vm/memfd_noexec", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		int e = errno;
		snprintf(detail, len, "vm.memfd_noexec: %s (Linux 6.3 or later; the manifest says null)",
			 strerror(e));
		return e == ENOENT ? -ENOSYS : -e;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	if (host_root() || !strcmp(buf, "2"))
		snprintf(detail, len, "runs get 2 (no memfd can be executed)");
	else
		snprintf(detail, len, "runs get the host's %s: only root's runs can raise it "
			 "(sysctl vm.memfd_noexec=2 makes it 2 for every run)", buf);
	return 0;
}

/*
 * The open-files limit a run is set up with, as `sbx run` sets it
 * (budgets.c): the kernel refuses a sender of fds over a unix socket once
 * its uid has more in flight than the sender's soft RLIMIT_NOFILE, and an
 * unprivileged caller's payloads share its uid.
 */
static int probe_nofile(char *detail, size_t len, char *hint, size_t hlen)
{
	struct sbx_error err = { 0 };
	uint64_t soft = 0;

	if (sbx_budget_nofile(&soft, &err) < 0) {
		snprintf(detail, len, "%s", err.msg);
		snprintf(hint, hlen, "%s", err.hint);
		return -ERANGE;
	}
	if (geteuid() == 0)
		snprintf(detail, len, "runs are set up with a soft RLIMIT_NOFILE of %llu",
			 (unsigned long long)soft);
	else
		snprintf(detail, len, "runs are set up with a soft RLIMIT_NOFILE of %llu, above the "
			 "%u fds a payload of uid %u can keep in flight",
			 (unsigned long long)soft, SBX_PAYLOAD_NOFILE + SBX_SCM_MAX_FD,
			 (unsigned)getuid());
	return 0;
}

/* sbx-init, which every run executes, where a run would look for it. */
static int probe_init(char *detail, size_t len, char *hint, size_t hlen)
{
	_cleanup_free_ char *path = sbx_libexec_path("sbx-init");

	if (access(path, X_OK) < 0) {
		int e = errno;
		snprintf(detail, len, "%s: %s", path, strerror(e));
		return -e;
	}
	snprintf(detail, len, "%s", path);
	return 0;
}

/*
 * sbx-validate, which parses every run's outputs, confining itself as a
 * run's does: its --probe makes its namespaces and empty root, reports
 * what it can still reach, and must then die of its seccomp filter.
 */
static int probe_validator(char *detail, size_t len, char *hint, size_t hlen)
{
	_cleanup_free_ char *path = sbx_libexec_path("sbx-validate");
	char *argv[] = { (char *)"sbx-validate", (char *)"--probe", NULL }, *envp[] = { NULL };
	char out[256] = "";
	int p[2], status = 0;
	ssize_t n = 0;
	pid_t pid;

	(void)hint, (void)hlen;
	if (access(path, X_OK) < 0) {
		int e = errno;
		snprintf(detail, len, "%s: %s", path, strerror(e));
		return -e;
	}
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		if (dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		execve(path, argv, envp);
		_exit(127);
	}
	close(p[1]);
	if (pid > 0)
		while ((size_t)n < sizeof(out) - 1) {
			ssize_t r = read(p[0], out + n, sizeof(out) - 1 - (size_t)n);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n += r;
		}
	close(p[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -ECHILD;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	if (strcmp(out, "probe read-outside=denied network=denied") != 0 ||
	    !WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS) {
		snprintf(detail, len, "%s --probe: %s", path,
			 out[0] ? out : "no report (it could not confine itself)");
		return -EPERM;
	}
	snprintf(detail, len, "%s: namespaces, empty root, seccomp", path);
	return 0;
}

/* Where every run makes its private temp dir, as the run would. */
static int probe_tempdir(char *detail, size_t len, char *hint, size_t hlen)
{
	_cleanup_free_ char *base = sbx_state_temp_base();
	_cleanup_free_ char *p = sbx_xasprintf("%s/sbx-check-XXXXXX", strcmp(base, "/") ? base : "");

	if (!mkdtemp(p)) {
		int e = errno;
		snprintf(detail, len, "%s: %s", base, strerror(e));
		return e == ENOENT ? -ENOTDIR : -e; /* "unusable", not "missing" */
	}
	rmdir(p);
	snprintf(detail, len, "%s", base);
	return 0;
}

static const struct probe probes[] = {
	{ "user namespaces", true, probe_userns,
	  "" },
	{ "proc", true, probe_proc,
	  "a /proc with masked or read-only paths over it (/proc/kcore, /proc/sys, ...) makes "
	  "the kernel refuse the sandbox a fresh one: unmount what hides part of /proc" },
	{ "userns quotas", true, probe_userns_quotas,
	  "each run limits its own user namespace (/proc/sys/user); /proc/sys must be writable "
	  "there (Linux 4.9 or later)" },
	{ "clone3", true, probe_clone3, "Linux 5.3 or later is needed" },
	{ "openat2", true, probe_openat2, "Linux 5.6 or later is needed" },
	{ "mount_setattr", true, probe_mount_setattr, "Linux 5.12 or later is needed" },
	{ "pidfd", true, probe_pidfd, "Linux 5.3 or later is needed" },
	{ "open files", true, probe_nofile, "" },
	{ "seccomp", true, probe_seccomp, "a kernel with CONFIG_SECCOMP_FILTER is needed" },
	{ "landlock", false, probe_landlock,
	  "boot with lsm=...,landlock: without it jobs with \"extract\" are refused (69), "
	  "since the archive helper confines itself with it; other jobs run" },
	{ "memfd noexec", false, probe_memfd_noexec, "Linux 6.3 or later makes memfds non-executable" },
	{ "sbx-init", true, probe_init, SBX_LIBEXEC_HINT },
	{ "validator", true, probe_validator,
	  "sbx-validate, which parses every run's outputs, makes user, mount and network "
	  "namespaces of its own: user namespaces must be allowed for this user (sysctl "
	  "user.max_user_namespaces > 0; on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0 "
	  "or an AppArmor profile that allows them); " SBX_LIBEXEC_HINT },
	{ "temp dir", true, probe_tempdir, SBX_TEMP_HINT },
};

/*
 * The report, as text (a column of names, "state: detail", an indented
 * Hint) or, with --json, one object on one line: {"ok": the verdict,
 * "id_mode": root_ids, subordinate or shared (the "ids" check),
 * "checks": [{name, state, ok, required, detail, hint}, ...]}, detail and
 * hint null when there is none.  The exit status is the same either way.
 */
struct report {
	json_t *checks; /* NULL: text */
	const char *id_mode; /* "root_ids", "subordinate" or "shared" */
};

static json_t *string_or_null(const char *s)
{
	return s && s[0] ? json_string(s) : json_null();
}

static void item(struct report *rp, const char *name, bool required, const char *state,
		 const char *detail, const char *hint_in)
{
	char hint[1024];

	/* A hint that names a config key names the file too (error.h). */
	snprintf(hint, sizeof(hint), "%s", hint_in ? hint_in : "");
	sbx_hint_add_config(hint, sizeof(hint));
	if (rp->checks) {
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(name));
		json_object_set_new(o, "state", json_string(state));
		json_object_set_new(o, "ok", json_boolean(strcmp(state, "ok") == 0));
		json_object_set_new(o, "required", json_boolean(required));
		json_object_set_new(o, "detail", string_or_null(detail));
		json_object_set_new(o, "hint", string_or_null(hint));
		json_array_append_new(rp->checks, o);
		return;
	}
	printf("%-16s %s%s%s\n", name, state, detail && detail[0] ? ": " : "", detail ? detail : "");
	if (hint[0])
		printf("%-16s Hint: %s\n", "", hint);
}

/* The cgroup report's text as it is, with the config file named in a
 * Hint line that names a config key. */
static void print_with_config(const char *text)
{
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		char line[2048];

		snprintf(line, sizeof(line), "%.*s", (int)(n < 1500 ? n : 1500), p);
		if (strstr(line, "Hint: "))
			sbx_hint_add_config(line, sizeof(line));
		puts(line);
		p += n + (p[n] == '\n');
	}
}

/* Which host config file sbx read, and why that one (sbx(1), FILES). */
static void config_item(struct report *rp, const struct sbx_hostconfig *cfg)
{
	_cleanup_free_ char *user = sbx_hostconfig_user_file(), *detail = NULL;

	if (cfg->file)
		detail = sbx_xasprintf("%s (%s)", cfg->file, cfg->origin);
	else
		detail = sbx_xasprintf("none, the defaults apply (looked for --config, $SBX_CONFIG, "
				       "%s%s" SYSCONFDIR "/sbx/sbx.json)", user ? user : "",
				       user ? ", " : "");
	item(rp, "config", false, "ok", detail, NULL);
}

/*
 * The cgroup line comes from the sandbox library as text, in the same
 * columns: "NAME  STATE: DETAIL" and "  Hint: HINT" lines, taken apart
 * here into items.
 */
static void cgroup_items(struct report *rp, const char *text)
{
	_cleanup_free_ char *copy = sbx_xstrdup(text);
	char *name = NULL, *state = NULL, *detail = NULL, *hint = NULL;

	for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
		char *rest = line + strspn(line, " ");

		if (strncmp(rest, "Hint: ", 6) == 0 && line != rest) {
			hint = rest + 6;
			continue;
		}
		if (name)
			item(rp, name, true, state, detail, hint);
		name = line;
		hint = NULL;
		rest = line + strcspn(line, " ");
		if (*rest)
			*rest++ = '\0';
		state = rest + strspn(rest, " ");
		detail = strstr(state, ": ");
		if (detail) {
			*detail = '\0';
			detail += 2;
		}
	}
	if (name)
		item(rp, name, true, state, detail, hint);
}

/*
 * Which host ids sandboxes get, as `sbx run` decides it: the id mode.
 * Root: the configured range (rootids.c), which must own nothing on this
 * host (every run is refused otherwise).  An ordinary user with
 * subordinate ranges: an id of each run's own from them (subids.c), or
 * every run refused when the helpers cannot map them.  Anyone else: the
 * caller's own uid, shared by all its runs, with a Hint on how to get the
 * subordinate mode.
 */
static int report_ids(struct report *rp, const struct sbx_hostconfig *cfg)
{
	uint32_t first = cfg->root_ids_first, last = first + cfg->root_ids_count - 1;
	struct sbx_admission_limits lim = { 0 };
	struct sbx_error err = { 0 };
	struct sbx_sub_ids ids;
	char detail[512], hint[512] = "";
	int r;

	if (getuid() == 0 && sbx_root_ids_mapped(first)) {
		rp->id_mode = "root_ids";
		if (sbx_root_ids_check("/etc", first, cfg->root_ids_count, &err) < 0) {
			/* err.msg starts "root_ids: "; the detail says it. */
			snprintf(detail, sizeof(detail), "root_ids: %s",
				 strncmp(err.msg, "root_ids: ", 10) == 0 ? err.msg + 10 : err.msg);
			item(rp, "ids", true, "unusable", detail, err.hint);
			return -1;
		}
		snprintf(detail, sizeof(detail),
			 "root_ids: host ids %u-%u, one per concurrent run; none in /etc/passwd, "
			 "/etc/group, /etc/subuid, /etc/subgid",
			 first, last);
		item(rp, "ids", true, "ok", detail, NULL);
		return 0;
	}
	r = getuid() == 0 ? 0 : sbx_sub_ids_lookup(&ids, &err);
	if (r < 0) {
		rp->id_mode = "subordinate";
		snprintf(detail, sizeof(detail), "%s", err.msg);
		item(rp, "ids", true, "unusable", detail, err.hint);
		return -1;
	}
	if (r > 0) {
		uint64_t n = ids.uid.count < ids.gid.count ? ids.uid.count : ids.gid.count;

		rp->id_mode = "subordinate";
		if (sbx_admission_limits_default(&lim, cfg->max_concurrent, cfg->memory_budget_mib,
						 &err) == 0 &&
		    n < lim.max_concurrent)
			snprintf(hint, sizeof(hint),
				 "the ranges hold %llu ids and max_concurrent is %llu: runs past "
				 "the %lluth at a time are refused; give the user more subordinate "
				 "ids (`usermod --add-subuids`, `--add-subgids`) or lower "
				 "max_concurrent",
				 (unsigned long long)n, (unsigned long long)lim.max_concurrent,
				 (unsigned long long)n);
		snprintf(detail, sizeof(detail),
			 "subordinate: host uids %u-%u and gids %u-%u (/etc/subuid, /etc/subgid), "
			 "one per concurrent run, mapped by %s and %s",
			 ids.uid.first, ids.uid.first + ids.uid.count - 1, ids.gid.first,
			 ids.gid.first + ids.gid.count - 1, SBX_NEWUIDMAP, SBX_NEWGIDMAP);
		item(rp, "ids", true, "ok", detail, hint);
		return 0;
	}
	rp->id_mode = "shared";
	snprintf(detail, sizeof(detail),
		 "shared: every run is the caller's own uid %u on the host, and shares its "
		 "per-uid kernel budgets with the caller (sbx(1), WHAT THE RUNS OF ONE CALLER "
		 "SHARE)",
		 (unsigned)getuid());
	if (getuid() != 0)
		snprintf(hint, sizeof(hint),
			 "for a host uid of its own per run, give the user subordinate ids: "
			 "`usermod --add-subuids FIRST-LAST --add-subgids FIRST-LAST USER` (as many "
			 "as max_concurrent), with newuidmap and newgidmap installed (Debian, "
			 "Ubuntu: the package uidmap)");
	item(rp, "ids", true, "ok", detail, hint);
	return 0;
}

/*
 * Each profile's prepared state, as `sbx run` will find it (missing,
 * stale or unusable: refused with 69), with the content re-hashed, which
 * a run does not do.  Not required: the other profiles still run.
 */
static void prepared_items(struct report *rp, const struct sbx_hostconfig *cfg,
			   const struct sbx_catalog *cat)
{
	for (size_t i = 0; i < cat->n_profiles; i++) {
		const struct sbx_profile *pr = &cat->profiles[i];
		struct sbx_prepared p = { 0 };
		struct sbx_error perr = { 0 };
		char detail[160];

		if (!pr->prepare)
			continue;
		/* One item name for all, in the text's 16 columns; the detail
		 * starts with the profile's name. */
		if (sbx_prepared_lookup(cfg, cat, pr, true, &p, &perr) == 0) {
			snprintf(detail, sizeof(detail), "%s: sha256:%s", pr->name, p.sha256);
			item(rp, "prepared", false, "ok", detail, NULL);
		} else {
			item(rp, "prepared", false, sbx_prepared_verdict(&perr), perr.msg, perr.hint);
		}
		sbx_prepared_free(&p);
	}
}

/*
 * Each profile's template (sbx(1) TEMPLATES): whether one runs now, and
 * whether one can (the interpreter sbx-template embeds, the binary).
 * Never required: a profile without a usable template runs cold.
 */
static void template_items(struct report *rp, const struct sbx_hostconfig *cfg,
			   const struct sbx_catalog *cat)
{
	_cleanup_free_ char *state_dir = NULL;
	struct sbx_error err = { 0 };

	for (size_t i = 0; i < cat->n_profiles; i++) {
		const struct sbx_profile *pr = &cat->profiles[i];
		struct sbx_template_place pl = { 0 };
		struct sbx_template_info info = { 0 };
		struct sbx_prepared p = { 0 };
		char detail[320], why[192], hint[256];

		if (!pr->template)
			continue;
		if (!cfg->templates) {
			snprintf(detail, sizeof(detail), "%s: off (host config \"templates\": false)",
				 pr->name);
			item(rp, "template", false, "ok", detail, NULL);
			continue;
		}
		if (!state_dir && sbx_state_dir(cfg->state_dir, &state_dir, &err) < 0)
			return;
		if (pr->prepare && sbx_prepared_lookup(cfg, cat, pr, false, &p, &err) < 0) {
			snprintf(detail, sizeof(detail), "%s: needs its prepared state first", pr->name);
			item(rp, "template", false, "unusable", detail, NULL);
			continue;
		}
		if (sbx_template_locate(cfg, cat, pr, pr->prepare ? p.sha256 : NULL, state_dir, &pl,
					why, sizeof(why)) < 0) {
			snprintf(detail, sizeof(detail), "%s: %s", pr->name, why);
			snprintf(hint, sizeof(hint), "runs of %s start cold", pr->name);
			item(rp, "template", false, "unusable", detail, hint);
		} else if (sbx_template_query(pl.sock_path, false, &info, &err) == 0) {
			snprintf(detail, sizeof(detail), "%s: running (pid %d, %s, %u runs)", pr->name,
				 (int)info.pid, pl.digest, info.runs);
			item(rp, "template", false, "ok", detail, NULL);
		} else {
			snprintf(detail, sizeof(detail),
				 "%s: not running (the first run starts it; sbx template start)",
				 pr->name);
			item(rp, "template", false, "ok", detail, NULL);
		}
		sbx_prepared_free(&p);
		sbx_template_place_free(&pl);
	}
}

int sbx_cmd_check(const struct sbx_common_opts *o)
{
	struct sbx_hostconfig cfg = { 0 };
	struct sbx_catalog cat = { 0 };
	struct sbx_error err = { 0 };
	struct sbx_cgroup_detect_opts copts = { 0 };
	struct report rp = { .checks = o->json ? json_array() : NULL };
	int code = 0;

	if (sbx_hostconfig_load(&cfg, o->config, &err) < 0) {
		sbx_error_print(&err);
		json_decref(rp.checks);
		return err.code;
	}
	config_item(&rp, &cfg);
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		char detail[1024] = "", hint[512] = "";
		int r = probes[i].fn(detail, sizeof(detail), hint, sizeof(hint));

		if (r == 0) {
			item(&rp, probes[i].name, probes[i].required, "ok", detail, NULL);
			continue;
		}
		/* An optional feature's hint says what goes without it; a
		 * required one's may come from the probe (the user namespace's
		 * restriction). */
		item(&rp, probes[i].name, probes[i].required,
		     r == -ENOSYS || r == -ENOENT ? "missing" :
		     (r == -EPERM || r == -EACCES || r == -ENOSPC) ? "blocked" : "unusable",
		     detail[0] ? detail : strerror(-r), hint[0] ? hint : probes[i].hint);
		if (probes[i].required)
			code = SBX_EXIT_UNAVAILABLE;
	}

	copts.cgroup_parent = cfg.cgroup_parent;
	if (rp.checks) {
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		if (!m || sbx_cgroup_host_report(m, &copts) < 0)
			code = SBX_EXIT_UNAVAILABLE;
		if (m)
			fclose(m);
		cgroup_items(&rp, text ? text : "cgroup unusable: open_memstream failed\n");
		free(text);
	} else {
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);

		if (!m || sbx_cgroup_host_report(m, &copts) < 0)
			code = SBX_EXIT_UNAVAILABLE;
		if (m)
			fclose(m);
		print_with_config(text ? text : "cgroup unusable: open_memstream failed\n");
		free(text);
	}
	if (report_ids(&rp, &cfg) < 0)
		code = SBX_EXIT_UNAVAILABLE;

	if (sbx_catalog_load(&cat, sbx_catalog_default_dir(o->policy, &cfg), &err) < 0) {
		char text[sizeof(err.msg) + 128];

		/* The text says "invalid" and the error follows on stderr;
		 * JSON carries the error too. */
		item(&rp, "catalog", true, "invalid",
		     rp.checks ? sbx_error_text(&err, text, sizeof(text)) : NULL,
		     rp.checks ? err.hint : NULL);
		fflush(stdout);
		sbx_error_print(&err);
		code = SBX_EXIT_UNAVAILABLE;
	} else {
		char detail[1024];

		snprintf(detail, sizeof(detail), "%s (%zu runtime, %zu network, %zu seccomp)",
			 cat.dir, cat.n_profiles, cat.n_networks, cat.n_seccomp);
		item(&rp, "catalog", true, "ok", detail, NULL);
		/* A profile this host cannot run (its interpreter or a
		 * required bind missing) is refused by every run that names
		 * it; the others still run, so it does not fail the check. */
		for (size_t i = 0; i < cat.n_profiles; i++) {
			struct sbx_error perr = { 0 };
			char name[96], text[sizeof(perr.msg) + 128];
			const char *msg;

			if (sbx_profile_host_check(&cat.profiles[i], &perr) == 0)
				continue;
			snprintf(name, sizeof(name), "profile %s", cat.profiles[i].name);
			msg = sbx_error_text(&perr, text, sizeof(text));
			/* Without the file name, which the catalog line gave. */
			if (strncmp(msg, cat.profiles[i].file, strlen(cat.profiles[i].file)) == 0 &&
			    strncmp(msg + strlen(cat.profiles[i].file), ": ", 2) == 0)
				msg += strlen(cat.profiles[i].file) + 2;
			item(&rp, name, false, "missing", msg, perr.hint);
		}
		prepared_items(&rp, &cfg, &cat);
		template_items(&rp, &cfg, &cat);
	}
	if (rp.checks) {
		json_t *doc = json_pack("{s:b, s:s, s:o, s:o}", "ok", code == 0, "id_mode",
					rp.id_mode ? rp.id_mode : "shared", "config",
					cfg.file ? json_string(cfg.file) : json_null(), "checks",
					rp.checks);
		char *line = json_dumps(doc, JSON_COMPACT);

		if (line)
			puts(line);
		else
			code = SBX_EXIT_SOFTWARE;
		free(line);
		json_decref(doc);
	}
	if (fflush(stdout) != 0) {
		sbx_warn("stdout: write failed");
		code = SBX_EXIT_SOFTWARE;
	}
	sbx_catalog_free(&cat);
	sbx_hostconfig_free(&cfg);
	return code;
}
