/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * subids.c - an ordinary user's per-run host ids from its subordinate
 * ranges (see subids.h).
 *
 * The files are read directly, as rootids.c reads them: this is on every
 * run's path, and the local files are what newuidmap itself reads first.
 * The helpers are started with posix_spawn (a vfork: nothing of the
 * broker's memory is copied), both at once, by absolute path and with an
 * empty environment: they are setuid root, and nothing of the caller's
 * environment has any business reaching them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "subids.h"
#include "syscalls.h"
#include "json.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(FILE *, fclose)

static const char hint_add[] =
	"give the user ranges in both files, e.g. `usermod --add-subuids FIRST-LAST "
	"--add-subgids FIRST-LAST USER` (the same count in each, at least max_concurrent ids), "
	"or remove the user's line from the other file for runs that share the caller's uid";

/* "owner:start:count" with a plain decimal start and a count > 0 below 2^32
 * together; false for anything else (comments, malformed lines). */
static bool parse_line(const char *line, char *owner, size_t owner_len, struct sbx_sub_range *r)
{
	size_t n = strcspn(line, ":\n");
	unsigned long long a, b;
	const char *p;
	char *end;

	if (line[0] == '#' || line[n] != ':' || n == 0 || n >= owner_len)
		return false;
	memcpy(owner, line, n);
	owner[n] = '\0';
	p = line + n + 1;
	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	a = strtoull(p, &end, 10);
	if (errno || *end != ':' || end[1] < '0' || end[1] > '9')
		return false;
	b = strtoull(end + 1, &end, 10);
	if (errno || (*end != '\n' && *end != '\0') || b == 0 || a + b > (1ull << 32))
		return false;
	r->first = (uint32_t)a;
	r->count = (uint32_t)b;
	return true;
}

/* The user's first range in @etc/@file: 1, 0 when none (or no file), -1
 * when the file cannot be read. */
static int find_range(const char *etc, const char *file, const char *name, uid_t uid,
		      struct sbx_sub_range *r)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", etc, file);
	_cleanup_(fclosep) FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	char num[16], owner[256];
	size_t cap = 0;

	if (!f)
		return errno == ENOENT ? 0 : -1;
	snprintf(num, sizeof(num), "%u", (unsigned)uid);
	while (getline(&line, &cap, f) > 0)
		if (parse_line(line, owner, sizeof(owner), r) &&
		    ((name && strcmp(owner, name) == 0) || strcmp(owner, num) == 0))
			return 1;
	return ferror(f) ? -1 : 0;
}

int sbx_sub_ids_find(const char *etc, const char *name, uid_t uid, struct sbx_sub_ids *ids,
		     struct sbx_error *err)
{
	int u = find_range(etc, "subuid", name, uid, &ids->uid);
	int g = u < 0 ? 0 : find_range(etc, "subgid", name, uid, &ids->gid);

	if (u < 0 || g < 0) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "subordinate ids: %s/%s: cannot read",
			      etc, u < 0 ? "subuid" : "subgid");
		sbx_error_hint(err, "make %s/%s readable to every user (mode 0644), as shadow "
				    "installs it", etc, u < 0 ? "subuid" : "subgid");
		return -1;
	}
	if (u != g) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "subordinate ids: %s/%s gives uid %u a range and %s/%s does not", etc,
			      u ? "subuid" : "subgid", (unsigned)uid, etc, u ? "subgid" : "subuid");
		sbx_error_hint(err, "%s", hint_add);
		return -1;
	}
	return u;
}

int sbx_sub_ids_pick(const struct sbx_sub_ids *ids, unsigned slot, uid_t *uid, gid_t *gid,
		     struct sbx_error *err)
{
	if (slot >= ids->uid.count || slot >= ids->gid.count) {
		bool u = slot >= ids->uid.count;

		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "subordinate ids: admission slot %u has no id: the range in /etc/%s "
			      "holds %u",
			      slot, u ? "subuid" : "subgid", u ? ids->uid.count : ids->gid.count);
		sbx_error_hint(err, "give the user a range of at least max_concurrent ids in "
				    "/etc/subuid and /etc/subgid (`usermod --add-subuids FIRST-LAST "
				    "--add-subgids FIRST-LAST USER`), or lower max_concurrent");
		return -1;
	}
	*uid = (uid_t)(ids->uid.first + slot);
	*gid = (gid_t)(ids->gid.first + slot);
	return 0;
}

static const char hint_helpers[] =
	"install the distribution's newuidmap and newgidmap (Debian, Ubuntu: the package uidmap; "
	"Fedora: shadow-utils) setuid root, or remove the user's lines from /etc/subuid and "
	"/etc/subgid for runs that share the caller's uid";

/* Is @path a root-owned executable that may act for the caller: setuid,
 * or with file capabilities (some distributions ship it so)? */
static int helper_usable(const char *path, struct sbx_error *err)
{
	int forced = sbx_test_forced_errno("newuidmap-check");
	struct stat st;

	if (forced || stat(path, &st) < 0) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, forced ? forced : errno,
			      "subordinate ids: %s", path);
		sbx_error_hint(err, "%s", hint_helpers);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || !(st.st_mode & S_IXOTH) ||
	    (!(st.st_mode & S_ISUID) &&
	     getxattr(path, "security.capability", NULL, 0) <= 0)) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "subordinate ids: %s is not a root-owned setuid (or file-capability) "
			      "program that every user may run", path);
		sbx_error_hint(err, "%s", hint_helpers);
		return -1;
	}
	return 0;
}

int sbx_sub_ids_helpers_usable(struct sbx_error *err)
{
	if (helper_usable(SBX_NEWUIDMAP, err) < 0 || helper_usable(SBX_NEWGIDMAP, err) < 0)
		return -1;
	return 0;
}

/* The login name of @uid: /etc/passwd first (no NSS module on the run's
 * path), else NSS, for users from a directory. */
static char *login_name(uid_t uid)
{
	_cleanup_(fclosep) FILE *f = fopen("/etc/passwd", "re");
	_cleanup_free_ char *line = NULL;
	struct passwd *pw;
	size_t cap = 0;

	while (f && getline(&line, &cap, f) > 0) {
		char *name = line, *p = strchr(line, ':');
		char *u = p ? strchr(p + 1, ':') : NULL;
		char *end;

		if (!u)
			continue;
		*p = '\0';
		errno = 0;
		if (strtoul(u + 1, &end, 10) == uid && !errno && *end == ':' && end != u + 1)
			return sbx_xstrdup(name);
	}
	pw = getpwuid(uid);
	return pw ? sbx_xstrdup(pw->pw_name) : NULL;
}

int sbx_sub_ids_lookup(struct sbx_sub_ids *ids, struct sbx_error *err)
{
	_cleanup_free_ char *name = NULL;
	struct stat st;
	int r;

	if (getuid() == 0)
		return 0;
	/* The common case costs one stat: nobody has a range on this host. */
	if (stat("/etc/subuid", &st) < 0 && errno == ENOENT && stat("/etc/subgid", &st) < 0 &&
	    errno == ENOENT)
		return 0;
	name = login_name(getuid());
	r = sbx_sub_ids_find("/etc", name, getuid(), ids, err);
	if (r > 0 && sbx_sub_ids_helpers_usable(err) < 0)
		return -1;
	return r;
}

/* A helper being run: its pid and the read end of its stdout/stderr. */
static int spawn_helper(struct sbx_helper_run *h, char *const argv[], struct sbx_error *err)
{
	char *const envp[] = { NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none;
	int p[2], r;

	h->pid = -1;
	h->out = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "subordinate ids: pipe");
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	sigemptyset(&none);
	/* The broker blocks the signals it reads from a signalfd; the helper
	 * starts with none blocked and default dispositions. */
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	/* stdout is the manifest's: the helpers' output goes to the pipe. */
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_adddup2(&fa, p[1], 2);
	r = posix_spawn(&h->pid, h->path, &fa, &attr, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(p[1]);
	if (r) {
		close(p[0]);
		h->pid = -1;
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, r, "subordinate ids: running %s", h->path);
		sbx_error_hint(err, "%s", hint_helpers);
		return -1;
	}
	h->out = p[0];
	return 0;
}

/* Wait for @h; 0 when it exited 0, else -1 with its first line of output
 * (escaped: it may quote the files) in @err. */
static int finish_helper(struct sbx_helper_run *h, struct sbx_error *err)
{
	char buf[256] = "", clean[256 * 4 + 4];
	ssize_t n = 0;
	int status = 0;

	if (h->pid < 0)
		return -1;
	if (h->out >= 0) {
		n = sbx_read_all(h->out, buf, sizeof(buf) - 1);
		close(h->out);
	}
	while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	sbx_json_escape(buf, clean, sizeof(clean));
	sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "subordinate ids: %s failed: %s", h->path,
		      clean[0] ? clean : "no message");
	sbx_error_hint(err, "the helper refused the ranges sbx read from /etc/subuid and "
			    "/etc/subgid: check the user's lines there (and that no other file "
			    "or NSS source disagrees with them), or remove them for runs that "
			    "share the caller's uid");
	return -1;
}

int sbx_sub_ids_map_start(struct sbx_sub_ids_maps *m, pid_t pid, uid_t sandbox_uid,
			  gid_t sandbox_gid, uid_t host_uid, gid_t host_gid, struct sbx_error *err)
{
	char a[7][16], b[7][16];
	char *uargv[9], *gargv[9];
	int forced = sbx_test_forced_errno("newuidmap");

	m->u = (struct sbx_helper_run){ .path = SBX_NEWUIDMAP, .pid = -1, .out = -1 };
	m->g = (struct sbx_helper_run){ .path = SBX_NEWGIDMAP, .pid = -1, .out = -1 };
	/* "PID 0 CALLER 1 SANDBOX HOST 1": the caller as the namespace's root
	 * (newuidmap lets a user map its own id), which is what the broker
	 * writes the inputs as, and the sandbox user as the run's own id. */
	snprintf(a[0], sizeof(a[0]), "%d", (int)pid);
	snprintf(a[1], sizeof(a[1]), "0");
	snprintf(a[2], sizeof(a[2]), "%u", (unsigned)getuid());
	snprintf(a[3], sizeof(a[3]), "1");
	snprintf(a[4], sizeof(a[4]), "%u", (unsigned)sandbox_uid);
	snprintf(a[5], sizeof(a[5]), "%u", (unsigned)host_uid);
	snprintf(a[6], sizeof(a[6]), "1");
	memcpy(b, a, sizeof(b));
	snprintf(b[2], sizeof(b[2]), "%u", (unsigned)getgid());
	snprintf(b[4], sizeof(b[4]), "%u", (unsigned)sandbox_gid);
	snprintf(b[5], sizeof(b[5]), "%u", (unsigned)host_gid);
	uargv[0] = (char *)"newuidmap";
	gargv[0] = (char *)"newgidmap";
	for (int i = 0; i < 7; i++) {
		uargv[i + 1] = a[i];
		gargv[i + 1] = b[i];
	}
	uargv[8] = gargv[8] = NULL;

	if (forced) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, forced, "subordinate ids: %s failed",
			      SBX_NEWUIDMAP);
		sbx_error_hint(err, "%s", hint_helpers);
		return -1;
	}
	/* Both at once: each is a setuid exec that reads the account files
	 * (~1 ms quiet, far more on a loaded host), and they write different
	 * files. */
	if (spawn_helper(&m->u, uargv, err) < 0)
		return -1;
	if (spawn_helper(&m->g, gargv, err) < 0) {
		struct sbx_error ignored = { 0 };

		finish_helper(&m->u, &ignored);
		return -1;
	}
	return 0;
}

int sbx_sub_ids_map_finish(struct sbx_sub_ids_maps *m, struct sbx_error *err)
{
	struct sbx_error e2 = { 0 };
	int ru, rg;

	if (m->u.pid < 0 && m->g.pid < 0)
		return 0;
	ru = finish_helper(&m->u, err);
	rg = finish_helper(&m->g, ru < 0 ? &e2 : err);
	m->u.pid = m->g.pid = -1;
	return ru < 0 || rg < 0 ? -1 : 0;
}
