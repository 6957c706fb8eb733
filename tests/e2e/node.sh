#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# node.sh - the node profile: a second interpreter in the same profile
# format.  An ordinary job in plain JavaScript (a CSV read with fs, totals
# as JSON, a hand-written SVG bar chart), both promoted and validated; and
# the hostile probes that apply to it, written in JavaScript: only lo, a
# read-only root, what child_process may run, a memory hog, a worker and
# a process bomb, each ending cleanly with nothing left behind.
. "$SBX_SRCDIR/tests/e2e/lib.sh"
need node

artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }
lines() { jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))'; }
# want NAME VALUE: the payload printed "NAME VALUE".
want() {
	if grep -qxF "$1 $2" <<<"$got"; then ok "$mode: $1: $2"; else
		not_ok "$mode: $1: wanted '$2', got '$(grep "^$1 " <<<"$got" || echo 'no line')'"
	fi
}

# The ordinary job: totals per region, and a bar chart drawn by hand.
read -r -d '' CHART <<'JS'
const fs = require('fs');
const rows = fs.readFileSync('/work/in/x.csv', 'utf8').trim().split('\n').slice(1);
const totals = {};
for (const r of rows) {
	const [, region, amount] = r.split(',');
	totals[region] = (totals[region] || 0) + Number(amount);
}
fs.writeFileSync('/work/out/totals.json', JSON.stringify(totals, null, 2) + '\n');
const names = Object.keys(totals).sort();
const max = Math.max(...Object.values(totals));
const bars = names.map((n, i) => {
	const h = Math.round(totals[n] / max * 160);
	return `<rect x="${20 + i * 60}" y="${180 - h}" width="40" height="${h}" fill="steelblue"/>` +
		`<text x="${40 + i * 60}" y="195" text-anchor="middle" font-size="12">${n}</text>`;
}).join('\n');
fs.writeFileSync('/work/out/chart.svg',
	`<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${40 + names.length * 60}" height="200">\n${bars}\n</svg>\n`);
console.log('regions', names.length);
JS

# What ordinary node code finds, and what stays denied: "<name> <value>".
read -r -d '' PROBES <<'JS'
const fs = require('fs'), net = require('net'), os = require('os'), cp = require('child_process');
const t = (name, f) => {
	try { console.log(name, f()); } catch (e) { console.log(name, 'error', e.code || e.name); }
};
t('interfaces', () => Object.keys(os.networkInterfaces()).sort().join(','));
t('parallelism', () => os.availableParallelism());
t('homedir', () => os.homedir());
t('write_usr', () => { fs.writeFileSync('/usr/sbx-node', 'x'); return 'written'; });
t('write_etc', () => { fs.writeFileSync('/etc/sbx-node', 'x'); return 'written'; });
t('write_root', () => { fs.writeFileSync('/sbx-node', 'x'); return 'written'; });
t('write_tmp', () => { fs.writeFileSync('/tmp/x', 'x'); return 'written'; });
t('write_work', () => { fs.writeFileSync('/work/x', 'x'); return 'written'; });
t('spawn_sh', () => cp.execFileSync('/bin/sh', ['-c', 'echo ran'], { encoding: 'utf8' }).trim());
t('exec_written', () => {
	fs.writeFileSync('/tmp/script', '#!/bin/sh\necho ran\n', { mode: 0o755 });
	return cp.execFileSync('/tmp/script', { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
});
t('fork_node', () => {
	fs.writeFileSync('/tmp/child.js', 'console.log("child " + process.pid)');
	return cp.execFileSync(process.execPath, ['/tmp/child.js'], { encoding: 'utf8' }).trim().split(' ')[0];
});
// V8's compiled code lives in anonymous executable memory (its JIT):
// a hot function must leave such a mapping, under the default seccomp
// policy and a workspace without exec.
t('jit', () => {
	let s = 0;
	const f = (i) => (i * 31) ^ (s >>> 3);
	for (let i = 0; i < 5e6; i++) s = (s + f(i)) | 0;
	const anon = fs.readFileSync('/proc/self/maps', 'utf8').split('\n')
		.filter((l) => { const p = l.split(/\s+/); return p[1] && p[1][2] === 'x' && !p[5]; });
	return anon.length > 0 ? 'anon-exec' : 'none';
});
t('pty', () => { fs.openSync('/dev/ptmx', 'r+'); return 'opened'; });
const done = [];
const step = (name, v) => { console.log(name, v); done.push(name); if (done.length === 2) process.exit(0); };
// A TEST-NET-1 address: nothing routes there from a namespace with only lo.
const c = net.connect({ host: '192.0.2.1', port: 80, timeout: 5000 });
c.on('connect', () => step('connect_testnet', 'connected'));
c.on('timeout', () => { c.destroy(); step('connect_testnet', 'timeout'); });
c.on('error', (e) => step('connect_testnet', 'error ' + e.code));
// A listener on lo and a connection to it, both inside the sandbox.
const srv = net.createServer((s) => s.end('hello\n'));
srv.listen(0, '127.0.0.1', () => {
	const d = net.connect(srv.address().port, '127.0.0.1');
	let buf = '';
	d.on('data', (b) => { buf += b; });
	d.on('end', () => { srv.close(); step('loopback', buf.trim()); });
	d.on('error', (e) => step('loopback', 'error ' + e.code));
});
JS

# A memory hog off V8's heap: Buffers of 16 MiB, touched, kept; bounded by
# the count (2 GiB) should the limit not hold.
read -r -d '' HOG <<'JS'
const keep = [];
for (let i = 0; i < 128; i++) keep.push(Buffer.alloc(16 << 20, 1));
console.log('hog survived', keep.length);
JS

# The same on V8's own heap: arrays kept until the cgroup says no.  V8
# sizes its heap from the host's memory (it sees no cgroup), so the limit
# that ends this is memory_mib, not a V8 heap error.
read -r -d '' HEAPHOG <<'JS'
const keep = [];
for (let i = 0; i < 2500; i++) keep.push(new Array(1e5).fill(i + 0.5));
console.log('heap hog survived', keep.length);
JS

# A worker bomb: up to 200 worker threads, each parked; a thread refused
# is counted by its error code.
read -r -d '' WORKERS <<'JS'
const { Worker } = require('worker_threads');
let made = 0, failed = 0;
const codes = {};
function one() {
	if (made + failed >= 200) {
		console.log('workers made', made);
		console.log('workers failed', failed, Object.keys(codes).sort().join(','));
		process.exit(0);
	}
	let w;
	try {
		w = new Worker('setInterval(() => {}, 1000)', { eval: true });
	} catch (e) {
		failed++; codes[e.code] = 1; return setImmediate(one);
	}
	w.on('online', () => { made++; one(); });
	w.on('error', (e) => { failed++; codes[e.code] = 1; one(); });
}
one();
JS

# A process bomb: up to 100 children of /bin/sh that sleep, left running
# when node exits (the run must kill them).
read -r -d '' SPAWNS <<'JS'
const cp = require('child_process');
let made = 0, failed = 0;
const codes = {};
function one() {
	if (made + failed >= 100) {
		console.log('spawned', made);
		console.log('refused', failed, Object.keys(codes).sort().join(','));
		process.exit(0);
	}
	const c = cp.spawn('/bin/sh', ['-c', 'exec sleep 300'], { stdio: 'ignore', detached: true });
	c.on('spawn', () => { made++; c.unref(); one(); });
	c.on('error', (e) => { failed++; codes[e.code] = 1; one(); });
}
one();
JS

# A catalog whose node profile names an interpreter this host does not
# have (a host without the nodejs package): the run is refused before it
# starts, with a hint, and sbx check says so beforehand.
NONODE="$T/nonode"
cp -r "$SBX_SRCDIR/policy" "$NONODE"
jq '.argv[0] = "/usr/bin/sbx-no-such-node"' "$SBX_SRCDIR/policy/profiles/node.json" > "$NONODE/profiles/node.json"
chmod -R a+rX "$T"

bound_sbx 120

for mode in root user; do
	setup_mode $mode
	cp "$SBX_SRCDIR/examples/sales.csv" "$M/store/$PRINCIPAL/x.csv"
	[ $mode = user ] && chown -R "$SBX_TEST_USER" "$M/store"

	mkjob "$M/chart.json" node "$CHART" \
		'{input_handles: ["x.csv"], allowed_outputs: ["application/json", "image/svg+xml"], required_outputs: ["totals.json", "chart.svg"]}'
	sbx_run "$M/chart.json"
	expect_rc 0 "$mode: node CSV -> JSON + SVG job"
	check "$mode: the profile and interpreter are node's" \
		eval '[ "$(jqm .profile.name)" = node ] && [ "$(jqm .status)" = succeeded ] && signature_ok'
	check "$mode: totals.json promoted as application/json" \
		test "$(artifact totals.json '.status + " " + .media_type')" = "promoted application/json"
	check "$mode: chart.svg promoted as image/svg+xml, no flags" \
		test "$(artifact chart.svg '.status + " " + .media_type + " " + ((.flags // []) | join(","))')" = "promoted image/svg+xml "
	check "$mode: the totals are right" \
		eval '[ "$(jq -r .north "$ART/totals.json")" = 241.5 ] && [ "$(jq -r .east "$ART/totals.json")" = 450 ]'
	check "$mode: the chart has one bar per region" \
		eval '[ "$(grep -c "<rect " "$ART/chart.svg")" = "$(jq length "$ART/totals.json")" ]'
	check "$mode: the artifacts' digests match" \
		eval '[ "$(artifact chart.svg .sha256)" = "$(sha256sum "$ART/chart.svg" | cut -d" " -f1)" ]'
	check "$mode: nothing left behind" nothing_left

	POLICY=$NONODE sbx_run "$M/chart.json"
	expect_rc 69 "$mode: a profile whose interpreter is missing on the host is refused"
	check "$mode: the refusal names the interpreter and says what to do" \
		eval 'grep -q "argv\[0\]: /usr/bin/sbx-no-such-node: No such file" "$ERR" && grep -q "^sbx: Hint: .*install" "$ERR"'
	check "$mode: sbx check reports the profile, and the others are fine" \
		eval 'as_mode "$SBX" check --config "$M/config.json" --policy "$NONODE" > "$M/check.txt" 2>&1;
		      grep -q "^profile node  *missing: argv\[0\]: /usr/bin/sbx-no-such-node: No such file" "$M/check.txt" &&
		      grep -q "Hint: the profile runs /usr/bin/sbx-no-such-node, which is not on this host; install" "$M/check.txt" &&
		      ! grep -q "^profile python-analysis  *missing" "$M/check.txt"' || diag "$(cat "$M/check.txt")"
	check "$mode: nothing left behind" nothing_left

	mkjob "$M/probes.json" node "$PROBES" '{limits: {cpu_cores: 1}}'
	sbx_run "$M/probes.json"
	expect_rc 0 "$mode: node probes ran"
	got=$(lines)
	want interfaces lo
	want parallelism 1
	want homedir /work
	want write_usr "error EROFS"
	want write_etc "error EROFS"
	want write_root "error EROFS"
	want write_tmp written
	want write_work written
	# Host programs run (the default seccomp policy allows exec, Landlock
	# allows it in the binds); a file the job wrote does not: node's
	# workspace is noexec, as the shell profile's.
	want spawn_sh ran
	want exec_written "error EACCES"
	want fork_node child
	want jit anon-exec
	want pty "error ENOENT"
	want connect_testnet "error ENETUNREACH"
	want loopback hello
	check "$mode: nothing left behind" nothing_left

	mkjob "$M/hog.json" node "$HOG" '{limits: {memory_mib: 128}}'
	sbx_run "$M/hog.json"
	expect_rc 137 "$mode: Buffer memory hog"
	check "$mode: memory hog: limit_exceeded, reason memory, SIGKILL, signed" \
		eval '[ "$(jqm .status)" = limit_exceeded ] && [ "$(jqm .reason_code)" = memory_limit ] && [ "$(jqm .exit.signal)" = SIGKILL ] && signature_ok'
	check "$mode: memory hog: it did not survive" eval '! jqm .stdout.excerpt | grep -q survived'
	check "$mode: memory hog: nothing left behind" nothing_left

	mkjob "$M/heaphog.json" node "$HEAPHOG" '{limits: {memory_mib: 128}}'
	sbx_run "$M/heaphog.json"
	expect_rc 137 "$mode: V8 heap hog"
	check "$mode: heap hog: limit_exceeded, reason memory, SIGKILL, signed" \
		eval '[ "$(jqm .status)" = limit_exceeded ] && [ "$(jqm .reason_code)" = memory_limit ] && [ "$(jqm .exit.signal)" = SIGKILL ] && signature_ok'
	check "$mode: heap hog: nothing left behind" nothing_left

	mkjob "$M/workers.json" node "$WORKERS" '{limits: {pids: 32, memory_mib: 1024}}'
	sbx_run "$M/workers.json"
	expect_rc 0 "$mode: worker_threads bomb ends cleanly"
	got=$(lines)
	diag "$mode: workers: $(grep ^workers <<<"$got" | tr '\n' ' ') pids_peak $(jqm .usage.pids_peak)"
	check "$mode: worker bomb: bounded by pids (made fewer than 32, the rest refused)" \
		eval '[ "$(sed -n "s/^workers made //p" <<<"$got")" -lt 32 ] && grep -qx "workers failed [0-9]* ERR_WORKER_INIT_FAILED" <<<"$got"'
	check "$mode: worker bomb: pids_limit_hit, peak at most 32" \
		eval '[ "$(jqm .usage.pids_limit_hit)" = true ] && [ "$(jqm ".usage.pids_peak <= 32")" = true ] && [ "$(jqm .status)" = succeeded ]'
	check "$mode: worker bomb: nothing left behind" nothing_left

	mkjob "$M/spawns.json" node "$SPAWNS" '{limits: {pids: 32}}'
	sbx_run "$M/spawns.json"
	expect_rc 0 "$mode: child_process bomb ends cleanly"
	got=$(lines)
	diag "$mode: spawns: $(tr '\n' ' ' <<<"$got") pids_peak $(jqm .usage.pids_peak)"
	check "$mode: process bomb: bounded by pids, the rest EAGAIN" \
		eval '[ "$(sed -n "s/^spawned //p" <<<"$got")" -lt 32 ] && grep -qx "refused [0-9]* EAGAIN" <<<"$got"'
	check "$mode: process bomb: pids_limit_hit" test "$(jqm .usage.pids_limit_hit)" = true
	check "$mode: process bomb: the sleeping children are gone, nothing left behind" nothing_left
done

finish
