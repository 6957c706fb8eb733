/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trustdir.h - directories sbx keeps state in, and whether another user
 * could have put something there: the state directory (state.c) and the
 * prepared state (prepare.c).
 *
 * A directory is trusted when one of a few uids owns it (the caller; for
 * prepared state also root and the catalog's owner) and neither its group
 * nor others may write it.  For a path, every directory from "/" down is
 * held to that, through no symbolic link: a parent another user may write
 * (a sticky one like /tmp included) lets that user make, or replace, what
 * the path names before sbx does.
 */
#ifndef SBX_TRUSTDIR_H
#define SBX_TRUSTDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"

/* The uids whose directories sbx trusts (at most three, no repeats). */
struct sbx_trust {
	uid_t uid[3];
	size_t n;
};

void sbx_trust_add(struct sbx_trust *t, uid_t uid);
bool sbx_trust_has(const struct sbx_trust *t, uid_t uid);
/* "uid 1000", "root or uid 1000": for messages; @buf is returned. */
const char *sbx_trust_text(const struct sbx_trust *t, char *buf, size_t len);

/*
 * sbx_dir_check() - whether the directory whose fstat is @st is owned by
 * one of @who and writable by neither its group nor others.
 * @path, @what: the message's "PATH: WHAT: ..." (@what may be NULL).
 * Errors: SBX_EXIT_UNAVAILABLE (69), "owned by uid U, not by ..." or
 * "writable by group or others (mode 1777)", without a Hint.
 */
int sbx_dir_check(const struct stat *st, const char *path, const char *what,
		  const struct sbx_trust *who, struct sbx_error *err);

/*
 * sbx_dir_open_trusted() - open the absolute @path one directory at a time
 * from "/", following no symbolic link, each directory ("/" too) held to
 * sbx_dir_check().  The path's meaning cannot change afterwards but by one
 * of @who.
 * @key: the host config key that names the path, for the Hint.
 * @create: make missing directories (0755); else a missing one is an error
 *          with errnum ENOENT, and nothing after it is looked at.
 * Returns an O_PATH fd of @path.
 * Errors: SBX_EXIT_UNAVAILABLE (69): "PATH: what is wrong" naming the
 * first directory at fault, with a Hint that says what to change.
 */
int sbx_dir_open_trusted(const char *path, const char *key, const struct sbx_trust *who,
			 bool create, struct sbx_error *err);

#endif
