/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * zip-read.c - the ZIP container check and the bounded member reader
 * (zip-read.h).
 *
 * The records of a ZIP are fixed little-endian layouts, read here field
 * by field with every offset and length checked against the file; the
 * member data, the part that takes a real parser, is inflated by zlib.
 * libarchive, which reads archive inputs, is not used here: its readers
 * take either the local headers (streaming) or the central directory
 * (seeking) and do not say where an entry lies, so they cannot tell
 * whether the two agree, which is the check that matters (zip-read.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

#include "util.h"
#include "zip-read.h"

#define EOCD_LEN 22
#define CDH_LEN 46
#define LFH_LEN 30
#define CHUNK (64u * 1024)

void sbx_zip_limits_default(struct sbx_zip_limits *lim)
{
	*lim = (struct sbx_zip_limits){
		.max_entries = SBX_ZIP_MAX_ENTRIES,
		.max_entry_bytes = SBX_ZIP_MAX_BYTES,
		.max_total_bytes = SBX_ZIP_MAX_BYTES,
		.max_ratio = SBX_ZIP_MAX_RATIO,
		.max_depth = SBX_ZIP_MAX_DEPTH,
		.max_name = SBX_ZIP_MAX_NAME,
		.max_path = SBX_ZIP_MAX_PATH,
	};
}

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	unsigned char *p = buf;

	while (n) {
		ssize_t k = pread(fd, p, n, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

/* A name for a one-line reason: at most 80 bytes, cut on a character
 * boundary (names are checked UTF-8 by then, or shown as far as they are). */
static const char *shown(const char *name, char *buf, size_t len)
{
	size_t n = strnlen(name, len - 4);

	memcpy(buf, name, n);
	buf[n] = '\0';
	if (name[n]) {
		while (n > 0 && ((unsigned char)buf[n] & 0xc0) == 0x80)
			n--;
		strcpy(buf + n, "...");
	}
	for (char *p = buf; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return buf;
}

/*
 * The end record: where the file ends, after its comment.  Readers search
 * the tail backwards for the signature; here the record must be the one
 * whose comment reaches exactly to the end, and no other end record or
 * ZIP64 locator may be in the comment, where a reader would take it
 * instead (validate.c, sbx_media_zip_tail()).
 */
static int find_end(int fd, uint64_t size, const char *what, unsigned char *eocd, uint64_t *at,
		    struct sbx_media_report *rep)
{
	size_t n = size < EOCD_LEN + 65535 ? (size_t)size : EOCD_LEN + 65535;
	_cleanup_free_ unsigned char *buf = sbx_xmalloc(n ? n : 1);
	uint64_t off = size - n;

	if (size < EOCD_LEN)
		return sbx_media_fail(rep, "%s: not a ZIP archive: no end record", what);
	if (read_at(fd, buf, n, off) < 0)
		return sbx_media_fail(rep, "%s: read error", what);
	for (size_t i = n - EOCD_LEN + 1; i-- > 0;) {
		if (memcmp(buf + i, "PK\5\6", 4) != 0 || le16(buf + i + 20) != n - i - EOCD_LEN)
			continue;
		for (size_t j = i + 4; j + 4 <= n; j++)
			if (buf[j] == 'P' && buf[j + 1] == 'K' &&
			    ((buf[j + 2] == 5 && buf[j + 3] == 6) || (buf[j + 2] == 6 && buf[j + 3] == 7)))
				return sbx_media_fail(rep,
						      "%s: another ZIP end record in the archive comment "
						      "(offset %" PRIu64 ")",
						      what, off + j);
		memcpy(eocd, buf + i, EOCD_LEN);
		*at = off + i;
		return 0;
	}
	return sbx_media_fail(rep, "%s: not a ZIP archive: no end record at the end of the file",
			      what);
}

/* The name rules of an archive input (archive.c's clean_path), with no
 * "./" prefix accepted: a ZIP writer has no reason to write one. */
static const char *name_refusal(const char *s, size_t n, bool *is_dir,
				const struct sbx_zip_limits *lim)
{
	size_t depth = 0, start = 0;

	if (n == 0)
		return "empty name";
	if (memchr(s, '\0', n) || !sbx_utf8_valid(s, n) || sbx_has_control(s, n))
		return "name has control characters or is not valid UTF-8";
	if (memchr(s, '\\', n))
		return "name has a backslash";
	if (s[0] == '/')
		return "absolute path";
	if (n > lim->max_path)
		return "name too long";
	*is_dir = s[n - 1] == '/';
	if (*is_dir)
		n--;
	for (size_t i = 0; i <= n; i++) {
		size_t clen;

		if (i < n && s[i] != '/')
			continue;
		clen = i - start;
		if (clen == 0)
			return "empty path component";
		if (clen == 1 && s[start] == '.')
			return "\".\" path component";
		if (clen == 2 && s[start] == '.' && s[start + 1] == '.')
			return "\"..\" path component";
		if (clen > lim->max_name)
			return "path component too long";
		if (++depth > lim->max_depth)
			return "too deep";
		start = i + 1;
	}
	return NULL;
}

/* Without a directory's trailing '/', compared without case. */
static int cmp_path(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);
	int r;

	if (blen && b[blen - 1] == '/')
		blen--;
	r = strncasecmp(a, b, alen < blen ? alen : blen);
	return r ? r : (alen > blen) - (alen < blen);
}

static size_t path_len(const char *s)
{
	size_t n = strlen(s);

	return n && s[n - 1] == '/' ? n - 1 : n;
}

/* The order of cmp_path(): a directory's name without its '/'. */
static int cmp_nocase(const void *a, const void *b)
{
	const struct sbx_zip_entry *const *x = a, *const *y = b;

	return cmp_path((*x)->name, path_len((*x)->name), (*y)->name);
}

static const struct sbx_zip_entry *find_path(struct sbx_zip_entry **sorted, size_t n,
					     const char *s, size_t len)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = cmp_path(s, len, sorted[mid]->name);

		if (r == 0)
			return sorted[mid];
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* Duplicates without case, and a file where a name needs a directory. */
static int check_collisions(struct sbx_zip *z, const char *what, struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_zip_entry **sorted = sbx_xcalloc(z->n + 1, sizeof(*sorted));
	char b[96];

	for (size_t i = 0; i < z->n; i++)
		sorted[i] = &z->v[i];
	qsort(sorted, z->n, sizeof(*sorted), cmp_nocase);
	for (size_t i = 0; i + 1 < z->n; i++) {
		const char *a = sorted[i]->name, *c = sorted[i + 1]->name;

		if (cmp_path(a, path_len(a), c) == 0)
			return sbx_media_fail(rep, "%s: entry \"%s\": duplicate name (names are "
					      "compared without case)", what, shown(c, b, sizeof(b)));
	}
	for (size_t i = 0; i < z->n; i++) {
		const char *s = z->v[i].name;

		for (const char *p = strchr(s, '/'); p; p = strchr(p + 1, '/')) {
			const struct sbx_zip_entry *e = find_path(sorted, z->n, s, (size_t)(p - s));

			if (e && !e->is_dir)
				return sbx_media_fail(rep, "%s: entry \"%s\": a parent directory is "
						      "also a file in the archive",
						      what, shown(s, b, sizeof(b)));
		}
	}
	return 0;
}

/* The central directory, entry by entry. */
static int read_directory(struct sbx_zip *z, uint64_t cd_off, uint64_t cd_size, size_t count,
			  const struct sbx_zip_limits *lim, const char *what,
			  struct sbx_media_report *rep)
{
	_cleanup_free_ unsigned char *cd = NULL;
	uint64_t total = 0, total_c = 0;
	size_t pos = 0, names_at = 0;
	char b[96];

	/* The names cannot be longer than the directory that holds them. */
	cd = sbx_xmalloc(cd_size ? (size_t)cd_size : 1);
	if (read_at(z->fd, cd, (size_t)cd_size, cd_off) < 0)
		return sbx_media_fail(rep, "%s: read error", what);
	z->v = sbx_xcalloc(count ? count : 1, sizeof(*z->v));
	z->names = sbx_xmalloc((size_t)cd_size + 1);
	for (size_t i = 0; i < count; i++) {
		struct sbx_zip_entry *e = &z->v[i];
		const unsigned char *h = cd + pos;
		uint16_t flags, nlen, xlen, clen, made_by;
		uint32_t ext;
		const char *why;
		char *name;

		if (cd_size - pos < CDH_LEN || memcmp(h, "PK\1\2", 4) != 0)
			return sbx_media_fail(rep, "%s: central directory entry %zu is not one", what,
					      i + 1);
		made_by = le16(h + 4);
		flags = le16(h + 8);
		e->method = le16(h + 10);
		e->crc = le32(h + 16);
		e->csize = le32(h + 20);
		e->usize = le32(h + 24);
		nlen = le16(h + 28);
		xlen = le16(h + 30);
		clen = le16(h + 32);
		ext = le32(h + 38);
		e->header_off = le32(h + 42);
		if (cd_size - pos - CDH_LEN < (uint64_t)nlen + xlen + clen)
			return sbx_media_fail(rep, "%s: central directory entry %zu runs past the "
					      "directory", what, i + 1);
		name = z->names + names_at;
		memcpy(name, h + CDH_LEN, nlen);
		name[nlen] = '\0';
		e->name = name;
		names_at += (size_t)nlen + 1;
		pos += CDH_LEN + (size_t)nlen + xlen + clen;
		why = name_refusal(name, nlen, &e->is_dir, lim);
		if (why)
			return sbx_media_fail(rep, "%s: entry \"%s\": %s", what,
					      shown(name, b, sizeof(b)), why);
		if (flags & (1u << 0 | 1u << 6 | 1u << 13) || e->method == 99)
			return sbx_media_fail(rep, "%s: entry \"%s\": encrypted", what,
					      shown(name, b, sizeof(b)));
		if (e->method != 0 && e->method != 8)
			return sbx_media_fail(rep, "%s: entry \"%s\": compression method %u (only "
					      "stored and deflate are read)",
					      what, shown(name, b, sizeof(b)), e->method);
		if (e->csize == UINT32_MAX || e->usize == UINT32_MAX ||
		    e->header_off == UINT32_MAX || le16(h + 34) != 0)
			return sbx_media_fail(rep, "%s: entry \"%s\": ZIP64 or multi-disk entries are "
					      "not read", what, shown(name, b, sizeof(b)));
		/* Unix mode bits, when a Unix system made the entry. */
		if ((made_by >> 8) == 3 && ((ext >> 16) & 0170000) == 0120000)
			return sbx_media_fail(rep, "%s: entry \"%s\": symbolic links are not "
					      "allowed", what, shown(name, b, sizeof(b)));
		if (e->is_dir && e->usize != 0)
			return sbx_media_fail(rep, "%s: entry \"%s\": a directory with data", what,
					      shown(name, b, sizeof(b)));
		if (e->method == 0 && e->csize != e->usize)
			return sbx_media_fail(rep, "%s: entry \"%s\": stored, but its sizes differ",
					      what, shown(name, b, sizeof(b)));
		if (e->usize > lim->max_entry_bytes)
			return sbx_media_fail_code(rep, SBX_RC_TOO_LARGE,
						   "%s: entry \"%s\": larger than %" PRIu64 " bytes",
					      what, shown(name, b, sizeof(b)), lim->max_entry_bytes);
		if (e->usize > SBX_ZIP_RATIO_FLOOR && e->usize / lim->max_ratio > e->csize)
			return sbx_media_fail(rep, "%s: entry \"%s\": compression ratio above "
					      "%" PRIu64 ":1", what, shown(name, b, sizeof(b)),
					      lim->max_ratio);
		total += e->usize;
		total_c += e->csize;
		if (total > lim->max_total_bytes)
			return sbx_media_fail_code(rep, SBX_RC_TOO_LARGE,
						   "%s: the archive expands to more than %" PRIu64
					      " bytes", what, lim->max_total_bytes);
	}
	if (pos != cd_size)
		return sbx_media_fail(rep, "%s: %" PRIu64 " bytes after the central directory's "
				      "last entry", what, cd_size - pos);
	if (total > SBX_ZIP_RATIO_FLOOR && total / lim->max_ratio > z->size)
		return sbx_media_fail(rep, "%s: archive compression ratio above %" PRIu64 ":1", what,
				      lim->max_ratio);
	(void)total_c;
	z->n = count;
	return 0;
}

static int cmp_offset(const void *a, const void *b)
{
	const struct sbx_zip_entry *const *x = a, *const *y = b;

	return ((*x)->header_off > (*y)->header_off) - ((*x)->header_off < (*y)->header_off);
}

/*
 * Each local header against its central entry, in file order: the first
 * at offset 0, each next one exactly where the previous entry's data (and
 * data descriptor) ends, the central directory where the last one ends.
 */
static int check_tiling(struct sbx_zip *z, uint64_t cd_off, const char *what,
			struct sbx_media_report *rep)
{
	_cleanup_free_ struct sbx_zip_entry **order = sbx_xcalloc(z->n + 1, sizeof(*order));
	_cleanup_free_ unsigned char *name = NULL;
	unsigned char h[LFH_LEN];
	uint64_t expect = 0;
	size_t longest = 0;
	char b[96];

	for (size_t i = 0; i < z->n; i++) {
		order[i] = &z->v[i];
		if (strlen(z->v[i].name) > longest)
			longest = strlen(z->v[i].name);
	}
	name = sbx_xmalloc(longest + 1);
	qsort(order, z->n, sizeof(*order), cmp_offset);
	for (size_t i = 0; i < z->n; i++) {
		struct sbx_zip_entry *e = order[i];
		size_t nlen = strlen(e->name);
		uint16_t flags;
		uint64_t end;

		if (e->header_off != expect)
			return sbx_media_fail(rep, "%s: entry \"%s\": its local header is at offset "
					      "%" PRIu64 ", not %" PRIu64 " (%s)",
					      what, shown(e->name, b, sizeof(b)), e->header_off, expect,
					      e->header_off < expect ? "entries overlap" :
					      expect == 0 ? "data before the first entry" :
							    "data between entries");
		if (z->size - expect < LFH_LEN || read_at(z->fd, h, LFH_LEN, expect) < 0 ||
		    memcmp(h, "PK\3\4", 4) != 0)
			return sbx_media_fail(rep, "%s: entry \"%s\": no local header at offset "
					      "%" PRIu64, what, shown(e->name, b, sizeof(b)), expect);
		flags = le16(h + 6);
		if (le16(h + 26) != nlen || le16(h + 8) != e->method ||
		    read_at(z->fd, name, nlen, expect + LFH_LEN) < 0 ||
		    memcmp(name, e->name, nlen) != 0 || (flags & 1u))
			return sbx_media_fail(rep, "%s: entry \"%s\": the local header disagrees "
					      "with the central directory (name, method or "
					      "encryption)", what, shown(e->name, b, sizeof(b)));
		/* With a data descriptor (bit 3) the local header may leave
		 * the CRC and sizes 0; the descriptor must then give them. */
		if (!((flags & 8u) && le32(h + 14) == 0 && le32(h + 18) == 0 && le32(h + 22) == 0) &&
		    (le32(h + 14) != e->crc || le32(h + 18) != e->csize || le32(h + 22) != e->usize))
			return sbx_media_fail(rep, "%s: entry \"%s\": the local header's CRC or sizes "
					      "disagree with the central directory",
					      what, shown(e->name, b, sizeof(b)));
		e->data_off = expect + LFH_LEN + nlen + le16(h + 28);
		end = e->data_off + e->csize;
		if (end > cd_off)
			return sbx_media_fail(rep, "%s: entry \"%s\": its data runs into the central "
					      "directory", what, shown(e->name, b, sizeof(b)));
		if (flags & 8u) {
			unsigned char d[16];
			size_t k = cd_off - end >= 16 ? 16 : (size_t)(cd_off - end);
			size_t at;

			if (read_at(z->fd, d, k, end) < 0)
				return sbx_media_fail(rep, "%s: read error", what);
			at = k >= 4 && memcmp(d, "PK\7\10", 4) == 0 ? 4 : 0;
			if (k < at + 12 || le32(d + at) != e->crc || le32(d + at + 4) != e->csize ||
			    le32(d + at + 8) != e->usize)
				return sbx_media_fail(rep, "%s: entry \"%s\": its data descriptor "
						      "disagrees with the central directory",
						      what, shown(e->name, b, sizeof(b)));
			end += at + 12;
		}
		expect = end;
	}
	if (expect != cd_off)
		return sbx_media_fail(rep, "%s: %" PRIu64 " bytes between the last entry and the "
				      "central directory", what, cd_off - expect);
	return 0;
}

int sbx_zip_open(int fd, uint64_t size, const struct sbx_zip_limits *lim, const char *what,
		 struct sbx_zip **out, struct sbx_media_report *rep)
{
	unsigned char eocd[EOCD_LEN] = { 0 };
	uint64_t at = 0, cd_off, cd_size;
	struct sbx_zip *z;
	size_t count;

	*out = NULL;
	if (find_end(fd, size, what, eocd, &at, rep) < 0)
		return -1;
	count = le16(eocd + 10);
	cd_size = le32(eocd + 12);
	cd_off = le32(eocd + 16);
	if (le16(eocd + 4) != 0 || le16(eocd + 6) != 0 || le16(eocd + 8) != count)
		return sbx_media_fail(rep, "%s: a split (multi-disk) archive", what);
	if (count == 0xffff || cd_size == UINT32_MAX || cd_off == UINT32_MAX)
		return sbx_media_fail(rep, "%s: a ZIP64 archive (more than 65534 entries or 4 GiB) "
				      "is not read", what);
	if (count == 0)
		return sbx_media_fail(rep, "%s: an empty archive", what);
	if (count > lim->max_entries)
		return sbx_media_fail(rep, "%s: more than %" PRIu64 " entries", what,
				      lim->max_entries);
	/* Nothing between the directory and its end record: a ZIP64 end
	 * record would be there, or a second directory. */
	if (cd_off + cd_size != at)
		return sbx_media_fail(rep, "%s: the central directory does not end at the end "
				      "record", what);
	z = sbx_xcalloc(1, sizeof(*z));
	z->fd = fd;
	z->size = size;
	if (read_directory(z, cd_off, cd_size, count, lim, what, rep) < 0 ||
	    check_collisions(z, what, rep) < 0 || check_tiling(z, cd_off, what, rep) < 0) {
		sbx_zip_free(z);
		return -1;
	}
	*out = z;
	return 0;
}

void sbx_zip_free(struct sbx_zip *z)
{
	if (!z)
		return;
	free(z->v);
	free(z->names);
	free(z);
}

const struct sbx_zip_entry *sbx_zip_find(const struct sbx_zip *z, const char *name)
{
	for (size_t i = 0; i < z->n; i++)
		if (strcasecmp(z->v[i].name, name) == 0)
			return &z->v[i];
	return NULL;
}

int sbx_zip_read(const struct sbx_zip *z, const struct sbx_zip_entry *e, sbx_zip_sink sink,
		 void *ud, const char *what, struct sbx_media_report *rep)
{
	_cleanup_free_ unsigned char *in = sbx_xmalloc(CHUNK);
	_cleanup_free_ unsigned char *outb = NULL;
	uint64_t left = e->csize, produced = 0;
	uLong crc = crc32(0, NULL, 0);
	z_stream s = { 0 };
	int r = 0, zr = Z_OK;
	char b[96];

	if (e->method == 8) {
		outb = sbx_xmalloc(CHUNK);
		if (inflateInit2(&s, -MAX_WBITS) != Z_OK)
			return sbx_media_fail(rep, "%s: zlib: cannot start inflating", what);
	}
	while (r == 0 && (left > 0 || (e->method == 8 && zr != Z_STREAM_END))) {
		size_t k = left < CHUNK ? (size_t)left : CHUNK;

		if (k && read_at(z->fd, in, k, e->data_off + (e->csize - left)) < 0) {
			r = sbx_media_fail(rep, "%s: read error", what);
			break;
		}
		left -= k;
		if (e->method == 0) {
			produced += k;
			crc = crc32(crc, in, (uInt)k);
			r = sink(ud, in, k, rep);
			continue;
		}
		if (k == 0) {
			/* All input given and still no end of stream. */
			r = sbx_media_fail(rep, "%s: entry \"%s\": its deflate stream is truncated",
					   what, shown(e->name, b, sizeof(b)));
			break;
		}
		s.next_in = in;
		s.avail_in = (uInt)k;
		do {
			size_t got;

			s.next_out = outb;
			s.avail_out = CHUNK;
			zr = inflate(&s, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
				r = sbx_media_fail(rep, "%s: entry \"%s\": corrupt deflate data",
						   what, shown(e->name, b, sizeof(b)));
				break;
			}
			got = CHUNK - s.avail_out;
			/* Never more than declared: the bomb stops here even if
			 * the directory's sizes were the only check. */
			if (got > e->usize - produced) {
				r = sbx_media_fail(rep, "%s: entry \"%s\": inflates to more than "
						   "its declared %" PRIu32 " bytes",
						   what, shown(e->name, b, sizeof(b)), e->usize);
				break;
			}
			produced += got;
			crc = crc32(crc, outb, (uInt)got);
			if (got)
				r = sink(ud, outb, got, rep);
		} while (r == 0 && zr != Z_STREAM_END && s.avail_out == 0);
		if (r == 0 && zr == Z_STREAM_END && (s.avail_in != 0 || left != 0))
			r = sbx_media_fail(rep, "%s: entry \"%s\": data after its deflate stream",
					   what, shown(e->name, b, sizeof(b)));
	}
	if (e->method == 8)
		inflateEnd(&s);
	if (r == 1)
		return 0;
	if (r < 0)
		return -1;
	if (produced != e->usize)
		return sbx_media_fail(rep, "%s: entry \"%s\": %" PRIu64 " bytes, not the declared "
				      "%" PRIu32, what, shown(e->name, b, sizeof(b)), produced,
				      e->usize);
	if (crc != e->crc)
		return sbx_media_fail(rep, "%s: entry \"%s\": CRC-32 mismatch", what,
				      shown(e->name, b, sizeof(b)));
	return 0;
}
