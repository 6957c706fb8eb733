#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# outputs-zip.sh - application/zip outputs from the payload's side: a ZIP
# of CSVs as Python's zipfile writes it is promoted under python-analysis,
# its members listed in the manifest with digests of their bytes; a ZIP
# that holds anything its members could not be on their own (a pickle, an
# SVG or HTML with a script, a nested ZIP or .tar.gz, a type the job does
# not allow, an unknown extension) is refused, the member named; and the
# container is checked as an archive input is (bomb, zip slip, duplicate
# names, encryption, too many members) and held to the run's output_bytes.
# The payload is tests/e2e/zip-corpus.py.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

stdout_text() { jq -r '.stdout.excerpt' "$OUT"; }
artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }
status_of() { artifact "$1" '(.media_type // "null") + " " + .status + ": " + (.reason // "")'; }
rejected_because() { # PATH CODE REGEX
	local r code
	r=$(status_of "$1")
	code=$(artifact "$1" .reason_code)
	[[ "$r" =~ ^application/zip\ rejected:\ .*$3 ]] && [ "$code" = "$2" ] && return 0
	diag "$1: $code $r"
	return 1
}
# The good archive: promoted, its three members listed as valid CSV and
# text with the digests the payload computed of the bytes it zipped.
members_ok() {
	local want got
	want=$(stdout_text | head -n 1 | jq -cS .)
	got=$(artifact tables.zip '[.members[] | {(.path): .sha256}] | add' | jq -cS .)
	[ -n "$want" ] && [ "$want" = "$got" ] || { diag "digests: payload $want, manifest $got"; return 1; }
	got=$(artifact tables.zip '[.members[] | .path + "=" + .media_type + "=" + .status + "=" + (.size | tostring)] | join(" ")')
	[ "$got" = "results/summary.csv=text/csv=valid=$(artifact tables.zip '.members[0].size') results/by_day.csv=text/csv=valid=$(artifact tables.zip '.members[1].size') README.txt=text/plain=valid=35" ] ||
		{ diag "members: $got"; return 1; }
}
# The refused member is listed last, with its own reason and code.
last_member() { # PATH MEMBER CODE
	local got
	got=$(artifact "$1" '.members[-1] | .path + " " + .status + " " + (.reason_code // "")')
	[ "$got" = "$2 rejected $3" ] && return 0
	diag "$1: last member: $got"
	return 1
}

only_good() {
	local got
	got=$(cd "$ART" && find . -type f -not -path './.sbx/*' | sort | tr '\n' ' ')
	[ "$got" = "./tables.zip " ] && return 0
	diag "--artifacts: $got"
	return 1
}

CORPUS=$(cat "$SBX_SRCDIR/tests/e2e/zip-corpus.py")
# Three CSVs of about 126 KB, deflated to about 60 KB each: the archive
# fits in output_bytes, its members do not.
OVER='import random, zipfile
with zipfile.ZipFile("/work/out/over-bytes.zip", "w", zipfile.ZIP_DEFLATED) as z:
    for i in range(3):
        r = random.Random(i)
        z.writestr("big%d.csv" % i, "x,y\n" + "".join("%d,%d\n" % (j, r.randrange(10**9)) for j in range(9000)))'

for mode in root user; do
	setup_mode $mode

	mkjob "$M/j.json" python-analysis "$CORPUS"
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: a ZIP of CSVs and a hostile corpus: the run succeeds"
	check "$mode: the ZIP of CSVs: promoted" \
		test "$(status_of tables.zip)" = "application/zip promoted: "
	check "$mode: ... its members listed, typed, valid, with the digests of their bytes" members_ok
	check "$mode: ... and the bytes reach --artifacts, as zipfile reads them" \
		/usr/bin/python3 -c 'import zipfile, sys; sys.exit(zipfile.ZipFile(sys.argv[1]).testzip() is not None)' "$ART/tables.zip"
	# A member that would be refused on its own refuses the archive.
	check "$mode: a pickle inside: rejected, code_as_data, the member named" \
		rejected_because pickle.zip code_as_data 'member "model.pkl": pickle'
	check "$mode: ... listed last as rejected" last_member pickle.zip model.pkl code_as_data
	check "$mode: pickle bytes named .csv inside: rejected" \
		rejected_because pickle-renamed.zip code_as_data 'member "model.csv": pickle'
	check "$mode: an SVG with a script inside: rejected" \
		rejected_because svg-script.zip invalid_content 'member "plot.svg": svg: .*refused element \(script\)'
	check "$mode: an HTML with a script inside: rejected (refuse_active_content)" \
		rejected_because html-script.zip active_content 'member "report.html": active_content'
	check "$mode: a nested ZIP: rejected" \
		rejected_because nested.zip nested_archive 'member "more.zip": a ZIP archive inside the archive'
	check "$mode: a nested ZIP named .csv: rejected" \
		rejected_because nested-renamed.zip nested_archive 'member "more.csv": a ZIP archive'
	check "$mode: a .tar.gz inside: rejected" \
		rejected_because targz.zip nested_archive 'member "data.tar.gz": gzip-compressed data'
	check "$mode: a type the job does not allow inside: rejected" \
		rejected_because not-allowed.zip not_allowed_type 'member "table.parquet": media type application/vnd.apache.parquet is not in allowed_outputs'
	check "$mode: a shell script inside: rejected" \
		rejected_because no-extension.zip unknown_extension 'member "run.sh": extension does not name'
	# The container.
	check "$mode: a zip bomb: rejected" rejected_because bomb.zip invalid_content 'compression ratio above 100:1'
	check "$mode: zip slip: rejected" rejected_because slip.zip invalid_content '"\.\." path component'
	check "$mode: duplicate names (case aside): rejected" rejected_because dup.zip invalid_content 'duplicate name'
	check "$mode: an encrypted member: rejected" rejected_because encrypted.zip invalid_content 'secret.csv": encrypted'
	check "$mode: 65 members: rejected" rejected_because many.zip over_count '65 members: more than'
	check "$mode: a container refused lists no members" \
		test "$(artifact bomb.zip '.members // "none"')" = none
	check "$mode: only the good archive reaches --artifacts" only_good
	check "$mode: nothing left behind" nothing_left

	# Members count in output_bytes: what is left after the files.
	mkjob "$M/j.json" python-analysis "$OVER" '{limits: {output_bytes: 300000}}'
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: members over what is left of output_bytes: the run succeeds"
	check "$mode: ... and the archive is rejected, too_large" \
		rejected_because over-bytes.zip too_large 'than [0-9]+ bytes'
	check "$mode: nothing left behind" nothing_left

	# A profile that does not list application/zip refuses a .zip as before.
	mkjob "$M/j.json" python-analysis 'import zipfile
zipfile.ZipFile("/work/out/t.zip", "w").writestr("a.csv", "a\n1\n")' \
		'{allowed_outputs: ["text/csv"]}'
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: allowed_outputs without application/zip: the run succeeds"
	check "$mode: ... and the .zip is not_allowed_type" \
		test "$(artifact t.zip .reason_code)" = not_allowed_type
	check "$mode: nothing left behind" nothing_left
done

finish
