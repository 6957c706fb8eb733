#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# diag.sh - errors that guide: a store error names the store path and what
# is missing (the store, the principal's directory, the handle, a regular
# file, the right to read it), keeps its exit code (77) and leaves nothing
# behind; sbx check and sbx profiles speak JSON; every manifest has a
# reason_code beside reason.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need stat

bound_sbx 60

refused() { [ "$RC" -eq 77 ] && [ "$(jqm '.status + " " + .reason_code')" = "refused policy_refused" ]; }
# err_has TEXT...: every TEXT is on one line of stderr.
err_has() {
	local line
	while IFS= read -r line; do
		local t ok=1
		for t in "$@"; do [[ "$line" == *"$t"* ]] || ok=0; done
		[ $ok = 1 ] && return 0
	done < "$ERR"
	diag "stderr: $(cat "$ERR")"
	return 1
}
# The reason in the manifest says the same as stderr.
reason_has() { [[ "$(jqm '.reason')" == *"$1"* ]] || { diag "reason: $(jqm .reason)"; return 1; }; }

for mode in root user; do
	setup_mode $mode
	S="$M/store"
	P="$S/$PRINCIPAL"
	echo data > "$P/data.csv"
	mkdir "$P/dir.csv"
	ln -s data.csv "$P/link.csv"
	echo secret > "$P/locked.csv"
	chmod 000 "$P/locked.csv"
	[ $mode = user ] && chown -R "$SBX_TEST_USER" "$S"
	mkjob "$M/j.json" shell 'echo ran' '{input_handles: ["data.csv"]}'

	# --- the store root -------------------------------------------------------
	sbx_run "$M/j.json" --store "$T/no-such-store"
	check "$mode: --store missing: 77, refused" refused
	check "$mode: --store missing: names the path and --store" \
		err_has "$T/no-such-store" "--store" "does not exist"
	check "$mode: --store missing: the manifest's reason names the path" reason_has "$T/no-such-store"
	check "$mode: --store missing: a Hint says how to name the store" \
		grep -q '^sbx: Hint: .*--store' "$ERR"

	# The config's store: sbx_run always passes --store, so by hand.
	jq --arg s "$T/cfg-store" '.store = $s' "$M/config.json" > "$M/config-store.json"
	chmod 644 "$M/config-store.json"
	as_mode "$SBX" run --config "$M/config-store.json" --policy "$SBX_SRCDIR/policy" \
		--key "$KEY" --artifacts "$M/art-cfg" "$M/j.json" >"$M/out-cfg.json" 2>"$M/err-cfg.txt"
	RC=$? OUT="$M/out-cfg.json" ERR="$M/err-cfg.txt"
	check "$mode: config store missing: 77, refused" refused
	check "$mode: config store missing: names the path and the config's \"store\"" \
		err_has "$T/cfg-store" '"store"' "does not exist"

	# The default: $HOME/.local/share/sbx/store (no XDG_DATA_HOME here).
	as_mode "$SBX" run --config "$M/config.json" --policy "$SBX_SRCDIR/policy" \
		--key "$KEY" --artifacts "$M/art-def" "$M/j.json" >"$M/out-def.json" 2>"$M/err-def.txt"
	RC=$? OUT="$M/out-def.json" ERR="$M/err-def.txt"
	check "$mode: default store missing: 77, refused" refused
	check "$mode: default store missing: names the path and that it is the default" \
		err_has "$M/home/.local/share/sbx/store" "default" "does not exist"

	# --- the principal's directory ---------------------------------------------
	mkdir -p "$T/empty-store-$mode"
	[ $mode = user ] && chown "$SBX_TEST_USER" "$T/empty-store-$mode"
	sbx_run "$M/j.json" --store "$T/empty-store-$mode"
	check "$mode: no principal directory: 77, refused" refused
	check "$mode: no principal directory: names the principal and its path" \
		err_has "principal \"$PRINCIPAL\"" "$T/empty-store-$mode/$PRINCIPAL" "does not exist"

	# --- the handle --------------------------------------------------------------
	mkjob "$M/j2.json" shell 'echo ran' '{input_handles: ["data.csv", "nope.csv"]}'
	sbx_run "$M/j2.json"
	check "$mode: missing handle: 77, refused" refused
	check "$mode: missing handle: input_handles[1] and the full path" \
		err_has 'input_handles[1]: handle "nope.csv"' "$P/nope.csv" "does not exist"
	check "$mode: missing handle: the manifest's reason names the path" reason_has "$P/nope.csv"

	mkjob "$M/j3.json" shell 'echo ran' '{input_handles: ["dir.csv"]}'
	sbx_run "$M/j3.json"
	check "$mode: a directory: 77, refused" refused
	check "$mode: a directory: not a regular file, with its path" \
		err_has 'handle "dir.csv"' "$P/dir.csv" "is a directory, not a regular file"

	mkjob "$M/j4.json" shell 'echo ran' '{input_handles: ["link.csv"]}'
	sbx_run "$M/j4.json"
	check "$mode: a symlink: 77, refused" refused
	check "$mode: a symlink: says so, with its path" \
		err_has 'handle "link.csv"' "$P/link.csv" "is a symlink"

	mkjob "$M/j5.json" shell 'cat /work/in/locked.csv' '{input_handles: ["locked.csv"]}'
	sbx_run "$M/j5.json"
	if [ $mode = user ]; then
		check "$mode: an unreadable file: 77, refused" refused
		check "$mode: an unreadable file: permission denied, with its path" \
			err_has 'handle "locked.csv"' "$P/locked.csv" "Permission denied"
	else
		# Root reads a mode 000 file (CAP_DAC_OVERRIDE): that is no error.
		expect_rc 0 "$mode: a mode 000 file is root's to read"
		check "$mode: ... and the manifest's reason_code is null" test "$(jqm 'has("reason_code") and .reason_code == null')" = true
	fi

	# --- reason_code: the outcomes the other scripts do not check ---------------
	mkjob "$M/ok.json" shell 'echo fine'
	sbx_run "$M/ok.json"
	check "$mode: succeeded: reason and reason_code are null" \
		test "$(jqm '[.status, has("reason_code"), .reason, .reason_code] | tostring')" = '["succeeded",true,null,null]'
	# dash gives up when fork fails: its failing exit is the pids limit's.
	mkjob "$M/pids.json" shell 'i=0; while [ $i -lt 40 ]; do sleep 30 & i=$((i + 1)); done; wait' \
		'{limits: {pids: 8}}'
	sbx_run "$M/pids.json"
	check "$mode: fork failing at pids 8: limit_exceeded, pids_limit" \
		test "$(jqm '.status + " " + .reason_code')" = "limit_exceeded pids_limit"
	mkjob "$M/sig.json" shell 'kill -SEGV $$'
	sbx_run "$M/sig.json"
	check "$mode: a payload dead of its own signal: failed, signal" \
		test "$(jqm '.status + " " + .exit.signal + " " + .reason_code')" = "failed SIGSEGV signal"
	mkjob "$M/req.json" shell 'echo "<html><body>x</body></html>" > /work/out/x.html' \
		'{required_outputs: ["x.html"]}'
	sbx_run "$M/req.json"
	check "$mode: a required output rejected: failed, required_output_rejected" \
		test "$(jqm '.status + " " + .reason_code')" = "failed required_output_rejected"
	check "$mode: reason_code: nothing left behind" nothing_left

	# --- sbx check --json ------------------------------------------------------
	as_mode "$SBX" check --config "$M/config.json" --policy "$SBX_SRCDIR/policy" \
		>"$M/check.txt" 2>"$M/check.err"
	rc_text=$?
	as_mode "$SBX" check --json --config "$M/config.json" --policy "$SBX_SRCDIR/policy" \
		>"$M/check.json" 2>"$M/check-json.err"
	rc_json=$?
	check "$mode: check --json: the exit status of check ($rc_text)" test "$rc_json" -eq "$rc_text"
	check "$mode: check --json: one JSON object on one line" \
		eval '[ "$(wc -l < "$M/check.json")" -eq 1 ] && jq -e "type == \"object\"" "$M/check.json" >/dev/null'
	check "$mode: check --json: ok is the verdict the exit status gives" \
		test "$(jq -r .ok "$M/check.json")" = "$([ $rc_text -eq 0 ] && echo true || echo false)"
	check "$mode: check --json: every item has name, state, ok, required, detail, hint" \
		jq -e '.checks | length > 5 and all(.[]; (.name|type) == "string" and (.state|type) == "string"
			and (.ok|type) == "boolean" and (.required|type) == "boolean"
			and ((.detail|type) == "string" or .detail == null)
			and ((.hint|type) == "string" or .hint == null) and (.ok == (.state == "ok")))' "$M/check.json"
	# The same items, states, details and Hints as the text.
	awk '/^[^ ]/ { n = substr($0, 1, 16); sub(/ +$/, "", n); r = substr($0, 18);
			st = r; sub(/:.*/, "", st); d = r; if (index(r, ": ")) sub(/^[^:]*: /, "", d); else d = "";
			printf "%s|%s|%s\n", n, st, d }
	     /^                 Hint: / { h = substr($0, 24); printf "hint|%s\n", h }' "$M/check.txt" > "$M/check.flat"
	jq -r '.checks[] | "\(.name)|\(.state)|\(.detail // ""), \(if .hint then "hint|" + .hint else "" end)"' "$M/check.json" |
		sed 's/, $//; s/, hint|/\nhint|/' > "$M/check-json.flat"
	check "$mode: check --json: the items, states, details and Hints of the text output" \
		eval 'diff "$M/check.flat" "$M/check-json.flat" >&2'
	check "$mode: check --json: the cgroup item is there, required" \
		jq -e '[.checks[] | select(.name == "cgroup" and .required)] | length == 1' "$M/check.json"
	check "$mode: check --json: landlock is optional" \
		jq -e '[.checks[] | select(.name == "landlock" and (.required | not))] | length == 1' "$M/check.json"

	# --- sbx profiles --json ---------------------------------------------------
	as_mode "$SBX" profiles --json --config "$M/config.json" --policy "$SBX_SRCDIR/policy" \
		>"$M/profiles.json" 2>"$M/profiles.err"
	check "$mode: profiles --json: exit 0, one JSON object" \
		eval '[ $? -eq 0 ] && [ "$(wc -l < "$M/profiles.json")" -eq 1 ] && jq -e .profiles "$M/profiles.json" >/dev/null'
	check "$mode: profiles --json: every runtime profile of the catalog" \
		test "$(jq -r '[.profiles[].name] | sort | join(",")' "$M/profiles.json")" = \
		"$(cd "$SBX_SRCDIR/policy/profiles" && ls *.json | sed 's/\.json$//' | sort | paste -sd,)"
	check "$mode: profiles --json: every network profile of the catalog" \
		test "$(jq -r '[.networks[].name] | sort | join(",")' "$M/profiles.json")" = \
		"$(cd "$SBX_SRCDIR/policy/network" && ls *.json | sed 's/\.json$//' | sort | paste -sd,)"
	check "$mode: profiles --json: shell's limits are the catalog file's" \
		test "$(jq -c '.profiles[] | select(.name == "shell") | .limits | [.memory_mib.maximum, .pids.default, .wall_seconds.minimum, .cpu_millicores.maximum]' "$M/profiles.json")" = \
		"$(jq -c '[.maximums.memory_mib, .defaults.pids, .minimums.wall_seconds, (.maximums.cpu_cores * 1000)]' "$SBX_SRCDIR/policy/profiles/shell.json")"
	check "$mode: profiles --json: shell's binds, outputs, env, argv and stream cap" \
		test "$(jq -c '.profiles[] | select(.name == "shell") | [([.binds[].src] | index("/usr") != null), .allowed_outputs, .env.PATH, .argv, .stream_bytes_max, .seccomp, .network_profiles]' "$M/profiles.json")" = \
		"$(jq -c '[true, .allowed_outputs, .env.PATH, .argv, .stream_bytes_max, .seccomp, .network_profiles]' "$SBX_SRCDIR/policy/profiles/shell.json")"
	check "$mode: profiles --json: a profile's sha256 is its file's" \
		test "$(jq -r '.profiles[] | select(.name == "shell") | .sha256' "$M/profiles.json")" = \
		"$(sha256sum < "$SBX_SRCDIR/policy/profiles/shell.json" | cut -d' ' -f1)"
	check "$mode: profiles --json: the egress example's allowlist" \
		test "$(jq -c '.networks[] | select(.name == "egress-example") | [.kind, .allow, .max_connections, .connect]' "$M/profiles.json")" = \
		"$(jq -c '[.kind, .allow, .max_connections, true]' "$SBX_SRCDIR/policy/network/egress-example.json")"
	check "$mode: --json is refused where it does not apply (64)" \
		eval 'as_mode "$SBX" promote --json >/dev/null 2>&1; [ $? -eq 64 ]'

	# --- the cgroup Hint, true on this host -------------------------------------
	if [ $mode = user ]; then
		# The hierarchy's root: there, and not this user's to write.
		jq '.cgroup_parent = "/"' "$M/config.json" > "$M/config-cg.json"
		chmod 644 "$M/config-cg.json"
		mkjob "$M/cg.json" shell 'echo ran'
		sbx_run "$M/cg.json" --config "$M/config-cg.json"
		check "$mode: a cgroup not this user's: 69, isolation_unavailable, a Hint to delegate one" \
			eval '[ $RC -eq 69 ] && [ "$(jqm .reason_code)" = isolation_unavailable ] &&
			      grep -q "^sbx: Hint: sbx needs a cgroup it may write.*chown it to this user" "$ERR"'
		if [ -d /run/systemd/system ]; then
			check "$mode: systemd is the init here: the Hint offers Delegate=yes" \
				grep -q "^sbx: Hint: .*systemd-run --user --scope -p Delegate=yes" "$ERR"
		else
			check "$mode: systemd is not the init here: the Hint does not offer it" \
				eval '! grep -qi "systemd\|Delegate" "$ERR"'
		fi
		as_mode "$SBX" check --json --config "$M/config-cg.json" --policy "$SBX_SRCDIR/policy" \
			>"$M/check-cg.json" 2>/dev/null
		check "$mode: sbx check --json predicts it: the cgroup item not ok, with the run's Hint" \
			eval '[ "$(jq -r ".ok, (.checks[] | select(.name == \"cgroup\") | .ok)" "$M/check-cg.json" | paste -sd" ")" = "false false" ] &&
			      grep -qF "$(jq -r ".checks[] | select(.name == \"cgroup\") | .hint" "$M/check-cg.json")" "$ERR"'
	fi
	check "$mode: nothing left behind" nothing_left
done

finish
