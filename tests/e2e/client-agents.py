# SPDX-License-Identifier: GPL-2.0-or-later
"""client-agents.py WORKDIR PUBKEY - typical agent scripts run through the
Python client (python/sbx) against the real sbx, for tests/e2e/client.sh.

Prints one line per check, "PASS what" or "FAIL what", and "# ..." for
diagnostics; client.sh turns them into TAP.  sbx is found on PATH and the
host config in $SBX_CONFIG (it names the catalog and the signing key);
every run's manifest is verified with PUBKEY by the back end in
$SBX_VERIFY_BACKEND.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import traceback

import sbx
from sbx import verify

WORK, PUBKEY = sys.argv[1], sys.argv[2]
SRCDIR = os.environ["SBX_SRCDIR"]
failed = 0


def check(what, cond, diag=None):
    global failed
    print(("PASS " if cond else "FAIL ") + what)
    if not cond:
        failed += 1
        if diag is not None:
            print("# " + str(diag)[:2000].replace("\n", "\n# "))
    sys.stdout.flush()


def record(manifest):
    """The run's id, for client.sh's check that nothing is left behind."""
    if manifest and manifest.get("run_id"):
        with open(os.path.join(WORK, "ids"), "a") as f:
            f.write(manifest["run_id"] + "\n")


def run(code, **kw):
    kw.setdefault("profile", "python-analysis")
    kw.setdefault("pubkey", PUBKEY)
    try:
        r = sbx.run(code=code, **kw)
    except sbx.SbxError as e:
        record(e.manifest)
        raise
    record(r.manifest)
    return r


def every_output_accounted(r, what):
    """Each output is promoted, or refused with a reason_code and a reason."""
    bad = [a for a in r.artifacts
           if not (a.status == "promoted" or (a.reason_code and a.reason))]
    check(what + ": every output promoted or refused with a reason_code and reason",
          r.artifacts and not bad, [(a.name, a.status, a.reason_code, a.reason) for a in r.artifacts])


def verdicts(r):
    for a in r.artifacts:
        print("# %s: %s %s %s %s" % (a.name, a.status, a.media_type, a.reason_code or "", a.reason or ""))


def expect_raise(what, cls, fn):
    try:
        fn()
    except cls as e:
        check(what + ": raises " + cls.__name__, True)
        return e
    except Exception as e:  # noqa: BLE001 - the wrong outcome is the finding
        check(what + ": raises " + cls.__name__, False, "%s: %s" % (type(e).__name__, e))
        return None
    check(what + ": raises " + cls.__name__, False, "nothing raised")
    return None


check("the verify back end is " + os.environ.get("SBX_VERIFY_BACKEND", "?"),
      verify.backend_name() == os.environ.get("SBX_VERIFY_BACKEND"))

sales = os.path.join(WORK, "sales.csv")
with open(sales, "w") as f:
    f.write("region,amount\nnorth,10\nsouth,5\nnorth,7\n")

# --- a CSV from a local input file ----------------------------------------
CSV = """
import csv, collections
tot = collections.Counter()
with open("/work/in/sales.csv") as f:
    for row in csv.DictReader(f):
        tot[row["region"]] += int(row["amount"])
with open("/work/out/totals.csv", "w", newline="") as f:
    w = csv.writer(f); w.writerow(["region", "total"])
    for k in sorted(tot): w.writerow([k, tot[k]])
print("regions:", len(tot))
"""
with run(CSV, inputs={"sales.csv": sales}) as r:
    a = r.artifact("totals.csv")
    check("csv: succeeded, exit code 0", (r.status, r.exit_code) == ("succeeded", 0), r.manifest)
    check("csv: totals.csv promoted as text/csv", (a.status, a.media_type) == ("promoted", "text/csv"))
    check("csv: its bytes are the totals", a.read_bytes() == b"region,total\r\nnorth,17\r\nsouth,5\r\n",
          a.file and a.read_bytes())
    check("csv: stdout is the payload's", r.stdout == b"regions: 2\n", r.stdout)
    inp = r.manifest["inputs"]
    check("csv: the local input is recorded (origin local, its sha256)",
          [(i["name"], i["origin"], i["sha256"]) for i in inp] ==
          [("sales.csv", "local", hashlib.sha256(open(sales, "rb").read()).hexdigest())], inp)
    every_output_accounted(r, "csv")
    kept_line = verify.canonical(r.manifest) + b"\n"

# --- a matplotlib PNG (seaborn-less), JSON, Markdown, HTML -------------------
PLOTS = """
import json, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(4, 3)); ax.bar(["north", "south"], [17, 5])
fig.savefig("/work/out/chart.png", dpi=80)
json.dump({"north": 17, "south": 5}, open("/work/out/totals.json", "w"))
open("/work/out/report.md", "w").write("# Sales\\n\\n| region | total |\\n|---|---|\\n| north | 17 |\\n")
open("/work/out/report.html", "w").write("<!DOCTYPE html><html><head><title>Sales</title></head>"
    "<body><table><tr><td>north</td><td>17</td></tr></table></body></html>")
"""
with run(PLOTS, timeout=60) as r:
    kinds = {a.name: (a.status, a.media_type) for a in r.artifacts}
    check("plots: succeeded", r.status == "succeeded", r.manifest.get("reason"))
    check("plots: chart.png promoted as image/png", kinds.get("chart.png") == ("promoted", "image/png"), kinds)
    check("plots: the PNG is a PNG", r.artifact("chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n")
    check("plots: totals.json promoted as application/json",
          kinds.get("totals.json") == ("promoted", "application/json"), kinds)
    check("plots: report.md promoted as text/markdown",
          kinds.get("report.md") == ("promoted", "text/markdown"), kinds)
    check("plots: report.html has a verdict", "report.html" in kinds, kinds)
    every_output_accounted(r, "plots")
    verdicts(r)

# --- a zip of CSVs, and a pickle -------------------------------------------
BLOBS = """
import pickle, zipfile
with zipfile.ZipFile("/work/out/tables.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("a.csv", "x,y\\n1,2\\n"); z.writestr("b.csv", "x,y\\n3,4\\n")
pickle.dump({"model": [1, 2, 3]}, open("/work/out/model.pkl", "wb"))
"""
with run(BLOBS) as r:
    every_output_accounted(r, "zip and pickle")
    verdicts(r)
    p = r.artifact("model.pkl")
    check("pickle: refused, with a reason_code", p.status == "rejected" and bool(p.reason_code),
          (p.status, p.reason_code, p.reason))
    check("pickle: not delivered", p.file is None and not os.path.exists(os.path.join(r.dir, "model.pkl")))
    check("zip and pickle: the run still succeeds (on_rejected_output keep)", r.status == "succeeded")
    check("zip and pickle: result.rejected lists the refused", {a.name for a in r.rejected} ==
          {a.name for a in r.artifacts if a.status != "promoted"})

# on_rejected_output "fail" through a job file: SbxOutputRejected.
e = expect_raise("on_rejected_output fail", sbx.SbxOutputRejected,
                 lambda: run(BLOBS, job={"on_rejected_output": "fail"}))
if e:
    check("on_rejected_output fail: reason_code output_rejected, exit 1",
          (e.reason_code, e.exit_status) == ("output_rejected", 1))
    e.result.cleanup()

# --- a failing script ---------------------------------------------------------
FAIL = """
import json
totals = {"north": 17}
print("looking up south")
print(totals["south"])
"""
e = expect_raise("failing script", sbx.SbxFailed, lambda: run(FAIL))
if e:
    err = e.error or {}
    check("failing script: .error is the KeyError at line 5",
          (err.get("type"), err.get("line"), err.get("claimed_by")) == ("KeyError", 5, "payload"), err)
    check("failing script: reason_code exit_nonzero, payload exit 1",
          (e.reason_code, e.result.exit_code) == ("exit_nonzero", 1), e.manifest)
    check("failing script: the full stderr has the traceback",
          e.result.stderr.startswith(b"Traceback") and b"KeyError: 'south'" in e.result.stderr, e.result.stderr)
    check("failing script: not an SbxOutputRejected", type(e) is sbx.SbxFailed)
    e.result.cleanup()
r = run(FAIL, check=False)
check("failing script, check=False: returned, status failed", r.status == "failed" and r.error["type"] == "KeyError")
r.cleanup()

# --- a timeout, and a memory hog ---------------------------------------------
e = expect_raise("endless loop", sbx.SbxTimeout, lambda: run("while True:\n    pass\n", timeout=2))
if e:
    check("endless loop: timed_out, reason_code wall_timeout",
          (e.result.status, e.reason_code, e.exit_status) == ("timed_out", "wall_timeout", 124))
    e.result.cleanup()
HOG = "x = []\nwhile True:\n    x.append(bytearray(16 << 20))\n"
e = expect_raise("memory hog", sbx.SbxLimitExceeded, lambda: run(HOG, limits={"memory_mib": 128}, timeout=30))
if e:
    check("memory hog: .limit is memory", e.limit == "memory", (e.reason_code, e.reason))
    e.result.cleanup()

# --- stdin, and a stdout longer than the manifest's excerpt --------------------
STDIN = """
import sys
data = sys.stdin.buffer.read()
for i in range(2000):
    print(i, data.decode().strip().upper())
"""
payload = b"rows from the caller\n"
with run(STDIN, stdin=payload) as r:
    want = b"".join(b"%d ROWS FROM THE CALLER\n" % i for i in range(2000))
    check("stdin: the payload read it (stdin.bytes, sha256)",
          r.manifest["stdin"]["bytes"] == len(payload) and
          r.manifest["stdin"]["sha256"] == hashlib.sha256(payload).hexdigest(), r.manifest["stdin"])
    check("stdin: .stdout is the whole capture, not the excerpt (%d bytes)" % len(want),
          r.stdout == want and len(r.manifest["stdout"]["excerpt"]) < len(want), len(r.stdout))

# --- the caller interrupted: sbx is cancelled, nothing is left --------------------
import signal


class Interrupt(Exception):
    pass


def fire(signum, frame):
    raise Interrupt()


signal.signal(signal.SIGALRM, fire)
signal.setitimer(signal.ITIMER_REAL, 3)
try:
    run("import time\ntime.sleep(60)\n", timeout=120)
    check("interrupted: the interruption goes up", False, "the run ended")
except Interrupt:
    check("interrupted: the interruption goes up", True)
finally:
    signal.setitimer(signal.ITIMER_REAL, 0)
# (client.sh checks that no state, cgroup or process of the run is left.)

# --- what sbx refuses ----------------------------------------------------------
before = set(os.listdir(os.environ.get("TMPDIR", "/tmp")))
e = expect_raise("an output type the profile does not allow", sbx.SbxRefused,
                 lambda: run("pass", allow=["application/x-msdownload"]))
if e:
    check("refused: exit 77, reason_code policy_refused, a signed manifest",
          (e.exit_status, e.reason_code, e.manifest["status"]) == (77, "policy_refused", "refused"))
e = expect_raise("a limit that breaks the schema", sbx.SbxInvalidJob,
                 lambda: run("pass", limits={"pids": 0}))
if e:
    check("invalid: .path names limits.pids", e.path == "limits.pids", (e.path, str(e)))
e = expect_raise("a bad option", sbx.SbxUsageError, lambda: run("pass", queue_timeout="soon"))
if e:
    check("usage: the message is the --json line's", "--queue-timeout" in str(e), str(e))
check("refusals leave no temporary directory",
      set(os.listdir(os.environ.get("TMPDIR", "/tmp"))) == before)

# --- a tampered manifest fails verification -------------------------------------
m = json.loads(kept_line)
m["artifacts"][0]["sha256"] = "0" * 64
e = expect_raise("a tampered manifest", sbx.SbxSignatureError,
                 lambda: sbx.verify_manifest(verify.canonical(m), PUBKEY))
check("the untouched manifest verifies", sbx.verify_manifest(kept_line, PUBKEY)["run_id"] == json.loads(kept_line)["run_id"])

# --- the 20-line agent back end of docs/python.md, as it is there ---------------
doc = open(os.path.join(SRCDIR, "docs", "python.md")).read()
block = re.search(r"<!-- agent\.py:[^\n]*-->\n```python\n(.*?)```", doc, re.S)
check("docs/python.md has the agent.py block", block is not None)
if block:
    agent = os.path.join(WORK, "agent.py")
    with open(agent, "w") as f:
        f.write(block.group(1))
    lines = block.group(1).rstrip("\n").split("\n")
    check("the agent back end is 20 lines (%d)" % len(lines), len(lines) <= 20)
    cwd = os.path.join(WORK, "agent")
    os.makedirs(cwd)

    def agent_run(code):
        p = subprocess.run([sys.executable, agent, "sales.csv=" + sales], input=code.encode(),
                           cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        try:
            return json.loads(p.stdout)
        except ValueError:
            return {"raw": p.stdout.decode(errors="replace"), "stderr": p.stderr.decode(errors="replace")}

    out = agent_run(CSV)
    check("agent: ok, totals.csv delivered to results/",
          out.get("ok") is True and out.get("files") == ["totals.csv"] and
          os.path.isfile(os.path.join(cwd, "results", "totals.csv")), out)
    out = agent_run(BLOBS)
    check("agent: the pickle is reported refused with its reason_code",
          out.get("ok") is True and "model.pkl" in out.get("refused", {}) and
          out["refused"]["model.pkl"][0], out)
    out = agent_run(FAIL)
    check("agent: a failing script is reported with its KeyError",
          out.get("ok") is False and (out.get("error") or {}).get("type") == "KeyError" and
          "Traceback" in out.get("stderr", ""), out)

leftover = [n for n in os.listdir(os.environ.get("TMPDIR", "/tmp")) if n.startswith("sbx-client-")]
check("no sbx-client temporary directory is left", not leftover, leftover)
sys.exit(1 if failed else 0)
