/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deliver.h - what `sbx run` hands back, and where.
 *
 * A back end reads the signed manifest on stdout, as always.  A person
 * (stdout a terminal, or --attach) reads the program's own output there
 * instead: the payload's stdout and stderr reach sbx's as they come
 * (still captured, hashed and limited as before), the manifest goes to
 * --manifest FILE, --manifest-fd N or by default the run's directory, and
 * a one-line summary ends on stderr.  --stdin passes sbx's stdin to the
 * payload's through a pipe.
 */
#ifndef SBX_DELIVER_H
#define SBX_DELIVER_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct sbx_run;
struct sbx_run_opts;
struct sbx_spawn;
struct sbx_supervise_opts;

/* The manifest's file in the run's directory, beside the captures. */
#define SBX_MANIFEST_FILE "manifest.json"

struct sbx_deliver {
	bool attached;
	int fd;           /* --manifest FILE (ours) or --manifest-fd N (the caller's); -1 */
	bool own_fd;
	char *shown;      /* where the manifest went, for the summary; NULL: stdout */
};

#define SBX_DELIVER_INIT { .fd = -1 }

/**
 * sbx_deliver_open() - resolve --attach, --stdin and --manifest when the
 * run starts, before anything runs.
 *
 * --manifest FILE is created (or emptied) now, never through a symlink;
 * --manifest-fd N must be open for writing.  Attached runs and --stdin
 * ignore SIGPIPE from here on: a reader that goes away is an EPIPE that
 * the supervisor handles, not the end of sbx.
 *
 * Return: 0, or -1 with SBX_EXIT_USAGE naming the option and the rule.
 */
int sbx_deliver_open(struct sbx_deliver *d, const struct sbx_run_opts *o, struct sbx_error *err);
void sbx_deliver_close(struct sbx_deliver *d);
static inline void sbx_deliver_closep(struct sbx_deliver **d)
{
	if (*d)
		sbx_deliver_close(*d);
}

/* The supervisor's and the sandbox's part: mirrors and the stdin pipe. */
void sbx_deliver_wire(const struct sbx_deliver *d, const struct sbx_run_opts *o,
		      struct sbx_spawn *sp, struct sbx_supervise_opts *so);

/**
 * sbx_deliver_manifest() - sign @run's manifest and put it where it goes:
 * --manifest FILE or -fd N, else stdout, or in an attached run the run's
 * directory (DIR/.sbx/manifest.json, a new file).  A run that holds
 * outputs records its hold first (hold.h).
 *
 * Return: 0, or -1 with @run->err set (the manifest could not be signed
 * or written: 70).
 */
int sbx_deliver_manifest(struct sbx_run *run);

#endif
