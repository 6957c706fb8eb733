/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-text.c - libFuzzer entry point for the text validators: the first
 * byte picks text/plain, text/csv or application/json, the rest is the file.
 */
#include "fuzz-media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		const char *type, *name;
	} kinds[] = {
		{ "text/plain", "x.txt" },
		{ "text/csv", "x.csv" },
		{ "application/json", "x.json" },
	};

	if (size < 1)
		return 0;
	return fuzz_media(kinds[data[0] % 3].type, kinds[data[0] % 3].name, data + 1, size - 1);
}
