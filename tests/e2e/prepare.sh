#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prepare.sh - prepared runtime state (sbx-policy(5), "prepare").
#
# A profile with a prepare step is refused (69, with a Hint) until `sbx
# prepare` built its state, and again once the state is stale (its recipe
# or a declared input changed) or tampered with; `sbx check` says so too.
# A prepared run binds the tree read-only (EROFS for the payload) and gets
# the seed writable in its workspace.  What prepare refuses (a seed that
# is a symlink, hard links, fifos; a command that fails or times out; a
# second prepare of the same profile; a caller who does not own the
# state) leaves the old state as it was and nothing of the new behind.
# Prepared state that is not root's, the catalog's owner's or the caller's,
# or below a directory others may write (sticky or not) or a symbolic
# link, is refused (69, a Hint) before anything of it reaches a run.
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
cp "$T/cat-good/profiles/prep.json" "$T/prep-good.json"
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
# The good catalog's state of prep: a refused prepare of another recipe
# (prepare_as) must leave it as it was.
state_dir() { prepared_state "$T/cat-good" prep; }
state_sum() { cksum < "$(state_dir)/state" 2>/dev/null; }
# prepare_as VARIANT: the good catalog's prep given cat-VARIANT's recipe,
# prepared, and given its own back (the state is per catalog and profile:
# only a prepare of the same catalog could touch it).
prepare_as() {
	cp "$T/cat-$1/profiles/prep.json" "$T/cat-good/profiles/prep.json"
	prepare "$T/cat-good"
	cp "$T/prep-good.json" "$T/cat-good/profiles/prep.json"
}
# Nothing of a refused prepare: no staging tree, no run directory, one tree.
no_debris() {
	local d; d=$(state_dir)
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
		test "$(stat -c %U "$(state_dir)/state")" = "$(as_mode id -un)"
	TREE_SHA=$(awk '$1 == "tree" { print $3 }' "$(state_dir)/state")
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
		test "$(cat "$(state_dir)"/tree-*/data/file)" = ro

	# The VM suite (tests/vm) reruns only what involves the run's cgroup
	# or the tree's bind (under emulation every run costs seconds); the
	# checks of the state's bookkeeping and of hostile trees run here.
	if [ -z "${SBX_E2E_CGROUP_ONLY:-}" ]; then
		# Tampered with after prepare: refused, and check says so.
		f=$(ls "$(state_dir)"/tree-*/data/file)
		chmod u+w "$f"; echo evil > "$f"; chmod a-w "$f"
		sbx_run "$M/probe.json"
		expect_rc 69 "$mode: a tampered tree is refused"
		check "$mode: ... saying tampered" grep -q "tampered" "$ERR"
		as_mode "$SBX" check --json --config "$M/config.json" --policy "$POLICY" > "$M/check.json"
		check "$mode: sbx check reports it stale" \
			test "$(jq -r '.checks[] | select(.name == "prepared" and (.detail | startswith("prep: "))) | .state' "$M/check.json")" = stale
		prepare "$POLICY"
		expect_rc 0 "$mode: prepared again"
		check "$mode: the old tree is gone" test "$(ls -d "$(state_dir)"/tree-* | wc -l)" -eq 1
		sbx_run "$M/probe.json"
		expect_rc 0 "$mode: runs again"

		# Stale: a declared input changed, then the prepare step itself.
		echo v2 > "$T/input"
		sbx_run "$M/probe.json"
		expect_rc 69 "$mode: an input that changed makes the state stale"
		check "$mode: ... naming the input" grep -q "$T/input" "$ERR"
		prepare "$POLICY"
		sbx_run "$M/probe.json"
		expect_rc 0 "$mode: prepared for the new input, it runs"
		# (What is and is not the recipe: tests/e2e/prepare-key.sh.)
		jq '.prepare.timeout_seconds = 100' "$POLICY/profiles/prep.json" > "$T/p.json" &&
			cp "$T/p.json" "$POLICY/profiles/prep.json"
		sbx_run "$M/probe.json"
		expect_rc 69 "$mode: a changed prepare step makes the state stale"
		check "$mode: ... saying the recipe changed" grep -q "the prepare step's recipe changed" "$ERR"
		cp "$T/prep-good.json" "$POLICY/profiles/prep.json"
		prepare "$POLICY"
		expect_rc 0 "$mode: prepared again for the good catalog"
	fi

	# Hostile trees and failing commands: refused, the old state kept.
	before=$(state_sum)
	if [ -z "${SBX_E2E_CGROUP_ONLY:-}" ]; then
		for c in symlink inner-link hardlink fifo; do
			prepare_as $c
			expect_rc 77 "$mode: a tree with a $c is refused"
			check "$mode: ... the old state is kept, nothing left ($c)" \
				eval 'test "$(state_sum)" = "$before" && no_debris'
		done
		prepare_as fail
		expect_rc 1 "$mode: a prepare command that fails fails sbx prepare"
		check "$mode: ... showing the command's stderr" grep -q "prepare: stderr: no-fonts-here" "$ERR"
		check "$mode: ... the old state is kept, nothing left (fail)" \
			eval 'test "$(state_sum)" = "$before" && no_debris'
	fi
	prepare_as slow
	expect_rc 124 "$mode: a prepare command past timeout_seconds is killed"
	check "$mode: ... the old state is kept, nothing left (timeout)" \
		eval 'test "$(state_sum)" = "$before" && no_debris'
	# sbx killed in the middle of a prepare: the next one clears what it
	# left, and sbx gc the run's own state.
	cp "$T/cat-hang/profiles/prep.json" "$POLICY/profiles/prep.json"
	as_mode "$SBX" prepare --config "$M/config.json" --policy "$POLICY" prep >/dev/null 2>&1 &
	killed=$!
	# $! is the subshell of as_mode: sbx is below it (under runuser as
	# the user), found through /proc/PID/task/*/children.
	for i in $(seq 50); do sbxpid=$(find_sbx "$killed" 0) && break; sleep 0.1; done
	for i in $(seq 100); do [ -n "$(ls -A "$M/state/runs" 2>/dev/null)" ] && break; sleep 0.1; done
	sleep 1
	if [ -n "$sbxpid" ]; then kill -KILL "$sbxpid"; else not_ok "$mode: no sbx below $killed"; fi
	wait "$killed" 2>/dev/null
	cp "$T/prep-good.json" "$POLICY/profiles/prep.json"
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
		as_mode flock "$(state_dir)/.lock" sh -c 'touch "$0/held"
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
		mkdir -m 0700 "$PT/$MODE/locked"
		jq --arg d "$PT/$MODE/locked/prepared" '. + {prepared_dir: $d}' "$M/config.json" > "$M/config-locked.json"
		as_mode "$SBX" prepare --config "$M/config-locked.json" --policy "$POLICY" prep >/dev/null 2>&1
		as_mode "$SBX" run --config "$M/config-locked.json" --policy "$POLICY" --key "$KEY" \
			--store "$M/store" --artifacts "$M/art.locked" "$M/probe.json" >"$M/locked.json" 2>"$M/locked.err"
		RC=$?; OUT="$M/locked.json"; ERR="$M/locked.err"
		expect_rc 69 "$mode: a prepared tree under a directory others cannot search is refused"
		check "$mode: ... naming the directory, with a Hint to chmod it" \
			eval 'grep -q "$PT/$MODE/locked: not searchable by others" "$ERR" && grep -q "Hint: chmod o+x $PT/$MODE/locked" "$ERR"'
		as_mode "$SBX" check --json --config "$M/config-locked.json" --policy "$POLICY" > "$M/check.json"
		check "$mode: ... and sbx check reports it unusable" \
			test "$(jq -r '.checks[] | select(.name == "prepared" and (.detail | startswith("prep: "))) | .state' "$M/check.json")" = unusable
		chmod 0711 "$PT/$MODE/locked"
		as_mode "$SBX" run --config "$M/config-locked.json" --policy "$POLICY" --key "$KEY" \
			--store "$M/store" --artifacts "$M/art.locked2" "$M/probe.json" >"$M/locked.json" 2>"$M/locked.err"
		RC=$?
		expect_rc 0 "$mode: ... and runs once it is searchable"
		rm -rf "$PT/$MODE/locked"
	fi
	check "$mode: nothing left behind" nothing_left
	if [ $mode = root ]; then
		ROOT_CONFIG="$M/config.json" ROOT_M=$M
	fi
done
# The user's own catalog, prepared by the user (the state is per catalog):
# root runs it below with that state.
cp -a "$T/cat-good" "$T/cat-user"
chown -R "$SBX_TEST_USER" "$T/cat-user"
as_mode "$SBX" prepare --config "$M/config.json" --policy "$T/cat-user" prep >/dev/null 2>"$M/prepare.err"
RC=$?; ERR="$M/prepare.err"; OUT=/dev/null
expect_rc 0 "user: the user's own catalog prepared"
# The directory of cat-good's state in any prepared_dir.
K=$(basename "$(dirname "$(prepared_state "$T/cat-good" prep)")")

# Whose the prepared state may be (sbx-policy(5), prepared_dir): the
# directory, each of its parents and the tree belong to root, the
# catalog's owner or the caller, and none is writable by group or others.
# Otherwise a run is refused (69) before it reads anything there, sbx check
# says "unusable", and sbx prepare builds nothing.

# forge SRC DST: what any user can make without sbx: SRC/$K/prep (the test
# user's own state for cat-good) copied to DST/$K/prep with the seed's cache
# replaced, and the state's entries rewritten to the copy's identities.
forge() {
	runuser -u "$SBX_TEST_USER" -- python3 - "$1/$K/prep" "$2/$K/prep" <<'EOF'
import os, shutil, sys
src, dst = sys.argv[1:]
shutil.copytree(src, dst, ignore=shutil.ignore_patterns('.lock', '.run-*', '.new-*'))
lines = open(os.path.join(dst, 'state')).read().split('\n')
tree = os.path.join(dst, [l.split()[1] for l in lines if l.startswith('tree ')][0])
for d in (tree, tree + '/seed'):
    os.chmod(d, 0o755)
os.chmod(tree + '/seed/cache', 0o644)
open(tree + '/seed/cache', 'w').write('evil\n')
os.chmod(tree + '/seed/cache', 0o444)
for d in (tree + '/seed', tree):
    os.chmod(d, 0o555)
out = []
for l in lines:
    if l.startswith('entry '):
        f = l.split(' ', 7)
        st = os.lstat(os.path.join(tree, f[7]))
        f[2:7] = [str(st.st_dev), str(st.st_ino), str(st.st_size), str(st.st_mtime_ns),
                  str(st.st_ctime_ns)]
        l = ' '.join(f)
    out.append(l)
os.unlink(os.path.join(dst, 'state'))
open(os.path.join(dst, 'state'), 'w').write('\n'.join(out))
EOF
}
# root_run CONFIG [POLICY]: the probe job as root, status in $RC.
root_run() {
	RUNS=$((RUNS + 1)); OUT="$M/hostile.$RUNS.json"; ERR="$M/hostile.$RUNS.err"
	as_mode "$SBX" run --config "$1" --policy "${2:-$T/cat-good}" --key "$M/key" \
		--store "$M/store" --artifacts "$M/art.hostile.$RUNS" "$M/probe.json" >"$OUT" 2>"$ERR"
	RC=$?
}
# root_check CONFIG: what sbx check says of prep's prepared state.
root_check() {
	as_mode "$SBX" check --json --config "$1" --policy "$T/cat-good" |
		jq -r '.checks[] | select(.name == "prepared" and (.detail | startswith("prep: "))) | .state'
}
# prep_config NAME DIR: root's config with DIR as prepared_dir.
prep_config() {
	jq --arg d "$2" '. + {prepared_dir: $d}' "$ROOT_CONFIG" > "$M/config-$1.json"
}
# refused WHAT PATTERN: the last run exited 69, its message names PATTERN,
# a Hint follows, and nothing of the foreign tree reached the payload.
refused() {
	expect_rc 69 "root: $1 is refused"
	if grep -q -- "$2" "$ERR" && grep -q "^sbx: Hint: " "$ERR"; then
		ok "root: ... saying what is wrong with which directory, and a Hint"
	else
		not_ok "root: ... saying what is wrong with which directory, and a Hint"
		diag "stderr: $(cat "$ERR")"
	fi
	if ! grep -q evil "$OUT" && test "$(jqm '.profile.prepared_sha256 // empty')" = ""; then
		ok "root: ... before the tree or its seed reached the payload"
	else
		not_ok "root: ... before the tree or its seed reached the payload"
		diag "prepared_sha256 $(jqm .profile.prepared_sha256), stdout: $(jqm .stdout.excerpt | tr '\n' ' ')"
	fi
}

# Bookkeeping, not the run's cgroup or the tree's bind: not in the VM
# suite (SBX_E2E_CGROUP_ONLY).
if [ -z "${SBX_E2E_CGROUP_ONLY:-}" ]; then
	MODE=root M=$ROOT_M
	UGROUP=$(id -gn "$SBX_TEST_USER")
	# The issue's case: an administrator names a prepared_dir that does not
	# exist yet, below a directory everyone may write (sticky, like /tmp);
	# another user makes it first and fills it.
	mkdir -m 1777 "$PT/shared"
	runuser -u "$SBX_TEST_USER" -- mkdir "$PT/shared/prepared"
	forge "$PT/user/prepared" "$PT/shared/prepared"
	prep_config shared "$PT/shared/prepared"
	root_run "$M/config-shared.json"
	refused "another user's prepared_dir below a sticky directory everyone may write" \
		"$PT/shared: writable by group or others (mode 1777)"
	check "root: ... and sbx check reports it unusable" test "$(root_check "$M/config-shared.json")" = unusable
	# Before anyone made it: the same, not "missing" (sbx prepare would make
	# it, and someone else could come first); root's sbx prepare refuses too.
	prep_config later "$PT/shared/later"
	root_run "$M/config-later.json"
	refused "a prepared_dir yet to be made below such a directory" "$PT/shared: writable by group or others"
	check "root: ... sbx check reports it unusable, not missing" test "$(root_check "$M/config-later.json")" = unusable
	as_mode "$SBX" prepare --config "$M/config-later.json" --policy "$T/cat-good" prep >/dev/null 2>"$M/later.err"
	RC=$?; ERR="$M/later.err"
	expect_rc 69 "root: sbx prepare into it is refused"
	check "root: ... making nothing" test ! -e "$PT/shared/later"
	# The parent no longer writable by others: the directory is still another
	# user's.
	chmod 0755 "$PT/shared"
	root_run "$M/config-shared.json"
	refused "a prepared_dir another user made" "$PT/shared/prepared: owned by uid $SBX_TEST_UID, not by root"
	# The tree someone else's, the directories root's: refused all the same.
	mkdir -m 0755 "$PT/mixed" "$PT/mixed/prepared"
	cp -a "$PT/shared/prepared/$K" "$PT/mixed/prepared/"
	chown root "$PT/mixed/prepared/$K" "$PT/mixed/prepared/$K/prep" "$PT/mixed/prepared/$K/prep/state"
	prep_config mixed "$PT/mixed/prepared"
	root_run "$M/config-mixed.json"
	refused "a tree another user owns, in root's prepared_dir" "owned by uid $SBX_TEST_UID"
	# A parent writable by a group: refused, and the Hint's chmod mends it.
	mkdir -m 0775 "$PT/group"
	chgrp "$UGROUP" "$PT/group"
	prep_config group "$PT/group/prepared"
	as_mode "$SBX" prepare --config "$M/config-group.json" --policy "$T/cat-good" prep >/dev/null 2>"$M/group.err"
	RC=$?; ERR="$M/group.err"
	expect_rc 69 "root: sbx prepare below a group-writable directory is refused"
	check "root: ... with a Hint to chmod it" grep -q "Hint: chmod go-w $PT/group\$" "$ERR"
	root_run "$M/config-group.json"
	refused "a prepared_dir below a group-writable directory" "$PT/group: writable by group or others (mode 0775)"
	chmod go-w "$PT/group"
	as_mode "$SBX" prepare --config "$M/config-group.json" --policy "$T/cat-good" prep >/dev/null 2>&1
	root_run "$M/config-group.json"
	expect_rc 0 "root: once the Hint is followed, prepare and the run succeed"
	# A symbolic link on the way: refused (sbx follows none), the Hint naming
	# the real path.  (Root's own state, prepared again: the user's prepares
	# rewrote the declared input.)
	as_mode "$SBX" prepare --config "$ROOT_CONFIG" --policy "$T/cat-good" prep >/dev/null 2>&1
	ln -s "$PT/root" "$PT/link"
	prep_config link "$PT/link/prepared"
	root_run "$M/config-link.json"
	refused "a prepared_dir through a symbolic link" "$PT/link: a symbolic link"
	check "root: ... the Hint naming the path without it" grep -q "Hint: .*$PT/root/prepared" "$ERR"
	# The tree is trusted when it is the catalog's owner's: root runs a
	# catalog of the test user's with that user's prepared state, but not
	# that state with root's own catalog.
	prep_config user "$PT/user/prepared"
	root_run "$M/config-user.json" "$T/cat-user"
	expect_rc 0 "root: a catalog's owner's prepared state serves that catalog"
	root_run "$M/config-user.json"
	refused "the same state with a catalog of root's" "$PT/user: owned by uid $SBX_TEST_UID, not by root"
	check "root: nothing left behind by the refused runs" nothing_left
fi

# The state belongs to whoever owns it: another user may not replace it.
MODE=user M=$T/user
as_mode "$SBX" prepare --config "$ROOT_CONFIG" --policy "$T/cat-good" prep >/dev/null 2>"$T/other.err"
RC=$?; ERR="$T/other.err"; OUT=/dev/null
expect_rc 77 "user: preparing root's state is refused"
check "user: ... saying who may" grep -q "may not write the prepared state" "$ERR"

finish
