/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * batch-progress.h - the progress line of `sbx batch` on a terminal:
 * how many jobs are done, running, failed and queued, the time since the
 * batch started and an estimate of what is left.  Redrawn in place on
 * stderr, erased before any other line is written there, never written
 * when stderr is not a terminal or with -q.
 */
#ifndef SBX_BATCH_PROGRESS_H
#define SBX_BATCH_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbx_batch_counts {
	size_t done;    /* ended: run, skipped (a result in --out) or not a job file */
	size_t running;
	size_t failed;  /* of those done: ran and did not succeed, or not a job file */
	size_t queued;  /* not started yet */
	size_t ran;     /* of those done: ran in this batch (the estimate's pace) */
};

struct sbx_batch_progress {
	int fd;         /* -1: disabled */
	bool shown;
	unsigned cols;
	uint64_t t0_ns;
};

/*
 * sbx_batch_progress_format() - the line, without the erase, into @buf:
 * "sbx: batch: 12 done, 4 running, 1 failed, 83 queued; 0:42, about 4:50
 * left", cut to @cols - 1 bytes.  The estimate is the pace so far
 * (elapsed time per run ended) times the runs left; before a run has
 * ended there is none ("no estimate yet").  Pure, for
 * tests.  Returns the length.
 */
size_t sbx_batch_progress_format(char *buf, size_t len, const struct sbx_batch_counts *c,
				 uint64_t elapsed_ms, unsigned cols);

void sbx_batch_progress_init(struct sbx_batch_progress *p, int fd, int verbosity,
			     uint64_t t0_ns);
bool sbx_batch_progress_enabled(const struct sbx_batch_progress *p);
void sbx_batch_progress_show(struct sbx_batch_progress *p, const struct sbx_batch_counts *c);
void sbx_batch_progress_clear(struct sbx_batch_progress *p);

#endif
