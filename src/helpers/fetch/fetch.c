/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fetch.c - one remote input, request by request (see fetch.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fetch.h"
#include "netcheck.h"
#include "reasoncode.h"

/* One response's body on its way to the file. */
struct sink {
	CURL *h;
	int fd;
	uint64_t max_bytes, written;
	struct sha256_ctx sha;
	bool too_large, bad_encoding, write_failed;
	char encoding[64];
};

static int fail(struct sbx_fetch_result *res, const char *code, bool refused, const char *fmt, ...)
{
	va_list ap;

	res->code = code;
	res->refused = refused;
	va_start(ap, fmt);
	vsnprintf(res->text, sizeof(res->text), fmt, ap);
	va_end(ap);
	return -1;
}

static bool redirect_status(long s)
{
	return s == 301 || s == 302 || s == 303 || s == 307 || s == 308;
}

/* Only a 2xx body is the input; a redirect's or an error's is dropped. */
static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct sink *k = ud;
	size_t len = size * n;
	long status = 0;

	curl_easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299)
		return len;
	if (k->bad_encoding)
		return 0;
	if (len > k->max_bytes - k->written) {
		k->too_large = true;
		return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(k->fd, p + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			k->write_failed = true;
			return 0;
		}
		off += (size_t)w;
	}
	sha256_update(&k->sha, len, (const uint8_t *)p);
	k->written += len;
	return len;
}

/* Content-Encoding other than identity: the body would have to be
 * decoded to be the input, and a decoder is where a bomb goes off.  The
 * request said "Accept-Encoding: identity"; a server that answers
 * otherwise is refused before a byte of its body is kept. */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct sink *k = ud;
	size_t len = size * n;
	static const char name[] = "content-encoding:";

	if (len > sizeof(name) - 1 && strncasecmp(p, name, sizeof(name) - 1) == 0) {
		const char *v = p + sizeof(name) - 1, *end = p + len;

		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
			end--;
		snprintf(k->encoding, sizeof(k->encoding), "%.*s", (int)(end - v), v);
		for (char *c = k->encoding; *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
				*c = '?';
		if (strcasecmp(k->encoding, "identity") != 0)
			k->bad_encoding = true;
	}
	return len;
}

/* printable ASCII without spaces: what the manifest and the broker take. */
static bool url_clean(const char *s)
{
	if (strlen(s) > 2048)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/*
 * Check @url's scheme, host and port, resolve the host once and check
 * every address; @pin gets "host:port:address" for CURLOPT_RESOLVE (empty
 * for an address literal, which curl does not resolve).  @hop > 0: a
 * redirect's target, whose refusal is fetch_redirect_refused.
 */
static int check_target(const struct sbx_fetch_rules *r, const char *url, unsigned hop,
			char *pin, size_t pin_len, struct sbx_fetch_result *res)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *user = NULL;
	char norm[SBX_HOST_MAX], addr[INET6_ADDRSTRLEN];
	const char *redir = hop ? SBX_RC_FETCH_REDIRECT_REFUSED : NULL;
	enum sbx_host_kind kind;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	unsigned long portnum;
	int rc = -1, g;

	pin[0] = '\0';
	if (!u)
		return fail(res, SBX_RC_FETCH_FAILED, false, "out of memory");
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
		fail(res, redir ? redir : SBX_RC_FETCH_FAILED, !!redir, "%s: not a URL sbx can fetch",
		     url);
		goto out;
	}
	if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK) {
		fail(res, redir ? redir : SBX_RC_FETCH_HOST_NOT_ALLOWED, true,
		     "%s: user names or passwords in URLs are not sent", url);
		goto out;
	}
	if (strcmp(scheme, "https") != 0 && !(strcmp(scheme, "http") == 0 && r->allow_http)) {
		fail(res, redir ? redir : SBX_RC_FETCH_SCHEME_REFUSED, true,
		     "%s: scheme %s is not allowed by the fetch profile", url, scheme);
		goto out;
	}
	portnum = strtoul(port, NULL, 10);
	if (!sbx_netcheck_host_normalize(host, strlen(host), norm, &kind) || portnum == 0 ||
	    portnum > 65535) {
		fail(res, redir ? redir : SBX_RC_FETCH_HOST_NOT_ALLOWED, true,
		     "%s: not a host name or address sbx accepts", url);
		goto out;
	}
	if (sbx_netcheck_match(&r->net, norm, (uint16_t)portnum) != SBX_HOST_ALLOWED) {
		fail(res, redir ? redir : SBX_RC_FETCH_HOST_NOT_ALLOWED, true,
		     "%s: %s port %lu is not on the fetch profile's allowlist", url, norm, portnum);
		goto out;
	}
	/* Resolved here, once; every address must pass, not just one. */
	hints.ai_flags = kind == SBX_HOST_NAME ? 0 : AI_NUMERICHOST;
	g = getaddrinfo(norm, NULL, &hints, &ai);
	if (g != 0) {
		fail(res, SBX_RC_FETCH_FAILED, false, "%s: cannot resolve %s: %s", url, norm,
		     gai_strerror(g));
		goto out;
	}
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		const char *why = NULL;
		const void *raw = a->ai_family == AF_INET6 ?
					  (const void *)&((struct sockaddr_in6 *)a->ai_addr)->sin6_addr :
					  (const void *)&((struct sockaddr_in *)a->ai_addr)->sin_addr;

		inet_ntop(a->ai_family, raw, addr, sizeof(addr));
		if (!sbx_netcheck_address_allowed(&r->net, a->ai_addr, &why)) {
			fail(res, redir ? redir : SBX_RC_FETCH_ADDRESS_REFUSED, true,
			     "%s: %s resolves to %s, a %s address", url, norm, addr,
			     why ? why : "refused");
			goto out;
		}
	}
	if (!ai) {
		fail(res, SBX_RC_FETCH_FAILED, false, "%s: %s has no address", url, norm);
		goto out;
	}
	/* The first checked address is the one connected to. */
	inet_ntop(ai->ai_family,
		  ai->ai_family == AF_INET6 ? (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr :
					      (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr,
		  addr, sizeof(addr));
	if (kind == SBX_HOST_NAME)
		snprintf(pin, pin_len, ai->ai_family == AF_INET6 ? "%s:%lu:[%s]" : "%s:%lu:%s", norm,
			 portnum, addr);
	rc = 0;
out:
	if (ai)
		freeaddrinfo(ai);
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_free(user);
	curl_url_cleanup(u);
	return rc;
}

/* Does the response's Content-Type (without parameters) equal @want? */
static bool media_matches(CURL *h, const char *want, char *got, size_t got_len)
{
	char *ct = NULL;
	size_t n;

	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	snprintf(got, got_len, "%s", ct ? ct : "none");
	n = strcspn(got, "; \t");
	got[n] = '\0';
	for (char *c = got; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			*c = '?';
	return strcasecmp(got, want) == 0;
}

/* One request to @url, pinned by @pin, its 2xx body into @k. */
static CURLcode request(const struct sbx_fetch_rules *r, const char *url, const char *pin,
			struct sink *k, char *errbuf)
{
	struct curl_slist *resolve = NULL, *headers = NULL;
	const char *protocols = r->allow_http ? "http,https" : "https";
	CURLcode c;

	if (pin[0])
		resolve = curl_slist_append(NULL, pin);
	headers = curl_slist_append(NULL, "Accept-Encoding: identity");
	curl_easy_setopt(k->h, CURLOPT_URL, url);
	curl_easy_setopt(k->h, CURLOPT_PROTOCOLS_STR, protocols);
	curl_easy_setopt(k->h, CURLOPT_REDIR_PROTOCOLS_STR, protocols);
	curl_easy_setopt(k->h, CURLOPT_FOLLOWLOCATION, 0L);
	/* Never through a proxy, whatever the environment (it is empty). */
	curl_easy_setopt(k->h, CURLOPT_PROXY, "");
	curl_easy_setopt(k->h, CURLOPT_NOPROXY, "*");
	if (resolve)
		curl_easy_setopt(k->h, CURLOPT_RESOLVE, resolve);
	curl_easy_setopt(k->h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(k->h, CURLOPT_HTTP_CONTENT_DECODING, 0L);
	curl_easy_setopt(k->h, CURLOPT_TIMEOUT, (long)r->timeout_seconds);
	curl_easy_setopt(k->h, CURLOPT_CONNECTTIMEOUT, (long)r->timeout_seconds);
	curl_easy_setopt(k->h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)k->max_bytes);
	curl_easy_setopt(k->h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(k->h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (r->ca_file)
		curl_easy_setopt(k->h, CURLOPT_CAINFO, r->ca_file);
	curl_easy_setopt(k->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k->h, CURLOPT_USERAGENT, "sbx-fetch/" PACKAGE_VERSION);
	curl_easy_setopt(k->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(k->h, CURLOPT_WRITEDATA, k);
	curl_easy_setopt(k->h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(k->h, CURLOPT_HEADERDATA, k);
	curl_easy_setopt(k->h, CURLOPT_ERRORBUFFER, errbuf);
	c = curl_easy_perform(k->h);
	curl_slist_free_all(resolve);
	curl_slist_free_all(headers);
	return c;
}

int sbx_fetch_one(const struct sbx_fetch_rules *r, const char *url, int fd, uint64_t max_bytes,
		  const char *media_type, struct sbx_fetch_result *res)
{
	char current[2049], pin[SBX_HOST_MAX + 64], errbuf[CURL_ERROR_SIZE], got[128];
	uint8_t md[SHA256_DIGEST_SIZE];

	memset(res, 0, sizeof(*res));
	snprintf(current, sizeof(current), "%s", url);
	for (unsigned hop = 0;; hop++) {
		struct sink k = { .fd = fd, .max_bytes = max_bytes };
		char *next = NULL;
		long status = 0;
		CURLcode c;

		if (check_target(r, current, hop, pin, sizeof(pin), res) < 0)
			return -1;
		/* A fresh handle a request: no connection, DNS cache or pinned
		 * address carries over to the next hop. */
		k.h = curl_easy_init();
		if (!k.h)
			return fail(res, SBX_RC_FETCH_FAILED, false, "curl_easy_init failed");
		sha256_init(&k.sha);
		errbuf[0] = '\0';
		if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
			curl_easy_cleanup(k.h);
			return fail(res, SBX_RC_FETCH_FAILED, false, "truncate: %s", strerror(errno));
		}
		c = request(r, current, pin, &k, errbuf);
		curl_easy_getinfo(k.h, CURLINFO_RESPONSE_CODE, &status);
		res->status = status;
		if (k.bad_encoding) {
			curl_easy_cleanup(k.h);
			return fail(res, SBX_RC_FETCH_ENCODING_REFUSED, true,
				    "%s: Content-Encoding \"%s\" refused (only identity is accepted)",
				    current, k.encoding);
		}
		if (k.too_large || c == CURLE_FILESIZE_EXCEEDED) {
			curl_easy_cleanup(k.h);
			return fail(res, SBX_RC_FETCH_TOO_LARGE, true,
				    "%s: larger than the limit of %" PRIu64 " bytes", current, max_bytes);
		}
		if (c == CURLE_OPERATION_TIMEDOUT) {
			curl_easy_cleanup(k.h);
			return fail(res, SBX_RC_FETCH_TIMEOUT, false,
				    "%s: no complete answer within timeout_seconds %" PRIu64, current,
				    r->timeout_seconds);
		}
		if (c != CURLE_OK || k.write_failed) {
			fail(res, SBX_RC_FETCH_FAILED, false, "%s: %s", current,
			     k.write_failed ? "cannot write the input" :
			     errbuf[0]	    ? errbuf :
					      curl_easy_strerror(c));
			curl_easy_cleanup(k.h);
			return -1;
		}
		if (redirect_status(status)) {
			curl_easy_getinfo(k.h, CURLINFO_REDIRECT_URL, &next);
			if (!next || !url_clean(next)) {
				curl_easy_cleanup(k.h);
				return fail(res, SBX_RC_FETCH_REDIRECT_REFUSED, true,
					    "%s: HTTP %ld without a usable Location", current, status);
			}
			if (hop + 1 > r->max_redirects) {
				curl_easy_cleanup(k.h);
				return fail(res, SBX_RC_FETCH_REDIRECT_REFUSED, true,
					    "%s: more than max_redirects %" PRIu64 " redirects", url,
					    r->max_redirects);
			}
			snprintf(current, sizeof(current), "%s", next);
			curl_easy_cleanup(k.h);
			continue;
		}
		if (status < 200 || status > 299) {
			curl_easy_cleanup(k.h);
			return fail(res, SBX_RC_FETCH_HTTP_STATUS, false, "%s: HTTP status %ld", current,
				    status);
		}
		if (media_type && !media_matches(k.h, media_type, got, sizeof(got))) {
			curl_easy_cleanup(k.h);
			return fail(res, SBX_RC_FETCH_MEDIA_TYPE, true,
				    "%s: Content-Type %s, not the job's media_type %s", current, got,
				    media_type);
		}
		curl_easy_cleanup(k.h);
		sha256_digest(&k.sha, sizeof(md), md);
		sbx_hex(md, sizeof(md), res->sha256);
		res->size = k.written;
		snprintf(res->final_url, sizeof(res->final_url), "%s", current);
		return 0;
	}
}
