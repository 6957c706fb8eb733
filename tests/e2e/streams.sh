#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# streams.sh - the payload's captured stdout and stderr are kept as files
# and read as text in the manifest.
#
#  - By default the capture lands in DIR/.sbx/stdout and DIR/.sbx/stderr of
#    the artifacts directory, byte for byte what the manifest's sha256
#    covers (as many bytes as stream_bytes_max lets through, the rest
#    counted and flagged truncated), and `sbx verify --artifacts` checks
#    them too.
#  - The excerpt keeps newlines, tabs and ESC (escaped by the canonical
#    writer as jq writes them); only NUL, DEL and invalid UTF-8 become
#    U+FFFD, and jq + openssl still verify the line.  A Python traceback
#    reads as its lines.
#  - The payload cannot forge or replace them: whatever it names .sbx in
#    /work/out is rejected, never promoted over or beside the captures.
#  - --stdout FILE / --stderr FILE put them elsewhere; FILE must be new:
#    an existing file or a symlink there is a usage error (64) and is left
#    as it was, and a file that appears there during the run is not
#    overwritten (the run ends error, 70).
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need python3 sha256sum

# A catalog with a "tiny" profile: the shell profile capturing 4 KiB a stream.
POLICY="$T/policy"
cp -r "$SBX_SRCDIR/policy" "$POLICY"
jq '.stream_bytes_max = 4096 | .description = "test only: shell with a 4 KiB capture"' \
	"$SBX_SRCDIR/policy/profiles/shell.json" > "$POLICY/profiles/tiny.json"
chmod -R a+rX "$T"

sha() { sha256sum "$1" | cut -d' ' -f1; }
# stream_file_ok NAME FILE: FILE exists and the manifest's NAME.sha256 and
# NAME.bytes (when not truncated) are FILE's.
stream_file_ok() {
	[ -f "$2" ] && [ ! -L "$2" ] || { diag "$2: not a regular file"; return 1; }
	[ "$(jqm ".$1.sha256")" = "$(sha "$2")" ] || { diag "$1: sha256 differs from $2's"; return 1; }
	[ "$(jqm ".$1.truncated")" = true ] || [ "$(jqm ".$1.bytes")" = "$(stat -c %s "$2")" ]
}
# The signed line is jq's canonical rendering of itself, and without its
# signature it is what jq + openssl verify.
jq_reproduces() {
	jq -cjS . "$OUT" > "$M/jq.$RUNS" && head -c -1 "$OUT" | cmp -s - "$M/jq.$RUNS"
}
# artifact PATH FIELD: a field of one artifact of the last manifest.
artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }
# reserved_rejected PATH...: each is listed as rejected for the reserved name.
reserved_rejected() {
	local p
	for p in "$@"; do
		[[ "$(artifact "$p" '.status + ": " + .reason')" == "rejected: "*reserved* ]] || return 1
	done
}
verify_art() { as_mode "$SBX" verify --pubkey "$KEY.pub" --artifacts "$ART" "$OUT" 2> "$M/verify.err"; }
# wait_event EVENTS NAME: until the events file has that event (bounded).
wait_event() {
	local i
	for i in $(seq 1500); do
		grep -q "\"event\":\"$2\"" "$1" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

for mode in root user; do
	setup_mode $mode

	# --- a Python traceback reads as text -----------------------------------
	mkjob "$M/tb.json" python-analysis 'print("before")
raise ValueError("boom")'
	sbx_run "$M/tb.json"
	expect_rc 1 "$mode: raise ValueError: the run failed"
	check "$mode: traceback: the stderr excerpt holds its lines" \
		eval '[ "$(jqm .stderr.excerpt | head -1)" = "Traceback (most recent call last):" ] &&
			[ "$(jqm .stderr.excerpt | grep -c "^  File \"/work/main.py\", line 2")" = 1 ] &&
			[ "$(jq -j .stderr.excerpt "$OUT" | tail -1)" = "ValueError: boom" ]'
	check "$mode: traceback: no U+FFFD in it" eval '! jqm .stderr.excerpt | grep -q "$(printf "\357\277\275")"'
	check "$mode: traceback: whole in .sbx/stderr, and it is the excerpt" \
		eval 'jq -j .stderr.excerpt "$OUT" | cmp -s - "$ART/.sbx/stderr" &&
			[ "$(tail -1 "$ART/.sbx/stderr")" = "ValueError: boom" ]'
	check "$mode: .sbx/stderr and .sbx/stdout have the manifest's sha256" \
		eval 'stream_file_ok stderr "$ART/.sbx/stderr" && stream_file_ok stdout "$ART/.sbx/stdout" &&
			[ "$(cat "$ART/.sbx/stdout")" = before ]'
	check "$mode: manifest_version 3 (excerpts may hold control characters, and keep the end)" \
		test "$(jqm .manifest_version)" = 3
	check "$mode: traceback: signed, jq reproduces the line" eval 'signature_ok && jq_reproduces'
	check "$mode: sbx verify --artifacts checks the stream files" \
		eval 'verify_art && grep -q "stdout and stderr in .* match$" "$M/verify.err"' ||
		diag "$(cat "$M/verify.err")"
	printf 'x' >> "$ART/.sbx/stderr"
	check "$mode: a changed .sbx/stderr: sbx verify --artifacts exits 1" \
		eval '! verify_art && grep -q "stderr: .sbx/stderr: size [0-9]* differs" "$M/verify.err"'

	# --- control characters, DEL, NUL, invalid UTF-8 ------------------------
	mkjob "$M/ctl.json" shell "printf 'a\\tb\\033[31mc\\177d\\000e\\r\\n\\377z'"
	sbx_run "$M/ctl.json"
	expect_rc 0 "$mode: control characters on stdout"
	check "$mode: excerpt keeps TAB, ESC, CR, LF; NUL, DEL and invalid UTF-8 become U+FFFD" \
		test "$(jq -c .stdout.excerpt "$OUT")" = "$(printf '"a\\tb\\u001b[31mc\357\277\275d\357\277\275e\\r\\n\357\277\275z"')" ||
		diag "excerpt: $(jq -c .stdout.excerpt "$OUT")"
	check "$mode: .sbx/stdout holds the raw bytes" \
		eval 'printf "a\tb\033[31mc\177d\000e\r\n\377z" | cmp -s - "$ART/.sbx/stdout" && stream_file_ok stdout "$ART/.sbx/stdout"'
	check "$mode: control characters: jq + openssl verify, jq reproduces the line" \
		eval 'signature_ok && jq_reproduces'
	check "$mode: control characters: sbx verify accepts it" verify_art
	check "$mode: the manifest line holds no raw control character" \
		eval '! head -c -1 "$OUT" | LC_ALL=C grep -q "$(printf "[\001-\037\177]")"'

	# --- 10 MB on stdout, 4 KiB captured ------------------------------------
	mkjob "$M/big.json" tiny 'yes 0123456789abcdef | head -c 10485760; echo done >&2'
	sbx_run "$M/big.json"
	expect_rc 0 "$mode: 10 MB on stdout with stream_bytes_max 4096"
	check "$mode: bytes counts all 10 MB, truncated is true" \
		test "$(jqm '"\(.stdout.bytes) \(.stdout.truncated) \(.stderr.truncated)"')" = "10485760 true false"
	check "$mode: .sbx/stdout is exactly the 4096 bytes captured" \
		eval 'yes 0123456789abcdef | head -c 4096 | cmp -s - "$ART/.sbx/stdout" && stream_file_ok stdout "$ART/.sbx/stdout"'

	# --- the payload names its outputs .sbx ---------------------------------
	mkjob "$M/forge.json" shell 'echo real; echo real-err >&2
mkdir -p /work/out/.sbx /work/out/.SBX /work/out/sub/.sbx
echo forged > /work/out/.sbx/stdout; echo forged > /work/out/.sbx/stderr
echo forged > /work/out/.SBX/stdout; echo fine > /work/out/sub/.sbx/x.txt
echo ok > /work/out/ok.txt'
	sbx_run "$M/forge.json"
	expect_rc 0 "$mode: a payload writing /work/out/.sbx/stdout still succeeds"
	check "$mode: the stream files hold the real capture, not the forgery" \
		eval '[ "$(cat "$ART/.sbx/stdout")" = real ] && [ "$(cat "$ART/.sbx/stderr")" = real-err ] &&
			stream_file_ok stdout "$ART/.sbx/stdout"'
	check "$mode: .sbx/stdout, .sbx/stderr, .SBX/stdout of the payload's are rejected as reserved" \
		reserved_rejected .sbx/stdout .sbx/stderr .SBX/stdout || diag "artifacts: $(jq -c .artifacts "$OUT")"
	check "$mode: the rest is promoted (sub/.sbx/x.txt, ok.txt); .SBX was never made" \
		eval '[ "$(artifact ok.txt .status) $(artifact sub/.sbx/x.txt .status)" = "promoted promoted" ] &&
			[ ! -e "$ART/.SBX" ] && [ "$(ls -A "$ART/.sbx" | tr "\n" " ")" = "stderr stdout " ]'
	check "$mode: sbx verify --artifacts accepts the directory" verify_art ||
		diag "$(cat "$M/verify.err")"

	# .sbx as a plain file of the payload's.
	mkjob "$M/forge2.json" shell 'echo real; echo forged > /work/out/.sbx'
	sbx_run "$M/forge2.json"
	check "$mode: a file named .sbx is rejected, .sbx/stdout is the capture" \
		eval '[ $RC -eq 0 ] && [[ "$(artifact .sbx .status)" == rejected ]] && [ -d "$ART/.sbx" ] &&
			[ "$(cat "$ART/.sbx/stdout")" = real ]'

	# --- --stdout FILE, --stderr FILE ---------------------------------------
	mkjob "$M/two.json" shell 'echo to-out; echo to-err >&2'
	sbx_run "$M/two.json" --stdout "$M/o.txt" --stderr "$M/e.txt"
	expect_rc 0 "$mode: --stdout FILE --stderr FILE"
	check "$mode: the files hold the streams, with the manifest's sha256" \
		eval '[ "$(cat "$M/o.txt")" = to-out ] && [ "$(cat "$M/e.txt")" = to-err ] &&
			stream_file_ok stdout "$M/o.txt" && stream_file_ok stderr "$M/e.txt"'
	check "$mode: no outputs and both streams elsewhere: no artifacts directory made" \
		eval '[ $RC -eq 0 ] && [ ! -e "$ART" ]'
	check "$mode: the files are the caller's" \
		test "$(stat -c %U "$M/o.txt" "$M/e.txt" | sort -u)" = "$( [ $mode = user ] && echo "$SBX_TEST_USER" || echo root)"
	sbx_run "$M/two.json" --stderr "$M/e2.txt"
	check "$mode: --stderr only: stdout still beside the artifacts, no .sbx/stderr" \
		eval '[ $RC -eq 0 ] && [ "$(cat "$ART/.sbx/stdout")" = to-out ] && [ ! -e "$ART/.sbx/stderr" ] &&
			[ "$(cat "$M/e2.txt")" = to-err ]'

	# An existing file, a symlink, a dangling symlink, a missing directory.
	echo precious > "$M/exists.txt"
	mkdir -p "$M/aim"
	echo target > "$M/aim/t.txt"
	ln -sf "$M/aim/t.txt" "$M/link.txt"
	ln -sf "$M/aim/none.txt" "$M/dangling.txt"
	[ $mode = user ] && chown -h "$SBX_TEST_USER" "$M/exists.txt" "$M/aim" "$M/aim/t.txt" "$M/link.txt" "$M/dangling.txt"
	sbx_run "$M/two.json" --stdout "$M/exists.txt"
	check "$mode: --stdout naming an existing file: 64, no manifest, file untouched" \
		eval '[ $RC -eq 64 ] && [ ! -s "$OUT" ] && [ "$(cat "$M/exists.txt")" = precious ] &&
			grep -q "^sbx: --stdout: .*exists.txt: exists" "$ERR"' || diag "$(cat "$ERR")"
	sbx_run "$M/two.json" --stderr "$M/link.txt"
	check "$mode: --stderr naming a symlink: 64, not followed, target untouched" \
		eval '[ $RC -eq 64 ] && [ "$(cat "$M/aim/t.txt")" = target ] &&
			grep -q "^sbx: --stderr: .*link.txt: is a symbolic link (not followed)" "$ERR"' || diag "$(cat "$ERR")"
	sbx_run "$M/two.json" --stdout "$M/dangling.txt"
	check "$mode: --stdout naming a dangling symlink: 64, its target not created" \
		eval '[ $RC -eq 64 ] && [ ! -e "$M/aim/none.txt" ] && grep -q "dangling.txt: is a symbolic link" "$ERR"'
	sbx_run "$M/two.json" --stdout "$M/nodir/o.txt"
	check "$mode: --stdout in a missing directory: 64" \
		eval '[ $RC -eq 64 ] && [ ! -e "$M/nodir" ] && grep -q "^sbx: --stdout: .*nodir" "$ERR"'
	if [ $mode = user ]; then
		mkdir -p "$M/rootonly"
		chown root "$M/rootonly"
		chmod 0755 "$M/rootonly"
		sbx_run "$M/two.json" --stderr "$M/rootonly/e.txt"
		check "user: --stderr in a directory the caller cannot write: 64 before the run" \
			eval '[ $RC -eq 64 ] && [ ! -s "$OUT" ] && grep -q "cannot create a file in .*rootonly: Permission denied" "$ERR"'
	fi
	sbx_run "$M/two.json" --stderr -
	check "$mode: --stderr -: 64, no file named - made" \
		eval '[ $RC -eq 64 ] && [ ! -e ./- ] && grep -q "^sbx: --stderr: \"-\" is not supported" "$ERR"'
	sbx_run "$M/two.json" --stdout "$M/same.txt" --stderr "$M/./same.txt"
	check "$mode: --stdout and --stderr naming one file: 64" \
		eval '[ $RC -eq 64 ] && [ ! -e "$M/same.txt" ] && grep -q "same file" "$ERR"'
	mkdir -p "$M/artdir"
	[ $mode = user ] && chown "$SBX_TEST_USER" "$M/artdir"
	sbx_run "$M/two.json" --artifacts "$M/artdir" --stdout "$M/artdir/o.txt"
	check "$mode: --stdout inside the --artifacts directory: 64" \
		eval '[ $RC -eq 64 ] && [ -z "$(ls -A "$M/artdir")" ] && grep -q "inside the --artifacts directory" "$ERR"'
	check "$mode: none of these runs left anything" nothing_left

	# A file that appears at FILE while the payload runs is not overwritten.
	EV="$M/events.jsonl"
	: > "$EV"
	chmod 0666 "$EV"
	mkjob "$M/slow.json" shell 'echo late; sleep 1'
	( wait_event "$EV" started && echo planted > "$M/race.txt" ) &
	racer=$!
	sbx_run "$M/slow.json" --stdout "$M/race.txt" --events "$EV"
	wait $racer
	check "$mode: a file planted at --stdout FILE during the run: kept, run ends error (70)" \
		eval '[ $RC -eq 70 ] && [ "$(cat "$M/race.txt")" = planted ] && [ "$(jqm .status)" = error ] &&
			[[ "$(jqm .reason)" == *--stdout*exists* ]] && signature_ok' ||
		diag "rc $RC, reason $(jqm .reason)"

	# --- runs that did not run the payload, and runs cut short --------------
	mkjob "$M/refused.json" nosuchprofile 'echo x'
	sbx_run "$M/refused.json" --stdout "$M/never.txt"
	check "$mode: a refused job: 77, no stream file, no artifacts directory" \
		eval '[ $RC -eq 77 ] && [ ! -e "$M/never.txt" ] && [ ! -e "$ART" ]'
	mkjob "$M/to.json" shell 'echo before-timeout; sleep 30' '{limits: {wall_seconds: 2, soft_seconds: 1, grace_seconds: 1}}'
	sbx_run "$M/to.json"
	check "$mode: a timed-out run keeps what it printed" \
		eval '[ $RC -eq 124 ] && [ "$(cat "$ART/.sbx/stdout")" = before-timeout ] && stream_file_ok stdout "$ART/.sbx/stdout"'
	check "$mode: nothing left behind" nothing_left
done

finish
