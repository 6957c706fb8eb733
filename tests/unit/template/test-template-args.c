/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-template-args.c - sbx-template's command line (args.c): what the
 * broker writes is taken, anything else refused with a reason; the
 * profile's interpreter options become the PyConfig settings python3
 * derives from them; and the wire records keep the layout both sides
 * build against (template-proto.h).
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "template.h"

#define DIG "0123456789abcdef"

static int parse(struct sbx_template_args *a, char *why, const char *const *words)
{
	char *argv[64];
	int argc = 0;

	argv[argc++] = (char *)"sbx-template";
	while (*words)
		argv[argc++] = (char *)*words++;
	argv[argc] = NULL;
	return sbx_template_parse_args(argc, argv, a, why, 256);
}

#define BASE "--listen", "3", "--ready", "4", "--digest", DIG, "--idle", "300", "--max-runs", \
	     "1000", "--max-seconds", "3600"

static void test_accepted(void **state)
{
	struct sbx_template_args a;
	char why[256] = "";

	(void)state;
	assert_int_equal(parse(&a, why, (const char *[]){ BASE, "--reset-file", "5", "--import",
							  "numpy", "--import", "matplotlib.pyplot",
							  "--hide", "/usr/local", "--warm", "x = 1", "--cgroup",
							  "/sys/fs/cgroup/memory/sbx-template-p-" DIG,
							  "--", "/usr/bin/python3",
							  "-I", NULL }),
			 0);
	assert_int_equal(a.listen_fd, 3);
	assert_int_equal(a.ready_fd, 4);
	assert_int_equal(a.reset_fd, 5);
	assert_string_equal(a.digest, DIG);
	assert_int_equal(a.idle_seconds, 300);
	assert_int_equal(a.max_runs, 1000);
	assert_int_equal(a.max_seconds, 3600);
	assert_int_equal(a.n_imports, 2);
	assert_string_equal(a.imports[1], "matplotlib.pyplot");
	assert_int_equal(a.n_hide, 1);
	assert_string_equal(a.hide[0], "/usr/local");
	assert_string_equal(a.warm, "x = 1");
	assert_int_equal(a.n_cgroups, 1);
	assert_string_equal(a.cgroups[0], "/sys/fs/cgroup/memory/sbx-template-p-" DIG);
	assert_int_equal(a.argc, 2);
	assert_string_equal(a.argv[0], "/usr/bin/python3");
	assert_true(a.py.isolated);
	assert_false(a.py.no_bytecode);
	/* No reset file: -1. */
	assert_int_equal(parse(&a, why, (const char *[]){ BASE, "--", "/usr/bin/python3", NULL }), 0);
	assert_int_equal(a.reset_fd, -1);
	assert_int_equal(a.argc, 1);
}

static void refused(const char *const *words, const char *reason)
{
	struct sbx_template_args a;
	char why[256] = "";

	assert_int_equal(parse(&a, why, words), -1);
	if (!strstr(why, reason))
		fail_msg("reason '%s' lacks '%s'", why, reason);
}

static void test_refused(void **state)
{
	(void)state;
	refused((const char *[]){ BASE, NULL }, "after --");
	refused((const char *[]){ BASE, "--", NULL }, "after --");
	refused((const char *[]){ "--listen", "3", "--", "/usr/bin/python3", NULL }, "required");
	refused((const char *[]){ BASE, "--", "python3", NULL }, "absolute");
	/* Options a template cannot apply, and what is no option at all. */
	refused((const char *[]){ BASE, "--", "/usr/bin/python3", "-X", NULL }, "'-X'");
	refused((const char *[]){ BASE, "--", "/usr/bin/python3", "-c", NULL }, "'-c'");
	refused((const char *[]){ BASE, "--", "/usr/bin/python3", "-IW", NULL }, "'-IW'");
	refused((const char *[]){ BASE, "--", "/usr/bin/python3", "-", NULL }, "'-'");
	refused((const char *[]){ BASE, "--", "/usr/bin/python3", "{code}", NULL }, "{code}");
	/* fds 0-2 are /dev/null, and one fd cannot be two things. */
	refused((const char *[]){ "--listen", "2", "--ready", "4", "--digest", DIG, "--idle", "1",
				  "--max-runs", "1", "--max-seconds", "1", "--", "/p", NULL },
		"above 2");
	refused((const char *[]){ "--listen", "4", "--ready", "4", "--digest", DIG, "--idle", "1",
				  "--max-runs", "1", "--max-seconds", "1", "--", "/p", NULL },
		"different");
	refused((const char *[]){ "--listen", "3x", NULL }, "above 2");
	refused((const char *[]){ "--digest", "0123456789ABCDEF", NULL }, "hex");
	refused((const char *[]){ "--digest", "0123", NULL }, "hex");
	refused((const char *[]){ "--idle", "0", NULL }, "seconds");
	refused((const char *[]){ "--max-seconds", "-1", NULL }, "seconds");
	refused((const char *[]){ "--max-runs", "0", NULL }, "count");
	refused((const char *[]){ "--max-runs", "4294967296", NULL }, "count");
	refused((const char *[]){ "--import", "os;x", NULL }, "module name");
	refused((const char *[]){ "--import", "a..b", NULL }, "module name");
	refused((const char *[]){ "--import", "1abc", NULL }, "module name");
	refused((const char *[]){ "--import", "abc.", NULL }, "module name");
	refused((const char *[]){ "--import", NULL }, "value");
	refused((const char *[]){ "--hide", "usr/local", NULL }, "absolute");
	refused((const char *[]){ "--hide", "/usr/../etc", NULL }, "absolute");
	/* --cgroup is removed at exit: only a template's, under cgroupfs. */
	refused((const char *[]){ "--cgroup", "/sys/fs/cgroup/memory/sbx-run-1", NULL }, "template's cgroup");
	refused((const char *[]){ "--cgroup", "/home/x/sbx-template-p", NULL }, "template's cgroup");
	refused((const char *[]){ "--cgroup", "/sys/fs/cgroup/../../home/sbx-template-p", NULL },
		"template's cgroup");
	refused((const char *[]){ "--frobnicate", "1", NULL }, "unknown");
}

static void test_pyconfig(void **state)
{
	struct sbx_template_pyopts o = { 0 };
	struct sbx_template_pyconfig c;

	(void)state;
	/* No option: python3's defaults. */
	sbx_template_pyconfig(&o, &c);
	assert_int_equal(c.isolated, 0);
	assert_int_equal(c.use_environment, 1);
	assert_int_equal(c.user_site_directory, 1);
	assert_int_equal(c.safe_path, 0);
	assert_int_equal(c.write_bytecode, 1);
	assert_int_equal(c.site_import, 1);
	assert_int_equal(c.buffered_stdio, 1);
	/* -I: isolated, and so -E -s -P. */
	assert_int_equal(sbx_template_parse_pyopt("-I", &o), 0);
	sbx_template_pyconfig(&o, &c);
	assert_int_equal(c.isolated, 1);
	assert_int_equal(c.use_environment, 0);
	assert_int_equal(c.user_site_directory, 0);
	assert_int_equal(c.safe_path, 1);
	assert_int_equal(c.write_bytecode, 1);
	/* The others, one letter each, alone or run together. */
	o = (struct sbx_template_pyopts){ 0 };
	assert_int_equal(sbx_template_parse_pyopt("-BEsSu", &o), 0);
	sbx_template_pyconfig(&o, &c);
	assert_int_equal(c.isolated, 0);
	assert_int_equal(c.use_environment, 0);
	assert_int_equal(c.user_site_directory, 0);
	assert_int_equal(c.safe_path, 0);
	assert_int_equal(c.write_bytecode, 0);
	assert_int_equal(c.site_import, 0);
	assert_int_equal(c.buffered_stdio, 0);
	assert_int_equal(sbx_template_parse_pyopt("-O", &o), -1);
	assert_int_equal(sbx_template_parse_pyopt("I", &o), -1);
	assert_int_equal(sbx_template_parse_pyopt("--", &o), -1);
}

/* The layout the broker and the template each compile (static asserts
 * pin the sizes; these the fields the broker reads). */
static void test_wire(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct sbx_template_request), 40);
	assert_int_equal(offsetof(struct sbx_template_request, owner_uid), 16);
	assert_int_equal(offsetof(struct sbx_template_request, digest), 20);
	assert_int_equal(sizeof(struct sbx_template_reply), 272);
	assert_int_equal(offsetof(struct sbx_template_reply, pid), 8);
	assert_int_equal(offsetof(struct sbx_template_reply, status), 12);
	assert_int_equal(offsetof(struct sbx_template_reply, started), 24);
	assert_int_equal(offsetof(struct sbx_template_reply, digest), 52);
	assert_int_equal(offsetof(struct sbx_template_reply, msg), 69);
	/* Replies are numbered apart from requests. */
	assert_true((int)SBX_TEMPLATE_CLONED > (int)SBX_TEMPLATE_STOP);
	assert_int_equal(SBX_TEMPLATE_FLAGS_ALL & ~(SBX_TEMPLATE_HAS_STDIN | SBX_TEMPLATE_HAS_CGROUP |
						    SBX_TEMPLATE_OWNER_ID),
			 0);
}

/* What /proc will show: the words with a NUL after each, cut to the area,
 * the last byte NUL whatever happens, the rest zeroed. */
static void test_procview(void **state)
{
	char buf[24];
	struct sbx_template_area a = { buf, sizeof(buf) };
	char *v[] = { buf, buf + 4, buf + 9, NULL };

	(void)state;
	memcpy(buf, "abc\0defg\0hijklmnopqrstu", 24);
	buf[23] = '\0';
	a = sbx_template_area_of(v);
	assert_ptr_equal(a.start, buf);
	assert_int_equal(a.len, 24);
	/* Not laid out one after the other: no area. */
	v[1] = buf + 5;
	assert_null(sbx_template_area_of(v).start);
	a = (struct sbx_template_area){ buf, sizeof(buf) };

	sbx_template_area_write(&a, (char *const[]){ "sbx-init", NULL });
	assert_memory_equal(buf, "sbx-init\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24);
	sbx_template_area_write(&a, (char *const[]){ "/usr/bin/python3", "-I", "/work/main.py", NULL });
	assert_memory_equal(buf, "/usr/bin/python3\0-I\0/wo\0", 24);
	memset(buf, 'x', sizeof(buf));
	sbx_template_area_write(&a, NULL);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	/* One byte: only the NUL. */
	a.len = 1;
	buf[0] = 'x';
	sbx_template_area_write(&a, (char *const[]){ "abc", NULL });
	assert_int_equal(buf[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_pyconfig),
		cmocka_unit_test(test_wire),
		cmocka_unit_test(test_procview),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
