#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# validate.sh - the confined validator, sbx-validate: every output is
# parsed there, never in sbx, which holds the signing key.
#
#  - A run with outputs execs sbx-validate (strace sees the execve), and
#    the manifest reports timing.validate_ms.
#  - The validator is out of reach of the host: its --probe confines it
#    and finds no file, no network, and dies of its seccomp filter at the
#    first call outside its allowlist.
#  - A validator that misbehaves as a compromised one would (spins,
#    crashes, makes a forbidden call, exits, answers garbage, too much,
#    for another file, or with a type the name does not stand for) is
#    killed, and every file without a verdict is rejected with the reason;
#    the run and its signature stay truthful and nothing is left behind.
#  - Time: validation ends on the run's wall clock plus the profile's
#    validate_seconds, and its CPU is the run's, not the broker's: the
#    contract pattern that cost the broker 35 s of CPU before (issue 23)
#    ends within the bound, the output rejected, with sbx's own CPU
#    (timing.sbx_cpu_ms, its RUSAGE_SELF) under 50 ms.
#  - Cancellation reaches validation: SIGINT while it runs is a cancelled
#    run whose unvalidated files are rejected.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need strace jq

# A catalog whose shell profile gives validation 2 s past the wall clock.
POLICY="$T/policy"
cp -r "$SBX_SRCDIR/policy" "$POLICY"
jq '.validate_seconds = 2' "$SBX_SRCDIR/policy/profiles/shell.json" > "$POLICY/profiles/shell.json"
chmod -R a+rX "$T"

now_ms() { date +%s%3N; }
artifact() { jqm ".artifacts[] | select(.path == \"$1\") | .status + \": \" + (.reason // \"\")"; }
# rejected_because PATH TEXT: PATH rejected, its reason containing TEXT.
rejected_because() {
	local r
	r=$(artifact "$1")
	[[ "$r" == "rejected: "*"$2"* ]] && return 0
	diag "$1: $r"
	return 1
}
has_event() { grep -q "\"event\":\"$2\"" "$1" 2>/dev/null; }

# cpu_of RUSAGE-FILE: user + system ms of sbx and what it reaped, as
# /usr/bin/time wrote them ("U S" in seconds).
# (A first line "Command exited with non-zero status N" may come before.)
cpu_of() { tail -n 1 "$1" | awk '{ printf "%d", ($1 + $2) * 1000 }'; }

for mode in root user; do
	setup_mode $mode

	# --- the validator is exec'd, and timed -----------------------------------
	mkjob "$M/ok.json" shell 'printf "a,b\n1,2\n" > /work/out/t.csv; echo hello > /work/out/n.txt'
	TRACE="$M/trace"
	SBX_REAL=$SBX
	SBX="$T/sbx-traced"
	printf '#!/bin/sh\nexec strace -f -qq -e trace=execve -o "%s" "%s" "$@"\n' "$TRACE" "$SBX_REAL" > "$SBX"
	chmod 0755 "$SBX"
	: > "$TRACE"
	chmod 0666 "$TRACE"
	sbx_run "$M/ok.json"
	SBX=$SBX_REAL
	expect_rc 0 "$mode: a run with two outputs"
	check "$mode: both promoted, validated as text/csv and text/plain" \
		eval '[ "$(jqm "[.artifacts[] | .path + \" \" + .status + \" \" + .media_type] | sort | join(\",\")")" = "n.txt promoted text/plain,t.csv promoted text/csv" ]'
	check "$mode: strace sees sbx-validate exec'd" \
		grep -q 'execve(".*/sbx-validate", \["sbx-validate"' "$TRACE" ||
		diag "execves: $(grep -o 'execve("[^"]*"' "$TRACE" | sort -u | tr '\n' ' ')"
	check "$mode: timing.validate_ms is reported" \
		eval '[ "$(jqm ".timing.validate_ms | type")" = number ] && [ "$(jqm .timing.validate_ms)" -ge 0 ]'
	check "$mode: the signature verifies" signature_ok
	mkjob "$M/none.json" shell 'echo no outputs'
	sbx_run "$M/none.json"
	check "$mode: no outputs, no validator: validate_ms is 0" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .timing.validate_ms)" = 0 ]'

	# --- what the validator can reach ------------------------------------------
	as_mode "$SBX_BUILDDIR/sbx-validate" --probe >"$M/probe.out" 2>"$M/probe.err"
	rc=$?
	grep -qx 'probe read-outside=denied network=denied' "$M/probe.out" ||
		diag "probe: rc $rc, $(cat "$M/probe.out" "$M/probe.err" | head -c 500)"
	check "$mode: --probe: no file outside, no network" \
		grep -qx 'probe read-outside=denied network=denied' "$M/probe.out"
	check "$mode: --probe: the first call outside the allowlist kills it (SIGSYS, exit $rc)" \
		eval '[ $rc -eq $((128 + 31)) ] && ! grep -q open-after-seccomp "$M/probe.out"'

	# --- a validator that misbehaves ------------------------------------------
	mkjob "$M/two.json" shell 'printf "a,b\n1,2\n" > /work/out/t.csv; echo hello > /work/out/u.txt'
	for how in crash:"killed by signal 6" syscall:"system call its filter forbids" \
		exit:"exited with status 0" garbage:"bad answer from the validator: not an answer" \
		long:"bad answer from the validator: too long" \
		other:"bad answer from the validator: an answer to another item"; do
		m=${how%%:*} why=${how#*:}
		SBX_EXTRA_ENV="SBX_TEST_VALIDATE=$m" sbx_run "$M/two.json"
		check "$mode: validator that does '$m': both files rejected, \"$why\", run succeeded and signed" \
			eval '[ $RC -eq 0 ] && [ "$(jqm .status)" = succeeded ] && rejected_because t.csv "not validated: " &&
				rejected_because t.csv "$why" && rejected_because u.txt "$why" && signature_ok &&
				[ -z "$(ls -A "$ART" 2>/dev/null | grep -v "^\.sbx$")" ]'
	done
	SBX_EXTRA_ENV="SBX_TEST_VALIDATE=forge" sbx_run "$M/two.json"
	check "$mode: a verdict of image/png for t.csv is not believed; u.txt, answered truly, is promoted" \
		eval 'rejected_because t.csv "answered image/png, which the name or the job does not allow" &&
			[ "$(artifact u.txt)" = "promoted: " ] && [ ! -e "$ART/t.csv" ] && [ -f "$ART/u.txt" ]'

	# --- time: the wall clock plus validate_seconds --------------------------
	mkjob "$M/spin.json" shell 'printf "a,b\n1,2\n" > /work/out/t.csv' '{limits: {wall_seconds: 2}}'
	t0=$(now_ms)
	SBX_EXTRA_ENV="SBX_TEST_VALIDATE=spin" sbx_run "$M/spin.json"
	took=$(($(now_ms) - t0))
	check "$mode: a spinning validator is killed at wall_seconds 2 + validate_seconds 2 (took $took ms)" \
		eval '[ $RC -eq 0 ] && rejected_because t.csv "ran out of time" && [ $took -lt $((8000 + SLACK_MS)) ] &&
			[ "$(jqm .timing.validate_ms)" -ge 1900 ]'
	check "$mode: its CPU is the run's (cgroup): cpu_user_ms is at least a second" \
		eval '[ "$(jqm .timing.cpu_user_ms)" -ge 1000 ]' || diag "timing: $(jqm -c .timing)"
	check "$mode: nothing left behind after the kill" nothing_left

	# The issue's case: a contract pattern that scans each 65,535-letter
	# line from every start position.  It cost the broker 35 s of CPU.
	mkjob "$M/re.json" shell \
		'for i in $(seq 20); do head -c 65535 /dev/zero | tr "\0" a; echo "!"; done > /work/out/big.txt' \
		'{limits: {wall_seconds: 5}, outputs: {"big.txt": {pattern: "\\w+$"}}}'
	RU="$M/rusage"
	t0=$(now_ms)
	RUNS=$((RUNS + 1)) OUT="$M/re.out" ERR="$M/re.err" ART="$M/re.art"
	as_mode /usr/bin/time -f '%U %S' -o "$RU" "$SBX" run --config "$M/config.json" \
		--policy "$POLICY" --key "$KEY" --store "$M/store" --artifacts "$ART" "$M/re.json" \
		>"$OUT" 2>"$ERR"
	RC=$? took=$(($(now_ms) - t0))
	jq -r '.run_id // empty' "$OUT" >> "$T/run-ids" 2>/dev/null
	run_cpu=$(jqm '.timing.cpu_user_ms + .timing.cpu_system_ms')
	broker=$(jqm .timing.sbx_cpu_ms)
	diag "$mode: \\w+\$ over 20 lines of 65,535 letters: $took ms wall; run cgroup $run_cpu ms CPU; sbx itself $broker ms CPU (rusage of sbx and what it reaped: $(cpu_of "$RU") ms)"
	check "$mode: the pattern's output is rejected within wall_seconds 5 + validate_seconds 2 (took $took ms)" \
		eval '{ [ $RC -eq 1 ] || [ $RC -eq 0 ]; } && rejected_because big.txt "" && [ $took -lt $((12000 + SLACK_MS)) ]'
	check "$mode: sbx's own CPU (timing.sbx_cpu_ms) stays under 50 ms: $broker ms" \
		eval '[ -n "$broker" ] && [ "$broker" != null ] && [ $broker -lt 50 ]'

	# --- cancellation reaches validation ----------------------------------
	EV="$M/cancel.ev"
	: > "$EV"
	chmod 0666 "$EV"
	(SBX_EXTRA_ENV="SBX_TEST_VALIDATE=spin" as_mode timeout -k 5 60 "$SBX" run --config "$M/config.json" \
		--policy "$POLICY" --key "$KEY" --store "$M/store" --artifacts "$M/cancel.art" \
		--events "$EV" "$M/spin.json" >"$M/cancel.out" 2>"$M/cancel.err"
	 echo $? > "$M/cancel.rc") &
	bg=$!
	for i in $(seq 200); do has_event "$EV" collected && break; sleep 0.05; done
	sleep 0.3
	pid=$(pgrep -o -f "^$SBX run .*--artifacts $M/cancel.art ")
	[ -n "$pid" ] && kill -INT "$pid"
	wait $bg
	OUT="$M/cancel.out" RC=$(cat "$M/cancel.rc")
	jq -r '.run_id // empty' "$OUT" >> "$T/run-ids" 2>/dev/null
	check "$mode: SIGINT while validating: 130, cancelled, t.csv rejected as not validated" \
		eval '[ $RC -eq 130 ] && [ "$(jqm .status)" = cancelled ] && rejected_because t.csv "cancelled by the caller" && signature_ok' ||
		diag "rc $RC: $(head -c 600 "$OUT")"
	check "$mode: nothing left behind" nothing_left
done

finish
