/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * userns.h - why a host refused the sandbox's user namespace, and what to
 * change.
 *
 * Distributions restrict unprivileged user namespaces in several ways,
 * each showing up as a bare errno at one step of the sandbox's set-up:
 * Ubuntu's AppArmor restriction (the namespace is made, then stripped of
 * its capabilities: the init's unshare or lo fails with EPERM),
 * kernel.unprivileged_userns_clone=0 (Debian's older kernels: the clone
 * fails with EPERM), user.max_user_namespaces=0 (ENOSPC), SELinux (EACCES)
 * and a container runtime's seccomp filter (EPERM, no sysctl to blame).
 * The diagnosis is a pure function of the step, the errno and the host's
 * settings, which are read only once something has failed.
 */
#ifndef SBX_USERNS_H
#define SBX_USERNS_H

/* Which step of the sandbox's set-up failed. */
enum sbx_userns_step {
	SBX_USERNS_CLONE,      /* the broker's clone3 into new user and pid namespaces */
	SBX_USERNS_MAPS,       /* the broker writing setgroups, gid_map, uid_map */
	SBX_USERNS_NAMESPACES, /* the init's unshare of mount, net, ipc, uts, cgroup */
	SBX_USERNS_LO,         /* bringing lo up in the new network namespace */
};

enum sbx_userns_cause {
	SBX_USERNS_UNEXPLAINED,   /* nothing this host reports explains it */
	SBX_USERNS_NO_CLONE3,     /* ENOSYS on a kernel before 5.3 */
	SBX_USERNS_UNSUPPORTED,   /* EINVAL: a namespace type is not built in */
	SBX_USERNS_CLONE_SYSCTL,  /* kernel.unprivileged_userns_clone=0 */
	SBX_USERNS_MAX_ZERO,      /* user.max_user_namespaces=0 */
	SBX_USERNS_EXHAUSTED,     /* ENOSPC under a non-zero limit */
	SBX_USERNS_NESTING,       /* EUSERS: 32 user namespaces deep */
	SBX_USERNS_APPARMOR,      /* kernel.apparmor_restrict_unprivileged_userns=1 */
	SBX_USERNS_SELINUX,       /* EACCES with SELinux enforcing */
	SBX_USERNS_SECCOMP,       /* refused with no setting to blame: a filter */
	SBX_USERNS_SETFCAP,       /* uid 0 of a user namespace, mapping itself without CAP_SETFCAP */
};

/* What the diagnosis needs; -1 for a setting the host does not have. */
struct sbx_userns_facts {
	enum sbx_userns_step step;
	int err;                       /* errno of the failing step */
	int apparmor_restrict;         /* /proc/sys/kernel/apparmor_restrict_unprivileged_userns */
	int unprivileged_userns_clone; /* /proc/sys/kernel/unprivileged_userns_clone */
	long long max_user_namespaces; /* /proc/sys/user/max_user_namespaces */
	int selinux_enforce;           /* /sys/fs/selinux/enforce */
	int kernel_major, kernel_minor; /* /proc/sys/kernel/osrelease, 0.0 when unknown */
	const char *exe;               /* sbx's own path, for an AppArmor profile */
	int root_without_setfcap;      /* 1: uid 0 of a user namespace other than the initial
					* one, without CAP_SETFCAP; 0: not so; -1: unknown */
	const char *container;         /* the container engine sbx runs in, or NULL */
};

struct sbx_userns_diagnosis {
	enum sbx_userns_cause cause;
	char setting[96]; /* the restriction, as `sbx check` names it; "" if unexplained */
	char hint[512];   /* what to change, for the Hint: line */
};

/*
 * sbx_userns_diagnose() - the restriction behind @f, and its fix.
 * Pure: reads nothing but @f.  Always fills @d (a generic hint when the
 * cause is SBX_USERNS_UNEXPLAINED).
 */
void sbx_userns_diagnose(const struct sbx_userns_facts *f, struct sbx_userns_diagnosis *d);

/*
 * sbx_userns_read_facts() - fill @f's settings from this host (the step
 * and errno are the caller's).  Only for the failure path: it reads a few
 * files under /proc/sys and /sys/fs/selinux.  Test hook: with
 * SBX_TEST_SYSCTL_ROOT set, those paths are read below that directory
 * instead (a missing file there is a setting the host lacks), so every
 * restriction can be simulated without changing the host.
 */
void sbx_userns_read_facts(struct sbx_userns_facts *f);

/* Both in one: diagnose a failure of @step with @err on this host. */
void sbx_userns_explain(enum sbx_userns_step step, int err, struct sbx_userns_diagnosis *d);

#endif
