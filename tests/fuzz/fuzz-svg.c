/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-svg.c - libFuzzer entry point for the image/svg+xml validator. */
#include "fuzz-media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_media("image/svg+xml", "x.svg", data, size);
}
