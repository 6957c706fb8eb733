/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h - the principal-scoped input store (SPEC §3, input_handles).
 *
 * Inputs live at STORE/<principal>/<handle>.  The principal comes from
 * the trusted caller only; the job names handles, and a handle is looked
 * up beneath the principal's directory fd with openat2 so that no name can
 * climb out, follow a symlink or cross a mount.  A handle that does not
 * resolve there is "not found" whatever the reason (missing, symlink,
 * directory, another principal's); the message names the path in this
 * principal's directory and what is wrong with it, and so never tells
 * whether the name exists elsewhere.
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
 * *@out is newly allocated; *@origin (may be NULL) says which of these it
 * is, for messages ("--store", ...; static).  Fails (SBX_EXIT_UNAVAILABLE)
 * only when no home directory can be found for the default.
 */
int sbx_store_root(const char *opt, const char *config_store, char **out, const char **origin,
		   struct sbx_error *err);

/*
 * The principal's part of the store, as a run sees it: an O_PATH fd of
 * ROOT/<principal>, or -1 and which of the two directories is missing, so
 * that a handle's refusal can say what to create.  Messages only ever
 * name paths of this principal's part (or the store itself), never
 * whether a name exists for someone else.
 */
enum sbx_store_missing { SBX_STORE_PRESENT, SBX_STORE_NO_ROOT, SBX_STORE_NO_PRINCIPAL };
struct sbx_store {
	char *root;                     /* the store directory */
	const char *origin;             /* where root came from (static), or NULL */
	const char *principal;          /* not owned */
	char *dir;                      /* root/principal */
	int fd;                         /* O_PATH of dir; -1: see missing */
	enum sbx_store_missing missing;
};
#define SBX_STORE_INIT { .fd = -1 }
void sbx_store_close(struct sbx_store *s);

/*
 * sbx_store_open() - the principal's directory of the store at @root
 * (@origin as sbx_store_root() gives it, named when @root is missing).
 * An invalid principal name is a usage error (64).  A store or principal
 * directory that does not exist is not an error: s->fd is -1, s->missing
 * says which, and every handle is refused (77) when resolved, naming the
 * path that is missing.  A principal directory that is a symlink or a
 * mount point, or a kernel without openat2, is SBX_EXIT_UNAVAILABLE (69)
 * with a hint.  @s is filled in (and must be sbx_store_close()d) also on
 * failure.
 */
int sbx_store_open(const char *root, const char *origin, const char *principal,
		   struct sbx_store *s, struct sbx_error *err);

/*
 * sbx_store_resolve() - open @handle beneath @s's principal directory
 * read-only, without following symlinks, blocking on fifos, leaving the
 * directory or crossing mounts.  On success *@fd is the open file and
 * *@st its fstat.  Anything else is refused with SBX_EXIT_REFUSED and a
 * message `handle "H" not found for principal "P": ...` that names the
 * store path at fault and what is wrong with it (the store or the
 * principal's directory missing, the file missing, a symlink, not a
 * regular file, not readable).  An invalid handle name is
 * SBX_EXIT_INVALID; openat2 missing is SBX_EXIT_UNAVAILABLE.
 */
int sbx_store_resolve(const struct sbx_store *s, const char *handle, int *fd, struct stat *st,
		      struct sbx_error *err);

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
	bool own_id;             /* uid 0 that maps itself (root of a container's user
				  * namespace without root_ids): the helper runs as it,
				  * in a user namespace of its own, as an ordinary
				  * caller's does */
};
int sbx_store_materialize(const struct sbx_store *store, char *const *handles,
			  char *const *extract, int in_dirfd, uint64_t per_input_max,
			  uint64_t total_max, const struct sbx_extract_ctl *ctl,
			  struct sbx_error *err);

/*
 * sbx_store_extract() - validate and extract @archive_fd into a new
 * directory @in_dirfd/@name with sbx-extract, as for a handle in
 * "extract" (@budget: the uncompressed bytes it may hold; *@bytes gets
 * them).  For a fetched archive (fetch-run.c), whose file the caller has
 * unlinked.  Errors as sbx_store_materialize()'s, prefixed "archive".
 */
int sbx_store_extract(int archive_fd, int in_dirfd, const char *name, uint64_t budget,
		      const struct sbx_extract_ctl *ctl, uint64_t *bytes, struct sbx_error *err);

#endif
