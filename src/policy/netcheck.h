/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * netcheck.h - the egress proxy's decisions that need no I/O: what kind of
 * address a destination is, whether a requested host and port are on a
 * network profile's allowlist, and whether an address lies in one of the
 * profile's allow_cidrs.
 *
 * Kept apart from the proxy's event loop so that every rule is a table in
 * a unit test.
 */
#ifndef SBX_NETCHECK_H
#define SBX_NETCHECK_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "catalog.h"

/* Address classes.  Everything but SBX_ADDR_PUBLIC is refused unless the
 * address lies in one of the profile's allow_cidrs. */
enum sbx_addr_class {
	SBX_ADDR_PUBLIC,
	SBX_ADDR_UNSPECIFIED,   /* 0.0.0.0/8, :: */
	SBX_ADDR_LOOPBACK,      /* 127/8, ::1 */
	SBX_ADDR_PRIVATE,       /* RFC 1918, fec0::/10 */
	SBX_ADDR_LINK_LOCAL,    /* 169.254/16, fe80::/10 */
	SBX_ADDR_METADATA,      /* 169.254.169.254, fd00:ec2::254 */
	SBX_ADDR_CGNAT,         /* 100.64/10 */
	SBX_ADDR_UNIQUE_LOCAL,  /* fc00::/7 */
	SBX_ADDR_MULTICAST,     /* 224/4, ff00::/8 */
	SBX_ADDR_DOCUMENTATION, /* TEST-NET-1..3, 2001:db8::/32 */
	SBX_ADDR_RESERVED,      /* 240/4, broadcast, 192.0.0/24, 198.18/15, ... */
	SBX_ADDR_UNKNOWN,       /* not AF_INET or AF_INET6 */
};

/* Short lowercase name of @c ("loopback", "metadata", ...). */
const char *sbx_netcheck_class_name(enum sbx_addr_class c);

/*
 * sbx_netcheck_classify() - the class of @sa.  IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible, NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses are
 * judged by the IPv4 address they carry, so no IPv6 spelling of an
 * internal IPv4 address passes as public.
 */
enum sbx_addr_class sbx_netcheck_classify(const struct sockaddr *sa);

/* Is @sa inside "@cidr" (address/prefix, as the catalog validated it)?
 * An IPv4-mapped IPv6 address is compared as its IPv4 address. */
bool sbx_netcheck_in_cidr(const struct sockaddr *sa, const char *cidr);

/*
 * sbx_netcheck_address_allowed() - may the proxy connect to @sa under
 * @np?  True for public addresses and for any address inside one of
 * @np's allow_cidrs; @why (may be NULL) gets the class name otherwise.
 */
bool sbx_netcheck_address_allowed(const struct sbx_netprofile *np, const struct sockaddr *sa,
				  const char **why);

/* What a requested host was found to be. */
enum sbx_host_kind { SBX_HOST_NAME, SBX_HOST_IPV4, SBX_HOST_IPV6 };

#define SBX_HOST_MAX 256

/*
 * sbx_netcheck_host_normalize() - the canonical form of a requested host
 * into @out: a DNS name lowercased without one trailing dot, an IPv4
 * literal in dotted quad, an IPv6 literal (given with or without
 * brackets) in inet_ntop's form without brackets.  Returns false for
 * anything else (empty labels, characters outside [A-Za-z0-9.-], labels
 * over 63 bytes, an all-numeric name that is not a dotted quad such as
 * "2130706433" or "0x7f.1").
 */
bool sbx_netcheck_host_normalize(const char *in, size_t len, char out[SBX_HOST_MAX],
				 enum sbx_host_kind *kind);

enum sbx_host_verdict {
	SBX_HOST_ALLOWED,
	SBX_HOST_NOT_LISTED,  /* no entry names this host */
	SBX_HOST_BAD_PORT,    /* an entry names it, but not on this port */
};

/*
 * sbx_netcheck_match() - look @host (normalized) and @port up in @np's
 * allowlist.  Exact entries match the same name or address; "*.suffix"
 * matches names with at least one more label in front of ".suffix" (not
 * "suffix" itself, and never an IP literal).  The first entry that names
 * the host with the port wins.
 */
enum sbx_host_verdict sbx_netcheck_match(const struct sbx_netprofile *np, const char *host,
					 uint16_t port);

enum sbx_connect_verdict {
	SBX_CONNECT_OK,
	SBX_CONNECT_FORBIDDEN, /* the profile has "connect": false */
	SBX_CONNECT_BAD_PORT,  /* not one of its "connect" ports */
};

/* May a CONNECT tunnel go to @port under @np (before the allowlist, which
 * applies as well)? */
enum sbx_connect_verdict sbx_netcheck_connect(const struct sbx_netprofile *np, uint16_t port);

#endif
