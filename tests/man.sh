#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# man.sh - the installed man pages render without a warning at 80 columns
# (`man --warnings`), name real paths (no @dir@ left), agree on their
# footer, and sbx(1) describes every subcommand of sbx.c's table, has FILES, EXAMPLES and
# ENVIRONMENT (with every variable sbx reads), and documents every
# manifest field.  Without man the test fails: tools/install-deps test
# installs man-db and groff-base.  Prints TAP.
set -u
: "${SBX_BUILDDIR:?}" "${SBX_SRCDIR:?}"
M=$SBX_BUILDDIR/man
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
command -v man >/dev/null 2>&1 || { echo "Bail out! man is not installed (tools/install-deps test installs man-db)"; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/sbx-man.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
# The layout is checked as a distribution installs it (prefix /usr): a
# build for a long prefix, such as make distcheck's, has longer paths in
# FILES and EXAMPLES than any line width can hold.  The pages this build
# installs are checked for substitution and footer.
mkdir -p "$T/std"
for p in sbx.1 sbx-job.5 sbx-policy.5; do
	sed -e 's|@bindir@|/usr/bin|g' -e 's|@sysconfdir@|/etc|g' -e 's|@datadir@|/usr/share|g' \
		-e 's|@pkglibexecdir@|/usr/libexec/sbx|g' -e 's|@localstatedir@|/var|g' \
		-e 's|@docdir@|/usr/share/doc/sbx|g' -e 's|@PACKAGE_VERSION@|0.0|g' \
		"$SBX_SRCDIR/docs/$p" >"$T/std/$p"
done
for p in sbx.1 sbx-job.5 sbx-policy.5; do
	if MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$T/std/$p" >"$T/$p.txt" 2>"$T/$p.warn" &&
		[ ! -s "$T/$p.warn" ] && [ -s "$T/$p.txt" ]; then
		ok "$p: no warnings at 80 columns"
	else
		not_ok "$p: warnings at 80 columns"
		sed 's/^/# /' "$T/$p.warn" | head -n 20
	fi
	if grep -n '@[a-z_]*@\|\$datadir\|\$sysconfdir\|\$libexecdir' "$M/$p" >"$T/left"; then
		not_ok "$p: unsubstituted paths"
		sed 's/^/# /' "$T/left" | head -n 5
	else
		ok "$p: installed paths substituted"
	fi
	# The text is no wider than the terminal.
	w=$(LC_ALL=C.UTF-8 wc -L <"$T/$p.txt")
	if [ "$w" -le 80 ]; then ok "$p: fits 80 columns"
	else not_ok "$p: lines $w columns wide"; fi
done
# One footer for all: date and source (fields 4 and 5 of .TH).
foot() { sed -n 's/^\.TH [^ ]* [0-9] \("[^"]*" "[^"]*"\).*/\1/p' "$M/$1"; }
if [ -n "$(foot sbx.1)" ] && [ "$(foot sbx.1)" = "$(foot sbx-job.5)" ] && [ "$(foot sbx.1)" = "$(foot sbx-policy.5)" ]; then
	ok "footers agree: $(foot sbx.1)"
else
	not_ok "footers disagree: $(foot sbx.1) / $(foot sbx-job.5) / $(foot sbx-policy.5)"
fi

# The text of sbx(1), with words that were hyphenated at a line end joined.
txt=$T/sbx.1.joined
sed -e ':a' -e '/â$/{N;s/â\n *//;ba' -e '}' "$T/sbx.1.txt" >"$txt"
# section TITLE: the rendered text of one section of sbx(1)
section() { awk -v t="$1" '/^[A-Z]/ { on = ($0 == t) } on' "$txt"; }
for s in COMMANDS OPTIONS "EXIT STATUS" ENVIRONMENT FILES EXAMPLES; do
	if [ -n "$(section "$s")" ]; then ok "sbx(1) has $s"; else not_ok "sbx(1) has no $s"; fi
done
# Every subcommand of sbx.c's table.
cmds=$(sed -n '/^static const struct subcommand subcommands\[\]/,/^};/s/^\t{ "\([a-z]*\)", FOR_.*/\1/p' "$SBX_SRCDIR/sbx.c")
[ "$(echo "$cmds" | wc -w)" -ge 11 ] || not_ok "cannot read the subcommand table of sbx.c"
for c in $cmds; do
	if section COMMANDS | grep -q "^ *sbx $c\b"; then ok "sbx(1) describes sbx $c"
	else not_ok "sbx(1) does not describe sbx $c"; fi
done
# Every variable the sources read.
vars=$(find "$SBX_SRCDIR"/src -name '*.c' -exec cat {} + | cat - "$SBX_SRCDIR"/sbx.c | sed -n 's/.*getenv("\([A-Z_]*\)").*/\1/p' | sort -u)
miss=
for v in $vars; do section ENVIRONMENT | grep -q "^ *$v\b" || miss="$miss $v"; done
if [ -n "$vars" ] && [ -z "$miss" ]; then ok "ENVIRONMENT lists every variable sbx reads"
else not_ok "ENVIRONMENT misses:$miss"; fi
# Every manifest field.
miss=
for f in manifest_version sbx_version run_id principal job_sha256 profile network_profile \
	network isolation limits status reason reason_code exit timing usage events stdout stderr artifacts \
	signature peak_memory_bytes output_bytes output_files oom_kills pids_peak pids_limit_hit \
	output_quota_hit formula_cells partial media_type startup_ms wall_ms cpu_user_ms \
	cpu_system_ms landlock_abi no_new_privs key_id excerpt truncated contract failures \
	failure_count prepared_sha256 stdin excerpt_truncated complete start template_fallback; do
	section "THE MANIFEST" | grep -q "\b$f\b" || miss="$miss $f"
done
if [ -z "$miss" ]; then ok "THE MANIFEST documents every field"; else not_ok "THE MANIFEST misses:$miss"; fi
echo "1..$n"
[ "$failed" -eq 0 ]
