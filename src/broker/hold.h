/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hold.h - held outputs: the artifacts of a run kept outside --artifacts
 * (partial_outputs "hold", or an output whose contract says "hold": true)
 * until `sbx promote` releases them or `sbx gc` finds them too old.
 *
 * The held area is one directory per user (host config hold_dir, else
 * $XDG_DATA_HOME/sbx/holds, else ~/.local/share/sbx/holds), mode 0700,
 * owned by the invoking user, with one directory per run:
 *
 *   HOLD/<run_id>/files/h000001 ...  the held files, under names sbx chose
 *   HOLD/<run_id>/manifest.json      the run's signed manifest, as printed
 *   HOLD/<run_id>/hold.json          what is held: path, name, size, sha256,
 *                                    media type, promoted; the manifest's
 *                                    sha256; when; whose (promote uses the
 *                                    names and the promoted marks, and
 *                                    checks the rest against the manifest,
 *                                    whose signature it verifies first)
 *
 * The run directory itself is the lock (flock): promote holds it
 * exclusively while it works, gc tries it without waiting and leaves a
 * locked hold alone.  See docs/state.md.
 */
#ifndef SBX_HOLD_H
#define SBX_HOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "error.h"
#include "hostconfig.h"

struct sbx_run;

/* The run's hold while it is made: opened by sbx_hold_collect(). */
struct sbx_hold {
	char *area;    /* the held area's path */
	int area_fd;
	int run_fd;    /* HOLD/<run_id> */
	int files_fd;  /* HOLD/<run_id>/files */
	size_t held;   /* files moved there */
	bool recorded; /* hold.json written: the hold is complete */
};

/*
 * sbx_hold_check() - before the payload runs, for a job that may hold its
 * outputs: can the held area be made and used?  So that a run is refused
 * (69, with a Hint) rather than losing its outputs at the end.
 * Return: 0, or -1 with @err set.
 */
int sbx_hold_check(const struct sbx_hostconfig *cfg, struct sbx_error *err);

/*
 * sbx_hold_collect() - after validation, before promotion: mark every
 * candidate of a partial run under partial_outputs "hold" to be held, and
 * move every candidate so marked (sbx_collect_hold) into a new hold of the
 * run, made below the held area with mkdirat (an existing one is an error,
 * never reused).  Nothing is created when nothing is to be held.
 * Return: 0, or -1 with run->err set.
 */
int sbx_hold_collect(struct sbx_run *run);

/*
 * sbx_hold_record() - the manifest @line (@len bytes, as printed) is
 * final: keep it beside the held files and write hold.json, which names
 * its sha256, so that `sbx promote` can tie its own manifest to it.
 * Return: 0, or -1 with @err set (the caller then abandons the hold).
 */
int sbx_hold_record(struct sbx_run *run, const char *line, size_t len, struct sbx_error *err);

/*
 * sbx_hold_abandon() - the run could not complete its hold: remove what
 * was held, and list those artifacts as discarded with @why.
 */
void sbx_hold_abandon(struct sbx_run *run, const char *why);

/* Close the hold's fds (what is held stays). */
void sbx_hold_close(struct sbx_hold *h);

/*
 * sbx_hold_gc() - remove the holds in the held area of @cfg older than
 * cfg->hold_max_age_hours, skipping those locked by a promote.  Only age
 * decides: a hold does not depend on its run's state entry, which is gone
 * once the run ends.  *@removed counts them.
 * Return: 0 (also when there is no held area), or -1 with @err set.
 */
int sbx_hold_gc(const struct sbx_hostconfig *cfg, unsigned *removed, struct sbx_error *err);

/*
 * sbx_hold_valid_path() - may @p name a held artifact: relative, at most
 * 4095 bytes, no empty, "." or ".." component.  (What it names is then
 * looked up in hold.json; it is never opened as a path.)
 */
bool sbx_hold_valid_path(const char *p);

#endif
