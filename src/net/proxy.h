/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proxy.h - the broker's egress proxy for network profiles of kind
 * "egress".
 *
 * The sandbox's init creates a listening TCP socket on 127.0.0.1:3128
 * inside the sandbox's network namespace and hands it to the broker with
 * the /work fds.  The broker accepts on it directly: the accepted sockets
 * live in the sandbox's namespace, the upstream sockets the proxy opens
 * live in the broker's, so the payload reaches the outside only through
 * the decisions made here.  No thread per connection: the supervisor's
 * poll(2) waits for the fds of sbx_proxy_pollfds() and hands what is
 * ready to sbx_proxy_dispatch().
 * Names are resolved on short-lived helper threads (getaddrinfo has no
 * asynchronous form worth its cost), with a timeout.
 *
 * Per connection: read the request head (capped), parse it (CONNECT
 * host:port for TLS, which is relayed and never decrypted; or a plain
 * HTTP request with an absolute http:// URI, rewritten to origin form),
 * match host and port against the allowlist, resolve, refuse if ANY
 * address is internal (netcheck.h) unless inside allow_cidrs, connect to
 * an address that was checked (never resolving twice), then relay bytes
 * with splice(2) through a pipe per direction until both sides are done
 * or the profile's max_bytes is spent.
 */
#ifndef SBX_PROXY_H
#define SBX_PROXY_H

#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "error.h"
#include "netcheck.h"
#include "spec.h"

/* A request head larger than this is refused (431). */
#define SBX_PROXY_HEAD_MAX 16384

/* The parsed head of one proxy request. */
struct sbx_proxy_request {
	bool connect;              /* CONNECT host:port */
	char host[SBX_HOST_MAX];   /* normalized (netcheck) */
	enum sbx_host_kind host_kind;
	uint16_t port;
	size_t head_len;           /* bytes of the head, through the empty line */
	uint64_t body_len;         /* plain HTTP: Content-Length, else 0 */
	char *upstream;            /* plain HTTP: the head to send upstream */
	size_t upstream_len;
};

/*
 * sbx_proxy_parse() - parse the request head at the start of @buf.
 * Returns 0 when more bytes are needed (no complete head yet and fewer than
 * SBX_PROXY_HEAD_MAX), 1 with @req filled (free with
 * sbx_proxy_request_free()), or the HTTP status to refuse with: 400
 * (malformed, unsupported scheme, Host header not matching the target,
 * userinfo in the URI), 411 (Transfer-Encoding in a request), 431 (head
 * too large), 501 (an absolute https:// URI or a non-HTTP/1.x version);
 * then @reason says why in a few words.
 */
int sbx_proxy_parse(const char *buf, size_t len, struct sbx_proxy_request *req,
		    const char **reason);
void sbx_proxy_request_free(struct sbx_proxy_request *req);

/*
 * A CONNECT to port 443 must open with a TLS ClientHello whose server
 * name (SNI) is the CONNECT's host: the address was allowed for that name,
 * not for every virtual host behind it.  The proxy reads at most this much
 * before it decides: one full record and its header.
 */
#define SBX_TLS_PEEK_MAX (16384 + 5)

enum { SBX_TLS_BAD = -1, SBX_TLS_MORE = 0, SBX_TLS_HELLO = 1 };

/*
 * sbx_tls_client_hello() - parse the TLS records at the start of @buf.
 * SBX_TLS_MORE: a prefix of a ClientHello, fewer than SBX_TLS_PEEK_MAX
 * bytes.  SBX_TLS_HELLO: a complete ClientHello (reassembled from up to 8
 * handshake records) in the first *@hello_len bytes, with @name its
 * server name lowercased, or "" when it has none.  SBX_TLS_BAD: not TLS,
 * malformed, too large, two server names, a server name that is not a DNS
 * name (an IP address, a trailing dot), an encrypted ClientHello (ECH), a
 * repeated extension, bytes after the ClientHello in its record; @reason
 * says which in a few words.
 */
int sbx_tls_client_hello(const uint8_t *buf, size_t len, char name[SBX_HOST_MAX],
			 size_t *hello_len, const char **reason);

/*
 * Refusals, counted per reason.  A refusal is an event of its own when it
 * is the first for its reason in a window (one second in the proxy); the
 * rest are held and reported together when the window ends, and a window
 * that reported opens the next, so a steady flood makes one event per
 * reason per window.  At most SBX_TALLY_REASONS reasons are told apart;
 * the rest are counted as "other reasons".
 */
#define SBX_TALLY_REASONS 32

struct sbx_tally_entry {
	char *reason;
	uint64_t total;
	bool open;               /* a window is running */
	uint64_t window_end_ms;
	uint64_t held;           /* refusals in this window not yet reported */
	uint64_t first_ms, last_ms;
};

struct sbx_tally {
	uint64_t window_ms;
	size_t n;
	struct sbx_tally_entry e[SBX_TALLY_REASONS];
};

/* Count one refusal for @reason at @now_ms; true when it is to be reported
 * now, on its own. */
bool sbx_tally_add(struct sbx_tally *t, const char *reason, uint64_t now_ms);

/* Report the held refusals of every window that ended by @now_ms (of every
 * window when @all) through @fn: reason, count, first and last time. */
void sbx_tally_flush(struct sbx_tally *t, uint64_t now_ms, bool all,
		     void (*fn)(void *ud, const char *reason, uint64_t count, uint64_t first_ms,
				uint64_t last_ms),
		     void *ud);

/* {reason: total} of every refusal counted; a new reference. */
json_t *sbx_tally_json(const struct sbx_tally *t);
void sbx_tally_free(struct sbx_tally *t);

/* Decisions as the proxy records them (events and manifest). */
struct sbx_proxy_hooks {
	/* One event: "net_allowed", "net_refused" or "net_closed", with
	 * @detail (stolen) holding host, port, address, reason, bytes. */
	void (*event)(void *ud, const char *name, json_t *detail);
	/* The events stream's clock (its t_ms), for the times in aggregated
	 * refusals; NULL: milliseconds since the proxy started. */
	uint64_t (*t_ms)(void *ud);
	void *ud;
};

struct sbx_proxy;

/*
 * sbx_proxy_new() - a proxy serving @listen_fd (taken; closed by
 * sbx_proxy_free() or on error) under @np, which must outlive it.
 * Errors: SBX_EXIT_SOFTWARE (timerfd, pipe).
 */
int sbx_proxy_new(const struct sbx_netprofile *np, int listen_fd,
		  const struct sbx_proxy_hooks *hooks, struct sbx_proxy **out, struct sbx_error *err);

/* The most fds sbx_proxy_pollfds() lists. */
#define SBX_PROXY_POLL_MAX 131

/* sbx_proxy_pollfds() - fill @pfd (room for SBX_PROXY_POLL_MAX) with the
 * fds to wait for and their events (no epoll set: the kernel counts its
 * watches per uid); returns how many. */
size_t sbx_proxy_pollfds(struct sbx_proxy *p, struct pollfd *pfd);

/* sbx_proxy_dispatch() - handle what poll(2) found ready among the @n
 * entries that the last sbx_proxy_pollfds() filled, without blocking. */
void sbx_proxy_dispatch(struct sbx_proxy *p, const struct pollfd *pfd, size_t n);

/* Per-connection timeouts: name resolution and connect (ms), and the
 * time a client may take to send its request head.  Defaults 5000,
 * 10000, 30000; tests shorten them.  A relayed connection on which nothing
 * moves for 300 s is closed. */
void sbx_proxy_set_timeouts(struct sbx_proxy *p, uint64_t resolve_ms, uint64_t connect_ms,
			    uint64_t head_ms);

/* The port whose tunnels must open with a ClientHello naming their host:
 * 443; tests move it to a port of their own. */
void sbx_proxy_set_tls_port(struct sbx_proxy *p, uint16_t port);

/*
 * sbx_proxy_summary() - the manifest's "network" object: counts of
 * connections allowed and refused, bytes up and down, and the first
 * decisions in order (bounded; "decisions_truncated" says when more were
 * made).  A new reference.
 */
json_t *sbx_proxy_summary(const struct sbx_proxy *p);

/* Close the listener and every connection (each is recorded and gets its
 * net_closed event); call before sbx_proxy_summary() at the run's end. */
void sbx_proxy_stop(struct sbx_proxy *p);

/* Stop, forget pending lookups (their threads free them), free @p.  NULL
 * is a no-op. */
void sbx_proxy_free(struct sbx_proxy *p);

#endif
