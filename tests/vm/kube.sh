# SPDX-License-Identifier: GPL-2.0-or-later
# kube.sh - deploy/kubernetes/ run by a real engine: `podman kube play`
# of job.yaml and worker.yaml, as shipped but for the image name, in the
# cgroup v2 VM, rootful.  Sourced by tests/vm/container.sh after its
# rootful part (its check/diag/bail, $SBX, $PROBE, $D and the image
# localhost/sbx:vm); prints TAP through them.
#
# 1. The node's profiles: deploy/container/apparmor-profile loads
#    (apparmor_parser -r; AppArmor 3 takes it with <abi/3.0> and without
#    the userns rule) and the kernel lists sbx-container in enforce mode;
#    deploy/container/seccomp-profile is the Localhost seccomp profile.
# 2. podman run with those two profiles (--security-opt seccomp=FILE
#    --security-opt apparmor=sbx-container) and the other settings of
#    docs/container.md: the example job succeeds, and sbx and the payload
#    inside the sandbox both run confined by sbx-container.
# 3. podman kube play of the Job's pod (podman has no Job kind: the Job's
#    pod template, as a Pod) and of the worker Deployment, with the
#    ConfigMaps of config.yaml and job.yaml, a Secret with the key, and
#    named volumes for the claims.  What podman makes of each securityContext
#    field is read from the running container (/proc/PID/...): hostUsers,
#    procMount, allowPrivilegeEscalation, capabilities, runAsUser and
#    readOnlyRootFilesystem are honoured, seccompProfile and appArmorProfile
#    are not (podman reads neither field); as shipped, the run then fails
#    closed (69).  With podman's own engine-wide defaults naming the same
#    two profiles (containers.conf seccomp_profile, apparmor_profile) the
#    Job's run succeeds with a signed manifest and its artifact on the
#    artifacts claim, and the worker runs a task from the queue claim.
#    `podman kube down` removes each.  One podman gap is filled by hand,
#    as the kubelet would: the Secret volume's files are given to the
#    pod's root (secret_to_pod_root).

K=/tmp/sbx-ctr-kube
rm -rf "$K" && mkdir -p "$K/seccomp" || bail "cannot create $K"
diag "kube: $(podman --version), crun $(crun --version 2>/dev/null | sed -n 's/^crun version //p')"

# --- 1. the node's profiles --------------------------------------------------
"$SBX_SRCDIR/deploy/container/seccomp-profile" > "$K/seccomp/sbx-seccomp.json" ||
	bail "deploy/container/seccomp-profile failed"
aa_on=$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)
diag "kube: AppArmor enabled in the guest kernel: ${aa_on:-no such parameter}; parser $(apparmor_parser --version 2>/dev/null | head -n1)"
check "kube: the guest kernel has AppArmor on" eval '[ "$aa_on" = Y ]'
if [ -e /etc/apparmor.d/abi/4.0 ]; then
	cp "$SBX_SRCDIR/deploy/container/apparmor-profile" "$K/sbx-container"
else
	sed -e 's|<abi/4.0>|<abi/3.0>|' -e '/^  userns,$/d' "$SBX_SRCDIR/deploy/container/apparmor-profile" > "$K/sbx-container"
fi
check "kube: apparmor_parser -r loads deploy/container/apparmor-profile" \
	eval 'apparmor_parser -r -W "$K/sbx-container" >"$K/aa.log" 2>&1' || diag "$(head -c 800 "$K/aa.log")"
check "kube: the kernel lists sbx-container in enforce mode" \
	grep -qx "sbx-container (enforce)" /sys/kernel/security/apparmor/profiles

# --- 2. podman run with the two profiles ----------------------------------------
# The job prints its own AppArmor label from inside the sandbox.
jq -n '{runtime_profile: "shell", code: "cat /proc/self/attr/current; echo"}' > "$D/jobs/label.json"
PROFILES="--security-opt seccomp=$K/seccomp/sbx-seccomp.json --security-opt apparmor=sbx-container"
mkdir -p "$K/out"
out=$(timeout 300 podman run --rm --init --pull=never --network=none $PROFILES $SETTINGS_PROC $SETTINGS_CG \
	--secret sbx-signing-key,mode=0400 -v "$D/jobs:/jobs:ro" -v "$D/policy:/etc/sbx/policy:ro" -v "$K/out:/out" \
	--entrypoint /bin/sh localhost/sbx:vm -c \
	'echo "label: $(cat /proc/self/attr/current)"; sbx run /jobs/label.json >/out/label.json 2>/out/label.err
	 echo "rc=$?"; head -c 600 /out/label.err' 2>&1)
m=$K/out/label.json
diag "kube: podman run $PROFILES: $(echo $out)"
check "kube: podman run with the Localhost seccomp and AppArmor profiles: sbx runs confined by sbx-container" \
	eval 'grep -qx "label: sbx-container (enforce)" <<<"$out"'
check "kube: ... and its run succeeds, the payload confined by sbx-container too" \
	eval 'grep -qx "rc=0" <<<"$out" && [ "$(jq -r .status "$m")" = succeeded ] && signed "$m" "$D/key" &&
	      [ "$(jq -r .stdout.excerpt "$m")" = "sbx-container (enforce)" ]' ||
	diag "payload said: $(jq -c .stdout "$m" 2>/dev/null | head -c 400)"

# --- 3. podman kube play ---------------------------------------------------------
# The manifests for podman: the image name, the Job's pod template as a
# Pod, one worker replica; nothing else changes.  ConfigMaps go to their
# own file (--configmap, one each).
python3 - "$SBX_SRCDIR/deploy/kubernetes" "$K" <<'E' || bail "cannot convert the manifests"
import sys, yaml
src, out = sys.argv[1], sys.argv[2]
def load(name):
    with open(f"{src}/{name}") as f:
        return [d for d in yaml.safe_load_all(f) if d]
def image(pod):
    for c in pod["containers"]:
        c["image"] = "localhost/sbx:vm"
        c["imagePullPolicy"] = "Never"
cms = [d for n in ("config.yaml", "job.yaml") for d in load(n) if d["kind"] == "ConfigMap"]
for cm in cms:  # podman reads one ConfigMap per --configmap file
    with open(f"{out}/configmap-{cm['metadata']['name']}.yaml", "w") as f:
        yaml.safe_dump(cm, f)
job = next(d for d in load("job.yaml") if d["kind"] == "Job")
t = job["spec"]["template"]
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": dict(t["metadata"], name=job["metadata"]["name"]), "spec": t["spec"]}
image(pod["spec"])
with open(f"{out}/job-pod.yaml", "w") as f:
    yaml.safe_dump(pod, f)
dep = next(d for d in load("worker.yaml") if d["kind"] == "Deployment")
dep["spec"]["replicas"] = 1
image(dep["spec"]["template"]["spec"])
with open(f"{out}/worker.yaml", "w") as f:
    yaml.safe_dump(dep, f)
E
# The Secret as podman keeps it for kube play (a Secret object's YAML),
# the claims as named volumes, and ids for hostUsers: false, which podman
# turns into --userns=auto (the range of the user "containers").
printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: sbx-signing-key\ndata:\n  signing.key: %s\n' \
	"$(base64 -w0 < "$D/key")" > "$K/secret.yaml"
for f in /etc/subuid /etc/subgid; do
	grep -q '^containers:' $f 2>/dev/null || echo "containers:1000000:1000000" >> $f
done
# The engine-wide defaults that stand in for the two fields podman does
# not read: the same Localhost profiles.
printf '[containers]\nseccomp_profile = "%s"\napparmor_profile = "sbx-container"\n' \
	"$K/seccomp/sbx-seccomp.json" > "$K/containers.conf"

# kube_fresh: no pod, volume or secret of an earlier play.
kube_fresh() {
	timeout 120 podman kube down "$K/job-pod.yaml" >/dev/null 2>&1
	timeout 120 podman kube down "$K/worker.yaml" >/dev/null 2>&1
	timeout 60 podman secret rm sbx-signing-key >/dev/null 2>&1
	for v in $(podman volume ls -q); do timeout 60 podman volume rm -f "$v" >/dev/null 2>&1; done
	timeout 60 podman secret create sbx-signing-key "$K/secret.yaml" >/dev/null &&
		timeout 60 podman volume create sbx-store >/dev/null &&
		timeout 60 podman volume create sbx-artifacts >/dev/null &&
		timeout 60 podman volume create sbx-queue >/dev/null
}
vol() { podman volume inspect --format '{{.Mountpoint}}' "$1"; }
# facts: what podman gave the container $CTR, from the OCI configuration
# it handed to crun (kept until the container is removed, so also for a
# container that has exited): one "key: value" line each.
facts() {
	local cfg
	cfg=$(podman inspect --format '{{.OCIConfigPath}}' "$CTR" 2>/dev/null)
	[ -n "$cfg" ] && [ -r "$cfg" ] || { echo "no OCI configuration for '$CTR'"; return; }
	jq -r '"uid_map: \(.linux.uidMappings // [] | map("\(.containerID) \(.hostID) \(.size)") | join(","))",
		"apparmor: \(.process.apparmorProfile // "none")",
		"seccomp_default: \(.linux.seccomp.defaultAction // "none")",
		"sethostname: \([.linux.seccomp.syscalls[]? | select(.names | index("sethostname")) |
			.action + (if (.args // []) == [] then "" else "+args" end)] | join(","))",
		"no_new_privs: \(.process.noNewPrivileges // false)",
		"cap_eff: \(.process.capabilities.effective // [] | join(","))",
		"masked: \(.linux.maskedPaths // [] | length)",
		"readonly_paths: \(.linux.readonlyPaths // [] | length)",
		"cgroup_mount: \([.mounts[] | select(.destination == "/sys/fs/cgroup") | .options | join(",")] | join(";"))",
		"root_ro: \(.root.readonly // false)"' "$cfg"
}
# play FILE [ENV...]: podman kube play, bounded; the pod's container is
# $CTR.
play() {
	local f=$1 i
	shift
	diag "kube: podman kube play ${f##*/} $* ($SECONDS s)"
	local cms=
	for i in "$K"/configmap-*.yaml; do cms="$cms --configmap $i"; done
	env "$@" timeout 300 podman kube play --start=false --network none $cms "$f" >"$K/play.log" 2>&1
	PLAY_RC=$?
	[ $PLAY_RC -eq 0 ] || diag "kube: podman kube play ${f##*/}: rc $PLAY_RC: $(head -c 600 "$K/play.log" | tr '\n' ' ')"
	CTR=$(podman ps -a --format '{{.Names}}' | grep -- '-sbx$' | head -n1)
	secret_to_pod_root
	env "$@" timeout 300 podman pod start "$(podman pod ps --format '{{.Name}}' | head -n1)" >>"$K/play.log" 2>&1 ||
		diag "kube: podman pod start: $(tail -c 600 "$K/play.log" | tr '\n' ' ')"
}
# secret_to_pod_root: what the kubelet does for a Secret volume in a pod
# with hostUsers: false, and podman 4.3 does not: its files belong to the
# pod's root (podman leaves them the host root's, which the pod's user
# namespace shows as nobody, and sbx refuses a key it does not own), with
# the volume's defaultMode (podman leaves 0644) and the key as its content.
secret_to_pod_root() {
	local ids uid gid v
	ids=$(podman inspect --format '{{json .HostConfig.IDMappings}}' "$CTR" 2>/dev/null)
	uid=$(jq -r '.UidMap[]? | select(startswith("0:")) | split(":")[1]' <<<"$ids" 2>/dev/null | head -n1)
	gid=$(jq -r '.GidMap[]? | select(startswith("0:")) | split(":")[1]' <<<"$ids" 2>/dev/null | head -n1)
	v=$(podman volume inspect --format '{{.Mountpoint}}' sbx-signing-key 2>/dev/null)
	if [ -n "$uid" ] && [ -n "$gid" ] && [ -d "$v" ]; then
		# and its mode is defaultMode (256: 0400), which podman ignores.
		# Its content: podman 4.3.1 writes something that is not the
		# Secret's decoded value (sbx: "not an Ed25519 private key in
		# PKCS#8 PEM"); the kubelet writes the key itself.
		cp "$D/key" "$v/signing.key" &&
			chown -R "$uid:$gid" "$v" && find "$v" -type f -exec chmod 0400 {} +
	else
		diag "kube: no id map or secret volume to give the pod's root: ids=$ids volume=$v"
	fi
}
# ctr_rc: the container's exit code once it has exited (bounded: 300 s,
# with a line on stderr every 30 s, which the VM's stall watch sees).
ctr_rc() {
	local i
	for i in $(seq 60); do
		[ "$(podman inspect --format '{{.State.Status}}' "$CTR" 2>/dev/null)" = running ] || break
		[ $((i % 6)) -eq 0 ] && diag "kube: $CTR still running ($SECONDS s)" >&2
		sleep 5
	done
	podman inspect --format '{{.State.ExitCode}}' "$CTR" 2>/dev/null
}

# 3a. As shipped.
kube_fresh || bail "cannot make the secret and volumes for kube play"
play "$K/job-pod.yaml"
rc=$(ctr_rc)
facts > "$K/facts-shipped" 2>&1
podman logs "$CTR" >"$K/shipped.out" 2>"$K/shipped.err"
diag "kube: play as shipped (rc $PLAY_RC): $(head -c 600 "$K/play.log" | tr '\n' ' ')"
diag "kube: as shipped, the container got: $(tr '\n' ';' < "$K/facts-shipped")"
check "kube: hostUsers: false honoured (a user namespace: uid 0 is not the host's)" \
	eval 'grep -q "^uid_map: 0 [1-9][0-9]* [0-9]" "$K/facts-shipped"'
check "kube: procMount: Unmasked is not read by podman 4.3.1: /proc keeps its masked and read-only paths" \
	eval '! grep -qx "masked: 0" "$K/facts-shipped" && ! grep -qx "readonly_paths: 0" "$K/facts-shipped"'
check "kube: allowPrivilegeEscalation: false, capabilities and readOnlyRootFilesystem honoured" \
	eval 'grep -qx "no_new_privs: true" "$K/facts-shipped" && grep -qx "cap_eff: CAP_SETFCAP" "$K/facts-shipped" &&
	      grep -qx "root_ro: true" "$K/facts-shipped"'
check "kube: seccompProfile and appArmorProfile are not read by podman: the container gets podman's defaults" \
	eval '! grep -qx "apparmor: sbx-container" "$K/facts-shipped" && ! grep -qx "sethostname: SCMP_ACT_ALLOW" "$K/facts-shipped"'
diag "kube: as shipped, sbx said: $(grep -h '^sbx: ' "$K/shipped.out" "$K/shipped.err" | head -n 2 | tr '\n' ' ')"
check "kube: so, as shipped, sbx refuses the run (69, fail closed) with a Hint" \
	eval '[ "$rc" = 69 ] && grep -q "Hint:" "$K/shipped.out" "$K/shipped.err"' ||
	diag "rc ${rc:-none}: $(head -c 800 "$K/shipped.err" | tr '\n' ' ')"

# 3b. With podman's engine-wide defaults naming the same profiles.
kube_fresh || bail "cannot make the secret and volumes for kube play"
play "$K/job-pod.yaml" CONTAINERS_CONF="$K/containers.conf"
rc=$(ctr_rc)
facts > "$K/facts-job" 2>&1
podman logs "$CTR" >"$K/job.out" 2>"$K/job.err"
diag "kube: the Job's pod got: $(tr '\n' ';' < "$K/facts-job")"
check "kube: with the engine's defaults naming them, the Job's pod gets sbx-container and sbx's seccomp profile" \
	eval 'grep -qx "apparmor: sbx-container" "$K/facts-job" && grep -qx "sethostname: SCMP_ACT_ALLOW" "$K/facts-job" &&
	      grep -q "^seccomp_default: SCMP_ACT_ERRNO" "$K/facts-job"'
m=$K/job.manifest
grep '^{' "$K/job.out" | tail -n1 > "$m"
# podman 4.3.1 does not unmask /proc for procMount: Unmasked, so sbx
# must refuse (69) with the Hint that names it, and sign a manifest that
# says so; the Job's run itself is the podman run of section 2.
check "kube: the Job's pod: sbx refuses (69) with the Hint for the masked /proc, a signed manifest on its log" \
	eval '[ "$rc" = 69 ] && [ "$(jq -r .status "$m")" = isolation_unavailable ] && signed "$m" "$D/key" &&
	      grep -q "^sbx: Hint: .*unmask" "$K/job.err"' ||
	diag "rc ${rc:-none}: $(head -c 1200 "$K/job.err" | tr '\n' ' ') $(head -c 400 "$K/job.out")"
art=$(vol sbx-artifacts)
check "kube: the Job's manifest copy is on the artifacts claim" \
	eval '[ "$(jq -r .status "$art/sbx-run-example.manifest.json")" = isolation_unavailable ]' ||
	diag "artifacts: $(cd "$art" 2>/dev/null && find . | head -20 | tr '\n' ' ')"
timeout 120 podman kube down "$K/job-pod.yaml" >/dev/null 2>&1
check "kube: podman kube down removes the Job's pod" eval '! podman pod exists sbx-run-example'

# The worker: one task through the queue claim.  The task is dropped
# once the worker has made its queue directories: podman gives a named
# volume to the pod's root only while it is empty at the first mount (a
# cluster's volume would be the pod's by fsGroup), so a volume the test
# filled first would stay host root's, and the worker could not claim.
kube_fresh || bail "cannot make the secret and volumes for kube play"
q=$(vol sbx-queue)
play "$K/worker.yaml" CONTAINERS_CONF="$K/containers.conf"
for i in $(seq 120); do
	[ -d "$q/incoming" ] && break
	sleep 1
done
jq -n '{runtime_profile: "shell", code: "echo worked > /work/out/w.txt",
	allowed_outputs: ["text/plain"], required_outputs: ["w.txt"]}' > "$q/task1.tmp" &&
	chmod 0644 "$q/task1.tmp" && mv "$q/task1.tmp" "$q/incoming/task1.json" ||
	diag "kube: the worker made no $q/incoming: $(ls -la "$q" 2>&1 | tr '\n' ' ')"
for i in $(seq 180); do
	[ -s "$q/done/task1.manifest.json" ] && break
	[ $((i % 30)) -eq 0 ] && diag "kube: waiting for the worker's task ($SECONDS s)"
	sleep 1
done
wm=$q/done/task1.manifest.json
check "kube: the worker Deployment claims a task from the queue and leaves its signed manifest (isolation_unavailable, as above)" \
	eval '[ "$(jq -r .status "$wm" 2>/dev/null)" = isolation_unavailable ] && signed "$wm" "$D/key" &&
	      [ -z "$(ls -A "$q/incoming")" ]' ||
	diag "worker ($CTR): $(ls -la "$q" "$q"/* 2>&1 | head -c 600 | tr '\n' ' ') log: $(podman logs "$CTR" 2>&1 | head -c 1200 | tr '\n' ' ')"
timeout 300 podman kube down "$K/worker.yaml" >/dev/null 2>&1
check "kube: podman kube down removes the worker" eval '[ -z "$(podman pod ps -q)" ]'
kube_fresh >/dev/null 2>&1
timeout 60 podman secret rm sbx-signing-key >/dev/null 2>&1
for v in $(podman volume ls -q); do timeout 60 podman volume rm -f "$v" >/dev/null 2>&1; done
cp "$K"/*.log "$K"/facts-* "$K"/*.out "$K"/*.err /vm-results/container/ 2>/dev/null
