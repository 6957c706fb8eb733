/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup-hint.c - the Hint for a cgroup sbx cannot use: which controllers
 * of which hierarchy are missing, and how to get them on this host.
 *
 * systemd's delegation (Delegate=yes, systemd-run --scope) is only advice
 * where systemd is the init; elsewhere the Hint says what to do with
 * cgroupfs itself (mount, mkdir, chown, cgroup_parent).  Whether systemd
 * is the init is decided as sd_booted(3) does: /run/systemd/system is a
 * directory.  Only error paths get here, never a run that works.
 */
#include "config.h"

#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "container.h"

bool sbx_cgroup_systemd_booted(const char *root)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/run/systemd/system", root ? root : "");
	struct stat st;

	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* What systemd offers, for this user (root has no --user manager to ask). */
static const char *systemd_advice(void)
{
	return geteuid() == 0 ?
		       "run sbx in a systemd unit with Delegate=yes (for one command: "
		       "systemd-run --scope -p Delegate=yes sbx run ...)" :
		       "run sbx in a systemd unit with Delegate=yes (for one command: "
		       "systemd-run --user --scope -p Delegate=yes sbx run ...)";
}

void sbx_cgroup_hint_set(struct sbx_error *err, const char *root, int version,
			 const char *missing, const char *where)
{
	bool systemd = sbx_cgroup_systemd_booted(root);
	_cleanup_free_ char *first = NULL, *parent = NULL;

	if (!err)
		return;
	if (version == 1 && missing && missing[0]) {
		/* A hierarchy that is not mounted: systemd mounts every one
		 * the kernel has, so the kernel lacks it or no one mounted it. */
		first = sbx_xstrndup(missing, strcspn(missing, ", "));
		sbx_error_hint(err,
			       "cgroup v1: %s not mounted; sbx needs the memory, pids, cpu and "
			       "cpuacct hierarchies (freezer is optional): mount each (mount -t "
			       "cgroup -o %s cgroup /sys/fs/cgroup/%s) on a kernel built with them, "
			       "or boot with the unified hierarchy (cgroup v2)",
			       missing, first, first);
		return;
	}
	if (version == 2 && missing && missing[0]) {
		/* The parent offers a controller only when its own parent
		 * enabled it in cgroup.subtree_control. */
		if (where) {
			const char *slash = strrchr(where, '/');

			parent = slash && slash != where ? sbx_xstrndup(where, (size_t)(slash - where)) :
							   sbx_xstrdup("/");
		}
		sbx_error_hint(err,
			       "cgroup v2: %s does not offer %s; sbx needs memory, pids and cpu: "
			       "%s%senable them in %s/cgroup.subtree_control (echo \"+memory +pids "
			       "+cpu\" > it, as its owner) (docs/cgroups.md)",
			       where ? where : "the parent cgroup", missing,
			       systemd ? systemd_advice() : "", systemd ? ", or " : "",
			       parent ? parent : "the parent's parent");
		return;
	}
	if (version == 0 && missing && missing[0]) {
		sbx_error_hint(err,
			       "no cgroup hierarchy with %s is mounted: mount cgroup v2 (mount -t "
			       "cgroup2 cgroup2 /sys/fs/cgroup) or the v1 memory, pids, cpu and "
			       "cpuacct hierarchies (docs/cgroups.md)",
			       missing);
		return;
	}
	/* A container engine mounts its cgroup namespace read-only unless
	 * told otherwise: no chown helps there, the container's setting
	 * does. */
	if (version == 2) {
		_cleanup_free_ char *cg = sbx_xasprintf("%s/sys/fs/cgroup", root ? root : "");
		char engine[64], hint[512];
		struct statvfs sv;

		if (statvfs(cg, &sv) == 0 && (sv.f_flag & ST_RDONLY) &&
		    sbx_container_engine(root, engine, sizeof(engine))) {
			sbx_container_hint(SBX_CONTAINER_CGROUP, engine, hint, sizeof(hint));
			sbx_error_hint(err, "%s", hint);
			return;
		}
	}
	/* There, but not this user's to write. */
	sbx_error_hint(err,
		       "sbx needs a cgroup it may write, with the memory, pids and cpu controllers%s: "
		       "%s%screate a cgroup directory%s, chown it to this user, name it in the host "
		       "config key cgroup_parent and start sbx from a process inside it "
		       "(docs/cgroups.md, \"Delegating a cgroup to an ordinary user\", has the "
		       "exact commands)",
		       version == 1 ? " (v1: and cpuacct; freezer is optional)" : "",
		       systemd ? systemd_advice() : "", systemd ? ", or " : "",
		       version == 1 ? " in each of those hierarchies" : "");
}
