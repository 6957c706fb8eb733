/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-npy.c - libFuzzer entry point for the application/x-npy header parser and the pickle check. */
#include "fuzz-media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_media("application/x-npy", "x.npy", data, size);
}
