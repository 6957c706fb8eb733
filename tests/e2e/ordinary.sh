#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ordinary.sh - what ordinary code needs works in python-analysis, and what
# stays denied stays denied.
#
# Each check is something real programs do that failed only inside sbx:
# the owner name of uid 0 (tarfile, shutil.make_archive), service and
# protocol names, fontconfig's configuration (matplotlib runs fc-list),
# a script the code wrote and then runs (venv creation, subprocess), a
# file mapped executable, a sparse file larger than the workspace, a CPU
# count that matches the quota, a hundred threads under the default pids.
# The shell profile keeps its noexec workspace, and neither profile gets a
# terminal, a foreign owner or a writable /usr.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

# The python payload prints "<name> <value>" lines.
read -r -d '' PY <<'PY'
import ctypes, grp, mmap, os, platform, pwd, socket, stat, subprocess, sys, threading
def t(name, f):
    try:
        print(name, f())
    except BaseException as e:
        print(name, "error", type(e).__name__, getattr(e, "errno", ""))
t("pw0", lambda: pwd.getpwuid(0).pw_name)
t("gr0", lambda: grp.getgrgid(0).gr_name)
t("pwme", lambda: pwd.getpwuid(os.getuid()).pw_name)
t("http", lambda: socket.getservbyname("http", "tcp"))
t("tcp", lambda: socket.getprotobyname("tcp"))
t("osrel", lambda: "ok" if "ID=" in open("/etc/os-release").read() else "empty")
t("fc", lambda: "stderr:" + repr(subprocess.run(["fc-list"], capture_output=True, text=True).stderr.strip()[:80]))
def script(d):
    p = os.path.join(d, "hello")
    with open(p, "w") as f:
        f.write("#!/bin/sh\necho ran-" + d.strip("/") + "\n")
    os.chmod(p, 0o755)
    return subprocess.run([p], capture_output=True, text=True).stdout.strip()
t("exec_tmp", lambda: script("/tmp"))
t("exec_work", lambda: script("/work"))
def mmap_exec():
    with open("/tmp/blob", "wb") as f:
        f.write(b"\xc3" * 4096)
    with open("/tmp/blob", "rb") as f:
        m = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
        return "mapped" if m[0] == 0xc3 else "bad"
t("mmap_exec", mmap_exec)
def sparse():
    with open("/work/sparse", "wb") as f:
        f.seek((1 << 30) - 1)
        f.write(b"\0")
    st = os.stat("/work/sparse")
    os.unlink("/work/sparse")
    return "%d %s" % (st.st_size, "holes" if st.st_blocks * 512 < (1 << 20) else "full")
t("sparse", sparse)
t("cpu_count", os.cpu_count)
t("affinity", lambda: len(os.sched_getaffinity(0)))
t("nproc", lambda: subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip())
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    t(v, lambda: os.environ.get(v, "unset"))
def threads(n):
    ev = threading.Event()
    ts = [threading.Thread(target=ev.wait) for _ in range(n)]
    try:
        for x in ts:
            x.start()
    finally:
        ev.set()
    for x in ts:
        if x.is_alive() or x.ident: x.join()
    return "started"
t("threads120", lambda: threads(120))
t("pty", lambda: os.openpty() and "opened")
def chown_other():
    open("/tmp/mine", "w").close()
    os.chown("/tmp/mine", 0, 0)
    return "changed"
t("chown0", chown_other)
t("write_usr", lambda: open("/usr/sbx-ordinary", "w") and "written")
t("write_services", lambda: open("/etc/services", "a") and "written")
def mount_opts(path):
    for l in open("/proc/self/mountinfo"):
        f = l.split()
        if f[4] == path:
            return ",".join(o for o in f[5].split(",") if o in ("ro", "rw", "nosuid", "nodev", "noexec"))
    return "not a mount"
for path in ("/etc/services", "/etc/fonts", "/tmp", "/work", "/work/in", "/work/out"):
    t("mount" + path, lambda: mount_opts(path))
t("new_etc", lambda: open("/etc/sbx-ordinary", "w") and "written")
PY

# The shell payload: the same "<name> <value>" lines.
read -r -d '' SH <<'SH'
if cp /bin/true /tmp/t 2>/dev/null && /tmp/t 2>/dev/null; then echo "exec_tmp ran"; else echo "exec_tmp refused"; fi
if cp /bin/true /work/t 2>/dev/null && /work/t 2>/dev/null; then echo "exec_work ran"; else echo "exec_work refused"; fi
if cp /bin/true /work/out/t 2>/dev/null && /work/out/t 2>/dev/null; then echo "exec_out ran"; else echo "exec_out refused"; fi
rm -f /work/out/t
echo "nproc $(nproc)"
SH

lines() { jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))'; }
# want NAME VALUE: the payload printed "NAME VALUE".
want() {
	if grep -qxF "$1 $2" <<<"$got"; then ok "$mode: $1: $2"; else
		not_ok "$mode: $1: wanted '$2', got '$(grep "^$1 " <<<"$got" || echo 'no line')'"
	fi
}

# A catalog whose profile binds a host device and a fifo: nothing to read
# there, so the run is refused before it starts.
BADPOL="$T/badpolicy"
cp -r "$SBX_SRCDIR/policy" "$BADPOL"
mkfifo "$T/fifo"
for what in dev:/dev/null fifo:$T/fifo; do
	jq --arg s "${what#*:}" '.binds += [{"src": $s, "dst": "/opt/x"}]' \
		"$SBX_SRCDIR/policy/profiles/shell.json" > "$BADPOL/profiles/bad-${what%%:*}.json"
done
chmod -R a+rX "$T"

for mode in root user; do
	setup_mode $mode

	for what in dev fifo; do
		mkjob "$M/bad-$what.json" bad-$what 'echo ran'
		POLICY=$BADPOL sbx_run "$M/bad-$what.json"
		expect_rc 69 "$mode: a bind of a host $what is refused"
		check "$mode: the refusal names the bind" grep -q "binds: .* is neither a directory nor a file" "$ERR"
	done

	mkjob "$M/py.json" python-analysis "$PY" '{limits: {cpu_cores: 1, workspace_mib: 256}}'
	sbx_run "$M/py.json"
	expect_rc 0 "$mode: python-analysis payload ran"
	got=$(lines)
	want pw0 root
	want gr0 root
	want pwme sandbox
	want http 80
	want tcp 6
	want osrel ok
	want fc "stderr:''"
	want exec_tmp ran-tmp
	want exec_work ran-work
	want mmap_exec mapped
	want sparse "1073741824 holes"
	want cpu_count 1
	want affinity 1
	want nproc 1
	want OMP_NUM_THREADS 1
	want OPENBLAS_NUM_THREADS 1
	want MKL_NUM_THREADS 1
	want threads120 started
	# What stays denied: no terminal, no foreign owner, a read-only /usr
	# and /etc, even where /etc/services is a bind of the host's file.
	want pty "error FileNotFoundError 2"
	want chown0 "error OSError 22"
	want write_usr "error OSError 30"
	# The host's file, owned by an unmapped id: EACCES before the
	# read-only mount's EROFS; the bind is read-only all the same.
	want write_services "error PermissionError 13"
	want mount/etc/services ro,nosuid,nodev
	want mount/etc/fonts ro,nosuid,nodev
	# The workspace may exec in this profile; inputs and outputs never.
	want mount/tmp rw,nosuid,nodev
	want mount/work rw,nosuid,nodev
	want mount/work/in ro,nosuid,nodev,noexec
	want mount/work/out rw,nosuid,nodev,noexec
	want new_etc "error OSError 30"
	check "$mode: nothing left behind" nothing_left

	# 1.5 cores round up to 2 (this host has 2); the job's own thread
	# count wins over sbx's.
	mkjob "$M/py2.json" python-analysis 'import os; print("cpu_count", os.cpu_count()); print("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS")); print("OPENBLAS_NUM_THREADS", os.environ.get("OPENBLAS_NUM_THREADS"))' \
		'{limits: {cpu_cores: 1.5}, env: {OMP_NUM_THREADS: "7"}}'
	sbx_run "$M/py2.json"
	expect_rc 0 "$mode: cpu_cores 1.5"
	got=$(lines)
	want cpu_count 2
	want OMP_NUM_THREADS 7
	want OPENBLAS_NUM_THREADS 2

	# The shell profile keeps the workspace noexec; /work/out is noexec
	# in every profile.
	mkjob "$M/sh.json" shell "$SH" '{limits: {cpu_cores: 0.5}}'
	sbx_run "$M/sh.json"
	expect_rc 0 "$mode: shell payload ran"
	got=$(lines)
	want exec_tmp refused
	want exec_work refused
	want exec_out refused
	want nproc 1
	check "$mode: nothing left behind" nothing_left
done

finish
