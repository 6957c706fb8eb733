/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cpus.c - how many CPUs a run is given to see.
 *
 * The cgroup's cpu quota is what bounds a run's CPU time; but programs
 * size their pools from the CPUs they see (os.cpu_count(), nproc,
 * OpenMP, OpenBLAS), and a pool of every host CPU under a one-core quota
 * only adds contention.  So the payload is pinned to the quota rounded
 * up (the init chooses which CPUs, from its own affinity), and the
 * profile's thread-count variables say the same number.  The pinning is
 * a hint, not a limit: the payload may widen its own affinity, and the
 * quota still holds.
 */
#include "config.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "cpus.h"
#include "util.h"

unsigned sbx_cpus_for_run(uint64_t millicores)
{
	cpu_set_t set;
	uint64_t n = (millicores + 999) / 1000;

	/* Never more than this process may use: a run's cgroup is below
	 * the broker's, and its cpuset no wider. */
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && n > (uint64_t)CPU_COUNT(&set))
		n = (uint64_t)CPU_COUNT(&set);
	return n ? (unsigned)n : 1;
}

static bool env_has(char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (; env && *env; env++)
		if (strncmp(*env, name, len) == 0 && (*env)[len] == '=')
			return true;
	return false;
}

char **sbx_cpus_env(char *const *env, char *const *names, unsigned n)
{
	size_t k = 0, total = sbx_strv_length(env) + sbx_strv_length(names) + 1;
	char **out = sbx_xcalloc(total, sizeof(char *));

	for (char *const *e = env; e && *e; e++)
		out[k++] = sbx_xstrdup(*e);
	for (char *const *v = names; v && *v; v++) {
		if (!env_has(env, *v))
			out[k++] = sbx_xasprintf("%s=%u", *v, n);
	}
	out[k] = NULL;
	return out;
}
