#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# completions.sh - the shell completions offer every subcommand and each
# subcommand's options (as `sbx --help` lists them), and `sbx cancel`
# completes the run ids in the state_dir of the host config named with
# --config, the subcommand is found after global options (sbx --config F
# check), and -p/-n of sbx run complete the names of the catalog named with
# --policy.  bash through its completion function and compgen, fish with
# `complete -C`, zsh through zpty with the real completion system.  A shell
# that is not installed is a skip, saying so (a failure with
# SBX_TEST_NO_SKIP=1; tools/install-deps test installs them).  Prints TAP.
set -u
: "${SBX_BUILDDIR:?}"
C=$SBX_BUILDDIR/completions
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
skip() {
	if [ "${SBX_TEST_NO_SKIP:-0}" = 1 ]; then not_ok "$* (SBX_TEST_NO_SKIP=1 forbids skipping)"
	else n=$((n + 1)); echo "ok $n # SKIP $*"; fi
}

# What each subcommand accepts, beside the common options.
common="--config --policy --quiet --verbose --help"
declare -A opts=(
	[run]="--principal --store --artifacts --key --events --queue-timeout --profile --network
		--input --limit --allow --require --code --print-job --dry-run --stdout --stderr --json
		--attach --no-attach --stdin --manifest --manifest-fd --no-template"
	[verify]="--pubkey --artifacts --json"
	[keygen]="--output --json"
	[check]="--json" [profiles]="--json" [cancel]="--json" [gc]="--json"
	[ps]="--json" [promote]="--artifacts --key" [prepare]="--json"
	[batch]="--jobs --out --artifacts --queue-timeout --principal --store --key --json
		--no-template"
	[template]="--profile --json"
)
cmds="run verify keygen check profiles cancel gc ps promote batch prepare template"

T=$(mktemp -d "${TMPDIR:-/tmp}/sbx-completions.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/state/runs/r1abcdef" "$T/state/runs/r2abcdef" "$T/jobs" "$T/holds/h1abcdef" "$T/holds/h2abcdef"
printf '{"state_dir": "%s", "hold_dir": "%s"}\n' "$T/state" "$T/holds" > "$T/cfg.json"
# The catalog -p and -n complete from (--policy on the line).
P=$T/policy
mkdir -p "$P/profiles" "$P/network"
: > "$P/profiles/shell.json"; : > "$P/profiles/py-x.json"; : > "$P/network/disabled.json"
profiles="shell py-x" networks="disabled"

# have LIST WORD...: every WORD is a line of LIST
have() {
	local list=$1 w miss=; shift
	for w in "$@"; do grep -qxF -- "$w" <<<"$list" || miss="$miss $w"; done
	[ -z "$miss" ] || { echo "# missing:$miss"; return 1; }
}

# The table above is what each `sbx X --help` lists: the completions are
# tested against the table, the table against the program.
for c in $cmds; do
	listed=$("$SBX_BUILDDIR/sbx" "$c" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
	if have "$(printf '%s\n' $common ${opts[$c]})" $listed; then ok "sbx $c --help: every option is in the table"
	else not_ok "sbx $c --help: every option is in the table"; fi
done

# --- bash -----------------------------------------------------------------
bc=/usr/share/bash-completion/bash_completion
if [ -r "$bc" ]; then
	# bash_complete WORDS...: what completing the last word offers.
	bash_complete() {
		bash --norc --noprofile -c '
			. "$1"; . "$2"; shift 2
			COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
			COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
			_sbx sbx "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
			printf "%s\n" "${COMPREPLY[@]}"' _ "$bc" "$C/sbx" "$@" 2>&1
	}
	if have "$(bash_complete sbx '')" $cmds; then ok "bash: subcommands"; else not_ok "bash: subcommands"; fi
	for c in $cmds; do
		if have "$(bash_complete sbx "$c" --)" $common ${opts[$c]}; then ok "bash: sbx $c options"
		else not_ok "bash: sbx $c options"; fi
	done
	if have "$(bash_complete sbx --config "$T/cfg.json" '')" $cmds; then ok "bash: subcommands after a global option"
	else not_ok "bash: subcommands after a global option"; fi
	if have "$(bash_complete sbx --config "$T/cfg.json" check --)" $common; then ok "bash: sbx --config F check options"
	else not_ok "bash: sbx --config F check options"; fi
	if have "$(bash_complete sbx run --policy "$P" -p '')" $profiles; then ok "bash: sbx run -p completes profiles"
	else not_ok "bash: sbx run -p completes profiles"; fi
	if have "$(bash_complete sbx run --policy "$P" -n '')" $networks; then ok "bash: sbx run -n completes network profiles"
	else not_ok "bash: sbx run -n completes network profiles"; fi
	if have "$(bash_complete sbx cancel --config "$T/cfg.json" '')" r1abcdef r2abcdef; then
		ok "bash: sbx cancel completes run ids of the config's state_dir"
	else not_ok "bash: sbx cancel completes run ids of the config's state_dir"; fi
	if have "$(bash_complete sbx promote --config "$T/cfg.json" '')" h1abcdef h2abcdef; then
		ok "bash: sbx promote completes held run ids of the config's hold_dir"
	else not_ok "bash: sbx promote completes held run ids of the config's hold_dir"; fi
else
	skip "bash: bash-completion is not installed"
fi

# --- fish -----------------------------------------------------------------
if command -v fish >/dev/null 2>&1; then
	fish_complete() {
		HOME=$T fish --no-config -c "source $C/sbx.fish; complete -C '$*'" 2>&1 | cut -f1
	}
	if have "$(fish_complete 'sbx ')" $cmds; then ok "fish: subcommands"; else not_ok "fish: subcommands"; fi
	for c in $cmds; do
		if have "$(fish_complete "sbx $c --")" $common ${opts[$c]}; then ok "fish: sbx $c options"
		else not_ok "fish: sbx $c options"; fi
	done
	if have "$(fish_complete "sbx --config $T/cfg.json ")" $cmds; then ok "fish: subcommands after a global option"
	else not_ok "fish: subcommands after a global option"; fi
	if have "$(fish_complete "sbx --config $T/cfg.json check --")" $common; then ok "fish: sbx --config F check options"
	else not_ok "fish: sbx --config F check options"; fi
	if have "$(fish_complete "sbx run --policy $P -p ")" $profiles; then ok "fish: sbx run -p completes profiles"
	else not_ok "fish: sbx run -p completes profiles"; fi
	if have "$(fish_complete "sbx run --policy $P -n ")" $networks; then ok "fish: sbx run -n completes network profiles"
	else not_ok "fish: sbx run -n completes network profiles"; fi
	if have "$(fish_complete "sbx cancel --config $T/cfg.json ")" r1abcdef r2abcdef; then
		ok "fish: sbx cancel completes run ids of the config's state_dir"
	else not_ok "fish: sbx cancel completes run ids of the config's state_dir"; fi
	if have "$(fish_complete "sbx promote --config $T/cfg.json ")" h1abcdef h2abcdef; then
		ok "fish: sbx promote completes held run ids of the config's hold_dir"
	else not_ok "fish: sbx promote completes held run ids of the config's hold_dir"; fi
else
	skip "fish: fish is not installed"
fi

# --- zsh --------------------------------------------------------------------
if command -v zsh >/dev/null 2>&1; then
	# zsh_complete LINE: the matches the completion system adds for LINE,
	# captured by wrapping compadd, in a zsh driven through zpty.  The
	# marker is read as printed (done-42), not as echoed (done-$((6*7))),
	# so that the read waits for the completion to have run.
	zsh_complete() {
		HOME=$T ZDOTDIR=$T zsh -f -c '
			zmodload zsh/zpty
			zpty z zsh -f -i
			zpty -w z "PS1= ; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D"
			zpty -w z "compadd() { builtin compadd -O __m \"\$@\"; print -l -- \"<m>\"\${^__m} >> $2/zsh.out; builtin compadd \"\$@\" }"
			zpty -w z "zstyle \":completion:*\" list-prompt \"\"; zstyle \":completion:*\" menu no"
			zpty -w z "$3"$'"'"'\t'"'"'
			zpty -w z $'"'"'\C-u'"'"'"print done-\$((6*7))"$'"'"'\n'"'"'
			zpty -r z out "*done-42*" ; zpty -d z' _ "$C" "$T" "$1" >/dev/null 2>&1
		sed -n 's/^<m>//p' "$T/zsh.out" 2>/dev/null | sort -u
		rm -f "$T/zsh.out"
	}
	if have "$(zsh_complete 'sbx ')" $cmds; then ok "zsh: subcommands"; else not_ok "zsh: subcommands"; fi
	for c in $cmds; do
		if have "$(zsh_complete "sbx $c --")" $common ${opts[$c]}; then ok "zsh: sbx $c options"
		else not_ok "zsh: sbx $c options"; fi
	done
	if have "$(zsh_complete "sbx --config $T/cfg.json ")" $cmds; then ok "zsh: subcommands after a global option"
	else not_ok "zsh: subcommands after a global option"; fi
	if have "$(zsh_complete "sbx --config $T/cfg.json check --")" $common; then ok "zsh: sbx --config F check options"
	else not_ok "zsh: sbx --config F check options"; fi
	if have "$(zsh_complete "sbx run --policy $P -p ")" $profiles; then ok "zsh: sbx run -p completes profiles"
	else not_ok "zsh: sbx run -p completes profiles"; fi
	if have "$(zsh_complete "sbx run --policy $P -n ")" $networks; then ok "zsh: sbx run -n completes network profiles"
	else not_ok "zsh: sbx run -n completes network profiles"; fi
	if have "$(zsh_complete "sbx cancel --config $T/cfg.json ")" r1abcdef r2abcdef; then
		ok "zsh: sbx cancel completes run ids of the config's state_dir"
	else not_ok "zsh: sbx cancel completes run ids of the config's state_dir"; fi
	if have "$(zsh_complete "sbx promote --config $T/cfg.json ")" h1abcdef h2abcdef; then
		ok "zsh: sbx promote completes held run ids of the config's hold_dir"
	else not_ok "zsh: sbx promote completes held run ids of the config's hold_dir"; fi
else
	skip "zsh: zsh is not installed"
fi

echo "1..$n"
[ "$failed" -eq 0 ]
