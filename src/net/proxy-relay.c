/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proxy-relay.c - the bytes of an allowed connection: its two pipes primed
 * with what the proxy answered or has already read, then splice(2) both
 * ways, a plain HTTP request's body cut at its Content-Length, and the
 * profile's max_bytes spent across all connections.
 *
 * A file of its own: the one part of the proxy that moves the payload's
 * bytes once a connection is allowed, apart from the loop (proxy.c) that
 * gets it there.
 */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include "proxy-internal.h"

static bool budget_left(struct sbx_proxy *p, size_t *want)
{
	uint64_t left;

	if (!p->max_bytes)
		return true;
	if (p->total_bytes >= p->max_bytes)
		return false;
	left = p->max_bytes - p->total_bytes;
	if (*want > left)
		*want = (size_t)left;
	return true;
}

/* Move what can move from @src through @h to @dst: drain the pipe and
 * refill it in the same pass, so both sockets stay busy.  -1: the
 * connection failed; -2: the byte budget is spent. */
static int pump(struct conn *c, struct half *h, int src, int dst, bool body_limited, bool may_shut)
{
	struct sbx_proxy *p = c->p;

	for (;;) {
		bool moved = false;
		ssize_t n;

		if (h->pending) {
			n = splice(h->pipe[0], NULL, dst, NULL, h->pending,
				   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
			if (n > 0) {
				h->pending -= (size_t)n;
				h->stalled = false;
				moved = true;
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				return -1;
			}
		}
		if (!h->eof && !h->stalled && h->pending < c->pipe_cap) {
			size_t want = c->pipe_cap - h->pending;

			if (body_limited) {
				if (want > c->body_left)
					want = (size_t)c->body_left;
				if (want == 0)
					h->eof = true;
			}
			if (!h->eof && !budget_left(p, &want))
				return -2;
			if (!h->eof) {
				n = splice(src, NULL, h->pipe[1], NULL, want,
					   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
				if (n > 0) {
					h->pending += (size_t)n;
					h->bytes += (uint64_t)n;
					p->total_bytes += (uint64_t)n;
					if (h == &c->up)
						p->bytes_up += (uint64_t)n;
					else
						p->bytes_down += (uint64_t)n;
					if (body_limited)
						c->body_left -= (uint64_t)n;
					moved = true;
				} else if (n == 0) {
					h->eof = true;
				} else if (errno == EAGAIN && h->pending) {
					/* The source may be empty, or the pipe
					 * full in pages before it is in bytes:
					 * wait for the destination either way,
					 * rather than spin on a readable source. */
					h->stalled = true;
				} else if (errno != EAGAIN && errno != EINTR) {
					if (h == &c->up && (errno == ECONNRESET || errno == EPIPE))
						return -1;
					h->eof = true;
				}
			}
		}
		if (!moved)
			break;
	}
	if (h->eof && !h->pending && !h->shut && may_shut) {
		shutdown(dst, SHUT_WR);
		h->shut = true;
	}
	return 0;
}

void proxy_relay(struct conn *c)
{
	bool http = !c->req.connect;
	int r = pump(c, &c->up, c->client, c->upstream, http, !http);

	if (r == 0)
		r = pump(c, &c->down, c->upstream, c->client, false, true);
	if (r == -2) {
		c->p->budget_spent = true;
		c->end_reason = "max_bytes reached";
		proxy_conn_close(c);
		return;
	}
	if (r < 0) {
		c->end_reason = "connection reset";
		proxy_conn_close(c);
		return;
	}
	/* A plain HTTP exchange ends with the response; a tunnel when both
	 * directions are done. */
	if (c->down.eof && !c->down.pending && (http || (c->up.eof && !c->up.pending))) {
		proxy_conn_close(c);
		return;
	}
	proxy_watch(c, 0, (!c->up.eof && !c->up.stalled && c->up.pending < c->pipe_cap ? POLLIN : 0) |
			    (c->down.pending ? POLLOUT : 0));
	proxy_watch(c, 1, (!c->down.eof && !c->down.stalled && c->down.pending < c->pipe_cap ? POLLIN : 0) |
			    (c->up.pending ? POLLOUT : 0));
}

/* Prime a pipe with bytes the proxy itself produces or already read. */
static int prime(struct half *h, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(h->pipe[1], buf, len);
		if (n <= 0)
			return -1;
		h->pending += (size_t)n;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

void proxy_start_relay(struct conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	size_t extra = c->head_len - c->req.head_len;
	const char *rest = c->head + c->req.head_len;

	if (pipe2(c->up.pipe, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pipe2(c->down.pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		c->end_reason = "out of pipes";
		proxy_respond(c, 502, "out of resources");
		return;
	}
	/* Larger pipes mean fewer passes per byte; the kernel may refuse
	 * (pipe-max-size, the user's pipe quota), then the default serves. */
	fcntl(c->up.pipe[1], F_SETPIPE_SZ, PIPE_BYTES);
	fcntl(c->down.pipe[1], F_SETPIPE_SZ, PIPE_BYTES);
	{
		int a = fcntl(c->up.pipe[1], F_GETPIPE_SZ), b = fcntl(c->down.pipe[1], F_GETPIPE_SZ);
		c->pipe_cap = (size_t)(a < b ? a : b);
		if (a <= 0 || b <= 0)
			c->pipe_cap = 65536;
	}
	c->state = C_RELAY;
	c->status = 0;
	c->deadline_ns = sbx_now_mono_ns() + c->p->idle_ms * 1000000ull;
	if (c->hello) {
		/* The tunnel was answered when the ClientHello was asked
		 * for; what was read to check it goes first. */
		c->status = 200;
		if (prime(&c->up, (const char *)c->hello, c->hello_len) < 0)
			goto fail;
		c->up.bytes += c->hello_len;
		free(c->hello);
		c->hello = NULL;
	} else if (c->req.connect) {
		c->status = 200;
		if (prime(&c->down, established, sizeof(established) - 1) < 0 ||
		    prime(&c->up, rest, extra) < 0)
			goto fail;
		c->up.bytes += extra;
	} else {
		/* Anything after the declared body would be a second request
		 * on a connection that was checked for one: dropped. */
		size_t body = extra < c->req.body_len ? extra : (size_t)c->req.body_len;

		if (prime(&c->up, c->req.upstream, c->req.upstream_len) < 0 ||
		    prime(&c->up, rest, body) < 0)
			goto fail;
		c->up.bytes += c->req.upstream_len + body;
		c->body_left = c->req.body_len - body;
	}
	c->p->bytes_up += c->up.bytes;
	c->p->total_bytes += c->up.bytes;
	proxy_relay(c);
	return;
fail:
	c->end_reason = "relay set-up failed";
	proxy_conn_close(c);
}
