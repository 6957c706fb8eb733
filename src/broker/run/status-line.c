/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * status-line.c - see status-line.h.  The line is cut shorter than the
 * terminal is wide, so "\r" plus "erase to end of line" always removes
 * all of it: a wrapped line could not be erased that way.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "status-line.h"
#include "util.h"

#define ERASE "\r\033[K"

void sbx_status_line_init(struct sbx_status_line *sl, int fd, int verbosity, uint64_t t0_ns)
{
	struct winsize ws;

	memset(sl, 0, sizeof(*sl));
	sl->fd = verbosity >= 0 && isatty(fd) ? fd : -1;
	sl->t0_ns = t0_ns;
	/* Resizing the terminal during a run is not followed: the width at
	 * the start is good enough for a line that lives a few seconds. */
	sl->cols = sl->fd >= 0 && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 80;
}

void sbx_status_line_set_run(struct sbx_status_line *sl, const char *run_id,
			     uint64_t wall_seconds, uint64_t memory_mib)
{
	snprintf(sl->run_id, sizeof(sl->run_id), "%s", run_id);
	sl->wall_seconds = wall_seconds;
	sl->memory_mib = memory_mib;
}

bool sbx_status_line_enabled(const struct sbx_status_line *sl)
{
	return sl->fd >= 0;
}

void sbx_status_line_show(struct sbx_status_line *sl, const char *stage, bool have_memory,
			  uint64_t memory_bytes)
{
	uint64_t ds = (sbx_now_mono_ns() - sl->t0_ns) / 100000000ull; /* tenths of a second */
	char line[160], lim[32] = "";
	size_t max, n;

	if (sl->fd < 0)
		return;
	if (sl->wall_seconds)
		snprintf(lim, sizeof(lim), "/%llus", (unsigned long long)sl->wall_seconds);
	n = (size_t)snprintf(line, sizeof(line), ERASE "sbx: %s%s%.16s %llu.%llus%s", sl->run_id,
			     sl->run_id[0] ? " " : "", stage, (unsigned long long)(ds / 10),
			     (unsigned long long)(ds % 10), lim);
	if (have_memory && n < sizeof(line)) {
		if (sl->memory_mib)
			snprintf(lim, sizeof(lim), "/%llu", (unsigned long long)sl->memory_mib);
		snprintf(line + n, sizeof(line) - n, ", memory %llu.%llu%s MiB",
			 (unsigned long long)(memory_bytes >> 20),
			 (unsigned long long)((memory_bytes & ((1u << 20) - 1)) * 10 >> 20),
			 sl->memory_mib ? lim : "");
	}
	/* At most cols - 1 characters after the erase (all ASCII). */
	n = strlen(line);
	max = sizeof(ERASE) - 1 + (sl->cols > 1 ? sl->cols - 1 : 1);
	if (n > max)
		line[n = max] = '\0';
	/* A failed write only costs the display: nothing to report. */
	if (sbx_write_all(sl->fd, line, n) >= 0)
		sl->shown = true;
}

void sbx_status_line_clear(struct sbx_status_line *sl)
{
	if (sl->fd < 0 || !sl->shown)
		return;
	(void)!sbx_write_all(sl->fd, ERASE, sizeof(ERASE) - 1);
	sl->shown = false;
}
