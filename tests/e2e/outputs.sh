#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# outputs.sh - the validators, from the payload's side: what it writes is
# checked in bounded broker memory, polyglots and hostile text are refused
# or flagged, and ordinary outputs still pass.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

# sbx under a wrapper that records the peak RSS (KiB) of sbx and what it
# waited for.  That includes the python wrapper's own pages (the exec'd
# image inherits its high-water mark, ~10 MiB) and coreutils payloads: an
# upper bound on the broker, far below a file held in memory.
SBX_REAL=$SBX
SBX="$T/sbx-rss"
RSS="$T/rss"
: > "$RSS"
chmod 0666 "$RSS"
cat > "$SBX" <<PY
#!/usr/bin/python3
import resource, subprocess, sys
rc = subprocess.call(["$SBX_REAL"] + sys.argv[1:])
open("$RSS", "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)
PY
chmod 0755 "$SBX"
rss_kib() { cat "$RSS"; }

artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }
status_of() { artifact "$1" '.status + ": " + (.reason // "") + " flags=" + ((.flags // []) | join(","))'; }
promoted() { # PATH [FLAGS]: promoted, with exactly these flags (comma-separated)
	local r
	r=$(status_of "$1")
	[ "$r" = "promoted:  flags=${2:-}" ] && return 0
	diag "$1: $r"
	return 1
}
rejected_because() { # PATH REGEX
	local r
	r=$(status_of "$1")
	[[ "$r" =~ ^rejected:\ .*$2 ]] && return 0
	diag "$1: $r"
	return 1
}

for mode in root user; do
	setup_mode $mode

	# --- bounded memory for JSON ------------------------------------------
	# 32 MiB of [0,0,...], and the same at the depth limit: a parse tree
	# costs ~20 bytes of broker heap per input byte (~650 MiB here).
	for shape in flat deep; do
		mkjob "$M/j.json" shell 'd=$1; open=; close=
			while [ $d -gt 0 ]; do open="$open["; close="$close]"; d=$((d - 1)); done
			{ printf %s "$open"; yes 0 | head -n 16777000 | tr "\n" ,; printf "0%s" "$close"; } > /work/out/big.json' \
			"{args: [\"$([ $shape = flat ] && echo 1 || echo 64)\"], limits: {output_bytes: 67108864}}"
		sbx_run "$M/j.json"
		check "$mode: 32 MiB of JSON ($shape) is valid and promoted" \
			eval '[ $RC -eq 0 ] && promoted big.json && [ "$(artifact big.json .size)" -gt 33000000 ]'
		check "$mode: ... the broker's peak RSS stays under 24 MiB ($(rss_kib) KiB)" \
			test "$(rss_kib)" -lt 24576
	done

	# --- CSV formulas under every separator, terminal escapes in text ------
	mkjob "$M/j.json" shell 'cd /work/out
		printf "sep=;\nname;link\nx;\"=HYPERLINK(\"\"http://192.0.2.1/\"\")\"\n" > sep.csv
		printf "a;b\n1;=1+1\n" > semicolon.csv
		printf "a\tb\n1\t=1+1\n" > tab.csv
		printf "a,b\n1,\357\274\235cmd\n" > fullwidth.csv
		printf "a,b\n1, =1+1\n" > space.csv
		printf "a,b\n1;=x,2\n" > other-sep.csv
		printf "a;b\n1,5;2,5\n" > decimal.csv
		printf "a,b\n1,\033[31m2\n" > esc.csv
		printf "copy \033]52;c;ZWNobyBvd25lZA==\007 this\n" > osc52.txt
		printf "\033[2J\033[Hnothing to see\n" > clear.txt
		printf "safe\b\b\b\bevil\n" > bs.txt
		printf "log \033[1;31mERROR\033[0m line\n" > colours.log
		printf "[\"\\\\u001b]52;c;eA==\\\\u0007\"]" > escaped.json
		printf "plain text\n" > plain.txt'
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: CSV and text outputs: the run succeeds"
	for f in sep semicolon tab fullwidth space other-sep; do
		check "$mode: $f.csv: promoted, formula_cells true" \
			eval 'promoted $f.csv && [ "$(artifact $f.csv .formula_cells)" = true ]'
	done
	check "$mode: decimal.csv (sniffed ';', decimal commas): promoted, no formula" \
		eval 'promoted decimal.csv && [ "$(artifact decimal.csv .formula_cells)" = false ]'
	check "$mode: a CSV with an escape sequence is rejected" rejected_because esc.csv 'control character 0x1b'
	check "$mode: text with an OSC 52 clipboard write is rejected" rejected_because osc52.txt 'terminal escape'
	check "$mode: text that clears the screen is rejected" rejected_because clear.txt 'terminal control sequence'
	check "$mode: text with backspaces is rejected" rejected_because bs.txt 'control character 0x08'
	check "$mode: a log with colours is promoted, flagged terminal_colors" promoted colours.log terminal_colors
	check "$mode: JSON whose strings decode to controls: promoted, flagged terminal_controls" \
		promoted escaped.json terminal_controls
	check "$mode: plain text: promoted, no flags" promoted plain.txt
	check "$mode: nothing rejected reaches --artifacts" \
		eval '[ ! -e "$ART/esc.csv" ] && [ ! -e "$ART/osc52.txt" ] && [ ! -e "$ART/clear.txt" ] && [ -f "$ART/colours.log" ]'
	check "$mode: nothing left behind" nothing_left
done

finish
