/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procview.c - what /proc shows of a run's processes as their command
 * line and environment (template.h says why they write over it).  No
 * Python here: unit-tested on its own.
 */
#include "config.h"

#include <string.h>

#include "template.h"

struct sbx_template_area sbx_template_argv_area, sbx_template_env_area;

void sbx_template_area_write(const struct sbx_template_area *area, char *const *words)
{
	size_t at = 0;

	if (!area->start || area->len == 0)
		return;
	for (size_t i = 0; words && words[i] && at < area->len - 1; i++) {
		size_t n = strlen(words[i]) + 1;

		if (n > area->len - 1 - at)
			n = area->len - 1 - at;
		memcpy(area->start + at, words[i], n);
		at += n;
	}
	memset(area->start + at, 0, area->len - at);
}

/* The area @v's strings occupy, as exec laid them out (one after the
 * other); none if they are not contiguous. */
struct sbx_template_area sbx_template_area_of(char *const *v)
{
	struct sbx_template_area a = { 0 };
	char *end;

	if (!v || !v[0])
		return a;
	end = v[0];
	for (size_t i = 0; v[i]; i++) {
		if (v[i] != end)
			return (struct sbx_template_area){ 0 };
		end = v[i] + strlen(v[i]) + 1;
	}
	a.start = v[0];
	a.len = (size_t)(end - v[0]);
	return a;
}
