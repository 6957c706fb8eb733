/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-netcheck.c - address classes, allow_cidrs and allowlist matching. */
#include "config.h"

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "netcheck.h"

static void to_sockaddr(const char *a, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(a, ':')) {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;
		s->sin6_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
	} else {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;
		s->sin_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, a, &s->sin_addr), 1);
	}
}

static const struct {
	const char *addr;
	enum sbx_addr_class cls;
} classes[] = {
	/* IPv4 */
	{ "0.0.0.0", SBX_ADDR_UNSPECIFIED },
	{ "0.1.2.3", SBX_ADDR_UNSPECIFIED },
	{ "127.0.0.1", SBX_ADDR_LOOPBACK },
	{ "127.255.255.254", SBX_ADDR_LOOPBACK },
	{ "10.0.0.1", SBX_ADDR_PRIVATE },
	{ "10.255.255.255", SBX_ADDR_PRIVATE },
	{ "172.16.0.1", SBX_ADDR_PRIVATE },
	{ "172.31.255.255", SBX_ADDR_PRIVATE },
	{ "172.15.255.255", SBX_ADDR_PUBLIC },
	{ "172.32.0.0", SBX_ADDR_PUBLIC },
	{ "192.168.1.1", SBX_ADDR_PRIVATE },
	{ "169.254.0.1", SBX_ADDR_LINK_LOCAL },
	{ "169.254.169.254", SBX_ADDR_METADATA },
	{ "169.254.169.253", SBX_ADDR_LINK_LOCAL },
	{ "100.64.0.1", SBX_ADDR_CGNAT },
	{ "100.127.255.255", SBX_ADDR_CGNAT },
	{ "100.128.0.0", SBX_ADDR_PUBLIC },
	{ "100.63.255.255", SBX_ADDR_PUBLIC },
	{ "224.0.0.1", SBX_ADDR_MULTICAST },
	{ "239.255.255.250", SBX_ADDR_MULTICAST },
	{ "240.0.0.1", SBX_ADDR_RESERVED },
	{ "255.255.255.255", SBX_ADDR_RESERVED },
	{ "192.0.0.192", SBX_ADDR_RESERVED },
	{ "198.18.0.1", SBX_ADDR_RESERVED },
	{ "198.19.255.255", SBX_ADDR_RESERVED },
	{ "192.0.2.1", SBX_ADDR_DOCUMENTATION },
	{ "198.51.100.7", SBX_ADDR_DOCUMENTATION },
	{ "203.0.113.9", SBX_ADDR_DOCUMENTATION },
	{ "8.8.8.8", SBX_ADDR_PUBLIC },
	{ "1.1.1.1", SBX_ADDR_PUBLIC },
	{ "151.101.0.223", SBX_ADDR_PUBLIC },
	/* IPv6 */
	{ "::", SBX_ADDR_UNSPECIFIED },
	{ "::1", SBX_ADDR_LOOPBACK },
	{ "fe80::1", SBX_ADDR_LINK_LOCAL },
	{ "febf::1", SBX_ADDR_LINK_LOCAL },
	{ "fec0::1", SBX_ADDR_PRIVATE },
	{ "fc00::1", SBX_ADDR_UNIQUE_LOCAL },
	{ "fdff:ffff::1", SBX_ADDR_UNIQUE_LOCAL },
	{ "fd00:ec2::254", SBX_ADDR_METADATA },
	{ "fd00:ec2::253", SBX_ADDR_UNIQUE_LOCAL },
	{ "ff02::1", SBX_ADDR_MULTICAST },
	{ "ff05::2", SBX_ADDR_MULTICAST },
	{ "2001:db8::1", SBX_ADDR_DOCUMENTATION },
	{ "2001::1", SBX_ADDR_RESERVED },   /* Teredo */
	{ "100::1", SBX_ADDR_RESERVED },    /* discard */
	{ "4000::1", SBX_ADDR_RESERVED },   /* not global unicast */
	{ "2606:4700::1111", SBX_ADDR_PUBLIC },
	{ "2a00:1450:4001::200e", SBX_ADDR_PUBLIC },
	/* IPv4 carried in IPv6: judged by the IPv4 address. */
	{ "::ffff:127.0.0.1", SBX_ADDR_LOOPBACK },
	{ "::ffff:10.1.2.3", SBX_ADDR_PRIVATE },
	{ "::ffff:169.254.169.254", SBX_ADDR_METADATA },
	{ "::ffff:100.64.1.1", SBX_ADDR_CGNAT },
	{ "::ffff:0.0.0.0", SBX_ADDR_UNSPECIFIED },
	{ "::ffff:224.0.0.1", SBX_ADDR_MULTICAST },
	{ "::ffff:8.8.8.8", SBX_ADDR_PUBLIC },
	{ "::127.0.0.1", SBX_ADDR_LOOPBACK },     /* IPv4-compatible */
	{ "64:ff9b::a9fe:a9fe", SBX_ADDR_METADATA }, /* NAT64 of 169.254.169.254 */
	{ "64:ff9b::808:808", SBX_ADDR_PUBLIC },
	{ "2002:7f00:1::1", SBX_ADDR_LOOPBACK },  /* 6to4 of 127.0.0.1 */
	{ "2002:c0a8:101::1", SBX_ADDR_PRIVATE }, /* 6to4 of 192.168.1.1 */
};

static void test_classify(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(classes); i++) {
		struct sockaddr_storage ss;
		enum sbx_addr_class got;

		to_sockaddr(classes[i].addr, &ss);
		got = sbx_netcheck_classify((struct sockaddr *)&ss);
		if (got != classes[i].cls)
			fail_msg("%s: got %s, want %s", classes[i].addr, sbx_netcheck_class_name(got),
				 sbx_netcheck_class_name(classes[i].cls));
	}
	{
		struct sockaddr sa = { .sa_family = AF_UNIX };
		assert_int_equal(sbx_netcheck_classify(&sa), SBX_ADDR_UNKNOWN);
	}
}

static const struct {
	const char *addr, *cidr;
	bool in;
} cidrs[] = {
	{ "198.51.100.7", "198.51.100.0/24", true },
	{ "198.51.101.7", "198.51.100.0/24", false },
	{ "10.1.2.3", "10.0.0.0/8", true },
	{ "11.1.2.3", "10.0.0.0/8", false },
	{ "1.2.3.4", "0.0.0.0/0", true },
	{ "127.0.0.1", "127.0.0.1/32", true },
	{ "127.0.0.2", "127.0.0.1/32", false },
	{ "::ffff:198.51.100.7", "198.51.100.0/24", true },
	{ "2001:db8::5", "2001:db8::/32", true },
	{ "2001:db9::5", "2001:db8::/32", false },
	{ "2001:db8::5", "2001:db8::4/127", true },
	{ "2001:db8::6", "2001:db8::4/127", false },
	{ "198.51.100.7", "2001:db8::/32", false },
	{ "2001:db8::5", "198.51.100.0/24", false },
	{ "fd00::1", "fd00::/8", true },
};

static void test_cidr(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cidrs); i++) {
		struct sockaddr_storage ss;

		to_sockaddr(cidrs[i].addr, &ss);
		if (sbx_netcheck_in_cidr((struct sockaddr *)&ss, cidrs[i].cidr) != cidrs[i].in)
			fail_msg("%s in %s: want %d", cidrs[i].addr, cidrs[i].cidr, cidrs[i].in);
	}
}

static void test_address_allowed(void **state)
{
	char *cidr_list[] = { "198.51.100.0/24", "fd00:1::/64", NULL };
	char *none[] = { NULL };
	struct sbx_netprofile with = { .allow_cidrs = cidr_list }, without = { .allow_cidrs = none };
	static const struct {
		const char *addr;
		bool with, without;
		const char *why;
	} t[] = {
		{ "8.8.8.8", true, true, NULL },
		{ "198.51.100.2", true, false, "documentation" },
		{ "::ffff:198.51.100.2", true, false, "documentation" },
		{ "fd00:1::5", true, false, "unique-local" },
		{ "127.0.0.1", false, false, "loopback" },
		{ "169.254.169.254", false, false, "metadata" },
		{ "fd00:ec2::254", false, false, "metadata" },
		{ "10.0.0.1", false, false, "private" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct sockaddr_storage ss;
		const char *why = NULL;

		to_sockaddr(t[i].addr, &ss);
		if (sbx_netcheck_address_allowed(&with, (struct sockaddr *)&ss, NULL) != t[i].with)
			fail_msg("%s with cidrs: want %d", t[i].addr, t[i].with);
		if (sbx_netcheck_address_allowed(&without, (struct sockaddr *)&ss, &why) !=
		    t[i].without)
			fail_msg("%s without cidrs: want %d", t[i].addr, t[i].without);
		if (t[i].why)
			assert_string_equal(why, t[i].why);
	}
}

static const struct {
	const char *in, *out;
	enum sbx_host_kind kind;
} hosts_ok[] = {
	{ "example.org", "example.org", SBX_HOST_NAME },
	{ "Example.ORG", "example.org", SBX_HOST_NAME },
	{ "example.org.", "example.org", SBX_HOST_NAME },
	{ "a-b.c1.example", "a-b.c1.example", SBX_HOST_NAME },
	{ "localhost", "localhost", SBX_HOST_NAME },
	{ "198.51.100.2", "198.51.100.2", SBX_HOST_IPV4 },
	{ "198.51.100.2.", "198.51.100.2", SBX_HOST_IPV4 },
	{ "[2001:db8::1]", "2001:db8::1", SBX_HOST_IPV6 },
	{ "[2001:DB8:0::1]", "2001:db8::1", SBX_HOST_IPV6 },
	{ "2001:db8::1", "2001:db8::1", SBX_HOST_IPV6 },
	{ "[::ffff:127.0.0.1]", "::ffff:127.0.0.1", SBX_HOST_IPV6 },
};

static const char *const hosts_bad[] = {
	"", ".", "..", "example..org", ".example.org", "example.org..", "-a.example", "a-.example",
	"exa mple.org", "exa_mple.org", "example.org/x", "user@example.org", "2130706433",
	"0x7f.1", "127.1", "0177.0.0.1", "[2001:db8::1", "[]", "[fe80::1%eth0]", "[example.org]",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.org",
	"ex\xc3\xa4mple.org",
};

static void test_normalize(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(hosts_ok); i++) {
		char out[SBX_HOST_MAX];
		enum sbx_host_kind k;

		if (!sbx_netcheck_host_normalize(hosts_ok[i].in, strlen(hosts_ok[i].in), out, &k))
			fail_msg("%s: refused", hosts_ok[i].in);
		assert_string_equal(out, hosts_ok[i].out);
		assert_int_equal(k, hosts_ok[i].kind);
	}
	for (size_t i = 0; i < ARRAY_SIZE(hosts_bad); i++) {
		char out[SBX_HOST_MAX];
		enum sbx_host_kind k;

		if (sbx_netcheck_host_normalize(hosts_bad[i], strlen(hosts_bad[i]), out, &k))
			fail_msg("\"%s\": accepted as %s", hosts_bad[i], out);
	}
}

static void test_match(void **state)
{
	uint16_t p443[] = { 443 }, p80[] = { 80, 8080 }, p8[] = { 8000 };
	struct sbx_egress_rule rules[] = {
		{ .host = "pypi.org", .ports = p443, .n_ports = 1 },
		{ .host = "*.example.org", .ports = p80, .n_ports = 2 },
		{ .host = "198.51.100.2", .ports = p8, .n_ports = 1 },
		{ .host = "example.org", .ports = p443, .n_ports = 1 },
	};
	struct sbx_netprofile np = { .allow = rules, .n_allow = ARRAY_SIZE(rules) };
	static const struct {
		const char *host;
		uint16_t port;
		enum sbx_host_verdict v;
	} t[] = {
		{ "pypi.org", 443, SBX_HOST_ALLOWED },
		{ "pypi.org", 80, SBX_HOST_BAD_PORT },
		{ "www.pypi.org", 443, SBX_HOST_NOT_LISTED },
		{ "pypi.org.evil", 443, SBX_HOST_NOT_LISTED },
		{ "a.example.org", 80, SBX_HOST_ALLOWED },
		{ "a.b.example.org", 8080, SBX_HOST_ALLOWED },
		{ "a.example.org", 443, SBX_HOST_BAD_PORT },
		{ "example.org", 443, SBX_HOST_ALLOWED }, /* the exact entry, not the wildcard */
		{ "example.org", 80, SBX_HOST_BAD_PORT },
		{ "badexample.org", 80, SBX_HOST_NOT_LISTED },
		{ "xexample.org", 80, SBX_HOST_NOT_LISTED },
		{ "198.51.100.2", 8000, SBX_HOST_ALLOWED },
		{ "198.51.100.2", 80, SBX_HOST_BAD_PORT },
		{ "198.51.100.3", 8000, SBX_HOST_NOT_LISTED },
		{ "", 443, SBX_HOST_NOT_LISTED },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		enum sbx_host_verdict v = sbx_netcheck_match(&np, t[i].host, t[i].port);
		if (v != t[i].v)
			fail_msg("%s:%u: got %d, want %d", t[i].host, t[i].port, v, t[i].v);
	}

	/* A wildcard never matches an IP literal, whatever its suffix. */
	{
		struct sbx_egress_rule r = { .host = "*.0.0.1", .ports = p443, .n_ports = 1 };
		struct sbx_netprofile w = { .allow = &r, .n_allow = 1 };
		assert_int_equal(sbx_netcheck_match(&w, "127.0.0.1", 443), SBX_HOST_NOT_LISTED);
		assert_int_equal(sbx_netcheck_match(&w, "a.0.0.1", 443), SBX_HOST_ALLOWED);
	}
	assert_int_equal(sbx_netcheck_match(NULL, "pypi.org", 443), SBX_HOST_NOT_LISTED);
}

/* "connect": where a tunnel may go, before the allowlist is asked. */
static void test_connect(void **state)
{
	uint16_t ports[] = { 443, 8443 };
	struct sbx_netprofile any = { .connect = SBX_CONNECT_ANY };
	struct sbx_netprofile none = { .connect = SBX_CONNECT_NONE };
	struct sbx_netprofile some = { .connect = SBX_CONNECT_PORTS, .connect_ports = ports,
				       .n_connect_ports = 2 };

	(void)state;
	assert_int_equal(sbx_netcheck_connect(&any, 22), SBX_CONNECT_OK);
	assert_int_equal(sbx_netcheck_connect(&none, 443), SBX_CONNECT_FORBIDDEN);
	assert_int_equal(sbx_netcheck_connect(&some, 443), SBX_CONNECT_OK);
	assert_int_equal(sbx_netcheck_connect(&some, 8443), SBX_CONNECT_OK);
	assert_int_equal(sbx_netcheck_connect(&some, 80), SBX_CONNECT_BAD_PORT);
	assert_int_equal(sbx_netcheck_connect(&some, 0), SBX_CONNECT_BAD_PORT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_cidr),
		cmocka_unit_test(test_address_allowed),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_connect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
