/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-parquet.c - libFuzzer entry point for the Parquet validator.  An
 * input whose first byte is odd is taken as a footer alone and framed
 * ("PAR1", four bytes of pages, the input, its length, "PAR1"), so that
 * most runs reach the Thrift decoder instead of failing on the magic;
 * any other input is the whole file.
 */
#include "fuzz-media.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t framed[65536 + 16];
	uint32_t len;

	if (size == 0 || !(data[0] & 1) || size - 1 > 65536)
		return fuzz_media("application/vnd.apache.parquet", "x.parquet", data, size);
	len = (uint32_t)(size - 1);
	memcpy(framed, "PAR1\x15\x00\x15\x08", 8);
	memcpy(framed + 8, data + 1, len);
	framed[8 + len] = len & 0xff;
	framed[9 + len] = len >> 8 & 0xff;
	framed[10 + len] = len >> 16 & 0xff;
	framed[11 + len] = len >> 24;
	memcpy(framed + 12 + len, "PAR1", 4);
	return fuzz_media("application/vnd.apache.parquet", "x.parquet", framed, len + 16);
}
