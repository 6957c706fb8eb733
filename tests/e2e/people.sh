#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# people.sh - sbx as its four kinds of users meet it, each with only the
# environment that user really has (env -i: cron's PATH=/usr/bin:/bin and
# HOME; no --config, --key or --store: the user's ~/.config/sbx/sbx.json,
# or for root $SBX_CONFIG, which stands in for the system file):
#
#  - a person at a terminal (script(1), a real pty): the python-analysis
#    one-liner with -i data=./x.csv shows the program's output and a
#    one-line summary, leaves the working directory as it was, and keeps a
#    manifest in the results area that sbx verify --artifacts accepts; a
#    failing run's traceback (over 2 KiB) shows its last line, the
#    exception, on the terminal and in the manifest's excerpt; a producer
#    piped into sbx run --stdin shows the result; a small sbx batch shows
#    its progress line on stderr, and keeps its manifests in ./sbx-batch
#    rather than printing them on the terminal;
#  - a shell pipeline: producer | sbx run --attach --stdin | consumer, and
#    the manifest on stdout through jq when not attached;
#  - cron (sh -c in HOME, stdin /dev/null, what it would mail = stdout and
#    stderr): the program's output when attached, the JSON line when not,
#    a batch's manifests and summary, and sbx check names the user's
#    config file it read;
#  - a Python back end (subprocess.run): the manifest parsed from stdout,
#    and every --json command's output (check, profiles, run --dry-run,
#    verify, gc, ps and cancel of a live run) parsed and checked against
#    its schema in schema/.
#
# As root and as the unprivileged test user.  tests/e2e/attach.sh,
# local.sh and batch-progress.sh test each feature in depth; this test is
# the person's view across the contexts.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need script timeout sha256sum

# The config takes absolute paths in normal form only.
POL=$(realpath "$SBX_SRCDIR/policy")
sha() { sha256sum < "$1" | cut -d' ' -f1; }

# The python-analysis scenarios: a table read with pandas from a local
# input or from stdin, and a traceback of 40 frames (about 3 KiB).
CSV=$'region,total\nnorth,12.5\nsouth,30\n'
SUM_FILE='import pandas as pd
d = pd.read_csv("/work/in/data")
print(d.to_string(index=False))
print("total", d.total.sum())'
SUM_STDIN='import sys, pandas as pd
d = pd.read_csv(sys.stdin)
for r in d.itertuples():
    print(r.region.upper(), r.total)'
TRACEBACK=$(python3 -c 'print("\n".join(f"def f{i}(): return f{i+1}()" for i in range(40)) + "\ndef f40(): return 1/0\nf0()")')
EXC='ZeroDivisionError: division by zero'

# pfx DIR [VAR=VALUE...]: PFX, the prefix that runs a command as the
# mode's identity in DIR with a person's environment and nothing else.
# SBX_LIBEXECDIR finds sbx-init in the build tree, as an installed sbx
# finds it in its libexec directory.
pfx() {
	local dir=$1; shift
	PFX=()
	[ -n "$CG_LAUNCH" ] && PFX=(sh -c 'echo $$ > "$0" && exec "$@"' "$CG_LAUNCH")
	[ "$MODE" = user ] && PFX+=(runuser -u "$SBX_TEST_USER" --)
	PFX+=(env -i -C "$dir" PATH=/usr/bin:/bin HOME="$M/home" SBX_LIBEXECDIR="$SBX_BUILDDIR")
	[ "$MODE" = root ] && PFX+=(SBX_CONFIG="$M/config.json")
	PFX+=("$@")
}
# q WORD...: the words quoted for any POSIX sh (cron's /bin/sh is dash,
# which has no $'...').
q() { local w; for w; do printf "'%s' " "${w//\'/\'\\\'\'}"; done; }

# on_tty LOG DIR SHELL-LINE: the line run by bash on a fresh pty (the
# mode's prefix is for the caller to put in it); what the terminal showed,
# CR LF made LF and script's own header and footer left out, in LOG.
on_tty() {
	local log=$1 dir=$2 line=$3
	(cd "$dir" && SHELL=/bin/bash timeout -s KILL 120 script -qefc "$line" "$log.raw") </dev/null >/dev/null 2>&1
	RC=$?
	tr -d '\r' < "$log.raw" | sed '/^Script started on /d; /^Script done on /d' | sed '${/^$/d}' > "$log"
}

# cron_job MAIL LINE: LINE as cron runs a crontab line: sh -c in HOME,
# cron's environment, stdin /dev/null; stdout and stderr together in MAIL,
# which is what cron would mail.
cron_job() {
	local mail=$1 line=$2
	pfx "$M/home" SHELL=/bin/sh LOGNAME="$PRINCIPAL"
	timeout -s KILL 120 "${PFX[@]}" /bin/sh -c "$line" </dev/null >"$mail" 2>&1
	RC=$?
}

# summary_manifest LOG: the manifest file the one-line summary in LOG
# names (empty if there is no such line, or more than one).
summary_manifest() {
	local s
	s=$(grep -E '^sbx: [a-z ]+ (\(.*\) )?in [0-9.]+s: .*; manifest in /.*/\.sbx/manifest\.json$' "$1")
	[ "$(printf '%s\n' "$s" | grep -c .)" = 1 ] || return 0
	printf '%s\n' "${s##*; manifest in }"
}
# in_area FILE: FILE is the manifest of a run in the mode's results area.
in_area() { [ -n "$1" ] && [ "$1" = "$AREA/$(jq -r .run_id "$1")/.sbx/manifest.json" ]; }
listing() { (cd "$1" && find . | sort); }
newdir() { mkdir -p "$1"; [ "$MODE" = user ] && chown "$SBX_TEST_USER" "$1"; return 0; }
# batch_results_ok: each of the batch's three runs printed its number,
# kept in the results area.
batch_results_ok() {
	local i
	for i in 1 2 3; do
		[ "$(cat "$AREA/$(jq -r .run_id "$B/sbx-batch/j$i.json")/.sbx/stdout" 2>/dev/null)" = $i ] || return 1
	done
}
record_id() { jq -r '.run_id // empty' "$@" >> "$T/run-ids" 2>/dev/null; return 0; }

for mode in root user; do
	setup_mode $mode
	# The host configuration where each finds it: an ordinary user's in
	# ~/.config/sbx/sbx.json, with the catalog in it and the default key
	# and store; root's in $SBX_CONFIG (the system file stands in), with
	# its key and store, never anything of the host's own.
	if [ "$MODE" = root ]; then
		jq --arg p "$POL" --arg k "$KEY" --arg s "$M/store" '.policy = $p | .signing_key = $k | .store = $s' \
			"$M/config.json" > "$M/c.new" && mv "$M/c.new" "$M/config.json"
		AREA=$M/results
		CONFIG=$M/config.json
		PUB=$KEY.pub
		# A user file in root's HOME that root must not read.
		mkdir -p "$M/home/.config/sbx"
		echo '{"bogus": 1}' > "$M/home/.config/sbx/sbx.json"
	else
		jq --arg p "$POL" '.policy = $p' "$M/config.json" > "$M/c.new" && mv "$M/c.new" "$M/config.json"
		mkdir -p "$M/home/.config/sbx"
		cp "$M/config.json" "$M/home/.config/sbx/sbx.json"
		chown -R "$SBX_TEST_USER" "$M/home" "$M/config.json"
		AREA=$M/home/.local/state/sbx/runs
		CONFIG=$M/home/.config/sbx/sbx.json
		PUB=$M/home/.config/sbx/signing.key.pub
	fi
	ensure_prepared "$POL" python-analysis
	W=$M/cwd
	newdir "$W"
	printf '%s' "$CSV" > "$W/x.csv"
	chmod 0644 "$W/x.csv"
	before=$(listing "$W")

	# --- on a terminal -------------------------------------------------------
	pfx "$W"
	on_tty "$M/tty1.log" "$W" "$(q "${PFX[@]}" "$SBX" run -p python-analysis -i data=./x.csv -c "$SUM_FILE")"
	OUT=$(summary_manifest "$M/tty1.log")
	record_id "$OUT"
	[ "$MODE" = user ] && KEY=$M/home/.config/sbx/signing.key # signature_ok's key
	check "$mode: tty: the one-liner with -i data=./x.csv shows the program's output (exit 0)" \
		eval '[ "$RC" = 0 ] && grep -Eq "^ *north +12.5$" "$M/tty1.log" && grep -qx "total 42.5" "$M/tty1.log"'
	check "$mode: tty: a one-line summary last, naming the manifest in the results area; no JSON shown" \
		eval 'in_area "$OUT" && [ "$(tail -n 1 "$M/tty1.log")" = "sbx: succeeded in $(tail -n 1 "$M/tty1.log" | sed -n "s/^sbx: succeeded in \([0-9.]*s\): .*/\1/p"): no artifacts; manifest in $OUT" ] &&
		      ! grep -q "\"run_id\"" "$M/tty1.log"'
	check "$mode: tty: the working directory is as it was (x.csv alone)" test "$(listing "$W")" = "$before"
	check "$mode: tty: the manifest records the local input and its digest, signed" \
		eval '[ "$(jq -c ".inputs" "$OUT")" = "[{\"name\":\"data\",\"origin\":\"local\",\"sha256\":\"$(sha "$W/x.csv")\",\"size\":${#CSV}}]" ] &&
		      [ "$(jq -r .status "$OUT")" = succeeded ] && signature_ok'
	RD=${OUT%/.sbx/manifest.json}
	pfx "$W"
	"${PFX[@]}" "$SBX" verify --artifacts "$RD" "$OUT" > "$M/verify.out" 2>&1
	check "$mode: tty: sbx verify --artifacts of the results dir accepts it, with the default public key" \
		eval '[ $? = 0 ] && grep -q "manifest OK: signature valid" "$M/verify.out" && grep -q "default public key $PUB" "$M/verify.out"'

	# sbx built where its caller keeps things: a private (0700) directory
	# of the caller's own, as a clone in root's home is.  The helpers run
	# as another id, which cannot reach them by that path; the output is
	# validated all the same.
	P=$M/private
	rm -rf "$P" && mkdir -m 0700 "$P" && mkdir "$P/bin"
	cp "$SBX_BUILDDIR/sbx" "$SBX_BUILDDIR/sbx-init" "$SBX_BUILDDIR/sbx-validate" "$SBX_BUILDDIR/sbx-extract" "$P/bin/"
	[ "$MODE" = user ] && chown -R "$SBX_TEST_USER" "$P"
	pfx "$W"
	PFX=("${PFX[@]/#SBX_LIBEXECDIR=*/SBX_LIBEXECDIR=$P/bin}")
	on_tty "$M/priv.log" "$W" "$(q "${PFX[@]}" "$P/bin/sbx" run -p python-analysis --allow text/csv --artifacts "$P/art" \
		-c 'open("/work/out/t.csv", "w").write("a,b\n1,2\n")')"
	check "$mode: tty: sbx and its helpers in a private 0700 directory: the output is validated and promoted (exit 0)" \
		eval '[ "$RC" = 0 ] && [ "$(cat "$P/art/t.csv" 2>/dev/null)" = "$(printf "a,b\n1,2")" ] &&
		      [ "$(jq -r ".artifacts[0].status" "$P/art/.sbx/manifest.json")" = promoted ]'
	[ "$RC" = 0 ] || diag "private build: $(tail -n 3 "$M/priv.log")"
	rm -rf "$P"
	pfx "$W"

	on_tty "$M/tty2.log" "$W" "$(q "${PFX[@]}" "$SBX" run -p python-analysis -c "$TRACEBACK")"
	OUT=$(summary_manifest "$M/tty2.log")
	record_id "$OUT"
	check "$mode: tty: a failing run shows its traceback's last line, the exception, then the summary (exit 1)" \
		eval '[ "$RC" = 1 ] && grep -qx "Traceback (most recent call last):" "$M/tty2.log" &&
		      [ "$(tail -n 2 "$M/tty2.log" | head -n 1)" = "$EXC" ] &&
		      tail -n 1 "$M/tty2.log" | grep -q "^sbx: failed (payload exited with code 1) in "'
	check "$mode: tty: its manifest's stderr excerpt (of more than 2 KiB) ends with the exception too" \
		eval 'in_area "$OUT" && [ "$(jq -r .stderr.bytes "$OUT")" -gt 2048 ] &&
		      [ "$(jq -j .stderr.excerpt "$OUT" | tail -n 1)" = "$EXC" ] && [ "$(jq -r .stderr.excerpt_truncated "$OUT")" = true ]'

	on_tty "$M/tty3.log" "$W" "printf '$CSV' | $(q "${PFX[@]}" "$SBX" run --stdin -p python-analysis -c "$SUM_STDIN")"
	OUT=$(summary_manifest "$M/tty3.log")
	record_id "$OUT"
	check "$mode: tty: printf | sbx run --stdin shows the result, and counts stdin" \
		eval '[ "$RC" = 0 ] && [ "$(grep -v "^sbx: " "$M/tty3.log")" = "$(printf "NORTH 12.5\nSOUTH 30.0")" ] &&
		      in_area "$OUT" && [ "$(jq -r .stdin.bytes "$OUT")" = "${#CSV}" ]'

	# A small batch from a fresh directory, as a person types it: the
	# progress line on stderr, and the manifests kept in ./sbx-batch, not
	# printed on the terminal.
	mkdir -p "$M/jobs"
	for i in 1 2 3; do mkjob "$M/jobs/j$i.json" python-analysis "import time; time.sleep(1.5); print($i)"; done
	B=$M/bcwd
	newdir "$B"
	pfx "$B"
	on_tty "$M/batch.log" "$B" "$(q "${PFX[@]}" "$SBX" batch -j 2 "$M/jobs")"
	sed 's/\x1b\[K//g; s/\r/\n/g' "$M/batch.log.raw" > "$M/batch.lines"
	record_id "$B"/sbx-batch/*.json
	check "$mode: tty: sbx batch shows the progress line on stderr (done, running, failed, queued, elapsed, estimate)" \
		grep -Eq '^sbx: batch: [0-9] done, [0-9] running, 0 failed, [0-9] queued; 0:0[0-9], (no estimate yet|about [0-9]+:[0-9]{2} left)$' "$M/batch.lines"
	check "$mode: tty: then its summary, naming where the manifests are (exit 0)" \
		eval '[ "$RC" = 0 ] && grep -v -e "^$" -e "^Script done" "$M/batch.lines" | tail -n 1 | grep -q "^sbx: batch: 3 jobs, 3 run in .* 3 succeeded; manifests in sbx-batch/$"'
	check "$mode: tty: no manifest JSON on the terminal" eval '! grep -q "\"run_id\"" "$M/batch.log"'
	check "$mode: tty: the batch's results are in the results area; its directory has only ./sbx-batch's manifests" \
		eval '[ "$(listing "$B" | tr "\n" " ")" = ". ./sbx-batch ./sbx-batch/j1.json ./sbx-batch/j2.json ./sbx-batch/j3.json " ] &&
		      batch_results_ok'

	# --- a pipeline ------------------------------------------------------------
	pfx "$W"
	printf '%s' "$CSV" | timeout -s KILL 120 "${PFX[@]}" "$SBX" run --attach --stdin -p python-analysis \
		-c "$SUM_STDIN" 2> "$M/pipe1.err" | sort -r > "$M/pipe1.out"
	RC=${PIPESTATUS[1]}
	OUT=$(summary_manifest "$M/pipe1.err")
	record_id "$OUT"
	check "$mode: pipeline: printf | sbx run --attach --stdin | sort -r gets the program's output (exit 0)" \
		eval '[ "$RC" = 0 ] && [ "$(cat "$M/pipe1.out")" = "$(printf "SOUTH 30.0\nNORTH 12.5")" ]'
	check "$mode: pipeline: stderr has the summary alone; the manifest counts stdin's bytes and digest" \
		eval '[ "$(wc -l < "$M/pipe1.err")" = 1 ] && in_area "$OUT" && [ "$(jq -r .stdin.bytes "$OUT")" = "${#CSV}" ] &&
		      [ "$(jq -r .stdin.sha256 "$OUT")" = "$(printf "%s" "$CSV" | sha256sum | cut -d" " -f1)" ] && signature_ok'
	timeout -s KILL 120 "${PFX[@]}" "$SBX" run -p python-analysis -i data=./x.csv -c "$SUM_FILE" 2> "$M/pipe2.err" |
		tee "$M/pipe2.json" | jq -r .stdout.excerpt > "$M/pipe2.out"
	RC=${PIPESTATUS[0]}
	record_id "$M/pipe2.json"
	check "$mode: pipeline: not attached, sbx run | jq -r .stdout.excerpt gets the output from the manifest" \
		eval '[ "$RC" = 0 ] && grep -qx "total 42.5" "$M/pipe2.out" && [ "$(wc -l < "$M/pipe2.json")" = 1 ]'
	timeout -s KILL 120 "${PFX[@]}" "$SBX" run -p python-analysis -c "$TRACEBACK" 2> "$M/pipe3.err" |
		jq -j .stderr.excerpt | tail -n 1 > "$M/pipe3.out"
	RC=${PIPESTATUS[0]}
	check "$mode: pipeline: a failing run's excerpt, through jq, ends with the exception (exit 1)" \
		eval '[ "$RC" = 1 ] && [ "$(cat "$M/pipe3.out")" = "$EXC" ]'
	check "$mode: pipeline: the working directory is as it was" test "$(listing "$W")" = "$before"

	# --- cron ------------------------------------------------------------------
	home_before=$(ls -A "$M/home")
	cron_job "$M/mail1" "cd $(q "$W") && $(q "$SBX" run -p python-analysis -i data=./x.csv -c "$SUM_FILE")"
	record_id "$M/mail1"
	check "$mode: cron: not attached, the mail is the manifest's JSON line alone, with the output in it" \
		eval '[ "$RC" = 0 ] && [ "$(wc -l < "$M/mail1")" = 1 ] && [ "$(jq -r .status "$M/mail1")" = succeeded ] &&
		      jq -r .stdout.excerpt "$M/mail1" | grep -qx "total 42.5"'
	cron_job "$M/mail2" "cd $(q "$W") && $(q "$SBX" run --attach -p python-analysis -i data=./x.csv -c "$SUM_FILE")"
	OUT=$(summary_manifest "$M/mail2")
	record_id "$OUT"
	check "$mode: cron --attach: the mail is the program's output and the summary, no JSON" \
		eval '[ "$RC" = 0 ] && grep -qx "total 42.5" "$M/mail2" && in_area "$OUT" && [ "$(tail -n 1 "$M/mail2")" = "$(grep "^sbx: " "$M/mail2")" ] &&
		      ! grep -q "\"run_id\"" "$M/mail2"'
	cron_job "$M/mail3" "$(q "$SBX" run --attach -p python-analysis -c "$TRACEBACK")"
	OUT=$(summary_manifest "$M/mail3")
	record_id "$OUT"
	check "$mode: cron --attach: a failing run's mail has the exception, then the summary (exit 1)" \
		eval '[ "$RC" = 1 ] && [ "$(tail -n 2 "$M/mail3" | head -n 1)" = "$EXC" ] && in_area "$OUT"'
	cron_job "$M/mail4" "$(q "$SBX" run -p python-analysis -c "$TRACEBACK")"
	record_id "$M/mail4"
	check "$mode: cron: not attached, a failing run's mail is its JSON line alone, whose excerpt ends with the exception" \
		eval '[ "$RC" = 1 ] && [ "$(wc -l < "$M/mail4")" = 1 ] && [ "$(jq -r .status "$M/mail4")" = failed ] &&
		      [ "$(jq -j .stderr.excerpt "$M/mail4" | tail -n 1)" = "$EXC" ]'
	check "$mode: cron: nothing new in HOME, cron's working directory (no sbx-runs)" \
		test "$(ls -A "$M/home")" = "$home_before"
	B=$M/bcron
	newdir "$B"
	cron_job "$M/mail6" "cd $(q "$B") && $(q "$SBX" batch -j 2 "$M/jobs")"
	record_id "$B"/sbx-batch/*.json
	check "$mode: cron: sbx batch mails the 3 manifests, then the summary, no progress line (exit 0)" \
		eval '[ "$RC" = 0 ] && [ "$(head -n 3 "$M/mail6" | jq -r .status | sort -u)" = succeeded ] &&
		      [ "$(wc -l < "$M/mail6")" = 4 ] && tail -n 1 "$M/mail6" | grep -q "^sbx: batch: 3 jobs, 3 run in .* 3 succeeded$" &&
		      ! grep -q "queued;" "$M/mail6"'
	cron_job "$M/mail5" "$(q "$SBX" check)"
	if [ "$MODE" = user ]; then
		check "$mode: cron: sbx check reads ~/.config/sbx/sbx.json from cron's HOME and says so" \
			grep -q "^config  *ok: $CONFIG (the user's file)" "$M/mail5"
	else
		check "$mode: cron: sbx check names \$SBX_CONFIG's file; root reads no file in its HOME" \
			eval 'grep -q "^config  *ok: $CONFIG (\$SBX_CONFIG)" "$M/mail5" && ! grep -q bogus "$M/mail5"'
	fi

	# --- a Python back end ------------------------------------------------------
	pfx "$W" SBX="$SBX" SCHEMA="$SBX_SRCDIR/schema" AREA="$AREA" CONFIG="$CONFIG" PUB="$PUB"
	timeout -s KILL 180 "${PFX[@]}" /usr/bin/python3 - > "$M/py.out" 2> "$M/py.err" <<'EOF'
import hashlib, json, os, subprocess, sys, tempfile, time
from jsonschema import Draft202012Validator

SBX, SCHEMA, AREA = os.environ["SBX"], os.environ["SCHEMA"], os.environ["AREA"]
CSV = b"region,total\nnorth,12.5\nsouth,30\n"

def verdict(ok, what, detail=""):
    print(("ok" if ok else "not ok") + "\t" + what + ("" if ok else ": " + str(detail)[:600]))

def check(what, fn):
    try:
        verdict(bool(fn()), what, "false")
    except Exception as e:
        verdict(False, what, repr(e))

def schema_ok(name, value):
    with open(os.path.join(SCHEMA, name + ".schema.json")) as f:
        errs = [e.message for e in Draft202012Validator(json.load(f)).iter_errors(value)]
    if errs:
        raise AssertionError(name + ".schema.json: " + "; ".join(errs[:3]))
    return True

def sbx(*args, **kw):
    return subprocess.run([SBX, *args], capture_output=True, timeout=120, **kw)

def one_json(p):
    lines = p.stdout.decode().splitlines()
    assert len(lines) == 1, (p.returncode, p.stdout[:300], p.stderr[:300])
    return json.loads(lines[0])

SUM = 'import pandas as pd\nd = pd.read_csv("/work/in/data")\nprint("total", d.total.sum())'
p = sbx("run", "-p", "python-analysis", "-i", "data=./x.csv", "-c", SUM)
m = one_json(p)
check("python: sbx run's manifest parsed from stdout: succeeded, exit 0, the output in its excerpt",
      lambda: p.returncode == 0 and m["status"] == "succeeded" and m["stdout"]["excerpt"] == "total 42.5\n")
check("python: it records the local input with the digest the back end computes",
      lambda: m["inputs"] == [{"name": "data", "origin": "local", "size": len(CSV),
                               "sha256": hashlib.sha256(CSV).hexdigest()}])
check("python: the manifest matches manifest.schema.json", lambda: schema_ok("manifest", m))
check("python: stderr holds no JSON, and the working directory only x.csv",
      lambda: b"{" not in p.stderr and os.listdir(".") == ["x.csv"])
check("python: the captured stdout is in the results area, AREA/<run_id>/.sbx/stdout",
      lambda: open(os.path.join(AREA, m["run_id"], ".sbx", "stdout"), "rb").read() == b"total 42.5\n")
good, good_line = m, p.stdout

tb = "\n".join(f"def f{i}(): return f{i+1}()" for i in range(40)) + "\ndef f40(): return 1/0\nf0()"
p = sbx("run", "-p", "python-analysis", "-c", tb)
m = one_json(p)
check("python: a failing run: exit 1, status failed, exit.code 1",
      lambda: p.returncode == 1 and m["status"] == "failed" and m["exit"]["code"] == 1)
check("python: its stderr excerpt ends with the exception (excerpt_truncated, not truncated)",
      lambda: m["stderr"]["excerpt"].rstrip("\n").splitlines()[-1] == "ZeroDivisionError: division by zero"
      and m["stderr"]["excerpt_truncated"] is True and m["stderr"]["truncated"] is False and m["stderr"]["bytes"] > 2048)

p = sbx("run", "--stdin", "-p", "python-analysis", "-c",
        "import sys, pandas as pd\nprint(pd.read_csv(sys.stdin).total.sum())", input=CSV)
m = one_json(p)
check("python: input=... through --stdin: counted in the manifest, used by the program",
      lambda: p.returncode == 0 and m["stdin"]["bytes"] == len(CSV) and m["stdin"]["complete"] is True
      and m["stdin"]["sha256"] == hashlib.sha256(CSV).hexdigest() and m["stdout"]["excerpt"] == "42.5\n")

# Every command's --json, parsed, checked against its schema.
p = sbx("check", "--json")
c = one_json(p)
check("python: check --json: parsed, matches check.schema.json, names the config file read",
      lambda: schema_ok("check", c) and c["config"] == os.environ["CONFIG"] and p.returncode == (0 if c["ok"] else 69))
p = sbx("profiles", "--json")
c = one_json(p)
check("python: profiles --json: parsed, matches profiles.schema.json, lists python-analysis",
      lambda: p.returncode == 0 and schema_ok("profiles", c) and "python-analysis" in [x["name"] for x in c["profiles"]])
p = sbx("run", "--dry-run", "--json", "-p", "python-analysis", "-i", "data=./x.csv", "-c", SUM)
c = one_json(p)
check("python: run --dry-run --json: parsed, matches dry-run.schema.json, the profile and its limits in millicores",
      lambda: p.returncode == 0 and schema_ok("dry-run", c) and c["runtime_profile"] == "python-analysis"
      and "cpu_millicores" in c["limits"] and os.listdir(".") == ["x.csv"])
d = os.path.join(AREA, good["run_id"])
# The manifest as sbx printed it (its signature covers those bytes).
with tempfile.NamedTemporaryFile(suffix=".json") as f:
    f.write(good_line)
    f.flush()
    p = sbx("verify", "--json", "--pubkey", os.environ["PUB"], "--artifacts", d, f.name)
c = one_json(p)
check("python: verify --json --artifacts of the run's results: ok, signature valid, stdout checked",
      lambda: p.returncode == 0 and schema_ok("verify", c) and c["ok"] is True and c["signature_valid"] is True
      and c["run_id"] == good["run_id"] and c["streams_checked"])
p = sbx("gc", "--json")
c = one_json(p)
check("python: gc --json: parsed, matches gc.schema.json, ok",
      lambda: p.returncode == 0 and schema_ok("gc", c) and c["ok"] is True)

# ps and cancel of a live run the back end started.
live = subprocess.Popen([SBX, "run", "-p", "python-analysis", "-c", "import time\ntime.sleep(60)"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
rows, deadline = [], time.monotonic() + 30
while time.monotonic() < deadline:
    rows = one_json(sbx("ps", "--json"))
    # Root sees every user's runs on the host: only its own are the test's.
    mine = [r for r in rows if r["uid"] == os.geteuid()]
    if mine and mine[0]["state"] == "running":
        break
    time.sleep(0.2)
check("python: ps --json: parsed, matches ps.schema.json, shows the live run, running",
      lambda: schema_ok("ps", rows) and len(mine) == 1 and mine[0]["profile"] == "python-analysis"
      and mine[0]["state"] == "running")
rid = mine[0]["run_id"] if mine else "0" * 32
p = sbx("cancel", "--json", rid)
c = one_json(p)
check("python: cancel --json: parsed, matches cancel.schema.json, SIGTERM sent",
      lambda: p.returncode == 0 and schema_ok("cancel", c) and c == {"ok": True, "run_id": rid, "signal": "SIGTERM"})
try:
    out, _ = live.communicate(timeout=30)
    m = json.loads(out)
except Exception as e:
    live.kill(); live.wait(); m = {"error": repr(e)}
check("python: the cancelled run's manifest: status cancelled, exit 130",
      lambda: live.returncode == 130 and m["status"] == "cancelled" and m["run_id"] == rid)
print("ids\t" + " ".join([good["run_id"], rid]))
EOF
	rc=$?
	while IFS=$'\t' read -r verdict what; do
		case $verdict in
			ok) ok "$mode: $what" ;;
			ids) printf '%s\n' $what >> "$T/run-ids" ;;
			*) not_ok "$mode: $what" ;;
		esac
	done < "$M/py.out"
	check "$mode: python: the back end ran to its end (exit 0, nothing on stderr)" \
		eval '[ "$rc" = 0 ] && [ ! -s "$M/py.err" ] && grep -q "^ids" "$M/py.out"'
	[ -s "$M/py.err" ] && diag "python: $(head -c 1500 "$M/py.err")"

	check "$mode: nothing left behind" nothing_left
done
finish
