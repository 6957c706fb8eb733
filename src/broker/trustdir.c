/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trustdir.c - whose a directory is, and who else may write it
 * (trustdir.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trustdir.h"
#include "util.h"

void sbx_trust_add(struct sbx_trust *t, uid_t uid)
{
	if (!sbx_trust_has(t, uid) && t->n < ARRAY_SIZE(t->uid))
		t->uid[t->n++] = uid;
}

bool sbx_trust_has(const struct sbx_trust *t, uid_t uid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->uid[i] == uid)
			return true;
	return false;
}

const char *sbx_trust_text(const struct sbx_trust *t, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < t->n && off < len; i++) {
		const char *sep = i == 0 ? "" : i + 1 == t->n ? " or " : ", ";
		int n = t->uid[i] == 0 ? snprintf(buf + off, len - off, "%sroot", sep) :
					 snprintf(buf + off, len - off, "%suid %u", sep,
						  (unsigned)t->uid[i]);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	return buf;
}

int sbx_dir_check(const struct stat *st, const char *path, const char *what,
		  const struct sbx_trust *who, struct sbx_error *err)
{
	char owners[64];

	if (!sbx_trust_has(who, st->st_uid))
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s%s%s: owned by uid %u, not by %s",
				     path, what ? ": " : "", what ? what : "", (unsigned)st->st_uid,
				     sbx_trust_text(who, owners, sizeof(owners)));
	if (st->st_mode & 022)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				     "%s%s%s: writable by group or others (mode %04o)", path,
				     what ? ": " : "", what ? what : "",
				     (unsigned)(st->st_mode & 07777));
	return 0;
}

/* The Hint for @dir, the first directory of @path that failed the check:
 * what to change on this host. */
static void hint_for(struct sbx_error *err, const struct stat *st, const char *dir,
		     const char *key, const struct sbx_trust *who)
{
	char owners[64];

	sbx_trust_text(who, owners, sizeof(owners));
	if (!sbx_trust_has(who, st->st_uid))
		sbx_error_hint(err, "set \"%s\" in the host config to a directory owned by %s, "
			       "in directories only %s can write", key, owners, owners);
	else if (st->st_mode & S_ISVTX)
		/* /tmp and its kind: chmod would break them; go elsewhere. */
		sbx_error_hint(err, "%s is shared by every user: set \"%s\" in the host config to "
			       "a directory outside it, owned by %s", dir, key, owners);
	else
		sbx_error_hint(err, "chmod go-w %s", dir);
}

/* A symbolic link at @dir (a prefix of @path): say where it leads. */
static int link_error(const char *path, const char *dir, const char *key, struct sbx_error *err)
{
	_cleanup_free_ char *real = realpath(dir, NULL);

	sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
		      "%s: a symbolic link (sbx follows none on the way to %s)", dir, path);
	if (real)
		sbx_error_hint(err, "set \"%s\" in the host config to %s%s, the same directory "
			       "named without the link", key, real, path + strlen(dir));
	else
		sbx_error_hint(err, "set \"%s\" in the host config to a path without symbolic links",
			       key);
	return -1;
}

/* Open @name in @dir_fd (the directory @sofar, for messages). */
static int step(int dir_fd, const char *name, const char *sofar, const char *path,
		const char *key, bool create, struct sbx_error *err)
{
	const int flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	int fd = openat(dir_fd, name, flags), e;
	struct stat st;

	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(dir_fd, name, 0755) < 0 && errno != EEXIST)
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: cannot create",
					     sofar);
		fd = openat(dir_fd, name, flags);
	}
	if (fd >= 0)
		return fd;
	e = errno;
	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		return link_error(path, sofar, key, err);
	if (e == ENOENT)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, ENOENT, "%s", sofar);
	sbx_error_set(err, SBX_EXIT_UNAVAILABLE, e, "%s%s", sofar,
		      e == ENOTDIR ? ": not a directory" : "");
	sbx_error_hint(err, "set \"%s\" in the host config to a directory%s", key,
		       e == ENOTDIR ? "" : " this user can reach");
	return -1;
}

int sbx_dir_open_trusted(const char *path, const char *key, const struct sbx_trust *who,
			 bool create, struct sbx_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *sofar = NULL;
	struct stat st;

	if (!sbx_path_normal_absolute(path, PATH_MAX, false))
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				     "%s: %s: not an absolute path without . or .. components", key,
				     path);
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "/");
	sofar = sbx_xstrdup("/");
	for (const char *p = path;;) {
		_cleanup_free_ char *name = NULL;
		size_t n;
		int next;

		/* Each directory as it is: the next one is looked up in it. */
		if (fstat(fd, &st) < 0)
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s", sofar);
		if (sbx_dir_check(&st, sofar, NULL, who, err) < 0) {
			hint_for(err, &st, sofar, key, who);
			return -1;
		}
		while (*p == '/')
			p++;
		if (!*p)
			break;
		n = strcspn(p, "/");
		name = sbx_xstrndup(p, n);
		free(sofar);
		sofar = sbx_xstrndup(path, (size_t)(p + n - path));
		next = step(fd, name, sofar, path, key, create, err);
		if (next < 0)
			return -1;
		close(fd);
		fd = next;
		p += n;
	}
	return TAKE_FD(fd);
}
