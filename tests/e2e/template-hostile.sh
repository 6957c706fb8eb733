#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# template-hostile.sh - a payload born from a template cannot reach the
# template, and every hostile probe the cold path passes passes on the
# template path too: memory hog, fork bomb, a payload that ignores
# SIGTERM, disk fill, sbx cancel, SIGKILL of sbx then sbx gc, the death of
# the template mid-run, eight runs at once.
#
# Each scenario runs as root and as the unprivileged test user
# (SBX_E2E_MODES narrows that, SBX_E2E_SECTIONS the numbered sections: the
# VM suite runs a part of it, tests/vm/guest.sh).  The only
# processes the test signals are sbx runs it started and the template it
# started (found by `sbx template status --json`); a run's processes are
# found in its cgroup.
. "$SBX_SRCDIR/tests/e2e/lib.sh"
. "$SBX_SRCDIR/tests/e2e/template-lib.sh"

bound_sbx 120

# The payload looks for a way to the template.  argv: the template's host
# pid, its socket's host path.  "NAME ok" or "NAME bad: DETAIL" lines.
read -r -d '' REACH <<'PY'
import ctypes, errno, os, socket, subprocess, sys
tpid, tsock = int(sys.argv[1]), sys.argv[2]
out = []
def t(name, v, detail=""):
    out.append("%s %s" % (name, "ok" if v else "bad: %s" % detail))
# Every socket in view, /usr included: find(1) reads the types from the
# directory entries, where a walk in Python would stat each file (minutes
# of /usr on an emulated machine).
f = subprocess.run(["find", "/", "(", "-path", "/proc", "-o", "-path", "/sys", ")", "-prune",
                    "-o", "-type", "s", "-print"], capture_output=True, text=True)
socks = f.stdout.split()
t("no_socket_in_view", socks == [] and f.returncode in (0, 1), socks[:5] or f.stderr[-300:])
unix = [l.split()[-1] for l in open("/proc/net/unix").read().splitlines()[1:] if len(l.split()) > 7]
t("no_unix_path_in_netns", not any(".sock" in u or "template" in u for u in unix), unix[:5])
# Connecting to everything that looks like a socket: refused or absent.
reached = []
for p in socks + [tsock, "/run/sbx/template.sock"] + ["\0" + u.lstrip("@") for u in unix if u.startswith("@")]:
    for kind in (socket.SOCK_SEQPACKET, socket.SOCK_STREAM):
        s = socket.socket(socket.AF_UNIX, kind)
        try:
            s.connect(p)
            s.send(b"sbxt" + b"\0" * 36)
            reached.append(p)
        except OSError:
            pass
        finally:
            s.close()
t("no_connect", reached == [], reached[:5])
t("socket_path_absent", not os.path.lexists(tsock), tsock)
procs = {}
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            procs[int(p)] = open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode()
        except OSError:
            procs[int(p)] = "?"
t("no_template_in_proc", not any("sbx-template" in c for c in procs.values()), procs)
t("few_processes", len(procs) <= 2, procs)
# kill(pid, 0) of every pid number that is not one of ours: ESRCH.
alive = []
for pid in list(range(1, 4097)) + ([tpid] if tpid > 0 else []):
    if pid in procs:
        continue
    try:
        os.kill(pid, 0)
        alive.append(pid)
    except OSError as e:
        if e.errno != errno.ESRCH:
            alive.append((pid, e.errno))
t("kill_outside", alive == [], alive[:5])
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, tpid, None, None)  # PTRACE_ATTACH
t("ptrace_template_pid", r == -1, "ptrace attach %d returned %d" % (tpid, r))
r = libc.syscall(434, tpid, 0)  # pidfd_open
t("pidfd_template_pid", r == -1, "pidfd_open %d returned %d" % (tpid, r))
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[int(fd)] = os.readlink("/proc/self/fd/" + fd)
    except OSError:
        pass
t("no_inherited_fd", all(fd <= 2 or l.startswith("/proc") for fd, l in fds.items()), fds)
t("stdio_no_socket", not any(l.startswith("socket:") for fd, l in fds.items() if fd <= 2), fds)
# The init's fds, as far as the payload may see them: no more sockets
# than the one to its broker.
try:
    init = [os.readlink("/proc/1/fd/" + f) for f in os.listdir("/proc/1/fd")]
    t("init_fds", sum(l.startswith("socket:") for l in init) <= 1, init)
except OSError as e:
    t("init_fds", True)
print("\n".join(out))
PY

# Hostile payloads, in Python so that they run in the interpreter the
# template cloned.
read -r -d '' MEMHOG <<'PY'
import sys
b = []
for i in range(64):
    b.append(b"\x01" * (16 << 20))
print("not killed at", len(b) * 16, "MiB")
PY
read -r -d '' FORKBOMB <<'PY'
import errno, os, time
made = 0
err = "none"
for i in range(200):
    try:
        pid = os.fork()
    except OSError as e:
        err = errno.errorcode.get(e.errno, str(e.errno))
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    made += 1
print("forkbomb made=%d errno=%s" % (made, err), flush=True)
while True:
    pass
PY
read -r -d '' NOTERM <<'PY'
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ignoring", flush=True)
while True:
    time.sleep(0.1)
PY
read -r -d '' DISKFILL <<'PY'
import errno, os
for d in ("/tmp", "/work"):
    n = 0
    try:
        with open(os.path.join(d, "fill"), "wb") as f:
            for i in range(1024):
                f.write(b"\x01" * (1 << 20))
                f.flush()
                n += 1
        print(d, "full no", n)
    except OSError as e:
        print(d, "full", errno.errorcode.get(e.errno), n)
    try:
        os.unlink(os.path.join(d, "fill"))
    except OSError:
        pass
PY
read -r -d '' LONG <<'PY'
import time
print("started", flush=True)
time.sleep(30)
PY
read -r -d '' SLOWOK <<'PY'
import time, numpy
time.sleep(2)
with open("/work/out/done.txt", "w") as f:
    f.write("done\n")
print("done")
PY
read -r -d '' CONC <<'PY'
import sys, numpy, pandas
k = int(sys.argv[1])
a = numpy.arange(1000, dtype=float) * k
pandas.DataFrame({"k": [k], "sum": [a.sum()]}).to_csv("/work/out/r.csv", index=False)
print("k", k, a.sum())
PY

for mode in ${SBX_E2E_MODES:-root user}; do
	setup_mode $mode
	PROFILE=python-analysis
	tpl_start python-analysis
	check "$mode: sbx template start: a template runs (pid ${TPID:-none})" test -n "$TPID"
	digest=$(tpl_field python-analysis digest)
	sock=$(find "$M/state" -type s 2>/dev/null | head -1)
	check "$mode: the template's socket is in the state dir ($sock)" test -S "$sock"
	check "$mode: the socket's directory is 0700" test "$(stat -c %a "$(dirname "$sock")" 2>/dev/null)" = 700
	runs0=$(tpl_field python-analysis runs)

	# 1. The payload cannot reach the template.
	if section 1; then
		mkpyjob "$M/reach.json" "$REACH" "{args: [\"${TPID:-0}\", \"$sock\"]}"
		sbx_run "$M/reach.json"
		expect_rc 0 "$mode: the reach probe"
		check "$mode: the reach probe was a template run" is_template_run "$digest"
		for name in no_socket_in_view no_unix_path_in_netns no_connect socket_path_absent no_template_in_proc \
			few_processes kill_outside ptrace_template_pid pidfd_template_pid no_inherited_fd stdio_no_socket init_fds; do
			v=$(res "$name")
			check "$mode: cannot reach the template: $name ($v)" test "$v" = ok
		done
		check "$mode: the template is the same process after the probe" eval '[ -n "$TPID" ] && [ "$(tpl_pid python-analysis)" = "$TPID" ]'
		check "$mode: the template cloned exactly one run for it ($runs0 -> $(tpl_field python-analysis runs))" \
			test "$(tpl_field python-analysis runs)" = "$((${runs0:-0} + 1))"
	fi

	# 2. Memory hog at 4x the limit: as cold.
	if section 2; then
		mkpyjob "$M/memhog.json" "$MEMHOG" '{limits: {memory_mib: 128}}'
		sbx_run "$M/memhog.json"
		expect_rc 137 "$mode: template run: memory hog at 4x the limit"
		check "$mode: memory hog: a template run" is_template_run "$digest"
		check "$mode: memory hog: limit_exceeded, memory_limit, SIGKILL, an OOM kill counted, signed" \
			eval '[ "$(jqm .status)" = limit_exceeded ] && [ "$(jqm .reason_code)" = memory_limit ] && [ "$(jqm .exit.signal)" = SIGKILL ] && [ "$(jqm ".usage.oom_kills >= 1")" = true ] && signature_ok'
		check "$mode: memory hog: peak memory near the limit ($(jqm .usage.peak_memory_bytes))" \
			test "$(jqm '.usage.peak_memory_bytes >= 0.9 * 128 * 1048576')" = true
		check "$mode: memory hog: the template survived it" eval '[ -n "$TPID" ] && [ "$(tpl_pid python-analysis)" = "$TPID" ]'
		check "$mode: memory hog: nothing left behind" nothing_left_tpl
	fi

	# 3. Fork bomb under pids 32.
	if section 3; then
		mkpyjob "$M/forkbomb.json" "$FORKBOMB" '{limits: {pids: 32, wall_seconds: 3, grace_seconds: 1}}'
		t0=$(now_ms)
		sbx_run "$M/forkbomb.json"
		took=$(($(now_ms) - t0))
		expect_rc 124 "$mode: template run: fork bomb under pids 32 ends at the wall deadline"
		check "$mode: fork bomb: a template run" is_template_run "$digest"
		check "$mode: fork bomb: fork failed with EAGAIN before 32 processes ($(jqm .stdout.excerpt | head -1))" \
			eval 'jqm .stdout.excerpt | grep -Eq "^forkbomb made=([0-9]|[12][0-9]|3[01]) errno=EAGAIN"'
		check "$mode: fork bomb: usage.pids_limit_hit" test "$(jqm .usage.pids_limit_hit)" = true
		check "$mode: fork bomb: ended near the deadline ($took ms)" eval '[ $took -ge 3000 ] && [ $took -le $((6000 + SLACK_MS)) ]'
		check "$mode: fork bomb: nothing left behind" nothing_left_tpl
	fi

	# 4. A payload that ignores SIGTERM: killed after the grace period.
	if section 4; then
		mkpyjob "$M/noterm.json" "$NOTERM" '{limits: {wall_seconds: 2, soft_seconds: 1, grace_seconds: 1}}'
		t0=$(now_ms)
		sbx_run "$M/noterm.json"
		took=$(($(now_ms) - t0))
		expect_rc 124 "$mode: template run: payload ignoring SIGTERM times out"
		check "$mode: ignores SIGTERM: a template run" is_template_run "$digest"
		check "$mode: ignores SIGTERM: timed_out, wall_timeout, SIGKILL" \
			eval '[ "$(jqm .status)" = timed_out ] && [ "$(jqm .reason_code)" = wall_timeout ] && [ "$(jqm .exit.signal)" = SIGKILL ]'
		check "$mode: ignores SIGTERM: done within wall+grace+1.5 s ($took ms), at least wall+grace" \
			eval '[ $took -ge 3000 ] && [ $took -le $((4500 + SLACK_MS)) ]'
		check "$mode: ignores SIGTERM: nothing left behind" nothing_left_tpl
	fi

	# 5. Disk fill of /tmp and /work: ENOSPC inside, as cold.
	if section 5; then
		mkpyjob "$M/fill.json" "$DISKFILL" '{limits: {workspace_mib: 16}}'
		sbx_run "$M/fill.json"
		trc=$RC tfill=$(jqm .stdout.excerpt | tr '\n' ';') tt=$(is_template_run "$digest" && echo template)
		sbx_run "$M/fill.json" --no-template
		check "$mode: disk fill: template run ($tt), exit $trc as cold's $RC" eval '[ "$tt" = template ] && [ "$trc" = "$RC" ] && [ $RC -eq 0 ]'
		check "$mode: disk fill: /tmp and /work full with ENOSPC, as cold ($tfill)" \
			eval '[ "$tfill" = "$(jqm .stdout.excerpt | tr "\n" ";")" ] && [[ "$tfill" == "/tmp full ENOSPC "*";/work full ENOSPC "* ]]'
		check "$mode: disk fill: nothing left behind" nothing_left_tpl
	fi

	# 6. sbx cancel of a template run.
	if section 6; then
		mkpyjob "$M/long.json" "$LONG"
		start cancel "$M/long.json"
		wait_for 20 has_event cancel started
		id=$(run_id_of cancel)
		t0=$(now_ms)
		as_mode timeout 10 "$SBX" cancel --config "$M/config.json" "$id" >/dev/null 2>"$M/cancel.err"
		crc=$?
		collect cancel
		took=$(($(now_ms) - t0))
		check "$mode: sbx cancel of a template run exits 0" test $crc -eq 0
		expect_rc 130 "$mode: the cancelled template run"
		check "$mode: cancel: a template run, cancelled, signed, within 3 s ($took ms)" \
			eval 'is_template_run "$digest" && [ "$(jqm .status)" = cancelled ] && [ "$(jqm .reason_code)" = cancelled ] && signature_ok && [ $took -le $((3000 + SLACK_MS)) ]'
		check "$mode: cancel: nothing left behind" nothing_left_tpl
	fi

	# 7. SIGKILL of sbx mid-run: the sandbox dies with it (the template
	#    sees its connection close), and sbx gc leaves nothing.
	if section 7; then
		start orphan "$M/long.json"
		wait_for 20 has_event orphan started
		id=$(run_id_of orphan)
		wait_for 5 eval '[ -n "$(cg_procs "$id")" ]'
		procs=$(cg_procs "$id" | tr '\n' ' ')
		check "$mode: SIGKILL of sbx: the run's cgroup holds its processes ($procs)" test -n "$procs"
		pid=$(sbx_pid orphan)
		t0=$(now_ms)
		[ -n "$pid" ] && kill -KILL "$pid"
		gone=1
		wait_for 2 eval '[ -z "$(cg_procs "$id")" ]' && gone=0
		took=$(($(now_ms) - t0))
		collect orphan
		check "$mode: SIGKILL of sbx: the run's processes are gone within 2 s ($took ms)" test $gone -eq 0
		for p in $procs; do
			check "$mode: SIGKILL of sbx: process $p of the run is gone (or a zombie for the host's init to reap)" \
				wait_for 2 eval '[ ! -d /proc/$p ] || grep -q "^State:.*Z" /proc/$p/status 2>/dev/null'
		done
		check "$mode: SIGKILL of sbx: the template has no child left" \
			wait_for 2 eval '[ -d "/proc/$TPID" ] && [ -z "$(cat /proc/$TPID/task/*/children 2>/dev/null | tr -d " ")" ]'
		as_mode timeout 30 "$SBX" gc --config "$M/config.json" >/dev/null 2>"$M/gc.err"
		check "$mode: sbx gc after the crash exits 0" test $? -eq 0
		check "$mode: after sbx gc: no cgroup, state entry, process or temp dir of the run" nothing_left_tpl
		mkpyjob "$M/quick.json" 'print("quick")'
		sbx_run "$M/quick.json"
		expect_rc 0 "$mode: the next run after the crash"
	fi

	# 8. The template killed mid-run: the run is completed or an error,
	#    nothing is left, and the next run is not refused.
	if section 8; then
		TPID=$(tpl_pid python-analysis)
		mkpyjob "$M/slowok.json" "$SLOWOK" '{allowed_outputs: ["text/plain"]}'
		start tkill "$M/slowok.json"
		wait_for 20 has_event tkill started
		sleep 0.5
		check "$mode: template kill: the run was started from the template (pid $TPID)" test -n "$TPID"
		[ -n "$TPID" ] && kill -KILL "$TPID"
		collect tkill
		st=$(jqm .status)
		check "$mode: template killed mid-run: the run succeeded or is an error (exit $RC, $st: $(jqm .reason))" \
			eval '{ [ $RC -eq 0 ] && [ "$st" = succeeded ] && [ -f "$ART/done.txt" ]; } || { [ "$st" = error ] && [ $RC -ne 0 ] && [ $RC -ne 99 ]; }'
		check "$mode: template killed mid-run: the manifest is signed and says it was a template run" \
			eval 'signature_ok && is_template_run "$digest"'
		check "$mode: template killed mid-run: the template is gone" eval '[ -n "$TPID" ] && wait_for 2 test ! -d "/proc/$TPID"'
		check "$mode: template killed mid-run: nothing left behind" nothing_left_tpl
		sbx_run "$M/quick.json"
		expect_rc 0 "$mode: the run after the template's death is not refused"
		check "$mode: ... it is cold, or born from a new template ($(jqm .timing.start), $(tpl_pid python-analysis))" \
			eval 'is_cold_run || { is_template_run && [ -n "$(tpl_pid python-analysis)" ] && [ "$(tpl_pid python-analysis)" != "$TPID" ]; }'
		# That run had a new template started in the background: once the
		# start is over, gc.  A socket a template: the dead one's is gone, or
		# is the new one's.
		wait_template_starts "$M/state"
		as_mode timeout 30 "$SBX" gc --config "$M/config.json" >/dev/null 2>&1
		nt=$(tpl status --json 2>/dev/null | jq '[.. | objects | select((.pid? | type) == "number")] | length')
		check "$mode: sbx gc after the template's death: one socket per live template ($(find "$M/state" -type s | wc -l) sockets, $nt templates)" \
			eval '[ "$(find "$M/state" -type s | wc -l)" = "$nt" ] && [ "$nt" = "$([ -n "$(tpl_pid python-analysis)" ] && echo 1 || echo 0)" ]'
	fi

	# 9. SIGTERM to the template mid-run: it stops taking runs, the
	#    running one completes.
	if section 9; then
		tpl_start python-analysis
		start tterm "$M/slowok.json"
		wait_for 20 has_event tterm started
		sleep 0.3
		[ -n "$TPID" ] && kill -TERM "$TPID"
		collect tterm
		expect_rc 0 "$mode: SIGTERM to the template mid-run: the run completes"
		check "$mode: SIGTERM to the template: the run was a template run and wrote its output" \
			eval 'is_template_run && [ -f "$ART/done.txt" ]'
		check "$mode: SIGTERM to the template: it exits once the run is done" wait_for 5 test ! -d "/proc/$TPID"
		check "$mode: SIGTERM to the template: nothing left behind" nothing_left_tpl
	fi

	# 10. Eight runs at once, all from one template, all right.
	if section 10; then
		tpl_start python-analysis
		runs0=$(tpl_field python-analysis runs)
		for k in 1 2 3 4 5 6 7 8; do
			mkpyjob "$M/conc$k.json" "$CONC" "{args: [\"$k\"], allowed_outputs: [\"text/csv\"]}"
			start "conc$k" "$M/conc$k.json" --queue-timeout 60
			eval "bg$k=\$BG"
		done
		bad=0 tmpl=0
		for k in 1 2 3 4 5 6 7 8; do
			eval "BG=\$bg$k"
			collect "conc$k"
			want=$(python3 -c "print($k * 499500.0)")
			if [ "$RC" -eq 0 ] && [ "$(jqm .status)" = succeeded ] && [ "$(sed -n 2p "$ART/r.csv" 2>/dev/null)" = "$k,$want" ]; then :; else
				bad=$((bad + 1)); diag "conc$k: exit $RC $(jqm .status) $(head -c 300 "$ERR") r.csv: $(tr '\n' ' ' < "$ART/r.csv" 2>/dev/null)"
			fi
			is_template_run "$digest" && tmpl=$((tmpl + 1))
		done
		check "$mode: 8 concurrent template runs all succeed with their own outputs ($bad did not)" test $bad -eq 0
		check "$mode: 8 concurrent runs were all born from the template ($tmpl)" test $tmpl -eq 8
		check "$mode: 8 concurrent runs have 8 distinct run ids" \
			test "$(for k in 1 2 3 4 5 6 7 8; do jq -r .run_id "$M/conc$k.out"; done | grep -E '^[0-9a-f]{32}$' | sort -u | wc -l)" -eq 8
		check "$mode: the template counted 8 more runs ($runs0 -> $(tpl_field python-analysis runs))" \
			test "$(tpl_field python-analysis runs)" = "$((${runs0:-0} + 8))"
		check "$mode: 8 concurrent runs: nothing left behind" nothing_left_tpl
	fi

	tpl_stop_all
	check "$mode: nothing left behind at the end" nothing_left
	as_mode timeout 30 "$SBX" gc --config "$M/config.json" >/dev/null 2>&1
	check "$mode: after stop and gc: no cgroup of the mode's templates left" no_template_cgroup
	TPL_DIGESTS=
done

finish
