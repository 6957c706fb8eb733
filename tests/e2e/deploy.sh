#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# deploy.sh - the commands the Kubernetes manifests run (the Job's and the
# worker's, deploy/kubernetes/), taken from the YAML as they are and run
# with the real sbx on this host, as root and as an unprivileged user.
# The pod's paths are moved under the test's scratch directory and the
# host configuration is config.yaml's with this host's state dir and
# cgroup; nothing else changes.
#
#   - the Job: exit status is the run's, stdout is the manifest and only
#     it, the manifest lands beside the artifacts and `sbx verify
#     --artifacts` accepts them; a failing job exits 1 with its manifest;
#     the stop signal to the shell cancels the run (130, its manifest);
#   - the worker (two loops): 12 tasks, each run exactly once, one
#     manifest each on stdout and in done/, nothing left in incoming/ or
#     claimed/; after the stop signal (SIGINT, the image's STOPSIGNAL, as
#     root; SIGTERM as the user) it claims nothing more, lets the run in
#     flight finish (succeeded, not cancelled) and exits;
#   - the pod's identity (uid 0 of a user namespace mapping 64 unused host
#     ids, no capability but CAP_SETFCAP, no_new_privs): the Job's command
#     runs a job that unpacks an archive, and the payload has no
#     capability; with CAP_SETFCAP dropped too, sbx check and sbx run
#     refuse with 69 and the Hint that names it;
#   - nothing left behind.
. "$(dirname "$0")/lib.sh"
K8S=$SBX_SRCDIR/deploy/kubernetes
bound_sbx 120

# The literal block under "args:" of the first container (the "- |" item),
# without its indentation.
pod_script() {
	awk '/^ *args:$/ { a = 1; next }
		a == 1 && /^ *- \|$/ { a = 2; next }
		a == 2 {
			if (ind == "") { match($0, /^ */); ind = RLENGTH }
			if ($0 != "" && match($0, /^ */) && RLENGTH < ind) exit
			print substr($0, ind + 1)
		}' "$1"
}
# The pod's paths, under the scratch directory P; /run/sbx is the mode's
# state dir, which the host configuration names.
repath() {
	sed -e "s|/var/lib/sbx/|$P/var/lib/sbx/|g" -e "s|/etc/sbx/|$P/etc/sbx/|g" \
		-e "s|/run/sbx/|$M/state/|g" -e "s|/tmp/manifest.json|$P/tmp/manifest.json|g"
}
# config.yaml's host configuration KEY (job.json, worker.json), repathed,
# with this mode's state dir, cgroup or root ids, and the source catalog.
pod_config() (
	set -o pipefail
	awk -v k="  $1: |" '$0 == k { a = 1; next } a && /^ ? ?[^ ]/ { exit } a { print }' "$K8S/config.yaml" |
		repath | jq -S --slurpfile m "$M/config.json" --arg p "$(realpath "$SBX_SRCDIR/policy")" \
			'. + $m[0] + {policy: $p}'
)
# pod SCRIPT POD_NAME: run SCRIPT as the pod's command, as this mode's
# user, with sbx on PATH; stdout in $M/pod.out, the shell's pid (it execs
# the script's shell) in $M/pod.pid.
pod_env() {
	# --default-signal: a pod's command does not start with SIGINT ignored,
	# as a background job of this script would.
	as_mode env --default-signal PATH="$T/bin:/usr/bin:/bin" POD_NAME="$2" SBX_PRINCIPAL="$PRINCIPAL" \
		sh -c 'echo $$ >"$0" && exec sh -c "$1"' "$M/pod.pid" "$1"
}

# sbx on the pods' PATH: this build, bounded like $SBX, but through exec
# so that a signal the pod's shell sends reaches sbx (timeout passes it
# on), as it would in the pod.
mkdir -p "$T/bin"
printf '#!/bin/sh\nexec timeout -s KILL 120 "%s" "$@"\n' "$SBX_REAL" >"$T/bin/sbx"
chmod 0755 "$T/bin/sbx"
JOB_SCRIPT=$(pod_script "$K8S/job.yaml")
WORKER_SCRIPT=$(pod_script "$K8S/worker.yaml")
[ -n "$JOB_SCRIPT" ] && [ -n "$WORKER_SCRIPT" ] ||
	{ echo "Bail out! no container command found in job.yaml or worker.yaml"; exit 1; }
grep -q 'sbx run' <<<"$JOB_SCRIPT" && grep -q 'sbx run' <<<"$WORKER_SCRIPT" ||
	{ echo "Bail out! the container commands do not call sbx run"; exit 1; }

for mode in root user; do
	setup_mode "$mode"
	P=$M/pod
	mkdir -p "$P/var/lib/sbx/store/$PRINCIPAL" "$P/var/lib/sbx/artifacts" "$P/var/lib/sbx/queue" \
		"$P/etc/sbx/key" "$P/etc/sbx/config" "$P/etc/sbx/job" "$P/tmp"
	cp "$KEY" "$P/etc/sbx/key/signing.key"
	for c in job.json worker.json; do
		pod_config "$c" >"$P/etc/sbx/config/$c" && [ -s "$P/etc/sbx/config/$c" ] ||
			{ echo "Bail out! config.yaml has no host configuration $c"; exit 1; }
	done
	awk '/^  job.json: \|$/ { a = 1; next } a && /^---$/ { exit } a { print }' "$K8S/job.yaml" \
		>"$P/etc/sbx/job/job.json"
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$P"
	chmod 0600 "$P/etc/sbx/key/signing.key"
	job_script=$(repath <<<"$JOB_SCRIPT")
	worker_script=$(repath <<<"$WORKER_SCRIPT")

	# --- the Job ---------------------------------------------------------------
	pod_env "$job_script" sbx-run-test >"$M/pod.out" 2>"$M/pod.err"
	RC=$? OUT=$M/pod.out ERR=$M/pod.err
	jq -r '.run_id // empty' "$OUT" >>"$T/run-ids" 2>/dev/null
	expect_rc 0 "$mode: the Job's command runs job.yaml's example job"
	check "$mode: its stdout is one manifest line, status succeeded" \
		test "$(wc -l <"$OUT")" -eq 1 -a "$(jqm .status)" = succeeded
	art=$P/var/lib/sbx/artifacts/sbx-run-test
	check "$mode: the manifest beside the artifacts is the one printed" cmp -s "$OUT" "$art.manifest.json"
	check "$mode: the artifact is there" grep -qx 'hello from the sandbox' "$art/hello.txt"
	check "$mode: sbx verify --artifacts accepts the manifest and the artifacts" \
		"$SBX" verify --pubkey "$KEY.pub" --artifacts "$art" "$art.manifest.json"
	signature_ok && ok "$mode: the signature verifies with openssl" || not_ok "$mode: the signature verifies with openssl"

	# A failing job: the run's exit status is the pod's.
	jq '.code = "exit 3\n" | del(.required_outputs)' "$P/etc/sbx/job/job.json" >"$M/fail.json"
	cp "$M/fail.json" "$P/etc/sbx/job/job.json"
	[ "$mode" = user ] && chown "$SBX_TEST_USER" "$P/etc/sbx/job/job.json"
	pod_env "$job_script" sbx-run-fail >"$M/pod.out" 2>"$M/pod.err"
	RC=$?
	jq -r '.run_id // empty' "$OUT" >>"$T/run-ids" 2>/dev/null
	expect_rc 1 "$mode: a failing job fails the pod with the run's status"
	check "$mode: and prints its manifest (failed, exit code 3)" \
		test "$(jqm .status) $(jqm .exit.code)" = "failed 3"
	check "$mode: which is kept on the artifacts volume too" \
		cmp -s "$OUT" "$P/var/lib/sbx/artifacts/sbx-run-fail.manifest.json"

	# Stopping the pod cancels the run: the shell passes the stop signal on
	# (as root SIGINT, the image's STOPSIGNAL; as the user SIGTERM,
	# Kubernetes' default).
	sig=INT
	[ "$mode" = user ] && sig=TERM
	jq '.code = "sleep 20\n" | del(.required_outputs)' "$M/fail.json" >"$P/etc/sbx/job/job.json"
	[ "$mode" = user ] && chown "$SBX_TEST_USER" "$P/etc/sbx/job/job.json"
	pod_env "$job_script" sbx-run-stop >"$M/pod.out" 2>"$M/pod.err" &
	jpid=$!
	for _ in $(seq 200); do
		[ -n "$(ls -A "$M/state/runs" 2>/dev/null)" ] && break
		sleep 0.05
	done
	sleep 0.2
	kill -"$sig" "$(cat "$M/pod.pid")"
	wait $jpid
	RC=$?
	jq -r '.run_id // empty' "$OUT" >>"$T/run-ids" 2>/dev/null
	expect_rc 130 "$mode: SIG$sig to the Job's shell cancels the run"
	check "$mode: the cancelled run's manifest is printed and kept beside the artifacts" \
		test "$(jqm .status)" = cancelled -a -s "$P/var/lib/sbx/artifacts/sbx-run-stop.manifest.json"

	# --- the worker --------------------------------------------------------------
	q=$P/var/lib/sbx/queue
	mkdir -p "$q/incoming"
	for i in $(seq -w 1 12); do
		mkjob "$q/incoming/t$i.json.tmp" shell "echo task $i > /work/out/t.txt" \
			'{network_profile: "disabled", allowed_outputs: ["text/plain"], required_outputs: ["t.txt"]}'
		mv "$q/incoming/t$i.json.tmp" "$q/incoming/t$i.json"
	done
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$q"
	pod_env "$worker_script" sbx-worker-test >"$M/worker.out" 2>"$M/worker.err" &
	wpid=$!
	for _ in $(seq 600); do
		[ "$(ls "$q/done" 2>/dev/null | grep -c '\.manifest\.json$')" -ge 12 ] && break
		kill -0 $wpid 2>/dev/null || break
		sleep 0.1
	done
	n_done=$(ls "$q/done" 2>/dev/null | grep -c '\.manifest\.json$')
	check "$mode: the worker ran all 12 tasks (done/ has $n_done manifests)" test "$n_done" -eq 12
	bad=
	for i in $(seq -w 1 12); do
		f=$q/done/t$i.manifest.json
		jq -r '.run_id // empty' "$f" >>"$T/run-ids" 2>/dev/null
		[ "$(jq -r .status "$f" 2>/dev/null)" = succeeded ] || bad="$bad t$i:status"
		grep -qx "task $i" "$P/var/lib/sbx/artifacts/t$i/t.txt" 2>/dev/null || bad="$bad t$i:artifact"
	done
	check "$mode: each task succeeded, its artifact in artifacts/<task>/${bad:+ (not:$bad)}" test -z "$bad"
	check "$mode: incoming/ and claimed/<pod>/ are empty" \
		test -z "$(ls -A "$q/incoming")$(ls -A "$q/claimed/sbx-worker-test")"

	# The stop signal: no new claims, the run in flight finishes.
	mkjob "$q/incoming/slow.json.tmp" shell "sleep 2; echo slow > /work/out/t.txt" \
		'{network_profile: "disabled", allowed_outputs: ["text/plain"], required_outputs: ["t.txt"]}'
	mv "$q/incoming/slow.json.tmp" "$q/incoming/slow.json"
	for _ in $(seq 100); do [ -e "$q/claimed/sbx-worker-test/slow.json" ] && break; sleep 0.1; done
	kill -"$sig" "$(cat "$M/pod.pid")"
	for _ in $(seq 100); do [ -e "$M/state/worker.stop" ] && break; sleep 0.1; done
	for i in 1 2 3; do
		mkjob "$q/incoming/late$i.json" shell "echo late" '{network_profile: "disabled"}'
	done
	[ "$mode" = user ] && chown -R "$SBX_TEST_USER" "$q/incoming"
	wait $wpid
	wrc=$?
	check "$mode: after SIG$sig the worker exits (status $wrc)" test "$wrc" -eq 0
	check "$mode: the task in flight finished: succeeded, not cancelled" \
		test "$(jq -r .status "$q/done/slow.manifest.json" 2>/dev/null)" = succeeded
	jq -r '.run_id // empty' "$q/done/slow.manifest.json" >>"$T/run-ids" 2>/dev/null
	check "$mode: nothing was claimed after SIG$sig" \
		test "$(ls "$q/incoming" | tr '\n' ' ')" = "late1.json late2.json late3.json "
	# stdout: exactly one manifest line per task, no task twice.
	lines=$(grep -c . "$M/worker.out")
	ids=$(jq -r .run_id "$M/worker.out" 2>/dev/null | sort -u | wc -l)
	check "$mode: the worker's stdout has 13 manifest lines, 13 distinct runs" \
		test "$lines" -eq 13 -a "$ids" -eq 13
	same=0
	[ "$(sort "$M/worker.out" | sha256sum)" = "$(cat "$q"/done/*.manifest.json | sort | sha256sum)" ] && same=1
	check "$mode: the printed manifests are those in done/" test $same -eq 1
	[ $same -eq 1 ] && [ "$lines" -eq 13 ] ||
		diag "$mode: $lines lines, $ids run ids, $(wc -c <"$M/worker.out") bytes; printed: $(jq -rc '[.run_id, .status] | join(" ")' "$M/worker.out" 2>&1 | tr '\n' ',' | head -c 2000); kept: $(jq -rc '[.run_id, .status] | join(" ")' "$q"/done/*.manifest.json 2>&1 | tr '\n' ',' | head -c 2000)"
	[ -s "$M/worker.err" ] && diag "$mode: worker stderr: $(head -c 1000 "$M/worker.err")"
	check "$mode: nothing left behind" nothing_left
done

# --- a pod's identity: uid 0 of a user namespace (hostUsers: false) --------------
# The pod's root is an unprivileged id on the node, with a range of ids
# mapped (here 64 of this script's own host ids), none of them sbx's
# root_ids, so sbx acts as an ordinary user; it has a cgroup of its own
# (here delegated to that host id by hand).  The Job's command runs in
# such a namespace with a job that unpacks an archive.
setup_mode pod
P=$M/pod
X=$ROOT_IDS_FIRST
mkdir -p "$P/var/lib/sbx/store/alice" "$P/var/lib/sbx/artifacts" "$P/etc/sbx/key" "$P/tmp" \
	"$P/etc/sbx/config" "$P/etc/sbx/job"
python3 - "$P/var/lib/sbx/store/alice/hello.tar" <<'PY' || { echo "Bail out! cannot make the archive"; exit 1; }
import io, sys, tarfile
data = b"hello from the archive\n"
with tarfile.open(sys.argv[1], "w") as t:
    i = tarfile.TarInfo("dir/hello.txt"); i.size = len(data); i.mode = 0o644
    t.addfile(i, io.BytesIO(data))
PY
cp "$KEY" "$P/etc/sbx/key/signing.key"
jq -n '{runtime_profile: "shell", network_profile: "disabled", input_handles: ["hello.tar"],
	extract: ["hello.tar"], code: "cp /work/in/hello.tar/dir/hello.txt /work/out/hello.txt; grep ^CapEff /proc/self/status\n",
	allowed_outputs: ["text/plain"], required_outputs: ["hello.txt"]}' >"$P/etc/sbx/job/job.json"
cg=sbx-e2e-$SBX_TEST_USER-pod
launch=
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	mkdir -p "/sys/fs/cgroup/$cg/launch"
	chown -R "$X:$X" "/sys/fs/cgroup/$cg"
	launch=/sys/fs/cgroup/$cg/launch/cgroup.procs
else
	for c in memory pids cpu cpuacct freezer; do
		[ -d "/sys/fs/cgroup/$c" ] || continue
		mkdir -p "/sys/fs/cgroup/$c/$cg"
		chown "$X:$X" "/sys/fs/cgroup/$c/$cg"
	done
fi
pod_config job.json | jq --arg c "/$cg" '. + {cgroup_parent: $c} | del(.root_ids)' \
	>"$P/etc/sbx/config/job.json"
chown -R "$X:$X" "$P" "$M/state"
chmod 0600 "$P/etc/sbx/key/signing.key"
job_script=$(repath <<<"$JOB_SCRIPT")
# A user namespace mapping 0-63 to X..X+63 (written by root from outside,
# as the runtime does), entered as its uid 0, then what the pod's
# securityContext gives: no capability (the bounding set too; uid 0 gains
# none at execve) and no_new_privs.
cat >"$T/userns.py" <<'PY'
import ctypes, os, sys
first, count, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
r, w = os.pipe()
r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0:  # CLONE_NEWUSER
        os._exit(126)
    os.write(w, b"x")
    os.read(r2, 1)
    os.setresgid(0, 0, 0)
    os.setgroups([])
    os.setresuid(0, 0, 0)
    os.execvp(argv[0], argv)
os.read(r, 1)
for f in ("uid_map", "gid_map"):
    with open(f"/proc/{pid}/{f}", "w") as fh:
        fh.write(f"0 {first} {count}\n")
os.write(w2, b"x")
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
PY
# in_pod CAPS COMMAND...: COMMAND as the pod's uid 0, with CAPS (setpriv's
# list: "-all", or "-all,+setfcap") as its bounding set.
in_pod() {
	local caps=$1
	shift
	sh -c '[ -z "$0" ] || echo $$ >"$0"; exec "$@"' "$launch" \
		python3 "$T/userns.py" "$X" 64 \
		setpriv --bounding-set="$caps" --inh-caps=-all --no-new-privs -- \
		env -i --default-signal PATH="$T/bin:/usr/bin:/bin" HOME=/ SBX_LIBEXECDIR="$SBX_BUILDDIR" \
		POD_NAME=sbx-run-pod SBX_PRINCIPAL=alice "$@"
}
# Every capability dropped: uid 0 cannot map itself into the sandbox's
# user namespace (the kernel wants CAP_SETFCAP for a map of uid 0), and
# sbx check and sbx run say so.
in_pod -all sbx check --config "$P/etc/sbx/config/job.json" >"$M/check.out" 2>&1
rc=$?
check "pod without CAP_SETFCAP: sbx check exits 69 (status $rc)" test "$rc" -eq 69
check "pod without CAP_SETFCAP: sbx check names the capability" \
	grep -Eq '(^| )user namespaces +blocked: .*Hint: .*CAP_SETFCAP.*capabilities.add' \
	<<<"$(tr '\n' ' ' <"$M/check.out")"
in_pod -all sh -c "$job_script" >"$M/pod.out" 2>"$M/pod.err"
RC=$? OUT=$M/pod.out ERR=$M/pod.err
jq -r '.run_id // empty' "$OUT" >>"$T/run-ids" 2>/dev/null
expect_rc 69 "pod without CAP_SETFCAP: the run is refused"
check "pod without CAP_SETFCAP: isolation_unavailable, and the Hint names the setting" \
	eval '[ "$(jqm .status)" = isolation_unavailable ] && grep -q "^sbx: Hint: .*CAP_SETFCAP.*capabilities.add" "$ERR"'
rm -rf "$P/var/lib/sbx/artifacts/sbx-run-pod" "$P/var/lib/sbx/artifacts/sbx-run-pod.manifest.json"
# With the pod's settings: CAP_SETFCAP alone.
in_pod -all,+setfcap sh -c "$job_script" >"$M/pod.out" 2>"$M/pod.err"
RC=$? OUT=$M/pod.out ERR=$M/pod.err
jq -r '.run_id // empty' "$OUT" >>"$T/run-ids" 2>/dev/null
expect_rc 0 "pod: uid 0 of a user namespace with CAP_SETFCAP alone runs a job that unpacks an archive"
check "pod: the archive's file is the artifact" \
	grep -qx 'hello from the archive' "$P/var/lib/sbx/artifacts/sbx-run-pod/hello.txt"
check "pod: signed, and sbx verify --artifacts accepts it" \
	"$SBX" verify --pubkey "$KEY.pub" --artifacts "$P/var/lib/sbx/artifacts/sbx-run-pod" \
	"$P/var/lib/sbx/artifacts/sbx-run-pod.manifest.json"
check "pod: the payload has no capability (CapEff 0)" \
	eval 'jqm .stdout.excerpt | grep -qx "CapEff:[[:space:]]*0*"'
check "pod: nothing left behind" nothing_left
if [ -n "$launch" ]; then
	rmdir "/sys/fs/cgroup/$cg/launch" "/sys/fs/cgroup/$cg" 2>/dev/null
else
	rmdir /sys/fs/cgroup/*/"$cg" 2>/dev/null
fi
finish
