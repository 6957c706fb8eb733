/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-media.h - shared body of the media validator fuzzers: the input is
 * written to a memfd (the validators read files, not buffers) and run
 * through detection and the validator of one type.
 */
#ifndef SBX_FUZZ_MEDIA_H
#define SBX_FUZZ_MEDIA_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "validate.h"

static int fuzz_media(const char *type, const char *name, const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct sbx_media_report rep;
	const char *detected;

	if (fd < 0) {
		fd = memfd_create("fuzz-media", MFD_CLOEXEC);
		if (fd < 0)
			abort();
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	detected = sbx_media_detect(data, size < SBX_MEDIA_HEAD ? size : SBX_MEDIA_HEAD, name);
	(void)detected;
	(void)sbx_media_type_for_name(name);
	if (sbx_media_validate(type, fd, size, &rep) < 0 && rep.reason[0] == '\0')
		abort(); /* every rejection must say why */
	return 0;
}

#endif
