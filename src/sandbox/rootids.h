/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rootids.h - the host uid/gid of the sandbox user when sbx runs as root.
 *
 * Run by an ordinary user, the sandbox user is that user on the host: one
 * id is all an unprivileged process may map.  Run by root, each live run
 * gets an id of its own from a range reserved for sbx (host config
 * "root_ids"), so that no two sandboxes, and no host account, share a uid:
 * one could otherwise signal or ptrace the other's processes, and share
 * its per-user kernel budgets (pipe buffers, inotify, ...).  The id is the
 * range's first plus the run's admission slot, and a slot is held by one
 * live run at a time among all runs of one state directory, so two live
 * runs never have the same id.  uid and gid are the same number.
 */
#ifndef SBX_ROOTIDS_H
#define SBX_ROOTIDS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "hostconfig.h"

/* The default range and its bounds: hostconfig.h (the host config
 * parses them). */

/*
 * sbx_root_ids_check() - is any id of [@first, @first + @count) visibly
 * owned on this host?  "Owned", as far as it can be told cheaply and
 * without a network directory on the run's path: a uid or primary gid in
 * @etc/passwd, a gid in @etc/group, or an id inside a subordinate range of
 * @etc/subuid or @etc/subgid (whose user could create processes with it).
 * Files nobody has (subuid on many hosts) are fine.  Files on disk owned
 * by the id, and directories reached only through NSS (LDAP, SSSD), are
 * not looked at: choosing the range is the operator's promise for those.
 * Returns 0 when none is; else -1 with SBX_EXIT_UNAVAILABLE naming the
 * first id found and the file, and a Hint.
 */
int sbx_root_ids_check(const char *etc, uint32_t first, uint32_t count, struct sbx_error *err);

/*
 * sbx_root_ids_pick() - the id of admission slot @slot: @first + @slot,
 * once sbx_root_ids_check() found the whole range free.  Errors: SBX_EXIT_UNAVAILABLE with a
 * Hint when @slot >= @count (more concurrent runs than ids) or the id is
 * owned.
 */
int sbx_root_ids_pick(const char *etc, uint32_t first, uint32_t count, unsigned slot,
		      uint32_t *id, struct sbx_error *err);

/*
 * sbx_root_ids_choose() - what `sbx run` uses: for root whose user
 * namespace maps the slot's id (uid_map and gid_map), the picked id in
 * *@id; else (an ordinary user, or root of a user namespace that does not
 * map it, who is no more than an ordinary user) (uid_t)-1: the caller's
 * own ids.  Errors: as sbx_root_ids_pick().
 */
/* Is @id mapped as both uid and gid in our own user namespace? */
bool sbx_root_ids_mapped(uint32_t id);

int sbx_root_ids_choose(uint32_t first, uint32_t count, unsigned slot, uid_t *id,
			struct sbx_error *err);

#endif
