#!/bin/sh
# make bench: the overhead of `sbx run` over the bare interpreter, compared
# in the same interleaved run against bubblewrap doing the same, plus the
# costs that the issues ask to watch, and runs born from a template beside
# cold ones.  Not a test: it prints numbers.
# `make bench BENCH_BASE=../old-build` adds an older sbx to the same rounds;
# BENCH_RUNS (40) sets the rounds, BENCH_TARGETS_ONLY=1 prints only the
# issue's four ratios and what they are computed from.
set -eu
B=${SBX_BUILDDIR:?}
S=${SBX_SRCDIR:?}
RUNS=${BENCH_RUNS:-40}
SBX="$B/sbx"
BR="$B/tests/bench/bench-run"
command -v bwrap >/dev/null || { echo "bench: bwrap is missing (tools/install-deps test)"; exit 1; }

W=$(mktemp -d /tmp/sbx-bench.XXXXXX)
# The prepared state is under it, and root's sandboxes (a host uid of
# their own) must be able to reach it.
chmod 0755 "$W"
# The state dir on tmpfs, as /run (or $XDG_RUNTIME_DIR) is on a production
# host: on a disk file system its small writes and renames cost ~2.5 ms.
STATE=$(mktemp -d /dev/shm/sbx-bench-state.XXXXXX 2>/dev/null || echo "$W/state")
# Prepared state is trusted only where no directory on the way is
# writable by others (sbx-policy(5)): not below /tmp.  /var/lib as root,
# else the build tree.
PREP_BASE=/var/lib
[ -w "$PREP_BASE" ] || PREP_BASE=$B
PREP=$(mktemp -d "$PREP_BASE/sbx-bench-prepared.XXXXXX")
chmod 0755 "$PREP"
trap 'rm -rf "$W" "$STATE" "$PREP"' EXIT
mkdir -p "$W/store" "$STATE"
chmod 0700 "$STATE"
printf '{"state_dir":"%s","prepared_dir":"%s"}\n' "$STATE" "$PREP/prepared" > "$W/config.json"
echo "state dir: $STATE ($(stat -f -c %T "$STATE"))"
# configure --enable-static-libs links the distribution's libraries into
# sbx; the default links them dynamically.  Compare builds of both.
if ldd "$SBX" 2>/dev/null | grep -q 'libnettle\.so'; then
	echo "sbx: libraries linked dynamically (the default)"
else
	echo "sbx: libraries linked statically (--enable-static-libs)"
fi
"$SBX" keygen -o "$W/key" 2>/dev/null
# python-analysis runs only once prepared (its matplotlib font cache).
"$SBX" prepare -q --config "$W/config.json" --policy "$S/policy" >/dev/null
printf '{"runtime_profile":"shell","code":"true"}\n' > "$W/true.json"
printf '{"runtime_profile":"python-analysis","code":"pass"}\n' > "$W/py.json"
# 64 small outputs (32 CSV, 32 text): what validation costs per file.
printf '{"runtime_profile":"shell","code":"for i in $(seq 32); do printf \\"a,b\\\\n%%s,2\\\\n\\" $i > /work/out/t$i.csv; echo line $i > /work/out/n$i.txt; done"}\n' > "$W/outs64.json"
cd "$W"

SBXRUN="$SBX run -q --config $W/config.json --policy $S/policy --key $W/key --store $W/store"
# BENCH_BASE=DIR: an older build tree of sbx, run in the same interleaved
# rounds (with its own catalog, BENCH_BASE_POLICY), so that a regression
# shows as a ratio against it rather than against a number from another day.
BASE_TRUE= BASE_PY= BASE_OUTS=
if [ -n "${BENCH_BASE:-}" ]; then
	# Its own config: a build older than prepared state knows no
	# prepared_dir; one that knows it gets its own, prepared by itself.
	if "$BENCH_BASE/sbx" prepare --help >/dev/null 2>&1; then
		printf '{"state_dir":"%s","prepared_dir":"%s"}\n' "$STATE" "$PREP/prepared-base" \
			> "$W/config-base.json"
		"$BENCH_BASE/sbx" prepare -q --config "$W/config-base.json" \
			--policy "${BENCH_BASE_POLICY:-$S/policy}" >/dev/null
	else
		printf '{"state_dir":"%s"}\n' "$STATE" > "$W/config-base.json"
	fi
	BASERUN="$BENCH_BASE/sbx run -q --config $W/config-base.json --policy ${BENCH_BASE_POLICY:-$S/policy} --key $W/key --store $W/store"
	BASE_TRUE="base=$BASERUN $W/true.json"
	BASE_PY="py-base=$BASERUN $W/py.json"
	BASE_OUTS="outs64-base=$BASERUN $W/outs64.json"
fi
# bubblewrap with the mounts the shell profile gets, all namespaces.
BWRAP="/usr/bin/bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr \
--symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
--ro-bind /etc/ld.so.cache /etc/ld.so.cache --proc /proc --dev /dev --tmpfs /tmp --tmpfs /work \
--chdir /work"

# The README's example job (examples/chart-job.json: a CSV into totals and
# a matplotlib PNG), in sbx and bare.  Bare runs the same code with the
# paths moved under $W and a matplotlib cache that the warm-up rounds fill
# (the warm cache a user's machine has); readme-bare-cold gives each run a
# fresh MPLCONFIGDIR, as the profile does today until its prepared font
# cache exists, to show how much of the difference is that cache.
R=$W/readme
mkdir -p "$R/in" "$R/out" "$R/mpl" "$W/store/$(id -un)"
cp "$S/examples/sales.csv" "$R/in/sales.csv"
cp "$S/examples/sales.csv" "$W/store/$(id -un)/sales.csv"
jq -r .code "$S/examples/chart-job.json" |
	sed -e "s#/work/in/#$R/in/#g" -e "s#/work/out/#$R/out/#g" > "$R/chart.py"
cat > "$R/cold.sh" <<SH
d=\$(mktemp -d "$R/mpl-cold.XXXXXX") && MPLCONFIGDIR=\$d /usr/bin/python3 -I "$R/chart.py"; r=\$?; rm -rf "\$d"; exit \$r
SH
BASE_README=
[ -n "${BENCH_BASE:-}" ] && BASE_README="base-readme=$BASERUN $S/examples/chart-job.json"

# Runs born from python-analysis's template (sbx(1), TEMPLATES): one
# started before the rounds, so that every template row is a clone of it;
# the cold rows ask for --no-template.  A template run's init and payload
# are the template's children, not sbx's, so bench-run's CPU column holds
# only the broker's part: the run cgroup's CPU (the manifest's timing) and
# the template's own CPU for each clone are added below.
TPL_OPTS="--config $W/config.json --policy $S/policy"
"$SBX" template start $TPL_OPTS --profile python-analysis >/dev/null ||
	{ echo "bench: sbx template start python-analysis failed"; exit 1; }
tpl_pid() { "$SBX" template status $TPL_OPTS --json 2>/dev/null |
	jq -r '[.. | objects | select(.profile? == "python-analysis") | .pid? | numbers][0] // empty'; }
# utime + stime of the template process, in ms.
tpl_cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) * 1000 / hz }' "/proc/$1/stat" 2>/dev/null; }
trap '"$SBX" template stop $TPL_OPTS >/dev/null 2>&1; rm -rf "$W" "$STATE" "$PREP"' EXIT
TPID=$(tpl_pid)
[ -n "$TPID" ] || { echo "bench: no template runs after sbx template start"; exit 1; }
TPL_CPU0=$(tpl_cpu_ms "$TPID")

# One interleaved run for everything the targets compare, so that each
# ratio's two sides saw the same load.  bwrap first: the ratio column is
# against it.  CPU is the whole process tree's (bench-run reaps what
# bwrap's outer process leaves to it); "both" targets hold for wall and
# CPU alike.
echo "== trivial job, python3 -c pass and the README example ($RUNS rounds, interleaved)"
rounds_rc=0
MPLBACKEND=Agg MPLCONFIGDIR=$R/mpl "$BR" -n "$RUNS" -o "$W/rounds" \
	"bwrap=$BWRAP /bin/sh -c true" \
	"sbx=$SBXRUN $W/true.json" ${BASE_TRUE:+"$BASE_TRUE"} \
	"bare=/bin/true" \
	"py-bare=/usr/bin/python3 -I -c pass" \
	"py-bwrap=$BWRAP /usr/bin/python3 -I -c pass" \
	"py-sbx=$SBXRUN --no-template $W/py.json" ${BASE_PY:+"$BASE_PY"} \
	"py-tpl=$SBXRUN $W/py.json" \
	"readme-bare=/usr/bin/python3 -I $R/chart.py" \
	"readme-bare-cold=/bin/sh $R/cold.sh" \
	"readme-sbx=$SBXRUN --no-template $S/examples/chart-job.json" ${BASE_README:+"$BASE_README"} \
	"readme-tpl=$SBXRUN $S/examples/chart-job.json" \
	"outs64-sbx=$SBXRUN $W/outs64.json" ${BASE_OUTS:+"$BASE_OUTS"} || rounds_rc=$?
# The template's CPU per clone: what it spent over the rounds (warm-up
# included) over the template runs it made, if it is the same process.
TPL_CLONE_MS=
if [ "$(tpl_pid)" = "$TPID" ]; then
	TPL_CLONE_MS=$(awk -v a="$TPL_CPU0" -v b="$(tpl_cpu_ms "$TPID")" -v n=$((2 * (RUNS + 3))) \
		'BEGIN { printf "%.2f", (b - a) / n }')
fi
# The run cgroup's CPU of template runs (their init and payload), median
# of ten more, from the manifests.
tpl_cgroup_cpu() {
	for i in $(seq 10); do $SBXRUN "$1" 2>/dev/null; done |
		jq -s 'map(select(.timing.start == "template") | .timing.cpu_user_ms + .timing.cpu_system_ms) | sort |
			if length == 10 then .[5] else "none" end'
}
PY_TPL_CG=$(tpl_cgroup_cpu "$W/py.json")
README_TPL_CG=$(tpl_cgroup_cpu "$S/examples/chart-job.json")

# target LABEL NAME BASE METRIC MAX: the ratios NAME/BASE of the median
# wall and CPU times, and whether METRIC's (wall, cpu, or both) is within
# MAX (METRIC -: no target, the ratios only).
target() {
	awk -v label="$1" -v a="$2" -v b="$3" -v metric="$4" -v max="$5" '
		{ wall[$1] = $2; cpu[$1] = $4 }
		END {
			if (!(a in wall) || !(b in wall) || wall[b] <= 0 || cpu[b] <= 0) {
				printf "%-34s no figures\n", label; exit
			}
			rw = wall[a] / wall[b]; rc = cpu[a] / cpu[b]
			r = metric == "cpu" ? rc : metric == "wall" ? rw : (rw > rc ? rw : rc)
			printf "%-36s wall %8.2f / %8.2f ms = %5.2fx   CPU %8.2f / %8.2f ms = %5.2fx",
				label, wall[a], wall[b], rw, cpu[a], cpu[b], rc
			if (metric == "-")
				printf "\n"
			else
				printf "   target %s <= %.2fx: %s\n", metric, max, r <= max ? "met" : "NOT met"
		}' "$W/rounds"
}
echo
echo "== the targets (medians of the rounds above)"
target "trivial run, CPU, sbx/bwrap" sbx bwrap cpu 1.5
target "trivial run, wall, sbx/bwrap" sbx bwrap wall 1.0
target "python3 -c pass, sbx/bare" py-sbx py-bare both 1.25
target "README example, sbx/bare (warm)" readme-sbx readme-bare both 1.10
target "  for scale: bare, cache cold/warm" readme-bare-cold readme-bare - 0
# tcpu LABEL NAME BASE CGROUP_MS MAX: NAME's CPU with the run cgroup's and
# the template's per-clone CPU added, over BASE's, within MAX.
tcpu() {
	awk -v label="$1" -v a="$2" -v b="$3" -v cg="$4" -v cl="${TPL_CLONE_MS:-none}" -v max="$5" '
		{ cpu[$1] = $4 }
		END {
			if (!(a in cpu) || !(b in cpu) || cg == "none" || cl == "none" || cpu[b] <= 0) {
				printf "%-36s no figures (cgroup %s, clone %s)\n", label, cg, cl; exit
			}
			t = cpu[a] + cg + cl
			printf "%-36s CPU %.2f broker + %.2f run cgroup + %.2f template = %.2f / %.2f ms = %5.2fx",
				label, cpu[a], cg, cl, t, cpu[b], t / cpu[b]
			if (max == "-")
				printf "\n"
			else
				printf "   target cpu <= %.2fx: %s\n", max, ((t / cpu[b]) <= max) ? "met" : "NOT met"
		}' "$W/rounds"
}
target "README example, template/bare, wall" readme-tpl readme-bare wall 0.5
tcpu "README example, template/bare, CPU" readme-tpl readme-bare "$README_TPL_CG" 0.5
target "README example, template/cold sbx" readme-tpl readme-sbx wall 1.0
target "python3 -c pass, template/bare, wall" py-tpl py-bare - 0
tcpu "python3 -c pass, template/bare, CPU" py-tpl py-bare "$PY_TPL_CG" -
if [ -n "${BENCH_BASE:-}" ]; then
	# Against the older build: no target, below 1 is better.
	target "trivial run, sbx/base" sbx base - 0
	target "python3 -c pass, sbx/base" py-sbx py-base - 0
	target "README example, sbx/base" readme-sbx base-readme both 1.03
	target "64 small outputs, sbx/base" outs64-sbx outs64-base both 1.10
fi
target "  64 small outputs, sbx/trivial sbx" outs64-sbx sbx - 0
# A run that failed (the README job in sbx, say) fails the bench, after
# the figures.
[ "$rounds_rc" = 0 ] || { echo "bench: some runs failed (FAILED RUNS above)"; exit 1; }
# BENCH_TARGETS_ONLY=1: stop here (the figures a start-up change is
# judged by, without the minutes the rest takes).
[ -z "${BENCH_TARGETS_ONLY:-}" ] || exit 0

echo
echo "== the README example, 8 at once: template runs against cold runs (runs per second)"
# Interleaved rounds of 8 concurrent runs each way; admission lets 8 run.
printf '{"state_dir":"%s","prepared_dir":"%s","max_concurrent":8}\n' "$STATE" "$PREP/prepared" > "$W/config-c8.json"
C8RUN="$SBX run -q --config $W/config-c8.json --policy $S/policy --key $W/key --store $W/store --queue-timeout 60"
"$SBX" template start --config "$W/config-c8.json" --policy "$S/policy" --profile python-analysis >/dev/null || true
conc8() {
	local t0 t1 k bad=0
	t0=$(date +%s%N)
	for k in 1 2 3 4 5 6 7 8; do $C8RUN $1 "$S/examples/chart-job.json" > "$W/c8.$k.json" 2>/dev/null & done
	wait
	t1=$(date +%s%N)
	for k in 1 2 3 4 5 6 7 8; do
		[ "$(jq -r '.status + " " + .timing.start' "$W/c8.$k.json" 2>/dev/null)" = "succeeded $2" ] || bad=$((bad + 1))
	done
	echo "$((t1 - t0)) $bad"
}
c8_tpl=0 c8_cold=0 c8_bad=0
for round in 1 2 3 4 5; do
	set -- $(conc8 "" template); c8_tpl=$((c8_tpl + $1)); c8_bad=$((c8_bad + $2))
	set -- $(conc8 --no-template cold); c8_cold=$((c8_cold + $1)); c8_bad=$((c8_bad + $2))
done
awk -v t="$c8_tpl" -v c="$c8_cold" -v bad="$c8_bad" 'BEGIN {
	printf "template: 40 runs in %d ms: %.1f runs/s\ncold:     40 runs in %d ms: %.1f runs/s\n", t / 1e6, 40e9 / t, c / 1e6, 40e9 / c
	printf "throughput template/cold = %.2fx   target >= 3x: %s%s\n", c / t, ((c / t) >= 3) ? "met" : "NOT met",
		bad ? sprintf(" (%d runs failed or started otherwise than asked)", bad) : ""
}'
"$SBX" template stop --config "$W/config-c8.json" --policy "$S/policy" >/dev/null 2>&1

echo
echo "== private memory of the README example's run: template against cold"
# Inside: the payload's Private_Clean + Private_Dirty (smaps_rollup) at
# its end; outside: the run cgroup's peak (usage.peak_memory_bytes).
jq '.code += "\nwith open(\"/proc/self/smaps_rollup\") as f:\n    p = sum(int(l.split()[1]) for l in f if l.startswith((\"Private_Clean\", \"Private_Dirty\")))\nprint(\"private_kib\", p)\n"' \
	"$S/examples/chart-job.json" > "$W/readme-mem.json"
for how in template cold; do
	opt=; [ $how = cold ] && opt=--no-template
	for i in 1 2 3 4 5; do $SBXRUN $opt "$W/readme-mem.json" 2>/dev/null; done |
		jq -rs --arg how "$how" '
			def med: sort | .[length / 2 | floor];
			(map(.stdout.excerpt | capture("private_kib (?<k>[0-9]+)").k | tonumber) | med) as $p |
			(map(.usage.peak_memory_bytes) | med) as $c |
			"\($how): payload private \($p / 1024 * 100 | round / 100) MiB, run cgroup peak \($c / 1048576 * 100 | round / 100) MiB, started \(map(.timing.start) | unique | join(","))" +
			(if $how == "template" then "   target private <= 16 MiB: " + (if $p <= 16384 then "met" else "NOT met" end) else "" end)'
done

echo
echo "== start-up of the binary alone"
"$BR" -n "$RUNS" "true=/bin/true" "sbx --version=$SBX --version"

echo
echo "== where a trivial run's time goes (median of manifest timing, ms)"
for i in $(seq 10); do $SBXRUN "$W/true.json"; done 2>/dev/null |
	jq -s '{startup_ms: (map(.timing.startup_ms) | sort | .[length/2|floor]),
		payload_wall_ms: (map(.timing.wall_ms) | sort | .[length/2|floor]),
		admitted_t_ms: (map(.events[] | select(.event=="admitted") | .t_ms) | sort | .[length/2|floor]),
		materialized_t_ms: (map(.events[] | select(.event=="materialized") | .t_ms) | sort | .[length/2|floor]),
		cleaned_t_ms: (map(.events[] | select(.event=="cleaned") | .t_ms) | sort | .[length/2|floor])}' -c

echo
echo "== the run's cgroup: set-up and teardown"
"$B/tests/bench/bench-cgroup" 30

echo
echo "== 8 concurrent trivial runs, runs per second"
start=$(date +%s%N)
n=0
for round in 1 2 3; do
	for k in 1 2 3 4 5 6 7 8; do $SBXRUN --queue-timeout 30 "$W/true.json" >/dev/null 2>&1 & done
	wait
	n=$((n + 8))
done
end=$(date +%s%N)
echo "$n runs in $(( (end - start) / 1000000 )) ms: $(( n * 1000000000 / (end - start) )) runs/s"

echo
echo "== sbx batch: 200 trivial jobs, max_concurrent 8, runs per second"
# Against GNU parallel running sbx run on the same jobs, 8 at once, with
# the same options (results in sbx-runs/RUN_ID, waiting for capacity);
# interleaved rounds, each ending with the number of manifests written.
mkdir -p "$W/batch"
for i in $(seq 200); do printf '{"runtime_profile":"shell","code":"echo %d"}\n' "$i" > "$W/batch/j$i.json"; done
printf '{"state_dir":"%s","max_concurrent":8,"results_dir":"%s"}\n' "$STATE" "$W/sbx-runs" > "$W/config8.json"
BOPTS="-q --config $W/config8.json --policy $S/policy --key $W/key --store $W/store"
rate() { awk -v n="$1" -v ns="$2" 'BEGIN { printf "%d runs in %d ms: %.1f runs/s", n, ns / 1e6, n * 1e9 / ns }'; }
for round in 1 2 3; do
	rm -rf "$W/batch.out" "$W/sbx-runs"
	t0=$(date +%s%N)
	$SBX batch $BOPTS --out "$W/batch.out" "$W/batch" > "$W/batch.lines" 2>/dev/null || true
	t1=$(date +%s%N)
	echo "round $round: sbx batch:          $(rate "$(wc -l < "$W/batch.lines")" $((t1 - t0)))"
	rm -rf "$W/sbx-runs"
	if command -v parallel >/dev/null; then
		t0=$(date +%s%N)
		ls "$W"/batch/*.json | parallel --will-cite -j 8 $SBX run $BOPTS --queue-timeout 86400 {} \
			> "$W/parallel.lines" 2>/dev/null || true
		t1=$(date +%s%N)
		echo "round $round: parallel + sbx run: $(rate "$(wc -l < "$W/parallel.lines")" $((t1 - t0)))"
		rm -rf "$W/sbx-runs"
	else
		echo "round $round: GNU parallel is missing (tools/install-deps test installs it)"
	fi
done

echo
echo "== collecting and validating 12 MB of outputs"
printf '{"runtime_profile":"shell","code":"head -c 12000000 /dev/zero | tr \\"\\\\\\\\0\\" a > /work/out/big.txt","limits":{"output_bytes":13000000}}\n' > "$W/out.json"
for i in 1 2 3 4 5; do $SBXRUN "$W/out.json" 2>/dev/null; done |
	jq -s -c '{collect_ms: (map((.events[] | select(.event=="validated") | .t_ms) - (.events[] | select(.event=="exited") | .t_ms)) | sort | .[length/2|floor]), bytes: .[0].usage.output_bytes, status: .[0].status}'

echo
echo "== the broker's peak RSS under the worst allowed JSON output"
# Validation runs in the broker, outside every cgroup, so its memory must
# not grow with the output: max RSS of sbx and what it waited for (the
# payload is coreutils, a few MiB), a trivial run as the baseline.
JSON_MIB=${BENCH_JSON_MIB:-64}
cat > "$W/json.sh" <<'SH'
d=$1; n=$2; open=; close=
while [ $d -gt 0 ]; do open="$open["; close="$close]"; d=$((d - 1)); done
{ printf %s "$open"; yes 0 | head -n "$n" | tr "\n" ,; printf "0%s" "$close"; } > /work/out/big.json
SH
# n zeros with commas fill the cap less the brackets.
n=$(( (JSON_MIB * 1048576 - 2 * 64 - 1) / 2 ))
for d in 1 64; do
	jq -n --rawfile c "$W/json.sh" --arg d "$d" --arg n "$n" --argjson b $((JSON_MIB * 1048576)) \
		'{runtime_profile: "shell", code: $c, args: [$d, $n], allowed_outputs: ["application/json"],
		  limits: {output_bytes: $b, workspace_mib: 1024, memory_mib: 256, wall_seconds: 300}}' > "$W/json$d.json"
	echo "depth $d: $($SBXRUN "$W/json$d.json" 2>/dev/null | jq -r '.status + ", " + (.artifacts[] | .status + " " + (.size|tostring) + " bytes")')"
done
"$BR" -n 3 -w 0 "trivial=$SBXRUN $W/true.json" "json-${JSON_MIB}MiB-flat=$SBXRUN $W/json1.json" \
	"json-${JSON_MIB}MiB-depth64=$SBXRUN $W/json64.json"

echo
echo "== egress proxy: connection set-up and bulk throughput (loopback server)"
# A server on this host's loopback, reachable through the proxy only
# because the bench catalog names it in allow_cidrs.  Set-up: connect to
# the proxy, CONNECT, 200 back, one byte echoed; bulk: 1 GiB through the
# tunnel.  The same client run directly on the host is the baseline.
cp -r "$S/policy" "$W/policy"
cat > "$W/netserver.py" <<'PY'
import socket, sys, threading
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(128)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
blk = b"x" * (1 << 20)
def serve(c):
    try:
        if c.recv(1) == b"B":
            for _ in range(1024):
                c.sendall(blk)
        else:
            c.sendall(b"!")
    finally:
        c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
python3 "$W/netserver.py" "$W/netport" &
NETSRV=$!
trap 'kill $NETSRV 2>/dev/null; "$SBX" template stop $TPL_OPTS >/dev/null 2>&1; rm -rf "$W" "$STATE" "$PREP"' EXIT
for i in $(seq 50); do [ -s "$W/netport" ] && break; sleep 0.1; done
NETPORT=$(cat "$W/netport")
printf '{"description":"bench","kind":"egress","allow":[{"host":"127.0.0.1","ports":[%s]}],"allow_cidrs":["127.0.0.1/32"]}\n' \
	"$NETPORT" > "$W/policy/network/bench.json"
jq '.network_profiles += ["bench"]' "$S/policy/profiles/python-analysis.json" > "$W/policy/profiles/python-analysis.json"
"$SBX" prepare -q --config "$W/config.json" --policy "$W/policy" python-analysis >/dev/null
cat > "$W/netclient.py" <<PY
import socket, statistics, sys, time
PORT, VIA_PROXY = $NETPORT, len(sys.argv) < 2
def conn():
    if not VIA_PROXY:
        return socket.create_connection(("127.0.0.1", PORT))
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (PORT, PORT))
    buf = b""
    while not buf.endswith(b"\r\n\r\n"):
        buf += s.recv(1)
    assert buf.startswith(b"HTTP/1.1 200"), buf
    return s
ts = []
for _ in range(200):
    t0 = time.perf_counter()
    s = conn(); s.sendall(b"P"); assert s.recv(1) == b"!"; s.close()
    ts.append((time.perf_counter() - t0) * 1000)
s = conn(); s.sendall(b"B")
buf = bytearray(1 << 20); n = 0; t0 = time.perf_counter()
while True:
    k = s.recv_into(buf)
    if not k: break
    n += k
dt = time.perf_counter() - t0
print("setup_median_ms=%.3f setup_p90_ms=%.3f bulk_bytes=%d bulk_MBps=%.0f" %
      (statistics.median(ts), sorted(ts)[int(len(ts) * 0.9)], n, n / dt / 1e6))
PY
echo "direct:        $(python3 "$W/netclient.py" direct)"
jq -n --rawfile c "$W/netclient.py" '{runtime_profile: "python-analysis", network_profile: "bench", code: $c}' > "$W/net.json"
$SBX run -q --config "$W/config.json" --policy "$W/policy" --key "$W/key" --store "$W/store" "$W/net.json" 2>/dev/null |
	jq -r '"through proxy: " + (.stdout.excerpt | gsub("\n|\ufffd"; "")) + " (status " + .status + ", connections " + (.network.connections_allowed|tostring) + ")"'

echo
echo "== an output contract on a 12 MB CSV, against its validation"
"$B/tests/bench/bench-contract" 15
echo "== two column patterns on the same CSV: each cell is charged what its match did"
"$B/tests/bench/bench-contract" 15 '{"t.csv": {"columns": {"region": {"pattern": "^region-[0-9]+$"},
	"date": {"pattern": "[0-9]{4}-[0-9]{2}-[0-9]{2}"}}}}'
