/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * netns.c - the network namespace's one interface.
 *
 * A new net namespace has only "lo", and it is down: a payload that talks
 * to itself over 127.0.0.1 (a local test server, a multiprocessing
 * manager) would fail confusingly.  Bring it up with libnl-route, nothing
 * else: no other interface, no route, so there is nowhere to send a packet.
 *
 * The broker does it, over a NETLINK_ROUTE socket that the sandbox's init
 * opened in the new namespace and passed over: a netlink socket talks to
 * the namespace it was created in, and the kernel checks CAP_NET_ADMIN
 * against that namespace's owner both for the socket's opener (the init)
 * and for the sender (the broker, which created the user namespace).  So
 * lo comes up while the init builds the root, not before it.
 */
#include "config.h"

#include <errno.h>
#include <net/if.h>
#include <unistd.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

#include "netns.h"

int sbx_netns_lo_up(int nl_fd)
{
	struct nl_sock *sk = nl_socket_alloc();
	struct rtnl_link *lo = NULL, *change = NULL;
	int r;

	if (!sk) {
		close(nl_fd);
		return -ENOMEM;
	}
	/* From here on the socket owns @nl_fd (nl_socket_free closes it). */
	r = nl_socket_set_fd(sk, NETLINK_ROUTE, nl_fd);
	if (r < 0) {
		close(nl_fd);
		goto out;
	}
	/* In a new namespace "lo" is always interface 1: address it by index
	 * instead of asking the kernel for the link first (one round trip
	 * less on every run's start-up path). */
	lo = rtnl_link_alloc();
	change = rtnl_link_alloc();
	if (!lo || !change) {
		r = -NLE_NOMEM;
		goto out;
	}
	rtnl_link_set_ifindex(lo, 1);
	rtnl_link_set_flags(change, IFF_UP);
	r = rtnl_link_change(sk, lo, change, 0);
out:
	rtnl_link_put(change);
	rtnl_link_put(lo);
	nl_socket_free(sk);
	/* libnl errors are its own codes; map the ones that matter. */
	if (r == -NLE_PERM)
		return -EPERM;
	if (r < 0)
		return -EIO;
	return 0;
}
