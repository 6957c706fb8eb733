#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# outpaths.sh - the host paths a run writes to cannot be taken over by
# another local user or by the caller's own racing processes.
#
#  - The quarantine: another user who sees a run's id (it names the run's
#    cgroup, which every user can list) and creates /tmp/sbx-run-<id>
#    before the collection must not make the run fail or lose its outputs.
#  - --artifacts: a symlink at DIR, or a component of DIR swapped for a
#    symlink while the payload runs, must not send the promoted files
#    anywhere else (the directory the attacker aimed at stays empty).
#  - Display paths: a name rejected for its bytes is listed with each bad
#    byte as \xNN; a file literally named that way must not be listed
#    under the same path, so no two artifacts of a manifest share one.
#  - Store and key: a hard link in one principal's store to another's file
#    is no handle; root does not sign with a key another user owns; names
#    with invisible or separator characters are not promoted.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need runuser useradd userdel

# A second local user, the attacker; removed when the script ends.
EVIL="$SBX_TEST_USER-evil"
if ! id "$EVIL" >/dev/null 2>&1; then
	useradd --system --no-create-home --shell /bin/sh "$EVIL" ||
		{ echo "Bail out! cannot create user $EVIL"; exit 1; }
fi
cleanup_outpaths() {
	local rc=$?
	userdel "$EVIL" 2>/dev/null
	[ -n "${T:-}" ] && rm -rf "$T"
	[ -n "${PT:-}" ] && rm -rf "$PT"
	exit $rc
}
trap cleanup_outpaths EXIT
# artifact PATH FIELD: a field of one artifact of the last manifest.
artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }
as_evil() { runuser -u "$EVIL" -- env -i PATH=/usr/bin:/bin "$@"; }

# squat EVENTS RESULT: as the attacker, learn the run id (the test reads it
# from the events file only to know which of the host's runs is its own),
# wait until that run's cgroup shows in cgroupfs, which every user can list,
# then create /tmp/sbx-run-<id>.  RESULT gets "staged <dir>" when that
# happened while the payload was still running.
cat > "$T/squat.sh" <<'EOF'
#!/bin/bash
events=$1 result=$2 id= dir=
for i in $(seq 1500); do
	id=$(jq -r 'select(.event == "admitted") | .run_id' "$events" 2>/dev/null | head -1)
	[ -n "$id" ] && break
	sleep 0.01
done
[ -n "$id" ] || { echo "no run id" > "$result"; exit 1; }
for i in $(seq 1500); do
	[ -n "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "sbx-$id" 2>/dev/null | head -1)" ] && break
	sleep 0.01
done
dir=/tmp/sbx-run-$id
mkdir "$dir" || { echo "mkdir failed" > "$result"; exit 1; }
# The run's own temp dir, as any user sees it in /tmp once the payload has
# started: owner and mode.
for i in $(seq 1500); do grep -q '"started"' "$events" && break; sleep 0.01; done
own=$(stat -c '%U:%a' /tmp/sbx-run-"$id"-?* 2>/dev/null | head -1)
if grep -q '"exited"' "$events"; then echo "late $dir ${own:-none}" > "$result"; else echo "staged $dir ${own:-none}" > "$result"; fi
EOF
chmod 0755 "$T/squat.sh"

# wait_event EVENTS NAME: until the events file has that event (bounded).
wait_event() {
	local i
	for i in $(seq 1500); do
		grep -q "\"event\":\"$2\"" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}
# empty_dir DIR: DIR exists and holds nothing.
empty_dir() { [ -d "$1" ] && [ -z "$(ls -A "$1")" ]; }

for mode in root user; do
	setup_mode $mode

	# --- item: the quarantine's name cannot be squatted --------------------
	EV="$M/events.jsonl"
	: > "$EV"
	chmod 0666 "$EV"
	echo none > "$T/squat.result"
	chmod 0666 "$T/squat.result"
	mkjob "$M/j.json" shell 'sleep 2; echo kept > /work/out/r.txt'
	as_evil "$T/squat.sh" "$EV" "$T/squat.result" &
	squatter=$!
	sbx_run "$M/j.json" --events "$EV"
	wait $squatter
	read -r how sq own < "$T/squat.result"
	check "$mode: another user created /tmp/sbx-run-<run id> while the payload ran, and it is still theirs" \
		eval '[ "$how" = staged ] && [ "$(stat -c %U "$sq" 2>/dev/null)" = "$EVIL" ]'
	[ "$how" = staged ] || diag "squatter: $how $sq"
	# The quarantine is made only once there are outputs to collect, under
	# a name with 64 random bits: while the payload runs, nothing of the
	# run's is in /tmp to find or race (owner:mode of what was there).
	check "$mode: no temp dir of the run's in /tmp while the payload ran (found: $own)" \
		test "${own:-}" = none
	expect_rc 0 "$mode: the squatted run still succeeds"
	check "$mode: its output is promoted and delivered" \
		eval '[ "$(artifact r.txt .status)" = promoted ] && [ "$(cat "$ART/r.txt")" = kept ]'
	check "$mode: the squatter's directory is left as it was (empty, the attacker's)" \
		eval '[ -z "$(ls -A "$sq" 2>/dev/null)" ]'
	[ -n "${sq:-}" ] && [ -d "$sq" ] && rmdir "$sq"
	check "$mode: nothing left behind" nothing_left

	# --- item: --artifacts is not redirected by symlinks -------------------
	mkjob "$M/j.json" shell 'sleep 2; echo kept > /work/out/r.txt'
	mkjob "$M/quick.json" shell 'echo kept > /work/out/r.txt'
	mkdir -p "$M/aim1" "$M/aim2" "$M/aim3" "$M/p1" "$M/p2"
	[ $mode = user ] && chown "$SBX_TEST_USER" "$M/aim1" "$M/aim2" "$M/aim3" "$M/p1" "$M/p2"

	# A symlink at DIR itself, to an empty directory.
	ln -s "$M/aim1" "$M/link"
	sbx_run "$M/quick.json" --artifacts "$M/link"
	expect_rc 64 "$mode: --artifacts naming a symlink is a usage error"
	check "$mode: the error says the symlink is not followed" grep -q "link: is a symbolic link (not followed)" "$ERR" ||
		diag "stderr: $(cat "$ERR")"
	check "$mode: the symlink's target stays empty" empty_dir "$M/aim1"

	# DIR's parent exists when the run starts and is swapped for a symlink
	# while the payload runs: the files go where the parent was opened.
	EV="$M/events2.jsonl"
	: > "$EV"
	chmod 0666 "$EV"
	( wait_event "$EV" started && mv "$M/p1" "$M/p1.moved" && ln -s "$M/aim2" "$M/p1" ) &
	swapper=$!
	sbx_run "$M/j.json" --artifacts "$M/p1/out" --events "$EV"
	wait $swapper
	check "$mode: the parent was swapped for a symlink during the run" test -L "$M/p1"
	expect_rc 0 "$mode: parent swapped during the run: the run still succeeds"
	check "$mode: the symlink's target stays empty" empty_dir "$M/aim2"
	check "$mode: the artifact is in the directory opened at the start" \
		test "$(cat "$M/p1.moved/out/r.txt" 2>/dev/null)" = kept

	# A component of DIR that did not exist at the start appears during
	# the run, as a symlink: promotion refuses to go through it.
	: > "$EV"
	( wait_event "$EV" started && ln -s "$M/aim3" "$M/p2/new" ) &
	swapper=$!
	sbx_run "$M/j.json" --artifacts "$M/p2/new/out" --events "$EV"
	wait $swapper
	check "$mode: a symlink appeared below the opened directory during the run" test -L "$M/p2/new"
	check "$mode: ... the run ends error (70) naming the symlink, the artifact is not promoted" \
		eval '[ $RC -eq 70 ] && grep -q "p2/new/out: .*symbolic link" "$ERR" &&
			[ "$(artifact r.txt .status)" = rejected ]' || diag "exit $RC, stderr: $(cat "$ERR")"
	check "$mode: the symlink's target stays empty" empty_dir "$M/aim3"
	# Every run now makes its temp dir: a TMPDIR it cannot write is a host
	# setting, refused with 69 and a Hint, and sbx check says so first.
	mkjob "$M/quick.json" shell 'echo PAYLOAD-RAN'
	SBX_EXTRA_ENV="TMPDIR=$M/no-such-tmp" sbx_run "$M/quick.json"
	check "$mode: a TMPDIR that does not exist: 69, a Hint naming TMPDIR, the payload never ran" \
		eval '[ $RC -eq 69 ] && grep -q "Hint:.*TMPDIR" "$ERR" && [ "$(jqm .status)" = isolation_unavailable ] &&
			! grep -q PAYLOAD-RAN "$OUT"'
	SBX_EXTRA_ENV="TMPDIR=$M/no-such-tmp" as_mode "$SBX" check --config "$M/config.json" \
		--policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1
	RC=$?
	check "$mode: sbx check predicts it: 69, temp dir unusable with the same Hint" \
		eval '[ $RC -eq 69 ] && grep -q "^temp dir .*$M/no-such-tmp" "$M/check.out" && grep -q "Hint:.*TMPDIR" "$M/check.out"'
	as_mode "$SBX" check --config "$M/config.json" --policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1
	check "$mode: sbx check with the default TMPDIR: temp dir ok" grep -q "^temp dir  *ok: /tmp" "$M/check.out"
	check "$mode: nothing left behind" nothing_left

	# --- item: two artifacts never share a path ----------------------------
	mkjob "$M/j.json" shell 'cd /work/out && printf x > '"'"'a\x01.txt'"'"' &&
		printf y > "a$(printf "\001").txt" && printf z > "b$(printf "\001").txt" &&
		printf w > '"'"'b\x5cx01.txt'"'"' && printf v > ok.txt && ls | wc -l'
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: names that display alike: the run succeeds"
	check "$mode: all five files are listed" test "$(jqm '.artifacts | length')" = 5
	check "$mode: no two artifacts share a path" \
		test "$(jqm '[.artifacts[].path] | (length == (unique | length))')" = true
	check "$mode: the name with U+0001 is listed as a\\x01.txt, rejected" \
		eval 'artifact "a\\x01.txt" ".status + \" \" + .reason" | grep -q "^rejected .*control"'
	check "$mode: the literal a\\x01.txt is not promoted under that path" \
		eval '[ "$(jqm "[.artifacts[] | select(.status == \"promoted\")] | map(.path) | join(\",\")")" = ok.txt ] &&
			[ "$(cd "$ART" && ls)" = ok.txt ]'
	check "$mode: nothing left behind" nothing_left

	# --- item: store and key hardening --------------------------------------
	mkdir -p "$M/store/otherprincipal"
	echo "other principal's secret" > "$M/store/otherprincipal/secret.txt"
	ln "$M/store/otherprincipal/secret.txt" "$M/store/$PRINCIPAL/linked.txt"
	[ $mode = user ] && chown -R "$SBX_TEST_USER" "$M/store"
	mkjob "$M/j.json" shell 'echo PAYLOAD-RAN; cat /work/in/linked.txt' '{input_handles: ["linked.txt"]}'
	sbx_run "$M/j.json"
	check "$mode: a hard link to another principal's file: refused (77), payload never ran" \
		eval '[ $RC -eq 77 ] && [ "$(jqm .status)" = refused ] && grep -q "hard link" "$ERR" &&
			! grep -qs -e PAYLOAD-RAN -e "principal.s secret" "$OUT" "$ERR"' ||
		diag "exit $RC, stderr: $(cat "$ERR")"

	mkjob "$M/j.json" shell 'cd /work/out &&
		for c in "\342\200\213" "\342\200\250" "\342\200\251" "\357\273\277" "\363\240\200\201" "\342\200\256"; do
			printf x > "n$(printf "$c").txt"; done; printf ok > ok.txt'
	sbx_run "$M/j.json"
	check "$mode: names with U+200B, U+2028, U+2029, U+FEFF, a tag, U+202E: all rejected, ok.txt promoted" \
		eval '[ $RC -eq 0 ] && [ "$(jqm "[.artifacts[] | select(.status == \"rejected\")] | length")" = 6 ] &&
			[ "$(cd "$ART" && ls)" = ok.txt ]' || diag "artifacts: $(jqm -c .artifacts)"
	check "$mode: nothing left behind" nothing_left
done

# As root, a signing key that another user owns is not used.
MODE=root
M="$T/root"
cp "$M/key" "$M/evil.key"
chown "$EVIL" "$M/evil.key"
chmod 0600 "$M/evil.key"
mkjob "$M/j.json" shell 'echo PAYLOAD-RAN'
as_mode "$SBX" run --config "$M/config.json" --policy "$SBX_SRCDIR/policy" --key "$M/evil.key" \
	--store "$M/store" --artifacts "$M/art.evilkey" "$M/j.json" >"$M/out.evilkey" 2>"$M/err.evilkey"
RC=$?
check "root: a key owned by $EVIL: 69, no manifest, the Hint names chown" \
	eval '[ $RC -eq 69 ] && [ ! -s "$M/out.evilkey" ] && grep -q "owned by uid" "$M/err.evilkey" &&
		grep -q "Hint:.*chown" "$M/err.evilkey"' || diag "exit $RC, stderr: $(cat "$M/err.evilkey")"

finish
