#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# apparmor.sh - the AppArmor profile for sbx parses (apparmor_parser -Q,
# which compiles without loading), names the installed sbx, and allows
# user namespaces.  The userns rule needs AppArmor 4.0: with an older
# parser (Debian 12 has 3.0) the rest of the profile is checked with that
# rule left out, and the full profile must fail on that rule's line
# alone; nothing is reported as a TODO.  Without apparmor_parser the test
# fails (tools/install-deps test installs apparmor).  Prints TAP.
set -u
: "${SBX_BUILDDIR:?}"
P=$SBX_BUILDDIR/data/apparmor/sbx
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
command -v apparmor_parser >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
command -v apparmor_parser >/dev/null 2>&1 ||
	{ echo "Bail out! apparmor_parser is not installed (tools/install-deps test installs apparmor)"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/sbx-apparmor.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

bindir=$(sed -n 's|^profile sbx \(/[^ ]*\)/sbx .*|\1|p' "$P")
if [ -n "$bindir" ] && ! grep -q '@[a-z]*@' "$P"; then ok "profile attaches to $bindir/sbx"
else not_ok "profile does not name the installed sbx"; fi
if grep -qx '  userns,' "$P"; then ok "profile allows user namespaces"; else not_ok "no userns rule"; fi
# The validator makes its own user namespace (src/helpers/validate).
if sed -n '/^profile sbx-validate \/[^ ]*\/sbx-validate /,/^}/p' "$P" | grep -qx '  userns,'; then
	ok "sbx-validate's profile allows user namespaces"
else
	not_ok "no profile with a userns rule for sbx-validate"
fi

v=$(apparmor_parser --version 2>/dev/null | sed -n '1s/.* \([0-9][0-9.]*\)$/\1/p')
abi=/etc/apparmor.d/abi/4.0
if [ -e "$abi" ]; then
	if apparmor_parser -Q -K "$P" >"$T/out" 2>&1; then ok "apparmor_parser $v -Q accepts the profile"
	else not_ok "apparmor_parser $v -Q rejects the profile"; sed 's/^/# /' "$T/out"; fi
else
	sed -e 's|<abi/4.0>|<abi/3.0>|' -e '/^  userns,$/d' "$P" >"$T/sbx-3.0"
	if apparmor_parser -Q -K "$T/sbx-3.0" >"$T/out" 2>&1; then
		ok "apparmor_parser $v -Q accepts the profile without the userns rule"
	else
		not_ok "apparmor_parser $v -Q rejects the profile"; sed 's/^/# /' "$T/out"
	fi
	# The userns rule itself: this parser predates it, so what can be
	# checked is that it is the one thing refused - the error is at the
	# rule's own line and nowhere else.  AppArmor 4.0 checks it whole.
	sed -e 's|<abi/4.0>|<abi/3.0>|' "$P" >"$T/sbx-userns"
	line=$(grep -nx '  userns,' "$T/sbx-userns" | head -n 1 | cut -d: -f1)
	if ! apparmor_parser -Q -K "$T/sbx-userns" >"$T/out" 2>&1 &&
	   grep -q "at line $line:" "$T/out" && [ "$(grep -c 'parser error' "$T/out")" -eq 1 ]; then
		ok "apparmor_parser $v refuses only the userns rule (line $line), which needs AppArmor 4.0"
	else
		not_ok "apparmor_parser $v: the userns rule is not the only problem"; sed 's/^/# /' "$T/out"
	fi
fi
echo "1..$n"
[ "$failed" -eq 0 ]
