# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh - shared helpers for sbx's end-to-end TAP tests.
#
# Every test runs the real sbx binary on real jobs.  Each scenario runs
# twice: as root, and as an unprivileged user (sbx is setuid-free, so that
# is the path most users take).  A missing prerequisite is a failure, never
# a skip; only a builder who is not root skips, saying so.  Probes follow the project's safety rule: they only touch
# processes, files and listeners that the test itself created.

set -u

: "${SBX_BUILDDIR:?SBX_BUILDDIR must point at the build tree}"
: "${SBX_SRCDIR:?SBX_SRCDIR must point at the source tree}"
SBX="$SBX_BUILDDIR/sbx"
SBX_TEST_USER=${SBX_TEST_USER:-sbxtest}
# Wall-clock bounds in the tests are for a real machine; the VM suite runs
# under software emulation, many times slower, and widens them by this
# much (the order of events and the statuses are checked all the same).
SLACK_MS=${SBX_E2E_SLACK_MS:-0}

tap_n=0
tap_failed=0
tap_planned=0

plan() { tap_planned=$1; echo "1..$1"; }
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
not_ok() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $*"; }
diag() { printf '# %s\n' "$*" | head -c 4000; echo; }
# section N: whether to run numbered section N of a script that has them
# (lifecycle.sh, template-hostile.sh).  SBX_E2E_SECTIONS="1 3 4" picks
# some (the VM suite, which reruns them under several launchers); unset,
# all run.
section() { [ -z "${SBX_E2E_SECTIONS:-}" ] || [[ " $SBX_E2E_SECTIONS " == *" $1 "* ]]; }
# check DESCRIPTION COMMAND... : ok when the command succeeds
check() {
	local d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
finish() {
	# Scripts with data-driven counts print the plan at the end.
	[ "$tap_planned" -eq 0 ] && { echo "1..$tap_n"; tap_planned=$tap_n; }
	if [ "$tap_n" -ne "$tap_planned" ]; then
		echo "# planned $tap_planned tests, ran $tap_n"
		exit 1
	fi
	[ "$tap_failed" -eq 0 ]
}

need() {
	local c
	for c in "$@"; do
		if ! command -v "$c" >/dev/null 2>&1; then
			echo "Bail out! required tool '$c' is not on PATH ($PATH) (tools/install-deps test installs it)"
			exit 1
		fi
	done
}

# Root first: a builder who is not root gets a skip that says so (the
# suite creates a user and delegates cgroups to it), not a complaint about
# a tool that is merely off that user's PATH.  CI runs as root and sets
# SBX_TEST_NO_SKIP=1, which makes the skip a failure.
if [ "$(id -u)" -ne 0 ]; then
	if [ "${SBX_TEST_NO_SKIP:-0}" = 1 ]; then
		echo "Bail out! the e2e suite needs root, and SBX_TEST_NO_SKIP=1 forbids skipping"
		exit 1
	fi
	echo "1..0 # SKIP needs root (the e2e suite creates an unprivileged user and delegates cgroups to it)"
	exit 0
fi
# runuser is in /usr/sbin, which a root shell normally has on PATH.
case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac
need jq openssl python3 runuser
[ -x "$SBX" ] || { echo "Bail out! $SBX is not built"; exit 1; }

# The unprivileged test user, created once.
if ! id "$SBX_TEST_USER" >/dev/null 2>&1; then
	useradd --system --create-home --shell /bin/sh "$SBX_TEST_USER" ||
		{ echo "Bail out! cannot create user $SBX_TEST_USER"; exit 1; }
fi
SBX_TEST_UID=$(id -u "$SBX_TEST_USER")

# Host ids for root's sandboxes in this script: 64 of its own, from a
# block above sbx's default range (2130706432 + 4096) and below systemd's
# foreign range, picked by the test user and the script's name.
ROOT_IDS_COUNT=64
ROOT_IDS_FIRST=$((2130706432 + 65536 + ($(printf '%s %s' "$SBX_TEST_USER" "$(basename "$0")" | cksum | cut -d' ' -f1) % 8192) * ROOT_IDS_COUNT))

# One scratch directory per test script, readable by the test user.
T=$(mktemp -d /tmp/sbx-e2e.XXXXXX)
chmod 0755 "$T"
# And one for prepared state, which sbx uses only below directories that
# nobody but root and the catalog's or the caller's owner can write
# (sbx-policy(5), prepared_dir): /tmp is writable by everyone, /var/lib
# is not.  $PREPARED, $PT/<mode>/prepared, is each mode's prepared_dir.
PT=$(mktemp -d "${SBX_E2E_PREPARED_BASE:-/var/lib}/sbx-e2e.XXXXXX") ||
	{ echo "Bail out! cannot make a directory in ${SBX_E2E_PREPARED_BASE:-/var/lib}"; exit 1; }
chmod 0755 "$PT"
# The templates this script's runs started (sbx(1) TEMPLATES) outlive
# each run by design; at the end they are stopped (SIGTERM to the pid of
# each record in the script's state dirs: processes the script's sbx
# started), and their cgroups go once empty.
stop_templates() {
	local r p c i
	wait_template_starts "${T:-/nonexistent}"/*/state
	for r in "${T:-/nonexistent}"/*/state/templates/*.json; do
		[ -f "$r" ] || continue
		p=$(jq -r '.pid // empty' "$r" 2>/dev/null)
		if [ -n "$p" ] && [ "$(cat /proc/"$p"/comm 2>/dev/null)" = sbx-template ]; then
			kill -TERM "$p" 2>/dev/null
			for i in $(seq 50); do [ -d /proc/"$p" ] || break; sleep 0.1; done
			# Still there after 5 s: it is ours, and the script ends.
			[ -d /proc/"$p" ] && kill -KILL "$p" 2>/dev/null
			for i in $(seq 30); do [ -d /proc/"$p" ] || break; sleep 0.1; done
		fi
		for c in $(jq -r '.cgroups[]? // empty' "$r" 2>/dev/null); do
			case $c in /sys/fs/cgroup/*/sbx-template-*|/sys/fs/cgroup/sbx-template-*) ;; *) continue ;; esac
			# An emptied cgroup may refuse rmdir for a moment (EBUSY).
			for i in $(seq 20); do rmdir "$c" 2>/dev/null; [ -d "$c" ] || break; sleep 0.1; done
		done
	done
}
# wait_template_starts STATE_DIR...: until no start of a template is
# under way there.  A run that finds no template has one started in the
# background (sbx template start), which holds its profile's lock in
# STATE_DIR/templates until the template answers or is gone, at most
# template_start_seconds; the wait is bounded a little past that.
wait_template_starts() {
	local d l
	for d in "$@"; do
		for l in "$d"/templates/*.lock; do
			[ -f "$l" ] || continue
			flock -s -w $(( ${SBX_E2E_TEMPLATE_START_SECONDS:-60} + 10 + SLACK_MS / 1000 )) "$l" true ||
				diag "a template start still holds $l"
		done
	done
}
# The pids of this mode's running templates: not a run's leftovers.
template_pids() {
	local r p
	for r in "$M"/state/templates/*.json; do
		[ -f "$r" ] || continue
		p=$(jq -r '.pid // empty' "$r" 2>/dev/null)
		[ -n "$p" ] && [ "$(cat /proc/"$p"/comm 2>/dev/null)" = sbx-template ] && echo "$p"
	done
}
cleanup_lib() {
	local rc=$?
	stop_templates
	[ -n "${T:-}" ] && rm -rf "$T"
	[ -n "${PT:-}" ] && rm -rf "$PT"
	exit $rc
}
trap cleanup_lib EXIT

# Per-mode environment: a home, a store, a config, a state dir and, for the
# unprivileged user, a cgroup delegated to it the way an administrator
# would (see delegate_cgroup).
#
# The VM suite (tests/vm) runs the same scripts under the launchers users
# really have; it sets SBX_E2E_ROOT_WRAP / SBX_E2E_USER_WRAP (a command
# prefix such as "systemd-run --scope -p Delegate=yes --"), and
# SBX_E2E_USER_CGROUP=none where the launcher delegates the cgroup itself,
# so that no cgroup_parent is configured, and SBX_E2E_USER_AS to start the
# user's commands some other way than runuser (a service with User=).
setup_mode() {
	MODE=$1
	M="$T/$MODE"
	PREPARED="$PT/$MODE/prepared"
	mkdir -p "$M/home" "$M/store" "$M/state" "$M/cfgdir" "$PT/$MODE"
	CG_PARENT= CG_LAUNCH=
	if [ "$MODE" = user ]; then
		PRINCIPAL=$SBX_TEST_USER
		chown -R "$SBX_TEST_USER" "$M" "$PT/$MODE"
		chmod 0700 "$M/state"
		[ "${SBX_E2E_USER_CGROUP:-hand}" = none ] || delegate_cgroup
	else
		PRINCIPAL=root
		chmod 0700 "$M/state"
	fi
	mkdir -p "$M/store/$PRINCIPAL"
	[ "$MODE" = user ] && chown -R "$SBX_TEST_USER" "$M/store"
	if [ -n "$CG_PARENT" ]; then
		printf '{"state_dir":"%s","cgroup_parent":"%s","prepared_dir":"%s"}\n' "$M/state" \
			"$CG_PARENT" "$PREPARED" > "$M/config.json"
	else
		# Root's sandboxes are host ids first + admission slot: this
		# script's own 64, so that nothing_left can tell its leftovers
		# from other runs' on the host (the default range is shared by
		# every state directory).
		printf '{"state_dir":"%s","root_ids":{"first":%d,"count":%d},"prepared_dir":"%s"}\n' \
			"$M/state" "$ROOT_IDS_FIRST" "$ROOT_IDS_COUNT" "$PREPARED" > "$M/config.json"
	fi
	# Where imports are slow (an emulated machine), templates get longer
	# to start (sbx(1): template_start_seconds).
	if [ -n "${SBX_E2E_TEMPLATE_START_SECONDS:-}" ]; then
		jq -c --argjson s "$SBX_E2E_TEMPLATE_START_SECONDS" '.template_start_seconds = $s' \
			"$M/config.json" > "$M/config.json.new" && mv "$M/config.json.new" "$M/config.json"
	fi
	# Root's results (runs without --artifacts) in the scratch directory,
	# not the host's results area; a user's go to its scratch HOME anyway.
	if [ "$MODE" = root ]; then
		jq -c --arg r "$M/results" '.results_dir = $r' "$M/config.json" > "$M/config.json.new" &&
			mv "$M/config.json.new" "$M/config.json"
	fi
	KEY="$M/key"
	as_mode "$SBX" keygen -o "$KEY" 2>/dev/null || { echo "Bail out! sbx keygen failed"; exit 1; }
}

# Delegate a cgroup to the test user on whatever this host has: sets
# CG_PARENT (for the config) and, on v2, CG_LAUNCH.  On v2 moving a process
# needs write access to cgroup.procs of the common ancestor of both
# cgroups, so the user's sbx must start inside the delegated directory:
# root puts each of the user's commands into its leaf "launch" first
# (as_mode), which is the documented recipe (docs/cgroups.md).
delegate_cgroup() {
	local name="sbx-e2e-$SBX_TEST_USER" c
	if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
		mkdir -p "/sys/fs/cgroup/$name/launch"
		chown -R "$SBX_TEST_USER" "/sys/fs/cgroup/$name"
		CG_LAUNCH="/sys/fs/cgroup/$name/launch/cgroup.procs"
	else
		for c in memory pids cpu cpuacct freezer; do
			[ -d "/sys/fs/cgroup/$c" ] || continue
			mkdir -p "/sys/fs/cgroup/$c/$name"
			chown -R "$SBX_TEST_USER" "/sys/fs/cgroup/$c/$name"
		done
	fi
	CG_PARENT="/$name"
}

# Run a command as the current mode's identity with a clean environment,
# through the scenario's launcher, if any.
as_mode() {
	if [ "$MODE" = user ]; then
		in_launch_cgroup ${SBX_E2E_USER_AS:-runuser -u "$SBX_TEST_USER" --} env -i PATH=/usr/bin:/bin HOME="$M/home" \
			XDG_RUNTIME_DIR="${SBX_E2E_USER_RUNTIME_DIR:-$M/state}" SBX_LIBEXECDIR="$SBX_BUILDDIR" \
			${SBX_E2E_USER_ENV:-} ${SBX_EXTRA_ENV:-} ${SBX_E2E_USER_WRAP:-} "$@"
	else
		env -i PATH=/usr/bin:/bin HOME="$M/home" SBX_LIBEXECDIR="$SBX_BUILDDIR" \
			${SBX_EXTRA_ENV:-} ${SBX_E2E_ROOT_WRAP:-} "$@"
	fi
}

# in_launch_cgroup COMMAND...: run COMMAND in $CG_LAUNCH's cgroup, if any.
in_launch_cgroup() {
	if [ -n "$CG_LAUNCH" ]; then
		sh -c 'echo $$ > "$0" && exec "$@"' "$CG_LAUNCH" "$@"
	else
		"$@"
	fi
}

# prepared_state CATALOG PROFILE: where this mode's prepared_dir keeps
# CATALOG's state of PROFILE (sbx-policy(5), prepared_dir: one directory a
# catalog, named by the first 16 hex digits of the SHA-256 of its
# canonical path).
prepared_state() {
	echo "$PREPARED/$(printf '%s' "$(realpath "$1")" | sha256sum | cut -c1-16)/$2"
}

# ensure_prepared POLICYDIR PROFILE: a profile with a prepare step has its
# prepared state in this mode's prepared_dir for that catalog's version of
# the profile (sbx run refuses it otherwise); prepared again only when the
# profile file differs from the one last prepared.
ensure_prepared() {
	local pol=$1 prof=$2 f sum rec
	# tests/e2e/prepare.sh prepares by hand, to see what runs do without.
	[ -z "${SBX_E2E_NO_AUTO_PREPARE:-}" ] || return 0
	f="$pol/profiles/$prof.json"
	[ -f "$f" ] && jq -e 'has("prepare")' "$f" >/dev/null 2>&1 || return 0
	sum=$(cksum < "$f")
	# One record a catalog, as sbx keeps one state a catalog.
	rec="$M/prepared.$prof.$(basename "$(dirname "$(prepared_state "$pol" "$prof")")").sum"
	[ "$(cat "$rec" 2>/dev/null)" = "$sum" ] && return 0
	if as_mode "$SBX" prepare --config "$M/config.json" --policy "$pol" "$prof" >/dev/null 2>"$M/prepare.err"; then
		echo "$sum" > "$rec"
	else
		diag "sbx prepare $prof failed: $(head -c 500 "$M/prepare.err")"
	fi
}

# sbx_run JOBFILE [extra sbx options...]: runs sbx, leaves the manifest in
# $OUT, stderr in $ERR, the exit status in $RC, artifacts under $ART.
RUNS=0
sbx_run() {
	local job=$1; shift
	RUNS=$((RUNS + 1))
	OUT="$M/out.$RUNS.json"
	ERR="$M/err.$RUNS.txt"
	ART="$M/art.$RUNS"
	ensure_prepared "${POLICY:-$SBX_SRCDIR/policy}" "$(jq -r '.runtime_profile // empty' "$job" 2>/dev/null | head -c 64)"
	as_mode "$SBX" run --config "$M/config.json" --policy "${POLICY:-$SBX_SRCDIR/policy}" \
		--key "$KEY" --store "$M/store" --artifacts "$ART" "$@" "$job" >"$OUT" 2>"$ERR"
	RC=$?
	[ "$MODE" = user ] && chmod -R a+rX "$ART" 2>/dev/null
	jq -r '.run_id // empty' "$OUT" >> "$T/run-ids" 2>/dev/null
	# Every manifest, for tests/schemas.sh (make check-manifests).
	[ -z "${SBX_E2E_MANIFESTS:-}" ] || cat "$OUT" >> "$SBX_E2E_MANIFESTS"
	return 0
}

# mkjob FILE PROFILE CODE [extra json members]: a job file.
mkjob() {
	local file=$1 profile=$2 code=$3 extra=${4:-}
	jq -n --arg p "$profile" --arg c "$code" "{runtime_profile: \$p, code: \$c} ${extra:+ + $extra}" > "$file"
	chmod 0644 "$file"
}

# jqm FILTER: query the last manifest.
jqm() { jq -r "$1" "$OUT"; }

expect_rc() {
	local want=$1 d=$2
	if [ "$RC" -eq "$want" ]; then ok "$d (exit $want)"; else
		not_ok "$d: exit $RC, wanted $want"
		diag "stderr: $(head -c 1500 "$ERR")"
		diag "manifest: $(head -c 1500 "$OUT")"
	fi
}

# The manifest's signature verifies with jq + openssl alone.
signature_ok() {
	local d="$M/sig.$RUNS"
	mkdir -p "$d"
	jq -cjS 'del(.signature)' "$OUT" > "$d/body" &&
		jq -r '.signature.value' "$OUT" | openssl base64 -d -A > "$d/sig" &&
		openssl pkeyutl -verify -pubin -inkey "$KEY.pub" -rawin -in "$d/body" -sigfile "$d/sig" >/dev/null 2>&1
}

# Nothing left behind: no live state entry, no run cgroup, no process of
# the test user, no quarantine or temp dir of sbx.
nothing_left() {
	local left=
	if [ -d "$M/state/runs" ] && [ -n "$(ls -A "$M/state/runs" 2>/dev/null)" ]; then left="$left state:$(ls "$M/state/runs")"; fi
	# Only this script's runs: other sbx users on the host are not ours to
	# judge.  Run cgroups are named sbx-<run id>, temp dirs sbx-run-<run id>.
	local id cgs tmps
	for id in $(sort -u "$T/run-ids" 2>/dev/null); do
		cgs=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "sbx-$id" 2>/dev/null | head -3)
		[ -n "$cgs" ] && left="$left cgroups:$(echo $cgs)"
		tmps=$(ls -d /tmp/sbx-run-"$id"* 2>/dev/null | head -3)
		[ -n "$tmps" ] && left="$left tmp:$(echo $tmps)"
	done
	# The test user runs nothing but sbx here; give exiting processes a
	# moment (a killed init's zombie is reaped by the host's init).
	# As root, the sandboxes are this script's root_ids, used by nothing
	# else.
	local who=$SBX_TEST_USER
	[ "$MODE" = user ] || who=$(seq -s, "$ROOT_IDS_FIRST" $((ROOT_IDS_FIRST + ROOT_IDS_COUNT - 1)))
	local i tpls
	# The mode's templates are no leftovers while they live (their
	# runs' processes are, and are in the run cgroups or below them);
	# nor is a start of one that a run left under way, once it ends.
	wait_template_starts "$M/state"
	tpls=$(template_pids | paste -sd'|')
	nontemplate_pids() { pgrep -u "$who" | grep -Evx "${tpls:-none}"; }
	for i in $(seq 20); do nontemplate_pids >/dev/null || break; sleep 0.1; done
	if nontemplate_pids >/dev/null; then
		left="$left processes:$(ps -o pid=,args= -p "$(nontemplate_pids | paste -sd,)" | head -5 | tr '\n' ';')"
	fi
	if [ -n "$left" ]; then diag "left behind:$left"; return 1; fi
	return 0
}

# bound_sbx SECONDS: from here on $SBX is a wrapper that gives the real
# sbx SECONDS, then SIGKILL, so that no run can hang the suite.  A kill is
# reported as exit 99, which cannot pass for one of sbx's own codes.
bound_sbx() {
	local secs=$1
	SBX_REAL=$SBX
	SBX="$T/sbx-bounded"
	cat > "$SBX" <<EOF
#!/bin/bash
start=\$SECONDS
timeout -s KILL $secs "$SBX_REAL" "\$@"
rc=\$?
if [ \$rc -eq 137 ] && [ \$((SECONDS - start)) -ge $((secs - 1)) ]; then
	echo "sbx: (test) killed after $secs s" >&2
	exit 99
fi
exit \$rc
EOF
	chmod 0755 "$SBX"
}

# make_probe_catalog: $POLICY, a copy of the shipped catalog plus a test-only
# "probe" profile (the shell profile with the static probe program bound
# read-only at /opt/sbx-probe).
make_probe_catalog() {
	PROBE="$SBX_BUILDDIR/tests/probe/sbx-probe"
	[ -x "$PROBE" ] || { echo "Bail out! $PROBE is not built (make check builds it)"; exit 1; }
	POLICY="$T/policy"
	cp -r "$SBX_SRCDIR/policy" "$POLICY"
	jq --arg p "$PROBE" '.binds += [{"src": $p, "dst": "/opt/sbx-probe"}] |
		.description = "test only: shell profile with the probe program"' \
		"$SBX_SRCDIR/policy/profiles/shell.json" > "$POLICY/profiles/probe.json"
	chmod -R a+rX "$T"
}

# --- processes this test started ----------------------------------------

# children PID: the child pids of PID (a process this test started), one
# a line.
children() { cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+$'; }

# wait_payload COMM: find the sandbox's init among the children of $BG_PID
# (the sbx this test started in the background) and wait until the init
# has a child whose name matches COMM (a pattern): the payload has
# started.  Sets INIT_PID and PAYLOAD_PID.  At most 30 s; sbx's end stops
# it at once.
wait_payload() {
	local want=$1 i c p
	INIT_PID= PAYLOAD_PID=
	for i in $(seq 300); do
		kill -0 "$BG_PID" 2>/dev/null || return 1
		# A run cloned from a template (sbx(1) TEMPLATES) has its init
		# among the template's children, not sbx's.
		for c in $(children "$BG_PID") $(for t in $(template_pids); do children "$t"; done); do
			case "$(cat /proc/"$c"/comm 2>/dev/null)" in sbx-init|sbx-template) ;; *) continue ;; esac
			for p in $(children "$c"); do
				if [[ "$(cat /proc/"$p"/comm 2>/dev/null)" == $want ]]; then
					INIT_PID=$c PAYLOAD_PID=$p
					return 0
				fi
			done
		done
		sleep 0.1
	done
	return 1
}

# ids PID: "real effective saved fs" uid, then the same for gid.
ids() { awk '/^Uid:/ { u = $2 " " $3 " " $4 " " $5 } /^Gid:/ { g = $2 " " $3 " " $4 " " $5 } END { print u "/" g }' /proc/"$1"/status 2>/dev/null; }

# one_id IDS: the four uids agree, and the four gids (a setuid-free
# sandbox has no saved or fs id of another user).
one_id() { awk -v s="$1" 'BEGIN { if (split(s, a, /[ \/]/) != 8) exit 1; for (i = 2; i <= 4; i++) if (a[i] != a[1] || a[i + 4] != a[5]) exit 1 }'; }
