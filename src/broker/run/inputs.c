/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inputs.c - local inputs of a one-line run, and the record of every
 * input (see inputs.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "inputs.h"
#include "job.h"
#include "store.h"

bool sbx_local_input_spec(const char *s)
{
	return strchr(s, '=') || strchr(s, '/');
}

int sbx_local_inputs_parse(const char *const *specs, struct sbx_local_inputs *li,
			   struct sbx_error *err)
{
	li->v = NULL;
	li->n = 0;
	for (size_t i = 0; specs && specs[i]; i++) {
		const char *s = specs[i], *eq = strchr(s, '='), *path, *slash;
		_cleanup_free_ char *name = NULL;

		if (!sbx_local_input_spec(s))
			continue;
		if (eq) {
			name = sbx_xstrndup(s, (size_t)(eq - s));
			path = eq + 1;
		} else {
			/* -i PATH: its last component names it. */
			path = s;
			slash = strrchr(s, '/');
			name = sbx_xstrdup(slash + 1);
		}
		if (!*path) {
			sbx_error_set(err, SBX_EXIT_USAGE, 0, "run: -i %s: expected NAME=PATH, with a PATH",
				      s);
			return -1;
		}
		if (!sbx_handle_name_valid(name)) {
			sbx_error_set(err, SBX_EXIT_USAGE, 0,
				      "run: -i %s: \"%s\" is not a valid input name "
				      "(^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$)",
				      s, name);
			sbx_error_hint(err, "name the file in /work/in yourself: -i NAME=PATH");
			return -1;
		}
		for (size_t k = 0; k < li->n; k++)
			if (!strcmp(li->v[k].name, name)) {
				sbx_error_set(err, SBX_EXIT_USAGE, 0,
					      "run: -i %s: the input name \"%s\" is given twice", s, name);
				sbx_error_hint(err, "name each file in /work/in apart: -i NAME=PATH");
				return -1;
			}
		li->v = sbx_xrealloc(li->v, (li->n + 1) * sizeof(*li->v));
		li->v[li->n++] = (struct sbx_local_input){ .name = TAKE_PTR(name), .path = path,
							   .fd = -1 };
	}
	return 0;
}

/* What a file that is no regular file is, for the refusal. */
static const char *kind(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a fifo";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	default:
		return "not a regular file";
	}
}

static int open_one(struct sbx_local_input *in, uint64_t per_max, uint64_t *total,
		    uint64_t total_max, struct sbx_error *err)
{
	struct stat before, st;
	int fd;

	/* stat first: opening a device or a fifo can have effects of its own
	 * (a tape rewinds, a writer is woken); such a file is never opened. */
	if (stat(in->path, &before) < 0)
		return sbx_error_set(err, SBX_EXIT_REFUSED, errno, "-i %s: %s", in->name, in->path);
	if (!S_ISREG(before.st_mode))
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "-i %s: %s is %s; a local input must be a regular file",
				     in->name, in->path, kind(before.st_mode));
	/* O_NONBLOCK and O_NOCTTY in case it changed since the stat. */
	fd = open(in->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_REFUSED, errno, "-i %s: %s", in->name, in->path);
	in->fd = fd;
	if (fstat(fd, &st) < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "-i %s: %s", in->name, in->path);
	if (!S_ISREG(st.st_mode) || st.st_dev != before.st_dev || st.st_ino != before.st_ino)
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "-i %s: %s changed while it was opened; not taken", in->name,
				     in->path);
	if ((uint64_t)st.st_size > per_max)
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "-i %s: %s is %" PRIu64 " bytes, above the limit of %" PRIu64
				     " bytes per input",
				     in->name, in->path, (uint64_t)st.st_size, per_max);
	*total += (uint64_t)st.st_size;
	if (*total > total_max)
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "-i %s: %s: inputs exceed the limit of %" PRIu64 " bytes in total",
				     in->name, in->path, total_max);
	return 0;
}

int sbx_local_inputs_open(struct sbx_local_inputs *li, char *const *handles, uint64_t per_max,
			  uint64_t total_max, struct sbx_error *err)
{
	uint64_t total = 0;

	for (size_t i = 0; i < li->n; i++) {
		for (size_t k = 0; handles && handles[k]; k++)
			if (!strcmp(handles[k], li->v[i].name))
				return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
						     "-i %s: \"%s\" is also a store handle of the job; "
						     "name the local file apart (-i NAME=PATH)",
						     li->v[i].path, li->v[i].name);
		if (open_one(&li->v[i], per_max, &total, total_max, err) < 0)
			return -1;
	}
	return 0;
}

int sbx_local_inputs_copy(const struct sbx_local_inputs *li, int in_dirfd, uint64_t per_max,
			  uint64_t total_max, uint64_t *used, struct sbx_error *err)
{
	*used = 0;
	for (size_t i = 0; i < li->n; i++) {
		uint64_t room = total_max - *used, bytes = 0;

		if (sbx_store_copy(li->v[i].fd, in_dirfd, li->v[i].name, room < per_max ? room : per_max,
				   &bytes, err) < 0) {
			sbx_error_prefix(err, "-i %s: ", li->v[i].path);
			return -1;
		}
		*used += bytes;
	}
	return 0;
}

void sbx_local_inputs_free(struct sbx_local_inputs *li)
{
	for (size_t i = 0; i < li->n; i++) {
		free(li->v[i].name);
		closep(&li->v[i].fd);
	}
	free(li->v);
	li->v = NULL;
	li->n = 0;
}

static bool listed(char *const *v, const char *s)
{
	for (; v && *v; v++)
		if (!strcmp(*v, s))
			return true;
	return false;
}

/* {"name", "origin", "size", "sha256"} of the copy @name in /work/in. */
static json_t *record_one(int in_dirfd, const char *name, const char *origin,
			  struct sbx_error *err)
{
	_cleanup_close_ int fd = openat(in_dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char hex[SBX_SHA256_HEX_LEN + 1];
	uint64_t size = 0;

	if (fd < 0) {
		sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "inputs: /work/in/%s", name);
		return NULL;
	}
	if (sbx_sha256_fd(fd, hex, &size, err) < 0)
		return NULL;
	return json_pack("{s:s,s:s,s:I,s:s}", "name", name, "origin", origin, "size",
			 (json_int_t)size, "sha256", hex);
}

json_t *sbx_inputs_record(int in_dirfd, char *const *handles, char *const *extract,
			  const struct sbx_local_inputs *li, struct sbx_error *err)
{
	json_t *a = json_array(), *e;

	for (size_t i = 0; handles && handles[i]; i++) {
		if (listed(extract, handles[i]))
			e = json_pack("{s:s,s:s,s:b}", "name", handles[i], "origin", "store",
				      "extracted", 1);
		else
			e = record_one(in_dirfd, handles[i], "store", err);
		if (!e)
			goto fail;
		json_array_append_new(a, e);
	}
	for (size_t i = 0; li && i < li->n; i++) {
		if (!(e = record_one(in_dirfd, li->v[i].name, "local", err)))
			goto fail;
		json_array_append_new(a, e);
	}
	return a;
fail:
	json_decref(a);
	return NULL;
}
