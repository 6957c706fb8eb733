#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# batch-progress.sh - sbx batch as a person sees it on a terminal (under
# script(1), so that stderr is a tty): a progress line with done, running,
# failed, queued, the elapsed time and an estimate, redrawn in place and
# erased before the summary; none when stderr is a file or with -q, so
# that logs and pipelines get only the summary.  With --json the summary
# is also the last line on stdout, one object after the manifests
# (schema/batch-summary.schema.json is checked by tests/schemas.sh).
# As root and as the unprivileged test user; every sbx runs under
# timeout(1).
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need timeout script jq

plan 20

for mode in root user; do
	setup_mode "$mode"
	mkdir -p "$M/jobs"
	# Six jobs, two at a time, one of them failing: the line has
	# something to show for a few seconds.
	for i in 1 2 3 4 5; do
		mkjob "$M/jobs/j$i.json" shell "sleep 1; echo $i"
	done
	mkjob "$M/jobs/j6.json" shell 'echo bad >&2; exit 3'
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/jobs"
	# The batch, as a script run under script(1) as the mode's user.
	cat >"$M/batch.sh" <<-EOS
	#!/bin/bash
	d=\$1; shift
	exec timeout -k 5 120 "$SBX" batch --config "$M/config.json" --policy "$SBX_SRCDIR/policy" \\
		--key "$KEY" --store "$M/store" --out "\$d" --artifacts "\$d.art" -j 2 "\$@" "$M/jobs" \\
		>"\$d.stdout"
	EOS
	chmod 0755 "$M/batch.sh"
	[ "$mode" = user ] && chown "$SBX_TEST_USER" "$M/batch.sh"

	# On a terminal.
	as_mode script -qec "$M/batch.sh $M/tty" "$M/tty.log" </dev/null >/dev/null 2>&1
	rc=$?
	tr '\r' '\n' <"$M/tty.log" | sed 's/\x1b\[K//g' >"$M/tty.lines"
	check "$mode: on a tty: the batch ran its 6 jobs (6 manifests on stdout), exit 1 (one failed)" \
		eval '[ "$(wc -l <"$M/tty.stdout")" -eq 6 ] && [ "$rc" -eq 1 ]'
	pat='^sbx: batch: [0-9]+ done, [0-9]+ running, [0-9]+ failed, [0-9]+ queued; [0-9]+:[0-9][0-9], '
	check "$mode: on a tty: a progress line with done, running, failed, queued, elapsed" \
		grep -Eq "$pat" "$M/tty.lines"
	check "$mode: on a tty: the first lines have no estimate yet, later ones do" \
		eval 'grep -Eq "${pat}no estimate yet$" "$M/tty.lines" &&
			grep -Eq "${pat}about [0-9]+:[0-9][0-9] left$" "$M/tty.lines"'
	check "$mode: on a tty: the line counts the failed job" \
		grep -Eq '^sbx: batch: [0-9]+ done, [0-9]+ running, 1 failed, ' "$M/tty.lines"
	check "$mode: on a tty: the line is erased (\\r ESC[K) before the summary" \
		eval 'grep -q $'"'"'\r\e\[Ksbx: batch: 6 jobs, 6 run in'"'"' "$M/tty.log"'
	[ "$mode" = user ] && chmod -R a+rX "$M/tty.art" 2>/dev/null

	# Not a terminal: only the summary.
	as_mode "$M/batch.sh" "$M/file" 2>"$M/file.err" </dev/null
	check "$mode: stderr a file: no progress line, the summary" \
		eval '! grep -q "queued;" "$M/file.err" && grep -q "^sbx: batch: 6 jobs, 6 run in" "$M/file.err"'
	# -q on a terminal: no line either.
	as_mode script -qec "$M/batch.sh $M/quiet -q" "$M/quiet.log" </dev/null >/dev/null 2>&1
	check "$mode: -q on a tty: no progress line" eval '! grep -q "queued;" "$M/quiet.log"'

	# --json: the summary as the last line of stdout.
	as_mode "$M/batch.sh" "$M/json" --json 2>"$M/json.err" </dev/null
	check "$mode: --json: 6 manifests, then one summary object" \
		eval '[ "$(wc -l <"$M/json.stdout")" -eq 7 ] &&
			tail -n 1 "$M/json.stdout" | jq -e ".kind == \"batch-summary\" and .jobs == 6 and .ran == 6 and
				.by_status.succeeded == 5 and .by_status.failed == 1 and .exit == 1" >/dev/null'
	check "$mode: --json: the manifests before it are manifests" \
		eval 'head -n 6 "$M/json.stdout" | jq -e "has(\"signature\")" >/dev/null'
	jq -r '.run_id // empty' "$M"/*.stdout >>"$T/run-ids" 2>/dev/null
	check "$mode: nothing left behind" nothing_left
done
finish
