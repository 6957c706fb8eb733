#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# guest.sh - runs inside the test VM as a systemd service (root, in
# system.slice), started by vm.sh.  Runs each scenario's e2e scripts
# under the launcher that scenario names, and writes one TAP stream to
# /vm-results/guest.tap (every line echoed to the console, so the host sees
# progress), then /vm-results/done.
#
# Scenarios (SBX_VM_SCENARIOS, which vm.sh sets), each the way users start sbx
# on a systemd host with cgroup v2:
#   root-cgroup  root, sbx in the root cgroup (no cgroup_parent); the user
#                on a directory delegated by hand, started inside it;
#                with sbx prepare's read-only tree and archive inputs
#   scope        root under systemd-run --scope -p Delegate=yes; the user
#                under systemd-run --user --scope -p Delegate=yes, with the
#                user's manager running (linger)
#   service      root in a Delegate=yes service; the user in a service with
#                User= and Delegate=yes (the cron/batch case)
#   host         one-off checks: a login session without delegation, a
#                parent lacking a controller, a parent with other processes
#   container    sbx inside podman containers, rootful and rootless, with
#                crun (tests/vm/container.sh, on the image vm.sh built)
#   extract      (not by default) extract.sh's cgroup checks, as
#                root-cgroup runs them
#   bench        (not by default) the trivial job's start-up figures,
#                bubblewrap against sbx, on v2
set -u
R=/vm-results
: "${SBX_SRCDIR:?}" "${SBX_BUILDDIR:?}"
export SBX_SRCDIR SBX_BUILDDIR SBX_LIBEXECDIR="$SBX_BUILDDIR"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
# Software emulation is many times slower than the host: widen wall-clock
# bounds (lib.sh), never the checks themselves.
export SBX_E2E_SLACK_MS=${SBX_E2E_SLACK_MS:-4000}
# lifecycle.sh's sections that do not depend on cgroups ran on the host.
export SBX_E2E_CGROUP_ONLY=1
SBX="$SBX_BUILDDIR/sbx"
exec 3>"$R/guest.tap"
n=0
emit() { echo "$*" >&3; echo "$*"; }
ok() { n=$((n + 1)); emit "ok $n - $*"; }
not_ok() { n=$((n + 1)); emit "not ok $n - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
diag() { emit "# $*"; }

diag "kernel $(uname -r); $(systemctl --version | head -n1)"
diag "cgroup: $(stat -fc %T /sys/fs/cgroup); root controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
check "the guest runs cgroup v2 only" test "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs

# tap SCENARIO SCRIPT: run one e2e script, renumbering its TAP lines into
# ours with the scenario's name in front, as they come (the host watches
# the console for progress).
tap() {
	local sc=$1 script=$2 path=$SBX_SRCDIR/tests/e2e/$2 t0
	case $script in */*) path=$SBX_SRCDIR/$script ;; esac
	t0=$(date +%s)
	bash "$path" 2>&1 | {
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
	diag "$sc: $script took $(( $(date +%s) - t0 ))s"
}

# user_manager USER: create USER and start its systemd manager (linger).
user_manager() {
	local u=$1 uid i
	id "$u" >/dev/null 2>&1 || useradd --system --create-home --shell /bin/sh "$u" || return 1
	uid=$(id -u "$u")
	loginctl enable-linger "$u" || return 1
	for i in $(seq 300); do
		[ -S "/run/user/$uid/bus" ] && return 0
		sleep 0.2
	done
	return 1
}

# Under the other launchers, the sections of lifecycle.sh that show the
# run's cgroup is where it must be and works: the memory hog, the fork bomb,
# the CPU quota, sbx cancel, SIGKILL of sbx then sbx gc, and 16 concurrent
# runs (the root-cgroup scenario runs them all).
PLACEMENT_SECTIONS="1 3 4 6 7 9"

home_cg=$(sed -n 's/^0:://p' /proc/self/cgroup)
back_home() { echo $$ > "/sys/fs/cgroup$home_cg/cgroup.procs"; }

scenario_root_cgroup() {
	echo $$ > /sys/fs/cgroup/cgroup.procs
	SBX_TEST_USER=sbxvm1 tap root-cgroup lifecycle.sh
	SBX_TEST_USER=sbxvm1 tap root-cgroup memory.sh
	SBX_TEST_USER=sbxvm1 tap root-cgroup escape.sh
	SBX_TEST_USER=sbxvm1 tap root-cgroup cgroup-birth.sh
	SBX_TEST_USER=sbxvm1 tap root-cgroup prepare.sh
	back_home
}

scenario_scope() {
	local u=sbxvm2 uid
	check "scope: the user's manager runs (linger)" user_manager $u || return
	uid=$(id -u $u)
	SBX_TEST_USER=$u SBX_E2E_USER_CGROUP=none \
		SBX_E2E_ROOT_WRAP="systemd-run --scope -p Delegate=yes --quiet --collect --" \
		SBX_E2E_USER_WRAP="systemd-run --user --scope -p Delegate=yes --quiet --collect --" \
		SBX_E2E_USER_RUNTIME_DIR=/run/user/$uid \
		SBX_E2E_USER_ENV="DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$uid/bus" \
		SBX_E2E_SECTIONS="$PLACEMENT_SECTIONS" tap scope lifecycle.sh
}

scenario_service() {
	local u=sbxvm3
	id $u >/dev/null 2>&1 || useradd --system --create-home --shell /bin/sh $u
	SBX_TEST_USER=$u SBX_E2E_USER_CGROUP=none \
		SBX_E2E_ROOT_WRAP="systemd-run --pipe --wait --quiet --collect -p Delegate=yes --" \
		SBX_E2E_USER_AS="systemd-run --pipe --wait --quiet --collect -p Delegate=yes -p User=$u --" \
		SBX_E2E_SECTIONS="$PLACEMENT_SECTIONS" tap service lifecycle.sh
}

# A small job and a host config for the one-off checks.
one_off_setup() {
	O=/tmp/sbx-vm-host
	rm -rf "$O" && mkdir -p "$O/store/root" "$O/state" && chmod 0755 "$O"
	printf '{"runtime_profile":"shell","code":"echo hi"}\n' > "$O/job.json"
	printf '{"state_dir":"%s","policy":"%s"}\n' "$O/state" "$SBX_SRCDIR/policy" > "$O/config.json"
	"$SBX" keygen -o "$O/key" 2>/dev/null
}

scenario_host() {
	local u=sbxvm4 uid out rc
	one_off_setup
	# A login session (pam_systemd puts it in session-N.scope, which is not
	# delegated): sbx refuses with a Hint that says what to type.
	id $u >/dev/null 2>&1 || useradd --system --create-home --shell /bin/sh $u
	uid=$(id -u $u)
	mkdir -p "$O/u/store/$u" "$O/u/state" && chmod 0700 "$O/u/state"
	printf '{"state_dir":"%s","policy":"%s"}\n' "$O/u/state" "$SBX_SRCDIR/policy" > "$O/u/config.json"
	cp "$O/job.json" "$O/u/" && chown -R $u "$O/u"
	out=$(su -l $u -c "cat /proc/self/cgroup; $SBX keygen -o $O/u/key 2>&1 >/dev/null; $SBX run --config $O/u/config.json --key $O/u/key --store $O/u/store $O/u/job.json 2>&1 >/dev/null; echo rc=\$?" 2>&1)
	diag "login session: $(echo "$out" | tr '\n' ' ' | head -c 900)"
	check "host: a login session without delegation: 69 with a Hint naming systemd-run --user --scope" \
		eval 'echo "$out" | grep -q "session-.*scope" && echo "$out" | grep -q "^rc=69" &&
		      echo "$out" | grep -q "Hint: .*systemd-run --user --scope -p Delegate=yes sbx run"'
	out=$(su -l $u -c "$SBX check --config $O/u/config.json 2>&1; echo rc=\$?" 2>&1)
	check "host: sbx check in that session predicts the refusal (69, cgroup blocked)" \
		eval 'echo "$out" | grep -q "^rc=69" && echo "$out" | grep -q "^cgroup  *blocked"'

	# A parent whose subtree_control lacks pids: refused, naming it.
	mkdir -p /sys/fs/cgroup/sbx-vm-nopids
	echo "+memory +cpu" > /sys/fs/cgroup/sbx-vm-nopids/cgroup.subtree_control
	mkdir -p /sys/fs/cgroup/sbx-vm-nopids/deleg
	printf '{"state_dir":"%s","policy":"%s","cgroup_parent":"/sbx-vm-nopids/deleg"}\n' "$O/state" "$SBX_SRCDIR/policy" > "$O/nopids.json"
	"$SBX" run --config "$O/nopids.json" --key "$O/key" --store "$O/store" "$O/job.json" >/dev/null 2>"$O/nopids.err"
	rc=$?
	diag "no pids: $(head -c 600 "$O/nopids.err")"
	check "host: a parent without the pids controller: 69 naming pids" \
		eval '[ $rc -eq 69 ] && grep -q "pids" "$O/nopids.err"'
	"$SBX" check --config "$O/nopids.json" >"$O/nopids.check" 2>&1
	rc=$?
	check "host: sbx check predicts it" eval '[ $rc -eq 69 ] && grep -q "^cgroup  *unusable.*pids" "$O/nopids.check"'
	rmdir /sys/fs/cgroup/sbx-vm-nopids/deleg /sys/fs/cgroup/sbx-vm-nopids

	# sbx check under each launcher that works says ok, exit 0: it
	# predicts the runs above.
	out=$(systemd-run --scope -p Delegate=yes --quiet --collect -- "$SBX" check --config "$O/config.json" 2>&1)
	rc=$?
	check "host: sbx check in a root scope with Delegate=yes: cgroup ok, exit 0" \
		eval '[ $rc -eq 0 ] && echo "$out" | grep -q "^cgroup  *ok: v2 .*trial run"'
	user_manager $u
	out=$(runuser -u $u -- env XDG_RUNTIME_DIR=/run/user/$uid DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$uid/bus \
		systemd-run --user --scope -p Delegate=yes --quiet --collect -- "$SBX" check --config "$O/u/config.json" 2>&1)
	rc=$?
	check "host: sbx check in a user scope with Delegate=yes: cgroup ok, exit 0" \
		eval '[ $rc -eq 0 ] && echo "$out" | grep -q "^cgroup  *ok: v2 .*trial run"'

	# A user's sbx outside its hand-delegated cgroup_parent: the attach
	# needs the common ancestor; refused with a Hint that says so, and
	# sbx check predicts it.
	mkdir -p /sys/fs/cgroup/sbx-vm-outside && chown -R $u /sys/fs/cgroup/sbx-vm-outside
	printf '{"state_dir":"%s","policy":"%s","cgroup_parent":"/sbx-vm-outside"}\n' "$O/u/state" "$SBX_SRCDIR/policy" > "$O/u/outside.json"
	chown $u "$O/u/outside.json"
	out=$(runuser -u $u -- "$SBX" run --config "$O/u/outside.json" --key "$O/u/key" --store "$O/u/store" "$O/u/job.json" 2>&1 >/dev/null; echo rc=$?)
	diag "outside: $(echo "$out" | tr '\n' ' ' | head -c 700)"
	check "host: a user outside its cgroup_parent: 69, the Hint names the common ancestor and where to start sbx" \
		eval 'echo "$out" | grep -q "^rc=69" && echo "$out" | grep -q "Hint: .*outside cgroup_parent.*common ancestor.*Delegate=yes sbx run \.\.\.$"'
	out=$(runuser -u $u -- "$SBX" check --config "$O/u/outside.json" 2>&1; echo rc=$?)
	check "host: sbx check predicts it (69, cgroup blocked, the same Hint)" \
		eval 'echo "$out" | grep -q "^rc=69" && echo "$out" | grep -q "^cgroup  *blocked" && echo "$out" | grep -q "common ancestor"'
	check "host: nothing left in the refused parent" eval '[ -z "$(ls -d /sys/fs/cgroup/sbx-vm-outside/*/ 2>/dev/null)" ]'
	rmdir /sys/fs/cgroup/sbx-vm-outside/*/ /sys/fs/cgroup/sbx-vm-outside 2>/dev/null

	# sbx in a delegated scope that holds another process: that process
	# moves to the supervisor leaf with sbx, and the run works.
	out=$(systemd-run --scope -p Delegate=yes --quiet --collect -- sh -c '
		sleep 60 & s=$!
		"$0" run --config "$1/config.json" --key "$1/key" --store "$1/store" "$1/job.json" >/dev/null 2>"$1/busy.err"
		echo rc=$?; cat /proc/$s/cgroup; kill $s' "$SBX" "$O" 2>&1)
	diag "busy scope: $(echo "$out" | tr '\n' ' ')"
	check "host: a delegated scope with another process: the run succeeds, the process moved to sbx.supervisor" \
		eval 'echo "$out" | grep -q "^rc=0" && echo "$out" | grep -q "/sbx.supervisor$"'
}

scenario_container() {
	tap container tests/vm/container.sh
}

# Not in the default list (SBX_VM_SCENARIOS=extract): extract.sh's cgroup
# part, as in root-cgroup.  It passed in the guest but took 369-442 s of
# the boot's bound under TCG; the whole script runs on the host.
scenario_extract() {
	echo $$ > /sys/fs/cgroup/cgroup.procs
	SBX_TEST_USER=sbxvm1 tap root-cgroup extract.sh
	back_home
}

# Not a test and not in the default list (SBX_VM_SCENARIOS=bench): the
# trivial job's start-up on cgroup v2, interleaved, root, sbx in the root
# cgroup - bubblewrap, sbx with its init cloned into the run's cgroup, and
# sbx with the init moved in as on v1 (SBX_TEST_ENOSYS=clone_into_cgroup).
# Under TCG every figure is inflated; the ratios are what compare.  Needs
# tests/bench/bench-run from `make bench` in the build tree.
scenario_bench() {
	local B=/tmp/sbx-vm-bench br=$SBX_BUILDDIR/tests/bench/bench-run run
	[ -x "$br" ] || { not_ok "bench: $br is missing (run make bench on the host first)"; return; }
	echo $$ > /sys/fs/cgroup/cgroup.procs
	rm -rf "$B" && mkdir -p "$B/state" "$B/store/root" && chmod 0700 "$B/state"
	printf '{"state_dir":"%s"}\n' "$B/state" > "$B/config.json"
	printf '{"runtime_profile":"shell","code":"true"}\n' > "$B/true.json"
	"$SBX" keygen -o "$B/key" 2>/dev/null
	run="$SBX run -q --config $B/config.json --policy $SBX_SRCDIR/policy --key $B/key --store $B/store $B/true.json"
	"$br" -n "${SBX_VM_BENCH_RUNS:-20}" -o "$B/rounds" \
		"bwrap=/usr/bin/bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --ro-bind /etc/ld.so.cache /etc/ld.so.cache --proc /proc --dev /dev --tmpfs /tmp --tmpfs /work --chdir /work /bin/sh -c true" \
		"sbx=$run" "sbx-moved=/usr/bin/env SBX_TEST_ENOSYS=clone_into_cgroup $run" > "$B/table" 2>&1
	check "bench: every round ran" test $? -eq 0
	while read -r line; do diag "bench: $line"; done < "$B/table"
	back_home
}

scenarios=${SBX_VM_SCENARIOS:?vm.sh names the scenarios}
for sc in $scenarios; do
	diag "scenario $sc"
	case $sc in
	root-cgroup) scenario_root_cgroup ;;
	scope) scenario_scope ;;
	service) scenario_service ;;
	host) scenario_host ;;
	container) scenario_container ;;
	bench) scenario_bench ;;
	extract) scenario_extract ;;
	*) not_ok "unknown scenario $sc" ;;
	esac
done
emit "1..$n"
exec 3>&-
touch "$R/done"
