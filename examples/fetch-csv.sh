#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fetch-csv.sh - the README's remote-input example, whole: a job fetches a
# CSV from an allowed host and its payload runs with network "disabled".
#
# The "allowed host" is a server this script starts in a network namespace
# of its own, on a documentation address (198.51.100.2, TEST-NET-2), named
# datasets.sbx-example by an /etc/hosts line that is removed again at
# exit; the catalog is a copy of sbx's with a fetch profile for that one
# host.  Needs root (ip netns, /etc/hosts), python3, jq.
#
#   examples/fetch-csv.sh [CATALOG]     CATALOG: the catalog to copy
#                                       (default: the installed one)
# SBX names the sbx binary (default: sbx on PATH).  Prints the manifest's
# status and inputs, and the payload's stdout.
set -eu
SBX=${SBX:-sbx}
here=$(cd "$(dirname "$0")" && pwd)
src=${1:-}
if [ -z "$src" ]; then
	for d in /etc/sbx/policy "$(dirname "$(command -v "$SBX")")/../share/sbx/policy"; do
		[ -d "$d/profiles" ] && src=$d && break
	done
fi
[ -d "$src/profiles" ] || { echo "fetch-csv.sh: no catalog found; name it: $0 CATALOG" >&2; exit 64; }
ns=sbx-example-$$ vh=sbxe$$h vn=sbxe$$n mark="# sbx-example-fetch-$$"
T=$(mktemp -d /tmp/sbx-example.XXXXXX)
chmod 0755 "$T"
server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null
	ip link del "$vh" 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	if grep -q "$mark" /etc/hosts; then
		grep -v "$mark" /etc/hosts > "$T/hosts" && cat "$T/hosts" > /etc/hosts
	fi
	rm -rf "$T"
}
trap cleanup EXIT

# The allowed host: a namespace, a veth pair, a small HTTP server.  The
# range must be unused here: a host that numbers a real network with it
# is left alone.
if [ -n "$(ip -o addr show to 198.51.100.0/24)" ] || ip route show 198.51.100.0/24 | grep -q .; then
	echo "fetch-csv.sh: 198.51.100.0/24 is in use on this host; not touching it" >&2
	exit 69
fi
ip netns add "$ns"
ip link add "$vh" type veth peer name "$vn"
ip link set "$vn" netns "$ns"
ip addr add 198.51.100.1/24 dev "$vh" && ip link set "$vh" up
ip -n "$ns" addr add 198.51.100.2/24 dev "$vn" && ip -n "$ns" link set "$vn" up
mkdir "$T/www"
printf 'city,population\nLyon,522250\nOslo,709037\nPorto,231800\n' > "$T/www/cities.csv"
ip netns exec "$ns" timeout 120 python3 -m http.server 8000 --bind 198.51.100.2 \
	--directory "$T/www" >/dev/null 2>&1 &
server=$!
echo "198.51.100.2 datasets.sbx-example $mark" >> /etc/hosts

# The catalog: sbx's, plus a fetch profile for that host (a documentation
# address, so allow_cidrs names it), which the shell profile lists.
cp -r "$src" "$T/policy"
mkdir -p "$T/policy/fetch"
cat > "$T/policy/fetch/example-local.json" <<JSON
{
	"description": "the example's dataset host, in its own network namespace",
	"kind": "fetch",
	"allow": [{ "host": "datasets.sbx-example", "ports": [8000] }],
	"schemes": ["https", "http"],
	"allow_cidrs": ["198.51.100.2/32"],
	"max_bytes": 1048576,
	"timeout_seconds": 10
}
JSON
jq '.fetch_profiles = ["example-local"]' "$src/profiles/shell.json" > "$T/policy/profiles/shell.json"
chmod -R a+rX "$T"
for _ in $(seq 50); do
	ip netns exec "$ns" python3 -c 'import socket; socket.create_connection(("198.51.100.2", 8000), 1)' \
		2>/dev/null && break
	sleep 0.1
done

"$SBX" run -q --policy "$T/policy" --artifacts "$T/out" "$here/fetch-job.json" > "$T/manifest.json" || true
jq -c '{status, reason_code, inputs}' "$T/manifest.json"
cat "$T/out/.sbx/stdout" 2>/dev/null || true
