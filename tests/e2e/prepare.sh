#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prepare.sh - prepared runtime state (sbx-policy(5), "prepare").
#
# A profile with a prepare step is refused (69, with a Hint) until `sbx
# prepare` built its state, and again once the state is stale (the profile
# or a declared input changed) or tampered with; `sbx check` says so too.
# A prepared run binds the tree read-only (EROFS for the payload) and gets
# the seed writable in its workspace.  What prepare refuses (a seed that
# is a symlink, hard links, fifos; a command that fails or times out; a
# second prepare of the same profile; a caller who does not own the
# state) leaves the old state as it was and nothing of the new behind.
. "$SBX_SRCDIR/tests/e2e/lib.sh"
need flock
SBX_E2E_NO_AUTO_PREPARE=1

# A catalog of the shipped profiles plus "prep", a shell profile whose
# prepare step runs the script $1 (writing /work/out) and declares the
# input $T/input.
mkcat() {
	local dir=$1 script=$2 extra=${3:-}
	rm -rf "$dir"
	cp -r "$SBX_SRCDIR/policy" "$dir"
	jq --arg s "$script" --arg in "$T/input" "del(.prepare) | .description = \"prepare test\" |
		.prepare = {argv: [\"/bin/sh\", \"-c\", \$s], inputs: [\$in],
			    mount: \"/run/sbx/prepared\", seed: {src: \"seed\", dst: \"/tmp/seed\"}}
		${extra:+| $extra}" "$SBX_SRCDIR/policy/profiles/shell.json" > "$dir/profiles/prep.json"
	chmod -R a+rX "$dir"
}

GOOD='mkdir -p /work/out/seed /work/out/data && echo cache > /work/out/seed/cache && echo ro > /work/out/data/file'
echo v1 > "$T/input"
chmod 0644 "$T/input"
mkcat "$T/cat-good" "$GOOD"
mkcat "$T/cat-symlink" 'mkdir /work/out/real && echo x > /work/out/real/f && ln -s real /work/out/seed'
mkcat "$T/cat-inner-link" 'mkdir /work/out/seed && ln -s /etc/passwd /work/out/seed/pw'
mkcat "$T/cat-hardlink" 'mkdir /work/out/seed && echo x > /work/out/seed/a && ln /work/out/seed/a /work/out/seed/b'
mkcat "$T/cat-fifo" 'mkdir /work/out/seed && mkfifo /work/out/seed/p'
mkcat "$T/cat-fail" 'mkdir -p /work/out/seed && echo half > /work/out/seed/cache && echo no-fonts-here >&2 && exit 3'
mkcat "$T/cat-slow" 'mkdir -p /work/out/seed && echo half > /work/out/seed/cache && sleep 30' \
	'.prepare.timeout_seconds = 1'
mkcat "$T/cat-hang" 'mkdir -p /work/out/seed && echo half > /work/out/seed/cache && sleep 30' \
	'.prepare.timeout_seconds = 25'

# prepare CATALOG [extra options]: sbx prepare prep, status in $RC.
prepare() {
	local cat=$1; shift
	as_mode "$SBX" prepare --config "$M/config.json" --policy "$cat" "$@" prep \
		>"$M/prepare.out" 2>"$M/prepare.err"
	RC=$?; OUT="$M/prepare.out"; ERR="$M/prepare.err"
}
# find_sbx PID DEPTH: the sbx process at or below PID (our own children).
find_sbx() {
	local c
	[ "$(cat /proc/$1/comm 2>/dev/null)" = sbx ] && { echo "$1"; return 0; }
	[ "$2" -lt 4 ] || return 1
	for c in $(cat /proc/$1/task/*/children 2>/dev/null); do
		find_sbx "$c" $(($2 + 1)) && return 0
	done
	return 1
}
state_sum() { cksum < "$M/prepared/prep/state" 2>/dev/null; }
# Nothing of a refused prepare: no staging tree, no run directory, one tree.
no_debris() {
	local d="$M/prepared/prep"
	[ -z "$(ls -A "$d" | grep -E '^\.(new|run)-')" ] &&
		[ "$(ls -d "$d"/tree-* 2>/dev/null | wc -l)" -le 1 ]
}

for mode in root user; do
	setup_mode $mode
	POLICY="$T/cat-good"
	mkjob "$M/probe.json" prep 'cat /tmp/seed/cache && echo more >> /tmp/seed/cache && cat /tmp/seed/cache
cat /run/sbx/prepared/data/file
if echo x > /run/sbx/prepared/data/file 2>/dev/null; then echo WROTE; else echo refused; fi
if touch /run/sbx/prepared/new 2>/dev/null; then echo CREATED; else echo refused; fi'

	# Before any prepare: refused, with the way out.
	as_mode "$SBX" run --config "$M/config.json" --policy "$POLICY" --key "$KEY" \
		--store "$M/store" --artifacts "$M/art.unprep" "$M/probe.json" >"$M/unprep.json" 2>"$M/unprep.err"
	RC=$?; OUT="$M/unprep.json"; ERR="$M/unprep.err"
	expect_rc 69 "$mode: a profile never prepared is refused"
	check "$mode: the Hint says to run sbx prepare prep" grep -q "Hint: run 'sbx prepare prep'" "$ERR"
	check "$mode: the manifest says isolation_unavailable" \
		test "$(jqm .status)" = isolation_unavailable
	as_mode "$SBX" check --json --config "$M/config.json" --policy "$POLICY" > "$M/check.json"
	check "$mode: sbx check --json reports the state missing" \
		test "$(jq -r '.checks[] | select(.name == "prepared" and (.detail | startswith("prep: "))) | .state' "$M/check.json")" = missing

	# Prepared: the run gets the tree read-only and the seed writable.
	prepare "$POLICY"
	expect_rc 0 "$mode: sbx prepare builds the state"
	check "$mode: the state is the caller's, not writable by others" \
		test "$(stat -c %U "$M/prepared/prep/state")" = "$(as_mode id -un)"
	TREE_SHA=$(awk '$1 == "tree" { print $3 }' "$M/prepared/prep/state")
	as_mode "$SBX" check --json --config "$M/config.json" --policy "$POLICY" > "$M/check.json"
	check "$mode: sbx check reports it ok" \
		test "$(jq -r '.checks[] | select(.name == "prepared" and (.detail | startswith("prep: "))) | .state' "$M/check.json")" = ok
	sbx_run "$M/probe.json"
	expect_rc 0 "$mode: the prepared run succeeds"
	check "$mode: the manifest carries the tree's digest" \
		test "$(jqm .profile.prepared_sha256)" = "$TREE_SHA"
	check "$mode: the seed is in the workspace and writable" \
		test "$(jqm .stdout.excerpt | head -4 | tr '\n' ' ')" = "cache cache more ro "
	check "$mode: the tree is read-only to the payload (no write, no new file)" \
		test "$(jqm .stdout.excerpt | tail -n +5 | grep -cx refused)" -eq 2
	check "$mode: ... with EROFS" eval 'jqm .stderr.excerpt | grep -q "Read-only file system"'
	check "$mode: the tree is unchanged on the host" \
		test "$(cat "$M"/prepared/prep/tree-*/data/file)" = ro

	# The VM suite (tests/vm) reruns only what involves the run's cgroup
	# or the tree's bind (under emulation every run costs seconds); the
	# checks of the state's bookkeeping and of hostile trees run here.
	if [ -z "${SBX_E2E_CGROUP_ONLY:-}" ]; then
		# Tampered with after prepare: refused, and check says so.
		f=$(ls "$M"/prepared/prep/tree-*/data/file)
		chmod u+w "$f"; echo evil > "$f"; chmod a-w "$f"
		sbx_run "$M/probe.json"
		expect_rc 69 "$mode: a tampered tree is refused"
		check "$mode: ... saying tampered" grep -q "tampered" "$ERR"
		as_mode "$SBX" check --json --config "$M/config.json" --policy "$POLICY" > "$M/check.json"
		check "$mode: sbx check reports it stale" \
			test "$(jq -r '.checks[] | select(.name == "prepared" and (.detail | startswith("prep: "))) | .state' "$M/check.json")" = stale
		prepare "$POLICY"
		expect_rc 0 "$mode: prepared again"
		check "$mode: the old tree is gone" test "$(ls -d "$M"/prepared/prep/tree-* | wc -l)" -eq 1
		sbx_run "$M/probe.json"
		expect_rc 0 "$mode: runs again"

		# Stale: a declared input changed, then the profile itself.
		echo v2 > "$T/input"
		sbx_run "$M/probe.json"
		expect_rc 69 "$mode: an input that changed makes the state stale"
		check "$mode: ... naming the input" grep -q "$T/input" "$ERR"
		prepare "$POLICY"
		sbx_run "$M/probe.json"
		expect_rc 0 "$mode: prepared for the new input, it runs"
		jq '.description = "changed"' "$POLICY/profiles/prep.json" > "$T/p.json" &&
			cp "$T/p.json" "$POLICY/profiles/prep.json"
		sbx_run "$M/probe.json"
		expect_rc 69 "$mode: a changed profile makes the state stale"
		check "$mode: ... saying the profile changed" grep -q "the profile changed" "$ERR"
		mkcat "$T/cat-good" "$GOOD"
		prepare "$POLICY"
		expect_rc 0 "$mode: prepared again for the good catalog"
	fi

	# Hostile trees and failing commands: refused, the old state kept.
	before=$(state_sum)
	if [ -z "${SBX_E2E_CGROUP_ONLY:-}" ]; then
		for c in symlink inner-link hardlink fifo; do
			prepare "$T/cat-$c"
			expect_rc 77 "$mode: a tree with a $c is refused"
			check "$mode: ... the old state is kept, nothing left ($c)" \
				eval 'test "$(state_sum)" = "$before" && no_debris'
		done
		# The refused catalogs' prep differs from the good one's only in the
		# script: the good state still serves the good catalog.
		prepare "$T/cat-fail"
		expect_rc 1 "$mode: a prepare command that fails fails sbx prepare"
		check "$mode: ... showing the command's stderr" grep -q "prepare: stderr: no-fonts-here" "$ERR"
		check "$mode: ... the old state is kept, nothing left (fail)" \
			eval 'test "$(state_sum)" = "$before" && no_debris'
	fi
	prepare "$T/cat-slow"
	expect_rc 124 "$mode: a prepare command past timeout_seconds is killed"
	check "$mode: ... the old state is kept, nothing left (timeout)" \
		eval 'test "$(state_sum)" = "$before" && no_debris'
	# sbx killed in the middle of a prepare: the next one clears what it
	# left, and sbx gc the run's own state.
	as_mode "$SBX" prepare --config "$M/config.json" --policy "$T/cat-hang" prep >/dev/null 2>&1 &
	killed=$!
	# $! is the subshell of as_mode: sbx is below it (under runuser as
	# the user), found through /proc/PID/task/*/children.
	for i in $(seq 50); do sbxpid=$(find_sbx "$killed" 0) && break; sleep 0.1; done
	for i in $(seq 100); do [ -n "$(ls -A "$M/state/runs" 2>/dev/null)" ] && break; sleep 0.1; done
	sleep 1
	if [ -n "$sbxpid" ]; then kill -KILL "$sbxpid"; else not_ok "$mode: no sbx below $killed"; fi
	wait "$killed" 2>/dev/null
	as_mode "$SBX" gc --config "$M/config.json" >/dev/null 2>&1
	check "$mode: a killed prepare left the old state" test "$(state_sum)" = "$before"
	prepare "$POLICY"
	expect_rc 0 "$mode: the next prepare succeeds"
	check "$mode: ... and leaves nothing of the killed one" no_debris
	before=$(state_sum)
	sbx_run "$M/probe.json"
	expect_rc 0 "$mode: the good state still serves its catalog"

	if [ -z "${SBX_E2E_CGROUP_ONLY:-}" ]; then
		# Two prepares of one profile: the second is turned away.  The holder
		# says when it has the lock and keeps it until told (a fixed sleep
		# raced the user's runuser under emulation: the prepare came first).
		rm -f "$M/home/held" "$M/home/release"
		as_mode flock "$M/prepared/prep/.lock" sh -c 'touch "$0/held"
			i=0; while [ ! -e "$0/release" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done' "$M/home" &
		holder=$!
		for i in $(seq 600); do [ -e "$M/home/held" ] && break; sleep 0.1; done
		[ -e "$M/home/held" ] || not_ok "$mode: the lock holder never took the lock"
		prepare "$POLICY"
		expect_rc 75 "$mode: a prepare while another holds the lock is turned away"
		touch "$M/home/release"
		wait "$holder"
		rm -f "$M/home/held" "$M/home/release"
		check "$mode: ... leaving the state as it was" \
			eval 'test "$(state_sum)" = "$before" && no_debris'

		# A profile without a prepare step is unaffected.
		mkjob "$M/sh.json" shell 'echo plain'
		sbx_run "$M/sh.json"
		expect_rc 0 "$mode: a profile without prepare runs as before"
		check "$mode: ... and its manifest has no prepared_sha256" \
			test "$(jqm '.profile | has("prepared_sha256")')" = false
	fi
	if [ $mode = root ]; then
		# Root's sandboxes are a host uid of their own, and the init binds
		# the tree as that uid: a prepared_dir under a directory others
		# cannot search is refused before anything runs (it used to fail
		# inside, 70), and sbx check says so.
		mkdir -m 0700 "$M/locked"
		jq --arg d "$M/locked/prepared" '. + {prepared_dir: $d}' "$M/config.json" > "$M/config-locked.json"
		as_mode "$SBX" prepare --config "$M/config-locked.json" --policy "$POLICY" prep >/dev/null 2>&1
		as_mode "$SBX" run --config "$M/config-locked.json" --policy "$POLICY" --key "$KEY" \
			--store "$M/store" --artifacts "$M/art.locked" "$M/probe.json" >"$M/locked.json" 2>"$M/locked.err"
		RC=$?; OUT="$M/locked.json"; ERR="$M/locked.err"
		expect_rc 69 "$mode: a prepared tree under a directory others cannot search is refused"
		check "$mode: ... naming the directory, with a Hint to chmod it" \
			eval 'grep -q "$M/locked: not searchable by others" "$ERR" && grep -q "Hint: chmod o+x $M/locked" "$ERR"'
		as_mode "$SBX" check --json --config "$M/config-locked.json" --policy "$POLICY" > "$M/check.json"
		check "$mode: ... and sbx check reports it unusable" \
			test "$(jq -r '.checks[] | select(.name == "prepared" and (.detail | startswith("prep: "))) | .state' "$M/check.json")" = unusable
		chmod 0711 "$M/locked"
		as_mode "$SBX" run --config "$M/config-locked.json" --policy "$POLICY" --key "$KEY" \
			--store "$M/store" --artifacts "$M/art.locked2" "$M/probe.json" >"$M/locked.json" 2>"$M/locked.err"
		RC=$?
		expect_rc 0 "$mode: ... and runs once it is searchable"
		rm -rf "$M/locked"
	fi
	check "$mode: nothing left behind" nothing_left
	if [ $mode = root ]; then
		ROOT_CONFIG="$M/config.json"
	fi
done

# The state belongs to whoever owns it: another user may not replace it.
MODE=user
as_mode "$SBX" prepare --config "$ROOT_CONFIG" --policy "$T/cat-good" prep >/dev/null 2>"$T/other.err"
RC=$?; ERR="$T/other.err"; OUT=/dev/null
expect_rc 77 "user: preparing root's state is refused"
check "user: ... saying who may" grep -q "may not write the prepared state" "$ERR"

finish
