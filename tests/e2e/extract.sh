#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# extract.sh - archive extraction stays inside the run's limits.
#
# The archives are made here, by the script below, from first principles
# (python's tarfile/zipfile/gzip/bz2/lzma, and a few header bytes written
# by hand where no library writes hostile headers): a gzip'd 7-Zip header
# declaring 10^8 files, an xz stream declaring a 1.5 GiB dictionary, a
# tar.bz2 whose sparse map has two million blocks, a tar.gz of pax global
# headers, and a bzip2'd tar that is slow to extract under a small CPU
# quota (for the deadline and cancellation).  Each must end in a refusal
# or a limit, a signed manifest, and nothing left behind.  A stand-in
# helper shows where sbx starts sbx-extract: in the run's cgroup, in an
# IPC namespace of its own, with its stderr on a pipe that sbx reads.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

need timeout bzip2 xz zstd ipcmk ipcs ipcrm

# No run may hang the suite: sbx gets 90 s, then SIGKILL (exit 99).
bound_sbx 90

# A test catalog: the shipped one plus "slowcpu", the shell profile whose
# minimum CPU is 1% of a core, so that extraction is slow on purpose.
POLICY="$T/policy"
cp -r "$SBX_SRCDIR/policy" "$POLICY"
jq '.minimums.cpu_cores = 0.01 | .description = "test only: shell with a tiny CPU minimum"' \
	"$SBX_SRCDIR/policy/profiles/shell.json" > "$POLICY/profiles/slowcpu.json"

F="$T/fixtures"
mkdir -p "$F"
python3 - "$F" <<'PY' || { echo "Bail out! cannot make the fixtures"; exit 1; }
import bz2, gzip, io, lzma, os, struct, sys, tarfile, zipfile, zlib
d = sys.argv[1]

def reg(path, data, pax=None):
    i = tarfile.TarInfo(path); i.size = len(data); i.mode = 0o644
    if pax:
        i.pax_headers = pax
    return i, data

def tar_bytes(entries, fmt=tarfile.PAX_FORMAT):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=fmt) as t:
        for i, data in entries:
            t.addfile(i, io.BytesIO(data))
    return b.getvalue()

def put(name, data):
    with open(f"{d}/{name}", "wb") as f:
        f.write(data)

# Good archives, one per accepted format and filter.
good = tar_bytes([reg("dir/hello.txt", b"hello from the archive\n")])
put("good.tar", good)
put("good.tgz", gzip.compress(good))
put("good.tbz", bz2.compress(good))
put("good.txz", lzma.compress(good))          # preset 6: an 8 MiB dictionary
put("good.tar.zst.in", good)                  # compressed with zstd(1) below
z = io.BytesIO()
with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
    zf.writestr("dir/hello.txt", b"hello from the archive\n")
put("good.zip", z.getvalue())

# 7-Zip, gzip'd: a signature header pointing at a header whose FilesInfo
# declares 10^8 files, all of them empty streams (a bit field of 0xff).
def num7(v):
    for n in range(9):
        if n == 8 or v < 1 << (7 * (n + 1)):
            break
    first = (0xff << (8 - n)) & 0xff if n else 0
    if n < 8:
        first |= v >> (8 * n)
    return bytes([first]) + (v & ((1 << (8 * n)) - 1)).to_bytes(n, "little")
files = 10 ** 8
bits = b"\xff" * (files // 8)
hdr = (b"\x01\x05" + num7(files) + b"\x0e" + num7(len(bits)) + bits + b"\x00\x00")
tail = struct.pack("<QQI", 0, len(hdr), zlib.crc32(hdr))
sig = b"7z\xbc\xaf\x27\x1c\x00\x04" + struct.pack("<I", zlib.crc32(tail)) + tail
put("many.7z.gz", gzip.compress(sig + hdr, 9))

# An ar archive: a format libarchive reads but sbx does not accept.
put("lib.a", b"!<arch>\n" + b"hello.txt/      0           0     0     644     6         `\n" + b"hello\n")

# xz: a normal stream (preset 6) whose block header is changed to declare
# a 1.5 GiB LZMA2 dictionary (dictionary size code 37), its CRC32 redone.
# The data decodes with any dictionary at least as large as the real one;
# only the decoder's allocation changes.
x = bytearray(lzma.compress(tar_bytes([reg("big-dict.txt", b"dictionary\n")]),
                            format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64))
bh = 12                                    # the block header follows the stream header
size = (x[bh] + 1) * 4
flags = x[bh + 1]
assert flags & 0x03 == 0, "one filter expected"
p = bh + 2
if flags & 0x40:                           # compressed size present: skip the varint
    while x[p] & 0x80: p += 1
    p += 1
if flags & 0x80:                           # uncompressed size present
    while x[p] & 0x80: p += 1
    p += 1
assert x[p] == 0x21 and x[p + 1] == 0x01, "LZMA2 filter flags expected"
x[p + 2] = 37                              # 3 << 29 = 1.5 GiB
x[bh + size - 4:bh + size] = struct.pack("<I", zlib.crc32(bytes(x[bh:bh + size - 4])))
put("bigdict.txz", bytes(x))

# GNU sparse format 1.0 (a pax extension): the map comes first in the data
# area, "count\n" then "offset\nsize\n" per block, padded to 512 bytes.
def sparse(name, realsize, blocks):
    m = f"{len(blocks)}\n".encode() + b"".join(f"{o}\n{n}\n".encode() for o, n in blocks)
    m += b"\0" * (-len(m) % 512)
    data = m + b"".join(b"x" * n for o, n in blocks)
    return reg(f"GNUSparseFile.0/{name}", data, {
        "GNU.sparse.major": "1", "GNU.sparse.minor": "0",
        "GNU.sparse.name": name, "GNU.sparse.realsize": str(realsize)})
# Two million one-byte blocks: ~20 MB of map text.
blocks = [(2 * k, 1) for k in range(2000000)]
put("sparsemap.tbz", bz2.compress(tar_bytes([sparse("map.bin", 4000000, blocks)]), 9))
# Files that end in a hole: data then a hole, and nothing but a hole
# (GNU tar writes an empty block at the end for that).
put("hole.tar", tar_bytes([sparse("tail.bin", 100000, [(0, 5)]),
                           sparse("empty.bin", 4096, [(4096, 0)])]))

# Pax global headers: 31 of them before one entry, each just under
# libarchive's own limits (1 MiB for one header, 32 headers per entry):
# 31 MB that libarchive decompresses and returns nothing of.
def pax_global(value_len):
    body = b" comment=" + b"A" * value_len + b"\n"
    n = len(body) + len(str(len(body)))
    n = len(body) + len(str(n))            # the length counts its own digits
    rec = str(n).encode() + body
    i = tarfile.TarInfo("pax_global_header"); i.type = tarfile.XGLTYPE; i.size = len(rec)
    return i.tobuf(format=tarfile.USTAR_FORMAT) + rec + b"\0" * (-len(rec) % 512)
body = b"".join(pax_global(1000000) for _ in range(31))
plain = tar_bytes([reg("after-globals.txt", b"after the globals\n")], tarfile.USTAR_FORMAT)
put("globals.tgz", gzip.compress(body + plain, 9))

# Slow on purpose under a 1% CPU quota: 16 MB of random bytes, bzip2'd.
put("slow.tbz", bz2.compress(tar_bytes([reg("random.bin", os.urandom(16 << 20))]), 1))
PY
zstd -q -19 "$F/good.tar.zst.in" -o "$F/good.tzst" && rm -f "$F/good.tar.zst.in" ||
	{ echo "Bail out! zstd failed"; exit 1; }
chmod -R a+rX "$T"

RAN=PAYLOAD-RAN-MARKER
stdout_text() { jq -r '.stdout.excerpt | gsub("\ufffd"; "\n")' "$OUT"; }
never_ran() {
	[ "$(jqm '.exit == null and ((.stdout.bytes // 0) == 0)')" = true ] &&
		! grep -qs "$RAN" "$OUT" "$ERR"
}
# status_is CODE STATUS REASON-REGEX: the last run ended so, signed, and the
# payload never ran.
status_is() {
	local r code
	r=$(jqm '.status + ": " + .reason')
	# Before the payload, each outcome has one reason_code (sbx(1)).
	case $2 in timed_out) code=wall_timeout ;; cancelled) code=cancelled ;;
	limit_exceeded) code=memory_limit ;; refused) code=policy_refused ;; *) code=? ;; esac
	if [ "$RC" -eq "$1" ] && [[ "$r" =~ ^$2:\ .*$3 ]] && [ "$(jqm .reason_code)" = "$code" ] &&
		never_ran && signature_ok; then return 0; fi
	diag "exit $RC, $r, reason_code $(jqm .reason_code)"
	diag "stderr: $(head -c 600 "$ERR")"
	return 1
}

# descendant PID COMM: the first descendant of PID (this script's own
# child) whose comm is COMM, found through /proc/PID/task/*/children.
descendant() {
	local p kids k found
	for k in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		if [ "$(cat /proc/"$k"/comm 2>/dev/null)" = "$2" ]; then echo "$k"; return 0; fi
		found=$(descendant "$k" "$2") && { echo "$found"; return 0; }
	done
	return 1
}
# wait_descendant PID COMM: wait (up to 30 s) for it to appear.
wait_descendant() {
	local i h
	for i in $(seq 300); do
		h=$(descendant "$1" "$2") && { echo "$h"; return 0; }
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

for mode in root user; do
	setup_mode $mode
	S="$M/store/$PRINCIPAL"
	cp "$F"/* "$S/"
	[ $mode = user ] && chown -R "$SBX_TEST_USER" "$M/store"

	# --- what is accepted ---------------------------------------------------

	# The VM suite (tests/vm) reruns only what involves the run's cgroup
	# (under emulation every run costs seconds): one format, the memory
	# limits, the deadline, cancellation and where the helper runs; the
	# formats and the parser's refusals run here.
	goods="good.tar good.tgz good.tbz good.txz good.tzst good.zip"
	[ -z "${SBX_E2E_CGROUP_ONLY:-}" ] || goods=good.tar
	for h in $goods; do
		mkjob "$M/j.json" shell "cat /work/in/$h/dir/hello.txt" \
			"{input_handles: [\"$h\"], extract: [\"$h\"], limits: {memory_mib: 32}}"
		sbx_run "$M/j.json"
		check "$mode: $h is extracted (memory_mib 32)" \
			eval '[ $RC -eq 0 ] && [ "$(stdout_text)" = "hello from the archive" ]'
	done

	# --- formats ------------------------------------------------------------

	if [ -z "${SBX_E2E_CGROUP_ONLY:-}" ]; then
		for h in many.7z.gz lib.a; do
			mkjob "$M/j.json" shell "echo $RAN" \
				"{input_handles: [\"$h\"], extract: [\"$h\"], limits: {memory_mib: 16}}"
			sbx_run "$M/j.json"
			check "$mode: $h is refused as a format sbx does not read (77)" \
				status_is 77 refused "archive \"$h\": not a tar or zip archive"
		done
	fi

	# --- decoder memory, header bytes -----------------------------------------

	mkjob "$M/j.json" shell "echo $RAN" \
		'{input_handles: ["bigdict.txz"], extract: ["bigdict.txz"], limits: {memory_mib: 16}}'
	sbx_run "$M/j.json"
	check "$mode: xz declaring a 1.5 GiB dictionary: limit_exceeded, memory, named (137)" \
		status_is 137 limit_exceeded 'archive "bigdict.txz": memory: xz: .*needs 15[0-9][0-9] MiB'

	if [ -z "${SBX_E2E_CGROUP_ONLY:-}" ]; then
		mkjob "$M/j.json" shell "echo $RAN" \
			'{input_handles: ["sparsemap.tbz"], extract: ["sparsemap.tbz"], limits: {memory_mib: 16}}'
		sbx_run "$M/j.json"
		check "$mode: a sparse map of two million blocks: refused for its header bytes (77)" \
			status_is 77 refused 'archive "sparsemap.tbz": headers of one entry above 1048576 bytes'

		mkjob "$M/j.json" shell "echo $RAN" \
			'{input_handles: ["globals.tgz"], extract: ["globals.tgz"], limits: {memory_mib: 16}}'
		sbx_run "$M/j.json"
		check "$mode: 31 pax global headers of 1 MB each: refused for their header bytes (77)" \
			status_is 77 refused 'archive "globals.tgz": headers of one entry above 1048576 bytes'
	fi

	# 16 MB of files in a 16 MiB job: the extracted pages are the run's
	# memory, so the cgroup stops the helper (not the waiting init).
	mkjob "$M/j.json" shell "echo $RAN" \
		'{input_handles: ["slow.tbz"], extract: ["slow.tbz"], limits: {memory_mib: 16}}'
	sbx_run "$M/j.json"
	check "$mode: 16 MB extracted under memory_mib 16: limit_exceeded, memory (137)" \
		status_is 137 limit_exceeded 'archive "slow.tbz": memory: memory_mib 16 exceeded while extracting \(OOM kill\)'
	check "$mode: ... the manifest's usage records the OOM kill" test "$(jqm .usage.oom_kills)" -ge 1

	if [ -z "${SBX_E2E_CGROUP_ONLY:-}" ]; then
		# --- sparse files that end in a hole --------------------------------------

		mkjob "$M/j.json" shell 'cd /work/in/hole.tar
			stat -c "%n %s" tail.bin empty.bin
			head -c 5 tail.bin; echo
			tail -c +6 tail.bin | tr -d "\0" | wc -c
			tr -d "\0" < empty.bin | wc -c' '{input_handles: ["hole.tar"], extract: ["hole.tar"]}'
		sbx_run "$M/j.json"
		check "$mode: a sparse entry that ends in a hole keeps its size, holes read as zeros" \
			eval '[ $RC -eq 0 ] && [ "$(stdout_text)" = "$(printf "tail.bin 100000\nempty.bin 4096\nxxxxx\n0\n0")" ] ||
			      { diag "$(stdout_text) / $(head -c 300 "$ERR")"; false; }'
	fi

	# --- deadline and cancellation ----------------------------------------------

	mkjob "$M/j.json" slowcpu "echo $RAN" \
		'{input_handles: ["slow.tbz"], extract: ["slow.tbz"],
		  limits: {cpu_cores: 0.01, wall_seconds: 2, grace_seconds: 1}}'
	sbx_run "$M/j.json"
	check "$mode: wall_seconds reached while extracting: timed_out (124), named" \
		status_is 124 timed_out 'input_handles\[0\]: archive "slow.tbz": wall_seconds 2 reached while extracting'
	check "$mode: ... nothing left behind" nothing_left

	for how in SIGINT cancel; do
		mkjob "$M/j.json" slowcpu "echo $RAN" \
			'{input_handles: ["slow.tbz"], extract: ["slow.tbz"], limits: {cpu_cores: 0.01}}'
		rm -f "$M/rc"
		( sbx_run "$M/j.json"; echo $RC > "$M/rc" ) & bg=$!
		helper=$(wait_descendant $bg sbx-extract)
		sbxpid=$(descendant $bg sbx)
		if [ -n "$helper" ] && [ -n "$sbxpid" ]; then
			if [ $how = SIGINT ]; then
				kill -INT "$sbxpid"
			else
				id=$(ls "$M/state/runs")
				as_mode "$SBX_REAL" cancel --config "$M/config.json" "$id" >/dev/null 2>&1 ||
					diag "sbx cancel failed"
			fi
		else
			diag "no sbx-extract under $bg"
		fi
		wait $bg
		# sbx_run ran in a subshell: read what it left.
		RUNS=$((RUNS + 1)); OUT="$M/out.$RUNS.json"; ERR="$M/err.$RUNS.txt"
		RC=$(cat "$M/rc" 2>/dev/null || echo 1)
		jq -r '.run_id // empty' "$OUT" >> "$T/run-ids" 2>/dev/null
		check "$mode: $how during extraction: cancelled (130) with a manifest" \
			status_is 130 cancelled 'input_handles\[0\]: archive "slow.tbz": cancelled by the caller while extracting'
		check "$mode: ... the helper is gone, nothing left behind" \
			eval '[ -n "$helper" ] && [ ! -e /proc/$helper ] && nothing_left'
	done

	# --- where the helper runs ------------------------------------------------

	# A stand-in sbx-extract that writes what it sees into the destination
	# and floods its stderr with a terminal escape and 1 MB of text.
	FAKE="$M/libexec"
	mkdir -p "$FAKE"
	ln -sf "$SBX_BUILDDIR/sbx-init" "$FAKE/sbx-init"
	cat > "$FAKE/sbx-extract" <<'EOF'
#!/bin/sh
{
	readlink /proc/self/ns/ipc
	grep -c "sbx-[0-9a-f]\{32\}" /proc/self/cgroup
	readlink /proc/self/fd/2 | cut -d: -f1
	cat /proc/self/oom_score_adj
	for a in "$@"; do case $a in --max-memory|--max-cpu-seconds) echo "$a";; esac; done
	ipcs -m | grep -c "^0x"
} > /proc/self/fd/3/facts.txt
printf 'fake: \033[31mred\033[0m\n' >&2
head -c 1000000 /dev/zero | tr '\0' y >&2
echo "ok 1 10"
EOF
	chmod 0755 "$FAKE/sbx-extract"
	[ $mode = user ] && chown -R "$SBX_TEST_USER" "$FAKE"
	chmod -R a+rX "$FAKE"
	mkjob "$M/j.json" shell 'cat /work/in/good.tar/facts.txt' \
		'{input_handles: ["good.tar"], extract: ["good.tar"], limits: {memory_mib: 64}}'
	# A SysV segment of the caller's own: the helper must not see it.
	seg=$(as_mode ipcmk -M 4096 | grep -o "[0-9]*$")
	SBX_EXTRA_ENV="SBX_LIBEXECDIR=$FAKE" sbx_run "$M/j.json"
	host_ipc=$(as_mode readlink /proc/self/ns/ipc)
	host_segs=$(as_mode ipcs -m | grep -c "^0x")
	[ -n "$seg" ] && as_mode ipcrm -m "$seg"
	facts=$(stdout_text)
	check "$mode: the helper has an IPC namespace of its own" \
		eval '[ $RC -eq 0 ] && [ -n "$(echo "$facts" | sed -n 1p)" ] && [ "$(echo "$facts" | sed -n 1p)" != "$host_ipc" ] ||
		      { diag "$facts / host $host_ipc / $(head -c 300 "$ERR")"; false; }'
	check "$mode: ... where the caller's SysV segment is not visible" \
		eval '[ -n "$seg" ] && [ "$host_segs" -ge 1 ] && [ "$(echo "$facts" | sed -n 7p)" = 0 ]'
	check "$mode: ... runs in the run's cgroup (every hierarchy)" \
		test "$(echo "$facts" | sed -n 2p)" -ge 1 2>/dev/null
	check "$mode: ... its stderr is a pipe, oom_score_adj 1000, told its memory and CPU limits" \
		test "$(echo "$facts" | sed -n '3,6p' | tr '\n' ' ')" = "pipe 1000 --max-memory --max-cpu-seconds "
	check "$mode: ... its stderr reaches sbx's, without the escape, bounded" \
		eval 'grep -q "sbx-extract: fake: ?\[31mred" "$ERR" && [ "$(wc -c < "$ERR")" -lt 20000 ] && ! grep -q $'"'"'\033'"'"' "$ERR"'
	check "$mode: nothing left behind" nothing_left
done

finish
