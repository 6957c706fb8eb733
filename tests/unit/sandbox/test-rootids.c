/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-rootids.c - root's per-run host id: first + slot, refused when the
 * local account databases or the subordinate id files give it to someone.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "rootids.h"

static char etc[64];

static void put(const char *name, const char *text)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/%s", etc, name);
	FILE *f = fopen(p, "we");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void drop(const char *name)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/%s", etc, name);
	unlink(p);
}

static int setup(void **state)
{
	snprintf(etc, sizeof(etc), "/tmp/sbx-test-rootids.XXXXXX");
	assert_non_null(mkdtemp(etc));
	put("passwd", "root:x:0:0:root:/root:/bin/bash\n"
		      "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
		      "alice:x:1000:1000::/home/alice:/bin/sh\n"
		      "# a comment:x:5000:5000\n"
		      "svc:x:2130706440:2130706500::/:/bin/false\n");
	put("group", "root:x:0:\nalice:x:1000:\nodd:x:2130706600:alice\n");
	put("subuid", "alice:100000:65536\n");
	put("subgid", "1000:200000:65536\n");
	return 0;
}

static int teardown(void **state)
{
	drop("passwd");
	drop("group");
	drop("subuid");
	drop("subgid");
	rmdir(etc);
	return 0;
}

static void test_pick(void **state)
{
	static const struct {
		uint32_t first, count;
		unsigned slot;
		uint32_t id;       /* when ok */
		const char *msg;   /* NULL: ok */
	} cases[] = {
		{ SBX_ROOT_IDS_FIRST_DEFAULT, 8, 0, 2130706432, NULL },
		{ SBX_ROOT_IDS_FIRST_DEFAULT, 8, 7, 2130706439, NULL },
		/* svc's uid, in the range if not at this slot: every slot is
		 * refused alike */
		{ SBX_ROOT_IDS_FIRST_DEFAULT, 9, 0, 0,
		  "root_ids: host uid 2130706440 is taken: ETC/passwd has it (user \"svc\")" },
		/* svc's primary gid */
		{ 2130706441, 64, 3, 0,
		  "root_ids: host gid 2130706500 is taken: ETC/passwd has it (user \"svc\")" },
		{ 2130706501, 100, 0, 0,
		  "root_ids: host gid 2130706600 is taken: ETC/group has it (group \"odd\")" },
		/* the comment line is not an account */
		{ 5000, 16, 0, 5000, NULL },
		{ 1000, 16, 0, 0, "root_ids: host uid 1000 is taken: ETC/passwd has it (user \"alice\")" },
		/* inside alice's subordinate uids: she could run processes as it */
		{ 165535, 16, 0, 0,
		  "root_ids: host uid 165535 is taken: ETC/subuid has it (subordinate uids of \"alice\")" },
		{ 165536, 16, 0, 165536, NULL },
		{ 199990, 64, 20, 0,
		  "root_ids: host gid 200000 is taken: ETC/subgid has it (subordinate gids of \"1000\")" },
		/* more slots than ids */
		{ SBX_ROOT_IDS_FIRST_DEFAULT, 4, 4, 0, "root_ids: admission slot 4 has no id: the range holds 4" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbx_error err = { 0 };
		uint32_t id = 0;
		int r = sbx_root_ids_pick(etc, cases[i].first, cases[i].count, cases[i].slot, &id, &err);

		if (!cases[i].msg) {
			if (r != 0)
				fail_msg("case %zu: %s", i, err.msg);
			assert_int_equal(id, cases[i].id);
			continue;
		}
		if (r == 0)
			fail_msg("case %zu: id %u accepted", i, id);
		assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
		{
			_cleanup_free_ char *want = NULL;
			const char *m = strstr(cases[i].msg, "ETC");

			want = m ? sbx_xasprintf("%.*s%s%s", (int)(m - cases[i].msg), cases[i].msg, etc,
						 m + 3)
				 : sbx_xstrdup(cases[i].msg);
			if (strcmp(err.msg, want) != 0)
				fail_msg("case %zu: \"%s\", want \"%s\"", i, err.msg, want);
		}
		assert_non_null(strstr(err.hint, "root_ids"));
	}
}

/* The whole range at once (sbx check): the first owned id is named. */
static void test_check_range(void **state)
{
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_root_ids_check(etc, 300000, 4096, &err), 0);
	assert_int_equal(sbx_root_ids_check(etc, SBX_ROOT_IDS_FIRST_DEFAULT, 4096, &err), -1);
	assert_non_null(strstr(err.msg, "host uid 2130706440"));
}

/* Missing subordinate id files are normal; an unreadable passwd is not:
 * sbx cannot tell, so it refuses. */
static void test_files(void **state)
{
	struct sbx_error err = { 0 };
	_cleanup_free_ char *pw = sbx_xasprintf("%s/passwd", etc);
	_cleanup_free_ char *saved = sbx_xasprintf("%s/passwd.saved", etc);

	drop("subuid");
	drop("subgid");
	assert_int_equal(sbx_root_ids_check(etc, 165535, 1, &err), 0);
	put("subuid", "alice:100000:65536\n");
	put("subgid", "1000:200000:65536\n");
	if (geteuid() != 0) {
		/* root reads a mode 000 file; only test that as a user */
		assert_int_equal(chmod(pw, 0), 0);
		assert_int_equal(sbx_root_ids_check(etc, 300000, 1, &err), -1);
		assert_non_null(strstr(err.msg, "/passwd: cannot read"));
		chmod(pw, 0644);
	} else {
		/* a directory where passwd should be cannot be read either */
		assert_int_equal(rename(pw, saved), 0);
		assert_int_equal(mkdir(pw, 0755), 0);
		assert_int_equal(sbx_root_ids_check(etc, 300000, 1, &err), -1);
		assert_non_null(strstr(err.msg, "/passwd: cannot read"));
		rmdir(pw);
		assert_int_equal(rename(saved, pw), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_check_range),
		cmocka_unit_test(test_files),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
