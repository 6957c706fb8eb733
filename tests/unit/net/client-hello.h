/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * client-hello.h - TLS ClientHellos built byte by byte, for the tests of
 * the ClientHello parser (test-proxy-policy.c) and of tunnels through the
 * loop (test-proxy.c).  Include after <cmocka.h> and "proxy.h".
 */
#ifndef SBX_TEST_CLIENT_HELLO_H
#define SBX_TEST_CLIENT_HELLO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

#endif
