/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-trustdir.c - whose a directory is and who else may write it. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "trustdir.h"
#include "util.h"
#include "skip.h"

/* The fixture lives below the working directory (the build tree), not
 * /tmp: every directory above a path is checked, and /tmp is writable by
 * everyone. */
static char *g_root;
static struct sbx_trust g_who;

static int setup(void **state)
{
	char cwd[4096];

	(void)state;
	g_who = (struct sbx_trust){ 0 };
	sbx_trust_add(&g_who, 0);
	sbx_trust_add(&g_who, geteuid());
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	g_root = sbx_xasprintf("%s/test-trustdir-XXXXXX", cwd);
	if (!mkdtemp(g_root) || chmod(g_root, 0755) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	_cleanup_free_ char *cmd = sbx_xasprintf("rm -rf '%s'", g_root);

	(void)state;
	(void)!system(cmd);
	free(g_root);
	return 0;
}

/* The fixture's own parents must pass, or nothing below says anything. */
static bool root_usable(void)
{
	struct sbx_error err = { 0 };
	int fd = sbx_dir_open_trusted(g_root, "prepared_dir", &g_who, false, &err);

	if (fd < 0) {
		print_message("# %s\n", err.msg);
		return false;
	}
	close(fd);
	return true;
}

static void test_trust_text(void **state)
{
	struct sbx_trust t = { 0 };
	char buf[64];

	(void)state;
	sbx_trust_add(&t, 0);
	assert_string_equal(sbx_trust_text(&t, buf, sizeof(buf)), "root");
	sbx_trust_add(&t, 1000);
	sbx_trust_add(&t, 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(sbx_trust_text(&t, buf, sizeof(buf)), "root or uid 1000");
	sbx_trust_add(&t, 1001);
	assert_string_equal(sbx_trust_text(&t, buf, sizeof(buf)), "root, uid 1000 or uid 1001");
	assert_true(sbx_trust_has(&t, 1001));
	assert_false(sbx_trust_has(&t, 1002));
}

/* One case: what to build below the root, the path to open (relative to
 * it), and what must come of it. */
struct dir_case {
	const char *name;
	const char *shell;     /* run in the root; NULL: nothing */
	const char *path;
	bool create;
	const char *msg;       /* NULL: success */
	const char *hint_pre;  /* the Hint holds these around the root's path */
	const char *hint_post;
	int errnum;
};

static const struct dir_case cases[] = {
	{ "plain", "mkdir -m 0755 a", "a", false, NULL, NULL, NULL, 0 },
	{ "made when missing", NULL, "new/deeper", true, NULL, NULL, NULL, 0 },
	{ "missing", NULL, "none/x", false, "/none", NULL, NULL, ENOENT },
	{ "writable by others", "mkdir -m 0755 w && chmod 0777 w", "w/x", false,
	  "/w: writable by group or others (mode 0777)", "chmod go-w ", "/w", 0 },
	{ "writable by group", "mkdir g && chmod 0775 g", "g", false,
	  "/g: writable by group or others (mode 0775)", "chmod go-w ", "/g", 0 },
	{ "sticky, as /tmp", "mkdir s && chmod 1777 s", "s/prepared", true,
	  "/s: writable by group or others (mode 1777)", "", "/s is shared by every user", 0 },
	{ "a symbolic link", "mkdir -m 0755 real && ln -s real l", "l/x", false,
	  "/l: a symbolic link", "to ", "/real/x, the same directory", 0 },
	{ "a file", "touch f", "f/x", false, "/f: not a directory", NULL, NULL, 0 },
};

static void test_open_trusted(void **state)
{
	(void)state;
	if (!root_usable())
		SBX_TEST_SKIP("the build tree is below a directory others may write");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct dir_case *c = &cases[i];
		_cleanup_free_ char *path = sbx_xasprintf("%s/%s", g_root, c->path);
		struct sbx_error err = { 0 };
		int fd;

		print_message("# %s\n", c->name);
		if (c->shell) {
			_cleanup_free_ char *cmd = sbx_xasprintf("cd '%s' && %s", g_root, c->shell);
			assert_int_equal(system(cmd), 0);
		}
		fd = sbx_dir_open_trusted(path, "prepared_dir", &g_who, c->create, &err);
		if (!c->msg) {
			struct stat st;

			assert_true(fd >= 0);
			assert_int_equal(fstat(fd, &st), 0);
			assert_true(S_ISDIR(st.st_mode));
			close(fd);
			continue;
		}
		assert_int_equal(fd, -1);
		assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
		assert_non_null(strstr(err.msg, c->msg));
		if (c->errnum)
			assert_int_equal(err.errnum, c->errnum);
		if (c->hint_pre) {
			_cleanup_free_ char *want = sbx_xasprintf("%s%s%s", c->hint_pre, g_root,
								  c->hint_post);
			assert_non_null(strstr(err.hint, want));
		}
		/* Refused: nothing made below the directory at fault. */
		if (c->create)
			assert_int_equal(access(path, F_OK), -1);
	}
}

/* Another user's directory on the way: refused whatever its mode. */
static void test_foreign_owner(void **state)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/other", g_root);
	_cleanup_free_ char *path = sbx_xasprintf("%s/prepared", dir);
	struct sbx_error err = { 0 };
	char want[64];

	(void)state;
	if (geteuid() != 0)
		SBX_TEST_SKIP("needs root: chown to another uid");
	if (!root_usable())
		SBX_TEST_SKIP("the build tree is below a directory others may write");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
	assert_int_equal(sbx_dir_open_trusted(path, "prepared_dir", &g_who, true, &err), -1);
	snprintf(want, sizeof(want), "/other: owned by uid 65534, not by root");
	assert_non_null(strstr(err.msg, want));
	assert_non_null(strstr(err.hint, "set \"prepared_dir\" in the host config"));
	assert_int_equal(access(path, F_OK), -1);
}

/* The state directory's check: the caller's only. */
static void test_dir_check(void **state)
{
	struct sbx_trust self = { 0 };
	struct sbx_error err = { 0 };
	struct stat st = { .st_uid = 4242, .st_mode = S_IFDIR | 0700 };

	(void)state;
	sbx_trust_add(&self, 1000);
	assert_int_equal(sbx_dir_check(&st, "/x", "state directory", &self, &err), -1);
	assert_string_equal(err.msg, "/x: state directory: owned by uid 4242, not by uid 1000");
	st.st_uid = 1000;
	st.st_mode = S_IFDIR | 0720;
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_dir_check(&st, "/x", NULL, &self, &err), -1);
	assert_string_equal(err.msg, "/x: writable by group or others (mode 0720)");
	st.st_mode = S_IFDIR | 0755;
	assert_int_equal(sbx_dir_check(&st, "/x", NULL, &self, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trust_text),
		cmocka_unit_test(test_dir_check),
		cmocka_unit_test_setup_teardown(test_open_trusted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_owner, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
