/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-collect-name.c - libFuzzer entry point for the collector's checks
 * on output file names.  Properties: a name that passes is shown as it
 * is and holds nothing a terminal or the manifest would act on; any name
 * is shown as one clean line.
 */
#include "fuzz-util.h"

#include "collect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name, *shown = NULL;
	const char *bad;
	size_t max;

	if (size < 1)
		return 0;
	/* Byte 0: the length bound; the rest: one component, as getdents
	 * would give it (no NUL, no '/'). */
	max = data[0];
	name = fuzz_strndup(data + 1, size - 1);
	if (strlen(name) != size - 1 || strchr(name, '/') || !name[0]) {
		free(name);
		return 0;
	}
	bad = sbx_collect_check_name(name, max, &shown);
	fuzz_assert(shown && fuzz_clean_line(shown));
	if (!bad) {
		fuzz_assert(strcmp(shown, name) == 0 && strlen(name) <= max && name[0] != '-');
	} else {
		fuzz_assert(fuzz_clean_line(bad));
	}
	free(shown);
	free(name);
	return 0;
}
