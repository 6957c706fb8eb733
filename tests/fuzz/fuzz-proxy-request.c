/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-proxy-request.c - libFuzzer entry point for the egress proxy's
 * request parser.  Besides "no crash": a refusal is one of the documented
 * statuses with a reason; an accepted head has a normalized host and a
 * port, ends where it says, parses the same from its own bytes alone (the
 * proxy reads in pieces), and the head sent upstream is exactly one
 * request without hop-by-hop fields.
 */
#include "fuzz-util.h"

#include <strings.h>

#include "proxy.h"

static bool hop_by_hop_name(const char *p, size_t n)
{
	static const char *const names[] = { "connection", "proxy-connection", "keep-alive",
					     "proxy-authorization", "te", "trailer", "upgrade",
					     "transfer-encoding" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strlen(names[i]) == n && strncasecmp(p, names[i], n) == 0)
			return true;
	return false;
}

static void check_upstream(const struct sbx_proxy_request *req)
{
	const char *u = req->upstream, *end = u + req->upstream_len, *line, *crlf4 = NULL;
	static const char tail[] = "Connection: close\r\n\r\n";

	fuzz_assert(u && req->upstream_len >= sizeof(tail) - 1);
	fuzz_assert(req->upstream_len <= req->head_len + 64);
	fuzz_assert(memcmp(end - (sizeof(tail) - 1), tail, sizeof(tail) - 1) == 0);
	for (const char *p = u; p + 4 <= end; p++)
		if (memcmp(p, "\r\n\r\n", 4) == 0) {
			crlf4 = p;
			break;
		}
	fuzz_assert(crlf4 == end - 4);
	/* Origin form: "METHOD /..." */
	line = memchr(u, ' ', req->upstream_len);
	fuzz_assert(line && line[1] == '/');
	/* Every field but the last is the client's, none hop-by-hop. */
	line = memchr(u, '\n', req->upstream_len) + 1;
	while (line < end - (sizeof(tail) - 1)) {
		const char *eol = memchr(line, '\r', (size_t)(end - line));
		const char *colon = memchr(line, ':', (size_t)(eol - line));

		fuzz_assert(eol && eol[1] == '\n' && colon);
		fuzz_assert(!hop_by_hop_name(line, (size_t)(colon - line)));
		line = eol + 2;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *reason = NULL;
	struct sbx_proxy_request req, again;
	int r = sbx_proxy_parse(buf, size, &req, &reason);

	if (r == 0) {
		fuzz_assert(size < SBX_PROXY_HEAD_MAX && !reason);
	} else if (r != 1) {
		fuzz_assert(r == 400 || r == 411 || r == 431 || r == 501);
		fuzz_assert(reason && fuzz_clean_line(reason));
	} else {
		char host[SBX_HOST_MAX];
		enum sbx_host_kind kind;
		const char *r2;

		fuzz_assert(req.head_len >= 4 && req.head_len <= size &&
			    req.head_len <= SBX_PROXY_HEAD_MAX);
		fuzz_assert(memcmp(buf + req.head_len - 4, "\r\n\r\n", 4) == 0);
		fuzz_assert(req.port != 0);
		fuzz_assert(sbx_netcheck_host_normalize(req.host, strlen(req.host), host, &kind));
		fuzz_assert(strcmp(host, req.host) == 0 && kind == req.host_kind);
		fuzz_assert(req.connect ? !req.upstream && !req.body_len : req.upstream != NULL);
		if (!req.connect)
			check_upstream(&req);

		/* The head alone gives the same answer. */
		fuzz_assert(sbx_proxy_parse(buf, req.head_len, &again, &r2) == 1);
		fuzz_assert(again.connect == req.connect && again.port == req.port &&
			    strcmp(again.host, req.host) == 0 && again.body_len == req.body_len &&
			    again.upstream_len == req.upstream_len &&
			    (!req.upstream || memcmp(again.upstream, req.upstream, req.upstream_len) == 0));
		sbx_proxy_request_free(&again);
	}
	sbx_proxy_request_free(&req);
	return 0;
}
