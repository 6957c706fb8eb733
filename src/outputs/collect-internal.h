/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect-internal.h - what collect.c (walk, quarantine, validation,
 * promotion) and names.c (the name rules) share: the name checks.  Not for
 * other modules.
 */
#ifndef SBX_COLLECT_INTERNAL_H
#define SBX_COLLECT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "collect.h"

/*
 * name_problem() - why @name (one component from getdents) cannot be an
 * artifact's name.
 * Return: the reason, a static string, or NULL when the name may be used.
 */
const char *name_problem(const char *name, size_t max_name);

/*
 * display_name() - how the listing shows @name: as is when @escape is false
 * (the name passed name_problem()), else with each byte that may not
 * appear as is written "\xNN".
 * Return: a new string, owned by the caller.
 */
char *display_name(const char *name, bool escape);

#endif
