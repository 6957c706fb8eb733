#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fetch.sh - remote inputs ("fetch"): sbx's confined fetcher gets each URL
# before the payload starts, under a catalog fetch profile, and hands the
# bytes in as /work/in files; the payload itself stays offline (network
# "disabled").  Hostile servers first: a host off the list, names that
# resolve to internal addresses, redirects to them, a name rebound while
# a response is held, an oversized body, a slow-loris, a gzip bomb, a
# wrong pin; then the cache, cancellation, and nothing left behind.
#
# The servers live in a network namespace this script makes, joined to
# the host by a veth pair carrying only TEST-NET-3 addresses
# (203.0.113.0/24).  Names resolve through /etc/hosts entries added for
# the run (marked, removed in the trap); the test fetch profile's
# allow_cidrs names the one test address the fetcher may reach.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need ip curl timeout openssl

NS="sbx-e2e-fetch-$$"
VH="sbxf$$h"
VN="sbxf$$n"
MARK="# sbx-e2e-fetch-$$"
HOST_IP=203.0.113.1
ALLOWED_IP=203.0.113.2
OTHER_IP=203.0.113.3
SERVER=

cleanup_fetch() {
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
	ip link del "$VH" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	# In place (the file may be a bind mount): only our own lines go.
	if grep -q "$MARK" /etc/hosts 2>/dev/null; then
		grep -v "$MARK" /etc/hosts > "$T/hosts.restore" && cat "$T/hosts.restore" > /etc/hosts
	fi
	cleanup_lib
}
trap cleanup_fetch EXIT

# ---- the test hosts ----------------------------------------------------------
# A host that numbers a real network with TEST-NET-3 is not ours to touch.
if [ -n "$(ip -o addr show to 203.0.113.0/24)" ] || ip route show 203.0.113.0/24 | grep -q .; then
	echo "Bail out! 203.0.113.0/24 is in use on this host; the test needs it for its own hosts"
	exit 1
fi
ip netns add "$NS" || { echo "Bail out! ip netns add failed"; exit 1; }
ip link add "$VH" type veth peer name "$VN" &&
	ip link set "$VN" netns "$NS" &&
	ip addr add "$HOST_IP/24" dev "$VH" && ip link set "$VH" up &&
	ip -n "$NS" addr add "$ALLOWED_IP/24" dev "$VN" &&
	ip -n "$NS" addr add "$OTHER_IP/24" dev "$VN" &&
	ip -n "$NS" link set "$VN" up && ip -n "$NS" link set lo up ||
	{ echo "Bail out! cannot build the test network"; exit 1; }

# A test CA and a server certificate for allowed.sbx-test signed by it:
# the fetch profile trusts the CA through its ca_file.
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=sbx-test-ca -days 1 \
	-keyout "$T/ca.key" -out "$T/ca.crt" >/dev/null 2>&1 &&
	openssl req -newkey rsa:2048 -nodes -subj /CN=allowed.sbx-test \
		-keyout "$T/tls.key" -out "$T/tls.csr" >/dev/null 2>&1 &&
	printf 'subjectAltName=DNS:allowed.sbx-test\n' > "$T/san.ext" &&
	openssl x509 -req -in "$T/tls.csr" -CA "$T/ca.crt" -CAkey "$T/ca.key" -CAcreateserial \
		-days 1 -extfile "$T/san.ext" -out "$T/tls.crt" >/dev/null 2>&1 ||
	{ echo "Bail out! cannot make the test certificates"; exit 1; }

DATA='city,total
Lyon,3
Oslo,4
'
printf '%s' "$DATA" > "$T/data.csv"
DATA_SHA=$(sha256sum < "$T/data.csv" | cut -d' ' -f1)
# An archive to fetch and extract, and one with an entry leaving the tree.
mkdir -p "$T/arch" && cp "$T/data.csv" "$T/arch/" && tar czf "$T/data.tgz" -C "$T/arch" data.csv
python3 -c '
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w:gz") as t:
    i = tarfile.TarInfo("../escaped.csv"); i.size = 3
    t.addfile(i, io.BytesIO(b"x,y"))' "$T/evil.tgz"

cat > "$T/server.py" <<'PY'
import gzip, http.server, os, socketserver, ssl, sys, threading, time

D = sys.argv[1]
DATA = open(os.path.join(D, "data.csv"), "rb").read()
BOMB = gzip.compress(b"\0" * (64 << 20))

class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def body(self, data, ctype="text/csv", extra=()):
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
    def redirect(self, to):
        self.send_response(302)
        self.send_header("Location", to)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def do_GET(self):
        p = self.path
        with open(os.path.join(D, "requests"), "a") as f:
            f.write("%s %s %s\n" % (self.server.tag, self.headers.get("Host", ""), p))
        if p == "/data.csv":
            return self.body(DATA)
        if p == "/redirect-ok":
            return self.redirect("/data.csv")
        if p == "/redirect-host":
            return self.redirect("http://disallowed.sbx-test:8080/data.csv")
        if p == "/redirect-loop":
            return self.redirect("http://loop.sbx-test:8080/data.csv")
        if p == "/redirect-many":
            return self.redirect("/redirect-many")
        if p == "/rebind":
            # Hold the answer until the test has flipped the name, then
            # send the client back to the same name.
            open(os.path.join(D, "held"), "w").write("held")
            for _ in range(100):
                if os.path.exists(os.path.join(D, "flipped")):
                    break
                time.sleep(0.1)
            return self.redirect("http://rebind.sbx-test:8080/data.csv")
        if p in ("/data.tgz", "/evil.tgz"):
            return self.body(open(os.path.join(D, p[1:]), "rb").read(), "application/gzip")
        if p == "/big":
            return self.body(b"x" * (1 << 20))
        if p == "/bomb":
            return self.body(BOMB, "text/csv", [("Content-Encoding", "gzip")])
        if p == "/missing":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if p.startswith("/slow"):
            # A slow-loris: a promise of a body, then one byte a second.
            open(os.path.join(D, "slow-started"), "w").write("yes")
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            for _ in range(90):
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(1)
            return
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

def serve(addr, port, tag, tls=False):
    s = S((addr, port), H)
    s.tag = tag
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(D, "tls.crt"), os.path.join(D, "tls.key"))
        s.socket = ctx.wrap_socket(s.socket, server_side=True)
    threading.Thread(target=s.serve_forever, daemon=True).start()

serve("203.0.113.2", 8080, "allowed")
serve("203.0.113.2", 8443, "tls", tls=True)
serve("203.0.113.3", 8080, "other")
open(os.path.join(D, "ready"), "w").write("ready")
threading.Event().wait(900)
PY
ip netns exec "$NS" timeout 900 python3 "$T/server.py" "$T" &
SERVER=$!
for i in $(seq 100); do [ -s "$T/ready" ] && break; sleep 0.1; done
[ -s "$T/ready" ] || { echo "Bail out! the test server did not start"; exit 1; }

{
	echo "$ALLOWED_IP allowed.sbx-test $MARK"
	echo "$ALLOWED_IP tlsother.sbx-test $MARK"
	echo "$OTHER_IP disallowed.sbx-test $MARK"
	echo "127.0.0.1 loop.sbx-test $MARK"
	echo "169.254.169.254 metadata.sbx-test $MARK"
	echo "$ALLOWED_IP rebind.sbx-test $MARK"
} >> /etc/hosts
getent hosts allowed.sbx-test >/dev/null || { echo "Bail out! /etc/hosts entries not visible"; exit 1; }
curl -s --max-time 5 "http://$ALLOWED_IP:8080/data.csv" | grep -q Lyon ||
	{ echo "Bail out! the test server is not reachable from the host"; exit 1; }
: > "$T/requests"

# ---- the test catalog ----------------------------------------------------------
POLICY="$T/policy"
cp -r "$SBX_SRCDIR/policy" "$POLICY"
mkdir -p "$POLICY/fetch"
cat > "$POLICY/fetch/test-fetch.json" <<EOF
{
	"description": "test only: the e2e test hosts",
	"kind": "fetch",
	"allow": [
		{ "host": "allowed.sbx-test", "ports": [8080, 8443] },
		{ "host": "tlsother.sbx-test", "ports": [8443] },
		{ "host": "loop.sbx-test", "ports": [8080] },
		{ "host": "metadata.sbx-test", "ports": [80] },
		{ "host": "rebind.sbx-test", "ports": [8080] }
	],
	"schemes": ["https", "http"],
	"allow_cidrs": ["$ALLOWED_IP/32"],
	"max_bytes": 4194304,
	"max_file_bytes": 2097152,
	"timeout_seconds": 3,
	"max_redirects": 3,
	"ca_file": "$T/ca.crt"
}
EOF
jq '.description = "test only: slow" | .timeout_seconds = 60' "$POLICY/fetch/test-fetch.json" \
	> "$POLICY/fetch/test-fetch-slow.json"
jq '.description = "test only: https only" | del(.schemes)' "$POLICY/fetch/test-fetch.json" \
	> "$POLICY/fetch/test-fetch-tls.json"
jq '.description = "test only: not listed by the profile"' "$POLICY/fetch/test-fetch.json" \
	> "$POLICY/fetch/test-unlisted.json"
jq '.fetch_profiles = ["test-fetch", "test-fetch-slow", "test-fetch-tls"]' \
	"$SBX_SRCDIR/policy/profiles/shell.json" > "$POLICY/profiles/shell.json"
chmod -R a+rX "$T"

# The payload: copies what it got, and tries the network itself.
read -r -d '' COPY <<'SH'
ls /work/in > /work/out/listing.txt
find /work/in -type f | sort > /work/out/files.txt
for f in /work/in/*; do [ -f "$f" ] && cp "$f" "/work/out/got-$(basename "$f").csv"; done
ip -o link 2>/dev/null | cut -d: -f2 | tr -d ' ' > /work/out/links.txt
cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' ' >> /work/out/links.txt
(exec 3<>/dev/tcp/203.0.113.2/8080) 2>/dev/null && echo reached > /work/out/direct.txt || echo unreachable > /work/out/direct.txt
SH

# fjob FILE FETCH_PROFILE ENTRIES_JSON: a shell job with network disabled.
fjob() {
	mkjob "$1" shell "$COPY" "{network_profile: \"disabled\", fetch_profile: \"$2\", fetch: $3}"
}
A=http://allowed.sbx-test:8080

refused_as() { # CODE DESCRIPTION: a 77 with that reason_code, nothing run
	if [ "$RC" -eq 77 ] && [ "$(jqm .status)" = refused ] && [ "$(jqm .reason_code)" = "$1" ] &&
		[ ! -e "$ART/listing.txt" ] && signature_ok; then
		ok "$mode: $2 (77 $1)"
	else
		not_ok "$mode: $2: exit $RC, $(jqm .status) $(jqm .reason_code), wanted 77 $1"
		diag "stderr: $(head -c 1500 "$ERR")"
		diag "manifest: $(head -c 1500 "$OUT")"
	fi
}

all_have_inputs() {
	local f
	for f in "$M"/out.*.json; do jq -e 'has("inputs")' "$f" >/dev/null || return 1; done
}

plan 70

for mode in root user; do
	setup_mode $mode
	[ "$mode" = root ] && bound_sbx 120

	# --- the ordinary case ------------------------------------------------------
	fjob "$M/ok.json" test-fetch "[{url: \"$A/data.csv\", as: \"data.csv\", media_type: \"text/csv\"}]"
	sbx_run "$M/ok.json"
	expect_rc 0 "$mode: an allowed file is fetched and the payload runs"
	check "$mode: the payload got the bytes" cmp -s "$T/data.csv" "$ART/got-data.csv.csv"
	check "$mode: manifest inputs: origin fetch, url, final_url, status 200, size, sha256" \
		test "$(jqm '.inputs[0] | [.name, .origin, .url, .final_url, (.http_status|tostring), (.size|tostring), .sha256, (.cached|tostring)] | join(" ")')" = \
		"data.csv fetch $A/data.csv $A/data.csv 200 ${#DATA} $DATA_SHA false"
	check "$mode: the payload stayed offline (only lo, no route)" \
		test "$(sort -u "$ART/links.txt" | tr '\n' ' ')/$(cat "$ART/direct.txt")" = "lo /unreachable"
	check "$mode: signature verifies" signature_ok

	fjob "$M/redir.json" test-fetch "[{url: \"$A/redirect-ok\", as: \"data.csv\"}]"
	sbx_run "$M/redir.json"
	check "$mode: an allowed redirect is followed and its final URL recorded" \
		test "$RC/$(jqm '.inputs[0].final_url')" = "0/$A/data.csv"

	fjob "$M/tls.json" test-fetch "[{url: \"https://allowed.sbx-test:8443/data.csv\", as: \"data.csv\"}]"
	sbx_run "$M/tls.json"
	check "$mode: https with the profile's CA: fetched" \
		test "$RC/$(jqm '.inputs[0].sha256')" = "0/$DATA_SHA"

	fjob "$M/arch.json" test-fetch "[{url: \"$A/data.tgz\", as: \"arch\"}]"
	jq '.extract = ["arch"]' "$M/arch.json" > "$M/arch.tmp" && mv "$M/arch.tmp" "$M/arch.json" && chmod 0644 "$M/arch.json"
	sbx_run "$M/arch.json"
	check "$mode: a fetched archive listed in extract is validated and extracted" \
		eval '[ $RC -eq 0 ] && [ "$(cat "$ART/files.txt")" = /work/in/arch/data.csv ] && [ "$(jqm ".inputs[0] | [.origin, (.extracted|tostring)] | join(\" \")")" = "fetch true" ]'

	# --- hostile ------------------------------------------------------------
	fjob "$M/evil.json" test-fetch "[{url: \"$A/evil.tgz\", as: \"arch\"}]"
	jq '.extract = ["arch"]' "$M/evil.json" > "$M/evil.tmp" && mv "$M/evil.tmp" "$M/evil.json" && chmod 0644 "$M/evil.json"
	sbx_run "$M/evil.json"
	check "$mode: a fetched archive with an entry leaving the tree is refused like a stored one" \
		eval '[ $RC -eq 77 ] && [ "$(jqm .status)" = refused ] && grep -q "\.\." "$ERR" && [ ! -e "$ART/listing.txt" ]'

	fjob "$M/host.json" test-fetch '[{url: "http://disallowed.sbx-test:8080/data.csv", as: "d.csv"}]'
	sbx_run "$M/host.json"
	refused_as fetch_host_not_allowed "a host not on the list is refused"

	fjob "$M/port.json" test-fetch "[{url: \"http://allowed.sbx-test:9/data.csv\", as: \"d.csv\"}]"
	sbx_run "$M/port.json"
	refused_as fetch_host_not_allowed "an allowed host on an unlisted port is refused"

	fjob "$M/loop.json" test-fetch '[{url: "http://loop.sbx-test:8080/data.csv", as: "d.csv"}]'
	sbx_run "$M/loop.json"
	refused_as fetch_address_refused "a name that resolves to loopback is refused"

	fjob "$M/meta.json" test-fetch '[{url: "http://metadata.sbx-test/latest/", as: "d.csv"}]'
	sbx_run "$M/meta.json"
	refused_as fetch_address_refused "a name that resolves to the metadata address is refused"

	fjob "$M/rhost.json" test-fetch "[{url: \"$A/redirect-host\", as: \"d.csv\"}]"
	sbx_run "$M/rhost.json"
	refused_as fetch_redirect_refused "a redirect to a host not on the list is refused"
	check "$mode: the refused redirect's target was never asked" \
		eval '! grep -q "^other " "$T/requests"'

	fjob "$M/rloop.json" test-fetch "[{url: \"$A/redirect-loop\", as: \"d.csv\"}]"
	sbx_run "$M/rloop.json"
	refused_as fetch_redirect_refused "a redirect to a name that resolves to loopback is refused"

	fjob "$M/rmany.json" test-fetch "[{url: \"$A/redirect-many\", as: \"d.csv\"}]"
	sbx_run "$M/rmany.json"
	refused_as fetch_redirect_refused "more redirects than max_redirects are refused"

	# DNS rebinding: the first answer is held until the name points
	# elsewhere; the follow-up to the same name must be checked again.
	rm -f "$T/held" "$T/flipped"
	(
		for i in $(seq 100); do [ -e "$T/held" ] && break; sleep 0.1; done
		sed "s/^$ALLOWED_IP rebind.sbx-test $MARK\$/127.0.0.1 rebind.sbx-test $MARK/" /etc/hosts > "$T/hosts.flip" &&
			cat "$T/hosts.flip" > /etc/hosts
		touch "$T/flipped"
	) &
	flipper=$!
	fjob "$M/rebind.json" test-fetch '[{url: "http://rebind.sbx-test:8080/rebind", as: "d.csv"}]'
	sbx_run "$M/rebind.json"
	wait $flipper
	refused_as fetch_redirect_refused "a name rebound to loopback between two requests is refused"
	sed "s/^127.0.0.1 rebind.sbx-test $MARK\$/$ALLOWED_IP rebind.sbx-test $MARK/" /etc/hosts > "$T/hosts.flip" &&
		cat "$T/hosts.flip" > /etc/hosts

	fjob "$M/big.json" test-fetch "[{url: \"$A/big\", as: \"d.csv\", max_bytes: 1000}]"
	sbx_run "$M/big.json"
	refused_as fetch_too_large "a body larger than max_bytes is refused"

	fjob "$M/over.json" test-fetch "[{url: \"$A/data.csv\", as: \"d.csv\", max_bytes: 99999999}]"
	sbx_run "$M/over.json"
	check "$mode: max_bytes above the profile's max_file_bytes: 77 naming fetch[0].max_bytes" \
		eval '[ $RC -eq 77 ] && grep -q "fetch\[0\]\.max_bytes" "$ERR"'

	start=$SECONDS
	fjob "$M/slow.json" test-fetch "[{url: \"$A/slow\", as: \"d.csv\"}]"
	sbx_run "$M/slow.json"
	took=$((SECONDS - start))
	check "$mode: a slow-loris past timeout_seconds: failed, fetch_timeout, in ${took}s" \
		eval '[ $RC -eq 1 ] && [ "$(jqm .status)" = failed ] && [ "$(jqm .reason_code)" = fetch_timeout ] && [ $took -lt 20 ] && [ ! -e "$ART/listing.txt" ]'

	fjob "$M/bomb.json" test-fetch "[{url: \"$A/bomb\", as: \"d.csv\"}]"
	sbx_run "$M/bomb.json"
	refused_as fetch_encoding_refused "a gzip bomb with Content-Encoding is refused"

	fjob "$M/404.json" test-fetch "[{url: \"$A/missing\", as: \"d.csv\"}]"
	sbx_run "$M/404.json"
	check "$mode: an HTTP 404: failed, fetch_http_status" \
		eval '[ $RC -eq 1 ] && [ "$(jqm .reason_code)" = fetch_http_status ]'

	fjob "$M/sni.json" test-fetch '[{url: "https://tlsother.sbx-test:8443/data.csv", as: "d.csv"}]'
	sbx_run "$M/sni.json"
	check "$mode: https to a name the certificate does not carry: failed, fetch_failed" \
		eval '[ $RC -eq 1 ] && [ "$(jqm .reason_code)" = fetch_failed ] && [ ! -e "$ART/listing.txt" ]'

	fjob "$M/scheme.json" test-fetch-tls "[{url: \"$A/data.csv\", as: \"d.csv\"}]"
	sbx_run "$M/scheme.json"
	refused_as fetch_scheme_refused "http under a profile that allows only https is refused"

	fjob "$M/unlisted.json" test-unlisted "[{url: \"$A/data.csv\", as: \"d.csv\"}]"
	sbx_run "$M/unlisted.json"
	check "$mode: a fetch profile the runtime profile does not list: 77 naming fetch_profile" \
		eval '[ $RC -eq 77 ] && grep -q "fetch_profile" "$ERR"'

	# --- pinned digests and the cache --------------------------------------
	fjob "$M/pinbad.json" test-fetch "[{url: \"$A/data.csv\", as: \"d.csv\", sha256: \"$(printf '%064d' 0)\"}]"
	sbx_run "$M/pinbad.json"
	refused_as fetch_sha256_mismatch "a wrong pinned sha256 is refused"
	check "$mode: the wrong pin put nothing in the cache" \
		eval '[ -z "$(ls -A "$M/state/fetch-cache" 2>/dev/null)" ]'

	fjob "$M/pin.json" test-fetch "[{url: \"$A/data.csv\", as: \"data.csv\", sha256: \"$DATA_SHA\"}]"
	sbx_run "$M/pin.json"
	check "$mode: a right pin is fetched and cached" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .inputs[0].cached)" = false ] && [ -f "$M/state/fetch-cache/$DATA_SHA" ]'
	ip link set "$VH" down
	sbx_run "$M/pin.json"
	ip link set "$VH" up
	check "$mode: the same pin with no network is served from the cache" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .inputs[0].cached)" = true ] && [ "$(jqm .inputs[0].sha256)" = "$DATA_SHA" ] && cmp -s "$T/data.csv" "$ART/got-data.csv.csv"'
	jq -c '.fetch_cache_bytes = 1' "$M/config.json" > "$M/gc.json"
	[ "$mode" = user ] && chown "$SBX_TEST_USER" "$M/gc.json"
	as_mode "$SBX" gc --config "$M/gc.json" >/dev/null 2>"$M/gc.err"
	check "$mode: sbx gc prunes the cache to fetch_cache_bytes" \
		eval '[ ! -e "$M/state/fetch-cache/$DATA_SHA" ]'

	# --- cancellation during a fetch -----------------------------------------
	rm -f "$T/slow-started"
	fjob "$M/cancel.json" test-fetch-slow "[{url: \"$A/slow\", as: \"d.csv\"}]"
	sbx_run "$M/cancel.json" --events "$M/cancel.events" &
	runner=$!
	for i in $(seq 100); do [ -e "$T/slow-started" ] && break; sleep 0.1; done
	id=$(jq -r 'select(.event=="admitted") | .run_id' "$M/cancel.events" 2>/dev/null | head -1)
	as_mode timeout 10 "$SBX" cancel --config "$M/config.json" "$id" >/dev/null 2>"$M/cancel.err"
	crc=$?
	wait $runner
	OUT="$M/out.$((RUNS + 1)).json" ERR="$M/err.$((RUNS + 1)).txt" RUNS=$((RUNS + 1))
	check "$mode: sbx cancel during a fetch: 0, and the run ends 130 cancelled, signed" \
		eval '[ $crc -eq 0 ] && [ "$(jqm .status)" = cancelled ] && signature_ok'

	check "$mode: every manifest has the inputs array" all_have_inputs
	check "$mode: nothing left behind (no fetcher, state, cgroup, temp)" \
		eval 'nothing_left && ! pgrep -f "sbx-fetch" >/dev/null'
done

# sbx profiles lists the fetch profiles, with their defaults filled in,
# and which runtime profile may name them.
"$SBX" profiles --json --policy "$POLICY" > "$T/profiles.json" 2>/dev/null
check "sbx profiles --json: the fetch profiles, and shell's fetch_profiles" \
	test "$(jq -r '([.fetches[].name] | sort | join(",")) + " " + (.fetches[] | select(.name == "test-fetch-tls") | .schemes | join(",")) + " " + ([.profiles[] | select(.name == "shell") | .fetch_profiles[]] | join(","))' "$T/profiles.json")" = \
	"example,test-fetch,test-fetch-slow,test-fetch-tls,test-unlisted https test-fetch,test-fetch-slow,test-fetch-tls"

# The README's example, as printed there: its own namespace and host.
SBX=$SBX_REAL SBX_LIBEXECDIR=$SBX_BUILDDIR timeout 120 bash "$SBX_SRCDIR/examples/fetch-csv.sh" \
	"$SBX_SRCDIR/policy" > "$T/example.out" 2> "$T/example.err"
check "the README's example: fetched, succeeded, offline payload saw 3 rows and lo alone" \
	eval '[ "$(head -1 "$T/example.out" | jq -r ".status + \" \" + .inputs[0].origin + \" \" + (.inputs[0].http_status|tostring)")" = "succeeded fetch 200" ] &&
		grep -qx "rows: 3" "$T/example.out" && grep -qx "interfaces: lo " "$T/example.out"'

finish
