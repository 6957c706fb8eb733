/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "joblimits.h"
#include "suggest.h"
#include "util.h"

/*
 * The schema bounds.  They are not policy (the profile's maximums are):
 * they only keep every later computation (seconds to nanoseconds, MiB to
 * bytes, millicores to a cpu.max quota) far away from overflow, so a value
 * above them is a malformed job (65), not a refused one.
 */
const struct sbx_limit_info sbx_limit_table[_SBX_LIMIT_MAX] = {
	[SBX_LIMIT_WALL_SECONDS] = { "wall_seconds", "wall_seconds", false, 86400 },
	[SBX_LIMIT_SOFT_SECONDS] = { "soft_seconds", "soft_seconds", false, 86400 },
	[SBX_LIMIT_GRACE_SECONDS] = { "grace_seconds", "grace_seconds", false, 600 },
	[SBX_LIMIT_MEMORY_MIB] = { "memory_mib", "memory_mib", false, 1048576 },
	/* 1024 cores, in millicores. */
	[SBX_LIMIT_CPU_MILLICORES] = { "cpu_cores", "cpu_millicores", true, 1024000 },
	/* The kernel's PID_MAX_LIMIT. */
	[SBX_LIMIT_PIDS] = { "pids", "pids", false, 4194304 },
	[SBX_LIMIT_OUTPUT_BYTES] = { "output_bytes", "output_bytes", false, UINT64_C(1) << 40 },
	[SBX_LIMIT_OUTPUT_FILES] = { "output_files", "output_files", false, 1u << 24 },
	[SBX_LIMIT_WORKSPACE_MIB] = { "workspace_mib", "workspace_mib", false, 1048576 },
};

int sbx_limit_lookup(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(sbx_limit_table); i++)
		if (strcmp(sbx_limit_table[i].key, key) == 0)
			return (int)i;
	return -1;
}

/* cpu_cores: a positive number of cores with at most three decimals, so
 * that it maps exactly onto millicores (and onto a cgroup cpu.max quota)
 * without a silent rounding that a reviewer of the job would not see. */
static int parse_cores(const struct sbx_jctx *c, const char *path, const json_t *v, uint64_t max,
		       uint64_t *out)
{
	static const char what[] = "a positive number of cores with at most 3 decimals";
	double d, milli, diff;
	uint64_t r;

	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if (i <= 0)
			return sbx_json_expected(c, path, v, what);
		if ((uint64_t)i > max / 1000)
			return sbx_json_error(c, path, "expected at most %" PRIu64 " cores, got %"
					      JSON_INTEGER_FORMAT, max / 1000, i);
		*out = (uint64_t)i * 1000;
		return 0;
	}
	if (!json_is_real(v))
		return sbx_json_expected(c, path, v, what);
	d = json_real_value(v);
	if (!(d > 0) || d > (double)(max / 1000))
		return sbx_json_expected(c, path, v, what);
	milli = d * 1000.0;
	r = (uint64_t)(milli + 0.5);
	diff = milli - (double)r;
	/* 0.1 is not exact in binary; anything within 1e-6 of a whole
	 * millicore is that millicore, anything else has too many decimals. */
	if (r < 1 || diff > 1e-6 || diff < -1e-6)
		return sbx_json_expected(c, path, v, what);
	*out = r;
	return 0;
}

/* The limit key nearest to a misspelt one, or NULL. */
static const char *limit_suggest(const char *key)
{
	struct sbx_suggest s;

	sbx_suggest_init(&s, key);
	for (size_t i = 0; i < _SBX_LIMIT_MAX; i++)
		sbx_suggest_add(&s, sbx_limit_table[i].key);
	return sbx_suggest_result(&s);
}

int sbx_limits_parse(const struct sbx_jctx *c, const char *path, const json_t *v,
		     bool require_all, struct sbx_limits *out)
{
	const char *key;
	json_t *val;

	memset(out, 0, sizeof(*out));
	if (sbx_json_object(c, path, v) < 0)
		return -1;
	json_object_foreach((json_t *)v, key, val) {
		char p[SBX_JSON_PATH_MAX];
		int id = sbx_limit_lookup(key);
		uint64_t x;

		sbx_json_path_key(p, path, key);
		if (id < 0)
			return sbx_json_error(c, p, "unknown key%s", sbx_did_you_mean(limit_suggest(key)));
		if (sbx_limit_table[id].fraction) {
			if (parse_cores(c, p, val, sbx_limit_table[id].hard_max, &x) < 0)
				return -1;
		} else if (sbx_json_uint(c, p, val, 1, sbx_limit_table[id].hard_max, &x) < 0) {
			return -1;
		}
		sbx_limit_put(out, (enum sbx_limit_id)id, x);
	}
	if (require_all)
		for (size_t i = 0; i < _SBX_LIMIT_MAX; i++)
			if (!sbx_limit_is_set(out, (enum sbx_limit_id)i)) {
				char p[SBX_JSON_PATH_MAX];
				sbx_json_path_key(p, path, sbx_limit_table[i].key);
				return sbx_json_error(c, p, "missing required key");
			}
	return 0;
}

void sbx_limit_format(enum sbx_limit_id id, uint64_t v, char *out, size_t len)
{
	if (sbx_limit_table[id].fraction) {
		/* Trailing zeros dropped: 1000 -> "1", 500 -> "0.5". */
		if (v % 1000 == 0)
			snprintf(out, len, "%" PRIu64, v / 1000);
		else if (v % 100 == 0)
			snprintf(out, len, "%" PRIu64 ".%01" PRIu64, v / 1000, (v % 1000) / 100);
		else if (v % 10 == 0)
			snprintf(out, len, "%" PRIu64 ".%02" PRIu64, v / 1000, (v % 1000) / 10);
		else
			snprintf(out, len, "%" PRIu64 ".%03" PRIu64, v / 1000, v % 1000);
	} else {
		snprintf(out, len, "%" PRIu64, v);
	}
}
