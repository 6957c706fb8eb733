/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h - the principal-scoped input store (SPEC §3, input_handles).
 *
 * Inputs live at STORE/<principal>/<handle>.  The principal comes from
 * the trusted caller only; the job names handles, and a handle is looked
 * up beneath the principal's directory fd with openat2 so that no name can
 * climb out, follow a symlink or cross a mount.  A handle that does not
 * resolve there is "not found" whatever the reason (missing, symlink,
 * directory, another principal's), with one message, so a refusal does
 * not tell whether the name exists elsewhere.
 *
 * Inputs are copied, never bound, into the run's /work/in; archives named
 * in "extract" are validated and extracted by the sbx-extract helper, a
 * separate confined process, so libarchive never loads into sbx.
 */
#ifndef SBX_STORE_H
#define SBX_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "error.h"

/* ^[a-z_][a-z0-9_-]{0,31}$ */
bool sbx_principal_name_valid(const char *s);

/*
 * sbx_store_root() - the store directory: @opt (--store), else
 * @config_store, else $XDG_DATA_HOME/sbx/store, else ~/.local/share/sbx/store.
 * *@out is newly allocated.  Fails (SBX_EXIT_UNAVAILABLE) only when no home
 * directory can be found for the default.
 */
int sbx_store_root(const char *opt, const char *config_store, char **out, struct sbx_error *err);

/*
 * sbx_store_open_principal() - an O_PATH fd of ROOT/@principal in *@dirfd.
 * An invalid principal name is a usage error (64).  A store or principal
 * directory that does not exist is not an error: *@dirfd is -1 and every
 * handle will be "not found" (77) when resolved.  A principal directory
 * that is a symlink or a mount point, or a kernel without openat2, is
 * SBX_EXIT_UNAVAILABLE (69) with a hint.
 */
int sbx_store_open_principal(const char *root, const char *principal, int *dirfd,
			     struct sbx_error *err);

/*
 * sbx_store_resolve() - open @handle beneath @principal_fd (may be -1)
 * read-only, without following symlinks, blocking on fifos, leaving the
 * directory or crossing mounts.  On success *@fd is the open file and
 * *@st its fstat.  Anything but a regular file is refused with
 * SBX_EXIT_REFUSED and the message `handle "H" not found for principal
 * "P"` (@principal is used in messages only).  An invalid handle name is
 * SBX_EXIT_INVALID; openat2 missing is SBX_EXIT_UNAVAILABLE.
 */
int sbx_store_resolve(int principal_fd, const char *principal, const char *handle, int *fd,
		      struct stat *st, struct sbx_error *err);

/*
 * sbx_store_copy() - copy @src_fd (from offset 0) into a new file @name
 * in @dst_dirfd (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0644), in the kernel
 * where it can (copy_file_range, then sendfile, then read/write).  More
 * than @max_bytes is refused (SBX_EXIT_REFUSED) however the file grows
 * while being copied, and the partial copy removed.  *@copied (may be
 * NULL) gets the byte count.  Other failures are SBX_EXIT_SOFTWARE.
 */
int sbx_store_copy(int src_fd, int dst_dirfd, const char *name, uint64_t max_bytes,
		   uint64_t *copied, struct sbx_error *err);

/*
 * sbx_store_materialize() - resolve every handle of @handles (NULL-
 * terminated) first, so that a refusal comes before anything is written;
 * then copy each into @in_dirfd/<handle>, or, for the handles also listed
 * in @extract, validate and extract it into @in_dirfd/<handle>/ with the
 * sbx-extract helper ($SBX_LIBEXECDIR, else the installed pkglibexecdir),
 * started as @ctl says (NULL: no cgroup, deadline or cancellation, the
 * helper's default memory limits; unit tests only).
 * @per_input_max caps each input's bytes (an archive's uncompressed
 * bytes), @total_max all of them.  Messages are prefixed
 * "input_handles[i]: ".  Runs without archives never start the helper.
 * Besides the usual codes: SBX_EXIT_TIMEOUT (the deadline passed),
 * SBX_EXIT_CANCELLED (@ctl->cancel_fd became readable; the signal is
 * consumed) and SBX_EXIT_LIMIT (the memory limit), each while extracting.
 */
struct sbx_cgroup;
struct sbx_extract_ctl {
	struct sbx_cgroup *cg;   /* the helper is moved in before it runs */
	int cancel_fd;           /* a signalfd: readable means cancel; -1: none */
	uint64_t deadline_ns;    /* CLOCK_MONOTONIC; 0: none */
	uint64_t wall_seconds;   /* named in the timeout message */
	uint64_t memory_mib;     /* the helper's --max-memory; 0: its default */
};
int sbx_store_materialize(int principal_fd, const char *principal, char *const *handles,
			  char *const *extract, int in_dirfd, uint64_t per_input_max,
			  uint64_t total_max, const struct sbx_extract_ctl *ctl,
			  struct sbx_error *err);

#endif
