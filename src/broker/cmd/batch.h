/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * batch.h - `sbx batch DIR|-`: many job files through admission, one
 * signed manifest line each (batch.c has the theory of operation).
 */
#ifndef SBX_BATCH_H
#define SBX_BATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

struct sbx_batch_opts {
	struct sbx_run_opts run;  /* what each run gets, as `sbx run` options */
	const char *source;       /* DIR, or "-": one job-file path a line on stdin */
	const char *out;          /* --out DIR: the manifests, one file a job */
	unsigned jobs;            /* --jobs N, 0: max_concurrent */
	bool queue_timeout_set;   /* --queue-timeout given; else runs wait */
};

/*
 * sbx_cmd_batch() - run every job of @o->source, at most --jobs at once,
 * each through admission as `sbx run JOB` would; each manifest on stdout
 * as its run ends and as OUT/NAME; a job whose OUT/NAME is its result
 * (a manifest signed with the runs' key, for the job file as it is now)
 * is skipped.  Returns 0 when every job succeeded (this time or before), 1
 * when one did not or an entry is not a job file, 130 when cancelled;
 * 64, 65, 69, 70, 75 for the batch's own errors (sbx(1) EXIT STATUS).
 */
int sbx_cmd_batch(const struct sbx_batch_opts *o);

/*
 * The pieces of a batch without side effects, exposed for tests:
 * sbx_batch_manifest_name() - the name of @path's manifest in OUT: its
 *   base name, ".json" added when it does not end so; NULL when @path
 *   names no file ("", "dir/", ".", "..").  Free it.
 * sbx_batch_names_clash() - whether two of the @n @names are the same;
 *   sets *@first and *@second to their indexes (first < second, the
 *   earliest clash in name order).
 */
char *sbx_batch_manifest_name(const char *path);
bool sbx_batch_names_clash(const char *const *names, size_t n, size_t *first, size_t *second);

#endif
