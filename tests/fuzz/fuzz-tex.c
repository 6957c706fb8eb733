/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-tex.c - libFuzzer entry point for the text/x-tex scanner. */
#include "fuzz-media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_media("text/x-tex", "x.tex", data, size);
}
