#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# io.sh - what crosses the sandbox boundary is untrusted in both directions.
#
# Inputs: handles resolve in the caller's principal's store and nowhere
# else, are copied byte for byte into a read-only /work/in, and archives
# are validated before anything is extracted.  Outputs: whatever the
# payload leaves in /work/out (links, fifos, lying extensions, huge images,
# too many or too large files, deep trees, hostile names) is rejected with
# a reason, the collector never hangs, and nothing of the host reaches
# --artifacts.  The manifest and the artifacts cannot be changed unnoticed,
# and partial_outputs decides what a timed-out run delivers.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need sha256sum timeout mkfifo

# No run may hang the suite: sbx gets 60 s, then SIGKILL.  A kill is
# reported as exit 99 so that it cannot pass for one of sbx's own codes.
bound_sbx 60

# A test catalog: the shipped one plus "smallin", the shell profile with
# an input cap of 4096 bytes.
POLICY="$T/policy"
cp -r "$SBX_SRCDIR/policy" "$POLICY"
jq '.input_bytes_max = 4096 | .description = "test only: shell with a 4 KiB input cap"' \
	"$SBX_SRCDIR/policy/profiles/shell.json" > "$POLICY/profiles/smallin.json"

# A host file that must never show up anywhere.
CANARY="sbx-canary-$$-$RANDOM$RANDOM"
echo "$CANARY" > "$T/canary.txt"

# Fixtures, made once: inputs, archives and images.
F="$T/fixtures"
mkdir -p "$F"
head -c 100000 /dev/urandom > "$F/good.bin"
head -c 8192 /dev/urandom > "$F/big.bin"
printf 'echo code from the store; echo "$1"\n' > "$F/prog.sh"
python3 - "$F" <<'PY' || { echo "Bail out! cannot make the fixtures"; exit 1; }
import io, struct, sys, tarfile, zipfile, zlib
d = sys.argv[1]

def tar(name, entries, mode="w"):
    with tarfile.open(f"{d}/{name}", mode) as t:
        for e in entries:
            t.addfile(*e)

def reg(path, data):
    i = tarfile.TarInfo(path); i.size = len(data); i.mode = 0o644
    return (i, io.BytesIO(data))

def sym(path, target):
    i = tarfile.TarInfo(path); i.type = tarfile.SYMTYPE; i.linkname = target
    return (i,)

tar("data.tgz", [reg("dir/hello.txt", b"hello from the archive\n")], "w:gz")
tar("evil.tar", [reg("ok.txt", b"fine\n"), reg("../evil", b"escaped\n")])
tar("link.tar", [reg("ok.txt", b"fine\n"), sym("passwd", "/etc/passwd")])
# 20 MB of zeros compress about 1000:1: far above the ratio cap.
with zipfile.ZipFile(f"{d}/bomb.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("zeros.bin", bytes(20 << 20))

def png(w, h, raw):
    def chunk(t, b):
        return struct.pack(">I", len(b)) + t + b + struct.pack(">I", zlib.crc32(t + b))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
open(f"{d}/small.png", "wb").write(png(1, 1, b"\x00\x80"))
# Chunk structure and CRCs are right; only the dimensions are absurd.
open(f"{d}/huge.png", "wb").write(png(100000, 100000, b"\x00" * 64))
PY
chmod -R a+rX "$T"

# The payload's marker: when it shows up anywhere, the payload ran.
RAN=PAYLOAD-RAN-MARKER
LEAK="echo $RAN; cat /work/in/* /work/in/*/* 2>/dev/null > /work/out/leak.txt; cat /work/in/* 2>/dev/null"

# never_ran: the last run has no exit record, captured nothing, and the
# marker and the canary are nowhere in its manifest, stderr or artifacts.
never_ran() {
	[ "$(jqm '.exit == null and ((.stdout.bytes // 0) == 0)')" = true ] || return 1
	! grep -rqs -e "$RAN" -e "$CANARY" "$OUT" "$ERR" "$ART"
}
refused_never_ran() {
	[ "$RC" -eq 77 ] && [ "$(jqm .status)" = refused ] && never_ran && signature_ok
}
invalid_never_ran() {
	[ "$RC" -eq 65 ] && [ "$(jqm .status)" = invalid ] && never_ran && signature_ok
}
# The captured stdout, as the manifest's excerpt shows it.
stdout_text() { jq -r '.stdout.excerpt' "$OUT"; }
# artifact PATH FIELD: a field of one artifact of the last manifest.
artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }
rejected_because() { # PATH REGEX
	local r
	r=$(artifact "$1" '.status + ": " + (.reason // "")')
	if [[ "$r" =~ ^rejected:\ .*$2 ]]; then return 0; fi
	diag "$1: $r"
	return 1
}
no_host_leak() {
	[ -z "$(find "$ART" -type l 2>/dev/null)" ] &&
		[ -z "$(find "$ART" ! -type f ! -type d 2>/dev/null)" ] &&
		! grep -rqs -e '^root:' -e "$CANARY" "$ART"
}

for mode in root user; do
	setup_mode $mode
	S="$M/store/$PRINCIPAL"
	cp "$F"/* "$S/"
	mkdir -p "$M/store/otherprincipal"
	echo "$CANARY" > "$M/store/otherprincipal/secret.txt"
	cp "$F/prog.sh" "$M/store/otherprincipal/other.sh"
	ln -s "$T/canary.txt" "$S/link"
	ln -s "$T/canary.txt" "$S/linked.sh"
	mkfifo "$S/fifo"
	[ $mode = user ] && chown -R "$SBX_TEST_USER" "$M/store"

	# --- inputs -------------------------------------------------------------

	mkjob "$M/j.json" shell "$LEAK" '{input_handles: ["secret.txt"]}'
	sbx_run "$M/j.json"
	check "$mode: another principal's handle: 77, payload never ran" refused_never_ran
	check "$mode: the refusal names the handle and the caller's principal" \
		grep -q "input_handles\[0\]: handle \"secret.txt\" not found for principal \"$PRINCIPAL\"" "$ERR"

	for h in ../otherprincipal/secret.txt /etc/passwd "$T/canary.txt" .hidden 'a/b'; do
		mkjob "$M/j.json" shell "$LEAK" "{input_handles: [\"$h\"]}"
		sbx_run "$M/j.json"
		check "$mode: handle \"$h\" is malformed: 65 naming input_handles[0], payload never ran" \
			eval 'invalid_never_ran && grep -q "input_handles\[0\]" "$ERR"'
	done

	for h in link fifo; do
		mkjob "$M/j.json" shell "$LEAK" "{input_handles: [\"good.bin\", \"$h\"]}"
		sbx_run "$M/j.json"
		check "$mode: a $h in the store: 77 naming input_handles[1], payload never ran" \
			eval 'refused_never_ran && grep -q "input_handles\[1\]: handle \"$h\"" "$ERR"'
	done

	# code_handle resolves like any handle.
	mkjob "$M/j.json" shell "" '{args: ["arg1"]}'
	jq 'del(.code) | .code_handle = "prog.sh"' "$M/j.json" > "$M/jc.json"; chmod 644 "$M/jc.json"
	sbx_run "$M/jc.json"
	check "$mode: code_handle: the program comes from the store" \
		eval '[ $RC -eq 0 ] && [ "$(stdout_text)" = "$(printf "code from the store\narg1\n")" ]'
	for h in other.sh linked.sh fifo; do
		jq --arg h "$h" '.code_handle = $h' "$M/jc.json" > "$M/jc2.json"; chmod 644 "$M/jc2.json"
		sbx_run "$M/jc2.json"
		check "$mode: code_handle \"$h\": 77, nothing ran" \
			eval 'refused_never_ran && grep -q "code_handle: handle \"$h\" not found" "$ERR"'
	done

	# A good handle: byte-exact copy, and /work/in is read-only.
	mkjob "$M/j.json" shell 'sha256sum /work/in/good.bin | cut -d" " -f1
		if touch /work/in/new 2>/dev/null || echo x >> /work/in/good.bin 2>/dev/null ||
		   rm /work/in/good.bin 2>/dev/null; then echo WRITABLE; else echo read-only; fi
		stat -c %s /work/in/good.bin' '{input_handles: ["good.bin"]}'
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: a good handle"
	check "$mode: copied byte for byte (sha256 inside = outside)" \
		test "$(stdout_text | head -1)" = "$(sha256sum "$F/good.bin" | cut -d' ' -f1)"
	check "$mode: /work/in is read-only" test "$(stdout_text | sed -n 2p)" = read-only

	# A store that only its owner can read is still the caller's store.
	chmod 0700 "$S"; chmod 0600 "$S/good.bin"
	sbx_run "$M/j.json"
	check "$mode: an owner-only store (0700 dir, 0600 file) is materialized" \
		eval '[ $RC -eq 0 ] && [ "$(stdout_text | head -1)" = "$(sha256sum "$F/good.bin" | cut -d" " -f1)" ]'
	chmod 0755 "$S"; chmod 0644 "$S/good.bin"

	# The profile's input cap.
	mkjob "$M/j.json" smallin "$LEAK" '{input_handles: ["big.bin"]}'
	sbx_run "$M/j.json"
	check "$mode: an input over the profile's cap: 77 naming it, payload never ran" \
		eval 'refused_never_ran && grep -q "input_handles\[0\]: \"big.bin\" is 8192 bytes" "$ERR"'

	# Archives.
	mkjob "$M/j.json" shell 'cat /work/in/data.tgz/dir/hello.txt; stat -c %F /work/in/data.tgz' \
		'{input_handles: ["data.tgz"], extract: ["data.tgz"]}'
	sbx_run "$M/j.json"
	check "$mode: a tar.gz listed in extract is extracted and readable" \
		eval '[ $RC -eq 0 ] && [ "$(stdout_text)" = "$(printf "hello from the archive\ndirectory\n")" ]'
	for a in 'evil.tar:entry "../evil"' 'link.tar:entry "passwd"' 'bomb.zip:'; do
		h=${a%%:*} want=${a#*:}
		mkjob "$M/j.json" shell "$LEAK" "{input_handles: [\"$h\"], extract: [\"$h\"]}"
		sbx_run "$M/j.json"
		check "$mode: archive $h: 77 naming ${want:-the archive}, payload never ran" \
			eval 'refused_never_ran && grep -q "input_handles\[0\]: archive \"$h\": $want" "$ERR"'
	done
	check "$mode: the zip bomb is refused for its size or ratio" grep -qiE 'ratio|bytes|size' "$ERR"

	# --- outputs ------------------------------------------------------------

	# One payload leaving every kind of hostile entry, and two good files.
	mkjob "$M/j.json" shell 'cd /work/out
		ln -s /etc/passwd passwd.txt
		ln -s / root.txt
		mkfifo pipe.txt
		echo one > h1.txt && ln h1.txt h2.txt
		cp /work/in/small.png image.csv
		echo "just text" > text.png
		cp /work/in/huge.png huge.png
		{ printf "a,b\n1,"; head -c 1 /dev/zero; printf "2\n"; } > nul.csv
		echo x > "$(printf "bad\nname.txt")"
		echo x > -rf.txt
		cp /work/in/small.png good.png
		printf "a,b\n1,2\n" > good.csv
		ls | wc -l' '{input_handles: ["small.png", "huge.png"]}'
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: hostile outputs: the run itself succeeds"
	check "$mode: symlink to /etc/passwd rejected" rejected_because passwd.txt 'symbolic link'
	check "$mode: symlink to / rejected" rejected_because root.txt 'symbolic link'
	check "$mode: fifo rejected (and the collector did not block on it)" rejected_because pipe.txt fifo
	check "$mode: hard link pair: both rejected" \
		eval 'rejected_because h1.txt "hard link" && rejected_because h2.txt "hard link"'
	check "$mode: PNG bytes named .csv rejected" rejected_because image.csv 'image/png'
	check "$mode: text named .png rejected" rejected_because text.png 'extension|not a known'
	check "$mode: 100000x100000 PNG rejected for its dimensions" rejected_because huge.png '100000x100000'
	check "$mode: CSV with a NUL rejected" rejected_because nul.csv 'NUL|not a known media type'
	check "$mode: file name with a newline rejected, listed without the newline" \
		eval 'rejected_because "bad\\x0aname.txt" "control" && ! grep -q "bad\\\\nname" "$OUT"'
	check "$mode: file name with a leading - rejected" rejected_because -rf.txt "starts with"
	check "$mode: the good PNG and CSV promoted, byte-exact" \
		eval '[ "$(artifact good.png .status) $(artifact good.csv .status)" = "promoted promoted" ] &&
		      cmp -s "$ART/good.png" "$F/small.png" && [ "$(cat "$ART/good.csv")" = "$(printf "a,b\n1,2")" ]'
	# The captures are kept only where the payload printed something.
	caps=
	[ "$(jqm .stdout.bytes)" != 0 ] && caps="./.sbx/stdout "
	[ "$(jqm .stderr.bytes)" != 0 ] && caps="$caps./.sbx/stderr "
	caps=$(printf '%s' "$caps" | tr ' ' '\n' | sort | tr '\n' ' ')
	[ -n "$caps" ] && caps="./.sbx $caps"
	check "$mode: only the promoted files (and the non-empty stream captures) are in --artifacts" \
		test "$(cd "$ART" && find . -mindepth 1 | sort | tr '\n' ' ')" = "$caps./good.csv ./good.png "
	check "$mode: nothing of the host in --artifacts" no_host_leak
	check "$mode: manifest signed, and every artifact listed has a reason or is promoted" \
		eval 'signature_ok && [ "$(jqm "[.artifacts[] | select(.status != \"promoted\" and (.reason // \"\") == \"\")] | length")" = 0 ] &&
		      [ "$(jqm ".artifacts | length")" = 13 ]'
	cp "$OUT" "$M/good-manifest.json"; GOOD_ART=$ART

	# 300 nested directories.
	mkjob "$M/j.json" shell 'd=/work/out; n=0
		while [ $n -lt 300 ]; do d=$d/d; mkdir $d || break; n=$((n + 1)); done
		echo deep > $d/deep.txt; echo $n' '{limits: {output_files: 400}}'
	sbx_run "$M/j.json"
	check "$mode: 300 nested directories made by the payload" test "$(stdout_text)" = 300
	check "$mode: the deep tree is rejected for its depth, nothing promoted" \
		eval '[ $RC -eq 0 ] && [ "$(jqm "[.artifacts[] | select(.status == \"rejected\" and (.reason | test(\"nesting deeper\")))] | length")" -ge 1 ] &&
		      [ "$(jqm "[.artifacts[] | select(.status == \"promoted\")] | length")" = 0 ] && [ -z "$(find "$ART" -name deep.txt)" ]'

	# 1000 files when 5 are allowed: the tmpfs inode cap stops the payload.
	mkjob "$M/j.json" shell 'i=0
		while [ $i -lt 1000 ]; do echo $i > /work/out/f$i.txt 2>/dev/null || break; i=$((i + 1)); done
		echo "made $i"; [ $i -lt 1000 ] && exit 1; exit 0' '{limits: {output_files: 5}}'
	sbx_run "$M/j.json"
	check "$mode: 1000 files when 5 allowed: the payload is stopped at 5" test "$(stdout_text)" = "made 5"
	check "$mode: ... its failing exit is limit_exceeded, reason output, quota hit recorded" \
		eval '[ $RC -eq 137 ] && [ "$(jqm ".status + \" \" + .reason")" = "limit_exceeded output: the output quota (output_bytes/output_files) was exhausted" ] &&
		      [ "$(jqm .usage.output_quota_hit)" = true ] && [ "$(jqm .reason_code)" = output_quota ]'
	check "$mode: ... the collector lists the 5 files it found" \
		eval '[ "$(jqm "[.artifacts[].path] | sort | join(\",\")")" = "f0.txt,f1.txt,f2.txt,f3.txt,f4.txt" ] && [ "$(jqm .usage.output_files)" = 5 ]'

	# A file larger than output_bytes.
	mkjob "$M/j.json" shell 'head -c 2000000 /dev/zero | tr "\0" a > /work/out/big.txt; rc=$?
		echo "rc $rc"; exit $rc' '{limits: {output_bytes: 10000}}'
	sbx_run "$M/j.json"
	check "$mode: a file over output_bytes: the payload's write fails (ENOSPC)" test "$(stdout_text)" = "rc 1"
	check "$mode: ... limit_exceeded (137), quota hit, the file rejected for output_bytes" \
		eval '[ $RC -eq 137 ] && [ "$(jqm .status)" = limit_exceeded ] && [ "$(jqm .usage.output_quota_hit)" = true ] &&
		      rejected_because big.txt "output_bytes" && [ ! -e "$ART/big.txt" ]'
	mkjob "$M/j.json" shell 'head -c 2000000 /dev/zero | tr "\0" a > /work/out/big.txt; exit 0' \
		'{limits: {output_bytes: 10000}}'
	sbx_run "$M/j.json"
	check "$mode: ... a payload that ignores the failed write decides: succeeded, quota hit recorded" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .usage.output_quota_hit)" = true ] && rejected_because big.txt "output_bytes"'

	# A payload that fails on its own is not cut short: its outputs count.
	mkjob "$M/j.json" shell 'echo "what went wrong" > /work/out/report.txt; exit 3'
	sbx_run "$M/j.json"
	check "$mode: a failed payload's outputs are promoted, not partial" \
		eval '[ $RC -eq 1 ] && [ "$(artifact report.txt ".status + \" \" + (.partial|tostring)")" = "promoted false" ] &&
		      [ -f "$ART/report.txt" ]'

	# required_outputs.
	mkjob "$M/j.json" shell 'echo no > /work/out/other.txt' '{required_outputs: ["totals.csv"]}'
	sbx_run "$M/j.json"
	check "$mode: a required output missing: failed (1), named in the reason" \
		eval '[ $RC -eq 1 ] && [ "$(jqm .status)" = failed ] && jqm .reason | grep -q totals.csv && [ "$(jqm .reason_code)" = required_output_missing ]'
	mkjob "$M/j.json" shell 'echo "a,b" > /work/out/totals.csv' '{required_outputs: ["totals.csv"]}'
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: the required output present"

	# --- tampering ----------------------------------------------------------

	as_mode "$SBX" verify --pubkey "$KEY.pub" --artifacts "$GOOD_ART" "$M/good-manifest.json" >/dev/null 2>&1
	check "$mode: untampered manifest and artifacts verify" test $? -eq 0
	OUT="$M/tampered.json"
	python3 - "$M/good-manifest.json" "$OUT" <<'PY'
import sys
s = open(sys.argv[1]).read()
i = s.index('"run_id":"') + len('"run_id":"')
s = s[:i] + ("1" if s[i] != "1" else "2") + s[i + 1:]
open(sys.argv[2], "w").write(s)
PY
	chmod 644 "$OUT"
	as_mode "$SBX" verify --pubkey "$KEY.pub" "$OUT" >/dev/null 2>&1
	check "$mode: one byte of the manifest changed: sbx verify exits 1" test $? -eq 1
	check "$mode: ... and jq + openssl reject it too" eval '! signature_ok'
	cp -r "$GOOD_ART" "$M/art-tampered"
	printf 'b' | dd of="$M/art-tampered/good.csv" bs=1 seek=0 conv=notrunc 2>/dev/null
	chmod -R a+rX "$M/art-tampered"
	as_mode "$SBX" verify --pubkey "$KEY.pub" --artifacts "$M/art-tampered" "$M/good-manifest.json" >/dev/null 2>&1
	check "$mode: one byte of an artifact changed: sbx verify --artifacts exits 1" test $? -eq 1

	# --- partial outputs ----------------------------------------------------

	for p in discard retain; do
		mkjob "$M/j.json" shell 'echo partial > /work/out/part.txt; sleep 30' \
			"{partial_outputs: \"$p\", limits: {wall_seconds: 1, grace_seconds: 1}}"
		sbx_run "$M/j.json"
		expect_rc 124 "$mode: partial_outputs $p: the run times out"
		if [ $p = discard ]; then
			check "$mode: discard: part.txt listed as discarded, not delivered" \
				eval '[ "$(artifact part.txt ".status + \" \" + (.partial|tostring)")" = "discarded false" ] && [ ! -e "$ART/part.txt" ]'
		else
			check "$mode: retain: part.txt promoted, marked partial" \
				eval '[ "$(artifact part.txt ".status + \" \" + (.partial|tostring)")" = "promoted true" ] && [ "$(cat "$ART/part.txt")" = partial ]'
		fi
	done
	check "$mode: nothing left behind" nothing_left
done

finish
