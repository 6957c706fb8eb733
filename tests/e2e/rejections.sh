#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rejections.sh - rejections that tell a program what to do (issue 26):
#
#   - every refused artifact carries a reason_code from the documented list
#     (sbx(1), schema/manifest.schema.json), and the manifest counts
#     promoted, rejected, held and discarded outputs in "summary";
#   - "on_rejected_output": "fail" makes a run whose output is refused end
#     failed (exit 1, reason_code output_rejected); the default, "keep",
#     leaves the status as it was;
#   - a blob of unknown type is refused with what it looked like and the
#     types allowed;
#   - with --json, a bad job file (65) and a bad option (64) print one JSON
#     line on stderr and nothing else there;
#   - a Python traceback at the end of stderr becomes the manifest's
#     "error", marked as the payload's own claim: a fake one printed by the
#     payload is recorded as just that, a shell payload's is not read, and
#     10 MB of stderr without one costs no more than any other run.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need timeout

bound_sbx 120

artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }
summary_is() { [ "$(jq -c '.summary' "$OUT")" = "$1" ]; }

# A ZIP local header where a CSV should be: what an .xlsx renamed, or a
# zip of CSVs, looks like to detection.
ZIP_AS_CSV='printf "PK\003\004\024\000\000\000\010\000" > /work/out/table.csv; head -c 64 /dev/zero >> /work/out/table.csv'

for mode in root user; do
	setup_mode $mode

	# --- the default: a refused output does not change the status --------
	mkjob "$M/keep.json" shell "$ZIP_AS_CSV"
	sbx_run "$M/keep.json"
	expect_rc 0 "$mode: keep (default): the run whose only output is refused still succeeds"
	check "$mode: ... the output is rejected with reason_code unknown_type" \
		eval '[ "$(artifact table.csv .status)" = rejected ] && [ "$(artifact table.csv .reason_code)" = unknown_type ]'
	check "$mode: ... its reason says it looks like a ZIP archive" \
		eval 'artifact table.csv .reason | grep -q "looks like a ZIP archive"'
	check "$mode: ... and lists the types allowed (text/csv, image/png)" \
		eval 'artifact table.csv .reason | grep -q "allowed: .*text/csv.*image/png"'
	check "$mode: ... summary {promoted 0, rejected 1, held 0, discarded 0}" \
		summary_is '{"discarded":0,"held":0,"promoted":0,"rejected":1}'

	# --- on_rejected_output: fail ----------------------------------------
	mkjob "$M/fail.json" shell "$ZIP_AS_CSV" '{on_rejected_output: "fail"}'
	sbx_run "$M/fail.json"
	expect_rc 1 "$mode: fail: the run whose only output is refused"
	check "$mode: ... ends failed with reason_code output_rejected" \
		eval '[ "$(jqm .status)" = failed ] && [ "$(jqm .reason_code)" = output_rejected ]'
	check "$mode: ... its reason names the file" eval 'jqm .reason | grep -q "table.csv"'
	check "$mode: ... exit code 0 of the payload is kept in the record" \
		eval '[ "$(jqm .exit.code)" = 0 ]'
	signature_ok && ok "$mode: ... the manifest is signed" || not_ok "$mode: ... the manifest is signed"

	mkjob "$M/fail-ok.json" shell 'echo a,b > /work/out/t.csv' '{on_rejected_output: "fail"}'
	sbx_run "$M/fail-ok.json"
	expect_rc 0 "$mode: fail: a run with nothing refused succeeds"

	mkjob "$M/fail-bad.json" shell 'true' '{on_rejected_output: "maybe"}'
	sbx_run "$M/fail-bad.json"
	expect_rc 65 "$mode: on_rejected_output \"maybe\" is invalid"
	check "$mode: ... the message names the field" grep -q 'on_rejected_output' "$ERR"

	# --- reason codes of the collector's own refusals, and held outputs ----
	mkjob "$M/mixed.json" shell 'echo a,b > /work/out/t.csv; echo note > /work/out/n.txt;
		ln -s /etc/passwd /work/out/l.txt; printf "\001\002\000\377" > /work/out/z.txt;
		echo x > /work/out/run.sh; mkfifo /work/out/f.txt; echo h > /work/out/h1.txt;
		ln /work/out/h1.txt /work/out/h2.txt; printf "%%PDF-1.4\n" > /work/out/doc.pdf;
		printf "\211PNG\r\n\032\n" > /work/out/img.csv; echo "{bad" > /work/out/bad.json' \
		'{outputs: {"n.txt": {hold: true}, "t.csv": {}}}'
	sbx_run "$M/mixed.json"
	expect_rc 0 "$mode: mixed outputs, one held by its contract"
	check "$mode: ... summary {promoted 1, rejected 9, held 1, discarded 0}" \
		summary_is '{"discarded":0,"held":1,"promoted":1,"rejected":9}'
	check "$mode: ... the symlink's reason_code is symlink" \
		eval '[ "$(artifact l.txt .reason_code)" = symlink ]'
	check "$mode: ... binary bytes in a .txt: unknown_type, \"binary data\"" \
		eval '[ "$(artifact z.txt .reason_code)" = unknown_type ] && artifact z.txt .reason | grep -q "binary data"'
	check "$mode: ... run.sh: unknown_extension" \
		eval '[ "$(artifact run.sh .reason_code)" = unknown_extension ]'
	check "$mode: ... a fifo: special_file; two hard links: hard_link" \
		eval '[ "$(artifact f.txt .reason_code)" = special_file ] && [ "$(artifact h1.txt .reason_code)" = hard_link ] &&
		      [ "$(artifact h2.txt .reason_code)" = hard_link ]'
	check "$mode: ... a PDF where the job allows none: not_allowed_type, with the list" \
		eval '[ "$(artifact doc.pdf .reason_code)" = not_allowed_type ] && artifact doc.pdf .reason | grep -q "allowed: .*text/csv"'
	check "$mode: ... a PNG named .csv: type_mismatch; broken JSON: invalid_content" \
		eval '[ "$(artifact img.csv .reason_code)" = type_mismatch ] && [ "$(artifact bad.json .reason_code)" = invalid_content ]'
	check "$mode: ... promoted and held outputs carry no reason_code" \
		eval '[ "$(artifact t.csv .reason_code)" = null ] && [ "$(artifact n.txt .reason_code)" = null ]'

	# A cut-short run under partial_outputs "discard": discarded, counted.
	mkjob "$M/cut.json" shell 'echo a > /work/out/a.txt; sleep 30' \
		'{limits: {wall_seconds: 1, grace_seconds: 1}}'
	sbx_run "$M/cut.json"
	expect_rc 124 "$mode: a run cut short by its deadline"
	check "$mode: ... summary counts its output as discarded, code run_incomplete" \
		eval 'summary_is "{\"discarded\":1,\"held\":0,\"promoted\":0,\"rejected\":0}" &&
		      [ "$(artifact a.txt .reason_code)" = run_incomplete ]'

	# --- --json: 64 and 65 as one JSON line on stderr --------------------
	mkjob "$M/bad.json" shell 'true' '{limits: {memory_mib: "lots"}}'
	sbx_run "$M/bad.json" --json
	expect_rc 65 "$mode: --json: a job with a bad limit"
	check "$mode: ... stderr is one line" eval '[ "$(wc -l < "$ERR")" -eq 1 ]'
	check "$mode: ... that parses as JSON with exit 65, the file and the JSON path" \
		eval 'jq -e --arg f "$M/bad.json" ".exit == 65 and (.error | type) == \"string\" and
			(.file | endswith(\"bad.json\")) and .path == \"limits.memory_mib\" and has(\"hint\")" "$ERR" >/dev/null'
	check "$mode: ... and stdout still has the manifest, status invalid" \
		eval '[ "$(jqm .status)" = invalid ]'
	as_mode "$SBX" run --json --no-such-option "$M/bad.json" >"$M/u.out" 2>"$M/u.err"
	RC=$? ERR="$M/u.err" OUT="$M/u.out"
	expect_rc 64 "$mode: --json: a bad option"
	check "$mode: ... stderr is one JSON line with exit 64 and a hint" \
		eval '[ "$(wc -l < "$M/u.err")" -eq 1 ] && jq -e ".exit == 64 and (.hint | type) == \"string\"" "$M/u.err" >/dev/null'
	as_mode "$SBX" verify --json >"$M/v.out" 2>"$M/v.err"
	RC=$? ERR="$M/v.err" OUT="$M/v.out"
	expect_rc 64 "$mode: --json: verify without its operand"
	check "$mode: ... stderr is one JSON line with exit 64" \
		eval '[ "$(wc -l < "$M/v.err")" -eq 1 ] && jq -e ".exit == 64" "$M/v.err" >/dev/null'

	# --- a Python traceback -------------------------------------------------
	# 60 frames of two functions calling each other (no repeated frame
	# for Python to fold), then a KeyError on line 3: the traceback is
	# longer than the excerpt, and only its last lines are read.
	mkjob "$M/tb.json" python-analysis 'def f(n):
    if n == 0:
        return {}["missing key"]
    return g(n - 1)
def g(n):
    return f(n)
f(60)'
	sbx_run "$M/tb.json"
	expect_rc 1 "$mode: python: an uncaught KeyError"
	check "$mode: ... the traceback is longer than the stderr excerpt" \
		eval '[ "$(jqm .stderr.excerpt_truncated)" = true ]'
	check "$mode: ... error: KeyError, its message, line 3 of main.py, claimed by the payload" \
		eval 'jq -e ".error.type == \"KeyError\" and .error.message == \"'"'"'missing key'"'"'\" and
			.error.line == 3 and (.error.file | endswith(\"main.py\")) and .error.claimed_by == \"payload\"" "$OUT" >/dev/null'

	mkjob "$M/fake.json" python-analysis 'import sys
sys.stderr.write("Traceback (most recent call last):\n  File \"/etc/shadow\", line 7, in <module>\nPermissionError: the sandbox is broken\n")'
	sbx_run "$M/fake.json"
	expect_rc 0 "$mode: python: a payload printing a fake traceback and exiting 0"
	check "$mode: ... its claim is recorded as the payload's, status untouched" \
		eval 'jq -e ".status == \"succeeded\" and .error.claimed_by == \"payload\" and
			.error.type == \"PermissionError\" and .error.file == \"/etc/shadow\" and .error.line == 7" "$OUT" >/dev/null'

	mkjob "$M/sh-tb.json" shell 'printf "Traceback (most recent call last):\n  File \"x\", line 1, in <module>\nKeyError: 1\n" >&2; exit 1'
	sbx_run "$M/sh-tb.json"
	expect_rc 1 "$mode: shell: a traceback printed by a shell payload"
	check "$mode: ... is not read (not a python profile): error is null" \
		eval '[ "$(jqm .error)" = null ]'

	# 10 MB of stderr without a newline or a traceback, then 1 MiB (all of
	# it captured) of one line: no error, in bounded time.
	mkjob "$M/big.json" python-analysis 'import os
b = b"Error: x" * 131072
for _ in range(10):
    os.write(2, b)'
	start=$SECONDS
	sbx_run "$M/big.json"
	took=$((SECONDS - start))
	expect_rc 0 "$mode: python: 10 MB of stderr"
	check "$mode: ... no error field, in ${took}s (bound 30s)" \
		eval '[ "$(jqm .error)" = null ] && [ "$took" -lt 30 ]'
	mkjob "$M/cap.json" python-analysis 'import os
os.write(2, b"ValueError: " * (1048576 // 12))'
	sbx_run "$M/cap.json"
	expect_rc 0 "$mode: python: 1 MiB of stderr, one line, all of it captured"
	check "$mode: ... no error field: no frame line before it" \
		eval '[ "$(jqm .stderr.truncated)" = false ] && [ "$(jqm .error)" = null ]'

	# Every reason_code this script's runs gave is in the documented list
	# (the enum of manifest.schema.json, which sbx(1) lists).
	listed=$(jq -c '.properties.artifacts.items.properties.reason_code.oneOf[1].enum' \
		"$SBX_SRCDIR/schema/manifest.schema.json")
	given=$(cat "$M"/out.*.json | jq -sc '[.[].artifacts[]?.reason_code | select(. != null)] | unique')
	check "$mode: every artifact reason_code given ($given) is in the documented list" \
		eval 'jq -ne --argjson l "$listed" --argjson g "$given" "(\$g | length) >= 9 and (\$g - \$l) == []" >/dev/null'

	check "$mode: nothing left behind" nothing_left
done

finish
