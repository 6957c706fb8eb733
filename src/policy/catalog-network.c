/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog-network.c - parse one network profile, DIR/network/NAME.json
 * (format in sbx-policy(5)): "disabled", or "egress" with the allowlist
 * of host names and ports, the CIDR escape hatch, the connection and byte
 * caps and where CONNECT tunnels may go.
 *
 * Kept apart from the loader (catalog.c), which calls parse_network() for
 * each file of DIR/network, and from the other kinds: a network profile
 * shares nothing with them but the JSON helpers, and what it accepts is
 * what the egress proxy is written against (one lowercase spelling per
 * host name, so that the proxy's comparison is a plain string compare).
 */
#include "config.h"

#include <arpa/inet.h>
#include <string.h>

#include "catalog-internal.h"

static const char *const network_keys[] = {
	"description", "kind", "allow", "allow_cidrs", "max_connections", "max_bytes", "connect",
	NULL,
};

/* A lowercase DNS name (labels of [a-z0-9-], no leading or trailing '-'),
 * optionally "*." + such a name for a whole domain.  Lowercase only, so
 * that the proxy's comparison is a plain string compare. */
static bool host_valid(const char *s)
{
	size_t len;

	if (s[0] == '*' && s[1] == '.')
		s += 2;
	len = strlen(s);
	if (len == 0 || len > 253)
		return false;
	for (const char *p = s;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);

		if (n == 0 || n > 63 || p[0] == '-' || p[n - 1] == '-')
			return false;
		for (size_t i = 0; i < n; i++)
			if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') ||
			      p[i] == '-'))
				return false;
		if (!dot)
			return true;
		p = dot + 1;
	}
}

static bool cidr_valid(const char *s)
{
	const char *slash = strchr(s, '/');
	unsigned char buf[16];
	char addr[64];
	unsigned long prefix = 0;
	size_t n;
	int af;

	if (!slash || (n = (size_t)(slash - s)) == 0 || n >= sizeof(addr))
		return false;
	memcpy(addr, s, n);
	addr[n] = '\0';
	af = strchr(addr, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(af, addr, buf) != 1)
		return false;
	if (!slash[1] || strlen(slash + 1) > 3)
		return false;
	for (const char *p = slash + 1; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		prefix = prefix * 10 + (unsigned long)(*p - '0');
	}
	return prefix <= (af == AF_INET ? 32u : 128u);
}

/* "connect": true, false, or the ports a tunnel may go to (each also
 * needs an allow entry; one spelling each, so no empty list). */
static int parse_connect(const struct sbx_jctx *c, const json_t *v, struct sbx_netprofile *np)
{
	static const char what[] = "true, false or an array of ports";

	np->connect = SBX_CONNECT_ANY;
	if (!v || json_is_true(v))
		return 0;
	if (json_is_false(v)) {
		np->connect = SBX_CONNECT_NONE;
		return 0;
	}
	if (!json_is_array(v))
		return sbx_json_expected(c, "connect", v, what);
	if (sbx_json_array(c, "connect", v, 64) < 0)
		return -1;
	if (json_array_size(v) == 0)
		return sbx_json_error(c, "connect", "expected at least one port (false forbids CONNECT)");
	np->connect = SBX_CONNECT_PORTS;
	np->connect_ports = sbx_xcalloc(json_array_size(v), sizeof(*np->connect_ports));
	for (size_t k = 0; k < json_array_size(v); k++) {
		char pp[SBX_JSON_PATH_MAX];
		uint64_t port;

		sbx_json_path_index(pp, "connect", k);
		if (sbx_json_uint(c, pp, json_array_get(v, k), 1, 65535, &port) < 0)
			return -1;
		for (size_t j = 0; j < k; j++)
			if (np->connect_ports[j] == port)
				return sbx_json_error(c, pp, "port listed twice");
		np->connect_ports[k] = (uint16_t)port;
		np->n_connect_ports = k + 1;
	}
	return 0;
}

int parse_allowlist(const struct sbx_jctx *c, const json_t *root, struct sbx_netprofile *np)
{
	static const char *const rule_keys[] = { "host", "ports", NULL };
	const json_t *v;

	if (!(v = sbx_json_required(c, "", root, "allow")) ||
	    sbx_json_array(c, "allow", v, CATALOG_MAX_ENTRIES) < 0)
		return -1;
	np->allow = sbx_xcalloc(json_array_size(v), sizeof(*np->allow));
	for (size_t i = 0; i < json_array_size(v); i++) {
		const json_t *e = json_array_get(v, i), *f;
		struct sbx_egress_rule *r = &np->allow[i];
		char p[SBX_JSON_PATH_MAX], q[SBX_JSON_PATH_MAX];

		np->n_allow = i + 1;
		sbx_json_path_index(p, "allow", i);
		if (sbx_json_check_keys(c, p, e, rule_keys) < 0 ||
		    !(f = sbx_json_required(c, p, e, "host")))
			return -1;
		sbx_json_path_key(q, p, "host");
		if (sbx_json_string(c, q, f, 255, &r->host) < 0)
			return -1;
		if (!host_valid(r->host))
			return sbx_json_expected(c, q, f, "a lowercase host name or \"*.domain\"");
		if (!(f = sbx_json_required(c, p, e, "ports")))
			return -1;
		sbx_json_path_key(q, p, "ports");
		if (sbx_json_array(c, q, f, 64) < 0)
			return -1;
		if (json_array_size(f) == 0)
			return sbx_json_error(c, q, "expected at least one port");
		r->ports = sbx_xcalloc(json_array_size(f), sizeof(*r->ports));
		for (size_t k = 0; k < json_array_size(f); k++) {
			char pp[SBX_JSON_PATH_MAX];
			uint64_t port;

			sbx_json_path_index(pp, q, k);
			if (sbx_json_uint(c, pp, json_array_get(f, k), 1, 65535, &port) < 0)
				return -1;
			r->ports[k] = (uint16_t)port;
			r->n_ports = k + 1;
		}
	}
	v = json_object_get(root, "allow_cidrs");
	if (v) {
		if (sbx_json_strv(c, "allow_cidrs", v, CATALOG_MAX_ENTRIES, 64, cidr_valid,
				  "an address/prefix (CIDR)", true, &np->allow_cidrs) < 0)
			return -1;
	} else {
		np->allow_cidrs = sbx_xcalloc(1, sizeof(char *));
	}
	if ((v = json_object_get(root, "max_connections")) &&
	    sbx_json_uint(c, "max_connections", v, 1, 65536, &np->max_connections) < 0)
		return -1;
	if ((v = json_object_get(root, "max_bytes")) &&
	    sbx_json_uint(c, "max_bytes", v, 1, UINT64_C(1) << 40, &np->max_bytes) < 0)
		return -1;
	return parse_connect(c, json_object_get(root, "connect"), np);
}

int parse_network(const struct sbx_jctx *c, const json_t *root, struct sbx_netprofile *np)
{
	static const char *const egress_only[] = { "allow", "allow_cidrs", "max_connections",
						   "max_bytes", "connect" };
	const json_t *v;

	if (sbx_json_check_keys(c, "", root, network_keys) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "description")) ||
	    sbx_json_string(c, "description", v, 1024, &np->description) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "kind")))
		return -1;
	if (json_is_string(v) && strcmp(json_string_value(v), "egress") == 0)
		np->kind = SBX_NET_EGRESS;
	else if (json_is_string(v) && strcmp(json_string_value(v), "disabled") == 0)
		np->kind = SBX_NET_DISABLED;
	else
		return sbx_json_expected(c, "kind", v, "\"disabled\" or \"egress\"");
	if (np->kind == SBX_NET_EGRESS)
		return parse_allowlist(c, root, np);
	/* A disabled profile with an allowlist is a contradiction that would
	 * mislead whoever reads it. */
	for (size_t i = 0; i < ARRAY_SIZE(egress_only); i++)
		if (json_object_get(root, egress_only[i]))
			return sbx_json_error(c, egress_only[i], "only allowed with kind \"egress\"");
	np->allow_cidrs = sbx_xcalloc(1, sizeof(char *));
	return 0;
}

void network_free(struct sbx_netprofile *np)
{
	free(np->name);
	free(np->file);
	free(np->raw);
	free(np->description);
	for (size_t i = 0; i < np->n_allow; i++) {
		free(np->allow[i].host);
		free(np->allow[i].ports);
	}
	free(np->allow);
	sbx_strv_free(np->allow_cidrs);
	free(np->connect_ports);
}
