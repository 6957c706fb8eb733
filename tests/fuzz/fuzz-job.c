/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-job.c - libFuzzer entry point for the job file parser. */
#include "config.h"

#include <stdint.h>

#include "job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_job job;
	struct sbx_error err = { 0 };
	int r = sbx_job_parse(&job, "fuzz.json", (const char *)data, size, &err);

	/* Either parsed, or an invalid-job error with a message: nothing else. */
	if (r < 0 && (err.code != SBX_EXIT_INVALID || !err.msg[0]))
		__builtin_trap();
	sbx_job_free(&job);
	return 0;
}
