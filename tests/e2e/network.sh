#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# network.sh - network profiles: "disabled" has no way out at all, and an
# egress profile reaches only allow-listed host:port pairs through the
# broker's proxy, never an internal address, whatever the name resolves to.
#
# The test hosts live in a network namespace this script creates, joined
# to the host by a veth pair carrying only documentation addresses
# (198.51.100.0/24, TEST-NET-2).  Names resolve through /etc/hosts entries
# added for the run and removed in the trap; the test catalog's allow_cidrs
# names the one test address the proxy may reach.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need ip curl timeout

NS="sbx-e2e-net-$$"
VH="sbxn$$h"
VN="sbxn$$n"
MARK="# sbx-e2e-network-$$"
HOST_IP=198.51.100.1
ALLOWED_IP=198.51.100.2
OTHER_IP=198.51.100.3
SERVER=

cleanup_net() {
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
	ip link del "$VH" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	# In place (the file may be a bind mount): only our own lines go.
	if grep -q "$MARK" /etc/hosts 2>/dev/null; then
		grep -v "$MARK" /etc/hosts > "$T/hosts.restore" && cat "$T/hosts.restore" > /etc/hosts
	fi
	cleanup_lib
}
trap cleanup_net EXIT

# ---- the test hosts ----------------------------------------------------------
ip netns add "$NS" || { echo "Bail out! ip netns add failed"; exit 1; }
ip link add "$VH" type veth peer name "$VN" &&
	ip link set "$VN" netns "$NS" &&
	ip addr add "$HOST_IP/24" dev "$VH" && ip link set "$VH" up &&
	ip -n "$NS" addr add "$ALLOWED_IP/24" dev "$VN" &&
	ip -n "$NS" addr add "$OTHER_IP/24" dev "$VN" &&
	ip -n "$NS" link set "$VN" up && ip -n "$NS" link set lo up ||
	{ echo "Bail out! cannot build the test network"; exit 1; }

openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=allowed.sbx-test -days 1 \
	-keyout "$T/tls.key" -out "$T/tls.crt" >/dev/null 2>&1 ||
	{ echo "Bail out! cannot make a test certificate"; exit 1; }

cat > "$T/server.py" <<'PY'
import http.server, os, socketserver, ssl, sys, threading

class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "http://disallowed.sbx-test:8080/secret")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/bulk"):
            n = int(self.path.split("/")[2])
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            blk = b"x" * 65536
            while n > 0:
                self.wfile.write(blk[:min(n, len(blk))])
                n -= min(n, len(blk))
            return
        body = (self.server.tag + " " + self.headers.get("Host", "")).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

def serve(addr, port, tag, tls=False):
    s = S((addr, port), H)
    s.tag = tag
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[2], sys.argv[3])
        s.socket = ctx.wrap_socket(s.socket, server_side=True)
    threading.Thread(target=s.serve_forever, daemon=True).start()

serve("198.51.100.2", 8080, "hello-allowed")
serve("198.51.100.2", 8081, "hello-unlisted-port")
serve("198.51.100.2", 8443, "hello-tls", tls=True)
serve("198.51.100.2", 443, "hello-443", tls=True)
serve("198.51.100.3", 8080, "hello-disallowed")
open(sys.argv[1], "w").write("ready")
threading.Event().wait(600)
PY
ip netns exec "$NS" python3 "$T/server.py" "$T/ready" "$T/tls.crt" "$T/tls.key" &
SERVER=$!
for i in $(seq 100); do [ -s "$T/ready" ] && break; sleep 0.1; done
[ -s "$T/ready" ] || { echo "Bail out! the test server did not start"; exit 1; }

# Names for the proxy's resolver (the broker uses the host's).
{
	echo "$ALLOWED_IP allowed.sbx-test $MARK"
	echo "$OTHER_IP disallowed.sbx-test $MARK"
	echo "169.254.169.254 metadata.sbx-test $MARK"
	echo "127.0.0.1 loop.sbx-test $MARK"
	echo "$ALLOWED_IP mixed.sbx-test $MARK"
	echo "127.0.0.1 mixed.sbx-test $MARK"
	echo "$ALLOWED_IP rebind.sbx-test $MARK"
} >> /etc/hosts
getent hosts allowed.sbx-test >/dev/null || { echo "Bail out! /etc/hosts entries not visible"; exit 1; }
curl -s --max-time 5 "http://$ALLOWED_IP:8080/" | grep -q hello-allowed ||
	{ echo "Bail out! the test server is not reachable from the host"; exit 1; }

# ---- the test catalog ----------------------------------------------------------
POLICY="$T/policy"
cp -r "$SBX_SRCDIR/policy" "$POLICY"
cat > "$POLICY/network/test-egress.json" <<EOF
{
	"description": "test only: the e2e test hosts",
	"kind": "egress",
	"allow": [
		{ "host": "allowed.sbx-test", "ports": [8080, 8443, 443] },
		{ "host": "metadata.sbx-test", "ports": [80] },
		{ "host": "loop.sbx-test", "ports": [8080] },
		{ "host": "mixed.sbx-test", "ports": [8080] },
		{ "host": "rebind.sbx-test", "ports": [8080] },
		{ "host": "$ALLOWED_IP", "ports": [8080] }
	],
	"allow_cidrs": ["$ALLOWED_IP/32"],
	"max_connections": 64
}
EOF
# The same hosts without CONNECT, and with a small max_connections.
jq '.description = "test only: no CONNECT" | .connect = false' "$POLICY/network/test-egress.json" \
	> "$POLICY/network/test-noconnect.json"
jq '.description = "test only: two connections" | .max_connections = 2' "$POLICY/network/test-egress.json" \
	> "$POLICY/network/test-flood.json"
for p in python-analysis shell; do
	jq '.network_profiles += ["test-egress", "test-noconnect", "test-flood"]' "$SBX_SRCDIR/policy/profiles/$p.json" > "$POLICY/profiles/$p.json"
done
chmod -R a+rX "$T"

read -r -d '' PY_PROBE <<'PY'
import errno, os, socket, ssl, sys, urllib.error, urllib.request
sys.stdout = open("/work/out/net.txt", "w")

def get(url, ctx=None):
    try:
        with urllib.request.urlopen(url, timeout=10, context=ctx) as r:
            return "%d %s" % (r.status, r.read().decode())
    except urllib.error.HTTPError as e:
        return "%d %s" % (e.code, e.url)
    except Exception as e:
        return "error %s" % type(e).__name__

def raw(req):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(req)
    line = s.makefile("rb").readline().decode().strip()
    s.close()
    return line

def errno_of(f):
    try:
        f()
        return "reached"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))

tls = ssl.create_default_context()
tls.check_hostname = False
tls.verify_mode = ssl.CERT_NONE
print("env", os.environ.get("https_proxy"), repr(os.environ.get("NO_PROXY")))
print("allowed", get("http://allowed.sbx-test:8080/"))
print("allowed_literal", get("http://198.51.100.2:8080/"))
print("tls", get("https://allowed.sbx-test:8443/", tls))
print("disallowed", get("http://disallowed.sbx-test:8080/"))
print("metadata", get("http://metadata.sbx-test/latest/meta-data/"))
print("loopback", get("http://loop.sbx-test:8080/"))
print("mixed", get("http://mixed.sbx-test:8080/"))
print("redirect", get("http://allowed.sbx-test:8080/redirect"))
print("port", raw(b"CONNECT allowed.sbx-test:8081 HTTP/1.1\r\nHost: allowed.sbx-test:8081\r\n\r\n"))
print("hostmismatch", raw(b"GET http://allowed.sbx-test:8080/ HTTP/1.1\r\nHost: disallowed.sbx-test:8080\r\n\r\n"))
print("direct_tcp", errno_of(lambda: socket.create_connection(("198.51.100.2", 8080), timeout=5)))
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01", ("8.8.8.8", 53))
print("udp_dns", errno_of(udp))
def dns():
    try:
        socket.getaddrinfo("allowed.sbx-test", 80)
        return "resolved"
    except socket.gaierror:
        return "no-dns"
print("dns", dns())
PY

read -r -d '' SH_PROBE <<'SH'
exec > /work/out/net.txt
echo "curl_allowed $(curl -s --max-time 10 http://allowed.sbx-test:8080/)"
echo "curl_tls $(curl -sk --max-time 10 https://allowed.sbx-test:8443/)"
echo "curl_disallowed $(curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://disallowed.sbx-test:8080/)"
curl -sk --max-time 10 https://disallowed.sbx-test:8080/ >/dev/null 2>&1
echo "curl_connect_disallowed $?"
echo "curl_redirect $(curl -s -L -o /dev/null -w '%{http_code} %{url_effective}' --max-time 10 http://allowed.sbx-test:8080/redirect)"
echo "curl_noproxy $(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' --max-time 5 http://198.51.100.2:8080/; echo " $?")"
SH

read -r -d '' DISABLED_PROBE <<'PY'
import errno, os, socket, sys
sys.stdout = open("/work/out/net.txt", "w")
print("proxy_env", os.environ.get("http_proxy"))
try:
    socket.create_connection(("127.0.0.1", 3128), timeout=5)
    print("listener reached")
except OSError as e:
    print("listener", errno.errorcode.get(e.errno))
try:
    socket.create_connection(("198.51.100.2", 8080), timeout=5)
    print("direct reached")
except OSError as e:
    print("direct", errno.errorcode.get(e.errno))
PY

# TLS through CONNECT to port 443: the ClientHello's server name must be
# the name the tunnel was allowed for.  Each case prints what the payload
# saw: the server's answer (tag and the Host it was asked for) or the
# exception that ended the handshake.
read -r -d '' TLS_PROBE <<'PY'
import socket, ssl, sys
sys.stdout = open("/work/out/net.txt", "w")
def tunnel(host, port):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port, host.encode(), port))
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            break
        head += b
    return s, head.split(b"\r\n")[0].decode()
def tls(sni, host="allowed.sbx-test", vhost=None):
    s, line = tunnel(host, 443)
    if not line.startswith("HTTP/1.1 200"):
        return "connect " + line
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        t = ctx.wrap_socket(s, server_hostname=sni)
        t.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (vhost or sni or host).encode())
        data = b""
        while True:
            b = t.recv(4096)
            if not b:
                break
            data += b
        return "ok " + data.split(b"\r\n\r\n", 1)[-1].decode()
    except Exception as e:
        return "refused " + type(e).__name__
def plain_bytes():
    s, line = tunnel("allowed.sbx-test", 443)
    s.sendall(b"GET / HTTP/1.1\r\nHost: other.sbx-test\r\n\r\n")
    try:
        return "got %d bytes" % len(s.recv(4096))
    except OSError as e:
        return "error " + type(e).__name__
print("sni_right", tls("allowed.sbx-test"))
print("sni_case", tls("Allowed.SBX-test", vhost="allowed.sbx-test"))
print("sni_other", tls("other.sbx-test"))
print("sni_none", tls(None, vhost="other.sbx-test"))
print("not_tls", plain_bytes())
PY

# With "connect": false, no tunnel at all; plain http:// still works.
read -r -d '' NOCONNECT_PROBE <<'PY'
import socket, sys, urllib.request
sys.stdout = open("/work/out/net.txt", "w")
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT allowed.sbx-test:8443 HTTP/1.1\r\nHost: allowed.sbx-test:8443\r\n\r\n")
print("connect", s.makefile("rb").readline().decode().strip())
with urllib.request.urlopen("http://allowed.sbx-test:8080/", timeout=10) as r:
    print("plain %d %s" % (r.status, r.read().decode()))
PY

# Refusals in a tight loop for about two seconds: first over
# max_connections (each answered 403), then over the 64 connections the
# proxy holds open at once (each closed unread).  The payload counts what
# it was refused; the events stream must stay small.
read -r -d '' FLOOD_PROBE <<'PY'
import socket, sys, time
out = open("/work/out/net.txt", "w")
req = b"GET http://allowed.sbx-test:8080/ HTTP/1.1\r\nHost: allowed.sbx-test:8080\r\n\r\n"
def ask():
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(req)
    data = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        data += b
    s.close()
    return data
ok = sum(1 for _ in range(2) if ask().split(b"\r\n")[0].endswith(b" 200 OK"))
over = 0
end = time.monotonic() + 1.0
while time.monotonic() < end:
    if b"max_connections reached" in ask():
        over += 1
held = [socket.create_connection(("127.0.0.1", 3128), timeout=10) for _ in range(64)]
time.sleep(0.3)
full = 0
end = time.monotonic() + 1.0
while time.monotonic() < end:
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    try:
        got = s.recv(1)
    except ConnectionResetError:
        got = b""
    s.close()
    if got == b"":
        full += 1
for s in held:
    s.close()
out.write("ok %d\nover %d\nfull %d\n" % (ok, over, full))
PY

# L NAME: what the last run's payload reported for NAME.
L() { grep -a "^$1 " "$ART/net.txt" 2>/dev/null | head -1 | cut -d' ' -f2-; }

plan 110

for mode in root user; do
	setup_mode $mode

	# --- python, through the proxy ----------------------------------------
	mkjob "$M/py.json" python-analysis "$PY_PROBE" '{network_profile: "test-egress"}'
	sbx_run "$M/py.json" --events "$M/events.jsonl"
	expect_rc 0 "$mode: egress job runs"
	check "$mode: proxy variables set, NO_PROXY empty" test "$(L env)" = "http://127.0.0.1:3128 ''"
	check "$mode: urllib reaches the allowed host" test "$(L allowed)" = "200 hello-allowed allowed.sbx-test:8080"
	check "$mode: an allow-listed IP literal in allow_cidrs" test "$(L allowed_literal)" = "200 hello-allowed 198.51.100.2:8080"
	check "$mode: TLS through CONNECT (not decrypted)" test "$(L tls)" = "200 hello-tls allowed.sbx-test:8443"
	check "$mode: a host not on the allowlist: 403" test "$(L disallowed)" = "403 http://disallowed.sbx-test:8080/"
	check "$mode: a name resolving to the metadata address: 403" test "$(L metadata)" = "403 http://metadata.sbx-test/latest/meta-data/"
	check "$mode: a name resolving to loopback: 403" test "$(L loopback)" = "403 http://loop.sbx-test:8080/"
	check "$mode: a name with one internal address among others: 403" test "$(L mixed)" = "403 http://mixed.sbx-test:8080/"
	check "$mode: a redirect to a disallowed host: the follow-up is refused" test "$(L redirect)" = "403 http://disallowed.sbx-test:8080/secret"
	check "$mode: CONNECT to an allowed name on an unlisted port: 403" test "$(L port)" = "HTTP/1.1 403 Forbidden"
	check "$mode: plain HTTP with a mismatching Host header: refused" test "$(L hostmismatch)" = "HTTP/1.1 400 Bad Request"
	check "$mode: direct TCP bypassing the proxy: no route" test "$(L direct_tcp)" = "ENETUNREACH"
	check "$mode: UDP DNS to 8.8.8.8 fails locally (no route, nothing sent)" test "$(L udp_dns)" = "ENETUNREACH"
	check "$mode: no DNS inside the sandbox" test "$(L dns)" = "no-dns"
	check "$mode: manifest network counts" \
		test "$(jqm '[.network.connections_allowed, .network.connections_refused] | map(tostring) | join(" ")')" = "4 7"
	check "$mode: manifest names the metadata refusal and its address" \
		test "$(jqm '[.network.decisions[] | select(.host=="metadata.sbx-test")][0] | .decision + " " + .address + " " + .reason')" = \
		"refused 169.254.169.254 address 169.254.169.254 is metadata"
	check "$mode: manifest counts bytes" test "$(jqm '(.network.bytes_up > 0) and (.network.bytes_down > 0)')" = true
	# Refusals for the same reason within a second share one event.
	check "$mode: events stream has the decisions" \
		test "$(jq -r 'select(.event|startswith("net_")) | "\(.event) \(.count // 1)"' "$M/events.jsonl" |
			awk '{n[$1] += $2} END {printf "net_allowed=%d net_closed=%d net_refused=%d", n["net_allowed"], n["net_closed"], n["net_refused"]}')" = \
		"net_allowed=4 net_closed=4 net_refused=7"
	check "$mode: signature verifies" signature_ok

	# --- curl, through the proxy ------------------------------------------
	mkjob "$M/curl.json" shell "$SH_PROBE" '{network_profile: "test-egress"}'
	sbx_run "$M/curl.json"
	expect_rc 0 "$mode: curl job runs"
	check "$mode: curl reaches the allowed host" test "$(L curl_allowed)" = "hello-allowed allowed.sbx-test:8080"
	check "$mode: curl over TLS through CONNECT" test "$(L curl_tls)" = "hello-tls allowed.sbx-test:8443"
	check "$mode: curl to a disallowed host: 403" test "$(L curl_disallowed)" = "403"
	check "$mode: curl CONNECT to a disallowed host fails (exit 56)" test "$(L curl_connect_disallowed)" = "56"
	check "$mode: curl -L: the redirect's follow-up is refused" test "$(L curl_redirect)" = "403 http://disallowed.sbx-test:8080/secret"
	check "$mode: curl --noproxy: no route (exit 7)" test "$(L curl_noproxy)" = "000 7"

	# --- CONNECT to 443: the TLS server name is checked ---------------------
	mkjob "$M/tls.json" python-analysis "$TLS_PROBE" '{network_profile: "test-egress"}'
	sbx_run "$M/tls.json" --events "$M/tls.events"
	expect_rc 0 "$mode: TLS server name job runs"
	check "$mode: SNI matching the CONNECT host: relayed" test "$(L sni_right)" = "ok hello-443 allowed.sbx-test"
	check "$mode: SNI in another case: relayed" test "$(L sni_case)" = "ok hello-443 allowed.sbx-test"
	check "$mode: SNI naming another virtual host: refused" test "$(L sni_other)" = "refused SSLError"
	check "$mode: no SNI: refused" test "$(L sni_none)" = "refused SSLError"
	check "$mode: non-TLS bytes in a 443 tunnel: nothing comes back" test "$(L not_tls)" = "got 0 bytes"
	check "$mode: manifest names the SNI refusals" \
		test "$(jqm '[.network.decisions[] | select(.port==443 and .decision=="refused") | .reason] | join("; ")')" = \
		"TLS server name other.sbx-test is not the tunnel's host; TLS ClientHello without a server name; not a TLS ClientHello"
	check "$mode: manifest counts the SNI refusals" \
		test "$(jqm '[.network.connections_allowed, .network.connections_refused] | map(tostring) | join(" ")')" = "2 3"
	check "$mode: SNI refusal event names the server name" \
		test "$(jq -r 'select(.event=="net_refused") | .server_name // empty' "$M/tls.events" | head -1)" = other.sbx-test

	# --- "connect": false ---------------------------------------------------
	mkjob "$M/noconn.json" python-analysis "$NOCONNECT_PROBE" '{network_profile: "test-noconnect"}'
	sbx_run "$M/noconn.json"
	expect_rc 0 "$mode: no-CONNECT job runs"
	check "$mode: CONNECT refused by the profile: 403" test "$(L connect)" = "HTTP/1.1 403 Forbidden"
	check "$mode: plain http:// still allowed" test "$(L plain)" = "200 hello-allowed allowed.sbx-test:8080"
	check "$mode: the refusal's reason" \
		test "$(jqm '.network.decisions[0].reason')" = "CONNECT not allowed by the network profile"

	# --- refusals in a tight loop: bounded events, exact counts -------------
	mkjob "$M/flood.json" python-analysis "$FLOOD_PROBE" '{network_profile: "test-flood"}'
	sbx_run "$M/flood.json" --events "$M/flood.events"
	expect_rc 0 "$mode: refusal flood job runs"
	over=$(L over); full=$(L full)
	check "$mode: the flood was refused many times ($over over max_connections, $full over the open cap)" \
		test "$(L ok)" = 2 -a "${over:-0}" -gt 40 -a "${full:-0}" -gt 40
	nref=$(jq -r 'select(.event=="net_refused")' "$M/flood.events" | jq -s length)
	check "$mode: a bounded number of net_refused events ($nref lines)" test "$nref" -le 16
	check "$mode: the events' counts add up to the manifest's" \
		test "$(jq -r 'select(.event=="net_refused") | .count' "$M/flood.events" | jq -s add)" = "$(jqm .network.connections_refused)"
	check "$mode: manifest: refusals total what the payload was refused" \
		test "$(jqm .network.connections_refused)" = "$((over + full))"
	check "$mode: manifest: refusals per reason" \
		test "$(jqm '.network.refused_by_reason | [."max_connections reached", ."too many open connections"] | map(tostring) | join(" ")')" = "$over $full"
	check "$mode: nothing left behind after the flood" nothing_left

	# --- disabled: no listener, no proxy, no route --------------------------
	mkjob "$M/off.json" python-analysis "$DISABLED_PROBE"
	sbx_run "$M/off.json"
	expect_rc 0 "$mode: disabled job runs"
	check "$mode: disabled: no proxy variables" test "$(L proxy_env)" = "None"
	check "$mode: disabled: nothing listens on 3128" test "$(L listener)" = "ECONNREFUSED"
	check "$mode: disabled: no route out" test "$(L direct)" = "ENETUNREACH"
	check "$mode: disabled: manifest network is null" test "$(jqm '.network')" = null
	check "$mode: nothing left behind" nothing_left
done

# ---- DNS rebinding -----------------------------------------------------------
# A name that resolved to the allowed test host on the first request and to
# loopback on the second: the proxy resolves for every request and checks
# what it will connect to, so the second is refused.  The test flips the
# name between the two requests, once the events show the first allowed.
MODE=root
M="$T/root"
KEY="$M/key"
read -r -d '' REBIND <<'PY'
import sys, time, urllib.error, urllib.request
out = open("/work/out/net.txt", "w", buffering=1)
def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return "%d %s" % (r.status, r.read().decode())
    except urllib.error.HTTPError as e:
        return "%d" % e.code
    except Exception as e:
        return "error %s" % type(e).__name__
out.write("first %s\n" % get("http://rebind.sbx-test:8080/"))
time.sleep(4)
out.write("second %s\n" % get("http://rebind.sbx-test:8080/"))
PY
mkjob "$M/rebind.json" python-analysis "$REBIND" '{network_profile: "test-egress"}'
rm -f "$M/rebind.events"
next=$((RUNS + 1))
sbx_run "$M/rebind.json" --events "$M/rebind.events" &
rebind_pid=$!
for i in $(seq 100); do
	grep -q '"net_allowed".*rebind.sbx-test\|rebind.sbx-test.*"net_allowed"' "$M/rebind.events" 2>/dev/null && break
	sleep 0.1
done
sed "s/^$ALLOWED_IP rebind.sbx-test/127.0.0.1 rebind.sbx-test/" /etc/hosts > "$T/hosts.rebind" &&
	cat "$T/hosts.rebind" > /etc/hosts
wait $rebind_pid
# sbx_run ran in a subshell: name its files here.
RUNS=$next OUT="$M/out.$next.json" ART="$M/art.$next"
check "rebinding: the run succeeded" test "$(jqm .status)" = succeeded
check "rebinding: the first lookup (the test host) is allowed" test "$(L first)" = "200 hello-allowed rebind.sbx-test:8080"
check "rebinding: the second lookup (loopback) is refused" test "$(L second)" = "403"
check "rebinding: the refusal names the loopback address" \
	test "$(jq -r 'select(.event=="net_refused") | .address // empty' "$M/rebind.events" | head -1)" = 127.0.0.1

finish
