/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * budgets.c - the kernel budgets that the host keeps per uid, as far as
 * the broker's own set-up depends on them.
 *
 * A payload runs as a host uid: each of root's runs as an id of its own
 * (rootids.c), an unprivileged caller's as the caller itself.  In that
 * second, shared, case whatever the kernel counts per host uid, the
 * payload takes from the caller's count, and so from every other run of
 * the caller, and from the broker that sets them up.  What sbx does about
 * each (docs/design.md, "What the runs of one uid share"):
 *
 *   fds in flight over unix sockets (user->unix_inflight): a sender is
 *     refused with ETOOMANYREFS once the count is above its own soft
 *     RLIMIT_NOFILE (too_many_unix_fds() in net/unix).  A payload, at
 *     SBX_PAYLOAD_NOFILE, can take the count to its limit plus one
 *     message; the broker raises its soft limit to the hard one before
 *     the init is cloned, so the broker's and the init's messages stay
 *     below it (here), and a failure names the budget (the Hint below).
 *   epoll watches (fs.epoll.max_user_watches): the broker waits with
 *     poll(2), which has no per-uid budget (supervisor.c, the proxy).
 *   processes (RLIMIT_NPROC): the kernel also counts the sandbox's tasks
 *     as the namespace owner's, capped at the owner's soft limit when the
 *     namespace is made (create_user_ns); the broker raises it to the hard
 *     limit first (here), and names the limit when it refused a fork
 *     (nproc.c counts the caller's tasks).
 *   inotify instances and watches (fs.inotify.*, charged to the owner of
 *     the payload's user namespace): admission waits for a slot without
 *     inotify when it cannot have one (admission.c).
 */
#include "config.h"

#include <errno.h>
#include <sys/resource.h>
#include <unistd.h>

#include "budgets.h"

static const char nofile_fix[] =
	"raise the hard limit of open files: LimitNOFILE= in the service's unit, `nofile` in "
	"/etc/security/limits.conf (from the next login), or `ulimit -Hn` as root in the shell "
	"that starts sbx";

/* The soft limit of @res up to its hard one; *@rl is the result. */
static int raise_to_hard(int res, const char *name, struct rlimit *rl, struct sbx_error *err)
{
	if (rl->rlim_cur == rl->rlim_max)
		return 0;
	rl->rlim_cur = rl->rlim_max;
	if (setrlimit(res, rl) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "raising %s to its hard limit %llu",
				     name, (unsigned long long)rl->rlim_max);
	return 0;
}

int sbx_budget_nproc(rlim_t *budget, struct sbx_error *err)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NPROC, &rl) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "getrlimit(RLIMIT_NPROC)");
	if (raise_to_hard(RLIMIT_NPROC, "RLIMIT_NPROC", &rl, err) < 0)
		return -1;
	/* Host root (uid 0 in the initial namespace) is never held to it,
	 * nor are the namespaces it makes. */
	*budget = geteuid() == 0 ? RLIM_INFINITY : rl.rlim_max;
	return 0;
}

int sbx_budget_nofile(uint64_t *soft, struct sbx_error *err)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "getrlimit(RLIMIT_NOFILE)");
	/* Root has CAP_SYS_RESOURCE, which lifts the check for its own
	 * messages; the init's are charged to the caller's uid (root's, not
	 * a payload's).  Raised all the same: it costs nothing. */
	if (geteuid() != 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max < SBX_BROKER_NOFILE_MIN) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "RLIMIT_NOFILE: the hard limit of open files is %llu, below the %u that "
			      "sbx needs",
			      (unsigned long long)rl.rlim_max, SBX_BROKER_NOFILE_MIN);
		sbx_error_hint(err,
			       "a payload runs as your uid and can keep %u fds in flight over unix "
			       "sockets, which the kernel counts per uid and checks against the "
			       "sender's soft RLIMIT_NOFILE; sbx sets up each run with its soft limit "
			       "at the hard one, which must be at least %u: %s",
			       SBX_PAYLOAD_NOFILE + SBX_SCM_MAX_FD, SBX_BROKER_NOFILE_MIN, nofile_fix);
		return -1;
	}
	if (raise_to_hard(RLIMIT_NOFILE, "RLIMIT_NOFILE", &rl, err) < 0)
		return -1;
	*soft = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
	return 0;
}

bool sbx_budget_nofile_hint(int errnum, struct sbx_error *err)
{
	struct rlimit rl = { 0 };

	if (errnum != ETOOMANYREFS)
		return false;
	/* A budget of the host's, not a bug of sbx's: 69 with the fix,
	 * like every control that cannot be applied. */
	err->code = SBX_EXIT_UNAVAILABLE;
	getrlimit(RLIMIT_NOFILE, &rl);
	sbx_error_hint(err,
		       "the kernel counts fds in flight over unix sockets per uid, and processes "
		       "of uid %u hold more in flight (sent, not yet received) than the soft "
		       "RLIMIT_NOFILE of %llu allows; a payload of this uid can hold at most %u; "
		       "%s",
		       (unsigned)getuid(), (unsigned long long)rl.rlim_cur,
		       SBX_PAYLOAD_NOFILE + SBX_SCM_MAX_FD, nofile_fix);
	return true;
}
