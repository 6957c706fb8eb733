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
	check "$mode: nothing left behind" nothing_left
done

finish
