# SPDX-License-Identifier: GPL-2.0-or-later
"""Unit tests of the Python client (python/sbx), standard library only.

The signature tests sign with sbx's own signing code (sign-tool, which
calls the sbx_manifest_finish() of `sbx run`) and a key of `sbx keygen`,
and check with both back ends: the `cryptography` module and openssl.
The outcome tests run the client against a stand-in for sbx (a script
that prints a canned manifest and exits with a given status, and records
its arguments and standard input), so every exit status of sbx(1) is
reached without a sandbox; tests/e2e/client.sh runs the real one.
"""
import base64
import glob
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from unittest import mock

import sbx
from sbx import errors, verify

BUILDDIR = os.environ.get("SBX_BUILDDIR", "")
SBX_BIN = os.path.join(BUILDDIR, "sbx")
SIGN_TOOL = os.path.join(BUILDDIR, "tests", "unit", "crypto", "sign-tool")
BACKENDS = ("cryptography", "openssl")

# A manifest with what makes canonical form hard: control characters of an
# excerpt, non-ASCII, nesting, big integers, members out of order.
MANIFEST = {
    "manifest_version": 3, "run_id": "r-1", "status": "succeeded", "reason": None,
    "stdout": {"excerpt": "tab\there\nline\u001b[1m é ü 😀", "bytes": 9007199254740991,
               "truncated": False},
    "artifacts": [{"path": "out/a.csv", "status": "promoted", "size": 4,
                   "sha256": "0" * 64, "media_type": "text/csv", "reason_code": None}],
    "zeta": [], "alpha": {"b": 1, "a": [1, 2, {"z": None, "y": True}]},
}


def sh(*cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, **kw).stdout


class SignedCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="sbx-pytest-")
        cls.key = os.path.join(cls.tmp, "k")
        sh(SBX_BIN, "keygen", "-o", cls.key, stderr=subprocess.DEVNULL)
        cls.pub = cls.key + ".pub"
        cls.other = os.path.join(cls.tmp, "other")
        sh(SBX_BIN, "keygen", "-o", cls.other, stderr=subprocess.DEVNULL)
        src = os.path.join(cls.tmp, "m.json")
        with open(src, "w") as f:
            json.dump(MANIFEST, f, indent=2)
        cls.line = sh(SIGN_TOOL, cls.key, src)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def resign_with_value(self, change):
        """The signed line with CHANGE applied, written canonically again:
        only the signature can tell."""
        m = json.loads(self.line)
        change(m)
        return verify.canonical(m) + b"\n"


class TestCanonical(SignedCase):
    def test_sbx_signed_line_is_python_canonical(self):
        m = json.loads(self.line)
        self.assertEqual(verify.canonical(m) + b"\n", self.line)

    def test_jq_agrees(self):
        body = sh("jq", "-cjS", "del(.signature)", input=self.line)
        m = json.loads(self.line)
        del m["signature"]
        self.assertEqual(verify.canonical(m), body)


class TestVerify(SignedCase):
    def test_accepts_both_backends(self):
        for b in BACKENDS:
            with self.subTest(backend=b):
                m = sbx.verify_manifest(self.line, self.pub, backend=b)
                self.assertEqual(m["run_id"], "r-1")

    def test_without_final_newline_and_as_str(self):
        for b in BACKENDS:
            sbx.verify_manifest(self.line[:-1], self.pub, backend=b)
            sbx.verify_manifest(self.line.decode(), self.pub, backend=b)

    def test_tampered_value_fails_both_backends(self):
        def tamper(m):
            m["status"] = "failed"
        bad = self.resign_with_value(tamper)
        for b in BACKENDS:
            with self.subTest(backend=b):
                with self.assertRaisesRegex(sbx.SbxSignatureError, "does not verify"):
                    sbx.verify_manifest(bad, self.pub, backend=b)

    def test_tampered_artifact_digest_fails(self):
        def tamper(m):
            m["artifacts"][0]["sha256"] = "1" * 64
        bad = self.resign_with_value(tamper)
        for b in BACKENDS:
            with self.assertRaises(sbx.SbxSignatureError):
                sbx.verify_manifest(bad, self.pub, backend=b)

    def test_flipped_signature_bit_fails(self):
        def tamper(m):
            s = bytearray(base64.b64decode(m["signature"]["value"]))
            s[10] ^= 1
            m["signature"]["value"] = base64.b64encode(bytes(s)).decode()
        bad = self.resign_with_value(tamper)
        for b in BACKENDS:
            with self.assertRaisesRegex(sbx.SbxSignatureError, "does not verify"):
                sbx.verify_manifest(bad, self.pub, backend=b)

    def test_other_key_fails(self):
        for b in BACKENDS:
            with self.assertRaisesRegex(sbx.SbxSignatureError, "signed by key"):
                sbx.verify_manifest(self.line, self.other + ".pub", backend=b)

    def test_key_id_claimed_for_other_key_still_fails(self):
        # key_id says the other key; the signature is still the first key's.
        other_id = json.loads(self.resign_other())["signature"]["key_id"]

        def tamper(m):
            m["signature"]["key_id"] = other_id
        bad = self.resign_with_value(tamper)
        for b in BACKENDS:
            with self.assertRaisesRegex(sbx.SbxSignatureError, "does not verify"):
                sbx.verify_manifest(bad, self.other + ".pub", backend=b)

    def resign_other(self):
        src = os.path.join(self.tmp, "m2.json")
        with open(src, "w") as f:
            json.dump(MANIFEST, f)
        return sh(SIGN_TOOL, self.other, src)

    def test_not_canonical_fails(self):
        m = json.loads(self.line)
        for bad in (json.dumps(m, indent=1).encode(),            # pretty-printed
                    json.dumps(m, sort_keys=False, separators=(",", ":")).encode(),  # order
                    json.dumps(m, sort_keys=True, separators=(",", ":")).encode()):  # \u escapes
            with self.assertRaisesRegex(sbx.SbxSignatureError, "canonical"):
                sbx.verify_manifest(bad, self.pub, backend="openssl")

    def test_duplicate_member_fails(self):
        dup = self.line.replace(b'"run_id":"r-1"', b'"run_id":"r-1","run_id":"r-2"')
        self.assertNotEqual(dup, self.line)
        with self.assertRaisesRegex(sbx.SbxSignatureError, "duplicate"):
            sbx.verify_manifest(dup, self.pub)

    def test_float_fails(self):
        bad = self.line.replace(b'"manifest_version":3', b'"manifest_version":3.0')
        with self.assertRaisesRegex(sbx.SbxSignatureError, "not an integer"):
            sbx.verify_manifest(bad, self.pub)

    def test_bad_key_files(self):
        with open(self.key) as f:
            private = f.read()
        cases = {"private": private, "empty": "",
                 "x25519": sh("openssl", "pkey", "-pubout", input=sh(
                     "openssl", "genpkey", "-algorithm", "x25519")).decode()}
        for name, text in cases.items():
            path = os.path.join(self.tmp, "bad-" + name)
            with open(path, "w") as f:
                f.write(text)
            with self.subTest(key=name), self.assertRaises(sbx.SbxSignatureError):
                sbx.verify_manifest(self.line, path)

    def test_openssl_key_file_works(self):
        # A .pub as openssl writes it (from sbx's private key) is the same key.
        path = os.path.join(self.tmp, "openssl.pub")
        with open(path, "wb") as f:
            f.write(sh("openssl", "pkey", "-in", self.key, "-pubout"))
        for b in BACKENDS:
            sbx.verify_manifest(self.line, path, backend=b)

    def test_backend_choice(self):
        with mock.patch.dict(os.environ, {"SBX_VERIFY_BACKEND": "openssl"}):
            self.assertEqual(verify.backend_name(), "openssl")
        with mock.patch.dict(os.environ, {"SBX_VERIFY_BACKEND": ""}):
            self.assertEqual(verify.backend_name(), "cryptography")
            # Without the module, openssl is used: no import error.
            with mock.patch.dict(sys.modules, {"cryptography": None,
                                               "cryptography.hazmat.primitives.asymmetric.ed25519": None}):
                self.assertEqual(verify.backend_name(), "openssl")
        with self.assertRaises(ValueError):
            verify.backend_name("gpg")


# --- outcomes, through a stand-in for sbx ------------------------------------

FAKE = textwrap.dedent("""\
    #!/bin/sh
    # Records its argv and stdin; prints $FAKE_MANIFEST, $FAKE_STDERR; exits $FAKE_RC.
    printf '%s\\n' "$@" > "$FAKE_DIR/argv"
    cat > "$FAKE_DIR/stdin"
    prev= art=
    for a in "$@"; do [ "$prev" = --artifacts ] && art=$a; prev=$a; done
    if [ -n "${FAKE_STREAM:-}" ]; then
        mkdir -p "$art/.sbx" && printf '%s' "$FAKE_STREAM" > "$art/.sbx/stdout"
        printf 'a,b\\n' > "$art/t.csv"
    fi
    [ -n "${FAKE_DIRFILE:-}" ] && echo "$art" > "$FAKE_DIRFILE"
    if [ -n "${FAKE_SLEEP:-}" ]; then
        trap 'kill $!; echo term > "$FAKE_DIR/term"; exit 130' TERM
        sleep "$FAKE_SLEEP" & wait
    fi
    [ -n "${FAKE_MANIFEST:-}" ] && printf '%s\\n' "$FAKE_MANIFEST"
    [ -n "${FAKE_STDERR:-}" ] && printf '%s\\n' "$FAKE_STDERR" >&2
    exit "$FAKE_RC"
    """)


def manifest(status, reason_code=None, **extra):
    m = {"status": status, "reason": None if status == "succeeded" else "because " + status,
         "reason_code": reason_code, "exit": {"code": 0}, "artifacts": [], "stdout": None,
         "stderr": None, "error": None, "run_id": "r", "summary": {}}
    m.update(extra)
    return m


class TestOutcomes(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sbx-pyfake-")
        self.fake = os.path.join(self.dir, "sbx")
        with open(self.fake, "w") as f:
            f.write(FAKE)
        os.chmod(self.fake, stat.S_IRWXU)
        self.env = dict(os.environ, FAKE_DIR=self.dir, FAKE_DIRFILE=os.path.join(self.dir, "art"))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def go(self, rc, m=None, stderr="", stream=None, **kw):
        env = dict(self.env, FAKE_RC=str(rc), FAKE_MANIFEST=json.dumps(m) if m else "",
                   FAKE_STDERR=stderr, FAKE_STREAM=stream or "")
        return sbx.run(code="print(1)", profile="p", sbx=self.fake, env=env, **kw)

    def art_dir(self):
        with open(os.path.join(self.dir, "art")) as f:
            return f.read().strip()

    def test_payload_outcomes_raise_and_check_false_returns(self):
        cases = [(1, "exit_nonzero", sbx.SbxFailed), (1, "output_rejected", sbx.SbxOutputRejected),
                 (124, "wall_timeout", sbx.SbxTimeout), (130, "cancelled", sbx.SbxCancelled),
                 (137, "memory_limit", sbx.SbxLimitExceeded)]
        status = {1: "failed", 124: "timed_out", 130: "cancelled", 137: "limit_exceeded"}
        for rc, code, cls in cases:
            with self.subTest(rc=rc, code=code):
                m = manifest(status[rc], code)
                with self.assertRaises(cls) as cm:
                    self.go(rc, m)
                e = cm.exception
                self.assertIs(type(e), cls)
                self.assertEqual((e.exit_status, e.reason_code, e.reason), (rc, code, m["reason"]))
                self.assertEqual(e.result.status, status[rc])
                r = self.go(rc, m, check=False)
                self.assertEqual((r.status, r.exit_status, r.reason_code), (status[rc], rc, code))
                r.cleanup()

    def test_limit_names(self):
        for code, limit in (("memory_limit", "memory"), ("pids_limit", "pids"),
                            ("nproc_limit", "nproc"), ("output_quota", "output_quota")):
            with self.assertRaises(sbx.SbxLimitExceeded) as cm:
                self.go(137, manifest("limit_exceeded", code))
            self.assertEqual(cm.exception.limit, limit)

    def test_failed_carries_the_payload_error(self):
        err = {"type": "KeyError", "message": "'x'", "file": "/work/main.py", "line": 3,
               "claimed_by": "payload"}
        with self.assertRaises(sbx.SbxFailed) as cm:
            self.go(1, manifest("failed", "exit_nonzero", error=err, exit={"code": 1}))
        self.assertEqual(cm.exception.error["type"], "KeyError")
        self.assertEqual(cm.exception.result.error, err)
        self.assertEqual(cm.exception.result.exit_code, 1)

    def test_request_errors_always_raise_and_leave_nothing(self):
        cases = [(77, "refused", "policy_refused", sbx.SbxRefused),
                 (69, "isolation_unavailable", "isolation_unavailable", sbx.SbxUnavailable),
                 (70, "error", "internal_error", sbx.SbxInternalError),
                 (75, "rejected_capacity", "no_capacity", sbx.SbxNoCapacity)]
        for rc, st, code, cls in cases:
            with self.subTest(rc=rc):
                with self.assertRaises(cls) as cm:
                    self.go(rc, manifest(st, code), check=False)
                self.assertIsNone(cm.exception.result)
                self.assertEqual(cm.exception.reason_code, code)
                self.assertFalse(os.path.exists(os.path.dirname(self.art_dir())))

    def test_69_without_manifest_has_the_hint(self):
        with self.assertRaises(sbx.SbxUnavailable) as cm:
            self.go(69, None, stderr="sbx: user namespaces: disabled\nsbx: Hint: set kernel.x=1")
        self.assertEqual(str(cm.exception), "sbx: user namespaces: disabled")
        self.assertEqual(cm.exception.hint, "set kernel.x=1")
        self.assertIsNone(cm.exception.manifest)

    def test_64_and_65_read_the_json_line(self):
        line = {"error": "run: --limit: bad", "hint": "try 'sbx run --help'", "exit": 64,
                "file": None, "path": None}
        with self.assertRaises(sbx.SbxUsageError) as cm:
            self.go(64, None, stderr=json.dumps(line))
        self.assertEqual((str(cm.exception), cm.exception.hint), (line["error"], line["hint"]))
        line = {"error": "<command line>: limits.pids: expected a positive integer", "hint": None,
                "exit": 65, "file": "<command line>", "path": "limits.pids"}
        with self.assertRaises(sbx.SbxInvalidJob) as cm:
            self.go(65, manifest("invalid", "invalid_job"), stderr=json.dumps(line))
        e = cm.exception
        self.assertEqual((e.path, e.file, e.manifest["status"]), ("limits.pids", "<command line>", "invalid"))

    def test_no_manifest_at_all(self):
        with self.assertRaises(sbx.SbxInternalError):
            self.go(0, None)
        with self.assertRaises(sbx.SbxInternalError):
            self.go(70, None, stderr="garbage")

    def test_success_reads_streams_and_artifacts(self):
        import hashlib
        out = "hello\n" * 3
        m = manifest("succeeded", stdout={"sha256": hashlib.sha256(out.encode()).hexdigest(),
                                          "bytes": len(out), "truncated": False},
                     artifacts=[{"path": "out/t.csv", "status": "promoted", "media_type": "text/csv",
                                 "sha256": "x", "reason_code": None},
                                {"path": "out/x.pkl", "status": "rejected", "media_type": None,
                                 "reason_code": "unknown_type", "reason": "a Python pickle"}])
        with self.go(0, m, stream=out) as r:
            self.assertEqual(r.stdout, out.encode())
            self.assertEqual(r.stderr, b"")
            self.assertEqual([a.name for a in r.promoted], ["t.csv"])
            self.assertEqual(r.artifact("t.csv").read_bytes(), b"a,b\n")
            self.assertEqual([(a.name, a.verdict, a.reason_code) for a in r.rejected],
                             [("x.pkl", "rejected", "unknown_type")])
            self.assertIsNone(r.artifact("x.pkl").file)
            d = r.dir
            self.assertTrue(os.path.isdir(d))
        self.assertFalse(os.path.exists(d))

    def test_stream_not_the_manifests_fails(self):
        m = manifest("succeeded", stdout={"sha256": "0" * 64, "bytes": 1, "truncated": False})
        with self.assertRaisesRegex(sbx.SbxError, "SHA-256"):
            self.go(0, m, stream="changed")

    def test_command_line(self):
        data = os.path.join(self.dir, "data.csv")
        open(data, "w").close()
        r = self.go(0, manifest("succeeded"), inputs={"data.csv": data}, stdin=b"\x00bytes\n",
                    allow=["text/csv"], limits={"memory_mib": 256, "cpu_cores": 0.5},
                    timeout=30, args=["--x", "1"], handles=["h1"], require=["t.csv"])
        with open(os.path.join(self.dir, "argv")) as f:
            argv = f.read().splitlines()
        with open(os.path.join(self.dir, "stdin"), "rb") as f:
            self.assertEqual(f.read(), b"\x00bytes\n")
        self.assertEqual(argv[:3], ["run", "--no-attach", "--json"])
        for pair in (["-p", "p"], ["-i", "h1"], ["-i", "data.csv=" + data], ["--stdin"],
                     ["--limit", "memory_mib=256"], ["--limit", "cpu_cores=0.5"],
                     ["--limit", "wall_seconds=30"], ["--allow", "text/csv"], ["--require", "t.csv"]):
            self.assertTrue(any(argv[i:i + len(pair)] == pair for i in range(len(argv))), pair)
        dd = argv.index("--")
        self.assertEqual(argv[dd + 2:], ["--x", "1"])
        r.cleanup()
        # Without stdin= the payload's stdin is /dev/null: no --stdin.
        self.go(0, manifest("succeeded")).cleanup()
        with open(os.path.join(self.dir, "argv")) as f:
            self.assertNotIn("--stdin", f.read().splitlines())

    def test_input_names_that_could_be_options_or_paths(self):
        for name in ("a/b", "x=y", "-p", "", "../x", ".hidden", "a" * 65, "é"):
            with self.subTest(name=name), self.assertRaises(ValueError):
                self.go(0, manifest("succeeded"), inputs={name: "/dev/null"})

    def test_handles_that_would_be_local_files(self):
        # sbx -i ../secret (or x=/etc/shadow) copies a file of the caller's:
        # a handle taken from a user or a model must never be one.
        for h in ("../secret", "x=/etc/shadow", "./a", "/abs", "-i", ""):
            with self.subTest(handle=h), self.assertRaises(ValueError):
                self.go(0, manifest("succeeded"), handles=[h])
        self.assertFalse(os.path.exists(os.path.join(self.dir, "argv")))
        self.go(0, manifest("succeeded"), handles=["upload_32.csv"]).cleanup()

    def test_job_file_mode(self):
        r = self.go(0, manifest("succeeded"), job={"on_rejected_output": "fail"}, allow=["text/csv"])
        with open(os.path.join(self.dir, "argv")) as f:
            argv = f.read().splitlines()
        self.assertNotIn("-p", argv)
        r.cleanup()
        with self.assertRaises(ValueError):
            self.go(0, manifest("succeeded"), job={}, inputs={"a": "/dev/null"})

    def test_sbx_missing(self):
        with self.assertRaises(sbx.SbxUnavailable):
            sbx.run(code="", profile="p", sbx=os.path.join(self.dir, "nope"))

    def test_interrupted_run_is_cancelled_with_sigterm(self):
        import signal

        class Interrupt(Exception):
            pass

        def fire(signum, frame):
            raise Interrupt()
        old = signal.signal(signal.SIGALRM, fire)
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        try:
            with self.assertRaises(Interrupt):
                sbx.run(code="x", profile="p", sbx=self.fake,
                            env=dict(self.env, FAKE_RC="0", FAKE_SLEEP="30"))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        with open(os.path.join(self.dir, "term")) as f:
            self.assertEqual(f.read(), "term\n")
        self.assertFalse(os.path.exists(os.path.dirname(self.art_dir())))

    def test_promoted_names_stay_in_the_directory(self):
        root = os.path.join(self.dir, "out")
        for name in ("out/../x", "out/a/../../x", "/etc/passwd", "out/", "out/./a"):
            a = sbx.Artifact({"path": name, "status": "promoted"}, root)
            self.assertIsNone(a.file, name)
        self.assertEqual(sbx.Artifact({"path": "out/a/b.csv", "status": "promoted"}, root).file,
                         os.path.join(root, "a", "b.csv"))

    def test_no_temp_dirs_left(self):
        before = set(glob.glob(os.path.join(tempfile.gettempdir(), "sbx-client-*")))
        for rc, st in ((77, "refused"), (0, "succeeded"), (1, "failed")):
            try:
                self.go(rc, manifest(st, "exit_nonzero" if rc == 1 else None)).cleanup()
            except sbx.SbxError as e:
                if e.result:
                    e.result.cleanup()
        self.assertEqual(set(glob.glob(os.path.join(tempfile.gettempdir(), "sbx-client-*"))), before)


if __name__ == "__main__":
    unittest.main()
