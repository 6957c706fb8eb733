#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# outputs-office.sh - xlsx, docx and pptx from the payload's side: what
# openpyxl, xlsxwriter, python-docx and pandas write under python-analysis
# is promoted (formulas flagged), and a hostile corpus built from those
# files by zipfile (tests/e2e/office-corpus.py, the payload) is refused,
# each file for its own reason: macros, external links, DDE, OLE and
# ActiveX, an executable, a DTD, a zip bomb, zip slip, duplicate names,
# encryption, too many entries, polyglots, a package that is not what its
# name says.  pptx leaves only where a catalog allows it.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

XLSX=application/vnd.openxmlformats-officedocument.spreadsheetml.sheet
DOCX=application/vnd.openxmlformats-officedocument.wordprocessingml.document
PPTX=application/vnd.openxmlformats-officedocument.presentationml.presentation

artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }
status_of() { artifact "$1" '.media_type + " " + .status + ": " + (.reason // "") + " formula_cells=" + (.formula_cells | tostring)'; }
promoted() { # PATH TYPE FORMULA_CELLS
	local r
	r=$(status_of "$1")
	[ "$r" = "$2 promoted:  formula_cells=$3" ] && return 0
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

# A catalog whose python-analysis also allows pptx.
POLICY_PPTX="$T/policy-pptx"
cp -r "$SBX_SRCDIR/policy" "$POLICY_PPTX"
jq --arg t "$PPTX" '.allowed_outputs += [$t]' "$SBX_SRCDIR/policy/profiles/python-analysis.json" \
	> "$POLICY_PPTX/profiles/python-analysis.json"

CORPUS=$(cat "$SBX_SRCDIR/tests/e2e/office-corpus.py")

for mode in root user; do
	setup_mode $mode

	mkjob "$M/j.json" python-analysis "$CORPUS"
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: office documents and a hostile corpus: the run succeeds"
	# What agent scripts write.
	check "$mode: openpyxl's workbook (a negative number, a web hyperlink): promoted" \
		promoted openpyxl.xlsx $XLSX false
	check "$mode: a formula written by openpyxl: promoted, formula_cells" \
		promoted formula.xlsx $XLSX true
	check "$mode: a string cell that starts with @ after spaces: promoted, formula_cells" \
		promoted at-string.xlsx $XLSX true
	check "$mode: xlsxwriter's workbook with a chart: promoted" promoted xlsxwriter.xlsx $XLSX false
	check "$mode: a WEBSERVICE formula: promoted, formula_cells" promoted webservice.xlsx $XLSX true
	check "$mode: pandas' to_excel: promoted" promoted pandas.xlsx $XLSX false
	check "$mode: python-docx's document: promoted" promoted python-docx.docx $DOCX false
	check "$mode: pptx where the profile does not list it: rejected" \
		rejected_because deck.pptx "media type $PPTX is not in allowed_outputs"
	# The hostile corpus.
	check "$mode: a VBA project: rejected" rejected_because macro.xlsx 'xl/vbaProject.bin: a VBA project'
	check "$mode: an .xlsm renamed .xlsx: rejected" rejected_because xlsm-renamed.xlsx 'a macro-enabled content type'
	check "$mode: an OLE file named as an image: rejected" \
		rejected_because ole-as-image.xlsx 'xl/media/image1.png: an OLE compound file'
	check "$mode: a remote image: rejected" \
		rejected_because remote-image.docx 'an external relationship \(image\) to http://192.0.2.1/beacon.png'
	check "$mode: a remote template: rejected" rejected_because remote-template.docx 'an attached template'
	check "$mode: a hyperlink to a local file: rejected" \
		rejected_because file-link.xlsx 'external relationship \(hyperlink\) to file:///etc/passwd'
	check "$mode: DDEAUTO split across runs: rejected" rejected_because dde.docx 'the field code DDEAUTO'
	check "$mode: DDE in a simple field: rejected" rejected_because dde-simple.docx 'the field code DDE:'
	check "$mode: an OLE embedding: rejected" \
		rejected_because ole.docx 'word/embeddings/oleObject1.bin: an embedded object'
	check "$mode: an ActiveX control: rejected" rejected_because activex.xlsx 'an ActiveX control'
	check "$mode: an executable named as an image: rejected" \
		rejected_because exe.docx 'word/media/image1.png: a Windows executable'
	check "$mode: billion laughs in a part: rejected" \
		rejected_because laughs.xlsx 'docProps/core.xml: a DOCTYPE'
	check "$mode: a zip bomb: rejected" rejected_because bomb.xlsx 'compression ratio above 100:1'
	check "$mode: zip slip: rejected" rejected_because slip.xlsx '"\.\." path component'
	check "$mode: a duplicate name (case aside): rejected" rejected_because dup.xlsx 'duplicate name'
	check "$mode: an encrypted entry: rejected" rejected_because encrypted.xlsx 'xl/secret.xml": encrypted'
	check "$mode: 10001 more entries: rejected" rejected_because many.xlsx 'more than 10000 entries'
	check "$mode: a ZIP behind a prefix: rejected" rejected_because prefix.xlsx 'data before the first entry'
	check "$mode: a PNG with a ZIP appended: rejected" rejected_because polyglot.png 'bytes after IEND'
	check "$mode: ... and named .xlsx: rejected" \
		rejected_because png-named.xlsx "content is image/png but the extension says $XLSX"
	check "$mode: a ZIP of CSVs named .xlsx: rejected" \
		rejected_because csvs.xlsx 'no \[Content_Types\].xml'
	check "$mode: a Word document named .xlsx: rejected" \
		rejected_because doc-named.xlsx 'word/document.xml is not a workbook'
	# What a program reads instead of the reason: each refusal's code.
	codes_ok() {
		local pair bad=
		for pair in macro.xlsx=active_content xlsm-renamed.xlsx=active_content \
			remote-image.docx=active_content dde.docx=active_content ole.docx=active_content \
			activex.xlsx=active_content laughs.xlsx=invalid_content bomb.xlsx=invalid_content \
			deck.pptx=not_allowed_type png-named.xlsx=type_mismatch; do
			[ "$(artifact "${pair%%=*}" .reason_code)" = "${pair#*=}" ] ||
				bad="$bad ${pair%%=*}:$(artifact "${pair%%=*}" .reason_code)"
		done
		[ -z "$bad" ] || diag "reason codes:$bad"
		[ -z "$bad" ]
	}
	check "$mode: macros, links, fields and embeddings are active_content; a bomb or a DOCTYPE invalid_content" codes_ok
	check "$mode: only the valid files reach --artifacts" \
		test "$(cd "$ART" && find . -type f | sort | tr '\n' ' ')" = \
		"./at-string.xlsx ./formula.xlsx ./openpyxl.xlsx ./pandas.xlsx ./python-docx.docx ./webservice.xlsx ./xlsxwriter.xlsx "
	check "$mode: the promoted workbook is the payload's bytes, and openpyxl reads it" \
		/usr/bin/python3 -c 'import openpyxl, sys; ws = openpyxl.load_workbook(sys.argv[1]).active; sys.exit(ws["B3"].value != -4)' "$ART/openpyxl.xlsx"
	check "$mode: nothing left behind" nothing_left

	# pptx by a catalog's opt-in; a job cannot ask for it otherwise.
	POLICY=$POLICY_PPTX sbx_run "$M/j.json"
	expect_rc 0 "$mode: under a catalog that allows pptx: the run succeeds"
	check "$mode: a minimal deck: promoted" promoted deck.pptx $PPTX false
	check "$mode: a program action: rejected" rejected_because action.pptx 'ppaction://program'
	check "$mode: nothing left behind" nothing_left
	mkjob "$M/j.json" python-analysis 'pass' "{allowed_outputs: [\"$PPTX\"]}"
	sbx_run "$M/j.json"
	expect_rc 77 "$mode: a job cannot allow pptx beyond python-analysis's list"
	check "$mode: ... and says why" grep -q "$PPTX" "$ERR"
	check "$mode: nothing left behind" nothing_left
done

finish
