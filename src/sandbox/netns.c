/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * netns.c - the network namespace's one interface.
 *
 * A new net namespace has only "lo", and it is down: a payload that talks
 * to itself over 127.0.0.1 (a local test server, a multiprocessing
 * manager) would fail confusingly.  Bring it up, nothing else: no other
 * interface, no route, so there is nowhere to send a packet.
 *
 * The broker does it, on a socket that the sandbox's init opened in the
 * new namespace and passed over (a NETLINK_ROUTE one): a socket belongs to
 * the namespace it was created in, and the interface ioctls act on that
 * namespace's devices, with CAP_NET_ADMIN checked against the namespace's
 * owner for the caller (the broker, which created the user namespace).  So
 * lo comes up while the init builds the root, not before it.
 *
 * SIOCSIFFLAGS, not an RTM_NEWLINK message through libnl-route: one flag
 * on one interface is what the ioctl does, and not loading libnl-3 and
 * libnl-route-3 saves every run ~0.3 ms of dynamic loading and
 * relocation.
 */
#include "config.h"

#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "netns.h"

int sbx_netns_lo_up(int fd)
{
	struct ifreq ifr;
	int r = 0;

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		r = -errno;
	} else if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			r = -errno;
	}
	close(fd);
	return r;
}
