#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# schemas.sh - the JSON Schemas of schema/ (draft 2020-12) describe what
# sbx really reads and writes, checked with python3-jsonschema:
#
#   - each schema is valid, and names the keys, limits, media types,
#     errno names and statuses the C sources do (tests/schemas.py source);
#   - every example job (examples/*.json) and every catalog file
#     (policy/) matches its schema, and broken ones do not;
#   - jobs that sbx's parser refuses as invalid (65) the job schema
#     refuses too, jobs the parser accepts the schema accepts, and the
#     few checks a schema cannot express are listed as the parser's alone;
#   - the manifests of real runs (succeeded, failed, timed out, over a
#     limit, refused, invalid, with promoted, rejected, partial, held and
#     discarded artifacts, through the egress proxy), as root and as an
#     unprivileged user, match manifest.schema.json, each with the exit
#     status its status goes with; broken manifests do not;
#   - when SBX_E2E_MANIFESTS names a file, every manifest the e2e suite
#     saved there (tests/e2e/lib.sh appends each one; make check-manifests)
#     matches too.
#
# Without python3-jsonschema the test fails (tools/install-deps test installs
# it); only a builder who is not root, without SBX_TEST_NO_SKIP=1, skips
# it, and skips the real runs, saying so.  Prints TAP.
set -u
: "${SBX_BUILDDIR:?}" "${SBX_SRCDIR:?}"
SCHEMA=$SBX_SRCDIR/schema

# The first python3 that has jsonschema: the one on PATH, else the
# system's, where python3-jsonschema installs it.
PY=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null 2>&1 &&
		"$p" -c 'from jsonschema import Draft202012Validator' 2>/dev/null; then
		PY=$(command -v "$p")
		break
	fi
done
if [ -z "$PY" ]; then
	if [ "$(id -u)" -eq 0 ] || [ "${SBX_TEST_NO_SKIP:-0}" = 1 ]; then
		echo "Bail out! python3-jsonschema (4.0 or later, for draft 2020-12) is not installed; tools/install-deps test installs it"
		exit 1
	fi
	echo "1..0 # SKIP python3-jsonschema is not installed (tools/install-deps test installs it)"
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	# The e2e harness: modes, sbx_run, the probe catalog, T and its cleanup.
	. "$SBX_SRCDIR/tests/e2e/lib.sh"
	ROOT=1
else
	ROOT=0
	SBX=$SBX_BUILDDIR/sbx
	tap_n=0 tap_failed=0
	ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
	not_ok() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $*"; }
	diag() { printf '# %s\n' "$*" | head -c 4000; echo; }
	finish() { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }
	command -v jq >/dev/null 2>&1 || { echo "Bail out! jq is not installed (tools/install-deps test installs it)"; exit 1; }
	T=$(mktemp -d "${TMPDIR:-/tmp}/sbx-schemas.XXXXXX") || exit 1
	trap 'rm -rf "$T"' EXIT
fi

# schemas ARGS...: run tests/schemas.py, one TAP line per line it prints.
schemas() {
	local verdict what
	"$PY" "$SBX_SRCDIR/tests/schemas.py" "$SCHEMA" "$@" >"$T/py.out" 2>"$T/py.err"
	while IFS=$'\t' read -r verdict what; do
		if [ "$verdict" = ok ]; then ok "$what"; else not_ok "$what"; fi
	done <"$T/py.out"
	if [ -s "$T/py.err" ]; then
		not_ok "schemas.py $1 wrote to stderr"
		sed 's/^/# /' "$T/py.err" | head -n 20
	fi
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $*"; }

# ---- the schemas themselves, and the sources they describe -------------------
schemas meta
schemas source "$SBX_SRCDIR"
schemas commands "$SBX_SRCDIR"

# ---- examples and the catalog ----------------------------------------------------
B=$T/batch
: >"$B"
# add valid|invalid SCHEMA FILE WHAT
add() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$B"; }
n_ex=0
for f in "$SBX_SRCDIR"/examples/*.json; do
	[ -e "$f" ] || continue
	add valid job "$f" "example job examples/${f##*/} matches job.schema.json"
	n_ex=$((n_ex + 1))
done
if [ "$n_ex" -gt 0 ]; then ok "examples/ has $n_ex example jobs"; else not_ok "no example job in examples/"; fi
for kind in profiles:profile network:network seccomp:seccomp fetch:fetch; do
	for f in "$SBX_SRCDIR/policy/${kind%%:*}"/*.json; do
		add valid "${kind#*:}" "$f" "catalog policy/${kind%%:*}/${f##*/} matches ${kind#*:}.schema.json"
	done
done

# Broken catalog files, each one thing that sbx's loader refuses too: a
# copy of the catalog with the file replaced makes `sbx profiles` exit 69.
C=$T/bad-catalog
mkdir -p "$C"
P=$SBX_SRCDIR/policy
loads() { "$SBX" profiles --policy "$1" >/dev/null 2>"$C/err"; }
if loads "$P"; then ok "sbx's loader takes policy/"; else not_ok "sbx's loader refuses policy/: $(head -c 300 "$C/err")"; fi
badcat() { # NAME SCHEMA SOURCE JQ-FILTER WHAT
	local rc
	jq "$4" "$3" >"$C/$1.json" && add invalid "$2" "$C/$1.json" "$2.schema.json refuses $5"
	cp -r "$P" "$C/cat-$1" && cp "$C/$1.json" "$C/cat-$1/${3#"$P"/}"
	loads "$C/cat-$1"
	rc=$?
	if [ "$rc" -eq 69 ]; then ok "sbx's loader refuses $5 (exit 69)"
	else not_ok "sbx's loader: $5: exit $rc, wanted 69"; fi
}
badcat prof-unknown profile "$P/profiles/shell.json" '. + {"networks": ["disabled"]}' "a profile with an unknown key"
badcat prof-nocode profile "$P/profiles/shell.json" '.argv = ["/bin/sh", "{args}"]' 'a profile argv without "{code}"'
badcat prof-half profile "$P/profiles/shell.json" '.argv = ["/bin/sh", "x{code}"]' "a placeholder inside an argument"
badcat prof-relbind profile "$P/profiles/shell.json" '.binds += ["usr/lib"]' "a relative bind"
badcat prof-workbind profile "$P/profiles/shell.json" '.binds += [{"src": "/srv", "dst": "/work/x"}]' "a bind into /work"
badcat prof-ldenv profile "$P/profiles/shell.json" '.env_allow += ["LD_PRELOAD"]' "LD_PRELOAD in env_allow"
badcat prof-nomax profile "$P/profiles/shell.json" 'del(.maximums.pids)' "maximums without pids"
badcat prof-media profile "$P/profiles/shell.json" '.allowed_outputs += ["text/x-script"]' "a media type sbx does not validate"
badcat prof-codefile profile "$P/profiles/shell.json" '.code_file = "out"' 'code_file "out"'
badcat net-kind network "$P/network/disabled.json" '.kind = "open"' 'kind "open"'
badcat net-disallow network "$P/network/disabled.json" '. + {"allow": []}' "an allow list on a disabled profile"
badcat net-noallow network "$P/network/egress-example.json" 'del(.allow)' "an egress profile without allow"
badcat net-host network "$P/network/egress-example.json" '.allow[0].host = "PyPI.org"' "an upper-case host name"
badcat net-port network "$P/network/egress-example.json" '.allow[0].ports = [0]' "port 0"
badcat fetch-kind fetch "$P/fetch/example.json" '.kind = "egress"' 'a fetch profile of kind "egress"'
badcat fetch-http fetch "$P/fetch/example.json" '.schemes = ["http"]' 'a fetch profile with http but not https'
badcat fetch-key fetch "$P/fetch/example.json" '. + {"connect": true}' "a fetch profile with an egress-only key"
badcat sc-errno seccomp "$P/seccomp/default.json" '.deny[0].errno = "EFOO"' "an unknown errno name"
badcat sc-both seccomp "$P/seccomp/default.json" '.deny[0].args = []' '"args" beside "any_args"'
badcat sc-mask seccomp "$P/seccomp/default.json" '.deny[0].any_args[0][0].op = "eq"' 'a mask with op "eq"'
badcat sc-nowhy seccomp "$P/seccomp/default.json" 'del(.deny[0].why)' "a deny rule without why"
badcat sc-allowed-nowhy seccomp "$P/seccomp/default.json" 'del(.allowed[0].why)' "an allowed group without why"
badcat sc-allowed-key seccomp "$P/seccomp/default.json" '.allowed[0].errno = "EPERM"' "an errno on an allowed group"
schemas batch <"$B"

# ---- jobs: the schema and sbx's parser agree ---------------------------------------
# Each job names a profile that is not in the catalog, so a job the parser
# accepts is refused (77) at admission and never runs; one it refuses is
# invalid (65).  Both print a manifest, checked below as well.
J=$T/jobs
mkdir -p "$J/state"
chmod 0700 "$J/state"
printf '{"state_dir":"%s"}\n' "$J/state" >"$J/config.json"
"$SBX" keygen -o "$J/key" 2>/dev/null || not_ok "sbx keygen"
parse() { # FILE: sbx run's exit status for the job in FILE
	env -i PATH=/usr/bin:/bin HOME="$J" SBX_LIBEXECDIR="$SBX_BUILDDIR" "$SBX" run -q \
		--config "$J/config.json" --policy "$SBX_SRCDIR/policy" --key "$J/key" \
		--store "$J/store" --artifacts "$J/art.$1" "$J/$1.json" >"$J/$1.manifest" 2>"$J/$1.err"
	echo $?
}
: >"$B"
# job NAME EXPECT JSON WHAT: EXPECT is "valid" (both accept), "invalid"
# (both refuse) or "parser" (a check only the parser makes; the schema
# accepts it, and says so in its description).
job() {
	local name=$1 expect=$2 json=$3 what=$4 rc want
	printf '%s\n' "$json" >"$J/$name.json"
	rc=$(parse "$name")
	case $expect in
		valid|parser) add valid job "$J/$name.json" "job schema accepts $what" ;;
		invalid) add invalid job "$J/$name.json" "job schema refuses $what" ;;
	esac
	case $expect in
		valid) want=77 ;;
		*) want=65 ;;
	esac
	if [ "$rc" -eq "$want" ]; then
		ok "sbx's parser: $what (exit $want)"
	else
		not_ok "sbx's parser: $what: exit $rc, wanted $want"
		diag "$(head -c 400 "$J/$name.err")"
	fi
	add manifest "$rc" "$J/$name.manifest" "manifest of $what (exit $rc) matches manifest.schema.json"
}
R='"runtime_profile": "no-such-profile"'
job min valid "{$R, \"code\": \"\"}" "a minimal job"
job handle valid "{$R, \"code_handle\": \"main.py\", \"input_handles\": [\"main.py\"]}" "code_handle"
job full valid "$(jq '.runtime_profile = "no-such-profile" | .args = ["--month", "2026-10"] |
	.env = {"TZ": "UTC"} | .limits.cpu_cores = 0.5 | .limits.soft_seconds = 30 |
	.partial_outputs = "retain" | .extract = [] | .network_profile = "egress-example" |
	.outputs = {"totals.csv": {"rows": {"min": 1}, "columns": {"total": {"type": "number",
		"sum": {"equals": 871.49, "tolerance": 0.01}}}}}' \
	"$SBX_SRCDIR/examples/chart-job.json")" "every key"
job unknown invalid "{$R, \"code\": \"\", \"memory\": 512}" "an unknown key"
job unknown-limit invalid "{$R, \"code\": \"\", \"limits\": {\"memory\": 512}}" "an unknown key in limits"
job type invalid "{$R, \"code\": \"\", \"limits\": {\"memory_mib\": \"lots\"}}" "a string for memory_mib"
job zero invalid "{$R, \"code\": \"\", \"limits\": {\"pids\": 0}}" "pids 0"
job huge invalid "{$R, \"code\": \"\", \"limits\": {\"wall_seconds\": 86401}}" "wall_seconds over the bound"
job cores invalid "{$R, \"code\": \"\", \"limits\": {\"cpu_cores\": 0}}" "cpu_cores 0"
job both invalid "{$R, \"code\": \"\", \"code_handle\": \"x\"}" "code and code_handle"
job neither invalid "{$R}" "no code"
job contract-tolerance invalid "{$R, \"code\": \"\", \"outputs\": {\"t.csv\": {\"columns\": {\"n\": {\"type\": \"number\", \"sum\": {\"equals\": 1, \"tolerance\": -1}}}}}}" "a negative sum tolerance"
job contract-key invalid "{$R, \"code\": \"\", \"outputs\": {\"t.csv\": {\"colour\": 1}}}" "an unknown key in a contract"
job noprofile invalid '{"code": ""}' "no runtime_profile"
job profiletype invalid '{"runtime_profile": 1, "code": ""}' "a number for runtime_profile"
job badhandle invalid "{$R, \"code\": \"\", \"input_handles\": [\"../etc\"]}" 'a handle "../etc"'
job duphandle invalid "{$R, \"code\": \"\", \"input_handles\": [\"a\", \"a\"]}" "a handle listed twice"
job dotdot invalid "{$R, \"code\": \"\", \"required_outputs\": [\"a/../b\"]}" 'a required output "a/../b"'
job absout invalid "{$R, \"code\": \"\", \"required_outputs\": [\"/etc/passwd\"]}" "an absolute required output"
job media invalid "{$R, \"code\": \"\", \"allowed_outputs\": [\"png\"]}" 'a media type "png"'
job partial invalid "{$R, \"code\": \"\", \"partial_outputs\": \"keep\"}" 'partial_outputs "keep"'
job envkey invalid "{$R, \"code\": \"\", \"env\": {\"1X\": \"y\"}}" 'an env name "1X"'
job envval invalid "{$R, \"code\": \"\", \"env\": {\"TZ\": \"a\\nb\"}}" "a newline in an env value"
job args invalid "{$R, \"code\": \"\", \"args\": [1]}" "a number in args"
job notobj invalid '["runtime_profile"]' "an array for a job"
job real parser "{$R, \"code\": \"\", \"limits\": {\"pids\": 8.0}}" "pids 8.0 (a fraction is not an integer)"
job soft parser "{$R, \"code\": \"\", \"limits\": {\"wall_seconds\": 5, \"soft_seconds\": 5}}" \
	"soft_seconds equal to wall_seconds"
job extract parser "{$R, \"code\": \"\", \"extract\": [\"a.tar\"]}" "extract of a handle not in input_handles"
job decimals parser "{$R, \"code\": \"\", \"limits\": {\"cpu_cores\": 0.0001}}" "cpu_cores with four decimals"
job dupkey parser "{$R, \"code\": \"\", \"code\": \"x\"}" "a duplicate key"
schemas batch <"$B"

# Broken manifests: what a consumer must be able to reject.
: >"$B"
good=$J/min.manifest
if jq -e '.status == "refused"' "$good" >/dev/null 2>&1; then
	badman() { # NAME JQ-FILTER WHAT
		jq -c "$2" "$good" >"$J/$1.bad.json" && add invalid manifest "$J/$1.bad.json" "manifest.schema.json refuses $3"
	}
	badman status '.status = "done"' 'status "done"'
	badman unknown '. + {"extra": 1}' "an unknown member"
	badman nosig 'del(.signature)' "a manifest without signature"
	badman exit '.exit = {"code": "0"}' "an exit code that is a string"
	badman runid '.run_id = "RUN-1"' "a malformed run_id"
	badman refusedran '.stdout = {"bytes": 0, "sha256": ("0" * 64), "truncated": false, "excerpt": ""}' \
		"a refused job with a stdout record"
	badman art '.artifacts = [{"path": "a.txt", "size": 1, "sha256": null, "media_type": null,
		"status": "accepted", "reason": null, "partial": false, "formula_cells": false, "flags": []}]' \
		'an artifact status "accepted"'
	schemas batch <"$B"
else
	not_ok "no refused manifest to break (see the parser checks above)"
fi

# ---- what each subcommand prints with --json ----------------------------------------
# Each output matches its schema, with the exit status the schema says:
# the successes and the failures a script must tell apart.
: >"$B"
C=$J/cmd
mkdir -p "$C"
# cmdjson NAME WANT-RC SCHEMA WHAT SUBCOMMAND ARGS...: sbx SUBCOMMAND --json ARGS, stdout one line.
cmdjson() {
	local name=$1 want=$2 schema=$3 what=$4 rc
	shift 4
	# --json right after the subcommand: after "--" it would be an operand.
	env -i PATH=/usr/bin:/bin HOME="$J" SBX_LIBEXECDIR="$SBX_BUILDDIR" "$SBX" "$1" --json "${@:2}" \
		>"$C/$name.json" 2>"$C/$name.err"
	rc=$?
	if [ "$rc" -eq "$want" ] && [ "$(wc -l <"$C/$name.json")" -eq 1 ]; then
		ok "sbx $1 --json: $what: exit $want, one line"
	else
		not_ok "sbx $1 --json: $what: exit $rc (wanted $want), $(wc -l <"$C/$name.json") lines"
		diag "$(head -c 400 "$C/$name.err")"
	fi
	add valid "$schema" "$C/$name.json" "sbx $1 --json: $what: matches $schema.schema.json"
}
G=(--config "$J/config.json" --policy "$SBX_SRCDIR/policy")
cmdjson keygen 0 keygen "a new key" keygen -o "$C/key"
cmdjson keygen-again 1 keygen "a key that exists" keygen -o "$C/key"
cmdjson verify 0 verify "a valid manifest" verify "${G[@]}" --pubkey "$J/key.pub" "$J/min.manifest"
cmdjson verify-key 1 verify "the wrong key" verify "${G[@]}" --pubkey "$C/key.pub" "$J/min.manifest"
mkdir -p "$C/empty"
cmdjson verify-art 0 verify "with --artifacts" verify "${G[@]}" --pubkey "$J/key.pub" --artifacts "$C/empty" "$J/min.manifest"
touch "$C/empty/stray"
cmdjson verify-stray 1 verify "an unlisted file" verify "${G[@]}" --pubkey "$J/key.pub" --artifacts "$C/empty" "$J/min.manifest"
cmdjson gc 0 gc "an empty state dir" gc "${G[@]}"
cmdjson cancel 1 cancel "an unknown run id" cancel "${G[@]}" 0123456789abcdef0123456789abcdef
cmdjson cancel-bad 64 cancel "a malformed run id" cancel "${G[@]}" RUN-1
cmdjson profiles 0 profiles "the catalog" profiles "${G[@]}"
cmdjson dry-run 0 dry-run "--dry-run of a one-line run" run "${G[@]}" --dry-run -p shell \
	--limit cpu_cores=0.5 -i data.csv --allow text/csv --require out.csv -c 'echo "$1"' -- a
if jq -e '.limits.cpu_millicores == 500 and .runtime_profile == "shell" and .argv[-1] == "a" and
	.inputs == [{"handle": "data.csv", "extracted": false}] and .required_outputs == ["out.csv"]' \
	"$C/dry-run.json" >/dev/null; then
	ok "sbx run --dry-run --json: the plan, limits in the manifest's units"
else
	not_ok "sbx run --dry-run --json: $(head -c 400 "$C/dry-run.json")"
fi
# errjson NAME WANT-RC WHAT SUBCOMMAND ARGS...: sbx SUBCOMMAND --json ARGS
# fails with WANT-RC (64 or 65) and stderr is one line, error.schema.json's.
errjson() {
	local name=$1 want=$2 what=$3 rc
	shift 3
	env -i PATH=/usr/bin:/bin HOME="$J" SBX_LIBEXECDIR="$SBX_BUILDDIR" "$SBX" "$1" --json "${@:2}" \
		>"$C/$name.out" 2>"$C/$name.err"
	rc=$?
	if [ "$rc" -eq "$want" ] && [ "$(wc -l <"$C/$name.err")" -eq 1 ] &&
		jq -e --argjson w "$want" '.exit == $w' "$C/$name.err" >/dev/null 2>&1; then
		ok "sbx $1 --json: $what: exit $want, one JSON line on stderr"
	else
		not_ok "sbx $1 --json: $what: exit $rc (wanted $want): $(head -c 400 "$C/$name.err")"
	fi
	add valid error "$C/$name.err" "sbx $1 --json: $what: stderr matches error.schema.json"
}
printf '{"runtime_profile": "shell", "code": "true", "limits": {"pids": -1}}\n' >"$C/bad-job.json"
printf '{"runtime_profile": "shell",\n' >"$C/cut-job.json"
errjson run-bad 65 "a job with a bad limit" run "${G[@]}" --key "$J/key" "$C/bad-job.json"
if jq -e '.path == "limits.pids" and (.file | endswith("bad-job.json"))' "$C/run-bad.err" >/dev/null; then
	ok "sbx run --json: the error names the file and the JSON path"
else
	not_ok "sbx run --json: $(head -c 400 "$C/run-bad.err")"
fi
errjson run-cut 65 "a job that is not JSON" run "${G[@]}" --key "$J/key" "$C/cut-job.json"
errjson run-opt 64 "an unknown option" run "${G[@]}" --no-such-option "$C/bad-job.json"
errjson batch-opt 64 "an unknown option" batch "${G[@]}" --no-such-option "$C"
errjson verify-none 64 "no operand" verify "${G[@]}"
cmdjson ps 0 ps "no live run" ps "${G[@]}"
cmdjson prepare-typo 64 prepare "a misspelt profile" prepare "${G[@]}" pyhton
if jq -e '.ok == false and .exit == 64 and .prepared == [] and (.error | test("pyhton")) and
	(.hint | type == "string")' "$C/prepare-typo.json" >/dev/null &&
	jq -e '.exit == 64 and (.error | test("no such runtime profile; did you mean \"python-analysis\"[?]"))' \
		"$C/prepare-typo.err" >/dev/null; then
	ok "sbx prepare pyhton: 64, did you mean \"python-analysis\""
else
	not_ok "sbx prepare pyhton: $(head -c 300 "$C/prepare-typo.json") / $(head -c 300 "$C/prepare-typo.err")"
fi
add valid error "$C/prepare-typo.err" "sbx prepare --json pyhton: stderr matches error.schema.json"
# check: 0 or 69 by the host; either way the document matches.
env -i PATH=/usr/bin:/bin HOME="$J" SBX_LIBEXECDIR="$SBX_BUILDDIR" "$SBX" check "${G[@]}" --json >"$C/check.json" 2>/dev/null
rc=$?
if { [ "$rc" -eq 0 ] && jq -e '.ok == true' "$C/check.json" >/dev/null; } ||
	{ [ "$rc" -eq 69 ] && jq -e '.ok == false' "$C/check.json" >/dev/null; }; then
	ok "sbx check --json: .ok agrees with exit $rc"
else
	not_ok "sbx check --json: exit $rc, .ok $(jq -c .ok "$C/check.json" 2>&1 | head -c 100)"
fi
add valid check "$C/check.json" "sbx check --json matches check.schema.json"
# The failures say what stderr says, in the same words.
if jq -e '.ok == false and .exit == 1 and (.error | test("no such live run")) and (.hint | test("sbx ps"))' \
	"$C/cancel.json" >/dev/null && grep -q '^sbx: Hint: .*sbx ps' "$C/cancel.err"; then
	ok "sbx cancel of an unknown run id: error and Hint, in the JSON and on stderr"
else
	not_ok "sbx cancel of an unknown run id: $(head -c 300 "$C/cancel.json") / $(head -c 300 "$C/cancel.err")"
fi
if jq -e '.ok and .artifacts_checked == null and .signature_valid' "$C/verify.json" >/dev/null &&
	grep -q '^sbx: manifest OK: signature valid; its 0 promoted artifacts were not checked (no --artifacts DIR)$' "$C/verify.err"; then
	ok "sbx verify without --artifacts: says the artifacts were not checked"
else
	not_ok "sbx verify without --artifacts: $(head -c 300 "$C/verify.json") / $(head -c 300 "$C/verify.err")"
fi
if jq -e '.ok == false and .exit == 1 and .artifacts_checked == null and (.error | test("1 entry is not listed in the manifest$"))' \
	"$C/verify-stray.json" >/dev/null; then
	ok "sbx verify: one unlisted entry, said in the singular"
else
	not_ok "sbx verify, one unlisted entry: $(head -c 300 "$C/verify-stray.json")"
fi
schemas batch <"$B"

# ---- manifests of real runs ---------------------------------------------------------
if [ "$ROOT" = 1 ]; then
	make_probe_catalog
	# The shell profile, allowed the example egress profile.
	jq '.network_profiles = ["disabled", "egress-example"] | .description = "test only: shell with egress"' \
		"$SBX_SRCDIR/policy/profiles/shell.json" >"$POLICY/profiles/shell-net.json"
	chmod -R a+rX "$POLICY"
	for mode in root user; do
		setup_mode "$mode"
		: >"$B"
		# run NAME WANT-RC JQ-CHECK WHAT JOB-ARGS...: one run, its
		# manifest checked with the schema and JQ-CHECK for what it
		# must have exercised.
		run() {
			local name=$1 want=$2 check=$3 what=$4
			shift 4
			mkjob "$M/$name.json" "$@"
			sbx_run "$M/$name.json"
			expect_rc "$want" "$MODE: $what"
			if jq -e "$check" "$OUT" >/dev/null 2>&1; then ok "$MODE: $what: manifest has $check"
			else not_ok "$MODE: $what: manifest lacks $check"; diag "$(head -c 1500 "$OUT")"; fi
			add manifest "$RC" "$OUT" "$MODE: $what: manifest matches manifest.schema.json"
		}
		run ok 0 '[.artifacts[].status] == ["promoted", "promoted"]' "succeeded, two promoted" shell \
			'printf "hello\n" >/work/out/a.txt; printf "x,y\n1,2\n" >/work/out/t.csv; echo done' \
			'{allowed_outputs: ["text/plain", "text/csv"], required_outputs: ["a.txt"]}'
		OK_ART=$ART OK_MANIFEST=$OUT
		run fail 1 '.exit.code == 3 and ([.artifacts[].status] | sort) == ["promoted", "rejected"]' \
			"failed, one promoted and one rejected" shell \
			'printf "not a png" >/work/out/fake.png; echo ok >/work/out/ok.txt; echo oops >&2; exit 3' \
			'{allowed_outputs: ["text/plain", "image/png"]}'
		run slow 124 '.artifacts[0].partial == true and .artifacts[0].status == "promoted"' \
			"timed out, a partial output retained" shell \
			'echo part >/work/out/p.txt; exec sleep 30' \
			'{limits: {wall_seconds: 1, grace_seconds: 1}, partial_outputs: "retain"}'
		run hog 137 '.artifacts[0].status == "discarded" and .usage.oom_kills > 0' \
			"out of memory, an output discarded" probe \
			'echo x >/work/out/d.txt; exec /opt/sbx-probe memhog 256' '{limits: {memory_mib: 32}}'
		run held 124 '[.artifacts[] | .status + " " + (.partial | tostring)] == ["held true", "held true"]' \
			"timed out, partial outputs held" shell \
			'echo part >/work/out/p.txt; echo q >/work/out/q.txt; exec sleep 30' \
			'{limits: {wall_seconds: 1, grace_seconds: 1}, partial_outputs: "hold"}'
		# Its promote manifest, and one that refuses (p.txt is promoted by then).
		for n in 1 2; do
			as_mode "$SBX" promote --config "$M/config.json" --key "$KEY" --artifacts "$M/promoted.$n" \
				"$(jqm .run_id)" p.txt >"$M/promote.$n.json" 2>"$M/promote.$n.err"
			add manifest $? "$M/promote.$n.json" "$MODE: sbx promote ($n): promote manifest matches promote-manifest.schema.json"
		done
		run rejfail 1 '.reason_code == "output_rejected" and .summary == {"promoted": 1, "rejected": 1,
			"held": 0, "discarded": 0} and ([.artifacts[].reason_code] | sort) == [null, "unknown_type"]' \
			"on_rejected_output fail, one output refused" shell \
			'printf "\\000\\001" >/work/out/b.txt; echo ok >/work/out/ok.txt' '{on_rejected_output: "fail"}'
		run pyerr 1 '.error == {"claimed_by": "payload", "type": "KeyError", "message": "'"'"'k'"'"'",
			"file": "/work/main.py", "line": 2}' "python, an uncaught KeyError" python-analysis \
			'x = 1
{}["k"]'
		run refused 77 '.limits == null and .exit == null' "refused, over the profile's maximum" shell \
			'echo never' '{limits: {memory_mib: 100000}}'
		run invalid 65 '.profile.sha256 == null' "invalid, an unknown key" shell 'echo never' '{lots: 1}'
		run net 0 '.network.connections_refused >= 1 and .network.decisions[0].decision == "refused"' \
			"egress, a request the proxy refuses" shell-net \
			'curl -s -o /dev/null -w "%{http_code}\n" --max-time 10 http://refused.sbx-test/' \
			'{network_profile: "egress-example"}'
		# --json of real work: verify of a run with its artifacts and
		# captured streams, and a real prepare.
		as_mode "$SBX" verify --json --pubkey "$KEY.pub" --artifacts "$OK_ART" "$OK_MANIFEST" \
			>"$M/verify.json" 2>"$M/verify.err"
		if [ $? -eq 0 ] && jq -e '.ok and .artifacts_checked == 2 and .streams_checked == ["stdout"]' \
			"$M/verify.json" >/dev/null; then
			ok "$MODE: sbx verify --json --artifacts: 2 artifacts and stdout checked"
		else
			not_ok "$MODE: sbx verify --json --artifacts: $(head -c 400 "$M/verify.json") $(head -c 400 "$M/verify.err")"
		fi
		add valid verify "$M/verify.json" "$MODE: sbx verify --json of a real run matches verify.schema.json"
		jq '.description = "test only: prepared shell" |
			.prepare = {argv: ["/bin/sh", "-c", "mkdir -p /work/out/data && echo x > /work/out/data/f"],
				    mount: "/run/sbx/prepared"}' \
			"$SBX_SRCDIR/policy/profiles/shell.json" >"$POLICY/profiles/shell-prep.json"
		chmod a+r "$POLICY/profiles/shell-prep.json"
		as_mode "$SBX" prepare --json --config "$M/config.json" --policy "$POLICY" shell-prep \
			>"$M/prepare.json" 2>"$M/prepare.err"
		if [ $? -eq 0 ] && jq -e '.ok and .exit == 0 and [.prepared[].profile] == ["shell-prep"]' \
			"$M/prepare.json" >/dev/null; then
			ok "$MODE: sbx prepare --json: the profile, its digest and tree"
		else
			not_ok "$MODE: sbx prepare --json: $(head -c 400 "$M/prepare.json") $(head -c 400 "$M/prepare.err")"
		fi
		add valid prepare "$M/prepare.json" "$MODE: sbx prepare --json matches prepare.schema.json"
		# A prepare step that fails: error and hint, the exit status.
		jq '.prepare.argv = ["/bin/sh", "-c", "echo no >&2; exit 3"]' \
			"$POLICY/profiles/shell-prep.json" >"$M/shell-prep-fail.json" &&
			cat "$M/shell-prep-fail.json" >"$POLICY/profiles/shell-prep.json"
		as_mode "$SBX" prepare --json --config "$M/config.json" --policy "$POLICY" shell-prep \
			>"$M/prepare-fail.json" 2>"$M/prepare-fail.err"
		if [ $? -eq 1 ] && jq -e '.ok == false and .exit == 1 and (.error | test("shell-prep")) and
			(.hint | type == "string")' "$M/prepare-fail.json" >/dev/null; then
			ok "$MODE: sbx prepare --json of a failing step: exit 1, error and hint"
		else
			not_ok "$MODE: sbx prepare --json of a failing step: $(head -c 400 "$M/prepare-fail.json")"
		fi
		add valid prepare "$M/prepare-fail.json" "$MODE: ... and it matches prepare.schema.json"
		schemas batch <"$B"
		check "$MODE: nothing left behind" nothing_left
	done
elif [ "${SBX_TEST_NO_SKIP:-0}" = 1 ]; then
	not_ok "real runs need root (a run needs a delegated cgroup as another user); SBX_TEST_NO_SKIP=1 forbids skipping"
else
	skip "real runs need root (a run needs a delegated cgroup as another user)"
fi

# ---- every manifest the e2e suite saw ------------------------------------------------
if [ -n "${SBX_E2E_MANIFESTS:-}" ]; then
	if [ -s "$SBX_E2E_MANIFESTS" ]; then
		schemas lines "$SBX_E2E_MANIFESTS"
	elif [ "${SBX_TEST_NO_SKIP:-0}" = 1 ]; then
		not_ok "SBX_E2E_MANIFESTS=$SBX_E2E_MANIFESTS holds no manifest (did the e2e tests run first?)"
	else
		skip "SBX_E2E_MANIFESTS=$SBX_E2E_MANIFESTS holds no manifest (make check-manifests runs the e2e suite first)"
	fi
fi
finish
