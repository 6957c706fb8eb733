#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# slurm.sh - docs/deploy.md's Slurm recipe under a real single-node Slurm
# (slurmctld, slurmd and munged of their own, started and stopped here):
# the Prolog, the Epilog and the job array are taken from the page as they
# are, with the cgroup's name made this test user's.
#
#   - as root and as an unprivileged user, a 4-task array (2 at a time)
#     gives 4 manifests, each succeeded and signed, the artifacts verified
#     by sbx verify --artifacts;
#   - as the user, a task without the Prolog's cgroup is refused (69,
#     isolation_unavailable) with the Hint for a cgroup not its own, and
#     ran nothing;
#   - the Epilog leaves no job cgroup, and nothing is left behind.
#
# Slurm's cgroup/v1 plugin is what this host has; on a host without the v1
# memory, pids, cpu, cpuacct and freezer hierarchies the test fails (the
# v2 recipe is documented as untested).
. "$(dirname "$0")/lib.sh"
need slurmctld slurmd sbatch squeue munged mungekey awk
bound_sbx 120
DOC=$SBX_SRCDIR/docs/deploy.md
for c in memory pids cpu cpuacct freezer; do
	if ! awk -v m="/sys/fs/cgroup/$c" -v c="$c" '$5 == m && / - cgroup / && $NF ~ ("(^|,)" c "(,|$)") { f = 1 }
		END { exit !f }' /proc/self/mountinfo; then
		echo "Bail out! cgroup v1 $c is not mounted at /sys/fs/cgroup/$c: this test runs Slurm's cgroup/v1 plugin"
		exit 1
	fi
done

# The fenced block of docs/deploy.md that contains STRING.
doc_block() {
	awk -v s="$1" '/^```/ { if (inb) { if (hit) { printf "%s", buf; exit } buf = ""; hit = 0; inb = 0 } else inb = 1; next }
		inb { buf = buf $0 "\n"; if (index($0, s)) hit = 1 }' "$DOC"
}
CG=sbx-slurm-$SBX_TEST_USER
S=$T/slurm
mkdir -p "$S/spool-d" "$S/spool-ctld" "$S/bin"
for f in prolog epilog; do
	doc_block "sbx-$f.sh:" | sed "s|/sbx-slurm/|/$CG/|g" >"$S/$f.sh"
	chmod 0755 "$S/$f.sh"
	grep -q "$CG" "$S/$f.sh" || { echo "Bail out! no sbx-$f.sh in docs/deploy.md"; exit 1; }
done
doc_block '#SBATCH' | sed "s|/sbx-slurm/|/$CG/|g" >"$S/array.sh"
grep -q 'sbx run' "$S/array.sh" || { echo "Bail out! no job array in docs/deploy.md"; exit 1; }
# A copy without the Prolog's cgroup: plain `sbx run`.
sed -e 's|sbx run --config "$cfg"|sbx run|' -e 's|^#SBATCH --array=.*|#SBATCH --array=0-0|' \
	"$S/array.sh" >"$S/array-plain.sh"
# `sbx` for the jobs: this build, with the test's catalog and each mode's key.
cat >"$S/bin/sbx" <<EOF
#!/bin/sh
[ "\$1" = run ] || exec "$SBX" "\$@"
shift
exec "$SBX" run --policy "$SBX_SRCDIR/policy" --key "\$PWD/key" "\$@"
EOF
chmod 0755 "$S/bin/sbx"
chmod -R a+rX "$S"

# The node's name is the test user's, and so is the cgroup slurmd makes
# (slurm_<node>); ports from the same hash, above the usual ones.
NODE=sbx-e2e-$(printf '%s' "$SBX_TEST_USER" | tr -c 'a-z0-9-' '-')
PORT=$((20000 + $(printf '%s' "$SBX_TEST_USER" | cksum | cut -d' ' -f1) % 20000))
mungekey --create --keyfile="$S/munge.key" >/dev/null 2>&1 || { echo "Bail out! mungekey failed"; exit 1; }
cat >"$S/slurm.conf" <<EOF
ClusterName=sbxe2e
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmUser=root
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
AuthInfo=socket=$S/munge.sock
StateSaveLocation=$S/spool-ctld
SlurmdSpoolDir=$S/spool-d
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MpiDefault=none
Prolog=$S/prolog.sh
Epilog=$S/epilog.sh
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=4000 State=UNKNOWN
PartitionName=sbxe2e Nodes=ALL Default=YES MaxTime=10 State=UP
EOF
cat >"$S/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=yes
ConstrainRAMSpace=yes
EOF
export SLURM_CONF=$S/slurm.conf

# slurmd's own cgroups that were there before (another test's node has
# another name): the ones this test's slurmd makes are removed at the end.
had_slurm_cg=$(ls -d /sys/fs/cgroup/*/"slurm_$NODE" 2>/dev/null)
DAEMONS=
stop_slurm() {
	local p
	# Only the daemons this test started, by the pids it got from them.
	for p in $DAEMONS; do
		kill "$p" 2>/dev/null
		for _ in $(seq 50); do [ -e "/proc/$p" ] || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	[ -n "$had_slurm_cg" ] || rmdir /sys/fs/cgroup/*/"slurm_$NODE" 2>/dev/null
	rmdir /sys/fs/cgroup/*/"$CG" 2>/dev/null
}
trap 'stop_slurm; cleanup_lib' EXIT

# In the foreground, in the background: $! is the daemon itself.
munged --foreground --force --socket="$S/munge.sock" --key-file="$S/munge.key" \
	--pid-file="$S/munged.pid" --log-file="$S/munged.log" --seed-file="$S/munged.seed" \
	>"$S/munged.out" 2>"$S/munged.err" &
DAEMONS="$! $DAEMONS"
for _ in $(seq 50); do [ -S "$S/munge.sock" ] && break; sleep 0.1; done
[ -S "$S/munge.sock" ] || { echo "Bail out! munged did not start: $(head -c 500 "$S/munged.err")"; exit 1; }
slurmctld -D -i >"$S/slurmctld.out" 2>"$S/slurmctld.err" &
DAEMONS="$! $DAEMONS"
slurmd -D -N "$NODE" >"$S/slurmd.out" 2>"$S/slurmd.err" &
DAEMONS="$! $DAEMONS"
# The client commands retry a controller that does not answer for a long
# time: each is bounded.
sl() { timeout 20 "$@"; }
for _ in $(seq 100); do
	sl sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle && break
	sleep 0.2
done
if ! sl sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle; then
	echo "Bail out! the Slurm node is not idle: $(tail -c 400 "$S/slurmctld.log" 2>/dev/null); $(tail -c 400 "$S/slurmd.log" 2>/dev/null)"
	exit 1
fi
ok "a single-node slurmctld and slurmd are up (node $NODE)"

# submit SCRIPT: sbatch in this mode's directory as its user; waits for the
# array to leave the queue (bounded).  Sets JOBID.
submit() {
	JOBID=$(as_mode env SLURM_CONF="$SLURM_CONF" PATH="$S/bin:/usr/bin:/bin" \
		sh -c 'cd "$0" && timeout 20 sbatch --parsable --chdir="$0" "$1"' "$W" "$1" 2>"$W/sbatch.err")
	JOBID=${JOBID%%;*}
	[ -n "$JOBID" ] || { diag "sbatch: $(cat "$W/sbatch.err")"; return 1; }
	for _ in $(seq 600); do
		# Done: no longer listed, or already purged.
		q=$(sl squeue -h -j "$JOBID" 2>&1)
		case $q in "" | *"Invalid job id"*) return 0 ;; esac
		sleep 0.2
	done
	diag "job $JOBID still queued: $(sl squeue -j "$JOBID" 2>&1)"
	return 1
}

for mode in root user; do
	setup_mode "$mode"
	W=$M/slurm
	mkdir -p "$W/jobs" "$W/manifests" "$W/logs" "$W/artifacts"
	cp "$KEY" "$W/key"
	cp "$KEY.pub" "$W/key.pub"
	for i in 0 1 2 3; do
		mkjob "$W/jobs/j$i.json" shell "echo array task $i > /work/out/t.txt" \
			'{network_profile: "disabled", allowed_outputs: ["text/plain"], required_outputs: ["t.txt"]}'
	done
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$W"
	chmod 0600 "$W/key"

	check "$mode: sbatch runs the array" submit "$S/array.sh"
	n=0 bad=
	for i in 0 1 2 3; do
		f=$W/manifests/${JOBID}_$i.json
		OUT=$f
		jq -r '.run_id // empty' "$f" >>"$T/run-ids" 2>/dev/null
		if [ "$(jq -r .status "$f" 2>/dev/null)" = succeeded ] &&
			grep -qx "array task $i" "$W/artifacts/${JOBID}_$i/t.txt" 2>/dev/null &&
			"$SBX" verify --pubkey "$W/key.pub" --artifacts "$W/artifacts/${JOBID}_$i" "$f" 2>/dev/null; then
			n=$((n + 1))
		else
			bad="$bad $i:$(jq -r .status "$f" 2>/dev/null)"
			diag "task $i: $(head -c 600 "$W/logs/${JOBID}_$i.err" 2>/dev/null)"
		fi
	done
	check "$mode: 4 array tasks, 4 succeeded runs, each manifest and its artifacts verified${bad:+ (not:$bad)}" \
		test "$n" -eq 4
	check "$mode: the Epilog removed the jobs' cgroups" \
		test -z "$(ls -d /sys/fs/cgroup/*/"$CG"/job_* 2>/dev/null)"

	if [ "$mode" = user ]; then
		rm -f "$W"/manifests/* "$W"/logs/*
		check "user: sbatch runs the array without the Prolog's cgroup" submit "$S/array-plain.sh"
		OUT=$W/manifests/${JOBID}_0.json ERR=$W/logs/${JOBID}_0.err
		jq -r '.run_id // empty' "$OUT" >>"$T/run-ids" 2>/dev/null
		check "user: without it the run is refused: isolation_unavailable, nothing ran" \
			test "$(jqm .status) $(jqm .exit)" = "isolation_unavailable null"
		check "user: with the Hint for a cgroup not its own" grep -q 'sbx: Hint: .*cgroup_parent' "$ERR"
	fi
	check "$mode: nothing left behind" nothing_left
done
finish
