/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inputs.h - a one-line run's local files (-i NAME=PATH, -i PATH), and
 * the manifest's record of every input the payload got in /work/in.
 *
 * A local input is the trusted caller's own file, handed in the way a
 * back end hands in a store handle, for a person at a shell: it is never
 * a member of the job (a job names handles, never host paths), so
 * --print-job and job_sha256 do not change with it; the manifest's
 * "inputs" records its name, size and sha256 with origin "local".
 *
 * The broker runs as the caller, so the caller's own rights decide what
 * it may read: PATH is opened as written, a symlink the caller made to
 * its own file is followed like any path the caller types.  Only a
 * regular file is taken (a fifo, a socket or a device is refused before
 * it is opened), under the profile's input_bytes_max per input and in
 * total with the store's handles, as a handle is.  Refusals are 77.
 */
#ifndef SBX_INPUTS_H
#define SBX_INPUTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "digest.h"
#include "error.h"

struct sbx_local_input {
	char *name;     /* its name in /work/in */
	const char *path; /* PATH as the caller wrote it (not owned) */
	int fd;         /* opened by sbx_local_inputs_open(); -1 */
};

struct sbx_local_inputs {
	struct sbx_local_input *v;
	size_t n;
};

/* Is this -i a local file (NAME=PATH, or a PATH with a '/') rather than
 * a store handle?  "./data.csv" is local, "data.csv" a handle. */
bool sbx_local_input_spec(const char *s);

/*
 * sbx_local_inputs_parse() - the local ones of the -i options @specs
 * (NULL-terminated, may be NULL).  NAME must be a valid handle name; for
 * -i PATH it is PATH's last component.  A bad or repeated NAME is a usage
 * error (64) that says how to name it.
 */
int sbx_local_inputs_parse(const char *const *specs, struct sbx_local_inputs *li,
			   struct sbx_error *err);

/*
 * sbx_local_inputs_open() - open every local input, before anything of
 * the sandbox exists: refused (77) when PATH cannot be opened, is not a
 * regular file, is larger than @per_max, or the local inputs together
 * exceed @total_max, or when a NAME is also one of @handles.
 */
int sbx_local_inputs_open(struct sbx_local_inputs *li, char *const *handles, uint64_t per_max,
			  uint64_t total_max, struct sbx_error *err);

/*
 * sbx_local_inputs_copy() - copy each into @in_dirfd/NAME (as the store
 * copies a handle, re-checking the caps while copying: a file that grew
 * is refused, 77).  *@used gets the bytes copied, which the store's
 * inputs may then not exceed in total with.
 */
int sbx_local_inputs_copy(const struct sbx_local_inputs *li, int in_dirfd, uint64_t per_max,
			  uint64_t total_max, uint64_t *used, struct sbx_error *err);

void sbx_local_inputs_free(struct sbx_local_inputs *li);

/*
 * sbx_inputs_record() - the manifest's "inputs": for each store handle,
 * then each local input, {"name", "origin": "store" | "local", "size",
 * "sha256"} of the copy in @in_dirfd, as the payload sees it; an
 * extracted archive is {"name", "origin": "store", "extracted": true}.
 * Return: a new array, or NULL with @err set (70).
 */
json_t *sbx_inputs_record(int in_dirfd, char *const *handles, char *const *extract,
			  const struct sbx_local_inputs *li, struct sbx_error *err);

#endif
