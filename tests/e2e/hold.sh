#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# hold.sh - held outputs: partial_outputs "hold" keeps a cut-short run's
# artifacts outside --artifacts, `sbx promote` releases them (owner or
# root only) with a signed manifest of its own that names the run's
# manifest, and `sbx gc` removes holds past hold_max_age_hours.
#
# The held area belongs to the user who ran the job, who can write in it
# until the promote: so every attack here is one that user (or another
# one) could make.  A file changed after the hold, a held file swapped for
# a symlink to a host file, a path with "..", a second promote, an unknown
# run id, another user's run, a gc while a promote holds the hold's lock:
# each must be a clear refusal that moves nothing, and nothing may be left
# once the hold is promoted or collected.  So must a forged hold (issue
# 23): a held file replaced and manifest.json and hold.json rewritten to
# match, its signature kept, removed or made with another key, another
# run's manifest, or root promoting a user's run: promote signs only what
# the promote key had signed, and takes every value from that manifest.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need sha256sum timeout flock

# Signs a JSON object as sbx does (sbx_manifest_finish), for the forger.
SIGN="$SBX_BUILDDIR/tests/unit/crypto/sign-tool"
[ -x "$SIGN" ] || { echo "Bail out! $SIGN is not built (make check builds it)"; exit 1; }

bound_sbx 60

# A host file that must never reach an artifacts directory.
CANARY="sbx-canary-$$-$RANDOM$RANDOM"
echo "$CANARY" > "$T/canary.txt"
chmod 0644 "$T/canary.txt"

# A job that leaves two outputs and is killed at its wall deadline.
CUT_SHORT='mkdir -p /work/out/d; echo partial > /work/out/part.txt; echo deep > /work/out/d/b.txt; sleep 30'
CUT_LIMITS='{partial_outputs: "hold", limits: {wall_seconds: 1, grace_seconds: 1}}'

artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }

# promote [sbx options...] RUN_ID [PATH...]: as the mode's user; the
# promote manifest in $POUT, stderr in $PERR, the status in $PRC.
PROMOTES=0
promote() {
	PROMOTES=$((PROMOTES + 1))
	POUT="$M/promote.$PROMOTES.json"
	PERR="$M/promote.$PROMOTES.err"
	as_mode "$SBX" promote --config "$M/config.json" --key "$KEY" "$@" >"$POUT" 2>"$PERR"
	PRC=$?
	return 0
}
expect_prc() {
	local want=$1 d=$2
	if [ "$PRC" -eq "$want" ]; then ok "$d (exit $want)"; else
		not_ok "$d: exit $PRC, wanted $want"
		diag "stderr: $(head -c 1500 "$PERR")"
		diag "stdout: $(head -c 1500 "$POUT")"
	fi
}

# jq + openssl verify the promote manifest $1 with the mode's key, as
# tests/e2e/verify-interop.sh does for a run's manifest: no sbx involved.
jq_openssl_ok() {
	local d="$M/psig.$PROMOTES"
	mkdir -p "$d"
	jq -cjS 'del(.signature)' "$1" > "$d/body" &&
		jq -rj '.signature.value' "$1" | openssl base64 -d -A > "$d/sig" &&
		openssl pkeyutl -verify -pubin -inkey "$KEY.pub" -rawin -in "$d/body" -sigfile "$d/sig" >/dev/null 2>&1
}

# The hold of run $1 in the mode's default held area.
hold_of() { echo "$M/home/.local/share/sbx/holds/$1"; }
held_name() { jq -r --arg p "$2" '.files[] | select(.path == $p) | .name' "$(hold_of "$1")/hold.json"; }
# Age hold $1 past the default 168 hours, as the record's owner.
age_hold() {
	local h rec
	h=$(hold_of "$1")
	rec=$(jq -c '.held_at_ms -= 200 * 3600 * 1000' "$h/hold.json") &&
		as_mode sh -c 'printf "%s" "$1" > "$2"' sh "$rec" "$h/hold.json"
}
files_in() { find "$1" -type f 2>/dev/null | wc -l; }

# What the forger writes over a held text file: markup and an ELF magic.
FORGED='<script>alert(1)</script>\177ELF'

# save_hold RUN / restore_hold RUN: the hold's record, kept manifest and
# part.txt as the run left them, so that each forgery starts afresh.
save_hold() {
	local h
	h=$(hold_of "$1")
	mkdir -p "$M/saved.$1"
	cp "$h/hold.json" "$h/manifest.json" "$M/saved.$1/" &&
		cp "$h/files/$(held_name "$1" part.txt)" "$M/saved.$1/part" &&
		chmod -R a+rX "$M/saved.$1"
}
restore_hold() {
	local h
	h=$(hold_of "$1")
	as_mode sh -c 'cat "$1/part" > "$2/files/$3" && cat "$1/manifest.json" > "$2/manifest.json" &&
		cat "$1/hold.json" > "$2/hold.json"' sh "$M/saved.$1" "$h" "$(held_name "$1" part.txt)"
}

# forge RUN HOW: as the hold's owner, replace held part.txt with $FORGED
# and rewrite manifest.json and hold.json to match it, claiming image/png
# and the principal alice.  HOW is what becomes of the manifest's
# signature: "stale" (kept as it was), "none" (removed), or a key file
# that signs the forged manifest anew.
forge() {
	local run=$1 how=$2 h name s z man ms rec
	h=$(hold_of "$run")
	name=$(held_name "$run" part.txt)
	as_mode sh -c 'printf "$1" > "$2"' sh "$FORGED" "$h/files/$name"
	s=$(sha256sum < "$h/files/$name" | cut -d' ' -f1)
	z=$(stat -c %s "$h/files/$name")
	man=$(jq -cS --arg s "$s" --argjson z "$z" '.principal = "alice" |
		(.artifacts[] | select(.path == "part.txt")) |= (.sha256 = $s | .size = $z | .media_type = "image/png")' \
		"$h/manifest.json")
	case $how in
	stale) ;;
	none) man=$(printf '%s' "$man" | jq -cS 'del(.signature)') ;;
	*)
		printf '%s\n' "$man" > "$M/forged.json" && chmod 0644 "$M/forged.json"
		man=$(as_mode "$SIGN" "$how" "$M/forged.json")
		;;
	esac
	as_mode sh -c 'printf "%s\n" "$1" > "$2"' sh "$man" "$h/manifest.json"
	ms=$(sha256sum < "$h/manifest.json" | cut -d' ' -f1)
	rec=$(jq -c --arg s "$s" --argjson z "$z" --arg ms "$ms" '.principal = "alice" | .manifest_sha256 = $ms |
		(.files[] | select(.path == "part.txt")) |= (.sha256 = $s | .size = $z | .media_type = "image/png")' \
		"$h/hold.json")
	as_mode sh -c 'printf "%s" "$1" > "$2"' sh "$rec" "$h/hold.json"
}

# refused_whole DESCRIPTION DIR RUN: the last promote refused the hold as a
# whole: exit 1, one error line and a Hint, no manifest, nothing in DIR, no
# file taken from the hold, and nothing sbx verify could call a promote.
refused_whole() {
	local d=$1 dir=$2 run=$3
	expect_prc 1 "$d"
	check "$d: one error line and a Hint; no manifest, nothing delivered, the hold as it was" \
		eval '[ "$(grep -c "^sbx: promote: $run: " "$PERR")" -eq 1 ] && grep -q "^sbx: Hint: " "$PERR" &&
		      [ "$(wc -l < "$PERR")" -eq 2 ] && [ ! -s "$POUT" ] && [ ! -e "$dir" ] &&
		      [ "$(files_in "$(hold_of "$run")/files")" -eq 2 ]'
	as_mode "$SBX" verify --pubkey "$KEY.pub" "$POUT" >/dev/null 2>&1
	check "$d: sbx verify finds no promote manifest to accept" test $? -ne 0
}

for mode in root user; do
	setup_mode $mode
	if [ $mode = root ]; then OTHER_UID=$SBX_TEST_UID; else OTHER_UID=0; fi

	# --- a run that is cut short: its outputs are held ------------------------
	mkjob "$M/j.json" shell "$CUT_SHORT" "$CUT_LIMITS"
	sbx_run "$M/j.json"
	expect_rc 124 "$mode: hold: the run times out"
	A=$(jqm .run_id) A_OUT=$OUT
	HA=$(hold_of "$A")
	check "$mode: hold: the status stays timed_out, never succeeded" test "$(jqm .status)" = timed_out
	check "$mode: hold: part.txt and d/b.txt are listed held and partial" \
		eval '[ "$(artifact part.txt ".status + \" \" + (.partial|tostring)")" = "held true" ] &&
		      [ "$(artifact d/b.txt ".status + \" \" + (.partial|tostring)")" = "held true" ]'
	check "$mode: hold: nothing reached --artifacts but the captures" \
		eval '[ ! -e "$ART/part.txt" ] && [ ! -e "$ART/d" ]'
	check "$mode: hold: the hold is the user's, mode 0700, two files" \
		eval '[ "$(stat -c "%u %a" "$HA")" = "$(as_mode id -u) 700" ] && [ "$(files_in "$HA/files")" -eq 2 ]'
	check "$mode: hold: the record names the sha256 of the manifest as printed" \
		test "$(jq -r .manifest_sha256 "$HA/hold.json")" = "$(sha256sum < "$A_OUT" | cut -d' ' -f1)"
	check "$mode: hold: the held copies have the manifest's digests" \
		eval '[ "$(sha256sum < "$HA/files/$(held_name "$A" part.txt)" | cut -d" " -f1)" = "$(artifact part.txt .sha256)" ]'
	check "$mode: hold: the manifest's signature verifies (jq + openssl)" signature_ok

	# A run over a limit holds what was valid too, and stays limit_exceeded.
	mkjob "$M/quota.json" shell 'echo a > /work/out/a.txt; head -c 2000000 /dev/zero > /work/out/big.bin || exit 3' \
		'{partial_outputs: "hold", limits: {output_bytes: 100000}}'
	sbx_run "$M/quota.json"
	expect_rc 137 "$mode: hold: a run over its output quota"
	check "$mode: hold: ... a.txt held, big.bin rejected, status limit_exceeded" \
		eval '[ "$(jqm .status)" = limit_exceeded ] && [ "$(artifact a.txt .status)" = held ] &&
		      [ "$(artifact big.bin .status)" = rejected ] && [ -d "$(hold_of "$(jqm .run_id)")" ]'
	promote --artifacts "$M/p-quota" "$(jqm .run_id)"
	expect_prc 0 "$mode: hold: ... and promote delivers a.txt"

	# A run that completes is promoted as before: hold is for runs cut short.
	mkjob "$M/ok.json" shell 'echo done > /work/out/ok.txt' '{partial_outputs: "hold"}'
	sbx_run "$M/ok.json"
	expect_rc 0 "$mode: hold: a run that completes"
	check "$mode: hold: ... promotes its outputs, holds nothing" \
		eval '[ "$(artifact ok.txt .status)" = promoted ] && [ -f "$ART/ok.txt" ] && [ ! -e "$(hold_of "$(jqm .run_id)")" ]'

	# One output held by its contract ("hold": true): the run completes and
	# succeeds on the others; the held one waits for sbx promote.
	mkjob "$M/per.json" shell 'echo a,b > /work/out/t.csv; echo note > /work/out/n.txt' \
		'{outputs: {"n.txt": {hold: true}, "t.csv": {}}}'
	sbx_run "$M/per.json"
	expect_rc 0 "$mode: per-output hold: the run succeeds"
	check "$mode: per-output hold: t.csv promoted, n.txt held and not in --artifacts" \
		eval '[ "$(jqm .status)" = succeeded ] && [ "$(artifact t.csv .status)" = promoted ] &&
		      [ "$(artifact n.txt .status)" = held ] && [ -f "$ART/t.csv" ] && [ ! -e "$ART/n.txt" ] &&
		      [ -d "$(hold_of "$(jqm .run_id)")" ]'
	promote --artifacts "$M/p-per" "$(jqm .run_id)" n.txt
	expect_prc 0 "$mode: per-output hold: promote delivers n.txt"
	check "$mode: per-output hold: ... the promoted file, and the hold is gone" \
		eval '[ "$(cat "$M/p-per/n.txt")" = note ] && jq_openssl_ok "$POUT" && [ ! -e "$(hold_of "$(jqm .run_id)")" ]'
	# Held is not promoted, so a held output cannot be required as well.
	mkjob "$M/perbad.json" shell 'echo note > /work/out/n.txt' '{outputs: {"n.txt": {hold: true, required: true}}}'
	sbx_run "$M/perbad.json"
	expect_rc 65 "$mode: per-output hold that is also required"
	check "$mode: ... the error names the JSON path" grep -q 'outputs\["n.txt"\]\.hold' "$ERR"

	# --- refusals that move nothing -----------------------------------------
	promote --artifacts "$M/p-unknown" 0123456789abcdef0123456789abcdef
	expect_prc 1 "$mode: promote of an unknown run id"
	check "$mode: ... says there are no held outputs, prints no manifest, makes no directory" \
		eval 'grep -q "no held outputs" "$PERR" && [ ! -s "$POUT" ] && [ ! -e "$M/p-unknown" ]'
	promote --artifacts "$M/p-bad" not-a-run-id
	expect_prc 64 "$mode: promote of a malformed run id"

	for bad in ../part.txt d/../part.txt /part.txt ./part.txt d//b.txt ''; do
		promote --artifacts "$M/p-dotdot" "$A" "$bad"
		expect_prc 64 "$mode: promote of the path '$bad'"
	done
	check "$mode: ... nothing moved, no directory made" \
		eval '[ "$(files_in "$HA/files")" -eq 2 ] && [ ! -e "$M/p-dotdot" ]'

	if [ $mode = root ]; then
		# The test user names root's held area in its own config.
		O="$T/other"
		mkdir -p "$O" && chown "$SBX_TEST_USER" "$O"
		jq --arg h "$(dirname "$HA")" '. + {hold_dir: $h}' "$M/config.json" > "$O/config.json"
		chmod 0644 "$O/config.json"
		runuser -u "$SBX_TEST_USER" -- env -i PATH=/usr/bin:/bin HOME="$O" \
			"$SBX" keygen -o "$O/key" 2>/dev/null
		runuser -u "$SBX_TEST_USER" -- env -i PATH=/usr/bin:/bin HOME="$O" \
			"$SBX" promote --config "$O/config.json" --key "$O/key" --artifacts "$O/art" "$A" \
			>"$M/other.out" 2>"$M/other.err"
		PRC=$? PERR="$M/other.err" POUT="$M/other.out"
		expect_prc 77 "$mode: another user's promote of root's run is refused"
		check "$mode: ... naming the owner; nothing moved, no manifest" \
			eval 'grep -q "owned by uid 0" "$PERR" && [ ! -s "$POUT" ] && [ ! -e "$O/art" ] && [ "$(files_in "$HA/files")" -eq 2 ]'
		# Root's run may not hold its outputs in the user's area: refused
		# before the payload runs, with what to change.
		mkdir -p "$O/holds" && chown "$SBX_TEST_USER" "$O/holds" && chmod 0700 "$O/holds"
		jq --arg h "$O/holds" '. + {hold_dir: $h}' "$M/config.json" > "$M/theirs.json"
		sbx_run "$M/j.json" --config "$M/theirs.json"
		expect_rc 69 "$mode: a held run with hold_dir another user's"
		check "$mode: ... says so with a Hint, ran nothing, made no hold" \
			eval 'grep -q "held area: owned by uid $SBX_TEST_UID" "$ERR" && grep -q "Hint: set hold_dir" "$ERR" &&
			      [ "$(jqm .stdout)" = null ] && [ -z "$(ls -A "$O/holds")" ]'
	fi

	# --- promote one path, then the rest ------------------------------------
	promote --artifacts "$M/p1" "$A" part.txt
	expect_prc 0 "$mode: promote part.txt"
	P1=$POUT
	check "$mode: ... part.txt is delivered, byte for byte" test "$(cat "$M/p1/part.txt")" = partial
	check "$mode: ... the promote manifest names the run, its manifest's sha256 and the file" \
		eval '[ "$(jq -r ".kind + \" \" + .run_id" "$P1")" = "promote $A" ] &&
		      [ "$(jq -r .run_manifest_sha256 "$P1")" = "$(sha256sum < "$A_OUT" | cut -d" " -f1)" ] &&
		      [ "$(jq -c "[.artifacts[] | [.path, .size, .sha256, .status]]" "$P1")" = "$(jq -c "[.artifacts[] | select(.path == \"part.txt\") | [.path, .size, .sha256, \"promoted\"]]" "$A_OUT")" ] &&
		      [ "$(jq -c ".refused, .held_remaining" "$P1" | tr -d "\n")" = "[]1" ]'
	check "$mode: ... its signature verifies with jq + openssl alone" jq_openssl_ok "$P1"
	as_mode "$SBX" verify --pubkey "$KEY.pub" --artifacts "$M/p1" "$P1" >/dev/null 2>"$M/verify.err"
	vrc=$?
	check "$mode: ... and with sbx verify --artifacts" \
		eval '[ $vrc -eq 0 ] && grep -q "promote manifest OK: signature valid; 1 artifact in .* matches$" "$M/verify.err"'
	printf X >> "$M/p1/part.txt"
	as_mode "$SBX" verify --pubkey "$KEY.pub" --artifacts "$M/p1" "$P1" >/dev/null 2>&1
	check "$mode: ... which notices a delivered file changed" test $? -eq 1
	cp "$P1" "$M/p1-tampered.json"
	sed -i 's/"held_remaining":1/"held_remaining":0/' "$M/p1-tampered.json"
	check "$mode: ... a changed promote manifest fails jq + openssl" eval '! jq_openssl_ok "$M/p1-tampered.json"'
	as_mode "$SBX" verify --pubkey "$KEY.pub" "$M/p1-tampered.json" >/dev/null 2>&1
	check "$mode: ... and sbx verify" test $? -eq 1

	promote --artifacts "$M/p2" "$A" part.txt
	expect_prc 1 "$mode: promote part.txt a second time"
	check "$mode: ... refused as already promoted, in a signed manifest; nothing delivered" \
		eval '[ "$(jq -r ".refused[0].path + \": \" + .refused[0].reason" "$POUT")" = "part.txt: already promoted" ] &&
		      [ "$(jq ".artifacts | length" "$POUT")" -eq 0 ] && [ ! -e "$M/p2" ] && jq_openssl_ok "$POUT"'

	promote --artifacts "$M/p3" "$A"
	expect_prc 0 "$mode: promote the rest"
	check "$mode: ... d/b.txt delivered, the hold is gone" \
		eval '[ "$(cat "$M/p3/d/b.txt")" = deep ] && [ ! -e "$M/p3/part.txt" ] && [ ! -e "$HA" ]'
	promote --artifacts "$M/p4" "$A"
	expect_prc 1 "$mode: promote after everything was promoted"
	check "$mode: ... a clear error, no manifest" \
		eval 'grep -q "no held outputs" "$PERR" && [ ! -s "$POUT" ] && [ ! -e "$M/p4" ]'

	# --- the owner tampers with the held area -------------------------------
	sbx_run "$M/j.json"
	expect_rc 124 "$mode: a second held run"
	B=$(jqm .run_id)
	HB=$(hold_of "$B")
	# part.txt changed after the hold, d/b.txt swapped for a symlink to a
	# host file, both by the hold's owner.
	as_mode sh -c 'printf X >> "$1"' sh "$HB/files/$(held_name "$B" part.txt)"
	as_mode ln -sf "$T/canary.txt" "$HB/files/$(held_name "$B" d/b.txt)"
	promote --artifacts "$M/pb" "$B"
	expect_prc 1 "$mode: promote of a changed file and a symlink"
	check "$mode: ... the changed file is refused for its digest" \
		eval 'jq -r ".refused[] | select(.path == \"part.txt\") | .reason" "$POUT" | grep -q "changed since it was held"'
	check "$mode: ... the symlink is refused, not followed" \
		eval 'jq -r ".refused[] | select(.path == \"d/b.txt\") | .reason" "$POUT" | grep -q "symbolic link"'
	check "$mode: ... nothing delivered, the host file nowhere in the artifacts" \
		eval '[ "$(jq ".artifacts | length" "$POUT")" -eq 0 ] && [ "$(files_in "$M/pb")" -eq 0 ] && ! grep -rqs "$CANARY" "$M/pb"'
	check "$mode: ... the canary is untouched" test "$(cat "$T/canary.txt")" = "$CANARY"

	# A record edited to match the changed file no longer matches the run's
	# signed manifest: the whole hold is refused.
	rec=$(jq -c --arg s "$(sha256sum < "$HB/files/$(held_name "$B" part.txt)" | cut -d' ' -f1)" \
		'(.files[] | select(.path == "part.txt")) |= (.sha256 = $s | .size += 1)' "$HB/hold.json")
	as_mode sh -c 'printf "%s" "$1" > "$2"' sh "$rec" "$HB/hold.json"
	promote --artifacts "$M/pb2" "$B" part.txt
	expect_prc 1 "$mode: promote with a record edited to the changed file"
	check "$mode: ... refused: the record does not match the run manifest; nothing delivered" \
		eval 'grep -q "does not match the run manifest" "$PERR" && [ ! -e "$M/pb2" ]'

	# --- the owner forges the hold (issue 23) ---------------------------------
	# The held text file becomes markup with an ELF magic, and the kept
	# manifest and the record are rewritten to match, claiming image/png
	# and another principal: promote must not sign what the run never did.
	sbx_run "$M/j.json"
	expect_rc 124 "$mode: forgery: a held run"
	F=$(jqm .run_id) F_OUT=$OUT
	save_hold "$F"
	as_mode "$SBX" keygen -o "$M/evil" 2>/dev/null
	forge "$F" stale
	promote --artifacts "$M/pf1" "$F"
	refused_whole "$mode: forgery: manifest and record rewritten, the old signature kept" "$M/pf1" "$F"
	check "$mode: forgery: ... the error says the run manifest does not verify" \
		grep -q "run manifest does not verify with the promote key" "$PERR"

	restore_hold "$F"
	forge "$F" none
	promote --artifacts "$M/pf2" "$F"
	refused_whole "$mode: forgery: the run manifest's signature removed" "$M/pf2" "$F"

	restore_hold "$F"
	forge "$F" "$M/evil"
	promote --artifacts "$M/pf3" "$F"
	refused_whole "$mode: forgery: the run manifest signed anew with another key" "$M/pf3" "$F"
	check "$mode: forgery: ... the error names both keys, the Hint the promote key" \
		eval 'grep -q "signed by another key" "$PERR" && grep -q "Hint: .*--key" "$PERR"'

	# A genuine manifest of another run, signed by the same key, with the
	# record's run id put right: the files even match (the same job).
	restore_hold "$F"
	sbx_run "$M/j.json"
	expect_rc 124 "$mode: forgery: another held run of the same job"
	G=$(jqm .run_id)
	as_mode sh -c 'cat "$1/manifest.json" > "$2/manifest.json"' sh "$(hold_of "$G")" "$(hold_of "$F")"
	rec=$(jq -c --arg r "$F" '.run_id = $r' "$(hold_of "$G")/hold.json")
	as_mode sh -c 'printf "%s" "$1" > "$2"' sh "$rec" "$(hold_of "$F")/hold.json"
	promote --artifacts "$M/pf4" "$F"
	refused_whole "$mode: forgery: another run's signed manifest in the hold" "$M/pf4" "$F"
	check "$mode: forgery: ... the error names the run the manifest is of" grep -q "is run $G's" "$PERR"

	# The signed line without its newline: it verifies, but is not the
	# manifest as printed, whose sha256 the promote manifest names.
	restore_hold "$F"
	as_mode truncate -s -1 "$(hold_of "$F")/manifest.json"
	rec=$(jq -c --arg s "$(sha256sum < "$(hold_of "$F")/manifest.json" | cut -d' ' -f1)" \
		'.manifest_sha256 = $s' "$M/saved.$F/hold.json")
	as_mode sh -c 'printf "%s" "$1" > "$2"' sh "$rec" "$(hold_of "$F")/hold.json"
	promote --artifacts "$M/pf4n" "$F"
	refused_whole "$mode: forgery: the kept manifest without its final newline" "$M/pf4n" "$F"

	# The record lists a file the verified manifest does not hold.
	restore_hold "$F"
	rec=$(jq -c '.files += [.files[0] | .path = "extra.txt" | .name = "h000009"]' "$M/saved.$F/hold.json")
	as_mode sh -c 'printf "%s" "$1" > "$2"' sh "$rec" "$(hold_of "$F")/hold.json"
	as_mode cp "$(hold_of "$F")/files/$(held_name "$F" part.txt)" "$(hold_of "$F")/files/h000009"
	promote --artifacts "$M/pf5" "$F"
	expect_prc 1 "$mode: forgery: the record lists a file the run manifest does not"
	check "$mode: forgery: ... refused as not matching the run manifest; nothing delivered" \
		eval 'grep -q "does not match the run manifest" "$PERR" && [ ! -s "$POUT" ] && [ ! -e "$M/pf5" ]'
	as_mode rm -f "$(hold_of "$F")/files/h000009"

	# The file's bytes swapped after the hold, its size kept.
	restore_hold "$F"
	as_mode sh -c 'printf PARTIAL > "$1"' sh "$(hold_of "$F")/files/$(held_name "$F" part.txt)"
	promote --artifacts "$M/pf6" "$F" part.txt
	expect_prc 1 "$mode: forgery: part.txt's bytes swapped, its size kept"
	check "$mode: forgery: ... refused for its digest; nothing delivered" \
		eval 'jq -r ".refused[] | select(.path == \"part.txt\") | .reason" "$POUT" | grep -q "changed since it was held" &&
		      [ "$(jq ".artifacts | length" "$POUT")" -eq 0 ] && [ "$(files_in "$M/pf6")" -eq 0 ]'

	# Only the record says alice and image/png: the promote manifest says
	# what the verified run manifest says, entry for entry.
	restore_hold "$F"
	rec=$(jq -c '.principal = "alice" | .files[].media_type = "image/png"' "$M/saved.$F/hold.json")
	as_mode sh -c 'printf "%s" "$1" > "$2"' sh "$rec" "$(hold_of "$F")/hold.json"
	promote --artifacts "$M/pf7" "$F"
	expect_prc 0 "$mode: forgery: only the record claims alice and image/png"
	check "$mode: forgery: ... the promote manifest has the run manifest's principal and entries" \
		eval '[ "$(jq -r .principal "$POUT")" = "$(jq -r .principal "$F_OUT")" ] &&
		      [ "$(jq -cS "[.artifacts[] | del(.status)]" "$POUT")" = "$(jq -cS "[.artifacts[] | select(.status == \"held\") | del(.status, .reason, .reason_code)]" "$F_OUT")" ] &&
		      ! grep -q -e alice -e image/png "$POUT" && jq_openssl_ok "$POUT"'
	as_mode "$SBX" verify --pubkey "$KEY.pub" --artifacts "$M/pf7" "$POUT" >/dev/null 2>&1
	check "$mode: forgery: ... which sbx verify accepts with the delivered files" test $? -eq 0
	promote --artifacts "$M/pg" "$G"
	expect_prc 0 "$mode: forgery: the other run's hold, untouched, is promoted as usual"

	# --- gc: by age, and never under a promote --------------------------------
	as_mode "$SBX" gc --config "$M/config.json" 2>/dev/null
	check "$mode: gc keeps a hold younger than hold_max_age_hours" test -d "$HB"
	age_hold "$B"
	as_mode "$SBX" gc --config "$M/config.json" 2>"$M/gc.err"
	check "$mode: gc removes a hold older than hold_max_age_hours, all of it" \
		eval '[ ! -e "$HB" ] && grep -q "removed 1 expired hold" "$M/gc.err"'

	sbx_run "$M/j.json"
	expect_rc 124 "$mode: a third held run"
	C=$(jqm .run_id)
	HC=$(hold_of "$C")
	age_hold "$C"
	# The test holds the hold's lock, as a promote does while it works.
	# (Bounded: a locker that could not lock, or is never released, ends.)
	flock -x "$HC" -c "touch '$M/locked'; for i in \$(seq 600); do [ -e '$M/release' ] && break; sleep 0.05; done" &
	LOCKER=$!
	for i in $(seq 100); do [ -e "$M/locked" ] && break; sleep 0.05; done
	as_mode "$SBX" gc --config "$M/config.json" 2>/dev/null
	check "$mode: gc leaves a locked hold alone, however old" test -d "$HC"
	promote --artifacts "$M/pc" "$C" &
	PROMOTER=$!
	touch "$M/release"
	wait "$LOCKER"
	wait "$PROMOTER"
	check "$mode: the promote that waited for the lock delivers both files" \
		eval '[ -f "$M/pc/part.txt" ] && [ -f "$M/pc/d/b.txt" ] && [ ! -e "$HC" ]'
	as_mode "$SBX" gc --config "$M/config.json" 2>/dev/null
	check "$mode: gc after the promote finds nothing to do" test ! -e "$HC"

	if [ $mode = user ]; then
		# Root may open a user's hold, but signs only what its own key
		# signed: the user's run manifest is the user's key's word.
		sbx_run "$M/j.json"
		D=$(jqm .run_id)
		HD=$(hold_of "$D")
		save_hold "$D"
		jq --arg h "$(dirname "$HD")" '. + {hold_dir: $h}' "$M/config.json" > "$M/root.json"
		env -i PATH=/usr/bin:/bin HOME="$T" "$SBX" keygen -o "$T/root-key" 2>/dev/null
		root_promote() {
			env -i PATH=/usr/bin:/bin HOME="$T" "$SBX" promote --config "$M/root.json" \
				--key "$T/root-key" --artifacts "$1" "$D" >"$M/pd.json" 2>"$M/pd.err"
			PRC=$? PERR="$M/pd.err" POUT="$M/pd.json"
		}
		root_promote "$M/pd"
		refused_whole "$mode: root promotes the user's run, signed by the user's key" "$M/pd" "$D"
		check "$mode: ... the record stays the user's" \
			eval '[ "$(stat -c %u "$HD/hold.json")" = "$SBX_TEST_UID" ]'
		# The forgery of issue 23: the user rewrites the hold and signs the
		# forged manifest with the user's own key; root must not sign it.
		forge "$D" "$KEY"
		root_promote "$M/pd1"
		refused_whole "$mode: root promotes the user's forged hold, signed by the user" "$M/pd1" "$D"
		check "$mode: ... the error says another key signed it" grep -q "signed by another key" "$PERR"
		restore_hold "$D"
		promote --artifacts "$M/pd2" "$D"
		expect_prc 0 "$mode: the user promotes the run with the key that signed it"
		check "$mode: ... both files delivered, the hold gone" \
			eval '[ -f "$M/pd2/part.txt" ] && [ -f "$M/pd2/d/b.txt" ] && [ ! -e "$HD" ]'
	fi

	check "$mode: no hold left in the held area" \
		eval '[ -z "$(ls -A "$M/home/.local/share/sbx/holds" 2>/dev/null)" ]'
	check "$mode: nothing left behind" nothing_left
done

finish
