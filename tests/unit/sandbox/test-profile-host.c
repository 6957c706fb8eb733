/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-profile-host.c - what a profile needs of the host before a run:
 * its required binds, and its interpreter found through the profile's
 * symlinks and binds as an executable file (else 69 with a Hint).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "catalog.h"
#include "error.h"
#include "sandbox.h"
#include "util.h"

static char dir[] = "/tmp/sbx-test-profile-host.XXXXXX";

static void touch(const char *rel, mode_t mode)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/%s", dir, rel);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
}

static int setup(void **state)
{
	_cleanup_free_ char *usr = NULL, *bin = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	usr = sbx_xasprintf("%s/usr", dir);
	bin = sbx_xasprintf("%s/usr/bin", dir);
	assert_int_equal(mkdir(usr, 0755), 0);
	assert_int_equal(mkdir(bin, 0755), 0);
	touch("usr/bin/interp", 0755);
	touch("usr/bin/data", 0644);
	return 0;
}

static int teardown(void **state)
{
	_cleanup_free_ char *cmd = sbx_xasprintf("rm -rf '%s'", dir);

	(void)state;
	return system(cmd) == 0 ? 0 : -1;
}

/* A profile with /usr of the test directory bound at /usr (or @dst), the
 * usual /bin -> usr/bin link, and @argv0. */
static int check(const char *argv0, const char *dst, const char *link_target,
		 struct sbx_error *err)
{
	_cleanup_free_ char *src = sbx_xasprintf("%s/usr", dir);
	char *argv[] = { (char *)argv0, "{code}", NULL };
	struct sbx_bind binds[] = { { .src = src, .dst = (char *)dst } };
	struct sbx_symlink links[] = { { .path = "/bin", .target = (char *)link_target } };
	struct sbx_profile p = { .name = "p", .file = "profiles/p.json", .argv = argv,
				 .binds = binds, .n_binds = 1, .symlinks = links,
				 .n_symlinks = 1 };

	memset(err, 0, sizeof(*err));
	return sbx_profile_host_check(&p, err);
}

static void test_present(void **state)
{
	struct sbx_error err;

	(void)state;
	assert_int_equal(check("/usr/bin/interp", "/usr", "usr/bin", &err), 0);
	/* Through the relative link, and through an absolute one. */
	assert_int_equal(check("/bin/interp", "/usr", "usr/bin", &err), 0);
	assert_int_equal(check("/bin/interp", "/usr", "/usr/bin", &err), 0);
	/* A bind at another place than its source. */
	assert_int_equal(check("/opt/tool/bin/interp", "/opt/tool", "usr/bin", &err), 0);
	/* Outside every bind: only the exec inside can tell. */
	assert_int_equal(check("/work/tool", "/usr", "usr/bin", &err), 0);
}

static void test_missing(void **state)
{
	struct sbx_error err;
	_cleanup_free_ char *host = sbx_xasprintf("%s/usr/bin/nope", dir);

	(void)state;
	assert_int_equal(check("/bin/nope", "/usr", "usr/bin", &err), -1);
	assert_int_equal(err.code, 69);
	assert_string_equal(err.msg, "profiles/p.json: argv[0]: /bin/nope");
	assert_non_null(strstr(err.hint, "not on this host"));
	assert_non_null(strstr(err.hint, host));
	assert_non_null(strstr(err.hint, "install"));

	assert_int_equal(check("/usr/bin/data", "/usr", "usr/bin", &err), -1);
	assert_int_equal(err.code, 69);
	assert_string_equal(err.msg, "profiles/p.json: argv[0]: /usr/bin/data is not an executable file");
	/* A directory is not an interpreter either. */
	assert_int_equal(check("/usr/bin", "/usr", "usr/bin", &err), -1);
}

static void test_required_bind(void **state)
{
	struct sbx_error err = { 0 };
	char *argv[] = { "/usr/bin/interp", "{code}", NULL };
	struct sbx_bind binds[] = { { .src = "/nonexistent/sbx-test" },
				    { .src = "/nonexistent/sbx-test-optional", .optional = true } };
	struct sbx_profile p = { .name = "p", .file = "profiles/p.json", .argv = argv,
				 .binds = binds, .n_binds = 2 };

	(void)state;
	assert_int_equal(sbx_profile_host_check(&p, &err), -1);
	assert_int_equal(err.code, 69);
	assert_string_equal(err.msg, "profiles/p.json: binds: /nonexistent/sbx-test");
	p.binds = binds + 1;
	p.n_binds = 1;
	memset(&err, 0, sizeof(err));
	/* Only an optional bind, missing; /usr/bin/interp is in no bind. */
	assert_int_equal(sbx_profile_host_check(&p, &err), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_present),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_required_bind),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
