/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proxy-internal.h - what the files of the egress proxy share: its
 * limits, the state of a connection and of a name lookup, and the
 * functions one file calls in another.  proxy.c: the loop and a
 * connection's lifetime; proxy-policy.c: the decisions and how they
 * are told; proxy-relay.c: the bytes.
 * Not for other modules.
 */
#ifndef SBX_PROXY_INTERNAL_H
#define SBX_PROXY_INTERNAL_H

#include <netdb.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proxy.h"

#define MAX_OPEN 64            /* connections open at once (4 fds + 2 sockets each) */
#define MAX_ADDRS 16           /* resolved addresses considered */
#define MAX_DECISIONS 64       /* listed in the manifest */
#define DEFAULT_MAX_CONNECTIONS 1024
#define PIPE_BYTES (1024 * 1024)
#define TICK_MS 100
#define REFUSAL_WINDOW_MS 1000  /* events: one per refusal reason per window */
#define TLS_PORT 443

enum conn_state { C_HEAD, C_RESOLVING, C_CONNECTING, C_HELLO, C_RELAY, C_DEAD };

struct half {
	int pipe[2];
	size_t pending;  /* bytes in the pipe */
	bool eof;        /* nothing more will be read from the source */
	bool shut;       /* the destination's write side was shut down */
	bool stalled;    /* no room in the pipe until the destination drains */
	uint64_t bytes;  /* read from the source */
};

struct lookup;
struct conn;

/* What a polled fd stands for. */
struct endpoint {
	struct conn *c;  /* NULL for the proxy's own fds */
	int which;       /* 0 client, 1 upstream; or a SRC_* */
};

enum { SRC_LISTEN = 2, SRC_LOOKUP, SRC_TIMER };

struct conn {
	struct sbx_proxy *p;
	struct conn *next, *prev;
	struct endpoint ep[2];
	int client, upstream;
	uint32_t ev[2];            /* current poll interest (POLLIN, POLLOUT) */
	enum conn_state state;
	char *head;                /* HEAD: bytes read so far */
	size_t head_len;
	struct sbx_proxy_request req;
	bool parsed;
	bool allowed;              /* passed the policy */
	const char *refuse_reason; /* refuse once the head is read */
	struct lookup *lookup;
	struct sockaddr_storage addrs[MAX_ADDRS];
	size_t n_addrs, next_addr;
	char addr[INET6_ADDRSTRLEN];
	uint64_t deadline_ns;
	uint64_t body_left;        /* plain HTTP: request body still to forward */
	uint8_t *hello;            /* HELLO: what the client sent into the tunnel */
	size_t hello_len;
	char server_name[SBX_HOST_MAX]; /* the ClientHello's, once checked */
	char why[SBX_HOST_MAX + 64];    /* a refusal reason built for this connection */
	struct half up, down;      /* client->upstream, upstream->client */
	size_t pipe_cap;           /* bytes each pipe holds */
	int status;                /* HTTP status the client got from sbx, 0 for none */
	const char *end_reason;
};

struct lookup {
	atomic_int refs;
	struct conn *conn;         /* loop only; NULL once abandoned */
	struct lookup *next;       /* pending list (loop only) */
	char host[SBX_HOST_MAX];
	int notify;                /* the thread's own write end */
	int gai;
	struct addrinfo *res;
};

struct sbx_proxy {
	const struct sbx_netprofile *np;
	struct sbx_proxy_hooks hooks;
	int listen_fd, timer_fd, lookup_rd, lookup_wr;
	struct endpoint src[3];
	/* What each pollfd of the last sbx_proxy_pollfds() stands for. */
	struct endpoint *polled[SBX_PROXY_POLL_MAX];
	size_t n_polled;
	struct conn *conns;
	struct conn *dead;
	size_t n_open;
	struct lookup *pending;
	uint64_t resolve_ms, connect_ms, head_ms, idle_ms;
	uint64_t max_connections, max_bytes;
	uint16_t tls_port;
	uint64_t accepted, n_allowed, n_refused, bytes_up, bytes_down, total_bytes;
	bool budget_spent;
	uint64_t t0_ns;
	struct sbx_tally refusals;
	json_t *decisions;
	size_t n_decisions_dropped;
};

/* ---- proxy.c ------------------------------------------------------------ */

/* proxy_watch() - make @events the poll interest of @c's client (@which 0)
 * or upstream (1) socket, from the next wait on. */
void proxy_watch(struct conn *c, int which, uint32_t events);

/* proxy_conn_close() - end @c: its net_closed event when it was allowed, its
 * entry in the decisions, its fds closed; it stays on the dead list until
 * the end of the dispatch pass.  Nothing on a connection already closed. */
void proxy_conn_close(struct conn *c);

/* proxy_connect_next() - a non-blocking connect to the next of @c's checked
 * addresses (state CONNECTING); a 502 to the client when none is left. */
void proxy_connect_next(struct conn *c);

/* ---- proxy-policy.c ------------------------------------------------------ */

/* proxy_decide() - a request head was parsed into @c->req: refuse it (caps,
 * CONNECT, allowlist), or check its literal address and connect, or start
 * resolving its name (state RESOLVING). */
void proxy_decide(struct conn *c);

/* proxy_lookup_done() - @l reported back through the lookup pipe: check the
 * addresses of its connection, if that is still waiting, then let go of
 * @l. */
void proxy_lookup_done(struct sbx_proxy *p, struct lookup *l);

/* proxy_lookup_forget() - the loop lets go of @l (it reported, or the proxy is
 * torn down): off the pending list, its connection's pointer cleared, the
 * loop's reference dropped. */
void proxy_lookup_forget(struct sbx_proxy *p, struct lookup *l);

/* proxy_check_hello() - look at what a tunnel's client sent so far (HELLO):
 * wait for more, refuse the tunnel, or allow it and start the relay. */
void proxy_check_hello(struct conn *c);

/* proxy_refuse_tunnel() - take back an allowed tunnel for @why: counted as a
 * refusal, an access_denied alert when the client spoke TLS, then closed. */
void proxy_refuse_tunnel(struct conn *c, const char *why);

/* proxy_emit() - hand the event @name with @detail (stolen) to the hooks. */
void proxy_emit(struct sbx_proxy *p, const char *name, json_t *detail);

/* proxy_describe() - what is known of @c (host, port, method, address, server
 * name) as a new JSON object, for events and decisions. */
json_t *proxy_describe(const struct conn *c);

/* proxy_record() - @c in the manifest's decisions, up to MAX_DECISIONS. */
void proxy_record(struct sbx_proxy *p, const struct conn *c);

/* proxy_respond() - answer @c's client with @status and a small text body
 * saying @why (also @c's end reason), then close @c. */
void proxy_respond(struct conn *c, int status, const char *why);

/* proxy_refuse() - count a refusal of @c and respond with it. */
void proxy_refuse(struct conn *c, int status, const char *why);

/* proxy_count_refusal() - count one refusal for @why; the first for its reason
 * in a window is a net_refused event with what @c says (NULL: nothing is
 * known of the connection). */
void proxy_count_refusal(struct sbx_proxy *p, const struct conn *c, int status, const char *why);

/* proxy_t_ms() - the events stream's clock (the hooks' t_ms, else milliseconds
 * since the proxy started). */
uint64_t proxy_t_ms(struct sbx_proxy *p);

/* proxy_report_held() - sbx_tally_flush()'s callback: one net_refused event for
 * the refusals held in a window; @ud is the proxy. */
void proxy_report_held(void *ud, const char *reason, uint64_t count, uint64_t first_ms,
		 uint64_t last_ms);

/* ---- proxy-relay.c ------------------------------------------------------- */

/* proxy_start_relay() - @c is allowed and connected: make its pipes, prime them
 * (the CONNECT's answer, the rewritten head, bytes already read) and start
 * relaying (state RELAY); a 502 when there are no pipes left. */
void proxy_start_relay(struct conn *c);

/* proxy_relay() - move what can move both ways, close @c when it is done, reset
 * or over max_bytes, else set its poll interest for what is left. */
void proxy_relay(struct conn *c);

#endif
