# SPDX-License-Identifier: GPL-2.0-or-later
"""Running one job through `sbx run` and reading what it left.

run() builds a one-line run (sbx(1), ONE-LINE RUNS) from its arguments, or,
with job=, a job file; runs `sbx run --no-attach --json -q` with the
artifacts directory in a temporary directory of its own; reads the signed
manifest from sbx's standard output (after checking its signature when
given a public key) and the payload's full captured streams from
DIR/.sbx/; and returns a Result or raises the SbxError subclass of the
outcome (errors.py).  sbx enforces every limit; the client only asks.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import weakref

from . import errors
from .verify import parse_manifest, verify_manifest

# What sbx writes on stderr is a few lines; a run's worth is kept, no more.
_SBX_STDERR_MAX = 64 * 1024
# How long a cancelled sbx may take to clean up before it is killed.
_CANCEL_WAIT = 60


class Artifact:
    """One file the payload left under /work/out, as the manifest lists it.

    path: its path in the manifest (out/...); name: that path below /work/out;
    file: where it is on this machine when promoted, else None; status
    (verdict): promoted, rejected, discarded or held; reason_code, reason:
    why not promoted (sbx(1), Artifact reason codes)."""

    def __init__(self, entry, root):
        self.entry = entry
        self.path = entry.get("path")
        p = self.path or ""
        self.name = p[4:] if p.startswith("out/") else p
        self.size = entry.get("size")
        self.sha256 = entry.get("sha256")
        self.media_type = entry.get("media_type")
        self.status = entry.get("status")
        self.reason = entry.get("reason")
        self.reason_code = entry.get("reason_code")
        self.flags = list(entry.get("flags") or [])
        self.formula_cells = bool(entry.get("formula_cells"))
        self.contract = entry.get("contract")
        # Only a promoted file is delivered; the manifest's path is relative
        # to /work, the artifacts directory holds what was under /work/out.
        self.file = None
        parts = self.name.split("/")
        if self.status == "promoted" and root and self.name and "" not in parts \
                and "." not in parts and ".." not in parts:
            self.file = os.path.join(root, self.name)

    @property
    def verdict(self):
        return self.status

    @property
    def promoted(self):
        return self.status == "promoted"

    def read_bytes(self):
        if self.file is None:
            raise FileNotFoundError("%s was not promoted (%s: %s)" % (self.name, self.reason_code, self.reason))
        with open(self.file, "rb") as f:
            return f.read()

    def __repr__(self):
        return "<Artifact %s %s %s%s>" % (self.name, self.media_type, self.status,
                                          " " + self.reason_code if self.reason_code else "")


class Result:
    """What a run left: its manifest, the payload's streams and artifacts.

    The files live in a temporary directory (.dir) that belongs to this
    object: it is removed by cleanup(), at the end of a with block, or
    when the Result is garbage collected."""

    def __init__(self, manifest, exit_status, base, out_dir):
        self.manifest = manifest
        self.exit_status = exit_status
        self.dir = out_dir
        self._finalizer = weakref.finalize(self, shutil.rmtree, base, True) if base else None
        exit_ = manifest.get("exit") or {}
        self.exit_code = exit_.get("code")
        self.signal = exit_.get("signal")
        self.artifacts = [Artifact(a, out_dir) for a in manifest.get("artifacts") or []]
        self.stdout = self._stream("stdout")
        self.stderr = self._stream("stderr")

    def _stream(self, name):
        rec = self.manifest.get(name)
        if not rec or not self.dir:
            return b""
        path = os.path.join(self.dir, ".sbx", name)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            data = b""
        # The capture is what the manifest's digest (signed) names; a file
        # that differs was changed after sbx wrote it.
        if rec.get("sha256") and hashlib.sha256(data).hexdigest() != rec["sha256"]:
            raise errors.SbxError("%s: its SHA-256 is not the manifest's" % path,
                                  manifest=self.manifest)
        return data

    # The manifest's members a caller reads most.
    status = property(lambda self: self.manifest.get("status"))
    reason = property(lambda self: self.manifest.get("reason"))
    reason_code = property(lambda self: self.manifest.get("reason_code"))
    run_id = property(lambda self: self.manifest.get("run_id"))
    summary = property(lambda self: self.manifest.get("summary"))
    # The traceback the payload printed: {type, message, file, line,
    # claimed_by}, the payload's own claim (sbx(1), error), or None.
    error = property(lambda self: self.manifest.get("error"))
    stdout_truncated = property(lambda self: bool((self.manifest.get("stdout") or {}).get("truncated")))
    stderr_truncated = property(lambda self: bool((self.manifest.get("stderr") or {}).get("truncated")))

    @property
    def promoted(self):
        return [a for a in self.artifacts if a.status == "promoted"]

    @property
    def rejected(self):
        return [a for a in self.artifacts if a.status != "promoted"]

    def artifact(self, name):
        """The artifact at NAME below /work/out (KeyError when none)."""
        for a in self.artifacts:
            if a.name == name:
                return a
        raise KeyError(name)

    def cleanup(self):
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False

    def __repr__(self):
        return "<Result %s %s: %d promoted, %d not>" % (self.run_id, self.status,
                                                        len(self.promoted), len(self.rejected))


# sbx(1): the names of input handles, and of local files in /work/in.
_HANDLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


def _check_name(what, name):
    # After -i, a word with a '/' or '=' is a local file of the caller's
    # (sbx(1), -i): a handle, or a name, that came from elsewhere (a user,
    # a model) must never become one, so only a handle name passes.
    if not isinstance(name, str) or not _HANDLE_NAME.match(name):
        raise ValueError("%s: %r is not a handle name (^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$)"
                         % (what, name))


def _limit_value(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError("limits: %r is not a number" % (v,))
    return json.dumps(v)


def _json_error_line(stderr):
    """The --json error line (schema/error.schema.json) of a 64 or 65."""
    for line in reversed(stderr.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and "error" in obj and "exit" in obj:
                return obj
    return None


def _hint(stderr):
    for line in stderr.splitlines():
        if line.startswith("sbx: Hint: "):
            return line[len("sbx: Hint: "):]
    return None


def run(code=None, *, profile=None, args=(), inputs=None, handles=(), stdin=None,
        allow=(), require=(), limits=None, timeout=None, network=None, job=None,
        check=True, sbx="sbx", config=None, policy=None, key=None, store=None,
        principal=None, queue_timeout=None, pubkey=None, verify_backend=None,
        env=None):
    """Run CODE in PROFILE; return a Result, or raise an SbxError.

    code: the program text (str or bytes); profile: the runtime profile.
    args: its arguments.  inputs: {name: local path}, each copied to
    /work/in/NAME; handles: input handles of the store.  stdin: bytes for
    the payload's standard input (None: /dev/null).  allow: allowed
    output types; require: required output paths; limits: {key: number};
    timeout: limits' wall_seconds; network: the network profile.
    job: a dict of job file members a one-line run cannot set (env,
    on_rejected_output, outputs, partial_outputs, extract, ...): the job
    then goes to sbx as a file, and inputs (local files) are not allowed.
    check: raise for the payload's outcomes (failed, timed out, limit,
    cancelled); False returns their Result.  sbx, config, policy, key,
    store, principal, queue_timeout: how to call sbx.  pubkey: check the
    manifest's signature with this public key file (verify_backend:
    "cryptography" or "openssl"; default: the module if installed).
    env: the environment sbx itself runs with (default: this process's).
    """
    if profile is None:
        raise ValueError("profile: a runtime profile is required")
    if code is None:
        raise ValueError("code: the program text is required")
    if isinstance(code, str):
        code = code.encode("utf-8")
    limits = dict(limits or {})
    if timeout is not None:
        limits["wall_seconds"] = timeout
    inputs = dict(inputs or {})
    for name in inputs:
        _check_name("inputs", name)
    handles = list(handles)
    for h in handles:
        _check_name("handles", h)
    if job is not None and inputs:
        raise ValueError("inputs: local files are for one-line runs; with job=, use handles of a store")

    base = tempfile.mkdtemp(prefix="sbx-client-")
    try:
        out_dir = os.path.join(base, "out")
        cmd = [sbx, "run", "--no-attach", "--json", "-q", "--artifacts", out_dir]
        for opt, val in (("--config", config), ("--policy", policy), ("--key", key),
                         ("--store", store), ("--principal", principal),
                         ("--queue-timeout", queue_timeout)):
            if val is not None:
                cmd += [opt, str(val)]
        if stdin is not None:
            cmd.append("--stdin")
        if job is None:
            code_file = os.path.join(base, "code")
            with open(code_file, "wb") as f:
                f.write(code)
            cmd += ["-p", profile]
            if network is not None:
                cmd += ["-n", network]
            for h in handles:
                cmd += ["-i", h]
            for name, path in inputs.items():
                cmd += ["-i", "%s=%s" % (name, os.fspath(path))]
            for k, v in limits.items():
                cmd += ["--limit", "%s=%s" % (k, _limit_value(v))]
            for t in allow:
                cmd += ["--allow", t]
            for r in require:
                cmd += ["--require", r]
            cmd += ["--", code_file] + [str(a) for a in args]
        else:
            doc = dict(job)
            doc.update({"runtime_profile": profile, "code": code.decode("utf-8")})
            for k, v in (("network_profile", network), ("input_handles", list(handles)),
                         ("args", [str(a) for a in args]), ("limits", limits),
                         ("allowed_outputs", list(allow)), ("required_outputs", list(require))):
                if v:
                    doc[k] = v
            job_file = os.path.join(base, "job.json")
            with open(job_file, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            cmd.append(job_file)

        try:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        except FileNotFoundError:
            raise errors.SbxUnavailable("%s: not found" % sbx,
                                        hint="install sbx, or pass sbx= the path of the binary") from None
        stdout, stderr = _communicate(p, stdin)
        sbx_stderr = stderr[-_SBX_STDERR_MAX:].decode("utf-8", "replace")
        rc = p.returncode

        manifest = None
        if stdout.strip():
            if pubkey is not None:
                manifest = verify_manifest(stdout, pubkey, backend=verify_backend)
            else:
                try:
                    manifest, _ = parse_manifest(stdout)
                except errors.SbxError as e:
                    raise errors.SbxInternalError("sbx run printed no manifest: %s" % e,
                                                  exit_status=rc, stderr=sbx_stderr) from None
        elif pubkey is not None and rc not in (64, 69):
            raise errors.SbxSignatureError("sbx run printed no manifest to verify (exit %d)" % rc,
                                           exit_status=rc, stderr=sbx_stderr)

        if rc in (64, 65) or manifest is None:
            jerr = _json_error_line(sbx_stderr) if rc in (64, 65) else None
            cls = errors.exception_class(rc)
            if cls is errors.SbxError:
                cls = errors.SbxInternalError  # exit 0 or unknown, and no manifest
            if jerr is not None:
                kw = {"path": jerr.get("path"), "file": jerr.get("file")} if cls is errors.SbxInvalidJob else {}
                raise cls(jerr.get("error") or "sbx run: exit %d" % rc, exit_status=rc,
                          manifest=manifest, hint=jerr.get("hint"), stderr=sbx_stderr,
                          reason_code=(manifest or {}).get("reason_code"), **kw)
            first = next((l for l in sbx_stderr.splitlines() if not l.startswith("sbx: Hint: ")),
                         "sbx run: exit %d" % rc)
            raise cls(first, exit_status=rc, manifest=manifest, hint=_hint(sbx_stderr),
                      stderr=sbx_stderr)

        cls = errors.exception_class(rc, manifest.get("reason_code"))
        if rc != 0 and not issubclass(cls, errors.PAYLOAD_OUTCOMES):
            raise cls(manifest.get("reason") or "sbx run: exit %d" % rc, exit_status=rc,
                      manifest=manifest, hint=_hint(sbx_stderr),
                      reason_code=manifest.get("reason_code"), stderr=sbx_stderr)

        result = Result(manifest, rc, base, out_dir)
        base = None  # the Result owns it now
        if pubkey is not None:
            _check_artifacts(result)
        if rc != 0 and check:
            raise cls(manifest.get("reason") or "sbx run: exit %d" % rc, exit_status=rc,
                      manifest=manifest, hint=_hint(sbx_stderr),
                      reason_code=manifest.get("reason_code"), result=result, stderr=sbx_stderr)
        return result
    finally:
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)


def _communicate(p, stdin):
    """Run sbx to its end.  Interrupted (KeyboardInterrupt, a timeout of the
    caller's), it is cancelled the way sbx(1) says, with SIGTERM, so that
    it kills the payload and cleans up; SIGKILL would leave its state for
    `sbx gc`.  Then the interruption goes on up."""
    try:
        return p.communicate(stdin)
    except BaseException:
        p.terminate()
        try:
            p.communicate(timeout=_CANCEL_WAIT)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        raise


def _check_artifacts(result):
    """With a verified manifest: each promoted file is the one it lists."""
    for a in result.promoted:
        h = hashlib.sha256()
        try:
            with open(a.file, "rb") as f:
                for block in iter(lambda: f.read(1 << 16), b""):
                    h.update(block)
        except OSError as e:
            raise errors.SbxSignatureError("%s: %s" % (a.file, e.strerror), manifest=result.manifest) from None
        if h.hexdigest() != a.sha256:
            raise errors.SbxSignatureError("%s: its SHA-256 is not the manifest's" % a.file,
                                           manifest=result.manifest)
