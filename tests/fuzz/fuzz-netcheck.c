/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-netcheck.c - libFuzzer entry point for the proxy's address classes,
 * host normalization and allowlist matching.  Properties: normalization is
 * idempotent and yields only what it documents; an IPv4 address is judged
 * the same in every IPv6 spelling that carries it; only public addresses
 * pass without allow_cidrs; a prefix matches exactly the addresses a
 * bitwise comparison says; the allowlist lets through only the names and
 * ports it lists.
 */
#include "fuzz-util.h"

#include <arpa/inet.h>

#include "netcheck.h"

static uint16_t https_ports[] = { 443 }, web_ports[] = { 80, 443 };
static struct sbx_egress_rule rules[] = {
	{ .host = "pypi.org", .ports = https_ports, .n_ports = 1 },
	{ .host = "*.example.org", .ports = web_ports, .n_ports = 2 },
};
static const struct sbx_netprofile np = { .allow = rules, .n_allow = ARRAY_SIZE(rules) };

static void check_host(const char *in, size_t len, uint16_t port)
{
	char out[SBX_HOST_MAX], again[SBX_HOST_MAX];
	enum sbx_host_kind kind, kind2;
	struct in_addr a4;
	struct in6_addr a6;
	enum sbx_host_verdict v;

	if (!sbx_netcheck_host_normalize(in, len, out, &kind))
		return;
	fuzz_assert(sbx_netcheck_host_normalize(out, strlen(out), again, &kind2));
	fuzz_assert(strcmp(out, again) == 0 && kind == kind2);
	switch (kind) {
	case SBX_HOST_IPV4:
		fuzz_assert(inet_pton(AF_INET, out, &a4) == 1);
		break;
	case SBX_HOST_IPV6:
		fuzz_assert(inet_pton(AF_INET6, out, &a6) == 1);
		break;
	case SBX_HOST_NAME:
		/* Lowercase labels, no trailing dot, nothing a resolver
		 * would read as a number. */
		fuzz_assert(out[0] && out[strlen(out) - 1] != '.' && !inet_aton(out, &a4));
		for (const char *p = out; *p; p++)
			fuzz_assert((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
				    *p == '-' || *p == '.');
		break;
	}
	v = sbx_netcheck_match(&np, out, port);
	if (v == SBX_HOST_ALLOWED) {
		size_t n = strlen(out);
		bool exact = strcmp(out, "pypi.org") == 0 && port == 443;
		bool wild = kind == SBX_HOST_NAME && n > 12 && strcmp(out + n - 12, ".example.org") == 0 &&
			    (port == 80 || port == 443);
		fuzz_assert(exact || wild);
	}
	if (strcmp(out, "pypi.org") != 0 &&
	    !(strlen(out) > 12 && strcmp(out + strlen(out) - 12, ".example.org") == 0))
		fuzz_assert(v == SBX_HOST_NOT_LISTED);
}

/* @prefix leading bits of @a and @b agree. */
static bool same_prefix(const uint8_t *a, const uint8_t *b, unsigned prefix)
{
	for (unsigned i = 0; i < prefix; i++)
		if (((a[i / 8] ^ b[i / 8]) >> (7 - i % 8)) & 1)
			return false;
	return true;
}

static void check_addresses(const uint8_t *b, const char *cidr)
{
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 }, m6 = { .sin6_family = AF_INET6 };
	enum sbx_addr_class c4, c6;
	const char *why = NULL;
	char net[64];
	uint8_t nb[16];
	unsigned prefix;
	int used = 0;

	memcpy(&s4.sin_addr, b, 4);
	memcpy(&s6.sin6_addr, b + 4, 16);
	c4 = sbx_netcheck_classify((struct sockaddr *)&s4);
	c6 = sbx_netcheck_classify((struct sockaddr *)&s6);
	fuzz_assert(c4 != SBX_ADDR_UNKNOWN && c6 != SBX_ADDR_UNKNOWN);
	fuzz_assert(strcmp(sbx_netcheck_class_name(c4), "") != 0);

	/* ::ffff:a.b.c.d and 64:ff9b::a.b.c.d are a.b.c.d. */
	m6.sin6_addr.s6_addr[10] = m6.sin6_addr.s6_addr[11] = 0xff;
	memcpy(&m6.sin6_addr.s6_addr[12], b, 4);
	fuzz_assert(sbx_netcheck_classify((struct sockaddr *)&m6) == c4);
	memset(&m6.sin6_addr, 0, 12);
	m6.sin6_addr.s6_addr[1] = 0x64;
	m6.sin6_addr.s6_addr[2] = 0xff;
	m6.sin6_addr.s6_addr[3] = 0x9b;
	fuzz_assert(sbx_netcheck_classify((struct sockaddr *)&m6) == c4);

	fuzz_assert(sbx_netcheck_address_allowed(NULL, (struct sockaddr *)&s4, &why) ==
		    (c4 == SBX_ADDR_PUBLIC));
	fuzz_assert(c4 == SBX_ADDR_PUBLIC || (why && *why));
	fuzz_assert(sbx_netcheck_address_allowed(NULL, (struct sockaddr *)&s6, NULL) ==
		    (c6 == SBX_ADDR_PUBLIC));

	/* A prefix in the strict form the catalog accepts matches by bits. */
	bool in4 = sbx_netcheck_in_cidr((struct sockaddr *)&s4, cidr);
	bool in6 = sbx_netcheck_in_cidr((struct sockaddr *)&s6, cidr);
	if (sscanf(cidr, "%63[0-9a-fA-F.:]/%3u%n", net, &prefix, &used) == 2 &&
	    (size_t)used == strlen(cidr) && cidr[strlen(net) + 1] >= '0' &&
	    cidr[strlen(net) + 1] <= '9') {
		if (!strchr(net, ':') && inet_pton(AF_INET, net, nb) == 1 && prefix <= 32) {
			fuzz_assert(in4 == same_prefix(b, nb, prefix));
			fuzz_assert(!in6 || (!memcmp(b + 4, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) &&
					     same_prefix(b + 16, nb, prefix)));
		} else if (strchr(net, ':') && inet_pton(AF_INET6, net, nb) == 1 && prefix <= 128) {
			fuzz_assert(in6 == same_prefix(b + 4, nb, prefix));
			fuzz_assert(!in4);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;
	uint8_t addr[20] = { 0 };

	if (size < 2)
		return 0;
	/* Bytes 0-1: a port; then 20 bytes of addresses (when present) and
	 * the rest as text: a host, or a prefix. */
	memcpy(addr, data + 2, size - 2 < sizeof(addr) ? size - 2 : sizeof(addr));
	s = fuzz_strndup(data + 2, size - 2);
	check_host((const char *)data + 2, size - 2, (uint16_t)(data[0] << 8 | data[1]));
	check_addresses(addr, size > 22 ? s + 20 : "");
	free(s);
	return 0;
}
