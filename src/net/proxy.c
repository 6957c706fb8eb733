/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proxy.c - the egress proxy's event loop (see proxy.h for the design):
 * accepting on the sandbox's listener, reading request heads and
 * ClientHellos, connecting upstream, the deadlines, and the lifetime of a
 * connection.  The bytes of an allowed connection are moved in
 * proxy-relay.c; what the files share is in proxy-internal.h.
 *
 * Every fd lives in one epoll set.  A connection moves through
 *   HEAD        reading the request head from the payload
 *   RESOLVING   a helper thread runs getaddrinfo (deadline: resolve_ms)
 *   CONNECTING  non-blocking connect to a checked address (connect_ms)
 *   HELLO       CONNECT to port 443 only: the tunnel is open, and the
 *               client's TLS ClientHello is read (deadline: head_ms) and
 *               its server name checked before any byte goes upstream
 *   RELAY       splice through one pipe per direction
 * and is freed at the end of the dispatch pass that closed it, so that an
 * event later in the same batch never touches freed memory.
 *
 * Lookups outlive connections: a lookup holds a reference of its own and
 * reports back by writing its address into a pipe the loop reads; a
 * connection that gave up on it (timeout, close, teardown) only clears the
 * back pointer, and the last of the two references frees it.
 */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

#include "proxy-internal.h"

/* ---- lookups ---------------------------------------------------------- */

static void lookup_unref(struct lookup *l)
{
	if (atomic_fetch_sub(&l->refs, 1) != 1)
		return;
	if (l->res)
		freeaddrinfo(l->res);
	free(l);
}

static void *lookup_thread(void *arg)
{
	struct lookup *l = arg;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };

	l->gai = getaddrinfo(l->host, NULL, &hints, &l->res);
	/* The loop may have gone (its read end closed): EPIPE, and the
	 * signal it raises stays blocked on this thread, which then ends. */
	(void)!write(l->notify, &l, sizeof(l));
	close(l->notify);
	lookup_unref(l);
	return NULL;
}

static int lookup_start(struct sbx_proxy *p, struct conn *c)
{
	struct lookup *l = sbx_xcalloc(1, sizeof(*l));
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int r;

	atomic_init(&l->refs, 2);
	l->conn = c;
	snprintf(l->host, sizeof(l->host), "%s", c->req.host);
	l->notify = fcntl(p->lookup_wr, F_DUPFD_CLOEXEC, 3);
	if (l->notify < 0) {
		free(l);
		return -1;
	}
	/* The thread must never take the broker's signals (SIGINT, SIGTERM
	 * are read from a signalfd by the main thread), nor SIGPIPE. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	r = pthread_create(&t, &attr, lookup_thread, l);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		close(l->notify);
		free(l);
		return -1;
	}
	l->next = p->pending;
	p->pending = l;
	c->lookup = l;
	return 0;
}

/* The loop lets go of @l (it reported, or the proxy is torn down). */
static void lookup_forget(struct sbx_proxy *p, struct lookup *l)
{
	for (struct lookup **pp = &p->pending; *pp; pp = &(*pp)->next)
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	if (l->conn)
		l->conn->lookup = NULL;
	lookup_unref(l);
}

/* ---- bookkeeping -------------------------------------------------------- */

static void emit(struct sbx_proxy *p, const char *name, json_t *detail)
{
	if (p->hooks.event)
		p->hooks.event(p->hooks.ud, name, detail);
	else
		json_decref(detail);
}

static json_t *describe(const struct conn *c)
{
	json_t *o = json_object();

	if (c->parsed) {
		json_object_set_new(o, "host", json_string(c->req.host));
		json_object_set_new(o, "port", json_integer(c->req.port));
		json_object_set_new(o, "method", json_string(c->req.connect ? "CONNECT" : "HTTP"));
	}
	if (c->addr[0])
		json_object_set_new(o, "address", json_string(c->addr));
	if (c->server_name[0])
		json_object_set_new(o, "server_name", json_string(c->server_name));
	return o;
}

static void record(struct sbx_proxy *p, const struct conn *c)
{
	json_t *o;

	if (json_array_size(p->decisions) >= MAX_DECISIONS) {
		p->n_decisions_dropped++;
		return;
	}
	o = describe(c);
	json_object_set_new(o, "decision", json_string(c->allowed ? "allowed" : "refused"));
	if (c->status)
		json_object_set_new(o, "status", json_integer(c->status));
	if (c->end_reason)
		json_object_set_new(o, "reason", json_string(c->end_reason));
	if (c->allowed) {
		json_object_set_new(o, "bytes_up", json_integer((json_int_t)c->up.bytes));
		json_object_set_new(o, "bytes_down", json_integer((json_int_t)c->down.bytes));
	}
	json_array_append_new(p->decisions, o);
}

void watch(struct conn *c, int which, uint32_t events)
{
	int fd = which ? c->upstream : c->client;
	struct epoll_event ev = { .events = events, .data.ptr = &c->ep[which] };

	if (fd < 0 || c->ev[which] == events)
		return;
	epoll_ctl(c->p->ep, EPOLL_CTL_MOD, fd, &ev);
	c->ev[which] = events;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* End @c: record it, close its fds; it is freed after this pass. */
void conn_close(struct conn *c)
{
	struct sbx_proxy *p = c->p;

	if (c->state == C_DEAD)
		return;
	if (c->allowed) {
		json_t *d = describe(c);
		json_object_set_new(d, "bytes_up", json_integer((json_int_t)c->up.bytes));
		json_object_set_new(d, "bytes_down", json_integer((json_int_t)c->down.bytes));
		if (c->status)
			json_object_set_new(d, "status", json_integer(c->status));
		if (c->end_reason)
			json_object_set_new(d, "reason", json_string(c->end_reason));
		emit(p, "net_closed", d);
	}
	if (c->parsed || c->allowed || c->status)
		record(p, c);
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

static const char *status_text(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 411: return "Length Required";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 504: return "Gateway Timeout";
	default: return "Error";
	}
}

/* Answer the client with @status and close.  The response is small and
 * the socket fresh, so one non-blocking write carries it. */
void respond(struct conn *c, int status, const char *why)
{
	char body[384], buf[640];
	int bn, n;

	c->status = status;
	c->end_reason = why;
	bn = snprintf(body, sizeof(body), "sbx egress proxy: %s\n", why);
	n = snprintf(buf, sizeof(buf),
		     "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
		     "Connection: close\r\n\r\n%s",
		     status, status_text(status), bn, body);
	if (c->client >= 0 && n > 0)
		(void)!send(c->client, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	conn_close(c);
}

static uint64_t t_ms(struct sbx_proxy *p)
{
	if (p->hooks.t_ms)
		return p->hooks.t_ms(p->hooks.ud);
	return (sbx_now_mono_ns() - p->t0_ns) / 1000000ull;
}

static void report_held(void *ud, const char *reason, uint64_t count, uint64_t first_ms,
			uint64_t last_ms)
{
	emit(ud, "net_refused",
	     json_pack("{s:s,s:I,s:I,s:I}", "reason", reason, "count", (json_int_t)count,
		       "first_t_ms", (json_int_t)first_ms, "last_t_ms", (json_int_t)last_ms));
}

/* Count a refusal; the first for its reason in a window is an event with
 * what @c says (NULL: nothing is known of the connection), the others are
 * reported together when the window ends (report_held). */
static void count_refusal(struct sbx_proxy *p, const struct conn *c, int status, const char *why)
{
	json_t *d;

	p->n_refused++;
	if (!sbx_tally_add(&p->refusals, why, t_ms(p)))
		return;
	d = c ? describe(c) : json_object();
	json_object_set_new(d, "reason", json_string(why));
	if (status)
		json_object_set_new(d, "status", json_integer(status));
	json_object_set_new(d, "count", json_integer(1));
	emit(p, "net_refused", d);
}

static void refuse(struct conn *c, int status, const char *why)
{
	count_refusal(c->p, c, status, why);
	respond(c, status, why);
}

/* ---- connecting --------------------------------------------------------- */

static void start_hello(struct conn *c);

static void connect_next(struct conn *c)
{
	struct sbx_proxy *p = c->p;

	close_fd(&c->upstream);
	while (c->next_addr < c->n_addrs) {
		const struct sockaddr_storage *ss = &c->addrs[c->next_addr++];
		socklen_t len = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
							   sizeof(struct sockaddr_in6);
		struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = &c->ep[1] };
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
		if (epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			continue;
		}
		c->upstream = fd;
		c->ev[1] = EPOLLOUT;
		c->state = C_CONNECTING;
		c->deadline_ns = sbx_now_mono_ns() + p->connect_ms * 1000000ull;
		watch(c, 0, 0);
		return;
	}
	c->end_reason = "upstream connection failed";
	respond(c, 502, "upstream connection failed");
}

static void connect_done(struct conn *c)
{
	int e = 0;
	socklen_t el = sizeof(e);

	if (getsockopt(c->upstream, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
		connect_next(c);
		return;
	}
	if (c->req.connect && c->req.port == c->p->tls_port) {
		start_hello(c);
		return;
	}
	emit(c->p, "net_allowed", describe(c));
	start_relay(c);
}

/* All of @c's addresses are known: check every one, then connect. */
static void addresses_ready(struct conn *c)
{
	char why[256];
	const char *cls;

	if (c->n_addrs == 0) {
		refuse(c, 502, "the name did not resolve");
		return;
	}
	for (size_t i = 0; i < c->n_addrs; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&c->addrs[i];
		char a[INET6_ADDRSTRLEN] = "";

		if (sbx_netcheck_address_allowed(c->p->np, sa, &cls))
			continue;
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, a, sizeof(a));
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, a, sizeof(a));
		snprintf(c->addr, sizeof(c->addr), "%s", a);
		/* The reason must outlive this frame: keep it in the head buffer
		 * (no longer needed once parsed). */
		snprintf(why, sizeof(why), "address %s is %s", a, cls);
		free(c->head);
		c->head = sbx_xstrdup(why);
		refuse(c, 403, c->head);
		return;
	}
	c->allowed = true;
	c->p->n_allowed++;
	connect_next(c);
}

static void add_addr(struct conn *c, const struct sockaddr *sa, uint16_t port)
{
	struct sockaddr_storage *ss;

	if (c->n_addrs == MAX_ADDRS || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return;
	ss = &c->addrs[c->n_addrs++];
	memset(ss, 0, sizeof(*ss));
	if (sa->sa_family == AF_INET) {
		memcpy(ss, sa, sizeof(struct sockaddr_in));
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	} else {
		memcpy(ss, sa, sizeof(struct sockaddr_in6));
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	}
}

static void lookup_done(struct sbx_proxy *p, struct lookup *l)
{
	struct conn *c = l->conn;

	if (c && c->state == C_RESOLVING) {
		c->lookup = NULL;
		if (l->gai == 0)
			for (struct addrinfo *ai = l->res; ai; ai = ai->ai_next)
				add_addr(c, ai->ai_addr, c->req.port);
		if (l->gai)
			refuse(c, 502, "the name did not resolve");
		else
			addresses_ready(c);
	}
	lookup_forget(p, l);
}

/* A request head was parsed: decide by name and port, then resolve. */
static void decide(struct conn *c)
{
	struct sbx_proxy *p = c->p;

	if (c->refuse_reason) {
		refuse(c, 403, c->refuse_reason);
		return;
	}
	if (c->req.connect) {
		switch (sbx_netcheck_connect(p->np, c->req.port)) {
		case SBX_CONNECT_FORBIDDEN:
			refuse(c, 403, "CONNECT not allowed by the network profile");
			return;
		case SBX_CONNECT_BAD_PORT:
			refuse(c, 403, "CONNECT not allowed to this port");
			return;
		case SBX_CONNECT_OK:
			break;
		}
	}
	switch (sbx_netcheck_match(p->np, c->req.host, c->req.port)) {
	case SBX_HOST_NOT_LISTED:
		refuse(c, 403, "host not in the network profile's allowlist");
		return;
	case SBX_HOST_BAD_PORT:
		refuse(c, 403, "port not allowed for this host");
		return;
	case SBX_HOST_ALLOWED:
		break;
	}
	if (c->req.host_kind != SBX_HOST_NAME) {
		struct sockaddr_storage ss = { 0 };

		if (c->req.host_kind == SBX_HOST_IPV4) {
			struct sockaddr_in *s = (struct sockaddr_in *)&ss;
			s->sin_family = AF_INET;
			inet_pton(AF_INET, c->req.host, &s->sin_addr);
		} else {
			struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;
			s->sin6_family = AF_INET6;
			inet_pton(AF_INET6, c->req.host, &s->sin6_addr);
		}
		add_addr(c, (struct sockaddr *)&ss, c->req.port);
		addresses_ready(c);
		return;
	}
	c->state = C_RESOLVING;
	c->deadline_ns = sbx_now_mono_ns() + p->resolve_ms * 1000000ull;
	watch(c, 0, 0);
	if (lookup_start(p, c) < 0)
		refuse(c, 502, "cannot start a name lookup");
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
		conn_close(c); /* the client gave up before asking anything */
		return;
	}
	c->head_len += (size_t)n;
	r = sbx_proxy_parse(c->head, c->head_len, &c->req, &why);
	if (r == 0)
		return;
	if (r != 1) {
		refuse(c, r, why);
		return;
	}
	c->parsed = true;
	decide(c);
}


/* ---- the ClientHello of a tunnel to port 443 ----------------------------------- */

/* The tunnel was allowed for a name and an address, but the bytes in it
 * ask for another virtual host, or are not TLS: no longer allowed.  A TLS
 * client gets a fatal access_denied alert so that it reports why. */
static void refuse_tunnel(struct conn *c, const char *why)
{
	static const uint8_t alert[] = { 21, 3, 3, 0, 2, 2, 49 };

	c->allowed = false;
	c->p->n_allowed--;
	c->status = 0;
	c->end_reason = why;
	count_refusal(c->p, c, 0, why);
	if (c->hello_len && c->hello[0] == 22)
		(void)!send(c->client, alert, sizeof(alert), MSG_NOSIGNAL | MSG_DONTWAIT);
	conn_close(c);
}

static void check_hello(struct conn *c)
{
	char name[SBX_HOST_MAX];
	const char *why;
	size_t used = 0;
	int r = sbx_tls_client_hello(c->hello, c->hello_len, name, &used, &why);

	if (r == SBX_TLS_MORE)
		return;
	if (r == SBX_TLS_BAD) {
		refuse_tunnel(c, why);
		return;
	}
	/* RFC 6066 has no server name for an IP address: a tunnel to an
	 * allow-listed literal carries none; one to a name carries it. */
	if (c->req.host_kind != SBX_HOST_NAME) {
		if (name[0]) {
			snprintf(c->server_name, sizeof(c->server_name), "%s", name);
			snprintf(c->why, sizeof(c->why),
				 "TLS server name %s on a tunnel to an address", name);
			refuse_tunnel(c, c->why);
			return;
		}
	} else if (!name[0]) {
		refuse_tunnel(c, "TLS ClientHello without a server name");
		return;
	} else if (strcmp(name, c->req.host) != 0) {
		snprintf(c->server_name, sizeof(c->server_name), "%s", name);
		snprintf(c->why, sizeof(c->why), "TLS server name %s is not the tunnel's host", name);
		refuse_tunnel(c, c->why);
		return;
	}
	snprintf(c->server_name, sizeof(c->server_name), "%s", name);
	emit(c->p, "net_allowed", describe(c));
	start_relay(c);
}

static void read_hello(struct conn *c)
{
	ssize_t n = recv(c->client, c->hello + c->hello_len, SBX_TLS_PEEK_MAX - c->hello_len, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		c->end_reason = "the client went away";
		conn_close(c);
		return;
	}
	c->hello_len += (size_t)n;
	check_hello(c);
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
		conn_close(c);
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
	watch(c, 0, EPOLLIN);
	watch(c, 1, 0);
	if (extra)
		check_hello(c);
}

/* ---- the loop --------------------------------------------------------------- */

static void accept_all(struct sbx_proxy *p)
{
	for (;;) {
		int fd = accept4(p->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN };
		struct conn *c;

		if (fd < 0)
			return;
		if (p->n_open >= MAX_OPEN) {
			/* No memory or fds for more: refuse without reading. */
			count_refusal(p, NULL, 0, "too many open connections");
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
		ev.data.ptr = &c->ep[0];
		c->ev[0] = EPOLLIN;
		if (epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
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

	sbx_tally_flush(&p->refusals, t_ms(p), false, report_held, p);

	for (struct conn *c = p->conns, *next; c; c = next) {
		next = c->next;
		if (now < c->deadline_ns)
			continue;
		if (c->state == C_RELAY) {
			/* Nothing moved for a long time: most likely an upstream
			 * that kept a plain HTTP connection open after its
			 * response while the client has long gone. */
			c->end_reason = "idle";
			conn_close(c);
		} else if (c->state == C_HEAD) {
			c->end_reason = "request head not received in time";
			conn_close(c);
		} else if (c->state == C_HELLO) {
			refuse_tunnel(c, "TLS ClientHello not received in time");
		} else if (c->state == C_RESOLVING) {
			refuse(c, 504, "name resolution timed out");
		} else if (c->state == C_CONNECTING) {
			c->end_reason = "upstream connect timed out";
			respond(c, 504, "upstream connect timed out");
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
		} else if (events & (EPOLLHUP | EPOLLERR)) {
			c->end_reason = "the client went away";
			conn_close(c);
		}
		break;
	case C_RELAY: {
		uint64_t before = c->up.bytes + c->down.bytes + c->up.pending + c->down.pending;
		bool eofs = c->up.eof && c->down.eof;

		relay(c);
		if (before != c->up.bytes + c->down.bytes + c->up.pending + c->down.pending)
			c->deadline_ns = sbx_now_mono_ns() + c->p->idle_ms * 1000000ull;
		/* A hang-up or error that moved nothing would be reported
		 * again at once by the level-triggered set: end it here. */
		if (c->state == C_RELAY && (events & (EPOLLHUP | EPOLLERR)) &&
		    before == c->up.bytes + c->down.bytes + c->up.pending + c->down.pending &&
		    eofs == (c->up.eof && c->down.eof))
			conn_close(c);
		break;
	}
	case C_HELLO:
		if (which == 0) {
			read_hello(c);
		} else if (events & (EPOLLHUP | EPOLLERR)) {
			c->end_reason = "upstream connection reset";
			conn_close(c);
		}
		break;
	case C_RESOLVING:
		/* The client's interest is empty while waiting, but a reset
		 * is still reported: the payload gave up. */
		if (which == 0 && (events & (EPOLLHUP | EPOLLERR))) {
			c->end_reason = "the client went away";
			conn_close(c);
		}
		break;
	case C_DEAD:
		break;
	}
}

void sbx_proxy_dispatch(struct sbx_proxy *p)
{
	struct epoll_event evs[32];
	int n = epoll_wait(p->ep, evs, ARRAY_SIZE(evs), 0);

	for (int i = 0; i < n; i++) {
		struct endpoint *e = evs[i].data.ptr;

		if (e->c) {
			handle(e->c, e->which, evs[i].events);
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
				lookup_done(p, l);
		}
	}
	while (p->dead) {
		struct conn *c = p->dead;
		p->dead = c->next;
		conn_free(c);
	}
}

int sbx_proxy_fd(const struct sbx_proxy *p)
{
	return p->ep;
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
	p->ep = p->timer_fd = p->lookup_rd = p->lookup_wr = -1;
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

	p->ep = epoll_create1(EPOLL_CLOEXEC);
	p->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (p->ep < 0 || p->timer_fd < 0 || pipe2(fds, O_CLOEXEC) < 0)
		goto fail;
	p->lookup_rd = fds[0];
	p->lookup_wr = fds[1];
	fcntl(p->lookup_rd, F_SETFL, O_NONBLOCK);
	fcntl(p->listen_fd, F_SETFL, O_NONBLOCK);
	if (timerfd_settime(p->timer_fd, 0, &its, NULL) < 0 ||
	    epoll_ctl(p->ep, EPOLL_CTL_ADD, p->listen_fd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.ptr = &p->src[0] }) < 0 ||
	    epoll_ctl(p->ep, EPOLL_CTL_ADD, p->lookup_rd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.ptr = &p->src[1] }) < 0 ||
	    epoll_ctl(p->ep, EPOLL_CTL_ADD, p->timer_fd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.ptr = &p->src[2] }) < 0)
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
		conn_close(p->conns);
	}
	while (p->dead) {
		struct conn *c = p->dead;
		p->dead = c->next;
		conn_free(c);
	}
	/* The events then add up to the manifest's counts. */
	sbx_tally_flush(&p->refusals, t_ms(p), true, report_held, p);
}

void sbx_proxy_free(struct sbx_proxy *p)
{
	if (!p)
		return;
	sbx_proxy_stop(p);
	while (p->pending)
		lookup_forget(p, p->pending);
	close_fd(&p->timer_fd);
	close_fd(&p->lookup_rd);
	close_fd(&p->lookup_wr);
	close_fd(&p->ep);
	json_decref(p->decisions);
	sbx_tally_free(&p->refusals);
	free(p);
}
