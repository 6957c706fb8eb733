#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# escape.sh - the attacks, written before the features they test.
#
# Each scenario is a payload that tries to reach something it must not:
# host files, the caller's environment, other processes, the kernel's
# dangerous interfaces, the host's network, another run's shared memory.
# Every attempt must fail, and nothing may be left behind.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

# The shipped catalog plus a test-only "probe" profile (lib.sh).
make_probe_catalog

# A listener on the host's loopback that the payload must not reach.
PORT_FILE="$T/port"
python3 - "$PORT_FILE" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(60)
try:
    while True:
        c, _ = s.accept()
        c.sendall(b"HOST-LOOPBACK-REACHED\n")
        c.close()
except Exception:
    pass
PY
LISTENER=$!
trap 'kill $LISTENER 2>/dev/null; cleanup_lib' EXIT
for i in $(seq 50); do [ -s "$PORT_FILE" ] && break; sleep 0.1; done
PORT=$(cat "$PORT_FILE")

# The checks a shell payload runs; each prints "<name> reached|blocked".
read -r -d '' ATTEMPTS <<'SH'
t() { if sh -c "$2" >/dev/null 2>&1; then echo "$1 reached"; else echo "$1 blocked"; fi; }
t shadow 'cat /etc/shadow'
t caller_home "ls $1"
t root_home 'ls /root'
t proc1_environ 'cat /proc/1/environ'
t proc1_mem 'head -c 1 /proc/1/mem'
t sys 'ls /sys/kernel'
t host_pid_visible 'test -n "$(ls /proc | grep -E "^[0-9]+$" | awk "\$1 > 1000")"'
t write_usr 'touch /usr/sbx-escape'
t write_etc 'touch /etc/sbx-escape'
t write_root 'touch /sbx-escape'
t write_in 'touch /work/in/sbx-escape'
t write_proc_sys 'echo 1 > /proc/sys/kernel/sysrq'
t mknod 'mknod /tmp/null2 c 1 3'
t mount 'mount -t tmpfs none /tmp'
t kcore 'head -c 1 /proc/kcore | grep -q .'
t tty 'test -e /dev/tty || test -e /dev/ptmx || test -e /dev/pts'
t exec_tmp 'cp /bin/true /tmp/t && /tmp/t'
t exec_work 'cp /bin/true /work/t && /work/t'
t loopback_host "python3 -c 'import socket; s=socket.create_connection((\"127.0.0.1\", $2), timeout=2); print(s.recv(64))'"
t external_net "python3 -c 'import socket; socket.create_connection((\"192.0.2.1\", 80), timeout=2)'"
t secret_env 'env | grep -qE "SBXSECRE[T]|hunte[r]2"'
t secret_proc 'grep -qsE "hunte[r]2" /proc/[0-9]*/environ /proc/[0-9]*/cmdline'
echo "init_cmdline $(tr '\0' ' ' < /proc/1/cmdline)"
echo "uid $(id -u)"
grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status | tr -d '\t' | tr ':' ' '
echo "ifaces $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\n' ',')"
echo "lo_self $(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); c=socket.create_connection(s.getsockname(), timeout=2); a, _=s.accept(); c.sendall(b"up"); print(a.recv(2).decode())' 2>&1 | tail -n 1)"
echo "hostname $(hostname)"
for n in user mnt pid net ipc uts cgroup; do echo "ns_$n $(readlink /proc/self/ns/$n)"; done
echo "cgroup_view $(cut -d: -f3 /proc/self/cgroup | sort -u | tr '\n' ',')"
SH

for mode in root user; do
	setup_mode $mode

	# 1. One payload, many attempts.
	caller_home=$M/home
	echo "private" > "$caller_home/secret.txt"
	mkjob "$M/attempts.json" shell "$ATTEMPTS" "{args: [\"$caller_home\", \"$PORT\"]}"
	SBX_EXTRA_ENV="SBXSECRET_TOKEN=hunter2-$RANDOM" sbx_run "$M/attempts.json"
	expect_rc 0 "$mode: attempts payload ran"
	got=$(jqm .stdout.excerpt | tr '\357\277\275' '\n' | sed 's/\xef\xbf\xbd/\n/g')
	# The excerpt holds newlines as U+FFFD; split on it.
	got=$(jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))')
	for name in shadow caller_home root_home proc1_environ proc1_mem sys host_pid_visible \
		write_usr write_etc write_root write_in write_proc_sys mknod mount kcore tty \
		exec_tmp exec_work loopback_host external_net secret_env secret_proc; do
		if grep -qx "$name blocked" <<<"$got"; then ok "$mode: $name blocked"; else
			not_ok "$mode: $name: $(grep "^$name " <<<"$got" || echo 'no result')"; fi
	done
	check "$mode: payload runs as uid 1000" grep -qx "uid 1000" <<<"$got"
	check "$mode: the init is sbx-init, with none of the caller's paths or arguments" \
		grep -qxE "init_cmdline sbx-init [0-9]+ [0-9]+ [0-9]+ ?" <<<"$got"
	for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
		check "$mode: $cap is empty" grep -qx "$cap 0000000000000000" <<<"$got"
	done
	check "$mode: NoNewPrivs 1" grep -qx "NoNewPrivs 1" <<<"$got"
	check "$mode: Seccomp 2 (filter)" grep -qx "Seccomp 2" <<<"$got"
	check "$mode: only lo in the net namespace" grep -qx "ifaces lo," <<<"$got"
	check "$mode: lo is up: the payload reaches itself on 127.0.0.1" grep -qx "lo_self up" <<<"$got"
	check "$mode: the host's name is not visible" grep -qx "hostname sbx" <<<"$got"
	# All seven namespaces are new (the clone makes user and pid, the init
	# the other five), and the cgroup namespace is rooted at the run's.
	for n in user mnt pid net ipc uts cgroup; do
		check "$mode: a new $n namespace" \
			eval '[[ "$(grep "^ns_$n " <<<"$got")" == "ns_$n $n:["* ]] && ! grep -qx "ns_$n $(readlink /proc/self/ns/$n)" <<<"$got"'
	done
	check "$mode: the sandbox's cgroup namespace is rooted at its own cgroup" \
		grep -qx "cgroup_view /," <<<"$got"
	check "$mode: the secret appears nowhere in the manifest" eval '! grep -q hunter2 "$OUT"'
	check "$mode: nothing left behind" nothing_left

	# 2. Kernel interfaces, through the probe: each must fail with the
	#    errno the policy sets (EPERM; ENOSYS for clone3 so libc falls
	#    back), not merely with a missing capability.  mknod is refused
	#    by Landlock (EACCES) before the capability check could say EPERM.
	POLICY=$POLICY
	mkjob "$M/syscalls.json" probe '/opt/sbx-probe syscalls; /opt/sbx-probe tiocsti; /opt/sbx-probe ptrace-init'
	POLICY=$POLICY sbx_run "$M/syscalls.json"
	expect_rc 0 "$mode: syscall probe ran"
	got=$(jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))')
	for want in unshare_user:EPERM unshare_net:EPERM unshare_ns:EPERM clone3:ENOSYS setns:EPERM \
		mount_tmpfs:EPERM umount_proc:EPERM pivot_root:EPERM chroot:EPERM open_tree:EPERM \
		fsopen:EPERM keyctl:EPERM add_key:EPERM bpf:EPERM perf_event_open:EPERM \
		userfaultfd:EPERM io_uring_setup:EPERM open_by_handle_at:EPERM \
		name_to_handle_at:EPERM kexec_load:EPERM init_module:EPERM acct:EPERM \
		swapoff:EPERM reboot:EPERM clock_settime:EPERM mknod_char:EACCES \
		personality_linux32:EPERM personality_query:ok ptrace_traceme:EPERM \
		tiocsti:EPERM tiocsti_high:EPERM tioclinux:EPERM ptrace_init:EPERM; do
		name=${want%%:*} errno=${want#*:}
		if grep -qx "$name $errno" <<<"$got"; then ok "$mode: $name -> $errno"; else
			not_ok "$mode: $name: wanted $errno, got '$(grep "^$name " <<<"$got" | cut -d' ' -f2-)'"; fi
	done

	# 3. A foreign ABI (x32) kills the payload instead of running a
	#    syscall the filter never saw.
	mkjob "$M/x32.json" probe 'exec /opt/sbx-probe x32'
	POLICY=$POLICY sbx_run "$M/x32.json"
	check "$mode: x32 syscall kills the payload (SIGSYS)" \
		eval '[ $RC -eq 1 ] && [ "$(jqm .exit.signal)" = SIGSYS ] && ! jqm .stdout.excerpt | grep -q survived'

	# 4. /dev/shm is private to each run, even concurrent ones.
	mkjob "$M/shm-a.json" shell 'echo marker > /dev/shm/sbx-marker; sleep 3; cat /dev/shm/sbx-marker'
	mkjob "$M/shm-b.json" shell 'sleep 1; ls /dev/shm'
	sbx_run "$M/shm-a.json" & apid=$!
	# That run took the next number in its subshell: this one must not
	# share its manifest, stderr and artifacts directory.
	RUNS=$((RUNS + 1))
	a_out="$M/out.$RUNS.json"
	sleep 0.5
	sbx_run "$M/shm-b.json"
	b_out=$(jqm .stdout.excerpt)
	b_rc=$RC
	wait $apid
	check "$mode: /dev/shm is not shared between concurrent runs" \
		eval '[ $b_rc -eq 0 ] && [ -z "$b_out" ] && [ "$(jq -r .stdout.excerpt "$a_out")" = marker ]'
	check "$mode: nothing left behind after concurrent runs" nothing_left
done

# 5. Fail closed: with user namespaces unavailable, sbx refuses with 69
#    and a Hint, and the payload never runs.  The unprivileged user enters
#    a user namespace of its own where max_user_namespaces is 0.
MODE=user
M="$T/user"
mkjob "$M/never.json" shell 'echo PAYLOAD-RAN'
runuser -u "$SBX_TEST_USER" -- env -i PATH=/usr/bin:/bin HOME="$M/home" SBX_LIBEXECDIR="$SBX_BUILDDIR" \
	unshare --user --map-root-user sh -c "echo 0 > /proc/sys/user/max_user_namespaces && exec \"\$@\"" sh \
	"$SBX" run --config "$M/config.json" --policy "$SBX_SRCDIR/policy" --key "$KEY" --store "$M/store" \
	--artifacts "$M/never-art" "$M/never.json" > "$M/never.out" 2> "$M/never.err"
rc=$?
check "no user namespaces: exit 69" test $rc -eq 69
check "no user namespaces: a Hint line names the setting" grep -q "^sbx: Hint: .*user" "$M/never.err"
check "no user namespaces: manifest says isolation_unavailable, payload never ran" \
	eval '[ "$(jq -r .status "$M/never.out")" = isolation_unavailable ] && [ "$(jq -r .exit "$M/never.out")" = null ] && ! grep -q PAYLOAD-RAN "$M/never.out"'

# 6. Fail closed when the kernel lacks what the security argument needs:
#    with clone3 or openat2 forced to ENOSYS (sbx's own test hook), sbx
#    refuses with 69 and a Hint, and the payload never runs.
MODE=root
M="$T/root"
KEY="$M/key"
mkjob "$M/never.json" shell 'echo PAYLOAD-RAN'
for sc in clone3 openat2; do
	SBX_EXTRA_ENV="SBX_TEST_ENOSYS=$sc" sbx_run "$M/never.json"
	check "$sc missing: exit 69 with a Hint, payload never ran" \
		eval '[ $RC -eq 69 ] && grep -q "^sbx: Hint: " "$ERR" && [ "$(jqm .status)" = isolation_unavailable ] && ! grep -q PAYLOAD-RAN "$OUT"'
done
# Without its init program (an installation that lost sbx-init), sbx
# refuses the same way: before any namespace exists.
SBX_EXTRA_ENV="SBX_LIBEXECDIR=$M/no-such-dir" sbx_run "$M/never.json"
check "sbx-init missing: exit 69 with a Hint naming it, payload never ran" \
	eval '[ $RC -eq 69 ] && grep -q "sbx-init: No such file" "$ERR" && grep -q "^sbx: Hint: .*make install" "$ERR" && [ "$(jqm .status)" = isolation_unavailable ] && ! grep -q PAYLOAD-RAN "$OUT"'
# An sbx-init that cannot be executed: the clone reports it, 69.
mkdir -p "$M/noexec"
cp "$SBX_BUILDDIR/sbx-init" "$M/noexec/sbx-init"
chmod 0644 "$M/noexec/sbx-init"
SBX_EXTRA_ENV="SBX_LIBEXECDIR=$M/noexec" sbx_run "$M/never.json"
check "sbx-init not executable: 69, the exec-init step named, payload never ran" \
	eval '[ $RC -eq 69 ] && grep -q "exec-init: starting sbx-init: Permission denied" "$ERR" && [ "$(jqm .status)" = isolation_unavailable ] && ! grep -q PAYLOAD-RAN "$OUT"'
check "nothing left behind after the refusals" nothing_left

finish
