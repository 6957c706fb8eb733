#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# batch.sh - sbx batch: many job files through admission.  200 jobs with
# max_concurrent 4 (none lost, none run twice, never more than 4 at once),
# a bad job among good ones, entries that are not job files (a symbolic
# link, a FIFO), a list on stdin, resuming an interrupted batch, SIGINT
# and sbx cancel mid-batch (signed cancelled manifests, nothing left),
# SIGKILL of the batch (its runs are cancelled all the same), and what
# resuming must not trust: a forged or foreign result in --out, one left
# by an earlier version of the job file, one signed with another key, a
# huge one, a symbolic link, a FIFO, a truncated one.
#
# Each scenario runs as root and as the unprivileged test user.  Every
# sbx invocation runs under timeout(1) and every wait is bounded.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need timeout sha256sum

now_ms() { echo $(($(date +%s%N) / 1000000)); }
wait_for() {
	local deadline=$(($(now_ms) + $1 * 1000)); shift
	until "$@"; do
		[ "$(now_ms)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# batch TAG SOURCE [sbx options...]: sbx batch in the foreground; stdout
# in $M/TAG.out, stderr in TAG.err, manifests in TAG.d (or $OUTDIR),
# artifacts under TAG.art, the exit status in $RC.
batch() {
	local tag=$1 src=$2; shift 2
	OUT="$M/$tag.out" ERR="$M/$tag.err"
	as_mode timeout -k 5 "${BATCH_TIMEOUT:-120}" "$SBX" batch --config "$CFG" --policy "$SBX_SRCDIR/policy" \
		--key "${BATCH_KEY:-$KEY}" --store "$M/store" --out "${OUTDIR:-$M/$tag.d}" --artifacts "$M/$tag.art" \
		"$@" "$src" <"${STDIN:-/dev/null}" >"$OUT" 2>"$ERR"
	RC=$?
	record_ids "$OUT"
}
# The same in the background; $BG is the pid to wait for, TAG.rc the status.
batch_bg() {
	local tag=$1 src=$2; shift 2
	(as_mode timeout -k 5 120 "$SBX" batch --config "$CFG" --policy "$SBX_SRCDIR/policy" \
		--key "$KEY" --store "$M/store" --out "$M/$tag.d" --artifacts "$M/$tag.art" "$@" \
		"$src" </dev/null >"$M/$tag.out" 2>"$M/$tag.err"
	 echo $? >"$M/$tag.rc") &
	BG=$!
}
collect() {
	wait "$BG" 2>/dev/null
	OUT="$M/$1.out" ERR="$M/$1.err" RC=$(cat "$M/$1.rc" 2>/dev/null || echo 255)
	record_ids "$OUT"
}
# Run ids for nothing_left, which looks for each one's cgroup and temp dir.
record_ids() { jq -r '.run_id // empty' "$1" >> "${IDS:-$T/run-ids}" 2>/dev/null; }
# The same look for many ids at once: one walk of the cgroup tree.
none_of_these_left() {
	local left
	left=$( (find /sys/fs/cgroup -maxdepth 6 -type d -name 'sbx-*' 2>/dev/null
		 ls -d /tmp/sbx-run-* 2>/dev/null) | grep -F -f "$1" | head -3)
	[ -z "$left" ] || { diag "left behind: $left"; return 1; }
}

# The sbx batch process under pid $1 (timeout, runuser and the subshell
# are in between): the first process named sbx below it, found through
# /proc/PID/task/*/children, never by a machine-wide search.
batch_pid() {
	local queue=$1 p c
	while [ -n "$queue" ]; do
		set -- $queue; p=$1; shift; queue="$*"
		if [ "$(cat /proc/$p/comm 2>/dev/null)" = sbx ]; then echo "$p"; return 0; fi
		for c in $(cat /proc/$p/task/*/children 2>/dev/null); do queue="$queue $c"; done
	done
	return 1
}
live_runs() { ls "$M/state/runs" 2>/dev/null | wc -l; }
at_least_running() { [ "$(live_runs)" -ge "$1" ]; }

# The manifest line $1 verifies with jq + openssl alone.
line_signed() {
	local d="$M/sig" line=$1
	mkdir -p "$d"
	printf '%s\n' "$line" | jq -cjS 'del(.signature)' > "$d/body" &&
		printf '%s\n' "$line" | jq -r '.signature.value' | openssl base64 -d -A > "$d/sig" &&
		openssl pkeyutl -verify -pubin -inkey "$KEY.pub" -rawin -in "$d/body" -sigfile "$d/sig" >/dev/null 2>&1
}

# The highest number of runs whose [started_at, ended_at] overlap, from
# the manifests on stdin (an end before a start of the same millisecond:
# the batch starts a run only once it has reaped one).
max_overlap() {
	jq -r '"\(.timing.started_at) 1", "\(.timing.ended_at) 0"' |
		sort -k1,1 -k2,2n | awk '{ n += $2 ? 1 : -1; if (n > m) m = n } END { print m + 0 }'
}

for mode in root user; do
	setup_mode "$mode"
	CFG="$M/config4.json"
	jq '. + {max_concurrent: 4}' "$M/config.json" > "$CFG"
	chmod 0644 "$CFG"

	# 1. 200 trivial jobs, max_concurrent 4: every job run exactly once.
	mkdir -p "$M/many"
	for i in $(seq 1 200); do
		printf '{"runtime_profile": "shell", "code": "echo %d"}\n' "$i" > "$M/many/job$i.json"
	done
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/many"
	IDS="$M/many.ids" batch many "$M/many"
	check "$mode: 200 jobs: exit 0" test "$RC" -eq 0
	check "$mode: 200 jobs: 200 manifest lines on stdout, 200 in --out" \
		eval '[ "$(wc -l < "$OUT")" -eq 200 ] && [ "$(ls "$M/many.d" | wc -l)" -eq 200 ]'
	check "$mode: 200 jobs: 200 distinct run ids, all succeeded" \
		eval '[ "$(jq -r .run_id "$OUT" | sort -u | wc -l)" -eq 200 ] &&
		      [ "$(jq -r .status "$OUT" | sort -u)" = succeeded ]'
	# Each job's sha256 exactly once among the manifests, with its own
	# output: no job lost, none run twice, none given another's manifest.
	(cd "$M/many" && sha256sum -- *.json) | awk '{ print $2 "\t" $1 }' | sort > "$M/many.want"
	(cd "$M/many.d" && jq -r '[input_filename, .job_sha256, (.stdout.excerpt | rtrimstr("\n"))] | @tsv' -- *.json) |
		sort > "$M/many.got"
	# What each stored manifest should say: its job's digest, its job's number.
	sed 's/^job\([0-9]*\)\.json\t\(.*\)$/job\1.json\t\2\t\1/' "$M/many.want" > "$M/many.want3"
	bad=$(diff "$M/many.want3" "$M/many.got" | grep -c '^[<>]')
	check "$mode: 200 jobs: 200 distinct jobs, each job_sha256 exactly once on stdout" \
		eval 'cut -f2 "$M/many.want" | sort | cmp -s - <(jq -r .job_sha256 "$OUT" | sort) &&
		      [ "$(cut -f2 "$M/many.want" | sort -u | wc -l)" -eq 200 ]'
	check "$mode: 200 jobs: each manifest in --out is its own job's, with its output ($bad lines differ)" \
		test "$bad" -eq 0
	check "$mode: 200 jobs: the stored manifests are the lines printed, byte for byte" \
		eval 'cmp -s <(sort "$OUT") <(cat "$M/many.d"/*.json | sort)'
	check "$mode: 200 jobs: a line's signature verifies" line_signed "$(sed -n 100p "$OUT")"
	peak=$(max_overlap < "$OUT")
	check "$mode: 200 jobs: at most 4 runs at once (saw $peak)" test "$peak" -le 4
	check "$mode: 200 jobs: the summary counts them" grep -q "200 jobs, 200 run in .* 200 succeeded" "$ERR"
	check "$mode: 200 jobs: nothing left behind" eval 'none_of_these_left "$M/many.ids" && nothing_left'

	# 2. A bad job among good ones: its line says invalid (65) and why;
	# the others run.  A refused one says 77.
	mkdir -p "$M/mixed"
	for i in 1 2 3; do mkjob "$M/mixed/ok$i.json" shell "echo $i"; done
	printf '{"runtime_profile": "shell", "code": ' > "$M/mixed/bad.json"
	mkjob "$M/mixed/nope.json" no-such-profile "true"
	# A name with a newline must not forge a line of the batch's own.
	mkjob "$M/mixed/x
sbx: batch: forged.json: succeeded.json" shell "exit 3"
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/mixed"
	batch mixed "$M/mixed"
	check "$mode: bad job among good: exit 1 (not all succeeded)" test "$RC" -eq 1
	check "$mode: bad job among good: the three good ones succeeded" \
		test "$(jq -r 'select(.status == "succeeded") | .stdout.excerpt' "$OUT" | sort | tr -d '\n')" = 123
	check "$mode: bad job among good: its manifest says invalid, invalid_job, and where" \
		eval '[ "$(jq -r .status "$M/mixed.d/bad.json")" = invalid ] &&
		      [ "$(jq -r .reason_code "$M/mixed.d/bad.json")" = invalid_job ] &&
		      [[ "$(jq -r .reason "$M/mixed.d/bad.json")" == *bad.json*line* ]]'
	check "$mode: bad job among good: stderr names it with 65 and why" \
		grep -q "^sbx: batch: $M/mixed/bad.json: invalid (65): .*bad.json.*line" "$ERR"
	check "$mode: bad job among good: the unknown profile is refused (77)" \
		eval '[ "$(jq -r .status "$M/mixed.d/nope.json")" = refused ] &&
		      grep -q "nope.json: refused (77)" "$ERR"'
	check "$mode: bad job among good: summary" grep -q "6 jobs, 6 run .* 3 succeeded, 1 failed, 1 invalid, 1 refused" "$ERR"
	check "$mode: a job name with a newline is escaped in the batch's lines, forges none" \
		eval 'grep -q "mixed/x\\\\x0asbx: batch: forged.json: succeeded.json: failed (1)" "$ERR" &&
		      ! grep -q "^sbx: batch: forged" "$ERR"'

	# 3. Entries that are not job files are not run: a symbolic link (to
	# a valid job: following it would run a file the directory's writer
	# chose from anywhere) and a FIFO (which would block its reader).
	mkdir -p "$M/odd"
	mkjob "$M/odd/good.json" shell "echo good"
	mkjob "$M/elsewhere.json" shell "echo followed"
	ln -s "$M/elsewhere.json" "$M/odd/link.json"
	mkfifo "$M/odd/fifo.json"
	[ "$mode" = user ] && chown -R -h "$SBX_TEST_USER" "$M/odd"
	batch odd "$M/odd"
	check "$mode: link and FIFO: exit 1" test "$RC" -eq 1
	check "$mode: link and FIFO: only the regular file ran" \
		eval '[ "$(wc -l < "$OUT")" -eq 1 ] && [ "$(jq -r .stdout.excerpt "$OUT")" = good ] &&
		      [ "$(ls "$M/odd.d")" = good.json ]'
	check "$mode: link and FIFO: each named on stderr, not run" \
		eval 'grep -q "odd/link.json: a symbolic link; not run" "$ERR" &&
		      grep -q "odd/fifo.json: a FIFO; not run" "$ERR" && grep -q "2 not job files" "$ERR"'

	# 4. A list on stdin; blank lines ignored; two jobs with one base
	# name (one manifest name) refused before anything runs.
	mkdir -p "$M/lst/a" "$M/lst/b"
	mkjob "$M/lst/a/one.json" shell "echo 1"
	mkjob "$M/lst/b/two.json" shell "echo 2"
	mkjob "$M/lst/three" shell "echo 3"
	mkjob "$M/lst/b/one.json" shell "echo other"
	printf '%s\n\n%s\n%s\n' "$M/lst/a/one.json" "$M/lst/b/two.json" "$M/lst/three" > "$M/lst/list"
	STDIN="$M/lst/list" batch lst -
	check "$mode: stdin list: exit 0, three manifests, named after the files" \
		eval '[ "$RC" -eq 0 ] && [ "$(wc -l < "$OUT")" -eq 3 ] &&
		      [ "$(ls "$M/lst.d" | tr "\n" " ")" = "one.json three.json two.json " ]'
	check "$mode: stdin list: each ran its own job" \
		test "$(jq -r .stdout.excerpt "$M/lst.d/one.json" "$M/lst.d/two.json" "$M/lst.d/three.json" | tr -d '\n')" = 123
	printf '%s\n%s\n' "$M/lst/a/one.json" "$M/lst/b/one.json" > "$M/lst/dup"
	STDIN="$M/lst/dup" batch dup -
	check "$mode: stdin list with one manifest name twice: 65, names both, nothing ran" \
		eval '[ "$RC" -eq 65 ] && grep -q "a/one.json and .*b/one.json would both have the manifest one.json" "$ERR" &&
		      [ ! -s "$OUT" ] && [ -z "$(ls -A "$M/dup.d" 2>/dev/null)" ]'
	OUTDIR="$M/lst/a" batch same "$M/lst/a"
	check "$mode: --out the job directory itself: usage error 64" \
		eval '[ "$RC" -eq 64 ] && grep -q "holds the job file" "$ERR"'

	# 5. Resume after an interrupted batch: no job runs twice.  One at a
	# time; the fifth job sleeps until SIGINT stops the batch.
	mkdir -p "$M/res"
	for i in 1 2 3 4 6 7 8; do mkjob "$M/res/j$i.json" shell "echo $i"; done
	mkjob "$M/res/j5.json" shell "sleep 60"
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/res"
	batch_bg res1 "$M/res" --jobs 1
	wait_for 30 eval '[ -e "$M/res1.d/j4.json" ] && at_least_running 1'
	bp=$(batch_pid "$BG")
	kill -INT "$bp" 2>/dev/null
	collect res1
	check "$mode: interrupted batch: 130, four done, the fifth cancelled and not kept" \
		eval '[ "$RC" -eq 130 ] && [ "$(ls "$M/res1.d" | tr "\n" " ")" = "j1.json j2.json j3.json j4.json " ] &&
		      [ "$(jq -r .status "$OUT" | sort | uniq -c | tr -s " " | tr "\n" ,)" = " 1 cancelled, 4 succeeded," ]'
	check "$mode: interrupted batch: summary says what was not started" grep -q "3 not started" "$ERR"
	# The same batch again, the slow job now quick: only the other four run.
	mkjob "$M/res/j5.json" shell "echo 5"
	[ "$mode" = user ] && chown "$SBX_TEST_USER" "$M/res/j5.json"
	OUTDIR="$M/res1.d" batch res2 "$M/res"
	check "$mode: resumed batch: exit 0, four skipped (summary says so), four run" \
		eval '[ "$RC" -eq 0 ] && grep -q "8 jobs, 4 run .* 4 succeeded; 4 skipped" "$ERR" &&
		      [ "$(jq -r .stdout.excerpt "$OUT" | sort | tr -d "\n")" = 5678 ]'
	check "$mode: resumed batch: no job ran twice (job_sha256 once each across both batches)" \
		eval '[ "$(jq -r "select(.status == \"succeeded\") | .job_sha256" "$M/res1.out" "$M/res2.out" | sort | uniq -d | wc -l)" -eq 0 ] &&
		      [ "$(jq -r .job_sha256 "$M/res1.d"/*.json | sort -u | wc -l)" -eq 8 ]'

	# 6. SIGINT mid-batch with four running; sbx cancel of one run first.
	# --jobs above max_concurrent is cut down to it: only four start
	# (queued runs would have state entries too), so three are left.
	mkdir -p "$M/slow"
	for i in $(seq 1 8); do mkjob "$M/slow/s$i.json" shell "sleep 60; echo $i"; done
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/slow"
	batch_bg slow "$M/slow" --jobs 64
	wait_for 30 at_least_running 4
	victim=$(ls "$M/state/runs" | head -1)
	as_mode timeout 10 "$SBX" cancel --config "$CFG" "$victim" >/dev/null 2>"$M/cancel.err"
	check "$mode: sbx cancel of one run of the batch exits 0" test $? -eq 0
	# Its job ends cancelled and the next one starts in its place.
	wait_for 30 eval '[ "$(wc -l < "$M/slow.out")" -ge 1 ] && at_least_running 4'
	# A second batch on the same --out is refused while this one runs.
	OUTDIR="$M/slow.d" batch slow2 "$M/slow"
	check "$mode: a second batch on the same --out: 75, in use" \
		eval '[ "$RC" -eq 75 ] && grep -q "in use by another sbx batch" "$ERR"'
	bp=$(batch_pid "$BG")
	kill -INT "$bp" 2>/dev/null
	collect slow
	check "$mode: SIGINT mid-batch: 130" test "$RC" -eq 130
	check "$mode: SIGINT mid-batch: five cancelled manifests (four running, one sbx cancel), one of them the victim" \
		eval '[ "$(jq -r .status "$OUT" | sort | uniq -c | tr -s " ")" = " 5 cancelled" ] &&
		      jq -r .run_id "$OUT" | grep -qx "$victim"'
	check "$mode: SIGINT mid-batch: the cancelled manifests are signed" line_signed "$(tail -1 "$OUT")"
	check "$mode: SIGINT mid-batch: three not started; nothing kept in --out" \
		eval 'grep -q "3 not started" "$ERR" && [ -z "$(ls -A "$M/slow.d")" ]'
	check "$mode: --jobs 64 with max_concurrent 4: said so, ran 4 at a time" \
		grep -q "jobs 64 is above max_concurrent 4; running 4 at a time" "$ERR"
	check "$mode: SIGINT mid-batch: nothing left behind" nothing_left

	# 7. SIGKILL of the batch itself, four running: each run is
	# cancelled all the same (the batch's death is their SIGTERM), ends,
	# and leaves nothing, not even a half-written manifest in --out.
	batch_bg killed "$M/slow"
	wait_for 30 at_least_running 4
	ls "$M/state/runs" >> "$T/run-ids"
	bp=$(batch_pid "$BG")
	kill -KILL "$bp" 2>/dev/null
	collect killed
	check "$mode: SIGKILL of the batch: its runs end within the bound" wait_for 30 eval '[ "$(live_runs)" -eq 0 ]'
	check "$mode: SIGKILL of the batch: nothing in --out, no .partial file" \
		eval '[ -z "$(ls -A "$M/killed.d")" ]'
	check "$mode: SIGKILL of the batch: nothing left behind" nothing_left
	OUTDIR="$M/killed.d" batch again "$M/res"
	check "$mode: SIGKILL of the batch: its lock on --out went with its runs; a new batch there runs all" \
		eval '[ "$RC" -eq 0 ] && [ "$(wc -l < "$OUT")" -eq 8 ]'

	# 8. Resuming trusts only a result it can verify: signed with the
	# batch's key, for the job file as it is now.  Anything else in
	# --out under a job's name is no result: the job runs again.
	mkdir -p "$M/trust" "$M/trust.d"
	mkjob "$M/trust/three.json" shell "exit 3"
	# (a) A forged result for a job that fails.
	printf '{"status":"succeeded"}\n' > "$M/trust.d/three.json"
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/trust" "$M/trust.d"
	OUTDIR="$M/trust.d" batch forged "$M/trust"
	check "$mode: a forged {\"status\":\"succeeded\"} in --out: the job runs, exit 1, counted failed" \
		eval '[ "$RC" -eq 1 ] && [ "$(jq -r .status "$OUT")" = failed ] &&
		      grep -q "1 jobs, 1 run .* 1 failed; 1 run again (what --out held under their names did not verify)" "$ERR" &&
		      ! grep -q skipped "$ERR"'
	check "$mode: a forged result: stderr says why the job runs again" \
		grep -q "^sbx: batch: $M/trust/three.json: no result to trust in --out ($M/trust.d/three.json: signature: missing or not an object); running it again" "$ERR"
	check "$mode: a forged result: replaced in --out by the run's signed manifest" \
		eval '[ "$(jq -r .status "$M/trust.d/three.json")" = failed ] &&
		      line_signed "$(cat "$M/trust.d/three.json")"'
	# (f) A verified result that is not a success stays done, counted
	# as not succeeded, as before.
	OUTDIR="$M/trust.d" batch failedkept "$M/trust"
	check "$mode: a verified failed result: skipped, exit 1, counted not succeeded" \
		eval '[ "$RC" -eq 1 ] && [ ! -s "$OUT" ] &&
		      grep -q "0 run .*; 1 skipped (manifest in --out; 1 of them not succeeded)" "$ERR"'

	# (b) A genuine result of an earlier version of the job file.
	mkdir -p "$M/edit"
	mkjob "$M/edit/job.json" shell "echo old"
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/edit"
	batch edit1 "$M/edit"
	mkjob "$M/edit/job.json" shell "exit 3"
	[ "$mode" = user ] && chown "$SBX_TEST_USER" "$M/edit/job.json"
	OUTDIR="$M/edit1.d" batch edit2 "$M/edit"
	check "$mode: job file edited after its manifest: the job runs again, exit 1" \
		eval '[ "$RC" -eq 1 ] && [ "$(jq -r .status "$OUT")" = failed ] && ! grep -q skipped "$ERR"'
	check "$mode: job file edited: stderr says its manifest is another job file's" \
		grep -q "edit1.d/job.json: the result of another job file (its job_sha256 is not the file's)); running it again" "$ERR"
	check "$mode: job file edited: the stored manifest is the new run's, with the file's sha256" \
		test "$(jq -r .job_sha256 "$M/edit1.d/job.json")" = "$(sha256sum < "$M/edit/job.json" | cut -d" " -f1)"
	# (d) A genuine result of another job, under this job's name.
	mkjob "$M/edit/job.json" shell "echo good"
	[ "$mode" = user ] && chown "$SBX_TEST_USER" "$M/edit/job.json"
	OUTDIR="$M/edit1.d" batch edit3 "$M/edit"
	cp "$M/edit1.d/job.json" "$M/edit1.d/other.json"
	mkjob "$M/edit/other.json" shell "exit 3"
	[ "$mode" = user ] && chown "$SBX_TEST_USER" "$M/edit/other.json" "$M/edit1.d/other.json"
	OUTDIR="$M/edit1.d" batch edit4 "$M/edit"
	check "$mode: another job's signed manifest under a job's name: that job runs, exit 1" \
		eval '[ "$RC" -eq 1 ] && [ "$(jq -r .status "$OUT")" = failed ] &&
		      grep -q "2 jobs, 1 run .* 1 failed; 1 skipped (manifest in --out; 0 of them not succeeded)" "$ERR"'

	# (e) A genuine result signed with another key.
	as_mode "$SBX" keygen -o "$M/key2" 2>/dev/null
	mkdir -p "$M/k2"
	mkjob "$M/k2/k.json" shell "echo k"
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/k2"
	BATCH_KEY="$M/key2" batch k2a "$M/k2"
	OUTDIR="$M/k2a.d" batch k2b "$M/k2"
	check "$mode: a manifest signed with another key: the job runs again, its manifest now the batch key's" \
		eval '[ "$RC" -eq 0 ] && [ "$(wc -l < "$OUT")" -eq 1 ] && grep -q "1 jobs, 1 run" "$ERR" &&
		      line_signed "$(cat "$M/k2a.d/k.json")"'

	# (c) A huge result: not read (the file is 32 MiB of blanks and then
	# a forged success, which a byte-at-a-time reader takes minutes over).
	mkdir -p "$M/big" "$M/big.d"
	mkjob "$M/big/big.json" shell "echo big"
	{ head -c $((32 << 20)) /dev/zero | tr '\0' ' '; printf '{"status":"succeeded"}\n'; } > "$M/big.d/big.json"
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/big" "$M/big.d"
	t0=$(now_ms)
	BATCH_TIMEOUT=60 OUTDIR="$M/big.d" batch big "$M/big"
	took=$(($(now_ms) - t0))
	check "$mode: a 32 MiB result in --out: the job runs again, in $took ms (< 20 s)" \
		eval '[ "$RC" -eq 0 ] && [ "$took" -lt $((20000 + SLACK_MS)) ] &&
		      [ "$(jq -r .stdout.excerpt "$OUT")" = big ] && [ "$(stat -c %s "$M/big.d/big.json")" -lt 1048576 ] &&
		      grep -q "big.d/big.json: larger than 16777216 bytes); running it again" "$ERR"'

	# (g) A symbolic link to a genuine result, and a FIFO: neither
	# followed nor waited on; (h) a genuine result cut short.
	mkdir -p "$M/odd2"
	mkjob "$M/odd2/lnk.json" shell "echo lnk"
	mkjob "$M/odd2/fifo.json" shell "echo fifo"
	mkjob "$M/odd2/cut.json" shell "echo cut"
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/odd2"
	batch odd2a "$M/odd2"
	mv "$M/odd2a.d/lnk.json" "$M/lnk-real.json"
	ln -s "$M/lnk-real.json" "$M/odd2a.d/lnk.json"
	rm -f "$M/odd2a.d/fifo.json"
	mkfifo "$M/odd2a.d/fifo.json"
	head -c -2 "$M/odd2a.d/cut.json" > "$M/cut.tmp" && cat "$M/cut.tmp" > "$M/odd2a.d/cut.json"
	[ "$mode" = user ] && chown -R -h "$SBX_TEST_USER" "$M/odd2a.d"
	t0=$(now_ms)
	BATCH_TIMEOUT=60 OUTDIR="$M/odd2a.d" batch odd2b "$M/odd2"
	took=$(($(now_ms) - t0))
	check "$mode: a symlink, a FIFO and a truncated result in --out: all three jobs run again, in $took ms" \
		eval '[ "$RC" -eq 0 ] && [ "$took" -lt $((20000 + SLACK_MS)) ] &&
		      [ "$(jq -r ".stdout.excerpt | rtrimstr(\"\\n\")" "$OUT" | sort | tr "\n" " ")" = "cut fifo lnk " ]'
	check "$mode: a symlink, a FIFO, a truncated result: each replaced by a whole manifest" \
		eval '[ -f "$M/odd2a.d/lnk.json" ] && [ ! -L "$M/odd2a.d/lnk.json" ] && [ -f "$M/odd2a.d/fifo.json" ] &&
		      line_signed "$(cat "$M/odd2a.d/cut.json")"'
	check "$mode: resume checks: nothing left behind" nothing_left
done

finish
