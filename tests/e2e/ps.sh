#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ps.sh - the run as a person sees it: `sbx ps` lists a live run to its
# owner (and to no other user), a leftover entry of a dead sbx is not
# passed off as live, -v reports the run id and each stage, rejected
# artifacts are named on stderr (never on stdout), and a terminal gets a
# status line with the run id and a one-line summary at the end.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need timeout script useradd userdel

# A second unprivileged user, who must not see the test user's runs.
OTHER="$SBX_TEST_USER-other"
if ! id "$OTHER" >/dev/null 2>&1; then
	useradd --system --no-create-home --shell /bin/sh "$OTHER" ||
		{ echo "Bail out! cannot create user $OTHER"; exit 1; }
fi
cleanup_ps() {
	local rc=$?
	# The background runs are ours: end them before the scratch dir goes.
	local m id
	for m in root user; do
		eval "id=\${ID_$m:-}"
		[ -n "$id" ] && (use_mode $m; as_mode timeout 10 "$SBX" cancel --config "$M/config.json" "$id") >/dev/null 2>&1
	done
	[ -n "${ID_def:-}" ] && (use_mode user; as_mode env -u XDG_RUNTIME_DIR timeout 10 "$SBX" cancel \
		--config "$M/config-def.json" "$ID_def") >/dev/null 2>&1
	for p in ${BGS:-}; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${fake:-}" ] && rm -rf "/tmp/sbx-$(id -u "$OTHER")"
	[ "${DEF_EXISTED:-1}" = 0 ] && rm -rf "/tmp/sbx-$SBX_TEST_UID"
	userdel "$OTHER" 2>/dev/null
	[ -n "${T:-}" ] && rm -rf "$T"
	[ -n "${PT:-}" ] && rm -rf "$PT"
	exit $rc
}
trap cleanup_ps EXIT
as_other() { runuser -u "$OTHER" -- env -i PATH=/usr/bin:/bin HOME="$T/other" XDG_RUNTIME_DIR="$T/other/rt" "$@"; }
mkdir -p "$T/other/rt/sbx"
chown -R "$OTHER" "$T/other"
chmod 0700 "$T/other/rt" "$T/other/rt/sbx"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
wait_for() {
	local deadline=$(($(now_ms) + $1 * 1000)); shift
	until "$@"; do
		[ "$(now_ms)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# Each mode's environment, kept so that both modes' runs can be live at
# once (setup_mode sets these globals).
save_mode() { eval "S_M_$MODE=\$M S_K_$MODE=\$KEY S_CL_$MODE=\$CG_LAUNCH S_P_$MODE=\$PRINCIPAL"; }
use_mode() { MODE=$1; eval "M=\$S_M_$1 KEY=\$S_K_$1 CG_LAUNCH=\$S_CL_$1 PRINCIPAL=\$S_P_$1"; }

# start_bg TAG JOB: sbx run in the background, events in $M/TAG.ev.
BGS=
start_bg() {
	local tag=$1 job=$2
	(as_mode timeout -k 5 900 "$SBX" run --config "$M/config.json" --key "$KEY" \
		--policy "$SBX_SRCDIR/policy" --store "$M/store" --artifacts "$M/$tag.art" \
		--events "$M/$tag.ev" "$job" >"$M/$tag.out" 2>"$M/$tag.err"
	 echo $? >"$M/$tag.rc") &
	BGS="$BGS $!"
	eval "BG_${tag}_$MODE=\$!"
}
has_event() { grep -q "\"event\":\"$2\"" "$M/$1.ev" 2>/dev/null; }
run_id_of() { jq -r 'select(.event=="admitted") | .run_id' "$M/$1.ev" 2>/dev/null | head -1; }
sbx_ps() { as_mode timeout 20 "$SBX" ps --config "$M/config.json" "$@"; }

# jqf FILE JQ-ARGS...: FILE is non-empty JSON and the filter yields true.
jqf() { local f=$1; shift; [ -s "$f" ] && jq -e "$@" "$f" >/dev/null; }

# ps_row ID: the table row of run ID ("" when absent).
ps_row() { grep -E "^$1 " "$M/ps.txt"; }

for mode in root user; do
	setup_mode $mode
	save_mode
	mkjob "$M/long.json" shell 'sleep 600' '{limits: {wall_seconds: 900, soft_seconds: 890}}'
	chmod 0644 "$M/long.json"
	start_bg long "$M/long.json"
	check "$mode: a long run started in the background" wait_for 20 has_event long started ||
		diag "$mode: $(cat "$M/long.err")"
	eval "ID_$mode=\$(run_id_of long)"
done

for mode in root user; do
	use_mode $mode
	eval "id=\$ID_$mode"
	[ $mode = root ] && otherid=$ID_user || otherid=$ID_root

	# 1. The owner sees the live run in the table, with a header.
	sbx_ps > "$M/ps.txt" 2>"$M/ps.err"
	prc=$?
	check "$mode: sbx ps exits 0 and prints a header" \
		eval '[ $prc -eq 0 ] && head -1 "$M/ps.txt" | grep -Eq "^RUN ID +USER +PRINCIPAL +PROFILE +STATE +ELAPSED +MEMORY$"'
	row=$(ps_row "$id")
	check "$mode: sbx ps: the live run is listed, profile shell, state running" \
		eval '[ -n "$id" ] && [[ "$row" =~ ^$id\ +[^\ ]+\ +$PRINCIPAL\ +shell\ +running\ +[0-9] ]]'
	[ -n "$row" ] || diag "$mode: ps: $(cat "$M/ps.txt" "$M/ps.err")"
	# Columns line up: every field of every row starts where its header does.
	check "$mode: sbx ps: columns are aligned under their headers" \
		python3 - "$M/ps.txt" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
starts = [m.start() for m in re.finditer(r"(?<!\S)\S", lines[0].replace("RUN ID", "RUN_ID"))]
ok = len(lines) >= 2 and len(starts) == 7
for l in lines[1:]:
    ok = ok and [m.start() for m in re.finditer(r"(?<!\S)\S", l)][:7] == starts
sys.exit(0 if ok else 1)
PY

	# 2. The same in JSON.
	sbx_ps --json > "$M/ps.json" 2>"$M/ps.err"
	prc=$?
	check "$mode: sbx ps --json: an array; the run with run_id, principal, profile, state, uid" \
		eval '[ $prc -eq 0 ] && jq -e --arg id "$id" --arg p "$PRINCIPAL" --argjson uid "$(as_mode id -u)" \
			"type == \"array\" and (map(select(.run_id == \$id)) | length == 1 and
			 (.[0] | .principal == \$p and .profile == \"shell\" and .state == \"running\" and .uid == \$uid and
			  (.elapsed_ms | type) == \"number\" and .elapsed_ms >= 0 and (.started_at | type) == \"string\" and
			  ((.memory_bytes | type) == \"number\" or .memory_bytes == null)))" "$M/ps.json" >/dev/null'
	check "$mode: sbx ps --json: current memory of the run's cgroup is read" \
		jqf "$M/ps.json" --arg id "$id" '.[] | select(.run_id == $id) | .memory_bytes > 0'

	# 3. Not another user's runs.  (Root searches only the places sbx
	#    puts a user's state dir by default, not a configured state_dir.)
	[ $mode = user ] && what="root's live run" || what="the user's run in a configured state_dir"
	check "$mode: sbx ps does not list $what" \
		eval '[ -n "$otherid" ] && ! grep -q "$otherid" "$M/ps.txt" "$M/ps.json"'
done

# 4. Root sees a user's run in that user's default state dir
#    (/tmp/sbx-<uid> without XDG_RUNTIME_DIR), as that user's.
use_mode user
DEF_DIR=/tmp/sbx-$SBX_TEST_UID
[ -e "$DEF_DIR" ] && DEF_EXISTED=1 || DEF_EXISTED=0
OTHER_UID=$(id -u "$OTHER")
FORGED=/tmp/sbx-$OTHER_UID
jq 'del(.state_dir)' "$M/config.json" > "$M/config-def.json"
chmod 0644 "$M/config-def.json"
(as_mode env -u XDG_RUNTIME_DIR timeout -k 5 900 "$SBX" run --config "$M/config-def.json" --key "$KEY" \
	--policy "$SBX_SRCDIR/policy" --store "$M/store" --artifacts "$M/def.art" \
	--events "$M/def.ev" "$M/long.json" >"$M/def.out" 2>"$M/def.err"
 echo $? >"$M/def.rc") &
defbg=$!
BGS="$BGS $defbg"
wait_for 20 has_event def started
ID_def=$(run_id_of def)
# The test user makes a state dir named for the other user, with an
# entry in it: it is not the other user's and root must not list it.
if [ ! -e "$FORGED" ]; then
	fake=${ID_def:0:12}11111111111111111111
	runuser -u "$SBX_TEST_USER" -- sh -c 'umask 077; mkdir -p "$1/runs/$2" && : > "$1/runs/$2/lock" &&
		jq --arg f "$2" --argjson u "$3" ".run_id = \$f | .uid = \$u" "$4" > "$1/runs/$2/state.json"' \
		_ "$FORGED" "$fake" "$OTHER_UID" "$DEF_DIR/runs/$ID_def/state.json"
fi
use_mode root
sbx_ps --json > "$M/ps.json" 2>"$M/ps.err"
check "root: sbx ps lists the user's run from the user's default state dir, as the user's, running" \
	jqf "$M/ps.json" --arg id "$ID_def" --argjson u "$SBX_TEST_UID" --arg n "$SBX_TEST_USER" \
		'map(select(.run_id == $id)) | length == 1 and .[0].uid == $u and .[0].user == $n and .[0].state == "running" and .[0].profile == "shell"'
check "root: a state dir named for one user but owned by another is not read" \
	eval '[ -n "${fake:-}" ] && [ -f "$FORGED/runs/$fake/state.json" ] && ! grep -q "$fake" "$M/ps.json"'
use_mode user
sbx_ps --json > "$M/ps.json" 2>"$M/ps.err"
check "user: its run in the default state dir is not in the list of its configured one, root's neither" \
	jqf "$M/ps.json" --arg id "$ID_def" --arg r "$ID_root" 'map(select(.run_id == $id or .run_id == $r)) | length == 0'

# 5. Another unprivileged user sees nothing of the test user's runs, and
#    cannot point sbx ps at that user's state directory.
use_mode user
as_other timeout 20 "$SBX" ps --json > "$T/other/ps.json" 2>"$T/other/ps.err"
orc=$?
check "other user: sbx ps --json: exit 0, an empty array (neither root's nor the user's run)" \
	eval '[ $orc -eq 0 ] && [ "$(jq -c . "$T/other/ps.json")" = "[]" ]'
printf '{"state_dir":"%s"}\n' "$M/state" > "$T/other/cfg.json"
chmod 0644 "$T/other/cfg.json"
as_other timeout 20 "$SBX" ps --config "$T/other/cfg.json" > "$T/other/ps2.txt" 2>"$T/other/ps2.err"
orc=$?
check "other user: sbx ps on the test user's state dir: refused (69), nothing listed" \
	eval '[ $orc -eq 69 ] && [ ! -s "$T/other/ps2.txt" ] && grep -q "^sbx: " "$T/other/ps2.err"'

# The default-dir run ends and is gone from root's list.
use_mode user
as_mode env -u XDG_RUNTIME_DIR timeout 10 "$SBX" cancel --config "$M/config-def.json" "$ID_def" 2>/dev/null
wait $defbg 2>/dev/null
echo "$ID_def" >> "$T/run-ids"
use_mode root
sbx_ps --json > "$M/ps.json" 2>"$M/ps.err"
check "root: the user's run ended (cancelled: $(cat "$T/user/def.rc")), it is gone from root's list" \
	eval '[ "$(cat "$T/user/def.rc")" = 130 ] && jqf "$M/ps.json" --arg id "$ID_def" "map(select(.run_id == \$id)) | length == 0"'

for mode in root user; do
	use_mode $mode
	eval "id=\$ID_$mode"

	# 6. An entry whose sbx is gone (its lock is free) is "stale", never
	#    "running": a copy of the live entry with an unlocked lock file.
	fake=${id:0:12}00000000000000000000
	mkdir "$M/state/runs/$fake"
	jq --arg f "$fake" '.run_id = $f' "$M/state/runs/$id/state.json" > "$M/state/runs/$fake/state.json"
	: > "$M/state/runs/$fake/lock"
	[ $mode = user ] && chown -R "$SBX_TEST_USER" "$M/state/runs/$fake"
	sbx_ps --json > "$M/ps.json" 2>"$M/ps.err"
	check "$mode: a dead sbx's entry is listed as stale, the live run still running" \
		jqf "$M/ps.json" --arg f "$fake" --arg id "$id" '(map(select(.run_id == $f)) | .[0].state == "stale") and
			(map(select(.run_id == $id)) | .[0].state == "running")'
	rm -rf "${M:?}/state/runs/$fake"

	# 7. A run waiting for capacity is listed as queued, and sbx cancel
	#    reaches it there (the long run holds the only slot).
	jq '.max_concurrent = 1' "$M/config.json" > "$M/config1.json"
	chmod 0644 "$M/config1.json"
	mkjob "$M/quick.json" shell 'echo never'
	(as_mode timeout -k 5 120 "$SBX" run --config "$M/config1.json" --key "$KEY" \
		--policy "$SBX_SRCDIR/policy" --store "$M/store" --artifacts "$M/q.art" \
		--events "$M/q.ev" --queue-timeout 60 "$M/quick.json" >"$M/q.out" 2>"$M/q.err"
	 echo $? >"$M/q.rc") &
	qbg=$!
	BGS="$BGS $qbg"
	wait_for 20 has_event q queued
	qid=$(jq -r 'select(.event=="queued") | .run_id' "$M/q.ev" 2>/dev/null | head -1)
	sbx_ps --json > "$M/ps.json" 2>"$M/ps.err"
	check "$mode: a run waiting for a slot is listed as queued" \
		eval '[ -n "$qid" ] && jqf "$M/ps.json" --arg id "$qid" "map(select(.run_id == \$id)) | .[0].state == \"queued\""'
	as_mode timeout 10 "$SBX" cancel --config "$M/config.json" "$qid" 2>"$M/qc.err"
	qcrc=$?
	wait $qbg 2>/dev/null
	check "$mode: sbx cancel of the queued run: exit 0, the run ends cancelled (130), never admitted" \
		eval '[ $qcrc -eq 0 ] && [ "$(cat "$M/q.rc")" = 130 ] && [ "$(jq -r .status "$M/q.out")" = cancelled ] && ! has_event q admitted'
	[ -n "$qid" ] && echo "$qid" >> "$T/run-ids"

	# 8. Once the run ends it is gone from the list.
	as_mode timeout 10 "$SBX" cancel --config "$M/config.json" "$id" 2>/dev/null
	eval "wait \$BG_long_$mode" 2>/dev/null
	echo "$id" >> "$T/run-ids" # for nothing_left, once it has ended
	sbx_ps --json > "$M/ps.json" 2>"$M/ps.err"
	check "$mode: after the run ended (cancelled: $(cat "$M/long.rc")), sbx ps no longer lists it" \
		eval '[ "$(cat "$M/long.rc")" = 130 ] && jqf "$M/ps.json" --arg id "$id" "map(select(.run_id == \$id)) | length == 0"'
	sbx_ps > "$M/ps.txt" 2>&1
	check "$mode: sbx ps with no live run: the header only" \
		eval '[ "$(wc -l < "$M/ps.txt")" -eq 1 ]'
	check "$mode: sbx ps: unexpected operand is a usage error (64)" \
		eval 'sbx_ps extra >/dev/null 2>&1; [ $? -eq 64 ]'

	# 9. -v: the run id, then one line per stage, all starting "sbx: ";
	#    a rejected artifact is named on stderr; stdout is the manifest.
	mkjob "$M/rej.json" shell 'printf "\033[2Jhidden\n" > /work/out/clear.txt; echo fine > /work/out/ok.txt
		echo x > "/work/out/$(printf "e\033]0;owned\007.txt")"'
	sbx_run "$M/rej.json" -v
	rid=$(jqm .run_id)
	check "$mode: -v: exit 0, stdout is exactly one manifest line" \
		eval '[ $RC -eq 0 ] && [ "$(wc -l < "$OUT")" -eq 1 ] && jq -e .run_id "$OUT" >/dev/null'
	check "$mode: -v: 'sbx: run <id> started' with the manifest's run id" \
		grep -qx "sbx: run $rid started" "$ERR"
	check "$mode: -v: every stderr line starts with 'sbx: '" eval '! grep -qv "^sbx: " "$ERR"'
	stages=$(sed -nE 's/^sbx: (admitted|materialized|started|exited|collected|validated|cleaned)( .*)?$/\1/p' "$ERR" | paste -sd,)
	check "$mode: -v: each stage, in order ($stages)" \
		test "$stages" = admitted,materialized,started,exited,collected,validated,cleaned
	check "$mode: -v: the rejected artifact is named with its reason" \
		grep -Eq "^sbx: artifact clear.txt rejected: .*terminal" "$ERR"
	check "$mode: -v: a name with escape sequences is shown escaped, no ESC or BEL reaches stderr" \
		eval 'grep -q "^sbx: artifact e\\\\x1b\]0;owned\\\\x07.txt rejected: " "$ERR" && ! grep -q "$(printf "[\033\007]")" "$ERR"'
	check "$mode: -v: the promoted one is not called rejected; nothing of it on stdout" \
		eval '! grep -q "ok.txt" "$ERR" && ! grep -q "^sbx: " "$OUT"'
	sbx_run "$M/rej.json"
	check "$mode: without -v, off a terminal: stderr stays empty" eval '[ $RC -eq 0 ] && [ ! -s "$ERR" ]'

	# 10. On a terminal: the status line carries the run id; at the end a
	#    summary with status, time, counts and the artifacts directory,
	#    and the rejected artifact.  stdout (a file here) is the manifest.
	mkjob "$M/slow.json" shell 'sleep 1; printf "\033[2Jx\n" > /work/out/clear.txt; echo a > /work/out/a.txt'
	cmd=$(printf '%q ' timeout 30 "$SBX" run --config "$M/config.json" --policy "$SBX_SRCDIR/policy" \
		--key "$KEY" --store "$M/store" --artifacts "$M/tty.art" "$M/slow.json")
	rm -f "$M/tty.log"
	as_mode timeout 40 script -qec "$cmd >$M/tty.out" "$M/tty.log" </dev/null >/dev/null 2>&1
	trc=$?
	tid=$(jq -r .run_id "$M/tty.out" 2>/dev/null)
	echo "$tid" >> "$T/run-ids"
	check "$mode: on a terminal: the status line shows the run id and the stage" \
		eval '[ $trc -eq 0 ] && [ -n "$tid" ] && grep -aq "sbx: $tid running" "$M/tty.log"'
	check "$mode: on a terminal: 'artifact clear.txt rejected' on stderr" \
		grep -aEq "sbx: artifact clear.txt rejected: " "$M/tty.log"
	check "$mode: on a terminal: a summary: succeeded, time, 1 promoted, 1 rejected, the artifacts dir" \
		grep -aEq "^sbx: succeeded in [0-9]+\.[0-9]+s: 1 artifact promoted, 1 rejected, in $M/tty.art/?.?$" "$M/tty.log"
	check "$mode: on a terminal: stdout is still the manifest only" \
		eval '[ "$(wc -l < "$M/tty.out")" -eq 1 ] && jq -e .signature "$M/tty.out" >/dev/null'
	check "$mode: nothing left behind" nothing_left
done

finish
