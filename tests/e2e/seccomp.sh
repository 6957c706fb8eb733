#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# seccomp.sh - the seccomp policy's argument checks, attacked from inside.
#
# 1. Socket families: only AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK
#    (NETLINK_ROUTE) may be created; every other family - AF_VSOCK, whose
#    port space is the host's, first of all - fails with EAFNOSUPPORT,
#    including family numbers with bits above 31 set (the kernel reads an
#    int, seccomp sees 64 bits).
# 2. The init's limits and scheduling: the payload shares the init's
#    credentials, so only the filter keeps it from lowering the init's
#    rlimits (prlimit64 on pid 1) or starving it (setpriority,
#    sched_set*, ioprio_set).  The review's attack - RLIMIT_CPU of 1 s on
#    the init and a SIGTERM flood that makes it work - must end with the
#    payload's own status, not `error`.
# 3. What ordinary programs do on themselves keeps working.
# 4. modify_ldt (a 32-bit code segment written into the LDT),
#    memfd_secret and pidfd_getfd (an fd taken out of the payload's own
#    child) fail with EPERM: the policy's errno, which neither a kernel
#    without the call (ENOSYS) nor a missing capability would give.  The
#    same probe outside the sandbox shows each call works on this kernel.
# 5. The program compiled from a policy is kept in the state dir, and sbx
#    run then takes the policy's bytes as read without parsing them again:
#    an edited policy (a new deny rule) must apply on the very next run, a
#    broken one must be refused (69), never stood in for by the program
#    cached from the old bytes.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

make_probe_catalog

# The four families the policy allows (AF_UNIX, AF_INET, AF_INET6,
# AF_NETLINK); socket(2) numbers from <sys/socket.h>.
ALLOWED=" 1 2 10 16 "

# fam_check FILE: every family outside $ALLOWED got EAFNOSUPPORT from
# socket and socketpair, for every type; none inside it did.  Prints the
# offending lines; succeeds when there are none.
fam_check() {
	awk -v allowed="$ALLOWED" '
		$1 == "socket" || $1 == "socketpair" {
			n++
			in_list = index(allowed, " " $2 " ") > 0
			if (in_list && $4 == "EAFNOSUPPORT") { print "allowed family refused: " $0; bad++ }
			if (!in_list && $4 != "EAFNOSUPPORT") { print "family not refused: " $0; bad++ }
			seen[$2] = 1
		}
		END {
			for (f = 0; f <= 45; f++) if (!(f in seen)) { print "family " f " not probed"; bad++ }
			# 46 families: 4 socket types and 3 socketpair types each
			if (n != 46 * 7) { print "probed " n " cases, wanted " 46 * 7; bad++ }
			exit bad > 0
		}' "$1"
}

for mode in root user; do
	setup_mode $mode

	# 1. Every family number 0..45, socket and socketpair.
	mkjob "$M/fam.json" probe '/opt/sbx-probe families > /work/out/families.txt' \
		'{allowed_outputs: ["text/plain"]}'
	POLICY=$POLICY sbx_run "$M/fam.json"
	expect_rc 0 "$mode: families probe ran"
	fam="$ART/families.txt"
	if bad=$(fam_check "$fam" 2>&1); then ok "$mode: families 0..45: EAFNOSUPPORT outside unix, inet, inet6, netlink"; else
		not_ok "$mode: families 0..45"; head -20 <<<"$bad" | while read -r l; do diag "$l"; done; fi
	# The allowed families really work where the kernel supports the type.
	for want in "socket 1 1 ok" "socket 1 2 ok" "socket 1 5 ok" "socketpair 1 1 ok" \
		"socketpair 1 2 ok" "socketpair 1 5 ok" "socket 2 1 ok" "socket 2 2 ok" \
		"socket 10 1 ok" "socket 10 2 ok" "socket 16 3 ok" "socket 16 2 ok" \
		"socketpair 2 1 EOPNOTSUPP" "socket 40 1 EAFNOSUPPORT" "socketpair 40 1 EAFNOSUPPORT" \
		"socket 38 5 EAFNOSUPPORT" "socket 17 3 EAFNOSUPPORT" "socket 44 3 EAFNOSUPPORT" \
		"socket_vsock_high EAFNOSUPPORT" "socketpair_vsock_high EAFNOSUPPORT" \
		"socket_family_minus1 EAFNOSUPPORT" "socket_family_46 EAFNOSUPPORT" \
		"socket_family_255 EAFNOSUPPORT" "socket_family_intmax EAFNOSUPPORT" \
		"netlink_proto 0 ok" "netlink_dgram_route ok" "netlink_proto 4 EPROTONOSUPPORT" \
		"netlink_proto 6 EPROTONOSUPPORT" "netlink_proto 9 EPROTONOSUPPORT" \
		"netlink_proto 15 EPROTONOSUPPORT" "netlink_proto 16 EPROTONOSUPPORT" \
		"netlink_proto 21 EPROTONOSUPPORT" "netlink_proto_high EPROTONOSUPPORT"; do
		if grep -qx "$want" "$fam" 2>/dev/null; then ok "$mode: $want"; else
			not_ok "$mode: wanted '$want', got '$(grep "^${want% *} " "$fam" 2>/dev/null)'"; fi
	done

	# 2. AF_VSOCK explicitly: no socket, so no bind or listen in the
	#    host's vsock port space.
	port=$((20000 + RANDOM % 20000))
	mkjob "$M/vsock.json" probe "exec /opt/sbx-probe vsock $port"
	POLICY=$POLICY sbx_run "$M/vsock.json"
	got=$(jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))')
	check "$mode: AF_VSOCK socket, bind and listen all fail" \
		eval 'grep -qx "vsock_socket EAFNOSUPPORT" <<<"$got" && grep -qx "vsock_bind EBADF" <<<"$got" && grep -qx "vsock_listen EBADF" <<<"$got"'

	# 3. Calls aimed at the init fail with EPERM; the same calls on the
	#    payload itself and on its own child work.
	mkjob "$M/sched.json" probe '/opt/sbx-probe init-sched > /work/out/sched.txt' \
		'{allowed_outputs: ["text/plain"]}'
	POLICY=$POLICY sbx_run "$M/sched.json"
	expect_rc 0 "$mode: init-sched probe ran"
	sched="$ART/sched.txt"
	for want in prlimit_init_cpu:EPERM prlimit_init_nofile:EPERM prlimit_init_high:EPERM \
		prlimit_init_read:ok setpriority_init:EPERM setpriority_init_high_which:EPERM \
		setpriority_init_high_who:EPERM setpriority_pgrp1:EPERM setpriority_user:EPERM \
		setpriority_user_uid:EPERM sched_setscheduler_init:EPERM sched_setparam_init:EPERM \
		sched_setattr_init:EPERM sched_setaffinity_init:EPERM sched_setaffinity_init_high:EPERM \
		ioprio_set_init:EPERM ioprio_set_init_high_which:EPERM ioprio_set_pgrp1:EPERM \
		ioprio_set_user:EPERM prlimit_self:ok setrlimit_self:ok prlimit_child:EPERM \
		setpriority_self:ok setpriority_pgrp_self:ok setpriority_child:ok \
		sched_setaffinity_self:ok sched_setscheduler_self:ok sched_setscheduler_child:ok \
		ioprio_set_self:ok; do
		name=${want%%:*} errno=${want#*:}
		if grep -qx "$name $errno" "$sched" 2>/dev/null; then ok "$mode: $name -> $errno"; else
			not_ok "$mode: $name: wanted $errno, got '$(grep "^$name " "$sched" 2>/dev/null | cut -d' ' -f2-)'"; fi
	done
	check "$mode: the init's limits and scheduling are untouched" \
		eval 'grep -qE "^init_limit Max_cpu_time_+unlimited_+unlimited" "$sched" &&
		      ! grep -qE "^init_limit Max_open_files_+8_+8_" "$sched" &&
		      grep -qx "init_nice 0" "$sched" && grep -qx "init_policy 0" "$sched"'

	# 4. The review's attack: the init's RLIMIT_CPU lowered to 1 s, then
	#    40 children that ignore SIGTERM and a SIGTERM flood at pid 1
	#    until the init has used 1.5 s of CPU (or 20 s have passed).  The
	#    run must end as the payload ended it: succeeded, exit 0.
	mkjob "$M/flood.json" probe 'exec /opt/sbx-probe init-flood 40 1500 20' '{limits: {wall_seconds: 60}}'
	POLICY=$POLICY sbx_run "$M/flood.json"
	got=$(jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))')
	check "$mode: the prlimit on the init is refused" grep -qx "flood_prlimit_init_cpu EPERM" <<<"$got"
	if [ $RC -eq 0 ] && [ "$(jqm '.status + " " + (.exit.code|tostring)')" = "succeeded 0" ]; then
		ok "$mode: SIGTERM flood at the init: the run ends succeeded 0"
	else
		not_ok "$mode: SIGTERM flood at the init: exit $RC, status $(jqm .status)"
		diag "stderr: $(head -c 800 "$ERR")"
	fi
	diag "$mode: $(grep '^flood ' <<<"$got")"
	check "$mode: the flood run's manifest is signed" signature_ok

	# 5. Ordinary Python on itself: niceness, affinity, scheduler, rlimits,
	#    sockets of the allowed families.
	mkjob "$M/py.json" python-analysis "$(cat <<'PY'
import os, resource, socket
os.setpriority(os.PRIO_PROCESS, 0, 3)
os.nice(1)
assert os.getpriority(os.PRIO_PROCESS, 0) == 4
cpus = os.sched_getaffinity(0)
os.sched_setaffinity(0, {min(cpus)})
assert os.sched_getaffinity(0) == {min(cpus)}
os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(64, hard), hard))
assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == min(64, hard)
resource.setrlimit(resource.RLIMIT_CPU, (30, 30))
resource.prlimit(0, resource.RLIMIT_CORE, (0, 0))
for fam, typ in ((socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_INET, socket.SOCK_STREAM),
                 (socket.AF_INET6, socket.SOCK_DGRAM)):
    socket.socket(fam, typ).close()
a, b = socket.socketpair()
a.sendall(b"x"); assert b.recv(1) == b"x"
socket.getaddrinfo("localhost", 80)
try:
    socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    print("vsock opened")
except OSError as e:
    print("vsock", e.errno == 97)
try:
    os.setpriority(os.PRIO_PROCESS, 1, 10)
    print("init renice allowed")
except OSError as e:
    print("init renice", e.errno == 1)
print("python ok")
PY
)"
	sbx_run "$M/py.json"
	got=$(jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))')
	check "$mode: python's own niceness, affinity, scheduler, rlimits and sockets work" \
		eval '[ $RC -eq 0 ] && grep -qx "python ok" <<<"$got" && grep -qx "vsock True" <<<"$got" && grep -qx "init renice True" <<<"$got"'
	[ $RC -eq 0 ] || diag "stderr excerpt: $(jqm .stderr.excerpt | head -c 800)"

	# 4. Calls no analysis job needs, denied with EPERM.
	if [ $mode = root ]; then
		host=$("$SBX_BUILDDIR/tests/probe/sbx-probe" ldt-secret 2>&1)
		diag "outside the sandbox: $(echo $host)"
		check "outside the sandbox, modify_ldt and pidfd_getfd work on this kernel (the probe is real)" \
			eval 'grep -qx "modify_ldt_write_code32 ok" <<<"$host" && grep -qx "pidfd_getfd_child ok" <<<"$host"'
	fi
	mkjob "$M/ldt.json" probe 'exec /opt/sbx-probe ldt-secret'
	POLICY=$POLICY sbx_run "$M/ldt.json"
	expect_rc 0 "$mode: ldt-secret probe ran"
	got=$(jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))')
	for want in modify_ldt_write_code32:EPERM memfd_secret:EPERM pidfd_getfd_child:EPERM; do
		name=${want%%:*} errno=${want#*:}
		if grep -qx "$name $errno" <<<"$got"; then ok "$mode: $name -> $errno"; else
			not_ok "$mode: $name: wanted $errno, got '$(grep "^$name " <<<"$got" | cut -d' ' -f2-)'"; fi
	done

	# 5. The cached program stands only for the bytes it came from.
	SC="$M/sc-policy"
	rm -rf "$SC" && cp -r "$SBX_SRCDIR/policy" "$SC" && chmod -R a+rX "$SC"
	cp "$SC/seccomp/default.json" "$M/sc-default.json"
	mkjob "$M/mk.json" shell 'if mkdir /tmp/d 2>/dev/null; then echo made; else echo denied; fi'
	POLICY=$SC sbx_run "$M/mk.json"
	POLICY=$SC sbx_run "$M/mk.json"
	check "$mode: cached policy: the second run the same (mkdir allowed)" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .stdout.excerpt)" = "made" ] && ls "$M/state/seccomp/"*.bpf >/dev/null'
	jq '.deny += [{"syscalls": ["mkdir", "mkdirat"], "errno": "EPERM", "why": "test only"}]' \
		"$M/sc-default.json" > "$SC/seccomp/default.json"
	POLICY=$SC sbx_run "$M/mk.json"
	check "$mode: an edited policy applies on the next run (mkdir denied)" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .stdout.excerpt)" = "denied" ]'
	jq '.deny[0].syscalls += ["no_such_syscall"]' "$M/sc-default.json" > "$SC/seccomp/default.json"
	POLICY=$SC sbx_run "$M/mk.json"
	expect_rc 69 "$mode: a broken policy is refused, cached program or not"
	check "$mode: ... naming the file and the syscall" \
		eval 'grep -q "seccomp/default.json" "$ERR" && grep -q "no_such_syscall" "$ERR"'
	cp "$M/sc-default.json" "$SC/seccomp/default.json"
	POLICY=$SC sbx_run "$M/mk.json"
	check "$mode: the old policy back: mkdir allowed again" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .stdout.excerpt)" = "made" ]'
	check "$mode: nothing left behind" nothing_left
done

finish
