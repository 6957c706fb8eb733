/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * netcheck.c - address classes, allowlist matching and allow_cidrs for the
 * egress proxy.  Pure functions: no sockets, no resolver.
 *
 * The address table is deliberately wider than "private ranges": a proxy
 * that runs on the host must not become the payload's way to the host's
 * own services (loopback), its LAN (RFC 1918, unique-local, link-local),
 * its provider's network (CGNAT) or the cloud metadata endpoint, whatever
 * spelling an address arrives in.
 */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>

#include "netcheck.h"

static const char *const class_names[] = {
	[SBX_ADDR_PUBLIC] = "public",
	[SBX_ADDR_UNSPECIFIED] = "unspecified",
	[SBX_ADDR_LOOPBACK] = "loopback",
	[SBX_ADDR_PRIVATE] = "private",
	[SBX_ADDR_LINK_LOCAL] = "link-local",
	[SBX_ADDR_METADATA] = "metadata",
	[SBX_ADDR_CGNAT] = "cgnat",
	[SBX_ADDR_UNIQUE_LOCAL] = "unique-local",
	[SBX_ADDR_MULTICAST] = "multicast",
	[SBX_ADDR_DOCUMENTATION] = "documentation",
	[SBX_ADDR_RESERVED] = "reserved",
	[SBX_ADDR_UNKNOWN] = "unknown",
};

const char *sbx_netcheck_class_name(enum sbx_addr_class c)
{
	return (unsigned)c < ARRAY_SIZE(class_names) ? class_names[c] : "unknown";
}

struct v4_range {
	uint32_t net;
	unsigned prefix;
	enum sbx_addr_class cls;
};

#define V4(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))

/* Most specific first: the first match decides. */
static const struct v4_range v4_ranges[] = {
	{ V4(169, 254, 169, 254), 32, SBX_ADDR_METADATA },
	{ V4(0, 0, 0, 0), 8, SBX_ADDR_UNSPECIFIED },
	{ V4(127, 0, 0, 0), 8, SBX_ADDR_LOOPBACK },
	{ V4(10, 0, 0, 0), 8, SBX_ADDR_PRIVATE },
	{ V4(172, 16, 0, 0), 12, SBX_ADDR_PRIVATE },
	{ V4(192, 168, 0, 0), 16, SBX_ADDR_PRIVATE },
	{ V4(169, 254, 0, 0), 16, SBX_ADDR_LINK_LOCAL },
	{ V4(100, 64, 0, 0), 10, SBX_ADDR_CGNAT },
	{ V4(224, 0, 0, 0), 4, SBX_ADDR_MULTICAST },
	{ V4(192, 0, 2, 0), 24, SBX_ADDR_DOCUMENTATION },
	{ V4(198, 51, 100, 0), 24, SBX_ADDR_DOCUMENTATION },
	{ V4(203, 0, 113, 0), 24, SBX_ADDR_DOCUMENTATION },
	/* IETF protocol assignments (incl. some providers' metadata at
	 * 192.0.0.192), benchmarking, class E and broadcast. */
	{ V4(192, 0, 0, 0), 24, SBX_ADDR_RESERVED },
	{ V4(198, 18, 0, 0), 15, SBX_ADDR_RESERVED },
	{ V4(240, 0, 0, 0), 4, SBX_ADDR_RESERVED },
};

static bool v4_in(uint32_t a, uint32_t net, unsigned prefix)
{
	uint32_t mask = prefix ? ~(uint32_t)0 << (32 - prefix) : 0;
	return (a & mask) == (net & mask);
}

static enum sbx_addr_class classify_v4(uint32_t a)
{
	for (size_t i = 0; i < ARRAY_SIZE(v4_ranges); i++)
		if (v4_in(a, v4_ranges[i].net, v4_ranges[i].prefix))
			return v4_ranges[i].cls;
	return SBX_ADDR_PUBLIC;
}

static uint32_t v4_at(const uint8_t *b)
{
	return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

static bool v6_prefix(const uint8_t *a, const uint8_t *net, unsigned prefix)
{
	unsigned full = prefix / 8, rest = prefix % 8;

	if (memcmp(a, net, full))
		return false;
	if (!rest)
		return true;
	return ((a[full] ^ net[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static enum sbx_addr_class classify_v6(const uint8_t *a)
{
	static const uint8_t zero[16], mapped[12] = { [10] = 0xff, [11] = 0xff },
				       nat64[12] = { 0x00, 0x64, 0xff, 0x9b },
				       metadata[16] = { 0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54 },
				       sixto4[2] = { 0x20, 0x02 }, doc[4] = { 0x20, 0x01, 0x0d, 0xb8 },
				       teredo[4] = { 0x20, 0x01, 0x00, 0x00 },
				       discard[8] = { 0x01, 0x00 };
	static const uint8_t loopback[16] = { [15] = 1 };

	if (!memcmp(a, zero, 16))
		return SBX_ADDR_UNSPECIFIED;
	if (!memcmp(a, loopback, 16))
		return SBX_ADDR_LOOPBACK;
	if (!memcmp(a, metadata, 16))
		return SBX_ADDR_METADATA;
	/* Spellings that carry an IPv4 address: judged by that address. */
	if (!memcmp(a, mapped, 12) || !memcmp(a, nat64, 12))
		return classify_v4(v4_at(a + 12));
	if (!memcmp(a, zero, 12)) /* IPv4-compatible (deprecated) */
		return classify_v4(v4_at(a + 12));
	if (!memcmp(a, sixto4, 2))
		return classify_v4(v4_at(a + 2));
	if (a[0] == 0xff)
		return SBX_ADDR_MULTICAST;
	if ((a[0] & 0xfe) == 0xfc)
		return SBX_ADDR_UNIQUE_LOCAL;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return SBX_ADDR_LINK_LOCAL;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0) /* site-local (deprecated) */
		return SBX_ADDR_PRIVATE;
	if (!memcmp(a, doc, 4))
		return SBX_ADDR_DOCUMENTATION;
	/* Teredo hides an IPv4 address obfuscated; the discard prefix and
	 * the rest of ::/8 are not destinations either. */
	if (!memcmp(a, teredo, 4) || !memcmp(a, discard, 8) || a[0] == 0)
		return SBX_ADDR_RESERVED;
	/* Only 2000::/3 is allocated as global unicast. */
	if ((a[0] & 0xe0) != 0x20)
		return SBX_ADDR_RESERVED;
	return SBX_ADDR_PUBLIC;
}

enum sbx_addr_class sbx_netcheck_classify(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;
		return classify_v4(ntohl(s->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;
		return classify_v6(s->sin6_addr.s6_addr);
	}
	return SBX_ADDR_UNKNOWN;
}

bool sbx_netcheck_in_cidr(const struct sockaddr *sa, const char *cidr)
{
	const char *slash = strchr(cidr, '/');
	uint8_t net[16], addr[16];
	char buf[64];
	unsigned long prefix;
	size_t n;
	bool v6;

	if (!slash || (n = (size_t)(slash - cidr)) >= sizeof(buf))
		return false;
	memcpy(buf, cidr, n);
	buf[n] = '\0';
	prefix = strtoul(slash + 1, NULL, 10);
	v6 = strchr(buf, ':') != NULL;
	if (inet_pton(v6 ? AF_INET6 : AF_INET, buf, net) != 1 || prefix > (v6 ? 128u : 32u))
		return false;

	if (sa->sa_family == AF_INET) {
		memcpy(addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const uint8_t *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

		if (!v6 && !memcmp(a, mapped, 12)) {
			memcpy(addr, a + 12, 4);
		} else {
			if (!v6)
				return false;
			memcpy(addr, a, 16);
		}
		if (v6)
			return v6_prefix(addr, net, (unsigned)prefix);
	} else {
		return false;
	}
	if (v6)
		return false; /* an IPv4 address is never inside an IPv6 prefix */
	return v4_in(v4_at(addr), v4_at(net), (unsigned)prefix);
}

bool sbx_netcheck_address_allowed(const struct sbx_netprofile *np, const struct sockaddr *sa,
				  const char **why)
{
	enum sbx_addr_class c = sbx_netcheck_classify(sa);

	if (c == SBX_ADDR_UNKNOWN) {
		if (why)
			*why = sbx_netcheck_class_name(c);
		return false;
	}
	/* The operator's escape hatch comes first: a test host or an internal
	 * mirror is reachable only when named by prefix in the catalog. */
	for (char **p = np ? np->allow_cidrs : NULL; p && *p; p++)
		if (sbx_netcheck_in_cidr(sa, *p))
			return true;
	if (c == SBX_ADDR_PUBLIC)
		return true;
	if (why)
		*why = sbx_netcheck_class_name(c);
	return false;
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

bool sbx_netcheck_host_normalize(const char *in, size_t len, char out[SBX_HOST_MAX],
				 enum sbx_host_kind *kind)
{
	char buf[SBX_HOST_MAX];
	struct in_addr a4;
	struct in6_addr a6;
	size_t label = 0;

	if (len == 0 || len >= sizeof(buf))
		return false;
	/* IPv6 literal: "[...]" in URIs and CONNECT targets. */
	if (in[0] == '[') {
		if (len < 3 || in[len - 1] != ']')
			return false;
		memcpy(buf, in + 1, len - 2);
		buf[len - 2] = '\0';
		/* No zone ids ("%eth0"): they name interfaces of the host. */
		if (inet_pton(AF_INET6, buf, &a6) != 1)
			return false;
		inet_ntop(AF_INET6, &a6, out, SBX_HOST_MAX);
		*kind = SBX_HOST_IPV6;
		return true;
	}
	memcpy(buf, in, len);
	buf[len] = '\0';
	/* A bare IPv6 literal (a Host header may carry one). */
	if (memchr(in, ':', len)) {
		if (inet_pton(AF_INET6, buf, &a6) != 1)
			return false;
		inet_ntop(AF_INET6, &a6, out, SBX_HOST_MAX);
		*kind = SBX_HOST_IPV6;
		return true;
	}
	for (size_t i = 0; i < len; i++) {
		if (buf[i] >= 'A' && buf[i] <= 'Z')
			buf[i] = (char)(buf[i] - 'A' + 'a');
		if (!is_name_char(buf[i]))
			return false;
	}
	if (buf[len - 1] == '.')
		buf[--len] = '\0';
	if (len == 0)
		return false;
	if (inet_pton(AF_INET, buf, &a4) == 1) {
		inet_ntop(AF_INET, &a4, out, SBX_HOST_MAX);
		*kind = SBX_HOST_IPV4;
		return true;
	}
	/* What the resolver would read as a number in another spelling
	 * ("2130706433", "0x7f.1", "127.1") is neither a name nor a
	 * literal we accept: it could only slip past the allowlist. */
	if (inet_aton(buf, &a4))
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (buf[i] == '.' || buf[i] == '\0') {
			if (label == 0 || label > 63 || buf[i - label] == '-' || buf[i - 1] == '-')
				return false;
			label = 0;
		} else {
			label++;
		}
	}
	memcpy(out, buf, len + 1);
	*kind = SBX_HOST_NAME;
	return true;
}

/* Does the allowlist entry @pattern name @host? */
static bool host_matches(const char *pattern, const char *host)
{
	size_t hl, sl;

	if (strncmp(pattern, "*.", 2) != 0)
		return strcmp(pattern, host) == 0;
	/* "*.example.org" matches "a.example.org" and "a.b.example.org", not
	 * "example.org" or "badexample.org"; and never an address. */
	if (strchr(host, ':') || inet_pton(AF_INET, host, &(struct in_addr){ 0 }) == 1)
		return false;
	sl = strlen(pattern + 1); /* ".example.org" */
	hl = strlen(host);
	return hl > sl && strcmp(host + hl - sl, pattern + 1) == 0;
}

enum sbx_host_verdict sbx_netcheck_match(const struct sbx_netprofile *np, const char *host,
					 uint16_t port)
{
	enum sbx_host_verdict v = SBX_HOST_NOT_LISTED;

	for (size_t i = 0; np && i < np->n_allow; i++) {
		const struct sbx_egress_rule *r = &np->allow[i];

		if (!host_matches(r->host, host))
			continue;
		for (size_t k = 0; k < r->n_ports; k++)
			if (r->ports[k] == port)
				return SBX_HOST_ALLOWED;
		v = SBX_HOST_BAD_PORT;
	}
	return v;
}

enum sbx_connect_verdict sbx_netcheck_connect(const struct sbx_netprofile *np, uint16_t port)
{
	if (!np || np->connect == SBX_CONNECT_ANY)
		return SBX_CONNECT_OK;
	if (np->connect == SBX_CONNECT_NONE)
		return SBX_CONNECT_FORBIDDEN;
	for (size_t i = 0; i < np->n_connect_ports; i++)
		if (np->connect_ports[i] == port)
			return SBX_CONNECT_OK;
	return SBX_CONNECT_BAD_PORT;
}
