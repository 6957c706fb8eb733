/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect.h - collection of the payload's outputs, quarantine, validation
 * and promotion into --artifacts.
 *
 * Three steps, each its own call so the orchestrator can emit an event in
 * between:
 *
 *   sbx_collect()          walk /work/out through a dirfd (openat2 only),
 *                          copy every candidate into a fresh quarantine dir
 *                          with bounded reads, hashing while copying;
 *   (validation)           each candidate's quarantined copy handed to
 *                          the confined validator, its verdict taken
 *                          with sbx_collect_apply();
 *   sbx_collect_promote()  move what passed into the artifacts dir.
 *
 * The payload may still have processes racing in the output tree, so
 * nothing is trusted between the look and the open: every open re-checks
 * type, device, inode and link count, and only the quarantined copy (which
 * no one else can reach) is validated and promoted.
 *
 * Display paths: a path in struct sbx_artifact is relative to /work/out and
 * free of control characters.  A name that was rejected for its bytes
 * (control characters, DEL, invalid UTF-8, the characters clean_char() in
 * names.c refuses, a backslash) is shown with each offending byte written as
 * "\xNN" (four printable characters, a backslash among them as "\x5c"),
 * so the listing names the file without carrying the bytes themselves.
 * No promoted name contains a backslash and the escaping is one-to-one, so
 * no two entries of a collection share a display path.
 */
#ifndef SBX_COLLECT_H
#define SBX_COLLECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "reasoncode.h"

struct sbx_verdict_member;

enum sbx_artifact_status {
	SBX_ARTIFACT_PROMOTED,  /* passed so far; final after promotion */
	SBX_ARTIFACT_REJECTED,
	SBX_ARTIFACT_DISCARDED, /* valid, but the run did not complete */
	SBX_ARTIFACT_HELD,      /* valid, kept outside --artifacts for sbx promote */
};

struct sbx_artifact {
	char *path;        /* relative to /work/out, cleaned for display */
	uint64_t size;     /* bytes copied (or, when rejected before, as seen) */
	char sha256[65];   /* lowercase hex, "" when not hashed */
	char *media_type;  /* detected type, or NULL */
	enum sbx_artifact_status status;
	char *reason;      /* NULL when promoted */
	const char *reason_code; /* SBX_RC_* (reasoncode.h) with a reason, else NULL */
	bool partial;      /* promoted from a run that did not complete */
	bool formula_cells; /* CSV cells starting with = + - @ TAB CR */
	unsigned flags;     /* SBX_MEDIA_FLAG_*: suspicious but allowed */
	bool hold;          /* to be held, not promoted (sbx_collect_hold) */
	uint64_t width, height; /* images: dimensions the validator read */
	struct sbx_contract_result *contract; /* contract.h: NULL when none was checked */
	/* application/zip: its members as the validator listed them
	 * (verdict.h), NULL when it listed none. */
	struct sbx_verdict_member *members;
	size_t n_members;
	/* private to collect.c and promote.c */
	char qname[16];    /* name in the quarantine dir, "" when not copied */
	bool validated;
};

struct sbx_collect_limits {
	uint64_t max_files;        /* output_files */
	uint64_t max_bytes;        /* output_bytes */
	unsigned max_depth;        /* directory levels walked below /work/out
				    * (e.g. 16); a directory deeper than that
				    * is listed as rejected, not entered */
	size_t max_name;           /* bytes per name, e.g. 255 */
	uint64_t max_entries_seen; /* stop the walk after this many entries */
	/* How a name below a directory of the output tree is opened (and,
	 * with O_PATH, looked at): NULL is openat2() by this process.  When
	 * the payload's files belong to a host uid that is not this
	 * process's (subordinate ids), the opener of opener.h, which may
	 * read them; it takes the same flags and applies the same
	 * RESOLVE_* rules, and returns an fd or -1 with errno. */
	int (*open_at)(void *ud, int dirfd, const char *name, int flags);
	void *open_ud;
};

struct sbx_collection {
	struct sbx_artifact *items;
	size_t n;
	uint64_t bytes_found; /* regular files seen in the output root */
	uint64_t files_found;
	bool walk_stopped;    /* max_entries_seen was reached */
	size_t cap;           /* private: room in items */
	int quarantine_dirfd;
	char *quarantine_path;
};

/* Defaults for the limits that are not job limits. */
#define SBX_COLLECT_MAX_DEPTH 16
#define SBX_COLLECT_MAX_NAME 255
/* Names read from one directory; a directory holding more is refused
 * whole (the output tmpfs's inode cap keeps real trees far below this). */
#define SBX_COLLECT_MAX_DIR_NAMES (1u << 20)
/* max_entries_seen for @max_files: room for a few rejections per file. */
#define SBX_COLLECT_ENTRIES_FOR(max_files) (4 * (uint64_t)(max_files) + 64)

/*
 * sbx_collect() - walk the output root and quarantine the candidates.
 * @outroot_fd: directory fd of /work/out (not consumed; its offset is not
 *              used); @lim: caps; @quarantine_parent: trusted directory in
 *              which a private 0700 quarantine dir is created;
 * @c: filled in (zero it first); release with sbx_collection_free(), also
 *     after an error.
 *
 * Every entry met is either a candidate (status PROMOTED, not yet
 * validated) or listed as REJECTED with a reason.  Directories are
 * descended, not listed.
 *
 * Return: 0, or -1 with @err set: SBX_EXIT_UNAVAILABLE when the kernel has
 * no openat2 (there is no safe fallback), SBX_EXIT_SOFTWARE when the
 * quarantine cannot be written.
 */
int sbx_collect(int outroot_fd, const struct sbx_collect_limits *lim,
		const char *quarantine_parent, struct sbx_collection *c, struct sbx_error *err);

/*
 * Validation runs in the confined validator (src/broker/run/validation.c
 * starts it, verdict.h is what it answers); the collection only hands out
 * its candidates and takes the verdicts.
 *
 * sbx_collect_pending() - whether @a still waits for a verdict.
 * sbx_collect_open_candidate() - a read-only fd of @a's quarantined copy,
 * or -1 with @err set (SBX_EXIT_SOFTWARE).
 */
bool sbx_collect_pending(const struct sbx_artifact *a);
int sbx_collect_open_candidate(const struct sbx_collection *c, const struct sbx_artifact *a,
			       struct sbx_error *err);

/*
 * sbx_collect_apply() - take the validator's verdict @v on @a.  The type is
 * checked again against @a's name and @allowed (NULL-terminated), and a
 * path with a contract @k (the broker's own parse of it; NULL: none) must
 * come back with that contract checked.  Sets media_type, flags,
 * formula_cells, the dimensions and the contract result; a file that
 * failed (or whose answer does not fit) becomes REJECTED with the reason;
 * one that passed a contract with "hold": true is marked a->hold.
 */
struct sbx_verdict;
struct sbx_contract;
void sbx_collect_apply(struct sbx_collection *c, struct sbx_artifact *a,
		       const struct sbx_verdict *v, char *const *allowed,
		       const struct sbx_contract *k);

/* sbx_collect_unvalidated() - @a got no verdict: REJECTED, "not validated: @why". */
void sbx_collect_unvalidated(struct sbx_collection *c, struct sbx_artifact *a, const char *why);

/*
 * The artifacts directory, opened when the run starts.  --artifacts DIR is
 * resolved once: @base_fd is DIR itself when it exists then (an empty
 * directory, not a symlink), else the deepest existing directory above it
 * (O_PATH), with @rest the components still to be made below it (plain
 * names, never "." or "..").  Nothing after the start resolves DIR as a
 * path again.
 */
struct sbx_artifacts_dir {
	int base_fd;
	char *rest;   /* "" when base_fd is DIR */
	char *shown;  /* DIR as given, for messages */
};

/*
 * sbx_artifacts_dir_make() - make the artifacts directory below the fd
 * opened at the start (mkdirat, then openat2 without following a symlink,
 * one component at a time), and open it.  With @must_be_empty, a directory
 * that was made and filled by someone else since the start is refused (64);
 * without, it may hold the artifacts by now (the captured streams are
 * written after them).
 * Return: a close-on-exec read fd of it, or -1 with @err set.
 */
int sbx_artifacts_dir_make(const struct sbx_artifacts_dir *ad, bool must_be_empty,
			   struct sbx_error *err);

/*
 * sbx_artifacts_dir_open() - open --artifacts DIR for the run.  The path up
 * to DIR's parent is resolved as the caller wrote it (symlinks there are the
 * caller's own choice); DIR itself must not be a symlink.
 * Needs no openat2 (promotion does).
 * Return: 0, or -1 with SBX_EXIT_USAGE when DIR is a symlink, not a
 * directory, not empty or cannot be reached.  Release with
 * sbx_artifacts_dir_close(), also after an error.
 */
int sbx_artifacts_dir_open(const char *dir, struct sbx_artifacts_dir *ad, struct sbx_error *err);
void sbx_artifacts_dir_close(struct sbx_artifacts_dir *ad);

/* sbx_collect_check_artifacts_dir() - sbx_artifacts_dir_open() and close. */
int sbx_collect_check_artifacts_dir(const char *dir, struct sbx_error *err);

/*
 * sbx_collect_promote() - move validated candidates to the artifacts dir.
 * @ad: opened at the start; the missing components are made (0755) below
 *      @ad->base_fd with mkdirat() and opened with openat2 without following
 *      any symlink; DIR must (still) be empty;
 * @partial: the run timed out, was cancelled or hit a limit;
 * @retain_partial: partial_outputs is "retain".
 *
 * A promoted file lands at DIR/<path> with mode 0644; intermediate
 * directories are made with mkdirat() below a dirfd and never through a
 * symlink; a file that already exists is never replaced.  For a partial
 * run without retain, candidates become DISCARDED ("run did not
 * complete"); with retain they are promoted with partial = true.
 *
 * Return: 0, or -1 with @err set (SBX_EXIT_USAGE when DIR is not empty,
 * SBX_EXIT_SOFTWARE for I/O failures and for a symlink met below
 * @ad->base_fd; the artifacts not delivered are then marked REJECTED with
 * the reason).
 */
int sbx_collect_promote(struct sbx_collection *c, const struct sbx_artifacts_dir *ad,
			bool partial, bool retain_partial, struct sbx_error *err);

/*
 * sbx_collect_hold() - keep a validated candidate for a later `sbx promote`
 * instead of promoting it: its quarantine copy is moved (renameat2
 * RENAME_NOREPLACE, else a copy made O_EXCL) to @name, a plain name sbx
 * chose, in @hold_fd, the held area's private directory, with mode 0600.
 * @a->hold says whether to: the caller sets it for every artifact of a
 * partial run under partial_outputs "hold", and for an output whose contract
 * says "hold": true.  Candidates with @a->hold false, or not (or no longer)
 * validated, are left alone.  sbx_collect_promote() afterwards skips what
 * is held.
 * Return: 1 when held (status HELD), 0 when not asked to, -1 with @err set
 * when the move failed (@a is then REJECTED with the reason).
 */
int sbx_collect_hold(struct sbx_collection *c, struct sbx_artifact *a, int hold_fd,
		     const char *name, struct sbx_error *err);

/*
 * sbx_collect_release() - deliver one held file to the artifacts directory
 * @rootfd, at @path (relative, checked by the caller), by the rules of
 * sbx_collect_promote(): intermediate directories made with mkdirat() and
 * opened with openat2 without following a symlink, the file made O_EXCL
 * (never replacing one), mode 0644.  The held file @name below @hold_fd is
 * opened with openat2 (no symlink, no magic link), must be a regular file
 * with one link and @size bytes, and is copied while hashed: what was
 * copied must have @sha256, the digest recorded when it was held, or the
 * new file is removed again.  Only then is the held file unlinked.
 * Return: 0 when delivered, 1 when refused (*@why: a static reason; nothing
 * is left in @rootfd's tree but directories), -1 with @err set for an I/O
 * error (SBX_EXIT_UNAVAILABLE without openat2).
 */
int sbx_collect_release(int hold_fd, const char *name, uint64_t size, const char *sha256,
			int rootfd, const char *path, const char **why, struct sbx_error *err);

/* The artifact listed under @path, or NULL (for required_outputs). */
const struct sbx_artifact *sbx_collection_find(const struct sbx_collection *c, const char *path);

/* Free the items and remove the quarantine dir with what is left in it. */
void sbx_collection_free(struct sbx_collection *c);

/*
 * sbx_collect_check_name() - the collector's checks on one directory entry
 * name (one component, as getdents gives it), for tests and fuzzers.
 * Return: NULL when @name may be an artifact's name, else the reason it is
 * rejected; *@shown (owned by the caller) is how the listing shows it.
 */
const char *sbx_collect_check_name(const char *name, size_t max_name, char **shown);

#endif
