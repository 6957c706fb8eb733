/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * subids.h - a host uid/gid of its own for each run of an ordinary user
 * who has subordinate ids.
 *
 * The kernel keeps several budgets per host uid (epoll watches, fds in
 * flight over unix sockets, RLIMIT_NPROC's count, pipe buffers, POSIX
 * message queues, locked memory): a payload that runs as its caller's uid
 * can use them up for the caller and for the caller's other runs.  Root's
 * runs get ids of their own (rootids.h); an ordinary user may map only its
 * own id, unless the administrator gave it a subordinate range in
 * /etc/subuid and /etc/subgid, which the distribution's setuid helpers
 * newuidmap and newgidmap (shadow's "uidmap" package) map on its behalf.
 * Then, as rootless podman does, each run's sandbox user is the range's
 * first id plus the run's admission slot, so no two live runs of one
 * caller, and not the caller, share a host uid.  sbx itself stays
 * unprivileged: it only asks the helpers to write the maps.
 *
 * Three id modes, decided per run (sbx_ids_choose) and shown by `sbx
 * check`: root's per-run ids, subordinate ids, or shared (the caller's own
 * uid).  A caller with a subordinate range whose helpers cannot be used is
 * refused (69), never silently given the shared mode.
 */
#ifndef SBX_SUBIDS_H
#define SBX_SUBIDS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* Where the distribution installs shadow's helpers; never looked up in PATH. */
#define SBX_NEWUIDMAP "/usr/bin/newuidmap"
#define SBX_NEWGIDMAP "/usr/bin/newgidmap"

struct sbx_sub_range {
	uint32_t first;
	uint32_t count;
};

struct sbx_sub_ids {
	struct sbx_sub_range uid; /* from subuid */
	struct sbx_sub_range gid; /* from subgid */
};

/*
 * sbx_sub_ids_find() - the first subordinate ranges of the user @name
 * (the login name; NULL when unknown) or @uid (shadow accepts either as a
 * line's owner) in @etc/subuid and @etc/subgid.
 * Return: 0 when neither file gives the user a range (or neither exists),
 * 1 with *@ids set when both do; -1 with 69 and a Hint when only one does
 * (a half-configured user, which would map the payload's uid to a range of
 * its own and its gid to the caller's) or a file cannot be read.
 */
int sbx_sub_ids_find(const char *etc, const char *name, uid_t uid, struct sbx_sub_ids *ids,
		     struct sbx_error *err);

/*
 * sbx_sub_ids_pick() - the ids of admission slot @slot: each range's first
 * plus @slot.  Errors: 69 with a Hint when @slot is past either range (more
 * concurrent runs than subordinate ids).
 */
int sbx_sub_ids_pick(const struct sbx_sub_ids *ids, unsigned slot, uid_t *uid, gid_t *gid,
		     struct sbx_error *err);

/*
 * sbx_sub_ids_helpers_usable() - are newuidmap and newgidmap there and able
 * to act (owned by root and setuid, or holding file capabilities)?
 * Return: 0, or -1 with 69 naming the helper and a Hint.
 */
int sbx_sub_ids_helpers_usable(struct sbx_error *err);

/*
 * sbx_sub_ids_lookup() - the caller's ranges, as `sbx run` and `sbx check`
 * see them: sbx_sub_ids_find() on /etc for the real uid, with the login
 * name from /etc/passwd (else NSS).  Root never gets this mode (it has
 * root_ids).  Return: as sbx_sub_ids_find(); 1 also requires the helpers
 * to be usable (else -1: the user has a range that cannot be used).
 */
int sbx_sub_ids_lookup(struct sbx_sub_ids *ids, struct sbx_error *err);

/* A map helper under way: its pid and the read end of its output. */
struct sbx_helper_run {
	const char *path;
	pid_t pid;
	int out;
};

/* newuidmap and newgidmap of one run, started and not yet waited for. */
struct sbx_sub_ids_maps {
	struct sbx_helper_run u, g;
};

#define SBX_SUB_IDS_MAPS_INIT { .u = { .pid = -1, .out = -1 }, .g = { .pid = -1, .out = -1 } }

/*
 * sbx_sub_ids_map_start() - start writing the user namespace maps of @pid
 * (the sandbox's init, which has not set any map yet) with the helpers:
 * the caller's own uid and gid as the namespace's 0, and
 * @sandbox_uid/@sandbox_gid (the sandbox user, inside) as
 * @host_uid/@host_gid.  The helpers are run by absolute path with an
 * empty environment, and are left running: the broker goes on with the
 * run's set-up meanwhile (two setuid execs cost 10 ms and more on a
 * loaded host).  Return: 0, or -1 with 69 and a Hint (nothing left
 * running).
 */
int sbx_sub_ids_map_start(struct sbx_sub_ids_maps *m, pid_t pid, uid_t sandbox_uid,
			  gid_t sandbox_gid, uid_t host_uid, gid_t host_gid, struct sbx_error *err);

/*
 * sbx_sub_ids_map_finish() - wait for the helpers of @m; their first line
 * of output becomes the message of a failure.  Idempotent.  Return: 0, or
 * -1 with 69 and a Hint.
 */
int sbx_sub_ids_map_finish(struct sbx_sub_ids_maps *m, struct sbx_error *err);

#endif
