/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbx-archive.h - validate and extract an input archive (SPEC §3, "extract").
 *
 * Two passes over the same seekable fd.  Pass 1 (sbx_archive_check) reads
 * every header and every data byte with libarchive, writes nothing, and
 * refuses the archive at the first entry that breaks a rule.  Pass 2
 * (sbx_archive_extract) rewinds and applies the same rules again while it
 * writes, because the file may have changed in between: nothing learned in
 * pass 1 is trusted.
 *
 * Rules: only regular files and directories (no symlinks, no hard links,
 * no devices, fifos or sockets); names relative, valid UTF-8 without
 * control characters, no empty, "." or ".." components; caps on entry
 * count, per-entry and total uncompressed bytes, compression ratio, depth
 * and name length; no two entries with the same name, and no file where
 * another entry needs a directory.  The bytes of a tar's headers count as
 * well (see archive.c): per entry, and against the total and the ratio.
 *
 * Formats: tar, plain or with one layer of gzip, bzip2, xz or zstd, and
 * zip; nothing else.  xz is decoded with a memory limit.
 *
 * archive.c links libarchive, so it is built into the sbx-extract helper
 * and the unit test only, never into sbx itself: this header deliberately
 * includes nothing from libarchive so that store.c can share the limits.
 * (It is not called archive.h because its folder is on the include path and
 * would then shadow libarchive's own <archive.h>.)
 */
#ifndef SBX_SBX_ARCHIVE_H
#define SBX_SBX_ARCHIVE_H

#include <stdint.h>

#include "error.h"

/* Defaults for the caps that the job's limits do not set. */
#define SBX_ARCHIVE_MAX_ENTRIES 10000
#define SBX_ARCHIVE_MAX_RATIO 100
#define SBX_ARCHIVE_MAX_DEPTH 32
#define SBX_ARCHIVE_MAX_NAME 255  /* bytes per path component */
#define SBX_ARCHIVE_MAX_PATH 1024 /* bytes per entry path */
/* Below this many uncompressed bytes the ratio is not checked: tiny
 * archives of repetitive text compress far better than 100:1. */
#define SBX_ARCHIVE_RATIO_FLOOR (1u << 20)
/* Headers of one entry (its pax extended header, the pax global headers
 * before it, GNU long names, sparse extension headers and sparse map):
 * libarchive's own limit for one pax header is 1 MiB. */
#define SBX_ARCHIVE_MAX_HEADER_BYTES (1u << 20)
/* Header bytes per entry that do not draw on max_total_bytes: a ustar
 * header, a pax header with a long name, their padding. */
#define SBX_ARCHIVE_HEADER_ALLOWANCE (8u << 10)
/* The xz decoder's memory limit unless the caller sets one: enough for
 * any preset up to -9 (a 64 MiB dictionary). */
#define SBX_ARCHIVE_XZ_MEMLIMIT (80ull << 20)

struct sbx_archive_limits {
	uint64_t max_entries;
	uint64_t max_entry_bytes;  /* uncompressed bytes of one file */
	uint64_t max_total_bytes;  /* uncompressed bytes of all files */
	uint64_t max_ratio;        /* uncompressed : compressed, per entry and total */
	uint64_t max_depth;        /* path components */
	uint64_t max_name;         /* bytes per component */
	uint64_t max_path;         /* bytes per path */
	uint64_t max_header_bytes; /* header bytes per entry (tar) */
	uint64_t xz_memlimit;      /* bytes the xz decoder may allocate */
};

struct sbx_archive_report {
	int code;          /* 0, SBX_EXIT_REFUSED, SBX_EXIT_LIMIT (memory: the
			    * reason starts "memory: ") or SBX_EXIT_SOFTWARE */
	uint64_t entries;  /* entries accepted so far */
	uint64_t bytes;    /* uncompressed file bytes read (and written) so far */
	char entry[256];   /* the entry at fault, escaped for one line; "" if none */
	char reason[512];  /* why */
};

/* The defaults above, with @max_bytes for both byte caps.  Inline because
 * store.c (in libsbx, without libarchive) needs it too. */
static inline void sbx_archive_limits_default(struct sbx_archive_limits *lim, uint64_t max_bytes)
{
	*lim = (struct sbx_archive_limits){
		.max_entries = SBX_ARCHIVE_MAX_ENTRIES,
		.max_entry_bytes = max_bytes,
		.max_total_bytes = max_bytes,
		.max_ratio = SBX_ARCHIVE_MAX_RATIO,
		.max_depth = SBX_ARCHIVE_MAX_DEPTH,
		.max_name = SBX_ARCHIVE_MAX_NAME,
		.max_path = SBX_ARCHIVE_MAX_PATH,
		.max_header_bytes = SBX_ARCHIVE_MAX_HEADER_BYTES,
		.xz_memlimit = SBX_ARCHIVE_XZ_MEMLIMIT,
	};
}

/*
 * sbx_archive_check() - pass 1: validate every entry of the archive on @fd
 * (read from its current offset) without writing anything.
 * Returns 0 when the archive is acceptable, -1 otherwise with @rep->code
 * SBX_EXIT_REFUSED (the archive breaks a rule; @rep->entry names the entry
 * when one is at fault), SBX_EXIT_LIMIT (reading it needs more memory than
 * the xz limit or the address space allows) or SBX_EXIT_SOFTWARE (an I/O
 * error of our own).
 */
int sbx_archive_check(int fd, const struct sbx_archive_limits *lim,
		      struct sbx_archive_report *rep);

/*
 * sbx_archive_extract() - pass 2: rewind @fd and extract regular files
 * (mode 0644; the holes of a sparse entry stay holes, a trailing one
 * included) and directories (0755) beneath @dst_dirfd, created with
 * O_EXCL/O_NOFOLLOW through openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS),
 * enforcing every rule again as it goes.  Owners, times, setuid/setgid/
 * sticky bits and extended attributes of the archive are ignored.
 * Returns 0 or -1 as sbx_archive_check(); on -1 part of the tree may have
 * been written, and the caller must discard @dst_dirfd's contents.
 */
int sbx_archive_extract(int fd, int dst_dirfd, const struct sbx_archive_limits *lim,
			struct sbx_archive_report *rep);

/* "entry \"x\": reason" or "reason", into @buf. */
const char *sbx_archive_report_text(const struct sbx_archive_report *rep, char *buf,
				    size_t len);

#endif
