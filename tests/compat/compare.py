# SPDX-License-Identifier: GPL-2.0-or-later
# compare.py BAREDIR SBXDIR EXPECTED MODULE...: parse the verbose regrtest
# logs of both sides and print TAP: per module, every test that passed bare
# and did not pass inside sbx must be listed in EXPECTED with its reason,
# and every listed test must still fail inside (or the list is stale).
# Also prints the results table (module, run, passed bare, passed in sbx,
# sbx-only failures) as TAP comments.
import os
import re
import sys

# "test_x (test.test_mod.Class.test_x) ... ok"; with a docstring the
# " ... STATUS" ends the next line, and output the test printed may push
# the status to a line of its own.
RESULT = re.compile(r"^(\w+) \(([\w.]+)\)(.*)$")
STATUS = re.compile(r"^(ok|FAIL|ERROR|skipped|expected failure|unexpected success)\b")


DURATION = re.compile(r"^\d+\.\d+s ")


def status(text):
    # Some modules print the test's duration first ("... 0.05s ok").
    s = STATUS.match(DURATION.sub("", text.strip()))
    return s.group(1) if s else None


def parse(path):
    results = {}
    pending = None
    try:
        f = open(path, encoding="utf-8")
    except OSError:
        return None
    with f:
        for line in f:
            line = line.rstrip("\n")
            m = RESULT.match(line)
            if m:
                tid = m.group(2)
                if not tid.endswith("." + m.group(1)):
                    tid = tid + "." + m.group(1)
                pending = tid
                line = m.group(3)
            if pending is None:
                continue
            s = status(line.rsplit(" ... ", 1)[1]) if " ... " in line else status(line)
            if s:
                results[pending] = s
                pending = None
    return results


def seconds(path):
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("# compat: rc "):
                    return line.split()[-1]
    except OSError:
        pass
    return "?"


def main():
    bare_dir, sbx_dir, expected_path, mods = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    expected = {}
    with open(expected_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                print("Bail out! %s:%d: wanted 'MODULE TEST-ID REASON'" % (expected_path, n))
                return 1
            expected[(parts[0], parts[1])] = parts[2]
    n = failed = 0
    table = []
    for mod in mods:
        bare = parse(os.path.join(bare_dir, mod + ".txt"))
        inside = parse(os.path.join(sbx_dir, mod + ".txt"))
        n += 1
        if not bare or inside is None:
            failed += 1
            print("not ok %d - %s: no test results (bare %s, sbx %s)" % (
                n, mod, "none" if not bare else len(bare), "none" if inside is None else len(inside)))
            table.append((mod, len(bare or {}), 0, 0, [], "?", "?"))
            continue
        ok_bare = {t for t, s in bare.items() if s == "ok"}
        ok_in = {t for t, s in inside.items() if s == "ok"}
        only = sorted(t for t in ok_bare if t not in ok_in)
        unlisted = [t for t in only if (mod, t) not in expected]
        listed = [t for (m, t) in expected if m == mod]
        stale = sorted(t for t in listed if t in ok_in or t not in ok_bare)
        table.append((mod, len(bare), len(ok_bare), len(ok_in), only,
                      seconds(os.path.join(bare_dir, mod + ".txt")), seconds(os.path.join(sbx_dir, mod + ".txt"))))
        if unlisted:
            failed += 1
            print("not ok %d - %s: %d tests pass bare but not inside sbx and are not in expected.txt" % (
                n, mod, len(unlisted)))
            for t in unlisted:
                print("# %s %s %s" % (mod, t, inside.get(t, "not run")))
        else:
            print("ok %d - %s: every sbx-only failure is listed (%d)" % (n, mod, len(only)))
        n += 1
        if stale:
            failed += 1
            print("not ok %d - %s: %d listed tests no longer fail only inside sbx" % (n, mod, len(stale)))
            for t in stale:
                print("# %s %s bare %s, sbx %s" % (mod, t, bare.get(t, "not run"), inside.get(t, "not run")))
        else:
            print("ok %d - %s: no stale entries in expected.txt" % (n, mod))
    # Entries for modules that were not run are stale too.
    n += 1
    others = sorted({m for (m, _) in expected} - set(mods))
    if others:
        failed += 1
        print("not ok %d - expected.txt lists modules that are not run: %s" % (n, " ".join(others)))
    else:
        print("ok %d - expected.txt lists only modules that are run" % n)
    print("# module | tests run | passed bare | passed in sbx | sbx-only failures | seconds bare/sbx")
    for mod, run, pb, ps, only, sb, si in table:
        reasons = sorted({expected.get((mod, t), "unlisted") for t in only})
        print("# %s | %d | %d | %d | %d%s | %s/%s" % (mod, run, pb, ps, len(only),
                                                     (" (" + "; ".join(reasons) + ")") if only else "", sb, si))
    print("1..%d" % n)
    return 1 if failed else 0


sys.exit(main())
