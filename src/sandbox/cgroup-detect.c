/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup-detect.c - which cgroup hierarchy to use: v2 if a usable cgroup2
 * parent is found, else v1, else a refusal (69) that says why for each.
 *
 * Detection reads two files the kernel keeps for us: mountinfo says where
 * each hierarchy is mounted (and which part of it the mount shows, for
 * cgroup namespaces), /proc/self/cgroup says which cgroup we are in.  The
 * parent of a run's cgroup is the configured cgroup_parent, else our own
 * cgroup, and its directory is the mount point plus that path relative to
 * the mount's root.  Its own file because it runs once per host, reads
 * only the kernel's texts and never touches a run's cgroup; the run's
 * cgroup is in cgroup.c and the backends.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup-internal.h"

/* --- detection -------------------------------------------------------- */

static const char *const controller_names[_SBX_CGROUP_CONTROLLER_MAX] = {
	[SBX_CGROUP_MEMORY] = "memory", [SBX_CGROUP_PIDS] = "pids",
	[SBX_CGROUP_CPU] = "cpu",       [SBX_CGROUP_CPUACCT] = "cpuacct",
	[SBX_CGROUP_FREEZER] = "freezer",
};

const char *sbx_cgroup_controller_name(enum sbx_cgroup_controller c)
{
	return (size_t)c < ARRAY_SIZE(controller_names) ? controller_names[c] : "?";
}

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
			h->v2_in_parent = !h->v2_self_outside_parent && strcmp(rel, "") == 0;
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
	if (cgroup_read_path(mi_path, &mi) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "cgroup: %s: cannot read",
				     mi_path);
	if (cgroup_read_path(pc_path, &c.proc) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "cgroup: %s: cannot read",
				     pc_path);
	parse_mountinfo(mi, &c.mounts, &c.n_mounts);

	r = try_v2(&c, h);
	if (r == 0) {
		const char *cl_path = o && o->cmdline ? o->cmdline : "/proc/cmdline";
		_cleanup_free_ char *cl = NULL;

		/* Unreadable is no reason to refuse: only a present nosocket is. */
		if (cgroup_read_path(cl_path, &cl) == 0 && cmdline_nosocket(cl)) {
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
