#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cgroup-birth.sh - how the sandbox's init gets into the run's cgroup.
#
# On cgroup v2 it is cloned straight into it (clone3 CLONE_INTO_CGROUP):
# its pid is never written to a cgroup.procs, so the run never waits for
# the RCU grace period such a migration costs.  When the kernel refuses
# that clone (a kernel before 5.7, a cgroup the caller may not clone into;
# here an EINVAL injected by strace), the init is cloned as before and
# moved by a cgroup.procs write, and the run is the same.  On cgroup v1,
# which has no such clone, the init is always moved, one write per
# hierarchy.  Read from the broker's own system calls (strace, without
# following its children), as root and as the user; every run signed and
# nothing left behind.
. "$SBX_SRCDIR/tests/e2e/lib.sh"
need strace

if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then v2=1; else v2=0; fi
diag "cgroup v$((v2 ? 2 : 1)) host"

# traced_run JOB [STRACE OPTIONS...]: sbx_run under strace; its log in $ST.
traced_run() {
	local job=$1; shift
	ST="$M/strace.$((RUNS + 1))"
	: > "$ST"
	[ "$MODE" = user ] && chown "$SBX_TEST_USER" "$ST"
	SBX_E2E_ROOT_WRAP="strace -qq -s 64 -o $ST -e trace=clone3,write -e signal=none $*" \
	SBX_E2E_USER_WRAP="strace -qq -s 64 -o $ST -e trace=clone3,write -e signal=none $*" \
		sbx_run "$job"
}
# The init's host pid: what the clone3 that made it returned.
init_pid() { sed -n 's/^clone3(.*) = \([0-9][0-9]*\)$/\1/p' "$ST" | tail -1; }
# How many times PID was written anywhere (cgroup.procs is written that way).
pid_writes() { grep -cE "^write\([0-9]+, \"$1\", ${#1}\)" "$ST"; }

for mode in root user; do
	setup_mode $mode
	mkjob "$M/true.json" shell 'echo born'

	traced_run "$M/true.json"
	pid=$(init_pid)
	diag "$mode: clone3 calls: $(grep -c '^clone3(' "$ST"), init pid ${pid:-none}, its writes $(pid_writes "${pid:-x}")"
	expect_rc 0 "$mode: a run under strace"
	check "$mode: it succeeded, printed its line, signed" \
		eval '[ "$(jqm .status)" = succeeded ] && [ "$(jqm .stdout.excerpt)" = born ] && signature_ok'
	if [ $v2 = 1 ]; then
		check "$mode: v2: the init is cloned into the run's cgroup (CLONE_INTO_CGROUP)" \
			eval '[ -n "$pid" ] && grep -E "^clone3\(.*CLONE_INTO_CGROUP.*\) = $pid\$" "$ST" >/dev/null'
		check "$mode: v2: its pid is never written to a cgroup.procs" \
			test "$(pid_writes "${pid:-x}")" -eq 0
	else
		check "$mode: v1: clone3 without CLONE_INTO_CGROUP, which v1 lacks" \
			eval '[ -n "$pid" ] && ! grep -q CLONE_INTO_CGROUP "$ST"'
		check "$mode: v1: its pid is written to each hierarchy's cgroup.procs" \
			test "$(pid_writes "${pid:-x}")" -ge 3
	fi
	check "$mode: the manifest names cgroup v$((v2 ? 2 : 1))" \
		test "$(jqm .isolation.cgroup.version)" = $((v2 ? 2 : 1))
	check "$mode: nothing left behind" nothing_left

	if [ $v2 = 1 ]; then
		# The kernel refuses the clone into the cgroup: the init is
		# cloned without it and moved; the run does not notice.
		traced_run "$M/true.json" -e inject=clone3:error=EINVAL:when=1
		pid=$(init_pid)
		diag "$mode: refused clone: $(grep '^clone3(' "$ST" | sed 's/{.*}/{...}/' | tr '\n' ';')"
		expect_rc 0 "$mode: v2, CLONE_INTO_CGROUP refused (EINVAL injected)"
		check "$mode: refused clone: the first clone3 asked for the cgroup and was refused" \
			eval 'grep "^clone3(" "$ST" | head -1 | grep -E "CLONE_INTO_CGROUP.*= -1 EINVAL \(.*INJECTED\)" >/dev/null'
		check "$mode: refused clone: the init came from a clone3 without it" \
			eval '[ -n "$pid" ] && grep -E "^clone3\(.*\) = $pid\$" "$ST" | grep -vq CLONE_INTO_CGROUP'
		check "$mode: refused clone: and was moved by one cgroup.procs write" \
			test "$(pid_writes "${pid:-x}")" -eq 1
		check "$mode: refused clone: succeeded, signed, cgroup v2 in the manifest" \
			eval '[ "$(jqm .status)" = succeeded ] && [ "$(jqm .isolation.cgroup.version)" = 2 ] && signature_ok'
		check "$mode: refused clone: nothing left behind" nothing_left

		# SBX_TEST_ENOSYS=clone_into_cgroup (for comparisons, make
		# bench's in the VM): the same, without asking the kernel.
		SBX_EXTRA_ENV="SBX_TEST_ENOSYS=clone_into_cgroup" traced_run "$M/true.json"
		pid=$(init_pid)
		expect_rc 0 "$mode: v2, SBX_TEST_ENOSYS=clone_into_cgroup"
		check "$mode: SBX_TEST_ENOSYS=clone_into_cgroup: no clone into the cgroup, one cgroup.procs write, signed" \
			eval '[ -n "$pid" ] && ! grep -q CLONE_INTO_CGROUP "$ST" && [ "$(pid_writes "$pid")" -eq 1 ] && signature_ok'
	fi
done

finish
