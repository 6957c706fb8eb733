/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proxy-policy.c - the egress proxy's decisions: whether a parsed request
 * may go out (the caps, CONNECT and its ports, the allowlist by host and
 * port), the name lookups and the check of every address they return
 * (netcheck.h), whether a tunnel's ClientHello names the tunnel's host;
 * and how each decision is told: the refusal the client gets, the events,
 * the refusals counted per reason, the manifest's list of decisions.
 *
 * A file of its own so that what the payload may reach can be read and
 * reviewed in one place, apart from the loop in proxy.c that moves
 * connections through their states and the relay in proxy-relay.c.
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
#include <sys/socket.h>

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
void proxy_lookup_forget(struct sbx_proxy *p, struct lookup *l)
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

/* ---- events, records and refusals ------------------------------------------ */

void proxy_emit(struct sbx_proxy *p, const char *name, json_t *detail)
{
	if (p->hooks.event)
		p->hooks.event(p->hooks.ud, name, detail);
	else
		json_decref(detail);
}

json_t *proxy_describe(const struct conn *c)
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

void proxy_record(struct sbx_proxy *p, const struct conn *c)
{
	json_t *o;

	if (json_array_size(p->decisions) >= MAX_DECISIONS) {
		p->n_decisions_dropped++;
		return;
	}
	o = proxy_describe(c);
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
void proxy_respond(struct conn *c, int status, const char *why)
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
	proxy_conn_close(c);
}

uint64_t proxy_t_ms(struct sbx_proxy *p)
{
	if (p->hooks.t_ms)
		return p->hooks.t_ms(p->hooks.ud);
	return (sbx_now_mono_ns() - p->t0_ns) / 1000000ull;
}

void proxy_report_held(void *ud, const char *reason, uint64_t count, uint64_t first_ms,
			uint64_t last_ms)
{
	proxy_emit(ud, "net_refused",
	     json_pack("{s:s,s:I,s:I,s:I}", "reason", reason, "count", (json_int_t)count,
		       "first_t_ms", (json_int_t)first_ms, "last_t_ms", (json_int_t)last_ms));
}

/* Count a refusal; the first for its reason in a window is an event with
 * what @c says (NULL: nothing is known of the connection), the others are
 * reported together when the window ends (proxy_report_held). */
void proxy_count_refusal(struct sbx_proxy *p, const struct conn *c, int status, const char *why)
{
	json_t *d;

	p->n_refused++;
	if (!sbx_tally_add(&p->refusals, why, proxy_t_ms(p)))
		return;
	d = c ? proxy_describe(c) : json_object();
	json_object_set_new(d, "reason", json_string(why));
	if (status)
		json_object_set_new(d, "status", json_integer(status));
	json_object_set_new(d, "count", json_integer(1));
	proxy_emit(p, "net_refused", d);
}

void proxy_refuse(struct conn *c, int status, const char *why)
{
	proxy_count_refusal(c->p, c, status, why);
	proxy_respond(c, status, why);
}

/* ---- deciding ------------------------------------------------------------ */

/* All of @c's addresses are known: check every one, then connect. */
static void addresses_ready(struct conn *c)
{
	char why[256];
	const char *cls;

	if (c->n_addrs == 0) {
		proxy_refuse(c, 502, "the name did not resolve");
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
		proxy_refuse(c, 403, c->head);
		return;
	}
	c->allowed = true;
	c->p->n_allowed++;
	proxy_connect_next(c);
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

void proxy_lookup_done(struct sbx_proxy *p, struct lookup *l)
{
	struct conn *c = l->conn;

	if (c && c->state == C_RESOLVING) {
		c->lookup = NULL;
		if (l->gai == 0)
			for (struct addrinfo *ai = l->res; ai; ai = ai->ai_next)
				add_addr(c, ai->ai_addr, c->req.port);
		if (l->gai)
			proxy_refuse(c, 502, "the name did not resolve");
		else
			addresses_ready(c);
	}
	proxy_lookup_forget(p, l);
}

/* A request head was parsed: decide by name and port, then resolve. */
void proxy_decide(struct conn *c)
{
	struct sbx_proxy *p = c->p;

	if (c->refuse_reason) {
		proxy_refuse(c, 403, c->refuse_reason);
		return;
	}
	if (c->req.connect) {
		switch (sbx_netcheck_connect(p->np, c->req.port)) {
		case SBX_CONNECT_FORBIDDEN:
			proxy_refuse(c, 403, "CONNECT not allowed by the network profile");
			return;
		case SBX_CONNECT_BAD_PORT:
			proxy_refuse(c, 403, "CONNECT not allowed to this port");
			return;
		case SBX_CONNECT_OK:
			break;
		}
	}
	switch (sbx_netcheck_match(p->np, c->req.host, c->req.port)) {
	case SBX_HOST_NOT_LISTED:
		proxy_refuse(c, 403, "host not in the network profile's allowlist");
		return;
	case SBX_HOST_BAD_PORT:
		proxy_refuse(c, 403, "port not allowed for this host");
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
	proxy_watch(c, 0, 0);
	if (lookup_start(p, c) < 0)
		proxy_refuse(c, 502, "cannot start a name lookup");
}

/* ---- the ClientHello of a tunnel to port 443 ----------------------------------- */

/* The tunnel was allowed for a name and an address, but the bytes in it
 * ask for another virtual host, or are not TLS: no longer allowed.  A TLS
 * client gets a fatal access_denied alert so that it reports why. */
void proxy_refuse_tunnel(struct conn *c, const char *why)
{
	static const uint8_t alert[] = { 21, 3, 3, 0, 2, 2, 49 };

	c->allowed = false;
	c->p->n_allowed--;
	c->status = 0;
	c->end_reason = why;
	proxy_count_refusal(c->p, c, 0, why);
	if (c->hello_len && c->hello[0] == 22)
		(void)!send(c->client, alert, sizeof(alert), MSG_NOSIGNAL | MSG_DONTWAIT);
	proxy_conn_close(c);
}

void proxy_check_hello(struct conn *c)
{
	char name[SBX_HOST_MAX];
	const char *why;
	size_t used = 0;
	int r = sbx_tls_client_hello(c->hello, c->hello_len, name, &used, &why);

	if (r == SBX_TLS_MORE)
		return;
	if (r == SBX_TLS_BAD) {
		proxy_refuse_tunnel(c, why);
		return;
	}
	/* RFC 6066 has no server name for an IP address: a tunnel to an
	 * allow-listed literal carries none; one to a name carries it. */
	if (c->req.host_kind != SBX_HOST_NAME) {
		if (name[0]) {
			snprintf(c->server_name, sizeof(c->server_name), "%s", name);
			snprintf(c->why, sizeof(c->why),
				 "TLS server name %s on a tunnel to an address", name);
			proxy_refuse_tunnel(c, c->why);
			return;
		}
	} else if (!name[0]) {
		proxy_refuse_tunnel(c, "TLS ClientHello without a server name");
		return;
	} else if (strcmp(name, c->req.host) != 0) {
		snprintf(c->server_name, sizeof(c->server_name), "%s", name);
		snprintf(c->why, sizeof(c->why), "TLS server name %s is not the tunnel's host", name);
		proxy_refuse_tunnel(c, c->why);
		return;
	}
	snprintf(c->server_name, sizeof(c->server_name), "%s", name);
	proxy_emit(c->p, "net_allowed", proxy_describe(c));
	proxy_start_relay(c);
}
