#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# memory.sh - memory a payload holds without any process owning it.
#
# Pages of a tmpfs and the buffers of unread sockets are charged to no
# process's RSS.  A payload that piles them up must still be held to its
# memory_mib: killed cleanly (137, limit_exceeded, reason memory) or
# refused more memory, with truthful usage in the manifest and nothing
# left behind.  Every fill is bounded, so a host where the limit does not
# hold is not run out of memory: /dev/shm by its tmpfs size and the
# probe's count, TCP buffers by the probe's cap of 1.5 GiB, UDP buffers by
# the probe's socket count and their size (~800 MB).
. "$SBX_SRCDIR/tests/e2e/lib.sh"

# The shipped catalog plus a test-only "probe" profile (lib.sh).
make_probe_catalog

# excerpt: the last manifest's stdout, one line per line.
excerpt() { jqm .stdout.excerpt | python3 -c 'import sys; print(sys.stdin.read().replace("\ufffd", "\n"))'; }

for mode in root user; do
	setup_mode $mode

	# 1. /dev/shm filled to six times the limit from a 64 KiB buffer: the
	#    writer's RSS stays tiny, so the OOM killer must be pointed at the
	#    payload (oom_score_adj 1000, the init lower), and the run is
	#    limit_exceeded, never an error of sbx.
	mkjob "$M/shm.json" probe 'echo "adj_self $(cat /proc/self/oom_score_adj)"
echo "adj_init $(cat /proc/1/oom_score_adj)"
exec /opt/sbx-probe shmfill 192' '{limits: {memory_mib: 32}}'
	sbx_run "$M/shm.json"
	expect_rc 137 "$mode: /dev/shm fill at 6x the limit"
	check "$mode: /dev/shm fill: limit_exceeded, reason memory ($(jqm .reason))" \
		eval '[ "$(jqm .status)" = limit_exceeded ] && [[ "$(jqm .reason)" == memory* ]] && [ "$(jqm .reason_code)" = memory_limit ]'
	check "$mode: /dev/shm fill: an OOM kill counted, peak near the limit ($(jqm .usage.peak_memory_bytes)), exit SIGKILL, signed" \
		eval '[ "$(jqm ".usage.oom_kills >= 1")" = true ] && [ "$(jqm ".usage.peak_memory_bytes >= 0.9 * 32 * 1048576")" = true ] && [ "$(jqm .exit.signal)" = SIGKILL ] && signature_ok'
	got=$(excerpt)
	check "$mode: the payload runs with oom_score_adj 1000" grep -qx "adj_self 1000" <<<"$got"
	check "$mode: the init's oom_score_adj is lower ($(grep '^adj_init' <<<"$got"))" \
		eval '[ "$(sed -n "s/^adj_init //p" <<<"$got")" -lt 1000 ]'
	check "$mode: /dev/shm fill: the fill did not complete" eval '! grep -q "^shmfill wrote=" <<<"$got"'
	check "$mode: /dev/shm fill: nothing left behind" nothing_left

	# 2. The same fill after the payload set its own oom_score_adj back
	#    to the init's (it may lower it down to what it inherited): the
	#    kernel may now pick the init, and the run must still end as a
	#    memory limit, with the exit a SIGKILL.
	mkjob "$M/shm-adj.json" probe 'cat /proc/1/oom_score_adj > /proc/self/oom_score_adj || exit 3
echo "adj_self $(cat /proc/self/oom_score_adj)"
exec /opt/sbx-probe shmfill 192' '{limits: {memory_mib: 32}}'
	sbx_run "$M/shm-adj.json"
	diag "$mode: lowered oom_score_adj: $(jqm .reason), oom_kills $(jqm .usage.oom_kills)"
	expect_rc 137 "$mode: /dev/shm fill with the payload's oom_score_adj lowered"
	check "$mode: lowered oom_score_adj: limit_exceeded, reason memory, exit SIGKILL, an OOM kill counted" \
		eval '[ "$(jqm .status)" = limit_exceeded ] && [[ "$(jqm .reason)" == memory* ]] && [ "$(jqm .reason_code)" = memory_limit ] && [ "$(jqm .exit.signal)" = SIGKILL ] && [ "$(jqm ".usage.oom_kills >= 1")" = true ] && signature_ok'
	check "$mode: lowered oom_score_adj: nothing left behind" nothing_left

	# 3. 96 loopback TCP connections inside the sandbox (both ends are the
	#    payload, in its own net namespace), 4 MiB buffers, the receivers
	#    never read.  Unlimited, this queues ~1 GiB (the probe stops at
	#    1.5 GiB); held to memory_mib 64, the kernel must refuse the
	#    sends long before, and the manifest's peak must show it.
	mkjob "$M/tcp.json" probe 'exec /opt/sbx-probe tcpfill 96 4194304 1536' '{limits: {memory_mib: 64}}'
	sbx_run "$M/tcp.json"
	got=$(excerpt)
	queued=$(sed -n 's/^tcpfill conns=[0-9]* queued=\([0-9]*\) .*/\1/p' <<<"$got")
	conns=$(sed -n 's/^tcpfill conns=\([0-9]*\) .*/\1/p' <<<"$got")
	diag "$mode: tcpfill: $(grep '^tcpfill' <<<"$got"), peak_memory_bytes $(jqm .usage.peak_memory_bytes)"
	expect_rc 0 "$mode: unread loopback TCP buffers: the payload ran to its end"
	check "$mode: unread loopback TCP buffers: every connection made (${conns:-none})" test "${conns:-0}" -eq 96
	check "$mode: unread loopback TCP buffers: at most ~the limit queued (${queued:-none} bytes, limit $((64 << 20)))" \
		eval '[ -n "$queued" ] && [ "$queued" -le $((96 << 20)) ]'
	check "$mode: unread loopback TCP buffers: the manifest's peak covers what was queued" \
		eval '[ -n "$queued" ] && [ "$(jqm ".usage.peak_memory_bytes >= $queued")" = true ] && signature_ok'
	check "$mode: unread loopback TCP buffers: nothing left behind" nothing_left

	# 3b. The same with UDP: 100 receivers with 4 MiB buffers, never
	#     read, each sent 12 MiB (unlimited the kernel keeps ~800 MB, the
	#     probe's bound); the receive queues are read back from the
	#     sandbox's own /proc/net/udp.
	mkjob "$M/udp.json" probe 'exec /opt/sbx-probe udpfill 100 4194304 12' '{limits: {memory_mib: 64}}'
	sbx_run "$M/udp.json"
	got=$(excerpt)
	queued=$(sed -n 's/^udpfill socks=100 queued=\([0-9]*\)$/\1/p' <<<"$got")
	diag "$mode: udpfill: $(grep '^udpfill' <<<"$got"), peak_memory_bytes $(jqm .usage.peak_memory_bytes)"
	expect_rc 0 "$mode: unread loopback UDP buffers: the payload ran to its end"
	check "$mode: unread loopback UDP buffers: 100 sockets, at most ~the limit queued (${queued:-none} bytes)" \
		eval '[ -n "$queued" ] && [ "$queued" -le $((96 << 20)) ]'
	check "$mode: unread loopback UDP buffers: the manifest's peak covers what was queued" \
		eval '[ -n "$queued" ] && [ "$(jqm ".usage.peak_memory_bytes >= $queued")" = true ] && signature_ok'
	check "$mode: unread loopback UDP buffers: nothing left behind" nothing_left

	# 4. sbx check predicts it: the cgroup line says socket buffers are
	#    held to the limit (v1: memory.kmem.tcp, v2: memory.max).
	as_mode "$SBX" check --config "$M/config.json" --policy "$POLICY" > "$M/check.out" 2>&1
	check "$mode: sbx check: the cgroup line says socket buffers are limited" \
		grep -qE "^cgroup +ok: .*socket buffers (limited|in memory.max)" "$M/check.out"
done

finish
