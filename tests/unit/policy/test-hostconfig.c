/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-hostconfig.c - the host configuration (SPEC §9): every key
 * optional, unknown keys and bad values are 69 naming file and key.
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

#include "hostconfig.h"

struct cfg_case {
	const char *name;
	const char *json;
	const char *message; /* NULL: valid */
};

static const struct cfg_case cases[] = {
	{ "empty object", "{}", NULL },
	{ "spec example",
	  "{\"store\":\"/var/lib/sbx/store\",\"policy\":\"/etc/sbx/policy\","
	  "\"signing_key\":\"/etc/sbx/signing.key\",\"state_dir\":\"/run/sbx\","
	  "\"cgroup_parent\":\"/sys/fs/cgroup/sbx.slice\",\"max_concurrent\":8,"
	  "\"memory_budget_mib\":16384}",
	  NULL },
	{ "not json", "{\"store\":", "sbx.json: line 1 column" },
	{ "array", "[]", "sbx.json: (top level): expected an object" },
	{ "unknown key", "{\"stor\":\"/x\"}", "sbx.json: stor: unknown key" },
	{ "principal is not config", "{\"principal\":\"alice\"}", "sbx.json: principal: unknown key" },
	{ "duplicate key", "{\"store\":\"/a\",\"store\":\"/b\"}", "sbx.json: line 1 column" },
	{ "relative store", "{\"store\":\"var/store\"}",
	  "sbx.json: store: expected an absolute path in normal form, got \"var/store\"" },
	{ "dotdot policy", "{\"policy\":\"/etc/../tmp\"}", "sbx.json: policy: expected an absolute path" },
	{ "trailing slash", "{\"state_dir\":\"/run/sbx/\"}", "sbx.json: state_dir: expected an absolute path" },
	{ "number path", "{\"signing_key\":1}", "sbx.json: signing_key: expected a string, got 1" },
	{ "zero concurrency", "{\"max_concurrent\":0}",
	  "sbx.json: max_concurrent: expected a positive integer, got 0" },
	{ "string budget", "{\"memory_budget_mib\":\"16G\"}",
	  "sbx.json: memory_budget_mib: expected a positive integer, got \"16G\"" },
	{ "real budget", "{\"memory_budget_mib\":1.5}", "sbx.json: memory_budget_mib: expected a positive integer, got 1.5" },
	{ "huge concurrency", "{\"max_concurrent\":100000}",
	  "sbx.json: max_concurrent: expected a positive integer of at most 4096" },
	{ "root ids", "{\"root_ids\":{\"first\":300000,\"count\":64}}", NULL },
	{ "root ids up to 2^31", "{\"root_ids\":{\"first\":2147483647,\"count\":1}}", NULL },
	{ "root ids past 2^31", "{\"root_ids\":{\"first\":2147483647,\"count\":2}}",
	  "sbx.json: root_ids: the range 2147483647-2147483648 reaches 2^31" },
	{ "root ids over nobody", "{\"root_ids\":{\"first\":65000,\"count\":600}}",
	  "sbx.json: root_ids: the range 65000-65599 holds 65534 (nobody) or 65535" },
	{ "root ids at 65535", "{\"root_ids\":{\"first\":65535,\"count\":1}}",
	  "sbx.json: root_ids: the range 65535-65535 holds 65534" },
	{ "root ids zero", "{\"root_ids\":{\"first\":0,\"count\":8}}",
	  "sbx.json: root_ids.first: expected a positive integer, got 0" },
	{ "root ids too many", "{\"root_ids\":{\"first\":300000,\"count\":4097}}",
	  "sbx.json: root_ids.count: expected a positive integer of at most 4096" },
	{ "root ids no count", "{\"root_ids\":{\"first\":300000}}",
	  "sbx.json: root_ids.count: missing required key" },
	{ "root ids unknown key", "{\"root_ids\":{\"first\":300000,\"count\":8,\"last\":9}}",
	  "sbx.json: root_ids.last: unknown key" },
	{ "root ids string", "{\"root_ids\":\"300000-300063\"}",
	  "sbx.json: root_ids: expected an object" },
	{ "hold dir", "{\"hold_dir\":\"/var/lib/sbx/holds\",\"hold_max_age_hours\":24}", NULL },
	{ "relative hold dir", "{\"hold_dir\":\"holds\"}",
	  "sbx.json: hold_dir: expected an absolute path in normal form, got \"holds\"" },
	{ "dotdot hold dir", "{\"hold_dir\":\"/var/lib/../../tmp\"}",
	  "sbx.json: hold_dir: expected an absolute path in normal form" },
	{ "hold age zero", "{\"hold_max_age_hours\":0}",
	  "sbx.json: hold_max_age_hours: expected a positive integer, got 0" },
	{ "hold age over ten years", "{\"hold_max_age_hours\":87601}",
	  "sbx.json: hold_max_age_hours: expected a positive integer of at most 87600" },
	{ "hold age string", "{\"hold_max_age_hours\":\"7d\"}",
	  "sbx.json: hold_max_age_hours: expected a positive integer, got \"7d\"" },
	{ "hold age negative", "{\"hold_max_age_hours\":-1}",
	  "sbx.json: hold_max_age_hours: expected a positive integer, got -1" },
	{ "results", "{\"results_dir\":\"/srv/runs\",\"results_max_age_hours\":24,"
	  "\"results_max_count\":10}", NULL },
	{ "relative results dir", "{\"results_dir\":\"runs\"}",
	  "sbx.json: results_dir: expected an absolute path in normal form, got \"runs\"" },
	{ "results age zero", "{\"results_max_age_hours\":0}",
	  "sbx.json: results_max_age_hours: expected a positive integer, got 0" },
	{ "results count zero", "{\"results_max_count\":0}",
	  "sbx.json: results_max_count: expected a positive integer, got 0" },
	{ "results count huge", "{\"results_max_count\":1000001}",
	  "sbx.json: results_max_count: expected a positive integer of at most 1000000" },
	{ "templates", "{\"templates\":false,\"template_idle_seconds\":60,"
	  "\"template_max_runs\":10,\"template_max_seconds\":600}", NULL },
	{ "templates not a boolean", "{\"templates\":\"no\"}",
	  "sbx.json: templates: expected true or false" },
	{ "template idle zero", "{\"template_idle_seconds\":0}",
	  "sbx.json: template_idle_seconds: expected a positive integer, got 0" },
	{ "template idle a day and more", "{\"template_idle_seconds\":86401}",
	  "sbx.json: template_idle_seconds: expected a positive integer of at most 86400" },
	{ "template runs zero", "{\"template_max_runs\":0}",
	  "sbx.json: template_max_runs: expected a positive integer, got 0" },
	{ "template runs huge", "{\"template_max_runs\":1000001}",
	  "sbx.json: template_max_runs: expected a positive integer of at most 1000000" },
	{ "template seconds a week and more", "{\"template_max_seconds\":604801}",
	  "sbx.json: template_max_seconds: expected a positive integer of at most 604800" },
	{ "template seconds fraction", "{\"template_max_seconds\":1.5}",
	  "sbx.json: template_max_seconds: expected a positive integer" },
	{ "template start", "{\"template_start_seconds\":600}", NULL },
	{ "template start zero", "{\"template_start_seconds\":0}",
	  "sbx.json: template_start_seconds: expected a positive integer, got 0" },
	{ "template start over an hour", "{\"template_start_seconds\":3601}",
	  "sbx.json: template_start_seconds: expected a positive integer of at most 3600" },
	{ "template start a string", "{\"template_start_seconds\":\"60\"}",
	  "sbx.json: template_start_seconds: expected a positive integer" },
	{ "control char", "{\"store\":\"/a\\u001b[31m\"}", "sbx.json: store: expected an absolute path in normal form, got \"/a\\x1b[31m\"" },
};

static void test_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbx_hostconfig cfg;
		struct sbx_error err = { 0 };
		int r = sbx_hostconfig_parse(&cfg, "sbx.json", cases[i].json, strlen(cases[i].json), &err);

		if (!cases[i].message) {
			if (r != 0)
				fail_msg("%s: %s", cases[i].name, err.msg);
		} else {
			if (r == 0)
				fail_msg("%s: accepted", cases[i].name);
			if (err.code != SBX_EXIT_UNAVAILABLE)
				fail_msg("%s: exit %d", cases[i].name, err.code);
			if (strncmp(err.msg, cases[i].message, strlen(cases[i].message)) != 0)
				fail_msg("%s: \"%s\" does not start \"%s\"", cases[i].name, err.msg,
					 cases[i].message);
			assert_null(cfg.store);
		}
		sbx_hostconfig_free(&cfg);
	}
}

static void test_values(void **state)
{
	struct sbx_hostconfig cfg;
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_hostconfig_parse(&cfg, "c.json", cases[1].json, strlen(cases[1].json), &err), 0);
	assert_string_equal(cfg.file, "c.json");
	assert_string_equal(cfg.store, "/var/lib/sbx/store");
	assert_string_equal(cfg.policy, "/etc/sbx/policy");
	assert_string_equal(cfg.signing_key, "/etc/sbx/signing.key");
	assert_string_equal(cfg.state_dir, "/run/sbx");
	assert_string_equal(cfg.cgroup_parent, "/sys/fs/cgroup/sbx.slice");
	assert_int_equal(cfg.max_concurrent, 8);
	assert_int_equal(cfg.memory_budget_mib, 16384);
	sbx_hostconfig_free(&cfg);

	assert_int_equal(sbx_hostconfig_parse(&cfg, "c.json", "{}", 2, &err), 0);
	assert_null(cfg.store);
	assert_int_equal(cfg.max_concurrent, 0);
	/* root's per-run ids default to 2130706432-2130710527 */
	assert_int_equal(cfg.root_ids_first, 2130706432u);
	assert_int_equal(cfg.root_ids_count, 4096);
	/* holds: the default area, and a week */
	assert_null(cfg.hold_dir);
	assert_int_equal(cfg.hold_max_age_hours, 168);
	sbx_hostconfig_free(&cfg);

	/* results: the default area, 30 days, 1000 at most */
	assert_int_equal(sbx_hostconfig_parse(&cfg, "c.json", "{}", 2, &err), 0);
	assert_null(cfg.results_dir);
	assert_int_equal(cfg.results_max_age_hours, 720);
	assert_int_equal(cfg.results_max_count, 1000);
	/* templates: on, 5 minutes idle, 1000 runs, an hour */
	assert_true(cfg.templates);
	assert_int_equal(cfg.template_idle_seconds, 300);
	assert_int_equal(cfg.template_max_runs, 1000);
	assert_int_equal(cfg.template_max_seconds, 3600);
	/* a minute to import before a start is given up */
	assert_int_equal(cfg.template_start_seconds, 60);
	sbx_hostconfig_free(&cfg);

	assert_int_equal(sbx_hostconfig_parse(&cfg, "c.json",
					      "{\"templates\":false,\"template_max_runs\":7}",
					      41, &err), 0);
	assert_false(cfg.templates);
	assert_int_equal(cfg.template_max_runs, 7);
	assert_int_equal(cfg.template_idle_seconds, 300);
	sbx_hostconfig_free(&cfg);

	assert_int_equal(sbx_hostconfig_parse(&cfg, "c.json",
					      "{\"hold_dir\":\"/srv/holds\",\"hold_max_age_hours\":1}", 48,
					      &err), 0);
	assert_string_equal(cfg.hold_dir, "/srv/holds");
	assert_int_equal(cfg.hold_max_age_hours, 1);
	sbx_hostconfig_free(&cfg);

	assert_int_equal(sbx_hostconfig_parse(&cfg, "c.json",
					      "{\"root_ids\":{\"count\":64,\"first\":300000}}", 40,
					      &err), 0);
	assert_int_equal(cfg.root_ids_first, 300000);
	assert_int_equal(cfg.root_ids_count, 64);
	sbx_hostconfig_free(&cfg);
}

static void test_load(void **state)
{
	char dir[] = "/tmp/sbx-test-config-XXXXXX";
	_cleanup_free_ char *path = NULL, *missing = NULL;
	struct sbx_hostconfig cfg;
	struct sbx_error err = { 0 };
	int fd;

	assert_non_null(mkdtemp(dir));
	path = sbx_xasprintf("%s/sbx.json", dir);
	missing = sbx_xasprintf("%s/nope.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"max_concurrent\":3}", 20), 20);
	close(fd);

	/* Explicit path. */
	assert_int_equal(sbx_hostconfig_load(&cfg, path, &err), 0);
	assert_string_equal(cfg.file, path);
	assert_string_equal(cfg.origin, "--config");
	assert_int_equal(cfg.max_concurrent, 3);
	sbx_hostconfig_free(&cfg);
	{
		/* From now on a Hint that names a config key names the file;
		 * one that does not is left as it is. */
		struct sbx_error h = { 0 };
		_cleanup_free_ char *note = sbx_xasprintf("set cgroup_parent in the host config "
							  "(the host config is %s)", path);

		sbx_error_set(&h, SBX_EXIT_UNAVAILABLE, 0, "x");
		sbx_error_hint(&h, "set cgroup_parent in the host config");
		assert_string_equal(h.hint, note);
		sbx_error_hint(&h, "mount the hierarchy");
		assert_string_equal(h.hint, "mount the hierarchy");
	}

	/* $SBX_CONFIG when no path is given, and says so. */
	setenv("SBX_CONFIG", path, 1);
	assert_int_equal(sbx_hostconfig_load(&cfg, NULL, &err), 0);
	assert_int_equal(cfg.max_concurrent, 3);
	assert_string_equal(cfg.origin, "$SBX_CONFIG");
	assert_int_equal(cfg.results_max_count, 1000);
	sbx_hostconfig_free(&cfg);

	/* An explicitly named file that is missing is an error, not defaults. */
	setenv("SBX_CONFIG", missing, 1);
	assert_int_equal(sbx_hostconfig_load(&cfg, NULL, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	assert_non_null(strstr(err.msg, missing));
	unsetenv("SBX_CONFIG");
	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_hostconfig_load(&cfg, missing, &err), -1);
	assert_int_equal(err.errnum, ENOENT);

	/* A bad value in a real file names the file. */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	assert_int_equal(write(fd, "{\"bogus\":1}", 11), 11);
	close(fd);
	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_hostconfig_load(&cfg, path, &err), -1);
	assert_non_null(strstr(err.msg, "sbx.json: bogus: unknown key"));

	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
