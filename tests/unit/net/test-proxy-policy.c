/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-proxy-policy.c - the proxy's decisions on bytes, without a socket:
 * the request parser (table), the TLS ClientHello parser and the refusals
 * counted per reason.  The loop itself is tested in test-proxy.c.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proxy.h"

#include "client-hello.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_sizes),
		cmocka_unit_test(test_tls_hello),
		cmocka_unit_test(test_tally),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
