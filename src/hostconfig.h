/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostconfig.h - the host configuration (SPEC §9): one JSON object, every
 * key optional, unknown keys and bad values are errors (69).
 */
#ifndef SBX_HOSTCONFIG_H
#define SBX_HOSTCONFIG_H

#include <stdint.h>

#include "error.h"

struct sbx_hostconfig {
	char *file;          /* NULL when no file was read */
	char *store;
	char *policy;
	char *signing_key;
	char *state_dir;
	char *cgroup_parent;
	uint64_t max_concurrent;    /* 0 = not set */
	uint64_t memory_budget_mib; /* 0 = not set */
	/* Host uids/gids for root's runs (rootids.h): first + admission
	 * slot.  Always set: the defaults when the file has no root_ids. */
	uint32_t root_ids_first;
	uint32_t root_ids_count;
};

/*
 * sbx_hostconfig_load() - read @path; when @path is NULL, $SBX_CONFIG, else
 * SYSCONFDIR/sbx/sbx.json if present, else an empty config.  An explicitly
 * named file that is missing is an error.  Errors are SBX_EXIT_UNAVAILABLE.
 */
int sbx_hostconfig_load(struct sbx_hostconfig *cfg, const char *path, struct sbx_error *err);
int sbx_hostconfig_parse(struct sbx_hostconfig *cfg, const char *source, const char *data,
			 size_t len, struct sbx_error *err);
void sbx_hostconfig_free(struct sbx_hostconfig *cfg);

#endif
