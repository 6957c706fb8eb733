#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# local.sh - sbx as a person at a shell uses it: a one-line run takes the
# caller's own files (-i NAME=PATH, -i DIR/FILE), under the store's limits
# and type checks, recorded in the manifest with their digests; a run
# without --artifacts keeps its results in the results area, never in the
# working directory, and keeps nothing when there is nothing to keep;
# `sbx gc` prunes old results by age and count; the host config is read
# from --config, $SBX_CONFIG, the user's ~/.config/sbx/sbx.json (not for
# root) or the system file, `sbx check` says which, and a Hint that names
# a config key names that file.  As root and as an ordinary user.
. "$SBX_SRCDIR/tests/e2e/lib.sh"
need sha256sum mkfifo
bound_sbx 120

# The shipped catalog plus "tiny": the shell profile with 1000 bytes of
# inputs, per input and in total.
POLICY="$T/policy"
cp -r "$SBX_SRCDIR/policy" "$POLICY"
jq '.input_bytes_max = 1000' "$SBX_SRCDIR/policy/profiles/shell.json" > "$POLICY/profiles/tiny.json"
chmod -R a+rX "$POLICY"

# Root's results area is compiled in: LOCALSTATEDIR/lib/sbx/runs.  What
# of it this test makes, it removes at the end (up to the first directory
# that was there).
ROOT_AREA=$(grep -ao '/[[:print:]]*/lib/sbx/runs' "$SBX_REAL" | head -1)
ROOT_AREA_BASE=$ROOT_AREA
while [ -n "$ROOT_AREA_BASE" ] && [ ! -e "$ROOT_AREA_BASE" ]; do ROOT_AREA_BASE=${ROOT_AREA_BASE%/*}; done
undo_area() {
	local rc=$? d=$ROOT_AREA
	while [ -n "$d" ] && [ "$d" != "$ROOT_AREA_BASE" ] && rmdir "$d" 2>/dev/null; do d=${d%/*}; done
	(exit $rc) # the script's status, for cleanup_lib
	cleanup_lib
}
trap undo_area EXIT

# one [-C DIR] ARGS...: `sbx run` as the mode's identity from DIR (default
# the mode's working directory $W), with the mode's config, catalog, key
# and store, and no --artifacts; stdout in $OUT, stderr in $ERR.
one() {
	local dir=$W
	[ "$1" = -C ] && { dir=$2; shift 2; }
	RUNS=$((RUNS + 1))
	OUT="$M/out.$RUNS.json"
	ERR="$M/err.$RUNS.txt"
	(cd "$dir" && as_mode "$SBX" run --config "$M/config.json" --policy "$POLICY" --key "$KEY" \
		--store "$M/store" "$@") >"$OUT" 2>"$ERR"
	RC=$?
	jq -r '.run_id // empty' "$OUT" >> "$T/run-ids" 2>/dev/null
	return 0
}

# refused WHAT PATTERN: the last run was refused (77) with a signed
# manifest, and its reason matches PATTERN.
refused() {
	if [ "$RC" -eq 77 ] && [ "$(jqm .status)" = refused ] && signature_ok &&
		jqm .reason | grep -q -- "$2"; then ok "$MODE: $1: refused (77), reason says so"
	else
		not_ok "$MODE: $1: exit $RC, wanted 77 with a reason matching '$2'"
		diag "stderr: $(head -c 600 "$ERR")"; diag "reason: $(jqm .reason 2>/dev/null)"
	fi
}

sha() { sha256sum < "$1" | cut -d' ' -f1; }

for mode in root user; do
	setup_mode $mode
	W="$M/cwd"
	mkdir -p "$W/sub"
	printf 'region,total\nnorth,12.5\n' > "$W/x.csv"
	printf 'y\n' > "$W/sub/y.txt"
	ln -s x.csv "$W/link.csv"
	mkfifo "$W/fifo"
	head -c 2000 /dev/zero | tr '\0' a > "$W/big.txt"
	head -c 600 /dev/zero | tr '\0' b > "$W/b1.txt"
	head -c 600 /dev/zero | tr '\0' c > "$W/b2.txt"
	printf 'secret\n' > "$W/root-only.txt"
	chmod 0600 "$W/root-only.txt"
	printf 'stored\n' > "$M/store/$PRINCIPAL/h.txt"
	[ "$MODE" = user ] && chown -R "$SBX_TEST_USER" "$W" "$M/store" && chown root "$W/root-only.txt"
	# Root's results go where the config says (lib.sh), so that this test
	# keeps them in its own directory (the compiled-in default is checked
	# once, below, and removed).
	if [ "$MODE" = root ]; then
		AREA="$M/results" # lib.sh's results_dir for root
	else
		AREA="$M/home/.local/state/sbx/runs"
	fi

	# --- local inputs -------------------------------------------------------
	one -p shell -i data=./x.csv -c 'cat /work/in/data; ls /work/in'
	check "$MODE: -i data=./x.csv: the payload reads it as /work/in/data (exit 0)" \
		eval '[ $RC -eq 0 ] && jqm .stdout.excerpt | grep -qx "north,12.5" && jqm .stdout.excerpt | grep -qx data'
	check "$MODE: the manifest records it: local, its size and sha256" \
		test "$(jq -c '.inputs' "$OUT")" = "[{\"name\":\"data\",\"origin\":\"local\",\"sha256\":\"$(sha "$W/x.csv")\",\"size\":$(stat -c %s "$W/x.csv")}]"
	check "$MODE: the manifest is signed" signature_ok
	one -p shell -i ./x.csv -i sub/y.txt -i ./link.csv -c 'ls /work/in | tr "\n" " "'
	check "$MODE: -i ./x.csv -i sub/y.txt -i ./link.csv: named x.csv, y.txt, link.csv (a symlink of the caller's is followed)" \
		eval '[ $RC -eq 0 ] && [ "$(jqm .stdout.excerpt)" = "link.csv x.csv y.txt " ] &&
			[ "$(jq -r "[.inputs[].name] | join(\",\")" "$OUT")" = x.csv,y.txt,link.csv ] &&
			[ "$(jq -r ".inputs[2].sha256" "$OUT")" = "$(sha "$W/x.csv")" ]'
	one -p shell -i h.txt -i mine=./sub/y.txt -c 'cat /work/in/h.txt /work/in/mine'
	check "$MODE: a store handle and a local file together: both in inputs, store first" \
		eval '[ $RC -eq 0 ] && [ "$(jq -r "[.inputs[] | .name + \":\" + .origin] | join(\",\")" "$OUT")" = h.txt:store,mine:local ] &&
			[ "$(jq -r ".inputs[0].sha256" "$OUT")" = "$(sha "$M/store/$PRINCIPAL/h.txt")" ]'
	one -p shell -c true
	check "$MODE: a run without inputs has \"inputs\": []" \
		eval '[ $RC -eq 0 ] && [ "$(jq -c .inputs "$OUT")" = "[]" ]'

	one -p shell -i ./fifo -c true
	refused "a fifo (never opened, nothing blocks)" 'a fifo; a local input must be a regular file'
	one -p shell -i dev=/dev/zero -c true
	refused "/dev/zero" 'a character device'
	one -p shell -i d=./sub -c true
	refused "a directory" 'a directory'
	one -p shell -i ./missing.csv -c true
	refused "a missing file" 'missing.csv: No such file or directory'
	one -p tiny -i ./big.txt -c true
	refused "a file above input_bytes_max" 'above the limit of 1000 bytes per input'
	one -p tiny -i ./b1.txt -i ./b2.txt -c true
	refused "files above input_bytes_max in total" 'exceed the limit of 1000 bytes in total'
	one -p shell -i h.txt -i h.txt=./x.csv -c true
	refused "a local name that is also a store handle" 'also a store handle'
	if [ "$MODE" = user ]; then
		one -p shell -i ./root-only.txt -c true
		refused "a file the caller cannot read (the broker runs as the caller)" 'Permission denied'
	else
		one -p shell -i ./root-only.txt -c 'cat /work/in/root-only.txt'
		check "$MODE: root's own 0600 file is root's to hand in" \
			eval '[ $RC -eq 0 ] && [ "$(jqm .stdout.excerpt)" = secret ]'
	fi
	one -p shell -i 'a b=./x.csv' -c true
	check "$MODE: -i 'a b=PATH': usage error (64), no manifest, a Hint on naming it" \
		eval '[ $RC -eq 64 ] && [ ! -s "$OUT" ] && grep -q "not a valid input name" "$ERR" && grep -q "Hint: .*-i NAME=PATH" "$ERR"'
	one -p shell -i ./x.csv -i x.csv=./sub/y.txt -c true
	check "$MODE: the same name twice: usage error (64)" \
		eval '[ $RC -eq 64 ] && grep -q "given twice" "$ERR"'
	one -p shell -i d=./x.csv --print-job -c true
	cp "$OUT" "$M/job-local"
	one -p shell --print-job -c true
	check "$MODE: --print-job: a local file is no member of the job (same job as without it)" \
		eval '[ $RC -eq 0 ] && cmp -s "$OUT" "$M/job-local"'

	# --- where results go ---------------------------------------------------
	before=$(find "$W" | sort)
	one -p shell -c 'echo hi; echo oops >&2; echo r > /work/out/r.txt'
	id=$(jqm .run_id)
	check "$MODE: no --artifacts: results in the results area, AREA/<run_id>" \
		eval '[ $RC -eq 0 ] && [ "$(cat "$AREA/$id/.sbx/stdout")" = hi ] && [ "$(cat "$AREA/$id/.sbx/stderr")" = oops ] &&
			[ "$(cat "$AREA/$id/r.txt")" = r ]'
	check "$MODE: nothing in the working directory" test "$(find "$W" | sort)" = "$before"
	if [ "$MODE" = user ]; then
		check "$MODE: the results area is the user's alone (0700)" \
			test "$(stat -c '%a %U' "$AREA")" = "700 $SBX_TEST_USER"
	fi
	one -p shell -c true
	id=$(jqm .run_id)
	check "$MODE: a run with no outputs that printed nothing keeps nothing" \
		eval '[ $RC -eq 0 ] && [ ! -e "$AREA/$id" ] && [ "$(find "$W" | sort)" = "$before" ]'
	one -p shell -c 'echo only-stdout'
	id=$(jqm .run_id)
	check "$MODE: a run that only printed keeps its capture, nothing else" \
		eval '[ "$(cd "$AREA/$id" && find . | sort | tr "\n" " ")" = ". ./.sbx ./.sbx/stdout " ]'
	if [ "$MODE" = user ]; then
		XS="$M/xdg-state"
		mkdir -p "$XS" && chown "$SBX_TEST_USER" "$XS"
		SBX_EXTRA_ENV="XDG_STATE_HOME=$XS" one -p shell -c 'echo xdg'
		id=$(jqm .run_id)
		check "$MODE: \$XDG_STATE_HOME/sbx/runs/<run_id> when set" \
			test "$(cat "$XS/sbx/runs/$id/.sbx/stdout" 2>/dev/null)" = xdg
	else
		jq 'del(.results_dir)' "$M/config.json" > "$M/config-default.json"
		RUNS=$((RUNS + 1)); OUT="$M/out.$RUNS.json"; ERR="$M/err.$RUNS.txt"
		(cd "$W" && as_mode "$SBX" run --config "$M/config-default.json" --policy "$POLICY" \
			--key "$KEY" -p shell -c 'echo rootdefault') >"$OUT" 2>"$ERR"
		RC=$?
		id=$(jqm .run_id)
		jq -r '.run_id // empty' "$OUT" >> "$T/run-ids"
		check "$MODE: root's default results area is LOCALSTATEDIR/lib/sbx/runs ($ROOT_AREA), 0700" \
			eval '[ -n "$ROOT_AREA" ] && [ "$(cat "$ROOT_AREA/$id/.sbx/stdout" 2>/dev/null)" = rootdefault ] &&
				[ "$(stat -c %a "$ROOT_AREA")" = 700 ]'
		[ -n "$id" ] && [ -n "$ROOT_AREA" ] && rm -rf "${ROOT_AREA:?}/$id"
	fi

	# --- sbx gc prunes results ----------------------------------------------
	mkdir -p "$AREA/aaaaaaaaaaaa00000000000000000001" "$AREA/aaaaaaaaaaaa00000000000000000002" \
		"$AREA/not-a-run" "$AREA/aaaaaaaaaaaa00000000000000000003"
	touch -d '40 days ago' "$AREA/aaaaaaaaaaaa00000000000000000001" "$AREA/not-a-run"
	touch -d '2 hours ago' "$AREA/aaaaaaaaaaaa00000000000000000002"
	[ "$MODE" = user ] && chown -R "$SBX_TEST_USER" "$AREA"
	as_mode "$SBX" gc --config "$M/config.json" 2>"$M/gc.err"
	check "$MODE: sbx gc prunes results older than results_max_age_hours (default 30 days), and says so" \
		eval '[ ! -e "$AREA/aaaaaaaaaaaa00000000000000000001" ] && [ -d "$AREA/aaaaaaaaaaaa00000000000000000002" ] &&
			grep -q "pruned 1 run result" "$M/gc.err"'
	check "$MODE: sbx gc leaves names that are not run ids, and fresh results" \
		eval '[ -d "$AREA/not-a-run" ] && [ -d "$AREA/aaaaaaaaaaaa00000000000000000003" ]'
	n_before=$(ls "$AREA" | grep -c '^[0-9a-f]\{32\}$')
	jq '.results_max_count = 1' "$M/config.json" > "$M/config-count.json"
	as_mode "$SBX" gc --config "$M/config-count.json" 2>"$M/gc.err"
	left=$(ls "$AREA" | grep '^[0-9a-f]\{32\}$' | tr '\n' ' ')
	check "$MODE: results_max_count 1: the newest is kept, and results younger than a minute ($n_before before)" \
		eval '[ -d "$AREA/aaaaaaaaaaaa00000000000000000003" ] && [ ! -e "$AREA/aaaaaaaaaaaa00000000000000000002" ]'
	jq '.results_max_count = 0' "$M/config.json" > "$M/config-bad.json"
	as_mode "$SBX" gc --config "$M/config-bad.json" 2>"$M/gc.err"
	rc=$?
	check "$MODE: results_max_count 0 is a config error (69) naming the file and key" \
		eval '[ $rc -eq 69 ] && grep -q "config-bad.json: results_max_count" "$M/gc.err"'

	# --- which config is read ------------------------------------------------
	mkdir -p "$M/home/.config/sbx"
	jq '.' "$M/config.json" > "$M/home/.config/sbx/sbx.json"
	[ "$MODE" = user ] && chown -R "$SBX_TEST_USER" "$M/home/.config"
	as_mode "$SBX" check --policy "$POLICY" > "$M/check.txt" 2>&1
	as_mode "$SBX" check --json --policy "$POLICY" > "$M/check.json" 2>/dev/null
	if [ "$MODE" = user ]; then
		check "$MODE: sbx check reads ~/.config/sbx/sbx.json and says so" \
			grep -q "^config  *ok: $M/home/.config/sbx/sbx.json (the user's file)" "$M/check.txt"
		check "$MODE: sbx check --json: .config is that file" \
			test "$(jq -r .config "$M/check.json")" = "$M/home/.config/sbx/sbx.json"
		SBX_EXTRA_ENV="SBX_CONFIG=$M/config-count.json" as_mode "$SBX" check --json --policy "$POLICY" > "$M/check.json" 2>/dev/null
		check "$MODE: \$SBX_CONFIG comes before the user's file" \
			test "$(jq -r .config "$M/check.json")" = "$M/config-count.json"
		mkdir -p "$M/xdg-config/sbx"
		echo '{"bogus": 1}' > "$M/xdg-config/sbx/sbx.json"
		chown -R "$SBX_TEST_USER" "$M/xdg-config"
		SBX_EXTRA_ENV="XDG_CONFIG_HOME=$M/xdg-config" as_mode "$SBX" check --policy "$POLICY" > "$M/check.txt" 2>&1
		rc=$?
		check "$MODE: \$XDG_CONFIG_HOME/sbx/sbx.json when set; a bad key there is 69, naming file and key" \
			eval '[ $rc -eq 69 ] && grep -q "$M/xdg-config/sbx/sbx.json: bogus" "$M/check.txt"'
	else
		echo '{"bogus": 1}' > "$M/home/.config/sbx/sbx.json"
		as_mode "$SBX" check --json --policy "$POLICY" > "$M/check.json" 2>"$M/check.err"
		check "$MODE: root does not read a user file in its HOME (the system file or none)" \
			eval 'jq -e ".config == null or (.config | test(\"/sbx/sbx.json$\") and (contains(\"/home/\") | not))" "$M/check.json" >/dev/null &&
				! grep -q bogus "$M/check.err"'
	fi
	rm -rf "$M/home/.config/sbx/sbx.json"
	as_mode "$SBX" check --policy "$POLICY" --config "$M/config.json" > "$M/check.txt" 2>&1
	check "$MODE: sbx check --config F names F (--config)" \
		grep -q "^config  *ok: $M/config.json (--config)" "$M/check.txt"
	one -p shell -i nohandle -c true --store "$M/no-store"
	check "$MODE: a Hint that names a config key names the file too" \
		eval '[ $RC -eq 77 ] && grep -q "Hint: .*host config.*(the host config is $M/config.json)" "$ERR"'

	check "$MODE: nothing left behind" nothing_left
done

finish
