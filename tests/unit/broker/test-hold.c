/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-hold.c - held outputs: which PATHs sbx promote accepts, and what
 * sbx gc removes from a held area (by age only, never a locked hold,
 * never a name that is not a run id, never through a symlink).
 */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "hold.h"
#include "util.h"

static void test_valid_path(void **state)
{
	static const char *const good[] = { "a", "totals.csv", "d/b.txt", "x..y/.z", "..a", "a.", NULL };
	static const char *const bad[] = { "", "/a", "..", "../a", "a/..", "a/../b", ".", "./a",
					   "a/.", "a//b", "a/", NULL };

	for (const char *const *p = good; *p; p++)
		if (!sbx_hold_valid_path(*p))
			fail_msg("refused \"%s\"", *p);
	for (const char *const *p = bad; *p; p++)
		if (sbx_hold_valid_path(*p))
			fail_msg("accepted \"%s\"", *p);
	{
		char longp[4097];

		memset(longp, 'a', sizeof(longp) - 1);
		longp[4096] = '\0';
		assert_false(sbx_hold_valid_path(longp));
		longp[4095] = '\0';
		assert_true(sbx_hold_valid_path(longp));
	}
}

static void put(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* A hold of run @id in @area, held @hours_ago hours ago. */
static char *make_hold(const char *area, const char *id, unsigned hours_ago)
{
	char *dir = sbx_xasprintf("%s/%s", area, id);
	_cleanup_free_ char *files = sbx_xasprintf("%s/files", dir);
	_cleanup_free_ char *rec = sbx_xasprintf("{\"held_at_ms\":%llu,\"run_id\":\"%s\",\"files\":[]}",
						 (unsigned long long)(sbx_now_real_ms() -
								      (uint64_t)hours_ago * 3600000u),
						 id);

	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(mkdir(files, 0700), 0);
	put(files, "h000001", "held\n");
	put(dir, "manifest.json", "{}\n");
	put(dir, "hold.json", rec);
	return dir;
}

static bool exists(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0;
}

static void test_gc(void **state)
{
	char root[] = "/tmp/sbx-test-hold-XXXXXX";
	struct sbx_hostconfig cfg = { .hold_max_age_hours = 24 };
	struct sbx_error err = { 0 };
	_cleanup_free_ char *area = NULL, *old = NULL, *young = NULL, *locked = NULL, *norec = NULL;
	_cleanup_free_ char *other = NULL, *canary = NULL, *link = NULL, *linked_dir = NULL;
	unsigned removed = 99;
	int lfd;

	assert_non_null(mkdtemp(root));
	area = sbx_xasprintf("%s/holds", root);
	cfg.hold_dir = area;

	/* No held area yet: nothing to do, nothing made. */
	assert_int_equal(sbx_hold_gc(&cfg, &removed, &err), 0);
	assert_int_equal(removed, 0);
	assert_false(exists(area));

	assert_int_equal(mkdir(area, 0700), 0);
	old = make_hold(area, "0123456789abcdef0123456789abcdef", 25);
	young = make_hold(area, "1123456789abcdef0123456789abcdef", 23);
	locked = make_hold(area, "2123456789abcdef0123456789abcdef", 1000);
	/* A hold whose record was never written: its directory's age. */
	norec = make_hold(area, "3123456789abcdef0123456789abcdef", 0);
	{
		_cleanup_free_ char *r = sbx_xasprintf("%s/hold.json", norec);
		unlink(r);
	}
	/* Not a run id: not sbx's, however old. */
	other = make_hold(area, "not-a-run-id", 1000);
	/* A run id that is a symlink to a directory outside: not followed. */
	linked_dir = sbx_xasprintf("%s/outside", root);
	assert_int_equal(mkdir(linked_dir, 0700), 0);
	canary = sbx_xasprintf("%s/outside/keep", root);
	put(linked_dir, "keep", "keep\n");
	link = sbx_xasprintf("%s/4123456789abcdef0123456789abcdef", area);
	assert_int_equal(symlink(linked_dir, link), 0);

	lfd = open(locked, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(lfd >= 0);
	assert_int_equal(flock(lfd, LOCK_EX), 0);

	assert_int_equal(sbx_hold_gc(&cfg, &removed, &err), 0);
	assert_int_equal(removed, 1);
	assert_false(exists(old));
	assert_true(exists(young));
	assert_true(exists(locked));
	assert_true(exists(norec));
	assert_true(exists(other));
	assert_true(exists(link));
	assert_true(exists(canary));

	/* Unlocked, the old one goes; a shorter age takes the young one. */
	close(lfd);
	cfg.hold_max_age_hours = 1;
	assert_int_equal(sbx_hold_gc(&cfg, &removed, &err), 0);
	assert_int_equal(removed, 2);
	assert_false(exists(locked));
	assert_false(exists(young));
	assert_true(exists(norec));
	assert_true(exists(canary));

	/* A held area writable by others is refused. */
	assert_int_equal(chmod(area, 0777), 0);
	assert_int_equal(sbx_hold_gc(&cfg, &removed, &err), -1);
	assert_non_null(strstr(err.msg, "writable by group or others"));
	assert_int_equal(chmod(area, 0700), 0);

	cfg.hold_dir = NULL;
	{
		_cleanup_free_ char *cmd = sbx_xasprintf("rm -rf '%s'", root);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_path),
		cmocka_unit_test(test_gc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
