#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# subids.sh - an ordinary user with subordinate ids: each run a host uid
# of its own, so that one run cannot drain a per-uid kernel budget of its
# caller or of the caller's other runs.
#
# For its duration the test gives its own test user a range in
# /etc/subuid and /etc/subgid (edited in place under a lock, only the
# test user's own lines, removed on exit), far from every root_ids range
# (lib.sh, the default) so that concurrent root runs of other scripts are
# not refused because of it.  Root runs the same attacks with root_ids.
# The processes are found only from the sbx pids this test started; the
# only process signalled is the payload of a run this test started, with
# signal 0 (a permission check, nothing delivered); the fds in flight are
# the payload's own, in its own socketpair, bounded at 1,250 and held 8 s.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need timeout setpriv python3 flock

for h in /usr/bin/newuidmap /usr/bin/newgidmap; do
	[ -u "$h" ] || { echo "Bail out! $h is missing or not setuid (install the package uidmap)"; exit 1; }
done

SUB_COUNT=8
SUB_FIRST=$((1879048192 + ($(printf '%s' "$SBX_TEST_USER" | cksum | cut -d' ' -f1) % 4096) * 64))
LOCK=/run/lock/sbx-e2e-subids.lock

# set_range FILE COUNT: the test user's one line in FILE ("none": no
# line), in place (the file keeps its inode and mode), under the lock.
set_range() {
	local f=$1 n=$2
	(
		flock 9
		[ -e "$f" ] || { : > "$f"; chmod 0644 "$f"; }
		grep -v "^$SBX_TEST_USER:" "$f" > "$f.sbx-e2e.$$"
		[ "$n" = none ] || printf '%s:%d:%d\n' "$SBX_TEST_USER" "$SUB_FIRST" "$n" >> "$f.sbx-e2e.$$"
		cat "$f.sbx-e2e.$$" > "$f"
		rm -f "$f.sbx-e2e.$$"
	) 9>"$LOCK"
}
trap 'rc=$?; set_range /etc/subuid none; set_range /etc/subgid none; (exit $rc); cleanup_lib' EXIT
set_range /etc/subuid $SUB_COUNT
set_range /etc/subgid $SUB_COUNT

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# payload_of PID COMM: the payload (the init's child named COMM) of the
# run that sbx process PID (or PID's child: the background job of a shell
# function is a subshell) supervises, once it exists (bounded wait).
payload_of() {
	local deadline=$(($(now_ms) + 20000)) init p
	while [ "$(now_ms)" -lt "$deadline" ]; do
		# A run cloned from a template has its init among the
		# template's children (sbx(1) TEMPLATES).
		for init in $(children "$1") $(for c in $(children "$1"); do children "$c"; done) \
			$(for t in $(template_pids); do children "$t"; done); do
			[ "$(cat /proc/"$init"/comm 2>/dev/null)" = sbx-init ] || continue
			for p in $(children "$init"); do
				[ "$(cat /proc/"$p"/comm 2>/dev/null)" = "$2" ] && { echo "$p"; return 0; }
			done
		done
		sleep 0.05
	done
	return 1
}


# as_caller CMD...: CMD as this mode's caller, with the soft RLIMIT_NOFILE
# most callers have (1024): the bound of the fds-in-flight check.
as_caller() {
	if [ "$MODE" = user ]; then
		in_launch_cgroup setpriv --reuid="$SBX_TEST_UID" --regid="$(id -g "$SBX_TEST_USER")" --init-groups \
			env -i PATH=/usr/bin:/bin HOME="$M/home" XDG_RUNTIME_DIR="$M/state" \
			SBX_LIBEXECDIR="$SBX_BUILDDIR" ${SBX_EXTRA_ENV:-} bash -c 'ulimit -Sn 1024 && exec "$@"' - "$@"
	else
		env -i PATH=/usr/bin:/bin HOME="$M/home" SBX_LIBEXECDIR="$SBX_BUILDDIR" ${SBX_EXTRA_ENV:-} \
			bash -c 'ulimit -Sn 1024 && exec "$@"' - "$@"
	fi
}

# start TAG JOB [OPTION...]: sbx run in the background, its pid in $BG
# (the wrappers exec, so $! becomes sbx itself).
start() {
	local tag=$1 job=$2
	shift 2
	as_caller "$SBX" run --config "${CFG:-$M/config.json}" --policy "$SBX_SRCDIR/policy" \
		--key "$KEY" --store "$M/store" --artifacts "$M/$tag.art" "$@" "$job" \
		>"$M/$tag.out" 2>"$M/$tag.err" &
	BG=$!
}

# finish_run TAG PID: wait, and make it the current run.
finish_run() {
	wait "$2"
	RC=$?
	OUT="$M/$1.out" ERR="$M/$1.err"
	jq -r '.run_id // empty' "$OUT" >> "$T/run-ids" 2>/dev/null
}

# run_now TAG JOB: a run in the foreground, bounded.
run_now() { start "$@"; finish_run "$1" "$BG"; }

# no_sub_processes: nothing runs as the subordinate range any more.
no_sub_processes() {
	local who i
	who=$(seq -s, "$SUB_FIRST" $((SUB_FIRST + SUB_COUNT - 1)))
	for i in $(seq 20); do pgrep -u "$who" >/dev/null || return 0; sleep 0.1; done
	diag "left running: $(ps -o pid=,args= -u "$who" | head -3 | tr '\n' ';')"
	return 1
}

for mode in root user; do
	setup_mode $mode
	ensure_prepared "$SBX_SRCDIR/policy" python-analysis
	if [ "$mode" = user ]; then lo=$SUB_FIRST; else lo=$ROOT_IDS_FIRST; fi

	# 1. Two concurrent runs: two host uids of their own, neither the
	#    caller's; one run's uid may not signal the other's payload.
	mkjob "$M/sleep.json" shell 'echo out > /work/out/a.txt; sleep 4' '{limits: {wall_seconds: 60}}'
	start a "$M/sleep.json"; pa=$BG
	start b "$M/sleep.json"; pb=$BG
	pay_a=$(payload_of "$pa" sh) pay_b=$(payload_of "$pb" sh)
	ids_a=$(ids "${pay_a:-0}") ids_b=$(ids "${pay_b:-0}")
	uid_a=${ids_a%% *} uid_b=${ids_b%% *} gid_b=${ids_b#*/}
	gid_b=${gid_b%% *}
	diag "$mode: payload a ${pay_a:-?} ids $ids_a; payload b ${pay_b:-?} ids $ids_b"
	check "$mode: each payload is one host uid and gid (real, effective, saved, fs)" \
		eval 'one_id "$ids_a" && one_id "$ids_b"'
	check "$mode: two concurrent runs have different host uids ($uid_a, $uid_b) and gids, neither the caller's" \
		eval '[ -n "$uid_a" ] && [ "$uid_a" != "$uid_b" ] && [ "${ids_a#*/}" != "${ids_b#*/}" ] && [ "$uid_a" != "$(as_mode id -u)" ] && [ "$uid_b" != "$(as_mode id -u)" ]'
	check "$mode: both come from the mode's range ($lo + slot)" \
		eval '[ "${uid_a:-0}" -ge $lo ] && [ "${uid_a:-0}" -lt $((lo + 64)) ] && [ "${uid_b:-0}" -ge $lo ] && [ "${uid_b:-0}" -lt $((lo + 64)) ]'
	if [ -n "${pay_a:-}" ] && [ -n "$uid_b" ] && setpriv --reuid="$uid_b" --regid="$gid_b" --clear-groups kill -0 "$pay_a" 2>/dev/null; then
		not_ok "$mode: run b's host uid can signal run a's payload"
	else
		ok "$mode: run b's host uid cannot signal run a's payload"
	fi
	finish_run a "$pa"
	expect_rc 0 "$mode: run a ended normally"
	check "$mode: run a's output was collected" \
		eval '[ "$(jqm "[.artifacts[] | select(.path == \"a.txt\" and .status == \"promoted\")] | length")" = 1 ]'
	finish_run b "$pb"
	expect_rc 0 "$mode: run b ended normally"

	# 2. Outputs the payload made unreadable to others: a 0600 file (as
	#    Python's tempfile makes them), a file in a 0700 directory, one in
	#    a directory left 0000, and the output root itself 0700.
	mkjob "$M/modes.json" shell 'umask 077; echo p > /work/out/p.txt; mkdir /work/out/d; echo x > /work/out/d/x.txt; mkdir /work/out/z; echo y > /work/out/z/y.txt; chmod 000 /work/out/z; chmod 700 /work/out' \
		'{allowed_outputs: ["text/plain"], required_outputs: ["p.txt", "d/x.txt", "z/y.txt"]}'
	run_now modes "$M/modes.json"
	expect_rc 0 "$mode: outputs in 0600 files and 0700/0000 directories are collected"
	[ "$mode" = user ] && chmod -R a+rX "$M/modes.art" 2>/dev/null
	check "$mode: all three promoted with their content, the signature verifies" \
		eval '[ "$(jqm "[.artifacts[] | select(.status == \"promoted\")] | length")" = 3 ] && [ "$(cat "$M/modes.art/p.txt")" = p ] && [ "$(cat "$M/modes.art/d/x.txt")" = x ] && [ "$(cat "$M/modes.art/z/y.txt")" = y ] && signature_ok'

	# 3. fds in flight: the payload sends 1,250 fds over its own
	#    socketpair and holds them.  The kernel counts them per host uid
	#    (and refuses a sender whose uid has more in flight than its
	#    RLIMIT_NOFILE): the caller's own SCM_RIGHTS and a concurrent run
	#    must still work.
	mkjob "$M/inflight.json" python-analysis 'import array, os, socket, time
a, b = socket.socketpair()
fd = os.open("/dev/null", os.O_RDONLY)
n = 0
try:
    while n < 1250:
        a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd] * 250))])
        n += 250
except OSError as e:
    print("stopped:", e, flush=True)
# The host sees it in the process name (there is no other channel
# out while it runs): "held-N".
with open("/proc/self/comm", "w") as f:
    f.write("held-%d" % n)
time.sleep(8)' '{limits: {wall_seconds: 30}}'
	start hog "$M/inflight.json"; ph=$BG
	held=$(payload_of "$ph" held-1250)
	check "$mode: the payload holds 1,250 fds in flight (pid ${held:-none}; $(head -c 200 "$M/hog.err" | tr '\n' ' '))" \
		test -n "$held"
	as_caller python3 -c 'import array, os, socket
a, b = socket.socketpair()
a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0]))])
print("sent")' > "$M/caller.out" 2>&1
	check "$mode: meanwhile the caller's own sendmsg(SCM_RIGHTS) works ($(tail -1 "$M/caller.out"))" \
		grep -qx sent "$M/caller.out"
	mkjob "$M/hello.json" shell 'echo hello'
	run_now hello "$M/hello.json"
	expect_rc 0 "$mode: meanwhile a concurrent run of the same caller succeeds"
	finish_run hog "$ph"
	expect_rc 0 "$mode: the holding run ended normally"
	check "$mode: nothing left behind" eval 'nothing_left && no_sub_processes'
done

# 4. What cannot be used is refused (69, a Hint), never run as the caller.
MODE=user
M="$T/user"
KEY="$M/key"
mkjob "$M/never.json" shell 'echo PAYLOAD-RAN'
refused() { # WHAT REGEX: the last run was refused so
	RX=$2
	check "user: $1: 69, $2, a Hint, the payload never ran ($(head -c 300 "$ERR" | tr '\n' ' '))" \
		eval '[ $RC -eq 69 ] && grep -qE "$RX" "$ERR" && grep -q "^sbx: Hint: " "$ERR" && [ "$(jqm .status)" = isolation_unavailable ] && ! grep -q PAYLOAD-RAN "$OUT"'
}

# A range smaller than the caller's concurrent runs: the second is refused.
set_range /etc/subuid 1
set_range /etc/subgid 1
jq '. + {max_concurrent: 4}' "$M/config.json" > "$M/four.json"
CFG="$M/four.json" start one "$M/sleep.json"; p1=$BG
payload_of "$p1" sh > /dev/null
CFG="$M/four.json" run_now two "$M/never.json"
refused "a range of one id, a second concurrent run" "subordinate ids: admission slot 1 has no id: the range in /etc/subuid holds 1"
finish_run one "$p1"
expect_rc 0 "user: the first run, in the range's one id, ended normally"

# A range in /etc/subuid and none in /etc/subgid.
set_range /etc/subuid $SUB_COUNT
set_range /etc/subgid none
run_now half "$M/never.json"
refused "a subuid range without a subgid range" "/etc/subuid gives uid $SBX_TEST_UID a range and /etc/subgid does not"
set_range /etc/subgid $SUB_COUNT

# The helper refuses, or is not usable (injected: the real ones are fine).
SBX_EXTRA_ENV="SBX_TEST_ERRNO=newuidmap:EPERM" run_now helperfail "$M/never.json"
refused "newuidmap fails" "subordinate ids: /usr/bin/newuidmap failed"
SBX_EXTRA_ENV="SBX_TEST_ERRNO=newuidmap-check:EACCES" run_now nohelper "$M/never.json"
refused "newuidmap not usable" "subordinate ids: /usr/bin/newuidmap"
check "user: the Hint names the package uidmap" grep -q "^sbx: Hint: .*uidmap" "$ERR"
SBX_EXTRA_ENV="SBX_TEST_ERRNO=newuidmap-check:EACCES" as_caller "$SBX" check --config "$M/config.json" --policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1
rc=$?
check "user: sbx check predicts it: ids unusable, exit 69" \
	eval '[ $rc -eq 69 ] && grep -qE "^ids +unusable: subordinate ids: /usr/bin/newuidmap" "$M/check.out"'

# 5. sbx check names the mode: subordinate with the range, or shared.
as_caller "$SBX" check --config "$M/config.json" --policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1
check "user: sbx check: subordinate, with the range" \
	grep -qx "ids  *ok: subordinate: host uids $SUB_FIRST-$((SUB_FIRST + SUB_COUNT - 1)) and gids $SUB_FIRST-$((SUB_FIRST + SUB_COUNT - 1)) .*" "$M/check.out"
as_caller "$SBX" check --json --config "$M/config.json" --policy "$SBX_SRCDIR/policy" > "$M/check.json" 2>/dev/null
check "user: sbx check --json: id_mode subordinate" eval '[ "$(jq -r .id_mode "$M/check.json")" = subordinate ]'
set_range /etc/subuid none
set_range /etc/subgid none
as_caller "$SBX" check --json --config "$M/config.json" --policy "$SBX_SRCDIR/policy" > "$M/check.json" 2>/dev/null
check "user: without a range, id_mode shared, with a Hint naming usermod --add-subuids" \
	eval '[ "$(jq -r .id_mode "$M/check.json")" = shared ] && jq -r ".checks[] | select(.name == \"ids\") | .hint" "$M/check.json" | grep -q "usermod --add-subuids"'
MODE=root
"$SBX" check --json --config "$T/root/config.json" --policy "$SBX_SRCDIR/policy" > "$M/check.json" 2>/dev/null
check "root: sbx check --json: id_mode root_ids" eval '[ "$(jq -r .id_mode "$M/check.json")" = root_ids ]'

finish
