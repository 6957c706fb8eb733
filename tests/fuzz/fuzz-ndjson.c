/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-ndjson.c - libFuzzer entry point for the application/x-ndjson validator. */
#include "fuzz-media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_media("application/x-ndjson", "x.ndjson", data, size);
}
