/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zip-read.h - a ZIP output checked like an archive input, then read
 * member by member with bounded reads (zip-read.c).
 *
 * A ZIP has two indexes of its members: the local headers in front of the
 * data, which streaming readers walk, and the central directory at the
 * end, which seeking readers (Office, Python's zipfile, libzip) believe.
 * A hostile file makes them disagree: an entry hidden inside another
 * one's stored data, a central entry with another name than its local
 * header, data before the first entry or between entries.  So the check
 * holds the two to each other: every central entry's local header says
 * the same (name, method, flags, CRC, sizes), and the entries tile the
 * file with nothing before, between or after them but the central
 * directory and its end record.  Then what any reader sees is the same
 * set of members.
 *
 * Refused: ZIP64, split archives, encryption (traditional, strong, AES),
 * any compression method but stored and deflate, symbolic links, names
 * that are absolute, climb (".."), hold "." or empty components, a
 * backslash, control characters or invalid UTF-8, names that are
 * duplicates when compared without case (part names in OOXML are
 * case-insensitive, and so are the file systems of Windows and macOS),
 * a file where another entry needs a directory; more than max_entries
 * entries, an entry or all of them larger than their caps, and a
 * compression ratio above max_ratio (per entry and for the whole file,
 * above SBX_ZIP_RATIO_FLOOR bytes), all decided from the central
 * directory's sizes before anything is inflated; reading then holds each
 * member to the size and CRC the directory declared.
 */
#ifndef SBX_ZIP_READ_H
#define SBX_ZIP_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "validate.h"

/* Defaults of an archive input's caps (sbx-archive.h), for outputs. */
#define SBX_ZIP_MAX_ENTRIES 10000
#define SBX_ZIP_MAX_RATIO 100
#define SBX_ZIP_MAX_DEPTH 32
#define SBX_ZIP_MAX_NAME 255
#define SBX_ZIP_MAX_PATH 1024
#define SBX_ZIP_MAX_BYTES (1ull << 30)
/* Below this many uncompressed bytes the ratio is not checked. */
#define SBX_ZIP_RATIO_FLOOR (1u << 20)

struct sbx_zip_limits {
	uint64_t max_entries;
	uint64_t max_entry_bytes; /* uncompressed bytes of one member */
	uint64_t max_total_bytes; /* uncompressed bytes of all members */
	uint64_t max_ratio;       /* uncompressed : compressed */
	uint64_t max_depth;       /* path components */
	uint64_t max_name;        /* bytes per component */
	uint64_t max_path;        /* bytes per name */
};

struct sbx_zip_entry {
	const char *name;   /* checked as above; a directory's ends in '/' */
	uint64_t header_off; /* its local header */
	uint64_t data_off;   /* its (compressed) data */
	uint32_t csize, usize, crc;
	uint16_t method;     /* 0 stored, 8 deflate */
	bool is_dir;
};

struct sbx_zip {
	int fd;
	uint64_t size;
	struct sbx_zip_entry *v; /* in central directory order */
	size_t n;
	char *names;             /* every name, NUL-terminated, one block */
};

/* The defaults above. */
void sbx_zip_limits_default(struct sbx_zip_limits *lim);

/*
 * sbx_zip_open() - check the ZIP of @size bytes at @fd (read by pread)
 * and list its members.  @what starts every reason ("xlsx", "zip").
 * Return: 0 with *@out set (free with sbx_zip_free()); -1 with
 * @rep->reason saying why, naming the entry at fault.
 */
int sbx_zip_open(int fd, uint64_t size, const struct sbx_zip_limits *lim, const char *what,
		 struct sbx_zip **out, struct sbx_media_report *rep);
void sbx_zip_free(struct sbx_zip *z);

/* The member named @name, compared without ASCII case (OPC's rule), or NULL. */
const struct sbx_zip_entry *sbx_zip_find(const struct sbx_zip *z, const char *name);

/*
 * What a member's bytes go to: a chunk at a time, in order.  Returns 0 to
 * go on, -1 to stop with @rep->reason set, 1 to stop quietly (the caller
 * has seen enough; the CRC is then not checked).
 */
typedef int (*sbx_zip_sink)(void *ud, const unsigned char *p, size_t n,
			    struct sbx_media_report *rep);

/*
 * sbx_zip_read() - inflate member @e in 64 KiB chunks into @sink.  The
 * member must yield exactly its declared size from exactly its declared
 * compressed bytes, with its CRC-32; memory is two fixed buffers and
 * zlib's window, whatever the member says.
 * Return: 0, or -1 with @rep->reason set (by the sink or here).
 */
int sbx_zip_read(const struct sbx_zip *z, const struct sbx_zip_entry *e, sbx_zip_sink sink,
		 void *ud, const char *what, struct sbx_media_report *rep);

#endif
