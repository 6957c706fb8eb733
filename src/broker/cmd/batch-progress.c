/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * batch-progress.c - see batch-progress.h.  As with the run's status line
 * (status-line.c), the line stays shorter than the terminal is wide, so
 * that "\r" and "erase to end of line" remove all of it.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "batch-progress.h"
#include "util.h"

#define ERASE "\r\033[K"

/* m:ss, or h:mm:ss from an hour on. */
static void clock_text(char *buf, size_t len, uint64_t s)
{
	if (s >= 3600)
		snprintf(buf, len, "%llu:%02llu:%02llu", (unsigned long long)(s / 3600),
			 (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
	else
		snprintf(buf, len, "%llu:%02llu", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
}

size_t sbx_batch_progress_format(char *buf, size_t len, const struct sbx_batch_counts *c,
				 uint64_t elapsed_ms, unsigned cols)
{
	char el[32], left[32];
	size_t n, max;
	int r;

	if (!len)
		return 0;
	clock_text(el, sizeof(el), elapsed_ms / 1000);
	if (c->queued + c->running == 0) {
		snprintf(left, sizeof(left), "%s", "nothing left");
	} else if (c->ran == 0) {
		snprintf(left, sizeof(left), "%s", "no estimate yet");
	} else {
		/* At the pace so far: the runs share the same slots, so
		 * the time per run ended is elapsed / ran whatever their
		 * number.  The running ones count as not started, which errs
		 * long, not short. */
		uint64_t ms = elapsed_ms * (c->queued + c->running) / c->ran;
		char t[24];

		clock_text(t, sizeof(t), (ms + 999) / 1000);
		snprintf(left, sizeof(left), "about %s left", t);
	}
	r = snprintf(buf, len, "sbx: batch: %zu done, %zu running, %zu failed, %zu queued; %s, %s",
		     c->done, c->running, c->failed, c->queued, el, left);
	n = r < 0 ? 0 : (size_t)r >= len ? len - 1 : (size_t)r;
	max = cols > 1 ? cols - 1 : 1;
	if (n > max)
		buf[n = max] = '\0';
	return n;
}

void sbx_batch_progress_init(struct sbx_batch_progress *p, int fd, int verbosity,
			     uint64_t t0_ns)
{
	struct winsize ws;

	memset(p, 0, sizeof(*p));
	p->fd = verbosity >= 0 && isatty(fd) ? fd : -1;
	p->t0_ns = t0_ns;
	p->cols = p->fd >= 0 && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 80;
}

bool sbx_batch_progress_enabled(const struct sbx_batch_progress *p)
{
	return p->fd >= 0;
}

void sbx_batch_progress_show(struct sbx_batch_progress *p, const struct sbx_batch_counts *c)
{
	char line[sizeof(ERASE) + 256] = ERASE;
	size_t n;

	if (p->fd < 0)
		return;
	/* The batch's other lines go through stdio: they must come out
	 * before the line is drawn over them. */
	fflush(stderr);
	n = sizeof(ERASE) - 1;
	n += sbx_batch_progress_format(line + n, sizeof(line) - n, c,
				       (sbx_now_mono_ns() - p->t0_ns) / 1000000ull, p->cols);
	/* A failed write only costs the display. */
	if (sbx_write_all(p->fd, line, n) >= 0)
		p->shown = true;
}

void sbx_batch_progress_clear(struct sbx_batch_progress *p)
{
	if (p->fd < 0 || !p->shown)
		return;
	(void)!sbx_write_all(p->fd, ERASE, sizeof(ERASE) - 1);
	p->shown = false;
}
