#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# identity.sh - who a sandbox is on the host.
#
# Run by root, each live sandbox must be a host uid/gid of its own, from
# the range reserved for sbx (host config root_ids), never 0 and never
# 65534: a host "nobody" process, or another run, must not be able to
# signal a payload, and one run's per-user kernel budgets (pipe buffers,
# ...) must not be another's.  Run by an ordinary user, the sandbox is that
# user.  The processes are found only from the sbx pids this test started
# (/proc/PID/task/*/children), and the only process signalled is the
# payload of a run this test started, with signal 0 (a permission check,
# nothing delivered).
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need timeout setpriv

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# children PID: the pids of PID's children, one per line.

# payload_of SBXPID: the payload (the init's child) of the run that sbx
# process SBXPID supervises, once it exists (bounded wait).
payload_of() {
	local deadline=$(($(now_ms) + 20000)) init p
	while [ "$(now_ms)" -lt "$deadline" ]; do
		for init in $(children "$1"); do
			[ "$(cat /proc/"$init"/comm 2>/dev/null)" = sbx-init ] || continue
			for p in $(children "$init"); do
				# The payload is sh; until its execve it is the
				# init's vfork child, named sbx-init too.
				[ "$(cat /proc/"$p"/comm 2>/dev/null)" = sh ] && { echo "$init $p"; return 0; }
			done
		done
		sleep 0.05
	done
	return 1
}



# start TAG JOB: sbx run in the background, with its pid in $BG (the env
# below execs sbx, so $! is sbx itself).
start() {
	local tag=$1 job=$2
	if [ "$MODE" = user ]; then
		setpriv --reuid="$SBX_TEST_UID" --regid="$(id -g "$SBX_TEST_USER")" --init-groups \
			env -i PATH=/usr/bin:/bin HOME="$M/home" XDG_RUNTIME_DIR="$M/state" \
			SBX_LIBEXECDIR="$SBX_BUILDDIR" "$SBX" run --config "${CFG:-$M/config.json}" \
			--policy "$SBX_SRCDIR/policy" --key "$KEY" --store "$M/store" \
			--artifacts "$M/$tag.art" "$job" >"$M/$tag.out" 2>"$M/$tag.err" &
	else
		env -i PATH=/usr/bin:/bin HOME="$M/home" SBX_LIBEXECDIR="$SBX_BUILDDIR" \
			"$SBX" run --config "${CFG:-$M/config.json}" --policy "$SBX_SRCDIR/policy" \
			--key "$KEY" --store "$M/store" --artifacts "$M/$tag.art" "$job" \
			>"$M/$tag.out" 2>"$M/$tag.err" &
	fi
	BG=$!
}

# finish_run TAG PID: wait for it (bounded by the payload's own end) and
# make it the current run for jqm, expect_rc and nothing_left.
finish_run() {
	wait "$2"
	RC=$?
	OUT="$M/$1.out" ERR="$M/$1.err"
	jq -r '.run_id // empty' "$OUT" >> "$T/run-ids" 2>/dev/null
}

DEFAULT_FIRST=2130706432

for mode in root user; do
	setup_mode $mode
	# The payload writes an output, so the quarantine copy and the
	# promotion run with whatever host id the sandbox has.
	mkjob "$M/sleep.json" shell 'echo started; echo out > /work/out/a.txt; sleep 6; echo done' \
		'{limits: {wall_seconds: 60}}'

	# 1. Two concurrent runs.
	start a "$M/sleep.json"; pa=$BG
	start b "$M/sleep.json"; pb=$BG
	read -r init_a pay_a < <(payload_of "$pa")
	read -r init_b pay_b < <(payload_of "$pb")
	ids_a=$(ids "${pay_a:-0}") ids_b=$(ids "${pay_b:-0}")
	iids_a=$(ids "${init_a:-0}") iids_b=$(ids "${init_b:-0}")
	diag "$mode: payload a ${pay_a:-?} ids $ids_a (init $iids_a); payload b ${pay_b:-?} ids $ids_b (init $iids_b)"
	check "$mode: both payloads found from the sbx pids" test -n "${pay_a:-}" -a -n "${pay_b:-}"
	uid_a=${ids_a%% *} uid_b=${ids_b%% *} gid_b=${ids_b#*/}
	gid_b=${gid_b%% *}
	if [ "$mode" = root ]; then
		check "$mode: each payload has one host uid and gid for all four ids, the same as its init's" \
			eval 'one_id "$ids_a" && one_id "$ids_b" && [ "$ids_a" = "$iids_a" ] && [ "$ids_b" = "$iids_b" ]'
		check "$mode: two concurrent runs have different host uids ($uid_a, $uid_b) and gids" \
			eval '[ -n "$uid_a" ] && [ "$uid_a" != "$uid_b" ] && [ "${ids_a#*/}" != "${ids_b#*/}" ]'
		check "$mode: neither is 65534 nor 0" \
			eval '[ -n "$uid_a" ] && [ -n "$uid_b" ] && [ "$uid_a" != 65534 ] && [ "$uid_b" != 65534 ] && [ "$uid_a" != 0 ] && [ "$uid_b" != 0 ]'
		# lib.sh gives each script's root runs root_ids of their own.
		check "$mode: both come from the configured root_ids ($ROOT_IDS_FIRST + slot)" \
			eval '[ "${uid_a:-0}" -ge $ROOT_IDS_FIRST ] && [ "${uid_a:-0}" -lt $((ROOT_IDS_FIRST + ROOT_IDS_COUNT)) ] && [ "${uid_b:-0}" -ge $ROOT_IDS_FIRST ] && [ "${uid_b:-0}" -lt $((ROOT_IDS_FIRST + ROOT_IDS_COUNT)) ]'
		# A host nobody may not signal run a's payload (kill -0 asks
		# for permission and delivers nothing).
		if [ -n "${pay_a:-}" ] && setpriv --reuid=65534 --regid=65534 --clear-groups kill -0 "$pay_a" 2>/dev/null; then
			not_ok "$mode: a host nobody process can signal the payload"
		else
			ok "$mode: a host nobody process cannot signal the payload"
		fi
		# Nor can the other run's id.
		if [ -n "${pay_a:-}" ] && [ -n "$uid_b" ] && setpriv --reuid="$uid_b" --regid="$gid_b" --clear-groups kill -0 "$pay_a" 2>/dev/null; then
			not_ok "$mode: run b's host uid can signal run a's payload"
		else
			ok "$mode: run b's host uid cannot signal run a's payload"
		fi
	else
		check "$mode: the payload is the calling user on the host ($uid_a)" \
			eval '[ "$uid_a" = "$SBX_TEST_UID" ] && [ "$uid_b" = "$SBX_TEST_UID" ]'
	fi
	finish_run a "$pa"
	expect_rc 0 "$mode: run a ended normally"
	# No --principal: the login name, read from /etc/passwd without NSS
	# where that gives getpwuid()'s answer (getent asks NSS).
	check "$mode: the default principal is the caller's login name ($PRINCIPAL)" \
		eval '[ "$(jqm .principal)" = "$PRINCIPAL" ] && [ "$(jqm .principal)" = "$(getent passwd "$(as_mode id -u)" | cut -d: -f1)" ]'
	check "$mode: run a's output was collected and promoted" \
		eval '[ "$(jqm "[.artifacts[] | select(.path == \"a.txt\" and .status == \"promoted\")] | length")" = 1 ] && [ "$(cat "$M/a.art/a.txt")" = out ]'
	finish_run b "$pb"
	expect_rc 0 "$mode: run b ended normally"
	check "$mode: nothing left behind after two concurrent runs" nothing_left
done

# 2. As root: an id range that owns something is refused before anything
#    runs (69, a Hint): here one that holds the test user's uid, which is
#    in the passwd database.
MODE=root
M="$T/root"
KEY="$M/key"
mkjob "$M/never.json" shell 'echo PAYLOAD-RAN'
printf '{"state_dir":"%s","root_ids":{"first":%d,"count":64}}\n' "$M/state" "$SBX_TEST_UID" > "$M/taken.json"
CFG="$M/taken.json" start taken "$M/never.json"
finish_run taken $BG
check "root: root_ids over an id in the passwd database: 69, a Hint, the payload never ran ($(head -c 300 "$ERR" | tr '\n' ' '))" \
	eval '[ $RC -eq 69 ] && grep -qE "root_ids: host [ug]id [0-9]+ is taken: /etc/passwd has it" "$ERR" && grep -q "^sbx: Hint: .*root_ids" "$ERR" && [ "$(jqm .status)" = isolation_unavailable ] && ! grep -q PAYLOAD-RAN "$OUT"'
check "root: nothing left behind after the refusal" nothing_left

# 3. sbx check predicts both: the default range as root, the refusal for
#    a range that owns something, and the caller's own id for a user.
printf '{"state_dir":"%s"}\n' "$M/state" > "$M/default.json"
"$SBX" check --config "$M/default.json" --policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1
check "root: sbx check: root ids are the default $DEFAULT_FIRST-$((DEFAULT_FIRST + 4095)), free" \
	grep -qx "ids  *ok: root_ids: host ids $DEFAULT_FIRST-$((DEFAULT_FIRST + 4095)), one per concurrent run; .*" "$M/check.out"
"$SBX" check --config "$M/taken.json" --policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1
rc=$?
check "root: sbx check: a range over an account is unusable, with a Hint, exit 69" \
	eval '[ $rc -eq 69 ] && grep -qE "^ids +unusable: root_ids: host [ug]id [0-9]+ is taken: /etc/passwd" "$M/check.out" && grep -qE "^ +Hint: .*root_ids" "$M/check.out"'
runuser -u "$SBX_TEST_USER" -- env -i PATH=/usr/bin:/bin SBX_LIBEXECDIR="$SBX_BUILDDIR" \
	"$SBX" check --config "$M/taken.json" --policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1
check "user: sbx check: without subordinate ids, the sandbox is the caller (shared), with a Hint" \
	eval 'grep -qx "ids  *ok: shared: every run is the caller.s own uid $SBX_TEST_UID on the host, .*" "$M/check.out" && grep -q "Hint: .*usermod --add-subuids" "$M/check.out"'

finish
