/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * seed.c - the writable seed of a profile's prepared tree (sbx-policy(5),
 * "prepare"): the files of one directory of the read-only tree, copied
 * into the workspace before the pivot, for programs that will not use a
 * read-only cache (matplotlib refuses a read-only MPLCONFIGDIR).
 *
 * The tree was checked when it was prepared (regular files only, no
 * links, one level) and its identity when the run was admitted; here it
 * is still opened with O_NOFOLLOW and anything but a regular file is
 * skipped, as a bound tree is the host's.  The copy stays in the kernel:
 * copy_file_range, and sendfile where the two file systems differ (a
 * tmpfs and the host's disk: EXDEV), so the bytes never pass through
 * this process.  The files belong to the sandbox user, who may change
 * them as the program runs; the tree itself stays read-only.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init-internal.h"
#include "spec.h"

/* mkdir -p of @path (absolute, inside the new root), the last level 0700. */
static void make_dst(const char *path)
{
	char buf[512];
	size_t len = strlen(path);

	if (len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		fail(SBX_STAGE_INPUTS, "seed: %s", path);
	}
	memcpy(buf, path, len + 1);
	for (char *p = buf + strlen(NEWROOT) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			fail(SBX_STAGE_INPUTS, "seed: mkdir %s", buf);
		*p = '/';
	}
	if (mkdir(buf, 0700) < 0)
		fail(SBX_STAGE_INPUTS, "seed: mkdir %s", buf);
}

static void copy_fd(int in, int out, off_t size, const char *name)
{
	off_t left = size;
	bool use_sendfile = false;

	while (left > 0) {
		ssize_t n = use_sendfile ? sendfile(out, in, NULL, (size_t)left) :
					   copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
		if (n < 0 && !use_sendfile &&
		    (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
			use_sendfile = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fail(SBX_STAGE_INPUTS, "seed: copying %s", name);
		left -= n;
	}
}

/* Copy the regular file @name of @sfd into @dfd. */
static void copy_one(const struct sbx_spec *spec, int sfd, int dfd, const char *name)
{
	struct stat st;
	int in, out;

	in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0)
		fail(SBX_STAGE_INPUTS, "seed: %s/%s", spec->seed_src, name);
	if (!S_ISREG(st.st_mode)) {
		close(in);
		return;
	}
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		fail(SBX_STAGE_INPUTS, "seed: %s/%s", spec->seed_dst, name);
	copy_fd(in, out, st.st_size, name);
	close(in);
	close(out);
}

void setup_seed(const struct sbx_spec *spec)
{
	char src[512], dst[512], buf[4096];
	int sfd, dfd;
	ssize_t n;

	if (!spec->seed_src[0])
		return;
	in_root(src, sizeof(src), spec->seed_src);
	in_root(dst, sizeof(dst), spec->seed_dst);
	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		fail(SBX_STAGE_INPUTS, "seed: %s", spec->seed_src);
	make_dst(dst);
	dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		fail(SBX_STAGE_INPUTS, "seed: %s", spec->seed_dst);
	/* getdents64 rather than readdir: no allocation in the init. */
	while ((n = getdents64(sfd, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);

			off += e->d_reclen;
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				copy_one(spec, sfd, dfd, e->d_name);
		}
	if (n < 0)
		fail(SBX_STAGE_INPUTS, "seed: reading %s", spec->seed_src);
	close(sfd);
	close(dfd);
}
