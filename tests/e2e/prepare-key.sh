#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# prepare-key.sh - what prepared state (sbx-policy(5), "prepare") is keyed
# on, and what its digest covers.
#
# - Staleness follows the prepare step's recipe only: its "prepare" object
#   and declared inputs, the profile's binds, symlinks and env (what the
#   step sees) and the interpreter it runs (prepare.argv[0], as the host
#   has it through those binds).  An edit elsewhere in the profile (another
#   network profile allowed, a description, a limit) leaves the state
#   current; an edit of the recipe, or a new interpreter, makes it stale.
# - The state is kept per catalog and profile: two catalogs with a profile
#   of the same name keep their own.
# - The digest is reproducible: two prepares of the same inputs, into
#   different catalogs' or hosts' state, give the same prepared_sha256
#   (the shipped python-analysis too, as make install prepares it).
# - sbx prepare --json says why it failed: error and hint.
. "$SBX_SRCDIR/tests/e2e/lib.sh"
need jq realpath sha256sum
SBX_E2E_NO_AUTO_PREPARE=1

# prepare CATALOG PROFILE [config]: sbx prepare, status in $RC, the digest
# it printed in $SHA.
prepare() {
	as_mode "$SBX" prepare --json --config "${3:-$M/config.json}" --policy "$1" "$2" \
		>"$M/prepare.out" 2>"$M/prepare.err"
	RC=$?; OUT="$M/prepare.out"; ERR="$M/prepare.err"
	SHA=$(jq -r '.prepared[0].prepared_sha256 // empty' "$OUT" 2>/dev/null)
}
# run_in CATALOG JOB: the job against CATALOG, manifest in $OUT.
run_in() {
	POLICY=$1 sbx_run "$2"
}
# check_state CATALOG PROFILE: what sbx check --json says of its state.
check_state() {
	as_mode "$SBX" check --json --config "$M/config.json" --policy "$1" |
		jq -r --arg p "$2: " '.checks[] | select(.name == "prepared" and (.detail // "" | startswith($p))) | .state'
}
# edit CATALOG PROFILE JQ: rewrite one profile file of a catalog.
edit() {
	jq "$3" "$1/profiles/$2.json" > "$T/edit.json" && cat "$T/edit.json" > "$1/profiles/$2.json"
}

# A catalog of the shipped profiles, a second network profile ("quiet")
# and "prep": a shell profile whose prepare step runs $2 with a copy of
# /bin/sh bound from $T/bin at /opt/bin as its interpreter.
mkdir -p "$T/bin"
cp /bin/sh "$T/bin/sh"
mkcat() {
	local dir=$1 script=$2
	rm -rf "$dir"
	cp -r "$SBX_SRCDIR/policy" "$dir"
	cp "$dir/network/disabled.json" "$dir/network/quiet.json"
	jq --arg s "$script" --arg b "$T/bin" 'del(.prepare) | .description = "prepare-key test" |
		.binds += [{src: $b, dst: "/opt/bin"}] |
		.prepare = {argv: ["/opt/bin/sh", "-c", $s], mount: "/run/sbx/prepared"}' \
		"$SBX_SRCDIR/policy/profiles/shell.json" > "$dir/profiles/prep.json"
	chmod -R a+rX "$dir" "$T/bin"
}
ONE='mkdir -p /work/out/data && echo one > /work/out/data/file'
TWO='mkdir -p /work/out/data && echo two > /work/out/data/file'
# The same tree each time, made in a random order with random mtimes:
# neither may reach the digest.
SHUFFLE='mkdir -p /work/out/d; n=$(od -An -N1 -tu1 /dev/urandom | tr -d " ")
if [ $((n % 2)) = 0 ]; then echo a > /work/out/d/a; echo b > /work/out/b
else echo b > /work/out/b; echo a > /work/out/d/a; fi
touch -d @$((n * 1000)) /work/out/b /work/out/d/a /work/out/d'

for mode in root user; do
	setup_mode $mode
	mkcat "$T/cat-a" "$ONE"
	mkcat "$T/cat-b" "$TWO"
	mkjob "$M/prep.json" prep 'cat /run/sbx/prepared/data/file'
	mkjob "$M/py.json" python-analysis 'import matplotlib.font_manager; print("fonts", len(matplotlib.font_manager.fontManager.ttflist) > 0)'

	# --- an unrelated edit leaves the state current -----------------------
	prepare "$T/cat-a" python-analysis
	expect_rc 0 "$mode: python-analysis prepared"
	edit "$T/cat-a" python-analysis '.network_profiles += ["quiet"]'
	run_in "$T/cat-a" "$M/py.json"
	expect_rc 0 "$mode: another network profile allowed: runs are still admitted"
	check "$mode: ... with the prepared tree's digest" test "$(jqm .profile.prepared_sha256)" = "$SHA"
	check "$mode: ... and sbx check says current" test "$(check_state "$T/cat-a" python-analysis)" = ok
	edit "$T/cat-a" python-analysis '.description = "edited" | .defaults.wall_seconds = 50 |
		.allowed_outputs -= ["text/markdown"] | .env_allow += ["TZDIR"]'
	run_in "$T/cat-a" "$M/py.json"
	expect_rc 0 "$mode: a description, a limit, outputs, env_allow edited: still admitted"

	# --- the recipe's edits make it stale ---------------------------------
	prepare "$T/cat-a" prep
	expect_rc 0 "$mode: prep prepared"
	run_in "$T/cat-a" "$M/prep.json"
	expect_rc 0 "$mode: prep runs"
	edit "$T/cat-a" prep '.network_profiles += ["quiet"] | .defaults.pids = 64'
	run_in "$T/cat-a" "$M/prep.json"
	expect_rc 0 "$mode: prep with another network and limit: still admitted"
	for change in '.prepare.env = {"X": "1"}' '.prepare.argv[2] += " "' \
		'.binds += [{src: "/etc/hostname", optional: true}]' '.env.LANG = "C"' \
		'.symlinks += [{path: "/usr2", target: "usr"}]'; do
		cp "$T/cat-a/profiles/prep.json" "$T/prep.saved"
		edit "$T/cat-a" prep "$change"
		run_in "$T/cat-a" "$M/prep.json"
		expect_rc 69 "$mode: '$change' makes the state stale"
		check "$mode: ... saying the recipe changed" grep -q "prepared state stale: the prepare step's recipe changed" "$ERR"
		check "$mode: ... and sbx check says stale" test "$(check_state "$T/cat-a" prep)" = stale
		cp "$T/prep.saved" "$T/cat-a/profiles/prep.json"
	done
	run_in "$T/cat-a" "$M/prep.json"
	expect_rc 0 "$mode: the recipe restored: current again"
	# A new interpreter (the same path, another file): stale, naming it.
	cp /bin/sh "$T/bin/sh.new" && mv "$T/bin/sh.new" "$T/bin/sh"
	run_in "$T/cat-a" "$M/prep.json"
	expect_rc 69 "$mode: a new interpreter makes the state stale"
	check "$mode: ... naming it (its host path)" grep -q "prepared state stale: $T/bin/sh" "$ERR"

	# --- two catalogs, one profile name, each its own state ---------------
	prepare "$T/cat-a" prep
	expect_rc 0 "$mode: prep of catalog a prepared"
	prepare "$T/cat-b" prep
	expect_rc 0 "$mode: prep of catalog b prepared"
	check "$mode: each in its own directory" \
		test -f "$(prepared_state "$T/cat-a" prep)/state" -a -f "$(prepared_state "$T/cat-b" prep)/state"
	run_in "$T/cat-a" "$M/prep.json"
	expect_rc 0 "$mode: catalog a's run is admitted after catalog b's prepare"
	check "$mode: ... and sees its own tree" test "$(jqm .stdout.excerpt)" = one
	run_in "$T/cat-b" "$M/prep.json"
	expect_rc 0 "$mode: catalog b's run is admitted"
	check "$mode: ... and sees its own tree" test "$(jqm .stdout.excerpt)" = two
	check "$mode: sbx check: both current" \
		test "$(check_state "$T/cat-a" prep) $(check_state "$T/cat-b" prep)" = "ok ok"

	# --- reproducible digests ---------------------------------------------
	mkcat "$T/cat-c" "$SHUFFLE"
	mkcat "$T/cat-d" "$SHUFFLE"
	sums=
	for c in c d c d; do
		prepare "$T/cat-$c" prep
		[ "$RC" -eq 0 ] || diag "prepare $c: $(cat "$ERR")"
		sums="$sums $SHA"
	done
	check "$mode: a tree made in another order with other mtimes has the same digest" \
		test "$(echo $sums | tr ' ' '\n' | sort -u | grep -c .)" -eq 1
	# The shipped python-analysis, as make install prepares it (the
	# catalog it installs) and as sbx prepare does from another catalog or
	# into another host's prepared_dir: one digest.
	jq --arg d "$PT/$MODE/other" '.prepared_dir = $d' "$M/config.json" > "$M/config-other.json"
	prepare "$T/cat-a" python-analysis; A=$SHA
	prepare "$T/cat-c" python-analysis; C=$SHA
	prepare "$T/cat-a" python-analysis "$M/config-other.json"; O=$SHA
	prepare "$T/cat-a" python-analysis; A2=$SHA
	if [ -n "$A" ] && [ "$A" = "$C" ] && [ "$A" = "$O" ] && [ "$A" = "$A2" ]; then
		ok "$mode: python-analysis prepared four times: one prepared_sha256"
	else
		not_ok "$mode: python-analysis prepared four times: $A $C $O $A2"
	fi

	# --- sbx prepare --json on failure ------------------------------------
	mkcat "$T/cat-fail" 'echo the-font-cache-broke >&2; exit 3'
	prepare "$T/cat-fail" prep
	expect_rc 1 "$mode: a failing prepare step fails sbx prepare"
	check "$mode: --json: ok false, exit 1, an error naming the profile, a hint" \
		jq -e '.ok == false and .exit == 1 and .prepared == [] and
			(.error | test("prep")) and (.hint | type == "string" and length > 0)' "$OUT"
	check "$mode: ... the stderr lines are still there" grep -q "prepare: stderr: the-font-cache-broke" "$ERR"
	check "$mode: nothing left behind" nothing_left
done

finish
