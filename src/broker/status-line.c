/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * status-line.c - see status-line.h.  The line is kept shorter than any
 * terminal is narrow, so "\r" plus "erase to end of line" always removes
 * all of it: a wrapped line could not be erased that way.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "status-line.h"
#include "util.h"

#define ERASE "\r\033[K"

void sbx_status_line_init(struct sbx_status_line *sl, int fd, int verbosity, uint64_t t0_ns)
{
	sl->fd = verbosity >= 0 && isatty(fd) ? fd : -1;
	sl->shown = false;
	sl->t0_ns = t0_ns;
}

bool sbx_status_line_enabled(const struct sbx_status_line *sl)
{
	return sl->fd >= 0;
}

void sbx_status_line_show(struct sbx_status_line *sl, const char *stage, bool have_memory,
			  uint64_t memory_bytes)
{
	uint64_t ds = (sbx_now_mono_ns() - sl->t0_ns) / 100000000ull; /* tenths of a second */
	char line[96];
	int n;

	if (sl->fd < 0)
		return;
	n = snprintf(line, sizeof(line), ERASE "sbx: %.16s %llu.%llus", stage,
		     (unsigned long long)(ds / 10), (unsigned long long)(ds % 10));
	if (have_memory && n > 0 && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, ", memory %llu.%llu MiB",
			 (unsigned long long)(memory_bytes >> 20),
			 (unsigned long long)((memory_bytes & ((1u << 20) - 1)) * 10 >> 20));
	/* A failed write only costs the display: nothing to report. */
	if (sbx_write_all(sl->fd, line, strlen(line)) >= 0)
		sl->shown = true;
}

void sbx_status_line_clear(struct sbx_status_line *sl)
{
	if (sl->fd < 0 || !sl->shown)
		return;
	(void)!sbx_write_all(sl->fd, ERASE, sizeof(ERASE) - 1);
	sl->shown = false;
}
