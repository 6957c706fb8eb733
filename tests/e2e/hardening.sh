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

	# 2. A memfd is no way around noexec: a copy of the static probe in a
	#    memfd cannot be executed (execveat, /proc/self/fd, after fchmod),
	#    MFD_EXEC is refused, and a plain memfd comes sealed non-executable
	#    (vm.memfd_noexec 2 in the run's pid namespace).  The kernel lets
	#    only host root raise the setting, so an unprivileged caller's runs
	#    have the host's value: the manifest must say which, and the probe's
	#    results must agree with it.
	mkjob "$M/memfd.json" probe '/opt/sbx-probe memfd-exec'
	POLICY=$POLICY sbx_run "$M/memfd.json"
	expect_rc 0 "$mode: memfd probe ran"
	got=$(jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))')
	host_scope=$(cat /proc/sys/vm/memfd_noexec)
	if [ $mode = root ] || [ "$host_scope" = 2 ]; then
		check "$mode: the manifest says memfd_noexec 2" test "$(jqm .isolation.memfd_noexec)" = 2
		for want in memfd_create:ok memfd_mode:666 memfd_seal_exec:yes memfd_exec_at:EACCES \
			memfd_exec_procfd:EACCES memfd_chmod:EPERM memfd_exec_chmod:EACCES \
			memfd_create_exec:EACCES; do
			name=${want%%:*} res=${want#*:}
			if grep -qx "$name $res" <<<"$got"; then ok "$mode: $name -> $res"; else
				not_ok "$mode: $name: wanted $res, got '$(grep "^$name " <<<"$got" | cut -d' ' -f2-)'"; fi
		done
	else
		check "$mode: the manifest says the host's memfd_noexec ($host_scope)" \
			test "$(jqm .isolation.memfd_noexec)" = "$host_scope"
		if [ "$host_scope" = 0 ]; then
			check "$mode: ... and memfd exec works, as the manifest says" \
				grep -qx "memfd_exec_at ok" <<<"$got"
		else
			check "$mode: ... and plain memfds are sealed, as the manifest says" \
				grep -qx "memfd_exec_at EACCES" <<<"$got"
		fi
	fi

	# sbx check predicts it.
	as_mode "$SBX" check --config "$M/config.json" --policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1
	check "$mode: sbx check predicts the run's memfd_noexec ($(jqm .isolation.memfd_noexec))" \
		eval 'if [ "$(jqm .isolation.memfd_noexec)" = 2 ]; then grep -q "^memfd noexec  *ok: runs get 2 " "$M/check.out"; else grep -q "^memfd noexec  *ok: runs get the host.s $host_scope:" "$M/check.out"; fi'

	# Ordinary programs keep what they use memfds for: python's
	#    os.memfd_create (no MFD_EXEC: sealed, still writable and mappable)
	#    and ctypes callbacks (libffi closures).
	mkjob "$M/memfd-py.json" python-analysis 'import os, mmap, ctypes
fd = os.memfd_create("x")
os.write(fd, b"hello")
print(mmap.mmap(fd, 5)[:].decode(), ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 7)())'
	sbx_run "$M/memfd-py.json"
	check "$mode: python's memfd_create, mmap and ctypes callbacks still work" \
		eval '[ $RC -eq 0 ] && [[ "$(jqm .stdout.excerpt)" == "hello 7"* ]]'
	check "$mode: nothing left behind after the memfd probes" nothing_left
done

finish
