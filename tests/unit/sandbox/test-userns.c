/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-userns.c - each way a host restricts user namespaces, diagnosed. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "userns.h"

/* A host with no restriction at all: the baseline each case changes,
 * by naming a field again after it. */
#pragma GCC diagnostic ignored "-Woverride-init"
#define OPEN_HOST .apparmor_restrict = -1, .unprivileged_userns_clone = -1, \
		  .max_user_namespaces = 15000, .selinux_enforce = -1, .kernel_major = 6, \
		  .kernel_minor = 1, .exe = "/usr/bin/sbx"

static const struct {
	const char *name;
	struct sbx_userns_facts f;
	enum sbx_userns_cause cause;
	const char *setting; /* substring of d.setting ("" for none) */
	const char *hint;    /* substring of d.hint */
} cases[] = {
	/* Debian's older kernels: the clone is refused. */
	{ "userns_clone=0, clone EPERM",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = EPERM, .unprivileged_userns_clone = 0 },
	  SBX_USERNS_CLONE_SYSCTL, "kernel.unprivileged_userns_clone=0",
	  "sysctl -w kernel.unprivileged_userns_clone=1" },
	/* ...but only the clone: a map write failing on such a host is not it. */
	{ "userns_clone=0, map EPERM",
	  { OPEN_HOST, .step = SBX_USERNS_MAPS, .err = EPERM, .unprivileged_userns_clone = 0 },
	  SBX_USERNS_UNEXPLAINED, "", "id map" },
	{ "userns_clone=1, clone EPERM: a filter",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = EPERM, .unprivileged_userns_clone = 1 },
	  SBX_USERNS_SECCOMP, "seccomp", "--security-opt seccomp=" },
	/* user.max_user_namespaces */
	{ "max_user_namespaces=0",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = ENOSPC, .max_user_namespaces = 0 },
	  SBX_USERNS_MAX_ZERO, "user.max_user_namespaces=0", "sysctl -w user.max_user_namespaces=" },
	{ "max_user_namespaces reached",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = ENOSPC, .max_user_namespaces = 3 },
	  SBX_USERNS_EXHAUSTED, "user.max_user_namespaces=3", "user.max_pid_namespaces" },
	{ "max_user_namespaces unreadable, ENOSPC",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = ENOSPC, .max_user_namespaces = -1 },
	  SBX_USERNS_EXHAUSTED, "user.max_user_namespaces", "raise it" },
	{ "another namespace limit",
	  { OPEN_HOST, .step = SBX_USERNS_NAMESPACES, .err = ENOSPC },
	  SBX_USERNS_EXHAUSTED, "user.max_{mnt,net", "user.max_net_namespaces" },
	/* Ubuntu's AppArmor restriction, at each step it shows. */
	{ "AppArmor, the init's unshare",
	  { OPEN_HOST, .step = SBX_USERNS_NAMESPACES, .err = EPERM, .apparmor_restrict = 1 },
	  SBX_USERNS_APPARMOR, "kernel.apparmor_restrict_unprivileged_userns=1",
	  "profile sbx /usr/bin/sbx flags=(unconfined)" },
	{ "AppArmor, the uid map",
	  { OPEN_HOST, .step = SBX_USERNS_MAPS, .err = EACCES, .apparmor_restrict = 1 },
	  SBX_USERNS_APPARMOR, "kernel.apparmor_restrict_unprivileged_userns=1",
	  "/etc/apparmor.d/sbx" },
	{ "AppArmor, lo",
	  { OPEN_HOST, .step = SBX_USERNS_LO, .err = EPERM, .apparmor_restrict = 1 },
	  SBX_USERNS_APPARMOR, "kernel.apparmor_restrict_unprivileged_userns=1",
	  "apparmor_parser -r /etc/apparmor.d/sbx" },
	{ "AppArmor, the clone itself",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = EPERM, .apparmor_restrict = 1 },
	  SBX_USERNS_APPARMOR, "apparmor", "userns" },
	{ "AppArmor present but off: lo EPERM is unexplained",
	  { OPEN_HOST, .step = SBX_USERNS_LO, .err = EPERM, .apparmor_restrict = 0 },
	  SBX_USERNS_UNEXPLAINED, "", "lo" },
	{ "AppArmor, no exe known",
	  { OPEN_HOST, .step = SBX_USERNS_NAMESPACES, .err = EPERM, .apparmor_restrict = 1,
	    .exe = NULL },
	  SBX_USERNS_APPARMOR, "apparmor", "profile sbx /usr/bin/sbx" },
	/* userns_clone=0 wins over AppArmor at the clone: it is checked first. */
	{ "userns_clone=0 and AppArmor, clone",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = EPERM, .apparmor_restrict = 1,
	    .unprivileged_userns_clone = 0 },
	  SBX_USERNS_CLONE_SYSCTL, "kernel.unprivileged_userns_clone=0", "sysctl.d" },
	/* SELinux */
	{ "SELinux, clone EACCES",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = EACCES, .selinux_enforce = 1 },
	  SBX_USERNS_SELINUX, "SELinux", "ausearch -m avc" },
	{ "SELinux, map EACCES",
	  { OPEN_HOST, .step = SBX_USERNS_MAPS, .err = EACCES, .selinux_enforce = 1 },
	  SBX_USERNS_SELINUX, "/sys/fs/selinux/enforce=1", "audit2allow" },
	{ "SELinux permissive: EACCES is not its",
	  { OPEN_HOST, .step = SBX_USERNS_MAPS, .err = EACCES, .selinux_enforce = 0 },
	  SBX_USERNS_UNEXPLAINED, "", "audit log" },
	{ "SELinux enforcing, but EPERM: a filter",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = EPERM, .selinux_enforce = 1 },
	  SBX_USERNS_SECCOMP, "seccomp", "container" },
	/* A container's seccomp filter */
	{ "seccomp inside podman: the Hint names the container's profile",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = EPERM, .unprivileged_userns_clone = 1,
	    .container = "podman" },
	  SBX_USERNS_SECCOMP, "seccomp", "runs in a container (podman)" },
	{ "seccomp, the init's unshare",
	  { OPEN_HOST, .step = SBX_USERNS_NAMESPACES, .err = EPERM, .apparmor_restrict = 0,
	    .unprivileged_userns_clone = 1, .selinux_enforce = 0 },
	  SBX_USERNS_SECCOMP, "seccomp", "unshare" },
	{ "clone3 ENOSYS on 6.1 inside docker: the container's profile",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = ENOSYS, .container = "docker" },
	  SBX_USERNS_SECCOMP, "clone3 made ENOSYS", "runs in a container (docker)" },
	{ "clone3 ENOSYS on 6.1: a filter",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = ENOSYS },
	  SBX_USERNS_SECCOMP, "clone3 made ENOSYS", "allow clone3" },
	{ "clone3 ENOSYS on 5.3: a filter",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = ENOSYS, .kernel_major = 5,
	    .kernel_minor = 3 },
	  SBX_USERNS_SECCOMP, "seccomp", "5.3" },
	{ "clone3 ENOSYS on 5.2: missing",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = ENOSYS, .kernel_major = 5,
	    .kernel_minor = 2 },
	  SBX_USERNS_NO_CLONE3, "before Linux 5.3", "Linux 5.3 or later" },
	{ "clone3 ENOSYS, release unknown: missing",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = ENOSYS, .kernel_major = 0,
	    .kernel_minor = 0 },
	  SBX_USERNS_NO_CLONE3, "clone3", "5.3" },
	/* uid 0 of a container's user namespace, every capability dropped:
	 * mapping uid 0 needs CAP_SETFCAP (Linux 5.12). */
	{ "container root without CAP_SETFCAP, map EPERM",
	  { OPEN_HOST, .step = SBX_USERNS_MAPS, .err = EPERM, .root_without_setfcap = 1 },
	  SBX_USERNS_SETFCAP, "CAP_SETFCAP", "capabilities.add" },
	{ "container root with CAP_SETFCAP, map EPERM: unexplained",
	  { OPEN_HOST, .step = SBX_USERNS_MAPS, .err = EPERM, .root_without_setfcap = 0 },
	  SBX_USERNS_UNEXPLAINED, "", "id map" },
	{ "no CAP_SETFCAP, but the clone failed: not it",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = EPERM, .root_without_setfcap = 1 },
	  SBX_USERNS_SECCOMP, "seccomp", "seccomp" },
	/* The kernel itself */
	{ "EINVAL at the clone",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = EINVAL },
	  SBX_USERNS_UNSUPPORTED, "namespace type", "CONFIG_USER_NS" },
	{ "EUSERS: nested too deep",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = EUSERS },
	  SBX_USERNS_NESTING, "32", "shallower" },
	{ "ENOMEM: nothing to blame",
	  { OPEN_HOST, .step = SBX_USERNS_CLONE, .err = ENOMEM },
	  SBX_USERNS_UNEXPLAINED, "", "new user namespace" },
	{ "ENOSPC writing a map: unexplained",
	  { OPEN_HOST, .step = SBX_USERNS_MAPS, .err = ENOSPC, .max_user_namespaces = 0 },
	  SBX_USERNS_UNEXPLAINED, "", "id map" },
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbx_userns_diagnosis d;
		bool ok;

		memset(&d, 0x5a, sizeof(d));
		sbx_userns_diagnose(&cases[i].f, &d);
		ok = d.cause == cases[i].cause && strstr(d.setting, cases[i].setting) &&
		     (cases[i].setting[0] || !d.setting[0]) && strstr(d.hint, cases[i].hint) &&
		     /* never cut short: the fix is at the end */
		     strlen(d.hint) < sizeof(d.hint) - 1 && strlen(d.hint) > 40;
		if (!ok)
			fail_msg("%s: cause %d (want %d), setting \"%s\", hint \"%s\"", cases[i].name,
				 d.cause, cases[i].cause, d.setting, d.hint);
	}
}

/* The settings are read below SBX_TEST_SYSCTL_ROOT when it is set, and a
 * file missing there is a setting the host lacks. */
static void test_read_facts(void **state)
{
	char dir[] = "/tmp/sbx-test-userns.XXXXXX";
	char path[256];
	struct sbx_userns_facts f = { 0 };
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "mkdir -p %s/proc/sys/kernel %s/proc/sys/user", dir, dir);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/apparmor_restrict_unprivileged_userns", dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("1\n", fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/proc/sys/user/max_user_namespaces", dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("0\n", fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/osrelease", dir);
	assert_non_null(fp = fopen(path, "w"));
	fputs("5.2.21-old\n", fp);
	fclose(fp);
	setenv("SBX_TEST_SYSCTL_ROOT", dir, 1);

	sbx_userns_read_facts(&f);
	assert_int_equal(f.apparmor_restrict, 1);
	assert_int_equal(f.max_user_namespaces, 0);
	assert_int_equal(f.unprivileged_userns_clone, -1);
	assert_int_equal(f.selinux_enforce, -1);
	assert_int_equal(f.kernel_major, 5);
	assert_int_equal(f.kernel_minor, 2);
	assert_null(f.container);
	assert_non_null(f.exe);
	assert_non_null(strstr(f.exe, "test-userns"));

	/* podman's marker file under the same root: a container. */
	snprintf(path, sizeof(path), "mkdir -p %s/run && touch %s/run/.containerenv", dir, dir);
	assert_int_equal(system(path), 0);
	sbx_userns_read_facts(&f);
	assert_string_equal(f.container, "podman");

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_read_facts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
