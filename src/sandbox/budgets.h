/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * budgets.h - the kernel's per-uid budgets, as far as the broker's own
 * set-up depends on them (budgets.c).
 */
#ifndef SBX_BUDGETS_H
#define SBX_BUDGETS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "error.h"

/* The payload's RLIMIT_NOFILE (soft and hard), set by the init. */
#define SBX_PAYLOAD_NOFILE 1024u
/* The most fds one SCM_RIGHTS message carries (the kernel's SCM_MAX_FD). */
#define SBX_SCM_MAX_FD 253u
/* The hard RLIMIT_NOFILE an unprivileged caller needs: room above what a
 * payload can keep in flight (its own limit plus one message) for
 * concurrent senders that pass the kernel's check together, and for the
 * broker's and the init's own messages.  It is the kernel's default hard
 * limit, so only a host that lowered it falls short. */
#define SBX_BROKER_NOFILE_MIN 4096u

/*
 * sbx_budget_nofile() - raise this process's soft RLIMIT_NOFILE to its
 * hard limit, before the sandbox's init is cloned (the init inherits it
 * until it sets the payload's).  The kernel refuses to pass fds over a
 * unix socket (ETOOMANYREFS) when the sender's host uid has more in flight
 * than the sender's soft limit, and a payload of the same uid can keep up
 * to SBX_PAYLOAD_NOFILE + SBX_SCM_MAX_FD in flight.  *@soft is the new
 * soft limit.  Returns 0; -1 with 69 and a Hint when the caller is not
 * root and its hard limit is below SBX_BROKER_NOFILE_MIN (root is not
 * subject to the check, and its runs have uids of their own).
 */
int sbx_budget_nofile(uint64_t *soft, struct sbx_error *err);

/*
 * sbx_budget_nproc() - raise this process's soft RLIMIT_NPROC to its hard
 * limit, before the sandbox's user namespace is made: the kernel caps the
 * count of the caller's processes, the sandbox's included, at the creator's
 * soft limit at that moment.  Sets *@budget to that cap: RLIM_INFINITY for
 * host root, whose namespaces have none.  Errors: SBX_EXIT_SOFTWARE when
 * the limit cannot be read or raised.
 */
int sbx_budget_nproc(rlim_t *budget, struct sbx_error *err);

/* sbx_budget_nofile_hint() - when @errnum is ETOOMANYREFS, add the Hint
 * that names the budget (fds in flight per uid, RLIMIT_NOFILE) to @err,
 * set by the caller, and make it 69 (SBX_EXIT_UNAVAILABLE): a host
 * budget, with its fix; true when it did. */
bool sbx_budget_nofile_hint(int errnum, struct sbx_error *err);

#endif
