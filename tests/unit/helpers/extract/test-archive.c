/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-archive - the archive validator and extractor.  Every archive is
 * built here with libarchive's writer (tar, tar.gz, zip, and the formats
 * and filters that must be refused), so the table says exactly what each
 * hostile archive holds; the headers no writer produces on request (pax
 * globals, a GNU sparse map) are laid out byte by byte by raw_tar below.
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "sbx-archive.h"
#include "util.h"

enum fmt { TAR, TGZ, ZIP };

struct ent {
	const char *name;
	mode_t type;        /* AE_IFREG, AE_IFDIR, AE_IFLNK, AE_IFCHR, AE_IFIFO */
	mode_t perm;
	const char *data;   /* regular files */
	const char *link;   /* symlink target, or hardlink target with .hard */
	bool hard;
	uint64_t zeros;     /* a file of this many zero bytes instead of data */
};

#define MAX_ENTS 8

struct arc_case {
	const char *label;
	enum fmt fmt;
	struct ent ents[MAX_ENTS];
	const char *entry;  /* expected entry in the report, escaped */
	const char *reason; /* expected substring of the reason */
};

static void add_entry(struct archive *a, const struct ent *e)
{
	struct archive_entry *ae = archive_entry_new();
	uint64_t size = e->zeros ? e->zeros : e->data ? strlen(e->data) : 0;

	assert_non_null(ae);
	archive_entry_set_pathname(ae, e->name);
	archive_entry_set_filetype(ae, e->type ? e->type : AE_IFREG);
	archive_entry_set_perm(ae, e->perm ? e->perm : 0644);
	if (e->hard)
		archive_entry_set_hardlink(ae, e->link);
	else if (e->link)
		archive_entry_set_symlink(ae, e->link);
	if (e->type == AE_IFCHR)
		archive_entry_set_rdev(ae, makedev(1, 3));
	if (!e->type || e->type == AE_IFREG)
		archive_entry_set_size(ae, (la_int64_t)size);
	/* WARN: the pax writer notes names it cannot convert, and writes them raw. */
	assert_true(archive_write_header(a, ae) >= ARCHIVE_WARN);
	if (e->zeros) {
		static const char block[64 * 1024];

		for (uint64_t done = 0; done < e->zeros; done += sizeof(block))
			assert_true(archive_write_data(a, block, sizeof(block)) > 0);
	} else if (e->data && size) {
		assert_int_equal(archive_write_data(a, e->data, size), (la_ssize_t)size);
	}
	archive_entry_free(ae);
}

/* An archive of @n entries in a memfd (a regular, seekable file). */
static int make_archive(enum fmt fmt, const struct ent *ents, size_t n)
{
	struct archive *a = archive_write_new();
	int fd = memfd_create("archive", MFD_CLOEXEC);

	assert_non_null(a);
	assert_true(fd >= 0);
	if (fmt == ZIP) {
		assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
	} else {
		assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
		if (fmt == TGZ) {
			assert_int_equal(archive_write_add_filter_gzip(a), ARCHIVE_OK);
			/* Level 1 keeps the 200 MB bomb quick to build. */
			archive_write_set_filter_option(a, "gzip", "compression-level", "1");
		}
	}
	assert_int_equal(archive_write_open_fd(a, fd), ARCHIVE_OK);
	for (size_t i = 0; i < n; i++)
		add_entry(a, &ents[i]);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static size_t count_ents(const struct ent *ents)
{
	size_t n = 0;

	while (n < MAX_ENTS && ents[n].name)
		n++;
	return n;
}

static const struct sbx_archive_limits test_limits = {
	.max_entries = 100,
	.max_entry_bytes = 1u << 20,
	.max_total_bytes = 4u << 20,
	.max_ratio = 100,
	.max_depth = 8,
	.max_name = 64,
	.max_path = 256,
	.max_header_bytes = SBX_ARCHIVE_MAX_HEADER_BYTES,
	.xz_memlimit = SBX_ARCHIVE_XZ_MEMLIMIT,
};

static const struct arc_case refusals[] = {
	{ "traversal", TAR, { { .name = "../x", .data = "x" } }, "../x", "\"..\" path component" },
	{ "traversal inside", TGZ, { { .name = "a/../../x", .data = "x" } }, "a/../../x",
	  "\"..\" path component" },
	{ "traversal zip", ZIP, { { .name = "ok", .data = "1" }, { .name = "../../x", .data = "x" } },
	  "../../x", "\"..\" path component" },
	{ "absolute", TAR, { { .name = "/etc/x", .data = "x" } }, "/etc/x", "absolute path" },
	{ "absolute zip", ZIP, { { .name = "/etc/x", .data = "x" } }, "/etc/x", "absolute path" },
	{ "dot component", TAR, { { .name = "a/./b", .data = "x" } }, "a/./b",
	  "\".\" path component" },
	{ "empty component", TAR, { { .name = "a//b", .data = "x" } }, "a//b",
	  "empty path component" },
	{ "symlink", TAR, { { .name = "l", .type = AE_IFLNK, .link = "/etc/passwd" } }, "l",
	  "symbolic links" },
	{ "symlink inside", TGZ,
	  { { .name = "f", .data = "x" }, { .name = "l", .type = AE_IFLNK, .link = "f" } }, "l",
	  "symbolic links" },
	{ "symlink zip", ZIP, { { .name = "l", .type = AE_IFLNK, .link = "../../etc/passwd" } },
	  "l", "symbolic links" },
	{ "hardlink", TAR,
	  { { .name = "f", .data = "x" }, { .name = "h", .link = "f", .hard = true } }, "h",
	  "hard links" },
	{ "hardlink outside", TAR, { { .name = "h", .link = "/etc/shadow", .hard = true } }, "h",
	  "hard links" },
	{ "device", TAR, { { .name = "null", .type = AE_IFCHR } }, "null",
	  "character devices" },
	{ "fifo", TGZ, { { .name = "p", .type = AE_IFIFO } }, "p", "fifos" },
	{ "duplicate", TAR, { { .name = "a", .data = "1" }, { .name = "a", .data = "2" } }, "a",
	  "duplicate name" },
	{ "duplicate after ./", TGZ, { { .name = "a", .data = "1" }, { .name = "./a", .data = "2" } },
	  "./a", "duplicate name" },
	{ "duplicate dir with slash", TAR,
	  { { .name = "d", .type = AE_IFDIR }, { .name = "d/", .type = AE_IFDIR } }, "d/",
	  "duplicate name" },
	{ "file then dir", TAR, { { .name = "a", .data = "1" }, { .name = "a", .type = AE_IFDIR } },
	  "a/", "directory with the name of a file" },
	{ "dir then file", TAR, { { .name = "a", .type = AE_IFDIR }, { .name = "a", .data = "1" } },
	  "a", "file with the name of a directory" },
	{ "file under file", ZIP, { { .name = "a", .data = "1" }, { .name = "a/b", .data = "2" } },
	  "a/b", "parent directory is also a file" },
	{ "file over implied dir", TAR,
	  { { .name = "a/b", .data = "2" }, { .name = "a", .data = "1" } }, "a",
	  "file with the name of a directory" },
	{ "newline", TAR, { { .name = "a\nb", .data = "x" } }, "a\\x0ab", "control characters" },
	{ "escape", TAR, { { .name = "a\033[2Jb", .data = "x" } }, "a\\x1b[2Jb",
	  "control characters" },
	{ "invalid utf-8", TAR, { { .name = "a\xff\xfe", .data = "x" } }, "a\\xff\\xfe",
	  "not valid UTF-8" },
	{ "long component", TAR,
	  { { .name = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	      .data = "x" } },
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "path component longer than 64 bytes" },
	{ "deep", TGZ, { { .name = "1/2/3/4/5/6/7/8/9", .data = "x" } }, "1/2/3/4/5/6/7/8/9",
	  "deeper than 8 levels" },
	{ "file is root", TAR, { { .name = ".", .data = "x" } }, ".", "archive's root" },
	{ "entry too big", TAR, { { .name = "big", .zeros = 2u << 20 } }, "big",
	  "larger than 1048576 bytes" },
	{ "total too big", TAR,
	  { { .name = "a", .zeros = 1u << 20 }, { .name = "b", .zeros = 1u << 20 },
	    { .name = "c", .zeros = 1u << 20 }, { .name = "d", .zeros = 1u << 20 },
	    { .name = "e", .zeros = 1u << 20 } },
	  "e", "expands to more than 4194304 bytes" },
};

static void run_refusal(const struct arc_case *c)
{
	struct sbx_archive_report rep;
	int fd = make_archive(c->fmt, c->ents, count_ents(c->ents));
	char text[1024];

	print_message("# %s\n", c->label);
	assert_int_equal(sbx_archive_check(fd, &test_limits, &rep), -1);
	assert_int_equal(rep.code, SBX_EXIT_REFUSED);
	assert_string_equal(rep.entry, c->entry);
	if (!strstr(rep.reason, c->reason))
		fail_msg("%s: reason \"%s\" lacks \"%s\"", c->label, rep.reason, c->reason);
	sbx_archive_report_text(&rep, text, sizeof(text));
	assert_non_null(strstr(text, "entry \""));
	assert_null(strchr(text, '\n'));
	close(fd);
}

static void test_refusals(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(refusals); i++)
		run_refusal(&refusals[i]);
}

/* Names and counts that are easier to generate than to write down. */
static void test_generated_refusals(void **state)
{
	struct sbx_archive_report rep;
	struct ent many[101], one[1];
	char names[101][8], long_name[320];
	int fd;

	for (size_t i = 0; i < ARRAY_SIZE(many); i++) {
		snprintf(names[i], sizeof(names[i]), "f%zu", i);
		many[i] = (struct ent){ .name = names[i], .data = "x" };
	}
	fd = make_archive(TAR, many, ARRAY_SIZE(many));
	assert_int_equal(sbx_archive_check(fd, &test_limits, &rep), -1);
	assert_string_equal(rep.entry, "f100");
	assert_string_equal(rep.reason, "more than 100 entries");
	assert_int_equal(rep.entries, 100);
	close(fd);

	/* 300 bytes in components of 10: over max_path (256), not max_name. */
	for (size_t i = 0; i < 300; i++)
		long_name[i] = i % 10 == 9 ? '/' : 'n';
	long_name[299] = 'n';
	long_name[300] = '\0';
	one[0] = (struct ent){ .name = long_name, .data = "x" };
	fd = make_archive(TGZ, one, 1);
	assert_int_equal(sbx_archive_check(fd, &test_limits, &rep), -1);
	assert_string_equal(rep.reason, "name longer than 256 bytes");
	assert_int_equal(strncmp(rep.entry, "nnnnnnnnn/", 10), 0);
	close(fd);
}

/*
 * 200 MB of zeros gzip to a few hundred KB.  Against a ratio cap of 100
 * the reader must stop after a few MB, not inflate the lot: the time
 * check guards that (inflating all of it takes several times longer).
 */
static void test_zip_bomb(void **state)
{
	const struct ent bomb[] = { { .name = "zeros", .zeros = 200u << 20 } };
	struct sbx_archive_limits lim = test_limits;
	struct sbx_archive_report rep;
	uint64_t t0;
	int fd;

	lim.max_entry_bytes = lim.max_total_bytes = 1ull << 30;
	for (enum fmt f = TGZ; f <= ZIP; f++) {
		struct stat st;

		fd = make_archive(f, bomb, 1);
		assert_int_equal(fstat(fd, &st), 0);
		assert_true(st.st_size < (1 << 20));
		t0 = sbx_now_mono_ns();
		assert_int_equal(sbx_archive_check(fd, &lim, &rep), -1);
		assert_int_equal(rep.code, SBX_EXIT_REFUSED);
		assert_string_equal(rep.entry, "zeros");
		if (!strstr(rep.reason, "compression ratio above 100:1"))
			fail_msg("bomb: reason \"%s\"", rep.reason);
		/* Stopped early: far less than the 200 MB was read. */
		assert_true(rep.bytes < (64u << 20));
		assert_true(sbx_now_mono_ns() - t0 < 2000000000ull);

		/* With a lax ratio, the total cap stops it just as early. */
		lim.max_ratio = 1000000;
		lim.max_total_bytes = 8u << 20;
		assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
		assert_int_equal(sbx_archive_check(fd, &lim, &rep), -1);
		assert_non_null(strstr(rep.reason, "expands to more than 8388608 bytes"));
		assert_true(rep.bytes <= (8u << 20) + (64u << 10));
		lim.max_ratio = 100;
		lim.max_total_bytes = 1ull << 30;
		close(fd);
	}
}

static void test_not_archives(void **state)
{
	struct sbx_archive_report rep;
	int fd = memfd_create("plain", MFD_CLOEXEC);

	assert_int_equal(sbx_archive_check(fd, &test_limits, &rep), -1);
	assert_int_equal(rep.code, SBX_EXIT_REFUSED);
	assert_non_null(strstr(rep.reason, "empty"));
	/* Plain text is not an archive of one entry ("raw" is off). */
	assert_int_equal(write(fd, "hello, world\n", 13), 13);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(sbx_archive_check(fd, &test_limits, &rep), -1);
	assert_int_equal(rep.code, SBX_EXIT_REFUSED);
	assert_non_null(strstr(rep.reason, "not a tar or zip archive"));
	assert_string_equal(rep.entry, "");
	close(fd);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static char *make_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *dir = sbx_xasprintf("%s/sbx-test-archive.XXXXXX", base && *base ? base : "/tmp");

	assert_non_null(mkdtemp(dir));
	return dir;
}

static void rm_tree(char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

static void expect_file(int dirfd, const char *path, const char *data, mode_t mode)
{
	char buf[256];
	struct stat st;
	int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		fail_msg("%s: %s", path, strerror(errno));
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, mode);
	n = read(fd, buf, sizeof(buf));
	assert_int_equal(n, (ssize_t)strlen(data));
	assert_memory_equal(buf, data, (size_t)n);
	close(fd);
}

static void expect_dir(int dirfd, const char *path)
{
	struct stat st;

	assert_int_equal(fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0755);
}

static size_t count_dir(int dirfd)
{
	size_t n = 0;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fdopendir(fd);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static const struct ent benign[] = {
	{ .name = "./", .type = AE_IFDIR, .perm = 0700 },
	{ .name = "./top.txt", .data = "hello\n", .perm = 0755 },
	{ .name = "d/", .type = AE_IFDIR, .perm = 0700 },
	{ .name = "d/e/", .type = AE_IFDIR, .perm = 01777 },
	{ .name = "d/e/f.csv", .data = "a,b\n1,2\n", .perm = 04755 },
	{ .name = "g/h.txt", .data = "implied parent\n", .perm = 0600 },
	{ .name = "g", .type = AE_IFDIR },
	{ .name = "empty", .data = "" },
};

static void test_benign(void **state)
{
	umask(077); /* modes must not depend on it */
	for (enum fmt f = TAR; f <= ZIP; f++) {
		struct sbx_archive_report rep;
		char *dir = make_tmpdir();
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int fd = make_archive(f, benign, ARRAY_SIZE(benign));
		int in;

		assert_true(dfd >= 0);
		assert_int_equal(sbx_archive_check(fd, &test_limits, &rep), 0);
		assert_int_equal(rep.code, 0);
		assert_int_equal(rep.entries, ARRAY_SIZE(benign));
		assert_int_equal(rep.bytes, 6 + 8 + 15);
		/* check leaves the offset at the end; extract rewinds. */
		assert_int_equal(sbx_archive_extract(fd, dfd, &test_limits, &rep), 0);
		assert_int_equal(rep.bytes, 6 + 8 + 15);

		expect_file(dfd, "top.txt", "hello\n", 0644);
		expect_file(dfd, "d/e/f.csv", "a,b\n1,2\n", 0644);
		expect_file(dfd, "g/h.txt", "implied parent\n", 0644);
		expect_file(dfd, "empty", "", 0644);
		expect_dir(dfd, "d");
		expect_dir(dfd, "d/e");
		expect_dir(dfd, "g");
		assert_int_equal(count_dir(dfd), 4);
		in = openat(dfd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		assert_int_equal(count_dir(in), 1);
		close(in);

		/* Extracting again into the same tree fails: O_EXCL. */
		assert_int_equal(sbx_archive_extract(fd, dfd, &test_limits, &rep), -1);
		close(fd);
		close(dfd);
		rm_tree(dir);
	}
	umask(022);
}

/* Pass 2 does not rely on pass 1: extracting an unchecked hostile archive
 * still refuses the entry and writes nothing outside the destination. */
static void test_extract_revalidates(void **state)
{
	const struct ent evil[] = {
		{ .name = "ok.txt", .data = "fine" },
		{ .name = "../escaped", .data = "evil" },
	};
	const struct ent through_link[] = { { .name = "sub/x", .data = "evil" } };
	struct sbx_archive_report rep;
	char *base = make_tmpdir();
	int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int dfd, fd, fd2;

	assert_int_equal(mkdirat(bfd, "dst", 0755), 0);
	assert_int_equal(mkdirat(bfd, "outside", 0755), 0);
	dfd = openat(bfd, "dst", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = make_archive(TAR, evil, ARRAY_SIZE(evil));
	assert_int_equal(sbx_archive_extract(fd, dfd, &test_limits, &rep), -1);
	assert_int_equal(rep.code, SBX_EXIT_REFUSED);
	assert_string_equal(rep.entry, "../escaped");
	assert_int_equal(faccessat(bfd, "escaped", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	close(fd);

	/* A symlink planted in the destination is not followed. */
	assert_int_equal(symlinkat("../outside", dfd, "sub"), 0);
	fd = make_archive(TAR, through_link, 1);
	assert_int_equal(sbx_archive_extract(fd, dfd, &test_limits, &rep), -1);
	assert_int_not_equal(rep.code, 0);
	fd2 = openat(bfd, "outside", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(count_dir(fd2), 0);
	close(fd2);
	close(fd);
	close(dfd);
	close(bfd);
	rm_tree(base);
}

/* --- formats and filters --------------------------------------------------- */

/* A one-file archive in @format (archive_write_set_format_by_name) through
 * @filters (names for archive_write_add_filter_by_name, NULL-terminated). */
static int make_with(const char *format, const char *const *filters)
{
	const struct ent e = { .name = "f.txt", .data = "hello\n" };
	struct archive *a = archive_write_new();
	int fd = memfd_create("archive", MFD_CLOEXEC);

	assert_non_null(a);
	assert_true(fd >= 0);
	if (archive_write_set_format_by_name(a, format) != ARCHIVE_OK)
		fail_msg("format %s: %s", format, archive_error_string(a));
	for (size_t i = 0; filters && filters[i]; i++)
		if (archive_write_add_filter_by_name(a, filters[i]) != ARCHIVE_OK)
			fail_msg("filter %s: %s", filters[i], archive_error_string(a));
	assert_int_equal(archive_write_open_fd(a, fd), ARCHIVE_OK);
	add_entry(a, &e);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* tar through gzip, bzip2, xz and zstd, and zip: read and extracted. */
static void test_accepted(void **state)
{
	static const char *const filters[][2] = { { NULL }, { "gzip" }, { "bzip2" }, { "xz" },
						  { "zstd" } };

	for (size_t i = 0; i <= ARRAY_SIZE(filters); i++) {
		const char *const *f = i < ARRAY_SIZE(filters) ? filters[i] : NULL;
		struct sbx_archive_report rep;
		char *dir = make_tmpdir();
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int fd = make_with(i < ARRAY_SIZE(filters) ? "pax" : "zip", f);

		print_message("# %s\n", i == ARRAY_SIZE(filters) ? "zip" : f[0] ? f[0] : "tar");
		if (sbx_archive_check(fd, &test_limits, &rep) < 0)
			fail_msg("refused: %s", rep.reason);
		assert_int_equal(sbx_archive_extract(fd, dfd, &test_limits, &rep), 0);
		expect_file(dfd, "f.txt", "hello\n", 0644);
		close(fd);
		close(dfd);
		rm_tree(dir);
	}
}

/* Everything else libarchive reads is not an archive to sbx.  (An ISO 9660
 * image is not listed: its first 32 KiB are zeros, which the tar reader
 * takes for the end of an empty archive, so nothing is extracted.) */
static void test_formats_refused(void **state)
{
	static const struct {
		const char *format, *filter, *reason;
	} cases[] = {
		{ "7zip", NULL, "not a tar or zip archive" },
		{ "cpio", NULL, "not a tar or zip archive" },
		{ "ar", NULL, "not a tar or zip archive" },
		{ "warc", NULL, "not a tar or zip archive" },
		{ "xar", NULL, "not a tar or zip archive" },
		{ "7zip", "gzip", "not a tar or zip archive" },
		{ "pax", "lz4", "not a tar or zip archive" },
		{ "pax", "lzip", "not a tar or zip archive" },
		{ "pax", "lzma", "not a tar or zip archive" },
		{ "pax", "compress", "not a tar or zip archive" },
		{ "zip", "gzip", "not a tar or zip archive" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *f[] = { cases[i].filter, NULL };
		struct sbx_archive_report rep;
		int fd = make_with(cases[i].format, f);

		print_message("# %s %s\n", cases[i].format, cases[i].filter ? cases[i].filter : "");
		assert_int_equal(sbx_archive_check(fd, &test_limits, &rep), -1);
		assert_int_equal(rep.code, SBX_EXIT_REFUSED);
		if (!strstr(rep.reason, cases[i].reason))
			fail_msg("reason \"%s\"", rep.reason);
		close(fd);
	}
	{
		const char *twice[] = { "gzip", "gzip", NULL };
		struct sbx_archive_report rep;
		int fd = make_with("pax", twice);

		assert_int_equal(sbx_archive_check(fd, &test_limits, &rep), -1);
		assert_string_equal(rep.reason, "more than one layer of compression");
		close(fd);
	}
}

/* The xz decoder's memory limit: preset 6 needs about 9 MiB. */
static void test_xz_memlimit(void **state)
{
	const char *xz[] = { "xz", NULL };
	struct sbx_archive_limits lim = test_limits;
	struct sbx_archive_report rep;
	int fd = make_with("pax", xz);

	lim.xz_memlimit = 4u << 20;
	assert_int_equal(sbx_archive_check(fd, &lim, &rep), -1);
	assert_int_equal(rep.code, SBX_EXIT_LIMIT);
	if (!strstr(rep.reason, "memory: xz: the stream needs 9 MiB to decode, above the limit of 4 MiB"))
		fail_msg("reason \"%s\"", rep.reason);
	lim.xz_memlimit = 10u << 20;
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(sbx_archive_check(fd, &lim, &rep), 0);
	close(fd);
}

/* --- raw tar headers ------------------------------------------------------------ */

struct raw {
	unsigned char *p;
	size_t len, cap;
};

static void raw_put(struct raw *r, const void *data, size_t n)
{
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2;
		r->p = sbx_xrealloc(r->p, r->cap);
	}
	memcpy(r->p + r->len, data, n);
	r->len += n;
}

static void raw_pad(struct raw *r)
{
	static const unsigned char zero[512];

	raw_put(r, zero, (512 - r->len % 512) % 512);
}

/* One ustar header block. */
static void raw_header(struct raw *r, const char *name, char type, uint64_t size)
{
	unsigned char h[512] = { 0 };
	unsigned sum = 0;

	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	memcpy(h + 136, "00000000000", 12);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	for (size_t i = 0; i < sizeof(h); i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	raw_put(r, h, sizeof(h));
}

/* A pax record "LEN key=value\n", LEN counting itself. */
static void pax_record(struct raw *r, const char *key, const char *value)
{
	size_t body = 1 + strlen(key) + 1 + strlen(value) + 1, len = body + 1;
	char digits[24];

	while ((size_t)snprintf(digits, sizeof(digits), "%zu", len) + body != len)
		len = body + strlen(digits);
	raw_put(r, digits, strlen(digits));
	raw_put(r, " ", 1);
	raw_put(r, key, strlen(key));
	raw_put(r, "=", 1);
	raw_put(r, value, strlen(value));
	raw_put(r, "\n", 1);
}

/* A pax extended ('x') or global ('g') header holding @recs. */
static void raw_pax(struct raw *r, char type, const struct raw *recs)
{
	raw_header(r, type == 'g' ? "pax_global_header" : "PaxHeader/x", type, recs->len);
	raw_put(r, recs->p, recs->len);
	raw_pad(r);
}

/* A GNU sparse 1.0 entry: @n blocks of @block_len 'x' bytes at @offs,
 * a file of @realsize bytes. */
static void raw_sparse(struct raw *r, const char *name, uint64_t realsize, const uint64_t *offs,
		       size_t n, uint64_t block_len)
{
	struct raw recs = { 0 }, data = { 0 };
	char num[32];

	snprintf(num, sizeof(num), "%llu", (unsigned long long)realsize);
	pax_record(&recs, "GNU.sparse.major", "1");
	pax_record(&recs, "GNU.sparse.minor", "0");
	pax_record(&recs, "GNU.sparse.name", name);
	pax_record(&recs, "GNU.sparse.realsize", num);
	raw_pax(r, 'x', &recs);
	snprintf(num, sizeof(num), "%zu\n", n);
	raw_put(&data, num, strlen(num));
	for (size_t i = 0; i < n; i++) {
		snprintf(num, sizeof(num), "%llu\n%llu\n", (unsigned long long)offs[i],
			 (unsigned long long)block_len);
		raw_put(&data, num, strlen(num));
	}
	raw_pad(&data);
	for (size_t i = 0; i < n * block_len; i++)
		raw_put(&data, "x", 1);
	raw_header(r, "GNUSparseFile.0/x", '0', data.len);
	raw_put(r, data.p, data.len);
	raw_pad(r);
	free(recs.p);
	free(data.p);
}

static void raw_file(struct raw *r, const char *name, const char *data)
{
	raw_header(r, name, '0', strlen(data));
	raw_put(r, data, strlen(data));
	raw_pad(r);
}

/* The end-of-archive blocks, into a memfd. */
static int raw_finish(struct raw *r)
{
	static const unsigned char end[1024];
	int fd = memfd_create("raw", MFD_CLOEXEC);

	raw_put(r, end, sizeof(end));
	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, r->p, r->len), (ssize_t)r->len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	free(r->p);
	*r = (struct raw){ 0 };
	return fd;
}

/* A global header of @n bytes of attribute. */
static void raw_global(struct raw *r, size_t n)
{
	struct raw recs = { 0 };
	char *v = sbx_xmalloc(n + 1);

	memset(v, 'A', n);
	v[n] = '\0';
	pax_record(&recs, "comment", v);
	raw_pax(r, 'g', &recs);
	free(recs.p);
	free(v);
}

/* Sparse entries keep their size when they end in a hole, or are one. */
static void test_sparse_holes(void **state)
{
	const uint64_t at0[] = { 0 }, at_end[] = { 4096 };
	struct sbx_archive_report rep;
	struct raw r = { 0 };
	char *dir = make_tmpdir();
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[8192];
	struct stat st;
	int fd, f;

	raw_sparse(&r, "tail.bin", 100000, at0, 1, 5);
	raw_sparse(&r, "empty.bin", 4096, at_end, 1, 0);
	fd = raw_finish(&r);
	assert_int_equal(sbx_archive_check(fd, &test_limits, &rep), 0);
	assert_int_equal(rep.bytes, 100000 + 4096); /* holes count as their zeros */
	assert_int_equal(sbx_archive_extract(fd, dfd, &test_limits, &rep), 0);

	f = openat(dfd, "tail.bin", O_RDONLY | O_CLOEXEC);
	assert_true(f >= 0);
	assert_int_equal(fstat(f, &st), 0);
	assert_int_equal(st.st_size, 100000);
	assert_int_equal(pread(f, buf, 8, 0), 8);
	assert_memory_equal(buf, "xxxxx\0\0\0", 8);
	assert_int_equal(pread(f, buf, 1, 99999), 1);
	assert_int_equal(buf[0], 0);
	close(f);
	f = openat(dfd, "empty.bin", O_RDONLY | O_CLOEXEC);
	assert_true(f >= 0);
	assert_int_equal(fstat(f, &st), 0);
	assert_int_equal(st.st_size, 4096);
	assert_int_equal(read(f, buf, sizeof(buf)), 4096);
	for (size_t i = 0; i < 4096; i++)
		assert_int_equal(buf[i], 0);
	close(f);
	close(fd);
	close(dfd);
	rm_tree(dir);
}

/* Header bytes count: per entry, against the total and the ratio. */
static void test_header_bytes(void **state)
{
	struct sbx_archive_limits lim = test_limits;
	struct sbx_archive_report rep;
	uint64_t *offs = sbx_xcalloc(200000, sizeof(*offs));
	struct raw r = { 0 };
	int fd;

	/* One global header below the cap is fine. */
	raw_global(&r, 600000);
	raw_file(&r, "a.txt", "after\n");
	fd = raw_finish(&r);
	if (sbx_archive_check(fd, &lim, &rep) < 0)
		fail_msg("refused: %s", rep.reason);
	close(fd);

	/* Three of them before one entry: over 1 MiB of its headers. */
	for (int i = 0; i < 3; i++)
		raw_global(&r, 600000);
	raw_file(&r, "a.txt", "after\n");
	fd = raw_finish(&r);
	assert_int_equal(sbx_archive_check(fd, &lim, &rep), -1);
	assert_int_equal(rep.code, SBX_EXIT_REFUSED);
	assert_non_null(strstr(rep.reason, "headers of one entry above 1048576 bytes"));
	assert_string_equal(rep.entry, "");
	close(fd);

	/* A sparse map of 200000 blocks (~2.4 MB of map; libarchive reads it
	 * before it returns the header, so no entry is named). */
	for (size_t i = 0; i < 200000; i++)
		offs[i] = 2 * i;
	raw_sparse(&r, "map.bin", 400000, offs, 200000, 1);
	fd = raw_finish(&r);
	assert_int_equal(sbx_archive_check(fd, &lim, &rep), -1);
	assert_non_null(strstr(rep.reason, "headers of one entry above 1048576 bytes"));
	close(fd);

	/* Headers draw on the total beyond a small allowance per entry. */
	lim.max_total_bytes = 64u << 10;
	raw_global(&r, 600000);
	raw_file(&r, "a.txt", "after\n");
	fd = raw_finish(&r);
	assert_int_equal(sbx_archive_check(fd, &lim, &rep), -1);
	assert_non_null(strstr(rep.reason, "expands to more than 65536 bytes (headers included)"));
	close(fd);
	free(offs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_generated_refusals),
		cmocka_unit_test(test_zip_bomb),
		cmocka_unit_test(test_not_archives),
		cmocka_unit_test(test_benign),
		cmocka_unit_test(test_extract_revalidates),
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_formats_refused),
		cmocka_unit_test(test_xz_memlimit),
		cmocka_unit_test(test_sparse_holes),
		cmocka_unit_test(test_header_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
