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

# On the host, as the mode's identity: take one inotify instance, one
# fanotify group (the kind an unprivileged process may make) and queue one
# realtime signal to ourselves; print "<what> ok" or the error.
cat > "$T/budget.py" <<'PY'
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
def say(what, r):
    print(what, "ok" if r >= 0 else os.strerror(ctypes.get_errno()))
    if r >= 0 and what != "sigqueue":
        os.close(r)
say("inotify", libc.inotify_init1(os.O_CLOEXEC))
say("fanotify", libc.fanotify_init(0x200 | 0x1, os.O_RDONLY))  # FAN_REPORT_FID|FAN_CLOEXEC
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGRTMIN})
say("sigqueue", libc.sigqueue(os.getpid(), signal.SIGRTMIN, ctypes.c_void_p(0)))
PY
chmod 0644 "$T/budget.py"
as_host() {
	if [ "$MODE" = user ]; then
		setpriv --reuid "$SBX_TEST_USER" --regid "$(id -g "$SBX_TEST_USER")" --clear-groups "$@"
	else
		"$@"
	fi
}

# A catalog whose probe profile has kernel quotas of its own.
POLICY_Q="$T/policy-quotas"
cp -r "$POLICY" "$POLICY_Q"
jq '.kernel_quotas = {"inotify_instances": 3, "inotify_watches": 77, "fanotify_groups": 2,
	"fanotify_marks": 5, "sigpending": 50, "msgqueue_bytes": 4096, "memlock_bytes": 8192}' \
	"$POLICY/profiles/probe.json" > "$POLICY_Q/profiles/probe.json"
chmod -R a+rX "$POLICY_Q"

# A site tree of the host's: a directory under /usr/local that this test
# creates (and removes), and catalogs whose shell profile names it, or all
# of /usr/local, in its binds.
SITE=/usr/local/sbx-init-e2e.$$
mkdir "$SITE" && echo site-marker > "$SITE/marker" &&
	printf '#!/bin/sh\necho site-exec\n' > "$SITE/run" && chmod -R a+rX "$SITE" && chmod a+x "$SITE/run" ||
	{ echo "Bail out! cannot create $SITE"; exit 1; }
trap 'rm -rf "$SITE"; cleanup_lib' EXIT
POLICY_SUB="$T/policy-site-sub"
POLICY_ALL="$T/policy-site-all"
cp -r "$SBX_SRCDIR/policy" "$POLICY_SUB"
cp -r "$SBX_SRCDIR/policy" "$POLICY_ALL"
# Named before /usr on purpose: binds are mounted parents first.
jq --arg s "$SITE" '.binds = [$s] + .binds' "$SBX_SRCDIR/policy/profiles/shell.json" \
	> "$POLICY_SUB/profiles/shell.json"
jq '.binds += ["/usr/local"]' "$SBX_SRCDIR/policy/profiles/shell.json" > "$POLICY_ALL/profiles/shell.json"
chmod -R a+rX "$POLICY_SUB" "$POLICY_ALL"
SITE_SHOW="ls -A /usr/local | tr '\\n' ' '; echo; cat $SITE/marker 2>&1; $SITE/run 2>&1; true"

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

	# 3. Per-user kernel quotas: a payload takes all the inotify
	#    instances, fanotify groups and queued signals it can and holds
	#    them; meanwhile the caller (host root, or the user) can still make
	#    its own.  The payload has announced its counts in its /tmp when
	#    the file appears (seen through /proc/<payload>/root).
	mkjob "$M/hog.json" probe 'exec /opt/sbx-probe hog-quotas /tmp/ready 60'
	POLICY=$POLICY start_bg "$M/hog.json"
	hog=
	if wait_payload sbx-probe; then
		for i in $(seq 300); do
			[ -e "/proc/$PAYLOAD_PID/root/tmp/ready" ] && break
			kill -0 "$BG_PID" 2>/dev/null || break
			sleep 0.1
		done
		hog=$(cat "/proc/$PAYLOAD_PID/root/tmp/ready" 2>/dev/null)
		host=$(as_host /usr/bin/python3 "$T/budget.py" 2>&1)
	fi
	stop_bg
	diag "payload: $(echo $hog); host: $(echo $host)"
	check "$mode: the payload took its share" test -n "$hog"
	for what in inotify fanotify sigqueue; do
		check "$mode: while the payload holds its share, the caller's $what works" \
			grep -qx "$what ok" <<<"$host"
	done
	check "$mode: the payload got at most 16 inotify instances (the default)" \
		eval 'n=$(awk "/^inotify /{print \$2}" <<<"$hog"); [ -n "$n" ] && [ "$n" -le 16 ] && grep -q "^inotify .* EMFILE" <<<"$hog"'
	check "$mode: the payload got no fanotify group (the default)" \
		grep -qx "fanotify 0 EMFILE" <<<"$hog"
	check "$mode: the payload queued at most 128 signals (the default)" \
		eval 'n=$(awk "/^sigqueue /{print \$2}" <<<"$hog"); [ -n "$n" ] && [ "$n" -le 128 ] && grep -q "^sigqueue .* EAGAIN" <<<"$hog"'
	check "$mode: the hostile run was cancelled cleanly" \
		eval '[ "$(jq -r .status "$BG_OUT")" = cancelled ] && nothing_left'

	# What the payload sees: its own namespace's quotas (no namespace may
	#    be made at all) and the rlimits, from the defaults and from a
	#    profile's kernel_quotas.
	read -r -d '' SHOW <<'SH'
cd /proc/sys/user && for f in max_*; do echo "$f $(cat $f)"; done
grep -E "^Max (pending signals|msgqueue size|locked memory)" /proc/self/limits | tr -s ' ' | sed 's/^Max //; s/ /_/'
SH
	for cat in "$POLICY" "$POLICY_Q"; do
		prof=$([ "$cat" = "$POLICY" ] && echo default || echo kernel_quotas)
		mkjob "$M/show.json" probe "$SHOW"
		POLICY=$cat sbx_run "$M/show.json"
		got=$(jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))')
		if [ $prof = default ]; then
			want="max_inotify_instances:16 max_inotify_watches:1024 max_fanotify_groups:0 max_fanotify_marks:0"
			want="$want pending_signals:128 msgqueue_size:0 locked_memory:65536"
		else
			want="max_inotify_instances:3 max_inotify_watches:77 max_fanotify_groups:2 max_fanotify_marks:5"
			want="$want pending_signals:50 msgqueue_size:4096 locked_memory:8192"
		fi
		for ns in cgroup ipc mnt net pid time user uts; do want="$want max_${ns}_namespaces:0"; done
		bad=
		for w in $want; do
			k=${w%%:*} v=${w#*:}
			case $k in
			max_*) grep -qx "$k $v" <<<"$got" || bad="$bad $k=$(grep "^$k " <<<"$got" | cut -d' ' -f2)" ;;
			*) grep -qE "^$k $v $v( |\$)" <<<"$got" || bad="$bad $k=$(grep "^$k" <<<"$got")" ;;
			esac
		done
		check "$mode: $prof: the sandbox's quotas and rlimits are the profile's${bad:+ (wrong:$bad)}" \
			eval '[ $RC -eq 0 ] && [ -z "$bad" ]'
	done
	check "$mode: nothing left behind after the quota runs" nothing_left

	# 4. The host's /usr/local is not part of /usr in the sandbox: empty
	#    unless the profile names it or a subtree of it.
	mkjob "$M/site.json" shell "$SITE_SHOW"
	sbx_run "$M/site.json"
	got=$(jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))')
	check "$mode: /usr/local is empty in the sandbox by default" \
		eval '[ $RC -eq 0 ] && [ "$(sed -n 1p <<<"$got")" = "" ] && ! grep -q site-marker <<<"$got" && ! grep -q site-exec <<<"$got"'
	POLICY=$POLICY_SUB sbx_run "$M/site.json"
	got=$(jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))')
	check "$mode: a profile naming a subtree of /usr/local sees it, and only it" \
		eval '[ $RC -eq 0 ] && [ "$(sed -n 1p <<<"$got")" = "${SITE##*/} " ] && grep -qx site-marker <<<"$got"'
	check "$mode: ... and can run what it names" grep -qx site-exec <<<"$got"
	POLICY=$POLICY_ALL sbx_run "$M/site.json"
	got=$(jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))')
	check "$mode: a profile naming /usr/local sees all of it" \
		eval '[ $RC -eq 0 ] && [ "$(sed -n 1p <<<"$got")" = "$(ls -A /usr/local | tr "\n" " ")" ] && grep -qx site-marker <<<"$got"'
	check "$mode: ... and can run what is in it" grep -qx site-exec <<<"$got"
	check "$mode: the masked /usr/local is read-only" \
		eval 'mkjob "$M/site-w.json" shell "mkdir /usr/local/x 2>&1; echo rc=\$?"; sbx_run "$M/site-w.json"; jqm .stdout.excerpt | grep -q "rc=1"'
	check "$mode: nothing left behind after the site-tree runs" nothing_left
done

finish
