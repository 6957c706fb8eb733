/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-pdf.c - libFuzzer entry point for the application/pdf validator. */
#include "fuzz-media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_media("application/pdf", "x.pdf", data, size);
}
