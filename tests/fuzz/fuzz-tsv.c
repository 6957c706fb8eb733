/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-tsv.c - libFuzzer entry point for the text/tab-separated-values validator. */
#include "fuzz-media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_media("text/tab-separated-values", "x.tsv", data, size);
}
