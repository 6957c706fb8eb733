#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# template-cli.sh - `sbx template start|stop|status` (sbx(1), TEMPLATES):
# start, status and stop of python-analysis's template, their --json
# against schema/template.schema.json, a run cloned from it, a changed
# profile (a new digest) making the next run start a new template and the
# old one stop, "templates": false giving cold runs, a profile without a
# template refused with a Hint, and sbx gc removing what a stopped
# template left.  As root and as the unprivileged test user.
. "$SBX_SRCDIR/tests/e2e/lib.sh"
need python3
python3 -c 'from jsonschema import Draft202012Validator' 2>/dev/null ||
	{ echo "Bail out! python3-jsonschema is not installed (tools/install-deps test installs it)"; exit 1; }

bound_sbx 120

# A copy of the shipped catalog that the test may change.
POLICY="$T/policy"
cp -r "$SBX_SRCDIR/policy" "$POLICY"
chmod -R a+rX "$POLICY"

# valid SCHEMA FILE: FILE holds one JSON line valid against SCHEMA.
valid() {
	python3 - "$SBX_SRCDIR/schema/$1.schema.json" "$2" <<'PY'
import json, sys
from jsonschema import Draft202012Validator
v = Draft202012Validator(json.load(open(sys.argv[1])))
lines = open(sys.argv[2]).read().splitlines()
errs = [] if len(lines) == 1 else ["%d lines" % len(lines)]
if not errs:
    errs = [e.message for e in v.iter_errors(json.loads(lines[0]))]
for e in errs:
    print("# " + e[:300])
sys.exit(1 if errs else 0)
PY
}

# tpl ARGS...: sbx template ARGS as this mode, stdout in $TOUT, stderr
# in $TERR, the status in $TRC.
TN=0
tpl() {
	TN=$((TN + 1))
	TOUT="$M/tpl.$TN.out" TERR="$M/tpl.$TN.err"
	as_mode "$SBX" template --config "$M/config.json" --policy "$POLICY" "$@" >"$TOUT" 2>"$TERR"
	TRC=$?
}
# field PROFILE KEY: KEY of PROFILE's running template in `status --json`.
field() {
	tpl status --json
	jq -r --arg p "$1" --arg k "$2" \
		'[.templates[] | select(.profile == $p and .state == "running")][0][$k] // empty' "$TOUT"
}
gone() { ! kill -0 "$1" 2>/dev/null; }
# wait_running PROFILE: until a template of the digest a run wants now
# runs (one a run started in the background), as long as a start may take.
wait_running() {
	local i
	for i in $(seq $(( (${SBX_E2E_TEMPLATE_START_SECONDS:-60} + SLACK_MS / 1000) * 5 ))); do
		[ -n "$(field "$1" pid)" ] && return 0
		sleep 0.2
	done
	return 1
}
wait_gone() {
	local i
	for i in $(seq 50); do gone "$1" && return 0; sleep 0.1; done
	return 1
}
# The template cgroups of this mode's state: none may stay after gc.
tpl_cgroups() {
	find /sys/fs/cgroup -maxdepth 6 -type d -name 'sbx-template-python-analysis-*' 2>/dev/null |
		while read -r d; do
			for r in "$M"/state/templates/*.json; do
				[ -f "$r" ] && jq -e --arg d "$d" '.cgroups | index($d)' "$r" >/dev/null && echo "$d"
			done
		done
}

for mode in ${SBX_E2E_MODES:-root user}; do
	setup_mode $mode
	# A template left by a failed assertion exits by itself soon.
	jq '. + {template_idle_seconds: 60}' "$M/config.json" > "$M/config.new" && mv "$M/config.new" "$M/config.json"
	chmod 0644 "$M/config.json"
	ensure_prepared "$POLICY" python-analysis
	mkjob "$M/py.json" python-analysis 'import numpy; print("sum", int(numpy.arange(5).sum()))'

	# Nothing yet: status says so, in text and JSON.
	tpl status
	check "$mode: status without templates: exit 0, says none" \
		eval '[ $TRC -eq 0 ] && grep -q "^no templates" "$TOUT"'
	tpl status --json
	check "$mode: status --json without templates: an empty list, valid" \
		eval '[ $TRC -eq 0 ] && [ "$(jq ".templates | length" "$TOUT")" = 0 ] && valid template "$TOUT"'

	# A profile without a template: a usage error with a Hint, nothing started.
	tpl start -p shell
	check "$mode: start -p shell: 64 with a Hint ($(head -c 200 "$TERR"))" \
		eval '[ $TRC -eq 64 ] && grep -q "shell: the profile has no template" "$TERR" && grep -q "^sbx: Hint: " "$TERR"'
	tpl start -p shell --json
	check "$mode: start -p shell --json: ok false, exit 64, a hint, valid" \
		eval '[ $TRC -eq 64 ] && jq -e ".ok == false and .exit == 64 and (.hint | length) > 0" "$TOUT" >/dev/null && valid template "$TOUT"'
	tpl start -p no-such-profile
	check "$mode: start of an unknown profile: 64" test $TRC -eq 64

	# start: the template runs, detached, and status shows it.
	tpl start -p python-analysis --json
	check "$mode: start -p python-analysis: exit 0 ($(head -c 300 "$TERR"))" test $TRC -eq 0
	check "$mode: start --json is valid and names the template" \
		eval 'valid template "$TOUT" && jq -e ".templates[0].profile == \"python-analysis\"" "$TOUT" >/dev/null'
	PID=$(field python-analysis pid) DIGEST=$(field python-analysis digest)
	check "$mode: status --json: running, pid $PID, digest $DIGEST" \
		eval '[ -n "$PID" ] && kill -0 "$PID" && [[ $DIGEST =~ ^[0-9a-f]{16}$ ]] && valid template "$TOUT"'
	check "$mode: the template is the caller's and not sbx's child" \
		eval '[ -n "$PID" ] && [ "$(stat -c %U /proc/$PID)" = "$PRINCIPAL" ] && [ "$(ps -o comm= -p "$(ps -o ppid= -p "$PID" | tr -d " ")")" != sbx ]'
	check "$mode: its socket is in the state dir, named for the profile and digest" \
		eval 'ls "$M/state/templates/"*"-python-analysis-$DIGEST.sock" >/dev/null'
	tpl status
	check "$mode: status (text) lists it running" \
		eval 'grep -Eq "^python-analysis +$DIGEST +running +$PID " "$TOUT"'
	tpl start -p python-analysis
	check "$mode: a second start keeps the one running" \
		eval '[ $TRC -eq 0 ] && [ "$(field python-analysis pid)" = "$PID" ]'

	# A run is cloned from it.
	sbx_run "$M/py.json"
	expect_rc 0 "$mode: a run of python-analysis"
	check "$mode: it started from the template ($(jqm .timing.start) $(jqm .timing.template))" \
		eval '[ "$(jqm .timing.start)" = template ] && [ "$(jqm .timing.template)" = "$DIGEST" ] && [ "$(jqm .timing.template_fallback)" = null ]'
	check "$mode: its output is right" grep -q "sum 10" "$ART/.sbx/stdout"
	check "$mode: the template counted it" test "$(field python-analysis runs)" = 1

	# --no-template: cold, nothing to explain.
	sbx_run "$M/py.json" --no-template
	expect_rc 0 "$mode: --no-template"
	check "$mode: --no-template: cold without a fallback reason" \
		eval '[ "$(jqm .timing.start)" = cold ] && [ "$(jqm .timing.template)" = null ] && [ "$(jqm .timing.template_fallback)" = null ]'

	# templates: false in the host config: every run cold.
	cp "$M/config.json" "$M/config.base.json"
	jq '. + {templates: false}' "$M/config.base.json" > "$M/config.json"
	sbx_run "$M/py.json"
	expect_rc 0 "$mode: templates false"
	check "$mode: templates false: cold, and the template untouched" \
		eval '[ "$(jqm .timing.start)" = cold ] && [ "$(jqm .timing.template_fallback)" = null ] && [ "$(field python-analysis runs)" = 1 ]'
	mv "$M/config.base.json" "$M/config.json"

	# A changed profile is a new digest: status calls the old one stale,
	# the next run starts a new template and the old one stops.
	jq '.description = "changed by template-cli.sh"' "$SBX_SRCDIR/policy/profiles/python-analysis.json" \
		> "$POLICY/profiles/python-analysis.json"
	chmod a+r "$POLICY/profiles/python-analysis.json"
	ensure_prepared "$POLICY" python-analysis
	tpl status --json
	check "$mode: after a change of the profile, status says stale" \
		eval 'jq -e --arg d "$DIGEST" "[.templates[] | select(.digest == \$d)][0].state == \"stale\"" "$TOUT" >/dev/null'
	sbx_run "$M/py.json"
	expect_rc 0 "$mode: a run of the changed profile"
	check "$mode: it ran cold and had a new template started ($(jqm .timing.start); $(jqm .timing.template_fallback))" \
		eval '[ "$(jqm .timing.start)" = cold ] && [[ "$(jqm .timing.template_fallback)" == *"one is starting"* ]]'
	wait_running python-analysis
	check "$mode: the old template exited" wait_gone "$PID"
	sbx_run "$M/py.json"
	expect_rc 0 "$mode: the next run of the changed profile"
	NEW=$(jqm .timing.template)
	check "$mode: it started from the new template ($(jqm .timing.start) $NEW, was $DIGEST; $(jqm .timing.template_fallback))" \
		eval '[ "$(jqm .timing.start)" = template ] && [[ $NEW =~ ^[0-9a-f]{16}$ ]] && [ "$NEW" != "$DIGEST" ]'
	NPID=$(field python-analysis pid)
	check "$mode: status shows the new one running (pid $NPID), the old one's socket gone" \
		eval '[ -n "$NPID" ] && [ "$NPID" != "$PID" ] && [ "$(field python-analysis digest)" = "$NEW" ] && ! ls "$M/state/templates/"*"-$DIGEST.sock" >/dev/null 2>&1'

	# stop: it exits; gc then removes its record and cgroup.
	tpl stop --json
	check "$mode: stop --json: it was running, valid" \
		eval '[ $TRC -eq 0 ] && valid template "$TOUT" && jq -e "[.templates[] | select(.was_running)] | length == 1" "$TOUT" >/dev/null'
	check "$mode: the template exited" wait_gone "$NPID"
	tpl status --json
	check "$mode: status after stop: none" eval '[ "$(jq ".templates | length" "$TOUT")" = 0 ]'
	as_mode "$SBX" gc --config "$M/config.json" --json >"$M/gc.json" 2>"$M/gc.err"
	check "$mode: gc removed the exited templates ($(cat "$M/gc.json"))" \
		eval 'jq -e ".templates_removed >= 1" "$M/gc.json" >/dev/null && valid gc "$M/gc.json"'
	check "$mode: no template record, socket or cgroup left (the profiles' lock files stay)" \
		eval '[ -z "$(ls "$M/state/templates/" 2>/dev/null | grep -v "\.lock$")" ] && [ -z "$(tpl_cgroups)" ] && [ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "sbx-template-python-analysis-$NEW" 2>/dev/null)" ]'
	check "$mode: nothing left behind" nothing_left
	cp "$SBX_SRCDIR/policy/profiles/python-analysis.json" "$POLICY/profiles/python-analysis.json"
done

finish
