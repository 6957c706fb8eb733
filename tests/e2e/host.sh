#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# host.sh - what the host allows: `sbx check` wherever it is started, the
# swap limit in the manifest, and every way a host restricts unprivileged
# user namespaces, each refused with 69 and a Hint naming the setting.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

# A directory the test user cannot read or search, owned by root.
NOREAD="$T/noread"
mkdir -m 0700 "$NOREAD"

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
done

finish
