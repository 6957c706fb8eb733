/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect.c - walk the output root, quarantine, validate; the collection's
 * lifetime.
 *
 * The output root belongs to the payload, and a payload process may still
 * be running in it (in another namespace, or detached before the kill), so
 * the walk is written as if every entry could change between two system
 * calls:
 *
 *  - names come from getdents on a dirfd and are only ever used as the last
 *    component of an openat2() relative to that dirfd, with RESOLVE_BENEATH
 *    | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV and
 *    O_NOFOLLOW, so no name can lead outside the tree or onto another mount;
 *  - fstatat(AT_SYMLINK_NOFOLLOW) classifies without opening: fifos, sockets
 *    and devices are never opened at all;
 *  - a regular file is opened O_NONBLOCK (a fifo swapped in cannot block
 *    us) and fstat()ed again: type, device, inode and nlink == 1 must still
 *    match what was classified, or the file is rejected as changed;
 *  - at most size + 1 bytes are read into a quarantine file that only sbx
 *    can reach (a 0700 directory, files made O_EXCL|O_NOFOLLOW with flat
 *    names q000001, ... so no untrusted name ever becomes a path there);
 *    a file that grew or shrank meanwhile is rejected;
 *  - SHA-256 is computed on the same bytes as they are copied, so the
 *    digest in the manifest is the digest of what is validated and
 *    promoted, with one read of the source.
 *
 * Without openat2 there is no way to open a hostile tree safely, so the
 * collector refuses (69) instead of falling back to path walking.
 *
 * Which names may be artifacts' names, and how the others are shown, is
 * decided in names.c; the delivery of what passed into --artifacts is in
 * promote.c.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect-internal.h"
#include "collect.h"
#include "syscalls.h"
#include "mediatype.h"
#include "util.h"
#include "verdict.h"


#define COPY_BUF (128 * 1024)

struct walk {
	const struct sbx_collect_limits *lim;
	struct sbx_collection *c;
	struct sbx_error *err;
	uint64_t seen;           /* entries met, for max_entries_seen */
	uint64_t files_accepted; /* candidates so far, for max_files */
	uint64_t bytes_accepted; /* their bytes, for max_bytes */
	unsigned qseq;           /* last quarantine file number */
	bool stop;               /* max_entries_seen reached */
	unsigned char *buf;
};

/* openat2 is missing (ENOSYS): 69, as no weaker way of opening is
 * acceptable.  errno stays ENOSYS. */
static void no_openat2(struct sbx_error *err)
{
	sbx_error_set(err, SBX_EXIT_UNAVAILABLE, ENOSYS,
		      "outputs: openat2 is not available, cannot collect outputs safely");
	sbx_error_hint(err, "openat2 needs Linux 5.6 or later; sbx does not fall back to "
			    "path walking for untrusted outputs");
	errno = ENOSYS;
}

int collect_open_beneath(int dirfd, const char *name, int flags, struct sbx_error *err)
{
	int fd = sbx_open_beneath(dirfd, name, flags);

	if (fd < 0 && errno == ENOSYS)
		no_openat2(err);
	return fd;
}

/* collect_open_beneath(), or through the walk's opener when it has one
 * (sbx_collect_limits.open_at). */
static int walk_open(struct walk *w, int dirfd, const char *name, int flags)
{
	int fd;

	if (!w->lim->open_at)
		return collect_open_beneath(dirfd, name, flags, w->err);
	fd = w->lim->open_at(w->lim->open_ud, dirfd, name, flags);
	if (fd < 0 && errno == ENOSYS)
		no_openat2(w->err);
	return fd;
}

/* fstatat(AT_SYMLINK_NOFOLLOW), or with an opener an O_PATH open (which
 * returns a symlink itself, and opens no fifo or device) and fstat. */
static int walk_stat(struct walk *w, int dirfd, const char *name, struct stat *st)
{
	_cleanup_close_ int fd = -1;

	if (!w->lim->open_at)
		return fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW);
	fd = w->lim->open_at(w->lim->open_ud, dirfd, name, O_PATH);
	return fd < 0 ? -1 : fstat(fd, st);
}

static char *join(const char *dir, const char *name)
{
	return *dir ? sbx_xasprintf("%s/%s", dir, name) : sbx_xstrdup(name);
}

/* Manifest strings carry no control bytes and only UTF-8: clean a reason. */
static char *clean_text(const char *s)
{
	char *out = sbx_xstrdup(s);

	if (!sbx_utf8_valid(out, strlen(out)))
		for (char *p = out; *p; p++)
			if ((unsigned char)*p >= 0x80)
				*p = '?';
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return out;
}

static struct sbx_artifact *add(struct sbx_collection *c, char *path)
{
	struct sbx_artifact *a;

	/* Grow by doubling; the walk bounds n by max_entries_seen. */
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->items = sbx_xrealloc(c->items, c->cap * sizeof(*c->items));
	}
	a = &c->items[c->n++];
	memset(a, 0, sizeof(*a));
	a->path = path;
	a->status = SBX_ARTIFACT_PROMOTED;
	return a;
}

void collect_set_rejected(struct sbx_artifact *a, const char *code, const char *fmt, ...)
{
	char buf[SBX_VERDICT_MAX_REASON + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	a->status = SBX_ARTIFACT_REJECTED;
	a->reason_code = code;
	free(a->reason);
	a->reason = clean_text(buf);
}

void collect_drop_quarantined(struct sbx_collection *c, struct sbx_artifact *a)
{
	if (a->qname[0]) {
		unlinkat(c->quarantine_dirfd, a->qname, 0);
		a->qname[0] = '\0';
	}
}

/*
 * Copy @src (a regular file of @size bytes) into a new quarantine file,
 * hashing on the way.  Returns 1 when copied, 0 when the source was
 * rejected (reason set on @a), -1 on a quarantine (host) failure.
 */
static int quarantine_copy(struct walk *w, int src, uint64_t size, struct sbx_artifact *a)
{
	struct sha256_ctx md;
	_cleanup_close_ int dst = -1;
	uint8_t digest[SHA256_DIGEST_SIZE];
	uint64_t total = 0;

	sha256_init(&md);
	snprintf(a->qname, sizeof(a->qname), "q%06u", ++w->qseq);
	dst = openat(w->c->quarantine_dirfd, a->qname,
		     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (dst < 0) {
		a->qname[0] = '\0';
		return sbx_error_set(w->err, SBX_EXIT_SOFTWARE, errno,
				     "outputs: cannot create quarantine file");
	}

	/* Read at most size + 1: one byte more shows the file grew. */
	while (total <= size) {
		uint64_t want = size + 1 - total;
		ssize_t r = read(src, w->buf, want < COPY_BUF ? (size_t)want : COPY_BUF);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			collect_set_rejected(a, SBX_RC_IO_ERROR, "read error: %s", strerror(errno));
			collect_drop_quarantined(w->c, a);
			return 0;
		}
		if (r == 0)
			break;
		total += (uint64_t)r;
		if (total > size)
			break;
		sha256_update(&md, (size_t)r, (const uint8_t *)w->buf);
		if (sbx_write_all(dst, w->buf, (size_t)r) < 0)
			return sbx_error_set(w->err, SBX_EXIT_SOFTWARE, errno,
					     "outputs: cannot write quarantine file");
	}
	if (total != size) {
		collect_set_rejected(a, SBX_RC_CHANGED, "changed while collected (%s)", total > size ? "grew" : "shrank");
		collect_drop_quarantined(w->c, a);
		return 0;
	}
	sha256_digest(&md, sizeof(digest), digest);
	sbx_hex(digest, sizeof(digest), a->sha256);
	a->size = size;
	return 1;
}

static int take_file(struct walk *w, int dirfd, const char *name, const struct stat *st,
		     struct sbx_artifact *a)
{
	_cleanup_close_ int fd = -1;
	struct stat now;
	uint64_t size = (uint64_t)st->st_size;
	int r;

	if (st->st_nlink > 1) {
		collect_set_rejected(a, SBX_RC_HARD_LINK, "hard link (%ju links)", (uintmax_t)st->st_nlink);
		return 0;
	}
	if (w->files_accepted >= w->lim->max_files) {
		collect_set_rejected(a, SBX_RC_OVER_COUNT, "exceeds output_files (%llu)", (unsigned long long)w->lim->max_files);
		return 0;
	}
	if (size > w->lim->max_bytes - w->bytes_accepted) {
		collect_set_rejected(a, SBX_RC_TOO_LARGE, "exceeds output_bytes (%llu)", (unsigned long long)w->lim->max_bytes);
		return 0;
	}

	fd = walk_open(w, dirfd, name, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOSYS)
			return -1;
		collect_set_rejected(a, SBX_RC_CHANGED, "changed while collected (open: %s)", strerror(errno));
		return 0;
	}
	if (fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino || now.st_nlink != 1 || now.st_size != st->st_size) {
		collect_set_rejected(a, SBX_RC_CHANGED, "changed while collected");
		return 0;
	}
	r = quarantine_copy(w, fd, size, a);
	if (r > 0) {
		w->files_accepted++;
		w->bytes_accepted += size;
	}
	return r < 0 ? -1 : 0;
}

static int walk_dir(struct walk *w, int dirfd, const char *dpath, unsigned depth);

static int take_dir(struct walk *w, int dirfd, const char *name, const struct stat *st,
		    struct sbx_artifact **ap, unsigned depth)
{
	_cleanup_close_ int fd = -1;
	struct stat now;
	char *path = (*ap)->path;

	if (depth >= w->lim->max_depth) {
		collect_set_rejected(*ap, SBX_RC_TOO_DEEP, "directory nesting deeper than %u levels, not descended",
			     w->lim->max_depth);
		return 0;
	}
	fd = walk_open(w, dirfd, name, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOSYS)
			return -1;
		collect_set_rejected(*ap, SBX_RC_CHANGED, "changed while collected (open: %s)", strerror(errno));
		return 0;
	}
	if (fstat(fd, &now) < 0 || !S_ISDIR(now.st_mode) || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino) {
		collect_set_rejected(*ap, SBX_RC_CHANGED, "changed while collected");
		return 0;
	}
	/* A directory is not an artifact: drop its provisional entry. */
	(*ap)->path = NULL;
	w->c->n--;
	*ap = NULL;
	{
		_cleanup_free_ char *p = path;
		return walk_dir(w, TAKE_FD(fd), p, depth + 1);
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * All names of a directory, sorted, so the manifest and which files fall
 * over the caps do not depend on the filesystem's order.  More than
 * SBX_COLLECT_MAX_DIR_NAMES is reported as E2BIG.
 */
static char **read_names(DIR *d, size_t *count, int *errnum)
{
	char **v = NULL;
	size_t n = 0;
	struct dirent *de;

	*errnum = 0;
	for (;;) {
		if (n == SBX_COLLECT_MAX_DIR_NAMES) {
			*errnum = E2BIG;
			break;
		}
		errno = 0;
		de = readdir(d);
		if (!de) {
			*errnum = errno;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((n & (n - 1)) == 0)
			v = sbx_xrealloc(v, (n ? 2 * n : 1) * sizeof(*v));
		v[n++] = sbx_xstrdup(de->d_name);
	}
	if (n)
		qsort(v, n, sizeof(*v), by_name);
	*count = n;
	return v;
}

static int walk_entry(struct walk *w, int dirfd, const char *dpath, const char *name,
		      unsigned depth)
{
	const char *bad = collect_name_problem(name, w->lim->max_name);
	_cleanup_free_ char *shown = collect_display_name(name, bad != NULL);
	struct sbx_artifact *a = add(w->c, join(dpath, shown));
	struct stat st;

	if (++w->seen > w->lim->max_entries_seen) {
		collect_set_rejected(a, SBX_RC_OVER_COUNT, "too many entries in the output tree, walk stopped after %llu",
			     (unsigned long long)w->lim->max_entries_seen);
		w->stop = true;
		w->c->walk_stopped = true;
		return 0;
	}
	if (walk_stat(w, dirfd, name, &st) < 0) {
		collect_set_rejected(a, SBX_RC_CHANGED, "vanished while collected");
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		w->c->files_found++;
		w->c->bytes_found += (uint64_t)st.st_size;
		a->size = (uint64_t)st.st_size;
	}
	if (bad) {
		collect_set_rejected(a, SBX_RC_BAD_NAME, "%s", bad);
		return 0;
	}
	switch (st.st_mode & S_IFMT) {
	case S_IFREG:
		return take_file(w, dirfd, name, &st, a);
	case S_IFDIR:
		return take_dir(w, dirfd, name, &st, &a, depth);
	case S_IFLNK:
		collect_set_rejected(a, SBX_RC_SYMLINK, "symbolic link");
		return 0;
	case S_IFIFO:
		collect_set_rejected(a, SBX_RC_SPECIAL_FILE, "fifo");
		return 0;
	case S_IFSOCK:
		collect_set_rejected(a, SBX_RC_SPECIAL_FILE, "socket");
		return 0;
	case S_IFCHR:
	case S_IFBLK:
		collect_set_rejected(a, SBX_RC_SPECIAL_FILE, "device node");
		return 0;
	default:
		collect_set_rejected(a, SBX_RC_SPECIAL_FILE, "not a regular file");
		return 0;
	}
}

/* Walk the directory @fd (consumed) at display path @dpath. */
static int walk_dir(struct walk *w, int fd, const char *dpath, unsigned depth)
{
	_cleanup_dir_ DIR *d = fdopendir(fd);
	char **names;
	size_t n = 0, pending;
	int errnum, r = 0;

	if (!d) {
		close(fd);
		return sbx_error_set(w->err, SBX_EXIT_SOFTWARE, errno, "outputs: fdopendir");
	}
	names = read_names(d, &n, &errnum);
	pending = n;
	if (errnum) {
		struct sbx_artifact *a = add(w->c, sbx_xstrdup(*dpath ? dpath : "."));
		collect_set_rejected(a, SBX_RC_IO_ERROR, "directory could not be read: %s", strerror(errnum));
		/* Half a directory would make the listing depend on getdents order. */
		if (errnum == E2BIG)
			pending = 0;
	}
	for (size_t i = 0; i < pending && r == 0 && !w->stop; i++)
		r = walk_entry(w, dirfd(d), dpath, names[i], depth);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

static int make_quarantine(const char *parent, struct sbx_collection *c, struct sbx_error *err)
{
	char *path = sbx_xasprintf("%s/quarantine-XXXXXX", parent);

	if (!mkdtemp(path)) {
		sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "outputs: %s: cannot create quarantine",
			      parent);
		free(path);
		return -1;
	}
	c->quarantine_path = path;
	c->quarantine_dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->quarantine_dirfd < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "outputs: %s: open", path);
	return 0;
}

int sbx_collect(int outroot_fd, const struct sbx_collect_limits *lim,
		const char *quarantine_parent, struct sbx_collection *c, struct sbx_error *err)
{
	_cleanup_free_ unsigned char *buf = sbx_xmalloc(COPY_BUF);
	struct walk w = { .lim = lim, .c = c, .err = err, .buf = buf };
	int fd;

	c->quarantine_dirfd = -1;
	if (make_quarantine(quarantine_parent, c, err) < 0)
		return -1;
	/* A fresh open file description, so our getdents offset is our own. */
	fd = walk_open(&w, outroot_fd, ".", O_RDONLY | O_DIRECTORY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOSYS)
			return -1;
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "outputs: cannot open output root");
	}
	return walk_dir(&w, fd, "", 0);
}

/* --- verdicts ------------------------------------------------------------------ */

/*
 * Validation itself runs in the confined validator (verdict.h); here the
 * broker only opens what it hands over and takes what comes back, trusting
 * no more of an answer than it can check: the type must be the one the
 * file's name stands for (sbx_media_type_expected) and one the job allows, and a path with a contract must come
 * back with that contract checked.
 */

bool sbx_collect_pending(const struct sbx_artifact *a)
{
	return a->status == SBX_ARTIFACT_PROMOTED && a->qname[0] && !a->validated;
}

int sbx_collect_open_candidate(const struct sbx_collection *c, const struct sbx_artifact *a,
			       struct sbx_error *err)
{
	int fd = openat(c->quarantine_dirfd, a->qname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "outputs: %s: quarantine copy",
				     a->qname);
	return fd;
}

void sbx_collect_unvalidated(struct sbx_collection *c, struct sbx_artifact *a, const char *why)
{
	a->validated = true;
	a->formula_cells = false;
	a->flags = 0;
	collect_set_rejected(a, SBX_RC_NOT_VALIDATED, "not validated: %s", why);
	collect_drop_quarantined(c, a);
}

/* The rules 2 and 3 again, on a promoted ZIP's members: a validator
 * that lies about a member can only lie within what the job allows for
 * its name. */
static bool members_allowed(const struct sbx_verdict *v, char *const *allowed)
{
	for (size_t i = 0; i < v->n_members; i++) {
		const struct sbx_verdict_member *x = &v->members[i];
		const char *base = strrchr(x->path, '/');

		base = base ? base + 1 : x->path;
		if (!x->ok || x->media_type != sbx_media_type_expected(base, allowed) ||
		    !sbx_media_type_in(allowed, x->media_type) ||
		    strcmp(x->media_type, "application/zip") == 0)
			return false;
	}
	return true;
}

void sbx_collect_apply(struct sbx_collection *c, struct sbx_artifact *a,
		       const struct sbx_verdict *v, char *const *allowed,
		       const struct sbx_contract *k)
{
	const char *base = strrchr(a->path, '/'), *by_name;

	base = base ? base + 1 : a->path;
	by_name = sbx_media_type_expected(base, allowed);
	a->validated = true;
	free(a->media_type);
	a->media_type = v->media_type ? sbx_xstrdup(v->media_type) : NULL;
	free(a->members);
	a->members = NULL;
	a->n_members = 0;
	if (v->has_members) {
		a->members = sbx_xcalloc(v->n_members ? v->n_members : 1, sizeof(*a->members));
		memcpy(a->members, v->members, v->n_members * sizeof(*a->members));
		a->n_members = v->n_members;
	}
	if (!v->ok) {
		collect_set_rejected(a, v->reason_code ? v->reason_code : SBX_RC_INVALID_CONTENT, "%s",
				     v->reason);
	} else if (v->media_type != by_name || !sbx_media_type_in(allowed, v->media_type)) {
		collect_set_rejected(a, SBX_RC_NOT_VALIDATED, "not validated: the validator answered %s, which the name "
					"or the job does not allow", v->media_type);
	} else if (!members_allowed(v, allowed)) {
		collect_set_rejected(a, SBX_RC_NOT_VALIDATED, "not validated: the validator promoted a ZIP "
					"member whose name or type the job does not allow");
	} else if (k && !v->has_contract) {
		collect_set_rejected(a, SBX_RC_NOT_VALIDATED, "not validated: the validator did not check the contract");
	} else if (!k && v->has_contract) {
		collect_set_rejected(a, SBX_RC_NOT_VALIDATED, "not validated: the validator checked a contract the job "
					"does not have");
	} else {
		a->formula_cells = v->formula_cells;
		a->flags = v->flags;
		a->width = v->width;
		a->height = v->height;
		if (!k)
			return;
		free(a->contract);
		a->contract = sbx_xmalloc(sizeof(*a->contract));
		*a->contract = v->contract;
		if (v->contract.ok) {
			a->hold = a->hold || k->hold;
			return;
		}
		collect_set_rejected(a, SBX_RC_CONTRACT_FAILED, "output contract: %s: %s%s", v->contract.fail[0].check,
				     v->contract.fail[0].detail,
				     v->contract.count > 1 ? " (and more)" : "");
	}
	a->formula_cells = false;
	a->flags = 0;
	collect_drop_quarantined(c, a);
}

const struct sbx_artifact *sbx_collection_find(const struct sbx_collection *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->items[i].path && strcmp(c->items[i].path, path) == 0)
			return &c->items[i];
	return NULL;
}

static void remove_quarantine(struct sbx_collection *c)
{
	_cleanup_dir_ DIR *d = NULL;
	struct dirent *de;
	int fd = openat(c->quarantine_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && !(d = fdopendir(fd)))
		close(fd);
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(c->quarantine_dirfd, de->d_name, 0);
	if (rmdir(c->quarantine_path) < 0 && errno != ENOENT)
		sbx_warn("%s: cannot remove quarantine: %m", c->quarantine_path);
}

void sbx_collection_free(struct sbx_collection *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->items[i].path);
		free(c->items[i].media_type);
		free(c->items[i].reason);
		free(c->items[i].contract);
		free(c->items[i].members);
	}
	free(c->items);
	c->items = NULL;
	c->n = 0;
	/* Only sbx_collect() sets the path, and with it a valid fd or -1. */
	if (!c->quarantine_path)
		return;
	if (c->quarantine_dirfd >= 0) {
		remove_quarantine(c);
		close(c->quarantine_dirfd);
	} else {
		rmdir(c->quarantine_path);
	}
	c->quarantine_dirfd = -1;
	free(c->quarantine_path);
	c->quarantine_path = NULL;
}
