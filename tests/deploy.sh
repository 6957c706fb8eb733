#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# deploy.sh - the Kubernetes manifests under deploy/kubernetes/ are valid
# API objects and say what docs/deploy.md says:
#
#   - every document of every manifest validates against the Kubernetes
#     API's schemas (kubernetes-models' validators, generated from the
#     Kubernetes OpenAPI document, pinned by tests/deploy/package-lock.json
#     and installed with `npm ci` into the build tree), with no field the
#     API does not have and no YAML that reads differently as 1.1 and 1.2
#     (tests/deploy/validate.js);
#   - broken copies are refused: a misspelt field, a value outside an
#     enum, a missing required field, an ambiguous octal mode, an unknown
#     kind - so a validator that accepted anything would fail here;
#   - every pod template's securityContext, hostUsers and runtimeClassName
#     are exactly the table in docs/deploy.md ("The pod's settings"), and
#     the table names every such field the manifests set;
#   - no pod runs Unconfined or privileged: every pod names the node's
#     Localhost seccomp profile (deploy/container/seccomp-profile's, which
#     denies by default) and AppArmor profile
#     (deploy/container/apparmor-profile, which apparmor_parser -Q takes);
#   - the host configurations in config.yaml are JSON with sbx's keys, and
#     each pod's memory limit is its memory_budget_mib plus the per-run
#     reserve the docs give, for max_concurrent runs.
#
# Nothing here talks to a cluster: no cluster is needed or used.  Without
# node and npm, or when `npm ci` fails, the test fails (tools/install-deps test
# installs them); only a builder who is not root, without
# SBX_TEST_NO_SKIP=1, skips.  Prints TAP.
set -u
: "${SBX_BUILDDIR:?}" "${SBX_SRCDIR:?}"
K8S=$SBX_SRCDIR/deploy/kubernetes
DOC=$SBX_SRCDIR/docs/deploy.md
# What docs/deploy.md gives per run beyond memory_mib: the broker and the
# inputs it copies (input_bytes_max), in MiB.
RESERVE_MIB=1088

tap_n=0 tap_failed=0
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
not_ok() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n - $*"; }
diag() { printf '%s\n' "$*" | head -c 4000 | sed 's/^/# /'; }
check() { # DESCRIPTION COMMAND...
	local d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
missing() {
	if [ "$(id -u)" -eq 0 ] || [ "${SBX_TEST_NO_SKIP:-0}" = 1 ]; then
		echo "Bail out! $*"
		exit 1
	fi
	echo "1..0 # SKIP $*"
	exit 0
}

for t in node npm jq; do
	command -v "$t" >/dev/null 2>&1 || missing "$t is not installed (tools/install-deps test installs it)"
done

# The schema source, pinned: installed again only when the lock changed.
NM=$SBX_BUILDDIR/tests/deploy-node
mkdir -p "$NM" || missing "cannot make $NM"
if ! cmp -s "$SBX_SRCDIR/tests/deploy/package-lock.json" "$NM/package-lock.json" ||
	[ ! -d "$NM/node_modules/kubernetes-models" ]; then
	cp "$SBX_SRCDIR/tests/deploy/package.json" "$SBX_SRCDIR/tests/deploy/package-lock.json" "$NM/" &&
		chmod u+w "$NM/package.json" "$NM/package-lock.json" || missing "cannot copy the lock file to $NM"
	if ! out=$(cd "$NM" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error 2>&1); then
		diag "$out"
		rm -f "$NM/package-lock.json"
		missing "npm ci of tests/deploy/package-lock.json failed (the npm registry must be reachable once)"
	fi
fi
jqe() { jq -e "$@" >/dev/null 2>&1; }
validate() { node "$SBX_SRCDIR/tests/deploy/validate.js" "$@"; }

T=$(mktemp -d "${TMPDIR:-/tmp}/sbx-deploy.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

# --- the manifests, against the API's schemas ----------------------------------
manifests=("$K8S"/*.yaml)
[ -e "${manifests[0]}" ] || missing "no manifests in $K8S"
if out=$(validate --docs "$T/docs.jsonl" "$NM" "${manifests[@]}" 2>&1); then
	ok "every manifest validates: $(grep -c '^ok ' <<<"$out") documents in ${#manifests[@]} files"
else
	not_ok "the manifests validate against the Kubernetes API's schemas"
	diag "$out"
fi
for kind in Job Deployment Pod RuntimeClass ConfigMap; do
	check "a $kind is among them" \
		jqe --arg k "$kind" -s 'any(.[]; .doc.kind == $k)' "$T/docs.jsonl"
done

# --- broken copies are refused ---------------------------------------------------
refused() { # DESCRIPTION EXPECTED-TEXT SED-SCRIPT [FILE]
	local d=$1 want=$2 script=$3 f=${4:-job.yaml} out
	sed "$script" "$K8S/$f" >"$T/bad.yaml"
	if cmp -s "$K8S/$f" "$T/bad.yaml"; then
		not_ok "$d (the edit changed nothing)"
		return
	fi
	if out=$(validate "$NM" "$T/bad.yaml" 2>&1); then
		not_ok "$d: accepted"
		diag "$out"
	elif grep -q -- "$want" <<<"$out"; then
		ok "$d"
	else
		not_ok "$d: refused, but not for that"
		diag "$out"
	fi
}
refused "a misspelt pod field (hostUser) is refused" "hostUser: unknown field" \
	's/^\( *\)hostUsers: false/\1hostUser: false/'
refused "a misspelt container field (procmount) is refused" "procmount: unknown field" \
	's/procMount: Unmasked/procmount: Unmasked/'
refused "a seccomp profile type outside the enum is refused" "seccompProfile/type" \
	'/seccompProfile:/,/type:/s/type: Localhost/type: Localhosst/'
refused "a boolean written as a string is refused" "allowPrivilegeEscalation" \
	's/allowPrivilegeEscalation: false/allowPrivilegeEscalation: "false"/'
refused "a Deployment without its selector is refused" "selector" \
	'/^  selector:/,/^  strategy:/{/^  strategy:/!d}' worker.yaml
refused "an ambiguous octal (defaultMode: 0400) is refused" "YAML 1.1 and 1.2" \
	's/defaultMode: 256/defaultMode: 0400/'
refused "an unknown kind is refused" "no such kind" 's/^kind: Job$/kind: Jobb/'
refused "a duplicate key is refused" "" 's/^\( *\)restartPolicy: Never/&\n\1restartPolicy: Never/'

# --- the pod's settings, as docs/deploy.md states them -----------------------------
# Rows of the table: | `pod.PATH` or `container.PATH` | `JSON value` | why |
sed -n '/^#* The pod.s settings/,/^#/p' "$DOC" |
	sed -n 's/^| `\(pod\|container\)\.\([A-Za-z.]*\)` | `\([^`]*\)` |.*/\1\t\2\t\3/p' >"$T/table"
if [ -s "$T/table" ]; then
	ok "docs/deploy.md has the settings table ($(wc -l <"$T/table") rows)"
else
	not_ok "docs/deploy.md has the settings table"
fi
# Every pod template: a Job's, a Deployment's, and the check Pod.
jq -c 'select(.doc.kind == "Job" or .doc.kind == "Deployment" or .doc.kind == "Pod") |
	{name: "\(.file) \(.doc.kind)",
	 pod: (if .doc.kind == "Pod" then .doc.spec else .doc.spec.template.spec end)}' \
	"$T/docs.jsonl" >"$T/pods"
[ -s "$T/pods" ] || not_ok "pod templates found in the manifests"
while IFS= read -r pod; do
	name=$(jq -r .name <<<"$pod")
	while IFS=$'\t' read -r where field want; do
		if ! jq -n "$want" >/dev/null 2>&1; then
			not_ok "docs/deploy.md: $where.$field: \`$want\` is not a JSON value"
			continue
		fi
		jpath=$(jq -c -n --arg f "$field" '$f | split(".")')
		if [ "$where" = pod ]; then
			r=$(jq -c --argjson p "$jpath" '[.pod | getpath($p)]' <<<"$pod")
		else
			r=$(jq -c --argjson p "$jpath" '[.pod.containers[] | getpath($p)]' <<<"$pod")
		fi
		if jq -e --argjson w "$want" 'length > 0 and all(.[]; . == $w)' <<<"$r" >/dev/null; then
			ok "$name: $where.$field is $want, as docs/deploy.md says"
		else
			not_ok "$name: $where.$field is $r, docs/deploy.md says $want"
		fi
	done <"$T/table"
	# The other way: every setting the template makes is in the table.
	jq -r '(.pod | {hostUsers, runtimeClassName, securityContext} |
			paths(type != "object") | "pod." + join(".")),
		(.pod.containers[] | {securityContext} |
			paths(type != "object") | "container." + join("."))' <<<"$pod" |
		grep -v '\.[0-9]' | sort -u >"$T/set"
	awk -F'\t' '{print $1 "." $2}' "$T/table" | sort -u >"$T/documented"
	undocumented=$(comm -23 "$T/set" "$T/documented")
	if [ -z "$undocumented" ]; then
		ok "$name: every securityContext field it sets is in docs/deploy.md"
	else
		not_ok "$name: set but not in docs/deploy.md's table:" $undocumented
	fi
done <"$T/pods"

# --- the node's profiles ----------------------------------------------------------
# No pod runs Unconfined: the seccomp and AppArmor profiles are the
# node's Localhost ones the repo ships.  unconfined FILE: the
# non-comment lines of FILE that ask for no confinement.
unconfined() { grep -v '^ *#' "$1" | grep -n -i -e 'unconfined' -e 'privileged: true'; }
for f in "$K8S"/*.yaml; do
	if u=$(unconfined "$f"); then
		not_ok "${f##*/}: asks for no confinement"
		diag "$u"
	else
		ok "${f##*/}: no Unconfined profile, no privileged container"
	fi
done
sed 's/type: Localhost/type: Unconfined/' "$K8S/job.yaml" >"$T/unconfined.yaml"
check "a copy with an Unconfined profile is caught" eval 'unconfined "$T/unconfined.yaml" >/dev/null'
AA=$SBX_SRCDIR/deploy/container/apparmor-profile
aa_name=$(sed -n 's/^profile \([^ ]*\) .*{$/\1/p' "$AA")
check "every pod names the AppArmor profile deploy/container/apparmor-profile defines ($aa_name)" \
	jqe --arg n "$aa_name" -s '[.[] | select(.doc.kind == "Job" or .doc.kind == "Deployment" or .doc.kind == "Pod") |
		(if .doc.kind == "Pod" then .doc.spec else .doc.spec.template.spec end) |
		.securityContext.appArmorProfile.localhostProfile] | length == 3 and all(. == $n)' "$T/docs.jsonl"
check "the AppArmor profile keeps the engines' default denials and adds only userns, mount, remount, pivot_root" \
	eval 'for r in "deny @{PROC}/sysrq-trigger rwklx," "deny @{PROC}/kcore rwklx," "deny /sys/firmware/** rwklx," \
		"deny /sys/kernel/security/** rwklx," "deny /sys/[^f]*/** wklx," "userns," "mount," "remount," "pivot_root,"; do
		grep -qxF "  $r" "$AA" || exit 1; done; ! grep -q -e "flags=([^)]*\(unconfined\|complain\)" "$AA"'
command -v apparmor_parser >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
if ! command -v apparmor_parser >/dev/null 2>&1; then
	missing "apparmor_parser is not installed (tools/install-deps test installs apparmor)"
elif [ -e /etc/apparmor.d/abi/4.0 ]; then
	check "apparmor_parser -Q accepts deploy/container/apparmor-profile" \
		eval 'apparmor_parser -Q -K "$AA" >"$T/aa.out" 2>&1' || diag "$(cat "$T/aa.out")"
else
	# AppArmor 3 (Debian 12): <abi/3.0>, without the userns rule.
	sed -e 's|<abi/4.0>|<abi/3.0>|' -e '/^  userns,$/d' "$AA" >"$T/aa-3.0"
	check "apparmor_parser $(apparmor_parser --version | sed -n '1s/.* //p') -Q accepts deploy/container/apparmor-profile (abi 3.0, no userns rule)" \
		eval 'apparmor_parser -Q -K "$T/aa-3.0" >"$T/aa.out" 2>&1' || diag "$(cat "$T/aa.out")"
fi
check "every pod names the seccomp profile deploy/container/seccomp-profile makes (sbx-seccomp.json)" \
	jqe -s '[.[] | select(.doc.kind == "Job" or .doc.kind == "Deployment" or .doc.kind == "Pod") |
		(if .doc.kind == "Pod" then .doc.spec else .doc.spec.template.spec end) |
		.securityContext.seccompProfile.localhostProfile] | length == 3 and all(. == "sbx-seccomp.json")' "$T/docs.jsonl"
if [ -r /usr/share/containers/seccomp.json ]; then
	if "$SBX_SRCDIR/deploy/container/seccomp-profile" >"$T/sbx-seccomp.json" 2>"$T/sc.err"; then
		# Default deny; sethostname allowed with no condition; unshare
		# and clone allowed; bpf, kexec_load and others still refused.
		check "the seccomp profile denies by default and allows sethostname, unshare, clone" \
			jqe '(.defaultAction | startswith("SCMP_ACT_ERRNO")) and
			     ([.syscalls[] | select(.action == "SCMP_ACT_ALLOW" and (.includes // {}) == {} and (.excludes // {}) == {}) | .names[]] as $a |
			      ($a | index("sethostname")) and ($a | index("unshare")) and ($a | index("clone")) and
			      ($a | index("kexec_load") | not) and ($a | index("init_module") | not))' "$T/sbx-seccomp.json"
	else
		not_ok "deploy/container/seccomp-profile runs"
		diag "$(cat "$T/sc.err")"
	fi
else
	missing "/usr/share/containers/seccomp.json is missing (package golang-github-containers-common)"
fi

# --- host configurations and sizing --------------------------------------------
known='["store","policy","signing_key","state_dir","cgroup_parent","max_concurrent","memory_budget_mib","root_ids"]'
jq -r 'select(.doc.kind == "ConfigMap" and .doc.metadata.name == "sbx-config") |
	.doc.data | to_entries[] | "\(.key)\t\(.value | @base64)"' "$T/docs.jsonl" >"$T/configs"
check "config.yaml holds sbx-config with job.json and worker.json" \
	test "$(cut -f1 "$T/configs" | sort | tr '\n' ' ')" = "job.json worker.json "
while IFS=$'\t' read -r key b64; do
	printf '%s' "$b64" | base64 -d >"$T/$key"
	if jq -e --argjson k "$known" 'type == "object" and (keys - $k) == [] and
		(.max_concurrent | type) == "number" and (.memory_budget_mib | type) == "number"' \
		"$T/$key" >/dev/null 2>&1; then
		ok "sbx-config $key: JSON with only sbx's host configuration keys, max_concurrent and memory_budget_mib set"
	else
		not_ok "sbx-config $key: JSON with only sbx's host configuration keys, max_concurrent and memory_budget_mib set"
	fi
done <"$T/configs"
sizing() { # KIND CONFIG-KEY
	local mem n budget
	mem=$(jq -r --arg k "$1" 'select(.doc.kind == $k) | .doc.spec.template.spec.containers[0] |
		.resources.limits.memory' "$T/docs.jsonl")
	n=$(jq .max_concurrent "$T/$2" 2>/dev/null)
	budget=$(jq .memory_budget_mib "$T/$2" 2>/dev/null)
	if [[ $mem =~ ^[0-9]+Mi$ ]] && [ -n "$n" ] && [ -n "$budget" ] &&
		[ "${mem%Mi}" -eq $((budget + n * RESERVE_MIB)) ]; then
		ok "$1: limits.memory $mem = memory_budget_mib $budget + $n x $RESERVE_MIB MiB"
	else
		not_ok "$1: limits.memory $mem is not memory_budget_mib $budget + $n x $RESERVE_MIB MiB"
	fi
}
sizing Job job.json
sizing Deployment worker.json
# The command each pod runs reads the configuration it was sized for.
check "the Job's command reads job.json" \
	jqe -s 'any(.[]; .doc.kind == "Job" and
		(.doc.spec.template.spec.containers[0].args[0] | contains("/etc/sbx/config/job.json")))' \
	"$T/docs.jsonl"
check "the worker's command reads worker.json" \
	jqe -s 'any(.[]; .doc.kind == "Deployment" and
		(.doc.spec.template.spec.containers[0].args[0] | contains("/etc/sbx/config/worker.json")))' \
	"$T/docs.jsonl"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
