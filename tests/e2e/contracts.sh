#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# contracts.sh - output contracts: the job says what makes an output
# useful, and sbx checks it after the media checks.
#
#  - The case output contracts exist for: a job groups a CSV of sales by
#    month, and its code has an off-by-one bug (it skips the first data
#    row).  totals.csv is valid UTF-8 CSV and passes every media check,
#    but its "total" column does not sum to what the caller knows the
#    input holds: the run fails (reason_code output_contract) and the
#    manifest names the column and by how much it is off.  The same job
#    without the bug succeeds, with contract.ok true.
#  - A chart whose dimensions are out of the contract's range is rejected.
#  - A required output failing its contract fails the run; an optional one
#    ("required": false) is rejected and the run still succeeds.
#  - A per-row check names the row; a JSON Schema failure names the
#    keyword and the JSON Pointer into the document.
#  - sbx run -p ... --require PATH:CHECK=VALUE builds the same contract.
#  - A malformed contract is 65 naming the JSON path; a contract on a
#    media type the profile does not allow is 77; neither runs anything.
#  - Sums are exact (issue 23): 2 + 9223372036854775807 is not 0 (the
#    64-bit sum used to wrap), and 1e300 + 1000000 - 1e300 is 1000000,
#    not 0 (compensated summation in long double lost it).
#  - A column pattern costs what it matches, within one budget for the
#    output (issue 23: each cell was charged a whole match limit, so the
#    21st row of any table failed): tables of 1, 21, 10,000 and 1,000,000
#    rows pass, and fail at their last row when it does not match.
#  - A text pattern whose steps scan long runs (\w+$ over 20 lines of
#    65,535 letters and a '!', 35 s of CPU before) fails its contract with
#    a limit failure, in seconds.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need python3

# check_or DESC EXPR SHOW: a check that shows SHOW's output when it fails.
check_or() {
	if eval "$2"; then ok "$1"; else
		not_ok "$1"
		diag "$(eval "${3:-cat \"\$ERR\"}")"
	fi
}
artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }

# Month totals of sales.csv; with BUG=1 the first data row is skipped.
group_code() {
	cat <<EOF
awk -F, 'NR > $1 { m = substr(\$1, 1, 7); t[m] += \$2 } END { for (m in t) printf "%s,%.2f\n", m, t[m] }' /work/in/sales.csv | sort > /tmp/body
{ echo month,total; cat /tmp/body; } > /work/out/totals.csv
EOF
}
TOTALS_CONTRACT='{"totals.csv": {"media_type": "text/csv", "rows": {"min": 1, "max": 12},
	"columns": {"month": {"type": "date", "unique": true, "not_null": true},
		    "total": {"type": "number", "min": 0, "sum": {"equals": 26.00, "tolerance": 0.005}}}}}'

for mode in root user; do
	setup_mode $mode
	cat > "$M/store/$PRINCIPAL/sales.csv" <<EOF
date,amount
2026-01-05,10.50
2026-01-20,4.25
2026-02-03,7.00
2026-02-28,1.25
2026-03-15,3.00
EOF
	python3 - "$M/store/$PRINCIPAL/chart.png" <<'PY'
import struct, sys, zlib
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
w, h = 64, 32
raw = b"".join(b"\0" + b"\xff\x00\x00" * w for _ in range(h))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) \
    + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/store"

	# --- the off-by-one ---------------------------------------------------
	mkjob "$M/bug.json" shell "$(group_code 2)" \
		"{input_handles: [\"sales.csv\"], outputs: $TOTALS_CONTRACT}"
	sbx_run "$M/bug.json"
	expect_rc 1 "$mode: grouping with an off-by-one bug fails its contract"
	check_or "$mode: ... status failed, reason_code output_contract, naming totals.csv" \
		'[ "$(jqm .status)" = failed ] && [ "$(jqm .reason_code)" = output_contract ] &&
			jqm .reason | grep -q totals.csv'
	check_or "$mode: ... totals.csv passed the media checks but is rejected for its contract" \
		'[ "$(artifact totals.csv .media_type)" = text/csv ] &&
			[ "$(artifact totals.csv .status)" = rejected ] &&
			artifact totals.csv .reason | grep -q "output contract" &&
			[ "$(artifact totals.csv .contract.ok)" = false ]'
	check_or "$mode: ... the failure names the column's sum and the difference" \
		'[ "$(artifact totals.csv ".contract.failures | length")" = 1 ] &&
			[ "$(artifact totals.csv ".contract.failure_count")" = 1 ] &&
			[ "$(artifact totals.csv ".contract.failures[0].check")" = columns.total.sum ] &&
			artifact totals.csv ".contract.failures[0].detail" | grep -q "sum is 15.5, expected 26 .*off by -10.5"' \
		'artifact totals.csv .contract'
	check_or "$mode: ... nothing promoted to --artifacts, signature verifies" \
		'[ ! -e "$ART/totals.csv" ] && signature_ok'

	mkjob "$M/good.json" shell "$(group_code 1)" \
		"{input_handles: [\"sales.csv\"], outputs: $TOTALS_CONTRACT}"
	sbx_run "$M/good.json"
	expect_rc 0 "$mode: the same job without the bug meets its contract"
	check_or "$mode: ... totals.csv promoted with contract.ok true and no failures" \
		'[ "$(artifact totals.csv .status)" = promoted ] &&
			[ "$(artifact totals.csv .contract.ok)" = true ] &&
			[ "$(artifact totals.csv ".contract.failures | length")" = 0 ] &&
			[ -f "$ART/totals.csv" ]' \
		'head -c 1500 "$OUT"'

	# --- a per-row check names the row ----------------------------------------
	mkjob "$M/row.json" shell 'printf "id,name\n1,a\n2,\n2,c\n" > /work/out/t.csv' \
		'{outputs: {"t.csv": {"columns": {"name": {"not_null": true}, "id": {"type": "integer", "unique": true}}}}}'
	sbx_run "$M/row.json"
	expect_rc 1 "$mode: an empty cell in a not_null column and a duplicate id fail"
	check_or "$mode: ... the failures name the check and the row" \
		'[ "$(artifact t.csv "[.contract.failures[] | .check + \"@\" + (.row | tostring)] | sort | join(\" \")")" = "columns.id.unique@3 columns.name.not_null@2" ]' \
		'artifact t.csv .contract'

	# --- a chart out of range ---------------------------------------------------
	mkjob "$M/chart.json" shell 'cp /work/in/chart.png /work/out/chart.png' \
		'{input_handles: ["chart.png"], outputs: {"chart.png": {"width": {"min": 800}, "height": {"min": 16, "max": 600}}}}'
	sbx_run "$M/chart.json"
	expect_rc 1 "$mode: a 64x32 chart against width >= 800 fails"
	check_or "$mode: ... the failure is width, the PNG itself valid" \
		'[ "$(artifact chart.png .media_type)" = image/png ] &&
			[ "$(artifact chart.png "[.contract.failures[].check] | join(\" \")")" = width ] &&
			artifact chart.png ".contract.failures[0].detail" | grep -q 64' \
		'artifact chart.png .contract'

	# --- a JSON Schema ------------------------------------------------------------
	mkjob "$M/schema.json" shell 'echo "{\"total\": -1, \"rows\": []}" > /work/out/r.json' \
		'{outputs: {"r.json": {"schema": {"type": "object", "required": ["total", "rows"],
			"properties": {"total": {"type": "number", "minimum": 0}, "rows": {"type": "array", "minItems": 1}}}}}}'
	sbx_run "$M/schema.json"
	expect_rc 1 "$mode: a JSON output against its schema fails"
	check_or "$mode: ... the failures name the keyword and the document's JSON Pointer" \
		'[ "$(artifact r.json "[.contract.failures[].check] | join(\" \")")" = "schema.minimum schema.minItems" ] &&
			artifact r.json ".contract.failures[0].detail" | grep -q "^/total: " &&
			artifact r.json ".contract.failures[1].detail" | grep -q "^/rows: "' \
		'artifact r.json .contract'

	# --- required vs optional ---------------------------------------------------
	mkjob "$M/opt.json" shell 'echo hello > /work/out/note.txt; echo a,b > /work/out/ok.csv' \
		'{outputs: {"note.txt": {"required": false, "lines": {"min": 5}, "pattern": "^bye"},
			    "ok.csv": {"bytes": {"min": 1, "max": 100}}}}'
	sbx_run "$M/opt.json"
	expect_rc 0 "$mode: an optional output failing its contract does not fail the run"
	check_or "$mode: ... it is rejected with both failures, the required one promoted" \
		'[ "$(jqm .status)" = succeeded ] && [ "$(artifact note.txt .status)" = rejected ] &&
			[ "$(artifact note.txt "[.contract.failures[].check] | join(\" \")")" = "lines pattern" ] &&
			[ "$(artifact ok.csv .status)" = promoted ] && [ -f "$ART/ok.csv" ] && [ ! -e "$ART/note.txt" ]' \
		'head -c 2000 "$OUT"'
	mkjob "$M/missing.json" shell 'true' '{outputs: {"absent.csv": {"rows": {"min": 1}}}}'
	sbx_run "$M/missing.json"
	expect_rc 1 "$mode: a contract's output is required unless it says otherwise"
	check_or "$mode: ... reason_code required_output_missing" \
		'[ "$(jqm .reason_code)" = required_output_missing ]'

	# --- the one-liner's --require PATH:CHECK=VALUE ----------------------------------
	sbx_run 'printf "a,n\n1,2\n" > /work/out/t.csv' -p shell --require 't.csv:rows=1..:n.sum=3' -c
	expect_rc 1 "$mode: sbx run -p shell --require t.csv:rows=1..:n.sum=3 fails on a sum of 2"
	check_or "$mode: ... the contract came from the option" \
		'[ "$(artifact t.csv "[.contract.failures[].check] | join(\" \")")" = columns.n.sum ] &&
			[ "$(jqm .reason_code)" = output_contract ]' \
		'head -c 1500 "$OUT"; cat "$ERR"'
	sbx_run 'printf "a,n\n1,2\n" > /work/out/t.csv' -p shell --require 't.csv:rows=1..:n.sum=2' -c
	expect_rc 0 "$mode: ... and succeeds with n.sum=2"

	# --- refusals before anything runs -------------------------------------------
	mkjob "$M/bad.json" shell 'touch /work/out/ran' \
		'{outputs: {"totals.csv": {"columns": {"total": {"type": "number", "sum": {"equals": 1, "tolerance": -1}}}}}}'
	sbx_run "$M/bad.json"
	expect_rc 65 "$mode: a negative sum tolerance is an invalid job"
	check_or "$mode: ... the message names the file and the JSON path, nothing ran" \
		'grep -q "bad.json: outputs\[\"totals.csv\"\]\.columns\.total\.sum\.tolerance: expected a non-negative number" "$ERR" &&
			[ "$(jqm .status)" = invalid ] && [ "$(jqm .events | jq length)" -le 1 ] &&
			[ "$(jqm .artifacts | jq length)" = 0 ]' \
		'cat "$ERR"'
	mkjob "$M/badre.json" shell 'true' '{outputs: {"t.txt": {"pattern": "(a+"}}}'
	sbx_run "$M/badre.json"
	expect_rc 65 "$mode: a pattern that does not compile is an invalid job"
	check_or "$mode: ... naming outputs[\"t.txt\"].pattern" \
		'grep -q "outputs\[\"t.txt\"\]\.pattern: " "$ERR"'
	mkjob "$M/badcheck.json" shell 'true' '{outputs: {"t.csv": {"width": {"min": 1}}}}'
	sbx_run "$M/badcheck.json"
	expect_rc 65 "$mode: an image check on a CSV contract is an invalid job"
	mkjob "$M/jpeg.json" shell 'touch /work/out/ran' '{outputs: {"photo.jpg": {"width": {"max": 100}}}}'
	sbx_run "$M/jpeg.json"
	expect_rc 77 "$mode: a contract on a type the profile does not allow is refused"
	check_or "$mode: ... naming the output and the type" \
		'grep -q "outputs\[\"photo.jpg\"\]: .*image/jpeg" "$ERR" && [ "$(jqm .status)" = refused ]' \
		'cat "$ERR"'
	# --- exact sums (issue 23) ------------------------------------------------------
	mkjob "$M/wrap.json" shell 'printf "n\n2\n9223372036854775807\n" > /work/out/t.csv' \
		'{outputs: {"t.csv": {"columns": {"n": {"type": "integer", "sum": {"equals": 0}}}}}}'
	sbx_run "$M/wrap.json"
	expect_rc 1 "$mode: 2 + 9223372036854775807 does not pass sum equals 0"
	check_or "$mode: ... the failure is the sum, exact" \
		'[ "$(artifact t.csv "[.contract.failures[].check] | join(\" \")")" = columns.n.sum ] &&
			artifact t.csv ".contract.failures[0].detail" | grep -q "sum is 9223372036854775809,"' \
		'artifact t.csv .contract'
	for want in "0 1" "1000000 0"; do
		set -- $want
		mkjob "$M/huge.json" shell 'printf "n\n1e300\n1000000\n-1e300\n" > /work/out/t.csv' \
			"{outputs: {\"t.csv\": {\"columns\": {\"n\": {\"type\": \"number\", \"sum\": {\"equals\": $1}}}}}}"
		sbx_run "$M/huge.json"
		expect_rc "$2" "$mode: 1e300, 1000000, -1e300 against sum equals $1"
	done

	# --- column patterns over tables (issue 23) ----------------------------------------
	for rows in 1 21 10000 1000000; do
		for last in AB$rows AB${rows}x; do
			mkjob "$M/table.json" shell \
				"awk 'BEGIN { print \"id,code\"; for (i = 1; i < $rows; i++) print i \",AB\" i; print $rows \",$last\" }' > /work/out/t.csv" \
				'{outputs: {"t.csv": {"columns": {"code": {"pattern": "^[A-Z]{2}[0-9]+$", "not_null": true}}}}}'
			t0=$(date +%s%N)
			sbx_run "$M/table.json"
			ms=$(( ($(date +%s%N) - t0) / 1000000 ))
			case $last in
			*x)
				expect_rc 1 "$mode: $rows rows against a column pattern, the last row bad (${ms} ms)"
				check_or "$mode: ... one failure, at row $rows" \
					'[ "$(artifact t.csv ".contract.failure_count")" = 1 ] &&
						[ "$(artifact t.csv ".contract.failures[0].check + \"@\" + (.contract.failures[0].row | tostring)")" = "columns.code.pattern@$rows" ]' \
					'artifact t.csv .contract'
				;;
			*)
				expect_rc 0 "$mode: $rows rows against a column pattern pass (${ms} ms)"
				;;
			esac
		done
	done

	# --- a text pattern whose steps scan long runs (issue 23) --------------------------
	mkjob "$M/scan.json" shell \
		'l=$(head -c 65535 /dev/zero | tr "\0" q); for i in $(seq 20); do echo "$l!"; done > /work/out/n.txt' \
		'{outputs: {"n.txt": {"pattern": "\\w+$"}}}'
	t0=$(date +%s%N)
	sbx_run "$M/scan.json"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	expect_rc 1 "$mode: \\w+\$ over 20 lines of 65535 letters and a '!' fails its contract"
	check_or "$mode: ... with a limit failure, within 10 s (took ${ms} ms)" \
		'[ "$(artifact n.txt "[.contract.failures[].check] | join(\" \")")" = pattern ] &&
			artifact n.txt ".contract.failures[0].detail" | grep -q limit &&
			[ "$ms" -lt $((10000 + SLACK_MS)) ]' \
		'artifact n.txt .contract'

	check "$mode: nothing left behind" nothing_left
done

finish
