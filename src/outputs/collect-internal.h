/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect-internal.h - what collect.c (walk, quarantine, validation),
 * promote.c (delivery into --artifacts) and names.c (the name rules)
 * share: the opening of an untrusted name, the marking of an artifact as
 * rejected, and the name checks.  Not for other modules.
 */
#ifndef SBX_COLLECT_INTERNAL_H
#define SBX_COLLECT_INTERNAL_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>

#include "collect.h"
#include "error.h"
#include "util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir)
#define _cleanup_dir_ _cleanup_(closedirp)

/*
 * collect_open_beneath() - openat2() of @name (one component, or ".") below
 * @dirfd, with RESOLVE_BENEATH and no symlink, magic link or mount
 * crossing followed.
 * Return: the fd, or -1 with errno; for ENOSYS @err is set too (69: there
 * is no weaker way of opening that would be acceptable).
 */
int collect_open_beneath(int dirfd, const char *name, int flags, struct sbx_error *err);

/*
 * collect_set_rejected() - mark @a REJECTED with @code (an SBX_RC_* of
 * reasoncode.h) and the formatted reason, cleaned of control bytes and
 * invalid UTF-8 for the manifest.
 */
void collect_set_rejected(struct sbx_artifact *a, const char *code, const char *fmt, ...)
	_printf_(3, 4);

/* collect_drop_quarantined() - remove @a's quarantine copy, if it has one. */
void collect_drop_quarantined(struct sbx_collection *c, struct sbx_artifact *a);

/*
 * collect_name_problem() - why @name (one component from getdents) cannot be an
 * artifact's name.
 * Return: the reason, a static string, or NULL when the name may be used.
 */
const char *collect_name_problem(const char *name, size_t max_name);

/*
 * collect_display_name() - how the listing shows @name: as is when @escape is false
 * (the name passed collect_name_problem()), else with each byte that may not
 * appear as is written "\xNN".
 * Return: a new string, owned by the caller.
 */
char *collect_display_name(const char *name, bool escape);

#endif
