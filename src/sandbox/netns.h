/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SBX_NETNS_H
#define SBX_NETNS_H

/* Bring "lo" up in the network namespace of the socket @fd (the init's
 * NETLINK_ROUTE socket), which it consumes (closed on return).  -errno on
 * failure. */
int sbx_netns_lo_up(int fd);

#endif
