/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * state.h - the state directory: one entry per live run, so that `sbx gc`,
 * `sbx cancel` and admission can see every run of this user (or of root)
 * on the host, and so that whatever a crashed run left behind can be found.
 *
 * Layout (docs/state.md):
 *   <state>/gc.lock                serializes gc against entry creation
 *   <state>/admission.lock         see admission.h
 *   <state>/slots/<n>.lock         see admission.h
 *   <state>/runs/<run_id>/lock     flock(LOCK_EX) held by the run's sbx;
 *                                  its content is the run's stage
 *   <state>/runs/<run_id>/state.json
 *
 * A run is live exactly while its lock is held: flock is released by the
 * kernel when sbx exits, however it exits, so an entry whose lock can be
 * taken belongs to a dead sbx and may be reaped.
 */
#ifndef SBX_STATE_H
#define SBX_STATE_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "runid.h"

/* Run ids and random bytes: runid.h. */

/*
 * sbx_state_dir() - resolve and prepare the state directory.
 * @config_state_dir: config `state_dir`, or NULL.
 * Order: @config_state_dir; for root /run/sbx; else $XDG_RUNTIME_DIR/sbx;
 * else /tmp/sbx-<uid>.  The directory is created 0700 if missing and must
 * be a real directory (not a symlink) owned by the effective uid and not
 * writable by group or others; otherwise sbx refuses to use it.
 * On success *@out is the absolute path, owned by the caller.
 * Errors: SBX_EXIT_UNAVAILABLE (69).
 */
int sbx_state_dir(const char *config_state_dir, char **out, struct sbx_error *err);

/*
 * sbx_state_temp_path() - the host path a run's temporary directory must
 * have for gc to remove it: "$TMPDIR/sbx-run-<run_id><suffix>" ($TMPDIR
 * when set and absolute, else /tmp).  @suffix may be "" or e.g. "-quarantine"
 * and must not contain '/'.  Returned string owned by the caller.
 */
char *sbx_state_temp_path(const char *run_id, const char *suffix);

/* sbx_state_temp_base() - the directory of those paths ($TMPDIR or /tmp),
 * owned by the caller.  Every run makes its temp directory there. */
char *sbx_state_temp_base(void);

/* The Hint for a temp base where sbx cannot make a directory. */
#define SBX_TEMP_HINT "set TMPDIR to a directory you can create directories in " \
		      "(each run keeps its outputs' quarantine there)"

struct sbx_run_state;

/*
 * sbx_state_create() - register a new run: create <state>/runs/<run_id>/,
 * take its lock (held, close-on-exec, until sbx_state_finish() or exit)
 * and write state.json with this process's pid and start time, uid,
 * @principal (may be NULL) and the wall-clock start.
 * Errors: SBX_EXIT_SOFTWARE (70), e.g. when the entry already exists.
 */
int sbx_state_create(const char *state_dir, const char *run_id, const char *principal,
		     struct sbx_run_state **st, struct sbx_error *err);
/* The same, recording the run's runtime profile too (may be NULL). */
int sbx_state_create_run(const char *state_dir, const char *run_id, const char *principal,
			 const char *profile, struct sbx_run_state **st, struct sbx_error *err);

/*
 * sbx_state_set_stage() - record the run's stage for `sbx ps` (one of the
 * SBX_STAGE_* words) in the entry's lock file, as a fixed-size record of
 * SBX_STATE_STAGE_LEN bytes (the word, padded with spaces, then "\n")
 * rewritten in place.  Best effort: a failed write costs only the display.
 * NULL @st is a no-op.
 */
#define SBX_STATE_STAGE_LEN 16
void sbx_state_set_stage(struct sbx_run_state *st, const char *stage);

/*
 * sbx_state_add_cgroup() - record a cgroup directory (absolute, under
 *   /sys/fs/cgroup, one component containing the run id).  Record it, and
 *   sbx_state_save(), BEFORE creating it, so a crash in between leaves
 *   nothing unknown.  Not saved by itself, so that a run records all its
 *   paths with one save.
 * sbx_state_add_temp() - record a host temp directory (as returned by
 *   sbx_state_temp_path()); likewise save before creating it.
 * A path gc would refuse to touch is refused here already.
 * Errors: SBX_EXIT_SOFTWARE (70).
 */
int sbx_state_add_cgroup(struct sbx_run_state *st, const char *path, struct sbx_error *err);
int sbx_state_add_temp(struct sbx_run_state *st, const char *path, struct sbx_error *err);

/* sbx_state_save() - rewrite state.json atomically (tmp + rename). */
int sbx_state_save(struct sbx_run_state *st, struct sbx_error *err);

/* The run id and entry directory of @st. */
const char *sbx_state_run_id(const struct sbx_run_state *st);

/*
 * sbx_state_finish() - remove the entry and release its lock.  Call after
 * the run's own cleanup removed its cgroups and temp dirs.  NULL is a no-op.
 */
void sbx_state_finish(struct sbx_run_state *st);

/*
 * sbx_state_gc() - reap every entry whose lock is free: kill what is left in
 * its cgroups, remove them (children first), remove its temp dirs (never
 * following a symlink, only paths that look like sbx's own, see
 * sbx_state_temp_path()), then the entry.  Live entries are left alone.
 * Cheap when there is nothing to do (one pass over runs/ with non-blocking
 * flocks); the reaping itself is serialized by gc.lock, so concurrent calls
 * are safe.  An entry whose cleanup failed is kept for a later gc, with a
 * warning on stderr.  @reaped (may be NULL) counts entries removed.
 * Errors: SBX_EXIT_SOFTWARE (70) when the state directory cannot be read.
 */
int sbx_state_gc(const char *state_dir, unsigned *reaped, struct sbx_error *err);

/*
 * sbx_state_cancel() - send SIGTERM to the sbx running @run_id, after
 * checking that the caller owns the run (or is root) and, through a pidfd
 * and the start time recorded in state.json, that the pid still is that
 * sbx.  Returns 0 when signalled.
 * Errors: SBX_EXIT_USAGE (64) for a malformed id; SBX_EXIT_FAILED (1) when
 * there is no such live run or it is not the caller's; 70 otherwise.
 */
int sbx_state_cancel(const char *state_dir, const char *run_id, struct sbx_error *err);

#endif
