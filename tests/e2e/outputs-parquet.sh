#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# outputs-parquet.sh - application/vnd.apache.parquet from the payload's
# side: a Parquet file leaves only under a profile that lists the type,
# and a file whose footer lies (its length, its row count, a column chunk
# in another file, a truncated end) is rejected with its reason, and so
# is a Parquet file that is also a ZIP archive (issue 23: a ZIP between the
# pages and the footer whose end record counts 0 entries on this disk and
# 1 in all; Python's zipfile reads its index.html all the same).  No
# shipped profile can write Parquet (no pyarrow or fastparquet), so the
# payload is a shell job that prints the bytes, built here by a small
# Thrift compact-protocol writer.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }
status_of() { artifact "$1" '.media_type + " " + .status + ": " + (.reason // "")'; }
promoted() { # PATH: promoted as Parquet
	local r
	r=$(status_of "$1")
	[ "$r" = "application/vnd.apache.parquet promoted: " ] && return 0
	diag "$1: $r"
	return 1
}
rejected_because() { # PATH REGEX
	local r
	r=$(status_of "$1")
	[[ "$r" =~ ^[^\ ]*\ rejected:\ .*$2 ]] && return 0
	diag "$1: $r"
	return 1
}

# A catalog where the shell profile also allows Parquet.
POLICY_PQ="$T/policy-parquet"
cp -r "$SBX_SRCDIR/policy" "$POLICY_PQ"
jq '.allowed_outputs += ["application/vnd.apache.parquet"]' "$SBX_SRCDIR/policy/profiles/shell.json" \
	> "$POLICY_PQ/profiles/shell.json"

# One INT32 column "total" of 3 rows; VARIANT changes what the footer says
# ("zip": the footer is good, a ZIP lies before it).
parquet() {
	python3 - "$1" <<'PY'
import io, struct, sys, zipfile
v = sys.argv[1]
def var(x):
    o = b""
    while x >= 0x80:
        o += bytes([x & 0x7f | 0x80]); x >>= 7
    return o + bytes([x])
def zz(x): return var((x << 1) ^ (x >> 63) if x >= 0 else ((x << 1) ^ -1) & (2**64 - 1))
def fh(d, t): return bytes([d << 4 | t])
def s(x): return var(len(x)) + x
rows = 5 if v == "rows" else 3
f = fh(1, 5) + zz(2) + fh(1, 9) + bytes([2 << 4 | 12])
f += fh(4, 8) + s(b"schema") + fh(1, 5) + zz(1) + b"\0"
f += fh(1, 5) + zz(1) + fh(2, 5) + zz(0) + fh(1, 8) + s(b"total") + b"\0"
f += fh(1, 6) + zz(rows) + fh(1, 9) + bytes([1 << 4 | 12]) + fh(1, 9) + bytes([1 << 4 | 12])
f += (fh(1, 8) + s(b"../../etc/passwd") + fh(1, 6)) if v == "path" else fh(2, 6)
f += zz(4) + fh(1, 12) + fh(7, 6) + zz(4) + fh(2, 6) + zz(4) + b"\0\0"
f += fh(1, 6) + zz(4) + fh(1, 6) + zz(3) + b"\0" + fh(2, 8) + s(b"sbx test") + b"\0"
n = 0x7fffffff if v == "length" else len(f)
z = b""
if v == "zip":
    # A ZIP of one index.html, its end record's counts made 0 (this
    # disk) and 1 (in all), which a reader that checks them refuses.
    zb = io.BytesIO()
    with zipfile.ZipFile(zb, "w") as zf:
        zf.writestr("index.html", "<html><script>alert(document.cookie)</script></html>")
    z = bytearray(zb.getvalue())
    e = z.rfind(b"PK\x05\x06")
    z[e + 8:e + 12] = struct.pack("<HH", 0, 1)
    z = bytes(z)
data = b"PAR1\x15\x00\x15\x08" + z + f + struct.pack("<I", n) + b"PAR1"
if v == "truncated":
    data = data[:-1]
sys.stdout.write("".join("\\%03o" % c for c in data))
PY
}
CODE="cd /work/out
printf '$(parquet good)' > table.parquet
printf '$(parquet length)' > length.parquet
printf '$(parquet rows)' > rows.parquet
printf '$(parquet path)' > path.parquet
printf '$(parquet truncated)' > truncated.parquet
printf '$(parquet zip)' > zip.parquet
printf 'PAR1 is not a magic here\n' > notes.txt"

# The attack works outside sbx: the file is a ZIP to Python's zipfile,
# which reads the page from it.
printf "$(parquet zip)" > "$T/zip.parquet"
zip_reads_script() {
	python3 - "$1" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    end = open(sys.argv[1], "rb").read()
    e = end.rfind(b"PK\x05\x06")
    assert end[e + 8:e + 12] == b"\x00\x00\x01\x00", "counts are not 0 and 1"
    sys.exit(0 if b"<script>" in z.read("index.html") else 1)
PY
}
check "the Parquet+ZIP polyglot opens with Python's zipfile and yields <script>" \
	zip_reads_script "$T/zip.parquet"

for mode in root user; do
	setup_mode $mode

	mkjob "$M/j.json" shell "$CODE"
	POLICY=$POLICY_PQ sbx_run "$M/j.json"
	expect_rc 0 "$mode: Parquet under a profile that lists it: the run succeeds"
	check "$mode: a valid Parquet file is promoted" promoted table.parquet
	check "$mode: a footer length beyond the file: rejected" \
		rejected_because length.parquet 'footer length 2147483647'
	check "$mode: num_rows that is not the row groups' sum: rejected" \
		rejected_because rows.parquet 'num_rows 5 is not the sum'
	check "$mode: a column chunk in another file: rejected" \
		rejected_because path.parquet 'names another file'
	check "$mode: a truncated file: rejected" rejected_because truncated.parquet 'no PAR1 magic at the end'
	check "$mode: a Parquet file that is also a ZIP (end record counts 0 and 1): rejected" \
		rejected_because zip.parquet 'ZIP end-of-central-directory record at offset [0-9]+: the file is also a ZIP archive'
	check "$mode: text that starts with PAR1 stays text/plain" \
		test "$(status_of notes.txt)" = "text/plain promoted: "
	check "$mode: only the valid files reach --artifacts" \
		test "$(cd "$ART" && find . -type f | sort | tr '\n' ' ')" = "./notes.txt ./table.parquet "
	check "$mode: the promoted file is the payload's bytes" \
		cmp -s "$ART/table.parquet" <(printf "$(parquet good)")
	check "$mode: nothing left behind" nothing_left

	# The stock shell profile does not list the type: the file is rejected,
	# and a job cannot ask for it.
	mkjob "$M/j.json" shell "$CODE"
	sbx_run "$M/j.json"
	check "$mode: Parquet where the profile does not list it: rejected" \
		rejected_because table.parquet 'media type application/vnd.apache.parquet is not in allowed_outputs'
	mkjob "$M/j.json" shell 'true' '{allowed_outputs: ["application/vnd.apache.parquet"]}'
	sbx_run "$M/j.json"
	expect_rc 77 "$mode: a job cannot allow Parquet beyond the profile's list"
	check "$mode: ... and says why" grep -q 'application/vnd.apache.parquet' "$ERR"
	check "$mode: nothing left behind" nothing_left
done

finish
