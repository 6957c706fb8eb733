#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# install-deps.sh - the quick start's first command stays lean and the
# test suite still gets everything it needs: tools/deps/example.list (what
# `tools/install-deps` installs) holds what building sbx and running the
# example job need and none of the test tool chain; tools/deps/test.list
# (what tools/test installs itself) holds every package whose tools the
# suite calls, unless example.list or a minimal Debian (Priority:
# required, Essential, apt) has it already; configure's libraries come
# from example.list; tools/test, .ci/run and the README use the two lists
# that way; and tools/install-deps asks apt nothing when every package is
# there, and exactly the missing ones otherwise.  Reads dpkg's database:
# a tool that is not installed is a failure (tools/test installs them).
# Needs no root.  Prints TAP.
set -u
: "${SBX_SRCDIR:?}"
S=$SBX_SRCDIR
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
diag() { printf '%s\n' "$*" | head -c 2000 | sed 's/^/# /'; }
T=$(mktemp -d "${TMPDIR:-/tmp}/sbx-install-deps.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
# The system's tools, as the e2e tests see them (env -i PATH=/usr/bin:/bin),
# not a python3 of the caller's own PATH.
SYSPATH=/usr/sbin:/usr/bin:/sbin:/bin

# A list's packages, one a line: the first word of each line, comments out.
pkgs() { [ -f "$1" ] && sed -e 's/#.*//' "$1" | awk 'NF { print $1 }'; }
EX=$S/tools/deps/example.list TE=$S/tools/deps/test.list
pkgs "$EX" | sort >"$T/example" 2>/dev/null
pkgs "$TE" | sort >"$T/test" 2>/dev/null
# What each list installs: its packages and everything they depend on
# (apt's view; alternatives count as installed, an approximation from
# above), test.list's with example.list's, as tools/test installs both.
closure() {
	# shellcheck disable=SC2046 # one word a package
	apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
		--no-replaces --no-enhances $(cat "$@") 2>/dev/null | grep -v '^[ <]' | sort -u
}
closure "$T/example" >"$T/example.all"
closure "$T/example" "$T/test" >"$T/test.all"
if [ -s "$T/example" ] && [ -s "$T/test" ]; then
	ok "tools/deps/example.list ($(wc -l <"$T/example") packages) and test.list ($(wc -l <"$T/test")) exist"
else
	not_ok "tools/deps/example.list and tools/deps/test.list: missing or empty"
fi
bad=$(cat "$T/example" "$T/test" | grep -Ev '^[a-z0-9][a-z0-9+.-]+$')
dup=$(cat "$T/example" "$T/test" | sort | uniq -d)
if [ -z "$bad$dup" ]; then ok "every line names one package, and no package is in both lists"
else not_ok "bad names or packages listed twice: $bad $dup"; fi

# --- the first command is lean ---------------------------------------------
# The test tool chain: none of it may come back into the first command.
for p in qemu-system-x86 busybox-static podman crun mmdebstrap slurmd slurmctld slurm-client munge \
	lintian debhelper fakeroot libpython3.11-testsuite clang libcmocka-dev strace bubblewrap \
	hyperfine parallel nodejs npm jq openssl python3-jsonschema python3-html5lib zsh fish \
	man-db apparmor build-essential; do
	if grep -qx "$p" "$T/example"; then echo "$p"; fi
done >"$T/heavy"
if [ ! -s "$T/heavy" ] && [ -s "$T/example" ]; then
	ok "example.list has none of the test tool chain (qemu, podman, Slurm, lintian, CPython's tests, clang, cmocka, ...)"
else
	not_ok "example.list installs test-only packages: $(echo $(cat "$T/heavy"))"
fi

# pkg_of FILE: the installed package that ships FILE (merged /usr or not).
pkg_of() {
	local f=$1 c r
	for c in "$f" "$(readlink -f "$f")"; do
		[ -n "$c" ] || continue
		for v in "$c" "${c#/usr}" "/usr$c"; do
			r=$(dpkg-query -S "$v" 2>/dev/null | grep -v '^diversion' | head -n1 | cut -d: -f1)
			[ -n "$r" ] && { echo "${r%%,*}"; return 0; }
		done
	done
	return 1
}
# minimal PKG: part of a minimal Debian (debootstrap --variant=minbase).
minimal() {
	case $(dpkg-query -W -f='${Priority} ${Essential}' "$1" 2>/dev/null) in
	required* | *yes) return 0 ;;
	esac
	[ "$1" = apt ]
}
# covered WHAT FILE LIST...: FILE's package is installed by one of the
# lists (it or a package of the list depending on it) or minimal; says
# which, for the diagnostics.
covered() {
	local what=$1 f=$2 p l
	shift 2
	p=$(pkg_of "$f") || { echo "$what: $f belongs to no installed package"; return 1; }
	for l in "$@"; do [ "$l" = minimal ] || ! grep -qx "$p" "$T/$l.all" || return 0; done
	case " $* " in *" minimal "*) minimal "$p" && return 0 ;; esac
	echo "$what: its package $p is in none of: $*"
	return 1
}

# configure's required libraries come from example.list; the optional
# one (cmocka, the unit tests) from test.list.
sed -n 's/^PKG_CHECK_MODULES(\[[A-Z0-9]*\], \[\([^]]*\)\])$/\1/p' "$S/configure.ac" |
	tr ' ' '\n' | grep -E '^[a-z]' >"$T/modules"
: >"$T/why"
while read -r m; do
	d=$(PATH=$SYSPATH pkg-config --variable=pcfiledir "$m" 2>/dev/null)
	[ -n "$d" ] || { echo "pkg-config $m: not installed" >>"$T/why"; continue; }
	covered "configure's $m" "$d/$m.pc" example >>"$T/why"
done <"$T/modules"
if [ "$(wc -l <"$T/modules")" -ge 8 ] && [ ! -s "$T/why" ]; then
	ok "example.list has the -dev package of each of the $(wc -l <"$T/modules") libraries configure requires"
else
	not_ok "configure's libraries and example.list differ"; diag "$(cat "$T/why")"
fi
d=$(PATH=$SYSPATH pkg-config --variable=pcfiledir cmocka 2>/dev/null)
if [ -n "$d" ] && covered "cmocka" "$d/cmocka.pc" test >"$T/why"; then ok "test.list has cmocka (the unit tests)"
else not_ok "cmocka: not installed or not in test.list"; diag "$(cat "$T/why")"; fi

# The python modules: the example's from example.list, the tests' from
# test.list.
pymod() { # MODULE LIST...
	local m=$1 f
	shift
	f=$(/usr/bin/python3 -c "import importlib.util as u, sys; print(u.find_spec(sys.argv[1]).origin)" "$m" 2>/dev/null)
	[ -n "$f" ] || { echo "python3 module $m: not installed"; return 1; }
	covered "python3 module $m" "$f" "$@"
}
: >"$T/why"
for m in numpy pandas matplotlib; do pymod "$m" example >>"$T/why"; done
if [ ! -s "$T/why" ]; then ok "example.list has python-analysis's numpy, pandas and matplotlib"
else not_ok "python-analysis's modules"; diag "$(cat "$T/why")"; fi
: >"$T/why"
for m in jsonschema html5lib test.support test.test_grammar; do pymod "$m" test example minimal >>"$T/why"; done
if [ ! -s "$T/why" ]; then ok "test.list has the tests' python modules (jsonschema, html5lib, CPython's regression tests)"
else not_ok "the tests' python modules"; diag "$(cat "$T/why")"; fi
: >"$T/why"
# What the agent scripts of tests/e2e/agents.sh import inside python-analysis.
for m in seaborn sympy networkx docx openpyxl xlsxwriter PIL statsmodels; do pymod "$m" test example >>"$T/why"; done
if [ ! -s "$T/why" ]; then ok "test.list has the agent scripts' python modules (seaborn, sympy, networkx, docx, ...)"
else not_ok "the agent scripts' python modules"; diag "$(cat "$T/why")"; fi

# --- the suite's tools come from test.list -----------------------------------
# Every tool an e2e test needs (its `need` line), every tool the VM suite,
# tests/deploy.sh and tests/install.sh look for, and the ones other tests
# and tools/test call outright.
{
	sed -n 's/^need //p' "$S"/tests/e2e/*.sh "$S/tests/readme.sh"
	sed -n 's/^[[:space:]]*for [ct] in \([a-z0-9_ .-]*\); do$/\1/p' \
		"$S/tests/vm/vm.sh" "$S/tests/deploy.sh" "$S/tests/install.sh"
	echo qemu-system-x86_64 busybox podman crun catatonit newuidmap fuse-overlayfs mmdebstrap \
		slurmctld slurmd munged lintian dpkg-buildpackage fakeroot dh clang strace \
		script man groff apparmor_parser bash fish zsh bwrap hyperfine parallel node npm jq \
		openssl python3 curl ip pgrep /usr/bin/time zstd xz bzip2 runuser useradd setpriv flock
} | tr ' ' '\n' | grep . | sort -u >"$T/tools"
: >"$T/why"
while read -r t; do
	f=$(PATH=$SYSPATH command -v "$t" 2>/dev/null)
	# catatonit is podman's init, outside PATH.
	[ -n "$f" ] || [ "$t" != catatonit ] || f=/usr/libexec/podman/catatonit
	[ -n "$f" ] && [ -e "$f" ] || { echo "$t: not installed (tools/test installs it)" >>"$T/why"; continue; }
	case $f in /*) ;; *) continue ;; esac # a shell builtin: nothing to install
	covered "$t" "$f" test example minimal >>"$T/why"
done <"$T/tools"
if [ "$(wc -l <"$T/tools")" -ge 40 ] && [ ! -s "$T/why" ]; then
	ok "each of the $(wc -l <"$T/tools") tools the suite calls is in test.list, example.list or a minimal Debian"
else
	not_ok "tools the suite calls that no list installs"; diag "$(cat "$T/why")"
fi

# --- who installs what ---------------------------------------------------------
if grep -Eq '^"?\$top"?/tools/install-deps test|^tools/install-deps test' "$S/tools/test"; then
	ok "tools/test installs test.list itself"
else not_ok "tools/test does not run tools/install-deps test"; fi
if [ "$(grep -Ev '^(#|$|set |cd |SBX_TEST_DEB=1 exec tools/test$|tools/install-deps$)' "$S/.ci/run")" = "" ] &&
	grep -qx 'tools/install-deps' "$S/.ci/run" && grep -qx 'SBX_TEST_DEB=1 exec tools/test' "$S/.ci/run"; then
	ok ".ci/run is the README's two commands: tools/install-deps, then tools/test"
else not_ok ".ci/run does more than tools/install-deps and tools/test"; diag "$(cat "$S/.ci/run")"; fi
if grep -qx 'tools/install-deps && tools/example' "$S/README.md" && grep -qx 'tools/test' "$S/README.md"; then
	ok "README: the quick start is tools/install-deps && tools/example, then tools/test"
else not_ok "README: the quick start's commands changed"; fi
# The README states both sizes ("N MB to download, M MB installed").
if [ "$(tr '\n' ' ' <"$S/README.md" | grep -Eo '[0-9]+ MB to download, [0-9]+ MB installed' | wc -l)" -ge 2 ]; then
	ok "README states both install sizes"
else not_ok "README does not state the two install sizes"; fi

# --- tools/install-deps asks apt only for what is missing ------------------------
# A copy of the tools, with apt-get and sudo that only record their
# arguments: the real ones are never called.
mkdir -p "$T/tree/tools/deps" "$T/bin"
cp "$S/tools/install-deps" "$T/tree/tools/" 2>/dev/null
for c in apt-get sudo; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n[ %s = apt-get ] || exec "$@"\n' "$c" "$T" "$c" >"$T/bin/$c"
	chmod +x "$T/bin/$c"
done
# Every package of both lists is installed here (tools/test saw to it).
cp "$EX" "$TE" "$T/tree/tools/deps/" 2>/dev/null
start=$(date +%s%N)
PATH=$T/bin:$PATH sh "$T/tree/tools/install-deps" test >"$T/out" 2>&1 &&
	PATH=$T/bin:$PATH sh "$T/tree/tools/install-deps" >>"$T/out" 2>&1
rc=$? ms=$((($(date +%s%N) - start) / 1000000))
if [ "$rc" -eq 0 ] && [ ! -e "$T/calls" ] && [ "$ms" -lt 30000 ]; then
	ok "all installed: both lists ask apt nothing ($ms ms)"
else
	not_ok "all installed: exit $rc, $ms ms, apt called: $(cat "$T/calls" 2>/dev/null)"; diag "$(cat "$T/out")"
fi
# A missing package in each list: `test` asks for both lists' missing
# ones, the quick start's only for example.list's.
printf 'coreutils\nsbx-no-such-package-e\n' >"$T/tree/tools/deps/example.list"
printf 'coreutils\nsbx-no-such-package-a # why\nsbx-no-such-package-b if-missing sh\nsbx-no-such-package-c if-missing sbx-no-such-command\n' \
	>"$T/tree/tools/deps/test.list"
rm -f "$T/calls"
PATH=$T/bin:$PATH sh "$T/tree/tools/install-deps" test >"$T/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ "$(grep "^apt-get " "$T/calls" 2>/dev/null)" = "apt-get update -qq
apt-get install -y -qq --no-install-recommends sbx-no-such-package-e sbx-no-such-package-a sbx-no-such-package-c" ]; then
	ok "missing packages, test: apt-get update, then exactly the missing ones of both lists (an if-missing one only without its command)"
else
	not_ok "missing packages, test: exit $rc"; diag "$(cat "$T/calls" "$T/out" 2>/dev/null)"
fi
rm -f "$T/calls"
PATH=$T/bin:$PATH sh "$T/tree/tools/install-deps" >"$T/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ "$(grep "^apt-get " "$T/calls" 2>/dev/null)" = "apt-get update -qq
apt-get install -y -qq --no-install-recommends sbx-no-such-package-e" ]; then
	ok "missing packages, the quick start: only example.list's"
else
	not_ok "missing packages, the quick start: exit $rc"; diag "$(cat "$T/calls" "$T/out" 2>/dev/null)"
fi
PATH=$T/bin:$PATH sh "$T/tree/tools/install-deps" tests >"$T/out" 2>&1
rc=$?
if [ "$rc" -eq 64 ] && [ "$(wc -l <"$T/out")" -eq 2 ] && grep -q "^tools/install-deps: unknown list 'tests' (expected example or test)$" "$T/out" &&
	grep -q '^Hint: ' "$T/out"; then
	ok "an unknown list: 64, one line and a Hint"
else not_ok "an unknown list: exit $rc"; diag "$(cat "$T/out")"; fi

echo "1..$n"
[ "$failed" -eq 0 ]
