/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-html.c - libFuzzer entry point for the text/html and text/markdown
 * validators and their active-content scan: the first byte picks the
 * type, the rest is the file.
 */
#include "fuzz-media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		return fuzz_media("text/markdown", "x.md", data + 1, size - 1);
	return fuzz_media("text/html", "x.html", data + 1, size - 1);
}
