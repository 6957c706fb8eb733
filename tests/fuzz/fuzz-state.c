/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-state.c - libFuzzer entry point for state.json as gc and cancel
 * read it, and the checks gc applies to the paths in it before deleting
 * or killing anything.  Properties: a record that parses has the fields
 * documented; a path gc accepts is one sbx itself would have made.
 */
#include "fuzz-util.h"

#include "state-internal.h"

static bool has_bad_component(const char *p)
{
	size_t n = strlen(p);

	return strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../") ||
	       (n >= 2 && strcmp(p + n - 2, "/.") == 0) || (n >= 3 && strcmp(p + n - 3, "/..") == 0) ||
	       p[n - 1] == '/' || sbx_has_control(p, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_state_record rec;
	struct sbx_error err = { 0 };
	static bool env_done;

	if (!env_done) {
		/* temp paths are judged against $TMPDIR, else /tmp */
		unsetenv("TMPDIR");
		env_done = true;
	}
	if (sbx_state_record_parse((const char *)data, size, &rec, &err) < 0) {
		fuzz_check_error(&err, SBX_EXIT_SOFTWARE);
		fuzz_assert(!rec.cgroups && !rec.temps);
		return 0;
	}
	fuzz_assert(sbx_run_id_valid(rec.run_id) && rec.broker_pid >= 1);
	fuzz_assert(rec.cgroups && rec.temps);
	fuzz_assert(sbx_strv_length(rec.cgroups) <= 64 && sbx_strv_length(rec.temps) <= 64);
	for (char **p = rec.cgroups; *p; p++) {
		if (!sbx_state_cgroup_path_ok(*p, rec.run_id))
			continue;
		fuzz_assert(strncmp(*p, "/sys/fs/cgroup/", 15) == 0 && !has_bad_component(*p));
		fuzz_assert(strstr(*p + 15, rec.run_id));
	}
	for (char **p = rec.temps; *p; p++) {
		char prefix[64];

		if (!sbx_state_temp_path_ok(*p, rec.run_id))
			continue;
		snprintf(prefix, sizeof(prefix), "/tmp/sbx-run-%s", rec.run_id);
		fuzz_assert(strncmp(*p, prefix, strlen(prefix)) == 0 && !strchr(*p + 5, '/') &&
			    !has_bad_component(*p));
	}
	sbx_state_record_free(&rec);
	return 0;
}
