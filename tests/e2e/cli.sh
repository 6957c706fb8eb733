#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cli.sh - the command line as people and pipelines use it: a one-line run
# is the same job as its job file (same job_sha256, same manifest, same
# refusals), --print-job and --dry-run run nothing and leave nothing,
# options go anywhere (GNU permutation, global options before the
# subcommand), each subcommand has its own --help, near misses get a
# suggestion, and every line of a usage error starts "sbx: ".
. "$SBX_SRCDIR/tests/e2e/lib.sh"

plan 96

# The fields of a manifest that differ between two runs of the same job.
SAME='del(.run_id, .timing, .usage, .events, .signature, .isolation)'

# sbx_cli ARGS...: sbx as the mode's identity, with the mode's config,
# catalog, key and store named after the operands (permutation); stdout
# in $OUT, stderr in $ERR, status in $RC.
sbx_cli() {
	RUNS=$((RUNS + 1))
	OUT="$M/out.$RUNS.json"
	ERR="$M/err.$RUNS.txt"
	as_mode "$SBX" "$@" >"$OUT" 2>"$ERR"
	RC=$?
	jq -r '.run_id // empty' "$OUT" >> "$T/run-ids" 2>/dev/null
	return 0
}

# sbx_one ARGS...: a one-line run with the mode's options, as sbx_run.
sbx_one() {
	RUNS=$((RUNS + 1))
	OUT="$M/out.$RUNS.json"
	ERR="$M/err.$RUNS.txt"
	ART="$M/art.$RUNS"
	as_mode "$SBX" run "${OPTS[@]}" --artifacts "$ART" "$@" >"$OUT" 2>"$ERR"
	RC=$?
	[ "$MODE" = user ] && chmod -R a+rX "$ART" 2>/dev/null
	jq -r '.run_id // empty' "$OUT" >> "$T/run-ids" 2>/dev/null
	return 0
}

# all_lines_sbx FILE: FILE has at least one line and each starts "sbx: ".
all_lines_sbx() {
	[ -s "$1" ] && ! grep -qv '^sbx: ' "$1"
}

# strip_source FILE: stderr with the job's source name taken out.
strip_source() { sed -e 's|^sbx: [^:]*: |sbx: SOURCE: |' "$1"; }

for mode in root user; do
	setup_mode $mode
	OPTS=(--config "$M/config.json" --policy "$SBX_SRCDIR/policy" --key "$KEY" --store "$M/store")

	# --- the one-liner and its job file -----------------------------------
	code='printf "%s|" "$@" > /work/out/o.txt; echo hi'
	jq -n --arg c "$code" '{runtime_profile: "shell", network_profile: "disabled", code: $c,
		args: ["a b", "-x"], limits: {memory_mib: 128, cpu_cores: 0.5},
		allowed_outputs: ["text/plain"], required_outputs: ["o.txt"]}' | jq -cjS . > "$M/job.json"
	chmod 0644 "$M/job.json"
	sbx_run "$M/job.json"
	expect_rc 0 "$mode: the job file runs"
	cp "$OUT" "$M/file-manifest.json"
	check "$mode: job file: job_sha256 is the file's digest" \
		test "$(jqm .job_sha256)" = "$(sha256sum < "$M/job.json" | cut -d' ' -f1)"

	ONE=(-p shell -n disabled --limit memory_mib=128 --limit cpu_cores=0.5 --allow text/plain
		--require o.txt -c "$code" -- "a b" -x)
	sbx_one "${ONE[@]}"
	expect_rc 0 "$mode: the one-liner runs"
	check "$mode: one-liner: same job_sha256 as the job file" \
		test "$(jqm .job_sha256)" = "$(jq -r .job_sha256 "$M/file-manifest.json")"
	check "$mode: one-liner: the same manifest apart from run-specific fields" \
		test "$(jq -cS "$SAME" "$OUT")" = "$(jq -cS "$SAME" "$M/file-manifest.json")"
	check "$mode: one-liner: the same events" \
		test "$(jqm '[.events[].event]|join(",")')" = "$(jq -r '[.events[].event]|join(",")' "$M/file-manifest.json")"
	check "$mode: one-liner: args reached the payload" test "$(cat "$ART/o.txt")" = "a b|-x|"
	check "$mode: one-liner: manifest signed" signature_ok

	sbx_cli run "${OPTS[@]}" --print-job "${ONE[@]}"
	check "$mode: --print-job prints the canonical job (the job file's bytes), exit 0" \
		eval '[ $RC -eq 0 ] && cmp -s "$OUT" "$M/job.json"'

	# -- FILE ARGS: the file's bytes are the code.
	printf '%s' "$code" > "$M/script.sh"
	chmod 0644 "$M/script.sh"
	sbx_cli run "${OPTS[@]}" -p shell -n disabled --limit memory_mib=128 --limit cpu_cores=0.5 \
		--allow text/plain --require o.txt --print-job -- "$M/script.sh" "a b" -x
	check "$mode: -- FILE ARGS: the same job as -c CODE -- ARGS" \
		eval '[ $RC -eq 0 ] && cmp -s "$OUT" "$M/job.json"'
	sbx_one -p shell --limit memory_mib=128 -- "$M/script.sh" 1 2
	expect_rc 0 "$mode: -- FILE ARGS runs"
	check "$mode: -- FILE ARGS: FILE's code ran with ARGS" test "$(cat "$ART/o.txt")" = "1|2|"

	# --- the same rules, the same errors ---------------------------------
	jq -n '{runtime_profile: "shell", code: "true", limits: {memory_mib: 99999}}' > "$M/big.json"
	chmod 0644 "$M/big.json"
	sbx_run "$M/big.json"
	rc_file=$RC; strip_source "$ERR" > "$M/big-file.err"; status_file=$(jqm .status)
	sbx_one -p shell --limit memory_mib=99999 -c true
	check "$mode: limit above the maximum: 77 from the file and the one-liner" \
		test "$rc_file $RC $status_file $(jqm .status)" = "77 77 refused refused"
	check "$mode: limit above the maximum: the same error" \
		eval 'strip_source "$ERR" | cmp -s - "$M/big-file.err"'

	jq -n '{runtime_profile: "shel", code: "true"}' > "$M/shel.json"
	chmod 0644 "$M/shel.json"
	sbx_run "$M/shel.json"
	rc_file=$RC; strip_source "$ERR" > "$M/shel-file.err"
	check "$mode: unknown profile in a job file: 77, did you mean \"shell\"" \
		eval '[ $RC -eq 77 ] && grep -q "runtime_profile: .*did you mean \"shell\"?" "$ERR"'
	sbx_one -p shel -c true
	check "$mode: unknown profile in a one-liner: the same 77 and error" \
		eval '[ $RC -eq 77 ] && strip_source "$ERR" | cmp -s - "$M/shel-file.err"'

	sbx_one -p shell --limit memory_mib=lots -c true
	check "$mode: one-liner limit not a number: 65, the job's JSON path" \
		eval '[ $RC -eq 65 ] && grep -q "limits.memory_mib: expected a positive integer" "$ERR" && [ "$(jqm .status)" = invalid ]'
	sbx_one -p shell --limit memroy_mib=1 -c true
	check "$mode: one-liner unknown limit: 65, did you mean memory_mib" \
		eval '[ $RC -eq 65 ] && grep -q "limits.memroy_mib: unknown key; did you mean \"memory_mib\"?" "$ERR"'
	sbx_one -p shell -n disable -c true
	check "$mode: near-miss network profile: 77, did you mean \"disabled\"" \
		eval '[ $RC -eq 77 ] && grep -q "network_profile: .*did you mean \"disabled\"?" "$ERR"'
	# Nothing of the command line is trusted more than a file: a path for
	# a profile, a handle that climbs, an output path that climbs.
	sbx_one -p /bin/sh -c true
	check "$mode: one-liner -p /bin/sh: refused (77) as in a file, signed manifest" \
		eval '[ $RC -eq 77 ] && grep -q "runtime_profile: no runtime profile" "$ERR" && signature_ok'
	# (With a '/', -i names a local file of the caller's: local.sh.)
	sbx_one -p shell -i .. -c true
	check "$mode: one-liner -i ..: 65 naming input_handles[0]" \
		eval '[ $RC -eq 65 ] && grep -q "input_handles\[0\]" "$ERR" && [ "$(jqm .status)" = invalid ]'
	sbx_one -p shell --require ../x -c true
	check "$mode: one-liner --require ../x: 65 naming required_outputs[0]" \
		eval '[ $RC -eq 65 ] && grep -q "required_outputs\[0\]" "$ERR"'
	sbx_one -p shell
	check "$mode: -p without -c CODE or -- FILE: usage error, no manifest" \
		eval '[ $RC -eq 64 ] && [ ! -s "$OUT" ] && all_lines_sbx "$ERR"'
	sbx_one -c true
	check "$mode: one-liner options without -p: usage error" \
		eval '[ $RC -eq 64 ] && grep -q -- "-p PROFILE" "$ERR" && all_lines_sbx "$ERR"'

	# A key typo in a job file.
	echo '{"runtime_profil": "shell", "code": "true"}' > "$M/key.json"
	chmod 0644 "$M/key.json"
	sbx_run "$M/key.json"
	check "$mode: unknown job key: 65, did you mean \"runtime_profile\"" \
		eval '[ $RC -eq 65 ] && grep -q "runtime_profil: unknown key; did you mean \"runtime_profile\"?" "$ERR"'

	# --- option permutation and global options ------------------------------
	mkjob "$M/echo.json" shell 'echo perm'
	RUNS=$((RUNS + 1)); ART="$M/art.$RUNS"
	sbx_cli run "$M/echo.json" --config "$M/config.json" --policy "$SBX_SRCDIR/policy" \
		--key "$KEY" --store "$M/store" --artifacts "$ART"
	check "$mode: sbx run JOB --store X ...: options after the operand" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .status)" = succeeded ]'
	RUNS=$((RUNS + 1)); ART="$M/art.$RUNS"
	sbx_cli --config "$M/config.json" --policy "$SBX_SRCDIR/policy" -q run --key "$KEY" \
		--store "$M/store" --artifacts "$ART" "$M/echo.json"
	check "$mode: sbx --config F --policy P -q run JOB" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .status)" = succeeded ]'
	sbx_cli --config "$M/config.json" --policy "$SBX_SRCDIR/policy" profiles
	check "$mode: sbx --config F --policy P profiles" eval '[ $RC -eq 0 ] && grep -q shell "$OUT"'
	sbx_cli --policy "$T/nonexistent" profiles
	check "$mode: a global --policy is used" eval '[ $RC -eq 69 ] && grep -q nonexistent "$ERR"'

	# --- help ---------------------------------------------------------------
	sbx_cli run --help; cp "$OUT" "$M/run-help"
	check "$mode: sbx run --help: exit 0, describes the one-liner and --store" \
		eval '[ $RC -eq 0 ] && grep -q -- "--store DIR  *[a-z]" "$OUT" && grep -q -- "--print-job" "$OUT" && grep -q -- "--dry-run" "$OUT"'
	sbx_cli check --help
	check "$mode: sbx check --help differs, without run's options" \
		eval '[ $RC -eq 0 ] && ! cmp -s "$OUT" "$M/run-help" && ! grep -q -- "--store" "$OUT" && grep -q -- "--policy DIR  *[a-z]" "$OUT"'
	sbx_cli help verify
	check "$mode: sbx help verify = sbx verify --help" \
		eval '[ $RC -eq 0 ] && grep -q -- "--pubkey" "$OUT" && ! grep -q -- "--store" "$OUT"'

	# --- suggestions and usage errors ---------------------------------------
	sbx_cli chek
	check "$mode: sbx chek: 64, did you mean 'check', every line sbx:" \
		eval '[ $RC -eq 64 ] && grep -q "did you mean .check." "$ERR" && all_lines_sbx "$ERR"'
	sbx_cli run --stroe x job.json
	check "$mode: sbx run --stroe: did you mean --store, every line sbx:" \
		eval '[ $RC -eq 64 ] && grep -q -- "did you mean .--store." "$ERR" && all_lines_sbx "$ERR"'
	sbx_cli run
	check "$mode: sbx run without a job: 64, try 'sbx run --help'" \
		eval '[ $RC -eq 64 ] && grep -q "^sbx: try .sbx run --help." "$ERR" && all_lines_sbx "$ERR"'
	sbx_cli
	check "$mode: sbx alone: 64, every line sbx:" eval '[ $RC -eq 64 ] && all_lines_sbx "$ERR"'
	sbx_cli check --pubkey x
	check "$mode: an option of another subcommand: 64, every line sbx:" \
		eval '[ $RC -eq 64 ] && all_lines_sbx "$ERR"'
	sbx_cli run --queue-timeout x job.json
	check "$mode: a bad option value: 64, every line sbx:" eval '[ $RC -eq 64 ] && all_lines_sbx "$ERR"'

	# --- dry run -------------------------------------------------------------
	state_before=$(find "$M/state" | sort)
	run_cgroups() { [ -n "$CG_PARENT" ] && find /sys/fs/cgroup -maxdepth 6 -path "*$CG_PARENT/sbx-*" 2>/dev/null | sort; }
	cg_before=$(run_cgroups)
	RUNS=$((RUNS + 1)); ART="$M/art.$RUNS"
	sbx_cli run --dry-run "${OPTS[@]}" --artifacts "$ART" "$M/job.json"
	check "$mode: --dry-run of a job file: exit 0, no manifest" \
		eval '[ $RC -eq 0 ] && ! grep -q signature "$OUT"'
	check "$mode: --dry-run shows the effective limits" \
		eval 'grep -q "^limits\.memory_mib *128$" "$OUT" && grep -q "^limits\.wall_seconds *60$" "$OUT" && grep -q "^limits\.cpu_millicores *500 (cpu_cores 0.5 in a job)$" "$OUT"'
	# Every limit in the units of the run's manifest.
	check "$mode: --dry-run: each limit as the manifest's .limits has it (key and unit)" \
		eval 'jq -r ".limits | to_entries[] | \"limits.\(.key) \(.value)\"" "$M/file-manifest.json" | sort >"$M/man-limits" &&
			grep "^limits\." "$OUT" | awk "{ print \$1, \$2 }" | sort >"$M/dry-limits" &&
			[ -s "$M/man-limits" ] && diff "$M/man-limits" "$M/dry-limits" >&2'
	check "$mode: --dry-run shows the binds, env and outputs" \
		eval 'grep -q "^bind */usr" "$OUT" && grep -q "^env *PATH=/usr/bin:/bin$" "$OUT" && grep -q "^allowed_outputs *text/plain$" "$OUT" && grep -q "^required_outputs *o.txt$" "$OUT"'
	check "$mode: --dry-run created nothing: no artifacts dir, no state" \
		eval '[ ! -e "$ART" ] && [ "$(find "$M/state" | sort)" = "$state_before" ]'
	if [ -n "$CG_PARENT" ] && [ $mode = user ]; then
		check "$mode: --dry-run made no cgroup" eval '[ "$(run_cgroups)" = "$cg_before" ]'
	else
		check "$mode: --dry-run made no cgroup (no run id on stdout or stderr)" \
			eval '! grep -q "run_id\|sbx-run-" "$OUT" "$ERR"'
	fi
	RUNS=$((RUNS + 1)); ART="$M/art.$RUNS"
	sbx_cli run "${OPTS[@]}" --artifacts "$ART" --dry-run "${ONE[@]}"
	cp "$OUT" "$M/dry-one"
	check "$mode: --dry-run of the one-liner: exit 0, nothing created" \
		eval '[ $RC -eq 0 ] && [ ! -e "$ART" ] && [ "$(find "$M/state" | sort)" = "$state_before" ]'
	sbx_cli run "${OPTS[@]}" --artifacts "$ART" "$M/job.json" --dry-run
	check "$mode: --dry-run: one-liner and job file print the same plan, but for the source" \
		eval 'diff <(grep -v "^source" "$M/dry-one") <(grep -v "^source" "$OUT") >/dev/null'
	sbx_cli run "${OPTS[@]}" --artifacts "$ART" --dry-run -p shell --limit memory_mib=99999 -c true
	check "$mode: --dry-run of a refused job: 77, nothing on stdout, nothing created" \
		eval '[ $RC -eq 77 ] && [ ! -s "$OUT" ] && [ ! -e "$ART" ] && [ "$(find "$M/state" | sort)" = "$state_before" ]'

	check "$mode: nothing left behind" nothing_left
done

finish
