/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hold-internal.h - what hold.c (making holds, gc) and hold-promote.c
 * (sbx promote) share: the names in a hold and the held area's primitives.
 * Not for other modules.
 */
#ifndef SBX_HOLD_INTERNAL_H
#define SBX_HOLD_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "hostconfig.h"

#define HOLD_RECORD "hold.json"
#define HOLD_MANIFEST "manifest.json"
#define HOLD_FILES "files"
/* A record or a kept manifest larger than this was not written by sbx. */
#define HOLD_JSON_MAX (16u * 1024 * 1024)

/*
 * Open the held area (@create: making it, for a run), refusing one that is
 * a symlink, not a directory, writable by group or others (69), or not the
 * caller's (77; root may promote and gc any user's holds, but a run's
 * holds go only into an area of the caller's own).  ENOENT without
 * @create: returns -1 with errno ENOENT and @err unset, *@path_out set.
 * Returns the directory fd, with its path in *@path_out.
 */
int sbx_hold_area_open(const struct sbx_hostconfig *cfg, bool create, char **path_out,
		       struct sbx_error *err);

/* Remove the hold directory @name below @area_fd: files only, and "files/"
 * holds files only; anything else is left.  -1 when something was left. */
int sbx_hold_remove(int area_fd, const char *name);

/* Write hold.json below @run_fd, canonical, atomically (temp file and
 * rename), owned by the hold's owner.  -1 with @err set. */
int sbx_hold_write_record(int run_fd, json_t *rec, struct sbx_error *err);

/* All of the regular file @name below @dirfd (not followed), at most
 * HOLD_JSON_MAX bytes, NUL-terminated.  -1 with errno (EINVAL: not a
 * regular file, or too large). */
int sbx_hold_read_small(int dirfd, const char *name, char **data, size_t *len);

#endif
