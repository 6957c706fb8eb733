#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# client.sh - the Python client (python/sbx, docs/python.md) against the
# real sbx, as root and as an unprivileged user: typical agent scripts
# (a CSV from a local input file, a matplotlib PNG, JSON, Markdown, HTML,
# a zip of CSVs, a pickle, a failing script, an endless loop, a memory hog,
# standard input) each end promoted or refused with a reason_code, or in
# the typed exception of their outcome; every manifest is verified, with
# the cryptography module as root and with openssl as the user; and
# docs/python.md's agent back end runs exactly as printed there.
# tests/e2e/client-agents.py does the runs; this script sets up each mode
# and turns its PASS/FAIL lines into TAP.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need timeout
# Both signature back ends are tested: neither may be missing.
python3 -c 'import cryptography.hazmat.primitives.asymmetric.ed25519' 2>/dev/null ||
	{ echo "Bail out! python3-cryptography is not installed (tools/install-deps)"; exit 1; }

for mode in root user; do
	setup_mode $mode
	ensure_prepared "$SBX_SRCDIR/policy" python-analysis
	# The client finds sbx on PATH and everything else in the host config,
	# as a back end would: the catalog and the signing key are named there.
	jq --arg p "$(realpath "$SBX_SRCDIR/policy")" --arg k "$KEY" '. + {policy: $p, signing_key: $k}' \
		"$M/config.json" > "$M/client.json"
	mkdir -p "$M/work" "$M/tmp"
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$M/client.json" "$M/work" "$M/tmp"
	backend=cryptography
	[ "$mode" = user ] && backend=openssl
	as_mode env SBX_CONFIG="$M/client.json" PATH="$SBX_BUILDDIR:/usr/bin:/bin" \
		PYTHONPATH="$SBX_SRCDIR/python" PYTHONDONTWRITEBYTECODE=1 TMPDIR="$M/tmp" \
		SBX_SRCDIR="$SBX_SRCDIR" SBX_VERIFY_BACKEND=$backend \
		timeout 900 python3 "$SBX_SRCDIR/tests/e2e/client-agents.py" "$M/work" "$KEY.pub" \
		> "$M/agents.out" 2> "$M/agents.err"
	rc=$?
	while IFS= read -r line; do
		case $line in
		"PASS "*) ok "$mode: ${line#PASS }" ;;
		"FAIL "*) not_ok "$mode: ${line#FAIL }" ;;
		*) echo "$line" ;;
		esac
	done < "$M/agents.out"
	check "$mode: the agent scripts ran to their end (exit $rc)" eval '[ $rc -eq 0 ] || { diag "$(tail -c 1500 "$M/agents.err")"; false; }'
	check "$mode: nothing left in the client's TMPDIR" eval '[ -z "$(ls -A "$M/tmp")" ]'
	cat "$M/work/ids" >> "$T/run-ids" 2>/dev/null
	check "$mode: nothing left behind" nothing_left
done

finish
