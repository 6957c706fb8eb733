/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-json-path.c - the JSON paths that error messages name: built
 * without snprintf on the hot path, they must be exactly what the
 * snprintf formats "%s%s%s" and "%s[%zu]" give, truncation included.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "json.h"

static void test_key(void **state)
{
	char out[SBX_JSON_PATH_MAX], parent[SBX_JSON_PATH_MAX + 8], want[SBX_JSON_PATH_MAX];

	(void)state;
	sbx_json_path_key(out, NULL, "limits");
	assert_string_equal(out, "limits");
	sbx_json_path_key(out, "", "limits");
	assert_string_equal(out, "limits");
	sbx_json_path_key(out, "limits", "memory_mib");
	assert_string_equal(out, "limits.memory_mib");
	sbx_json_path_key(out, "deny[3]", "args");
	assert_string_equal(out, "deny[3].args");
	/* Not an identifier: quoted and escaped, as before. */
	sbx_json_path_key(out, "env", "A B");
	assert_string_equal(out, "env[\"A B\"]");
	/* Every parent length around the bound: truncated like snprintf. */
	for (size_t len = SBX_JSON_PATH_MAX - 12; len < SBX_JSON_PATH_MAX + 4; len++) {
		memset(parent, 'p', len);
		parent[len] = '\0';
		snprintf(want, sizeof(want), "%s%s%s", parent, ".", "key_name");
		sbx_json_path_key(out, parent, "key_name");
		assert_string_equal(out, want);
		assert_int_equal(strlen(out), strlen(want));
	}
}

static void test_index(void **state)
{
	static const size_t idx[] = { 0, 7, 10, 99, 12345, SIZE_MAX };
	char out[SBX_JSON_PATH_MAX], parent[SBX_JSON_PATH_MAX + 8], want[SBX_JSON_PATH_MAX];

	(void)state;
	sbx_json_path_index(out, NULL, 0);
	assert_string_equal(out, "[0]");
	sbx_json_path_index(out, "deny", 12);
	assert_string_equal(out, "deny[12]");
	for (size_t k = 0; k < sizeof(idx) / sizeof(idx[0]); k++)
		for (size_t len = SBX_JSON_PATH_MAX - 24; len < SBX_JSON_PATH_MAX + 4; len++) {
			memset(parent, 'q', len);
			parent[len] = '\0';
			snprintf(want, sizeof(want), "%s[%zu]", parent, idx[k]);
			sbx_json_path_index(out, parent, idx[k]);
			assert_string_equal(out, want);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_index),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
