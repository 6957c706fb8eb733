# SPDX-License-Identifier: GPL-2.0-or-later
# template-lib.sh - what the template tests (template-*.sh) share, on top
# of lib.sh: starting, finding and stopping the template of a profile,
# background runs, and "nothing left" that knows the template is not a
# leftover.
#
# The template is a process the test starts (sbx template start, or the
# first run that wants one, in the background); the tests find it only through
# `sbx template status --json` and signal only that pid.  Every other
# process they look at is in a run cgroup of a run they started.

need timeout pgrep

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_for SECONDS COMMAND...: poll until the command succeeds.
wait_for() {
	local deadline=$(($(now_ms) + $1 * 1000 + 2 * SLACK_MS)); shift
	until "$@"; do
		[ "$(now_ms)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# tpl CMD [options...]: sbx template CMD for this mode, output on stdout.
tpl() {
	local cmd=$1; shift
	as_mode timeout 60 "$SBX" template "$cmd" --config "${CFG:-$M/config.json}" \
		--policy "${POLICY:-$SBX_SRCDIR/policy}" "$@"
}

# tpl_status PROFILE: the one status record of PROFILE's template from
# `sbx template status --json` (compact JSON), empty when there is none.
# The record is found by its members, whatever the envelope.
tpl_status() {
	tpl status --json 2>/dev/null | jq -c --arg p "$1" \
		'[.. | objects | select(.profile? == $p and (.pid? | type) == "number")] | .[0] // empty' 2>/dev/null
}
# tpl_pid PROFILE: the pid of PROFILE's template, if one runs.
tpl_pid() {
	local p
	p=$(tpl_status "$1" | jq -r '.pid // empty' 2>/dev/null)
	[ -n "$p" ] && [ -d "/proc/$p" ] && echo "$p"
}
tpl_field() { tpl_status "$1" | jq -r ".$2 // empty" 2>/dev/null; }

# tpl_state_is PROFILE STATE: sbx template status lists PROFILE's
# template at the digest a run would want in STATE (running, starting,
# failed...).
tpl_state_is() {
	tpl status --json 2>/dev/null | jq -e --arg p "$1" --arg s "$2" \
		'[.templates[] | select(.profile == $p and .state == $s)] | length > 0' >/dev/null 2>&1
}
# tpl_failed_field PROFILE FIELD: FIELD of PROFILE's failed start in
# status (why, digest), empty when there is none.
tpl_failed_field() {
	tpl status --json 2>/dev/null | jq -r --arg p "$1" \
		"[.templates[] | select(.profile == \$p and .state == \"failed\")][0].$2 // empty" 2>/dev/null
}
# tpl_wait PROFILE STATE: until it is, as long as a start may take (a run
# that finds no template starts one in the background and does not wait).
tpl_wait() {
	wait_for $(( ${SBX_E2E_TEMPLATE_START_SECONDS:-60} + 5 )) tpl_state_is "$1" "$2"
}

# tpl_start PROFILE: sbx template start, then its pid in $TPID.
tpl_start() {
	TPID=
	ensure_prepared "${POLICY:-$SBX_SRCDIR/policy}" "$1"
	tpl start --profile "$1" >/dev/null 2>"$M/tpl-start.err" ||
		diag "sbx template start $1: $(head -c 600 "$M/tpl-start.err")"
	TPID=$(tpl_pid "$1")
	tpl_note_digests
	[ -n "$TPID" ]
}

# tpl_stop_all: stop every template of this mode and wait until their
# processes are gone (the pids from status, which the test started).
tpl_stop_all() {
	local pids
	tpl_note_digests
	pids=$(tpl status --json 2>/dev/null | jq -r '.. | objects | .pid? // empty | numbers' 2>/dev/null)
	tpl stop >/dev/null 2>&1
	local p
	for p in $pids; do wait_for 10 eval "[ ! -d /proc/$p ]" ||
		{ diag "template $p still runs 10 s after sbx template stop"; return 1; }
	done
	return 0
}

# no_template_cgroup: once this mode's templates are stopped, none of the
# cgroups of the digests it saw is left (sbx-template-<profile>-<digest>
# below any hierarchy: the digest names this build and catalog).
TPL_DIGESTS=
tpl_note_digests() {
	local d
	for d in $(tpl status --json 2>/dev/null | jq -r '.. | objects | .digest? // empty | strings' 2>/dev/null); do
		[[ " $TPL_DIGESTS " == *" $d "* ]] || TPL_DIGESTS="$TPL_DIGESTS $d"
	done
}
# tpl_cg_left DIGEST: this mode's cgroups of the template of DIGEST.
tpl_cg_left() {
	find /sys/fs/cgroup -maxdepth 6 -type d -name "sbx-template-*-$1*" 2>/dev/null |
		if [ "$MODE" = user ]; then grep "/sbx-e2e-$SBX_TEST_USER/"; else grep -v "/sbx-e2e-"; fi | head -3
}
# tpl_cg_self_removed DIGEST: can the running template of DIGEST remove
# its own cgroups when it exits?  It moves to the parent first, which
# cgroup v2 refuses where the parent (not the root) has controllers
# enabled for its children: a delegated subtree.  There sbx gc does it.
tpl_cg_self_removed() {
	local c p
	c=$(tpl_cg_left "$1" | head -1)
	[ -n "$c" ] || return 0
	p=${c%/*}
	[ "$p" = /sys/fs/cgroup ] || [ ! -s "$p/cgroup.subtree_control" ]
}
# tpl_cg_gone DIGEST SELF: wait for the cgroups of DIGEST to go; with
# SELF "no", after an sbx gc.
tpl_cg_gone() {
	[ "$2" = yes ] || as_mode timeout 30 "$SBX" gc --config "$M/config.json" >/dev/null 2>&1
	wait_for 3 eval "[ -z \"\$(tpl_cg_left $1)\" ]"
}
no_template_cgroup() {
	local d left=
	tpl_note_digests
	for d in $TPL_DIGESTS; do
		# Only this mode's: the user's below its delegated cgroup, root's
		# elsewhere.
		left="$left$(find /sys/fs/cgroup -maxdepth 6 -type d -name "sbx-template-*-$d" 2>/dev/null |
			if [ "$MODE" = user ]; then grep "/sbx-e2e-$SBX_TEST_USER/"; else grep -v "/sbx-e2e-"; fi | head -3 | tr '\n' ' ')"
	done
	[ -z "$left" ] || { diag "template cgroups left: $left"; return 1; }
}

# is_template_run [DIGEST]: the last manifest says the run was born from a
# template (of DIGEST, if given).
is_template_run() {
	[ "$(jqm .timing.start)" = template ] || return 1
	[[ "$(jqm .timing.template)" =~ ^[0-9a-f]{16}$ ]] || return 1
	[ -z "${1:-}" ] || [ "$(jqm .timing.template)" = "$1" ]
}
is_cold_run() { [ "$(jqm .timing.start)" = cold ] && [ "$(jqm '.timing.template // "none"')" = none ]; }

# start TAG JOB [sbx options...]: sbx run in the background; manifest in
# $M/TAG.out, stderr TAG.err, events TAG.ev, artifacts TAG.art, exit
# status TAG.rc once it ends; $BG is its subshell.
start() {
	local tag=$1 job=$2; shift 2
	rm -rf "$M/$tag".{out,err,ev,rc,art}
	ensure_prepared "${POLICY:-$SBX_SRCDIR/policy}" "$(jq -r '.runtime_profile // empty' "$job" 2>/dev/null | head -c 64)"
	(as_mode timeout -k 5 90 "$SBX" run --config "${CFG:-$M/config.json}" --policy "${POLICY:-$SBX_SRCDIR/policy}" \
		--key "$KEY" --store "$M/store" --artifacts "$M/$tag.art" --events "$M/$tag.ev" \
		"$@" "$job" >"$M/$tag.out" 2>"$M/$tag.err"
	 echo $? >"$M/$tag.rc") &
	BG=$!
}
# collect TAG: wait for background run TAG; it becomes the current one.
collect() {
	local tag=$1
	wait "$BG" 2>/dev/null
	OUT="$M/$tag.out" ERR="$M/$tag.err" ART="$M/$tag.art" RC=$(cat "$M/$tag.rc" 2>/dev/null || echo 255)
	RUNS=$((RUNS + 1))
	[ "$MODE" = user ] && chmod -R a+rX "$ART" 2>/dev/null
	jq -r '.run_id // empty' "$OUT" >> "$T/run-ids" 2>/dev/null
	return 0
}
has_event() { grep -q "\"event\":\"$2\"" "$M/$1.ev" 2>/dev/null; }
run_id_of() { jq -r 'select(.event=="admitted") | .run_id' "$M/$1.ev" 2>/dev/null | head -1; }
# The pid of the sbx process of background run TAG.
sbx_pid() { pgrep -o -f "^${SBX_REAL:-$SBX} run .*--artifacts $M/$1.art " ; }

# run_cgroup ID: the run's cgroup directory (v2), or its memory one (v1).
run_cgroup() {
	find /sys/fs/cgroup -maxdepth 7 -type d -name "sbx-$1" 2>/dev/null | head -1
}
# cg_procs ID: the processes in run ID's cgroup (and below it).
cg_procs() {
	local d
	for d in $(find /sys/fs/cgroup -maxdepth 8 -path "*/sbx-$1*" -name cgroup.procs 2>/dev/null); do
		cat "$d" 2>/dev/null
	done | sort -un
}

# Every run id this script saw: manifests of sbx_run, background runs
# and events files.
our_ids() {
	local f
	{
		cat "$T/run-ids" 2>/dev/null
		for f in "$M"/*.out "$M"/*.ev; do [ -s "$f" ] && jq -r '.run_id // empty' "$f" 2>/dev/null; done
	} | grep -E '^[0-9a-f]{32}$' | sort -u
}

# nothing_left_tpl: what lib.sh's nothing_left checks, for this script's
# runs, with the running templates (found by status; the test started
# them) and their own processes set apart: no state entry, no run cgroup,
# no process of a run (in a run cgroup, or a child of a template), no temp
# dir, no mount.  The template's process is no leftover while it lives.
nothing_left_tpl() {
	local left= id cg tp c
	if [ -d "$M/state/runs" ] && [ -n "$(ls -A "$M/state/runs" 2>/dev/null)" ]; then left="$left state:$(ls "$M/state/runs")"; fi
	for id in $(our_ids); do
		cg=$(find /sys/fs/cgroup -maxdepth 7 -type d -name "sbx-$id" 2>/dev/null | head -3)
		[ -n "$cg" ] && left="$left cgroup:$(echo $cg)"
		ls -d /tmp/sbx-run-"$id"* >/dev/null 2>&1 && left="$left tmp:$id"
		grep -q "sbx-run-$id" /proc/self/mountinfo && left="$left mounts:$id"
	done
	for tp in $(tpl status --json 2>/dev/null | jq -r '.. | objects | .pid? // empty | numbers' 2>/dev/null); do
		# A template's children are its runs' inits: none once they ended.
		for c in $(cat /proc/"$tp"/task/*/children 2>/dev/null); do
			wait_for 2 eval "[ ! -d /proc/$c ]" || left="$left template-child:$c($(tr '\0' ' ' < /proc/"$c"/cmdline 2>/dev/null | head -c 80))"
		done
	done
	# The mode's own processes other than the templates: in user mode
	# the test user runs nothing but sbx and its templates; as root, the
	# sandboxes are this script's root_ids.
	local who=$SBX_TEST_USER procs p tps
	[ "$MODE" = user ] || who=$(seq -s, "$ROOT_IDS_FIRST" $((ROOT_IDS_FIRST + ROOT_IDS_COUNT - 1)))
	tps=" $(tpl status --json 2>/dev/null | jq -r '.. | objects | .pid? // empty | numbers' 2>/dev/null | tr '\n' ' ') "
	for i in $(seq 20); do
		procs=
		for p in $(pgrep -u "$who"); do [[ "$tps" == *" $p "* ]] || procs="$procs $p"; done
		[ -z "$procs" ] && break
		sleep 0.1
	done
	[ -n "$procs" ] && left="$left processes:$(for p in $procs; do printf '%s:%s;' "$p" "$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | head -c 80)"; done)"
	if [ -n "$left" ]; then diag "left behind:$left"; return 1; fi
	return 0
}

# mkpyjob FILE CODE [extra json]: a python-analysis job.
mkpyjob() { mkjob "$1" "${PROFILE:-python-analysis}" "$2" "${3:-}"; }

# res NAME: the value of line "NAME VALUE..." of the last run's stdout
# excerpt or, when it wrote one, of its out/result.txt.
res() {
	local f="$ART/result.txt"
	if [ -f "$f" ]; then sed -n "s/^$1 //p" "$f" | head -1; else jqm .stdout.excerpt | sed -n "s/^$1 //p" | head -1; fi
}
