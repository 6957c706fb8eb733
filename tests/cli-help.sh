#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cli-help.sh - what sbx says before it runs anything agrees with what it
# does: `sbx --help` lists every subcommand of sbx.c's table and no other,
# each has its own --help and a SYNOPSIS line in sbx(1), a misspelt
# profile or network name gets a "did you mean" (also for the first word
# of a name, "pyhton" for "python-analysis"), and `sbx cancel` of an
# unknown or malformed run id says where to look (a Hint).  Needs no root
# and runs nothing in a sandbox.  Prints TAP.
set -u
: "${SBX_BUILDDIR:?}" "${SBX_SRCDIR:?}"
SBX=$SBX_BUILDDIR/sbx
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
diag() { printf '%s\n' "$*" | head -c 2000 | sed 's/^/# /'; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else not_ok "$what"; fi; }

T=$(mktemp -d "${TMPDIR:-/tmp}/sbx-cli-help.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
mkdir -m 0700 "$T/state"
printf '{"state_dir": "%s"}\n' "$T/state" >"$T/config.json"
G=(--config "$T/config.json" --policy "$SBX_SRCDIR/policy")
sbx() { env -i PATH=/usr/bin:/bin HOME="$T" "$SBX" "$@" >"$T/out" 2>"$T/err"; RC=$?; }

# --- sbx --help and the subcommand table ------------------------------------
# The table's names, from the source: `{ "NAME", FOR_...` lines of
# subcommands[].
sed -n '/^static const struct subcommand subcommands\[\]/,/^};/s/^\t{ "\([a-z]*\)", FOR_.*/\1/p' \
	"$SBX_SRCDIR/sbx.c" | sort -u >"$T/table"
sbx --help
sed -n 's/^  \([a-z][a-z]*\)\( .*\)\{0,1\}$/\1/p' "$T/out" | sort -u >"$T/help"
if [ "$RC" -eq 0 ] && [ "$(wc -l <"$T/table")" -ge 11 ] && cmp -s "$T/table" "$T/help"; then
	ok "sbx --help lists the $(wc -l <"$T/table") subcommands of sbx.c's table, and no other"
else
	not_ok "sbx --help and sbx.c's table differ (exit $RC)"
	diag "$(diff "$T/table" "$T/help")"
fi
check "sbx --help lists ps" grep -q '^  ps  ' "$T/out"
while read -r c; do
	sbx "$c" --help
	if [ "$RC" -eq 0 ] && grep -q "^Usage: sbx $c" "$T/out"; then ok "sbx $c --help: its usage"
	else not_ok "sbx $c --help: exit $RC"; diag "$(head -c 300 "$T/out" "$T/err")"; fi
	if grep -q "^\.B sbx $c\( \|\$\)" "$SBX_SRCDIR/docs/sbx.1"; then ok "sbx(1): sbx $c in its SYNOPSIS"
	else not_ok "sbx(1): no sbx $c in its SYNOPSIS"; fi
done <"$T/table"

# --- did you mean: profile and network names ---------------------------------
# --dry-run admits the job as a run would, and runs nothing.
sbx run "${G[@]}" --dry-run -p pyhton -c 'print(1)'
if [ "$RC" -eq 77 ] && grep -q 'runtime_profile: no runtime profile "pyhton" in the catalog; did you mean "python-analysis"?' "$T/err"; then
	ok "-p pyhton: 77, did you mean \"python-analysis\""
else
	not_ok "-p pyhton: exit $RC"; diag "$(cat "$T/err")"
fi
sbx run "${G[@]}" --dry-run -p python -c 'print(1)'
check "-p python: did you mean \"python-analysis\"" grep -q 'did you mean "python-analysis"?' "$T/err"
sbx run "${G[@]}" --dry-run -p shell -n egres -c true
if [ "$RC" -eq 77 ] && grep -q 'network_profile: no network profile "egres" in the catalog; did you mean "egress-example"?' "$T/err"; then
	ok "-n egres: 77, did you mean \"egress-example\""
else
	not_ok "-n egres: exit $RC"; diag "$(cat "$T/err")"
fi
sbx run "${G[@]}" --dry-run -p ruby -c true
check "-p ruby: no suggestion (nothing near)" eval '[ "$RC" -eq 77 ] && ! grep -q "did you mean" "$T/err"'

# --- sbx cancel: an id that is no live run -------------------------------------
sbx cancel "${G[@]}" 0123456789abcdef0123456789abcdef
if [ "$RC" -eq 1 ] && grep -q '^sbx: cancel: 0123456789abcdef0123456789abcdef: no such live run$' "$T/err" &&
	grep -q "^sbx: Hint: 'sbx ps' lists the live runs you may cancel" "$T/err"; then
	ok "sbx cancel of an unknown run id: 1, with a Hint naming sbx ps"
else
	not_ok "sbx cancel of an unknown run id: exit $RC"; diag "$(cat "$T/err")"
fi
sbx cancel "${G[@]}" RUN-1
if [ "$RC" -eq 64 ] && grep -q '^sbx: Hint: a run id is the run_id of a run.s manifest' "$T/err"; then
	ok "sbx cancel of a malformed run id: 64, with a Hint"
else
	not_ok "sbx cancel of a malformed run id: exit $RC"; diag "$(cat "$T/err")"
fi
check "sbx cancel: every line starts sbx:" eval '! grep -qv "^sbx: " "$T/err"'

# --- the README names only files of the repository ------------------------------
# Each path it names in backquotes (docs/..., examples/..., ...) or links
# to exists in the source tree, or is built from FILE.in; none leads out
# of it ("../").
R=$SBX_SRCDIR/README.md
{
	grep -oE '`(\.\./|docs/|examples/|deploy/|policy/|schema/|tools/|src/|tests/|completions/|data/|debian/|\.ci/)[^` ]*`' "$R" | tr -d '`'
	grep -oE '\]\([^)#]*' "$R" | sed 's/^](//' | grep -v '^[a-z]*:'
} | sort -u >"$T/paths"
: >"$T/bad"
while IFS= read -r f; do
	case $f in
		../* | /*) echo "$f (outside the repository)" >>"$T/bad"; continue ;;
	esac
	( cd "$SBX_SRCDIR" && { [ -e "$f" ] || [ -e "$f.in" ] || compgen -G "$f" >/dev/null; } ) ||
		echo "$f (no such file)" >>"$T/bad"
done <"$T/paths"
if [ -s "$T/paths" ] && [ ! -s "$T/bad" ]; then
	ok "README.md: the $(wc -l <"$T/paths") paths it names are files of the repository"
else
	not_ok "README.md names paths that are not in the repository"; diag "$(cat "$T/bad")"
fi
check "README.md: no ../ path, no SPEC.md" eval '! grep -n "\.\./shared\|SPEC\.md" "$R" >&2'

echo "1..$n"
[ "$failed" -eq 0 ]
