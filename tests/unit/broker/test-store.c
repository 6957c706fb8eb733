/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-store - the principal-scoped input store: resolution, copy caps,
 * and materialization (with the sbx-extract helper from the build tree).
 */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "store.h"

/* As root, sbx writes /work/in as the id the sandbox user maps to (run.c
 * sets fsuid/fsgid), and the archive helper then runs as that id: the
 * test does what run.c does, with the first id of the default root_ids. */
#define SANDBOX_OUTER_ID 2130706432

static void own_in(const char *in)
{
	if (geteuid() == 0)
		assert_int_equal(chown(in, SANDBOX_OUTER_ID, SANDBOX_OUTER_ID), 0);
}

static int materialize_as_sandbox(const struct sbx_store *store, char *const *handles,
				  char *const *extract, int in_dirfd, uint64_t per_input_max,
				  uint64_t total_max, struct sbx_error *err)
{
	bool root = geteuid() == 0;
	int r;

	if (root) {
		setfsgid(SANDBOX_OUTER_ID);
		setfsuid(SANDBOX_OUTER_ID);
	}
	r = sbx_store_materialize(store, handles, extract, in_dirfd,
				  per_input_max, total_max, NULL, err);
	if (root) {
		setfsuid(0);
		setfsgid(0);
	}
	return r;
}

struct fixture {
	char *root;      /* STORE */
	char *in;        /* a /work/in stand-in */
	struct sbx_store alice; /* the principal's part of the store */
	int in_fd;
};

static void write_file(const char *dir, const char *name, const char *data, size_t len)
{
	char *p = sbx_xasprintf("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, data, len), (ssize_t)len);
	close(fd);
	free(p);
}

static void write_tar(const char *dir, const char *name, const char *entry, const char *data)
{
	char *p = sbx_xasprintf("%s/%s", dir, name);
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();

	archive_write_set_format_pax_restricted(a);
	archive_write_add_filter_gzip(a);
	assert_int_equal(archive_write_open_filename(a, p), ARCHIVE_OK);
	archive_entry_set_pathname(e, entry);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0600);
	archive_entry_set_size(e, (la_int64_t)strlen(data));
	assert_true(archive_write_header(a, e) >= ARCHIVE_WARN); /* WARN: raw non-ASCII name */
	assert_int_equal(archive_write_data(a, data, strlen(data)), (la_ssize_t)strlen(data));
	archive_entry_free(e);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	free(p);
}

static int setup(void **state)
{
	struct fixture *f = sbx_xcalloc(1, sizeof(*f));
	const char *base = getenv("TMPDIR");
	char *alice, *bob, *p;
	static char big[4096];
	struct sbx_error err = { 0 };

	f->root = sbx_xasprintf("%s/sbx-test-store.XXXXXX", base && *base ? base : "/tmp");
	assert_non_null(mkdtemp(f->root));
	alice = sbx_xasprintf("%s/alice", f->root);
	bob = sbx_xasprintf("%s/bob", f->root);
	f->in = sbx_xasprintf("%s/in", f->root);
	assert_int_equal(mkdir(alice, 0755), 0);
	assert_int_equal(mkdir(bob, 0755), 0);
	assert_int_equal(mkdir(f->in, 0755), 0);
	own_in(f->in);
	write_file(alice, "data.csv", "a,b\n1,2\n", 8);
	memset(big, 'x', sizeof(big));
	write_file(alice, "big.txt", big, sizeof(big));
	write_file(bob, "secret.txt", "bob's\n", 6);
	write_tar(alice, "good.tgz", "dir/f.txt", "inside\n");
	write_tar(alice, "evil.tgz", "../escape", "evil\n");
	write_tar(alice, "utf8.tgz", "r\xc3\xa9sum\xc3\xa9/\xc3\xbc.txt", "utf8\n");
	p = sbx_xasprintf("%s/link", alice);
	assert_int_equal(symlink("../bob/secret.txt", p), 0);
	free(p);
	p = sbx_xasprintf("%s/dir", alice);
	assert_int_equal(mkdir(p, 0755), 0);
	free(p);
	p = sbx_xasprintf("%s/fifo", alice);
	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);
	/* A hard link in alice's store to bob's file. */
	{
		char *src = sbx_xasprintf("%s/secret.txt", bob);
		p = sbx_xasprintf("%s/hardlink.txt", alice);
		assert_int_equal(link(src, p), 0);
		free(src);
		free(p);
	}

	assert_int_equal(sbx_store_open(f->root, "--store", "alice", &f->alice, &err), 0);
	assert_true(f->alice.fd >= 0);
	f->in_fd = open(f->in, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(f->in_fd >= 0);
	free(alice);
	free(bob);
	*state = f;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	sbx_store_close(&f->alice);
	close(f->in_fd);
	nftw(f->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f->root);
	free(f->in);
	free(f);
	return 0;
}

static size_t count_in(struct fixture *f)
{
	DIR *d = opendir(f->in);
	struct dirent *de;
	size_t n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_principal_names(void **state)
{
	static const struct {
		const char *name;
		bool ok;
	} table[] = {
		{ "alice", true }, { "_svc", true }, { "a-b_9", true },
		{ "abcdefghijklmnopqrstuvwxyz012345", true },   /* 32 */
		{ "abcdefghijklmnopqrstuvwxyz0123456", false }, /* 33 */
		{ "", false }, { "Alice", false }, { "9lives", false }, { "-x", false },
		{ "a/b", false }, { "..", false }, { "a.b", false }, { "a b", false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (sbx_principal_name_valid(table[i].name) != table[i].ok)
			fail_msg("principal \"%s\": expected %s", table[i].name,
				 table[i].ok ? "valid" : "invalid");
	assert_false(sbx_principal_name_valid(NULL));
}

static void test_store_root(void **state)
{
	struct sbx_error err = { 0 };
	char *home = getenv("HOME") ? sbx_xstrdup(getenv("HOME")) : NULL;
	char *out = NULL;

	const char *origin = NULL;

	assert_int_equal(sbx_store_root("/opt/s", "/cfg/s", &out, &origin, &err), 0);
	assert_string_equal(out, "/opt/s");
	assert_string_equal(origin, "--store");
	free(out);
	assert_int_equal(sbx_store_root(NULL, "/cfg/s", &out, &origin, &err), 0);
	assert_string_equal(out, "/cfg/s");
	assert_string_equal(origin, "the host config's \"store\"");
	free(out);
	setenv("XDG_DATA_HOME", "/xdg", 1);
	assert_int_equal(sbx_store_root(NULL, NULL, &out, &origin, &err), 0);
	assert_string_equal(out, "/xdg/sbx/store");
	assert_string_equal(origin, "the default, $XDG_DATA_HOME/sbx/store");
	free(out);
	/* A relative XDG_DATA_HOME is ignored, as the XDG spec says. */
	setenv("XDG_DATA_HOME", "rel", 1);
	setenv("HOME", "/home/u", 1);
	assert_int_equal(sbx_store_root(NULL, NULL, &out, NULL, &err), 0);
	assert_string_equal(out, "/home/u/.local/share/sbx/store");
	free(out);
	unsetenv("XDG_DATA_HOME");
	if (home)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
	free(home);
}

static void test_open_principal(void **state)
{
	struct fixture *f = *state;
	struct sbx_error err = { 0 };
	struct sbx_store s = SBX_STORE_INIT;
	char *missing = sbx_xasprintf("%s/nonexistent", f->root);

	/* No directory for carol: not an error, every handle refused. */
	assert_int_equal(sbx_store_open(f->root, "--store", "carol", &s, &err), 0);
	assert_int_equal(s.fd, -1);
	assert_int_equal(s.missing, SBX_STORE_NO_PRINCIPAL);
	sbx_store_close(&s);
	assert_int_equal(sbx_store_open(missing, "--store", "alice", &s, &err), 0);
	assert_int_equal(s.fd, -1);
	assert_int_equal(s.missing, SBX_STORE_NO_ROOT);
	sbx_store_close(&s);
	free(missing);
	assert_int_equal(sbx_store_open(f->root, "--store", "../alice", &s, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_USAGE);
	assert_int_equal(s.fd, -1);
	sbx_store_close(&s);
}

/* A refusal (77) whose message is `handle "H" not found for principal
 * "alice": ` and then @detail, and whose errno is @errnum. */
static void expect_refused(const struct sbx_store *s, const char *handle, const char *detail,
			   int errnum)
{
	struct sbx_error err = { 0 };
	struct stat st;
	char want[1024];
	int fd = 42;

	assert_int_equal(sbx_store_resolve(s, handle, &fd, &st, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_REFUSED);
	assert_int_equal(fd, -1);
	assert_int_equal(err.errnum, errnum);
	snprintf(want, sizeof(want), "handle \"%s\" not found for principal \"alice\": %s", handle,
		 detail);
	assert_string_equal(err.msg, want);
}

static void test_resolve(void **state)
{
	struct fixture *f = *state;
	struct sbx_error err = { 0 };
	struct sbx_store none = SBX_STORE_INIT;
	struct stat st;
	char d[1024];
	int fd = -1;

	assert_int_equal(sbx_store_resolve(&f->alice, "data.csv", &fd, &st, &err), 0);
	assert_true(fd >= 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 8);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);

	alarm(10); /* a fifo opened without O_NONBLOCK would hang here */
	/* Each refusal names the path in alice's directory and what is
	 * wrong with it; bob's file is "missing" for alice like any other. */
	snprintf(d, sizeof(d), "%s/alice/secret.txt does not exist", f->root);
	expect_refused(&f->alice, "secret.txt", d, 0); /* bob's */
	snprintf(d, sizeof(d), "%s/alice/missing does not exist", f->root);
	expect_refused(&f->alice, "missing", d, 0);
	snprintf(d, sizeof(d), "%s/alice/link is a symlink; a handle must be a regular file", f->root);
	expect_refused(&f->alice, "link", d, 0);       /* symlink to bob's */
	snprintf(d, sizeof(d), "%s/alice/dir is a directory, not a regular file", f->root);
	expect_refused(&f->alice, "dir", d, 0);
	snprintf(d, sizeof(d), "%s/alice/fifo is a fifo, not a regular file", f->root);
	expect_refused(&f->alice, "fifo", d, 0);
	alarm(0);

	/* Not readable by the caller (root reads anything). */
	if (geteuid() != 0) {
		char *p = sbx_xasprintf("%s/alice/data.csv", f->root);

		assert_int_equal(chmod(p, 0), 0);
		snprintf(d, sizeof(d), "%s/alice/data.csv", f->root);
		expect_refused(&f->alice, "data.csv", d, EACCES);
		assert_int_equal(chmod(p, 0644), 0);
		free(p);
	} else {
		print_message("# root reads a mode 000 file: tests/e2e/diag.sh checks the "
			      "refusal as the user\n");
	}

	/* Another name of a file (bob's, here) is no handle of alice's. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_store_resolve(&f->alice, "hardlink.txt", &fd, &st, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_REFUSED);
	assert_non_null(strstr(err.msg, "hard link"));
	assert_int_equal(fd, -1);

	/* A principal without a directory, a store that does not exist:
	 * the refusal names the path to create (and where the store's came
	 * from, with a hint). */
	{
		char *empty = sbx_xasprintf("%s/empty", f->root);

		assert_int_equal(mkdir(empty, 0755), 0);
		assert_int_equal(sbx_store_open(empty, "--store", "alice", &none, &err), 0);
		snprintf(d, sizeof(d),
			 "the principal's directory %s/alice does not exist in the store", empty);
		expect_refused(&none, "data.csv", d, 0);
		sbx_store_close(&none);
		free(empty);
	}
	{
		char *gone = sbx_xasprintf("%s/gone", f->root);

		assert_int_equal(sbx_store_open(gone, "the host config's \"store\"", "alice", &none,
						&err), 0);
		snprintf(d, sizeof(d), "the store %s (the host config's \"store\") does not exist",
			 gone);
		expect_refused(&none, "data.csv", d, 0);
		err = (struct sbx_error){ 0 };
		assert_int_equal(sbx_store_resolve(&none, "data.csv", &fd, &st, &err), -1);
		assert_non_null(strstr(err.hint, "--store"));
		sbx_store_close(&none);
		free(gone);
	}

	/* Names with a path in them never reach openat2. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_store_resolve(&f->alice, "../bob/secret.txt", &fd, &st, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_INVALID);
}

static void test_copy(void **state)
{
	struct fixture *f = *state;
	struct sbx_error err = { 0 };
	struct stat st;
	uint64_t n = 0;
	char buf[16] = "";
	int fd, out;

	assert_int_equal(sbx_store_resolve(&f->alice, "big.txt", &fd, &st, &err), 0);
	umask(077);
	assert_int_equal(sbx_store_copy(fd, f->in_fd, "exact", 4096, &n, &err), 0);
	umask(022);
	assert_int_equal(n, 4096);
	assert_int_equal(fstatat(f->in_fd, "exact", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_size, 4096);
	assert_int_equal(st.st_mode & 07777, 0644);

	/* One byte over the cap: refused, and no partial file remains. */
	assert_int_equal(sbx_store_copy(fd, f->in_fd, "over", 4095, &n, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_REFUSED);
	assert_non_null(strstr(err.msg, "4095"));
	assert_int_equal(faccessat(f->in_fd, "over", F_OK, AT_SYMLINK_NOFOLLOW), -1);

	/* The destination is created, never overwritten. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_store_copy(fd, f->in_fd, "exact", 1 << 20, &n, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_SOFTWARE);
	assert_int_equal(err.errnum, EEXIST);
	close(fd);

	assert_int_equal(sbx_store_resolve(&f->alice, "data.csv", &fd, &st, &err), 0);
	assert_int_equal(lseek(fd, 3, SEEK_SET), 3); /* copies from offset 0 anyway */
	assert_int_equal(sbx_store_copy(fd, f->in_fd, "small", 8, &n, &err), 0);
	close(fd);
	out = openat(f->in_fd, "small", O_RDONLY | O_CLOEXEC);
	assert_int_equal(read(out, buf, sizeof(buf)), 8);
	assert_memory_equal(buf, "a,b\n1,2\n", 8);
	close(out);
	unlinkat(f->in_fd, "exact", 0);
	unlinkat(f->in_fd, "small", 0);
}

static void test_materialize_refusals(void **state)
{
	struct fixture *f = *state;
	char *bad_second[] = { "data.csv", "secret.txt", NULL };
	char *too_big[] = { "data.csv", "big.txt", NULL };
	char *evil[] = { "data.csv", "evil.tgz", NULL };
	char *none[] = { NULL };
	struct sbx_error err = { 0 };

	/* A bad handle anywhere: nothing at all is written. */
	assert_int_equal(materialize_as_sandbox(&f->alice, bad_second, none, f->in_fd,
					       1 << 20, 1 << 20, &err),
			 -1);
	assert_int_equal(err.code, SBX_EXIT_REFUSED);
	{
		char *want = sbx_xasprintf("input_handles[1]: handle \"secret.txt\" not found for "
					   "principal \"alice\": %s/alice/secret.txt does not exist",
					   f->root);

		assert_string_equal(err.msg, want);
		free(want);
	}
	assert_int_equal(count_in(f), 0);

	/* Per-input and total caps are checked before writing too. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(materialize_as_sandbox(&f->alice, too_big, none, f->in_fd, 4000,
					       1 << 20, &err),
			 -1);
	assert_int_equal(err.code, SBX_EXIT_REFUSED);
	assert_non_null(strstr(err.msg, "input_handles[1]: \"big.txt\" is 4096 bytes"));
	assert_int_equal(count_in(f), 0);
	err = (struct sbx_error){ 0 };
	assert_int_equal(materialize_as_sandbox(&f->alice, too_big, none, f->in_fd, 4096,
					       4100, &err),
			 -1);
	assert_int_equal(err.code, SBX_EXIT_REFUSED);
	assert_non_null(strstr(err.msg, "in total"));
	assert_int_equal(count_in(f), 0);

	/* extract must name an input handle. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(materialize_as_sandbox(&f->alice, too_big, evil + 1, f->in_fd,
					       1 << 20, 1 << 20, &err),
			 -1);
	assert_int_equal(err.code, SBX_EXIT_INVALID);

	/* A hostile archive is refused by the helper, naming the entry. */
	err = (struct sbx_error){ 0 };
	assert_int_equal(materialize_as_sandbox(&f->alice, evil, evil + 1, f->in_fd,
					       1 << 20, 1 << 20, &err),
			 -1);
	assert_int_equal(err.code, SBX_EXIT_REFUSED);
	assert_string_equal(err.msg, "input_handles[1]: archive \"evil.tgz\": entry \"../escape\": "
				     "\"..\" path component");
	assert_int_equal(faccessat(f->in_fd, "escape", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	/* (what was written before the refusal is the caller's to discard) */
	unlinkat(f->in_fd, "data.csv", 0);
	unlinkat(f->in_fd, "evil.tgz", AT_REMOVEDIR);
	assert_int_equal(count_in(f), 0);
}

static void test_materialize(void **state)
{
	struct fixture *f = *state;
	char *handles[] = { "data.csv", "good.tgz", "big.txt", "utf8.tgz", NULL };
	char *extract[] = { "good.tgz", "utf8.tgz", NULL };
	struct sbx_error err = { 0 };
	char buf[32] = "";
	struct stat st;
	int fd;

	if (materialize_as_sandbox(&f->alice, handles, extract, f->in_fd, 1 << 20, 1 << 20,
				  &err) < 0)
		fail_msg("materialize: %s (%s)", err.msg, err.hint);
	assert_int_equal(count_in(f), 4);
	/* Non-ASCII UTF-8 names survive the helper's locale. */
	assert_int_equal(fstatat(f->in_fd, "utf8.tgz/r\xc3\xa9sum\xc3\xa9/\xc3\xbc.txt", &st,
				 AT_SYMLINK_NOFOLLOW),
			 0);
	fd = openat(f->in_fd, "good.tgz/dir/f.txt", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* As root, the helper ran as the sandbox's id, not as root. */
	if (geteuid() == 0)
		assert_int_equal(st.st_uid, SANDBOX_OUTER_ID);
	assert_int_equal(read(fd, buf, sizeof(buf)), 7);
	assert_memory_equal(buf, "inside\n", 7);
	close(fd);
	assert_int_equal(fstatat(f->in_fd, "good.tgz", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(fstatat(f->in_fd, "big.txt", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_size, 4096);

	/* The total cap counts extracted bytes: 8 + 7 + 4096 > 4100. */
	handles[3] = NULL;
	extract[1] = NULL;
	nftw(f->in, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	assert_int_equal(mkdir(f->in, 0755), 0);
	own_in(f->in);
	close(f->in_fd);
	f->in_fd = open(f->in, O_PATH | O_DIRECTORY | O_CLOEXEC);
	err = (struct sbx_error){ 0 };
	assert_int_equal(materialize_as_sandbox(&f->alice, handles, extract, f->in_fd,
					       1 << 20, 4100, &err),
			 -1);
	assert_int_equal(err.code, SBX_EXIT_REFUSED);
	assert_non_null(strstr(err.msg, "input_handles[2]: \"big.txt\""));
}

/* The helper confines itself before touching an archive: with --probe
 * it reports that reading outside fd 3, sockets and exec are denied. */
static void test_helper_confined(void **state)
{
	struct fixture *f = *state;
	char *path = sbx_xasprintf("%s/sbx-extract", getenv("SBX_LIBEXECDIR"));
	char line[256] = "";
	int pipefd[2], status;
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { "sbx-extract", "--probe", NULL };
		char *envp[] = { NULL };
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		int dir = open(f->in, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (null < 0 || dir < 0 || dup2(null, 0) < 0 || dup2(pipefd[1], 1) < 0 ||
		    dup2(dir, 3) < 0)
			_exit(126);
		execve(path, argv, envp);
		_exit(127);
	}
	close(pipefd[1]);
	n = read(pipefd[0], line, sizeof(line) - 1);
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(n > 0);
	print_message("# %s", line);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(line, "read-outside=denied socket=denied exec=denied"));
	assert_null(strstr(line, "landlock=0"));
	free(path);
}

/* Run as a child with SBX_TEST_ENOSYS=openat2: resolution must refuse
 * (69), never fall back to path strings. */
static int enosys_probe(const char *root)
{
	struct sbx_error err = { 0 };
	struct sbx_store s;

	sbx_store_open(root, "--store", "alice", &s, &err);
	sbx_store_close(&s);
	return err.code;
}

static void test_openat2_enosys(void **state)
{
	struct fixture *f = *state;
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		char *argv[] = { "test-store", "--enosys-probe", f->root, NULL };
		char *envp[] = { "SBX_TEST_ENOSYS=openat2", NULL };

		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), SBX_EXIT_UNAVAILABLE);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_principal_names),
		cmocka_unit_test(test_store_root),
		cmocka_unit_test_setup_teardown(test_open_principal, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_materialize_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_materialize, setup, teardown),
		cmocka_unit_test_setup_teardown(test_helper_confined, setup, teardown),
		cmocka_unit_test_setup_teardown(test_openat2_enosys, setup, teardown),
	};
	const char *builddir = getenv("SBX_BUILDDIR");

	if (argc == 3 && strcmp(argv[1], "--enosys-probe") == 0)
		return enosys_probe(argv[2]);
	/* The helper from this build tree, not an installed one. */
	if (builddir && *builddir) {
		setenv("SBX_LIBEXECDIR", builddir, 1);
	} else {
		char *self = realpath("/proc/self/exe", NULL);

		assert_non_null(self);
		setenv("SBX_LIBEXECDIR", dirname(dirname(dirname(self))), 1);
		free(self);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
