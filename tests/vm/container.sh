#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# container.sh - sbx inside podman containers (crun), rootful and
# rootless, in the cgroup v2 VM (guest.sh runs it as root, as the
# "container" scenario).  Prints TAP.
#
# The image is the one deploy/container/build-image makes, built on the
# host by vm.sh with the Containerfile (a podman build under TCG takes
# minutes) into a store this guest's podman reads as an additional image
# store (SBX_VM_CONTAINER_DIR/store), and for the rootless user a copy of
# it whose owners are that user's ids (SBX_VM_CONTAINER_DIR/store-user).
#
# With the settings docs/container.md gives ($SETTINGS: sbx's seccomp
# profile, an unmasked /proc, a writable cgroup namespace, AppArmor
# unconfined, no --privileged), as root and then as a user (rootless
# podman), each job in a container of its own whose command is sbx run
# (the per-run pattern):
#   sbx check (0), the example job (0, signed manifest, its artifact in
#   the runs volume), a memory hog (137), a fork bomb (bounded: 124 at the
#   wall deadline with the pids limit hit), and after each, nothing left
#   in the container's cgroup (read inside the container after sbx exits)
#   nor in the state volume;
#   a long job cancelled with `podman kill --signal INT` (130, a signed
#   cancelled manifest on the container's stdout, no run state left).
# Then the container without each setting in turn (as root; rootless,
# the cgroup and /proc ones): sbx run refuses with 69 and a Hint that
# names that setting, and sbx check says the same.  As root, too, the
# node's seccomp and AppArmor profiles and the Kubernetes manifests under
# podman kube play (tests/vm/kube.sh).
#
# Every podman call is bounded (timeout), so a stalled container cannot
# hang the suite; the VM's own bound covers the rest.
set -u
: "${SBX_SRCDIR:?}" "${SBX_BUILDDIR:?}"
# Every way out of this script shows in the TAP stream.
finished=0
# What the containers printed is kept in the results share for a look
# from the host (vm.sh's directory, results.N/container/).
keep() {
	mkdir -p /vm-results/container
	cp /tmp/sbx-ctr-root/*.out /tmp/sbx-ctr-root/*.err /tmp/sbx-ctr-root/refused-* \
		/vm-results/container/ 2>/dev/null
	mkdir -p /vm-results/container/user
	cp /tmp/sbx-ctr-user/*.out /tmp/sbx-ctr-user/*.err /tmp/sbx-ctr-user/refused-* /tmp/sbx-ctr-load.log \
		/vm-results/container/user/ 2>/dev/null
}
trap 'keep; [ $finished = 1 ] || echo "Bail out! tests/vm/container.sh ended early (line $LINENO)"' EXIT
[ -n "${SBX_VM_CONTAINER_DIR:-}" ] || { echo "Bail out! SBX_VM_CONTAINER_DIR is not set (vm.sh sets it)"; exit 1; }
SBX=$SBX_BUILDDIR/sbx
PROBE=$SBX_BUILDDIR/tests/probe/sbx-probe
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }
diag() { echo "# $*"; }
# (Not "d": the suites' $d is their directory, and the checks' commands
# are evaluated here.)
check() { local desc=$1; shift; if "$@"; then ok "$desc"; else not_ok "$desc"; return 1; fi; }
bail() { echo "Bail out! $*"; exit 1; }
SECONDS=0

# What sbx needs from the container (docs/container.md), and nothing more.
# sbx's seccomp profile: podman's default with sethostname allowed.
mkdir -p /tmp/sbx-ctr-seccomp
"$SBX_SRCDIR/deploy/container/seccomp-profile" > /tmp/sbx-ctr-seccomp/sbx.json ||
	bail "deploy/container/seccomp-profile failed"
chmod -R a+rX /tmp/sbx-ctr-seccomp
SETTINGS_NS="--security-opt seccomp=/tmp/sbx-ctr-seccomp/sbx.json"
SETTINGS_PROC="--security-opt unmask=/proc/*"
SETTINGS_CG="--security-opt unmask=/sys/fs/cgroup"
# podman confines a container with its AppArmor profile where AppArmor is
# on (Debian's kernel): that profile denies mount and writes to /proc/sys.
SETTINGS_AA="--security-opt apparmor=unconfined"
SETTINGS="$SETTINGS_NS $SETTINGS_PROC $SETTINGS_CG $SETTINGS_AA"
case " $SETTINGS " in *" --privileged "*|*"seccomp=unconfined"*) bail "the settings under test give away too much" ;; esac

# Root's podman keeps containers on a tmpfs (the guest's root is an
# overlay, which cannot be an overlay's upper layer) and finds the image in
# the store vm.sh built, read-only.
mkdir -p /var/lib/containers /etc/containers
mountpoint -q /var/lib/containers || mount -t tmpfs -o size=1200m sbx-container /var/lib/containers
cat > /etc/containers/storage.conf <<E
[storage]
driver = "overlay"
runroot = "/run/containers/storage"
graphroot = "/var/lib/containers/storage"
[storage.options]
additionalimagestores = ["$SBX_VM_CONTAINER_DIR/store"]
E

# setup DIR OWNER: the bind-mounted volumes and files one mode's
# containers get: store (with the example's input), state, runs, jobs, a
# catalog with the probe profile, the signing key.
setup() {
	local d=$1 owner=$2
	rm -rf "$d" && mkdir -p "$d/store/root" "$d/state" "$d/runs" "$d/jobs" || return 1
	"$SBX" keygen -o "$d/key" 2>/dev/null || return 1
	cp -r "$SBX_SRCDIR/policy" "$d/policy"
	# The image has neither python nor node.
	rm -f "$d/policy/profiles/python-analysis.json" "$d/policy/profiles/node.json"
	jq '.binds += [{"src": "/opt/sbx-probe", "dst": "/opt/sbx-probe"}] |
		.description = "test only: shell profile with the probe program"' \
		"$SBX_SRCDIR/policy/profiles/shell.json" > "$d/policy/profiles/probe.json"
	printf 'north,10\nsouth,5\nnorth,2.5\n' > "$d/store/root/sales.csv"
	# The example, for the shell profile (the image has no python):
	# totals per region from an input handle, a required output.
	jq -n '{input_handles: ["sales.csv"], runtime_profile: "shell",
		code: "awk -F, '"'"'{t[$1]+=$2} END {for (r in t) print r\",\"t[r]}'"'"' /work/in/sales.csv | sort > /work/out/totals.csv; echo regions: $(wc -l < /work/out/totals.csv)",
		allowed_outputs: ["text/csv"], required_outputs: ["totals.csv"]}' > "$d/jobs/example.json"
	jq -n '{runtime_profile: "probe", code: "exec /opt/sbx-probe memhog 256", limits: {memory_mib: 64}}' > "$d/jobs/memhog.json"
	jq -n '{runtime_profile: "probe", code: "/opt/sbx-probe forkbomb 200 ctr-bomb; while :; do :; done",
		limits: {pids: 32, wall_seconds: 3, grace_seconds: 1}}' > "$d/jobs/forkbomb.json"
	jq -n '{runtime_profile: "shell", code: "echo started; sleep 300", limits: {wall_seconds: 600}}' > "$d/jobs/long.json"
	jq -n '{runtime_profile: "shell", code: "echo quick"}' > "$d/jobs/quick.json"
	cat > "$d/jobs/run-and-check" <<'E'
sbx run "$@"
rc=$?
echo "rootfs: $(awk '$2 == "/" {t = $3} END {print t}' /proc/mounts)" >&2
cg=$(find /sys/fs/cgroup -mindepth 1 -type d -name 'sbx-*')
all=$(cat $(find /sys/fs/cgroup -name cgroup.procs))
ps=
for p in $all; do
	[ "$p" = 1 ] || [ "$p" = $$ ] || [ ! -e /proc/$p ] || ps="$ps $p:$(tr '\0' ' ' </proc/$p/cmdline)"
done
echo "left: cgroups=[$(echo $cg)] processes=[$(echo $ps)]" >&2
exit $rc
E
	# The image's host config; rootless, root's sandbox ids must be ids
	# the container's user namespace maps (podman maps 65536 of them).
	jq --argjson ids "${ROOT_IDS:-null}" 'if $ids then .root_ids = $ids else . end' \
		"$SBX_SRCDIR/deploy/container/sbx.json" > "$d/sbx.json"
	chmod -R a+rX "$d" && chown -R "$owner" "$d"
}

# The manifest in $OUT verifies with jq and openssl alone, against KEY.pub.
signed() {
	local out=$1 key=$2 t
	t=$(mktemp -d /tmp/sbx-ctr-sig.XXXXXX)
	jq -cjS 'del(.signature)' "$out" > "$t/body" &&
		jq -r '.signature.value' "$out" | openssl base64 -d -A > "$t/sig" &&
		openssl pkeyutl -verify -pubin -inkey "$key.pub" -rawin -in "$t/body" -sigfile "$t/sig" >/dev/null 2>&1
	local r=$?
	rm -rf "$t"
	return $r
}

# left_in CG INITPID: what is in the container's cgroup CG besides the
# container's own processes (the init and its children, which sbx moved
# to its supervisor leaf): run cgroups (sbx-<run id>) or other processes.
# Empty when nothing is left.
left_in() {
	local cg=$1 init=$2 own p
	own=" $init $(cat /proc/"$init"/task/*/children 2>/dev/null) "
	find "$cg" -mindepth 1 -type d -name 'sbx-*' 2>/dev/null | sed 's|^|cgroup:|'
	for p in $(cat $(find "$cg" -name cgroup.procs) 2>/dev/null); do
		case $own in *" $p "*) ;; *) echo "process:$p:$(tr '\0' ' ' < /proc/"$p"/cmdline 2>/dev/null)" ;; esac
	done
}

# suite MODE DIR PODMAN...: the scenarios for root or the user, each job
# in a container of its own (the per-run pattern), its command
# /jobs/run-and-check: sbx run, then a list on stderr of what is left in
# the container's cgroup - run cgroups and processes other than the
# container's init - read from inside, where the cgroup namespace's root
# is the container's cgroup.
suite() {
	local mode=$1 d=$2; shift 2
	local P=("$@") vols c=sbx-ctr-cancel rc id i
	vols="-v $d/store:/var/lib/sbx/store -v $d/state:/run/sbx -v $d/runs:/var/lib/sbx/runs -v $d/jobs:/jobs:ro -v $d/policy:/etc/sbx/policy:ro -v $d/sbx.json:/etc/sbx/sbx.json:ro -v $PROBE:/opt/sbx-probe:ro"
	timeout 60 "${P[@]}" secret rm sbx-signing-key >/dev/null 2>&1
	timeout 60 "${P[@]}" secret create sbx-signing-key "$d/key" >/dev/null ||
		{ not_ok "$mode: podman secret create"; return; }
	# run JOB: $OUT (the manifest: the container's stdout), $ERR, $RC.
	run() {
		OUT=$d/$1.out ERR=$d/$1.err
		timeout 300 "${P[@]}" run --rm --init --pull=never --network=none $SETTINGS \
			--secret sbx-signing-key,mode=0400 $vols --entrypoint /bin/sh localhost/sbx:vm \
			/jobs/run-and-check "/jobs/$1.json" >"$OUT" 2>"$ERR"
		RC=$?
		id=$(jq -r .run_id "$OUT" 2>/dev/null)
	}
	nothing_left() {
		local left
		left=$(grep '^left:' "$ERR"; ls -A "$d/state/runs" 2>/dev/null | sed 's/^/state:/')
		[ "$left" = "left: cgroups=[] processes=[]" ] || { diag "$mode: left behind: $(echo $left)"; return 1; }
	}
	timeout 300 "${P[@]}" run --rm --init --pull=never --network=none $SETTINGS \
		--secret sbx-signing-key,mode=0400 $vols localhost/sbx:vm check >"$d/check.out" 2>&1
	rc=$?
	check "$mode: sbx check in a container with the documented settings: exit 0" eval '[ $rc -eq 0 ]' ||
		diag "$(grep -v ' ok' "$d/check.out" | head -c 1500)"

	run example
	check "$mode: the example job: 0, succeeded, signed" \
		eval '[ $RC -eq 0 ] && [ "$(jq -r .status "$OUT")" = succeeded ] && signed "$OUT" "$d/key"' ||
		diag "rc $RC: $(head -c 1500 "$ERR") stdout: $(head -c 1500 "$OUT" | tr '\n' ' ')"
	check "$mode: the example job: its artifact in the runs volume" \
		eval 'grep -qx "north,12.5" "$d/runs/$id/totals.csv"' ||
		diag "runs volume: $(cd "$d/runs" && find . | head -20 | tr '\n' ' ')"
	check "$mode: the example job: nothing left in the container's cgroup or the state volume" nothing_left

	run memhog
	check "$mode: a memory hog at 4x its limit: 137, limit_exceeded (memory), signed" \
		eval '[ $RC -eq 137 ] && [ "$(jq -r .reason_code "$OUT")" = memory_limit ] && signed "$OUT" "$d/key"' ||
		diag "rc $RC: $(head -c 1500 "$ERR")"
	check "$mode: memory hog: nothing left in the container's cgroup or the state volume" nothing_left

	run forkbomb
	check "$mode: a fork bomb under pids 32: 124 at the wall deadline, pids limit hit, fork failed inside" \
		eval '[ $RC -eq 124 ] && [ "$(jq -r .usage.pids_limit_hit "$OUT")" = true ] &&
		      jq -r .stdout.excerpt "$OUT" | grep -Eq "^forkbomb made=([0-9]|[12][0-9]|3[01]) errno=EAGAIN"' ||
		diag "rc $RC: $(head -c 1500 "$ERR")"
	check "$mode: fork bomb: nothing left in the container's cgroup or the state volume" nothing_left

	# A container whose command is the run, cancelled by its engine.
	timeout 120 "${P[@]}" run -d --name $c --init --pull=never --network=none $SETTINGS \
		--secret sbx-signing-key,mode=0400 $vols localhost/sbx:vm run /jobs/long.json >/dev/null 2>"$d/cancel.err"
	for i in $(seq 600); do
		[ -n "$(ls -A "$d/state/runs" 2>/dev/null)" ] && break
		sleep 0.2
	done
	timeout 60 "${P[@]}" kill --signal INT $c >/dev/null
	rc=$(timeout 120 "${P[@]}" wait $c 2>/dev/null)
	timeout 60 "${P[@]}" logs $c >"$d/cancel.out" 2>"$d/cancel.log"
	OUT=$d/cancel.out
	check "$mode: podman kill --signal INT: the container exits 130" eval '[ "$rc" = 130 ]' ||
		diag "exit ${rc:-none}: $(head -c 1200 "$d/cancel.log") $(head -c 600 "$d/cancel.err")"
	check "$mode: the cancelled run's manifest on the container's stdout: cancelled, signed" \
		eval '[ "$(jq -r .status "$OUT" 2>/dev/null)" = cancelled ] && signed "$OUT" "$d/key"'
	check "$mode: cancelled: no run state left in the state volume" eval '[ -z "$(ls -A "$d/state/runs" 2>/dev/null)" ]'
	timeout 120 "${P[@]}" rm -f -t 0 $c >/dev/null 2>&1
	timeout 60 "${P[@]}" secret rm sbx-signing-key >/dev/null 2>&1
}

# refused MODE NAME SETTINGS WANT DIR PODMAN...: sbx in a container with
# SETTINGS (one of the needed ones left out) refuses the run with 69 and a
# Hint that matches WANT; sbx check exits 69 with the same Hint.
refused() {
	local mode=$1 name=$2 settings=$3 want=$4 d=$5 out
	shift 5
	out=$d/refused-$(echo "$name" | tr -c 'a-z0-9\n' '-')
	timeout 180 "$@" run --rm --pull=never --network=none $settings --secret sbx-signing-key,mode=0400 \
		-v "$d/jobs:/jobs:ro" --entrypoint /bin/sh localhost/sbx:vm \
		-c 'sbx run /jobs/quick.json >/dev/null 2>/tmp/run.err; echo "run=$?"; cat /tmp/run.err
		    sbx check >/tmp/check 2>&1; echo "check=$?"; grep -v " ok" /tmp/check' >"$out" 2>&1
	echo "podman=$?" >> "$out"
	check "$mode: without $name: sbx run refuses with 69 and a Hint naming it" \
		eval 'grep -qx "run=69" "$out" && grep "^sbx: Hint:" "$out" | grep -q -- "$want"' ||
		diag "$(head -c 1500 "$out" | tr '\n' ' ')"
	check "$mode: without $name: sbx check predicts it (69, the same Hint)" \
		eval 'grep -qx "check=69" "$out" && grep "^  *Hint:" "$out" | grep -q -- "$want"' ||
		diag "$(head -c 1500 "$out" | tr '\n' ' ')"
}

D=/tmp/sbx-ctr-root
setup $D root || bail "cannot set up $D"
suite root $D podman

# Without each setting in turn.
timeout 60 podman secret create sbx-signing-key "$D/key" >/dev/null
# docker's default profile in effect: unshare refused (EPERM), clone3
# ENOSYS - podman's own default allows both.
jq '.syscalls |= map(.names -= ["unshare", "clone3"]) |
	.syscalls += [{"names": ["unshare"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]' \
	/tmp/sbx-ctr-seccomp/sbx.json > "$D/no-userns-seccomp.json"
refused root "a seccomp profile that allows new namespaces" \
	"--security-opt seccomp=$D/no-userns-seccomp.json $SETTINGS_PROC $SETTINGS_CG $SETTINGS_AA" "seccomp profile refuses what the sandbox needs" $D podman
refused root "sethostname in the seccomp profile (podman's default)" \
	"--security-opt seccomp=/usr/share/containers/seccomp.json $SETTINGS_PROC $SETTINGS_CG $SETTINGS_AA" "sethostname and setdomainname allowed" $D podman
refused root "an unmasked /proc" "$SETTINGS_NS $SETTINGS_CG $SETTINGS_AA" "unmask=" $D podman
refused root "a writable cgroup namespace" "$SETTINGS_NS $SETTINGS_PROC $SETTINGS_AA" "unmask=/sys/fs/cgroup" $D podman
# The node's seccomp and AppArmor profiles, and the Kubernetes manifests
# with podman kube play (tests/vm/kube.sh).
. "$SBX_SRCDIR/tests/vm/kube.sh"
timeout 60 podman secret rm sbx-signing-key >/dev/null 2>&1

# Rootless: a user with its own systemd manager (linger: rootless podman
# puts each container in a scope of the user's manager, which delegates
# memory, pids and cpu), subordinate ids for the container's user
# namespace, and a store of its own on a tmpfs (the guest's root is an
# overlay, which cannot be an overlay's upper layer) with native overlay:
# the kernel lets the user's namespace mount overlayfs, no fuse-overlayfs.
# The image is in the additional image store vm.sh made for this user
# (SBX_VM_CONTAINER_DIR/store-user, its owners moved into the ids
# SBX_VM_CONTAINER_IDS names): root's store holds files owned by ids the
# user's namespace does not map.
read -r uid sub <<E
${SBX_VM_CONTAINER_IDS:-}
E
[ -n "${sub:-}" ] || bail "SBX_VM_CONTAINER_IDS is not set (vm.sh sets it)"
U=sbxvmctr H=/home/sbxvmctr
getent passwd $uid >/dev/null && [ "$(id -un $uid)" != $U ] && bail "uid $uid is taken: $(getent passwd $uid)"
id $U >/dev/null 2>&1 || useradd --uid $uid --user-group --create-home --shell /bin/sh $U || bail "cannot create $U"
[ "$(id -u $U)" = $uid ] || bail "$U has uid $(id -u $U), not $uid"
gid=$(id -g $U)
for f in /etc/subuid /etc/subgid; do
	sed -i "/^$U:/d" $f 2>/dev/null
	echo "$U:$sub:65536" >> $f
done
loginctl enable-linger $U || bail "loginctl enable-linger $U failed"
for i in $(seq 300); do [ -S /run/user/$uid/bus ] && break; sleep 0.2; done
[ -S /run/user/$uid/bus ] || bail "$U's systemd manager did not start (no /run/user/$uid/bus)"
mkdir -p $H/.config/containers $H/.local/share/containers
mountpoint -q $H/.local/share/containers ||
	mount -t tmpfs -o size=600m,mode=0700,uid=$uid,gid=$gid sbx-container-user $H/.local/share/containers ||
	bail "cannot mount a tmpfs for $U's containers"
cat > $H/.config/containers/storage.conf <<E
[storage]
driver = "overlay"
runroot = "/run/user/$uid/containers"
graphroot = "$H/.local/share/containers/storage"
[storage.options]
additionalimagestores = ["$SBX_VM_CONTAINER_DIR/store-user"]
E
chown -R $U: $H/.config
UP=(runuser -u $U -- env XDG_RUNTIME_DIR=/run/user/$uid DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$uid/bus
	HOME=$H podman)
# The user's podman must not start in root's directory.
cd /tmp
info=$(timeout 120 "${UP[@]}" info --format '{{.Store.GraphDriverName}} {{.Store.GraphOptions}} {{.Host.CgroupManager}} {{.Host.CgroupsVersion}} {{.Host.OCIRuntime.Name}}' 2>&1)
diag "user: podman info: $(echo $info)"
check "user: rootless podman: overlay storage, systemd cgroups v2, crun" \
	eval 'case "$info" in "overlay "*" systemd v2 crun") true ;; *) false ;; esac'
check "user: the image is in the user's additional image store" \
	timeout 120 "${UP[@]}" image exists localhost/sbx:vm
DU=/tmp/sbx-ctr-user
# root_ids inside the range the container's user namespace maps.
ROOT_IDS='{"first": 40000, "count": 4096}' setup $DU $U || bail "cannot set up $DU"
t0=$SECONDS
suite user $DU "${UP[@]}"
check "user: the containers' root is the kernel's overlayfs (no fuse-overlayfs)" grep -qx "rootfs: overlay" "$DU/example.err" ||
	diag "$(grep '^rootfs:' "$DU/example.err")"
timeout 60 "${UP[@]}" secret create sbx-signing-key "$DU/key" >/dev/null
refused user "a writable cgroup namespace" "$SETTINGS_NS $SETTINGS_PROC $SETTINGS_AA" "unmask=/sys/fs/cgroup" $DU "${UP[@]}"
refused user "an unmasked /proc" "$SETTINGS_NS $SETTINGS_CG $SETTINGS_AA" "unmask=" $DU "${UP[@]}"
timeout 60 "${UP[@]}" secret rm sbx-signing-key >/dev/null 2>&1
diag "user: the rootless checks took $((SECONDS - t0))s"
diag "the container scenario took ${SECONDS}s"
finished=1
