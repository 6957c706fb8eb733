/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-job.c - libFuzzer entry point for the job file parser (json.c's
 * helpers with it, and the path scan behind load-time errors). */
#include "fuzz-util.h"

#include "job.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_job job;
	struct sbx_error err = { 0 };
	char path[SBX_JSON_PATH_MAX];
	int r = sbx_job_parse(&job, "fuzz.json", (const char *)data, size, &err);

	/* Either parsed, or an invalid-job error: one clean line. */
	if (r < 0)
		fuzz_check_error(&err, SBX_EXIT_INVALID);
	sbx_job_free(&job);

	/* The path scan takes any bytes and any offset. */
	sbx_json_path_at((const char *)data, size, size / 2, path);
	fuzz_assert(strlen(path) < SBX_JSON_PATH_MAX);
	sbx_json_path_at((const char *)data, size, size, path);
	return 0;
}
