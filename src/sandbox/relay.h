/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * relay.h - bytes on their way between the caller's fds and the payload's
 * pipes while the supervisor waits: the payload's stdout and stderr
 * copied to sbx's own (an attached run), and sbx's stdin copied into the
 * payload's (--stdin).
 *
 * A relay is a bounded buffer in front of a blocking fd that is not
 * sbx's to make non-blocking (the caller's terminal or pipe is shared
 * with other processes).  The supervisor writes only when poll(2) says
 * the fd can take bytes, at most PIPE_BUF at a time, which a pipe that
 * reported POLLOUT takes without blocking; and it stops reading from the
 * source while the buffer is full.  So a reader that stops reading
 * holds up the payload's writes, as it would in a shell pipeline, and
 * never the supervisor's deadlines.
 */
#ifndef SBX_RELAY_H
#define SBX_RELAY_H

#include <stdbool.h>
#include <stddef.h>

struct sbx_relay {
	int to;          /* where the bytes go; -1: no relay */
	char *buf;
	size_t cap, off, len; /* pending: buf[off, off + len) */
	bool broken;     /* @to refused a write (EPIPE, ...): bytes are dropped */
	int error;       /* errno of that write */
};

#define SBX_RELAY_CAP (64 * 1024)

void sbx_relay_init(struct sbx_relay *r, int to);
/* Whether @r relays at all (it was given an fd); false for NULL. */
bool sbx_relay_active(const struct sbx_relay *r);
/* How many bytes sbx_relay_put() takes now (a broken relay takes any
 * number: they are dropped). */
size_t sbx_relay_room(const struct sbx_relay *r);
/* Bytes waiting for @r->to (0 once it is broken). */
size_t sbx_relay_pending(const struct sbx_relay *r);
/* Queue @n bytes (@n <= sbx_relay_room()); dropped once broken. */
void sbx_relay_put(struct sbx_relay *r, const void *p, size_t n);
/*
 * sbx_relay_write() - one write of at most PIPE_BUF pending bytes, after
 * poll(2) reported POLLOUT (or POLLERR/POLLHUP) on @r->to.
 * Return: bytes written; 0 with @r->broken set when @r->to refused them.
 */
size_t sbx_relay_write(struct sbx_relay *r);
/* Write everything pending, blocking: when the payload is gone and only
 * its last bytes are left to pass on. */
void sbx_relay_finish(struct sbx_relay *r);
void sbx_relay_free(struct sbx_relay *r);

#endif
