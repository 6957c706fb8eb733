/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cpus.h - how many CPUs a run sees (cpus.c).
 */
#ifndef SBX_CPUS_H
#define SBX_CPUS_H

#include <stdint.h>

/**
 * sbx_cpus_for_run() - the CPUs a run with @millicores of quota is pinned
 * to: the quota rounded up, at most as many as this process may run on,
 * at least one.
 */
unsigned sbx_cpus_for_run(uint64_t millicores);

/**
 * sbx_cpus_env() - @env with "NAME=@n" added for each of @names that @env
 * does not set already (the profile's fixed env or the job's win).
 * Returns a new NULL-terminated vector; never fails (aborts on OOM).
 */
char **sbx_cpus_env(char *const *env, char *const *names, unsigned n);

#endif
