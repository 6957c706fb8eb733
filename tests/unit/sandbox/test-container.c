/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-container.c - sbx tells a container from its markers (container=
 * in pid 1's environment first, then /run/.containerenv, then
 * /.dockerenv), under a fake root, and each refusal's Hint names the
 * container setting that allows it.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "container.h"

static void put(const char *dir, const char *rel, const char *text, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", dir, rel);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static void test_markers(void **state)
{
	char dir[] = "/tmp/sbx-test-container.XXXXXX", cmd[600], name[64];
	static const char env[] = "PATH=/usr/bin\0HOME=/\0container=lxc\0TERM=xterm";

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/proc/1 %s/run", dir, dir);
	assert_int_equal(system(cmd), 0);
	/* Nothing: not a container. */
	assert_false(sbx_container_engine(dir, name, sizeof(name)));
	/* docker's marker. */
	put(dir, "/.dockerenv", "", 0);
	assert_true(sbx_container_engine(dir, name, sizeof(name)));
	assert_string_equal(name, "docker");
	/* podman's wins over docker's. */
	put(dir, "/run/.containerenv", "engine=\"podman-4.3.1\"\n", 22);
	assert_true(sbx_container_engine(dir, name, sizeof(name)));
	assert_string_equal(name, "podman");
	/* container= in pid 1's environment wins over both; the strings
	 * around it are NUL-separated. */
	put(dir, "/proc/1/environ", env, sizeof(env));
	assert_true(sbx_container_engine(dir, name, sizeof(name)));
	assert_string_equal(name, "lxc");
	/* An empty container= is no name: the marker files decide. */
	put(dir, "/proc/1/environ", "container=\0", 11);
	assert_true(sbx_container_engine(dir, name, sizeof(name)));
	assert_string_equal(name, "podman");

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_hints(void **state)
{
	char h[512];

	(void)state;
	sbx_container_hint(SBX_CONTAINER_NAMESPACES, "podman", h, sizeof(h));
	assert_non_null(strstr(h, "(podman)"));
	assert_non_null(strstr(h, "--security-opt seccomp="));
	assert_non_null(strstr(h, "sethostname"));
	assert_non_null(strstr(h, "seccompProfile"));
	sbx_container_hint(SBX_CONTAINER_PROC, "docker", h, sizeof(h));
	assert_non_null(strstr(h, "(docker)"));
	assert_non_null(strstr(h, "unmask="));
	assert_non_null(strstr(h, "procMount: Unmasked"));
	sbx_container_hint(SBX_CONTAINER_CGROUP, "podman", h, sizeof(h));
	assert_non_null(strstr(h, "cgroup"));
	assert_non_null(strstr(h, "read-write"));
	/* Never the advice to give the container everything. */
	assert_null(strstr(h, "run it with --privileged"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_markers),
		cmocka_unit_test(test_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
