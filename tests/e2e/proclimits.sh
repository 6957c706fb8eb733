#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# proclimits.sh - a run stopped by a process limit says which one.
#
# Two limits can refuse a payload's fork: the run's pids (the cgroup's
# pids.max) and RLIMIT_NPROC.  The kernel checks RLIMIT_NPROC at every
# level of the user namespace chain: in the sandbox's namespace against
# the payload's own limit, and above it against (host, the caller's uid),
# which counts every process of the caller on the host and is capped by the
# caller's soft RLIMIT_NPROC at the time the namespace was made.  So an
# unprivileged caller's other processes could stop the payload's fork short
# of pids.max, and the run used to end `failed`, "payload exited with code
# 2", with pids_limit_hit false.
#
# Each payload is dash forking until it cannot (dash then exits 2).  As
# root and as the user: a fork bomb (concurrent forks racing for the last
# slots) with a loop that hits the limit, at pids 32, ends limit_exceeded,
# pids_limit.  As the user, with the caller's soft RLIMIT_NPROC a few
# processes above what sbx needs and the hard limit high: the payload
# still reaches pids.max (sbx raises its soft limit to the hard one before
# it makes the namespace).  With the hard limit low as well: the run ends
# limit_exceeded, reason_code nproc_limit, the reason naming RLIMIT_NPROC.
# As root, a low RLIMIT_NPROC of the caller does not reach the payload
# (host root's namespaces are not capped).  Every process is the test's:
# the payload's forks are bounded by pids 32 and wall_seconds, and the
# limits are set with prlimit on the test's own command.
. "$SBX_SRCDIR/tests/e2e/lib.sh"
need prlimit

plan 25

# A forker that counts: each line of stdout is one fork made.
FORKER='n=0; while :; do sleep 30 & n=$((n + 1)); echo $n; done'
BOMB='b() { b | b & }; b; '"$FORKER"

# status + " " + reason_code of the last run.
outcome() { jqm '.status + " " + .reason_code'; }
# The forker's count: the last line of its stdout.
made() { jqm .stdout.excerpt | grep -E "^[0-9]+$" | tail -n1; }

bound_sbx 60
for mode in root user; do
	setup_mode $mode

	mkjob "$M/bomb.json" shell "$BOMB" '{limits: {pids: 32, wall_seconds: 20}}'
	for i in 1 2 3; do
		sbx_run "$M/bomb.json"
		expect_rc 137 "$mode: fork bomb at pids 32, run $i"
		check "$mode: fork bomb run $i: limit_exceeded pids_limit, pids_limit_hit ($(outcome), $(jqm .reason))" \
			eval '[ "$(outcome)" = "limit_exceeded pids_limit" ] && [ "$(jqm .usage.pids_limit_hit)" = true ]'
	done

	# How many processes of the caller's uid exist while sbx runs a
	# payload: sbx and its helpers, the sandbox's init and the payload.
	# The forker's limit is set relative to that, a few above it.
	if [ $mode = user ]; then
		mkjob "$M/count.json" shell 'sleep 2; echo done'
		sbx_run "$M/count.json" &
		spid=$!
		base=0
		for t in $(seq 30); do
			sleep 0.1
			c=$(ps -L -u "$SBX_TEST_USER" -o lwp= | wc -l)
			[ "$c" -gt "$base" ] && base=$c
		done
		wait $spid
		RUNS=$((RUNS + 1))
		diag "user: the caller's uid has at most $base tasks while a trivial run runs"
		soft=$((base + 6))
	else
		soft=4
	fi
	hard=$(prlimit --nproc --output HARD --noheadings --pid $$)
	[ "$hard" = unlimited ] && hard=unlimited

	mkjob "$M/forker.json" shell "$FORKER" '{limits: {pids: 32, wall_seconds: 20}}'
	SBX_E2E_ROOT_WRAP="prlimit --nproc=$soft:$hard --" SBX_E2E_USER_WRAP="prlimit --nproc=$soft:$hard --" \
		sbx_run "$M/forker.json"
	expect_rc 137 "$mode: the caller's soft RLIMIT_NPROC $soft (hard $hard): the forker stops at pids 32"
	check "$mode: ... limit_exceeded pids_limit ($(outcome), $(jqm .reason))" \
		test "$(outcome)" = "limit_exceeded pids_limit"
	check "$mode: ... it made about all the pids limit allows ($(made))" \
		test "$(made)" -ge 28

	if [ $mode = user ]; then
		SBX_E2E_USER_WRAP="prlimit --nproc=$soft:$soft --" sbx_run "$M/forker.json"
		expect_rc 137 "$mode: the caller's hard RLIMIT_NPROC $soft: the forker stops short of pids 32"
		check "$mode: ... limit_exceeded nproc_limit ($(outcome), made $(made))" \
			eval '[ "$(outcome)" = "limit_exceeded nproc_limit" ] && [ "$(made)" -lt 20 ]'
		check "$mode: ... the reason names RLIMIT_NPROC and the caller's uid ($(jqm .reason))" \
			eval 'jqm .reason | grep -q "RLIMIT_NPROC" && jqm .reason | grep -q "uid $SBX_TEST_UID"'
		check "$mode: ... pids_limit_hit false: the cgroup's limit was not the one" \
			test "$(jqm .usage.pids_limit_hit)" = false
	else
		# Host root's namespaces have no cap above them: the forker
		# above reached pids.max with root's RLIMIT_NPROC at 4.
		check "$mode: root's own RLIMIT_NPROC does not reach the payload (made $(made))" \
			test "$(made)" -ge 28
	fi
	check "$mode: every manifest signed, nothing left behind" eval 'signature_ok && nothing_left'
done
finish
