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
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sbx-archive.h"
#include "syscalls.h"

#define BLOCK_SIZE (64u * 1024)

DEFINE_TRIVIAL_CLEANUP_FUNC(struct archive *, archive_read_free)

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

struct walk {
	const struct sbx_archive_limits *lim;
	struct sbx_archive_report *rep;
	struct archive *a;
	int dst_dirfd;          /* -1 in pass 1 */
	uint64_t archive_size;  /* compressed size, for the total ratio */
	struct names names;
	char *path;             /* max_path + 1 bytes */
	unsigned char *buf;     /* BLOCK_SIZE */
};

/* Read (and in pass 2 write) one entry's data, counting every byte. */
static int copy_data(struct walk *w, const char *raw_name, int out_fd)
{
	const struct sbx_archive_limits *lim = w->lim;
	struct sbx_archive_report *rep = w->rep;
	int64_t raw_start = archive_filter_bytes(w->a, -1);
	uint64_t entry_bytes = 0;

	for (;;) {
		la_ssize_t r = archive_read_data(w->a, w->buf, BLOCK_SIZE);
		uint64_t consumed;

		if (r == 0)
			return 0;
		if (r < 0)
			return refuse(rep, SBX_EXIT_REFUSED, raw_name, "unreadable data: %s",
				      archive_error_string(w->a) ?: "unknown error");
		entry_bytes += (uint64_t)r;
		rep->bytes += (uint64_t)r;
		if (entry_bytes > lim->max_entry_bytes)
			return refuse(rep, SBX_EXIT_REFUSED, raw_name,
				      "larger than %" PRIu64 " bytes", lim->max_entry_bytes);
		if (rep->bytes > lim->max_total_bytes)
			return refuse(rep, SBX_EXIT_REFUSED, raw_name,
				      "archive expands to more than %" PRIu64 " bytes",
				      lim->max_total_bytes);
		/* Total ratio against the archive's size on disk. */
		if (rep->bytes > SBX_ARCHIVE_RATIO_FLOOR &&
		    rep->bytes / lim->max_ratio > w->archive_size)
			return refuse(rep, SBX_EXIT_REFUSED, raw_name,
				      "archive compression ratio above %" PRIu64 ":1",
				      lim->max_ratio);
		/* Per entry, against the compressed bytes consumed while reading
		 * it; one block of slack because reads are buffered ahead. */
		consumed = (uint64_t)(archive_filter_bytes(w->a, -1) - raw_start) + BLOCK_SIZE;
		if (entry_bytes > SBX_ARCHIVE_RATIO_FLOOR && entry_bytes / lim->max_ratio > consumed)
			return refuse(rep, SBX_EXIT_REFUSED, raw_name,
				      "compression ratio above %" PRIu64 ":1", lim->max_ratio);
		if (out_fd >= 0 && sbx_write_all(out_fd, w->buf, (size_t)r) < 0)
			return refuse(rep, SBX_EXIT_SOFTWARE, raw_name, "write: %s",
				      strerror(errno));
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

/*
 * The readers sbx accepts: every format and filter libarchive reads by
 * itself, except "raw" (any file would pass as an archive of one entry),
 * "empty", mtree (its entries name files on the host, which the reader
 * opens) and xar (an XML parser for a format nobody uploads).  Filters
 * that would run an external program (lrzip, lzop, grzip) are left out.
 */
static struct archive *new_reader(void)
{
	struct archive *a = archive_read_new();

	if (!a)
		return NULL;
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_bzip2(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_lzma(a);
	archive_read_support_filter_lzip(a);
	archive_read_support_filter_zstd(a);
	archive_read_support_filter_lz4(a);
	archive_read_support_filter_compress(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	archive_read_support_format_cpio(a);
	archive_read_support_format_zip(a);
	archive_read_support_format_7zip(a);
	archive_read_support_format_ar(a);
	archive_read_support_format_iso9660(a);
	archive_read_support_format_cab(a);
	archive_read_support_format_lha(a);
	archive_read_support_format_rar(a);
	archive_read_support_format_rar5(a);
	archive_read_support_format_warc(a);
	return a;
}

static int walk(int fd, int dst_dirfd, const struct sbx_archive_limits *lim,
		struct sbx_archive_report *rep)
{
	_cleanup_(archive_read_freep) struct archive *a = NULL;
	_cleanup_free_ char *path = NULL;
	_cleanup_free_ unsigned char *buf = NULL;
	struct walk w = { .lim = lim, .rep = rep, .dst_dirfd = dst_dirfd };
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

	a = new_reader();
	if (!a)
		return refuse(rep, SBX_EXIT_SOFTWARE, NULL, "libarchive: out of memory");
	w.a = a;
	if (archive_read_open_fd(a, fd, BLOCK_SIZE) != ARCHIVE_OK)
		return refuse(rep, SBX_EXIT_REFUSED, NULL, "not a readable archive: %s",
			      archive_error_string(a) ?: "unknown format");
	for (;;) {
		struct archive_entry *e;
		int h = archive_read_next_header(a, &e);

		if (h == ARCHIVE_EOF)
			break;
		/* A warning (a name that could not be converted, a bad
		 * checksum, ...) is refused too: fail closed. */
		if (h != ARCHIVE_OK) {
			r = refuse(rep, SBX_EXIT_REFUSED, NULL, "not a readable archive: %s",
				   archive_error_string(a) ?: "unknown error");
			break;
		}
		r = walk_entry(&w, e);
		if (r < 0)
			break;
	}
	names_free(&w.names);
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
