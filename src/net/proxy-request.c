/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proxy-request.c - parse the head of one request to the egress proxy.
 *
 * Strict on purpose: the proxy is the only way out of the sandbox, and a
 * request that two HTTP implementations could read differently (bare LF,
 * folded headers, two Host or Content-Length headers, chunked bodies the
 * proxy would have to frame) is refused rather than interpreted.
 */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "proxy.h"

#define MAX_HEADERS 100

static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool token_eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* "host[:port]" or "[v6][:port]"; @defport 0 means the port is required. */
static bool parse_authority(const char *s, size_t n, uint16_t defport, char host[SBX_HOST_MAX],
			    enum sbx_host_kind *kind, uint16_t *port)
{
	const char *colon = NULL;
	size_t hn;

	if (n == 0)
		return false;
	if (s[0] == '[') {
		const char *rb = memchr(s, ']', n);
		if (!rb)
			return false;
		hn = (size_t)(rb - s) + 1;
		if (hn < n) {
			if (s[hn] != ':')
				return false;
			colon = s + hn;
		}
	} else {
		colon = memchr(s, ':', n);
		if (colon && memchr(colon + 1, ':', n - (size_t)(colon + 1 - s)))
			return false; /* a bare IPv6 literal is not an authority */
		hn = colon ? (size_t)(colon - s) : n;
	}
	if (!sbx_netcheck_host_normalize(s, hn, host, kind))
		return false;
	if (!colon) {
		*port = defport;
		return defport != 0;
	}
	{
		const char *p = colon + 1, *end = s + n;
		unsigned long v = 0;

		if (p == end || end - p > 5)
			return false;
		for (; p < end; p++) {
			if (*p < '0' || *p > '9')
				return false;
			v = v * 10 + (unsigned long)(*p - '0');
		}
		if (v == 0 || v > 65535)
			return false;
		*port = (uint16_t)v;
	}
	return true;
}

/* Hop-by-hop headers: they describe the client's connection to the proxy
 * and are not forwarded; "Connection: close" is added instead, so that one
 * upstream connection carries exactly the one request that was checked. */
static bool hop_by_hop(const char *name, size_t n)
{
	static const char *const names[] = { "connection", "proxy-connection", "keep-alive",
					     "proxy-authorization", "te", "trailer", "upgrade" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (token_eq(name, n, names[i]))
			return true;
	return false;
}

struct line {
	const char *p;
	size_t n;
};

static int refuse(const char **reason, const char *why, int status)
{
	*reason = why;
	return status;
}

int sbx_proxy_parse(const char *buf, size_t len, struct sbx_proxy_request *req,
		    const char **reason)
{
	const char *end = NULL, *p, *sp1, *sp2;
	struct line lines[MAX_HEADERS + 1];
	size_t n_lines = 0, head_len, scan = len < SBX_PROXY_HEAD_MAX ? len : SBX_PROXY_HEAD_MAX;
	struct line host_hdr = { 0 }, method, target, version;
	bool have_cl = false;
	char *out;

	memset(req, 0, sizeof(*req));
	*reason = NULL;
	for (size_t i = 0; i + 3 < scan; i++)
		if (buf[i] == '\r' && buf[i + 1] == '\n' && buf[i + 2] == '\r' && buf[i + 3] == '\n') {
			end = buf + i;
			break;
		}
	/* In the head, or before one is complete; bytes after it are the
	 * tunnel's or the body's (a ClientHello sent right behind a CONNECT
	 * has NULs). */
	if (memchr(buf, '\0', end ? (size_t)(end - buf) : scan))
		return refuse(reason, "NUL byte in the request", 400);
	if (!end)
		return len >= SBX_PROXY_HEAD_MAX ? refuse(reason, "request head too large", 431) : 0;
	head_len = (size_t)(end - buf) + 4;

	/* Split into CRLF lines; a CR or LF anywhere else is malformed. */
	for (p = buf; p <= end;) {
		const char *e = p;
		while (e < end && *e != '\r' && *e != '\n')
			e++;
		if (e < end && !(e[0] == '\r' && e[1] == '\n'))
			return refuse(reason, "bare CR or LF in the request head", 400);
		if (n_lines == ARRAY_SIZE(lines))
			return refuse(reason, "too many header fields", 431);
		lines[n_lines++] = (struct line){ p, (size_t)(e - p) };
		p = e + 2;
	}

	/* Request line: method SP target SP version. */
	sp1 = memchr(lines[0].p, ' ', lines[0].n);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', lines[0].n - (size_t)(sp1 + 1 - lines[0].p)) : NULL;
	if (!sp1 || !sp2 || memchr(sp2 + 1, ' ', lines[0].n - (size_t)(sp2 + 1 - lines[0].p)))
		return refuse(reason, "malformed request line", 400);
	method = (struct line){ lines[0].p, (size_t)(sp1 - lines[0].p) };
	target = (struct line){ sp1 + 1, (size_t)(sp2 - sp1 - 1) };
	version = (struct line){ sp2 + 1, lines[0].n - (size_t)(sp2 + 1 - lines[0].p) };
	if (method.n == 0 || target.n == 0)
		return refuse(reason, "malformed request line", 400);
	for (size_t i = 0; i < method.n; i++)
		if (!is_tchar(method.p[i]))
			return refuse(reason, "malformed method", 400);
	for (size_t i = 0; i < target.n; i++)
		if ((unsigned char)target.p[i] <= 0x20 || (unsigned char)target.p[i] >= 0x7f)
			return refuse(reason, "malformed request target", 400);
	if (!token_eq(version.p, version.n, "HTTP/1.1") && !token_eq(version.p, version.n, "HTTP/1.0"))
		return refuse(reason, "only HTTP/1.0 and HTTP/1.1 are spoken", 400);

	/* Header fields. */
	for (size_t i = 1; i < n_lines; i++) {
		const struct line *l = &lines[i];
		const char *colon;
		size_t nl;

		if (l->n == 0)
			continue; /* the final empty line */
		if (l->p[0] == ' ' || l->p[0] == '\t')
			return refuse(reason, "folded header field", 400);
		colon = memchr(l->p, ':', l->n);
		if (!colon || colon == l->p)
			return refuse(reason, "malformed header field", 400);
		nl = (size_t)(colon - l->p);
		for (size_t k = 0; k < nl; k++)
			if (!is_tchar(l->p[k]))
				return refuse(reason, "malformed header field name", 400);
		for (const char *v = colon + 1; v < l->p + l->n; v++)
			if (((unsigned char)*v < 0x20 && *v != '\t') || *v == 0x7f)
				return refuse(reason, "control character in a header field", 400);
		if (token_eq(l->p, nl, "host")) {
			const char *v = colon + 1, *ve = l->p + l->n;
			if (host_hdr.p)
				return refuse(reason, "more than one Host header", 400);
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			host_hdr = (struct line){ v, (size_t)(ve - v) };
			if (host_hdr.n == 0)
				return refuse(reason, "empty Host header", 400);
		} else if (token_eq(l->p, nl, "transfer-encoding")) {
			return refuse(reason, "request bodies with Transfer-Encoding are not supported",
				      411);
		} else if (token_eq(l->p, nl, "content-length")) {
			const char *v = colon + 1, *ve = l->p + l->n;
			uint64_t cl = 0;

			if (have_cl)
				return refuse(reason, "more than one Content-Length header", 400);
			have_cl = true;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if (v == ve || ve - v > 13)
				return refuse(reason, "malformed Content-Length", 400);
			for (; v < ve; v++) {
				if (*v < '0' || *v > '9')
					return refuse(reason, "malformed Content-Length", 400);
				cl = cl * 10 + (uint64_t)(*v - '0');
			}
			req->body_len = cl;
		}
	}

	if (token_eq(method.p, method.n, "CONNECT")) {
		req->connect = true;
		if (!parse_authority(target.p, target.n, 0, req->host, &req->host_kind, &req->port))
			return refuse(reason, "CONNECT needs host:port", 400);
		if (req->body_len)
			return refuse(reason, "CONNECT with a body", 400);
	} else {
		const char *a, *path, *te = target.p + target.n;
		size_t an;

		if (target.n >= 8 && strncasecmp(target.p, "https://", 8) == 0)
			return refuse(reason, "https:// URIs go through CONNECT", 501);
		if (target.n < 7 || strncasecmp(target.p, "http://", 7) != 0)
			return refuse(reason, "a proxy request needs an absolute http:// URI", 400);
		if (memchr(target.p, '#', target.n))
			return refuse(reason, "fragment in the request target", 400);
		a = target.p + 7;
		path = a;
		while (path < te && *path != '/' && *path != '?')
			path++;
		an = (size_t)(path - a);
		if (memchr(a, '@', an))
			return refuse(reason, "user information in the URI", 400);
		if (!parse_authority(a, an, 80, req->host, &req->host_kind, &req->port))
			return refuse(reason, "malformed host in the URI", 400);
		if (!host_hdr.p)
			return refuse(reason, "missing Host header", 400);
	}

	/* The Host header must name what the request line names: a server
	 * behind one allowed address may host other names. */
	if (host_hdr.p) {
		char h[SBX_HOST_MAX];
		enum sbx_host_kind k;
		uint16_t port;

		if (!parse_authority(host_hdr.p, host_hdr.n, req->connect ? req->port : 80, h, &k,
				     &port) ||
		    strcmp(h, req->host) != 0 || port != req->port)
			return refuse(reason, "Host header does not match the request target", 400);
	}

	req->head_len = head_len;
	if (req->connect)
		return 1;

	/* The head sent upstream: origin-form target, the client's fields
	 * without the hop-by-hop ones, and Connection: close. */
	{
		const char *a = target.p + 7, *te = target.p + target.n, *path = a;
		size_t cap = head_len + 64, o = 0;

		while (path < te && *path != '/' && *path != '?')
			path++;
		out = sbx_xmalloc(cap);
		memcpy(out + o, method.p, method.n);
		o += method.n;
		out[o++] = ' ';
		if (path == te || *path == '?')
			out[o++] = '/';
		memcpy(out + o, path, (size_t)(te - path));
		o += (size_t)(te - path);
		out[o++] = ' ';
		memcpy(out + o, version.p, version.n);
		o += version.n;
		out[o++] = '\r';
		out[o++] = '\n';
		for (size_t i = 1; i < n_lines; i++) {
			const struct line *l = &lines[i];
			if (l->n == 0 || hop_by_hop(l->p, (size_t)((const char *)memchr(l->p, ':', l->n) - l->p)))
				continue;
			memcpy(out + o, l->p, l->n);
			o += l->n;
			out[o++] = '\r';
			out[o++] = '\n';
		}
		memcpy(out + o, "Connection: close\r\n\r\n", 21);
		o += 21;
		req->upstream = out;
		req->upstream_len = o;
	}
	return 1;
}

void sbx_proxy_request_free(struct sbx_proxy_request *req)
{
	free(req->upstream);
	req->upstream = NULL;
}
