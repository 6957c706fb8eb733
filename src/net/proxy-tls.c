/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proxy-tls.c - find the server name in the TLS ClientHello that a
 * payload sends first into a CONNECT tunnel (see proxy.h).
 *
 * The proxy never decrypts: it reads the ClientHello only to know which
 * virtual host the client asks the allowed address for.  Every length is
 * checked against what encloses it, and anything a TLS server could read
 * differently from this parser (trailing bytes, two server names, an
 * encrypted inner ClientHello, a record of another type in the middle) is
 * refused rather than guessed at.
 */
#include "config.h"

#include <string.h>

#include "proxy.h"

#define RECORD_MAX 16384     /* a TLSPlaintext fragment, RFC 8446 5.1 */
#define MAX_RECORDS 8        /* one is what every client sends */
#define EXT_SERVER_NAME 0
#define EXT_ECH 0xfe0d       /* encrypted_client_hello */
#define EXT_ESNI 0xffce      /* its draft predecessor */

struct rd {
	const uint8_t *p;
	size_t n;
};

static bool take(struct rd *r, size_t n, struct rd *out)
{
	if (r->n < n)
		return false;
	if (out)
		*out = (struct rd){ r->p, n };
	r->p += n;
	r->n -= n;
	return true;
}

static bool u8(struct rd *r, size_t *v)
{
	if (r->n < 1)
		return false;
	*v = r->p[0];
	return take(r, 1, NULL);
}

static bool u16(struct rd *r, size_t *v)
{
	if (r->n < 2)
		return false;
	*v = (size_t)r->p[0] << 8 | r->p[1];
	return take(r, 2, NULL);
}

/* A vector with a length prefix of @width bytes, all of it present. */
static bool vec(struct rd *r, int width, struct rd *out)
{
	size_t n;

	if (!(width == 1 ? u8(r, &n) : u16(r, &n)))
		return false;
	return take(r, n, out);
}

static int bad(const char **reason, const char *why)
{
	*reason = why;
	return SBX_TLS_BAD;
}

/* The server_name extension's body (RFC 6066 section 3): exactly one
 * host_name, an ASCII DNS name without a trailing dot. */
static int server_name(struct rd ext, char name[SBX_HOST_MAX], const char **reason)
{
	struct rd list, host;
	enum sbx_host_kind kind;
	size_t type;

	if (!vec(&ext, 2, &list) || ext.n || !list.n)
		return bad(reason, "malformed server_name extension");
	if (!u8(&list, &type) || type != 0 || !vec(&list, 2, &host))
		return bad(reason, "malformed server_name extension");
	if (list.n)
		return bad(reason, "more than one TLS server name");
	if (!host.n || host.n >= SBX_HOST_MAX)
		return bad(reason, "TLS server name of a bad length");
	/* The name is compared with the CONNECT host as normalized; a
	 * trailing dot would be a second spelling of it. */
	if (host.p[host.n - 1] == '.')
		return bad(reason, "TLS server name with a trailing dot");
	if (!sbx_netcheck_host_normalize((const char *)host.p, host.n, name, &kind))
		return bad(reason, "TLS server name is not a host name");
	if (kind != SBX_HOST_NAME)
		return bad(reason, "TLS server name is an IP address");
	return SBX_TLS_HELLO;
}

/* The ClientHello body (RFC 8446 4.1.2; TLS 1.0-1.2 have the same shape). */
static int client_hello(struct rd b, char name[SBX_HOST_MAX], const char **reason)
{
	uint8_t seen[65536 / 8] = { 0 };
	struct rd sid, suites, comp, exts;
	size_t version;

	name[0] = '\0';
	if (!u16(&b, &version) || !take(&b, 32, NULL) || !vec(&b, 1, &sid) ||
	    !vec(&b, 2, &suites) || !vec(&b, 1, &comp))
		return bad(reason, "malformed TLS ClientHello");
	if (version < 0x0301 || version > 0x0303)
		return bad(reason, "TLS ClientHello of an unsupported version");
	if (sid.n > 32 || suites.n < 2 || suites.n % 2 || comp.n < 1)
		return bad(reason, "malformed TLS ClientHello");
	if (b.n == 0)
		return SBX_TLS_HELLO; /* no extensions, so no server name */
	if (!vec(&b, 2, &exts) || b.n)
		return bad(reason, "malformed TLS ClientHello extensions");
	while (exts.n) {
		struct rd body;
		size_t type;
		int r;

		if (!u16(&exts, &type) || !vec(&exts, 2, &body))
			return bad(reason, "malformed TLS ClientHello extensions");
		if (seen[type / 8] & (1u << (type % 8)))
			return bad(reason, "TLS ClientHello repeats an extension");
		seen[type / 8] |= (uint8_t)(1u << (type % 8));
		/* The name in the clear would not be the one the server
		 * serves. */
		if (type == EXT_ECH || type == EXT_ESNI)
			return bad(reason, "encrypted TLS ClientHello");
		if (type == EXT_SERVER_NAME && (r = server_name(body, name, reason)) != SBX_TLS_HELLO)
			return r;
	}
	return SBX_TLS_HELLO;
}

int sbx_tls_client_hello(const uint8_t *buf, size_t len, char name[SBX_HOST_MAX],
			 size_t *hello_len, const char **reason)
{
	uint8_t hs[RECORD_MAX];
	size_t hs_len = 0, off = 0, want = 0;
	unsigned version = 0;

	*reason = NULL;
	name[0] = '\0';
	for (int records = 0;; records++) {
		size_t avail = len - off, rlen;

		/* Judge each header byte as soon as it is there, so that
		 * bytes that are not TLS are refused without waiting. */
		if (avail >= 1 && buf[off] != 22)
			return bad(reason, off ? "TLS ClientHello interrupted by another record" :
						 "not a TLS ClientHello");
		if (records == MAX_RECORDS)
			return bad(reason, "TLS ClientHello split into too many records");
		if (avail >= 3) {
			unsigned v = (unsigned)buf[off + 1] << 8 | buf[off + 2];
			if (buf[off + 1] != 3 || buf[off + 2] > 3 || (version && v != version))
				return bad(reason, off ? "TLS records of different versions" :
							 "not a TLS ClientHello");
			version = v;
		}
		if (avail < 5)
			goto more;
		rlen = (size_t)buf[off + 3] << 8 | buf[off + 4];
		if (rlen == 0 || rlen > RECORD_MAX)
			return bad(reason, "TLS record of a bad length");
		if (off + 5 + rlen > SBX_TLS_PEEK_MAX || hs_len + rlen > sizeof(hs))
			return bad(reason, "TLS ClientHello too large");
		if (avail - 5 < rlen)
			goto more;
		memcpy(hs + hs_len, buf + off + 5, rlen);
		hs_len += rlen;
		off += 5 + rlen;
		if (!want && hs_len >= 4) {
			size_t l = (size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3];

			if (hs[0] != 1)
				return bad(reason, "not a TLS ClientHello");
			if (4 + l > sizeof(hs))
				return bad(reason, "TLS ClientHello too large");
			want = 4 + l;
		}
		if (want && hs_len >= want) {
			int r;

			/* A second handshake message before the server has
			 * spoken is not TLS. */
			if (hs_len > want)
				return bad(reason, "data after the TLS ClientHello in its record");
			r = client_hello((struct rd){ hs + 4, want - 4 }, name, reason);
			if (r == SBX_TLS_HELLO)
				*hello_len = off;
			return r;
		}
	}
more:
	if (len >= SBX_TLS_PEEK_MAX)
		return bad(reason, "TLS ClientHello too large");
	return SBX_TLS_MORE;
}
