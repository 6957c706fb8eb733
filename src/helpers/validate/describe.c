/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * describe.c - what a file of no known media type looks like, for the
 * reason it is refused with (sbx_media_describe(), validate.h).
 *
 * "content is not a known media type" tells a program nothing it can act
 * on; "it looks like a ZIP archive" or "a Python pickle" says which writer
 * made it and so what to change.  Only the first bytes are compared with a
 * few well-known signatures: this names a guess for a person or a program
 * to act on, it never makes a file acceptable.
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "validate.h"

struct look {
	size_t at;                 /* offset of the signature */
	size_t len;
	const char *sig;
	const char *what;
	bool archive; /* an archive or compressed data (sbx_media_archive()) */
};

static const struct look looks[] = {
	/* Office documents (xlsx, docx, pptx) are ZIP archives too: a
	 * refusal's list of allowed types says which names would do. */
	{ 0, 4, "PK\3\4", "a ZIP archive", true },
	{ 0, 4, "PK\5\6", "a ZIP archive", true },
	{ 0, 4, "PK\7\10", "a ZIP archive", true },
	{ 0, 8, "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an OLE2 compound file (a .xls, .doc or .msg)", false },
	{ 0, 6, "\x93NUMPY", "a NumPy array (.npy)", false },
	{ 0, 8, "\x89HDF\r\n\x1a\n", "an HDF5 file", false },
	{ 0, 6, "ARROW1", "an Arrow IPC or Feather file", false },
	{ 0, 16, "SQLite format 3\0", "an SQLite database", false },
	{ 0, 2, "\x1f\x8b", "gzip-compressed data", true },
	{ 0, 3, "BZh", "bzip2-compressed data", true },
	{ 0, 6, "\xfd" "7zXZ\0", "xz-compressed data", true },
	{ 0, 4, "\x28\xb5\x2f\xfd", "zstd-compressed data", true },
	{ 0, 6, "7z\xbc\xaf\x27\x1c", "a 7-Zip archive", true },
	{ 0, 6, "Rar!\x1a\x07", "a RAR archive", true },
	{ 257, 5, "ustar", "a tar archive", true },
	{ 0, 4, "\x7f" "ELF", "an ELF executable or library", false },
	{ 0, 4, "\0asm", "a WebAssembly module", false },
	{ 0, 4, "\xca\xfe\xba\xbe", "a Java class file or Mach-O binary", false },
	{ 0, 6, "GIF87a", "a GIF image", false },
	{ 0, 6, "GIF89a", "a GIF image", false },
	{ 0, 4, "II*\0", "a TIFF image", false },
	{ 0, 4, "MM\0*", "a TIFF image", false },
	{ 0, 4, "OggS", "Ogg audio or video", false },
	{ 0, 2, "\xff\xfe", "UTF-16 text (write UTF-8)", false },
	{ 0, 2, "\xfe\xff", "UTF-16 text (write UTF-8)", false },
};

static const struct look *look_up(const unsigned char *head, size_t n)
{
	for (size_t i = 0; i < sizeof(looks) / sizeof(looks[0]); i++)
		if (n >= looks[i].at + looks[i].len &&
		    memcmp(head + looks[i].at, looks[i].sig, looks[i].len) == 0)
			return &looks[i];
	return NULL;
}

const char *sbx_media_archive(const unsigned char *head, size_t n)
{
	const struct look *l = look_up(head, n);

	return l && l->archive ? l->what : NULL;
}

const char *sbx_media_describe(const unsigned char *head, size_t n)
{
	const struct look *l = look_up(head, n);

	if (l)
		return l->what;
	/* RIFF containers name their form at offset 8. */
	if (n >= 12 && memcmp(head, "RIFF", 4) == 0)
		return memcmp(head + 8, "WEBP", 4) == 0 ? "a WebP image" :
		       memcmp(head + 8, "WAVE", 4) == 0 ? "WAV audio" : "a RIFF container";
	/* A pickle of protocol 2 and later opens with PROTO (0x80) and its
	 * number; joblib's files are pickles too. */
	if (n >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
		return "a Python pickle (write Parquet, CSV or JSON instead)";
	if (memchr(head, '\0', n))
		return "binary data";
	return "text that is not valid UTF-8 (write UTF-8)";
}
