/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-archive.c - libFuzzer entry point for the archive validator (pass 1
 * of sbx-extract), on a memfd as the helper gets a regular file. */
#include "config.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sbx-archive.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_archive_limits lim;
	struct sbx_archive_report rep = { 0 };
	int fd = memfd_create("fuzz-archive", MFD_CLOEXEC);

	if (fd < 0 || sbx_write_all(fd, data, size) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		__builtin_trap();
	/* Small caps keep each input fast; the checks are the same. */
	sbx_archive_limits_default(&lim, 1 << 20);
	sbx_archive_check(fd, &lim, &rep);
	close(fd);
	return 0;
}
