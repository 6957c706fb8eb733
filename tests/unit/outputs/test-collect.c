/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-collect.c - the output collector against a hostile output tree.
 *
 * The tree is built in a temporary directory: good files, symlinks to a
 * canary outside the tree and to /etc/passwd, a fifo (the test dies by
 * alarm() if the collector blocks on it), a socket, a hard-link pair, a
 * 300-deep directory chain, names with a newline, a leading '-', invalid
 * UTF-8 and a bidi override, 1000 files against a cap of 5, a file over the
 * byte budget, a PNG named .csv.  Each must be rejected with its reason,
 * the canary must never reach quarantine or the artifacts, and promotion
 * must lay out exactly the valid files with mode 0644.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "collect.h"
#include "json.h"
#include "serve.h"
#include "util.h"
#include "validate.h"

/*
 * What the broker does with sbx-validate (validation.c), in this process:
 * each pending candidate through the validator's entry point, its verdict
 * taken by sbx_collect_apply().  The exchange itself is tested end to end
 * (tests/e2e/validate.sh).
 */
static int sbx_collect_validate(struct sbx_collection *c, char *const *allowed,
				struct sbx_error *err)
{
	_cleanup_json_ json_t *req = json_pack("{s:i,s:[],s:n}", "sbx_validate", 1, "allowed",
					       "outputs");
	_cleanup_free_ char *text = NULL;
	struct sbx_validator *val = NULL;
	char why[256];

	for (char *const *t = allowed; t && *t; t++)
		json_array_append_new(json_object_get(req, "allowed"), json_string(*t));
	text = json_dumps(req, JSON_COMPACT);
	if (sbx_validator_new(text, strlen(text), &val, why, sizeof(why)) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "%s", why);
	for (size_t i = 0; i < c->n; i++) {
		struct sbx_artifact *a = &c->items[i];
		struct sbx_verdict v;
		int fd;

		if (!sbx_collect_pending(a))
			continue;
		fd = sbx_collect_open_candidate(c, a, err);
		if (fd < 0) {
			sbx_validator_free(val);
			return -1;
		}
		sbx_validator_check(val, fd, a->path, a->size, &v);
		close(fd);
		sbx_collect_apply(c, a, &v, allowed, NULL);
	}
	sbx_validator_free(val);
	return 0;
}

#define CANARY "CANARY-7f3a-never-collect-me"

static char root[64];
static int outfd = -1;

static void xwrite_file(int dirfd, const char *name, const void *data, size_t n)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, data, n), (ssize_t)n);
	close(fd);
}

static void xwrite_str(int dirfd, const char *name, const char *s)
{
	xwrite_file(dirfd, name, s, strlen(s));
}

static int xmkdir(int dirfd, const char *name)
{
	int fd;

	assert_int_equal(mkdirat(dirfd, name, 0755), 0);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	return fd;
}

static uint32_t crc32_bits(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return c ^ 0xffffffffu;
}

static size_t png_chunk(unsigned char *o, const char *type, const unsigned char *d, uint32_t n)
{
	uint32_t crc;

	o[0] = (unsigned char)(n >> 24), o[1] = (unsigned char)(n >> 16);
	o[2] = (unsigned char)(n >> 8), o[3] = (unsigned char)n;
	memcpy(o + 4, type, 4);
	if (n)
		memcpy(o + 8, d, n);
	crc = crc32_bits(o + 4, 4 + n);
	o[8 + n] = (unsigned char)(crc >> 24), o[9 + n] = (unsigned char)(crc >> 16);
	o[10 + n] = (unsigned char)(crc >> 8), o[11 + n] = (unsigned char)crc;
	return 12 + n;
}

/* A 1x1 RGBA PNG (structurally valid; the validator does not inflate). */
static size_t make_png(unsigned char *o)
{
	static const unsigned char ihdr[13] = { 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0 };
	static const unsigned char idat[] = { 0x78, 0x9c, 0x63, 0x60, 0, 0, 0, 2, 0, 1 };
	size_t n = 8;

	memcpy(o, "\x89PNG\r\n\x1a\n", 8);
	n += png_chunk(o + n, "IHDR", ihdr, sizeof(ihdr));
	n += png_chunk(o + n, "IDAT", idat, sizeof(idat));
	n += png_chunk(o + n, "IEND", NULL, 0);
	return n;
}

static void rm_rf_at(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	if (fd < 0) {
		unlinkat(at, name, 0);
		return;
	}
	d = fdopendir(fd);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rm_rf_at(dirfd(d), de->d_name);
	closedir(d);
	unlinkat(at, name, AT_REMOVEDIR);
}

static int setup_root(void **state)
{
	int fd;

	snprintf(root, sizeof(root), "/tmp/sbx-test-collect-XXXXXX");
	assert_non_null(mkdtemp(root));
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	xwrite_str(fd, "canary.txt", CANARY "\n");
	assert_int_equal(mkdirat(fd, "q", 0700), 0);
	outfd = xmkdir(fd, "out");
	close(fd);
	return 0;
}

static int teardown_root(void **state)
{
	close(outfd);
	outfd = -1;
	rm_rf_at(AT_FDCWD, root);
	return 0;
}

static char *rpath(const char *rel)
{
	return sbx_xasprintf("%s/%s", root, rel);
}

static const struct sbx_artifact *find(const struct sbx_collection *c, const char *path)
{
	const struct sbx_artifact *a = sbx_collection_find(c, path);

	if (!a) {
		print_message("# missing from the listing: %s\n", path);
		for (size_t i = 0; i < c->n; i++)
			print_message("#   listed: %s\n", c->items[i].path);
	}
	assert_non_null(a);
	return a;
}

static void expect_rejected(const struct sbx_collection *c, const char *path, const char *why)
{
	const struct sbx_artifact *a = find(c, path);

	print_message("# %s: %s\n", a->path, a->reason ? a->reason : "(promoted)");
	assert_int_equal(a->status, SBX_ARTIFACT_REJECTED);
	assert_non_null(a->reason);
	assert_non_null(strstr(a->reason, why));
	/* Nothing rejected stays in quarantine. */
	assert_string_equal(a->qname, "");
}

static void expect_promoted(const struct sbx_collection *c, const char *path, const char *type)
{
	const struct sbx_artifact *a = find(c, path);

	if (a->reason)
		print_message("# %s: unexpectedly %s\n", a->path, a->reason);
	assert_int_equal(a->status, SBX_ARTIFACT_PROMOTED);
	assert_null(a->reason);
	assert_string_equal(a->media_type, type);
	assert_int_equal(strlen(a->sha256), 64);
}

/* True when any regular file below @dirfd contains @needle. */
static bool tree_contains(int at, const char *needle, unsigned *files)
{
	int fd = openat(at, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fdopendir(fd);
	struct dirent *de;
	bool found = false;

	assert_non_null(d);
	while ((de = readdir(d)) && !found) {
		struct stat st;
		char buf[1 << 16];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		assert_int_equal(fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW), 0);
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			found = tree_contains(sub, needle, files);
			close(sub);
		} else {
			int f;
			ssize_t n;

			/* Quarantine and artifacts hold regular files only. */
			assert_true(S_ISREG(st.st_mode));
			(*files)++;
			f = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC);
			assert_true(f >= 0);
			n = sbx_read_all(f, buf, sizeof(buf) - 1);
			assert_true(n >= 0);
			buf[n] = '\0';
			found = memmem(buf, (size_t)n, needle, strlen(needle)) != NULL;
			close(f);
		}
	}
	closedir(d);
	return found;
}

static void sha256_hex(const void *data, size_t n, char out[65])
{
	struct sha256_ctx ctx;
	uint8_t md[SHA256_DIGEST_SIZE];

	sha256_init(&ctx);
	sha256_update(&ctx, n, data);
	sha256_digest(&ctx, sizeof(md), md);
	sbx_hex(md, sizeof(md), out);
}

/* openat2 forced to ENOSYS: refuse with 69, never walk by path.  Runs in a
 * child because the test hook reads its variable once per process. */
/* Open @dir as sbx run does at the start, then promote into it. */
static int promote_to(struct sbx_collection *c, const char *dir, bool partial, bool retain,
		      struct sbx_error *err)
{
	struct sbx_artifacts_dir ad;
	int r = sbx_artifacts_dir_open(dir, &ad, err);

	if (r == 0)
		r = sbx_collect_promote(c, &ad, partial, retain, err);
	sbx_artifacts_dir_close(&ad);
	return r;
}

static void test_enosys(void **state)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct sbx_collect_limits lim = { .max_files = 5, .max_bytes = 1000, .max_depth = 16,
						  .max_name = 255, .max_entries_seen = 84 };
		struct sbx_collection c = { 0 };
		struct sbx_error err = { 0 };
		char *q = rpath("q");
		int r;

		setenv("SBX_TEST_ENOSYS", "openat2", 1);
		xwrite_str(outfd, "a.txt", "x\n");
		r = sbx_collect(outfd, &lim, q, &c, &err);
		r = r == -1 && err.code == SBX_EXIT_UNAVAILABLE && err.hint[0] && c.n == 0;
		sbx_collection_free(&c);
		_exit(r ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void build_hostile_tree(void)
{
	unsigned char png[128];
	size_t pn = make_png(png);
	char *big = sbx_xmalloc(2 << 20);
	_cleanup_free_ char *canary = rpath("canary.txt");
	_cleanup_free_ char *sock = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char longname[120];
	int sub, fd, s;

	xwrite_str(outfd, "good.csv", "a,b\n1,2\n");
	xwrite_str(outfd, "formula.csv", "a,b\n=HYPERLINK(1),2\n");
	xwrite_str(outfd, "colours.log", "\x1b[32mok\x1b[0m\n");
	xwrite_str(outfd, "osc.txt", "\x1b]52;c;eA==\x07\n");
	xwrite_file(outfd, "img.png", png, pn);
	xwrite_file(outfd, "misleading.csv", png, pn);
	xwrite_str(outfd, "report.pdf", "%PDF-1.4\n1 0 obj\n<<>>\nendobj\nstartxref\n9\n%%EOF\n");
	xwrite_str(outfd, "ragged.csv", "a,b\n1\n");
	xwrite_str(outfd, "page.html", "<html></html>\n");
	xwrite_str(outfd, "notes.md", "# Notes\n");
	sub = xmkdir(outfd, "sub");
	fd = xmkdir(sub, "dir");
	xwrite_str(fd, "report.txt", "hello\n");
	close(fd);
	close(sub);

	assert_int_equal(symlinkat(canary, outfd, "link.txt"), 0);
	assert_int_equal(symlinkat("../canary.txt", outfd, "rel-link.txt"), 0);
	assert_int_equal(symlinkat("/etc/passwd", outfd, "passwd.txt"), 0);
	assert_int_equal(symlinkat("..", outfd, "up"), 0);
	assert_int_equal(mkfifoat(outfd, "fifo.txt", 0644), 0);

	sock = rpath("out/sock.txt");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(s);

	xwrite_str(outfd, "hard1.txt", "shared\n");
	assert_int_equal(linkat(outfd, "hard1.txt", outfd, "hard2.txt", 0), 0);

	/* 300 levels of d/d/d/... with a file at the bottom. */
	fd = dup(outfd);
	for (int i = 0; i < 300; i++) {
		int next = xmkdir(fd, "d");
		close(fd);
		fd = next;
	}
	xwrite_str(fd, "deep.txt", "deep\n");
	close(fd);

	xwrite_str(outfd, "bad\nname.txt", "x\n");
	xwrite_str(outfd, "-rf.txt", "x\n");
	xwrite_str(outfd, "\xff\xfe.txt", "x\n");
	xwrite_str(outfd, "evil\xe2\x80\xaetxt.exe", "x\n");
	memset(longname, 'n', sizeof(longname));
	memcpy(longname + sizeof(longname) - 5, ".txt", 5);
	xwrite_str(outfd, longname, "x\n");
	sub = xmkdir(outfd, "ctl\x01" "dir");
	xwrite_str(sub, "inner.txt", "never seen\n");
	close(sub);

	memset(big, 'a', 2 << 20);
	xwrite_file(outfd, "big.txt", big, 2 << 20);
	free(big);
}

static void test_hostile_tree(void **state)
{
	struct sbx_collect_limits lim = {
		.max_files = 20,
		.max_bytes = 1 << 20,
		.max_depth = 16,
		.max_name = 100,
		.max_entries_seen = SBX_COLLECT_ENTRIES_FOR(20),
	};
	char *const allowed[] = { "text/csv", "text/plain", "image/png", NULL };
	struct sbx_collection c = { 0 };
	struct sbx_error err = { 0 };
	_cleanup_free_ char *q = rpath("q");
	_cleanup_free_ char *art = rpath("art/run1");
	_cleanup_free_ char *deep = NULL;
	_cleanup_free_ char *qpath = NULL;
	char hex[65], longshown[120];
	unsigned files = 0;
	struct stat st;
	int afd;

	build_hostile_tree();

	/* The fifo must not block the collector: die loudly if it does. */
	alarm(20);
	assert_int_equal(sbx_collect(outfd, &lim, q, &c, &err), 0);
	alarm(0);
	assert_false(c.walk_stopped);
	qpath = sbx_xstrdup(c.quarantine_path);
	assert_int_equal(stat(qpath, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);

	/* Nothing from outside the tree was read into quarantine. */
	assert_false(tree_contains(c.quarantine_dirfd, CANARY, &files));
	files = 0;
	assert_false(tree_contains(c.quarantine_dirfd, "root:", &files));

	expect_rejected(&c, "link.txt", "symbolic link");
	expect_rejected(&c, "rel-link.txt", "symbolic link");
	expect_rejected(&c, "passwd.txt", "symbolic link");
	expect_rejected(&c, "up", "symbolic link");
	expect_rejected(&c, "fifo.txt", "fifo");
	expect_rejected(&c, "sock.txt", "socket");
	expect_rejected(&c, "hard1.txt", "hard link");
	expect_rejected(&c, "hard2.txt", "hard link");
	expect_rejected(&c, "bad\\x0aname.txt", "control characters");
	expect_rejected(&c, "-rf.txt", "starts with '-'");
	expect_rejected(&c, "\\xff\\xfe.txt", "not valid UTF-8");
	expect_rejected(&c, "evil\\xe2\\x80\\xaetxt.exe", "bidirectional");
	expect_rejected(&c, "ctl\\x01dir", "control characters");
	assert_null(sbx_collection_find(&c, "ctl\\x01dir/inner.txt"));
	memset(longshown, 'n', sizeof(longshown));
	memcpy(longshown + sizeof(longshown) - 5, ".txt", 5);
	expect_rejected(&c, longshown, "name too long");
	expect_rejected(&c, "big.txt", "exceeds output_bytes");

	/* Sixteen levels are walked; the 17th directory is listed, not entered. */
	deep = sbx_xstrdup("d");
	for (int i = 1; i < 17; i++) {
		char *p = sbx_xasprintf("%s/d", deep);
		free(deep);
		deep = p;
	}
	expect_rejected(&c, deep, "nesting deeper than 16");

	/* No display path carries a control byte. */
	for (size_t i = 0; i < c.n; i++) {
		assert_false(sbx_has_control(c.items[i].path, strlen(c.items[i].path)));
		assert_true(sbx_utf8_valid(c.items[i].path, strlen(c.items[i].path)));
	}

	assert_int_equal(sbx_collect_validate(&c, allowed, &err), 0);
	expect_promoted(&c, "good.csv", "text/csv");
	expect_promoted(&c, "img.png", "image/png");
	expect_promoted(&c, "sub/dir/report.txt", "text/plain");
	/* text/markdown is not allowed here, text/plain is: .md is text. */
	expect_promoted(&c, "notes.md", "text/plain");
	expect_promoted(&c, "formula.csv", "text/csv");
	assert_true(find(&c, "formula.csv")->formula_cells);
	assert_false(find(&c, "good.csv")->formula_cells);
	/* What a validator flags reaches the artifact; a rejection clears it. */
	expect_promoted(&c, "colours.log", "text/plain");
	assert_int_equal(find(&c, "colours.log")->flags, SBX_MEDIA_FLAG_COLORS);
	assert_int_equal(find(&c, "good.csv")->flags, 0);
	expect_rejected(&c, "osc.txt", "terminal escape");
	assert_int_equal(find(&c, "osc.txt")->flags, 0);
	expect_rejected(&c, "misleading.csv", "content is image/png but the extension says text/csv");
	expect_rejected(&c, "report.pdf", "not in allowed_outputs");
	expect_rejected(&c, "ragged.csv", "record 2 has 1 fields");
	expect_rejected(&c, "page.html", "media type text/html is not in allowed_outputs");

	sha256_hex("a,b\n1,2\n", 8, hex);
	assert_string_equal(find(&c, "good.csv")->sha256, hex);
	assert_int_equal(find(&c, "good.csv")->size, 8);

	assert_int_equal(sbx_collect_check_artifacts_dir(art, &err), 0);
	assert_int_equal(promote_to(&c, art, false, false, &err), 0);

	/* Exactly the six valid files, 0644, same bytes. */
	afd = open(art, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(afd >= 0);
	files = 0;
	assert_false(tree_contains(afd, CANARY, &files));
	assert_int_equal(files, 6);
	assert_int_equal(fstatat(afd, "sub/dir/report.txt", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(fstatat(afd, "good.csv", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_size, 8);
	assert_int_equal(fstatat(afd, "link.txt", &st, AT_SYMLINK_NOFOLLOW), -1);
	close(afd);
	for (size_t i = 0; i < c.n; i++)
		assert_string_equal(c.items[i].qname, "");

	/* A second promotion into the now non-empty dir is a usage error. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_collect_check_artifacts_dir(art, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_USAGE);

	sbx_collection_free(&c);
	assert_int_equal(stat(qpath, &st), -1);
	assert_int_equal(errno, ENOENT);
}

/* 1000 files against max_files = 5: five candidates, the rest rejected,
 * and the walk stops at max_entries_seen with one "too many" entry. */
static void test_many_files(void **state)
{
	struct sbx_collect_limits lim = {
		.max_files = 5,
		.max_bytes = 1 << 20,
		.max_depth = 16,
		.max_name = 255,
		.max_entries_seen = SBX_COLLECT_ENTRIES_FOR(5),
	};
	struct sbx_collection c = { 0 };
	struct sbx_error err = { 0 };
	_cleanup_free_ char *q = rpath("q");
	size_t cand = 0, over = 0, stopped = 0;

	for (int i = 0; i < 1000; i++) {
		char name[32];
		snprintf(name, sizeof(name), "f%04d.txt", i);
		xwrite_str(outfd, name, "x\n");
	}
	assert_int_equal(sbx_collect(outfd, &lim, q, &c, &err), 0);
	assert_true(c.walk_stopped);
	assert_int_equal(c.n, lim.max_entries_seen + 1);
	assert_int_equal(c.files_found, lim.max_entries_seen);
	for (size_t i = 0; i < c.n; i++) {
		const struct sbx_artifact *a = &c.items[i];
		if (a->status == SBX_ARTIFACT_PROMOTED)
			cand++;
		else if (a->reason && strstr(a->reason, "exceeds output_files (5)"))
			over++;
		else if (a->reason && strstr(a->reason, "too many entries"))
			stopped++;
	}
	assert_int_equal(cand, 5);
	assert_int_equal(stopped, 1);
	assert_int_equal(over, c.n - 6);
	/* Sorted walk: the first five names are the candidates. */
	assert_int_equal(find(&c, "f0000.txt")->status, SBX_ARTIFACT_PROMOTED);
	assert_int_equal(find(&c, "f0004.txt")->status, SBX_ARTIFACT_PROMOTED);
	assert_int_equal(find(&c, "f0005.txt")->status, SBX_ARTIFACT_REJECTED);
	sbx_collection_free(&c);
}

static void test_artifacts_dir(void **state)
{
	_cleanup_free_ char *missing = rpath("a/b/c");
	_cleanup_free_ char *empty = rpath("empty");
	_cleanup_free_ char *full = rpath("full");
	_cleanup_free_ char *file = rpath("canary.txt");
	_cleanup_free_ char *keep = rpath("full/keep");
	struct sbx_collection c = { 0 };
	struct sbx_error err = { 0 };
	struct stat st;

	assert_int_equal(mkdir(empty, 0755), 0);
	assert_int_equal(mkdir(full, 0755), 0);
	assert_int_equal(mkdir(keep, 0755), 0);
	assert_int_equal(sbx_collect_check_artifacts_dir(missing, &err), 0);
	assert_int_equal(sbx_collect_check_artifacts_dir(empty, &err), 0);
	assert_int_equal(sbx_collect_check_artifacts_dir(full, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "not empty"));
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_collect_check_artifacts_dir(file, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_USAGE);

	/* Promotion refuses a non-empty dir too, and leaves it alone. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(promote_to(&c, full, false, false, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_USAGE);
	assert_int_equal(stat(keep, &st), 0);

	/* Parents are created. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(promote_to(&c, missing, false, false, &err), 0);
	assert_int_equal(stat(missing, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

/* Invisible characters and line or paragraph separators make a name read
 * as something it is not: rejected, like the bidi controls. */
static void test_invisible_names(void **state)
{
	static const char *const bad[] = {
		"zw\xe2\x80\x8bsp.txt",     /* U+200B zero width space */
		"ls\xe2\x80\xa8.txt",       /* U+2028 line separator */
		"ps\xe2\x80\xa9.txt",       /* U+2029 paragraph separator */
		"\xef\xbb\xbf" "bom.txt",   /* U+FEFF */
		"tag\xf3\xa0\x80\x81.txt", /* U+E0001 language tag */
		"tag\xf3\xa0\x81\xbf.txt", /* U+E007F cancel tag */
		"wj\xe2\x81\xa0.txt",       /* U+2060 word joiner */
		"lre\xe2\x80\xaa.txt",      /* U+202A */
		"pdi\xe2\x81\xa9.txt",      /* U+2069 */
	};
	struct sbx_collect_limits lim = { .max_files = 20, .max_bytes = 1 << 20, .max_depth = 16,
					  .max_name = 255, .max_entries_seen = SBX_COLLECT_ENTRIES_FOR(20) };
	char *const allowed[] = { "text/plain", NULL };
	struct sbx_collection c = { 0 };
	struct sbx_error err = { 0 };
	_cleanup_free_ char *q = rpath("q");

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		xwrite_str(outfd, bad[i], "x\n");
	/* Visible non-ASCII stays fine: e-acute, CJK, an emoji (U+1F600). */
	xwrite_str(outfd, "r\xc3\xa9sum\xc3\xa9.txt", "x\n");
	xwrite_str(outfd, "\xe6\x97\xa5\xe6\x9c\xac.txt", "x\n");
	xwrite_str(outfd, "\xf0\x9f\x98\x80.txt", "x\n");
	assert_int_equal(sbx_collect(outfd, &lim, q, &c, &err), 0);
	assert_int_equal(sbx_collect_validate(&c, allowed, &err), 0);
	assert_int_equal(c.n, ARRAY_SIZE(bad) + 3);
	for (size_t i = 0; i < c.n; i++) {
		const struct sbx_artifact *a = &c.items[i];
		bool visible = !strcmp(a->path, "r\xc3\xa9sum\xc3\xa9.txt") ||
			       !strcmp(a->path, "\xe6\x97\xa5\xe6\x9c\xac.txt") ||
			       !strcmp(a->path, "\xf0\x9f\x98\x80.txt");

		if (visible != (a->status == SBX_ARTIFACT_PROMOTED))
			fail_msg("%s: %s", a->path, a->reason ? a->reason : "promoted");
		if (!visible) {
			assert_non_null(strstr(a->reason, "invisible"));
			assert_non_null(strstr(a->path, "\\x"));
		}
	}
	sbx_collection_free(&c);
}

/* A name rejected for its bytes is shown with \xNN escapes; a file
 * literally named like that display form must not share its path. */
static void test_display_paths_unique(void **state)
{
	struct sbx_collect_limits lim = { .max_files = 20, .max_bytes = 1 << 20, .max_depth = 16,
					  .max_name = 255, .max_entries_seen = SBX_COLLECT_ENTRIES_FOR(20) };
	struct sbx_collection c = { 0 };
	struct sbx_error err = { 0 };
	_cleanup_free_ char *q = rpath("q");

	xwrite_str(outfd, "a\\x01.txt", "literal\n");
	xwrite_str(outfd, "a\x01.txt", "control\n");
	xwrite_str(outfd, "b\\x5cx01.txt", "literal\n");
	xwrite_str(outfd, "b\\\x01.txt", "both\n");
	xwrite_str(outfd, "ok.txt", "fine\n");
	assert_int_equal(sbx_collect(outfd, &lim, q, &c, &err), 0);
	assert_int_equal(c.n, 5);
	for (size_t i = 0; i < c.n; i++)
		for (size_t k = i + 1; k < c.n; k++)
			assert_string_not_equal(c.items[i].path, c.items[k].path);
	expect_rejected(&c, "a\\x01.txt", "control characters");
	expect_rejected(&c, "a\\x5cx01.txt", "backslash");
	expect_rejected(&c, "b\\x5cx5cx01.txt", "backslash");
	expect_rejected(&c, "b\\x5c\\x01.txt", "control characters");
	assert_int_equal(find(&c, "ok.txt")->status, SBX_ARTIFACT_PROMOTED);
	sbx_collection_free(&c);
}

static bool empty_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	bool empty = d != NULL;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	if (d)
		closedir(d);
	return empty;
}

/* --artifacts is resolved once, at the start: a symlink at DIR is refused,
 * a component swapped for a symlink later is never followed. */
static void test_artifacts_dir_symlinks(void **state)
{
	_cleanup_free_ char *aim = rpath("aim");
	_cleanup_free_ char *link = rpath("link");
	_cleanup_free_ char *p = rpath("p");
	_cleanup_free_ char *pnew = rpath("p/new");
	_cleanup_free_ char *pout = rpath("p/new/out");
	_cleanup_free_ char *q = rpath("q2");
	_cleanup_free_ char *qmoved = rpath("q2.moved");
	_cleanup_free_ char *qout = rpath("q2/out");
	_cleanup_free_ char *qmoved_out = rpath("q2.moved/out");
	struct sbx_collection c = { 0 };
	struct sbx_artifacts_dir ad;
	struct sbx_error err = { 0 };
	struct stat st;

	assert_int_equal(mkdir(aim, 0755), 0);
	assert_int_equal(symlink(aim, link), 0);
	assert_int_equal(sbx_artifacts_dir_open(link, &ad, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_USAGE);
	assert_non_null(strstr(err.msg, "symbolic link"));
	sbx_artifacts_dir_close(&ad);

	/* A missing component appears as a symlink after the start. */
	assert_int_equal(mkdir(p, 0755), 0);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_artifacts_dir_open(pout, &ad, &err), 0);
	assert_int_equal(symlink(aim, pnew), 0);
	assert_int_equal(sbx_collect_promote(&c, &ad, false, false, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_SOFTWARE);
	assert_non_null(strstr(err.msg, "symbolic link"));
	sbx_artifacts_dir_close(&ad);
	assert_true(empty_dir(aim));

	/* The opened parent moves and a symlink takes its name: the
	 * artifacts directory is made in the directory opened at the start. */
	assert_int_equal(mkdir(q, 0755), 0);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_artifacts_dir_open(qout, &ad, &err), 0);
	assert_int_equal(rename(q, qmoved), 0);
	assert_int_equal(symlink(aim, q), 0);
	assert_int_equal(sbx_collect_promote(&c, &ad, false, false, &err), 0);
	sbx_artifacts_dir_close(&ad);
	assert_true(empty_dir(aim));
	assert_int_equal(lstat(qmoved_out, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

static void collect_two(struct sbx_collection *c)
{
	struct sbx_collect_limits lim = { .max_files = 10, .max_bytes = 1 << 20, .max_depth = 16,
					  .max_name = 255, .max_entries_seen = SBX_COLLECT_ENTRIES_FOR(10) };
	char *const allowed[] = { "text/plain", NULL };
	struct sbx_error err = { 0 };
	_cleanup_free_ char *q = rpath("q");

	xwrite_str(outfd, "one.txt", "1\n");
	xwrite_str(outfd, "two.txt", "2\n");
	assert_int_equal(sbx_collect(outfd, &lim, q, c, &err), 0);
	assert_int_equal(sbx_collect_validate(c, allowed, &err), 0);
}

static void test_partial(void **state)
{
	_cleanup_free_ char *discard = rpath("art-discard");
	_cleanup_free_ char *retain = rpath("art-retain");
	_cleanup_free_ char *one = rpath("art-retain/one.txt");
	struct sbx_collection c = { 0 };
	struct sbx_error err = { 0 };
	unsigned files = 0;
	struct stat st;
	int fd;

	collect_two(&c);
	assert_int_equal(promote_to(&c, discard, true, false, &err), 0);
	for (size_t i = 0; i < c.n; i++) {
		assert_int_equal(c.items[i].status, SBX_ARTIFACT_DISCARDED);
		assert_string_equal(c.items[i].reason, "run did not complete");
		assert_false(c.items[i].partial);
	}
	fd = open(discard, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	tree_contains(fd, "x", &files);
	assert_int_equal(files, 0);
	close(fd);
	sbx_collection_free(&c);

	c = (struct sbx_collection){ 0 };
	collect_two(&c);
	assert_int_equal(promote_to(&c, retain, true, true, &err), 0);
	for (size_t i = 0; i < c.n; i++) {
		assert_int_equal(c.items[i].status, SBX_ARTIFACT_PROMOTED);
		assert_true(c.items[i].partial);
	}
	assert_int_equal(stat(one, &st), 0);
	sbx_collection_free(&c);
}

/*
 * Held outputs: what is marked hold goes to the held directory (0600, under
 * the caller's name), the rest is promoted as before; sbx_collect_release()
 * then delivers a held file only while it is what was held, never through
 * a symlink, never over an existing file, and leaves nothing behind.
 */
static void test_hold_release(void **state)
{
	_cleanup_free_ char *held = rpath("held"), *art = rpath("art-held");
	_cleanup_close_ int hfd = -1, afd = -1, rfd = -1;
	struct sbx_collection c = { 0 };
	struct sbx_error err = { 0 };
	const struct sbx_artifact *one, *two;
	char sha1[65], sha2[65];
	const char *why = NULL;
	unsigned files = 0;
	struct stat st;

	collect_two(&c);
	one = find(&c, "one.txt");
	two = find(&c, "two.txt");
	strcpy(sha1, one->sha256);
	strcpy(sha2, two->sha256);
	assert_int_equal(mkdir(held, 0700), 0);
	hfd = open(held, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(hfd >= 0);
	/* Not asked to: untouched. */
	assert_int_equal(sbx_collect_hold(&c, (struct sbx_artifact *)one, hfd, "h000001", &err), 0);
	assert_int_equal(one->status, SBX_ARTIFACT_PROMOTED);
	((struct sbx_artifact *)one)->hold = true;
	assert_int_equal(sbx_collect_hold(&c, (struct sbx_artifact *)one, hfd, "h000001", &err), 1);
	assert_int_equal(one->status, SBX_ARTIFACT_HELD);
	assert_int_equal(fstatat(hfd, "h000001", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* A name taken in the held directory is never replaced. */
	xwrite_str(hfd, "h000002", CANARY);
	((struct sbx_artifact *)two)->hold = true;
	assert_int_equal(sbx_collect_hold(&c, (struct sbx_artifact *)two, hfd, "h000002", &err), -1);
	assert_int_equal(two->status, SBX_ARTIFACT_REJECTED);
	unlinkat(hfd, "h000002", 0);
	/* Promotion skips what is held. */
	assert_int_equal(promote_to(&c, art, false, false, &err), 0);
	assert_int_equal(one->status, SBX_ARTIFACT_HELD);
	afd = open(art, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(afd >= 0);
	tree_contains(afd, "x", &files);
	assert_int_equal(files, 0);
	sbx_collection_free(&c);

	/* The held file, released: digest checked, 0644, held copy gone. */
	assert_int_equal(sbx_collect_release(hfd, "h000001", 2, sha2, afd, "a/one.txt", &why, &err), 1);
	assert_string_equal(why, "the held file changed since it was held (sha256)");
	assert_int_equal(fstatat(afd, "a/one.txt", &st, 0), -1);
	assert_int_equal(fstatat(hfd, "h000001", &st, 0), 0);
	assert_int_equal(sbx_collect_release(hfd, "h000001", 3, sha1, afd, "a/one.txt", &why, &err), 1);
	assert_string_equal(why, "the held file changed since it was held (size)");
	/* A symlink on the way in the artifacts directory is not followed. */
	assert_int_equal(symlinkat(root, afd, "b"), 0);
	assert_int_equal(sbx_collect_release(hfd, "h000001", 2, sha1, afd, "b/one.txt", &why, &err), 1);
	assert_non_null(strstr(why, "symbolic link"));
	assert_int_equal(unlinkat(afd, "b", 0), 0);
	/* An existing file is not replaced. */
	xwrite_str(afd, "taken.txt", "mine\n");
	assert_int_equal(sbx_collect_release(hfd, "h000001", 2, sha1, afd, "taken.txt", &why, &err), 1);
	assert_string_equal(why, "a file of that name exists in the artifacts directory");
	assert_int_equal(sbx_collect_release(hfd, "h000001", 2, sha1, afd, "a/one.txt", &why, &err), 0);
	assert_null(why);
	assert_int_equal(fstatat(afd, "a/one.txt", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(fstatat(hfd, "h000001", &st, AT_SYMLINK_NOFOLLOW), -1);
	/* Gone now; and a held name swapped for a symlink to the canary. */
	assert_int_equal(sbx_collect_release(hfd, "h000001", 2, sha1, afd, "again.txt", &why, &err), 1);
	assert_string_equal(why, "the held file is gone");
	rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_int_equal(symlinkat("../canary.txt", hfd, "h000003"), 0);
	sha256_hex(CANARY "\n", strlen(CANARY) + 1, sha1);
	assert_int_equal(sbx_collect_release(hfd, "h000003", strlen(CANARY) + 1, sha1, afd, "c.txt",
					     &why, &err), 1);
	assert_string_equal(why, "the held file was replaced by a symbolic link");
	assert_false(tree_contains(afd, CANARY, &files));
	assert_int_equal(fstatat(afd, "c.txt", &st, AT_SYMLINK_NOFOLLOW), -1);
	/* A hard link to it is refused as well (one link only). */
	assert_int_equal(linkat(rfd, "canary.txt", hfd, "h000004", 0), 0);
	assert_int_equal(sbx_collect_release(hfd, "h000004", strlen(CANARY) + 1, sha1, afd, "d.txt",
					     &why, &err), 1);
	assert_string_equal(why, "the held file is no longer a regular file with one link");
	assert_false(tree_contains(afd, CANARY, &files));
}

/* A file that is not valid is rejected and is not left in quarantine; a
 * collection that is freed without promotion leaves nothing behind. */
static void test_free_without_promote(void **state)
{
	struct sbx_collection c = { 0 };
	_cleanup_free_ char *qpath = NULL;
	struct stat st;

	collect_two(&c);
	qpath = sbx_xstrdup(c.quarantine_path);
	assert_int_equal(stat(qpath, &st), 0);
	sbx_collection_free(&c);
	assert_int_equal(stat(qpath, &st), -1);
}

/* Quarantine on another filesystem than the artifacts (tmpfs /dev/shm vs
 * the test root): rename fails with EXDEV and the file is copied, still
 * O_EXCL and 0644. */
static void test_promote_exdev(void **state)
{
	struct sbx_collect_limits lim = { .max_files = 10, .max_bytes = 1 << 20, .max_depth = 16,
					  .max_name = 255, .max_entries_seen = SBX_COLLECT_ENTRIES_FOR(10) };
	char *const allowed[] = { "text/plain", NULL };
	char shm[] = "/dev/shm/sbx-test-collect-XXXXXX";
	_cleanup_free_ char *art = rpath("art-exdev");
	_cleanup_free_ char *two = rpath("art-exdev/sub/two.txt");
	struct sbx_collection c = { 0 };
	struct sbx_error err = { 0 };
	struct stat a, b;
	char buf[8] = { 0 };
	int fd, sub;

	assert_non_null(mkdtemp(shm));
	assert_int_equal(stat(shm, &a), 0);
	assert_int_equal(stat(root, &b), 0);
	if (a.st_dev == b.st_dev)
		print_message("# /dev/shm and the test root share a filesystem: rename path only\n");
	sub = xmkdir(outfd, "sub");
	xwrite_str(sub, "two.txt", "2\n");
	close(sub);
	umask(077);
	assert_int_equal(sbx_collect(outfd, &lim, shm, &c, &err), 0);
	assert_int_equal(sbx_collect_validate(&c, allowed, &err), 0);
	assert_int_equal(promote_to(&c, art, false, false, &err), 0);
	umask(022);
	expect_promoted(&c, "sub/two.txt", "text/plain");
	assert_int_equal(stat(two, &a), 0);
	assert_int_equal(a.st_mode & 07777, 0644);
	fd = open(two, O_RDONLY | O_CLOEXEC);
	assert_int_equal(sbx_read_all(fd, buf, sizeof(buf) - 1), 2);
	assert_string_equal(buf, "2\n");
	close(fd);
	sbx_collection_free(&c);
	assert_int_equal(rmdir(shm), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* First: the ENOSYS hook is read once per process. */
		cmocka_unit_test_setup_teardown(test_enosys, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_hostile_tree, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_many_files, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_artifacts_dir, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_artifacts_dir_symlinks, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_display_paths_unique, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_invisible_names, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_partial, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_hold_release, setup_root, teardown_root),
		cmocka_unit_test_setup_teardown(test_free_without_promote, setup_root,
						teardown_root),
		cmocka_unit_test_setup_teardown(test_promote_exdev, setup_root, teardown_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
