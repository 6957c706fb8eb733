#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# guest.sh - runs inside the test VM as a systemd service (root, in
# system.slice), started by vm.sh.  Runs each scenario's e2e scripts
# under the launcher that scenario names, and writes one TAP stream to
# /vm-results/guest.tap (every line echoed to the console, so the host sees
# progress), then /vm-results/done.
set -u
R=/vm-results
: "${SBX_SRCDIR:?}" "${SBX_BUILDDIR:?}"
export SBX_SRCDIR SBX_BUILDDIR SBX_LIBEXECDIR="$SBX_BUILDDIR"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
exec 3>"$R/guest.tap"
n=0
emit() { echo "$*" >&3; echo "$*"; }
ok() { n=$((n + 1)); emit "ok $n - $*"; }
not_ok() { n=$((n + 1)); emit "not ok $n - $*"; }
diag() { emit "# $*"; }

diag "kernel $(uname -r); $(systemctl --version | head -n1)"
diag "cgroup: $(stat -fc %T /sys/fs/cgroup); root controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"

# tap SCENARIO SCRIPT: run one e2e script, renumbering its TAP lines into
# ours with the scenario's name in front, as they come (the host watches
# the console for progress).
tap() {
	local sc=$1 script=$2
	bash "$SBX_SRCDIR/tests/e2e/$script" 2>&1 | {
		while IFS= read -r line; do
			case $line in
			"ok "*) ok "$sc: $script: ${line#ok * - }" ;;
			"not ok "*) not_ok "$sc: $script: ${line#not ok * - }" ;;
			"Bail out!"*) not_ok "$sc: $script: $line" ;;
			"#"*) emit "$line" ;;
			esac
		done
		echo "$n" > /tmp/sbx-vm.count
	}
	n=$(cat /tmp/sbx-vm.count)
}

home_cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
scenarios=${SBX_VM_SCENARIOS:-root-cgroup}
for sc in $scenarios; do
	diag "scenario $sc"
	case $sc in
	root-cgroup)
		# 1. root, sbx in the root cgroup; the user on a directory
		# delegated by hand (5), started inside it.
		echo $$ > /sys/fs/cgroup/cgroup.procs
		SBX_TEST_USER=sbxvm1 tap "$sc" lifecycle.sh
		SBX_TEST_USER=sbxvm1 tap "$sc" escape.sh
		echo $$ > "/sys/fs/cgroup$home_cg/cgroup.procs" ;;
	*)
		not_ok "unknown scenario $sc" ;;
	esac
done
emit "1..$n"
exec 3>&-
touch "$R/done"
