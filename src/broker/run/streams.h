/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * streams.h - the payload's captured stdout and stderr, kept as files.
 *
 * The supervisor captures each stream up to the profile's stream_bytes_max
 * and the manifest records its sha256; these files are those bytes.  By
 * default they go to DIR/.sbx/stdout and DIR/.sbx/stderr of the artifacts
 * directory DIR; --stdout FILE and --stderr FILE put them elsewhere.
 *
 * ".sbx" is reserved at the top of DIR: no output of the payload's is
 * promoted under it (sbx_streams_reserve()), so nothing in DIR/.sbx/ is
 * the payload's, and sbx verify --artifacts can check the captures there.
 */
#ifndef SBX_STREAMS_H
#define SBX_STREAMS_H

#include <sys/types.h>

#include "collect.h"
#include "error.h"
#include "supervisor.h"

/* The directory of the captures in the artifacts directory. */
#define SBX_STREAMS_DIR ".sbx"

enum { SBX_STREAM_STDOUT, SBX_STREAM_STDERR, _SBX_STREAM_MAX };

/* Where one capture goes: FILE of --stdout/--stderr, or (dir_fd -1) the
 * artifacts directory. */
struct sbx_stream_target {
	int dir_fd;     /* FILE's directory, opened at the start (O_PATH) */
	char *name;     /* FILE's last component */
	char *shown;    /* FILE as given, for messages */
	dev_t dev;      /* of the directory */
	ino_t ino;
};

struct sbx_streams {
	struct sbx_stream_target t[_SBX_STREAM_MAX];
};

/**
 * sbx_streams_open() - resolve --stdout and --stderr when the run starts.
 * @st: filled in; release with sbx_streams_close(), also after an error.
 * @paths: FILE for stdout and stderr, each NULL for the default place.
 * @ad: the artifacts directory, opened already.
 *
 * FILE's directory is opened once, as the caller wrote it (symlinks in it
 * are the caller's choice); FILE itself must not exist: sbx never writes
 * through a symlink or over a file that is there.  It must not be inside
 * the artifacts directory either, and the two FILEs must differ.
 *
 * Return: 0, or -1 with SBX_EXIT_USAGE saying which rule FILE broke.
 */
int sbx_streams_open(struct sbx_streams *st, const char *const paths[_SBX_STREAM_MAX],
		     const struct sbx_artifacts_dir *ad, struct sbx_error *err);
void sbx_streams_close(struct sbx_streams *st);

/**
 * sbx_streams_reserve() - reject the payload's outputs under ".sbx".
 * @c: a collection, before validation.
 *
 * Every candidate whose first path component is ".sbx" in any letter case
 * (a case-insensitive file system would make ".SBX" the same directory)
 * becomes REJECTED with a reason that says the name is sbx's.
 */
void sbx_streams_reserve(struct sbx_collection *c);

/**
 * sbx_streams_keep() - write the captures where sbx_streams_open() said.
 * @st: the targets.
 * @ad: the artifacts directory, made below its opened ancestor if needed
 *      (after promotion: it may hold the artifacts by now).
 * @s: the captured streams, indexed by SBX_STREAM_*.
 *
 * Each file is created with O_CREAT | O_EXCL | O_NOFOLLOW (mode 0644 less
 * the umask) beneath a directory fd, never by a path string, and holds
 * exactly the captured bytes.  DIR/.sbx must be new: when something is
 * there already, nothing is written into it.
 *
 * Return: 0, or -1 with SBX_EXIT_SOFTWARE (a file is there now, a symlink
 * took the place of a directory, an I/O error; a file half written is
 * removed), or SBX_EXIT_UNAVAILABLE without openat2.
 */
int sbx_streams_keep(const struct sbx_streams *st, const struct sbx_artifacts_dir *ad,
		     const struct sbx_stream *const s[_SBX_STREAM_MAX], struct sbx_error *err);

#endif
