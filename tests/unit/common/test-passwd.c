/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-passwd.c - the login name without NSS: nsswitch.conf must name
 * "files" first for passwd, the first line with the uid wins, and
 * anything that is not a plain seven-field line is "ask NSS".  Every
 * answer the parser gives is checked against glibc's own files parser
 * (fgetpwent) on the same text: it must be the name glibc finds, or none
 * when glibc finds none.
 */
#include "config.h"

#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "passwd.h"

static bool ns(const char *s)
{
	return sbx_nsswitch_passwd_files_first(s, strlen(s));
}

static void test_nsswitch(void **state)
{
	(void)state;
	assert_true(ns("passwd: files systemd\ngroup: files systemd\n"));
	assert_true(ns("# comment\npasswd:\tfiles\n"));
	assert_true(ns("  passwd :  files [NOTFOUND=return] ldap\n"));
	assert_true(ns("passwd: files"));
	assert_true(ns("passwd: files # local first\n"));
	assert_false(ns(""));
	assert_false(ns("group: files\n"));
	assert_false(ns("passwd: compat\n"));
	assert_false(ns("passwd: sss files\n"));
	assert_false(ns("passwd: systemd files\n"));
	assert_false(ns("passwd: filesystem\n"));
	assert_false(ns("passwd:\n"));
	assert_false(ns("#passwd: files\n"));
	assert_false(ns("passwd: # files\n"));
	assert_false(ns("passwdx: files\n"));
	/* Two passwd lines: which one glibc takes is its business. */
	assert_false(ns("passwd: files\npasswd: ldap\n"));
	assert_false(sbx_nsswitch_passwd_files_first("passwd: files\0x", 15));
}

/* What glibc's files parser finds for @uid in @text: 1 and the name, or 0. */
static int glibc_name(const char *text, uint32_t uid, char *out, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct passwd *pw;
	int found = 0;

	assert_non_null(f);
	while ((pw = fgetpwent(f)))
		if (pw->pw_uid == uid) {
			snprintf(out, len, "%s", pw->pw_name);
			found = 1;
			break;
		}
	fclose(f);
	return found;
}

/* Our answer, checked against glibc's whenever we give one. */
static enum sbx_passwd_lookup lookup(const char *text, uint32_t uid, char *name, size_t len)
{
	enum sbx_passwd_lookup r = sbx_passwd_name(text, strlen(text), uid, name, len);
	char g[256];
	int gf = glibc_name(text, uid, g, sizeof(g));

	if (r == SBX_PASSWD_FOUND) {
		assert_int_equal(gf, 1);
		assert_string_equal(name, g);
	} else if (r == SBX_PASSWD_ABSENT) {
		assert_int_equal(gf, 0);
	}
	return r;
}

static const char etc_passwd[] =
	"root:x:0:0:root:/root:/bin/bash\n"
	"daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
	"# a comment\n"
	"\n"
	"alice:x:1000:1000:Alice,,,:/home/alice:/bin/bash\n"
	"alias:x:1000:1000::/home/alias:/bin/sh\n"
	"empty:x:1001:1001:::\n"
	"last:x:4294967294:1:::";

static void test_found(void **state)
{
	char name[64];

	(void)state;
	assert_int_equal(lookup(etc_passwd, 0, name, sizeof(name)), SBX_PASSWD_FOUND);
	assert_string_equal(name, "root");
	/* The first line with the uid, as getpwuid() answers. */
	assert_int_equal(lookup(etc_passwd, 1000, name, sizeof(name)), SBX_PASSWD_FOUND);
	assert_string_equal(name, "alice");
	assert_int_equal(lookup(etc_passwd, 1001, name, sizeof(name)), SBX_PASSWD_FOUND);
	assert_string_equal(name, "empty");
	/* The last line, without its newline. */
	assert_int_equal(lookup(etc_passwd, 4294967294u, name, sizeof(name)), SBX_PASSWD_FOUND);
	assert_string_equal(name, "last");
}

static void test_absent(void **state)
{
	char name[64];

	(void)state;
	/* Not in the file (an LDAP user): the caller asks NSS. */
	assert_int_equal(lookup(etc_passwd, 2000, name, sizeof(name)), SBX_PASSWD_ABSENT);
	assert_int_equal(lookup("", 0, name, sizeof(name)), SBX_PASSWD_ABSENT);
	assert_int_equal(lookup("# only\n\n", 0, name, sizeof(name)), SBX_PASSWD_ABSENT);
	/* uid 10 is not 100, and a uid is not a gid. */
	assert_int_equal(lookup("a:x:100:10:::\n", 10, name, sizeof(name)), SBX_PASSWD_ABSENT);
}

static void test_unsure(void **state)
{
	static const char *const odd[] = {
		"+alice::::::\nalice:x:5:5:::\n",        /* NIS compat entries */
		"-bob::::::\nbob:x:5:5:::\n",
		"+\nbob:x:5:5:::\n",
		" bob:x:5:5:::\n",                       /* a leading blank */
		"\vbob:x:5:5:::\n",                      /* glibc skips isspace() */
		"\tbob:x:5:5:::\n",
		"bob:x:5:5:\f::\n",                      /* a control character */
		"bob:x: 5:5:::\n",                       /* glibc's strtoul takes these */
		"bob:x:+5:5:::\n",
		"bob:x:05x:5:::\n",
		"bob:x::5:::\n",                         /* empty uid */
		"bob:x:5::::\n",                         /* empty gid */
		"bob:x:5:5\n",                           /* short */
		"bob:x:5:5::\n",
		"bob:x:5:5::::\n",                       /* eight fields */
		"bob:x:5:5:::\r\n",
		"b b:x:5:5:::\n",
		":x:5:5:::\n",
		"bob:x:4294967296:5:::\n",               /* over 2^32 */
		"bob:x:99999999999:5:::\n",
	};
	char name[64];

	(void)state;
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		enum sbx_passwd_lookup r = lookup(odd[i], 5, name, sizeof(name));

		if (r != SBX_PASSWD_UNSURE)
			fail_msg("case %zu: %d, not unsure", i, (int)r);
	}
	/* An odd line after the match does not matter. */
	assert_int_equal(lookup("bob:x:5:5:::\n+::::::\n", 5, name, sizeof(name)), SBX_PASSWD_FOUND);
	assert_string_equal(name, "bob");
	/* A NUL inside the text. */
	assert_int_equal(sbx_passwd_name("b\0b:x:5:5:::\n", 13, 5, name, sizeof(name)),
			 SBX_PASSWD_UNSURE);
	/* A name that does not fit. */
	assert_int_equal(lookup("abcdefgh:x:5:5:::\n", 5, name, 8), SBX_PASSWD_UNSURE);
	assert_int_equal(lookup("abcdefg:x:5:5:::\n", 5, name, 8), SBX_PASSWD_FOUND);
	assert_string_equal(name, "abcdefg");
}

/* The host's own file: where the parser answers, it is getpwuid()'s answer. */
static void test_host(void **state)
{
	FILE *f = fopen("/etc/passwd", "re");
	static char text[1 << 20];
	size_t n;
	struct passwd *pw;
	char name[256];

	(void)state;
	if (!f)
		skip();
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	setpwent();
	while ((pw = getpwent())) {
		enum sbx_passwd_lookup r = sbx_passwd_name(text, n, pw->pw_uid, name, sizeof(name));
		char first[256];

		assert_true(r != SBX_PASSWD_ABSENT || !glibc_name(text, pw->pw_uid, first, 256));
		if (r == SBX_PASSWD_FOUND) {
			assert_int_equal(glibc_name(text, pw->pw_uid, first, sizeof(first)), 1);
			assert_string_equal(name, first);
		}
	}
	endpwent();
	assert_int_equal(sbx_passwd_name(text, n, 0, name, sizeof(name)), SBX_PASSWD_FOUND);
	assert_string_equal(name, getpwuid(0)->pw_name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nsswitch),
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_absent),
		cmocka_unit_test(test_unsure),
		cmocka_unit_test(test_host),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
