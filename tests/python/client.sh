#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# client.sh - the Python client's unit tests (tests/python/test_client.py)
# in TAP, with the system's python3: the package as it is in the source
# tree, sbx keygen and sign-tool from the build tree, and both signature
# back ends (python3-cryptography and openssl are required, never skipped).
set -u
: "${SBX_SRCDIR:?}" "${SBX_BUILDDIR:?}"
PYTHONPATH="$SBX_SRCDIR/python:$SBX_SRCDIR/tests/python" PYTHONDONTWRITEBYTECODE=1 \
	exec python3 -W error::ResourceWarning "$SBX_SRCDIR/tests/python/tap.py" test_client
