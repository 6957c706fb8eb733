# SPDX-License-Identifier: GPL-2.0-or-later
# schemas.py - the validator behind tests/schemas.sh (python3-jsonschema,
# draft 2020-12).  Each command prints one line per check, "ok<TAB>what"
# or "not ok<TAB>what: why", which the shell turns into TAP; the exit
# status is 0 only when every check passed.
#
#   schemas.py SCHEMADIR meta
#       every schema is a valid draft 2020-12 schema, and the limits the
#       job and profile schemas share are the same
#   schemas.py SCHEMADIR source SRCDIR
#       the schemas name the keys, limits, media types, errno names and
#       statuses that the C sources do
#   schemas.py SCHEMADIR commands SRCDIR
#       every subcommand's --json output has a schema, and sbx.c offers
#       --json on those subcommands
#   schemas.py SCHEMADIR batch < LIST
#       LIST has one check a line, tab-separated:
#         valid|invalid  SCHEMA  FILE  WHAT
#         manifest       RC      FILE  WHAT   (FILE holds one manifest;
#                                              RC is sbx run's exit status)
#   schemas.py SCHEMADIR lines FILE
#       every manifest in FILE (JSON Lines, as tests/e2e/lib.sh saves them
#       under SBX_E2E_MANIFESTS) matches manifest.schema.json
import json
import os
import re
import sys

try:
    from jsonschema import Draft202012Validator
except ImportError:
    print("not ok\tpython3-jsonschema (4.0 or later, for draft 2020-12) is not importable")
    sys.exit(2)

SCHEMAS = ("job", "profile", "network", "seccomp", "manifest", "promote-manifest", "fetch")
# What subcommands print with --json, one schema each; every *.schema.json
# in the directory is loaded, and must be one of these or of SCHEMAS.
COMMANDS = ("check", "profiles", "ps", "verify", "keygen", "gc", "cancel", "batch-summary",
            "dry-run", "prepare", "template")
# What every subcommand with --json prints on stderr for 64 and 65.
OTHERS = ("error",)
# The subcommand of each, where the names differ.
COMMAND_OF = {"batch-summary": "batch", "dry-run": "run"}
failed = 0


def report(good, what, why=""):
    global failed
    if good:
        print("ok\t" + what)
    else:
        failed += 1
        print("not ok\t%s: %s" % (what, why))


def load_schemas(d):
    names = sorted(f[:-len(".schema.json")] for f in os.listdir(d) if f.endswith(".schema.json"))
    return {n: json.load(open(os.path.join(d, n + ".schema.json"))) for n in names}


def cmd_commands(schemas, src):
    """Each --json output has a schema, and each schema here is known."""
    known = set(SCHEMAS) | set(COMMANDS) | set(OTHERS)
    for n in SCHEMAS + COMMANDS + OTHERS:
        report(n in schemas, "schema/%s.schema.json exists" % n, "missing")
    extra = sorted(set(schemas) - known)
    report(not extra, "schema/ holds no schema tests/schemas.py does not know", ", ".join(extra))
    # sbx.c: the subcommands --json applies to are the ones with a schema.
    text = open(os.path.join(src, "sbx.c")).read()
    m = re.search(r"case OPT_JSON:\s*return ([^;]*);", text)
    owners = sorted(w.lower() for w in re.findall(r"FOR_(\w+)", m.group(1))) if m else []
    subcommands = sorted(COMMAND_OF.get(n, n) for n in COMMANDS)
    report(m and owners == subcommands,
           "sbx.c: --json applies to exactly the subcommands with a schema",
           "--json owners %s, schemas for %s" % (owners, subcommands))


def first_error(validator, doc):
    # The deepest error names the member at fault, not just "oneOf".
    errs = sorted(validator.iter_errors(doc), key=lambda e: -len(e.absolute_path))
    if not errs:
        return None
    e = errs[0]
    path = "".join("[%d]" % p if isinstance(p, int) else "." + p for p in e.absolute_path)
    return "%s: %s" % (path or "(top)", e.message[:300])


def status_exits(manifest_schema):
    return {b["const"]: b["x-sbx-exit"] for b in manifest_schema["properties"]["status"]["oneOf"]}


def cmd_meta(schemas):
    for n, s in schemas.items():
        try:
            Draft202012Validator.check_schema(s)
            report(s.get("$schema") == "https://json-schema.org/draft/2020-12/schema",
                   "%s.schema.json is a draft 2020-12 schema" % n, "its $schema is not draft 2020-12")
        except Exception as e:  # SchemaError
            report(False, "%s.schema.json is a draft 2020-12 schema" % n, str(e).splitlines()[0])
    a = schemas["job"]["$defs"]["limits"]["properties"]
    b = schemas["profile"]["$defs"]["limits"]["properties"]
    report(a == b, "job and profile schemas bound the limits alike",
           "job.schema.json and profile.schema.json differ in $defs.limits")


def c_strings(text, array):
    """The string literals of a C array initializer `array[] = { ... };`
    (or `array[SIZE] = { ... };`)."""
    m = re.search(r"\b%s\[\w*\]\s*=\s*\{(.*?)\};" % re.escape(array), text, re.S)
    return re.findall(r'"([^"]*)"', m.group(1)) if m else None


def c_int(expr):
    """A C integer constant such as 86400, 1u << 24 or UINT64_C(1) << 40."""
    m = re.fullmatch(r"\s*(?:UINT64_C\((\d+)\)|(\d+)u?)\s*(?:<<\s*(\d+))?\s*", expr)
    if not m:
        return None
    return int(m.group(1) or m.group(2)) << int(m.group(3) or 0)


def cmd_source(schemas, src):
    def read(*parts):
        return open(os.path.join(src, *parts)).read()

    # Files may be split (a pure move keeps the arrays): search them all.
    policy = "".join(read("src", "policy", f) for f in sorted(os.listdir(os.path.join(src, "src", "policy")))
                     if f.endswith(".c"))

    def same(what, schema_keys, code_keys):
        if code_keys is None:
            report(False, what, "not found in the sources")
            return
        s, c = set(schema_keys), set(code_keys)
        report(s == c, what, "only in the schema: %s; only in the code: %s" %
               (sorted(s - c) or "-", sorted(c - s) or "-"))

    # The known media types are src/common/mediatype.c's.
    mediatype = read("src", "common", "mediatype.c")
    job, prof, net, sc, man = (schemas[n] for n in SCHEMAS[:5])
    same("job: the top-level keys are job.c's", job["properties"], c_strings(policy, "job_keys"))
    same("profile: the keys are catalog.c's", prof["properties"], c_strings(policy, "profile_keys"))
    same("network profile: the keys are catalog.c's", net["properties"], c_strings(policy, "network_keys"))
    same("seccomp: the keys are catalog.c's", sc["properties"], c_strings(policy, "seccomp_keys"))
    same("fetch profile: the keys are catalog-fetch.c's", schemas["fetch"]["properties"],
         c_strings(policy, "fetch_keys"))
    jf = job["properties"]["fetch"]["items"]["properties"]
    same("job: the fetch entries' keys are job-fetch.c's", jf, c_strings(policy, "entry_keys"))
    same("seccomp: the deny keys are catalog.c's", sc["$defs"]["deny"]["properties"],
         c_strings(policy, "deny_keys"))
    same("seccomp: the allowed keys are catalog.c's", sc["$defs"]["allowed"]["properties"],
         c_strings(policy, "allowed_keys"))
    same("seccomp: the condition keys are catalog.c's", sc["$defs"]["condition"]["properties"],
         c_strings(policy, "cond_keys"))
    m = re.search(r"\berrnos\[\]\s*=\s*\{(.*?)\};", policy, re.S)
    same("seccomp: the errno names are catalog.c's", sc["$defs"]["deny"]["properties"]["errno"]["enum"],
         re.findall(r'\{\s*"([A-Z0-9]+)"', m.group(1)) if m else None)
    same("profile: allowed_outputs are the media types sbx validates",
         prof["properties"]["allowed_outputs"]["items"]["enum"], c_strings(mediatype, "types"))
    same("manifest: artifact media types are the ones sbx validates",
         man["properties"]["artifacts"]["items"]["properties"]["media_type"]["oneOf"][1]["enum"],
         c_strings(mediatype, "types"))
    q = re.findall(r"^\s*Q\((\w+),\s*([^,]+),\s*(.+)\),\s*$", policy, re.M)
    kq = prof["properties"]["kernel_quotas"]["properties"]
    same("profile: kernel_quotas keys are catalog.c's", kq, [k for k, _, _ in q] if q else None)
    bad = ["%s: schema %s..%s, code %s..%s" % (k, kq[k].get("default"), kq[k].get("maximum"), d, m)
           for k, d, m in q if k in kq and (kq[k].get("default"), kq[k].get("maximum")) != (c_int(d), c_int(m))]
    report(q and not bad, "profile: kernel_quotas defaults and bounds are catalog.c's", "; ".join(bad))

    # The limits table: key, manifest key, fraction, schema bound.
    tab = re.findall(r'\{\s*"(\w+)",\s*"(\w+)",\s*(true|false),\s*([^}]+?)\s*\}',
                     read("src", "policy", "joblimits.c"))
    lim = job["$defs"]["limits"]["properties"]
    same("job: the limits are joblimits.c's", lim, [t[0] for t in tab] if tab else None)
    mlim = man["properties"]["limits"]["oneOf"][1]["properties"]
    same("manifest: the limits are joblimits.c's manifest keys", mlim, [t[1] for t in tab] if tab else None)
    bad = []
    for key, _, frac, bound in tab:
        v = c_int(bound)
        if v is None:
            bad.append("%s: cannot read %r" % (key, bound))
            continue
        if frac == "true":
            v //= 1000
        if key in lim and lim[key].get("maximum") != v:
            bad.append("%s: schema %s, code %s" % (key, lim[key].get("maximum"), v))
    report(tab and not bad, "job: the limits' bounds are joblimits.c's", "; ".join(bad))

    # The manifest's members: what sbx_manifest_build() sets, and the
    # signature manifest-sign.c adds, is what the schema requires.
    mc = read("src", "broker", "run", "manifest.c")
    build = mc[mc.find("sbx_manifest_build("):]
    first = re.search(r"json_pack\(\s*\"\{[^\"]*\}\"\s*,(.*?)\);", build, re.S)
    keys = re.findall(r'"(\w+)"\s*,', first.group(1)) if first else []
    keys += re.findall(r'json_object_set_new\(\s*m\s*,\s*"(\w+)"', build)
    same("manifest: the required members are the ones manifest.c sets",
         man["required"], keys + ["signature"] if keys else None)

    # The artifacts' reason codes are reasoncode.h's, each in its table.
    rc_h, rc_c = read("src", "common", "reasoncode.h"), read("src", "common", "reasoncode.c")
    # The fetch codes are a run's, not an artifact's: a table of their own.
    allnames = dict(re.findall(r'#define (SBX_RC_\w+) "(\w+)"', rc_h))
    names = {k: v for k, v in allnames.items() if not k.startswith("SBX_RC_FETCH_")}
    fetch_names = {k: v for k, v in allnames.items() if k.startswith("SBX_RC_FETCH_")}
    art_c = rc_c[rc_c.find("sbx_reason_codes[]"):rc_c.find("sbx_fetch_reason_codes[]")]
    fetch_c = rc_c[rc_c.find("sbx_fetch_reason_codes[]"):]
    table = [names.get(m) for m in re.findall(r"\{\s*(SBX_RC_\w+),", art_c)]
    ftable = [fetch_names.get(m) for m in re.findall(r"\{\s*(SBX_RC_\w+),", fetch_c)]
    same("reasoncode.c: the fetch table lists every fetch code of reasoncode.h", ftable,
         list(fetch_names.values()) or None)
    same("manifest: artifact reason codes are reasoncode.h's",
         man["properties"]["artifacts"]["items"]["properties"]["reason_code"]["oneOf"][1]["enum"],
         list(names.values()) or None)
    same("reasoncode.c: the table lists every code of reasoncode.h", table, list(names.values()) or None)

    # Statuses and the exit status of each (error.c, error.h).
    err_c, err_h = read("src", "common", "error.c"), read("src", "common", "error.h")
    codes = {k: int(v) for k, v in re.findall(r"\b(SBX_EXIT_\w+)\s*=\s*(\d+)", err_h)}
    st = {n: codes.get(e) for n, e in re.findall(r'\[SBX_STATUS_\w+\]\s*=\s*\{\s*"(\w+)",\s*(SBX_EXIT_\w+)', err_c)}
    ours = status_exits(man)
    report(st and st == ours, "manifest: the statuses and their exit codes are error.c's",
           "schema %s, code %s" % (sorted(ours.items()), sorted(st.items())))


def cmd_batch(schemas, lines):
    validators = {n: Draft202012Validator(s) for n, s in schemas.items()}
    exits = status_exits(schemas["manifest"])
    for line in lines:
        line = line.rstrip("\n")
        if not line:
            continue
        kind, arg, path, what = line.split("\t", 3)
        try:
            if kind == "manifest":
                text = open(path).read()
                if text.count("\n") != 1 or not text.endswith("\n"):
                    report(False, what, "%s: not one line" % path)
                    continue
                doc = json.loads(text)
                if doc.get("kind") == "promote":
                    # sbx promote: 0 when all was delivered, 1 when something was refused.
                    err = first_error(validators["promote-manifest"], doc)
                    if err is None and int(arg) != (1 if doc["refused"] else 0):
                        err = "%d refused goes with exit %d, sbx exited %s" % (
                            len(doc["refused"]), 1 if doc["refused"] else 0, arg)
                    report(err is None, what, err)
                    continue
                err = first_error(validators["manifest"], doc)
                if err is None and exits.get(doc["status"]) != int(arg):
                    err = "status %s goes with exit %s, sbx exited %s" % (
                        doc["status"], exits.get(doc["status"]), arg)
                report(err is None, what, err)
                continue
            doc = json.load(open(path))
        except (OSError, ValueError) as e:
            report(False, what, "%s: %s" % (path, e))
            continue
        err = first_error(validators[arg], doc)
        if kind == "valid":
            report(err is None, what, err)
        else:
            report(err is not None, what, "the schema accepts it")


def looks_like_manifest(doc):
    return isinstance(doc, dict) and any(k in doc for k in ("manifest_version", "run_id", "signature"))


def cmd_lines(schemas, path):
    v = Draft202012Validator(schemas["manifest"])
    vp = Draft202012Validator(schemas["promote-manifest"])
    n = other = 0
    kinds = {}  # (status, error) -> [count, first line]
    codes = {}  # artifact reason_code -> first line
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except ValueError as e:
                kinds.setdefault(("-", "not JSON: %s" % e), [0, i])[0] += 1
                continue
            if not looks_like_manifest(doc):
                # What `sbx run --print-job` or --dry-run print.
                other += 1
                continue
            n += 1
            for a in doc.get("artifacts") or []:
                if isinstance(a, dict) and a.get("reason_code") is not None:
                    codes.setdefault(a["reason_code"], i)
            err = first_error(vp if doc.get("kind") == "promote" else v, doc)
            if err:
                kinds.setdefault((str(doc.get("status")), err[:200]), [0, i])[0] += 1
    what = "the e2e suite's %d manifests match manifest.schema.json" % n
    if other:
        what += " (%d other lines)" % other
    bad = sum(c for c, _ in kinds.values())
    why = "%d do not: %s" % (bad, "; ".join("%d %s like line %d: %s" % (c, s, first, e)
                                             for (s, e), (c, first) in list(kinds.items())[:5]))
    report(n > 0 and bad == 0, what, why if bad else "no manifest in " + path)
    # Every artifact reason_code a run gave is one of the documented list.
    listed = schemas["manifest"]["properties"]["artifacts"]["items"]["properties"]["reason_code"]["oneOf"][1]["enum"]
    unknown = sorted(c for c in codes if c not in listed)
    report(not unknown, "the e2e suite's artifact reason codes (%s) are all in the documented list" %
           ", ".join(sorted(codes)), "not listed: %s (first on lines %s)" %
           (", ".join(map(str, unknown)), ", ".join(str(codes[c]) for c in unknown)))


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: schemas.py SCHEMADIR meta|source SRCDIR|batch|lines FILE")
    schemas = load_schemas(sys.argv[1])
    cmd = sys.argv[2]
    if cmd == "meta":
        cmd_meta(schemas)
    elif cmd == "source":
        cmd_source(schemas, sys.argv[3])
    elif cmd == "commands":
        cmd_commands(schemas, sys.argv[3])
    elif cmd == "batch":
        cmd_batch(schemas, sys.stdin)
    elif cmd == "lines":
        cmd_lines(schemas, sys.argv[3])
    else:
        sys.exit("schemas.py: unknown command " + cmd)
    sys.exit(1 if failed else 0)


main()
