#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# markup-diff.sh - the differential test of the markup validators: sbx's
# verdict on generated hostile HTML, Markdown and SVG against html5lib's
# (WHATWG) and libexpat's views of the same bytes (tests/markup-diff.py
# says how).  SBX_MARKUP_DIFF_N documents a type (3000), from the seed
# SBX_MARKUP_DIFF_SEED (23).  Without python3-html5lib the test fails:
# it never skips.  Prints TAP.
set -u
: "${SBX_BUILDDIR:?}" "${SBX_SRCDIR:?}"

# The first python3 that has html5lib: the one on PATH, else the system's,
# where python3-html5lib installs it.
PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import html5lib, pyexpat' 2>/dev/null; then
		PY=$(command -v "$p")
		break
	fi
done
if [ -z "$PY" ]; then
	echo "Bail out! python3-html5lib is not installed; tools/install-deps test installs it"
	exit 1
fi
exec "$PY" "$SBX_SRCDIR/tests/markup-diff.py" "$SBX_BUILDDIR/tests/markup-verdict" \
	"${SBX_MARKUP_DIFF_N:-3000}" "${SBX_MARKUP_DIFF_SEED:-23}"
