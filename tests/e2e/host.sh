#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# host.sh - what the host allows: `sbx check` wherever it is started, the
# swap limit in the manifest, and every way a host restricts unprivileged
# user namespaces, each refused with 69 and a Hint naming the setting.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need strace

# A directory the test user cannot read or search, owned by root.
NOREAD="$T/noread"
mkdir -m 0700 "$NOREAD"

# User namespaces restricted by the host.  The host's real settings are
# machine-wide and shared, so none is changed: sbx reads its sysctls from
# a fake tree (SBX_TEST_SYSCTL_ROOT), and the failing step's errno is
# injected - by strace where a system call fails (the clone, the init's
# unshare), by SBX_TEST_ERRNO where strace cannot single it out (a map
# write, lo).  Each restriction must refuse with 69, name the setting in
# the Hint, leave nothing, and `sbx check` must name the same setting.
#
# fakehost NAME SETTING=VALUE...: a tree with only those settings.
fakehost() {
	local d="$T/host-$1" kv; shift
	mkdir -p "$d/proc/sys/kernel" "$d/proc/sys/user" "$d/sys/fs/selinux"
	for kv in "$@"; do echo "${kv#*=}" > "$d/${kv%%=*}"; done
	chmod -R a+rX "$d"
	echo "$d"
}
AA=proc/sys/kernel/apparmor_restrict_unprivileged_userns
CLONE=proc/sys/kernel/unprivileged_userns_clone
MAX=proc/sys/user/max_user_namespaces
SEL=sys/fs/selinux/enforce
OSREL=proc/sys/kernel/osrelease

# name | fake host | strace injection ("-" for none) | SBX_TEST_ERRNO | setting named |
# the error message: the step that failed, never a later one it took down
scenarios=(
	"apparmor-unshare|$(fakehost aa $AA=1 $MAX=15000)|unshare:error=EPERM:when=1|-|kernel.apparmor_restrict_unprivileged_userns=1|sandbox setup: namespaces: "
	"apparmor-uid_map|$(fakehost aa $AA=1 $MAX=15000)|-|uid_map:EACCES|kernel.apparmor_restrict_unprivileged_userns=1|user namespace: writing uid_map: "
	"apparmor-lo|$(fakehost aa $AA=1 $MAX=15000)|-|lo:EPERM|kernel.apparmor_restrict_unprivileged_userns=1|sandbox setup: network: bringing up lo: "
	"userns_clone|$(fakehost debian $CLONE=0 $MAX=15000)|clone3:error=EPERM:when=1|-|kernel.unprivileged_userns_clone=0|creating the sandbox's namespaces: "
	"max_user_namespaces|$(fakehost max0 $CLONE=1 $MAX=0)|clone3:error=ENOSPC:when=1|-|user.max_user_namespaces=0|creating the sandbox's namespaces: "
	"selinux-clone|$(fakehost selinux $MAX=15000 $SEL=1)|clone3:error=EACCES:when=1|-|/sys/fs/selinux/enforce=1|creating the sandbox's namespaces: "
	"selinux-gid_map|$(fakehost selinux $MAX=15000 $SEL=1)|-|gid_map:EACCES|/sys/fs/selinux/enforce=1|user namespace: writing gid_map: "
	"seccomp-clone|$(fakehost open $AA=0 $CLONE=1 $MAX=15000 $SEL=0)|clone3:error=EPERM:when=1|-|a seccomp filter|creating the sandbox's namespaces: "
	"seccomp-unshare|$(fakehost open $AA=0 $CLONE=1 $MAX=15000 $SEL=0)|unshare:error=EPERM:when=1|-|a seccomp filter|sandbox setup: namespaces: "
	"seccomp-clone3-enosys|$(fakehost new $MAX=15000 $OSREL=6.1.0)|clone3:error=ENOSYS:when=1|-|clone3 made ENOSYS|creating the sandbox's namespaces: "
	"old-kernel|$(fakehost old $MAX=15000 $OSREL=5.2.0)|clone3:error=ENOSYS:when=1|-|before Linux 5.3|creating the sandbox's namespaces: "
)

# The sbx binary, run under strace when the scenario injects there.
mkwrap() {
	local inject=$1 w="$T/sbx-wrapped"
	if [ "$inject" = - ]; then
		printf '#!/bin/sh\nexec "%s" "$@"\n' "$SBX_BUILDDIR/sbx" > "$w"
	else
		printf '#!/bin/sh\nexec strace -qq -o /dev/null -f -e trace=%s -e inject=%s "%s" "$@"\n' \
			"${inject%%:*}" "$inject" "$SBX_BUILDDIR/sbx" > "$w"
	fi
	chmod 0755 "$w"
	echo "$w"
}

REAL_SBX=$SBX
for mode in root user; do
	setup_mode $mode
	mkjob "$M/echo.json" shell 'echo hello'

	# sbx check from a working directory the caller cannot read: sbx run
	# never looks at it, so neither may the check.
	cd "$NOREAD"
	as_mode "$SBX" check --config "$M/config.json" --policy "$SBX_SRCDIR/policy" > "$M/check-cwd.out" 2>&1
	rc=$?
	sbx_run "$M/echo.json"
	cd /
	check "$mode: sbx check from an unreadable working directory: exit 0, openat2 ok" \
		eval '[ $rc -eq 0 ] && grep -q "^openat2  *ok" "$M/check-cwd.out"'
	[ $rc -eq 0 ] || diag "$(cat "$M/check-cwd.out")"
	check "$mode: sbx run from there works too" eval '[ $RC -eq 0 ] && [ "$(jqm .status)" = succeeded ]'

	# swap_limited: on v2 memory.swap.max 0 was written; on v1
	# memory.memsw.limit_in_bytes was set to the memory limit (memory and
	# swap together may not exceed it).  It is true exactly when the
	# host's hierarchy has that file.
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		want_swap=$(ls /sys/fs/cgroup/*/memory.swap.max >/dev/null 2>&1 && echo true || echo false)
	else
		want_swap=$([ -e /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes ] && echo true || echo false)
	fi
	check "$mode: the manifest records swap_limited ($want_swap on this host)" \
		test "$(jqm '.isolation.cgroup.swap_limited')" = "$want_swap"
	check "$mode: nothing left behind" nothing_left

	for sc in "${scenarios[@]}"; do
		IFS='|' read -r name fake inject forced setting step <<< "$sc"
		SBX=$(mkwrap "$inject")
		SBX_EXTRA_ENV="SBX_TEST_SYSCTL_ROOT=$fake"
		[ "$forced" = - ] || SBX_EXTRA_ENV="$SBX_EXTRA_ENV SBX_TEST_ERRNO=$forced"
		sbx_run "$M/echo.json"
		check "$mode: $name: sbx run refuses with 69 and a Hint naming $setting" \
			eval '[ $RC -eq 69 ] && grep "^sbx: Hint: " "$ERR" | grep -qF -- "$setting"'
		grep "^sbx: Hint: " "$ERR" | grep -qF -- "$setting" || diag "stderr: $(cat "$ERR")"
		check "$mode: $name: the error names the step: $step" grep -qF -- "sbx: $step" "$ERR"
		check "$mode: $name: the manifest says isolation_unavailable, signed" \
			eval '[ "$(jqm .status)" = isolation_unavailable ] && signature_ok'
		check "$mode: $name: nothing left behind" nothing_left
		as_mode "$SBX" check --config "$M/config.json" --policy "$SBX_SRCDIR/policy" \
			> "$M/check-$name.out" 2>&1
		rc=$?
		check "$mode: $name: sbx check exits 69 and names $setting" \
			eval '[ $rc -eq 69 ] && grep "^user namespaces  *\(blocked\|missing\): " "$M/check-$name.out" | grep -qF -- "$setting"'
		grep -qF -- "$setting" "$M/check-$name.out" || diag "check: $(head -3 "$M/check-$name.out")"
		SBX_EXTRA_ENV=
		SBX=$REAL_SBX
	done
	# The AppArmor Hint says exactly what to do: the profile's file, how
	# to load it, and the binary it must attach to.
	SBX_EXTRA_ENV="SBX_TEST_SYSCTL_ROOT=$T/host-aa SBX_TEST_ERRNO=lo:EPERM" sbx_run "$M/echo.json"
	check "$mode: the AppArmor Hint names /etc/apparmor.d/sbx, apparmor_parser and sbx's own path" \
		eval 'grep "^sbx: Hint: " "$ERR" | grep -F "apparmor_parser -r /etc/apparmor.d/sbx" | grep -qF "profile sbx $SBX_BUILDDIR/sbx flags=(unconfined)"'
	check "$mode: nothing left behind" nothing_left
done

finish
