#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# lifecycle.sh - a run is a resource contract: limits, deadlines,
# cancellation, the death of sbx itself, admission, accounting, events.
#
# Each scenario runs as root and as the unprivileged test user with a
# delegated cgroup.  Every sbx invocation runs under timeout(1), and every
# wait is bounded, so a hang fails the test instead of stalling the suite.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need timeout pgrep script

# The shipped catalog plus a test-only "probe" profile (lib.sh).
make_probe_catalog

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# start TAG JOB [sbx options...]: sbx run in the background.  Its manifest
# goes to $M/TAG.out, stderr to TAG.err, events to TAG.ev, artifacts to
# TAG.art and, once it ends, its exit status to TAG.rc.  $BG is the pid
# to wait for.  $CFG overrides the host config.
start() {
	local tag=$1 job=$2; shift 2
	rm -rf "$M/$tag".{out,err,ev,rc,art}
	(as_mode timeout -k 5 60 "$SBX" run --config "${CFG:-$M/config.json}" --policy "$POLICY" \
		--key "$KEY" --store "$M/store" --artifacts "$M/$tag.art" --events "$M/$tag.ev" \
		"$@" "$job" >"$M/$tag.out" 2>"$M/$tag.err"
	 echo $? >"$M/$tag.rc") &
	BG=$!
}

# collect TAG: wait for a background run (bounded by its timeout) and
# make it the current one for jqm, expect_rc and signature_ok.
collect() {
	local tag=$1
	wait "$BG" 2>/dev/null
	OUT="$M/$tag.out" ERR="$M/$tag.err" ART="$M/$tag.art" RC=$(cat "$M/$tag.rc" 2>/dev/null || echo 255)
	RUNS=$((RUNS + 1))
	[ "$MODE" = user ] && chmod -R a+rX "$ART" 2>/dev/null
	return 0
}

# wait_for SECONDS COMMAND...: poll until the command succeeds.  Under
# emulation a run takes seconds to start, so the bound grows by the
# slack; it only costs time when the condition never comes.
wait_for() {
	local deadline=$(($(now_ms) + $1 * 1000 + 2 * SLACK_MS)); shift
	until "$@"; do
		[ "$(now_ms)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}
has_event() { grep -q "\"event\":\"$2\"" "$M/$1.ev" 2>/dev/null; }

# The pid of the sbx process of background run TAG (not of timeout or
# runuser around it): its command line starts with the binary and names
# the run's artifacts directory.
sbx_pid() { pgrep -o -f "^$SBX run .*--artifacts $M/$1.art " ; }

# The run id of background run TAG, from its events.
run_id_of() { jq -r 'select(.event=="admitted") | .run_id' "$M/$1.ev" 2>/dev/null | head -1; }

# Processes whose command line carries MARKER (the probe's extra argv).
marked() {
	if [ "$MODE" = user ]; then pgrep -u "$SBX_TEST_USER" -f "$1"; else pgrep -f "$1"; fi
} >/dev/null

# nothing_left, restricted to what this script's own runs could leave:
# other tests may run on the host at the same time, as the same user.
# The run ids come from every manifest and events file of the mode.
our_ids() {
	local f
	for f in "$M"/*.out "$M"/out.*.json "$M"/*.ev; do
		[ -s "$f" ] && jq -r '.run_id // empty' "$f" 2>/dev/null
	done | grep -E '^[0-9a-f]{32}$' | sort -u | paste -sd'|'
}
nothing_left_here() {
	local left= ids cgs procs
	ids=$(our_ids)
	[ -n "$ids" ] || { diag "no run ids found"; return 1; }
	if [ -d "$M/state/runs" ] && [ -n "$(ls -A "$M/state/runs" 2>/dev/null)" ]; then left="$left state:$(ls "$M/state/runs")"; fi
	cgs=$(find /sys/fs/cgroup -maxdepth 6 -type d -regextype egrep -regex ".*/sbx-($ids)" 2>/dev/null | head -3)
	if [ -n "$cgs" ]; then left="$left cgroups:$(echo $cgs)"; fi
	# sbx, its wrappers and the probes name this script's scratch
	# directory or its pid; the payload shells are in the run cgroups.
	procs=$(pgrep -f -- "$T|lifecycle-[a-z]*-.*$$" | tr '\n' ' ')
	if [ -n "$procs" ]; then left="$left processes:$procs"; fi
	if grep -Eq "sbx-(run-)?($ids)" /proc/self/mountinfo; then left="$left mounts:$(grep -Ec "sbx-(run-)?($ids)" /proc/self/mountinfo)"; fi
	if ls -d /tmp/sbx-run-* 2>/dev/null | grep -Eq "sbx-run-($ids)"; then left="$left tmp:$(ls -d /tmp/sbx-run-* | grep -E "sbx-run-($ids)" | head -3 | tr '\n' ' ')"; fi
	if [ -n "$left" ]; then diag "left behind:$left"; return 1; fi
	return 0
}

# What a command wrote on the terminal that script(1) gave it, without
# the header and footer lines script adds to its log.
tty_says() {
	python3 - "$1" "$2" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
if d.startswith(b"Script started"):
    d = d.split(b"\n", 1)[1] if b"\n" in d else b""
i = d.rfind(b"\nScript done")
if i >= 0:
    d = d[:i]
erase = b"\r\x1b[K"
if sys.argv[2] == "status":
    # Redrawn in place with the run id, the stage and elapsed time, erased
    # at the end; then only the one-line summary.
    import re
    ok = (re.search(re.escape(erase) + rb"sbx: [0-9a-f]{32} running ", d) is not None and
          re.fullmatch(rb"sbx: succeeded [^\r\n\x1b]*\r?\n", d[d.rfind(erase) + len(erase):]) is not None)
else:
    ok = b"\x1b" not in d and b"\r" not in d
sys.exit(0 if ok else 1)
PY
}

for mode in root user; do
	setup_mode $mode
	CFG=
	# Jobs that several sections use.
	mkjob "$M/long.json" shell 'sleep 30'
	mkjob "$M/quick.json" shell 'echo quick'

	if section 1; then
		# 1. A memory hog at four times its limit is OOM-killed: 137,
		#    limit_exceeded, reason "memory...", the peak near the limit.
		mkjob "$M/memhog.json" probe 'exec /opt/sbx-probe memhog 256' '{limits: {memory_mib: 64}}'
		sbx_run "$M/memhog.json"
		expect_rc 137 "$mode: memory hog at 4x the limit"
		check "$mode: memory hog: limit_exceeded, reason names memory" \
			eval '[ "$(jqm .status)" = limit_exceeded ] && [[ "$(jqm .reason)" == memory* ]] && [ "$(jqm .reason_code)" = memory_limit ]'
		check "$mode: memory hog: peak memory >= 0.9 x limit ($(jqm .usage.peak_memory_bytes) bytes)" \
			test "$(jqm '.usage.peak_memory_bytes >= 0.9 * 64 * 1048576')" = true
		check "$mode: memory hog: killed by SIGKILL, an OOM kill counted, manifest signed" \
			eval '[ "$(jqm .exit.signal)" = SIGKILL ] && [ "$(jqm ".usage.oom_kills >= 1")" = true ] && signature_ok'
		check "$mode: memory hog: nothing left behind" nothing_left_here

	fi
	if section 2; then
		# 2. A payload that ignores SIGTERM: killed after the grace period,
		#    124 within wall + grace + 1 s.
		mkjob "$M/noterm.json" probe 'exec /opt/sbx-probe ignore-term' \
			'{limits: {wall_seconds: 2, soft_seconds: 1, grace_seconds: 1}}'
		t0=$(now_ms)
		sbx_run "$M/noterm.json"
		took=$(($(now_ms) - t0))
		diag "$mode: SIGTERM-ignoring payload: sbx took $took ms (wall 2 s, grace 1 s)"
		expect_rc 124 "$mode: payload ignoring SIGTERM times out"
		check "$mode: ignores SIGTERM: timed_out, reason names wall_seconds and the kill" \
			eval '[ "$(jqm .status)" = timed_out ] && [[ "$(jqm .reason)" == *wall_seconds*killed* ]] && [ "$(jqm .reason_code)" = wall_timeout ]'
		check "$mode: ignores SIGTERM: done within wall+grace+1 s ($took ms), at least wall+grace" \
			eval '[ $took -ge 3000 ] && [ $took -le $((4000 + SLACK_MS)) ]'
		check "$mode: ignores SIGTERM: exit is SIGKILL" test "$(jqm .exit.signal)" = SIGKILL
		check "$mode: ignores SIGTERM: soft_timeout at ~1 s, then terminating (timed_out) at ~2 s" \
			test "$(jq -r --argjson slack "$SLACK_MS" '[.events[] | select(.event=="soft_timeout" or .event=="terminating") |
				"\(.event):\(.detail // ""):\(if .t_ms >= 900 + 1000 * (if .event == "terminating" then 1 else 0 end) and
				.t_ms <= 1600 + $slack + 1000 * (if .event == "terminating" then 1 else 0 end) then "ontime" else .t_ms end)"] | join(",")' "$OUT")" \
			= "soft_timeout::ontime,terminating:timed_out:ontime"
		check "$mode: ignores SIGTERM: timing.wall_ms is the payload's 3 s ($(jqm .timing.wall_ms) ms)" \
			test "$(jq -r --argjson slack "$SLACK_MS" '.timing.wall_ms >= 2900 and .timing.wall_ms <= 3600 + $slack' "$OUT")" = true
		check "$mode: ignores SIGTERM: nothing left behind" nothing_left_here

	fi
	if section 3; then
		# 3. A fork bomb under pids 32: fork fails inside, the payload spins
		#    until the wall deadline, the host never sees the processes.
		mkjob "$M/forkbomb.json" probe "/opt/sbx-probe forkbomb 200 lifecycle-bomb-$$; while :; do :; done" \
			'{limits: {pids: 32, wall_seconds: 3, grace_seconds: 1}}'
		t0=$(now_ms)
		sbx_run "$M/forkbomb.json"
		took=$(($(now_ms) - t0))
		expect_rc 124 "$mode: fork bomb under pids 32 ends at the wall deadline"
		check "$mode: fork bomb: fork failed with EAGAIN before 32 processes ($(jqm .stdout.excerpt | head -1))" \
			eval 'jqm .stdout.excerpt | grep -Eq "^forkbomb made=([0-9]|[12][0-9]|3[01]) errno=EAGAIN"'
		check "$mode: fork bomb: usage.pids_limit_hit" test "$(jqm .usage.pids_limit_hit)" = true
		check "$mode: fork bomb: ended near the deadline ($took ms)" eval '[ $took -ge 3000 ] && [ $took -le $((5000 + SLACK_MS)) ]'
		check "$mode: fork bomb: no bomb process left on the host" eval '! pgrep -f "lifecycle-bomb-$$" >/dev/null'
		check "$mode: fork bomb: nothing left behind" nothing_left_here

	fi
	if section 4; then
		# 4. cpu_cores 0.5: a busy loop gets half of the wall time.  The
		#    manifest's CPU time is the cgroup's, from the init's birth
		#    (on v2 it is cloned into the cgroup), its wall time the
		#    payload's: what the same sandbox costs around an empty
		#    payload, measured just before, is taken off (a few ms on a
		#    real machine, hundreds under emulation).
		mkjob "$M/cpu0.json" probe 'exit 0' '{limits: {cpu_cores: 0.5, wall_seconds: 10}}'
		sbx_run "$M/cpu0.json"
		base=$(jqm '.timing.cpu_user_ms + .timing.cpu_system_ms')
		mkjob "$M/cpu.json" probe 'exec /opt/sbx-probe spin 3' '{limits: {cpu_cores: 0.5, wall_seconds: 10}}'
		sbx_run "$M/cpu.json"
		expect_rc 0 "$mode: busy loop under cpu_cores 0.5"
		cpu=$(jqm '.timing.cpu_user_ms + .timing.cpu_system_ms') wall=$(jqm .timing.wall_ms)
		diag "$mode: cpu_cores 0.5: cpu $cpu ms over wall $wall ms (an empty payload's sandbox: ${base:-?} ms)"
		cpu=$((cpu - ${base:-0}))
		check "$mode: cpu time is half the wall time +-20% (cpu $cpu ms net, wall $wall ms)" \
			eval '[ -n "$base" ] && [ $wall -ge 1500 ] && [ $((cpu * 100)) -ge $((wall * 50 * 80 / 100)) ] && [ $((cpu * 100)) -le $((wall * 50 * 120 / 100)) ]'

	fi
	if section 5; then
		# 5. SIGINT to sbx mid-run: 130 cancelled, signed; the partial output
		#    is kept (marked partial) or discarded, as the job says.
		for policy in retain discard; do
			mkjob "$M/int-$policy.json" shell 'echo partial > /work/out/a.txt; sleep 30' \
				"{partial_outputs: \"$policy\", allowed_outputs: [\"text/plain\"]}"
			start "int-$policy" "$M/int-$policy.json"
			wait_for 10 has_event "int-$policy" started && sleep 0.3
			pid=$(sbx_pid "int-$policy")
			[ -n "$pid" ] && kill -INT "$pid"
			collect "int-$policy"
			expect_rc 130 "$mode: SIGINT to sbx ($policy)"
			check "$mode: SIGINT ($policy): cancelled, reason says so, signature verifies" \
				eval '[ "$(jqm .status)" = cancelled ] && [[ "$(jqm .reason)" == *cancel* ]] && [ "$(jqm .reason_code)" = cancelled ] && signature_ok'
			check "$mode: SIGINT ($policy): one terminating event, detail cancelled" \
				test "$(jqm '[.events[] | select(.event=="terminating") | .detail] | join(",")')" = cancelled
			if [ $policy = retain ]; then
				check "$mode: SIGINT (retain): a.txt promoted, marked partial" \
					eval '[ "$(jqm ".artifacts[] | select(.path==\"a.txt\") | .status + \" \" + (.partial|tostring)")" = "promoted true" ] && grep -qx partial "$ART/a.txt"'
			else
				check "$mode: SIGINT (discard): a.txt listed as discarded, not in the artifacts dir" \
					eval '[ "$(jqm ".artifacts[] | select(.path==\"a.txt\") | .status")" = discarded ] && [ ! -e "$ART/a.txt" ]'
			fi
		done
		# SIGTERM and SIGHUP to sbx cancel too.
		for sig in TERM HUP; do
			start "sig$sig" "$M/long.json"
			wait_for 10 has_event "sig$sig" started
			pid=$(sbx_pid "sig$sig")
			[ -n "$pid" ] && kill -$sig "$pid"
			collect "sig$sig"
			check "$mode: SIG$sig to sbx: 130 cancelled" eval '[ $RC -eq 130 ] && [ "$(jqm .status)" = cancelled ]'
		done
		# Asked twice: the second SIGINT does not wait for the grace period
		# of a payload that ignores SIGTERM.
		mkjob "$M/twice.json" probe 'exec /opt/sbx-probe ignore-term' '{limits: {wall_seconds: 60, grace_seconds: 20}}'
		start twice "$M/twice.json"
		wait_for 10 has_event twice started && sleep 0.2
		pid=$(sbx_pid twice)
		[ -n "$pid" ] && kill -INT "$pid"
		sleep 0.5
		check "$mode: one SIGINT: a payload ignoring SIGTERM gets its grace period" eval '[ ! -s "$M/twice.rc" ] && has_event twice terminating'
		t0=$(now_ms)
		[ -n "$pid" ] && kill -INT "$pid"
		wait_for 5 test -s "$M/twice.rc"
		took=$(($(now_ms) - t0))
		collect twice
		check "$mode: a second SIGINT kills at once ($took ms): 130 cancelled, SIGKILL" \
			eval '[ $took -lt $((1000 + SLACK_MS)) ] && [ $RC -eq 130 ] && [ "$(jqm .status)" = cancelled ] && [ "$(jqm .exit.signal)" = SIGKILL ]'
		check "$mode: SIGINT: nothing left behind" nothing_left_here

	fi
	if section 6; then
		# 6. sbx cancel RUN_ID from another shell.
		start cancel "$M/long.json"
		wait_for 10 has_event cancel started
		id=$(run_id_of cancel)
		t0=$(now_ms)
		as_mode timeout 10 "$SBX" cancel --config "$M/config.json" "$id" >/dev/null 2>"$M/cancel.err"
		crc=$?
		collect cancel
		took=$(($(now_ms) - t0))
		diag "$mode: sbx cancel -> sbx exited in $took ms"
		check "$mode: sbx cancel of a live run exits 0" test $crc -eq 0
		expect_rc 130 "$mode: the cancelled run"
		check "$mode: sbx cancel: status cancelled, reason says cancelled, run id matches, signed" \
			eval '[ "$(jqm .status)" = cancelled ] && [[ "$(jqm .reason)" == *cancelled* ]] && [ "$(jqm .reason_code)" = cancelled ] && [ "$(jqm .run_id)" = "$id" ] && signature_ok'
		check "$mode: sbx cancel: the run ended within 3 s ($took ms)" test $took -le $((3000 + SLACK_MS))
		as_mode timeout 10 "$SBX" cancel --config "$M/config.json" 0123456789abcdef0123456789abcdef >/dev/null 2>&1
		check "$mode: sbx cancel of an unknown run id exits 1" test $? -eq 1
		as_mode timeout 10 "$SBX" cancel --config "$M/config.json" "$id" >/dev/null 2>&1
		check "$mode: sbx cancel of a finished run exits 1" test $? -eq 1

	fi
	if section 7; then
		# 7. SIGKILL of sbx mid-run: the payload dies with it within 1 s,
		#    and sbx gc removes what the run left behind.
		mark="lifecycle-orphan-$mode-$$"
		mkjob "$M/orphan.json" probe "exec /opt/sbx-probe spin 60 $mark"
		start orphan "$M/orphan.json"
		wait_for 10 has_event orphan started
		wait_for 5 marked "$mark"
		check "$mode: the payload runs (found by its marker)" marked "$mark"
		pid=$(sbx_pid orphan)
		t0=$(now_ms)
		[ -n "$pid" ] && kill -KILL "$pid"
		wait_for 1 eval '! marked "$mark"'
		gone=$?
		took=$(($(now_ms) - t0))
		diag "$mode: SIGKILL of sbx: payload gone after $took ms"
		collect orphan
		check "$mode: SIGKILL of sbx: the payload is gone within 1 s ($took ms)" test $gone -eq 0
		id=$(run_id_of orphan)
		check "$mode: SIGKILL of sbx: its state entry is left for gc" test -d "$M/state/runs/$id"
		t0=$(now_ms)
		as_mode timeout 20 "$SBX" gc --config "$M/config.json" >/dev/null 2>"$M/gc.err"
		grc=$?
		diag "$mode: sbx gc took $(($(now_ms) - t0)) ms"
		check "$mode: sbx gc exits 0" test $grc -eq 0
		check "$mode: after sbx gc: no cgroup, state entry, process or temp dir" nothing_left_here
		as_mode timeout 20 "$SBX" gc --config "$M/config.json" >/dev/null 2>&1
		check "$mode: sbx gc again (idempotent) exits 0" test $? -eq 0
		# The next sbx run reaps a crashed run too.
		start orphan2 "$M/orphan.json"
		wait_for 10 has_event orphan2 started
		pid=$(sbx_pid orphan2)
		[ -n "$pid" ] && kill -KILL "$pid"
		collect orphan2
		id=$(run_id_of orphan2)
		check "$mode: SIGKILL of sbx again: its state entry is left" test -d "$M/state/runs/$id"
		sbx_run "$M/quick.json"
		check "$mode: the next sbx run succeeds and reaps what the crashed run left" \
			eval '[ $RC -eq 0 ] && [ ! -e "$M/state/runs/$id" ] && nothing_left_here'

	fi
	if section 8; then
		# 8. Admission with max_concurrent 1: a second run is refused at once,
		#    a third waits in the queue and runs when the first ends.
		jq '. + {max_concurrent: 1}' "$M/config.json" > "$M/config1.json"
		chmod 0644 "$M/config1.json"
		# The first run holds the only slot until this test cancels it: a
		# clock would race the runs below, which under emulation take
		# seconds each to start.
		mkjob "$M/first.json" shell 'sleep 50'
		CFG="$M/config1.json"
		start first "$M/first.json"
		first_bg=$BG
		wait_for 10 has_event first started
		t0=$(now_ms)
		start second "$M/quick.json" --queue-timeout 0
		collect second
		took=$(($(now_ms) - t0))
		expect_rc 75 "$mode: max_concurrent 1: second run refused"
		check "$mode: second run: rejected_capacity, signed, at once ($took ms)" \
			eval '[ "$(jqm .status)" = rejected_capacity ] && signature_ok && [ $took -lt $((1000 + SLACK_MS)) ]'
		start third "$M/quick.json" --queue-timeout 45
		third_bg=$BG
		wait_for 5 has_event third queued
		check "$mode: third run is queued while the first runs" has_event third queued
		# gc while runs are live and queued reaps nothing of theirs.
		as_mode timeout 20 "$SBX" gc --config "$M/config.json" >/dev/null 2>&1
		grc=$?
		check "$mode: sbx gc during a live run exits 0 and keeps its state entry" \
			eval '[ $grc -eq 0 ] && [ -d "$M/state/runs/$(run_id_of first)" ]'
		check "$mode: third run has not started while the first runs" eval '! has_event third started && ! has_event first exited'
		# A queued run is cancelled at once by SIGINT, not when it would
		# have been admitted.
		start fourth "$M/quick.json" --queue-timeout 20
		wait_for 5 has_event fourth queued
		t0=$(now_ms)
		pid=$(sbx_pid fourth)
		[ -n "$pid" ] && kill -INT "$pid"
		wait_for 5 test -s "$M/fourth.rc"
		took=$(($(now_ms) - t0))
		fourth_bg=$BG
		check "$mode: SIGINT to a queued run: 130 within 1 s ($took ms), while the first still runs" \
			eval '[ "$(cat "$M/fourth.rc" 2>/dev/null)" = 130 ] && [ $took -lt $((1000 + SLACK_MS)) ] && ! has_event first exited'
		BG=$fourth_bg
		collect fourth
		check "$mode: SIGINT to a queued run: status cancelled, signed, never admitted" \
			eval '[ "$(jqm .status)" = cancelled ] && signature_ok && ! has_event fourth admitted'
		check "$mode: the third run is still queued" eval '! has_event third admitted'
		# Now free the slot: the third run must be admitted and succeed.
		as_mode timeout 10 "$SBX" cancel --config "$M/config.json" "$(run_id_of first)" >/dev/null 2>&1
		BG=$first_bg
		collect first
		check "$mode: the first run, undisturbed until sbx cancel, ends cancelled (130)" \
			eval '[ $RC -eq 130 ] && [ "$(jqm .status)" = cancelled ] && [ "$(jqm .reason_code)" = cancelled ] && signature_ok &&
				[ "$(jqm "[.events[] | select(.event==\"terminating\") | .detail] | join(\",\")")" = cancelled ]'
		BG=$third_bg
		collect third
		expect_rc 0 "$mode: third run succeeds after the first ends"
		check "$mode: third run's events: queued then admitted, started after the first exited" \
			eval '[ "$(jqm "[.events[].event] | index(\"queued\") < index(\"admitted\")")" = true ] && has_event first exited'
		CFG=

	fi
	if section 9; then
		# 9. 16 concurrent trivial runs (default max_concurrent, so they
		#    queue): all succeed, each with its own run id.
		pids=
		for i in $(seq 16); do
			start "many$i" "$M/quick.json" --queue-timeout 60
			pids="$pids $BG"
		done
		for p in $pids; do wait "$p" 2>/dev/null; done
		bad=0
		for i in $(seq 16); do
			[ "$(cat "$M/many$i.rc" 2>/dev/null)" = 0 ] && [ "$(jq -r .status "$M/many$i.out")" = succeeded ] ||
				{ bad=$((bad + 1)); diag "many$i: rc $(cat "$M/many$i.rc" 2>/dev/null) $(head -c 300 "$M/many$i.err")"; }
		done
		check "$mode: 16 concurrent runs all succeed ($bad did not)" test $bad -eq 0
		check "$mode: 16 concurrent runs have 16 distinct run ids" \
			test "$(for i in $(seq 16); do jq -r .run_id "$M/many$i.out"; done | grep -E '^[0-9a-f]{32}$' | sort -u | wc -l)" -eq 16
		check "$mode: 16 concurrent runs: nothing left behind" nothing_left_here

	fi
	# The VM suite (tests/vm) reruns only what depends on cgroups, on a
	# real cgroup v2 kernel under emulation; the sections below run here.
	if [ -z "${SBX_E2E_CGROUP_ONLY:-}" ]; then
		# 10. A late exit racing the deadline: the payload ends at about
		#     wall_seconds.  Whatever wins, there is one terminal state and
		#     the exit status agrees with it.
		jq '. + {max_concurrent: 6}' "$M/config.json" > "$M/config6.json"
		chmod 0644 "$M/config6.json"
		CFG="$M/config6.json"
		n=0 bad=0 succ=0 tout=0
		for batch in 1 2 3 4 5; do
			pids=
			for s in 0.90 0.93 0.96 0.98 1.0 1.02; do
				n=$((n + 1))
				mkjob "$M/race$n.json" shell "sleep $s" '{limits: {wall_seconds: 1, grace_seconds: 1}}'
				start "race$n" "$M/race$n.json" --queue-timeout 30
				pids="$pids $BG"
			done
			for p in $pids; do wait "$p" 2>/dev/null; done
		done
		for i in $(seq $n); do
			f="$M/race$i.out" rc=$(cat "$M/race$i.rc" 2>/dev/null)
			v=$(jq -r '[.status, (.exit.code|tostring), (.exit.signal|tostring),
				([.events[] | select(.event=="terminating")] | length | tostring),
				([.events[] | select(.event=="exited")] | length | tostring),
				([.events[] | select(.event=="cleaned")] | length | tostring)] | join(" ")' "$f" 2>/dev/null)
			case "$rc $v" in
			"0 succeeded 0 null 0 1 1") succ=$((succ + 1)) ;;
			"124 timed_out "*" 1 "[01]" 1") tout=$((tout + 1)) ;;
			*) bad=$((bad + 1)); diag "race$i: rc $rc: $v" ;;
			esac
		done
		diag "$mode: deadline race: $succ succeeded, $tout timed out, $bad inconsistent of $n"
		check "$mode: deadline race: $n runs, each one terminal state agreeing with its exit status" \
			eval '[ $bad -eq 0 ] && [ $((succ + tout)) -eq $n ]'
		check "$mode: deadline race: nothing left behind" nothing_left_here
		CFG=

		# 11. --events - : JSON lines on stderr, in lifecycle order.
		sbx_run "$M/quick.json" --events -
		expect_rc 0 "$mode: run with --events -"
		rid=$(jqm .run_id)
		check "$mode: --events -: every stderr line is an event with run_id, t_ms, event" \
			test "$(jq -s --arg r "$rid" 'length > 0 and all(.run_id == $r and (.t_ms|type) == "number" and (.event|type) == "string")' "$ERR")" = true
		check "$mode: --events -: lifecycle order, t_ms non-decreasing" \
			eval '[ "$(jq -rs "map(.event) | join(\",\")" "$ERR")" = admitted,materialized,started,exited,collected,validated,cleaned ] && [ "$(jq -s "[.[].t_ms] | . == sort" "$ERR")" = true ]'

		# 12. The live status line: only on a terminal, erased when done.
		sbx_run "$M/quick.json"
		check "$mode: stderr not a terminal: no status line, stderr empty" eval '[ $RC -eq 0 ] && [ ! -s "$ERR" ]'
		mkjob "$M/slow.json" shell 'sleep 1.5'
		for q in "" -q; do
			cmd=$(printf '%q ' timeout 30 "$SBX" run --config "$M/config.json" --policy "$POLICY" --key "$KEY" \
				--store "$M/store" --artifacts "$M/tty$q.art" $q "$M/slow.json")
			rm -f "$M/tty$q.log"
			as_mode timeout 40 script -qec "$cmd >$M/tty$q.out" "$M/tty$q.log" </dev/null >/dev/null 2>&1
			trc=$?
			if [ -z "$q" ]; then
				check "$mode: on a terminal: a status line with run id, stage and elapsed time, erased, then the summary" \
					eval '[ $trc -eq 0 ] && tty_says "$M/tty$q.log" status'
			else
				check "$mode: on a terminal with -q: no status line" \
					eval '[ $trc -eq 0 ] && tty_says "$M/tty$q.log" nothing'
			fi
		done
	fi
	check "$mode: nothing left behind at the end" nothing_left_here
done

finish
