# SPDX-License-Identifier: GPL-2.0-or-later
# run-modules.py OUTDIR SPEC...: run CPython regression test modules one
# after the other, each as "python3 -m test -v SPEC", and write each one's
# verbose output to OUTDIR/MODULE.txt.  The same script runs bare and as
# the code of a python-analysis job (OUTDIR /work/out), so that both sides
# run exactly the same command.  A SPEC is a module name, optionally
# followed by regrtest options after colons ("test_socket:-i:*VSOCK*").
import os
import subprocess
import sys
import time

outdir = sys.argv[1]
for spec in sys.argv[2:]:
    mod, *opts = spec.split(":")
    start = time.monotonic()
    # A module that hangs must not take the rest with it; regrtest's own
    # --timeout needs faulthandler's watchdog thread, which is fine here.
    try:
        p = subprocess.run([sys.executable, "-m", "test", "-v", "--timeout", "120", *opts, mod],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=300)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = e.stdout or b"", "timeout"
    text = out.decode("utf-8", "backslashreplace")
    with open(os.path.join(outdir, mod + ".txt"), "w", encoding="utf-8") as f:
        f.write(text)
        f.write("\n# compat: rc %s seconds %.1f\n" % (rc, time.monotonic() - start))
