/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * status-line.h - the one-line live status of `sbx run` on a terminal:
 * stage, elapsed time, memory.  Redrawn in place, erased when done, and
 * never written when stderr is not a terminal or with -q.
 */
#ifndef SBX_STATUS_LINE_H
#define SBX_STATUS_LINE_H

#include <stdbool.h>
#include <stdint.h>

struct sbx_status_line {
	int fd;         /* -1: disabled */
	bool shown;     /* something is on the line now */
	uint64_t t0_ns; /* elapsed time counts from here (monotonic) */
	unsigned cols;  /* the terminal's width when it started */
	char run_id[33];          /* "" until known */
	uint64_t wall_seconds;    /* limits shown beside the values; 0: none */
	uint64_t memory_mib;
};

/*
 * sbx_status_line_init() - enable the status line on @fd when it is a
 * terminal and @verbosity >= 0; otherwise every call below does nothing.
 */
void sbx_status_line_init(struct sbx_status_line *sl, int fd, int verbosity, uint64_t t0_ns);

/* The run's id and limits, once admitted (copied). */
void sbx_status_line_set_run(struct sbx_status_line *sl, const char *run_id,
			     uint64_t wall_seconds, uint64_t memory_mib);

/* True when the status line is drawn at all. */
bool sbx_status_line_enabled(const struct sbx_status_line *sl);

/*
 * sbx_status_line_show() - redraw the line: "sbx: <run id> @stage 1.2s/60s,
 * memory 34.5/512 MiB" (the memory part only when @have_memory), cut to
 * one column less than the terminal is wide.  One write(2).
 */
void sbx_status_line_show(struct sbx_status_line *sl, const char *stage, bool have_memory,
			  uint64_t memory_bytes);

/* sbx_status_line_clear() - erase the line if one is shown ("\r\033[K"). */
void sbx_status_line_clear(struct sbx_status_line *sl);

#endif
