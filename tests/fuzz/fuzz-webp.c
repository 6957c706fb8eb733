/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-webp.c - libFuzzer entry point for the image/webp validator (RIFF walk, then libwebp). */
#include "fuzz-media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_media("image/webp", "x.webp", data, size);
}
