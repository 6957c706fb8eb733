#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# hardening.sh - what the sandbox's init holds and hands down, seen from
# the host while a run is alive, and what the payload cannot take from
# the caller: its stdio, executable memfds, the caller's per-user kernel
# quotas, the host's site trees under /usr/local.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

make_probe_catalog

# start_bg JOBFILE [sbx options...]: start sbx in the background, directly
# (no wrapper that forks: $BG_PID is sbx itself), as the mode's identity.
# The manifest goes to $BG_OUT, stderr to $BG_ERR; with BG_CLOSED=1, sbx
# starts with fds 0, 1 and 2 closed instead (and writes no manifest).
start_bg() {
	local job=$1; shift
	RUNS=$((RUNS + 1))
	BG_OUT="$M/out.$RUNS.json"
	BG_ERR="$M/err.$RUNS.txt"
	local cmd=("$SBX" run --config "$M/config.json" --policy "${POLICY:-$SBX_SRCDIR/policy}"
		--key "$KEY" --store "$M/store" --artifacts "$M/art.$RUNS" "$@" "$job")
	if [ "$MODE" = user ]; then
		cmd=(setpriv --reuid "$SBX_TEST_USER" --regid "$(id -g "$SBX_TEST_USER")" --clear-groups
			env -i PATH=/usr/bin:/bin HOME="$M/home" XDG_RUNTIME_DIR="$M/state"
			SBX_LIBEXECDIR="$SBX_BUILDDIR" "${cmd[@]}")
	else
		cmd=(env -i PATH=/usr/bin:/bin HOME="$M/home" SBX_LIBEXECDIR="$SBX_BUILDDIR" "${cmd[@]}")
	fi
	if [ "${BG_CLOSED:-0}" = 1 ]; then
		"${cmd[@]}" <&- >&- 2>&- &
	else
		"${cmd[@]}" </dev/null >"$BG_OUT" 2>"$BG_ERR" &
	fi
	BG_PID=$!
}

# children PID: the child pids of a process this test started.
children() { cat /proc/"$1"/task/*/children 2>/dev/null; }

# wait_payload COMM: find the sandbox's init among the children of $BG_PID
# (sbx, started by start_bg) and wait until the init has a child named
# COMM (the payload has started).  Sets INIT_PID and PAYLOAD_PID.  Polls
# without a deadline of its own beyond 30 s; sbx's end stops it at once.
wait_payload() {
	local want=$1 i c p
	INIT_PID= PAYLOAD_PID=
	for i in $(seq 300); do
		kill -0 "$BG_PID" 2>/dev/null || return 1
		for c in $(children "$BG_PID"); do
			[ "$(cat /proc/"$c"/comm 2>/dev/null)" = sbx-init ] || continue
			for p in $(children "$c"); do
				if [ "$(cat /proc/"$p"/comm 2>/dev/null)" = "$want" ]; then
					INIT_PID=$c PAYLOAD_PID=$p
					return 0
				fi
			done
		done
		sleep 0.1
	done
	return 1
}

# stop_bg: cancel the background run (SIGTERM to our own sbx) and reap it.
stop_bg() {
	kill -TERM "$BG_PID" 2>/dev/null
	wait "$BG_PID"
	BG_RC=$?
}

# fds_null PID: fds 0, 1 and 2 of PID are /dev/null.
fds_null() {
	local fd
	for fd in 0 1 2; do
		[ "$(readlink /proc/"$1"/fd/$fd)" = /dev/null ] ||
			{ diag "fd $fd of the init: $(readlink /proc/"$1"/fd/$fd)"; return 1; }
	done
}

for mode in root user; do
	setup_mode $mode

	# 1. The init holds none of the broker's stdio: not the manifest's
	#    output file, not the caller's terminal or stderr.
	mkjob "$M/sleep.json" shell 'exec sleep 30'
	start_bg "$M/sleep.json"
	if wait_payload sleep; then
		check "$mode: the init's fds 0-2 are /dev/null, not sbx's stdio" fds_null "$INIT_PID"
	else
		not_ok "$mode: the payload of the stdio test never started"
		diag "stderr: $(head -c 1000 "$BG_ERR")"
	fi
	stop_bg
	check "$mode: the stdio test's run was cancelled cleanly" \
		eval '[ "$(jq -r .status "$BG_OUT")" = cancelled ] && nothing_left'

	# ... also when sbx starts with stdin, stdout and stderr closed, so
	#    that its socket and pipes are fds 0-2 on sbx-init's command line.
	BG_CLOSED=1 start_bg "$M/sleep.json"
	if wait_payload sleep; then
		check "$mode: with sbx's stdio closed, the init's fds 0-2 are /dev/null" fds_null "$INIT_PID"
	else
		not_ok "$mode: with sbx's stdio closed, the payload never started"
	fi
	stop_bg
	check "$mode: with sbx's stdio closed, the run was cancelled cleanly" nothing_left
done

finish
