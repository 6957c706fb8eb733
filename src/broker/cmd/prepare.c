/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prepare.c - `sbx prepare`: a profile's prepared runtime state
 * (prepare.h) built; prepared.c is the check runs make of it.
 *
 * `sbx prepare NAME` is a run of the profile like any other (run.c), with
 * two differences: the command is the profile's "prepare.argv" with its
 * "prepare.env" (trusted, from the catalog, not a job), and what it leaves
 * in /work/out is not validated as artifacts but taken as the prepared
 * tree: copied out through directory fds, directories and regular files
 * only (a symlink, a hard link, a fifo or socket, or a seed that is not a
 * plain directory of files refuses the whole tree), hashed, made
 * read-only, and committed by two renames, the tree and then its state.
 * A command that fails or times out, or a tree that is refused, leaves
 * the old state as it was and nothing of the new.  A lock file per
 * profile keeps two `sbx prepare` of it apart.
 *
 * prepare-tree.c copies, digests and seals the tree; prepare-recipe.c says
 * what of the profile the state depends on; prepared.c is where it lives
 * and the run's check.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog-suggest.h"
#include "cli.h"
#include "cmd-json.h"
#include "digest.h"
#include "json.h"
#include "runid.h"
#include "prepare-internal.h"

/* --- sbx prepare ----------------------------------------------------------- */

static int prepare_admit(struct sbx_prepare_run *h, struct sbx_plan *plan, struct sbx_error *err)
{
	struct sbx_prepare_ctx *c = h->ud;
	const struct sbx_prepare *pp = c->pr->prepare;
	size_t n = sbx_strv_length(plan->env), m = sbx_strv_length(pp->env), k = 0;
	char **env = sbx_xcalloc(n + m + 1, sizeof(char *));

	(void)err;
	/* The profile's env with the step's on top. */
	for (size_t i = 0; i < n; i++) {
		size_t kl = strcspn(plan->env[i], "=");
		bool over = false;
		for (size_t j = 0; j < m; j++)
			over |= !strncmp(pp->env[j], plan->env[i], kl + 1);
		if (!over)
			env[k++] = sbx_xstrdup(plan->env[i]);
	}
	for (size_t j = 0; j < m; j++)
		env[k++] = sbx_xstrdup(pp->env[j]);
	sbx_strv_free(plan->env);
	plan->env = env;
	plan->argv = sbx_strv_copy(pp->argv);
	return 0;
}

/* An "input" or "interpreter" line: the host file's identity.  Its ctime
 * moves with every chmod and backup restore of the host: its size and
 * mtime say whether it changed. */
static void host_file_line(FILE *m, const char *kind, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		fprintf(m, "%s absent %s\n", kind, path);
	else
		fprintf(m, "%s %s %llu %llu %llu %lld %s\n", kind, type_name(st.st_mode),
			(unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			(unsigned long long)st.st_size, (long long)ns(&st.st_mtim), path);
}

/* The state file (sbx_prepared_lookup), written beside and renamed over
 * the old one. */
static int write_state(struct sbx_prepare_ctx *c, const char *tree, struct sbx_error *err)
{
	const struct sbx_profile *pr = c->pr;
	char rsha[65];
	_cleanup_free_ char *text = NULL, *recipe = NULL, *interp = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = 0, rlen = 0, i;
	FILE *m;
	json_t *e;

	/* Each record is a line, the path last on it. */
	if (sbx_has_control(c->catalog, strlen(c->catalog)))
		return sbx_error_set(err, SBX_EXIT_REFUSED, 0,
				     "prepare: %s: a catalog path with control characters", c->catalog);
	if (sbx_prepare_recipe(pr, &recipe, &rlen, err) < 0 ||
	    sbx_sha256_buf(recipe, rlen, rsha, err) < 0)
		return -1;
	interp = sbx_prepare_interpreter(pr);
	if (!(m = open_memstream(&text, &len)))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: state");
	fprintf(m, "sbx-prepared 2\ncatalog %s\nrecipe %016llx %zu %s\ntree %s %s\n", c->catalog,
		(unsigned long long)fnv1a64(recipe, rlen), rlen, rsha, tree, c->sha256);
	host_file_line(m, "interpreter", interp);
	for (i = 0; pr->prepare->inputs[i]; i++)
		host_file_line(m, "input", pr->prepare->inputs[i]);
	json_array_foreach(c->entries, i, e)
		fprintf(m, "entry %s %lld %lld %lld %lld %lld %s\n",
			json_string_value(json_object_get(e, "type")),
			(long long)json_integer_value(json_object_get(e, "dev")),
			(long long)json_integer_value(json_object_get(e, "ino")),
			(long long)json_integer_value(json_object_get(e, "size")),
			(long long)json_integer_value(json_object_get(e, "mtime_ns")),
			(long long)json_integer_value(json_object_get(e, "ctime_ns")),
			json_string_value(json_object_get(e, "path")));
	if (fclose(m) != 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: state");
	unlinkat(c->dir_fd, STATE_FILE ".new", 0);
	fd = openat(c->dir_fd, STATE_FILE ".new", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0644);
	if (fd < 0 || sbx_write_all(fd, text, len) < 0 || fsync(fd) < 0 ||
	    renameat(c->dir_fd, STATE_FILE ".new", c->dir_fd, STATE_FILE) < 0) {
		sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "prepare: writing %s", STATE_FILE);
		unlinkat(c->dir_fd, STATE_FILE ".new", 0);
		return -1;
	}
	return 0;
}

/* Old trees (and what a killed prepare left) once the new state is in place. */
static void remove_others(int dir_fd, const char *keep)
{
	char buf[4096];
	ssize_t n;
	_cleanup_close_ int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = getdents64(fd, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *e = (struct dirent64 *)(buf + off);
			off += e->d_reclen;
			if ((!strncmp(e->d_name, "tree-", 5) || !strncmp(e->d_name, ".new-", 5) ||
			     !strncmp(e->d_name, ".run-", 5)) && strcmp(e->d_name, keep))
				sbx_prepare_remove_tree(dir_fd, e->d_name, 0);
		}
}

/* The tree the state file names (in static storage), or "": kept even
 * when this prepare failed, as the old state still serves until replaced. */
static const char *current_tree(int dir_fd)
{
	static char name[128];
	_cleanup_close_ int fd = openat(dir_fd, STATE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char buf[4096], *t;
	ssize_t n;

	name[0] = '\0';
	if (fd < 0 || (n = sbx_read_all(fd, buf, sizeof(buf) - 1)) <= 0)
		return name;
	buf[n] = '\0';
	if ((t = strstr(buf, "\ntree ")) && sscanf(t + 6, "%127s", name) != 1)
		name[0] = '\0';
	return name;
}

/* A failed command's last words (its captured stderr, as the run kept it
 * beside its artifacts), for whoever runs sbx prepare: up to 2 KiB. */
static void show_stderr(const char *art)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/.sbx/stderr", art);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char buf[2048], *save = NULL, *line;
	off_t size;
	ssize_t n;

	if (fd < 0 || (size = lseek(fd, 0, SEEK_END)) <= 0 ||
	    lseek(fd, size > (off_t)sizeof(buf) - 1 ? size - (off_t)sizeof(buf) + 1 : 0, SEEK_SET) < 0 ||
	    (n = sbx_read_all(fd, buf, sizeof(buf) - 1)) <= 0)
		return;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!sbx_has_control(line, strlen(line)))
			sbx_warn("prepare: stderr: %s", line);
}

/* An error of sbx prepare on stderr, and the first one in @fail for
 * --json. */
static void report(const struct sbx_error *err, struct sbx_error *fail)
{
	sbx_error_print(err);
	if (!fail->code)
		*fail = *err;
}

/* The run of the step ended: why it failed, for stderr and --json (an
 * error of sbx itself was printed by the run). */
static void prepare_ended(struct sbx_prepare_run *h, const struct sbx_error *err, int code,
			  const char *reason)
{
	struct sbx_prepare_ctx *c = h->ud;
	const char *name = c->pr->name;

	if (!code)
		return;
	if (err->code) {
		c->fail = *err;
		return;
	}
	sbx_error_set(&c->fail, code, 0, "prepare: %s: %s", name,
		      reason[0] ? reason : "the prepare step failed");
	if (code == SBX_EXIT_TIMEOUT)
		sbx_error_hint(&c->fail, "the step ran past the profile's prepare.timeout_seconds "
			       "(%llu): raise it, then run 'sbx prepare %s' again",
			       (unsigned long long)c->pr->prepare->timeout_seconds, name);
	else
		sbx_error_hint(&c->fail, "the step's own stderr, if any, follows as \"prepare: "
			       "stderr:\" lines; mend the profile's \"prepare\" or its inputs, then "
			       "run 'sbx prepare %s' again", name);
	sbx_error_print(&c->fail);
}

/* @done: with --json, each prepared profile is added to it instead of
 * printed; @fail gets the first error. */
static int prepare_one(const struct sbx_common_opts *o, const struct sbx_hostconfig *cfg,
		       const struct sbx_catalog *cat, const struct sbx_profile *pr, json_t *done,
		       struct sbx_error *fail)
{
	struct sbx_error err = { 0 };
	_cleanup_free_ char *catalog = NULL, *dir = NULL, *run_dir = NULL, *art = NULL, *store = NULL,
			    *wall = NULL, *tree = NULL;
	_cleanup_close_ int dir_fd = -1, lock_fd = -1;
	struct sbx_prepare_ctx c = { .pr = pr, .dir_fd = -1 };
	struct sbx_prepare_run hook = { .admit = prepare_admit, .take = sbx_prepare_take_tree,
					.ended = prepare_ended, .ud = &c };
	struct sbx_run_opts ro = { .common = *o };
	const char *limits[2];
	unsigned char rnd[8];
	char rhex[17];
	struct sbx_trust who = { 0 };
	struct stat st;
	int code;

	if (sbx_prepared_dir(cfg, cat, pr, &dir, &catalog, &who, &err) < 0) {
		err.code = SBX_EXIT_REFUSED;
		report(&err, fail);
		return SBX_EXIT_REFUSED;
	}
	c.catalog = catalog;
	/* Made 0755 where missing: root's sandboxes, a uid of their own,
	 * must reach the tree.  Only below directories no one else can
	 * write, or they could have made it first. */
	dir_fd = sbx_prepared_open_dir(dir, pr, &who, true, &err);
	if (dir_fd < 0 && err.errnum != EACCES && err.errnum != EPERM && err.errnum != EROFS) {
		report(&err, fail);
		return err.code;
	}
	/* As the owner of the prepared state only: a run trusts the state by
	 * whose it is (sbx_prepared_lookup). */
	if (dir_fd < 0 || fstat(dir_fd, &st) < 0 || st.st_uid != geteuid() ||
	    faccessat(dir_fd, ".", W_OK, AT_EACCESS) < 0) {
		int e = dir_fd < 0 ? err.errnum : st.st_uid != geteuid() ? 0 : errno;

		err = (struct sbx_error){ 0 };
		sbx_error_set(&err, SBX_EXIT_REFUSED, e,
			      "prepare: %s: this user (uid %u) may not write the prepared state",
			      dir, (unsigned)geteuid());
		if (dir_fd >= 0)
			sbx_error_hint(&err, "run sbx prepare as uid %u, who owns %s",
				       (unsigned)st.st_uid, dir);
		else
			sbx_error_hint(&err, "run sbx prepare as the owner of the prepared_dir, or set "
				       "\"prepared_dir\" in the host config to a directory of this user's");
		report(&err, fail);
		return SBX_EXIT_REFUSED;
	}
	c.dir_fd = dir_fd;
	lock_fd = openat(dir_fd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
		sbx_error_set(&err, errno == EWOULDBLOCK ? SBX_EXIT_CAPACITY : SBX_EXIT_SOFTWARE, errno,
			      "prepare: %s: another sbx prepare of %s holds its lock", dir, pr->name);
		report(&err, fail);
		return err.code;
	}

	/* The run's artifacts (its captured streams) go to a directory of
	 * its own beside the state, removed afterwards. */
	sbx_random_bytes(rnd, sizeof(rnd));
	sbx_hex(rnd, sizeof(rnd), rhex);
	run_dir = sbx_xasprintf("%s/.run-%s", dir, rhex);
	art = sbx_xasprintf("%s/art", run_dir);
	store = sbx_xasprintf("%s/store", run_dir);
	wall = sbx_xasprintf("wall_seconds=%llu", (unsigned long long)pr->prepare->timeout_seconds);
	limits[0] = wall;
	limits[1] = NULL;
	if (mkdir(run_dir, 0700) < 0) {
		sbx_error_set(&err, SBX_EXIT_SOFTWARE, errno, "prepare: %s", run_dir);
		report(&err, fail);
		return err.code;
	}
	ro.artifacts = art;
	ro.store = store;
	ro.principal = "sbx-prepare";
	ro.one.profile = pr->name;
	ro.one.network = pr->prepare->network ? pr->prepare->network : "disabled";
	ro.one.code = "# sbx prepare\n";
	ro.one.limits = limits;
	ro.prepare = &hook;
	code = sbx_cmd_run(&ro);
	if (code != 0) {
		show_stderr(art);
		if (!c.fail.code) {
			/* Refused before the run began; the reason is above. */
			sbx_error_set(&c.fail, code, 0, "prepare: %s: the prepare run could not start",
				      pr->name);
			sbx_error_hint(&c.fail, "the message before this one says why; mend that, then "
				       "run 'sbx prepare %s' again", pr->name);
		}
		if (!fail->code)
			*fail = c.fail;
	}
	if (code == 0 && c.entries) {
		/* Commit: the tree under its digest, then the state naming it. */
		_cleanup_close_ int tfd = -1;

		/* A name of its own even for the same content: the tree the
		 * current state names stays until the new state replaces it. */
		tree = sbx_xasprintf("tree-%.16s-%s", c.sha256, rhex);
		if (renameat(dir_fd, c.staging, dir_fd, tree) < 0 ||
		    (tfd = openat(dir_fd, tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			sbx_error_set(&err, SBX_EXIT_SOFTWARE, errno, "prepare: %s", tree);
			report(&err, fail);
			code = err.code;
		} else if (sbx_prepare_record_identities(tfd, c.entries, &err) < 0 ||
			   write_state(&c, tree, &err) < 0) {
			report(&err, fail);
			code = err.code;
		} else if (done) {
			_cleanup_free_ char *path = sbx_xasprintf("%s/%s", dir, tree);

			json_array_append_new(done, json_pack("{s:s, s:s, s:s}", "profile", pr->name,
							      "prepared_sha256", c.sha256, "tree",
							      path));
		} else {
			printf("%s sha256:%s %s/%s\n", pr->name, c.sha256, dir, tree);
		}
	} else if (code == 0) {
		sbx_error_set(&err, SBX_EXIT_SOFTWARE, 0, "prepare: %s: the run ended without a tree",
			      pr->name);
		report(&err, fail);
		code = SBX_EXIT_SOFTWARE;
	}
	/* Whatever did not become the state goes: the staging tree, this
	 * run's directory, older trees. */
	remove_others(dir_fd, current_tree(dir_fd));
	json_decref(c.entries);
	return code;
}

int sbx_cmd_prepare(const struct sbx_common_opts *o, char *const *names)
{
	struct sbx_hostconfig cfg = { 0 };
	struct sbx_catalog cat = { 0 };
	struct sbx_error err = { 0 }, fail = { 0 };
	json_t *done = o->json ? json_array() : NULL;
	int code = 0;

	if (sbx_hostconfig_load(&cfg, o->config, &err) < 0 ||
	    sbx_catalog_load(&cat, sbx_catalog_default_dir(o->policy, &cfg), &err) < 0) {
		report(&err, &fail);
		sbx_hostconfig_free(&cfg);
		code = err.code;
		goto out;
	}
	for (size_t i = 0; names && names[i]; i++) {
		const struct sbx_profile *pr = sbx_catalog_profile(&cat, names[i]);

		if (pr && pr->prepare)
			continue;
		err = (struct sbx_error){ 0 };
		sbx_error_set(&err, SBX_EXIT_USAGE, 0, "prepare: %s: %s%s", names[i],
			      pr ? "the profile has no prepare step" : "no such runtime profile",
			      pr ? "" : sbx_did_you_mean(sbx_catalog_suggest_profile(&cat, names[i])));
		sbx_error_hint(&err, "sbx profiles lists the catalog's profiles; sbx prepare without "
			       "a name prepares every one that has a prepare step");
		report(&err, &fail);
		code = SBX_EXIT_USAGE;
	}
	for (size_t i = 0; !code && i < cat.n_profiles; i++) {
		const struct sbx_profile *pr = &cat.profiles[i];
		bool named = !names || !names[0];
		int r;

		for (size_t k = 0; names && names[k]; k++)
			named |= !strcmp(names[k], pr->name);
		if (!named || !pr->prepare)
			continue;
		if ((r = prepare_one(o, &cfg, &cat, pr, done, &fail)) != 0)
			code = r;
	}
	sbx_catalog_free(&cat);
	sbx_hostconfig_free(&cfg);
out:
	/* The reasons are on stderr too; the JSON says what was prepared
	 * and how it ended, with the first failure's error and hint. */
	if (done) {
		json_t *res = json_pack("{s:b, s:i, s:o}", "ok", code == 0, "exit", code, "prepared",
					done);
		int w;

		if (code) {
			if (!fail.code)
				sbx_error_set(&fail, code, 0, "prepare: failed (exit %d)", code);
			sbx_cmd_json_error(res, &fail);
			/* The exit status is the last failure's, as without --json. */
			json_object_set_new(res, "exit", json_integer(code));
		}
		w = sbx_cmd_json_print(res);
		if (w && !code)
			code = w;
	}
	return code;
}
