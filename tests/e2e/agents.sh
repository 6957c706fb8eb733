#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# agents.sh - fifteen scripts as an LLM agent writes them for an analysis
# request (tests/e2e/agents/NN-*.py), each run in python-analysis as its
# own job, as root and as a user: a CSV, a seaborn PNG, xlsx from openpyxl
# and from pandas with xlsxwriter, a python-docx report, HTML (a pandas
# table, and a page around it), Markdown, JSON, a zip of CSVs, sympy text,
# a networkx SVG, a PIL WebP thumbnail, statsmodels' summary as text and
# as LaTeX, and a pickle.  What a back end needs from the manifest is
# checked for every artifact: promoted (and delivered with its digest),
# or rejected with a reason_code of the documented list and a reason that
# says what to do instead; and the summary counts what the artifacts say.
# The pickle is refused (code_as_data), and so is the HTML page with a
# style sheet (active_content); everything else is promoted.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

AGENTS="$SBX_SRCDIR/tests/e2e/agents"
XLSX=application/vnd.openxmlformats-officedocument.spreadsheetml.sheet
DOCX=application/vnd.openxmlformats-officedocument.wordprocessingml.document

# SCRIPT|ALLOWED_OUTPUTS (space-separated)|its artifacts by path: PATH
# STATUS MEDIA_TYPE REASON_CODE (- for none), joined by "; ".  A zip's
# members are outputs of their own, so its job allows their type too.
# The pickle's job allows the profile's types: no allowed_outputs can
# name a pickle.  The HTML
# script's page has <meta charset> and a <style> sheet, which the
# shipped profile's refuse_active_content refuses (html-view.c counts
# both among the elements that load or run; sbx-policy(5)); pandas'
# to_html() table alone passes, and the page's reason says so.
EXPECT="
01-totals-csv.py|text/csv|totals.csv promoted text/csv -
02-seaborn-png.py|image/png|sales_by_region.png promoted image/png -
03-openpyxl-xlsx.py|$XLSX|sales.xlsx promoted $XLSX -
04-xlsxwriter-xlsx.py|$XLSX|totals.xlsx promoted $XLSX -
05-docx-report.py|$DOCX|report.docx promoted $DOCX -
06-html-table.py|text/html|report.html rejected text/html active_content; totals.html promoted text/html -
07-markdown-summary.py|text/markdown|summary.md promoted text/markdown -
08-json-stats.py|application/json|stats.json promoted application/json -
09-zip-of-csvs.py|application/zip text/csv|by_region.zip promoted application/zip -
10-sympy-text.py|text/plain|breakeven.txt promoted text/plain -
11-networkx-svg.py|image/svg+xml|shipping.svg promoted image/svg+xml -
12-pil-webp-thumbnail.py|image/webp|preview.webp promoted image/webp -
13-statsmodels-text.py|text/plain|ols_summary.txt promoted text/plain -
14-statsmodels-latex.py|text/x-tex|ols_table.tex promoted text/x-tex -
15-pickle-model.py||model.pkl rejected - code_as_data
"

# The documented codes: the manifest schema's enum (tests/schemas.sh
# checks that it, sbx(1) and src/common/reasoncode.h agree).
CODES=$(jq -r '[.. | objects | .reason_code? | objects | .oneOf[]? | .enum? // empty] | first | .[]' \
	"$SBX_SRCDIR/schema/manifest.schema.json")
[ "$(wc -w <<<"$CODES")" -ge 10 ] || { echo "Bail out! no reason_code enum in schema/manifest.schema.json"; exit 1; }

# actionable CODE REASON: the reason tells the payload what to do.  Each
# code's check is what its reason says (src/helpers/validate/serve.c,
# docs/rejections.md); a code with no check here fails, so a new kind of
# refusal in these scripts' outputs needs its reason looked at.
actionable() {
	case $1 in
	unknown_type | unknown_extension | not_allowed_type) [[ $2 == *"; allowed: "?* ]] ;;
	code_as_data) [[ $2 == *"write Parquet, CSV or .npy without pickles"* ]] ;;
	active_content) [[ $2 == *"write it without"* || $2 == *"save the"*"without"* ]] ;;
	type_mismatch) [[ $2 == *"but the extension says "?* ]] ;;
	*) return 1 ;;
	esac
}

# every_artifact_accounted: each artifact is promoted (no reason, no
# code, its file delivered with the manifest's digest) or rejected (a
# documented code, an actionable reason, no file delivered).
every_artifact_accounted() {
	local n i path status code reason sha bad=
	n=$(jq '.artifacts | length' "$OUT")
	[ "$n" -ge 1 ] || { diag "no artifacts"; return 1; }
	for ((i = 0; i < n; i++)); do
		IFS=$'\t' read -r path status code reason sha < <(jq -r --argjson i "$i" \
			'.artifacts[$i] | [.path, .status, (.reason_code // "-"), (.reason // "-"), (.sha256 // "-")] | @tsv' "$OUT")
		case $status in
		promoted)
			[ "$code" = - ] && [ "$reason" = - ] || bad="$bad $path: promoted with a reason ($code: $reason);"
			[ -f "$ART/$path" ] && [ "$(sha256sum < "$ART/$path" | cut -d' ' -f1)" = "$sha" ] ||
				bad="$bad $path: promoted, but not delivered with sha256 $sha;"
			;;
		rejected)
			grep -qxF -- "$code" <<<"$CODES" || bad="$bad $path: reason_code '$code' is not in the schema's list;"
			actionable "$code" "$reason" || bad="$bad $path: reason does not say what to do ($code: $reason);"
			[ ! -e "$ART/$path" ] || bad="$bad $path: rejected, but delivered;"
			;;
		*) bad="$bad $path: status $status;" ;;
		esac
	done
	[ -z "$bad" ] && return 0
	diag "$bad"
	return 1
}

# summary_agrees: the summary counts each status as the artifacts have it.
summary_agrees() {
	jq -e '.summary as $s | .artifacts as $a |
		($s | keys | sort) == ["discarded", "held", "promoted", "rejected"] and
		all(["promoted", "rejected", "held", "discarded"][]; . as $k | $s[$k] == ([$a[] | select(.status == $k)] | length)) and
		([$s[]] | add) == ($a | length)' "$OUT" >/dev/null && return 0
	diag "summary $(jq -c .summary "$OUT"), statuses $(jq -c '[.artifacts[].status]' "$OUT")"
	return 1
}

# outcome WANT: the run's artifacts are WANT (see EXPECT).
outcome() {
	local got
	got=$(jq -r '[.artifacts | sort_by(.path)[] | [.path, .status, (.media_type // "-"), (.reason_code // "-")] | join(" ")] | join("; ")' "$OUT")
	[ "$got" = "$1" ] && return 0
	diag "got: $got; reason: $(jq -r '[.artifacts[].reason] | join("; ")' "$OUT")"
	return 1
}

# zip_members: the zip of CSVs lists its three members as CSVs, valid
# (the status of a member that passed: the archive is what is promoted),
# each with the sha256 of its bytes in the delivered archive.
zip_members() {
	local want got
	want=$(python3 - "$ART/by_region.zip" 2>/dev/null <<'PY'
import hashlib, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for n in sorted(z.namelist()):
        print(n, "text/csv valid", hashlib.sha256(z.read(n)).hexdigest())
PY
)
	got=$(jqm '.artifacts[] | select(.path == "by_region.zip") | .members // [] | sort_by(.path)[] |
		"\(.path) \(.media_type) \(.status) \(.sha256)"')
	[ -n "$want" ] && [ "$(wc -l <<<"$want")" -eq 3 ] && [ "$got" = "$want" ] && return 0
	diag "members in the manifest: $(echo ${got:-none}); in the archive: $(echo ${want:-unreadable})"
	return 1
}

for mode in root user; do
	setup_mode $mode
	cp "$SBX_SRCDIR/examples/sales.csv" "$M/store/$PRINCIPAL/sales.csv"
	[ "$MODE" = user ] && chown -R "$SBX_TEST_USER" "$M/store"

	while IFS='|' read -r script allowed want; do
		[ -n "$script" ] || continue
		[ -f "$AGENTS/$script" ] || { not_ok "$mode: $script: no such fixture"; continue; }
		extra='{input_handles: ["sales.csv"], limits: {wall_seconds: 120, memory_mib: 768}}'
		# shellcheck disable=SC2086 # one type a word
		[ -z "$allowed" ] || extra="$extra + {allowed_outputs: $(jq -nc '$ARGS.positional' --args $allowed)}"
		mkjob "$M/$script.json" python-analysis "$(cat "$AGENTS/$script")" "$extra"
		sbx_run "$M/$script.json"
		expect_rc 0 "$mode: $script: runs, exit 0"
		check "$mode: $script: $want" outcome "$want"
		check "$mode: $script: every artifact promoted, or rejected with a documented code and what to do" \
			every_artifact_accounted
		check "$mode: $script: the summary counts what the artifacts say" summary_agrees
		[ "$script" = 09-zip-of-csvs.py ] &&
			check "$mode: $script: the members listed, CSVs, valid, with their digests" zip_members
		[ "$script" = 03-openpyxl-xlsx.py ] &&
			check "$mode: $script: its SUM row flagged formula_cells" \
				test "$(jqm '.artifacts[0].formula_cells')" = true
	done <<<"$EXPECT"
	check "$mode: the last manifest's signature verifies" signature_ok
	check "$mode: nothing left behind" nothing_left
done

finish
