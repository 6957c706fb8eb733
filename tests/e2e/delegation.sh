#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# delegation.sh - docs/cgroups.md's recipe for an ordinary user, run as
# written: the block for this host's cgroup version as root (with the
# test user's name for "alice"), then the user's block as that user: the
# user's own ~/.config/sbx/sbx.json names the directory, `sbx check`
# reports that file and the cgroup ok, and a run with no --config gets
# its cgroup there.  The directories made are removed at the end.
. "$SBX_SRCDIR/tests/e2e/lib.sh"
bound_sbx 120
DOC="$SBX_SRCDIR/docs/cgroups.md"

# block NAME: the ```sh block after <!-- NAME --> in docs/cgroups.md,
# with the test user for alice.
block() {
	awk -v m="<!-- $1 -->" '$0 == m { f = 1; next } f && /^```sh$/ { on = 1; next }
		on && /^```$/ { exit } on { print }' "$DOC" | sed "s/alice/$SBX_TEST_USER/g"
}

if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
	V=2
else
	V=1
fi
ROOT_BLOCK=$(block delegate-v$V)
USER_BLOCK=$(block delegate-user)
DIR="sbx-$SBX_TEST_USER"

undo() {
	local rc=$? c
	for c in /sys/fs/cgroup/*/"$DIR" /sys/fs/cgroup/"$DIR"/launch /sys/fs/cgroup/"$DIR"; do
		[ -d "$c" ] && rmdir "$c" 2>/dev/null
	done
	(exit $rc) # the script's status, for cleanup_lib
	cleanup_lib
}
trap undo EXIT

plan 7
# The user's cgroup comes from the recipe, not from lib.sh.
SBX_E2E_USER_CGROUP=none setup_mode user
check "docs/cgroups.md has the v$V block and the user's block" \
	eval '[ -n "$ROOT_BLOCK" ] && echo "$USER_BLOCK" | grep -q "sbx check"'
# Nothing of a previous run in the way: the recipe must make it all.
undo_dirs=$(ls -d /sys/fs/cgroup/*/"$DIR" /sys/fs/cgroup/"$DIR" 2>/dev/null)
check "no $DIR cgroup before the recipe" test -z "$undo_dirs"

sh -e -c "$ROOT_BLOCK" > "$M/root.out" 2>&1
rc=$?
if [ $V = 1 ]; then
	owned=1
	for c in memory pids cpu cpuacct; do
		[ "$(stat -c %U "/sys/fs/cgroup/$c/$DIR" 2>/dev/null)" = "$SBX_TEST_USER" ] || owned=0
	done
else
	owned=0
	[ "$(stat -c %U "/sys/fs/cgroup/$DIR/launch" 2>/dev/null)" = "$SBX_TEST_USER" ] && owned=1
	# The recipe's last step: the user's shell starts in launch.
	CG_LAUNCH="/sys/fs/cgroup/$DIR/launch/cgroup.procs"
fi
check "root's v$V block runs as written and leaves $DIR to the user" \
	eval '[ $rc -eq 0 ] && [ $owned -eq 1 ]'
[ $rc -eq 0 ] || diag "$(head -c 800 "$M/root.out")"

mkdir -p "$T/bin"
ln -sf "$SBX" "$T/bin/sbx"
as_mode env PATH="$T/bin:/usr/bin:/bin" sh -c "$USER_BLOCK" > "$M/user.out" 2>&1
check "the user's block writes ~/.config/sbx/sbx.json and sbx check says it read it" \
	grep -q "^config  *ok: $M/home/.config/sbx/sbx.json (the user's file)" "$M/user.out"
check "sbx check: cgroup ok in the delegated directory" grep -q "^cgroup  *ok" "$M/user.out"
grep -q "^cgroup  *ok" "$M/user.out" || diag "$(head -c 1500 "$M/user.out")"

# A run with no --config at all: the user's file is the configuration.
as_mode "$SBX" run --policy "$SBX_SRCDIR/policy" --key "$KEY" -p shell -c 'echo delegated' \
	> "$M/run.json" 2>"$M/run.err"
rc=$?
jq -r '.run_id // empty' "$M/run.json" >> "$T/run-ids" 2>/dev/null
check "a run with no --config succeeds in the delegated cgroup (cgroup v$V)" \
	eval '[ $rc -eq 0 ] && [ "$(jq -r .isolation.cgroup.version "$M/run.json")" = $V ] &&
		[ "$(jq -r .stdout.excerpt "$M/run.json")" = delegated ]'
[ $rc -eq 0 ] || diag "$(head -c 1500 "$M/run.err")"
check "nothing left behind" nothing_left

finish
