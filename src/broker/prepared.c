/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prepared.c - the check every run of a profile with a prepare step makes
 * of its prepared state (prepare.h), and where that state lives.
 *
 * The state file records what the tree was built from (the recipe's
 * bytes, prepare-recipe.c, and the interpreter's and declared inputs'
 * identity) and every entry's identity (inode, size, mtime, ctime), so
 * that a run checks it with one read, one small JSON re-encoding and a
 * few fstatat calls, without hashing: ctime cannot be set back, so an
 * entry that was written, replaced or added to shows.  `sbx check`
 * re-hashes the content as well.
 *
 * Whose it is comes first: identities prove nothing of a tree someone
 * else wrote.  The state, its tree and every directory above them belong
 * to root, the catalog's owner or the caller, and none of those
 * directories is writable by group or others (trustdir.h); anything else
 * is "unusable", refused before a byte of it is read.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"
#include "json.h"
#include "prepare-internal.h"

/*
 * The base directory, and whose the prepared state may be: root's, the
 * catalog's owner's (who could change the profile to do anything anyway)
 * or the caller's own.  Someone else's, or below a directory someone else
 * may write, and that someone chose what every run of the profile mounts
 * and copies into its workspace.
 */
int sbx_prepared_base(const struct sbx_hostconfig *cfg, const struct sbx_catalog *cat,
		      char **out, struct sbx_trust *who, struct sbx_error *err)
{
	struct stat st;
	const char *xdg, *home;

	if (stat(cat->dir, &st) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "prepare: %s", cat->dir);
	sbx_trust_add(who, 0);
	sbx_trust_add(who, st.st_uid);
	sbx_trust_add(who, geteuid());
	if (cfg->prepared_dir) {
		*out = sbx_xstrdup(cfg->prepared_dir);
		return 0;
	}
	if (st.st_uid == 0) {
		*out = sbx_xstrdup(LOCALSTATEDIR "/lib/sbx/prepared");
		return 0;
	}
	if (st.st_uid != getuid()) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
			      "prepare: the catalog %s belongs to uid %u, which has no prepared state "
			      "this user can find", cat->dir, (unsigned)st.st_uid);
		sbx_error_hint(err, "set \"prepared_dir\" in the host config to that user's");
		return -1;
	}
	if ((xdg = getenv("XDG_STATE_HOME")) && xdg[0] == '/')
		*out = sbx_xasprintf("%s/sbx/prepared", xdg);
	else if ((home = getenv("HOME")) && home[0] == '/')
		*out = sbx_xasprintf("%s/.local/state/sbx/prepared", home);
	else
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				     "prepare: no $XDG_STATE_HOME or $HOME for the prepared state");
	return 0;
}

/*
 * One directory a catalog: two catalogs with a profile of the same name
 * (a copy under test beside the installed one, two checkouts) would
 * otherwise replace each other's state at every prepare and refuse each
 * other's runs.  The name is a digest of the catalog's canonical path, so
 * that a catalog reached through a symbolic link is the same catalog; the
 * state file names the path (the "catalog" line) for people, and a run
 * compares it.
 */
int sbx_prepared_dir(const struct sbx_hostconfig *cfg, const struct sbx_catalog *cat,
		     const struct sbx_profile *pr, char **dir, char **catalog,
		     struct sbx_trust *who, struct sbx_error *err)
{
	_cleanup_free_ char *base = NULL, *real = NULL;
	char sha[65];

	if (sbx_prepared_base(cfg, cat, &base, who, err) < 0)
		return -1;
	if (!(real = realpath(cat->dir, NULL)))
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "prepare: %s", cat->dir);
	if (sbx_sha256_buf(real, strlen(real), sha, err) < 0)
		return -1;
	*dir = sbx_xasprintf("%s/%.16s/%s", base, sha, pr->name);
	*catalog = TAKE_PTR(real);
	return 0;
}

/* BASE/<catalog>/<profile>, every directory on the way checked (trustdir.h); made
 * when @create.  On error the message is the profile's. */
int sbx_prepared_open_dir(const char *dir, const struct sbx_profile *pr,
			  const struct sbx_trust *who, bool create, struct sbx_error *err)
{
	int fd = sbx_dir_open_trusted(dir, "prepared_dir", who, create, err);

	if (fd < 0 && err->errnum != ENOENT)
		sbx_error_prefix(err, "%s: prepared state unusable: ", pr->name);
	return fd;
}

/* A file of the state or the tree that is not one of @who's. */
static int foreign(struct sbx_error *err, const struct sbx_profile *pr, const char *dir,
		   const char *path, uid_t uid, const struct sbx_trust *who)
{
	char owners[64];

	sbx_trust_text(who, owners, sizeof(owners));
	sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
		      "%s: prepared state unusable: %s/%s: owned by uid %u, not by %s", pr->name, dir,
		      path, (unsigned)uid, owners);
	sbx_error_hint(err, "run 'sbx prepare %s' as %s, which replaces it", pr->name, owners);
	return -1;
}

void sbx_prepared_free(struct sbx_prepared *p)
{
	free(p->tree);
	p->tree = NULL;
}

/* --- the run's check --------------------------------------------------------- */

static int stale(struct sbx_error *err, const struct sbx_profile *pr, const char *fmt,
		 const char *what)
{
	sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: prepared state %s", pr->name, fmt);
	if (what) {
		char buf[sizeof(err->msg)];
		snprintf(buf, sizeof(buf), "%s: %s", err->msg, what);
		snprintf(err->msg, sizeof(err->msg), "%s", buf);
	}
	sbx_error_hint(err, PREPARE_HINT_FMT, pr->name);
	return -1;
}

/* A @kind line's fields after the identity: @st and, for entries, its ctime. */
static bool identity_matches(const char *fields, bool entry, const struct stat *st,
			     const char **path)
{
	char type[8];
	unsigned long long dev, ino, size;
	long long mt, ct = 0;
	int off = 0;

	if (entry ? sscanf(fields, "%7s %llu %llu %llu %lld %lld %n", type, &dev, &ino, &size, &mt,
			   &ct, &off) != 6 :
		    sscanf(fields, "%7s %llu %llu %llu %lld %n", type, &dev, &ino, &size, &mt,
			   &off) != 5)
		return false;
	*path = fields + off;
	return off > 0 && !strcmp(type, type_name(st->st_mode)) && dev == (unsigned long long)st->st_dev &&
	       ino == (unsigned long long)st->st_ino && size == (unsigned long long)st->st_size &&
	       mt == ns(&st->st_mtim) && (!entry || ct == ns(&st->st_ctim));
}

/* The path at the end of an entry line (for sbx check's re-hash). */
static const char *entry_path(const char *fields, char type[8])
{
	unsigned long long x;
	long long y;
	int off = 0;

	if (sscanf(fields, "%7s %llu %llu %llu %lld %lld %n", type, &x, &x, &x, &y, &y, &off) != 6 ||
	    !off)
		return NULL;
	return fields + off;
}

/*
 * The state file, one record a line, the path last on its line:
 *   sbx-prepared 2
 *   catalog PATH                         (the catalog's canonical path)
 *   recipe FNV1A64 SIZE SHA256           (of sbx_prepare_recipe()'s bytes)
 *   tree NAME SHA256
 *   interpreter absent PATH | interpreter TYPE DEV INO SIZE MTIME_NS PATH
 *   input absent PATH | input TYPE DEV INO SIZE MTIME_NS PATH
 *   entry TYPE DEV INO SIZE MTIME_NS CTIME_NS PATH    (the tree itself is ".")
 * Version 1 recorded the whole profile file instead of its recipe.
 * Text rather than JSON: a run reads it, and a JSON parser's allocations
 * cost more than every fstatat the check makes.
 */
/*
 * Root's sandboxes are an unprivileged host uid of their own (root_ids),
 * and sbx-init binds the prepared tree as that uid: every directory above
 * the tree must let others search it, or the bind fails inside (EACCES)
 * after the run started.  Say so before anything runs.  A few stats.
 */
static int tree_reachable(const char *tree, const char *profile, struct sbx_error *err)
{
	_cleanup_free_ char *dir = NULL;
	char *slash;
	struct stat st;

	if (geteuid() != 0)
		return 0; /* the sandbox is the caller's own uid */
	dir = sbx_xstrdup(tree);
	while ((slash = strrchr(dir, '/')) && slash != dir) {
		*slash = '\0';
		if (stat(dir, &st) < 0)
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno,
					     "%s: prepared state unusable: %s", profile, dir);
		if (!(st.st_mode & S_IXOTH)) {
			sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				      "%s: prepared state unusable: %s: not searchable by others, so root's "
				      "sandboxes (a host uid of their own) cannot bind the prepared tree",
				      profile, dir);
			sbx_error_hint(err, "chmod o+x %s, or set \"prepared_dir\" in the host config "
				       "to a directory under searchable ones", dir);
			return -1;
		}
	}
	return 0;
}

/* An "input" or "interpreter" line's fields (after the keyword) against
 * what @path is now. */
static bool host_file_matches(const char *fields, const char *path)
{
	struct stat st;
	const char *p = NULL;
	int r = stat(path, &st);

	if (!strncmp(fields, "absent ", 7))
		return !strcmp(fields + 7, path) && r < 0;
	return r == 0 && identity_matches(fields, false, &st, &p) && !strcmp(p, path);
}

int sbx_prepared_lookup(const struct sbx_hostconfig *cfg, const struct sbx_catalog *cat,
			const struct sbx_profile *pr, bool deep, struct sbx_prepared *out,
			struct sbx_error *err)
{
	_cleanup_free_ char *dir = NULL, *catalog = NULL, *data = NULL, *recipe = NULL,
			    *interp = NULL;
	_cleanup_json_ json_t *entries = deep ? json_array() : NULL;
	_cleanup_close_ int dfd = -1, sfd = -1, tfd = -1;
	char tree[128] = "", sha[65] = "", *save = NULL, *line;
	size_t n_in = 0, n_entries = 0, recipe_len = 0;
	bool have_catalog = false, have_recipe = false, have_interp = false;
	struct sbx_trust who = { 0 };
	struct stat st;
	ssize_t n;

	if (sbx_prepared_dir(cfg, cat, pr, &dir, &catalog, &who, err) < 0)
		return -1;
	/* Every directory down to the state first: one that someone else
	 * owns or may write is refused even before the state exists, as
	 * they could make it before sbx prepare does. */
	dfd = sbx_prepared_open_dir(dir, pr, &who, false, err);
	if (dfd < 0 && err->errnum != ENOENT)
		return -1;
	if (dfd >= 0)
		sfd = openat(dfd, STATE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0) {
		*err = (struct sbx_error){ 0 };
		return stale(err, pr, "missing", dir);
	}
	/* Whose the state is: a file anyone else could write proves nothing. */
	if (fstat(sfd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > STATE_MAX_BYTES)
		return stale(err, pr, "unreadable", STATE_FILE);
	if (!sbx_trust_has(&who, st.st_uid))
		return foreign(err, pr, dir, STATE_FILE, st.st_uid, &who);
	if (st.st_mode & 022)
		return stale(err, pr, "tampered with", "state: writable by group or others");
	data = sbx_xmalloc((size_t)st.st_size + 1);
	n = sbx_read_all(sfd, data, (size_t)st.st_size + 1);
	if (n != st.st_size)
		return stale(err, pr, "unreadable", STATE_FILE);
	data[n] = '\0';
	line = strtok_r(data, "\n", &save);
	if (line && !strcmp(line, "sbx-prepared 1"))
		return stale(err, pr, "stale", "made by an earlier sbx, which kept it per profile name");
	if (!line || strcmp(line, "sbx-prepared 2"))
		return stale(err, pr, "unreadable", STATE_FILE);
	if (sbx_prepare_recipe(pr, &recipe, &recipe_len, err) < 0)
		return -1;
	interp = sbx_prepare_interpreter(pr);
	while ((line = strtok_r(NULL, "\n", &save))) {
		const char *path = NULL;
		struct stat es;

		if (!strncmp(line, "catalog ", 8)) {
			/* The directory's name is a digest of the path: this
			 * tells a collision from the catalog itself. */
			if (strcmp(line + 8, catalog))
				return stale(err, pr, "unreadable", "it names another catalog");
			have_catalog = true;
		} else if (!strncmp(line, "recipe ", 7)) {
			char fnv[17];
			unsigned long long size;

			if (sscanf(line + 7, "%16s %llu", fnv, &size) != 2)
				return stale(err, pr, "unreadable", STATE_FILE);
			if (size != recipe_len || strtoull(fnv, NULL, 16) != fnv1a64(recipe, recipe_len))
				return stale(err, pr, "stale",
					     "the prepare step's recipe changed since it was prepared "
					     "(its \"prepare\", or the profile's binds, symlinks or env)");
			have_recipe = true;
		} else if (!strncmp(line, "tree ", 5)) {
			if (sscanf(line + 5, "%127s %64s", tree, sha) != 2 || strncmp(tree, "tree-", 5) ||
			    strchr(tree, '/') || strlen(sha) != 64)
				return stale(err, pr, "unreadable", STATE_FILE);
			tfd = openat(dfd, tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (tfd < 0)
				return stale(err, pr, "missing", tree);
		} else if (!strncmp(line, "interpreter ", 12)) {
			if (!have_recipe || have_interp)
				return stale(err, pr, "unreadable", STATE_FILE);
			if (!host_file_matches(line + 12, interp)) {
				_cleanup_free_ char *what =
					sbx_xasprintf("%s (the prepare step's interpreter) changed", interp);
				return stale(err, pr, "stale", what);
			}
			have_interp = true;
		} else if (!strncmp(line, "input ", 6)) {
			/* The inputs in the profile's order, each as it was. */
			const char *want = pr->prepare->inputs[n_in];

			if (!have_recipe || !want)
				return stale(err, pr, "stale", "the declared inputs changed");
			if (!host_file_matches(line + 6, want))
				return stale(err, pr, "stale", want);
			n_in++;
		} else if (!strncmp(line, "entry ", 6)) {
			/* Every entry as it was recorded: one fstatat each. */
			char type[8];
			const char *p = entry_path(line + 6, type);

			if (tfd < 0 || !p || ++n_entries > TREE_MAX_ENTRIES + 1)
				return stale(err, pr, "unreadable", STATE_FILE);
			if (fstatat(tfd, p, &es, AT_SYMLINK_NOFOLLOW) < 0)
				return stale(err, pr, "tampered with", p);
			if (!sbx_trust_has(&who, es.st_uid)) {
				_cleanup_free_ char *rel = strcmp(p, ".") ?
					sbx_xasprintf("%s/%s", tree, p) : sbx_xstrdup(tree);
				return foreign(err, pr, dir, rel, es.st_uid, &who);
			}
			if (!identity_matches(line + 6, true, &es, &path) || (es.st_mode & 0222))
				return stale(err, pr, "tampered with", p);
			if (entries)
				json_array_append_new(entries, json_pack("{s:s,s:s}", "path", p,
									 "type", type));
		} else {
			return stale(err, pr, "unreadable", STATE_FILE);
		}
	}
	if (!have_catalog || !have_recipe || !have_interp || tfd < 0 || !n_entries)
		return stale(err, pr, "unreadable", STATE_FILE);
	if (pr->prepare->inputs[n_in])
		return stale(err, pr, "stale", "the declared inputs changed");
	if (deep) {
		char hex[65];

		if (sbx_prepared_hash_tree(tfd, entries, hex, err) < 0 || strcmp(hex, sha))
			return stale(err, pr, "tampered with", "its content no longer matches its digest");
	}
	out->tree = sbx_xasprintf("%s/%s", dir, tree);
	snprintf(out->sha256, sizeof(out->sha256), "%s", sha);
	return tree_reachable(out->tree, pr->name, err);
}

int sbx_prepared_admit(struct sbx_plan *plan, const struct sbx_hostconfig *cfg,
		       const struct sbx_catalog *cat, struct sbx_error *err)
{
	struct sbx_prepared p = { 0 };

	if (!plan->profile || !plan->profile->prepare)
		return 0;
	if (sbx_prepared_lookup(cfg, cat, plan->profile, false, &p, err) < 0)
		return -1;
	plan->prepared_tree = p.tree;
	memcpy(plan->prepared_sha256, p.sha256, sizeof(p.sha256));
	return 0;
}

const char *sbx_prepared_verdict(const struct sbx_error *err)
{
	if (strstr(err->msg, ": prepared state missing"))
		return "missing";
	if (strstr(err->msg, ": prepared state stale") ||
	    strstr(err->msg, ": prepared state tampered with") ||
	    strstr(err->msg, ": prepared state unreadable"))
		return "stale";
	return "unusable";
}
