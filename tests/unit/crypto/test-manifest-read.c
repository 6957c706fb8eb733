/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-manifest-read.c - reading a stored manifest: sbx_manifest_read's
 * bound (a file over it is refused unread), pipes and FIFOs that never
 * block, and sbx_manifest_load on what sbx batch may find in --out.
 */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sign.h"

static char tmpdir[] = "/tmp/sbx-test-manifest-read-XXXXXX";
static struct sbx_key *key, *pub, *other_pub;
static char *line;
static size_t line_len;

static char *tmp_path(const char *name)
{
	return sbx_xasprintf("%s/%s", tmpdir, name);
}

static int setup(void **state)
{
	_cleanup_free_ char *k = NULL, *kp = NULL, *o = NULL, *op = NULL;
	json_t *m;
	int r;

	if (!mkdtemp(tmpdir))
		return -1;
	k = tmp_path("k");
	kp = tmp_path("k.pub");
	o = tmp_path("o");
	op = tmp_path("o.pub");
	m = json_pack("{s:s,s:s,s:s}", "run_id", "r-1", "status", "succeeded", "job_sha256",
		      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	r = sbx_sign_keygen(k, NULL) || sbx_sign_load_key(k, &key, NULL) ||
	    sbx_sign_load_pubkey(kp, &pub, NULL) || sbx_sign_keygen(o, NULL) ||
	    sbx_sign_load_pubkey(op, &other_pub, NULL) ||
	    sbx_manifest_finish(m, key, &line, &line_len, NULL);
	json_decref(m);
	return r ? -1 : 0;
}

static int teardown(void **state)
{
	char *cmd = sbx_xasprintf("rm -rf '%s'", tmpdir);
	int r = system(cmd);

	free(cmd);
	sbx_key_free(key);
	sbx_key_free(pub);
	sbx_key_free(other_pub);
	free(line);
	return r;
}

/* A file @name holding @len bytes of @data, open for reading. */
static int file_with(const char *name, const char *data, size_t len)
{
	_cleanup_free_ char *p = tmp_path(name);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* The signed line, as a file and through a pipe, loads and verifies. */
static void test_load_whole(void **state)
{
	_cleanup_close_ int fd = file_with("whole", line, line_len);
	json_t *m = NULL;
	struct sbx_error err = { 0 };
	int p[2];

	assert_int_equal(sbx_manifest_load(fd, "whole", pub, &m, &err), 0);
	assert_string_equal(json_string_value(json_object_get(m, "status")), "succeeded");
	json_decref(m);

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(write(p[1], line, line_len), (ssize_t)line_len);
	close(p[1]);
	assert_int_equal(sbx_manifest_load(p[0], "(stdin)", pub, NULL, &err), 0);
	close(p[0]);
}

/* What sbx batch may find in --out instead of a result: each fails,
 * with SBX_EXIT_FAILED and the reason. */
static void test_load_refuses(void **state)
{
	static const char forged[] = "{\"status\":\"succeeded\"}\n";
	static const struct {
		const char *what;
		size_t cut;            /* bytes dropped from the end of the line */
		bool forged, other_key;
		const char *reason;
	} cases[] = {
		{ "truncated", 2, false, false, "whole:" },
		{ "empty", 0, false, false, "whole:" },
		{ "forged", 0, true, false, "signature: missing" },
		{ "another key", 0, false, true, "key_id does not match" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = cases[i].forged ? strlen(forged) : line_len - cases[i].cut;
		_cleanup_close_ int fd = file_with("case", cases[i].forged ? forged : line,
						   !strcmp(cases[i].what, "empty") ? 0 : len);
		struct sbx_error err = { 0 };

		print_message("%s\n", cases[i].what);
		assert_int_equal(sbx_manifest_load(fd, "whole", cases[i].other_key ? other_pub : pub,
						   NULL, &err),
				 -1);
		assert_int_equal(err.code, SBX_EXIT_FAILED);
		assert_non_null(strstr(err.msg, cases[i].reason));
	}
}

/* A file over the bound is refused before a byte of it is read; one at
 * the bound is read whole, by one read. */
static void test_read_bound(void **state)
{
	_cleanup_free_ char *p = tmp_path("big");
	_cleanup_free_ char *data = NULL;
	_cleanup_close_ int fd = open(p, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	struct sbx_error err = { 0 };
	size_t len = 0;

	assert_true(fd >= 0);
	/* Sparse: nothing is written but the size. */
	assert_int_equal(ftruncate(fd, (off_t)SBX_MANIFEST_MAX_BYTES + 1), 0);
	assert_int_equal(sbx_manifest_read(fd, "big", &data, &len, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_FAILED);
	assert_non_null(strstr(err.msg, "big: larger than 16777216 bytes"));
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);

	assert_int_equal(ftruncate(fd, (off_t)SBX_MANIFEST_MAX_BYTES), 0);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_manifest_read(fd, "big", &data, &len, &err), 0);
	assert_int_equal(len, SBX_MANIFEST_MAX_BYTES);
	assert_int_equal(data[len], '\0');
}

/* A stream past the bound is refused without reading much past it. */
static void test_read_stream_bound(void **state)
{
	_cleanup_free_ char *data = NULL;
	struct sbx_error err = { 0 };
	size_t len = 0;
	int p[2];
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static char chunk[65536];

		close(p[0]);
		memset(chunk, ' ', sizeof(chunk));
		for (size_t n = 0; n <= SBX_MANIFEST_MAX_BYTES + sizeof(chunk); n += sizeof(chunk))
			if (write(p[1], chunk, sizeof(chunk)) < 0)
				_exit(0);
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(sbx_manifest_read(p[0], "(stdin)", &data, &len, &err), -1);
	assert_non_null(strstr(err.msg, "larger than"));
	close(p[0]);
	waitpid(pid, NULL, 0);
}

/* A FIFO opened O_NONBLOCK (as sbx batch opens what is in --out) with no
 * writer reads as empty at once, never blocks. */
static void test_fifo_does_not_block(void **state)
{
	_cleanup_free_ char *p = tmp_path("fifo");
	_cleanup_free_ char *data = NULL;
	_cleanup_close_ int fd = -1;
	struct sbx_error err = { 0 };
	size_t len = 99;

	assert_int_equal(mkfifo(p, 0600), 0);
	fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(sbx_manifest_read(fd, "fifo", &data, &len, &err), 0);
	assert_int_equal(len, 0);
	assert_int_equal(sbx_manifest_load(fd, "fifo", pub, NULL, &err), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_whole),
		cmocka_unit_test(test_load_refuses),
		cmocka_unit_test(test_read_bound),
		cmocka_unit_test(test_read_stream_bound),
		cmocka_unit_test(test_fifo_does_not_block),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
