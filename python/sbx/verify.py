# SPDX-License-Identifier: GPL-2.0-or-later
"""Checking a manifest's Ed25519 signature, as `sbx verify` does.

What is signed (sbx(1), THE MANIFEST): the manifest without its
"signature" member, in RFC 8785 canonical form: keys sorted, no
whitespace, UTF-8, the short escapes \\b \\t \\n \\f \\r and \\u00xx for the
other control characters.  The manifest holds integers only, and sbx signs
no key above U+FFFF (where RFC 8785's UTF-16 order and Python's code point
order differ), so json.dumps(sort_keys=True) writes those bytes exactly.

Like `sbx verify`, the line itself must be the canonical form of what it
holds: pretty-printed, reordered, re-escaped or duplicated members are not
what was signed and fail.

The public key file is what `sbx keygen` and `openssl pkey -pubout` write:
a PEM "PUBLIC KEY" (SubjectPublicKeyInfo) of 44 bytes whose last 32 are the
raw key.  The key's id, "sha256:" and the SHA-256 of those 32 bytes, must
be the signature's key_id.

The check itself uses the `cryptography` module when it can be imported,
else `openssl pkeyutl -verify -rawin` (OpenSSL 3).  SBX_VERIFY_BACKEND
("cryptography" or "openssl") or the backend argument picks one.
"""
import base64
import binascii
import hashlib
import json
import os
import subprocess
import tempfile

from .errors import SbxSignatureError

# DER of an Ed25519 SubjectPublicKeyInfo up to the raw key (RFC 8410).
_SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
# A key file is a few lines; more is not a key.
_KEY_FILE_MAX = 4096


def canonical(value):
    """RFC 8785 bytes of a manifest-like value (integers only)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True,
                      separators=(",", ":"), allow_nan=False).encode("utf-8")


def _no_duplicates(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise SbxSignatureError("manifest: duplicate member %r" % k)
        obj[k] = v
    return obj


def _no_float(text):
    raise SbxSignatureError("manifest: a number that is not an integer (%s)" % text[:40])


def parse_manifest(line):
    """The manifest of one line of bytes, strictly: duplicates and
    non-integers refused (they cannot be what sbx signed)."""
    if isinstance(line, str):
        line = line.encode("utf-8")
    if line.endswith(b"\n"):
        line = line[:-1]
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SbxSignatureError("manifest: not UTF-8: %s" % e) from None
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates,
                           parse_float=_no_float, parse_constant=_no_float)
    except ValueError as e:
        raise SbxSignatureError("manifest: not JSON: %s" % e) from None
    if not isinstance(value, dict):
        raise SbxSignatureError("manifest: not a JSON object")
    return value, line


def read_public_key(path):
    """The 32 raw bytes of an Ed25519 public key file (PEM PUBLIC KEY)."""
    with open(path, "rb") as f:
        data = f.read(_KEY_FILE_MAX + 1)
    if len(data) > _KEY_FILE_MAX:
        raise SbxSignatureError("%s: too large for a public key file" % path)
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise SbxSignatureError("%s: not a PEM file" % path) from None
    begin, end = "-----BEGIN PUBLIC KEY-----", "-----END PUBLIC KEY-----"
    if begin not in text or end not in text:
        raise SbxSignatureError("%s: no PEM PUBLIC KEY block" % path,
                                hint="sbx keygen writes FILE.pub; openssl pkey -pubout makes one")
    body = text.split(begin, 1)[1].split(end, 1)[0]
    try:
        der = base64.b64decode("".join(body.split()), validate=True)
    except binascii.Error:
        raise SbxSignatureError("%s: the PEM block is not base64" % path) from None
    if len(der) != 44 or not der.startswith(_SPKI_PREFIX):
        raise SbxSignatureError("%s: not an Ed25519 public key" % path)
    return der[12:]


def _pem(raw):
    der = _SPKI_PREFIX + raw
    return ("-----BEGIN PUBLIC KEY-----\n%s\n-----END PUBLIC KEY-----\n"
            % base64.b64encode(der).decode("ascii")).encode("ascii")


def _verify_cryptography(raw, sig, body):
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    try:
        Ed25519PublicKey.from_public_bytes(raw).verify(sig, body)
    except InvalidSignature:
        return False
    return True


def _verify_openssl(raw, sig, body, openssl="openssl"):
    # The key is written from its raw bytes, so that both back ends check
    # exactly the key that read_public_key() accepted and matched to key_id.
    with tempfile.TemporaryDirectory(prefix="sbx-verify-") as d:
        paths = {}
        for name, data in (("key.pem", _pem(raw)), ("body", body), ("sig", sig)):
            paths[name] = os.path.join(d, name)
            with open(paths[name], "wb") as f:
                f.write(data)
        try:
            p = subprocess.run([openssl, "pkeyutl", "-verify", "-pubin", "-inkey", paths["key.pem"],
                                "-rawin", "-in", paths["body"], "-sigfile", paths["sig"]],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
        except FileNotFoundError:
            raise SbxSignatureError("openssl: not found, and the cryptography module is not installed",
                                    hint="install python3-cryptography or openssl") from None
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode == 0 and "Signature Verified Successfully" in out:
        return True
    if "Signature Verification Failure" in out:
        return False
    raise SbxSignatureError("openssl pkeyutl -verify failed: %s"
                            % p.stderr.decode("utf-8", "replace").strip()[:300],
                            hint="openssl 3 is needed for -rawin with Ed25519")


def backend_name(backend=None):
    """The back end that verify_manifest() will use."""
    backend = backend or os.environ.get("SBX_VERIFY_BACKEND") or None
    if backend not in (None, "cryptography", "openssl"):
        raise ValueError("verify backend: %r is neither 'cryptography' nor 'openssl'" % backend)
    if backend is None:
        try:
            import cryptography.hazmat.primitives.asymmetric.ed25519  # noqa: F401
            backend = "cryptography"
        except ImportError:
            backend = "openssl"
    return backend


def verify_manifest(line, pubkey, backend=None):
    """Check the signature of a manifest line (bytes or str) with the public
    key file pubkey; return the manifest (dict).  Raises SbxSignatureError
    when it does not verify, naming why."""
    manifest, raw_line = parse_manifest(line)
    try:
        line_is_canonical = canonical(manifest) == raw_line
    except (UnicodeEncodeError, ValueError):
        line_is_canonical = False
    if not line_is_canonical:
        raise SbxSignatureError("manifest: not the canonical line sbx signs (re-encoded or edited)",
                                manifest=manifest)
    sig = manifest.get("signature")
    if not isinstance(sig, dict) or sig.get("alg") != "ed25519":
        raise SbxSignatureError("manifest: no Ed25519 signature", manifest=manifest)
    raw = read_public_key(pubkey)
    key_id = "sha256:" + hashlib.sha256(raw).hexdigest()
    if sig.get("key_id") != key_id:
        raise SbxSignatureError("manifest: signed by key %s, not by %s (%s)"
                                % (sig.get("key_id"), key_id, pubkey), manifest=manifest)
    try:
        value = base64.b64decode(sig.get("value", ""), validate=True)
    except (binascii.Error, TypeError, ValueError):
        value = b""
    if len(value) != 64:
        raise SbxSignatureError("manifest: the signature value is not 64 bytes of base64",
                                manifest=manifest)
    body = canonical({k: v for k, v in manifest.items() if k != "signature"})
    if backend_name(backend) == "cryptography":
        good = _verify_cryptography(raw, value, body)
    else:
        good = _verify_openssl(raw, value, body)
    if not good:
        raise SbxSignatureError("manifest: the signature does not verify with %s" % pubkey,
                                manifest=manifest)
    return manifest
