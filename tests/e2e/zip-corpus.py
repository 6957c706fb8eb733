# SPDX-License-Identifier: GPL-2.0-or-later
# zip-corpus.py - the payload of tests/e2e/outputs-zip.sh: a ZIP of CSVs
# as agent scripts write it (zipfile, deflated), and a hostile corpus of
# ZIPs that each differ from it in one thing, so that each refusal can
# only be for that thing.  Writes into the directory named by its first
# argument (/work/out inside the sandbox); the digests of the good
# archive's members go to stdout, for the test to compare with the
# manifest's.
import hashlib
import io
import json
import os
import pickle
import random
import sys
import tarfile
import zipfile

out = sys.argv[1] if len(sys.argv) > 1 else "/work/out"
os.makedirs(out, exist_ok=True)


def path(name):
    return os.path.join(out, name)


def csv(n, seed=0):
    rnd = random.Random(seed)
    return ("x,y\n" + "".join("%d,%d\n" % (i, rnd.randrange(10**9)) for i in range(n))).encode()


def make(name, entries, method=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path(name), "w", method) as z:
        for member, data in entries:
            z.writestr(member, data)


GOOD = [("results/summary.csv", csv(20, 1)), ("results/by_day.csv", csv(50, 2)),
        ("README.txt", b"two tables written by the analysis\n")]
make("tables.zip", GOOD)
print(json.dumps({m: hashlib.sha256(d).hexdigest() for m, d in GOOD}))

# One hostile member next to a good one.
make("pickle.zip", [GOOD[0], ("model.pkl", pickle.dumps({"a": 1}, protocol=4))])
make("pickle-renamed.zip", [GOOD[0], ("model.csv", pickle.dumps([1, 2], protocol=4))])
make("svg-script.zip", [GOOD[0], ("plot.svg",
     b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')])
make("html-script.zip", [GOOD[0], ("report.html",
     b"<!doctype html><html><body><script>fetch('http://192.0.2.1/')</script></body></html>")])
inner = io.BytesIO()
with zipfile.ZipFile(inner, "w") as z:
    z.writestr("inner.csv", csv(3))
make("nested.zip", [GOOD[0], ("more.zip", inner.getvalue())])
make("nested-renamed.zip", [GOOD[0], ("more.csv", inner.getvalue())])
tgz = io.BytesIO()
with tarfile.open(fileobj=tgz, mode="w:gz") as t:
    info = tarfile.TarInfo("a.csv")
    data = csv(3)
    info.size = len(data)
    t.addfile(info, io.BytesIO(data))
make("targz.zip", [GOOD[0], ("data.tar.gz", tgz.getvalue())])
make("not-allowed.zip", [GOOD[0], ("deck.pptx.txt", b"fine"), ("table.parquet", b"PAR1" + b"\0" * 8 + b"PAR1")])
make("no-extension.zip", [GOOD[0], ("run.sh", b"#!/bin/sh\nrm -rf ~\n")])

# The container: a bomb, zip slip, duplicates, encryption, too many.
make("bomb.zip", [("zeros.csv", b"0," * (20 << 20))])
make("slip.zip", [GOOD[0], ("../../evil.csv", csv(2))])
make("dup.zip", [GOOD[0], ("RESULTS/SUMMARY.csv", csv(2))])
make("encrypted.zip", [GOOD[0], ("secret.csv", csv(2))])
data = bytearray(open(path("encrypted.zip"), "rb").read())
for sig, flags_at, name_at in ((b"PK\3\4", 6, 30), (b"PK\1\2", 8, 46)):
    at = data.find(sig)
    while at >= 0:
        if data[at + name_at:at + name_at + 10] == b"secret.csv":
            data[at + flags_at] |= 1
        at = data.find(sig, at + 4)
open(path("encrypted.zip"), "wb").write(data)
make("many.zip", [("t/%d.csv" % i, b"a\n1\n") for i in range(65)])
