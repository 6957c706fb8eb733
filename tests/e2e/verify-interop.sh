#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# verify-interop.sh - a signed manifest verifies WITHOUT sbx, with jq and
# openssl as SPEC §7 promises, and `sbx verify` accepts exactly what it
# should: a tampered value, a tampered or symlinked artifact, a foreign key,
# a duplicated member, a manifest that is not byte for byte the canonical
# line (pretty-printed, escaped differently) and files in --artifacts DIR
# that the manifest does not list are all rejected with exit 1.
#
# The manifest is signed by tests/unit/crypto/sign-tool, which calls the same
# sbx_manifest_finish() as `sbx run`.  jq and openssl are required: this
# test fails, never skips, without them, since the promise is about them.
set -u

: "${SBX_BUILDDIR:?SBX_BUILDDIR must name the build directory}"
SBX="$SBX_BUILDDIR/sbx"
SIGN="$SBX_BUILDDIR/tests/unit/crypto/sign-tool"

echo "1..47"
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
fails() { if "$@"; then return 1; else return 0; fi; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sbx-verify-interop.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
# Keep the caller's configuration and keys out of this test.
unset SBX_CONFIG
export XDG_CONFIG_HOME="$tmp/xdg"
export HOME="$tmp/home"

# CODE CMD...: CMD exits with CODE; its stderr is kept in $tmp/err.
exits() {
	want=$1
	shift
	"$@" > "$tmp/out" 2> "$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] && return 0
	echo "# exit $got, expected $want: $*"
	sed 's/^/# /' "$tmp/err"
	return 1
}

# How a user checks a manifest without sbx: jq rebuilds the signed bytes,
# openssl checks the Ed25519 signature over them.
jq_openssl_verify() { # MANIFEST PUBKEY
	test -s "$1" && jq -cjS 'del(.signature)' "$1" > "$tmp/body" &&
		jq -rj .signature.value "$1" | openssl base64 -d -A > "$tmp/sig.bin" &&
		openssl pkeyutl -verify -rawin -pubin -inkey "$2" -in "$tmp/body" \
			-sigfile "$tmp/sig.bin" > /dev/null 2>&1
}

# The signed line is jq's canonical rendering of itself.
jq_reproduces() { # MANIFEST
	test -s "$1" && jq -cjS . "$1" > "$tmp/jq" && head -c -1 "$1" > "$tmp/line" && cmp -s "$tmp/jq" "$tmp/line"
}

# 1-2
check "jq is installed" eval "command -v jq > /dev/null"
check "openssl is installed" eval "command -v openssl > /dev/null"

# 3-5: keygen
check "sbx keygen -o writes a key" exits 0 "$SBX" keygen -o "$tmp/k"
check "private key 0600, public key 0644" \
	test "$(stat -c %a "$tmp/k" "$tmp/k.pub" | tr '\n' ' ')" = "600 644 "
cp "$tmp/k" "$tmp/k.before"
check "sbx keygen refuses to overwrite (exit 1, key unchanged)" \
	eval 'exits 1 "$SBX" keygen -o "$tmp/k" && cmp -s "$tmp/k" "$tmp/k.before"'

# A manifest-like object whose promoted artifacts exist under $tmp/art.
mkdir -p "$tmp/art/out/sub"
printf 'a,b\n1,2\n' > "$tmp/art/out/a.csv"
printf 'hello\n' > "$tmp/art/out/sub/b.txt"
art() { # PATH: one promoted artifact
	printf '{"path":"%s","size":%s,"sha256":"%s","media_type":"text/plain","status":"promoted","reason":null,"partial":false}' \
		"$1" "$(stat -c %s "$tmp/art/$1")" "$(sha256sum "$tmp/art/$1" | cut -d' ' -f1)"
}
cat > "$tmp/m.json" <<JSON
{"manifest_version":1,"run_id":"r-42","status":"succeeded","exit":{"code":0},
 "timing":{"wall_ms":1234,"started_at":"2026-11-30T02:10:27.123Z"},
 "artifacts":[$(art out/a.csv),$(art out/sub/b.txt),
  {"path":"out/evil","size":0,"sha256":"","media_type":null,"status":"rejected","reason":"symlink","partial":false}],
 "isolation":{"landlock_abi":null,"namespaces":["user","mount","pid"],"seccomp":true},
 "usage":{"peak_memory_bytes":9007199254740991}}
JSON

# 6-10: signing, and verification without sbx
check "sign-tool signs the manifest" exits 0 "$SIGN" "$tmp/k" "$tmp/m.json"
cp "$tmp/out" "$tmp/m"
check "the manifest is one line ending in a newline" \
	test "$(wc -l < "$tmp/m")" -eq 1 -a "$(tail -c 1 "$tmp/m" | od -An -tx1 | tr -d ' ')" = 0a
check "jq -cjS 'del(.signature)' + openssl pkeyutl -verify accept it" \
	jq_openssl_verify "$tmp/m" "$tmp/k.pub"
raw_id=$(openssl pkey -pubin -in "$tmp/k.pub" -outform DER | tail -c 32 | sha256sum | cut -d' ' -f1)

# Keys made by OpenSSL work in sbx, and sbx's key files are what OpenSSL
# itself writes for them (sbx reads and writes the PEM without OpenSSL).
openssl genpkey -algorithm ed25519 -out "$tmp/ok" 2>/dev/null && chmod 600 "$tmp/ok"
openssl pkey -in "$tmp/ok" -pubout -out "$tmp/ok.pub" 2>/dev/null
check "a key from openssl genpkey signs; openssl verifies the manifest" \
	eval '"$SIGN" "$tmp/ok" "$tmp/m.json" > "$tmp/om" && jq_openssl_verify "$tmp/om" "$tmp/ok.pub"'
check "sbx verify accepts it with openssl's public key file" \
	exits 0 "$SBX" verify --pubkey "$tmp/ok.pub" "$tmp/om"
check "openssl pkey rewrites sbx's private key byte for byte" \
	eval 'openssl pkey -in "$tmp/k" | cmp -s - "$tmp/k"'
check "openssl pkey -pubout from sbx's private key is sbx's .pub" \
	eval 'openssl pkey -in "$tmp/k" -pubout | cmp -s - "$tmp/k.pub"'
openssl genpkey -algorithm x25519 -out "$tmp/xk" 2>/dev/null && chmod 600 "$tmp/xk"
check "an X25519 key is refused: not an Ed25519 key" \
	eval 'exits 1 "$SIGN" "$tmp/xk" "$tmp/m.json" && grep -q "not an Ed25519 key" "$tmp/err"'
openssl pkey -in "$tmp/ok" -aes256 -passout pass:x -out "$tmp/ek" 2>/dev/null && chmod 600 "$tmp/ek"
check "an encrypted key is refused with a Hint to convert it" \
	eval 'exits 1 "$SIGN" "$tmp/ek" "$tmp/m.json" && grep -q "encrypted private key" "$tmp/err" && grep -q "Hint: openssl pkey" "$tmp/err"'
check "key_id is sha256: + the SHA-256 of the raw public key" \
	test "$(jq -r .signature.key_id "$tmp/m")" = "sha256:$raw_id"
check "jq -cjS reproduces the whole line" jq_reproduces "$tmp/m"

# 11-13: sbx verify accepts it
check "sbx verify --pubkey accepts it, and says the artifacts were not checked" \
	eval 'exits 0 "$SBX" verify --pubkey "$tmp/k.pub" "$tmp/m" &&
		grep -q "^sbx: manifest OK: signature valid; its 2 promoted artifacts were not checked (no --artifacts DIR)$" "$tmp/err"'
check "sbx verify --artifacts checks both promoted artifacts" \
	eval 'exits 0 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art" "$tmp/m" &&
		grep -q "^sbx: manifest OK: signature valid; 2 artifacts in .* match$" "$tmp/err"'
check "sbx verify reads the manifest from stdin (-)" \
	eval 'exits 0 "$SBX" verify --pubkey "$tmp/k.pub" - < "$tmp/m"'

# 14-16: one changed byte in a value
sed 's/"run_id":"r-42"/"run_id":"r-43"/' "$tmp/m" > "$tmp/m.value"
check "tampered value: exactly one byte differs" \
	test "$(cmp -l "$tmp/m" "$tmp/m.value" | wc -l)" -eq 1
check "tampered value: sbx verify exits 1" \
	eval 'exits 1 "$SBX" verify --pubkey "$tmp/k.pub" "$tmp/m.value" && grep -q "does not verify" "$tmp/err"'
check "tampered value: jq + openssl reject it" fails jq_openssl_verify "$tmp/m.value" "$tmp/k.pub"

# 17-19: artifacts changed after signing
cp -r "$tmp/art" "$tmp/art2"
printf 'a,b\n1,3\n' > "$tmp/art2/out/a.csv"
check "tampered artifact byte: sbx verify --artifacts exits 1, 1 file does not match" \
	eval 'exits 1 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art2" "$tmp/m" &&
		grep -q "out/a.csv: sha256 differs" "$tmp/err" &&
		grep -q ": 1 file does not match the manifest$" "$tmp/err"'
rm "$tmp/art2/out/a.csv"
ln -s "$tmp/art/out/a.csv" "$tmp/art2/out/a.csv"
check "artifact replaced by a symlink to the right content: exit 1" \
	exits 1 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art2" "$tmp/m"
rm "$tmp/art2/out/a.csv"
printf 'a,b\n1,2\n\n' > "$tmp/art2/out/a.csv"
check "artifact one byte longer: exit 1" \
	eval 'exits 1 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art2" "$tmp/m" &&
		grep -q "size 9 differs" "$tmp/err"'

# 20-21: a signed manifest naming a path outside DIR, whose content matches
escaping() { # PATH: a manifest promoting PATH with k.pub's size and digest
	printf '{"artifacts":[{"path":"%s","size":%s,"sha256":"%s","status":"promoted"}]}' "$1" \
		"$(stat -c %s "$tmp/k.pub")" "$(sha256sum "$tmp/k.pub" | cut -d' ' -f1)"
}
for p in ../k.pub "$tmp/k.pub"; do
	escaping "$p" > "$tmp/esc.json"
	"$SIGN" "$tmp/k" "$tmp/esc.json" > "$tmp/esc"
	check "an artifact path $p outside --artifacts DIR is refused" \
		eval 'exits 1 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art" "$tmp/esc" &&
			grep -q "leaves the artifacts directory" "$tmp/err"'
done

# 22-23: someone else's key, a duplicated member
"$SBX" keygen -o "$tmp/other" 2> /dev/null
check "another public key: key_id does not match, exit 1" \
	eval 'exits 1 "$SBX" verify --pubkey "$tmp/other.pub" "$tmp/m" && grep -q "key_id does not match" "$tmp/err"'
sed 's/^{/{"run_id":"r-43",/' "$tmp/m" > "$tmp/m.dup"
check "a duplicated member is refused, exit 1" \
	exits 1 "$SBX" verify --pubkey "$tmp/k.pub" "$tmp/m.dup"

# 24-28: tricky strings: non-ASCII, U+2028/2029, emoji, quotes, backslashes;
# C0 control characters, which stay and are escaped as RFC 8785 and jq
# both do (\n, \t, \u001b ...), so an excerpt keeps its lines; NUL, DEL and
# invalid UTF-8, which the signer replaces with U+FFFD.
cat > "$tmp/t.json" <<'JSON'
{"stdout":{"excerpt":"caf\u00e9 \u2028\u2029 \ud83d\ude00 \"q\" \\b\\ / \u0007\u001b[2J\u007f tab\there\nnl \u00ad\ufeff\uffff \u0080\u009f <&>"},
 "stderr":{"excerpt":"Traceback (most recent call last):\n  File \"/work/main.py\", line 1, in <module>\n    raise ValueError(\"boom\")\nValueError: boom\n\r\f\b\u0001\u001f\u007f\u001b]52;c;eA==\u0007"},
 "reason":"\u0000nul","path":"\ud83d\ude00/\u00e9.csv","z":"","\u00e9":"key","\u2028":1}
JSON
check "tricky strings: sign-tool signs them" exits 0 "$SIGN" "$tmp/k" "$tmp/t.json"
cp "$tmp/out" "$tmp/t"
check "tricky strings: jq + openssl accept the signature" jq_openssl_verify "$tmp/t" "$tmp/k.pub"
check "tricky strings: jq -cjS reproduces the line, no raw control character in it" \
	eval 'jq_reproduces "$tmp/t" && ! LC_ALL=C grep -q "$(printf "[\001-\037\177]")" "$tmp/line"'
check "tricky strings: newlines, tabs, ESC kept and escaped; NUL and DEL are U+FFFD" \
	eval 'grep -qF "\\u0007\\u001b[2J$(printf "\357\277\275") tab\\there\\nnl" "$tmp/line" &&
		grep -qF "\"reason\":\"$(printf "\357\277\275")nul\"" "$tmp/line" &&
		[ "$(jq -r .stderr.excerpt "$tmp/t" | sed -n 4p)" = "ValueError: boom" ] &&
		grep -qF "\\n\\r\\f\\b\\u0001\\u001f$(printf "\357\277\275")\\u001b]52" "$tmp/line"'
check "tricky strings: sbx verify accepts them" exits 0 "$SBX" verify --pubkey "$tmp/k.pub" "$tmp/t"

# 29-31: the default key, and usage errors
check "sbx keygen without -o creates the per-user key" \
	eval 'exits 0 "$SBX" keygen && test -f "$XDG_CONFIG_HOME/sbx/signing.key.pub"'
"$SIGN" "$XDG_CONFIG_HOME/sbx/signing.key" "$tmp/m.json" > "$tmp/m.default"
check "sbx verify without --pubkey uses the default key's .pub" \
	eval 'exits 0 "$SBX" verify "$tmp/m.default" && grep -q "signing.key.pub" "$tmp/err"'
check "sbx verify without a manifest is a usage error (64)" exits 64 "$SBX" verify

# 32-34: the bytes as given are what is verified: the same JSON value,
# written otherwise, is not the signed line.
jq . "$tmp/m" > "$tmp/m.pretty"
check "pretty-printed manifest: sbx verify exits 1 naming the canonical form" \
	eval 'exits 1 "$SBX" verify --pubkey "$tmp/k.pub" "$tmp/m.pretty" && grep -q "not the canonical" "$tmp/err"'
sed 's/"status":"succeeded"/"status":"succ\\u0065eded"/' "$tmp/m" > "$tmp/m.escaped"
check "\\u0065 in place of e: the same value to jq, sbx verify exits 1" \
	eval '[ "$(jq -cS . "$tmp/m.escaped")" = "$(jq -cS . "$tmp/m")" ] && ! cmp -s "$tmp/m" "$tmp/m.escaped" &&
		exits 1 "$SBX" verify --pubkey "$tmp/k.pub" "$tmp/m.escaped" && grep -q "not the canonical" "$tmp/err"'
head -c -1 "$tmp/m" > "$tmp/m.nonl"
check "the line without its newline still verifies" exits 0 "$SBX" verify --pubkey "$tmp/k.pub" "$tmp/m.nonl"

# 35-38: --artifacts DIR holding what the run never produced
cp -r "$tmp/art" "$tmp/art3"
printf 'x\n' > "$tmp/art3/out/extra.txt"
check "an unlisted file in DIR: exit 1, named" \
	eval 'exits 1 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art3" "$tmp/m" &&
		grep -q "out/extra.txt: not listed in the manifest" "$tmp/err"'
rm "$tmp/art3/out/extra.txt"
printf 'x\n' > "$tmp/art3/out/evil"
check "a file at the path of a rejected artifact: exit 1" \
	eval 'exits 1 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art3" "$tmp/m" &&
		grep -q "out/evil: not listed in the manifest" "$tmp/err"'
rm "$tmp/art3/out/evil"
mkdir -p "$tmp/art3/other/deeper"
check "an unlisted directory in DIR: exit 1, named" \
	eval 'exits 1 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art3" "$tmp/m" &&
		grep -q "other/: not listed in the manifest" "$tmp/err"'
rmdir "$tmp/art3/other/deeper" "$tmp/art3/other"
ln -s "$tmp/art/out/a.csv" "$tmp/art3/alias.csv"
check "an unlisted symlink in DIR: exit 1, named" \
	eval 'exits 1 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art3" "$tmp/m" &&
		grep -q "alias.csv: not listed in the manifest" "$tmp/err"'

# 39-41: the stream captures beside the artifacts, DIR/.sbx/stdout and
# DIR/.sbx/stderr, are checked against the manifest's stdout and stderr.
mkdir -p "$tmp/art4/out/sub" "$tmp/art4/.sbx"
cp "$tmp/art/out/a.csv" "$tmp/art4/out/a.csv"
cp "$tmp/art/out/sub/b.txt" "$tmp/art4/out/sub/b.txt"
printf 'Traceback (most recent call last):\n\tx\033[0m\n' > "$tmp/art4/.sbx/stderr"
: > "$tmp/art4/.sbx/stdout"
jq -c --arg e "$(sha256sum < "$tmp/art4/.sbx/stderr" | cut -d' ' -f1)" \
	--arg o "$(sha256sum < "$tmp/art4/.sbx/stdout" | cut -d' ' -f1)" \
	'.stdout = {bytes: 0, sha256: $o, truncated: false, excerpt: ""} |
	 .stderr = {bytes: 42, sha256: $e, truncated: false, excerpt: "Traceback (most recent call last):\n\tx\u001b[0m\n"}' \
	"$tmp/m.json" > "$tmp/s.json"
"$SIGN" "$tmp/k" "$tmp/s.json" > "$tmp/s"
check "stream files in DIR/.sbx: sbx verify --artifacts checks them" \
	eval 'exits 0 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art4" "$tmp/s" &&
		grep -q "^sbx: manifest OK: signature valid; 2 artifacts, stdout and stderr in .* match$" "$tmp/err"'
printf 'x' >> "$tmp/art4/.sbx/stdout"
check "a changed DIR/.sbx/stdout: exit 1, named" \
	eval 'exits 1 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art4" "$tmp/s" &&
		grep -q "stdout: .sbx/stdout: size 1 differs from the manifest.s 0" "$tmp/err"'
check "DIR/.sbx/stdout where the manifest has no streams: not listed, exit 1" \
	eval 'exits 1 "$SBX" verify --pubkey "$tmp/k.pub" --artifacts "$tmp/art4" "$tmp/m" &&
		grep -q "^sbx: .sbx/stdout: not listed in the manifest$" "$tmp/err"'
