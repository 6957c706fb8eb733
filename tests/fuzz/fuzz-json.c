/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-json.c - differential libFuzzer target for the streaming JSON
 * checker: its verdict must be the one of parsing with jansson
 * (JSON_DECODE_ANY | JSON_REJECT_DUPLICATES) after the UTF-8, NUL and
 * depth checks, on every input.  A disagreement aborts.
 */
#include "fuzz-media.h"
#include "json-reference.h"

#include <jansson.h>
#include <stdbool.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct sbx_media_report rep;
	int ours;

	if (fd < 0) {
		fd = memfd_create("fuzz-json", MFD_CLOEXEC);
		if (fd < 0)
			abort();
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	ours = sbx_media_validate("application/json", fd, size, &rep);
	if (ours < 0 && rep.reason[0] == '\0')
		abort();
	if ((ours == 0) != jansson_accepts(data, size))
		abort();
	/* And through the confined validator's entry point and the wire. */
	return fuzz_media("application/json", "x.json", data, size);
}
