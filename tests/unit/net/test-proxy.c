/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-proxy.c - the proxy's event loop against servers on this host's
 * loopback, reached only because the test profile names 127.0.0.1 in
 * allow_cidrs.  The parsers and the refusal tally are tested on their own
 * in test-proxy-policy.c.
 */
#include "config.h"

#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "proxy.h"

#include "client-hello.h"

/* ---- the loop against loopback servers ----------------------------------- */

static int listen_on(uint16_t *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static int connect_to(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* An upstream server: for each connection, read a request head and answer
 * "ok <first line>", or echo (for tunnels) until EOF. */
struct server {
	int fd;
	uint16_t port;
	bool echo;
	size_t bulk;     /* answer with this many bytes */
	int conns;
	size_t echoed;   /* bytes an echo server received */
	pthread_t t;
};

static void *serve(void *arg)
{
	struct server *s = arg;
	int c;

	while ((c = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		char buf[8192];
		size_t len = 0;
		ssize_t n;

		s->conns++;
		if (s->echo) {
			while ((n = read(c, buf, sizeof(buf))) > 0) {
				s->echoed += (size_t)n;
				sbx_write_all(c, buf, (size_t)n);
			}
			close(c);
			continue;
		}
		while (len < sizeof(buf) - 1 && (n = read(c, buf + len, sizeof(buf) - 1 - len)) > 0) {
			len += (size_t)n;
			buf[len] = '\0';
			if (strstr(buf, "\r\n\r\n"))
				break;
		}
		buf[len] = '\0';
		if (s->bulk) {
			char *blk = sbx_xcalloc(1, 65536);
			size_t left = s->bulk;
			dprintf(c, "HTTP/1.0 200 OK\r\nContent-Length: %zu\r\n\r\n", s->bulk);
			while (left) {
				size_t k = left < 65536 ? left : 65536;
				if (sbx_write_all(c, blk, k) < 0)
					break;
				left -= k;
			}
			free(blk);
		} else {
			char *eol = strstr(buf, "\r\n");
			if (eol)
				*eol = '\0';
			dprintf(c, "HTTP/1.0 200 OK\r\n\r\nok %s|%s", buf, eol ? eol + 2 : "");
		}
		close(c);
	}
	return NULL;
}

static void server_start(struct server *s)
{
	s->fd = listen_on(&s->port);
	assert_int_equal(pthread_create(&s->t, NULL, serve, s), 0);
}

static void server_stop(struct server *s)
{
	shutdown(s->fd, SHUT_RDWR);
	pthread_join(s->t, NULL);
	close(s->fd);
}

/* One exchange through the proxy, on a thread while the main thread runs
 * the loop. */
struct exchange {
	uint16_t proxy_port;
	const char *send;
	size_t send_len;
	size_t split;        /* send this much first, the rest a little later */
	bool half_close;
	char reply[65536];
	size_t reply_len;
	uint64_t bulk_read;
	bool done;
	pthread_t t;
};

static void *client(void *arg)
{
	struct exchange *x = arg;
	int fd = connect_to(x->proxy_port);
	ssize_t n;

	if (x->split) {
		sbx_write_all(fd, x->send, x->split);
		usleep(50000);
	}
	sbx_write_all(fd, x->send + x->split, x->send_len - x->split);
	if (x->half_close)
		shutdown(fd, SHUT_WR);
	for (;;) {
		char buf[65536];
		size_t keep;

		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		keep = sizeof(x->reply) - 1 - x->reply_len;
		if (keep > (size_t)n)
			keep = (size_t)n;
		memcpy(x->reply + x->reply_len, buf, keep);
		x->reply_len += keep;
		x->bulk_read += (uint64_t)n;
	}
	x->reply[x->reply_len] = '\0';
	close(fd);
	__atomic_store_n(&x->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void run_until_done(struct sbx_proxy *p, struct exchange *x)
{
	uint64_t deadline = sbx_now_mono_ns() + 10ull * 1000000000ull;

	struct pollfd pfd[SBX_PROXY_POLL_MAX];
	size_t n;

	while (!__atomic_load_n(&x->done, __ATOMIC_ACQUIRE)) {
		assert_true(sbx_now_mono_ns() < deadline);
		n = sbx_proxy_pollfds(p, pfd);
		if (poll(pfd, n, 50) > 0)
			sbx_proxy_dispatch(p, pfd, n);
	}
	pthread_join(x->t, NULL);
	n = sbx_proxy_pollfds(p, pfd);
	if (poll(pfd, n, 0) > 0)
		sbx_proxy_dispatch(p, pfd, n);
}

static void exchange(struct sbx_proxy *p, uint16_t proxy_port, const char *req,
		     struct exchange *x)
{
	memset(x, 0, sizeof(*x));
	x->proxy_port = proxy_port;
	x->send = req;
	x->send_len = strlen(req);
	assert_int_equal(pthread_create(&x->t, NULL, client, x), 0);
	run_until_done(p, x);
}

struct events {
	int allowed, refused, closed;
	char last_reason[256];
};

static void on_event(void *ud, const char *name, json_t *detail)
{
	struct events *e = ud;
	const char *r = json_string_value(json_object_get(detail, "reason"));

	if (!strcmp(name, "net_allowed"))
		e->allowed++;
	else if (!strcmp(name, "net_refused"))
		e->refused++;
	else if (!strcmp(name, "net_closed"))
		e->closed++;
	if (r)
		snprintf(e->last_reason, sizeof(e->last_reason), "%s", r);
	json_decref(detail);
}

static void test_loop(void **state)
{
	struct server up = { 0 }, echo = { .echo = true };
	struct events ev = { 0 };
	struct sbx_proxy_hooks hooks = { .event = on_event, .ud = &ev };
	struct sbx_error err = { 0 };
	struct sbx_proxy *p = NULL;
	struct exchange x;
	uint16_t pport, ports[1], eports[1], nports[1] = { 1 };
	char *cidrs[] = { "127.0.0.1/32", NULL };
	struct sbx_egress_rule rules[3];
	struct sbx_netprofile np = { .allow = rules, .n_allow = 3, .allow_cidrs = cidrs,
				     .max_connections = 12 };
	char req[512];
	json_t *sum;
	int lfd;

	(void)state;
	server_start(&up);
	server_start(&echo);
	ports[0] = up.port;
	eports[0] = echo.port;
	rules[0] = (struct sbx_egress_rule){ .host = "127.0.0.1", .ports = ports, .n_ports = 1 };
	rules[1] = (struct sbx_egress_rule){ .host = "localhost", .ports = eports, .n_ports = 1 };
	rules[2] = (struct sbx_egress_rule){ .host = "127.0.0.2", .ports = nports, .n_ports = 1 };
	lfd = listen_on(&pport);
	assert_int_equal(sbx_proxy_new(&np, lfd, &hooks, &p, &err), 0);

	/* 1. Plain HTTP, rewritten to origin form. */
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/a?b HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
		 "Proxy-Connection: keep-alive\r\n\r\n", up.port, up.port);
	exchange(p, pport, req, &x);
	assert_non_null(strstr(x.reply, "ok GET /a?b HTTP/1.1|"));
	assert_non_null(strstr(x.reply, "Connection: close"));
	assert_null(strstr(x.reply, "Proxy-Connection"));
	assert_int_equal(ev.allowed, 1);

	/* 2. CONNECT by name (resolved on a helper thread): a tunnel. */
	snprintf(req, sizeof(req), "CONNECT localhost:%u HTTP/1.1\r\nHost: localhost:%u\r\n\r\n"
		 "ping through the tunnel", echo.port, echo.port);
	memset(&x, 0, sizeof(x));
	x.proxy_port = pport;
	x.send = req;
	x.send_len = strlen(req);
	x.half_close = true;
	assert_int_equal(pthread_create(&x.t, NULL, client, &x), 0);
	run_until_done(p, &x);
	assert_non_null(strstr(x.reply, "HTTP/1.1 200 Connection established\r\n\r\nping through"));
	assert_int_equal(ev.allowed, 2);

	/* 3. Not on the allowlist. */
	exchange(p, pport, "CONNECT example.org:443 HTTP/1.1\r\n\r\n", &x);
	assert_non_null(strstr(x.reply, "HTTP/1.1 403 Forbidden"));
	assert_string_equal(ev.last_reason, "host not in the network profile's allowlist");

	/* 4. Listed host, unlisted port. */
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", echo.port);
	exchange(p, pport, req, &x);
	assert_non_null(strstr(x.reply, "HTTP/1.1 403"));
	assert_string_equal(ev.last_reason, "port not allowed for this host");

	/* 5. Listed, but the address is loopback outside allow_cidrs. */
	exchange(p, pport, "CONNECT 127.0.0.2:1 HTTP/1.1\r\n\r\n", &x);
	assert_non_null(strstr(x.reply, "HTTP/1.1 403"));
	assert_string_equal(ev.last_reason, "address 127.0.0.2 is loopback");

	/* 6. Host header mismatch, and garbage. */
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.1\r\nHost: example.org\r\n\r\n",
		 up.port);
	exchange(p, pport, req, &x);
	assert_non_null(strstr(x.reply, "HTTP/1.1 400"));
	exchange(p, pport, "\x16\x03\x01 hello\r\n\r\n", &x);
	assert_non_null(strstr(x.reply, "HTTP/1.1 400"));

	/* 7. The upstream refuses the connection: 502. */
	{
		uint16_t dead;
		int dfd = listen_on(&dead);
		close(dfd); /* nothing listens there any more */
		ports[0] = dead;
		snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
			 dead, dead);
		exchange(p, pport, req, &x);
		assert_non_null(strstr(x.reply, "HTTP/1.1 502"));
		ports[0] = up.port;
	}

	/* 8. The upstream server saw exactly the allowed connections. */
	assert_int_equal(up.conns, 1);
	assert_int_equal(echo.conns, 1);

	sbx_proxy_stop(p);
	sum = sbx_proxy_summary(p);
	assert_int_equal(json_integer_value(json_object_get(sum, "connections_allowed")), 3);
	assert_int_equal(json_integer_value(json_object_get(sum, "connections_refused")), 5);
	assert_true(json_integer_value(json_object_get(sum, "bytes_down")) > 0);
	assert_true(json_integer_value(json_object_get(sum, "bytes_up")) > 0);
	assert_int_equal(json_array_size(json_object_get(sum, "decisions")), 8);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(sum, "decisions"), 2), "decision")),
			    "refused");
	json_decref(sum);
	sbx_proxy_free(p);
	server_stop(&up);
	server_stop(&echo);
}

/* Tunnels to the TLS port: the ClientHello's name must be the CONNECT's
 * host, and nothing reaches the upstream otherwise.  The echo server
 * stands in for a TLS server: what it echoes is what the proxy relayed. */
static void test_tunnel_sni(void **state)
{
	static const uint8_t alert[] = { 21, 3, 3, 0, 2, 2, 49 };
	static const char est[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	struct server echo = { .echo = true };
	struct events ev = { 0 };
	struct sbx_proxy_hooks hooks = { .event = on_event, .ud = &ev };
	struct sbx_error err = { 0 };
	struct sbx_proxy *p = NULL;
	static struct exchange x;
	static struct buf req, hello;
	uint16_t pport, eports[1];
	char *cidrs[] = { "127.0.0.1/32", NULL };
	struct sbx_egress_rule rules[2];
	struct sbx_netprofile np = { .allow = rules, .n_allow = 2, .allow_cidrs = cidrs };
	char head[256];
	json_t *sum;
	int lfd;
	static const struct {
		const char *host, *sni; /* sni NULL: none */
		size_t split;           /* where the client pauses, 0: head and hello at once */
		const char *reason;     /* NULL: relayed */
	} cases[] = {
		{ "localhost", "localhost", 0, NULL },
		{ "localhost", "LocalHost", 0, NULL },
		{ "localhost", "localhost", 1, NULL },   /* the ClientHello in pieces */
		{ "localhost", "localhost", 60, NULL },
		{ "localhost", "other.test", 0, "TLS server name other.test is not the tunnel's host" },
		{ "localhost", "other.test", 60, "TLS server name other.test is not the tunnel's host" },
		{ "localhost", NULL, 0, "TLS ClientHello without a server name" },
		{ "localhost", "localhost.", 0, "TLS server name with a trailing dot" },
		{ "127.0.0.1", NULL, 0, NULL },
		{ "127.0.0.1", "localhost", 0, "TLS server name localhost on a tunnel to an address" },
	};
	int relayed = 0, refused = 0;

	(void)state;
	server_start(&echo);
	eports[0] = echo.port;
	rules[0] = (struct sbx_egress_rule){ .host = "localhost", .ports = eports, .n_ports = 1 };
	rules[1] = (struct sbx_egress_rule){ .host = "127.0.0.1", .ports = eports, .n_ports = 1 };
	lfd = listen_on(&pport);
	assert_int_equal(sbx_proxy_new(&np, lfd, &hooks, &p, &err), 0);
	sbx_proxy_set_tls_port(p, echo.port);

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t echoed = echo.echoed;
		int n = snprintf(head, sizeof(head), "CONNECT %s:%u HTTP/1.1\r\n\r\n", cases[i].host,
				 echo.port);

		req.n = hello.n = 0;
		hello_for(&hello, cases[i].sni);
		put(&req, head, (size_t)n);
		put(&req, hello.b, hello.n);
		memset(&x, 0, sizeof(x));
		x.proxy_port = pport;
		x.send = (const char *)req.b;
		x.send_len = req.n;
		x.split = cases[i].split ? (size_t)n + cases[i].split : 0;
		x.half_close = true;
		assert_int_equal(pthread_create(&x.t, NULL, client, &x), 0);
		run_until_done(p, &x);
		assert_true(x.reply_len >= sizeof(est) - 1);
		if (memcmp(x.reply, est, sizeof(est) - 1))
			fail_msg("case %zu: %.60s", i, x.reply);
		if (!cases[i].reason) {
			/* The ClientHello went upstream first, whole. */
			assert_int_equal(x.reply_len, sizeof(est) - 1 + hello.n);
			assert_memory_equal(x.reply + sizeof(est) - 1, hello.b, hello.n);
			assert_int_equal(echo.echoed - echoed, hello.n);
			relayed++;
			continue;
		}
		if (strcmp(ev.last_reason, cases[i].reason))
			fail_msg("case %zu: reason \"%s\", want \"%s\"", i, ev.last_reason, cases[i].reason);
		assert_int_equal(x.reply_len, sizeof(est) - 1 + sizeof(alert));
		assert_memory_equal(x.reply + sizeof(est) - 1, alert, sizeof(alert));
		assert_int_equal(echo.echoed, echoed);
		refused++;
	}

	/* Bytes that are not TLS: refused at the first byte, no alert. */
	snprintf(head, sizeof(head), "CONNECT localhost:%u HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n",
		 echo.port);
	exchange(p, pport, head, &x);
	assert_string_equal(x.reply, est);
	assert_string_equal(ev.last_reason, "not a TLS ClientHello");
	refused++;

	/* Other ports are tunnels without a look inside. */
	sbx_proxy_set_tls_port(p, 443);
	snprintf(head, sizeof(head), "CONNECT localhost:%u HTTP/1.1\r\n\r\nanything", echo.port);
	memset(&x, 0, sizeof(x));
	x.proxy_port = pport;
	x.send = head;
	x.send_len = strlen(head);
	x.half_close = true;
	assert_int_equal(pthread_create(&x.t, NULL, client, &x), 0);
	run_until_done(p, &x);
	assert_non_null(strstr(x.reply, "\r\n\r\nanything"));
	relayed++;

	sbx_proxy_stop(p);
	sum = sbx_proxy_summary(p);
	assert_int_equal(json_integer_value(json_object_get(sum, "connections_allowed")), relayed);
	assert_int_equal(json_integer_value(json_object_get(sum, "connections_refused")), refused);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(sum, "refused_by_reason"), "not a TLS ClientHello")),
			 1);
	json_decref(sum);
	sbx_proxy_free(p);
	server_stop(&echo);
}

/* "connect": false refuses every tunnel; a port list all others. */
static void test_connect_key(void **state)
{
	struct events ev = { 0 };
	struct sbx_proxy_hooks hooks = { .event = on_event, .ud = &ev };
	struct sbx_error err = { 0 };
	struct sbx_proxy *p = NULL;
	struct exchange x;
	uint16_t pport, ports[] = { 443, 8443 }, cports[] = { 8443 };
	struct sbx_egress_rule rule = { .host = "a.test", .ports = ports, .n_ports = 2 };
	struct sbx_netprofile np = { .allow = &rule, .n_allow = 1, .connect = SBX_CONNECT_NONE };
	int lfd;

	(void)state;
	lfd = listen_on(&pport);
	assert_int_equal(sbx_proxy_new(&np, lfd, &hooks, &p, &err), 0);
	exchange(p, pport, "CONNECT a.test:443 HTTP/1.1\r\n\r\n", &x);
	assert_non_null(strstr(x.reply, "HTTP/1.1 403"));
	assert_string_equal(ev.last_reason, "CONNECT not allowed by the network profile");
	np.connect = SBX_CONNECT_PORTS;
	np.connect_ports = cports;
	np.n_connect_ports = 1;
	exchange(p, pport, "CONNECT a.test:443 HTTP/1.1\r\n\r\n", &x);
	assert_non_null(strstr(x.reply, "HTTP/1.1 403"));
	assert_string_equal(ev.last_reason, "CONNECT not allowed to this port");
	sbx_proxy_free(p);
}

/* max_connections and max_bytes. */
static void test_caps(void **state)
{
	struct server up = { .bulk = 1 << 20 };
	struct events ev = { 0 };
	struct sbx_proxy_hooks hooks = { .event = on_event, .ud = &ev };
	struct sbx_error err = { 0 };
	struct sbx_proxy *p = NULL;
	struct exchange x;
	uint16_t pport, ports[1];
	char *cidrs[] = { "127.0.0.0/8", NULL };
	struct sbx_egress_rule rule;
	struct sbx_netprofile np = { .allow = &rule, .n_allow = 1, .allow_cidrs = cidrs,
				     .max_connections = 2, .max_bytes = 300000 };
	char req[256];
	int lfd;

	(void)state;
	server_start(&up);
	ports[0] = up.port;
	rule = (struct sbx_egress_rule){ .host = "127.0.0.1", .ports = ports, .n_ports = 1 };
	lfd = listen_on(&pport);
	assert_int_equal(sbx_proxy_new(&np, lfd, &hooks, &p, &err), 0);
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
		 up.port, up.port);

	/* 1 MiB offered, 300000 bytes allowed in all: cut short. */
	exchange(p, pport, req, &x);
	assert_true(x.bulk_read > 0);
	assert_true(x.bulk_read <= 300000);
	assert_string_equal(ev.last_reason, "max_bytes reached");
	/* The budget is spent: the next connection is refused. */
	exchange(p, pport, req, &x);
	assert_non_null(strstr(x.reply, "403"));
	assert_non_null(strstr(x.reply, "max_bytes reached"));
	/* And the third is over max_connections. */
	exchange(p, pport, req, &x);
	assert_non_null(strstr(x.reply, "max_connections reached"));
	sbx_proxy_free(p);
	server_stop(&up);
}

/* A client that never finishes its request head is dropped at the
 * deadline, without an upstream connection. */
static void test_head_timeout(void **state)
{
	struct sbx_error err = { 0 };
	struct sbx_proxy *p = NULL;
	struct exchange x;
	struct sbx_netprofile np = { 0 };
	uint16_t pport;
	uint64_t t0;
	int lfd;

	(void)state;
	lfd = listen_on(&pport);
	assert_int_equal(sbx_proxy_new(&np, lfd, NULL, &p, &err), 0);
	sbx_proxy_set_timeouts(p, 5000, 5000, 300);
	t0 = sbx_now_mono_ns();
	exchange(p, pport, "GET http://a.test/ HTTP/1.1\r\nHost: a.t", &x);
	assert_int_equal(x.reply_len, 0);
	assert_true(sbx_now_mono_ns() - t0 >= 250ull * 1000000ull);
	assert_true(sbx_now_mono_ns() - t0 < 5000ull * 1000000ull);
	sbx_proxy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_tunnel_sni),
		cmocka_unit_test(test_connect_key),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_head_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
