/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * userns.c - why a host refused the sandbox's user namespace (userns.h).
 *
 * Where each restriction shows, for a broker that clones the init into
 * new user and pid namespaces and writes its id maps from outside:
 *
 *   kernel.unprivileged_userns_clone=0   clone: EPERM (Debian's patch)
 *   user.max_user_namespaces=0           clone: ENOSPC (root too)
 *   AppArmor restriction (Ubuntu 23.10+) the namespace is made but its
 *                                        tasks lose every capability: the
 *                                        init's unshare, lo or a map write
 *                                        fail with EPERM or EACCES
 *   SELinux                              EACCES (user_namespace create,
 *                                        or the map write)
 *   a container's seccomp filter         clone or unshare: EPERM with no
 *                                        setting to blame; clone3: ENOSYS
 *                                        on a kernel that has it
 *   a container's root without           the uid_map write: EPERM (5.12+
 *   CAP_SETFCAP                          wants it to map uid 0)
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>

#include "container.h"
#include "userns.h"

#define PERSIST "and keep it across reboots with a file in /etc/sysctl.d/"

static void set(struct sbx_userns_diagnosis *d, enum sbx_userns_cause cause, const char *setting)
{
	d->cause = cause;
	snprintf(d->setting, sizeof(d->setting), "%s", setting);
}

static void unexplained(const struct sbx_userns_facts *f, struct sbx_userns_diagnosis *d)
{
	static const char *const what[] = {
		[SBX_USERNS_CLONE] = "the kernel refused a new user namespace",
		[SBX_USERNS_MAPS] = "the kernel refused the sandbox user's id map",
		[SBX_USERNS_NAMESPACES] = "the kernel refused the sandbox's namespaces",
		[SBX_USERNS_LO] = "the kernel refused to bring up lo in the sandbox",
	};

	set(d, SBX_USERNS_UNEXPLAINED, "");
	snprintf(d->hint, sizeof(d->hint),
		 "%s, and no setting of this host explains it (no kernel.unprivileged_userns_clone=0, "
		 "user.max_user_namespaces=0, AppArmor restriction or enforcing SELinux): look for a "
		 "denial in the kernel's audit log",
		 what[f->step]);
}

/* EPERM or EACCES: a security policy, or a filter when nothing else is. */
static void refused(const struct sbx_userns_facts *f, struct sbx_userns_diagnosis *d)
{
	if (f->step == SBX_USERNS_CLONE && f->unprivileged_userns_clone == 0) {
		set(d, SBX_USERNS_CLONE_SYSCTL, "kernel.unprivileged_userns_clone=0");
		snprintf(d->hint, sizeof(d->hint),
			 "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0): "
			 "enable them with `sysctl -w kernel.unprivileged_userns_clone=1`, " PERSIST);
		return;
	}
	if (f->apparmor_restrict == 1) {
		set(d, SBX_USERNS_APPARMOR, "kernel.apparmor_restrict_unprivileged_userns=1");
		snprintf(d->hint, sizeof(d->hint),
			 "AppArmor takes every capability from an unprivileged user namespace "
			 "(kernel.apparmor_restrict_unprivileged_userns=1) unless the program's profile "
			 "allows userns: as root, load an AppArmor profile for sbx that allows it with "
			 "`apparmor_parser -r /etc/apparmor.d/sbx`, creating the file first if it is "
			 "missing: printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile sbx %s "
			 "flags=(unconfined) {\\n  userns,\\n}\\n' > /etc/apparmor.d/sbx - or set that "
			 "sysctl to 0 for every program",
			 f->exe && f->exe[0] ? f->exe : "/usr/bin/sbx");
		return;
	}
	if (f->err == EACCES && f->selinux_enforce == 1) {
		set(d, SBX_USERNS_SELINUX, "SELinux enforcing (/sys/fs/selinux/enforce=1)");
		snprintf(d->hint, sizeof(d->hint),
			 "SELinux is enforcing (/sys/fs/selinux/enforce=1) and denied it: find the denial with `ausearch -m avc -ts recent` "
			 "(user_namespace create, or the write to uid_map) and allow it for the domain sbx "
			 "runs in with a local module (`audit2allow -M sbx-userns` on that denial, then "
			 "`semodule -i sbx-userns.pp`)");
		return;
	}
	/* Since Linux 5.12 a map that names uid 0 of the parent namespace
	 * needs CAP_SETFCAP there, also for one's own id: root of a
	 * container whose capabilities were all dropped cannot map itself. */
	if (f->err == EPERM && f->step == SBX_USERNS_MAPS && f->root_without_setfcap == 1) {
		set(d, SBX_USERNS_SETFCAP, "uid 0 of a user namespace without CAP_SETFCAP");
		snprintf(d->hint, sizeof(d->hint),
			 "sbx runs as uid 0 of a user namespace (a container) without CAP_SETFCAP, "
			 "which the kernel requires to map uid 0 into the sandbox's user namespace: give "
			 "sbx's container that capability (Kubernetes: securityContext.capabilities.add: "
			 "[\"SETFCAP\"]; podman and docker: --cap-add SETFCAP), or run sbx there as a "
			 "uid other than 0 (docs/deploy.md)");
		return;
	}
	if (f->err == EPERM && (f->step == SBX_USERNS_CLONE || f->step == SBX_USERNS_NAMESPACES)) {
		set(d, SBX_USERNS_SECCOMP, "a seccomp filter (no sysctl restricts user namespaces)");
		if (f->container) {
			sbx_container_hint(SBX_CONTAINER_NAMESPACES, f->container, d->hint,
					   sizeof(d->hint));
			return;
		}
		snprintf(d->hint, sizeof(d->hint),
			 "no setting of this host restricts user namespaces, so a seccomp filter refused "
			 "the call - a container runtime's default profile blocks clone3 and unshare of new "
			 "namespaces: give sbx's container a seccomp profile that allows them (docker and "
			 "podman: --security-opt seccomp=FILE; Kubernetes: securityContext.seccompProfile), "
			 "or run sbx outside the container");
		return;
	}
	unexplained(f, d);
}

static void exhausted(const struct sbx_userns_facts *f, struct sbx_userns_diagnosis *d)
{
	if (f->step == SBX_USERNS_NAMESPACES) {
		set(d, SBX_USERNS_EXHAUSTED, "user.max_{mnt,net,ipc,uts,cgroup}_namespaces");
		snprintf(d->hint, sizeof(d->hint),
			 "a namespace limit is reached (user.max_mnt_namespaces, user.max_net_namespaces, "
			 "user.max_ipc_namespaces, user.max_uts_namespaces or user.max_cgroup_namespaces; "
			 "0 disables that type): raise it with `sysctl -w`, " PERSIST);
		return;
	}
	if (f->max_user_namespaces == 0) {
		set(d, SBX_USERNS_MAX_ZERO, "user.max_user_namespaces=0");
		snprintf(d->hint, sizeof(d->hint),
			 "user namespaces are disabled (user.max_user_namespaces=0): allow them with "
			 "`sysctl -w user.max_user_namespaces=15000` (any value above the number of "
			 "sandboxes at once), " PERSIST);
		return;
	}
	if (f->max_user_namespaces > 0)
		snprintf(d->setting, sizeof(d->setting), "user.max_user_namespaces=%lld",
			 f->max_user_namespaces);
	else
		snprintf(d->setting, sizeof(d->setting), "user.max_user_namespaces");
	d->cause = SBX_USERNS_EXHAUSTED;
	snprintf(d->hint, sizeof(d->hint),
		 "the limit on user or pid namespaces is reached (%s, user.max_pid_namespaces): raise "
		 "it with `sysctl -w`, or wait for other sandboxes to end",
		 d->setting);
}

void sbx_userns_diagnose(const struct sbx_userns_facts *f, struct sbx_userns_diagnosis *d)
{
	memset(d, 0, sizeof(*d));
	switch (f->err) {
	case EPERM:
	case EACCES:
		refused(f, d);
		return;
	case ENOSPC:
		if (f->step == SBX_USERNS_CLONE || f->step == SBX_USERNS_NAMESPACES) {
			exhausted(f, d);
			return;
		}
		break;
	case EUSERS:
		set(d, SBX_USERNS_NESTING, "32 nested user namespaces");
		snprintf(d->hint, sizeof(d->hint),
			 "sbx already runs 32 user namespaces deep, the kernel's limit: run it from a "
			 "shallower namespace");
		return;
	case EINVAL:
		if (f->step != SBX_USERNS_CLONE && f->step != SBX_USERNS_NAMESPACES)
			break;
		set(d, SBX_USERNS_UNSUPPORTED, "a kernel without a namespace type");
		snprintf(d->hint, sizeof(d->hint),
			 "the kernel lacks a namespace type sbx needs (user, mount, pid, net, ipc, uts, "
			 "cgroup): use one built with CONFIG_USER_NS, CONFIG_PID_NS, CONFIG_NET_NS, "
			 "CONFIG_IPC_NS, CONFIG_UTS_NS and CONFIG_CGROUPS");
		return;
	case ENOSYS:
		if (f->step != SBX_USERNS_CLONE)
			break;
		/* clone3 came with 5.3; on a kernel that has it, ENOSYS is
		 * a filter's answer (Docker's default makes glibc fall back
		 * to clone that way). */
		if (f->kernel_major > 5 || (f->kernel_major == 5 && f->kernel_minor >= 3)) {
			set(d, SBX_USERNS_SECCOMP, "a seccomp filter (clone3 made ENOSYS)");
			if (f->container) {
				sbx_container_hint(SBX_CONTAINER_NAMESPACES, f->container, d->hint,
						   sizeof(d->hint));
				return;
			}
			snprintf(d->hint, sizeof(d->hint),
				 "clone3 made ENOSYS on a kernel that has it (%d.%d): a seccomp filter "
				 "does that, as container runtimes' default profiles do: allow clone3 in "
				 "the container's seccomp profile, or run sbx outside the container",
				 f->kernel_major, f->kernel_minor);
			return;
		}
		set(d, SBX_USERNS_NO_CLONE3, "a kernel before Linux 5.3 (no clone3)");
		snprintf(d->hint, sizeof(d->hint),
			 "clone3 is missing on a kernel before Linux 5.3: sbx needs Linux 5.3 or later");
		return;
	}
	unexplained(f, d);
}

/* Test hook: SBX_TEST_SYSCTL_ROOT stands for "/" in the paths below.
 * Read once. */
static const char *sysctl_root(void)
{
	static const char *root;
	static bool loaded;

	if (!loaded) {
		root = getenv("SBX_TEST_SYSCTL_ROOT");
		loaded = true;
	}
	return root ? root : "";
}

/* The integer in @path, or -1 when the host has no such setting. */
static long long read_setting(const char *path)
{
	char buf[PATH_MAX];
	long long v;
	FILE *f;

	if ((size_t)snprintf(buf, sizeof(buf), "%s%s", sysctl_root(), path) >= sizeof(buf))
		return -1;
	f = fopen(buf, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The kernel's release, as uname(2) gives it, from the same tree. */
static int read_release(int *major, int *minor)
{
	char buf[PATH_MAX];
	FILE *f;
	int r;

	snprintf(buf, sizeof(buf), "%s/proc/sys/kernel/osrelease", sysctl_root());
	f = fopen(buf, "re");
	if (!f)
		return -1;
	r = fscanf(f, "%d.%d", major, minor) == 2 ? 0 : -1;
	fclose(f);
	return r;
}

/* 1 when sbx is uid 0 of a user namespace that is not the initial one
 * and lacks CAP_SETFCAP in it, 0 when not, -1 when unknown. */
static int read_root_without_setfcap(void)
{
	unsigned long inside, outside, count;
	unsigned long long eff;
	char line[256];
	int r = -1;
	FILE *fp;

	if (geteuid() != 0)
		return 0;
	fp = fopen("/proc/self/uid_map", "re");
	if (!fp)
		return -1;
	if (fscanf(fp, "%lu %lu %lu", &inside, &outside, &count) == 3 && inside == 0 &&
	    outside == 0 && count == 4294967295UL)
		r = 0; /* the initial user namespace: host root */
	fclose(fp);
	if (r == 0)
		return 0;
	fp = fopen("/proc/self/status", "re");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			r = (eff >> CAP_SETFCAP) & 1 ? 0 : 1;
			break;
		}
	fclose(fp);
	return r;
}

/* The container markers under the same test root, or the real ones. */
static const char *root_or_null(void)
{
	return sysctl_root()[0] ? sysctl_root() : NULL;
}

void sbx_userns_read_facts(struct sbx_userns_facts *f)
{
	static char exe[PATH_MAX], engine[64];
	ssize_t n;

	f->apparmor_restrict = (int)read_setting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	f->unprivileged_userns_clone = (int)read_setting("/proc/sys/kernel/unprivileged_userns_clone");
	f->max_user_namespaces = read_setting("/proc/sys/user/max_user_namespaces");
	f->selinux_enforce = (int)read_setting("/sys/fs/selinux/enforce");
	f->kernel_major = f->kernel_minor = 0;
	if (read_release(&f->kernel_major, &f->kernel_minor) < 0)
		f->kernel_major = f->kernel_minor = 0;
	f->container = sbx_container_engine(root_or_null(), engine, sizeof(engine)) ? engine : NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	f->exe = exe;
	f->root_without_setfcap = read_root_without_setfcap();
}

void sbx_userns_explain(enum sbx_userns_step step, int err, struct sbx_userns_diagnosis *d)
{
	struct sbx_userns_facts f = { .step = step, .err = err };

	sbx_userns_read_facts(&f);
	sbx_userns_diagnose(&f, d);
}
