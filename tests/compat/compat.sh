#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# compat.sh - CPython's own regression tests, bare and inside sbx.
#
# Each module in tests/compat/modules.txt runs once bare (as the test
# user, in a scratch directory) and once as the code of a python-analysis
# job run by that user, both with tests/compat/run-modules.py, at the same
# time (the machine has two cores; each side gets both).  Every test that
# passes bare and does not pass inside must be listed in
# tests/compat/expected.txt with its reason, and every listed test must
# still fail inside: the list cannot hide a regression nor outlive a fix.
# Debian's libpython3.11-testsuite provides the modules; without it this is
# a failure, not a skip (tools/install-deps test installs it).
. "$SBX_SRCDIR/tests/e2e/lib.sh"

D="$SBX_SRCDIR/tests/compat"
PY=/usr/bin/python3
if ! "$PY" -c 'import test.test_os' >/dev/null 2>&1; then
	echo "Bail out! $PY has no regression test modules (Debian: libpython3.11-testsuite; tools/install-deps test installs it)"
	exit 1
fi
mapfile -t SPECS < <(grep -v "^#" "$D/modules.txt" | grep .)
MODS=()
for s in "${SPECS[@]}"; do MODS+=("${s%%:*}"); done

# The comparison itself can fail: a made-up module whose test passes bare
# and errors inside, unlisted, and a listed test that passes on both sides.
mkdir -p "$T/fake/bare" "$T/fake/sbx"
printf 'test_a (test.test_fake.C.test_a) ... ok\ntest_b (test.test_fake.C.test_b)\nDoc line ... ok\n' > "$T/fake/bare/test_fake.txt"
printf 'test_a (test.test_fake.C.test_a) ... ERROR\ntest_b (test.test_fake.C.test_b)\nDoc line ... ok\n' > "$T/fake/sbx/test_fake.txt"
printf '# comment\ntest_fake test.test_fake.C.test_b a reason\n' > "$T/fake/expected.txt"
fake=$("$PY" "$D/compare.py" "$T/fake/bare" "$T/fake/sbx" "$T/fake/expected.txt" test_fake)
frc=$?
check "compare.py fails on an unlisted sbx-only failure and a stale entry" \
	eval '[ "$frc" -ne 0 ] && grep -q "^# test_fake test.test_fake.C.test_a ERROR" <<<"$fake" &&
	grep -q "^# test_fake test.test_fake.C.test_b bare ok, sbx ok" <<<"$fake"'

# One run, as the unprivileged user: the path most users take.
setup_mode user
bound_sbx 900
start=$SECONDS

BARE="$T/bare"
mkdir -p "$BARE/home" "$BARE/tmp" "$BARE/out"
chown -R "$SBX_TEST_USER" "$BARE"
( cd "$BARE/home" && runuser -u "$SBX_TEST_USER" -- env -i PATH=/usr/bin:/bin HOME="$BARE/home" \
	TMPDIR="$BARE/tmp" LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 \
	"$PY" -I "$D/run-modules.py" "$BARE/out" "${SPECS[@]}" ) &
bare_pid=$!

# The job: the runner's code, the specs as arguments, limits raised within
# the profile's maximums (two cores, threads and processes for threading,
# concurrent.futures and socket servers, room for zip and tar tests).
jq -n --rawfile c "$D/run-modules.py" --args '{runtime_profile: "python-analysis", code: $c,
	args: (["/work/out"] + $ARGS.positional),
	limits: {wall_seconds: 600, soft_seconds: 590, cpu_cores: 2, memory_mib: 2048,
		 pids: 512, workspace_mib: 1024, output_files: 64}}' "${SPECS[@]}" > "$M/job.json"
chmod 0644 "$M/job.json"
sbx_run "$M/job.json"
wait "$bare_pid"
expect_rc 0 "python-analysis job running ${#MODS[@]} regression test modules"
check "nothing left behind" nothing_left

# The comparison's TAP follows this script's own.
out=$("$PY" "$D/compare.py" "$BARE/out" "$ART" "$D/expected.txt" "${MODS[@]}")
crc=$?
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok * - }" ;;
	"not ok "*) not_ok "${line#not ok * - }" ;;
	"Bail out!"*) echo "$line"; exit 1 ;;
	"#"*) echo "$line" ;;
	esac
done <<<"$out"
[ "$crc" -eq 0 ] || [ "$tap_failed" -gt 0 ] || not_ok "compare.py exited $crc"
diag "wall time of the suite: $((SECONDS - start)) s"
finish
