#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# template-lifetime.sh - when a run is born from a template, and how long a
# template lives (sbx(1), TEMPLATES): opting out, the first run starting
# one, the idle timeout, max runs, a changed profile, a broken or fake
# template (a cold run, never a refusal), who may talk to a template,
# sbx batch, and the catalog's checks of the `template` field.
#
# Each scenario runs as root and as the unprivileged test user
# (SBX_E2E_MODES narrows that, SBX_E2E_SECTIONS the numbered sections: the
# VM suite runs those that touch cgroups, tests/vm/guest.sh).
. "$SBX_SRCDIR/tests/e2e/lib.sh"
. "$SBX_SRCDIR/tests/e2e/template-lib.sh"

bound_sbx 120

# A copy of the shipped catalog that the test may change.
POLICY="$T/policy"
cp -r "$SBX_SRCDIR/policy" "$POLICY"
chmod -R a+rX "$T"

# with_cfg JQ: this mode's config with JQ applied, until restore_cfg.
with_cfg() {
	cp "$M/config.json" "$M/config.base.json"
	jq "$1" "$M/config.base.json" > "$M/config.json"
	chmod 0644 "$M/config.json"
}
restore_cfg() { mv "$M/config.base.json" "$M/config.json"; }

# The wire records of src/common/template-proto.h, from Python: connect
# to SOCKET, send one STATUS request, print what came back ("reply KIND",
# "closed" or "error ERRNO").
read -r -d '' ASK <<'PY'
import errno, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(5)
try:
    s.connect(sys.argv[1])
    digest = sys.argv[2].encode()
    s.send(struct.pack("<5I17s3x", 0x73627874, 1, int(sys.argv[3]), 0, 0, digest))
    r = s.recv(4096)
    print("reply %d" % struct.unpack_from("<I", r)[0] if r else "closed")
except socket.timeout:
    print("timeout")
except OSError as e:
    print("error " + errno.errorcode.get(e.errno, str(e.errno)))
PY
# A fake template at a socket path: answers every request with garbage.
read -r -d '' FAKE <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[2], "w").write("ready")
while True:
    c, _ = s.accept()
    try:
        c.recv(4096)
        c.send(os.urandom(272))
    except OSError:
        pass
    c.close()
PY

for mode in ${SBX_E2E_MODES:-root user}; do
	setup_mode $mode
	PROFILE=python-analysis
	mkpyjob "$M/py.json" 'import numpy; print("sum", numpy.arange(4).sum())'

	# 1. templates: false in the host config: always cold, none started.
	if section 1; then
		with_cfg '. + {templates: false}'
		sbx_run "$M/py.json"
		expect_rc 0 "$mode: templates false: the run"
		check "$mode: templates false: a cold run ($(jqm .timing.start))" is_cold_run
		check "$mode: templates false: no template started" test -z "$(tpl_pid python-analysis)"
		restore_cfg
	fi

	# 2. The first run that wants a template runs cold at once and has
	#    one started in the background; the next is born from it.
	if section 2; then
		sbx_run "$M/py.json"
		expect_rc 0 "$mode: the first run with templates on"
		check "$mode: it ran cold, without waiting: a template is starting for the next runs ($(jqm .timing.template_fallback))" \
			eval 'is_cold_run && [[ "$(jqm .timing.template_fallback)" == *"one is starting for the runs after this one"* ]]'
		tpl_wait python-analysis running
		TPID=$(tpl_pid python-analysis)
		check "$mode: the first run started a template (pid ${TPID:-none})" test -n "$TPID"
		check "$mode: the template runs detached: not in the caller's session, its parent not sbx" \
			eval '[ -n "$TPID" ] && [ "$(ps -o sid= -p "$TPID")" != "$(ps -o sid= -p $$)" ] && [ "$(ps -o comm= -p "$(ps -o ppid= -p "$TPID" | tr -d " ")")" != sbx ]'
		check "$mode: the template is in a cgroup of its own, named for it" \
			eval '[ -n "$TPID" ] && grep -q "sbx-template-python-analysis-" /proc/$TPID/cgroup'
		# Charged to the caller, bounded: twice the profile's default memory.
		tmem=
		if [ -n "$TPID" ]; then
			if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
				tmem=$(cat "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/$TPID/cgroup)/memory.max" 2>/dev/null)
			else
				tmem=$(cat "/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/$TPID/cgroup)/memory.limit_in_bytes" 2>/dev/null)
			fi
		fi
		check "$mode: the template's cgroup has twice the profile's default memory as its limit ($tmem)" \
			test "$tmem" = $((2 * $(jq .defaults.memory_mib "$POLICY/profiles/python-analysis.json") * 1048576))
		check "$mode: the template has no secret: no key file open, no payload fd" \
			eval '[ -n "$TPID" ] && ! ls -l /proc/$TPID/fd 2>/dev/null | grep -q -- "$KEY"'
		check "$mode: the template has exactly one thread" \
			eval '[ -n "$TPID" ] && [ "$(ls /proc/$TPID/task | wc -l)" -eq 1 ]'
		check "$mode: the template runs as the caller ($(ps -o user= -p "${TPID:-1}"))" \
			eval '[ -n "$TPID" ] && [ "$(stat -c %U /proc/$TPID)" = "$PRINCIPAL" ]'
		digest=$(tpl_field python-analysis digest)
		tpl_note_digests
		sbx_run "$M/py.json"
		expect_rc 0 "$mode: the second run"
		check "$mode: the second run was born from the template ($(jqm .timing.template) = $digest)" is_template_run "$digest"
		check "$mode: its output is right" test "$(res sum)" = 6
	fi

	# 3. --no-template: cold, the template untouched.
	if section 3; then
		runs0=$(tpl_field python-analysis runs)
		sbx_run "$M/py.json" --no-template
		expect_rc 0 "$mode: --no-template"
		check "$mode: --no-template: cold, the template's runs unchanged ($runs0)" \
			eval 'is_cold_run && [ "$(tpl_field python-analysis runs)" = "$runs0" ]'
	fi

	# 4. More than one BLAS thread wanted (cpu_cores 2): cold.
	if section 4; then
		mkpyjob "$M/cores2.json" 'import os; print("omp", os.environ.get("OMP_NUM_THREADS"))' '{limits: {cpu_cores: 2}}'
		sbx_run "$M/cores2.json"
		expect_rc 0 "$mode: cpu_cores 2"
		check "$mode: cpu_cores 2: a cold run (the template's BLAS has one thread), OMP_NUM_THREADS $(res omp)" \
			eval 'is_cold_run && [ "$(res omp)" = 2 ]'
	fi

	# 5. sbx batch uses the template.
	if section 5; then
		mkdir -p "$M/batch"
		for i in 1 2 3; do cp "$M/py.json" "$M/batch/j$i.json"; done
		as_mode timeout 120 "$SBX" batch --config "$M/config.json" --policy "$POLICY" --key "$KEY" \
			--store "$M/store" --out "$M/batch.out" --artifacts "$M/batch.art" "$M/batch" >"$M/batch.jsonl" 2>"$M/batch.err"
		brc=$?
		jq -r '.run_id // empty' "$M/batch.jsonl" >> "$T/run-ids" 2>/dev/null
		check "$mode: sbx batch of 3 python jobs: all succeed, all born from the template" \
			eval '[ $brc -eq 0 ] && [ "$(jq -r "select(.run_id) | .status + \" \" + .timing.start" "$M/batch.jsonl" | sort | uniq -c | tr -s " ")" = " 3 succeeded template" ]'
	fi

	# 6. Who may talk to the template: its uid only.
	if section 6; then
		sock=$(find "$M/state" -type s -name "*$digest*" 2>/dev/null | head -1)
		check "$mode: the socket is named for the profile and digest ($sock)" \
			eval '[ -S "$sock" ] && [[ "$(basename "$sock")" == *python-analysis-$digest.sock ]]'
		v=$(as_mode python3 -c "$ASK" "$sock" "$digest" 2)
		check "$mode: the template's own uid gets a STATUS reply ($v)" test "$v" = "reply 103"
		runs0=$(tpl_field python-analysis runs)
		v=$(as_mode python3 -c "$ASK" "$sock" "0000000000000000" 1)
		check "$mode: a SPAWN with another digest gets an ERROR, nothing cloned ($v)" \
			eval '[ "$v" = "reply 104" ] && [ "$(tpl_field python-analysis runs)" = "$runs0" ]'
		if [ "$MODE" = user ]; then
			v=$(python3 -c "$ASK" "$sock" "$digest" 2)
			check "$mode: another uid (root) is closed on, no STATUS ($v)" eval '[ -S "$sock" ] && { [ "$v" = closed ] || [[ "$v" == error* ]]; }'
			v=$(python3 -c "$ASK" "$sock" "$digest" 1)
			check "$mode: another uid's SPAWN is closed on ($v), nothing cloned" \
				eval '[ -S "$sock" ] && { [ "$v" = closed ] || [[ "$v" == error* ]]; } && [ "$(tpl_field python-analysis active)" = 0 ]'
		else
			v=$(runuser -u "$SBX_TEST_USER" -- python3 -c "$ASK" "$sock" "$digest" 2)
			check "$mode: another uid cannot reach root's template socket ($v)" eval '[ -S "$sock" ] && { [ "$v" = "error EACCES" ] || [ "$v" = closed ]; }'
		fi
		check "$mode: the template still runs after those requests" eval '[ -n "$TPID" ] && [ "$(tpl_pid python-analysis)" = "$TPID" ]'
	fi

	# 7. A changed profile: a new digest and a template of its own.
	if section 7; then
		jq '.env.SBX_TEST_CHANGED = "1"' "$SBX_SRCDIR/policy/profiles/python-analysis.json" > "$POLICY/profiles/python-analysis.json"
		chmod 0644 "$POLICY/profiles/python-analysis.json"
		sbx_run "$M/py.json"
		tpl_wait python-analysis running
		sbx_run "$M/py.json"
		expect_rc 0 "$mode: a run after the profile changed"
		tpl_note_digests
		check "$mode: changed profile: born from a template of another digest ($(jqm .timing.template), was $digest)" \
			eval 'is_template_run && [ "$(jqm .timing.template)" != "$digest" ]'
		cp "$SBX_SRCDIR/policy/profiles/python-analysis.json" "$POLICY/profiles/python-analysis.json"
	fi

	# 8. A broken template (an import fails): the run is cold, not refused.
	if section 8; then
		jq '.template.imports += ["sbx_no_such_module"]' "$SBX_SRCDIR/policy/profiles/python-analysis.json" > "$POLICY/profiles/python-analysis.json"
		ensure_prepared "$POLICY" python-analysis
		sbx_run "$M/py.json"
		expect_rc 0 "$mode: a run whose template cannot import"
		check "$mode: broken template: the first run is cold, a start under way ($(jqm .timing.template_fallback))" \
			eval 'is_cold_run && [[ "$(jqm .timing.template_fallback)" == *"one is starting"* ]]'
		tpl_wait python-analysis failed
		check "$mode: broken template: status says failed, naming the module ($(tpl_failed_field python-analysis why))" \
			eval '[[ "$(tpl_failed_field python-analysis why)" == *sbx_no_such_module* ]]'
		failed_at=$(jq -r .at "$M"/state/templates/*-python-analysis-*.failed 2>/dev/null | head -1)
		sbx_run "$M/py.json"
		expect_rc 0 "$mode: the next run of it"
		check "$mode: broken template: the next run is cold and names the failure ($(jqm .timing.template_fallback))" \
			eval 'is_cold_run && [[ "$(jqm .timing.template_fallback)" == *"start failed"*sbx_no_such_module* ]]'
		check "$mode: broken template: that run did not try again (still failed, at $failed_at)" \
			eval 'tpl_state_is python-analysis failed && [ -n "$failed_at" ] && [ "$(jq -r .at "$M"/state/templates/*-python-analysis-*.failed | head -1)" = "$failed_at" ]'
		tpl start --profile python-analysis >/dev/null 2>"$M/tpl-start.err"; trc=$?
		check "$mode: broken template: sbx template start tries again at once and says why it failed ($trc: $(head -c 300 "$M/tpl-start.err"))" \
			eval '[ $trc -eq 69 ] && grep -q sbx_no_such_module "$M/tpl-start.err" && grep -q "^sbx: Hint: " "$M/tpl-start.err"'
		tpl_note_digests
		cp "$SBX_SRCDIR/policy/profiles/python-analysis.json" "$POLICY/profiles/python-analysis.json"
		tpl_stop_all
	fi

	# 8a. A start slower than template_start_seconds: given up, the
	#     template killed with its cgroup; runs meanwhile start cold at
	#     once, and after it report why.
	if section 8a; then
		ts=$((3 + 2 * SLACK_MS / 1000))
		with_cfg ". + {template_start_seconds: $ts}"
		jq '.template.warm = "import time\ntime.sleep(600)\n"' "$SBX_SRCDIR/policy/profiles/python-analysis.json" \
			> "$POLICY/profiles/python-analysis.json"
		ensure_prepared "$POLICY" python-analysis
		tpl start --profile python-analysis >/dev/null 2>"$M/slow-start.err" &
		spid=$!
		wait_for 10 tpl_state_is python-analysis starting
		check "$mode: slow start: status says starting while it imports" tpl_state_is python-analysis starting
		sbx_run "$M/py.json"
		expect_rc 0 "$mode: a run during the start"
		check "$mode: slow start: a run meanwhile is cold, not held up ($(jqm .timing.template_fallback))" \
			eval 'is_cold_run && [[ "$(jqm .timing.template_fallback)" == *"is starting"* || "$(jqm .timing.template_fallback)" == *"start failed"* ]]'
		wait "$spid"; src=$?
		check "$mode: slow start: sbx template start gives up after $ts s: 69, naming template_start_seconds ($src: $(head -c 300 "$M/slow-start.err"))" \
			eval '[ $src -eq 69 ] && grep -q "not ready within $ts s (template_start_seconds)" "$M/slow-start.err"'
		sdigest=$(tpl_failed_field python-analysis digest)
		check "$mode: slow start: status says failed ($sdigest)" tpl_state_is python-analysis failed
		check "$mode: slow start: nothing of it is left: no socket, no record, no cgroup" \
			eval '[ -n "$sdigest" ] && ! ls "$M"/state/templates/*"-$sdigest".sock "$M"/state/templates/*"-$sdigest".json >/dev/null 2>&1 && [ -z "$(find /sys/fs/cgroup -maxdepth 4 -name "sbx-template-python-analysis-$sdigest*" 2>/dev/null)" ]'
		sbx_run "$M/py.json"
		check "$mode: slow start: the next run is cold and says why ($(jqm .timing.template_fallback))" \
			eval 'is_cold_run && [[ "$(jqm .timing.template_fallback)" == *"not ready within $ts s"* ]]'
		tpl_note_digests
		cp "$SBX_SRCDIR/policy/profiles/python-analysis.json" "$POLICY/profiles/python-analysis.json"
		restore_cfg
	fi

	# 8b. The profile's reset code runs in each template run, before the
	#     job, after the job's environment is set.
	if section 8b; then
		jq '.template.reset = "import builtins, os\nbuiltins.SBX_RESET = os.environ.get(\"HOME\")\n"' \
			"$SBX_SRCDIR/policy/profiles/python-analysis.json" > "$POLICY/profiles/python-analysis.json"
		ensure_prepared "$POLICY" python-analysis
		mkpyjob "$M/reset.json" 'import builtins; print("reset", getattr(builtins, "SBX_RESET", "none"))'
		sbx_run "$M/reset.json"
		tpl_wait python-analysis running
		sbx_run "$M/reset.json"
		tpl_note_digests
		check "$mode: the profile's reset code ran in the template run, with the job's environment ($(res reset))" \
			eval 'is_template_run && [ "$(res reset)" = /work ]'
		cp "$SBX_SRCDIR/policy/profiles/python-analysis.json" "$POLICY/profiles/python-analysis.json"
		tpl_stop_all
	fi

	# 8b2. sbx template stop while a start is under way: it waits for the
	#      start to end and stops that template too, rather than leave it
	#      to come up at a path already gone.
	if section 8b2; then
		jq '.template.warm = "import time\ntime.sleep(4)\n"' "$SBX_SRCDIR/policy/profiles/python-analysis.json" \
			> "$POLICY/profiles/python-analysis.json"
		ensure_prepared "$POLICY" python-analysis
		tpl start --profile python-analysis >/dev/null 2>&1 &
		spid=$!
		wait_for 10 tpl_state_is python-analysis starting
		check "$mode: stop during a start: status said starting" tpl_state_is python-analysis starting
		tpl stop >/dev/null 2>&1
		wait "$spid"
		check "$mode: stop during a start: the template that came up was stopped and exited" \
			wait_for 10 eval '[ -z "$(template_pids)" ]'
		tpl_note_digests
		cp "$SBX_SRCDIR/policy/profiles/python-analysis.json" "$POLICY/profiles/python-analysis.json"
	fi

	# 8c. A first run through a catalog path that is not canonical (a
	#     symbolic link): the template started in the background is the
	#     one the next run of that path looks for.
	if section 8c; then
		ln -sfn "$POLICY" "$M/policy-link"
		POLICY_REAL=$POLICY POLICY="$M/policy-link"
		sbx_run "$M/py.json"
		expect_rc 0 "$mode: a first run through a linked catalog path"
		tpl_wait python-analysis running
		sbx_run "$M/py.json"
		expect_rc 0 "$mode: the next run through it"
		check "$mode: the next run through a linked catalog path was born from the template its first run started ($(jqm .timing.start); $(jqm .timing.template_fallback))" \
			is_template_run
		tpl_stop_all
		POLICY=$POLICY_REAL
	fi

	# 9. A fake template at the socket's path (the real one dead): cold.
	if section 9; then
		tpl_start python-analysis
		digest=$(tpl_field python-analysis digest)
		sock=$(find "$M/state" -type s -name "*$digest*" 2>/dev/null | head -1)
		[ -n "$TPID" ] && kill -KILL "$TPID"
		wait_for 5 test ! -d "/proc/$TPID"
		rm -f "$sock" "$M/fake.ready"
		(as_mode python3 -c "$FAKE" "$sock" "$M/fake.ready" & echo $! > "$M/fake.pid"; wait) &
		wait_for 5 test -s "$M/fake.ready"
		sbx_run "$M/py.json"
		expect_rc 0 "$mode: a run whose template socket answers garbage"
		check "$mode: garbage from the template: the run succeeds ($(jqm .timing.start)), right output" \
			eval '{ is_cold_run || is_template_run; } && [ "$(res sum)" = 6 ]'
		fake=$(pgrep -f -- "$M/fake.ready")
		[ -n "$fake" ] && kill $fake
		# The socket may be a new template's by now: sbx template stop ends it.
		tpl_stop_all
		[ -S "$sock" ] && [ -z "$(tpl_pid python-analysis)" ] && rm -f "$sock"
	fi

	# 10. Idle timeout and max runs.
	if section 10; then
		# Idle 2 s, longer where a run takes seconds to reach its
		# template (the emulated guest): it must not idle out between
		# its start and the first run.
		idle=$((2 + 4 * SLACK_MS / 1000))
		with_cfg ". + {template_idle_seconds: $idle, template_max_runs: 2}"
		tpl_start python-analysis
		t=$TPID
		sbx_run "$M/py.json"
		sbx_run "$M/py.json"
		check "$mode: max runs 2: two runs born from the template" is_template_run
		check "$mode: max runs 2: the template exits after its second run" wait_for 5 test ! -d "/proc/$t"
		sbx_run "$M/py.json"
		expect_rc 0 "$mode: max runs 2: the third run is not refused"
		tpl_wait python-analysis running
		t=$(tpl_pid python-analysis) td=$(tpl_field python-analysis digest)
		self=yes; tpl_cg_self_removed "${td:-none}" || self=no
		how="without sbx gc"; [ $self = yes ] || how="by sbx gc (cgroup v2: a delegated parent keeps processes out)"
		check "$mode: the third run had a new template started (${t:-none})" test -n "$t"
		check "$mode: idle $idle s: the template exits within $((idle + 3)) s of its last run" \
			eval '[ -n "$t" ] && wait_for $((idle + 3)) test ! -d "/proc/$t"'
		# Nothing of it is left without sbx gc: a state dir may never see
		# another sbx command.
		check "$mode: idle exit: its cgroup is gone too, $how ($(tpl_cg_left "${td:-none}" | tr '\n' ' '))" \
			eval '[ -n "$td" ] && tpl_cg_gone "$td" $self'
		check "$mode: idle exit: its socket is gone, status lists no running template" \
			eval '[ -n "$t" ] && [ -z "$(find "$M/state" -type s)" ] && [ -z "$(tpl_pid python-analysis)" ]'
		restore_cfg
	fi

	# 11. sbx template stop, then status.
	if section 11; then
		tpl_start python-analysis
		t=$TPID td=$(tpl_field python-analysis digest)
		self=yes; tpl_cg_self_removed "${td:-none}" || self=no
		how="without sbx gc"; [ $self = yes ] || how="by sbx gc (cgroup v2: a delegated parent keeps processes out)"
		tpl stop --profile python-analysis >/dev/null 2>&1
		check "$mode: sbx template stop --profile: the template exits" eval '[ -n "$t" ] && wait_for 10 test ! -d "/proc/$t"'
		check "$mode: sbx template stop: its socket is gone" eval '[ -n "$t" ] && [ -z "$(find "$M/state" -type s)" ]'
		check "$mode: sbx template stop: its cgroup is gone too, $how ($(tpl_cg_left "${td:-none}" | tr '\n' ' '))" \
			eval '[ -n "$td" ] && tpl_cg_gone "$td" $self'
		as_mode timeout 30 "$SBX" gc --config "$M/config.json" >/dev/null 2>&1
		check "$mode: nothing left behind at the end" eval 'nothing_left_tpl && nothing_left'
		check "$mode: after stop and gc: no cgroup of the mode's templates left" no_template_cgroup
	fi
	TPL_DIGESTS=
done

# 12. The catalog's checks of `template` (the same both ways; as root):
#     refused as any invalid catalog is (a profile file that is not JSON
#     at all gives the reference exit status), naming the file and the
#     JSON path.
MODE=root M="$T/root"
mkjob "$T/shell.json" shell 'true'
P="$T/bad-json"
rm -rf "$P"; cp -r "$SBX_SRCDIR/policy" "$P"
echo '{' > "$P/profiles/shell.json"
as_mode "$SBX" run --config "$M/config.json" --policy "$P" --key "$M/key" --store "$M/store" "$T/shell.json" >/dev/null 2>&1
badrc=$?
for bad in shell-template python-c python-module; do
	P="$T/bad-$bad"
	rm -rf "$P"; cp -r "$SBX_SRCDIR/policy" "$P"
	case $bad in
	shell-template) jq '. + {template: {imports: ["os"]}}' "$SBX_SRCDIR/policy/profiles/shell.json" > "$P/profiles/shell.json"; want=template ;;
	python-c) jq '.argv = ["/usr/bin/python3", "-c", "{code}", "{args}"]' "$SBX_SRCDIR/policy/profiles/python-analysis.json" > "$P/profiles/python-analysis.json"; want='argv\[1\]' ;;
	python-module) jq '.template.imports += ["os; import evil"]' "$SBX_SRCDIR/policy/profiles/python-analysis.json" > "$P/profiles/python-analysis.json"; want='template.imports' ;;
	esac
	as_mode "$SBX" run --config "$M/config.json" --policy "$P" --key "$M/key" --store "$M/store" "$T/shell.json" >"$T/bad.out" 2>"$T/bad.err"
	rc=$?
	check "root: catalog with a bad template ($bad): refused as an invalid catalog is, exit $badrc ($rc)" \
		eval '[ $rc -eq $badrc ] && [ $rc -ne 0 ]'
	check "root: catalog with a bad template ($bad): the error names the file and $want ($(head -2 "$T/bad.err" | tr '\n' ' '))" \
		grep -q "profiles/[a-z-]*\.json: .*$want" "$T/bad.err"
done

finish
