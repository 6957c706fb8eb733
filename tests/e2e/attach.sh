#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# attach.sh - sbx run as a person, a pipeline, cron and a back end use it.
#
#  - On a terminal (under script(1), a real pty) the program's stdout and
#    stderr appear as it writes them, a one-line summary ends stderr, no
#    manifest JSON is printed, and the signed manifest is kept in the run's
#    directory, where sbx verify accepts it.  The exit status is sbx's
#    documented one.  No terminal reaches the sandbox, also with --stdin.
#  - In a pipeline, producer | sbx run --attach --stdin ... | consumer
#    passes every byte through (1.5 MiB, compared byte for byte), the manifest
#    counts stdin's bytes and digest, and a consumer that stops reading
#    (head -1) ends the run promptly instead of at its wall limit.
#  - From cron's environment (env -i, cron's PATH, no terminal) the default
#    is unchanged: the manifest on stdout; --attach puts the program's
#    output in the mail instead.
#  - A Python back end through subprocess gets the manifest on stdout, and
#    --stdin passes its input.
#  - Excerpts keep the end: a traceback over 2 KiB keeps its first line
#    and its last (the exception), with a marker and excerpt_truncated,
#    while the capture's own truncated stays false.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need python3 sha256sum script timeout

POL=$SBX_SRCDIR/policy
sha() { sha256sum | cut -d' ' -f1; }

# The current mode's identity and environment as a command prefix, for
# commands that script(1) or a pipeline starts (as_mode is a function).
mode_cmd() {
	local launch=()
	[ -n "$CG_LAUNCH" ] && launch=(sh -c 'echo $$ > "$0" && exec "$@"' "$CG_LAUNCH")
	if [ "$MODE" = user ]; then
		PFX=("${launch[@]}" runuser -u "$SBX_TEST_USER" -- env -i PATH=/usr/bin:/bin
		     HOME="$M/home" XDG_RUNTIME_DIR="$M/state" SBX_LIBEXECDIR="$SBX_BUILDDIR")
	else
		PFX=(env -i PATH=/usr/bin:/bin HOME="$M/home" SBX_LIBEXECDIR="$SBX_BUILDDIR")
	fi
	PFX+=("$SBX" run --config "$M/config.json" --policy "$POL" --key "$KEY" --store "$M/store")
}
# A new directory the mode's identity may write into.
newdir() {
	mkdir -p "$1"
	[ "$MODE" = user ] && chown "$SBX_TEST_USER" "$1"
	return 0
}
# on_tty LOG CMD...: CMD on a fresh pty; its output (CR LF made LF) in LOG.
on_tty() {
	local log=$1; shift
	SHELL=/bin/bash timeout -s KILL 60 script -qefc "$(printf '%q ' "$@")" "$log.raw" </dev/null >/dev/null 2>&1
	RC=$?
	tr -d '\r' < "$log.raw" > "$log"
}

for mode in root user; do
	setup_mode $mode
	mode_cmd

	# --- on a terminal: the output, a summary, the manifest kept -------------
	A=$M/tty1; newdir "$A"
	on_tty "$M/tty1.log" "${PFX[@]}" --artifacts "$A/run" -p shell \
		-c 'echo hello from the payload; echo oops on stderr >&2; exit 3'
	check "$mode: tty: exit status is sbx's own for a failed payload (1), got $RC" test "$RC" = 1
	check "$mode: tty: the program's stdout and stderr are shown" \
		eval 'grep -qx "hello from the payload" "$M/tty1.log" && grep -qx "oops on stderr" "$M/tty1.log"'
	check "$mode: tty: a one-line summary names the status and the manifest" \
		eval 'grep -q "^sbx: failed (.*code 3).*; manifest in $A/run/.sbx/manifest.json$" "$M/tty1.log"'
	check "$mode: tty: no manifest JSON on the terminal" eval '! grep -q "\"run_id\"" "$M/tty1.log"'
	OUT=$A/run/.sbx/manifest.json
	check "$mode: tty: the manifest is in the run's directory, signed, for status failed" \
		eval '[ "$(jqm .status)" = failed ] && [ "$(jqm .exit.code)" = 3 ] && signature_ok'
	check "$mode: tty: sbx verify --artifacts accepts the run's directory" \
		as_mode "$SBX" verify --pubkey "$KEY.pub" --artifacts "$A/run" "$OUT"
	check "$mode: tty: the captures are as before (stdout digest)" \
		eval '[ "$(printf "hello from the payload\n" | sha)" = "$(jqm .stdout.sha256)" ] &&
		      [ "$(jqm .stdin)" = null ]'

	# --- no terminal reaches the sandbox, with or without --stdin ------------
	A=$M/tty2; newdir "$A"
	on_tty "$M/tty2.log" "${PFX[@]}" --stdin --artifacts "$A/run" -p shell \
		-c 'for f in 0 1 2; do if test -t $f; then echo "fd $f: tty"; else echo "fd $f: no tty"; fi; done'
	check "$mode: tty --stdin: fds 0, 1 and 2 of the payload are no terminal" \
		eval '[ "$RC" = 0 ] && [ "$(grep -c "^fd [012]: no tty$" "$M/tty2.log")" = 3 ] && ! grep -q ": tty$" "$M/tty2.log"'

	# --- a pipeline: bytes through, counted; a reader that leaves ------------
	A=$M/pipe1; newdir "$A"
	head -c 1572864 /dev/urandom > "$M/in.bin"
	chmod 0644 "$M/in.bin"
	"${PFX[@]}" --attach --stdin --manifest "$A/m.json" --artifacts "$A/run" -p shell -c 'cat' \
		< "$M/in.bin" 2> "$M/pipe1.err" | cat > "$M/out.bin"
	RC=${PIPESTATUS[0]}
	OUT=$A/m.json
	check "$mode: pipeline: 1.5 MiB through --stdin and back out of stdout, byte for byte" \
		eval '[ "$RC" = 0 ] && cmp -s "$M/in.bin" "$M/out.bin"'
	check "$mode: pipeline: the manifest counts stdin (bytes, sha256, complete)" \
		eval '[ "$(jqm .stdin.bytes)" = 1572864 ] && [ "$(jqm .stdin.sha256)" = "$(sha < "$M/in.bin")" ] &&
		      [ "$(jqm .stdin.complete)" = true ] && signature_ok'
	check "$mode: pipeline: stdout is captured and limited as before (1 MiB kept of 1.5)" \
		eval '[ "$(jqm .stdout.bytes)" = 1572864 ] && [ "$(jqm .stdout.truncated)" = true ] &&
		      [ "$(jqm .stdout.sha256)" = "$(head -c 1048576 "$M/in.bin" | sha)" ]'
	printf 'a\nb\n' | "${PFX[@]}" --attach --stdin --manifest-fd 3 --artifacts "$M/pipe2" -p shell \
		-c 'tr a-z A-Z' 3> "$M/pipe2.json" 2>/dev/null | cat > "$M/pipe2.out"
	OUT=$M/pipe2.json
	check "$mode: pipeline: printf | sbx --stdin | cat, manifest on --manifest-fd 3" \
		eval '[ "$(cat "$M/pipe2.out")" = "$(printf "A\nB")" ] && [ "$(jqm .stdin.bytes)" = 4 ]'
	start=$SECONDS
	first=$("${PFX[@]}" --attach --artifacts "$M/pipe3" -p shell -c 'while :; do echo y; done' \
		2> "$M/pipe3.err" | head -1)
	check "$mode: pipeline: | head -1 ends the run at once (SIGPIPE), not at its wall limit" \
		eval '[ "$first" = y ] && [ $((SECONDS - start)) -lt 20 ]'

	# --- cron: env -i, cron's PATH, no terminal -------------------------------
	cron=(env -i PATH=/usr/bin:/bin SHELL=/bin/sh HOME="$M/home" LOGNAME=x)
	as_mode "${cron[@]}" "$SBX" run --config "$M/config.json" --policy "$POL" --key "$KEY" \
		--store "$M/store" --artifacts "$M/cron1" -p shell -c 'echo nightly' > "$M/cron1.out" 2> "$M/cron1.err"
	RC=$?
	OUT=$M/cron1.out
	check "$mode: cron: the default off a terminal is unchanged (the manifest on stdout)" \
		eval '[ "$RC" = 0 ] && [ "$(jqm .stdout.excerpt)" = nightly ] && signature_ok'
	newdir "$M/cron2"
	as_mode "${cron[@]}" "$SBX" run --config "$M/config.json" --policy "$POL" --key "$KEY" \
		--store "$M/store" --artifacts "$M/cron2/run" --attach -p shell -c 'echo nightly' \
		> "$M/cron2.out" 2> "$M/cron2.err"
	RC=$?
	check "$mode: cron --attach: the mail holds the program's output and the summary" \
		eval '[ "$RC" = 0 ] && [ "$(cat "$M/cron2.out")" = nightly ] &&
		      grep -q "^sbx: succeeded in .*; manifest in " "$M/cron2.err" &&
		      [ -s "$M/cron2/run/.sbx/manifest.json" ]'

	# --- a Python back end -----------------------------------------------------
	check "$mode: python subprocess: manifest on stdout, input through --stdin" \
		python3 - "${PFX[@]}" --stdin --artifacts "$M/py1" -p shell -c 'wc -c' <<'EOF'
import json, subprocess, sys
p = subprocess.run(sys.argv[1:], input=b"12345", capture_output=True)
m = json.loads(p.stdout)
assert p.returncode == 0, p.stderr
assert m["stdin"]["bytes"] == 5 and m["stdin"]["complete"], m["stdin"]
assert m["stdout"]["excerpt"].strip() == "5", m["stdout"]
EOF

	# --- excerpts keep the end --------------------------------------------------
	code=$(python3 -c 'print("\n".join(f"def f{i}(): return f{i+1}()" for i in range(40)) + "\ndef f40(): return 1/0\nf0()")')
	mkjob "$M/tb.json" python-analysis "$code"
	sbx_run "$M/tb.json"
	check "$mode: a traceback over 2 KiB: stderr captured whole (truncated false)" \
		eval '[ "$RC" = 1 ] && [ "$(jqm .stderr.bytes)" -gt 2048 ] && [ "$(jqm .stderr.truncated)" = false ]'
	check "$mode: its excerpt keeps the first line and the exception, excerpt_truncated true" \
		eval '[ "$(jqm .stderr.excerpt | head -1)" = "Traceback (most recent call last):" ] &&
		      [ "$(jq -j .stderr.excerpt "$OUT" | tail -1)" = "ZeroDivisionError: division by zero" ] &&
		      jqm .stderr.excerpt | grep -Eq "^\[sbx: [0-9]+ bytes left out\]$" &&
		      [ "$(jqm .stderr.excerpt_truncated)" = true ] && [ "$(jqm .stdout.excerpt_truncated)" = false ]'

	# --- usage -----------------------------------------------------------------
	as_mode "$SBX" run --attach --no-attach -p shell -c true > /dev/null 2> "$M/u1.err"
	check "$mode: --attach with --no-attach: 64" test $? = 64
	ln -sf /nonexistent "$M/link.json"
	as_mode "$SBX" run --config "$M/config.json" --policy "$POL" --key "$KEY" --manifest "$M/link.json" \
		--artifacts "$M/u2" -p shell -c true > /dev/null 2> "$M/u2.err"
	rc=$?
	check "$mode: --manifest through a symlink: 64, the symlink left as it was" \
		eval '[ "$rc" = 64 ] && grep -q "symbolic link" "$M/u2.err" && [ -L "$M/link.json" ]'
	echo '{}' | as_mode "$SBX" run --artifacts "$M/u3" --stdin - > /dev/null 2> "$M/u3.err"
	check "$mode: --stdin with the job on stdin: 64" test $? = 64

	check "$mode: nothing left behind" nothing_left
done
finish
