#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# basic.sh - the ordinary jobs work, and every outcome is a signed manifest.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

plan 59

for mode in root user; do
	setup_mode $mode
	cp "$SBX_SRCDIR/examples/sales.csv" "$M/store/$PRINCIPAL/sales.csv"
	[ $mode = user ] && chown -R "$SBX_TEST_USER" "$M/store"

	# A trivial shell job: stdout and stderr captured, exit 0.
	mkjob "$M/echo.json" shell 'echo hello; echo oops >&2; id -u; hostname'
	sbx_run "$M/echo.json"
	expect_rc 0 "$mode: shell job succeeds"
	check "$mode: manifest says succeeded, exit code 0" \
		test "$(jqm '.status + " " + (.exit.code|tostring)')" = "succeeded 0"
	check "$mode: stdout captured and hashed" \
		test "$(jqm '(.stdout.bytes|tostring) + " " + .stdout.sha256')" = "15 $(printf 'hello\n1000\nsbx\n' | sha256sum | cut -d' ' -f1)"
	check "$mode: stderr excerpt" eval '[[ "$(jqm .stderr.excerpt)" == oops* ]]'
	check "$mode: signature verifies with jq and openssl alone" signature_ok
	check "$mode: sbx verify accepts it" as_mode "$SBX" verify --pubkey "$KEY.pub" "$OUT"
	check "$mode: isolation lists all seven namespaces" \
		test "$(jqm '.isolation.namespaces | sort | join(",")')" = "cgroup,ipc,mount,net,pid,user,uts"
	check "$mode: seccomp, no_new_privs, no capabilities" \
		test "$(jqm '[.isolation.seccomp, .isolation.no_new_privs, (.isolation.capabilities|length)] | map(tostring) | join(" ")')" = "true true 0"
	check "$mode: Landlock applied (this kernel has it)" \
		test "$(jqm '.isolation.landlock_abi | type')" = number
	check "$mode: cgroup limits recorded" test "$(jqm '.isolation.cgroup.controllers | index("memory") != null')" = true
	check "$mode: events in order" \
		test "$(jqm '[.events[].event] | join(",")')" = "admitted,materialized,started,exited,collected,validated,cleaned"
	check "$mode: nothing left behind" nothing_left

	# The acceptance job: read a CSV, compute totals, draw a PNG.
	sbx_run "$SBX_SRCDIR/examples/chart-job.json"
	expect_rc 0 "$mode: python chart job succeeds"
	check "$mode: chart.png promoted as image/png" \
		test "$(jqm '.artifacts[] | select(.path=="chart.png") | .status + " " + .media_type')" = "promoted image/png"
	check "$mode: totals.csv has the right totals" \
		grep -q '^north,241.50' "$ART/totals.csv"
	check "$mode: chart is a real PNG" \
		python3 -c "import sys; d=open(sys.argv[1],'rb').read(); sys.exit(0 if d[:8]==b'\x89PNG\r\n\x1a\n' and len(d)>5000 else 1)" "$ART/chart.png"
	check "$mode: artifact digest matches" \
		test "$(jqm '.artifacts[] | select(.path=="chart.png") | .sha256')" = "$(sha256sum "$ART/chart.png" | cut -d' ' -f1)"

	# A payload that fails: status failed, its exit code, still signed.
	mkjob "$M/fail.json" shell 'exit 3'
	sbx_run "$M/fail.json"
	expect_rc 1 "$mode: failing payload"
	check "$mode: failed with exit code 3, signed" \
		eval 'test "$(jqm ".status + \" \" + (.exit.code|tostring) + \" \" + .reason_code")" = "failed 3 exit_nonzero" && signature_ok'

	# Invalid and refused jobs still get a signed manifest.
	echo '{"runtime_profile": "shell", "code": "true", "limits": {"memory_mib": "lots"}}' > "$M/bad.json"
	chmod 644 "$M/bad.json"
	sbx_run "$M/bad.json"
	check "$mode: invalid job: 65, one line naming the JSON path, signed manifest" \
		eval '[ $RC -eq 65 ] && grep -q "limits.memory_mib" "$ERR" && [ "$(jqm .status)" = invalid ] && [ "$(jqm .reason_code)" = invalid_job ] && signature_ok'
	# A number too large for a double fails at load time: still the path.
	echo '{"runtime_profile": "shell", "code": "true", "limits": {"wall_seconds": 1e400}}' > "$M/huge.json"
	chmod 644 "$M/huge.json"
	sbx_run "$M/huge.json"
	check "$mode: 1e400: 65 naming limits.wall_seconds, signed manifest" \
		eval '[ $RC -eq 65 ] && grep -q "^sbx: .*huge.json: line 1 column [0-9]*: limits.wall_seconds: real number overflow" "$ERR" && [ "$(jqm .status)" = invalid ] && signature_ok'
	# A well-formed output type the profile does not allow is policy.
	echo '{"runtime_profile": "shell", "code": "true", "allowed_outputs": ["text/csv", "text/html"]}' > "$M/html.json"
	chmod 644 "$M/html.json"
	sbx_run "$M/html.json"
	check "$mode: allowed_outputs text/html: refused 77 naming allowed_outputs[1], signed" \
		eval '[ $RC -eq 77 ] && grep -q "allowed_outputs\[1\]: profile \"shell\" does not allow output type text/html" "$ERR" && [ "$(jqm .status)" = refused ] && [ "$(jqm .reason_code)" = policy_refused ] && signature_ok'

	# The host's OpenSSL configuration is not sbx's: a configuration that
	# loads only the null provider (under which `openssl dgst -sha256`
	# fails) changes nothing, for a run and for a job refused early.  (sbx
	# no longer uses OpenSSL at all; the check keeps it that way.)
	cat > "$M/null-provider.cnf" <<'CNF'
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
null = null_sect
[null_sect]
activate = 1
CNF
	chmod 644 "$M/null-provider.cnf"
	SBX_EXTRA_ENV="OPENSSL_CONF=$M/null-provider.cnf" sbx_run "$M/echo.json"
	check "$mode: a hostile openssl.cnf is ignored by sbx run" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .status)" = succeeded ] && signature_ok'
	SBX_EXTRA_ENV="OPENSSL_CONF=$M/null-provider.cnf" sbx_run "$M/bad.json"
	check "$mode: ... also for a job refused before the sandbox" \
		eval '[ $RC -eq 65 ] && [ "$(jqm .status)" = invalid ] && signature_ok'
done

# A build tree's sbx finds its helpers beside it, without SBX_LIBEXECDIR.
MODE=root
M="$T/root"
KEY="$M/key"
env -i PATH=/usr/bin:/bin HOME="$M/home" "$SBX" run --config "$M/config.json" \
	--policy "$SBX_SRCDIR/policy" --key "$KEY" --store "$M/store" --artifacts "$M/beside-art" \
	"$M/echo.json" > "$M/beside.out" 2> "$M/beside.err"
rc=$?
check "sbx-init found beside the sbx binary" \
	eval '[ $rc -eq 0 ] && [ "$(jq -r .status "$M/beside.out")" = succeeded ]'

# An interpreter that cannot be executed: 70 naming the step, a signed
# manifest, nothing left behind.  (Its path is outside every bind, so
# only the exec inside can find it missing; one missing in a bind of the
# host is refused before, 69, see node.sh.)
cp -r "$SBX_SRCDIR/policy" "$T/policy-badexec"
jq '.argv[0] = "/opt/sbx-no-such-interpreter"' "$SBX_SRCDIR/policy/profiles/shell.json" \
	> "$T/policy-badexec/profiles/shell.json"
POLICY="$T/policy-badexec" sbx_run "$M/echo.json"
check "an interpreter that cannot be executed: 70, the exec step named, signed" \
	eval '[ $RC -eq 70 ] && grep -q "exec: execve /opt/sbx-no-such-interpreter: No such file" "$ERR" && [ "$(jqm .status)" = error ] && signature_ok'
check "nothing left behind after the failed exec" nothing_left

# Signals the caller ignores (nohup, a shell's background job) stay
# ignored across execve; the payload gets them back at their defaults,
# and nothing blocked.
mkjob "$M/sig.json" shell 'grep -E "^Sig(Blk|Ign)" /proc/self/status | tr -d "\t"'
trap '' HUP PIPE
sbx_run "$M/sig.json"
trap - HUP PIPE
check "the payload ignores and blocks no signal, whatever the caller ignored" \
	eval '[ $RC -eq 0 ] && jqm .stdout.excerpt | grep -qx "SigBlk:0000000000000000" &&
		jqm .stdout.excerpt | grep -qx "SigIgn:0000000000000000"'

# sbx started with its stdin closed: the pipes it makes may take fd 0,
# and the payload still gets /dev/null on 0 and its captured stdout on 1.
mkjob "$M/fd0.json" shell 'readlink /proc/self/fd/0; echo captured'
sbx_run "$M/fd0.json" <&-
check "with sbx's stdin closed, the payload's stdin is /dev/null, its stdout captured" \
	eval '[ $RC -eq 0 ] && [[ "$(jqm .stdout.excerpt)" == /dev/null?*captured* ]]'

# sbx check: one line per feature, 0 when the host has everything the
# catalog needs (as root and as the user), 69 with a Hint when not.
check "sbx check as root: exit 0, sbx-init and the catalog found" \
	eval '"$SBX" check --policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1 && grep -q "^sbx-init  *ok: " "$M/check.out" && grep -q "^catalog  *ok: " "$M/check.out" && grep -q "^user namespaces  *ok" "$M/check.out"'
MODE=user
M="$T/user"
check "sbx check as the user: exit 0" \
	eval 'as_mode "$SBX" check --config "$M/config.json" --policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1 && grep -q "^sbx-init  *ok: " "$M/check.out"'
MODE=root
M="$T/root"
SBX_LIBEXECDIR=/nonexistent "$SBX" check --policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1
rc=$?
check "sbx check without sbx-init: 69, missing, with a Hint" \
	eval '[ $rc -eq 69 ] && grep -q "^sbx-init  *missing: /nonexistent/sbx-init" "$M/check.out" && grep -A1 "^sbx-init" "$M/check.out" | grep -q "Hint: "'
SBX_TEST_ENOSYS=clone3 "$SBX" check --policy "$SBX_SRCDIR/policy" > "$M/check.out" 2>&1
rc=$?
check "sbx check with clone3 missing: 69, clone3 missing" \
	eval '[ $rc -eq 69 ] && grep -q "^clone3  *missing" "$M/check.out"'
echo '{"description":"broken"' > "$T/policy-badexec/network/broken.json"
"$SBX" check --policy "$T/policy-badexec" > "$M/check.out" 2>&1
rc=$?
check "sbx check with a broken catalog: 69, catalog invalid, the file named" \
	eval '[ $rc -eq 69 ] && grep -q "^catalog  *invalid" "$M/check.out" && grep -q "broken.json" "$M/check.out"'
check "nothing left behind by sbx check" nothing_left

finish
