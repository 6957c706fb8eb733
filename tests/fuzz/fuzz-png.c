/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-png.c - libFuzzer entry point for the image/png validator. */
#include "fuzz-media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_media("image/png", "x.png", data, size);
}
