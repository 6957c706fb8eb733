# SPDX-License-Identifier: GPL-2.0-or-later
"""sbx: run untrusted code in the sbx sandbox from Python (docs/python.md).

    import sbx
    with sbx.run(code="print(6 * 7)", profile="python-analysis") as r:
        print(r.stdout)

Standard library only; signatures are checked with the `cryptography`
module when it is installed, else with openssl(1).
"""
from .client import Artifact, Result, run
from .errors import (SbxCancelled, SbxError, SbxFailed, SbxInternalError, SbxInvalidJob,
                     SbxLimitExceeded, SbxNoCapacity, SbxOutputRejected, SbxRefused,
                     SbxSignatureError, SbxTimeout, SbxUnavailable, SbxUsageError)
from .verify import verify_manifest

__version__ = "0.1.0"
__all__ = [
    "run", "Result", "Artifact", "verify_manifest",
    "SbxError", "SbxUsageError", "SbxInvalidJob", "SbxUnavailable", "SbxInternalError",
    "SbxNoCapacity", "SbxRefused", "SbxFailed", "SbxOutputRejected", "SbxTimeout",
    "SbxCancelled", "SbxLimitExceeded", "SbxSignatureError",
]
