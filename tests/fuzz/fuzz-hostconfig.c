/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-hostconfig.c - libFuzzer entry point for the host configuration
 * parser (sbx.json). */
#include "fuzz-util.h"

#include "hostconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_hostconfig cfg = { 0 };
	struct sbx_error err = { 0 };
	int r = sbx_hostconfig_parse(&cfg, "sbx.json", (const char *)data, size, &err);

	if (r < 0) {
		/* A bad host config is 69, one clean line. */
		fuzz_check_error(&err, SBX_EXIT_UNAVAILABLE);
	} else {
		/* What it accepted are absolute paths in normal form. */
		const char *paths[] = { cfg.store, cfg.policy, cfg.signing_key, cfg.state_dir,
					cfg.cgroup_parent };
		for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
			const char *p = paths[i];
			if (!p)
				continue;
			fuzz_assert(p[0] == '/' && !strstr(p, "//") && !strstr(p, "/./") &&
				    !strstr(p, "/../") && !sbx_has_control(p, strlen(p)));
			fuzz_assert(strcmp(p, "/") == 0 || p[strlen(p) - 1] != '/');
		}
	}
	sbx_hostconfig_free(&cfg);
	return 0;
}
