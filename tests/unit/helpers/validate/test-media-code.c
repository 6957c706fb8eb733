/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-media-code.c - image/webp, text/x-tex, application/x-npy and the
 * pickle check: files that are programs for whoever opens them (TeX, the
 * unpickler) or whose container a decoder reads leniently (RIFF).  Each
 * case names the piece of the reason it expects, so a file rejected for
 * the wrong cause fails the test.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "samples.h"
#include "util.h"
#include "validate.h"

/* --- WebP ------------------------------------------------------------------- */

/* 1x1 red, as PIL writes it: lossless (VP8L) and lossy (VP8). */
static const unsigned char vp8l_1x1[] = "\x56\x50\x38\x4c\x0f\x00\x00\x00\x2f\x00\x00\x00\x00"
					"\x07\x10\xfd\x8f\xfe\x07\x22\xa2\xff\x01\x00";
static const unsigned char vp8_1x1[] =
	"\x56\x50\x38\x20\x30\x00\x00\x00\xd0\x01\x00\x9d\x01\x2a\x01\x00\x01\x00\x01\x40\x26\x25"
	"\xa0\x02\x74\xba\x01\xf8\x00\x03\xb0\x00\xfe\xf2\xeb\x7f\xfc\xd8\x15\xcd\x73\xef\xf7\xff"
	"\xd2\xe0\xfd\x2e\x0f\xd2\xe0\xff\xd2\x90\x00\x00";

enum webp_variant {
	WEBP_VP8L,
	WEBP_VP8,
	WEBP_VP8X,
	WEBP_EXIF,
	WEBP_HUGE_CANVAS,
	WEBP_CANVAS_MISMATCH,
	WEBP_TRAILING,
	WEBP_RIFF_SHORT,
	WEBP_CHUNK_OVERFLOW,
	WEBP_ANIM_CHUNK,
	WEBP_ANIM_FLAG,
	WEBP_ZIP_IN_EXIF,
	WEBP_HTML_IN_XMP,
	WEBP_BIG_UNKNOWN,
	WEBP_BAD_PADDING,
	WEBP_CORRUPT,
	WEBP_TWO_IMAGES,
	WEBP_MANY_CHUNKS,
	WEBP_OUT_OF_ORDER,
	WEBP_NOT_WEBP,
	WEBP_CHUNK_AFTER_SIMPLE,
	WEBP_ZIP_END_IN_ICCP,
};

static void le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8), p[2] = (unsigned char)(v >> 16),
	p[3] = (unsigned char)(v >> 24);
}

static void chunk(struct buf *b, const char *tag, const void *d, size_t n)
{
	unsigned char h[8];

	memcpy(h, tag, 4);
	le32(h + 4, (uint32_t)n);
	put(b, h, 8);
	put(b, d, n);
	if (n & 1)
		put(b, "", 1);
}

static void vp8x(struct buf *b, uint32_t w, uint32_t h, unsigned char flags)
{
	unsigned char x[10] = { flags };

	w--, h--;
	x[4] = (unsigned char)w, x[5] = (unsigned char)(w >> 8), x[6] = (unsigned char)(w >> 16);
	x[7] = (unsigned char)h, x[8] = (unsigned char)(h >> 8), x[9] = (unsigned char)(h >> 16);
	chunk(b, "VP8X", x, sizeof(x));
}

static struct buf mk_webp(int v)
{
	struct buf body = { 0 }, b = { 0 };
	unsigned char h[4];

	puts_(&body, "WEBP");
	switch (v) {
	case WEBP_VP8:
		put(&body, vp8_1x1, sizeof(vp8_1x1) - 1);
		break;
	case WEBP_VP8X:
	case WEBP_EXIF:
	case WEBP_ZIP_IN_EXIF:
	case WEBP_HTML_IN_XMP:
	case WEBP_BIG_UNKNOWN:
	case WEBP_TWO_IMAGES:
	case WEBP_OUT_OF_ORDER:
		vp8x(&body, 1, 1, v == WEBP_EXIF || v == WEBP_ZIP_IN_EXIF ? 0x08 : 0);
		if (v == WEBP_OUT_OF_ORDER)
			chunk(&body, "EXIF", "MM\0*", 4);
		put(&body, vp8l_1x1, sizeof(vp8l_1x1) - 1);
		if (v == WEBP_TWO_IMAGES)
			put(&body, vp8l_1x1, sizeof(vp8l_1x1) - 1);
		if (v == WEBP_EXIF)
			chunk(&body, "EXIF", "MM\0*\0\0\0\x08\0\0", 10);
		if (v == WEBP_ZIP_IN_EXIF)
			chunk(&body, "EXIF", "MM\0*PK\x03\x04zip", 11);
		if (v == WEBP_HTML_IN_XMP)
			chunk(&body, "XMP ", "<x/><script>alert(1)</script>", 29);
		if (v == WEBP_BIG_UNKNOWN) {
			static const char big[300];

			chunk(&body, "ZZZZ", big, sizeof(big));
		}
		break;
	case WEBP_HUGE_CANVAS:
		vp8x(&body, 16383, 16383, 0);
		put(&body, vp8l_1x1, sizeof(vp8l_1x1) - 1);
		break;
	case WEBP_CANVAS_MISMATCH:
		vp8x(&body, 2, 2, 0);
		put(&body, vp8l_1x1, sizeof(vp8l_1x1) - 1);
		break;
	case WEBP_ANIM_CHUNK:
		vp8x(&body, 1, 1, 0);
		chunk(&body, "ANIM", "\0\0\0\0\0\0", 6);
		break;
	case WEBP_ANIM_FLAG:
		vp8x(&body, 1, 1, 0x02);
		put(&body, vp8l_1x1, sizeof(vp8l_1x1) - 1);
		break;
	case WEBP_MANY_CHUNKS:
		vp8x(&body, 1, 1, 0);
		for (int i = 0; i < 20; i++)
			chunk(&body, "ZZZZ", "ab", 2);
		put(&body, vp8l_1x1, sizeof(vp8l_1x1) - 1);
		break;
	case WEBP_ZIP_END_IN_ICCP:
		/* ICCP is binary, searched but only flagged: the tail check
		 * must still see the ZIP a reader would open. */
		vp8x(&body, 1, 1, 0x20);
		chunk(&body, "ICCP", "PK\x05\x06\0\0\0\0\x01\0\x01\0\0\0\0\0\0\0\0\0\0\0", 22);
		put(&body, vp8l_1x1, sizeof(vp8l_1x1) - 1);
		break;
	case WEBP_CHUNK_AFTER_SIMPLE:
		put(&body, vp8l_1x1, sizeof(vp8l_1x1) - 1);
		chunk(&body, "EXIF", "MM\0*", 4);
		break;
	default:
		put(&body, vp8l_1x1, sizeof(vp8l_1x1) - 1);
	}
	if (v == WEBP_CORRUPT)
		memset(body.p + 4 + 8 + 5, 0xff, 6);
	if (v == WEBP_BAD_PADDING)
		body.p[body.n - 1] = 'X';
	if (v == WEBP_CHUNK_OVERFLOW)
		le32(body.p + 8, 0x7ffffff0u);
	puts_(&b, v == WEBP_NOT_WEBP ? "RIFX" : "RIFF");
	le32(h, (uint32_t)body.n - (v == WEBP_RIFF_SHORT ? 2 : 0));
	put(&b, h, 4);
	put(&b, body.p, body.n);
	if (v == WEBP_TRAILING)
		puts_(&b, "PK\x05\x06 trailing");
	free(body.p);
	return b;
}

/* --- LaTeX ---------------------------------------------------------------------- */

static const char *const tex_samples[] = {
	/* 0: what statsmodels' summary().as_latex() writes, abridged */
	"\\begin{center}\n\\begin{tabular}{lclc}\n\\toprule\n\\textbf{Dep. Variable:} & y & "
	"\\textbf{  R-squared: } & 0.997 \\\\\n\\textbf{P$> |$t$|$} \\\\\n\\bottomrule\n"
	"\\end{tabular}\n%\\caption{OLS Regression Results}\n\\end{center}\n",
	/* 1: summary2(), with \label and \hline */
	"\\begin{table}\n\\caption{Results: Ordinary least squares}\n\\label{}\n\\begin{center}\n"
	"\\begin{tabular}{llll}\n\\hline\nModel: & OLS \\\\\n\\hline\n\\end{tabular}\n\\end{center}\n"
	"\\end{table}\n\\bigskip\n",
	/* 2 */ "\\immediate\\write18{rm -rf ~}\n",
	/* 3 */ "\\write 18 {ls}\n",
	/* 4 */ "\\input{/etc/passwd}\n",
	/* 5 */ "\\input /etc/passwd \n",
	/* 6 */ "\\include{../../secret}\n",
	/* 7 */ "\\input{chapter1}\\include{sec/b}\\includegraphics[width=3cm]{fig/a.png}\n",
	/* 8 */ "see \\url{https://example.org} and \\href{http://a}{b}\n",
	/* 9 */ "\\catcode`\\|=0 |write18{ls}\n",
	/* 10 */ "^^5cwrite18{ls}\n",
	/* 11 */ "\\csname write\\endcsname18{ls}\n",
	/* 12 */ "\\input|\"ls /\"\n",
	/* 13 */ "\\lstinputlisting[language=sh]{/etc/shadow}\n",
	/* 14 */ "\\input{\\jobname}\n",
	/* 15 */ "\\InputIfFileExists{~/.ssh/id_rsa}{}{}\n",
	/* 16 */ "\\includegraphics{C:/Windows/x.png}\n",
	/* 17: a control symbol \\ before a word is not \write */
	"a \\\\write this\n",
	/* 18 */ "\\directlua{os.execute('ls')}\n",
	/* 19 */ "\\openout1=x.tex\n",
	/* 20: a long word that starts like a refused one */
	"\\writelongcommandnamethatgoesonandonandon{}\n",
	/* 21 */ "x\x1b[31m\n",
	/* 22 */ "$x^2$ and $y^{3}$ \\input{a}",
	/* 23 */ "\\input{a",
	/* 24 */ "\\let\\x=\\input \\x{/etc/passwd}\n",
	/* 25 */ "\\def\\y{\\input}\\y{/etc/passwd}\n",
	/* 26 */ "\\@@input /etc/passwd\n",
	/* 27 */ "\\pdffiledump offset 0 length 99 {/etc/passwd}\n",
	/* 28 */ "\\import{/etc/}{passwd}\n",
	/* 29 */ "\\input{.%\n./secret}\n",
	/* 30 */ "\\input{.{}./secret}\n",
	/* 31 */ "\\includegraphics*[width=\\linewidth]{fig/a.png}\\usepackage[T1]{fontenc}\n",
	/* 32 */ "\\usepackage{/tmp/evil}\n",
	/* 33 */ "\\expandafter\\input\\x\n",
	/* 34 */ "\\pdfobj file {/etc/passwd}\n",
};

static struct buf mk_tex(int i)
{
	return text(tex_samples[i], strlen(tex_samples[i]));
}

/* --- NumPy ----------------------------------------------------------------------- */

static const struct {
	const char *header;
	size_t data;
	unsigned char version;
} npy_samples[] = {
	/* 0 */ { "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", 96, 1 },
	/* 1 */ { "{'descr': '<U5', 'fortran_order': False, 'shape': (2,), }", 40, 1 },
	/* 2 */ { "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 40, 1 },
	/* 3 */ { "{'descr': [('a', '<i4'), ('b', '|O')], 'fortran_order': False, 'shape': (2,), }",
		  24, 1 },
	/* 4 */ { "{'descr': [('a', '<i4'), ('b', '<f8')], 'fortran_order': False, 'shape': (2,), }",
		  24, 1 },
	/* 5 */ { "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", 88, 1 },
	/* 6 */ { "{'descr': '<M8[ns]', 'fortran_order': True, 'shape': (), }", 8, 2 },
	/* 7 */ { "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }",
		  0, 1 },
	/* 8 */ { "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}", 24, 1 },
	/* 9 */ { "{'descr': '<f8', 'fortran_order': False}", 8, 1 },
	/* 10 */ { "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5), }", 0, 3 },
	/* 11 */ { "{'descr': '<O8', 'fortran_order': False, 'shape': (1,), }", 8, 1 },
	/* 12: bytes that end in a ZIP end record (filled in by mk_npy) */
	{ "{'descr': '|u1', 'fortran_order': False, 'shape': (22,), }", 22, 1 },
};

static struct buf mk_npy(int i)
{
	struct buf b = { 0 };
	size_t n = strlen(npy_samples[i].header) + 1;
	unsigned char len[4] = { (unsigned char)n, (unsigned char)(n >> 8), 0, 0 };
	static const char zeros[128];

	put(&b, "\x93NUMPY", 6);
	put(&b, (unsigned char[]){ npy_samples[i].version, 0 }, 2);
	put(&b, len, npy_samples[i].version == 1 ? 2 : 4);
	puts_(&b, npy_samples[i].header);
	puts_(&b, "\n");
	put(&b, zeros, npy_samples[i].data);
	if (i == 12)
		memcpy(b.p + b.n - 22, "PK\x05\x06", 4);
	return b;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct vcase vcases[] = {
	{ "webp lossless 1x1", "image/webp", mk_webp, WEBP_VP8L, 0, NULL, -1 },
	{ "webp lossy 1x1", "image/webp", mk_webp, WEBP_VP8, 0, NULL, -1 },
	{ "webp extended", "image/webp", mk_webp, WEBP_VP8X, 0, NULL, -1 },
	{ "webp with EXIF", "image/webp", mk_webp, WEBP_EXIF, 0, NULL, -1 },
	{ "webp 16383x16383 canvas", "image/webp", mk_webp, WEBP_HUGE_CANVAS, -1,
	  "VP8X canvas 16383x16383 exceeds 50000000 pixels", -1 },
	{ "webp canvas is not the frame", "image/webp", mk_webp, WEBP_CANVAS_MISMATCH, -1,
	  "libwebp cannot read the header",
	  -1 },
	{ "webp trailing ZIP", "image/webp", mk_webp, WEBP_TRAILING, -1, "(trailing or missing data)",
	  -1 },
	{ "webp RIFF size short", "image/webp", mk_webp, WEBP_RIFF_SHORT, -1, "webp: RIFF size", -1 },
	{ "webp chunk overflow", "image/webp", mk_webp, WEBP_CHUNK_OVERFLOW, -1,
	  "runs past the end of the RIFF data", -1 },
	{ "webp ANIM chunk", "image/webp", mk_webp, WEBP_ANIM_CHUNK, -1, "animation (ANIM chunk)", -1 },
	{ "webp animation flag", "image/webp", mk_webp, WEBP_ANIM_FLAG, -1, "animation (VP8X flag)",
	  -1 },
	{ "webp ZIP in EXIF", "image/webp", mk_webp, WEBP_ZIP_IN_EXIF, -1,
	  "EXIF chunk holds a ZIP local header", -1 },
	{ "webp HTML in XMP", "image/webp", mk_webp, WEBP_HTML_IN_XMP, -1,
	  "XMP  chunk holds a HTML <script", -1 },
	{ "webp big unknown chunk", "image/webp", mk_webp, WEBP_BIG_UNKNOWN, -1,
	  "unknown chunk ZZZZ of 300 bytes", -1 },
	{ "webp bad padding", "image/webp", mk_webp, WEBP_BAD_PADDING, -1, "padding byte", -1 },
	{ "webp corrupt image data", "image/webp", mk_webp, WEBP_CORRUPT, -1,
	  "the image does not decode", -1 },
	{ "webp two images", "image/webp", mk_webp, WEBP_TWO_IMAGES, -1, "out of order or repeated",
	  -1 },
	{ "webp 20 chunks", "image/webp", mk_webp, WEBP_MANY_CHUNKS, -1, "more than 16 chunks", -1 },
	{ "webp EXIF before the image", "image/webp", mk_webp, WEBP_OUT_OF_ORDER, -1,
	  "out of order", -1 },
	{ "webp not RIFF", "image/webp", mk_webp, WEBP_NOT_WEBP, -1, "not a RIFF WEBP file", -1 },
	{ "webp chunk after a simple image", "image/webp", mk_webp, WEBP_CHUNK_AFTER_SIMPLE, -1,
	  "after the image of a simple", -1 },
	{ "webp ZIP end record in ICCP", "image/webp", mk_webp, WEBP_ZIP_END_IN_ICCP, -1,
	  "webp: a ZIP end-of-central-directory record at offset 38", -1 },

	{ "tex statsmodels summary", "text/x-tex", mk_tex, 0, 0, NULL, -1 },
	{ "tex statsmodels summary2", "text/x-tex", mk_tex, 1, 0, NULL, -1 },
	{ "tex \\immediate\\write18", "text/x-tex", mk_tex, 2, -1, "tex: \\write at offset 10", -1 },
	{ "tex \\write 18", "text/x-tex", mk_tex, 3, -1, "tex: \\write at offset 0", -1 },
	{ "tex \\input absolute", "text/x-tex", mk_tex, 4, -1, "\\input of \"/etc/passwd\"", -1 },
	{ "tex bare \\input absolute", "text/x-tex", mk_tex, 5, -1, "\\input of \"/etc/passwd\"", -1 },
	{ "tex \\include parent", "text/x-tex", mk_tex, 6, -1, "\\include of \"../../secret\"", -1 },
	{ "tex relative paths", "text/x-tex", mk_tex, 7, 0, NULL, -1 },
	{ "tex \\url and \\href", "text/x-tex", mk_tex, 8, 0, NULL, -1, SBX_MEDIA_FLAG_LINKS },
	{ "tex \\catcode", "text/x-tex", mk_tex, 9, -1, "tex: \\catcode", -1 },
	{ "tex ^^5c", "text/x-tex", mk_tex, 10, -1, "tex: ^^ notation at offset 0", -1 },
	{ "tex \\csname", "text/x-tex", mk_tex, 11, -1, "tex: \\csname", -1 },
	{ "tex \\input pipe", "text/x-tex", mk_tex, 12, -1, "\\input of \"|\"ls\"", -1 },
	{ "tex \\lstinputlisting absolute", "text/x-tex", mk_tex, 13, -1,
	  "\\lstinputlisting of \"/etc/shadow\"", -1 },
	{ "tex \\input of a control sequence", "text/x-tex", mk_tex, 14, -1,
	  "\\input of \"\\jobname\"", -1 },
	{ "tex home path", "text/x-tex", mk_tex, 15, -1, "\\InputIfFileExists of \"~/.ssh", -1 },
	{ "tex drive path", "text/x-tex", mk_tex, 16, -1, "\\includegraphics of \"C:/", -1 },
	{ "tex \\\\write is a control symbol", "text/x-tex", mk_tex, 17, 0, NULL, -1 },
	{ "tex \\directlua", "text/x-tex", mk_tex, 18, -1, "tex: \\directlua", -1 },
	{ "tex \\openout", "text/x-tex", mk_tex, 19, -1, "tex: \\openout", -1 },
	{ "tex long control word", "text/x-tex", mk_tex, 20, 0, NULL, -1 },
	{ "tex terminal escape", "text/x-tex", mk_tex, 21, -1, "tex: control character 0x1b", -1 },
	{ "tex superscripts", "text/x-tex", mk_tex, 22, 0, NULL, -1 },
	{ "tex \\input{ at the end", "text/x-tex", mk_tex, 23, 0, NULL, -1 },
	{ "tex \\let alias of \\input", "text/x-tex", mk_tex, 24, -1,
	  "tex: \\input without a literal path at offset 14", -1 },
	{ "tex \\def around \\input", "text/x-tex", mk_tex, 25, -1,
	  "tex: \\input without a literal path at offset 13", -1 },
	{ "tex \\@@input", "text/x-tex", mk_tex, 26, -1, "\\@@input of \"/etc/passwd\"", -1 },
	{ "tex \\pdffiledump", "text/x-tex", mk_tex, 27, -1,
	  "tex: \\pdffiledump at offset 0: opens or embeds files", -1 },
	{ "tex \\import", "text/x-tex", mk_tex, 28, -1, "tex: \\import at offset 0: reads a file", -1 },
	{ "tex comment joining ..", "text/x-tex", mk_tex, 29, -1, "\\input of \".%", -1 },
	{ "tex nested braces", "text/x-tex", mk_tex, 30, -1, "\\input of \".{\"", -1 },
	{ "tex \\includegraphics* and \\usepackage", "text/x-tex", mk_tex, 31, 0, NULL, -1 },
	{ "tex \\usepackage absolute", "text/x-tex", mk_tex, 32, -1, "\\usepackage of \"/tmp/evil\"",
	  -1 },
	{ "tex \\expandafter\\input\\x", "text/x-tex", mk_tex, 33, -1,
	  "\\input without a literal path", -1 },
	{ "tex \\pdfobj file", "text/x-tex", mk_tex, 34, -1, "tex: \\pdfobj", -1 },

	{ "npy floats", "application/x-npy", mk_npy, 0, 0, NULL, -1 },
	{ "npy strings", "application/x-npy", mk_npy, 1, 0, NULL, -1 },
	{ "npy objects", "application/x-npy", mk_npy, 2, -1,
	  "pickle: npy object array (dtype '|O'): a Python pickle runs code when loaded; write "
	  "Parquet, CSV or .npy without pickles (allow_pickle=False)",
	  -1 },
	{ "npy record with an object", "application/x-npy", mk_npy, 3, -1,
	  "pickle: npy structured dtype with object fields", -1 },
	{ "npy record", "application/x-npy", mk_npy, 4, -1, "npy: structured (record) dtype", -1 },
	{ "npy data short", "application/x-npy", mk_npy, 5, -1,
	  "shape and dtype make 96 bytes of data, the file has 88", -1 },
	{ "npy datetime scalar v2", "application/x-npy", mk_npy, 6, 0, NULL, -1 },
	{ "npy shape overflow", "application/x-npy", mk_npy, 7, -1, "shape overflows", -1 },
	{ "npy unknown key", "application/x-npy", mk_npy, 8, -1, "unknown or repeated key 'x'", -1 },
	{ "npy no shape", "application/x-npy", mk_npy, 9, -1, "needs descr, fortran_order and shape",
	  -1 },
	{ "npy empty v3", "application/x-npy", mk_npy, 10, 0, NULL, -1 },
	{ "npy <O8", "application/x-npy", mk_npy, 11, -1, "pickle: npy object array", -1 },
	{ "npy that is also a ZIP", "application/x-npy", mk_npy, 12, -1,
	  "npy: a ZIP end-of-central-directory record", -1 },
};
#pragma GCC diagnostic pop

static void test_validators(void **state)
{
	(void)state;
	check_vcases(vcases, ARRAY_SIZE(vcases));
}

/* Pickles by content and by name; other files not. */
static void test_code_as_data(void **state)
{
	static const struct {
		const char *head;
		size_t n;
		const char *name;
		const char *want; /* NULL: not code as data */
	} cases[] = {
		{ "\x80\x04\x95\x10", 4, "model.pkl", "pickle protocol 4" },
		{ "\x80\x05\x95", 3, "totals.csv", "pickle protocol 5" },
		{ "\x80\x02}q", 4, "x.bin", "pickle protocol 2" },
		{ "(lp0\n", 5, "x.pickle", "a .pickle file" },
		{ "x\x9c", 2, "model.JOBLIB", "a .joblib file" },
		{ "PK\x03\x04", 4, "arrays.npz", "a .npz file" },
		{ "ab", 2, "f.dill", "a .dill file" },
		{ "\x80\x01", 2, "x.bin", NULL },
		{ "\x80\x06", 2, "x.bin", NULL },
		{ "a,b\n", 4, "t.csv", NULL },
		{ "a", 1, ".pkl", NULL },
		{ "\x93NUMPY", 6, "m.npy", NULL },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *got = sbx_media_code_as_data((const unsigned char *)cases[i].head,
							 cases[i].n, cases[i].name);

		if (!cases[i].want) {
			if (got)
				fail_msg("%s: %s", cases[i].name, got);
		} else if (!got || strcmp(got, cases[i].want) != 0) {
			fail_msg("%s: got %s, wanted %s", cases[i].name, got ? got : "NULL",
				 cases[i].want);
		}
	}
}

/* Detection: WebP and .npy by magic, .tex by name. */
static void test_detect(void **state)
{
	struct buf w = mk_webp(WEBP_VP8L), n = mk_npy(0);

	(void)state;
	assert_string_equal(sbx_media_detect(w.p, w.n, "x.webp"), "image/webp");
	assert_string_equal(sbx_media_detect(w.p, w.n, "x.png"), "image/webp");
	assert_string_equal(sbx_media_detect(n.p, n.n, "x.npy"), "application/x-npy");
	assert_string_equal(sbx_media_detect((const unsigned char *)"\\a", 2, "x.tex"), "text/x-tex");
	assert_string_equal(sbx_media_type_for_name("A.WEBP"), "image/webp");
	assert_string_equal(sbx_media_type_for_name("r.tex"), "text/x-tex");
	assert_string_equal(sbx_media_type_for_name("m.npy"), "application/x-npy");
	free(w.p);
	free(n.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validators),
		cmocka_unit_test(test_code_as_data),
		cmocka_unit_test(test_detect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
