#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# budgets.sh - kernel budgets the host keeps per uid, which a payload
# shares with its caller when they run as the same host uid (an
# unprivileged caller without subordinate ids: the "shared" mode), and
# which sbx's own set-up must not depend on.  Root's runs have an id of
# their own (root_ids); what is left of them here is the user namespace's
# owner, whose count every run's inotify instances are charged to.
#
#  1. fds in flight: a payload puts 1,250 fds in flight over a socketpair
#     and holds them.  The kernel counts them per host uid and refuses a
#     sender whose RLIMIT_NOFILE soft limit is below the count
#     (ETOOMANYREFS).  Meanwhile a run started by the same caller (at the
#     usual soft limit of 1024) gets through its set-up, and a process of
#     the caller whose limit is above what a payload can reach (its own
#     1024 plus one message, 253) still sends fds.
#  2. epoll watches (fs.epoll.max_user_watches) are per host uid too.
#     Draining the host's ~5.5 million takes ~1.2 GB of kernel memory, and
#     lowering the host-wide sysctl would disturb everything else on the
#     host, so this test does neither.  It shows instead that sbx does not
#     depend on the budget: a broker traced with strace makes no epoll or
#     inotify instance in a plain run or in an egress run whose proxy
#     answers the payload, while a payload of the same caller holds 100,000
#     watches.  And admission, which waits for a free slot with inotify
#     (a budget the same caller's payloads draw from), still admits when
#     inotify_init1 fails with EMFILE or inotify_add_watch with ENOSPC
#     (injected with strace).
#  3. root: the sandbox's user namespace is owned by the run's own host id
#     (NS_GET_OWNER_UID), so its inotify instances are charged to that id
#     and not to host root: max_concurrent runs that each take a quota of
#     inotify instances adding up to more than the host's
#     fs.inotify.max_user_instances all get theirs, and a root process of
#     the test can still make one.
# Every hog is bounded (counts, a few seconds, wall_seconds) and touches
# only the test's own processes.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need strace setpriv
make_probe_catalog
bound_sbx 90

# Callers start with the soft RLIMIT_NOFILE a login gets (1024), whatever
# the shell that runs the suite has; the hard limit is left as it is.
SBX_BOUNDED=$SBX
SBX="$T/sbx-low"
printf '#!/bin/sh\nulimit -Sn 1024 || exit 98\nexec "%s" "$@"\n' "$SBX_BOUNDED" > "$SBX"
chmod 0755 "$SBX"

# start_bg JOBFILE [CONFIG] [sbx options...]: sbx in the background as the
# mode's identity, with exec all the way so that $BG_PID is sbx itself.
start_bg() {
	local job=$1 cfg=${2:-$M/config.json}
	shift; [ $# -gt 0 ] && shift
	RUNS=$((RUNS + 1))
	BG_OUT="$M/out.$RUNS.json"
	BG_ERR="$M/err.$RUNS.txt"
	local cmd=(sh -c 'ulimit -Sn 1024 && exec "$@"' sh "$SBX_REAL" run --config "$cfg"
		--policy "${POLICY:-$SBX_SRCDIR/policy}" --key "$KEY" --store "$M/store"
		--artifacts "$M/art.$RUNS" "$@" "$job")
	if [ "$MODE" = user ]; then
		cmd=(setpriv --reuid "$SBX_TEST_USER" --regid "$(id -g "$SBX_TEST_USER")" --clear-groups
			env -i PATH=/usr/bin:/bin HOME="$M/home" XDG_RUNTIME_DIR="$M/state"
			SBX_LIBEXECDIR="$SBX_BUILDDIR" "${cmd[@]}")
	else
		cmd=(env -i PATH=/usr/bin:/bin HOME="$M/home" SBX_LIBEXECDIR="$SBX_BUILDDIR" "${cmd[@]}")
	fi
	# (The launch cgroup by exec, not by lib.sh's function, which would
	# put a subshell between $! and sbx.)
	[ -z "$CG_LAUNCH" ] || cmd=(sh -c 'echo $$ > "$0" && exec "$@"' "$CG_LAUNCH" "${cmd[@]}")
	"${cmd[@]}" </dev/null >"$BG_OUT" 2>"$BG_ERR" &
	BG_PID=$!
}


# wait_ready: the payload's /tmp/ready (seen through its root), at most 30 s.
wait_ready() {
	local i
	for i in $(seq 300); do
		[ -e "/proc/$PAYLOAD_PID/root/tmp/ready" ] && { cat "/proc/$PAYLOAD_PID/root/tmp/ready"; return 0; }
		kill -0 "$BG_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# stop_bg [PID]: cancel a background run (SIGTERM to our own sbx), reap it.
stop_bg() {
	local pid=${1:-$BG_PID}
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	BG_RC=$?
}

as_host() {
	if [ "$MODE" = user ]; then
		setpriv --reuid "$SBX_TEST_USER" --regid "$(id -g "$SBX_TEST_USER")" --clear-groups "$@"
	else
		"$@"
	fi
}

# strace_run OUTFILE STRACE-ARGS... -- JOB [CONFIG] [sbx options]: sbx run
# under strace (the broker's own thread only: no -f), as the mode's
# identity; the trace in OUTFILE, manifest in $OUT, status in $RC.
strace_run() {
	local trace=$1; shift
	local sargs=()
	while [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	local job=$1 cfg=${2:-$M/config.json}
	shift; [ $# -gt 0 ] && shift
	RUNS=$((RUNS + 1))
	OUT="$M/out.$RUNS.json"
	ERR="$M/err.$RUNS.txt"
	as_mode sh -c 'ulimit -Sn 1024 && exec "$@"' sh strace -qq -o "$trace" "${sargs[@]}" -- \
		"$SBX_REAL" run --config "$cfg" \
		--policy "${POLICY:-$SBX_SRCDIR/policy}" --key "$KEY" --store "$M/store" \
		--artifacts "$M/art.$RUNS" "$@" "$job" >"$OUT" 2>"$ERR"
	RC=$?
	jq -r '.run_id // empty' "$OUT" >> "$T/run-ids" 2>/dev/null
}

# The payload of 1: 250 fds of /dev/null, sent over a socketpair in
# messages of 250 until the kernel refuses; the count and the refusal
# in /tmp/ready; then it holds them (never receiving) for a few seconds.
read -r -d '' INFLIGHT <<'PY'
import os, socket, time
a, b = socket.socketpair()
fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(250)]
sent, why = 0, "none"
for _ in range(8):
    try:
        socket.send_fds(a, [b"x"], fds)
        sent += len(fds)
    except OSError as e:
        why = os.strerror(e.errno)
        break
with open("/tmp/ready.tmp", "w") as f:
    f.write("inflight %d %s\n" % (sent, why))
os.rename("/tmp/ready.tmp", "/tmp/ready")
time.sleep(8)
PY

# The caller's own SCM_RIGHTS send: one fd over a fresh socketpair.
cat > "$T/scm.py" <<'PY'
import os, socket
a, b = socket.socketpair()
try:
    socket.send_fds(a, [b"x"], [os.open("/dev/null", os.O_RDONLY)])
    print("scm ok")
except OSError as e:
    print("scm", os.strerror(e.errno))
PY

# The payload of 2: 200 epoll sets, each watching the same 500 eventfds.
read -r -d '' EPOLL_HOLD <<'PY'
import os, select, time
evs = [os.eventfd(0) for _ in range(500)]
n = 0
sets = []
for _ in range(200):
    ep = select.epoll()
    for e in evs:
        ep.register(e, select.EPOLLIN)
        n += 1
    sets.append(ep)
with open("/tmp/ready.tmp", "w") as f:
    f.write("watches %d\n" % n)
os.rename("/tmp/ready.tmp", "/tmp/ready")
time.sleep(10)
PY

# An egress run's payload: one request through the proxy, refused (the
# host is not on the allowlist), so the proxy's loop runs without any
# network beyond the sandbox's own socket.
read -r -d '' EGRESS <<'PY'
import urllib.request, urllib.error
try:
    urllib.request.urlopen("http://example.invalid/", timeout=10)
    print("fetched")
except urllib.error.HTTPError as e:
    print("proxy said", e.code)
PY

# On the host, as root: the owner of a process's user namespace
# (NS_GET_OWNER_UID), and one inotify instance of our own.
cat > "$T/owner.py" <<'PY'
import fcntl, os, struct, sys
fd = os.open("/proc/%s/ns/user" % sys.argv[1], os.O_RDONLY | os.O_CLOEXEC)
print(struct.unpack("I", fcntl.ioctl(fd, 0xb704, b"\0" * 4))[0])
PY
cat > "$T/inotify.py" <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.inotify_init1(os.O_CLOEXEC)
print("inotify", "ok" if r >= 0 else os.strerror(ctypes.get_errno()))
PY
chmod 0644 "$T"/*.py

for mode in root user; do
	setup_mode $mode
	ensure_prepared "$POLICY" python-analysis

	# 1. fds in flight.
	mkjob "$M/inflight.json" python-analysis "$INFLIGHT" '{limits: {wall_seconds: 30}}'
	start_bg "$M/inflight.json"
	hog= host_hi= host_lo=
	if wait_payload "python3*"; then
		hog=$(wait_ready)
		mkjob "$M/true.json" shell 'echo fine'
		sbx_run "$M/true.json"
		host_hi=$(as_host sh -c 'ulimit -Sn "$(ulimit -Hn)" && exec python3 "$0"' "$T/scm.py" 2>&1)
		host_lo=$(as_host sh -c 'ulimit -Sn 1024 && exec python3 "$0"' "$T/scm.py" 2>&1)
	else
		RC=-1 OUT=/dev/null ERR=/dev/null
	fi
	stop_bg
	diag "$mode: payload: $hog; caller at its hard limit: $host_hi; caller at 1024: $host_lo"
	check "$mode: the payload put its 1,250 fds in flight, and no more" \
		grep -qx "inflight 1250 Too many references: cannot splice" <<<"$hog"
	expect_rc 0 "$mode: meanwhile a run of the same caller gets through its set-up"
	check "$mode: ... and its payload ran" test "$(jqm .stdout.excerpt 2>/dev/null)" = "fine"
	check "$mode: meanwhile the caller's own sendmsg(SCM_RIGHTS) works at its hard limit" \
		test "$host_hi" = "scm ok"
	if [ $mode = root ]; then
		check "root: ... and at 1024 too (the payload's count is its own id's)" \
			test "$host_lo" = "scm ok"
	fi
	check "$mode: the holding run was cancelled cleanly" \
		eval '[ "$(jq -r .status "$BG_OUT")" = cancelled ] && nothing_left'

	# 2. epoll and inotify: the broker makes none in a run, also while a
	#    payload of the same caller holds 100,000 watches.
	mkjob "$M/epoll.json" python-analysis "$EPOLL_HOLD" '{limits: {wall_seconds: 30}}'
	start_bg "$M/epoll.json"
	held=
	wait_payload "python3*" && held=$(wait_ready)
	check "$mode: a payload holds 100,000 epoll watches" test "$held" = "watches 100000"
	mkjob "$M/plain.json" shell 'echo plain'
	strace_run "$M/trace.plain" -e trace=epoll_create,epoll_create1,epoll_ctl,inotify_init,inotify_init1 -- "$M/plain.json"
	check "$mode: meanwhile a plain run succeeds" eval '[ $RC -eq 0 ] && [ "$(jqm .stdout.excerpt)" = plain ]'
	check "$mode: ... and its broker makes no epoll set or inotify instance" \
		eval '! grep -E "^(epoll|inotify)" "$M/trace.plain" >&2'
	mkjob "$M/egress.json" python-analysis "$EGRESS" '{network_profile: "egress-example"}'
	strace_run "$M/trace.egress" -e trace=epoll_create,epoll_create1,epoll_ctl,inotify_init,inotify_init1 -- "$M/egress.json"
	check "$mode: meanwhile an egress run's proxy answers its payload" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .stdout.excerpt)" = "proxy said 403" ]'
	check "$mode: ... and its broker makes no epoll set or inotify instance" \
		eval '! grep -E "^(epoll|inotify)" "$M/trace.egress" >&2'
	stop_bg
	check "$mode: the watching run was cancelled cleanly" \
		eval '[ "$(jq -r .status "$BG_OUT")" = cancelled ] && nothing_left'

	#    Admission's wait for a slot without inotify: one slot, held for
	#    2 s by a run; a queued run whose inotify fails still gets it.
	jq '.max_concurrent = 1' "$M/config.json" > "$M/config-1.json"
	chmod 0644 "$M/config-1.json"
	mkjob "$M/hold.json" shell 'sleep 2'
	for fault in inotify_init1:error=EMFILE inotify_add_watch:error=ENOSPC; do
		start_bg "$M/hold.json" "$M/config-1.json"
		wait_payload sleep
		t0=$(date +%s%N)
		strace_run "$M/trace.queue" -e trace="${fault%%:*}" -e inject="$fault" -- "$M/plain.json" \
			"$M/config-1.json" --queue-timeout 20
		t1=$(date +%s%N)
		wait "$BG_PID"
		check "$mode: with $fault, a queued run is admitted when the slot is free ($(( (t1 - t0) / 1000000 )) ms)" \
			eval '[ $RC -eq 0 ] && [ "$(jqm .stdout.excerpt)" = plain ] && grep -q "${fault%%:*}.*(INJECTED)" "$M/trace.queue"'
		[ $RC -eq 0 ] || diag "stderr: $(head -c 600 "$ERR")"
	done
	check "$mode: nothing left behind after the queued runs" nothing_left

	# 3. Root's runs and host root's inotify budget.
	if [ $mode = root ]; then
		limit=$(cat /proc/sys/fs/inotify/max_user_instances)
		n=4
		q=$((limit / n + 8))
		while [ $q -gt 1024 ]; do n=$((n * 2)); q=$((limit / n + 8)); done
		POLICY_Q="$T/policy-inotify"
		rm -rf "$POLICY_Q"
		cp -r "$POLICY" "$POLICY_Q"
		jq --argjson q $q '.kernel_quotas = {"inotify_instances": $q}' \
			"$POLICY/profiles/probe.json" > "$POLICY_Q/profiles/probe.json"
		chmod -R a+rX "$POLICY_Q"
		jq --argjson n $n '.max_concurrent = $n' "$M/config.json" > "$M/config-n.json"
		mkjob "$M/ino.json" probe 'exec /opt/sbx-probe hog-quotas /tmp/ready 10' \
			'{limits: {wall_seconds: 30, memory_mib: 64}}'
		pids=() errs=() counts=() owners=()
		for i in $(seq $n); do
			POLICY=$POLICY_Q start_bg "$M/ino.json" "$M/config-n.json" --queue-timeout 10
			pids+=("$BG_PID") errs+=("$BG_ERR")
		done
		for i in $(seq 0 $((n - 1))); do
			BG_PID=${pids[$i]}
			if wait_payload sbx-probe; then
				owners+=("$(python3 "$T/owner.py" "$PAYLOAD_PID" 2>&1)")
				counts+=("$(wait_ready | awk '/^inotify /{print $2}')")
			else
				counts+=(none) owners+=(none)
				diag "run $i: $(head -c 300 "${errs[$i]}")"
			fi
		done
		mine=$(python3 "$T/inotify.py" 2>&1)
		for p in "${pids[@]}"; do stop_bg "$p"; done
		diag "root: $n runs, quota $q each (host limit $limit): got ${counts[*]}; owners ${owners[*]}; root: $mine"
		bad=
		for c in "${counts[@]}"; do [ "$c" = "$q" ] || bad=1; done
		check "root: $n concurrent runs each got their $q inotify instances ($((n * q)) > $limit)" test -z "$bad"
		check "root: meanwhile root can still make an inotify instance" test "$mine" = "inotify ok"
		bad=
		for o in "${owners[@]}"; do
			[[ "$o" =~ ^[0-9]+$ ]] && [ "$o" -ge "$ROOT_IDS_FIRST" ] &&
				[ "$o" -lt $((ROOT_IDS_FIRST + ROOT_IDS_COUNT)) ] || bad=1
		done
		check "root: each run's user namespace is owned by its own host id, not root" test -z "$bad"
		check "root: ... a different one for each run" \
			test "$(printf '%s\n' "${owners[@]}" | sort -u | wc -l)" -eq "$n"
		check "root: nothing left behind after the inotify runs" nothing_left
	fi
done

finish
