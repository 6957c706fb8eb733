#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# install.sh - the installed sbx works with nothing but what `make install`
# put under its prefix: the catalog is at $datadir/sbx/policy/{profiles,
# network,seccomp}, `sbx check` passes, and the example job runs with the
# installed catalog and helpers and yields a manifest that verifies.
#
# Run by `make installcheck` (and so by `make distcheck`), which sets
# SBX_BINDIR, SBX_POLICYDIR, SBX_SCHEMADIR, SBX_PKGLIBEXECDIR and
# SBX_SRCDIR.  The run's manifest, the example job and the installed
# catalog must match the installed JSON Schemas (python3-jsonschema).  The run
# needs the paths compiled into sbx to be the real ones: after an install
# with DESTDIR only the layout is checked.  Prints TAP.
#
# Running a sandbox needs root here (or a cgroup delegated to the user);
# as another user the run is skipped with that reason, unless
# SBX_TEST_NO_SKIP=1, which makes every skip a failure.
set -u
: "${SBX_BINDIR:?}" "${SBX_POLICYDIR:?}" "${SBX_PKGLIBEXECDIR:?}" "${SBX_SRCDIR:?}"
SBX_SCHEMADIR=${SBX_SCHEMADIR:-${SBX_POLICYDIR%/policy}/schema}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
diag() { sed 's/^/# /' "$@" | head -n 40; }
skip_rest() {
	if [ "${SBX_TEST_NO_SKIP:-0}" = 1 ]; then
		not_ok "cannot run the installed sbx: $1 (SBX_TEST_NO_SKIP=1 forbids skipping)"
	else
		n=$((n + 1)); echo "ok $n # SKIP $1"
	fi
	echo "1..$n"
	[ "$failed" -eq 0 ]
	exit
}

# The layout.
for kind in profiles network fetch seccomp; do
	if ls "$SBX_POLICYDIR/$kind"/*.json >/dev/null 2>&1; then
		ok "catalog: $SBX_POLICYDIR/$kind holds profiles"
	else
		not_ok "catalog: no $SBX_POLICYDIR/$kind/*.json"
	fi
done
if [ -e "$SBX_POLICYDIR/policy" ]; then not_ok "catalog: nested $SBX_POLICYDIR/policy"; else ok "catalog: not nested"; fi
for p in "$SBX_BINDIR/sbx" "$SBX_PKGLIBEXECDIR/sbx-init" "$SBX_PKGLIBEXECDIR/sbx-extract" "$SBX_PKGLIBEXECDIR/sbx-fetch" \
	"$SBX_PKGLIBEXECDIR/sbx-validate" "$SBX_PKGLIBEXECDIR/sbx-template"; do
	if [ -x "$p" ]; then ok "installed: $p"; else not_ok "not installed: $p"; fi
done

for p in ${SBX_INSTALLED:-}; do
	if [ -s "$p" ]; then ok "installed: $p"; else not_ok "not installed: $p"; fi
done
u=${SBX_UNITDIR:-}/sbx@.service
if grep -qx 'Delegate=yes' "$u" 2>/dev/null && ! grep -q '@[a-z]*dir@' "$u"; then
	ok "installed: $u, delegated, paths substituted"
else
	not_ok "$u: missing, not delegated, or with unsubstituted paths"
fi

[ -z "${DESTDIR:-}" ] || skip_rest "installed with DESTDIR: the compiled-in paths do not exist yet"
[ "$(id -u)" -eq 0 ] || skip_rest "needs root (a run needs a delegated cgroup as another user)"
for c in jq openssl python3; do
	command -v "$c" >/dev/null 2>&1 || skip_rest "$c is not installed (tools/install-deps test installs it)"
done
PY=
for p in python3 /usr/bin/python3; do
	"$p" -c 'from jsonschema import Draft202012Validator' 2>/dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || skip_rest "python3-jsonschema is not installed (tools/install-deps test installs it)"

T=$(mktemp -d "${TMPDIR:-/tmp}/sbx-install.XXXXXX") || exit 1
# Whatever happens, no template of this state dir outlives the script.
trap 'sbx template stop --config "$T/config.json" >/dev/null 2>&1; rm -rf "$T"' EXIT
mkdir -p "$T/home" "$T/state" "$T/store/root"
chmod 0700 "$T/state"
cp "$SBX_SRCDIR/examples/sales.csv" "$T/store/root/sales.csv"
printf '{"state_dir":"%s"}\n' "$T/state" > "$T/config.json"
# A clean environment: no SBX_LIBEXECDIR, no --policy, so sbx finds its
# catalog and helpers where the build configured them.
sbx() { env -i PATH=/usr/bin:/bin HOME="$T/home" "$SBX_BINDIR/sbx" "$@"; }

if sbx check --config "$T/config.json" >"$T/check.out" 2>&1; then
	ok "installed sbx check passes"
else
	not_ok "installed sbx check fails"
fi
# make install (or the package's postinst) prepared the shipped profiles.
if grep -q "^prepared *ok: python-analysis: sha256:" "$T/check.out"; then
	ok "python-analysis was prepared on install"
else
	not_ok "python-analysis has no prepared state after install"
fi
if grep -q "^catalog *ok: $SBX_POLICYDIR " "$T/check.out" &&
	grep -q "^sbx-init *ok: $SBX_PKGLIBEXECDIR/sbx-init" "$T/check.out" &&
	grep -q "^validator *ok: $SBX_PKGLIBEXECDIR/sbx-validate" "$T/check.out"; then
	ok "sbx check uses the installed catalog, sbx-init and sbx-validate"
else
	not_ok "sbx check does not use the installed catalog, sbx-init and sbx-validate"
fi
diag "$T/check.out"

sbx keygen -o "$T/key" 2>"$T/keygen.err" || diag "$T/keygen.err"
sbx run --config "$T/config.json" --key "$T/key" --store "$T/store" \
	--artifacts "$T/artifacts" -q "$SBX_SRCDIR/examples/chart-job.json" >"$T/manifest.json" 2>"$T/run.err"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(jq -r .status "$T/manifest.json")" = succeeded ]; then
	ok "the example job runs from the installed prefix"
else
	not_ok "the example job: exit $rc"
	diag "$T/run.err"
	diag "$T/manifest.json"
fi
if [ -s "$T/artifacts/totals.csv" ] && [ -s "$T/artifacts/chart.png" ]; then
	ok "the example job's artifacts are there"
else
	not_ok "the example job's artifacts are missing"
fi
if sbx verify --pubkey "$T/key.pub" --artifacts "$T/artifacts" "$T/manifest.json" >/dev/null 2>"$T/verify.err"; then
	ok "the installed sbx verifies the manifest"
else
	not_ok "sbx verify fails"
	diag "$T/verify.err"
fi
# jq + openssl alone, as sbx(1) shows.
if jq -cjS 'del(.signature)' "$T/manifest.json" >"$T/body" &&
	jq -r .signature.value "$T/manifest.json" | openssl base64 -d -A >"$T/sig" &&
	openssl pkeyutl -verify -pubin -inkey "$T/key.pub" -rawin -in "$T/body" -sigfile "$T/sig" >/dev/null 2>&1; then
	ok "the manifest verifies with jq and openssl"
else
	not_ok "the manifest does not verify with jq and openssl"
fi
# The installed schemas: the example job, the installed catalog and this
# run's manifest match them (tests/schemas.py prints a line per check).
{
	printf 'valid\tjob\t%s\tthe example job\n' "$SBX_SRCDIR/examples/chart-job.json"
	for kind in profiles:profile network:network seccomp:seccomp; do
		for f in "$SBX_POLICYDIR/${kind%%:*}"/*.json; do
			printf 'valid\t%s\t%s\t%s\n' "${kind#*:}" "$f" "$f"
		done
	done
	printf 'manifest\t%s\t%s\tthe example run'"'"'s manifest\n' "$rc" "$T/manifest.json"
} >"$T/schema.batch"
"$PY" "$SBX_SRCDIR/tests/schemas.py" "$SBX_SCHEMADIR" batch <"$T/schema.batch" >"$T/schema.out" 2>&1
while IFS='	' read -r verdict what; do
	if [ "$verdict" = ok ]; then ok "matches $SBX_SCHEMADIR: $what"; else not_ok "$SBX_SCHEMADIR: $what"; fi
done <"$T/schema.out"
grep -q . "$T/schema.out" || not_ok "no schema check ran"
# The example's profile has a template (sbx(1) TEMPLATES): the run ran
# cold and had it started in the background, from the installed sbx and
# sbx-template.  Once the start is over (its lock free), it runs; then
# it is stopped, and it exits.
for l in "$T"/state/templates/*.lock; do
	[ -f "$l" ] && flock -s -w 120 "$l" true
done
sbx template status --config "$T/config.json" --json >"$T/tstatus.json" 2>"$T/tstatus.err"
tpids=$(jq -r '.templates[] | select(.state == "running") | .pid' "$T/tstatus.json" 2>/dev/null)
if [ -n "$tpids" ] && [ "$(jq -r .timing.start "$T/manifest.json")" = cold ]; then
	ok "the example run started its profile's template from the installed prefix"
else
	not_ok "no template runs after the example run ($(jq -r .timing.template_fallback "$T/manifest.json"))"
	diag "$T/tstatus.json"
	diag "$T/tstatus.err"
fi
sbx template stop --config "$T/config.json" >/dev/null 2>&1
left=
for p in $tpids; do
	i=0
	while [ -d "/proc/$p" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -d "/proc/$p" ] && left="$left $p"
done
if [ -z "$left" ]; then ok "sbx template stop: the template exited"; else not_ok "templates still running:$left"; fi
if [ -z "$(ls -A "$T/state/runs" 2>/dev/null)" ]; then ok "no state left"; else not_ok "state left: $(ls "$T/state/runs")"; fi
echo "1..$n"
[ "$failed" -eq 0 ]
