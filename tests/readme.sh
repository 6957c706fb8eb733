#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# readme.sh - the README's "Using it" block is a script that works: the
# fenced block under "## Using it" is taken from README.md itself and
# every line of it runs, in order, as written, with /bin/sh in a scratch
# working directory, with a person's environment (env -i: PATH with sbx
# on it, HOME, and for root $SBX_CONFIG standing in for the system file;
# an ordinary user's config is ~/.config/sbx/sbx.json) and the files its
# lines name: job.json (the README's example job), a store with
# sales.csv in ~/data/store/alice and in the default store, totals.py,
# x.csv, jobs/ for sbx batch.  The signing key is the default one,
# made on first use.  Two lines act on a run made elsewhere ("from
# another shell"): for them $RUN_ID is a run the test started, a live
# one for sbx ps and sbx cancel, a held one (partial_outputs "hold", cut
# short) for sbx promote.  Each line's exit status and one fact of its
# output are asserted; a line this test knows no assertion for is a
# failure, so that a new line in the block gets one here.
#
# As root and as the unprivileged test user.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need timeout awk

README=$SBX_SRCDIR/README.md
POL=$(realpath "$SBX_SRCDIR/policy")

# The block: the lines between the first ```sh after "## Using it" and
# the fence that closes it.
awk '/^## / { inside = ($0 == "## Using it") } inside && /^```sh$/ { body = 1; next }
	body && /^```$/ { exit } body && NF { print }' "$README" >"$T/block"
nlines=$(wc -l <"$T/block")
if [ "$nlines" -ge 10 ]; then ok "README.md: the \"Using it\" block has $nlines lines"; else
	not_ok "README.md: no \"## Using it\" section with a \`\`\`sh block of at least 10 lines (found $nlines)"
fi

# sbx on PATH, as an installed sbx would be; SBX_LIBEXECDIR finds its
# helpers in the build tree.
BIN=$T/bin
mkdir -p "$BIN"
ln -s "$SBX" "$BIN/sbx"
chmod -R a+rX "$T"

# own FILE...: the mode's user owns them.
own() { [ "$MODE" = user ] && chown -R "$SBX_TEST_USER" "$@"; return 0; }

# in_person DIR COMMAND...: COMMAND as the mode's identity in DIR, with
# the environment a person has and nothing else (RUN_ID when set).
in_person() {
	local dir=$1 pfx=()
	shift
	[ -n "$CG_LAUNCH" ] && pfx=(sh -c 'echo $$ > "$0" && exec "$@"' "$CG_LAUNCH")
	[ "$MODE" = user ] && pfx+=(runuser -u "$SBX_TEST_USER" --)
	pfx+=(env -i -C "$dir" PATH="$BIN:/usr/bin:/bin" HOME="$M/home" SBX_LIBEXECDIR="$SBX_BUILDDIR")
	[ "$MODE" = root ] && pfx+=(SBX_CONFIG="$M/config.json")
	[ -n "${RUN_ID:-}" ] && pfx+=(RUN_ID="$RUN_ID")
	"${pfx[@]}" "$@"
}

# sbx_below PID: the sbx process among PID's descendants (a process this
# test started).
sbx_below() {
	local c
	for c in $(children "$1"); do
		[ "$(cat /proc/"$c"/comm 2>/dev/null)" = sbx ] && { echo "$c"; return 0; }
		sbx_below "$c" && return 0
	done
	return 1
}

# A run started "from another shell": sbx run in the background, as the
# mode's user, with its manifest in $BG_OUT; BG_RUN is its run id once sbx
# ps lists it as running.  Found by its sbx's pid: root's sbx ps lists
# other users' runs too, which this test must not cancel.
start_live_run() {
	BG_OUT=$W/.live.json
	in_person "$W" timeout -s KILL 300 sbx run -p shell --limit wall_seconds=240 -c 'sleep 200' \
		>"$BG_OUT" 2>"$W/.live.err" &
	BG_PID=$!
	BG_RUN=
	local i pid=
	for i in $(seq 100); do
		[ -n "$pid" ] || pid=$(sbx_below "$BG_PID")
		[ -n "$pid" ] && BG_RUN=$(in_person "$W" sbx ps --json 2>/dev/null |
			jq -r --argjson p "$pid" '.[] | select(.pid == $p and .state == "running") | .run_id' | head -n1)
		[ -n "$BG_RUN" ] && return 0
		sleep 0.2
	done
	diag "the live run never showed in sbx ps: $(head -c 500 "$W/.live.err")"
}

# A run cut short whose totals.csv is held for review.
make_held_run() {
	printf '%s\n' '{"runtime_profile": "shell", "code": "printf \"region,total\\nnorth,1\\n\" > /work/out/totals.csv; sleep 30",
	  "partial_outputs": "hold", "allowed_outputs": ["text/csv"], "limits": {"wall_seconds": 1, "grace_seconds": 1}}' \
		>"$T/held-job.json"
	chmod 0644 "$T/held-job.json"
	in_person "$W" timeout -s KILL 60 sbx run "$T/held-job.json" >"$W/.held.json" 2>"$W/.held.err"
	HELD_RUN=$(jq -r '.run_id // empty' "$W/.held.json" 2>/dev/null)
	[ "$(jq -r '.artifacts[]? | select(.path == "totals.csv") | .status' "$W/.held.json" 2>/dev/null)" = held ] ||
		diag "the held run holds no totals.csv: $(head -c 500 "$W/.held.err") $(head -c 800 "$W/.held.json")"
}

# fact LINE OUT ERR: one line of the block's expected exit status
# (WANT) and whether one fact of its output holds (sets FACT, a
# description, and returns its truth).  Unknown lines: WANT=unknown.
fact() {
	local line=$1 out=$2 err=$3
	WANT=0
	case $line in
	"sbx run --store ~/data/store --principal alice job.json > manifest.json"*)
		FACT="manifest.json: succeeded, totals.csv and chart.png promoted"
		[ "$(jq -r '.status' "$W/manifest.json")" = succeeded ] &&
			[ "$(jq -r '[.artifacts[] | select(.status == "promoted") | .path] | sort | join(" ")' "$W/manifest.json")" = "chart.png totals.csv" ] ;;
	"sbx run -p shell -c 'echo hi; ls /work'"*)
		FACT="the manifest's stdout excerpt is hi, then a listing of /work with out in it"
		jq -r '.stdout.excerpt' "$out" >"$out.excerpt" &&
			[ "$(head -n1 "$out.excerpt")" = hi ] && grep -qx out "$out.excerpt" ;;
	"sbx run -p python-analysis -i sales.csv --allow text/csv -- totals.py"*)
		FACT="succeeded, totals.csv promoted, sales.csv an input"
		[ "$(jq -r '.status' "$out")" = succeeded ] &&
			[ "$(jq -r '.artifacts[] | select(.path == "totals.csv") | .status' "$out")" = promoted ] &&
			jq -e '[.inputs[] | tostring] | any(test("sales.csv"))' "$out" >/dev/null ;;
	"sbx run -p python-analysis -i data=./x.csv -c "*)
		FACT="pandas printed x.csv's rows (the stdout excerpt has north and 12.5)"
		jq -r '.stdout.excerpt' "$out" | grep -Eq 'north +12\.5' ;;
	"sbx run --dry-run job.json"*)
		FACT="the plan names python-analysis and the job's wall_seconds 60"
		grep -q 'python-analysis' "$out" && grep -Eq 'wall_seconds.* 60\b' "$out" ;;
	"sbx verify --pubkey ~/.config/sbx/signing.key.pub --artifacts "*)
		FACT="manifest OK, its artifacts checked against the results area"
		cat "$out" "$err" | grep -Eq '^sbx: manifest OK: signature valid; [1-9][0-9]* artifacts? .* match' ;;
	"sbx check"*)
		FACT="the catalog it read is valid: ok, with its three runtime profiles"
		cat "$out" "$err" | grep -Eq "^catalog +ok: $POL \(3 runtime, " ;;
	"sbx profiles"*)
		FACT="it lists python-analysis, shell and node"
		grep -q python-analysis "$out" && grep -qw shell "$out" && grep -qw node "$out" ;;
	"sbx ps"*)
		FACT="it lists the live run ${BG_RUN:-?}, running"
		[ -n "${BG_RUN:-}" ] && grep -E "^${BG_RUN:0:8}" "$out" | grep -qw running ;;
	"sbx cancel "*)
		FACT="the live run ends cancelled (130) with its manifest"
		local brc
		wait "$BG_PID"
		brc=$?
		[ "$brc" -eq 130 ] && [ "$(jq -r .status "$BG_OUT")" = cancelled ] ;;
	"sbx gc"*)
		FACT="it says what it reaped, removed and pruned, in one line"
		[ "$(cat "$out" "$err" | grep -Ec '^sbx: gc: reaped [0-9]+ runs?, removed [0-9]+ expired holds?, pruned [0-9]+ run results?, pruned [0-9]+ cached inputs?, cleaned up [0-9]+ exited templates?$')" = 1 ] ;;
	"sbx prepare"*)
		FACT="python-analysis's prepared state is current afterwards (sbx check)"
		in_person "$W" sbx check 2>&1 | grep -Eq '^prepared +ok: python-analysis' ;;
	"sbx batch --out results/ jobs/ > manifests.jsonl"*)
		FACT="manifests.jsonl: one manifest a job file, each succeeded"
		[ "$(wc -l <"$W/manifests.jsonl")" -eq 3 ] &&
			[ "$(jq -r .status "$W/manifests.jsonl" | sort -u)" = succeeded ] ;;
	"sbx promote \"\$RUN_ID\" totals.csv"*)
		FACT="the signed promote manifest lists totals.csv, delivered"
		grep -q totals.csv "$out" && jq -e '.signature' "$out" >/dev/null &&
			[ -n "$(find "$M/home/.local/state/sbx/runs/$HELD_RUN" -name totals.csv -path '*promoted*' 2>/dev/null)" ] ;;
	*)
		WANT=unknown FACT="no assertion for this line in tests/readme.sh"
		return 1 ;;
	esac
}

for mode in root user; do
	setup_mode $mode
	# The host config: an ordinary user's in ~/.config/sbx/sbx.json, root's
	# in $SBX_CONFIG (for /etc/sbx/sbx.json), with the catalog of the source
	# tree; the key and the store are the defaults.  Root's results go to
	# the same place in its HOME as a user's (the README's verify line
	# names it; root's default is /var/lib/sbx/runs, not the host's to fill).
	jq --arg p "$POL" --arg r "$M/home/.local/state/sbx/runs" \
		'.policy = $p | if has("results_dir") then .results_dir = $r else . end' \
		"$M/config.json" >"$M/c.new" && mv "$M/c.new" "$M/config.json"
	mkdir -p "$M/home/.config/sbx"
	[ "$MODE" = user ] && cp "$M/config.json" "$M/home/.config/sbx/sbx.json"
	# The lines' files.
	W=$M/cwd
	mkdir -p "$W/jobs" "$M/home/data/store/alice" "$M/home/.local/share/sbx/store/$PRINCIPAL"
	cp "$SBX_SRCDIR/examples/chart-job.json" "$W/job.json"
	cp "$SBX_SRCDIR/examples/sales.csv" "$M/home/data/store/alice/sales.csv"
	cp "$SBX_SRCDIR/examples/sales.csv" "$M/home/.local/share/sbx/store/$PRINCIPAL/sales.csv"
	cat >"$W/totals.py" <<'EOF'
import csv
totals = {}
with open("/work/in/sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["region"]] = totals.get(row["region"], 0.0) + float(row["amount"])
with open("/work/out/totals.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["region", "total"])
    for region, total in sorted(totals.items()):
        w.writerow([region, f"{total:.2f}"])
EOF
	printf 'region,total\nnorth,12.5\nsouth,30\n' >"$W/x.csv"
	for i in 1 2 3; do mkjob "$W/jobs/j$i.json" shell "echo $i"; done
	own "$M/home" "$W" "$M/config.json"
	chmod -R a+rX "$W"
	# python-analysis's prepared state, as make install leaves it.
	in_person "$W" sbx prepare python-analysis >/dev/null 2>"$M/prepare.err" ||
		diag "$mode: sbx prepare: $(head -c 500 "$M/prepare.err")"

	BG_RUN= BG_PID= HELD_RUN= k=0
	while IFS= read -r line; do
		k=$((k + 1))
		RUN_ID=
		case $line in
		"sbx ps"* | "sbx cancel"*)
			[ -n "$BG_RUN" ] || start_live_run
			RUN_ID=$BG_RUN ;;
		"sbx promote"*)
			[ -n "$HELD_RUN" ] || make_held_run
			RUN_ID=$HELD_RUN ;;
		esac
		o=$M/line.$k.out e=$M/line.$k.err
		in_person "$W" timeout -s KILL 240 /bin/sh -c "$line" </dev/null >"$o" 2>"$e"
		rc=$?
		for f in "$o" "$W/manifest.json" "$W/manifests.jsonl"; do
			jq -r '.run_id // empty' "$f" >>"$T/run-ids" 2>/dev/null
		done
		fact "$line" "$o" "$e"
		truth=$?
		# The line without its comment (two blanks and a #) for the
		# report, trailing blanks off.
		short=${line%%  #*}
		short=${short%"${short##*[! ]}"}
		if [ "$WANT" = unknown ]; then
			not_ok "$mode: line $k: $short: $FACT"
		elif [ "$rc" -eq "$WANT" ] && [ "$truth" -eq 0 ]; then
			ok "$mode: line $k: $short: exit $rc, $FACT"
		else
			not_ok "$mode: line $k: $short: exit $rc (wanted $WANT), $FACT: $([ "$truth" -eq 0 ] && echo holds || echo does not hold)"
			diag "stdout: $(head -c 1500 "$o")"
			diag "stderr: $(head -c 1500 "$e")"
		fi
	done <"$T/block"
	# A live run left over (its line missing or failed) is stopped here.
	if [ -n "$BG_PID" ] && kill -0 "$BG_PID" 2>/dev/null; then
		in_person "$W" sbx cancel "$BG_RUN" >/dev/null 2>&1
		wait "$BG_PID"
	fi
	for f in "$W/.live.json" "$W/.held.json"; do jq -r '.run_id // empty' "$f" >>"$T/run-ids" 2>/dev/null; done
	check "$mode: nothing left behind" nothing_left
done
finish
