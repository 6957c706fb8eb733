#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# layout.sh - the build refuses what crosses a trust boundary
# (docs/design.md, the top of Makefile.am): each part of src/ is compiled
# with the include paths of the parts it may use and no other, and each
# program links only the libraries it may use.  This test tries the
# forbidden things with the very flags the build uses (SBX_INC_<PART> from
# the Makefile) and expects each to fail, and the allowed ones to work, so
# that a Makefile change that opens a boundary fails here.  TAP.
set -u
B=${SBX_BUILDDIR:?}
CC=${CC:-cc}
T=$(mktemp -d /tmp/sbx-test-layout.XXXXXX) || exit 99
trap 'rm -rf "$T"' EXIT
n=0 fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n - $1"; }

# flags PART: that part's include flags, as the Makefile passes them.
flags() { eval "printf '%s' \"\${SBX_INC_$1:?SBX_INC_$1 is not set}\""; }

# compiles PART HEADER: does a file of PART that includes HEADER compile?
compiles() {
	printf '#include "config.h"\n#include "%s"\nint sbx_layout_probe;\n' "$2" > "$T/probe.c"
	# shellcheck disable=SC2046
	$CC -fsyntax-only -I"$B" $(flags "$1") $SBX_CFLAGS_EXTRA "$T/probe.c" 2>"$T/err"
}

refused() { # PART HEADER...
	part=$1
	shift
	for h in "$@"; do
		if compiles "$part" "$h"; then
			not_ok "$part: #include \"$h\" compiles, and must not"
		elif grep -q "$h: No such file" "$T/err"; then
			ok "$part: #include \"$h\" is refused (not on its include path)"
		else
			not_ok "$part: #include \"$h\" failed for another reason: $(head -1 "$T/err")"
		fi
	done
}

allowed() { # PART HEADER...
	part=$1
	shift
	for h in "$@"; do
		if compiles "$part" "$h"; then ok "$part: #include \"$h\" compiles"
		else not_ok "$part: #include \"$h\" does not compile: $(head -1 "$T/err")"; fi
	done
}

# What each part must not see: the broker's headers above all, and the
# libraries it has no business with.
refused INIT run.h state.h cli.h sandbox.h catalog.h job.h proxy.h sign.h digest.h collect.h \
	validate.h cgroup.h sbx-archive.h
# The template (sbx-template) sees the init and src/common: nothing of the
# broker's, no catalog or job parser, no key, no crypto.
refused TEMPLATE run.h state.h cli.h sandbox.h catalog.h job.h proxy.h sign.h digest.h \
	collect.h validate.h cgroup.h sbx-archive.h hostconfig.h canonjson.h
refused EXTRACT run.h store.h state.h sandbox.h catalog.h sign.h digest.h collect.h proxy.h
refused COMMON catalog.h job.h sandbox.h cgroup.h run.h sign.h proxy.h collect.h
refused POLICY sandbox.h cgroup.h proxy.h run.h state.h sign.h digest.h collect.h
refused CRYPTO run.h catalog.h sandbox.h collect.h
refused OUTPUTS run.h sign.h digest.h catalog.h sandbox.h proxy.h
refused NET run.h state.h sandbox.h sign.h collect.h
refused SANDBOX run.h state.h cli.h sign.h proxy.h collect.h
# The parsers of the payload's output bytes are the validator's alone, and
# the validator sees nothing of the broker's.
refused BROKER validate.h contract-check.h serve.h
refused VALIDATE run.h state.h hold.h sign.h digest.h catalog.h sandbox.h proxy.h cgroup.h \
	store.h validation.h
allowed VALIDATE validate.h contract-check.h serve.h verdict.h contract.h jschema.h
allowed INIT spec.h util.h syscalls.h error.h init.h
allowed TEMPLATE template.h template-proto.h init.h init-internal.h spec.h util.h syscalls.h
allowed EXTRACT sbx-archive.h util.h syscalls.h
# sbx-fetch: the netcheck rules and the catalog's types, nothing of the
# broker, the sandbox or the key.
refused FETCH run.h store.h state.h sandbox.h sign.h digest.h collect.h proxy.h cgroup.h \
	helper.h sbx-archive.h validate.h
allowed FETCH fetch.h netcheck.h catalog.h util.h syscalls.h reasoncode.h
allowed POLICY catalog.h json.h util.h
allowed SANDBOX sandbox.h catalog.h spec.h
allowed BROKER run.h sandbox.h proxy.h collect.h sign.h sbx-archive.h verdict.h contract.h

# Linking: a program linked as sbx-init is (src/common alone) cannot call
# into the broker, and can call into src/common.
cat > "$T/calls.c" <<'EOF'
#include <stddef.h>
int sbx_cmd_gc(const void *o);
char *sbx_xasprintf(const char *fmt, ...);
int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 99)
		return sbx_cmd_gc(NULL);
	return sbx_xasprintf("%d", argc) == NULL;
}
EOF
if $CC -o "$T/calls" "$T/calls.c" "$B/libsbx-common.a" 2>"$T/err"; then
	not_ok "a call into the broker links against src/common alone"
elif grep -q "undefined reference to .sbx_cmd_gc" "$T/err"; then
	ok "a call into the broker does not link against src/common alone"
else
	not_ok "the link failed for another reason: $(head -1 "$T/err")"
fi
sed -i 's/return sbx_cmd_gc(NULL);/return 2;/' "$T/calls.c"
if $CC -o "$T/calls" "$T/calls.c" "$B/libsbx-common.a" 2>"$T/err"; then
	ok "a call into src/common links against it"
else
	not_ok "a call into src/common does not link: $(head -1 "$T/err")"
fi

# And the programs as built.  sbx, which holds the signing key, has no
# parser of output bytes: no validator, no contract or schema check, no
# pattern matching, and neither expat nor gumbo.
if [ ! -x "$B/sbx" ]; then
	not_ok "sbx is not built"
else
	bad=$(nm "$B/sbx" 2>/dev/null | awk '$2 ~ /^[TtDdBbRrUu]$/ { print $NF }' |
		grep -E '^(sbx_media_(validate|detect|reader_|zip_tail|sigscan|utf8|text_|csv_|active|controls|sniffs|ascii)|sbx_media_[a-z]+_validate|sbx_contract_check|sbx_contracts_check|sbx_contract_fail|sbx_contract_parse_(integer|number)|sbx_jschema_validate|sbx_regex_match|pcre2_match|sbx_validator_|XML_|gumbo_)' |
		head -3 | tr '\n' ' ')
	if [ -z "$bad" ]; then ok "sbx holds no parser of output bytes"
	else not_ok "sbx holds parsers of output bytes: $bad"; fi
	# The check above must be able to fail: the validator does hold them.
	if nm "$B/sbx-validate" 2>/dev/null | grep -qE ' T sbx_media_svg_validate$'; then
		ok "the same check finds the validators in sbx-validate"
	else
		not_ok "sbx-validate does not hold sbx_media_svg_validate: the check proves nothing"
	fi
fi

# libcurl is the fetcher's alone: sbx, which holds the key, never loads it
# (and the check can fail: sbx-fetch does).
needs_curl() { objdump -p "$1" 2>/dev/null | grep -q 'NEEDED.*libcurl'; }
if [ -x "$B/sbx" ] && [ -x "$B/sbx-fetch" ] && ! needs_curl "$B/sbx" && needs_curl "$B/sbx-fetch"; then
	ok "sbx does not load libcurl; sbx-fetch does"
else
	not_ok "sbx loads libcurl, or sbx-fetch does not (or one is not built)"
fi

# Nothing of the broker's libraries in the init or the helpers.
for p in sbx-init sbx-template sbx-extract sbx-validate sbx-fetch; do
	if [ ! -x "$B/$p" ]; then
		not_ok "$p is not built"
		continue
	fi
	bad=$(nm "$B/$p" 2>/dev/null | awk '$2 ~ /^[TtDdBbRr]$/ { print $3 }' |
		grep -E '^sbx_(catalog|job|hostconfig|policy|spawn|cgroup|seccomp|proxy|collect|validate|sign|sha256|manifest|state|admission|store|cmd|validation|helper)_' |
		head -3 | tr '\n' ' ')
	if [ -z "$bad" ]; then ok "$p holds no code of the broker's libraries"
	else not_ok "$p holds broker code: $bad"; fi
done

# sbx-template embeds an interpreter that runs the profile's imports: it
# links no crypto (no key could be used there) and no JSON parser.
if [ -x "$B/sbx-template" ]; then
	libs=$(readelf -d "$B/sbx-template" 2>/dev/null | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
	bad=$(echo "$libs" | grep -E '^lib(nettle|hogweed|gmp|crypto|ssl|jansson|archive|pcre2|seccomp)' |
		tr '\n' ' ')
	if [ -z "$bad" ]; then ok "sbx-template links no crypto, JSON, archive or pattern library"
	else not_ok "sbx-template links $bad"; fi
	# The check above must be able to fail: sbx links nettle and jansson.
	if readelf -d "$B/sbx" 2>/dev/null | grep -qE 'Shared library: \[lib(nettle|jansson)'; then
		ok "the same check finds nettle or jansson in sbx"
	else
		not_ok "sbx links neither nettle nor jansson: the check proves nothing"
	fi
	if echo "$libs" | grep -q '^libpython3'; then ok "sbx-template embeds libpython3"
	else not_ok "sbx-template does not link libpython3: $libs"; fi
else
	not_ok "sbx-template is not built"
fi

echo "1..$n"
exit $fail
