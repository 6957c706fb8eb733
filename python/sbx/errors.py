# SPDX-License-Identifier: GPL-2.0-or-later
"""The exceptions of the sbx client: one class per outcome of `sbx run`.

Two kinds, as in sbx(1):

- outcomes of the payload (it ran: failed, timed out, over a limit,
  cancelled, an output refused under on_rejected_output "fail").  They
  carry the run's Result in .result, with its stdout, stderr and
  artifacts; run(check=False) returns that Result instead of raising.
- errors of the request or the host (usage 64, invalid job 65, refused
  77, isolation unavailable 69, internal error 70, no capacity 75): the
  payload never ran, so there is nothing to return; always raised.

Every exception has .exit_status, .manifest (dict or None: 64 and some
69s print none), .reason, .reason_code and .hint (the `Hint:` line of
sbx, or the "hint" of its --json error line, or None).
"""


class SbxError(Exception):
    """Base class: something other than a clean success."""

    exit_status = None

    def __init__(self, message, *, exit_status=None, manifest=None, hint=None,
                 reason_code=None, result=None, stderr=""):
        super().__init__(message)
        if exit_status is not None:
            self.exit_status = exit_status
        self.manifest = manifest
        self.hint = hint
        self.reason_code = reason_code
        self.result = result
        # What sbx itself wrote on its standard error (not the payload's).
        self.stderr = stderr

    @property
    def reason(self):
        if self.manifest is not None:
            return self.manifest.get("reason")
        return str(self)


# --- errors of the request or the host: the payload did not run ----------

class SbxUsageError(SbxError):
    """64: sbx was called wrongly (an option, a local input's name)."""
    exit_status = 64


class SbxInvalidJob(SbxError):
    """65: the job breaks the schema; .path is the JSON path at fault."""
    exit_status = 65

    def __init__(self, message, *, path=None, file=None, **kw):
        super().__init__(message, **kw)
        self.path = path
        self.file = file


class SbxUnavailable(SbxError):
    """69: an isolation feature, the config, the catalog or the key is missing."""
    exit_status = 69


class SbxInternalError(SbxError):
    """70: sbx failed; the manifest says where."""
    exit_status = 70


class SbxNoCapacity(SbxError):
    """75: admission found no capacity within queue_timeout."""
    exit_status = 75


class SbxRefused(SbxError):
    """77: the policy refused the job (profile, limit, output type, input)."""
    exit_status = 77


# --- outcomes of the payload: it ran; .result holds what it left ---------

class SbxFailed(SbxError):
    """1: the payload exited non-zero, died of its own signal, or a required
    output is missing, rejected or broke its contract (see .reason_code)."""
    exit_status = 1

    @property
    def error(self):
        """The traceback the payload printed (manifest "error"), or None."""
        return self.manifest.get("error") if self.manifest else None


class SbxOutputRejected(SbxFailed):
    """1 with reason_code output_rejected: an output was refused and the job
    said on_rejected_output "fail"."""


class SbxTimeout(SbxError):
    """124: wall_seconds reached; the payload was killed."""
    exit_status = 124


class SbxCancelled(SbxError):
    """130: cancelled (a signal to sbx, or sbx cancel)."""
    exit_status = 130


class SbxLimitExceeded(SbxError):
    """137: killed or failed at a limit; .limit names it (memory, pids,
    nproc, output_quota), from the manifest's reason_code."""
    exit_status = 137

    _LIMITS = {"memory_limit": "memory", "pids_limit": "pids",
               "nproc_limit": "nproc", "output_quota": "output_quota"}

    @property
    def limit(self):
        return self._LIMITS.get(self.reason_code, self.reason_code)


class SbxSignatureError(SbxError):
    """The manifest's signature, or its canonical form, does not verify
    with the public key given: nothing in it can be trusted."""


# Exit status -> class.  1 is split on reason_code by exception_for().
BY_EXIT = {
    1: SbxFailed, 64: SbxUsageError, 65: SbxInvalidJob, 69: SbxUnavailable,
    70: SbxInternalError, 75: SbxNoCapacity, 77: SbxRefused, 124: SbxTimeout,
    130: SbxCancelled, 137: SbxLimitExceeded,
}

# The statuses whose payload ran: raised only with check=True.
PAYLOAD_OUTCOMES = (SbxFailed, SbxTimeout, SbxCancelled, SbxLimitExceeded)


def exception_class(exit_status, reason_code=None):
    """The class for an exit status of `sbx run` (SbxError when unknown)."""
    if exit_status == 1 and reason_code == "output_rejected":
        return SbxOutputRejected
    return BY_EXIT.get(exit_status, SbxError)
