/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run-temp.c - the run's private temp dir, which holds the quarantine of
 * its outputs between collection and validation.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "run.h"

/*
 * The run's private temp dir, which holds the quarantine: a name no one
 * can predict (the run id is no secret: it names the run's cgroup, which
 * every local user can list), recorded before it exists so that gc knows
 * it.  It is made 0700 only when there is something to collect: a run
 * without outputs (most runs) never writes to a disk /tmp, where a mkdir
 * and its rmdir cost ~0.3 ms.  No one can take the name in the meantime,
 * as no one else knows it; a taken name is retried under a new one.
 * Whether the directory can be made at all is checked at the start
 * (sbx_run_temp_check_base), so that an unusable TMPDIR refuses the run before
 * the payload starts rather than failing its collection.
 */
char *sbx_run_temp_path(const char *run_id)
{
	unsigned char b[8];
	char suffix[2 + 2 * sizeof(b)];

	sbx_random_bytes(b, sizeof(b));
	suffix[0] = '-';
	sbx_hex(b, sizeof(b), suffix + 1);
	return sbx_state_temp_path(run_id, suffix);
}

int sbx_run_temp_make(struct sbx_run *run)
{
	struct stat st;

	/* A taken name is someone's 1-in-2^64 guess or a bug: try a few. */
	for (int tries = 0; mkdir(run->temp_dir, 0700) < 0; tries++) {
		if (errno != EEXIST) {
			/* A host setting: TMPDIR names no place for it. */
			sbx_error_set(&run->err, SBX_EXIT_UNAVAILABLE, errno,
				      "temp dir: cannot create %s", run->temp_dir);
			sbx_error_hint(&run->err, SBX_TEMP_HINT);
			return -1;
		}
		if (tries == 3)
			return sbx_error_set(&run->err, SBX_EXIT_SOFTWARE, errno, "%s", run->temp_dir);
		free(run->temp_dir);
		run->temp_dir = sbx_run_temp_path(run->run_id);
		if (sbx_state_add_temp(run->state, run->temp_dir, &run->err) < 0 ||
		    sbx_state_save(run->state, &run->err) < 0)
			return -1;
	}
	run->temp_fd = open(run->temp_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (run->temp_fd < 0) {
		sbx_error_set(&run->err, SBX_EXIT_SOFTWARE, errno, "%s", run->temp_dir);
		rmdir(run->temp_dir); /* just made, still empty */
		return -1;
	}
	if (fstat(run->temp_fd, &st) < 0)
		return sbx_error_set(&run->err, SBX_EXIT_SOFTWARE, errno, "%s", run->temp_dir);
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		return sbx_error_set(&run->err, SBX_EXIT_SOFTWARE, 0,
				     "%s: not the private directory just made", run->temp_dir);
	return 0;
}

/* Before anything runs: can this user make directories in the temp base?
 * (No write: faccessat with the effective ids answers it, EROFS included.) */
int sbx_run_temp_check_base(struct sbx_run *run)
{
	_cleanup_free_ char *base = sbx_state_temp_base();
	struct stat st;

	int e = 0;

	if (stat(base, &st) < 0)
		e = errno;
	else if (!S_ISDIR(st.st_mode))
		e = ENOTDIR;
	else if (faccessat(AT_FDCWD, base, W_OK | X_OK, AT_EACCESS) < 0)
		e = errno;
	if (e) {
		sbx_error_set(&run->err, SBX_EXIT_UNAVAILABLE, e, "temp dir: cannot create %s",
			      run->temp_dir);
		sbx_error_hint(&run->err, SBX_TEMP_HINT);
		return -1;
	}
	return 0;
}

/* Remove the (by now empty) temp dir, if the name still is the directory
 * that was made; a replacement is not ours to remove. */
void sbx_run_temp_remove(struct sbx_run *run)
{
	struct stat made, now;

	if (run->temp_fd < 0)
		return;
	if (fstat(run->temp_fd, &made) == 0 && lstat(run->temp_dir, &now) == 0 &&
	    made.st_dev == now.st_dev && made.st_ino == now.st_ino)
		rmdir(run->temp_dir);
	close(run->temp_fd);
	run->temp_fd = -1;
}
