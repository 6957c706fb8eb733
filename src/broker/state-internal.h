/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * state-internal.h - what state.c (entries, cancel) and gc.c (reaping)
 * share: the parsed state.json record and the checks on paths in it.
 * Not for other modules.
 */
#ifndef SBX_STATE_INTERNAL_H
#define SBX_STATE_INTERNAL_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "state.h"

static inline void state_json_decrefp(json_t **p)
{
	if (*p)
		json_decref(*p);
}
#define _cleanup_state_json_ _cleanup_(state_json_decrefp)

/* state.json, as gc and cancel read it.  Lists are NULL-terminated. */
struct sbx_state_record {
	char run_id[SBX_RUN_ID_LEN + 1];
	pid_t broker_pid;
	uint64_t broker_start; /* /proc/<pid>/stat starttime, clock ticks */
	uid_t uid;
	char **cgroups;
	char **temps;
};

/* Read and check <entry>/state.json (at most 1 MiB).  Errors: 70; errnum
 * ENOENT when the file is missing. */
int sbx_state_record_read(int entry_fd, struct sbx_state_record *rec, struct sbx_error *err);
void sbx_state_record_free(struct sbx_state_record *rec);
/* The same checks on @n bytes of state.json already read (for tests and
 * fuzzers).  Errors: 70. */
int sbx_state_record_parse(const char *buf, size_t n, struct sbx_state_record *rec,
			   struct sbx_error *err);

/* starttime (field 22 of /proc/<pid>/stat).  -1 with errno on failure. */
int sbx_state_proc_start(pid_t pid, uint64_t *out);

/* Whether gc may touch @path for run @run_id (see docs/state.md). */
bool sbx_state_cgroup_path_ok(const char *path, const char *run_id);
bool sbx_state_temp_path_ok(const char *path, const char *run_id);

/* Open (creating, 0600) <state_dir>/<name> and flock it with @op.
 * Returns the fd or -1 with @err set. */
int sbx_state_lock_file(const char *state_dir, const char *name, int op, struct sbx_error *err);

/* Remove the directory @name below @parent_fd and all in it, never
 * following a symlink or crossing a mount (gc.c).  0, or -1 with errno. */
int sbx_state_remove_tree(int parent_fd, const char *name);

#endif
