/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * validate.h - media type detection and per-type validators for outputs.
 *
 * Everything a payload writes is hostile input to whoever opens it next, so
 * a candidate artifact is promoted only when
 *   1. its content starts with the magic of a known type (PNG, JPEG, PDF,
 *      Parquet; a ZIP's local header for xlsx, docx and pptx, whose
 *      extension decides which) or is text (valid UTF-8 without NUL),
 *   2. its extension names the same type (table below),
 *   3. the type is allowed for the job, and
 *   4. the type's validator accepts the whole file.
 *
 * The extensions are in src/common/mediatype.h.  A name without one of
 * them is rejected: the extension is what
 * the next program uses to pick a parser, so an unknown one (.sh, .xml,
 * none) is refused rather than guessed.  (collect.c keeps .md as
 * text/plain where only text/plain is allowed, as before text/markdown.)
 *
 * Text content has no magic, so detection reports the text type that the
 * extension names (text/csv for .csv, image/svg+xml for .svg, ...) or
 * text/plain; the validator then decides whether the content really is
 * CSV, JSON or SVG.
 *
 * Validators read the file through a small buffered pread() reader with
 * fixed buffers; they never map or allocate by a size taken from the file,
 * and keep bounded state (JSON: a 64-deep stack and at most
 * SBX_MEDIA_JSON_MAX_KEYS key hashes).  They run only in the confined
 * validator, sbx-validate (src/helpers/validate), in the run's cgroup and
 * on its clock; never in the broker, which holds the signing key.
 * They check structure, not rendering safety: PNG image data is not
 * inflated, PDF streams are not decoded.  Against polyglots they refuse
 * another format's signature where readers skip data (metadata chunks and
 * segments, the PDF body outside objects) and flag it in image data and
 * PDF streams (SBX_MEDIA_FLAG_*); and PNG, JPEG, PDF and Parquet are
 * refused when their last SBX_MEDIA_ZIP_TAIL bytes hold a ZIP end record
 * or ZIP64 locator signature, whatever the record says, since ZIP readers
 * search the end for one and believe little of it (sbx_media_zip_tail()).
 */
#ifndef SBX_VALIDATE_H
#define SBX_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mediatype.h"
#include "reasoncode.h"

/* Largest image accepted, in pixels (width * height), for PNG and JPEG. */
#define SBX_MEDIA_MAX_PIXELS 50000000ULL
/* Deepest nesting accepted in a JSON artifact. */
#define SBX_MEDIA_JSON_MAX_DEPTH 64
/* Keys of the JSON objects open at once (their 64-bit hashes are kept to
 * refuse duplicates: at most 8 MiB). */
#define SBX_MEDIA_JSON_MAX_KEYS (1u << 20)
/* image/svg+xml: largest file, deepest element nesting, most attributes
 * of one element, longest element or attribute name. */
#define SBX_MEDIA_SVG_MAX_BYTES (64ull << 20)
#define SBX_MEDIA_SVG_MAX_DEPTH 256
#define SBX_MEDIA_SVG_MAX_ATTRS 128
#define SBX_MEDIA_SVG_MAX_NAME 64
/* text/html and text/markdown: largest file, and the most memory and CPU
 * time the HTML parser may take to build its tree of one (html-view.c). */
#define SBX_MEDIA_HTML_MAX_BYTES (16ull << 20)
#define SBX_MEDIA_HTML_MAX_PARSE (256ull << 20)
#define SBX_MEDIA_HTML_MAX_CPU_MS 5000u
/* application/x-ndjson: longest line (one JSON value). */
#define SBX_MEDIA_NDJSON_MAX_LINE (16u << 20)
/* application/vnd.apache.parquet: longest footer (FileMetaData), deepest
 * Thrift nesting and schema tree. */
#define SBX_MEDIA_PARQUET_MAX_FOOTER (16u << 20)
#define SBX_MEDIA_PARQUET_MAX_DEPTH 32
/* image/webp: largest file (libwebp decodes from memory). */
#define SBX_MEDIA_WEBP_MAX_BYTES (64ull << 20)
/* application/x-npy: longest header (NumPy writes at most 64 KiB before
 * it asks for version 2). */
#define SBX_MEDIA_NPY_MAX_HEADER 65536u
/* Bytes of the head that detection looks at. */
#define SBX_MEDIA_HEAD 512
/* Bytes of the tail searched for a ZIP end record: the widest search of a
 * ZIP reader that extracts (Go's archive/zip, 65 KiB; see validate.c). */
#define SBX_MEDIA_ZIP_TAIL (65u * 1024)


struct sbx_media_report {
	char reason[256];   /* why the file was rejected, "" when valid */
	const char *code;   /* its SBX_RC_* (reasoncode.h); NULL: invalid_content */
	unsigned flags;     /* SBX_MEDIA_FLAG_* */
	bool formula_cells; /* CSV: a cell starts with = + - @ TAB or CR (after
			     * spaces, full-width forms too, for any of the
			     * separators , ; TAB); xlsx: a formula, or a
			     * string that starts so */
	uint64_t width;     /* images: dimensions from IHDR / SOFn */
	uint64_t height;
	uint64_t rows;      /* CSV: records; columns of each record */
	uint64_t columns;
};

/*
 * sbx_media_detect() - media type of a file from its first bytes.
 * @head: the first @n bytes of the file (n may be less than SBX_MEDIA_HEAD
 *        for a short file); @name: the file's base name, used only to pick
 *        among the text types.
 *
 * Return: a static type string, or NULL when the content is neither a known
 * binary type nor text.
 */
const char *sbx_media_detect(const unsigned char *head, size_t n, const char *name);

/*
 * sbx_media_validate() - run the validator of @type over the file at @fd.
 * @fd: read with pread() from offset 0, the fd's offset is not used;
 * @size: the file's size as the caller knows it (the reader stops there);
 * @rep: zeroed and filled in.
 *
 * Return: 0 when the file is a valid @type; -1 when it is not, or could not
 * be read, with @rep->reason saying why in one line.
 */
int sbx_media_validate(const char *type, int fd, uint64_t size, struct sbx_media_report *rep);

/* --- for the per-type validators (media-*.c) ------------------------------- */

/* A bounded, buffered reader over [0, size) of an fd. */
struct sbx_media_reader {
	int fd;
	uint64_t size; /* end of the data */
	uint64_t off;  /* file offset of buf[0] */
	size_t pos;    /* next byte in buf */
	size_t len;    /* valid bytes in buf */
	bool error;    /* a read failed (errno in errnum) */
	int errnum;
	unsigned char buf[65536];
};

/* On the heap (the buffer is 64 KiB); release with free(). */
struct sbx_media_reader *sbx_media_reader_new(int fd, uint64_t size);
/* Bytes not yet consumed. */
uint64_t sbx_media_reader_left(const struct sbx_media_reader *r);
/* Offset of the next byte. */
uint64_t sbx_media_reader_tell(const struct sbx_media_reader *r);
/* Next byte, or -1 at the end or on a read error. */
int sbx_media_reader_byte(struct sbx_media_reader *r);
/* Exactly @n bytes into @dst; -1 when fewer are left or on error. */
int sbx_media_reader_get(struct sbx_media_reader *r, void *dst, size_t n);
/*
 * Up to @max bytes without copying: *@p points into the reader's buffer and
 * stays valid until the next call.  Returns the count, 0 at the end, -1 on
 * error.
 */
ssize_t sbx_media_reader_chunk(struct sbx_media_reader *r, const unsigned char **p, size_t max);
/* Skip @n bytes; -1 when fewer are left. */
int sbx_media_reader_skip(struct sbx_media_reader *r, uint64_t n);

/* printf into rep->reason; returns -1 so validators can `return fail(...)`.
 * The refusal's reason code is invalid_content unless rep->code was set. */
int sbx_media_fail(struct sbx_media_report *rep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same with the reason code @code (an SBX_RC_* of reasoncode.h): a
 * validator names the kind of failure where it is not just invalid. */
int sbx_media_fail_code(struct sbx_media_report *rep, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * sbx_media_describe() - what the first @n bytes @head of a file that is
 * no known type look like ("a ZIP archive ...", "a Python pickle ...",
 * "binary data"), for its refusal (describe.c).  A static string.
 */
const char *sbx_media_describe(const unsigned char *head, size_t n);

/* sbx_media_archive() - the same table's name for an archive or compressed
 * data ("a ZIP archive", "gzip-compressed data"), or NULL: what a ZIP
 * output's member may not be (serve-zip.c). */
const char *sbx_media_archive(const unsigned char *head, size_t n);

/*
 * Streaming UTF-8 check: feed bytes in any split; sbx_media_utf8_end()
 * says whether the input ended on a character boundary.
 */
struct sbx_media_utf8 {
	uint32_t cp;    /* code point so far */
	uint32_t min;   /* smallest code point for this length (no overlongs) */
	unsigned need;  /* continuation bytes still expected */
	bool bad;
};
/* Feed one byte; false once the input is not valid UTF-8.  Inline: text
 * validators call it for every byte that is not plain ASCII. */
static inline bool sbx_media_utf8_feed(struct sbx_media_utf8 *u, unsigned char c)
{
	if (u->bad)
		return false;
	if (u->need == 0) {
		if (c < 0x80)
			return true;
		if ((c & 0xe0) == 0xc0) {
			u->need = 1, u->cp = c & 0x1f, u->min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			u->need = 2, u->cp = c & 0x0f, u->min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			u->need = 3, u->cp = c & 0x07, u->min = 0x10000;
		} else {
			u->bad = true;
		}
		return !u->bad;
	}
	if ((c & 0xc0) != 0x80) {
		u->bad = true;
		return false;
	}
	u->cp = (u->cp << 6) | (c & 0x3f);
	/* Overlong forms, UTF-16 surrogates and anything past U+10FFFF. */
	if (--u->need == 0 &&
	    (u->cp < u->min || (u->cp >= 0xd800 && u->cp <= 0xdfff) || u->cp > 0x10ffff))
		u->bad = true;
	return !u->bad;
}

/* Leading bytes of @p that are ASCII and not NUL, eight at a time. */
size_t sbx_media_ascii_span(const unsigned char *p, size_t n);
bool sbx_media_utf8_end(const struct sbx_media_utf8 *u);

/*
 * Signatures of other formats, looked for in the parts of a file where a
 * polyglot hides its second format.  Fed in any split; the first match is
 * kept (its name and offset).  SIG_ALL: every signature in validate.c's
 * table; SIG_NO_JPEG: without the 3-byte JPEG SOI (an Exif thumbnail, or
 * too short to look for in bulk data).
 */
enum sbx_media_sigset { SBX_SIG_ALL, SBX_SIG_NO_JPEG };
struct sbx_media_sigscan {
	enum sbx_media_sigset set;
	const char *found; /* name of the first signature found, or NULL */
	uint64_t found_at;
	uint64_t at;       /* file offset of the next byte fed */
	size_t ntail;
	unsigned char tail[16];
};
void sbx_media_sigscan_init(struct sbx_media_sigscan *s, enum sbx_media_sigset set, uint64_t at);
/* True once a signature was found. */
bool sbx_media_sigscan_feed(struct sbx_media_sigscan *s, const unsigned char *p, size_t n);

/*
 * sbx_media_zip_tail() - refuse a file that a ZIP reader may open: any ZIP
 * end-of-central-directory signature (PK\5\6) or ZIP64 locator signature
 * (PK\6\7) in the last SBX_MEDIA_ZIP_TAIL bytes, where readers look for
 * one.  None of the record's fields is read: Python's zipfile opens a ZIP
 * whose entry counts, disk numbers or comment length are wrong.  Chance
 * matches in compressed data (about 1 in 32000 files with that much of it
 * at the end) are refused too: the failure is the safe one.
 * @what: the type's name, first in the reason.
 *
 * Return: 0; or -1 with a reason naming the offset of the signature
 * nearest the end (the one a reader takes), or on a read error.
 */
int sbx_media_zip_tail(int fd, uint64_t size, const char *what, struct sbx_media_report *rep);

int sbx_media_png_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_jpeg_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_pdf_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_parquet_validate(int fd, uint64_t size, struct sbx_media_report *rep);
/* Office Open XML packages (media-ooxml.c; the ZIP container: zip-read.h). */
int sbx_media_xlsx_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_docx_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_pptx_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_webp_validate(int fd, uint64_t size, struct sbx_media_report *rep);
/* The WebP check of @size bytes in memory (media-webp.c), for the fuzzer
 * and sbx_media_webp_validate(). */
int sbx_media_webp_check(const unsigned char *d, size_t size, struct sbx_media_report *rep);
int sbx_media_tex_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_npy_validate(int fd, uint64_t size, struct sbx_media_report *rep);
/* The .npy header dict of @len bytes at @text, for a file with @data bytes
 * after it (media-npy.c; the fuzzer's entry too). */
int sbx_media_npy_header(const char *text, size_t len, uint64_t data, struct sbx_media_report *rep);

/*
 * Code as data: Python pickles (.pkl, .pickle, .joblib, .npz, NumPy
 * object arrays) run code when they are loaded.  SBX_MEDIA_PICKLE_REASON
 * is the reason a refused one gets, with what to write instead.
 */
#define SBX_MEDIA_PICKLE_REASON                                                          \
	"a Python pickle runs code when loaded; write Parquet, CSV or .npy without pickles " \
	"(allow_pickle=False)"
/*
 * sbx_media_code_as_data() - whether a file named @name whose first @n
 * bytes are @head is a pickle or holds one: a pickle's PROTO opcode at the
 * head (protocols 2 to 5), or a name ending .pkl, .pickle, .joblib, .dill
 * or .npz (a ZIP of .npy files, object arrays pickled), whatever the
 * content.  Object arrays in a .npy are found by its validator.
 * Return: a short description ("pickle protocol 4", "a .joblib file"), or
 * NULL.
 */
const char *sbx_media_code_as_data(const unsigned char *head, size_t n, const char *name);
/* The UTF-8/NUL check of the text types over a chunk at file offset @at,
 * and at the end; -1 with a reason naming @what at the first fault. */
int sbx_media_text_feed(const char *what, struct sbx_media_utf8 *u, const unsigned char *p,
			size_t n, uint64_t at, struct sbx_media_report *rep);
int sbx_media_text_end(const char *what, const struct sbx_media_utf8 *u,
		       struct sbx_media_report *rep);

/* The separator of a CSV whose first chunk is @p, as the validator picks it
 * (a "sep=X" line, else the most frequent of , ; TAB in the first line);
 * returns the bytes of a "sep=" line, which is not a record. */
size_t sbx_media_csv_pick_sep(const unsigned char *p, size_t n, unsigned char *sep);

int sbx_media_text_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_csv_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_json_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_tsv_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_ndjson_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_svg_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_html_validate(int fd, uint64_t size, struct sbx_media_report *rep);
int sbx_media_markdown_validate(int fd, uint64_t size, struct sbx_media_report *rep);

/* The text/plain rule against a file a sniffer takes for HTML or XML: the
 * pattern its first bytes match, or NULL. */
const char *sbx_media_sniffs_as_markup(const unsigned char *p, size_t n);

/*
 * Active content in Markdown outside its raw HTML, fed in any split
 * (media-html.c): the scan sets SBX_MEDIA_FLAG_ACTIVE in @flags on the
 * first script, event handler, script URI or element that loads a
 * resource.
 */
struct sbx_media_active {
	bool in_tag;        /* between '<' + letter and its '>' */
	unsigned char quote; /* inside a quoted attribute value of that tag */
	bool attr_start;    /* an attribute name may start here */
	char attr[8];       /* its first bytes, lowercased */
	size_t alen;
	unsigned char prev;
	char ent[12];       /* a character reference being read */
	size_t elen;
	bool in_ent;
	char win[16];       /* last decoded characters, lowercased */
	char dense[16];     /* the same without whitespace and controls */
};
void sbx_media_active_feed(struct sbx_media_active *a, const unsigned char *p, size_t n,
			   unsigned *flags);
/*
 * The HTML view of @n bytes of UTF-8 (html-view.c): sets
 * SBX_MEDIA_FLAG_ACTIVE in @flags when the tree an HTML5 parser builds
 * from them has anything a browser runs or fetches on opening it.  -1 with
 * a reason naming @what when the parse would take more than
 * SBX_MEDIA_HTML_MAX_PARSE bytes.
 */
int sbx_media_html_view(const char *what, const char *p, size_t n, unsigned *flags,
			struct sbx_media_report *rep);
/* The C0/DEL/C1 rule of text/csv, with the previous byte kept in *@prev;
 * -1 with a reason naming @what. */
int sbx_media_controls_feed(const char *what, unsigned char *prev, const unsigned char *p,
			    size_t n, uint64_t at, struct sbx_media_report *rep);

#endif
