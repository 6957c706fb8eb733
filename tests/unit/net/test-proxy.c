/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-proxy.c - the proxy's request parser (table) and its event loop
 * against servers on this host's loopback, reached only because the test
 * profile names 127.0.0.1 in allow_cidrs.
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

/* ---- parser ------------------------------------------------------------ */

static const struct {
	const char *req;
	int want;            /* 0 more, 1 ok, else status */
	bool connect;
	const char *host;
	uint16_t port;
	const char *upstream; /* plain HTTP: the rewritten head */
} parse_cases[] = {
	{ "CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n", 1, true, "pypi.org", 443, NULL },
	{ "CONNECT PyPI.org.:443 HTTP/1.1\r\n\r\n", 1, true, "pypi.org", 443, NULL },
	{ "CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", 1, true, "2001:db8::1", 443, NULL },
	{ "CONNECT 198.51.100.2:8443 HTTP/1.0\r\n\r\n", 1, true, "198.51.100.2", 8443, NULL },
	{ "GET http://a.test:8080/x?y=1 HTTP/1.1\r\nHost: a.test:8080\r\nAccept: */*\r\n\r\n", 1, false,
	  "a.test", 8080,
	  "GET /x?y=1 HTTP/1.1\r\nHost: a.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n" },
	{ "GET http://a.test HTTP/1.1\r\nHost: A.TEST\r\nProxy-Connection: keep-alive\r\n"
	  "Connection: keep-alive\r\nProxy-Authorization: x\r\n\r\n",
	  1, false, "a.test", 80, "GET / HTTP/1.1\r\nHost: A.TEST\r\nConnection: close\r\n\r\n" },
	{ "HEAD HTTP://a.test?q HTTP/1.0\r\nhost: a.test:80\r\n\r\n", 1, false, "a.test", 80,
	  "HEAD /?q HTTP/1.0\r\nhost: a.test:80\r\nConnection: close\r\n\r\n" },
	{ "POST http://a.test/p HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n\r\nhello", 1, false,
	  "a.test", 80, "POST /p HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\nConnection: close\r\n\r\n" },
	/* incomplete */
	{ "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n", 0, false, NULL, 0, NULL },
	{ "CONN", 0, false, NULL, 0, NULL },
	/* Host header disagreeing with the target */
	{ "GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "GET http://a.test/ HTTP/1.1\r\nHost: a.test:8080\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "GET http://a.test:8080/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "CONNECT a.test:443 HTTP/1.1\r\nHost: b.test:443\r\n\r\n", 400, true, NULL, 0, NULL },
	{ "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "GET http://a.test/ HTTP/1.1\r\n\r\n", 400, false, NULL, 0, NULL },
	/* not a proxy request, or not one we speak */
	{ "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "GET https://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 501, false, NULL, 0, NULL },
	{ "GET ftp://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "GET http://u:p@a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "GET http://a.test/#f HTTP/1.1\r\nHost: a.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "CONNECT a.test HTTP/1.1\r\n\r\n", 400, true, NULL, 0, NULL },
	{ "CONNECT a.test:0 HTTP/1.1\r\n\r\n", 400, true, NULL, 0, NULL },
	{ "CONNECT a.test:65536 HTTP/1.1\r\n\r\n", 400, true, NULL, 0, NULL },
	{ "CONNECT 2001:db8::1:443 HTTP/1.1\r\n\r\n", 400, true, NULL, 0, NULL },
	{ "CONNECT 2130706433:443 HTTP/1.1\r\n\r\n", 400, true, NULL, 0, NULL },
	{ "GET http://a.test/ HTTP/2.0\r\nHost: a.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n", 411,
	  false, NULL, 0, NULL },
	{ "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	  400, false, NULL, 0, NULL },
	{ "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: -1\r\n\r\n", 400, false,
	  NULL, 0, NULL },
	/* garbage and smuggling shapes */
	{ "\x16\x03\x01\x02\x01\x01\x01\xfc\x03\x03\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "GET http://a.test/ HTTP/1.1\nHost: a.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n folded\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "GET http://a.test/ HTTP/1.1\r\nHost a.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "GET  http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "G(T http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX: a\x01z\r\n\r\n", 400, false, NULL, 0, NULL },
	{ "\r\n\r\n", 400, false, NULL, 0, NULL },
};

static void test_parse_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(parse_cases); i++) {
		struct sbx_proxy_request req;
		const char *why = NULL;
		int r = sbx_proxy_parse(parse_cases[i].req, strlen(parse_cases[i].req), &req, &why);

		if (r != parse_cases[i].want)
			fail_msg("case %zu (%.40s): got %d (%s), want %d", i, parse_cases[i].req, r,
				 why ? why : "-", parse_cases[i].want);
		if (r > 1)
			assert_non_null(why);
		if (r != 1)
			continue;
		assert_int_equal(req.connect, parse_cases[i].connect);
		assert_string_equal(req.host, parse_cases[i].host);
		assert_int_equal(req.port, parse_cases[i].port);
		if (parse_cases[i].upstream) {
			assert_int_equal(req.upstream_len, strlen(parse_cases[i].upstream));
			assert_memory_equal(req.upstream, parse_cases[i].upstream, req.upstream_len);
		} else {
			assert_null(req.upstream);
		}
		sbx_proxy_request_free(&req);
	}
}

static void test_parse_sizes(void **state)
{
	struct sbx_proxy_request req;
	const char *why;
	char *big = sbx_xmalloc(SBX_PROXY_HEAD_MAX + 100);
	static const char start[] = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX: ";

	(void)state;
	memcpy(big, start, sizeof(start) - 1);
	memset(big + sizeof(start) - 1, 'a', SBX_PROXY_HEAD_MAX + 100 - (sizeof(start) - 1));
	/* Less than the cap without an end: wait; at the cap: 431. */
	assert_int_equal(sbx_proxy_parse(big, SBX_PROXY_HEAD_MAX - 1, &req, &why), 0);
	assert_int_equal(sbx_proxy_parse(big, SBX_PROXY_HEAD_MAX, &req, &why), 431);
	assert_int_equal(sbx_proxy_parse(big, SBX_PROXY_HEAD_MAX + 100, &req, &why), 431);
	/* An end just past the cap is still too large. */
	memcpy(big + SBX_PROXY_HEAD_MAX - 2, "\r\n\r\n", 4);
	assert_int_equal(sbx_proxy_parse(big, SBX_PROXY_HEAD_MAX + 2, &req, &why), 431);
	/* The head's length does not include the body that follows. */
	{
		static const char r[] = "CONNECT a.test:443 HTTP/1.1\r\n\r\n\x16\x03\x01";
		assert_int_equal(sbx_proxy_parse(r, sizeof(r) - 1, &req, &why), 1);
		assert_int_equal(req.head_len, sizeof(r) - 1 - 3);
		sbx_proxy_request_free(&req);
	}
	/* A NUL in the head, or before its end, is refused at once; after
	 * the head it belongs to the tunnel. */
	assert_int_equal(sbx_proxy_parse("GET \0", 5, &req, &why), 400);
	{
		static const char r[] = "CONNECT a.test:443 HTTP/1.1\r\nX: \0\r\n\r\n";
		assert_int_equal(sbx_proxy_parse(r, sizeof(r) - 1, &req, &why), 400);
	}
	{
		static const char r[] = "CONNECT a.test:443 HTTP/1.1\r\n\r\n\x16\x03\x01\x00\x05";
		assert_int_equal(sbx_proxy_parse(r, sizeof(r) - 1, &req, &why), 1);
		assert_int_equal(req.head_len, sizeof(r) - 1 - 5);
		sbx_proxy_request_free(&req);
	}
	free(big);
}

/* ---- the ClientHello of a tunnel ------------------------------------------ */

struct buf {
	uint8_t b[2 * SBX_TLS_PEEK_MAX];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put16(struct buf *b, size_t v)
{
	put(b, (uint8_t[]){ (uint8_t)(v >> 8), (uint8_t)v }, 2);
}

/* One extension: type, then its body. */
static void ext(struct buf *e, unsigned type, const void *body, size_t n)
{
	put16(e, type);
	put16(e, n);
	put(e, body, n);
}

/* A server_name extension with one entry: @name of @name_type. */
static void sni(struct buf *e, const char *name, unsigned name_type)
{
	struct buf body = { .n = 0 };
	size_t len = strlen(name);

	put16(&body, len + 3);
	put(&body, (uint8_t[]){ (uint8_t)name_type }, 1);
	put16(&body, len);
	put(&body, name, len);
	ext(e, 0, body.b, body.n);
}

/* A ClientHello handshake message (header included) with @exts, or
 * without an extension block when @exts is NULL. */
static void client_hello(struct buf *hs, const struct buf *exts, unsigned version)
{
	struct buf body = { .n = 0 };
	static const uint8_t random[32] = { 1, 2, 3 };

	put16(&body, version);
	put(&body, random, sizeof(random));
	put(&body, (uint8_t[]){ 0 }, 1);                 /* session id */
	put16(&body, 4);
	put(&body, (uint8_t[]){ 0x13, 0x01, 0x13, 0x02 }, 4); /* cipher suites */
	put(&body, (uint8_t[]){ 1, 0 }, 2);              /* compression: null */
	if (exts) {
		put16(&body, exts->n);
		put(&body, exts->b, exts->n);
	}
	put(hs, (uint8_t[]){ 1, (uint8_t)(body.n >> 16), (uint8_t)(body.n >> 8), (uint8_t)body.n },
	    4);
	put(hs, body.b, body.n);
}

/* @hs in records of at most @chunk bytes. */
static void records(struct buf *out, const struct buf *hs, size_t chunk)
{
	for (size_t off = 0; off < hs->n; off += chunk) {
		size_t n = hs->n - off < chunk ? hs->n - off : chunk;
		put(out, (uint8_t[]){ 22, 3, 1 }, 3);
		put16(out, n);
		put(out, hs->b + off, n);
	}
}

/* A whole ClientHello in one record naming @name (NULL: no SNI). */
static void hello_for(struct buf *out, const char *name)
{
	struct buf e = { .n = 0 }, hs = { .n = 0 };

	ext(&e, 0x000a, (uint8_t[]){ 0, 2, 0, 0x1d }, 4); /* supported_groups */
	if (name)
		sni(&e, name, 0);
	client_hello(&hs, &e, 0x0303);
	records(out, &hs, 16384);
}

static int tls(const struct buf *b, char name[SBX_HOST_MAX], size_t *used, const char **why)
{
	*used = 0;
	return sbx_tls_client_hello(b->b, b->n, name, used, why);
}

static void expect_bad(const struct buf *b, const char *why_want)
{
	char name[SBX_HOST_MAX];
	const char *why;
	size_t used;
	int r = tls(b, name, &used, &why);

	if (r != SBX_TLS_BAD || strcmp(why, why_want))
		fail_msg("got %d (%s), want refusal \"%s\"", r, r == SBX_TLS_BAD ? why : "-", why_want);
}

static void test_tls_hello(void **state)
{
	static struct buf b, e, hs;
	char name[SBX_HOST_MAX];
	const char *why;
	size_t used;

	(void)state;
	/* A plain one, then one in another case: the name lowercased. */
	b.n = 0;
	hello_for(&b, "allowed.test");
	assert_int_equal(tls(&b, name, &used, &why), SBX_TLS_HELLO);
	assert_string_equal(name, "allowed.test");
	assert_int_equal(used, b.n);
	/* Every prefix asks for more, never decides early. */
	for (size_t n = 0; n < b.n; n++) {
		int r = sbx_tls_client_hello(b.b, n, name, &used, &why);
		if (r != SBX_TLS_MORE)
			fail_msg("prefix %zu of %zu: got %d (%s)", n, b.n, r, why ? why : "-");
	}
	b.n = 0;
	hello_for(&b, "Allowed.TEST");
	assert_int_equal(tls(&b, name, &used, &why), SBX_TLS_HELLO);
	assert_string_equal(name, "allowed.test");

	/* Bytes after the ClientHello's records (early data) are not its. */
	put(&b, (uint8_t[]){ 23, 3, 3, 0, 1, 0 }, 6);
	assert_int_equal(tls(&b, name, &used, &why), SBX_TLS_HELLO);
	assert_int_equal(used, b.n - 6);

	/* What a real client sends (openssl s_client, kept as fuzz seeds). */
	{
		static const struct { const char *file, *name; } real[] = {
			{ "openssl-sni", "allowed.sbx-test" },
			{ "openssl-nosni", "" },
			{ "openssl-tls12", "a.test" },
		};
		for (size_t i = 0; i < ARRAY_SIZE(real); i++) {
			_cleanup_free_ char *path = sbx_xasprintf(
				"%s/tests/fuzz/seed-tls-hello/%s", SBX_SRCDIR, real[i].file);
			FILE *f = fopen(path, "rb");

			assert_non_null(f);
			b.n = fread(b.b, 1, sizeof(b.b), f);
			fclose(f);
			assert_int_equal(tls(&b, name, &used, &why), SBX_TLS_HELLO);
			assert_string_equal(name, real[i].name);
			assert_int_equal(used, b.n);
		}
	}

	/* No server name: without extensions, or with others only. */
	b.n = 0;
	hello_for(&b, NULL);
	assert_int_equal(tls(&b, name, &used, &why), SBX_TLS_HELLO);
	assert_string_equal(name, "");
	b.n = hs.n = 0;
	client_hello(&hs, NULL, 0x0301);
	records(&b, &hs, 16384);
	assert_int_equal(tls(&b, name, &used, &why), SBX_TLS_HELLO);
	assert_string_equal(name, "");

	/* Reassembled from records split oddly, up to 8 of them. */
	b.n = hs.n = e.n = 0;
	sni(&e, "allowed.test", 0);
	client_hello(&hs, &e, 0x0303);
	records(&b, &hs, (hs.n + 7) / 8);
	assert_int_equal(tls(&b, name, &used, &why), SBX_TLS_HELLO);
	assert_string_equal(name, "allowed.test");
	b.n = 0;
	records(&b, &hs, (hs.n + 8) / 9);
	expect_bad(&b, "TLS ClientHello split into too many records");
	b.n = 0;
	records(&b, &hs, 1);
	expect_bad(&b, "TLS ClientHello split into too many records");

	/* Not TLS: judged on the first byte. */
	b.n = 0;
	put(&b, "G", 1);
	expect_bad(&b, "not a TLS ClientHello");
	b.n = 0;
	put(&b, (uint8_t[]){ 22, 2, 0 }, 3);
	expect_bad(&b, "not a TLS ClientHello");
	b.n = 0;
	put(&b, (uint8_t[]){ 22, 3, 3, 0, 4, 2, 0, 0, 0 }, 9); /* a ServerHello */
	expect_bad(&b, "not a TLS ClientHello");

	/* Names that are not one DNS name. */
	b.n = 0;
	hello_for(&b, "allowed.test.");
	expect_bad(&b, "TLS server name with a trailing dot");
	b.n = 0;
	hello_for(&b, "198.51.100.2");
	expect_bad(&b, "TLS server name is an IP address");
	b.n = 0;
	{
		static const char nul[] = "a.test\0b.test";
		struct buf body = { .n = 0 };
		put16(&body, sizeof(nul) - 1 + 3);
		put(&body, (uint8_t[]){ 0 }, 1);
		put16(&body, sizeof(nul) - 1);
		put(&body, nul, sizeof(nul) - 1);
		e.n = hs.n = 0;
		ext(&e, 0, body.b, body.n);
		client_hello(&hs, &e, 0x0303);
		records(&b, &hs, 16384);
		expect_bad(&b, "TLS server name is not a host name");
	}
	b.n = hs.n = e.n = 0;
	sni(&e, "a.test", 1);
	client_hello(&hs, &e, 0x0303);
	records(&b, &hs, 16384);
	expect_bad(&b, "malformed server_name extension");
	/* Two names in one list, two server_name extensions. */
	{
		struct buf body = { .n = 0 };
		put16(&body, 2 * (3 + 6));
		for (int i = 0; i < 2; i++) {
			put(&body, (uint8_t[]){ 0 }, 1);
			put16(&body, 6);
			put(&body, i ? "b.test" : "a.test", 6);
		}
		b.n = hs.n = e.n = 0;
		ext(&e, 0, body.b, body.n);
		client_hello(&hs, &e, 0x0303);
		records(&b, &hs, 16384);
		expect_bad(&b, "more than one TLS server name");
	}
	b.n = hs.n = e.n = 0;
	sni(&e, "a.test", 0);
	sni(&e, "b.test", 0);
	client_hello(&hs, &e, 0x0303);
	records(&b, &hs, 16384);
	expect_bad(&b, "TLS ClientHello repeats an extension");
	/* An empty server_name body. */
	b.n = hs.n = e.n = 0;
	ext(&e, 0, "", 0);
	client_hello(&hs, &e, 0x0303);
	records(&b, &hs, 16384);
	expect_bad(&b, "malformed server_name extension");
	/* Encrypted ClientHello: the name in the clear is not the one served. */
	b.n = hs.n = e.n = 0;
	sni(&e, "a.test", 0);
	ext(&e, 0xfe0d, (uint8_t[]){ 0 }, 1);
	client_hello(&hs, &e, 0x0303);
	records(&b, &hs, 16384);
	expect_bad(&b, "encrypted TLS ClientHello");

	/* Lengths that do not add up. */
	b.n = hs.n = e.n = 0;
	sni(&e, "a.test", 0);
	e.b[3] += 1; /* the extension claims one byte more than there is */
	client_hello(&hs, &e, 0x0303);
	records(&b, &hs, 16384);
	expect_bad(&b, "malformed TLS ClientHello extensions");
	b.n = hs.n = e.n = 0;
	sni(&e, "a.test", 0);
	client_hello(&hs, &e, 0x0303);
	put(&hs, "x", 1);
	hs.b[3] += 1; /* a byte after the extension block, inside the message */
	records(&b, &hs, 16384);
	expect_bad(&b, "malformed TLS ClientHello extensions");
	b.n = hs.n = 0;
	client_hello(&hs, NULL, 0x0303);
	put(&hs, (uint8_t[]){ 20, 0, 0, 0 }, 4); /* another message behind it */
	records(&b, &hs, 16384);
	expect_bad(&b, "data after the TLS ClientHello in its record");
	b.n = hs.n = 0;
	client_hello(&hs, NULL, 0x0300);
	records(&b, &hs, 16384);
	expect_bad(&b, "TLS ClientHello of an unsupported version");
	b.n = 0;
	put(&b, (uint8_t[]){ 22, 3, 1, 0, 0 }, 5);
	expect_bad(&b, "TLS record of a bad length");
	b.n = 0;
	put(&b, (uint8_t[]){ 22, 3, 1, 0x40, 1 }, 5);
	expect_bad(&b, "TLS record of a bad length");
	/* Records of two versions. */
	b.n = hs.n = 0;
	client_hello(&hs, NULL, 0x0303);
	records(&b, &hs, 20);
	b.b[20 + 5 + 2] = 3;
	expect_bad(&b, "TLS records of different versions");

	/* Size: a ClientHello filling one whole record passes; the bytes of
	 * one more record are more than the proxy reads. */
	b.n = hs.n = e.n = 0;
	{
		static uint8_t pad[16384];
		sni(&e, "a.test", 0);
		ext(&e, 21, pad, 16384 - 4 - 43 - 2 - e.n - 4);
		client_hello(&hs, &e, 0x0303);
		assert_int_equal(hs.n, 16384);
		records(&b, &hs, 16384);
		assert_int_equal(b.n, SBX_TLS_PEEK_MAX);
		assert_int_equal(tls(&b, name, &used, &why), SBX_TLS_HELLO);
		assert_string_equal(name, "a.test");
		b.n = 0;
		records(&b, &hs, 8192);
		expect_bad(&b, "TLS ClientHello too large");
	}
	/* A handshake message announcing more than a record holds. */
	b.n = 0;
	put(&b, (uint8_t[]){ 22, 3, 1, 0, 4, 1, 0, 0x40, 0 }, 9);
	expect_bad(&b, "TLS ClientHello too large");
}

/* ---- refusals counted per reason ------------------------------------------- */

struct held {
	int calls;
	char reason[64];
	uint64_t count, first, last, sum;
};

static void on_held(void *ud, const char *reason, uint64_t count, uint64_t first_ms,
		    uint64_t last_ms)
{
	struct held *h = ud;

	h->calls++;
	snprintf(h->reason, sizeof(h->reason), "%s", reason);
	h->count = count;
	h->first = first_ms;
	h->last = last_ms;
	h->sum += count;
}

static void test_tally(void **state)
{
	struct sbx_tally t = { .window_ms = 1000 };
	struct held h = { 0 };
	json_t *o;

	(void)state;
	/* The first of a reason is reported at once, the rest held. */
	assert_true(sbx_tally_add(&t, "a", 0));
	assert_false(sbx_tally_add(&t, "a", 10));
	assert_false(sbx_tally_add(&t, "a", 20));
	assert_true(sbx_tally_add(&t, "b", 15));
	sbx_tally_flush(&t, 999, false, on_held, &h);
	assert_int_equal(h.calls, 0);
	sbx_tally_flush(&t, 1000, false, on_held, &h);
	assert_int_equal(h.calls, 1);
	assert_string_equal(h.reason, "a");
	assert_int_equal(h.count, 2);
	assert_int_equal(h.first, 10);
	assert_int_equal(h.last, 20);
	/* Still refusing: the report opened the next window, so a steady
	 * flood is one report per window. */
	for (uint64_t ms = 1001; ms < 3000; ms++) {
		assert_false(sbx_tally_add(&t, "a", ms));
		sbx_tally_flush(&t, ms, false, on_held, &h);
	}
	assert_int_equal(h.calls, 2);
	assert_int_equal(h.count, 1000);
	sbx_tally_flush(&t, 3000, false, on_held, &h);
	assert_int_equal(h.calls, 3);
	assert_int_equal(h.count, 999);
	/* A quiet window closes; the next refusal is reported at once. */
	sbx_tally_flush(&t, 4000, false, on_held, &h);
	assert_int_equal(h.calls, 3);
	assert_true(sbx_tally_add(&t, "a", 4100));
	/* Also when no flush came between: a window ended with nothing held. */
	assert_true(sbx_tally_add(&t, "b", 5000));
	/* At the end everything held is reported. */
	assert_false(sbx_tally_add(&t, "b", 5001));
	sbx_tally_flush(&t, 5002, true, on_held, &h);
	assert_int_equal(h.calls, 4);
	assert_string_equal(h.reason, "b");
	o = sbx_tally_json(&t);
	assert_int_equal(json_integer_value(json_object_get(o, "a")), 2 + 1 + 1999 + 1);
	assert_int_equal(json_integer_value(json_object_get(o, "b")), 3);
	assert_int_equal(json_object_size(o), 2);
	json_decref(o);
	sbx_tally_free(&t);

	/* More reasons than the table tells apart: the rest are "other
	 * reasons", and nothing is lost. */
	t = (struct sbx_tally){ .window_ms = 1000 };
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 40; i++) {
		char r[32];
		snprintf(r, sizeof(r), "address 192.0.2.%d is documentation", i);
		sbx_tally_add(&t, r, 0);
		sbx_tally_add(&t, r, 1);
	}
	sbx_tally_flush(&t, 1, true, on_held, &h);
	o = sbx_tally_json(&t);
	assert_int_equal(json_object_size(o), SBX_TALLY_REASONS);
	assert_int_equal(json_integer_value(json_object_get(o, "other reasons")),
			 2 * (40 - (SBX_TALLY_REASONS - 1)));
	{
		const char *k;
		json_t *v;
		json_int_t sum = 0;
		json_object_foreach(o, k, v)
			sum += json_integer_value(v);
		assert_int_equal(sum, 80);
	}
	json_decref(o);
	sbx_tally_free(&t);
}

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

	while (!__atomic_load_n(&x->done, __ATOMIC_ACQUIRE)) {
		struct pollfd pfd = { .fd = sbx_proxy_fd(p), .events = POLLIN };

		assert_true(sbx_now_mono_ns() < deadline);
		if (poll(&pfd, 1, 50) > 0)
			sbx_proxy_dispatch(p);
	}
	pthread_join(x->t, NULL);
	sbx_proxy_dispatch(p);
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
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_sizes),
		cmocka_unit_test(test_tls_hello),
		cmocka_unit_test(test_tally),
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_tunnel_sni),
		cmocka_unit_test(test_connect_key),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_head_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
