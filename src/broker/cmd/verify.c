/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verify.c - `sbx keygen` and `sbx verify`.
 *
 * verify trusts nothing in the manifest until its signature checks out
 * against a public key the caller chose (--pubkey) or the caller's own
 * default key, over the bytes exactly as given (the canonical line; no
 * re-canonicalization, so what verifies here is what jq + openssl verify);
 * only then are the artifacts it lists looked up, each opened beneath
 * --artifacts DIR with openat2 so that a path in a manifest can never name
 * a file outside DIR or follow a symlink, and DIR is walked for entries the
 * manifest does not list.  DIR/.sbx/stdout and DIR/.sbx/stderr, the
 * captures sbx run leaves there, are checked against the manifest's
 * stdout and stderr when present; DIR/.sbx/manifest.json, where an
 * attached run leaves its manifest, is not an unlisted entry.
 *
 * Exit status: 0 valid, 1 invalid (or cannot be checked, or DIR holds
 * entries the manifest does not list) with the reason,
 * 64 usage, 69 when the kernel lacks openat2 (no weaker fallback), 70
 * internal error.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "canonjson.h"
#include "cli.h"
#include "cmd-json.h"
#include "deliver.h"
#include "digest.h"
#include "hostconfig.h"
#include "json.h"
#include "sign.h"
#include "streams.h"
#include "syscalls.h"

static int fail(const struct sbx_error *err)
{
	sbx_error_print(err);
	return err->code == SBX_EXIT_SOFTWARE ? SBX_EXIT_SOFTWARE : SBX_EXIT_FAILED;
}

/* The key path when none is given on the command line: the host config's
 * signing_key, else the per-user default. */
static int default_key_path(const struct sbx_common_opts *o, bool create_dirs, char **path,
			    struct sbx_error *err)
{
	struct sbx_hostconfig cfg = { 0 };
	int r = sbx_hostconfig_load(&cfg, o->config, err);

	if (r == 0 && cfg.signing_key)
		*path = sbx_xstrdup(cfg.signing_key);
	else if (r == 0)
		r = sbx_sign_default_path(create_dirs, path, err);
	sbx_hostconfig_free(&cfg);
	return r;
}

static int keygen_failed(const struct sbx_common_opts *o, const struct sbx_error *err)
{
	int code = fail(err);

	if (o->json) {
		struct sbx_error e = *err;

		e.code = code;
		sbx_cmd_json_print(sbx_cmd_json_error(NULL, &e));
	}
	return code;
}

int sbx_cmd_keygen(const struct sbx_common_opts *o, const char *out)
{
	struct sbx_error err = { 0 };
	_cleanup_free_ char *path = out ? sbx_xstrdup(out) : NULL;
	_cleanup_key_ struct sbx_key *key = NULL;
	char key_id[SBX_KEY_ID_LEN];

	if ((!path && default_key_path(o, true, &path, &err) < 0) || sbx_sign_keygen(path, &err) < 0)
		return keygen_failed(o, &err);
	/* Read it back: proves the files are what a run will load. */
	if (sbx_sign_load_key(path, &key, &err) < 0 || sbx_sign_key_id(key, key_id) < 0) {
		sbx_error_set(&err, SBX_EXIT_SOFTWARE, 0, "%s: cannot read back the new key", path);
		return keygen_failed(o, &err);
	}
	if (o->verbosity >= 0)
		sbx_warn("created signing key %s (public key %s.pub, key_id %s)", path, path, key_id);
	if (o->json) {
		_cleanup_free_ char *pub = sbx_xasprintf("%s.pub", path);

		return sbx_cmd_json_print(json_pack("{s:b, s:s, s:s, s:s}", "ok", 1, "key", path,
						    "public_key", pub, "key_id", key_id));
	}
	return SBX_EXIT_OK;
}

/* The manifest from @path or stdin ("-"), verified with @pub. */
static int load_manifest(const char *path, const struct sbx_key *pub, json_t **out,
			 struct sbx_error *err)
{
	_cleanup_close_ int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) : -1;

	if (strcmp(path, "-") && fd < 0)
		return sbx_error_set(err, SBX_EXIT_FAILED, errno, "%s", path);
	return sbx_manifest_load(fd >= 0 ? fd : STDIN_FILENO, fd >= 0 ? path : "(stdin)", pub, out,
				 err);
}

/*
 * Check the file @path under @dirfd against @want (hex) and, unless it is
 * negative, @size.  @label names it in messages ("artifacts[3]", "stdout").
 * Returns 0 when it matches, 1 when it does not (reason printed), 2 when
 * @absent_ok and it does not exist, -1 on an error that stops verification
 * (openat2 missing).
 */
static int check_file(int dirfd, const char *label, const char *path, const char *want,
		      json_int_t size, bool absent_ok, struct sbx_error *err)
{
	struct open_how how = {
		/* O_NONBLOCK: a fifo planted in DIR must not hang verify. */
		.flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_free_ char *shown = NULL;
	_cleanup_close_ int fd = -1;
	char hex[SBX_SHA256_HEX_LEN + 1];
	uint64_t got = 0;
	struct stat st;

	shown = sbx_canonjson_clean_string(path, strlen(path), 256, NULL);
	fd = sbx_openat2(dirfd, path, &how, sizeof(how));
	if (fd < 0 && errno == ENOENT && absent_ok)
		return 2;
	if (fd < 0 && errno == ENOSYS) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno,
			      "%s: openat2 is required to open artifacts safely", shown);
		sbx_error_hint(err, "openat2 needs Linux 5.6 or later");
		return -1;
	}
	if (fd < 0 && (errno == EXDEV || errno == ELOOP)) {
		sbx_warn("%s: %s: leaves the artifacts directory or goes through a symlink", label,
			 shown);
		return 1;
	}
	if (fd < 0) {
		sbx_warn("%s: %s: %s", label, shown, strerror(errno));
		return 1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		sbx_warn("%s: %s: not a regular file", label, shown);
		return 1;
	}
	if (sbx_sha256_fd(fd, hex, &got, err) < 0)
		return -1;
	if (size >= 0 && got != (uint64_t)size) {
		sbx_warn("%s: %s: size %" PRIu64 " differs from the manifest's %" JSON_INTEGER_FORMAT,
			 label, shown, got, size);
		return 1;
	}
	if (strcmp(hex, want)) {
		sbx_warn("%s: %s: sha256 differs from the manifest's", label, shown);
		return 1;
	}
	return 0;
}

/* Check one promoted artifact under @dirfd: check_file()'s result. */
static int check_artifact(int dirfd, size_t idx, const json_t *a, struct sbx_error *err)
{
	const char *path = json_string_value(json_object_get(a, "path"));
	const char *want = json_string_value(json_object_get(a, "sha256"));
	const json_t *size = json_object_get(a, "size");
	char label[32];

	snprintf(label, sizeof(label), "artifacts[%zu]", idx);
	if (!path || !want || !json_is_integer(size) || json_integer_value(size) < 0) {
		sbx_warn("%s: expected path, size and sha256", label);
		return 1;
	}
	return check_file(dirfd, label, path, want, json_integer_value(size), false, err);
}

/*
 * The capture of stream @name ("stdout", "stderr") at DIR/.sbx/@name, where
 * sbx run leaves it unless --stdout/--stderr put it elsewhere: its sha256
 * is the manifest's, and so is its size unless the capture was truncated
 * (then "bytes" counts what was produced, not kept).  Returns
 * check_file()'s result; 2 when there is no such file.
 */
static int check_stream(int dirfd, const json_t *manifest, const char *name,
			struct sbx_error *err)
{
	const json_t *s = json_object_get(manifest, name);
	const char *want = json_string_value(json_object_get(s, "sha256"));
	const json_t *bytes = json_object_get(s, "bytes");
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", SBX_STREAMS_DIR, name);

	if (!json_is_object(s)) {
		/* No capture to check: DIR/.sbx/NAME is then unlisted. */
		return 2;
	}
	if (!want || !json_is_integer(bytes) || json_integer_value(bytes) < 0 ||
	    !json_is_boolean(json_object_get(s, "truncated"))) {
		sbx_warn("%s: expected bytes, sha256 and truncated", name);
		return 1;
	}
	return check_file(dirfd, name, path, want,
			  json_is_true(json_object_get(s, "truncated")) ? -1 : json_integer_value(bytes),
			  true, err);
}

/* --- what DIR holds that the manifest does not list ---------------------- */

/* Named one by one up to this many; the count covers the rest. */
#define UNLISTED_SHOWN 20
/* Directory levels walked below DIR (sbx promotes at most 16 below /work/out). */
#define UNLISTED_DEPTH 64

struct listed {
	const char **v; /* promoted paths, sorted */
	size_t n;
	size_t unlisted;
};

static int by_string(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool is_listed(const struct listed *l, const char *path)
{
	return l->n && bsearch(&path, l->v, l->n, sizeof(*l->v), by_string);
}

/* Is some listed path below the directory @dir ("a/b" for "a/b/...")? */
static bool listed_below(const struct listed *l, const char *dir)
{
	_cleanup_free_ char *prefix = sbx_xasprintf("%s/", dir);
	size_t lo = 0, hi = l->n, plen = strlen(prefix);

	/* The first listed path not below @prefix in sort order. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(l->v[mid], prefix) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && strncmp(l->v[lo], prefix, plen) == 0;
}

static void report_unlisted(struct listed *l, const char *path, bool dir)
{
	if (++l->unlisted <= UNLISTED_SHOWN) {
		_cleanup_free_ char *shown = sbx_canonjson_clean_string(path, strlen(path), 256, NULL);
		sbx_warn("%s%s: not listed in the manifest", shown, dir ? "/" : "");
	}
}

/* Walk the directory @fd (consumed) at relative path @prefix. */
static int walk_unlisted(int fd, const char *prefix, unsigned depth, struct listed *l,
			 struct sbx_error *err)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(fd);
		return sbx_error_set(err, SBX_EXIT_FAILED, errno, "--artifacts: %s/: cannot read",
				     *prefix ? prefix : ".");
	}
	for (errno = 0; r == 0 && (de = readdir(d)); errno = 0) {
		_cleanup_free_ char *path = NULL;
		struct stat st;
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		path = *prefix ? sbx_xasprintf("%s/%s", prefix, de->d_name) : sbx_xstrdup(de->d_name);
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = sbx_error_set(err, SBX_EXIT_FAILED, errno, "--artifacts: %s", path);
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (!is_listed(l, path))
				report_unlisted(l, path, false);
			continue;
		}
		if (!listed_below(l, path) || depth >= UNLISTED_DEPTH) {
			report_unlisted(l, path, true);
			continue;
		}
		sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			r = sbx_error_set(err, SBX_EXIT_FAILED, errno, "--artifacts: %s/", path);
			break;
		}
		r = walk_unlisted(sub, path, depth + 1, l, err);
	}
	if (r == 0 && errno)
		r = sbx_error_set(err, SBX_EXIT_FAILED, errno, "--artifacts: %s/: cannot read",
				  *prefix ? prefix : ".");
	closedir(d);
	return r;
}

static const char *const stream_names[] = { "stdout", "stderr" };
static const char *const stream_paths[] = { SBX_STREAMS_DIR "/stdout", SBX_STREAMS_DIR "/stderr" };

int sbx_verify_unlisted(int dirfd, const json_t *manifest, size_t *unlisted,
			struct sbx_error *err)
{
	const json_t *list = json_object_get(manifest, "artifacts");
	struct listed l = { 0 };
	const json_t *a;
	size_t i;
	int fd, r;

	*unlisted = 0;
	if (!json_is_array(list))
		return sbx_error_set(err, SBX_EXIT_FAILED, 0, "artifacts: missing or not an array");
	l.v = sbx_xcalloc(json_array_size(list) + ARRAY_SIZE(stream_names) + 2, sizeof(*l.v));
	json_array_foreach(list, i, a) {
		const char *status = json_string_value(json_object_get(a, "status"));
		const char *path = json_string_value(json_object_get(a, "path"));

		if (status && path && !strcmp(status, "promoted"))
			l.v[l.n++] = path;
	}
	/* The captures sbx run leaves beside the artifacts, for a manifest
	 * that has them. */
	for (i = 0; i < ARRAY_SIZE(stream_names); i++)
		if (json_is_object(json_object_get(manifest, stream_names[i])))
			l.v[l.n++] = stream_paths[i];
	/* An attached run's manifest, which cannot list itself. */
	l.v[l.n++] = SBX_STREAMS_DIR "/" SBX_MANIFEST_FILE;
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), by_string);
	/* A fresh open: the walk's offset is its own. */
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = fd < 0 ? sbx_error_set(err, SBX_EXIT_FAILED, errno, "--artifacts: cannot read")
		   : walk_unlisted(fd, "", 0, &l, err);
	if (l.unlisted > UNLISTED_SHOWN)
		sbx_warn("... and %zu more not listed in the manifest", l.unlisted - UNLISTED_SHOWN);
	*unlisted = l.unlisted;
	free(l.v);
	return r;
}

/* Which captured streams were checked, for the verdict. */
enum { STREAM_STDOUT = 1, STREAM_STDERR = 2 };

static int check_artifacts(const json_t *manifest, const char *dir, size_t *checked,
			   unsigned *streams, struct sbx_error *err)
{
	const json_t *list = json_object_get(manifest, "artifacts");
	_cleanup_close_ int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	const json_t *a;
	size_t i, bad = 0, unlisted = 0;

	if (dirfd < 0)
		return sbx_error_set(err, SBX_EXIT_FAILED, errno, "%s", dir);
	if (!json_is_array(list))
		return sbx_error_set(err, SBX_EXIT_FAILED, 0, "artifacts: missing or not an array");
	json_array_foreach(list, i, a) {
		const char *status = json_string_value(json_object_get(a, "status"));
		int r;

		if (!status || strcmp(status, "promoted"))
			continue;
		r = check_artifact(dirfd, i, a, err);
		if (r < 0)
			return -1;
		bad += (size_t)r;
		(*checked)++;
	}
	{
		int out = check_stream(dirfd, manifest, "stdout", err), e;

		if (out < 0 || (e = check_stream(dirfd, manifest, "stderr", err)) < 0)
			return -1;
		bad += (out == 1) + (e == 1);
		*streams = (out == 0 ? STREAM_STDOUT : 0) | (e == 0 ? STREAM_STDERR : 0);
	}
	/* DIR is the run's delivery: what the run never produced is as
	 * wrong as a changed byte. */
	if (sbx_verify_unlisted(dirfd, manifest, &unlisted, err) < 0)
		return -1;
	if (bad && unlisted)
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "%s: %zu %s not match the manifest, and %zu %s not listed in it",
				     dir, bad, bad == 1 ? "file does" : "files do", unlisted,
				     unlisted == 1 ? "entry is" : "entries are");
	if (bad)
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "%s: %zu %s not match the manifest", dir, bad,
				     bad == 1 ? "file does" : "files do");
	if (unlisted)
		return sbx_error_set(err, SBX_EXIT_FAILED, 0,
				     "%s: %zu %s not listed in the manifest", dir, unlisted,
				     unlisted == 1 ? "entry is" : "entries are");
	return 0;
}

/*
 * The verdict, true in every case: without --artifacts only the signature
 * was checked, and saying "0 artifacts checked" would read as "there were
 * none".
 */
static void print_verdict(const json_t *m, bool promote, const char *artifacts, size_t checked,
			  unsigned streams)
{
	const char *what = promote ? "promote manifest" : "manifest";
	const json_t *a;
	size_t listed = 0, i;

	/* Only promoted artifacts have files to check. */
	json_array_foreach(json_object_get(m, "artifacts"), i, a) {
		const char *status = json_string_value(json_object_get(a, "status"));

		listed += status && !strcmp(status, "promoted");
	}
	if (!artifacts) {
		sbx_warn("%s OK: signature valid; its %zu promoted artifact%s not checked (no --artifacts DIR)",
			 what, listed, listed == 1 ? " was" : "s were");
		return;
	}
	/* "1 artifact ... matches", "2 artifacts, stdout and stderr ... match" */
	sbx_warn("%s OK: signature valid; %zu artifact%s%s in %s match%s", what, checked,
		 checked == 1 ? "" : "s",
		 streams == (STREAM_STDOUT | STREAM_STDERR) ? ", stdout and stderr" :
		 streams == STREAM_STDOUT		     ? " and stdout" :
		 streams == STREAM_STDERR		     ? " and stderr" :
							       "",
		 artifacts, checked == 1 && !streams ? "es" : "");
}

/* verify --json: what was checked, or why it failed. */
static int print_json(const json_t *m, const char *artifacts, size_t checked, unsigned streams,
		      const struct sbx_error *err)
{
	const json_t *sig = json_object_get(m, "signature");
	json_t *o = json_pack("{s:s?, s:s?, s:s?, s:s?}", "kind",
			      m ? json_string_value(json_object_get(m, "kind")) ?: "run" : NULL,
			      "run_id", json_string_value(json_object_get(m, "run_id")), "status",
			      json_string_value(json_object_get(m, "status")), "key_id",
			      json_string_value(json_object_get(sig, "key_id")));
	json_t *s = json_array();

	json_object_set_new(o, "signature_valid", json_boolean(m != NULL));
	json_object_set_new(o, "artifacts_dir", artifacts ? json_string(artifacts) : json_null());
	json_object_set_new(o, "artifacts_checked",
			    artifacts && !err ? json_integer((json_int_t)checked) : json_null());
	if (streams & STREAM_STDOUT)
		json_array_append_new(s, json_string("stdout"));
	if (streams & STREAM_STDERR)
		json_array_append_new(s, json_string("stderr"));
	json_object_set_new(o, "streams_checked", s);
	if (err)
		return sbx_cmd_json_print(sbx_cmd_json_error(o, err));
	json_object_set_new(o, "ok", json_true());
	return sbx_cmd_json_print(o);
}

int sbx_cmd_verify(const struct sbx_common_opts *o, const char *manifest, const char *pubkey,
		   const char *artifacts)
{
	struct sbx_error err = { 0 };
	_cleanup_(json_decrefp) json_t *m = NULL;
	_cleanup_key_ struct sbx_key *pub = NULL;
	_cleanup_free_ char *default_pub = NULL;
	size_t checked = 0;
	unsigned streams = 0;
	bool promote, in_dir = false;
	int code;

	if (!pubkey) {
		_cleanup_free_ char *key_path = NULL;

		if (default_key_path(o, false, &key_path, &err) < 0)
			goto failed;
		default_pub = sbx_xasprintf("%s.pub", key_path);
		pubkey = default_pub;
		if (o->verbosity >= 0)
			sbx_warn("verifying with the default public key %s", pubkey);
	}
	if (sbx_sign_load_pubkey(pubkey, &pub, &err) < 0 || load_manifest(manifest, pub, &m, &err) < 0)
		goto failed;
	in_dir = true;
	if (artifacts && check_artifacts(m, artifacts, &checked, &streams, &err) < 0)
		goto failed;
	/* A promote manifest (sbx promote) is signed and checked the same way;
	 * its artifacts are the files it delivered. */
	promote = !strcmp(json_string_value(json_object_get(m, "kind")) ?: "", "promote");
	print_verdict(m, promote, artifacts, checked, streams);
	if (o->json)
		return print_json(m, artifacts, checked, streams, NULL) ?: SBX_EXIT_OK;
	return SBX_EXIT_OK;

failed:
	/* The key and the manifest: 1 unless sbx itself failed (70); in DIR
	 * a kernel without openat2 is 69 (no weaker fallback). */
	code = in_dir ? (err.code == SBX_EXIT_UNAVAILABLE || err.code == SBX_EXIT_SOFTWARE ?
				 err.code :
				 SBX_EXIT_FAILED) :
			fail(&err);
	if (in_dir)
		sbx_error_print(&err);
	/* The JSON says the same exit status as the process. */
	err.code = code;
	if (o->json)
		print_json(m, artifacts, checked, streams, &err);
	return code;
}
