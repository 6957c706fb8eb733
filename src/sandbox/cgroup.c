/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.c - which cgroup hierarchy to use, the helpers both backends share,
 * and the public API that dispatches to the v1 or v2 ops.
 *
 * Detection reads two files the kernel keeps for us: mountinfo says where
 * each hierarchy is mounted (and which part of it the mount shows, for
 * cgroup namespaces), /proc/self/cgroup says which cgroup we are in.  The
 * parent of a run's cgroup is the configured cgroup_parent, else our own
 * cgroup, and its directory is the mount point plus that path relative to
 * the mount's root.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "runid.h"

/* Only where no better Hint was made (sbx_cgroup_hint_set()). */
const char sbx_cgroup_hint[] =
	"sbx needs a cgroup it may write, with the memory, pids and cpu controllers: "
	"create a cgroup directory, chown it to this user, name it in the host config key "
	"cgroup_parent and start sbx from a process inside it (docs/cgroups.md)";

static const char *const controller_names[_SBX_CGROUP_CONTROLLER_MAX] = {
	[SBX_CGROUP_MEMORY] = "memory", [SBX_CGROUP_PIDS] = "pids",
	[SBX_CGROUP_CPU] = "cpu",       [SBX_CGROUP_CPUACCT] = "cpuacct",
	[SBX_CGROUP_FREEZER] = "freezer",
};

const char *sbx_cgroup_controller_name(enum sbx_cgroup_controller c)
{
	return (size_t)c < ARRAY_SIZE(controller_names) ? controller_names[c] : "?";
}

/* --- file helpers ----------------------------------------------------- */

int sbx_cgroup_write(int dirfd, const char *dir_path, const char *file, const char *value,
		     int code, struct sbx_error *err)
{
	/* No O_CREAT: a control file the kernel did not make means the
	 * controller is not there, and must not be papered over. */
	_cleanup_close_ int fd =
		openat(dirfd, file, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	int e;

	if (fd < 0 || sbx_write_all(fd, value, strlen(value)) < 0) {
		e = errno;
		sbx_error_set(err, code, e, "cgroup: %s/%s: cannot write \"%s\"", dir_path, file,
			      value);
		if (e == EACCES || e == EPERM || e == EROFS)
			sbx_cgroup_hint_set(err, NULL, 0, NULL, NULL);
		errno = e;
		return -1;
	}
	return 0;
}

static int read_fd_capped(int fd, char **out)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			if (cap >= SBX_CGROUP_FILE_MAX) {
				errno = EFBIG;
				return -1;
			}
			cap = cap ? cap * 2 : 8192;
			buf = sbx_xrealloc(buf, cap);
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (!buf)
		buf = sbx_xmalloc(1);
	buf[len] = '\0';
	*out = TAKE_PTR(buf);
	return 0;
}

int sbx_cgroup_read(int dirfd, const char *file, char **out)
{
	_cleanup_close_ int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

	if (fd < 0)
		return -1;
	return read_fd_capped(fd, out);
}

static int read_path(const char *path, char **out)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -1;
	return read_fd_capped(fd, out);
}

/* Strict unsigned decimal: digits only, then optional whitespace. */
static int parse_decimal(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	while (i < len && s[i] >= '0' && s[i] <= '9') {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
		i++;
	}
	if (i == 0)
		return -EINVAL;
	for (; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n')
			return -EINVAL;
	*out = v;
	return 0;
}

int sbx_cgroup_parse_u64(const char *text, uint64_t *out)
{
	size_t len;

	while (*text == ' ' || *text == '\t')
		text++;
	len = strlen(text);
	if (len >= 3 && strncmp(text, "max", 3) == 0 &&
	    strspn(text + 3, " \t\n") == len - 3) {
		*out = UINT64_MAX;
		return 0;
	}
	return parse_decimal(text, len, out);
}

int sbx_cgroup_keyed_u64(const char *text, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);

		if (len > klen && strncmp(line, key, klen) == 0 &&
		    (line[klen] == ' ' || line[klen] == '\t')) {
			const char *v = line + klen;
			while (*v == ' ' || *v == '\t')
				v++;
			return parse_decimal(v, len - (size_t)(v - line), out);
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

int sbx_cgroup_for_each_pid(int dirfd, int (*fn)(pid_t pid, void *data), void *data)
{
	_cleanup_free_ char *text = NULL;
	int n = 0;

	if (sbx_cgroup_read(dirfd, "cgroup.procs", &text) < 0)
		return -1;
	for (const char *line = text; *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		uint64_t pid;

		if (len > 0) {
			if (parse_decimal(line, len, &pid) < 0 || pid == 0 || pid > INT32_MAX) {
				errno = EINVAL;
				return -1;
			}
			n++;
			if (fn && fn((pid_t)pid, data) < 0)
				return -1;
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	return n;
}

int sbx_cgroup_mkdir(const struct sbx_cgroup_host *h, int parent_fd, const char *hierarchy,
		     const char *name)
{
	int fd;

	if (mkdirat(parent_fd, name, 0755) < 0)
		return -1;
	fd = openat(parent_fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		int e = errno;
		unlinkat(parent_fd, name, AT_REMOVEDIR);
		errno = e;
		return -1;
	}
	sbx_cgroup_test_event(h, SBX_CGROUP_TEST_MKDIR, fd, hierarchy, name);
	return fd;
}

void sbx_cgroup_pause_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void sbx_cgroup_test_event(const struct sbx_cgroup_host *h, enum sbx_cgroup_test_event ev,
			   int dirfd, const char *hierarchy, const char *name)
{
	if (h->test_hook)
		h->test_hook(h->test_data, ev, dirfd, hierarchy, name);
}

bool sbx_cgroup_has_file(int dirfd, const char *file)
{
	return faccessat(dirfd, file, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

uint64_t sbx_cgroup_cpu_quota_us(uint64_t millicores)
{
	/* Beyond a million cores the product could overflow; no host has
	 * them, so the cap changes nothing real. */
	if (millicores > 1000000000ULL)
		millicores = 1000000000ULL;
	return millicores * 100 < 1000 ? 1000 : millicores * 100;
}

int sbx_cgroup_rmdir(const struct sbx_cgroup_host *h, int parent_fd, const char *hierarchy,
		     const char *name)
{
	/* A killed task leaves its cgroup a moment after the signal; the
	 * kernel answers EBUSY until then. */
	for (int i = 0; i < 100; i++) {
		sbx_cgroup_test_event(h, SBX_CGROUP_TEST_RMDIR, parent_fd, hierarchy, name);
		if (unlinkat(parent_fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -1;
		sbx_cgroup_pause_ms(10);
	}
	errno = EBUSY;
	return -1;
}

/* --- detection -------------------------------------------------------- */

struct mount_info {
	char *root;  /* the part of the hierarchy the mount shows */
	char *point; /* where it is mounted */
	char *fstype;
	char *super; /* super options: the v1 controller names */
};

static void mounts_free(struct mount_info *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].root);
		free(m[i].point);
		free(m[i].fstype);
		free(m[i].super);
	}
	free(m);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape(const char *s, size_t len)
{
	char *out = sbx_xmalloc(len + 1), *o = out;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' && i + 3 < len && s[i + 1] >= '0' &&
		    s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' &&
		    s[i + 3] <= '7') {
			*o++ = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* Keep the cgroup and cgroup2 mounts of mountinfo @text. */
static int parse_mountinfo(const char *text, struct mount_info **out, size_t *n_out)
{
	struct mount_info *m = NULL;
	size_t n = 0;

	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *f[16];
		size_t flen[16], nf = 0, sep = 0;

		/* Split on spaces; the optional fields end at a lone "-". */
		for (size_t i = 0; i < len && nf < ARRAY_SIZE(f);) {
			size_t j = i;
			while (j < len && line[j] != ' ')
				j++;
			f[nf] = line + i;
			flen[nf] = j - i;
			if (!sep && nf >= 6 && flen[nf] == 1 && f[nf][0] == '-')
				sep = nf;
			nf++;
			i = j + 1;
		}
		if (sep && sep + 3 < nf &&
		    ((flen[sep + 1] == 6 && strncmp(f[sep + 1], "cgroup", 6) == 0) ||
		     (flen[sep + 1] == 7 && strncmp(f[sep + 1], "cgroup2", 7) == 0))) {
			m = sbx_xrealloc(m, (n + 1) * sizeof(*m));
			m[n].root = unescape(f[3], flen[3]);
			m[n].point = unescape(f[4], flen[4]);
			m[n].fstype = sbx_xstrndup(f[sep + 1], flen[sep + 1]);
			m[n].super = sbx_xstrndup(f[sep + 3], flen[sep + 3]);
			n++;
		}
		line = eol ? eol + 1 : NULL;
	}
	*out = m;
	*n_out = n;
	return 0;
}

static bool list_has(const char *list, char sepc, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, sepc);
		size_t l = e ? (size_t)(e - p) : strlen(p);
		while (l > 0 && (p[l - 1] == '\n' || p[l - 1] == ' '))
			l--;
		if (l == wl && strncmp(p, word, wl) == 0)
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* The path in /proc/self/cgroup for v2 (@controller NULL: the "0::" line)
 * or for the v1 hierarchy holding @controller. */
static char *proc_cgroup_path(const char *text, const char *controller)
{
	for (const char *line = text; line && *line;) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		_cleanup_free_ char *l = sbx_xstrndup(line, len);
		char *c1 = strchr(l, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (c2) {
			*c2 = '\0';
			if (!controller ? strcmp(l, "0:") == 0 && c1[1] == '\0'
					: strcmp(l, "0") != 0 && list_has(c1 + 1, ',', controller))
				return sbx_xstrdup(c2 + 1);
		}
		line = eol ? eol + 1 : NULL;
	}
	return NULL;
}

static bool path_has_prefix(const char *path, const char *prefix, const char **rest)
{
	size_t pl = strlen(prefix);

	while (pl > 1 && prefix[pl - 1] == '/')
		pl--;
	if (pl == 1 && prefix[0] == '/') {
		*rest = path;
		return true;
	}
	if (strncmp(path, prefix, pl) != 0 || (path[pl] != '/' && path[pl] != '\0'))
		return false;
	*rest = path + pl;
	return true;
}

static bool path_is_clean(const char *p)
{
	if (p[0] != '/')
		return false;
	for (const char *s = p; *s;) {
		const char *e = strchr(s, '/');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		if ((l == 1 && s[0] == '.') || (l == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		if (!e)
			break;
		s = e + 1;
	}
	return true;
}

struct detect_ctx {
	const struct sbx_cgroup_detect_opts *o;
	struct mount_info *mounts;
	size_t n_mounts;
	char *proc;
	char why_v2[384];
	char why_v1[384];
	char v2_missing[64], v1_missing[64]; /* for the Hint */
	char v2_where[256];
};

/*
 * Directory of the parent in mount @m: the configured cgroup_parent (with
 * the mount point stripped when given as a filesystem path) or @own, made
 * relative to the mount's root.  NULL with @why filled when unreachable.
 */
static char *parent_dir(struct detect_ctx *c, const struct mount_info *m, const char *own,
			char *why, size_t whylen)
{
	const char *cg = c->o->cgroup_parent ? c->o->cgroup_parent : own, *rest, *rel;

	if (!cg) {
		snprintf(why, whylen, "%s is not listed in %s", m->point,
			 c->o->proc_cgroup ? c->o->proc_cgroup : "/proc/self/cgroup");
		return NULL;
	}
	if (c->o->cgroup_parent && path_has_prefix(cg, m->point, &rest))
		cg = *rest ? rest : "/";
	if (!path_is_clean(cg)) {
		snprintf(why, whylen, "cgroup path \"%s\" is not absolute and clean", cg);
		return NULL;
	}
	if (!path_has_prefix(cg, m->root, &rel)) {
		snprintf(why, whylen, "cgroup %s is outside the part of the hierarchy mounted at %s",
			 cg, m->point);
		return NULL;
	}
	if (strcmp(rel, "/") == 0)
		rel = "";
	return sbx_xasprintf("%s%s%s", c->o->root ? c->o->root : "", m->point, rel);
}

static int open_dir(const char *path)
{
	return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static int try_v2(struct detect_ctx *c, struct sbx_cgroup_host *h)
{
	static const char *const need[] = { "memory", "pids", "cpu" };
	char *why = c->why_v2;
	size_t whylen = sizeof(c->why_v2);
	_cleanup_free_ char *own = proc_cgroup_path(c->proc, NULL);
	const char *rel;

	snprintf(why, whylen, "no cgroup2 mount");
	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct mount_info *m = &c->mounts[i];
		_cleanup_free_ char *path = NULL, *controllers = NULL;
		_cleanup_close_ int fd = -1;
		char missing[64] = "";

		if (strcmp(m->fstype, "cgroup2") != 0)
			continue;
		path = parent_dir(c, m, own, why, whylen);
		if (!path)
			continue;
		fd = open_dir(path);
		if (fd < 0) {
			snprintf(why, whylen, "%s: %s", path, strerror(errno));
			continue;
		}
		if (sbx_cgroup_read(fd, "cgroup.controllers", &controllers) < 0) {
			snprintf(why, whylen, "%s/cgroup.controllers: %s", path, strerror(errno));
			continue;
		}
		for (size_t k = 0; k < ARRAY_SIZE(need); k++)
			if (!list_has(controllers, ' ', need[k]))
				snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
					 "%s%s", missing[0] ? ", " : "", need[k]);
		if (missing[0]) {
			snprintf(why, whylen, "%s/cgroup.controllers lacks %s", path, missing);
			snprintf(c->v2_missing, sizeof(c->v2_missing), "%s", missing);
			snprintf(c->v2_where, sizeof(c->v2_where), "%s", path);
			continue;
		}
		h->version = 2;
		h->ops = &sbx_cgroup_v2_ops;
		h->v2_fd = TAKE_FD(fd);
		h->v2_path = TAKE_PTR(path);
		h->v2_parent_is_self = !c->o->cgroup_parent;
		if (c->o->cgroup_parent && own && path_has_prefix(own, m->root, &rel)) {

			h->v2_own_path = sbx_xasprintf("%s%s%s", c->o->root ? c->o->root : "",
						       m->point, strcmp(rel, "/") == 0 ? "" : rel);
			h->v2_self_outside_parent =
				!path_has_prefix(h->v2_own_path, h->v2_path, &rel);
		}
		return 0;
	}
	return -1;
}

static int try_v1(struct detect_ctx *c, struct sbx_cgroup_host *h)
{
	const struct mount_info *mnt[_SBX_CGROUP_CONTROLLER_MAX] = { 0 };
	char *why = c->why_v1;
	size_t whylen = sizeof(c->why_v1);

	/* First what is mounted at all, so the message names a missing
	 * controller rather than a missing directory of another. */
	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++) {
		for (size_t i = 0; i < c->n_mounts && !mnt[k]; i++)
			if (strcmp(c->mounts[i].fstype, "cgroup") == 0 &&
			    list_has(c->mounts[i].super, ',', controller_names[k]))
				mnt[k] = &c->mounts[i];
		if (!mnt[k] && k != SBX_CGROUP_FREEZER)
			snprintf(c->v1_missing + strlen(c->v1_missing),
				 sizeof(c->v1_missing) - strlen(c->v1_missing), "%s%s",
				 c->v1_missing[0] ? ", " : "", controller_names[k]);
	}
	if (c->v1_missing[0]) {
		/* The message names the first, the Hint all of them. */
		snprintf(why, whylen, "the %.*s controller is not mounted",
			 (int)strcspn(c->v1_missing, ","), c->v1_missing);
		return -1;
	}
	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++) {
		_cleanup_free_ char *own = NULL, *path = NULL;
		bool optional = k == SBX_CGROUP_FREEZER;
		int fd;

		if (!mnt[k])
			continue;
		own = proc_cgroup_path(c->proc, controller_names[k]);
		path = parent_dir(c, mnt[k], own, why, whylen);
		if (!path) {
			if (optional)
				continue;
			return -1;
		}
		fd = open_dir(path);
		if (fd < 0) {
			if (optional)
				continue;
			snprintf(why, whylen, "%s: %s", path, strerror(errno));
			return -1;
		}
		h->v1_fd[k] = fd;
		h->v1_path[k] = TAKE_PTR(path);
	}
	h->version = 1;
	h->ops = &sbx_cgroup_v1_ops;
	return 0;
}

static void host_init(struct sbx_cgroup_host *h)
{
	*h = (struct sbx_cgroup_host){ .v2_fd = -1 };
	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++)
		h->v1_fd[k] = -1;
}

void sbx_cgroup_host_free(struct sbx_cgroup_host *h)
{
	if (!h)
		return;
	closep(&h->v2_fd);
	free(h->v2_path);
	free(h->v2_own_path);
	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++) {
		closep(&h->v1_fd[k]);
		free(h->v1_path[k]);
	}
	host_init(h);
}

/*
 * cgroup.memory=nosocket on the kernel command line: v2 then never charges
 * socket buffers to a cgroup (v1's memory.kmem.tcp.limit_in_bytes turns
 * its own accounting on regardless).  Any occurrence counts: the kernel
 * has no option to turn it back on.
 */
static bool cmdline_nosocket(const char *text)
{
	for (const char *p = text; *p;) {
		size_t l = strcspn(p, " \t\n");

		if (l > 14 && strncmp(p, "cgroup.memory=", 14) == 0) {
			_cleanup_free_ char *v = sbx_xstrndup(p + 14, l - 14);
			if (list_has(v, ',', "nosocket"))
				return true;
		}
		p += l;
		p += strspn(p, " \t\n");
	}
	return false;
}

/* The Hint when neither hierarchy works: for the one this host has (a v1
 * mount of a controller sbx needs: v1), naming what it lacks. */
static void detect_hint(const struct detect_ctx *c, struct sbx_error *err)
{
	bool v1 = false, v2 = false;

	for (size_t i = 0; i < c->n_mounts; i++) {
		const struct mount_info *m = &c->mounts[i];

		v2 = v2 || strcmp(m->fstype, "cgroup2") == 0;
		if (strcmp(m->fstype, "cgroup") == 0)
			for (int k = 0; k < SBX_CGROUP_FREEZER; k++)
				v1 = v1 || list_has(m->super, ',', controller_names[k]);
	}
	if (v1)
		sbx_cgroup_hint_set(err, c->o->root, 1, c->v1_missing[0] ? c->v1_missing : NULL,
				    NULL);
	else if (v2)
		sbx_cgroup_hint_set(err, c->o->root, 2, c->v2_missing[0] ? c->v2_missing : NULL,
				    c->v2_where[0] ? c->v2_where : NULL);
	else
		sbx_cgroup_hint_set(err, c->o->root, 0, "memory, pids and cpu", NULL);
}

int sbx_cgroup_detect(struct sbx_cgroup_host *h, const struct sbx_cgroup_detect_opts *o,
		      struct sbx_error *err)
{
	static const struct sbx_cgroup_detect_opts none = { 0 };
	const char *mi_path = o && o->mountinfo ? o->mountinfo : "/proc/self/mountinfo";
	const char *pc_path = o && o->proc_cgroup ? o->proc_cgroup : "/proc/self/cgroup";
	_cleanup_free_ char *mi = NULL;
	struct detect_ctx c = { .o = o ? o : &none };
	int r;

	host_init(h);
	if (read_path(mi_path, &mi) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "cgroup: %s: cannot read",
				     mi_path);
	if (read_path(pc_path, &c.proc) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "cgroup: %s: cannot read",
				     pc_path);
	parse_mountinfo(mi, &c.mounts, &c.n_mounts);

	r = try_v2(&c, h);
	if (r == 0) {
		const char *cl_path = o && o->cmdline ? o->cmdline : "/proc/cmdline";
		_cleanup_free_ char *cl = NULL;

		/* Unreadable is no reason to refuse: only a present nosocket is. */
		if (read_path(cl_path, &cl) == 0 && cmdline_nosocket(cl)) {
			sbx_cgroup_host_free(h);
			sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				      "cgroup: v2: the kernel was booted with cgroup.memory=nosocket, "
				      "so socket buffers would not count against memory_mib");
			sbx_error_hint(err, "remove cgroup.memory=nosocket from the kernel command "
					    "line and reboot");
			mounts_free(c.mounts, c.n_mounts);
			free(c.proc);
			return -1;
		}
	}
	if (r < 0) {
		r = try_v1(&c, h);
		if (r < 0)
			sbx_cgroup_host_free(h);
	}
	if (r == 0) {
		h->test_hook = c.o->test_hook;
		h->test_data = c.o->test_data;
	}
	if (r < 0) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "cgroup: memory, pids and cpu limits cannot be applied "
			      "(v2: %s; v1: %s)",
			      c.why_v2, c.why_v1);
		detect_hint(&c, err);
	}
	mounts_free(c.mounts, c.n_mounts);
	free(c.proc);
	return r;
}

/* --- public API ------------------------------------------------------- */

static bool run_id_ok(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (n == 0 || n > 128 || id[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
		      (id[i] >= '0' && id[i] <= '9') || id[i] == '-' || id[i] == '_' ||
		      id[i] == '.'))
			return false;
	return true;
}

static struct sbx_cgroup *cgroup_new(const struct sbx_cgroup_host *h, const char *run_id)
{
	struct sbx_cgroup *cg = sbx_xcalloc(1, sizeof(*cg));

	cg->host = h;
	cg->name = sbx_xasprintf("sbx-%s", run_id);
	cg->v2_fd = -1;
	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++)
		cg->v1_fd[k] = -1;
	return cg;
}

static void cgroup_free(struct sbx_cgroup *cg)
{
	closep(&cg->v2_fd);
	for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++)
		closep(&cg->v1_fd[k]);
	free(cg->name);
	free(cg);
}

int sbx_cgroup_create(const struct sbx_cgroup_host *h, const char *run_id,
		      const struct sbx_cgroup_limits *lim, struct sbx_cgroup **out,
		      struct sbx_error *err)
{
	struct sbx_cgroup *cg;

	*out = NULL;
	if (!h || !h->ops)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "cgroup: host not detected");
	if (!run_id_ok(run_id))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "cgroup: run_id: not a valid name");
	if (!lim->memory_bytes || !lim->pids || !lim->cpu_millicores)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0,
				     "cgroup: limits: memory, pids and cpu must all be set");
	cg = cgroup_new(h, run_id);
	if (h->ops->create(cg, err) < 0 || h->ops->limits(cg, lim, err) < 0) {
		/* The first error is kept; removal failures only add noise. */
		h->ops->destroy(cg, NULL);
		cgroup_free(cg);
		return -1;
	}
	*out = cg;
	return 0;
}

int sbx_cgroup_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_error *err)
{
	return cg->host->ops->attach_pid(cg, pid, err);
}

int sbx_cgroup_kill(struct sbx_cgroup *cg, struct sbx_error *err)
{
	return cg->host->ops->kill(cg, err);
}

int sbx_cgroup_stats(struct sbx_cgroup *cg, struct sbx_cgroup_stats *st, struct sbx_error *err)
{
	*st = (struct sbx_cgroup_stats){ 0 };
	return cg->host->ops->stats(cg, st, err);
}

int sbx_cgroup_destroy(struct sbx_cgroup *cg, struct sbx_error *err)
{
	int r = 0;

	if (!cg)
		return 0;
	if (!cg->destroyed)
		r = cg->host->ops->destroy(cg, err);
	cgroup_free(cg);
	return r;
}

int sbx_cgroup_describe(const struct sbx_cgroup_host *h, json_t **out)
{
	json_t *o = json_object(), *a = json_array();

	/* Sorted, so the manifest does not depend on detection order. */
	json_array_append_new(a, json_string("cpu"));
	if (h->version == 1)
		json_array_append_new(a, json_string("cpuacct"));
	if (h->version == 1 && h->v1_fd[SBX_CGROUP_FREEZER] >= 0)
		json_array_append_new(a, json_string("freezer"));
	json_array_append_new(a, json_string("memory"));
	json_array_append_new(a, json_string("pids"));
	json_object_set_new(o, "version", json_integer(h->version));
	json_object_set_new(o, "controllers", a);
	*out = o;
	return 0;
}

/*
 * What sbx run does with its cgroup, done for real on a child that only
 * waits: the controllers enabled (our cgroup's processes moved into a leaf
 * if the kernel asks), a run cgroup made with limits, the child moved in,
 * all removed.  Permissions alone cannot predict v2's refusals (the
 * no-internal-processes rule, the common-ancestor rule for moves), and
 * `sbx check` must say what `sbx run` will do.
 */
static int trial_run(const struct sbx_cgroup_host *h, struct sbx_error *err)
{
	const struct sbx_cgroup_limits lim = { .memory_bytes = 64ull << 20, .pids = 16,
					       .cpu_millicores = 1000 };
	struct sbx_cgroup *cg = NULL;
	struct sbx_error e2 = { 0 };
	char id[SBX_RUN_ID_LEN + 1];
	int gate[2], r;
	pid_t pid;

	if (pipe2(gate, O_CLOEXEC) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "cgroup: pipe");
	/* Before the cgroup exists, like the sandbox's init. */
	pid = fork();
	if (pid == 0) {
		char c;

		close(gate[1]);
		(void)!read(gate[0], &c, 1);
		_exit(0);
	}
	close(gate[0]);
	if (pid < 0) {
		close(gate[1]);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "cgroup: fork");
	}
	sbx_run_id_new(id);
	r = sbx_cgroup_create(h, id, &lim, &cg, err);
	if (r == 0)
		r = sbx_cgroup_attach(cg, pid, err);
	close(gate[1]);
	(void)waitpid(pid, NULL, 0);
	if (sbx_cgroup_destroy(cg, r == 0 ? err : &e2) < 0)
		r = -1;
	return r;
}

int sbx_cgroup_host_report(FILE *f, const struct sbx_cgroup_detect_opts *o)
{
	struct sbx_cgroup_host h;
	struct sbx_error err = { 0 };
	char buf[sizeof(err.msg) + 128];
	const char *path;
	bool writable;

	if (sbx_cgroup_detect(&h, o, &err) < 0) {
		/* err.msg starts "cgroup: "; the column already says it. */
		sbx_error_text(&err, buf, sizeof(buf));
		fprintf(f, "%-16s unusable: %s\n", "cgroup",
			strncmp(buf, "cgroup: ", 8) == 0 ? buf + 8 : buf);
		fprintf(f, "%-16s Hint: %s\n", "", err.hint[0] ? err.hint : sbx_cgroup_hint);
		return -1;
	}
	path = h.version == 2 ? h.v2_path : h.v1_path[SBX_CGROUP_MEMORY];
	/* v1 holds socket buffers to the limit only through
	 * memory.kmem.tcp.limit_in_bytes, which a run's cgroup has exactly
	 * when its parent has it; without it `sbx run` refuses. */
	if (h.version == 1 &&
	    !sbx_cgroup_has_file(h.v1_fd[SBX_CGROUP_MEMORY], "memory.kmem.tcp.limit_in_bytes")) {
		fprintf(f, "%-16s unusable: v1 (memory at %s): no memory.kmem.tcp.limit_in_bytes, "
			   "socket buffers cannot be limited\n",
			"cgroup", path);
		fprintf(f, "%-16s Hint: %s\n", "", sbx_cgroup_v1_tcp_hint);
		sbx_cgroup_host_free(&h);
		return -1;
	}
	/* Writable for this user is what creating a run's cgroup needs; on
	 * v1 every required controller's parent must be.  Then the trial. */
	writable = true;
	if (h.version == 2) {
		writable = faccessat(h.v2_fd, ".", W_OK, AT_EACCESS) == 0;
	} else {
		for (int k = 0; k < _SBX_CGROUP_CONTROLLER_MAX; k++)
			if (h.v1_fd[k] >= 0 && faccessat(h.v1_fd[k], ".", W_OK, AT_EACCESS) < 0)
				writable = false;
	}
	if (writable && trial_run(&h, &err) < 0) {
		sbx_error_text(&err, buf, sizeof(buf));
		fprintf(f, "%-16s blocked: v%d at %s: a trial run's cgroup failed: %s\n", "cgroup",
			h.version, path, strncmp(buf, "cgroup: ", 8) == 0 ? buf + 8 : buf);
		fprintf(f, "%-16s Hint: %s\n", "", err.hint[0] ? err.hint : sbx_cgroup_hint);
		sbx_cgroup_host_free(&h);
		return -1;
	}
	/* Present but not writable is as unusable as absent: say "blocked". */
	if (h.version == 2)
		fprintf(f, "%-16s %s: v2 at %s, controllers cpu memory pids, socket buffers in "
			   "memory.max, %s\n", "cgroup",
			writable ? "ok" : "blocked", path,
			writable ? "a trial run's cgroup works" : "not writable by this user");
	else
		fprintf(f,
			"%-16s %s: v1 (memory at %s), controllers cpu cpuacct memory pids%s, "
			"socket buffers limited, %s\n",
			"cgroup", writable ? "ok" : "blocked", path,
			h.v1_fd[SBX_CGROUP_FREEZER] >= 0 ? " freezer" : " (no freezer)",
			writable ? "a trial run's cgroup works" : "not writable by this user");
	if (!writable) {
		err = (struct sbx_error){ 0 };
		sbx_cgroup_hint_set(&err, o ? o->root : NULL, h.version, NULL, NULL);
		fprintf(f, "%-16s Hint: %s\n", "", err.hint);
	}
	sbx_cgroup_host_free(&h);
	return writable ? 0 : -1;
}
