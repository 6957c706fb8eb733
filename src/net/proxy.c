/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proxy.c - the egress proxy's event loop (see proxy.h for the design):
 * accepting on the sandbox's listener, reading request heads and
 * ClientHellos, connecting upstream, the deadlines, and the lifetime of a
 * connection.  What a connection may do is decided in proxy-policy.c
 * (caps, allowlist, name lookups and address checks, the ClientHello's
 * name; refusals and events), its bytes are moved in proxy-relay.c, and
 * what the files share is in proxy-internal.h.
 *
 * Every fd is waited for in the supervisor's poll(2) (sbx_proxy_pollfds()
 * lists them with their interest, sbx_proxy_dispatch() takes the
 * answers): no epoll set, whose watches the kernel counts per uid
 * (fs.epoll.max_user_watches) and a payload of the same uid could use up;
 * with at most MAX_OPEN connections the list stays short.  A connection
 * moves through
 *   HEAD        reading the request head from the payload
 *   RESOLVING   a helper thread runs getaddrinfo (deadline: resolve_ms)
 *   CONNECTING  non-blocking connect to a checked address (connect_ms)
 *   HELLO       CONNECT to port 443 only: the tunnel is open, and the
 *               client's TLS ClientHello is read (deadline: head_ms) and
 *               its server name checked before any byte goes upstream
 *   RELAY       splice through one pipe per direction
 * and is freed at the end of the dispatch pass that closed it, so that an
 * event later in the same batch never touches freed memory.
 */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

#include "proxy-internal.h"

/* ---- a connection's lifetime ------------------------------------------- */

void proxy_watch(struct conn *c, int which, uint32_t events)
{
	c->ev[which] = events;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* End @c: record it, close its fds; it is freed after this pass. */
void proxy_conn_close(struct conn *c)
{
	struct sbx_proxy *p = c->p;

	if (c->state == C_DEAD)
		return;
	if (c->allowed) {
		json_t *d = proxy_describe(c);
		json_object_set_new(d, "bytes_up", json_integer((json_int_t)c->up.bytes));
		json_object_set_new(d, "bytes_down", json_integer((json_int_t)c->down.bytes));
		if (c->status)
			json_object_set_new(d, "status", json_integer(c->status));
		if (c->end_reason)
			json_object_set_new(d, "reason", json_string(c->end_reason));
		proxy_emit(p, "net_closed", d);
	}
	if (c->parsed || c->allowed || c->status)
		proxy_record(p, c);
	if (c->lookup) {
		c->lookup->conn = NULL;
		c->lookup = NULL;
	}
	close_fd(&c->client);
	close_fd(&c->upstream);
	close_fd(&c->up.pipe[0]);
	close_fd(&c->up.pipe[1]);
	close_fd(&c->down.pipe[0]);
	close_fd(&c->down.pipe[1]);
	c->state = C_DEAD;
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next = p->dead;
	c->prev = NULL;
	p->dead = c;
	p->n_open--;
}

static void conn_free(struct conn *c)
{
	sbx_proxy_request_free(&c->req);
	free(c->hello);
	free(c->head);
	free(c);
}


/* ---- connecting --------------------------------------------------------- */

static void start_hello(struct conn *c);

void proxy_connect_next(struct conn *c)
{
	struct sbx_proxy *p = c->p;

	close_fd(&c->upstream);
	while (c->next_addr < c->n_addrs) {
		const struct sockaddr_storage *ss = &c->addrs[c->next_addr++];
		socklen_t len = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
							   sizeof(struct sockaddr_in6);
		int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (fd < 0)
			continue;
		if (ss->ss_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, c->addr,
				  sizeof(c->addr));
		else
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, c->addr,
				  sizeof(c->addr));
		if (connect(fd, (const struct sockaddr *)ss, len) < 0 && errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		c->upstream = fd;
		c->ev[1] = POLLOUT;
		c->state = C_CONNECTING;
		c->deadline_ns = sbx_now_mono_ns() + p->connect_ms * 1000000ull;
		proxy_watch(c, 0, 0);
		return;
	}
	c->end_reason = "upstream connection failed";
	proxy_respond(c, 502, "upstream connection failed");
}

static void connect_done(struct conn *c)
{
	int e = 0;
	socklen_t el = sizeof(e);

	if (getsockopt(c->upstream, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
		proxy_connect_next(c);
		return;
	}
	if (c->req.connect && c->req.port == c->p->tls_port) {
		start_hello(c);
		return;
	}
	proxy_emit(c->p, "net_allowed", proxy_describe(c));
	proxy_start_relay(c);
}


/* ---- reading the head --------------------------------------------------- */

static void read_head(struct conn *c)
{
	const char *why;
	ssize_t n;
	int r;

	if (!c->head)
		c->head = sbx_xmalloc(SBX_PROXY_HEAD_MAX);
	n = recv(c->client, c->head + c->head_len, SBX_PROXY_HEAD_MAX - c->head_len, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		proxy_conn_close(c); /* the client gave up before asking anything */
		return;
	}
	c->head_len += (size_t)n;
	r = sbx_proxy_parse(c->head, c->head_len, &c->req, &why);
	if (r == 0)
		return;
	if (r != 1) {
		proxy_refuse(c, r, why);
		return;
	}
	c->parsed = true;
	proxy_decide(c);
}


/* ---- the ClientHello of a tunnel to port 443 ----------------------------------- */

static void read_hello(struct conn *c)
{
	ssize_t n = recv(c->client, c->hello + c->hello_len, SBX_TLS_PEEK_MAX - c->hello_len, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		c->end_reason = "the client went away";
		proxy_conn_close(c);
		return;
	}
	c->hello_len += (size_t)n;
	proxy_check_hello(c);
}

/* Answer the CONNECT, then wait for the ClientHello with the upstream
 * connected but untouched. */
static void start_hello(struct conn *c)
{
	static const char established[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	size_t extra = c->head_len - c->req.head_len;

	/* The socket is fresh and the answer small: one send carries it. */
	if (send(c->client, established, sizeof(established) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)(sizeof(established) - 1)) {
		c->end_reason = "the client went away";
		proxy_conn_close(c);
		return;
	}
	c->status = 200;
	c->hello = sbx_xmalloc(SBX_TLS_PEEK_MAX);
	/* A client may send its ClientHello right behind the CONNECT. */
	if (extra > SBX_TLS_PEEK_MAX)
		extra = SBX_TLS_PEEK_MAX;
	memcpy(c->hello, c->head + c->req.head_len, extra);
	c->hello_len = extra;
	c->state = C_HELLO;
	c->deadline_ns = sbx_now_mono_ns() + c->p->head_ms * 1000000ull;
	proxy_watch(c, 0, POLLIN);
	proxy_watch(c, 1, 0);
	if (extra)
		proxy_check_hello(c);
}

/* ---- the loop --------------------------------------------------------------- */

static void accept_all(struct sbx_proxy *p)
{
	for (;;) {
		int fd = accept4(p->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c;

		if (fd < 0)
			return;
		if (p->n_open >= MAX_OPEN) {
			/* No memory or fds for more: refuse without reading. */
			proxy_count_refusal(p, NULL, 0, "too many open connections");
			close(fd);
			continue;
		}
		c = sbx_xcalloc(1, sizeof(*c));
		c->p = p;
		c->client = fd;
		c->upstream = -1;
		c->up.pipe[0] = c->up.pipe[1] = c->down.pipe[0] = c->down.pipe[1] = -1;
		c->ep[0] = (struct endpoint){ c, 0 };
		c->ep[1] = (struct endpoint){ c, 1 };
		c->state = C_HEAD;
		c->deadline_ns = sbx_now_mono_ns() + p->head_ms * 1000000ull;
		/* The caps are answered with a 403 once the request is read,
		 * so the payload sees why. */
		if (++p->accepted > p->max_connections)
			c->refuse_reason = "max_connections reached";
		else if (p->budget_spent)
			c->refuse_reason = "max_bytes reached";
		c->ev[0] = POLLIN;
		c->next = p->conns;
		if (p->conns)
			p->conns->prev = c;
		p->conns = c;
		p->n_open++;
	}
}

static void sweep(struct sbx_proxy *p)
{
	uint64_t now = sbx_now_mono_ns();

	sbx_tally_flush(&p->refusals, proxy_t_ms(p), false, proxy_report_held, p);

	for (struct conn *c = p->conns, *next; c; c = next) {
		next = c->next;
		if (now < c->deadline_ns)
			continue;
		if (c->state == C_RELAY) {
			/* Nothing moved for a long time: most likely an upstream
			 * that kept a plain HTTP connection open after its
			 * response while the client has long gone. */
			c->end_reason = "idle";
			proxy_conn_close(c);
		} else if (c->state == C_HEAD) {
			c->end_reason = "request head not received in time";
			proxy_conn_close(c);
		} else if (c->state == C_HELLO) {
			proxy_refuse_tunnel(c, "TLS ClientHello not received in time");
		} else if (c->state == C_RESOLVING) {
			proxy_refuse(c, 504, "name resolution timed out");
		} else if (c->state == C_CONNECTING) {
			c->end_reason = "upstream connect timed out";
			proxy_respond(c, 504, "upstream connect timed out");
		}
	}
}

static void handle(struct conn *c, int which, uint32_t events)
{
	switch (c->state) {
	case C_HEAD:
		if (which == 0)
			read_head(c);
		break;
	case C_CONNECTING:
		if (which == 1) {
			connect_done(c);
		} else if (events & (POLLHUP | POLLERR)) {
			c->end_reason = "the client went away";
			proxy_conn_close(c);
		}
		break;
	case C_RELAY: {
		uint64_t before = c->up.bytes + c->down.bytes + c->up.pending + c->down.pending;
		bool eofs = c->up.eof && c->down.eof;

		proxy_relay(c);
		if (before != c->up.bytes + c->down.bytes + c->up.pending + c->down.pending)
			c->deadline_ns = sbx_now_mono_ns() + c->p->idle_ms * 1000000ull;
		/* A hang-up or error that moved nothing would be reported
		 * again at once by the next poll: end it here. */
		if (c->state == C_RELAY && (events & (POLLHUP | POLLERR)) &&
		    before == c->up.bytes + c->down.bytes + c->up.pending + c->down.pending &&
		    eofs == (c->up.eof && c->down.eof))
			proxy_conn_close(c);
		break;
	}
	case C_HELLO:
		if (which == 0) {
			read_hello(c);
		} else if (events & (POLLHUP | POLLERR)) {
			c->end_reason = "upstream connection reset";
			proxy_conn_close(c);
		}
		break;
	case C_RESOLVING:
		/* The client's interest is empty while waiting, but a reset
		 * is still reported: the payload gave up. */
		if (which == 0 && (events & (POLLHUP | POLLERR))) {
			c->end_reason = "the client went away";
			proxy_conn_close(c);
		}
		break;
	case C_DEAD:
		break;
	}
}

_Static_assert(SBX_PROXY_POLL_MAX >= 3 + 2 * MAX_OPEN, "room for every fd of the proxy");

static void add_fd(struct sbx_proxy *p, struct pollfd *pfd, size_t *n, int fd, short events,
		   struct endpoint *e)
{
	if (fd < 0)
		return;
	/* A socket with no interest still reports a hang-up or an error. */
	pfd[*n] = (struct pollfd){ .fd = fd, .events = events };
	p->polled[(*n)++] = e;
}

size_t sbx_proxy_pollfds(struct sbx_proxy *p, struct pollfd *pfd)
{
	size_t n = 0;

	add_fd(p, pfd, &n, p->listen_fd, POLLIN, &p->src[0]);
	add_fd(p, pfd, &n, p->lookup_rd, POLLIN, &p->src[1]);
	add_fd(p, pfd, &n, p->timer_fd, POLLIN, &p->src[2]);
	for (struct conn *c = p->conns; c; c = c->next) {
		add_fd(p, pfd, &n, c->client, (short)c->ev[0], &c->ep[0]);
		add_fd(p, pfd, &n, c->upstream, (short)c->ev[1], &c->ep[1]);
	}
	p->n_polled = n;
	return n;
}

void sbx_proxy_dispatch(struct sbx_proxy *p, const struct pollfd *pfd, size_t n)
{
	/* Only what the last sbx_proxy_pollfds() listed: a connection that
	 * ends in this pass stays in memory (the dead list) until its end. */
	if (n > p->n_polled)
		n = p->n_polled;
	for (size_t i = 0; i < n; i++) {
		struct endpoint *e = p->polled[i];

		if (!pfd[i].revents)
			continue;
		if (e->c) {
			handle(e->c, e->which, (uint32_t)pfd[i].revents);
			continue;
		}
		if (e->which == SRC_LISTEN) {
			accept_all(p);
		} else if (e->which == SRC_TIMER) {
			uint64_t ticks;
			(void)!read(p->timer_fd, &ticks, sizeof(ticks));
			sweep(p);
		} else if (e->which == SRC_LOOKUP) {
			struct lookup *l;
			while (read(p->lookup_rd, &l, sizeof(l)) == sizeof(l))
				proxy_lookup_done(p, l);
		}
	}
	p->n_polled = 0;
	while (p->dead) {
		struct conn *c = p->dead;
		p->dead = c->next;
		conn_free(c);
	}
}

void sbx_proxy_set_timeouts(struct sbx_proxy *p, uint64_t resolve_ms, uint64_t connect_ms,
			    uint64_t head_ms)
{
	p->resolve_ms = resolve_ms;
	p->connect_ms = connect_ms;
	p->head_ms = head_ms;
}

void sbx_proxy_set_tls_port(struct sbx_proxy *p, uint16_t port)
{
	p->tls_port = port;
}

int sbx_proxy_new(const struct sbx_netprofile *np, int listen_fd,
		  const struct sbx_proxy_hooks *hooks, struct sbx_proxy **out, struct sbx_error *err)
{
	struct sbx_proxy *p = sbx_xcalloc(1, sizeof(*p));
	struct itimerspec its = { .it_interval = { 0, TICK_MS * 1000000L },
				  .it_value = { 0, TICK_MS * 1000000L } };
	int fds[2];

	p->np = np;
	if (hooks)
		p->hooks = *hooks;
	p->listen_fd = listen_fd;
	p->timer_fd = p->lookup_rd = p->lookup_wr = -1;
	p->resolve_ms = 5000;
	p->connect_ms = 10000;
	p->head_ms = 30000;
	p->idle_ms = 300000;
	p->max_connections = np->max_connections ? np->max_connections : DEFAULT_MAX_CONNECTIONS;
	p->max_bytes = np->max_bytes;
	p->t0_ns = sbx_now_mono_ns();
	p->tls_port = TLS_PORT;
	p->refusals.window_ms = REFUSAL_WINDOW_MS;
	p->decisions = json_array();
	p->src[0] = (struct endpoint){ NULL, SRC_LISTEN };
	p->src[1] = (struct endpoint){ NULL, SRC_LOOKUP };
	p->src[2] = (struct endpoint){ NULL, SRC_TIMER };
	*out = NULL;

	p->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (p->timer_fd < 0 || pipe2(fds, O_CLOEXEC) < 0)
		goto fail;
	p->lookup_rd = fds[0];
	p->lookup_wr = fds[1];
	fcntl(p->lookup_rd, F_SETFL, O_NONBLOCK);
	fcntl(p->listen_fd, F_SETFL, O_NONBLOCK);
	if (timerfd_settime(p->timer_fd, 0, &its, NULL) < 0)
		goto fail;
	*out = p;
	return 0;
fail:
	sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "egress proxy: setting up its event loop");
	sbx_proxy_free(p);
	return -1;
}

json_t *sbx_proxy_summary(const struct sbx_proxy *p)
{
	return json_pack("{s:I,s:I,s:o,s:I,s:I,s:O,s:b}", "connections_allowed",
			 (json_int_t)p->n_allowed, "connections_refused", (json_int_t)p->n_refused,
			 "refused_by_reason", sbx_tally_json(&p->refusals), "bytes_up",
			 (json_int_t)p->bytes_up, "bytes_down", (json_int_t)p->bytes_down,
			 "decisions", p->decisions, "decisions_truncated", p->n_decisions_dropped > 0);
}

void sbx_proxy_stop(struct sbx_proxy *p)
{
	if (!p)
		return;
	close_fd(&p->listen_fd);
	while (p->conns) {
		if (!p->conns->end_reason)
			p->conns->end_reason = "the sandbox ended";
		proxy_conn_close(p->conns);
	}
	while (p->dead) {
		struct conn *c = p->dead;
		p->dead = c->next;
		conn_free(c);
	}
	/* The events then add up to the manifest's counts. */
	sbx_tally_flush(&p->refusals, proxy_t_ms(p), true, proxy_report_held, p);
}

void sbx_proxy_free(struct sbx_proxy *p)
{
	if (!p)
		return;
	sbx_proxy_stop(p);
	while (p->pending)
		proxy_lookup_forget(p, p->pending);
	close_fd(&p->timer_fd);
	close_fd(&p->lookup_rd);
	close_fd(&p->lookup_wr);
	json_decref(p->decisions);
	sbx_tally_free(&p->refusals);
	free(p);
}
