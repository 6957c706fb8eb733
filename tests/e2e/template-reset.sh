#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# template-reset.sh - the reset procedure of runs born from a template
# (sbx(1), TEMPLATES): what one run does to the interpreter it was cloned
# from is not seen by the next, two runs never draw the same random
# numbers, and a template run sees what a cold run of the same job sees.
#
# Each scenario runs as root and as the unprivileged test user.  The
# template is python-analysis's, as shipped: a catalog that had to be
# edited to get one would not test what users run.
. "$SBX_SRCDIR/tests/e2e/lib.sh"
. "$SBX_SRCDIR/tests/e2e/template-lib.sh"

bound_sbx 120

# Run A: scribbles on everything a payload can reach, then leaves a
# process behind that would scribble later if it outlived the run.
# read_only_leaf(DIR): DIR is on a read-only mount and no mount is below
# it, so nothing under it can be written.  Spliced into SCRIBBLE and
# CHECK, which prune such trees from their walks.
read -r -d '' RO_LEAF <<'PY'
import os
mounts = {}
for line in open("/proc/self/mountinfo"):
    f = line.split()
    mounts[f[4]] = "ro" in f[5].split(",")
def read_only_leaf(d):
    on = max((m for m in mounts if d == m or d.startswith(m.rstrip("/") + "/")), key=len)
    return mounts[on] and not any(m.startswith(d.rstrip("/") + "/") for m in mounts)
PY

read -r -d '' SCRIBBLE <<'PY'
import builtins, gc, os, random, resource, signal, sys, types, warnings
import numpy, pandas, matplotlib, matplotlib.pyplot as plt
numpy.scribbled = "A"
numpy.pi = 3.0
pandas.scribbled = "A"
matplotlib.scribbled = "A"
builtins.scribbled = "A"
sys.modules["scribbled_mod"] = types.ModuleType("scribbled_mod")
sys.modules.pop("json", None)
sys.path.insert(0, "/tmp/scribbled-path")
sys.setrecursionlimit(77)
gc.disable()
os.environ["SCRIBBLED"] = "A"
os.environ["PATH"] = "/tmp/scribbled-bin"
os.putenv("SCRIBBLED_PUT", "A")
numpy.seterr(all="raise")
numpy.set_printoptions(precision=1, threshold=3)
matplotlib.rcParams["lines.linewidth"] = 99
matplotlib.rcParams["figure.dpi"] = 7
plt.figure()
random.seed(1)
numpy.random.seed(1)
signal.signal(signal.SIGTERM, lambda *a: None)
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGUSR1, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
import faulthandler, locale
faulthandler.enable()
sys.setswitchinterval(0.5)
sys.set_int_max_str_digits(700)
locale.setlocale(locale.LC_ALL, "C")
os.nice(5)
os.umask(0o777)
# Every writable directory: a file in it.  A tree on a read-only mount
# with no mount below it has none (and /usr's is large: walking it takes
# minutes on an emulated machine): read_only_leaf(), from RO_LEAF.
wrote = 0
for top in ("/",):
    for d, subs, files in os.walk(top):
        if d.startswith(("/proc", "/sys")) or read_only_leaf(d):
            subs[:] = []
            continue
        if os.access(d, os.W_OK):
            try:
                os.umask(0o022)
                with open(os.path.join(d, "scribbled"), "w") as f:
                    f.write("A")
                wrote += 1
            except OSError:
                pass
            finally:
                os.umask(0o777)
for p in ("/tmp/mpl/matplotlibrc",):
    try:
        os.umask(0o022)
        with open(p, "w") as f:
            f.write("lines.linewidth: 98\n")
        wrote += 1
    except OSError:
        pass
# A daemon that would scribble later.
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        import time
        for _ in range(200):
            time.sleep(0.1)
            try:
                open("/tmp/scribbled-late", "w").write("A")
            except OSError:
                pass
        os._exit(0)
    os._exit(0)
os.wait()
os.umask(0o022)
with open("/work/out/a.txt", "w") as f:
    f.write("wrote %d\n" % wrote)
print("scribbled", wrote)
# Last, what would break the code above.
warnings.simplefilter("error")
builtins.len = lambda x: 42
PY

# Run B: prints "NAME ok" or "NAME bad: DETAIL" for each thing A changed.
read -r -d '' CHECK <<'PY'
import builtins, gc, math, os, random, resource, signal, sys, warnings
out = []
def t(name, cond, detail=""):
    try:
        v = cond()
    except BaseException as e:
        v, detail = False, "%s %s" % (type(e).__name__, e)
    out.append("%s %s" % (name, "ok" if v is True else "bad: %r %s" % (v, detail)))
import numpy, pandas, matplotlib, matplotlib.pyplot as plt
t("module_globals", lambda: not hasattr(numpy, "scribbled") and not hasattr(pandas, "scribbled")
  and not hasattr(matplotlib, "scribbled") and numpy.pi == math.pi)
t("builtins", lambda: not hasattr(builtins, "scribbled") and len([1, 2]) == 2)
t("sys_modules", lambda: "scribbled_mod" not in sys.modules and __import__("json").dumps(1) == "1")
t("sys_path", lambda: not any("scribbled" in p for p in sys.path))
t("recursionlimit", lambda: sys.getrecursionlimit() == 1000)
t("gc", lambda: gc.isenabled())
t("warnings", lambda: not any(f[0] == "error" and f[2] is Warning for f in warnings.filters))
t("environ", lambda: "SCRIBBLED" not in os.environ and "SCRIBBLED_PUT" not in os.environ
  and os.environ.get("PATH") == "/usr/bin:/bin")
import subprocess
t("environ_c", lambda: "SCRIBBLED" not in subprocess.run(["env"], capture_output=True, text=True).stdout)
t("numpy_seterr", lambda: numpy.geterr() == {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"})
t("numpy_printoptions", lambda: numpy.get_printoptions()["precision"] == 8 and numpy.get_printoptions()["threshold"] == 1000)
t("rcparams", lambda: matplotlib.rcParams["lines.linewidth"] not in (99, 98) and matplotlib.rcParams["figure.dpi"] != 7)
t("figures", lambda: plt.get_fignums() == [])
t("random", lambda: random.random() != random.Random(1).random())
t("numpy_random", lambda: numpy.random.random() != numpy.random.RandomState(1).random_sample())
t("signals", lambda: signal.getsignal(signal.SIGTERM) == signal.SIG_DFL and
  signal.getsignal(signal.SIGINT) is signal.default_int_handler and signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL)
t("sigmask", lambda: signal.pthread_sigmask(signal.SIG_BLOCK, []) == set())
t("rlimit_nofile", lambda: resource.getrlimit(resource.RLIMIT_NOFILE) != (64, 64))
t("umask", lambda: os.umask(0o022) != 0o777)
import faulthandler
t("faulthandler", lambda: not faulthandler.is_enabled())
t("switchinterval", lambda: sys.getswitchinterval() == 0.005)
t("int_max_str_digits", lambda: sys.get_int_max_str_digits() == 4300)
t("nice", lambda: os.nice(0) == 0)
# Every file named so, but on read-only trees that no mount is below
# (nothing could write there, and /usr is slow to walk when emulated).
found = []
for d, subs, files in os.walk("/"):
    if d.startswith(("/proc", "/sys")):
        subs[:] = []
        continue
    found += [os.path.join(d, f) for f in files if "scribbled" in f]
    if read_only_leaf(d):
        subs[:] = []
t("files", lambda: found == [], found[:5])
t("mpl_configdir", lambda: not os.path.exists(os.path.join(matplotlib.get_configdir(), "matplotlibrc")))
procs = []
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            c = open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode()[:60]
            if c:
                procs.append(c)
        except OSError:
            pass
t("processes", lambda: len(procs) <= 2, procs)
import time
time.sleep(0.3)
t("late_daemon", lambda: not os.path.exists("/tmp/scribbled-late"))
with open("/work/out/result.txt", "w") as f:
    f.write("\n".join(out) + "\n")
print("\n".join(out))
PY
SCRIBBLE="$RO_LEAF
$SCRIBBLE"
CHECK="$RO_LEAF
$CHECK"

# Draws: two runs must differ in every one.
read -r -d '' DRAW <<'PY'
import os, random, uuid, numpy
print("random %r" % random.random())
print("numpy %r" % numpy.random.random())
print("numpy_rng %r" % numpy.random.default_rng().random())
print("urandom %s" % os.urandom(16).hex())
print("uuid4 %s" % uuid.uuid4())
print("tmpname %s" % __import__("tempfile").mktemp())
PY

# What a script sees of its process, which must not depend on how the
# run started.  One "NAME VALUE" line each, VALUE as JSON.
read -r -d '' SEES <<'PY'
import ctypes, json, os, resource, signal, sys, warnings
# The template's imports, so that what they set up is the same both ways.
import numpy, pandas, matplotlib, matplotlib.pyplot
r = {}
r["argv"] = sys.argv
r["file"] = __file__
r["name"] = __name__
r["path"] = sys.path
r["flags"] = list(sys.flags)
r["environ"] = dict(os.environ)
r["cwd"] = os.getcwd()
r["ids"] = [os.getresuid(), os.getresgid(), sorted(os.getgroups())]
r["configdir"] = matplotlib.get_configdir()
r["signals"] = {s.name: str(signal.getsignal(s)) for s in signal.valid_signals()
                if isinstance(s, signal.Signals) and s not in (signal.SIGKILL, signal.SIGSTOP)}
st = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\t" in l)
for k in ("SigBlk", "SigIgn", "SigCgt", "NoNewPrivs", "Seccomp", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "Threads"):
    r["status_" + k] = st.get(k, "").strip()
r["rlimits"] = {n: resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith("RLIMIT_")}
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[fd] = os.readlink("/proc/self/fd/" + fd).split(":")[0]
    except OSError:
        pass
r["fds"] = sorted(k for k in fds if int(k) > 2 and not fds[k].startswith("/proc"))
r["fd_kinds"] = [fds.get(str(i)) for i in range(3)]
r["umask"] = os.umask(0o022)
r["recursionlimit"] = sys.getrecursionlimit()
r["warnings"] = sorted(str(f) for f in warnings.filters)
r["executable"] = sys.executable
r["prefix"] = sys.prefix
r["ppid"] = os.getppid()
r["sid_is_pid"] = os.getsid(0) == os.getpid()
r["pgrp_is_pid"] = os.getpgrp() == os.getpid()
r["dumpable"] = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)
r["hostname"] = os.uname().nodename
import faulthandler, locale, time
r["faulthandler"] = faulthandler.is_enabled()
r["switchinterval"] = sys.getswitchinterval()
r["int_max_str_digits"] = sys.get_int_max_str_digits()
r["nice"] = os.nice(0)
r["locale"] = locale.setlocale(locale.LC_ALL)
r["tzname"] = list(time.tzname)
r["affinity"] = len(os.sched_getaffinity(0))  # which CPU a run gets varies
try:
    open("/proc/1/mem", "rb").close()
    r["init_mem"] = "readable"
except OSError as e:
    r["init_mem"] = e.errno
r["proc_environ"] = sorted(open("/proc/self/environ").read().split("\0"))
r["mpl_cachedir"] = matplotlib.get_cachedir()
r["mpl_fname"] = matplotlib.matplotlib_fname()
r["mpl_backend"] = matplotlib.get_backend()
r["cmdline"] = open("/proc/self/cmdline").read().split("\0")
r["comm"] = open("/proc/self/comm").read()
r["init_comm"] = open("/proc/1/comm").read()
r["mounts"] = sorted(l.split()[4] + " " + l.split(" - ")[1].split()[0] for l in open("/proc/self/mountinfo"))
r["stdio"] = [(f.encoding, f.errors, f.line_buffering) for f in (sys.stdin, sys.stdout, sys.stderr)]
r["main_keys"] = sorted(k for k in globals() if k.startswith("__") and k != "__warningregistry__")
r["spec"] = str(globals().get("__spec__"))
r["loader"] = type(globals().get("__loader__")).__name__
with open("/work/out/sees.json", "w") as f:
    json.dump(r, f, sort_keys=True, indent=0)
pandas.DataFrame({"a": [1, 2, 3], "b": [0.5, 1.5, 2.5]}).to_csv("/work/out/frame.csv", index=False)
fig = matplotlib.pyplot.figure(figsize=(2, 2)); fig.gca().plot([1, 2, 3]); fig.savefig("/work/out/plot.png", metadata={"Software": None})
PY

# Endings: the exit code, an exception, os._exit, a crash.
declare -A ENDING=(
	[exit3]='import sys; print("x"); sys.exit(3)'
	[raise]='import numpy; raise ValueError("boom")'
	[osexit5]='import os, sys; sys.stdout.write("unflushed"); os._exit(5)'
	[segv]='import os, signal; os.kill(os.getpid(), signal.SIGSEGV)'
	[sigterm_self]='import os, signal; os.kill(os.getpid(), signal.SIGTERM)'
	[exit_str]='raise SystemExit("bye")'
)
declare -A ENDING_RC=([exit3]=3 [raise]=1 [osexit5]=5 [segv]= [sigterm_self]= [exit_str]=1)

for mode in ${SBX_E2E_MODES:-root user}; do
	setup_mode $mode
	PROFILE=python-analysis
	check "$mode: the shipped python-analysis profile declares a template" \
		jq -e '.template.imports | index("numpy") and index("pandas") and index("matplotlib")' \
		"$SBX_SRCDIR/policy/profiles/python-analysis.json"
	tpl_start python-analysis
	check "$mode: sbx template start python-analysis: a template process runs (pid ${TPID:-none})" test -n "$TPID"
	digest=$(tpl_field python-analysis digest)

	# 1. The scribble test.
	mkpyjob "$M/scribble.json" "$SCRIBBLE" '{allowed_outputs: ["text/plain"]}'
	mkpyjob "$M/check.json" "$CHECK" '{allowed_outputs: ["text/plain"]}'
	sbx_run "$M/scribble.json"
	expect_rc 0 "$mode: run A scribbles on everything it can reach"
	check "$mode: run A was born from the template ($(jqm .timing.start) $(jqm .timing.template))" is_template_run "$digest"
	check "$mode: run A wrote into every writable directory it found ($(res scribbled))" \
		eval '[ "$(res scribbled)" -ge 3 ] 2>/dev/null'
	sbx_run "$M/check.json"
	expect_rc 0 "$mode: run B checks it all"
	check "$mode: run B was born from the same template ($(jqm .timing.template))" is_template_run "$digest"
	for name in module_globals builtins sys_modules sys_path recursionlimit gc warnings environ environ_c \
		numpy_seterr numpy_printoptions rcparams figures random numpy_random signals sigmask \
		rlimit_nofile umask faulthandler switchinterval int_max_str_digits nice files mpl_configdir processes late_daemon; do
		v=$(res "$name")
		check "$mode: run B sees none of A's scribbling: $name ($v)" test "$v" = ok
	done
	check "$mode: the template still runs, the same process, after A and B" \
		eval '[ -n "$TPID" ] && [ "$(tpl_pid python-analysis)" = "$TPID" ]'

	# 2. Two runs draw different random numbers.
	mkpyjob "$M/draw.json" "$DRAW"
	sbx_run "$M/draw.json"
	d1=$(jqm .stdout.excerpt); t1=$(is_template_run "$digest" && echo template)
	sbx_run "$M/draw.json"
	d2=$(jqm .stdout.excerpt); t2=$(is_template_run "$digest" && echo template)
	check "$mode: both draws were template runs" test "$t1 $t2" = "template template"
	for k in random numpy numpy_rng urandom uuid4 tmpname; do
		a=$(sed -n "s/^$k //p" <<<"$d1") b=$(sed -n "s/^$k //p" <<<"$d2")
		check "$mode: two template runs draw different $k ($a / $b)" eval '[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]'
	done

	# 3. A template run and a cold run see the same.
	mkpyjob "$M/sees.json" "$SEES" '{args: ["one", "two words"], allowed_outputs: ["text/csv", "image/png", "application/json"]}'
	sbx_run "$M/sees.json"
	expect_rc 0 "$mode: what a script sees, template run"
	check "$mode: ... was a template run" is_template_run "$digest"
	cp -r "$ART" "$M/sees-template" 2>/dev/null
	sbx_run "$M/sees.json" --no-template
	expect_rc 0 "$mode: what a script sees, cold run (--no-template)"
	check "$mode: --no-template makes a cold run ($(jqm .timing.start))" is_cold_run
	cp -r "$ART" "$M/sees-cold" 2>/dev/null
	for k in argv file name path flags environ cwd ids configdir signals status_SigBlk status_SigIgn status_SigCgt \
		status_NoNewPrivs status_Seccomp status_CapInh status_CapPrm status_CapEff status_CapBnd status_CapAmb \
		status_Threads rlimits fds fd_kinds umask recursionlimit warnings executable prefix ppid sid_is_pid \
		pgrp_is_pid dumpable hostname cmdline comm init_comm faulthandler switchinterval int_max_str_digits nice locale \
		tzname affinity init_mem proc_environ mpl_cachedir mpl_fname mpl_backend mounts stdio main_keys spec loader; do
		a=$(jq -c --arg k "$k" '.[$k]' "$M/sees-template/sees.json" 2>/dev/null)
		b=$(jq -c --arg k "$k" '.[$k]' "$M/sees-cold/sees.json" 2>/dev/null)
		if [ -n "$a" ] && [ "$a" != null ] && [ "$a" = "$b" ]; then ok "$mode: template and cold runs see the same $k"; else
			not_ok "$mode: template and cold runs see the same $k"
			diag "template: $(head -c 700 <<<"$a")"
			diag "cold:     $(head -c 700 <<<"$b")"
		fi
	done
	check "$mode: open fds beyond 0-2: none in a template run ($(jq -c .fds "$M/sees-template/sees.json" 2>/dev/null))" \
		test "$(jq -c .fds "$M/sees-template/sees.json" 2>/dev/null)" = '[]'
	for f in frame.csv plot.png; do
		check "$mode: the job's output $f is the same from a template and a cold run" \
			cmp -s "$M/sees-template/$f" "$M/sees-cold/$f"
	done

	# 3b. The job's own environment (env_allow: TZ, LANG, LC_ALL): what
	#     the interpreter takes from it at start-up (time zone, locale,
	#     UTF-8 mode, the default encoding of open()) as in a cold run,
	#     whether the run was born from the template or started cold
	#     because of it.
	mkpyjob "$M/env.json" 'import time, locale, sys
print("tz", time.tzname, time.localtime(0).tm_hour)
print("locale", locale.setlocale(locale.LC_CTYPE), sys.flags.utf8_mode, locale.getpreferredencoding(False))
try:
    open("/work/out/u.txt", "w").write("caf\u00e9\n")
    print("write ok")
except Exception as e:
    print("write", type(e).__name__)' '{env: {TZ: "Asia/Tokyo", LC_ALL: "C", LANG: "C"}, allowed_outputs: ["text/plain"]}'
	sbx_run "$M/env.json"
	te=$(jqm .stdout.excerpt) ts=$(jqm .timing.start)
	sbx_run "$M/env.json" --no-template
	ce=$(jqm .stdout.excerpt)
	for k in tz locale write; do
		a=$(sed -n "s/^$k //p" <<<"$te") b=$(sed -n "s/^$k //p" <<<"$ce")
		check "$mode: job env TZ/LC_ALL/LANG: $k as a cold run's ($ts: $a; cold: $b)" eval '[ -n "$b" ] && [ "$a" = "$b" ]'
	done

	# 3c. The job's stdin (--stdin) reaches a template run's payload whole.
	head -c 300000 /dev/urandom | base64 > "$M/stdin.txt"
	mkpyjob "$M/stdin.json" 'import hashlib, sys
d = sys.stdin.buffer.read()
print("stdin", len(d), hashlib.sha256(d).hexdigest(), sys.stdin.isatty())'
	sbx_run "$M/stdin.json" --stdin < "$M/stdin.txt"
	tin=$(res stdin) ts=$(jqm .timing.start)
	sbx_run "$M/stdin.json" --stdin --no-template < "$M/stdin.txt"
	want="$(wc -c < "$M/stdin.txt") $(sha256sum < "$M/stdin.txt" | cut -d" " -f1) False"
	check "$mode: --stdin: a template run reads the whole input ($ts: $tin), as cold ($(res stdin))" \
		eval '[ "$ts" = template ] && [ "$tin" = "$want" ] && [ "$(res stdin)" = "$want" ]'

	# 4. How a payload ends: exit status, manifest status and exit as cold.
	for e in exit3 raise osexit5 segv sigterm_self exit_str; do
		mkpyjob "$M/end-$e.json" "${ENDING[$e]}"
		sbx_run "$M/end-$e.json"
		trc=$RC tv=$(jq -c '[.status, .reason_code, .exit.code, .exit.signal]' "$OUT") tt=$(is_template_run && echo template)
		terr=$(jqm .stderr.excerpt | grep -v '^$' | tail -1)
		sbx_run "$M/end-$e.json" --no-template
		crc=$RC cv=$(jq -c '[.status, .reason_code, .exit.code, .exit.signal]' "$OUT")
		cerr=$(jqm .stderr.excerpt | grep -v '^$' | tail -1)
		check "$mode: ending $e: a template run ($tt), exit $trc and $tv as cold's exit $crc and $cv" \
			eval '[ "$tt" = template ] && [ "$trc" = "$crc" ] && [ "$tv" = "$cv" ]'
		check "$mode: ending $e: the last stderr line as cold's ($terr)" test "$terr" = "$cerr"
		if [ $e = raise ]; then
			check "$mode: ending raise: the whole traceback as cold's (the script's file name and line)" \
				eval '[ "$(jq -r .stderr.excerpt "$M/out.$((RUNS - 1)).json")" = "$(jqm .stderr.excerpt)" ] && jqm .stderr.excerpt | grep -q "File \"/work/main.py\", line 1"'
		fi
		if [ $e = segv ]; then
			check "$mode: ending segv: the manifest says SIGSEGV" test "$(jq -r .[3] <<<"$tv")" = SIGSEGV
		fi
		if [ -n "${ENDING_RC[$e]}" ]; then
			check "$mode: ending $e: exit code ${ENDING_RC[$e]}" \
				test "$(jq -r .[2] <<<"$tv")" = "${ENDING_RC[$e]}"
		fi
	done

	check "$mode: nothing left behind but the template" nothing_left_tpl
	tpl_stop_all
	check "$mode: sbx template stop: no template process left" eval '[ -n "$TPID" ] && [ ! -d /proc/$TPID ]'
	check "$mode: after stop, status lists no running template" test -z "$(tpl_pid python-analysis)"
	check "$mode: nothing left behind at the end" nothing_left
	as_mode timeout 30 "$SBX" gc --config "$M/config.json" >/dev/null 2>&1
	check "$mode: after stop and gc: no cgroup of the mode's templates left" no_template_cgroup
	TPL_DIGESTS=
done

finish
