/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * joblimits.h - the resource limits a job may ask for, as one table.
 *
 * The job's "limits" object, a profile's "defaults"/"minimums"/"maximums"
 * and the manifest's effective "limits" all use the same keys, so they are
 * parsed, checked and printed from one table.  cpu_cores is the one key that
 * accepts a fraction (0.5 = half a core); it is stored in millicores and
 * printed in the manifest as "cpu_millicores" because the manifest carries
 * integers only (RFC 8785 profile).
 */
#ifndef SBX_JOBLIMITS_H
#define SBX_JOBLIMITS_H

#include <stdbool.h>
#include <stdint.h>

enum sbx_limit_id {
	SBX_LIMIT_WALL_SECONDS,
	SBX_LIMIT_SOFT_SECONDS,
	SBX_LIMIT_GRACE_SECONDS,
	SBX_LIMIT_MEMORY_MIB,
	SBX_LIMIT_CPU_MILLICORES,
	SBX_LIMIT_PIDS,
	SBX_LIMIT_OUTPUT_BYTES,
	SBX_LIMIT_OUTPUT_FILES,
	SBX_LIMIT_WORKSPACE_MIB,
	_SBX_LIMIT_MAX,
};

struct sbx_limits {
	uint64_t v[_SBX_LIMIT_MAX];
	uint32_t set; /* bit (1u << id) when v[id] was given */
};

struct sbx_limit_info {
	const char *key;          /* key in job and profile JSON */
	const char *manifest_key; /* key in the manifest's "limits" */
	bool fraction;            /* accepts a non-integer (cpu_cores) */
	uint64_t hard_max;        /* schema bound: above this the job is invalid */
};

extern const struct sbx_limit_info sbx_limit_table[_SBX_LIMIT_MAX];

static inline bool sbx_limit_is_set(const struct sbx_limits *l, enum sbx_limit_id id)
{
	return l->set & (1u << id);
}

static inline void sbx_limit_put(struct sbx_limits *l, enum sbx_limit_id id, uint64_t v)
{
	l->v[id] = v;
	l->set |= 1u << id;
}

/* Look a key up in the table; -1 when unknown. */
int sbx_limit_lookup(const char *key);

struct sbx_jctx;
struct json_t;

/*
 * sbx_limits_parse() - parse a limits object (job "limits", profile
 * "defaults"/"minimums"/"maximums") at JSON path @path into @out.
 * Unknown keys, non-integers (cpu_cores: more than 3 decimals), zero and
 * values above the schema bound are errors with the context's exit class.
 * With @require_all every key in the table must be present.
 */
int sbx_limits_parse(const struct sbx_jctx *c, const char *path, const struct json_t *v,
		     bool require_all, struct sbx_limits *out);

/* A value as the job would write it: "0.5" for 500 millicores, else the
 * integer.  @out holds at least 32 bytes. */
void sbx_limit_format(enum sbx_limit_id id, uint64_t v, char *out, size_t len);

#endif
