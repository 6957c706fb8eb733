/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fetch-cache.c - the cache of pinned remote inputs (fetch-cache.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fetch-cache.h"
#include "store.h"

#define CACHE_SUB "fetch-cache"

static bool digest_name(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
			return false;
	return n == 64;
}

/* The cache directory, made (0700) when @create. */
static int open_dir(const char *state_dir, bool create)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/" CACHE_SUB, state_dir);

	if (create && mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int sbx_fetch_cache_open(const char *state_dir, const char *sha256)
{
	_cleanup_close_ int dir = -1;
	struct stat st;
	int fd;

	if (!digest_name(sha256) || (dir = open_dir(state_dir, false)) < 0)
		return -1;
	fd = openat(dir, sha256, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	/* Used now: pruning goes by the time of the last use. */
	futimens(fd, NULL);
	return fd;
}

void sbx_fetch_cache_drop(const char *state_dir, const char *sha256)
{
	_cleanup_close_ int dir = -1;

	if (digest_name(sha256) && (dir = open_dir(state_dir, false)) >= 0)
		unlinkat(dir, sha256, 0);
}

int sbx_fetch_cache_put(const char *state_dir, const char *sha256, int src_fd, uint64_t max_bytes)
{
	_cleanup_close_ int dir = -1;
	struct sbx_error err = { 0 };
	char tmp[96];
	struct stat st;

	if (!max_bytes || !digest_name(sha256))
		return 0;
	if (fstat(src_fd, &st) < 0 || (uint64_t)st.st_size > max_bytes)
		return 0; /* larger than the whole cache: not kept */
	dir = open_dir(state_dir, true);
	if (dir < 0) {
		sbx_warn("fetch cache: %s/" CACHE_SUB ": %m; not cached", state_dir);
		return 0;
	}
	/* Written under a temporary name and renamed: a reader sees the
	 * whole file or none. */
	snprintf(tmp, sizeof(tmp), ".%s.%ld", sha256, (long)getpid());
	unlinkat(dir, tmp, 0);
	if (lseek(src_fd, 0, SEEK_SET) < 0 ||
	    sbx_store_copy(src_fd, dir, tmp, (uint64_t)st.st_size, NULL, &err) < 0 ||
	    renameat(dir, tmp, dir, sha256) < 0) {
		sbx_warn("fetch cache: %s/" CACHE_SUB "/%s: cannot write it; not cached", state_dir,
			 sha256);
		unlinkat(dir, tmp, 0);
		return 0;
	}
	sbx_fetch_cache_prune(state_dir, max_bytes, NULL, NULL);
	return 0;
}

struct entry {
	char name[65];
	struct timespec used;
	uint64_t size;
};

static int oldest_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

int sbx_fetch_cache_prune(const char *state_dir, uint64_t max_bytes, unsigned *removed,
			  struct sbx_error *err)
{
	_cleanup_close_ int dir = open_dir(state_dir, false);
	_cleanup_free_ struct entry *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	DIR *d;
	int dfd;

	if (removed)
		*removed = 0;
	if (dir < 0)
		return errno == ENOENT ? 0 :
		       err ? sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s/" CACHE_SUB, state_dir) :
			     -1;
	dfd = fcntl(dir, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return err ? sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "%s/" CACHE_SUB, state_dir) :
			     -1;
	}
	while ((de = readdir(d))) {
		struct stat st;

		/* Only digests are entries; a left-over temporary file of a
		 * crashed run goes too. */
		if (de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    strlen(de->d_name) < 96) {
			if (fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    time(NULL) - st.st_mtime > 3600)
				unlinkat(dir, de->d_name, 0);
			continue;
		}
		if (!digest_name(de->d_name) ||
		    fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = sbx_xrealloc(v, cap * sizeof(*v));
		}
		memcpy(v[n].name, de->d_name, 65);
		v[n].used = st.st_mtim;
		v[n].size = (uint64_t)st.st_size;
		total += v[n].size;
		n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), oldest_first);
	for (size_t i = 0; i < n && total > max_bytes; i++) {
		if (unlinkat(dir, v[i].name, 0) < 0)
			continue;
		total -= v[i].size;
		if (removed)
			(*removed)++;
	}
	return 0;
}
