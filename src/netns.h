/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef SBX_NETNS_H
#define SBX_NETNS_H

/* Bring "lo" up in the current network namespace.  -errno on failure. */
int sbx_netns_lo_up(void);

#endif
