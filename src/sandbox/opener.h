/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * opener.h - open the payload's outputs for a broker that may not read
 * them itself.
 *
 * With subordinate ids (subids.h) the payload's files belong to a host uid
 * that is not the caller's, and the broker, an ordinary process of the
 * caller with no capability on the host, may not read a file the payload
 * made 0600 or enter a directory it made 0700.  The caller owns the
 * sandbox's user namespace, though, and the owner of a user namespace may
 * join it and then holds every capability there, CAP_DAC_READ_SEARCH
 * among them, over every inode whose owner and group that namespace maps
 * (the payload's are).  So a child of the broker joins it and answers one
 * kind of request over a socketpair: "open this one name below this
 * directory fd, read-only", with the same openat2() (RESOLVE_BENEATH, no
 * symlinks, no magic links, no mount crossing, O_NOFOLLOW) that the
 * collector uses itself; the fd comes back over SCM_RIGHTS.  Everything
 * else of the collection (what it looks at, what it copies, the checks on
 * each fd) stays the broker's.
 *
 * The child is forked when collection starts: the payload has ended and
 * its cgroup was killed, and the signing key is not in memory then (it is
 * read again only to sign).  The child joins no other namespace, may not
 * be ptraced (not dumpable; the payload's uid is not its own), dies with
 * the broker, and refuses any request but a read-only open.
 */
#ifndef SBX_OPENER_H
#define SBX_OPENER_H

#include <sys/types.h>

#include "error.h"

struct sbx_opener {
	pid_t pid;
	int sock;
};

#define SBX_OPENER_INIT { .pid = -1, .sock = -1 }

/*
 * sbx_opener_start() - fork the opener into the user namespace @userns_fd
 * (one this process owns).  Return: 0, or -1 with @err set.
 */
int sbx_opener_start(struct sbx_opener *o, int userns_fd, struct sbx_error *err);

/*
 * sbx_opener_open() - the opener's openat2() of @name (one component, or
 * ".") below @dirfd with @flags, which may hold only O_RDONLY, O_DIRECTORY,
 * O_NONBLOCK and O_PATH (O_NOFOLLOW and O_CLOEXEC are always added).
 * @ud is the struct sbx_opener, so that it fits sbx_collect_limits.open_at.
 * Return: the fd, or -1 with errno (the opener's, or EPIPE when it is gone).
 */
int sbx_opener_open(void *ud, int dirfd, const char *name, int flags);

/* sbx_opener_stop() - end and reap the opener.  A stopped or never started
 * opener is a no-op. */
void sbx_opener_stop(struct sbx_opener *o);

#endif
