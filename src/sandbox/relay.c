/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * relay.c - see relay.h.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "relay.h"
#include "util.h"

void sbx_relay_init(struct sbx_relay *r, int to)
{
	*r = (struct sbx_relay){ .to = to };
	if (to < 0)
		return;
	r->cap = SBX_RELAY_CAP;
	r->buf = sbx_xmalloc(r->cap);
}

bool sbx_relay_active(const struct sbx_relay *r)
{
	return r && r->to >= 0;
}

size_t sbx_relay_room(const struct sbx_relay *r)
{
	/* A broken relay takes everything (and drops it): its source is
	 * still read, to capture it. */
	if (r->broken)
		return r->cap ? r->cap : SBX_RELAY_CAP;
	return r->cap - r->len;
}

size_t sbx_relay_pending(const struct sbx_relay *r)
{
	return r->broken ? 0 : r->len;
}

void sbx_relay_put(struct sbx_relay *r, const void *p, size_t n)
{
	if (r->broken || !n)
		return;
	if (r->off + r->len + n > r->cap) {
		memmove(r->buf, r->buf + r->off, r->len);
		r->off = 0;
	}
	memcpy(r->buf + r->off + r->len, p, n);
	r->len += n;
}

static void broke(struct sbx_relay *r, int e)
{
	r->broken = true;
	r->error = e;
	r->off = r->len = 0;
}

size_t sbx_relay_write(struct sbx_relay *r)
{
	/* PIPE_BUF: a pipe that polled writable takes this much at once. */
	size_t n = r->len < PIPE_BUF ? r->len : PIPE_BUF;
	ssize_t w;

	if (r->broken || !n)
		return 0;
	do
		w = write(r->to, r->buf + r->off, n);
	while (w < 0 && errno == EINTR);
	if (w < 0) {
		if (errno == EAGAIN)
			return 0;
		broke(r, errno);
		return 0;
	}
	r->off += (size_t)w;
	r->len -= (size_t)w;
	if (!r->len)
		r->off = 0;
	return (size_t)w;
}

void sbx_relay_finish(struct sbx_relay *r)
{
	while (!r->broken && r->len) {
		ssize_t w = write(r->to, r->buf + r->off, r->len);

		if (w < 0 && errno == EINTR)
			continue;
		/* The caller may have made its own fd non-blocking. */
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = r->to, .events = POLLOUT };

			(void)!poll(&pfd, 1, -1);
			continue;
		}
		if (w <= 0) {
			broke(r, w < 0 ? errno : EIO);
			return;
		}
		r->off += (size_t)w;
		r->len -= (size_t)w;
	}
	r->off = 0;
}

void sbx_relay_free(struct sbx_relay *r)
{
	free(r->buf);
	r->buf = NULL;
	r->off = r->len = r->cap = 0;
}
