/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-spec-blob.c - the sandbox's description as it travels to sbx-init:
 * everything survives packing, the memfd is sealed, and a block with any
 * offset, count or size out of bounds is refused instead of followed.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "sandbox.h"

static struct sock_filter filter[3] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, 0x7fff0000),
};
static struct sbx_symlink links[2] = { { "/bin", "usr/bin" }, { "/lib", "usr/lib" } };
static char *argv_[] = { "/bin/sh", "/work/main.sh", "x y", NULL };
static char *envp_[] = { "PATH=/usr/bin:/bin", "HOME=/work", NULL };
static const char code[] = "echo hello\n";
static const char passwd[] = "sandbox:x:1000:1000::/work:/bin/sh\n";

static void make_spec(struct sbx_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->outer_uid = 1234;
	s->outer_gid = 4321;
	s->binds[0].src = "/usr";
	s->binds[0].dst = "/usr";
	s->binds[0].is_dir = true;
	s->binds[1].src = "/etc/ld.so.cache";
	s->binds[1].dst = "/etc/ld.so.cache";
	s->n_binds = 2;
	strcpy(s->masks[0].path, "/usr/local");
	s->masks[0].after_bind = 0;
	s->n_masks = 1;
	s->quotas.inotify_instances = 16;
	s->quotas.sigpending = 128;
	s->symlinks = links;
	s->n_symlinks = 2;
	strcpy(s->etc[0].path, "/etc/passwd");
	s->etc[0].data = passwd;
	s->etc[0].len = sizeof(passwd) - 1;
	s->n_etc = 1;
	strcpy(s->workspace_opts, "size=256m");
	s->code = code;
	s->code_len = sizeof(code) - 1;
	strcpy(s->code_path, "/work/main.sh");
	s->seccomp.len = 3;
	s->seccomp.filter = filter;
	s->rlimit_nproc = 65;
	s->argv = argv_;
	s->envp = envp_;
}

/* The packed block as the init maps it: a private, writable copy. */
static char *pack(size_t *size)
{
	struct sbx_spec s;
	struct sbx_error err = { 0 };
	struct stat st;
	int fd = -1;
	char *blob;

	make_spec(&s);
	assert_int_equal(sbx_spec_pack(&s, &fd, &err), 0);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	*size = (size_t)st.st_size;
	blob = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	assert_true(blob != MAP_FAILED);
	close(fd);
	return blob;
}

static void test_round_trip(void **state)
{
	size_t size;
	char *blob = pack(&size);
	struct sbx_spec *s = sbx_spec_unpack(blob, size);

	assert_non_null(s);
	assert_int_equal(s->outer_uid, 1234);
	assert_int_equal(s->outer_gid, 4321);
	assert_int_equal(s->n_binds, 2);
	assert_string_equal(s->binds[1].src, "/etc/ld.so.cache");
	assert_string_equal(s->binds[0].dst, "/usr");
	assert_true(s->binds[0].is_dir);
	assert_int_equal(s->n_masks, 1);
	assert_string_equal(s->masks[0].path, "/usr/local");
	assert_int_equal(s->masks[0].after_bind, 0);
	assert_int_equal(s->quotas.inotify_instances, 16);
	assert_int_equal(s->quotas.sigpending, 128);
	assert_int_equal(s->n_symlinks, 2);
	assert_string_equal(s->symlinks[1].path, "/lib");
	assert_string_equal(s->symlinks[1].target, "usr/lib");
	assert_int_equal(s->n_etc, 1);
	assert_int_equal(s->etc[0].len, sizeof(passwd) - 1);
	assert_memory_equal(s->etc[0].data, passwd, sizeof(passwd) - 1);
	assert_int_equal(s->code_len, sizeof(code) - 1);
	assert_memory_equal(s->code, code, sizeof(code) - 1);
	assert_string_equal(s->code_path, "/work/main.sh");
	assert_int_equal(s->seccomp.len, 3);
	assert_memory_equal(s->seccomp.filter, filter, sizeof(filter));
	assert_int_equal(s->rlimit_nproc, 65);
	assert_string_equal(s->argv[0], "/bin/sh");
	assert_string_equal(s->argv[2], "x y");
	assert_null(s->argv[3]);
	assert_string_equal(s->envp[1], "HOME=/work");
	assert_null(s->envp[2]);
	/* Every pointer points into the block. */
	assert_true((char *)s->code >= blob && (char *)s->code < blob + size);
	assert_true((char *)s->argv[2] >= blob && (char *)s->argv[2] < blob + size);
	munmap(blob, size);
}

static void test_sealed(void **state)
{
	struct sbx_spec s;
	struct sbx_error err = { 0 };
	int fd = -1;

	make_spec(&s);
	assert_int_equal(sbx_spec_pack(&s, &fd, &err), 0);
	assert_int_equal(fcntl(fd, F_GET_SEALS),
			 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
	assert_int_equal(write(fd, "x", 1), -1);
	assert_int_equal(ftruncate(fd, 0), -1);
	close(fd);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* The way it really travels: the memfd over a socket with the go-ahead,
 * then mapped by the receiver (sbx_spec_map, as sbx-init does). */
static void test_travels_over_a_socket(void **state)
{
	struct sbx_spec s;
	struct sbx_error err = { 0 };
	const struct sbx_spec *got;
	int sv[2], memfd = -1, fds[2];
	char go = 0;

	make_spec(&s);
	assert_int_equal(sbx_spec_pack(&s, &memfd, &err), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(sbx_send_fds(sv[0], "G", 1, &memfd, 1), 1);
	assert_int_equal(sbx_recv_fds(sv[1], &go, 1, fds, 2), 1);
	assert_int_equal(go, 'G');
	assert_true(fds[0] >= 0 && fds[0] != memfd);
	assert_int_equal(fds[1], -1); /* only one came */
	assert_true(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
	got = sbx_spec_map(fds[0]);
	assert_non_null(got);
	assert_string_equal(got->argv[2], "x y");
	assert_memory_equal(got->code, code, sizeof(code) - 1);

	/* More fds than the receiver asked for are closed, not leaked. */
	{
		int two[2] = { memfd, memfd }, one = -1;
		int before = open_fds();
		assert_int_equal(sbx_send_fds(sv[0], "W", 1, two, 2), 1);
		assert_int_equal(sbx_recv_fds(sv[1], &go, 1, &one, 1), 1);
		assert_true(one >= 0);
		assert_int_equal(open_fds(), before + 1);
		close(one);
	}
	/* A message without fds leaves -1. */
	assert_int_equal(sbx_send_fds(sv[0], "C", 1, NULL, 0), 1);
	assert_int_equal(sbx_recv_fds(sv[1], &go, 1, fds, 1), 1);
	assert_int_equal(fds[0], -1);
	close(sv[0]);
	close(sv[1]);
	close(memfd);
}

/* Offsets of the packed struct's fields inside the block. */
#define SPEC_AT(blob) ((struct sbx_spec *)((blob) + 16))

static void expect_refused(void (*corrupt)(char *blob, size_t size), size_t cut)
{
	size_t size;
	char *blob = pack(&size);

	if (corrupt)
		corrupt(blob, size);
	assert_null(sbx_spec_unpack(blob, size - cut));
	munmap(blob, size);
}

static void bad_magic(char *blob, size_t size)
{
	blob[0] ^= 1;
}
static void code_past_end(char *blob, size_t size)
{
	SPEC_AT(blob)->code_len = size;
}
static void argv_off_end(char *blob, size_t size)
{
	SPEC_AT(blob)->argv = (char *const *)(uintptr_t)(size - 4);
}
static void argv_string_off_end(char *blob, size_t size)
{
	uintptr_t *v = (uintptr_t *)(blob + (uintptr_t)SPEC_AT(blob)->argv);
	v[1] = size + 100;
}
static void argv_into_header(char *blob, size_t size)
{
	SPEC_AT(blob)->argv = (char *const *)(uintptr_t)8;
}
static void envp_unterminated(char *blob, size_t size)
{
	/* The block ends with envp's offsets; its closing 0 goes. */
	uintptr_t *v = (uintptr_t *)(blob + (uintptr_t)SPEC_AT(blob)->envp);
	assert_true((char *)&v[3] == blob + size);
	v[2] = v[0];
}
static void bind_path_off_end(char *blob, size_t size)
{
	SPEC_AT(blob)->binds[1].dst = (const char *)(uintptr_t)(size + 1);
}
static void too_many_binds(char *blob, size_t size)
{
	SPEC_AT(blob)->n_binds = SBX_MAX_MOUNTS + 1;
}
static void too_many_masks(char *blob, size_t size)
{
	SPEC_AT(blob)->n_masks = SBX_MAX_MASKS + 1;
}
static void mask_after_no_bind(char *blob, size_t size)
{
	SPEC_AT(blob)->masks[0].after_bind = 2;
}
static void mask_unterminated(char *blob, size_t size)
{
	memset(SPEC_AT(blob)->masks[0].path, 'x', sizeof(SPEC_AT(blob)->masks[0].path));
}
static void too_many_symlinks(char *blob, size_t size)
{
	SPEC_AT(blob)->n_symlinks = SIZE_MAX / 8;
}
static void empty_filter(char *blob, size_t size)
{
	SPEC_AT(blob)->seccomp.len = 0;
}
static void filter_past_end(char *blob, size_t size)
{
	SPEC_AT(blob)->seccomp.len = BPF_MAXINSNS;
}
static void etc_past_end(char *blob, size_t size)
{
	SPEC_AT(blob)->etc[0].len = size;
}

/* Found by fuzz-spec-blob: an offset inside the block but not aligned for
 * what it points to was followed (undefined behaviour, and in the init). */
static void symlinks_misaligned(char *blob, size_t size)
{
	SPEC_AT(blob)->symlinks = (const struct sbx_symlink *)((uintptr_t)SPEC_AT(blob)->symlinks + 1);
}
static void filter_misaligned(char *blob, size_t size)
{
	SPEC_AT(blob)->seccomp.filter =
		(struct sock_filter *)((uintptr_t)SPEC_AT(blob)->seccomp.filter + 2);
}

static void test_refuses_bad_blocks(void **state)
{
	expect_refused(NULL, 1); /* a size that is not the packed one */
	expect_refused(bad_magic, 0);
	expect_refused(code_past_end, 0);
	expect_refused(argv_off_end, 0);
	expect_refused(argv_string_off_end, 0);
	expect_refused(argv_into_header, 0);
	expect_refused(envp_unterminated, 0);
	expect_refused(bind_path_off_end, 0);
	expect_refused(too_many_binds, 0);
	expect_refused(too_many_symlinks, 0);
	expect_refused(too_many_masks, 0);
	expect_refused(mask_after_no_bind, 0);
	expect_refused(mask_unterminated, 0);
	expect_refused(empty_filter, 0);
	expect_refused(filter_past_end, 0);
	expect_refused(etc_past_end, 0);
	expect_refused(symlinks_misaligned, 0);
	expect_refused(filter_misaligned, 0);
	assert_null(sbx_spec_unpack(NULL, 0));
}

/* The init's failure record, as the broker reads it from the socket: any
 * bytes make a clean one-line error.  Found by fuzz-init-report: a flag
 * byte other than 0 or 1 was loaded as a bool (undefined behaviour), and
 * the message went to stderr with its control bytes. */
static void test_report_bytes_are_checked(void **state)
{
	struct sbx_report rep;
	unsigned char raw[sizeof(rep)];
	struct sbx_error err = { 0 };
	int sv[2];
	static const char msg[] = "mount \x1b[2J\xc2\x9b\xff";

	memset(raw, 0, sizeof(raw));
	raw[offsetof(struct sbx_report, kind)] = SBX_REPORT_FAILED;
	raw[offsetof(struct sbx_report, stage)] = SBX_STAGE_BINDS;
	raw[offsetof(struct sbx_report, unavailable)] = 5;
	memcpy(raw + offsetof(struct sbx_report, msg), msg, sizeof(msg));
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(send(sv[1], raw, sizeof(raw), 0), (ssize_t)sizeof(raw));
	assert_int_equal(sbx_spawn_recv_report(sv[0], &rep, NULL, 0), (int)sizeof(rep));
	assert_int_equal(sbx_spawn_report_error(&rep, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	assert_string_equal(err.msg, "sandbox setup: binds: mount \\x1b[2J\\u009b\\xff");

	/* Escaped, a full record is longer than a message: it is cut at a
	 * character boundary, never inside "\xc3\xa9". */
	memset(raw + offsetof(struct sbx_report, msg), 1, 250);
	memcpy(raw + offsetof(struct sbx_report, msg) + 250, "\xc3\xa9\xc3\xa9", 5);
	memset(&err, 0, sizeof(err));
	assert_int_equal(send(sv[1], raw, sizeof(raw), 0), (ssize_t)sizeof(raw));
	assert_int_equal(sbx_spawn_recv_report(sv[0], &rep, NULL, 0), (int)sizeof(rep));
	assert_int_equal(sbx_spawn_report_error(&rep, &err), -1);
	assert_true(strlen(err.msg) >= 1020);
	assert_true(sbx_utf8_valid(err.msg, strlen(err.msg)));
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_sealed),
		cmocka_unit_test(test_travels_over_a_socket),
		cmocka_unit_test(test_refuses_bad_blocks),
		cmocka_unit_test(test_report_bytes_are_checked),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
