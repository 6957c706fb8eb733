/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup.c - the helpers both backends share (control files read and
 * written through directory fds, their parsers, mkdir/rmdir with the test
 * hook) and the public API of a run's cgroup, which checks its arguments
 * and dispatches to the v1 or v2 ops.
 *
 * Which hierarchy the host offers is found once, in cgroup-detect.c; the
 * line `sbx check` prints, with its trial run, is in cgroup-report.c; the
 * backends are cgroup-v1.c and cgroup-v2.c.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup-internal.h"

/* Only where no better Hint was made (sbx_cgroup_hint_set()). */
const char sbx_cgroup_hint[] =
	"sbx needs a cgroup it may write, with the memory, pids and cpu controllers: "
	"create a cgroup directory, chown it to this user, name it in the host config key "
	"cgroup_parent and start sbx from a process inside it (docs/cgroups.md, \"Delegating a "
	"cgroup to an ordinary user\", has the exact commands)";

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

int cgroup_read_path(const char *path, char **out)
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

void sbx_cgroup_release(struct sbx_cgroup *cg)
{
	if (cg)
		cgroup_free(cg);
}

int sbx_cgroup_attach(struct sbx_cgroup *cg, pid_t pid, struct sbx_error *err)
{
	return cg->host->ops->attach_pid(cg, pid, err);
}

int sbx_cgroup_clone_fd(const struct sbx_cgroup *cg)
{
	return cg && cg->host->version == 2 ? cg->v2_fd : -1;
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
