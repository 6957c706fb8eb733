/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * archive.c - the archive validator and extractor (see sbx-archive.h).
 *
 * One walk does both passes: with no destination it only reads and
 * checks, with one it also writes.  Running the same code twice is the
 * point: pass 2 cannot depend on anything pass 1 saw.
 *
 * Sizes are measured by reading the data, never taken from headers: a
 * header may say 10 bytes and the entry inflate to 10 GB.  Header sizes
 * are only used to refuse early.  Every byte read counts against the caps
 * as it arrives, so a zip bomb costs at most max_ratio times the archive's
 * own size (or the byte caps, whichever comes first) before it is refused.
 *
 * What is read: tar, plain or with one layer of gzip, bzip2, xz or zstd,
 * and zip.  A tar's decompressed stream does not go from the filter to
 * the tar reader inside libarchive: it is decompressed here (gzip, bzip2
 * and zstd by a second libarchive reader with the "raw" format, xz by
 * liblzma with a memory limit, which libarchive's own xz filter does not
 * take), and the tar reader pulls it through a callback that counts every
 * byte.  So headers count too: pax extended and global headers, GNU long
 * names and sparse maps are bytes libarchive consumes without returning
 * them as data, and a loop of them inside one archive_read_next_header()
 * call is stopped by the callback, not after it.  A zip is read from the
 * file itself (its reader seeks to the central directory); nothing is
 * decompressed there but entry data, which copy_data() counts.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <lzma.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sbx-archive.h"
#include "syscalls.h"

#define BLOCK_SIZE (64u * 1024)

/* Printable ASCII stays, everything else becomes \xNN, so a hostile name
 * cannot break the one-line message it ends up in. */
static void escape_name(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		char tmp[5];
		size_t n;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			tmp[0] = (char)c;
			n = 1;
		} else {
			snprintf(tmp, sizeof(tmp), "\\x%02x", c);
			n = 4;
		}
		if (o + n + 4 > len) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		memcpy(out + o, tmp, n);
		o += n;
	}
	out[o] = '\0';
}

static _printf_(4, 5) int refuse(struct sbx_archive_report *rep, int code, const char *raw_name,
				 const char *fmt, ...)
{
	va_list ap;

	rep->code = code;
	if (raw_name)
		escape_name(raw_name, rep->entry, sizeof(rep->entry));
	else
		rep->entry[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(rep->reason, sizeof(rep->reason), fmt, ap);
	va_end(ap);
	return -1;
}

const char *sbx_archive_report_text(const struct sbx_archive_report *rep, char *buf, size_t len)
{
	if (rep->entry[0])
		snprintf(buf, len, "entry \"%s\": %s", rep->entry, rep->reason);
	else
		snprintf(buf, len, "%s", rep->reason);
	return buf;
}

/*
 * The names seen so far, to refuse duplicates and collisions.  Every entry
 * "a/b/c" also claims "a" and "a/b" as directories, so a later file "a"
 * (or an earlier one) collides.  Names are stored once in an arena; the
 * implied parents are prefixes of an entry's name and point into it, so
 * memory stays proportional to the bytes of the names themselves.
 */
enum name_kind { NAME_FREE, NAME_FILE, NAME_DIR, NAME_IMPLIED_DIR };

struct name_slot {
	uint32_t off;
	uint32_t len;
	enum name_kind kind;
};

struct names {
	char *arena;
	size_t arena_len, arena_cap;
	struct name_slot *slots;
	size_t nslots, used;
};

static void names_free(struct names *n)
{
	free(n->arena);
	free(n->slots);
}

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static struct name_slot *names_find(struct names *n, const char *s, size_t len)
{
	size_t i = hash_bytes(s, len) & (n->nslots - 1);

	for (;; i = (i + 1) & (n->nslots - 1)) {
		struct name_slot *slot = &n->slots[i];

		if (slot->kind == NAME_FREE)
			return slot;
		if (slot->len == len && memcmp(n->arena + slot->off, s, len) == 0)
			return slot;
	}
}

static void names_grow(struct names *n)
{
	struct name_slot *old = n->slots;
	size_t old_n = n->nslots;

	n->nslots = old_n ? old_n * 2 : 256;
	n->slots = sbx_xcalloc(n->nslots, sizeof(*n->slots));
	for (size_t i = 0; i < old_n; i++)
		if (old[i].kind != NAME_FREE)
			*names_find(n, n->arena + old[i].off, old[i].len) = old[i];
	free(old);
}

static struct name_slot *names_insert(struct names *n, uint32_t off, uint32_t len,
				      enum name_kind kind)
{
	struct name_slot *slot;

	if ((n->used + 1) * 2 > n->nslots)
		names_grow(n);
	slot = names_find(n, n->arena + off, len);
	*slot = (struct name_slot){ .off = off, .len = len, .kind = kind };
	n->used++;
	return slot;
}

/* Claim @path (already clean) and its parents.  NULL or a reason. */
static const char *names_claim(struct names *n, const char *path, size_t len, bool is_dir)
{
	struct name_slot *slot;
	uint32_t off;

	/* Offsets are 32-bit; the entry and path caps keep far below. */
	if (n->arena_len + len > UINT32_MAX)
		return "too many names";
	if (!n->nslots)
		names_grow(n);
	if (n->arena_len + len > n->arena_cap) {
		n->arena_cap = (n->arena_len + len) * 2;
		n->arena = sbx_xrealloc(n->arena, n->arena_cap);
	}
	off = (uint32_t)n->arena_len;
	memcpy(n->arena + off, path, len);
	n->arena_len += len;

	for (size_t i = 0; i < len; i++) {
		if (path[i] != '/')
			continue;
		slot = names_find(n, path, i);
		if (slot->kind == NAME_FILE)
			return "a parent directory is also a file in the archive";
		if (slot->kind == NAME_FREE)
			names_insert(n, off, (uint32_t)i, NAME_IMPLIED_DIR);
	}

	slot = names_find(n, path, len);
	switch (slot->kind) {
	case NAME_FREE:
		names_insert(n, off, (uint32_t)len, is_dir ? NAME_DIR : NAME_FILE);
		return NULL;
	case NAME_IMPLIED_DIR:
		if (!is_dir)
			return "a file with the name of a directory in the archive";
		slot->kind = NAME_DIR; /* "a/b" came first, "a/" now: fine */
		return NULL;
	case NAME_DIR:
		return is_dir ? "duplicate name" :
				"a file with the name of a directory in the archive";
	default:
		return is_dir ? "a directory with the name of a file in the archive" :
				"duplicate name";
	}
}

/*
 * Normalize @raw into @out (max_path + 1 bytes).  A "./" prefix and
 * trailing slashes of directories are dropped; everything else that is
 * not a plain relative path is refused.  Returns 1 for the archive's
 * root ("." or "./", skipped), 0 when clean, -1 with *@why set.
 */
static int clean_path(const char *raw, bool is_dir, const struct sbx_archive_limits *lim,
		      char *out, size_t *out_len, const char **why, char *why_buf, size_t why_len)
{
	const char *p = raw;
	size_t n, depth = 0, start = 0;

	if (!raw || !*raw)
		return *why = "empty name", -1;
	n = strlen(raw);
	if (!sbx_utf8_valid(raw, n) || sbx_has_control(raw, n))
		return *why = "name has control characters or is not valid UTF-8", -1;
	if (raw[0] == '/')
		return *why = "absolute path", -1;
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	n = strlen(p);
	if (n && p[n - 1] == '/') {
		if (!is_dir)
			return *why = "file name ends in \"/\"", -1;
		while (n && p[n - 1] == '/')
			n--;
	}
	if (n == 0 || (n == 1 && p[0] == '.')) {
		if (!is_dir)
			return *why = "file name is the archive's root", -1;
		return 1;
	}
	if (n > lim->max_path) {
		snprintf(why_buf, why_len, "name longer than %" PRIu64 " bytes", lim->max_path);
		return *why = why_buf, -1;
	}
	for (size_t i = 0; i <= n; i++) {
		size_t clen;

		if (i < n && p[i] != '/')
			continue;
		clen = i - start;
		if (clen == 0)
			return *why = "empty path component", -1;
		if (clen == 1 && p[start] == '.')
			return *why = "\".\" path component", -1;
		if (clen == 2 && p[start] == '.' && p[start + 1] == '.')
			return *why = "\"..\" path component", -1;
		if (clen > lim->max_name) {
			snprintf(why_buf, why_len, "path component longer than %" PRIu64 " bytes",
				 lim->max_name);
			return *why = why_buf, -1;
		}
		if (++depth > lim->max_depth) {
			snprintf(why_buf, why_len, "deeper than %" PRIu64 " levels", lim->max_depth);
			return *why = why_buf, -1;
		}
		start = i + 1;
	}
	memcpy(out, p, n);
	out[n] = '\0';
	*out_len = n;
	return 0;
}

static const char *type_refusal(struct archive_entry *e)
{
	if (archive_entry_hardlink(e))
		return "hard links are not allowed";
	switch (archive_entry_filetype(e)) {
	case AE_IFREG:
		return archive_entry_symlink(e) ? "symbolic links are not allowed" : NULL;
	case AE_IFDIR:
		return archive_entry_symlink(e) ? "symbolic links are not allowed" : NULL;
	case AE_IFLNK:
		return "symbolic links are not allowed";
	case AE_IFCHR:
		return "character devices are not allowed";
	case AE_IFBLK:
		return "block devices are not allowed";
	case AE_IFIFO:
		return "fifos are not allowed";
	case AE_IFSOCK:
		return "sockets are not allowed";
	default:
		return "not a regular file or directory";
	}
}

/* Where a tar's stream comes from (a zip is read from the file). */
enum source_kind { SRC_PLAIN, SRC_FILTER, SRC_XZ };

struct walk {
	const struct sbx_archive_limits *lim;
	struct sbx_archive_report *rep;
	struct archive *a;      /* the format reader: tar or zip */
	int fd;
	int dst_dirfd;          /* -1 in pass 1 */
	uint64_t archive_size;  /* compressed size, for the total ratio */
	struct names names;
	char *path;             /* max_path + 1 bytes */
	unsigned char *buf;     /* BLOCK_SIZE */

	/* The tar stream (unused for zip). */
	enum source_kind kind;
	bool counted;           /* the tar reader reads through stream_read() */
	struct archive *outer;  /* SRC_FILTER: gzip, bzip2 or zstd, format raw */
	lzma_stream xz;         /* SRC_XZ */
	bool xz_live, in_eof, out_eof;
	unsigned char *in;      /* SRC_XZ input, BLOCK_SIZE */
	unsigned char *sbuf;    /* what stream_read() hands libarchive, BLOCK_SIZE */
	uint64_t raw;           /* SRC_PLAIN, SRC_XZ: bytes read from the file */
	uint64_t stream;        /* decompressed bytes handed to the tar reader */
	uint64_t mark;          /* @stream when the current entry's headers began */
	uint64_t entry_data;    /* data bytes of the current entry taken from the stream */
	const char *cur_name;   /* the current entry, once its header is read */
	bool stopped;           /* a refusal is in @rep: libarchive's error is not the reason */
};

/* Compressed bytes consumed so far. */
static uint64_t raw_consumed(struct walk *w)
{
	if (!w->counted)
		return (uint64_t)archive_filter_bytes(w->a, -1);
	if (w->kind == SRC_FILTER)
		return (uint64_t)archive_filter_bytes(w->outer, -1);
	return w->raw;
}

/* libarchive failed: its message, unless a refusal of ours is the cause.
 * An allocation that failed is the memory limit (RLIMIT_AS, see
 * sbx-extract.c), reported as such. */
static int lib_refusal(struct walk *w, struct archive *a, const char *raw_name, const char *what)
{
	if (w->stopped)
		return -1;
	if (archive_errno(a) == ENOMEM)
		return refuse(w->rep, SBX_EXIT_LIMIT, raw_name, "memory: %s: %s", what,
			      archive_error_string(a) ?: "out of memory");
	return refuse(w->rep, SBX_EXIT_REFUSED, raw_name, "%s: %s", what,
		      archive_error_string(a) ?: "unknown error");
}

/* Count @n more bytes of the entry (data, or a hole of a sparse file,
 * which reads as zeros and counts as such) against every cap.  They are
 * added only when they fit, so a refusal never reports more than a cap. */
static int count_bytes(struct walk *w, const char *raw_name, uint64_t *entry_bytes, uint64_t n,
		       uint64_t raw_start)
{
	const struct sbx_archive_limits *lim = w->lim;
	struct sbx_archive_report *rep = w->rep;
	uint64_t entry = *entry_bytes + n, total = rep->bytes + n;
	uint64_t consumed;

	if (entry < n || entry > lim->max_entry_bytes)
		return refuse(rep, SBX_EXIT_REFUSED, raw_name, "larger than %" PRIu64 " bytes",
			      lim->max_entry_bytes);
	if (total < n || total > lim->max_total_bytes)
		return refuse(rep, SBX_EXIT_REFUSED, raw_name,
			      "archive expands to more than %" PRIu64 " bytes", lim->max_total_bytes);
	/* Total ratio against the archive's size on disk. */
	if (total > SBX_ARCHIVE_RATIO_FLOOR && total / lim->max_ratio > w->archive_size)
		return refuse(rep, SBX_EXIT_REFUSED, raw_name,
			      "archive compression ratio above %" PRIu64 ":1", lim->max_ratio);
	/* Per entry, against the compressed bytes consumed while reading it;
	 * one block of slack because reads are buffered ahead. */
	consumed = raw_consumed(w) - raw_start + BLOCK_SIZE;
	if (entry > SBX_ARCHIVE_RATIO_FLOOR && entry / lim->max_ratio > consumed)
		return refuse(rep, SBX_EXIT_REFUSED, raw_name, "compression ratio above %" PRIu64 ":1",
			      lim->max_ratio);
	*entry_bytes = entry;
	rep->bytes = total;
	return 0;
}

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/*
 * Read (and in pass 2 write) one entry's data, counting every byte.
 * Blocks come with their offset: the gaps of a sparse file are holes,
 * counted like the zeros they read as, and left as holes in the file.
 * The end may lie beyond the last block (a sparse file that ends in a
 * hole): libarchive reports it as the offset of the end-of-data, and the
 * file is extended to it.
 */
static int copy_data(struct walk *w, const char *raw_name, int out_fd)
{
	uint64_t raw_start = raw_consumed(w);
	uint64_t entry_bytes = 0, pos = 0, written = 0;

	for (;;) {
		const void *blk = NULL;
		size_t size = 0;
		la_int64_t off = 0;
		int r = archive_read_data_block(w->a, &blk, &size, &off);

		if (r == ARCHIVE_EOF) {
			if (off > 0 && (uint64_t)off > pos) {
				if (count_bytes(w, raw_name, &entry_bytes, (uint64_t)off - pos,
						raw_start) < 0)
					return -1;
				pos = (uint64_t)off;
			}
			/* One zero byte at the end extends the file and leaves
			 * the rest a hole (Landlock grants no truncate). */
			if (out_fd >= 0 && pos > written && pwrite_all(out_fd, "", 1, pos - 1) < 0)
				return refuse(w->rep, SBX_EXIT_SOFTWARE, raw_name, "write: %s",
					      strerror(errno));
			return 0;
		}
		if (r != ARCHIVE_OK)
			return lib_refusal(w, w->a, raw_name, "unreadable data");
		if (off < 0 || (uint64_t)off < pos)
			return refuse(w->rep, SBX_EXIT_REFUSED, raw_name,
				      "unreadable data: blocks out of order");
		w->entry_data += size;
		if (count_bytes(w, raw_name, &entry_bytes, (uint64_t)off - pos + size, raw_start) < 0)
			return -1;
		if (out_fd >= 0 && size && pwrite_all(out_fd, blk, size, (uint64_t)off) < 0)
			return refuse(w->rep, SBX_EXIT_SOFTWARE, raw_name, "write: %s",
				      strerror(errno));
		pos = (uint64_t)off + size;
		if (size)
			written = pos;
	}
}

static int open_beneath(int dirfd, const char *name, int flags)
{
	return sbx_open_beneath(dirfd, name, flags);
}

static int io_refusal(struct sbx_archive_report *rep, const char *raw_name, const char *what)
{
	if (errno == ENOSYS)
		return refuse(rep, SBX_EXIT_UNAVAILABLE, raw_name, "%s: openat2: %s", what,
			      strerror(errno));
	return refuse(rep, SBX_EXIT_SOFTWARE, raw_name, "%s: %s", what, strerror(errno));
}

/* Open (creating as needed) the directory @path, a clean relative path,
 * beneath @dst_dirfd, one component at a time so that no component can be
 * a symlink or leave the tree.  @path is modified and restored. */
static int open_dir_path(struct walk *w, char *path, const char *raw_name, int *out)
{
	_cleanup_close_ int cur = -1;
	char *comp = path;

	cur = fcntl(w->dst_dirfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return io_refusal(w->rep, raw_name, "dup");
	while (comp) {
		char *slash = strchr(comp, '/');
		int fd;

		if (slash)
			*slash = '\0';
		fd = open_beneath(cur, comp, O_RDONLY | O_DIRECTORY);
		if (fd < 0 && errno == ENOENT) {
			if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST)
				return io_refusal(w->rep, raw_name, "mkdir");
			fd = open_beneath(cur, comp, O_RDONLY | O_DIRECTORY);
			/* The umask must not decide the mode. */
			if (fd >= 0 && fchmod(fd, 0755) < 0) {
				close(fd);
				return io_refusal(w->rep, raw_name, "chmod");
			}
		}
		if (slash)
			*slash = '/';
		if (fd < 0)
			return io_refusal(w->rep, raw_name, "open directory");
		close(cur);
		cur = fd;
		comp = slash ? slash + 1 : NULL;
	}
	*out = TAKE_FD(cur);
	return 0;
}

static int write_entry(struct walk *w, struct archive_entry *e, const char *raw_name,
		       size_t len, bool is_dir)
{
	_cleanup_close_ int parent = -1;
	_cleanup_close_ int fd = -1;
	char *slash = memrchr(w->path, '/', len);
	const char *last = slash ? slash + 1 : w->path;

	if (is_dir) {
		if (open_dir_path(w, w->path, raw_name, &fd) < 0)
			return -1;
		/* A directory has no data, but what the header claims is read
		 * and counted anyway so that no bytes escape the caps. */
		return copy_data(w, raw_name, -1);
	}
	if (slash) {
		*slash = '\0';
		if (open_dir_path(w, w->path, raw_name, &parent) < 0)
			return -1;
		*slash = '/';
	} else {
		parent = fcntl(w->dst_dirfd, F_DUPFD_CLOEXEC, 3);
		if (parent < 0)
			return io_refusal(w->rep, raw_name, "dup");
	}
	fd = openat(parent, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return io_refusal(w->rep, raw_name, "create");
	if (fchmod(fd, 0644) < 0)
		return io_refusal(w->rep, raw_name, "chmod");
	return copy_data(w, raw_name, fd);
}

static int walk_entry(struct walk *w, struct archive_entry *e)
{
	const struct sbx_archive_limits *lim = w->lim;
	struct sbx_archive_report *rep = w->rep;
	const char *raw_name = archive_entry_pathname(e);
	const char *why = NULL;
	char why_buf[128];
	size_t len = 0;
	bool is_dir;
	int r;

	w->cur_name = raw_name;
	if (rep->entries + 1 > lim->max_entries)
		return refuse(rep, SBX_EXIT_REFUSED, raw_name, "more than %" PRIu64 " entries",
			      lim->max_entries);
	why = type_refusal(e);
	if (why)
		return refuse(rep, SBX_EXIT_REFUSED, raw_name, "%s", why);
	is_dir = archive_entry_filetype(e) == AE_IFDIR;
	r = clean_path(raw_name, is_dir, lim, w->path, &len, &why, why_buf, sizeof(why_buf));
	if (r < 0)
		return refuse(rep, SBX_EXIT_REFUSED, raw_name, "%s", why);
	if (archive_entry_size_is_set(e) && archive_entry_size(e) >= 0 &&
	    (uint64_t)archive_entry_size(e) > lim->max_entry_bytes)
		return refuse(rep, SBX_EXIT_REFUSED, raw_name, "larger than %" PRIu64 " bytes",
			      lim->max_entry_bytes);
	rep->entries++;
	if (r == 1) /* the root itself: nothing to create */
		return copy_data(w, raw_name, -1);
	why = names_claim(&w->names, w->path, len, is_dir);
	if (why)
		return refuse(rep, SBX_EXIT_REFUSED, raw_name, "%s", why);
	if (w->dst_dirfd < 0)
		return copy_data(w, raw_name, -1);
	return write_entry(w, e, raw_name, len, is_dir);
}

/* The message for anything that is not one of the formats sbx reads. */
#define NOT_AN_ARCHIVE                                                                  \
	"not a tar or zip archive (sbx reads tar, plain or compressed with gzip, bzip2, " \
	"xz or zstd, and zip)"

/* xz: liblzma with the memory limit; returns bytes, 0 at the end, -1
 * with the refusal in @rep. */
static ssize_t xz_read(struct walk *w, unsigned char *buf, size_t len)
{
	lzma_stream *s = &w->xz;

	if (w->out_eof)
		return 0;
	s->next_out = buf;
	s->avail_out = len;
	for (;;) {
		size_t produced;
		lzma_ret ret;

		if (s->avail_in == 0 && !w->in_eof) {
			ssize_t n = read(w->fd, w->in, BLOCK_SIZE);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return refuse(w->rep, SBX_EXIT_SOFTWARE, NULL, "read: %s",
					      strerror(errno));
			if (n == 0)
				w->in_eof = true;
			w->raw += (uint64_t)n;
			s->next_in = w->in;
			s->avail_in = (size_t)n;
		}
		ret = lzma_code(s, w->in_eof ? LZMA_FINISH : LZMA_RUN);
		produced = len - s->avail_out;
		switch (ret) {
		case LZMA_STREAM_END:
			w->out_eof = true;
			return (ssize_t)produced;
		case LZMA_OK:
			if (produced == len || (produced && s->avail_in == 0))
				return (ssize_t)produced;
			continue;
		case LZMA_MEMLIMIT_ERROR:
			return refuse(w->rep, SBX_EXIT_LIMIT, NULL,
				      "memory: xz: the stream needs %" PRIu64
				      " MiB to decode, above the limit of %" PRIu64 " MiB",
				      (lzma_memusage(s) + (1u << 20) - 1) >> 20,
				      w->lim->xz_memlimit >> 20);
		case LZMA_MEM_ERROR:
			return refuse(w->rep, SBX_EXIT_LIMIT, NULL, "memory: xz: out of memory");
		default:
			return refuse(w->rep, SBX_EXIT_REFUSED, NULL,
				      "not a readable archive: xz: corrupt or truncated stream "
				      "(liblzma error %d)",
				      (int)ret);
		}
	}
}

/* The decompressed tar stream, before any cap is checked. */
static ssize_t source_read(struct walk *w, unsigned char *buf, size_t len)
{
	switch (w->kind) {
	case SRC_XZ:
		return xz_read(w, buf, len);
	case SRC_FILTER: {
		la_ssize_t n = archive_read_data(w->outer, buf, len);

		if (n < 0)
			return lib_refusal(w, w->outer, NULL, "not a readable archive");
		return (ssize_t)n;
	}
	default:
		for (;;) {
			ssize_t n = read(w->fd, buf, len);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return refuse(w->rep, SBX_EXIT_SOFTWARE, NULL, "read: %s",
					      strerror(errno));
			w->raw += (uint64_t)n;
			return n;
		}
	}
}

/*
 * The tar reader's read callback: every byte it consumes passes here, so
 * the caps apply to headers as much as to data.  Whatever this one entry
 * consumed beyond its data (pax headers, global headers before it, GNU
 * long names and sparse extension headers, a sparse map, padding) is its
 * headers; two blocks of slack cover the read-ahead.
 */
static la_ssize_t stream_read(struct archive *a, void *ud, const void **out)
{
	struct walk *w = ud;
	const struct sbx_archive_limits *lim = w->lim;
	uint64_t headers, allowance;
	ssize_t n;

	if (w->stopped) {
		archive_set_error(a, EINVAL, "stopped");
		return -1;
	}
	n = source_read(w, w->sbuf, BLOCK_SIZE);
	if (n < 0)
		goto stop;
	w->stream += (uint64_t)n;
	/* The mark was taken after a read-ahead: data can exceed it. */
	headers = w->stream > w->mark + w->entry_data ? w->stream - w->mark - w->entry_data : 0;
	allowance = SBX_ARCHIVE_HEADER_ALLOWANCE * (w->rep->entries + 1) + 2 * BLOCK_SIZE;
	if (headers > lim->max_header_bytes + 2 * BLOCK_SIZE) {
		refuse(w->rep, SBX_EXIT_REFUSED, w->cur_name,
		       "headers of one entry above %" PRIu64
		       " bytes (pax and GNU extended headers, sparse maps)",
		       lim->max_header_bytes);
		goto stop;
	}
	/* Headers beyond a small allowance per entry draw on the same
	 * budget as the data, and on the same ratio. */
	if (w->stream > lim->max_total_bytes + allowance) {
		refuse(w->rep, SBX_EXIT_REFUSED, w->cur_name,
		       "archive expands to more than %" PRIu64 " bytes (headers included)",
		       lim->max_total_bytes);
		goto stop;
	}
	if (w->stream > SBX_ARCHIVE_RATIO_FLOOR && w->stream / lim->max_ratio > w->archive_size) {
		refuse(w->rep, SBX_EXIT_REFUSED, w->cur_name,
		       "archive compression ratio above %" PRIu64 ":1 (headers included)",
		       lim->max_ratio);
		goto stop;
	}
	*out = w->sbuf;
	return (la_ssize_t)n;
stop:
	w->stopped = true;
	archive_set_error(a, EINVAL, "%s", w->rep->reason);
	return -1;
}

static bool has_magic(const unsigned char *m, size_t n, const char *magic, size_t len)
{
	return n >= len && memcmp(m, magic, len) == 0;
}

/*
 * Open the format reader on @fd.  Which path is decided by the first
 * bytes: a zip's local header or end record, an xz stream, else whatever
 * the gzip, bzip2 and zstd filters recognize (or none of them: a plain
 * tar).  Nothing else is enabled, so 7-Zip, RAR, CAB, LHA, ISO 9660,
 * WARC, cpio, ar, mtree, xar, lz4, lzip, lzma and compress are refused
 * as not an archive.
 */
static int open_reader(struct walk *w)
{
	unsigned char m[6];
	ssize_t n = pread(w->fd, m, sizeof(m), 0);

	if (n < 0)
		return refuse(w->rep, SBX_EXIT_SOFTWARE, NULL, "read: %s", strerror(errno));
	w->a = archive_read_new();
	if (!w->a)
		return refuse(w->rep, SBX_EXIT_LIMIT, NULL, "memory: libarchive: out of memory");
	if (has_magic(m, (size_t)n, "PK\3\4", 4) || has_magic(m, (size_t)n, "PK\5\6", 4)) {
		archive_read_support_format_zip(w->a);
		if (archive_read_open_fd(w->a, w->fd, BLOCK_SIZE) != ARCHIVE_OK)
			return lib_refusal(w, w->a, NULL, "not a readable archive");
		return 0;
	}

	w->counted = true;
	w->sbuf = sbx_xmalloc(BLOCK_SIZE);
	if (has_magic(m, (size_t)n, "\xfd" "7zXZ\0", 6)) {
		w->kind = SRC_XZ;
		w->in = sbx_xmalloc(BLOCK_SIZE);
		w->xz = (lzma_stream)LZMA_STREAM_INIT;
		if (lzma_stream_decoder(&w->xz, w->lim->xz_memlimit, LZMA_CONCATENATED) != LZMA_OK)
			return refuse(w->rep, SBX_EXIT_LIMIT, NULL, "memory: xz: cannot start the decoder");
		w->xz_live = true;
	} else {
		struct archive_entry *e;

		w->kind = SRC_FILTER;
		w->outer = archive_read_new();
		if (!w->outer)
			return refuse(w->rep, SBX_EXIT_LIMIT, NULL, "memory: libarchive: out of memory");
		archive_read_support_filter_gzip(w->outer);
		archive_read_support_filter_bzip2(w->outer);
		archive_read_support_filter_zstd(w->outer);
		archive_read_support_format_raw(w->outer);
		if (archive_read_open_fd(w->outer, w->fd, BLOCK_SIZE) != ARCHIVE_OK ||
		    archive_read_next_header(w->outer, &e) != ARCHIVE_OK)
			return lib_refusal(w, w->outer, NULL, "not a readable archive");
		/* "none" and at most one compression: no tar.gz.gz. */
		if (archive_filter_count(w->outer) > 2)
			return refuse(w->rep, SBX_EXIT_REFUSED, NULL,
				      "more than one layer of compression");
	}
	archive_read_support_format_tar(w->a);
	if (archive_read_open(w->a, w, NULL, stream_read, NULL) != ARCHIVE_OK) {
		if (w->stopped)
			return -1;
		if (archive_errno(w->a) == ENOMEM)
			return lib_refusal(w, w->a, NULL, "not a readable archive");
		return refuse(w->rep, SBX_EXIT_REFUSED, NULL, NOT_AN_ARCHIVE);
	}
	return 0;
}

static void close_reader(struct walk *w)
{
	if (w->a)
		archive_read_free(w->a);
	if (w->outer)
		archive_read_free(w->outer);
	if (w->xz_live)
		lzma_end(&w->xz);
	free(w->in);
	free(w->sbuf);
}

static int walk(int fd, int dst_dirfd, const struct sbx_archive_limits *lim,
		struct sbx_archive_report *rep)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ unsigned char *buf = NULL;
	struct walk w = { .lim = lim, .rep = rep, .fd = fd, .dst_dirfd = dst_dirfd };
	struct stat st;
	int r = 0;

	*rep = (struct sbx_archive_report){ 0 };
	if (!lim->max_ratio || lim->max_path > 65536)
		return refuse(rep, SBX_EXIT_SOFTWARE, NULL, "invalid archive limits");
	if (fstat(fd, &st) < 0)
		return refuse(rep, SBX_EXIT_SOFTWARE, NULL, "fstat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return refuse(rep, SBX_EXIT_SOFTWARE, NULL, "the archive is not a regular file");
	if (st.st_size == 0)
		return refuse(rep, SBX_EXIT_REFUSED, NULL, "not an archive: the file is empty");
	w.archive_size = (uint64_t)st.st_size;
	path = sbx_xmalloc(lim->max_path + 1);
	buf = sbx_xmalloc(BLOCK_SIZE);
	w.path = path;
	w.buf = buf;

	if (open_reader(&w) < 0) {
		close_reader(&w);
		return -1;
	}
	for (;;) {
		struct archive_entry *e;
		int h;

		/* Everything the reader consumes from here to the entry's
		 * data is this entry's headers. */
		w.mark = w.stream;
		w.entry_data = 0;
		w.cur_name = NULL;
		h = archive_read_next_header(w.a, &e);
		if (h == ARCHIVE_EOF)
			break;
		/* A warning (a name that could not be converted, a bad
		 * checksum, ...) is refused too: fail closed. */
		if (h != ARCHIVE_OK) {
			r = lib_refusal(&w, w.a, NULL, "not a readable archive");
			break;
		}
		r = walk_entry(&w, e);
		if (r < 0)
			break;
	}
	names_free(&w.names);
	close_reader(&w);
	return r;
}

int sbx_archive_check(int fd, const struct sbx_archive_limits *lim,
		      struct sbx_archive_report *rep)
{
	return walk(fd, -1, lim, rep);
}

int sbx_archive_extract(int fd, int dst_dirfd, const struct sbx_archive_limits *lim,
			struct sbx_archive_report *rep)
{
	if (dst_dirfd < 0) {
		*rep = (struct sbx_archive_report){ 0 };
		return refuse(rep, SBX_EXIT_SOFTWARE, NULL, "no destination directory");
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		*rep = (struct sbx_archive_report){ 0 };
		return refuse(rep, SBX_EXIT_SOFTWARE, NULL, "rewind: %s", strerror(errno));
	}
	return walk(fd, dst_dirfd, lim, rep);
}
