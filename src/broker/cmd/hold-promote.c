/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hold-promote.c - `sbx promote`: release a run's held outputs into an
 * artifacts directory and print a signed promote manifest (the hold's
 * layout is in hold.h and docs/state.md).
 *
 * What the promote key signs, it has checked: the run manifest kept in the
 * hold must verify with the promote key (sbx_manifest_check_line, as sbx
 * verify checks a manifest) and be of this run id, and the record is used
 * only as far as it agrees with that manifest's held artifacts.  Every
 * value of the promote manifest's entries, and its principal, is the
 * verified manifest's.  The held area is its owner's to write in, so each
 * file is copied out while hashed and delivered only when its digest is
 * still the manifest's (sbx_collect_release).
 */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "canonjson.h"
#include "collect.h"
#include "digest.h"
#include "hold-internal.h"
#include "hold.h"
#include "json.h"
#include "results.h"
#include "runid.h"
#include "sign.h"

#define PROMOTE_MANIFEST_VERSION 1
#define NO_HOLD "promote: %s: no held outputs (never held, promoted already, or removed by sbx gc)"

/* --- reading a hold, trusting the run's signature ---------------------------- */

static bool is_sha256_hex(const char *s)
{
	if (!s || strlen(s) != SBX_SHA256_HEX_LEN)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

/* What a hold that was changed after its run is told. */
static void hint_changed(struct sbx_error *err)
{
	sbx_error_hint(err, "the hold was changed after its run; nothing of it is promoted (run the job again)");
}

static bool is_key_id(const char *s)
{
	return s && !strncmp(s, "sha256:", 7) && is_sha256_hex(s + 7);
}

/*
 * The kept manifest did not verify with @key (@why says how): say so in
 * @err, naming both keys when it is another key's signature, which is
 * what a run of another user, or of the same user's other key, carries.
 */
static void refuse_unverified(const char *run_id, const char *data, size_t len,
			      const struct sbx_key *key, const struct sbx_error *why,
			      struct sbx_error *err)
{
	_cleanup_json_ json_t *v = json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
	const char *signer = json_string_value(
		json_object_get(json_object_get(v, "signature"), "key_id"));
	char ours[SBX_KEY_ID_LEN], text[1200];

	if (why->code == SBX_EXIT_SOFTWARE) {
		*err = *why;
		return;
	}
	if (sbx_sign_key_id(key, ours) == 0 && is_key_id(signer) && strcmp(signer, ours)) {
		sbx_error_set(err, SBX_EXIT_FAILED, 0,
			      "promote: %s: %s: the run manifest is signed by another key (%s), not by the promote key (%s)",
			      run_id, HOLD_MANIFEST, signer, ours);
		sbx_error_hint(err, "promote with the key that signed the run (--key, or the host config's signing_key); another user's run is theirs to promote");
		return;
	}
	sbx_error_set(err, SBX_EXIT_FAILED, 0,
		      "promote: %s: the run manifest does not verify with the promote key: %s", run_id,
		      sbx_error_text(why, text, sizeof(text)));
	hint_changed(err);
}

/*
 * The kept run manifest, as the promote key vouches for it: the canonical
 * line of a run manifest (no "kind": not a promote manifest) of @run_id
 * whose signature verifies with @key, checked by what `sbx verify` runs
 * (sbx_manifest_check_line).  Its sha256 (of the bytes, as kept) in @sha.
 * Returns it, or NULL with @err set.
 */
static json_t *load_manifest(int run_fd, const char *run_id, const struct sbx_key *key,
			     char sha[SBX_SHA256_HEX_LEN + 1], struct sbx_error *err)
{
	_cleanup_free_ char *data = NULL;
	_cleanup_json_ json_t *man = NULL;
	struct sbx_error why = { 0 };
	const char *of;
	size_t len = 0;

	if (sbx_hold_read_small(run_fd, HOLD_MANIFEST, &data, &len) < 0) {
		int e = errno;

		/* Neither file: a hold whose run never completed it. */
		if (e == ENOENT && faccessat(run_fd, HOLD_RECORD, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT) {
			sbx_error_set(err, SBX_EXIT_FAILED, 0, NO_HOLD, run_id);
			return NULL;
		}
		sbx_error_set(err, SBX_EXIT_FAILED, e == ENOENT ? 0 : e,
			      "promote: %s: %s: the kept run manifest is missing or unreadable", run_id,
			      HOLD_MANIFEST);
		hint_changed(err);
		return NULL;
	}
	if (sbx_manifest_check_line(HOLD_MANIFEST, data, len, key, &man, &why) < 0) {
		refuse_unverified(run_id, data, len, key, &why, err);
		return NULL;
	}
	/* As printed, newline included: run_manifest_sha256 is then what
	 * sha256sum of the run's saved manifest says. */
	if (data[len - 1] != '\n') {
		sbx_error_set(err, SBX_EXIT_FAILED, 0,
			      "promote: %s: %s: not the run manifest as printed (no final newline)", run_id,
			      HOLD_MANIFEST);
		hint_changed(err);
		return NULL;
	}
	/* Signed by this key, but perhaps for another run, or a promote
	 * manifest: each is the word on one thing only. */
	of = json_string_value(json_object_get(man, "run_id"));
	if (json_object_get(man, "kind") || !of || strcmp(of, run_id)) {
		if (json_object_get(man, "kind"))
			sbx_error_set(err, SBX_EXIT_FAILED, 0,
				      "promote: %s: %s: the kept manifest is a promote manifest, not the run's",
				      run_id, HOLD_MANIFEST);
		else if (of && sbx_run_id_valid(of))
			sbx_error_set(err, SBX_EXIT_FAILED, 0,
				      "promote: %s: %s: the kept manifest is run %s's, not this run's",
				      run_id, HOLD_MANIFEST, of);
		else
			sbx_error_set(err, SBX_EXIT_FAILED, 0,
				      "promote: %s: %s: the kept manifest names no run id, or a malformed one",
				      run_id, HOLD_MANIFEST);
		sbx_error_hint(err, "a hold is promoted only on its own run's manifest; this one came from elsewhere");
		return NULL;
	}
	if (!json_is_string(json_object_get(man, "principal"))) {
		sbx_error_set(err, SBX_EXIT_FAILED, 0, "promote: %s: %s: the run manifest names no principal",
			      run_id, HOLD_MANIFEST);
		hint_changed(err);
		return NULL;
	}
	if (sbx_sha256_buf(data, len, sha, err) < 0)
		return NULL;
	return TAKE_PTR(man);
}

/* An entry the verified manifest lists "held", with every member that the
 * promote manifest copies, of the type sbx writes. */
static bool held_entry_ok(const json_t *a)
{
	const json_t *size = json_object_get(a, "size"), *mt = json_object_get(a, "media_type");
	const json_t *contract = json_object_get(a, "contract");

	return sbx_hold_valid_path(json_string_value(json_object_get(a, "path"))) &&
	       json_is_integer(size) && json_integer_value(size) >= 0 &&
	       is_sha256_hex(json_string_value(json_object_get(a, "sha256"))) &&
	       (json_is_string(mt) || json_is_null(mt)) &&
	       json_is_boolean(json_object_get(a, "partial")) &&
	       json_is_boolean(json_object_get(a, "formula_cells")) &&
	       json_is_array(json_object_get(a, "flags")) &&
	       (json_is_object(contract) || json_is_null(contract));
}

/*
 * The verified manifest's held artifacts by path: a new object mapping
 * each path to {"entry": its entry, "name": the name sbx_hold_collect gave
 * its file, "h" and its index}.  NULL with @err set for an entry sbx does
 * not write (two of one path, a member missing).
 */
static json_t *held_by_path(const json_t *man, const char *run_id, struct sbx_error *err)
{
	_cleanup_json_ json_t *held = json_object();
	json_t *a;
	size_t i;

	json_array_foreach(json_object_get(man, "artifacts"), i, a) {
		const char *status = json_string_value(json_object_get(a, "status"));
		const char *path = json_string_value(json_object_get(a, "path"));
		char name[16];

		if (!status || strcmp(status, "held"))
			continue;
		if (!held_entry_ok(a) || json_object_get(held, path)) {
			sbx_error_set(err, SBX_EXIT_FAILED, 0,
				      "promote: %s: %s: artifacts[%zu]: not a held artifact as sbx records one",
				      run_id, HOLD_MANIFEST, i);
			hint_changed(err);
			return NULL;
		}
		snprintf(name, sizeof(name), "h%06zu", i + 1);
		json_object_set_new(held, path, json_pack("{s:O,s:s}", "entry", a, "name", name));
	}
	return TAKE_PTR(held);
}

/*
 * hold.json, checked against the verified manifest's held artifacts
 * @held (held_by_path): its shape, its run id, the sha256 of the kept
 * manifest (@man_sha), and exactly one entry for each held artifact, with
 * its path, size, sha256 and file name.  What else the record says
 * (principal, media types) is not used: that comes from the manifest.
 * Returns the record, whose entries promote marks "promoted", or NULL with
 * @err set.
 */
static json_t *load_record(int run_fd, const char *run_id, const json_t *held,
			   const char *man_sha, struct sbx_error *err)
{
	_cleanup_free_ char *data = NULL;
	_cleanup_json_ json_t *rec = NULL, *seen = json_object();
	size_t len = 0, i;
	json_t *f;

	if (sbx_hold_read_small(run_fd, HOLD_RECORD, &data, &len) < 0) {
		if (errno == ENOENT)
			sbx_error_set(err, SBX_EXIT_FAILED, 0, NO_HOLD, run_id);
		else
			sbx_error_set(err, SBX_EXIT_FAILED, errno, "promote: %s: %s", run_id, HOLD_RECORD);
		return NULL;
	}
	rec = json_loadb(data, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(rec) || !json_is_array(json_object_get(rec, "files")) ||
	    !json_is_integer(json_object_get(rec, "uid")) ||
	    strcmp(json_string_value(json_object_get(rec, "run_id")) ?: "", run_id) ||
	    strcmp(json_string_value(json_object_get(rec, "manifest_sha256")) ?: "", man_sha)) {
		sbx_error_set(err, SBX_EXIT_FAILED, 0,
			      "promote: %s: %s: not the hold record of this run and its kept manifest",
			      run_id, HOLD_RECORD);
		hint_changed(err);
		return NULL;
	}
	json_array_foreach(json_object_get(rec, "files"), i, f) {
		const char *path = json_string_value(json_object_get(f, "path"));
		const json_t *h = path ? json_object_get(held, path) : NULL;
		const json_t *m = json_object_get(h, "entry");

		if (!h || json_object_get(seen, path) ||
		    !json_is_boolean(json_object_get(f, "promoted")) ||
		    !json_equal(json_object_get(f, "name"), json_object_get(h, "name")) ||
		    !json_equal(json_object_get(f, "sha256"), json_object_get(m, "sha256")) ||
		    !json_equal(json_object_get(f, "size"), json_object_get(m, "size"))) {
			sbx_error_set(err, SBX_EXIT_FAILED, 0,
				      "promote: %s: %s: files[%zu] does not match the run manifest's held artifacts",
				      run_id, HOLD_RECORD, i);
			hint_changed(err);
			return NULL;
		}
		json_object_set_new(seen, path, json_true());
	}
	if (json_object_size(seen) != json_object_size(held)) {
		sbx_error_set(err, SBX_EXIT_FAILED, 0,
			      "promote: %s: %s: lists %zu of the run manifest's %zu held artifacts",
			      run_id, HOLD_RECORD, json_object_size(seen), json_object_size(held));
		hint_changed(err);
		return NULL;
	}
	return TAKE_PTR(rec);
}

/* --- sbx promote ----------------------------------------------------------- */

/*
 * The promote manifest's entry for a delivered file: the verified run
 * manifest's own values for it (@a, checked by held_entry_ok), its status
 * now "promoted".  The run's reason ("held for review") is not copied.
 */
static json_t *promoted_entry(const json_t *a)
{
	static const char *const copied[] = { "path",	       "size",	"sha256", "media_type",
					      "partial",       "formula_cells", "flags",  "contract" };
	json_t *e = json_object();

	for (size_t k = 0; k < ARRAY_SIZE(copied); k++)
		json_object_set_new(e, copied[k], json_deep_copy(json_object_get(a, copied[k])));
	json_object_set_new(e, "status", json_string("promoted"));
	return e;
}

static json_t *find_file(json_t *files, const char *path)
{
	json_t *f;
	size_t i;

	json_array_foreach(files, i, f)
		if (!strcmp(json_string_value(json_object_get(f, "path")), path))
			return f;
	return NULL;
}

static void refuse(json_t *refused, const char *path, const char *why)
{
	_cleanup_free_ char *p = sbx_canonjson_clean_string(path, strlen(path), 512, NULL);

	sbx_warn("promote: %s: %s", p, why);
	json_array_append_new(refused, json_pack("{s:s,s:s}", "path", p, "reason", why));
}

int sbx_cmd_promote(const struct sbx_promote_opts *o)
{
	struct sbx_error err = { 0 };
	struct sbx_hostconfig cfg = { 0 };
	struct sbx_key key = { 0 };
	struct sbx_artifacts_dir ad = { .base_fd = -1 };
	_cleanup_free_ char *area = NULL, *dir = NULL, *line = NULL, *area_path = NULL;
	_cleanup_close_ int area_fd = -1, run_fd = -1, files_fd = -1, rootfd = -1;
	_cleanup_json_ json_t *man = NULL, *held = NULL, *rec = NULL, *m = NULL;
	json_t *promoted = json_array(), *refused = json_array(), *files, *f;
	char man_sha[SBX_SHA256_HEX_LEN + 1];
	uint64_t started = sbx_now_real_ms(), t0 = sbx_now_mono_ns();
	size_t i, remaining = 0, len = 0;
	char at[32], end[32];
	struct stat st;
	int code = SBX_EXIT_OK;
	bool io_failed = false;

	if (!sbx_run_id_valid(o->run_id)) {
		sbx_warn("promote: malformed run id (expected 32 lowercase hex digits)");
		code = SBX_EXIT_USAGE;
		goto out;
	}
	for (i = 0; i < o->n_paths; i++)
		if (!sbx_hold_valid_path(o->paths[i])) {
			_cleanup_free_ char *p = sbx_canonjson_clean_string(o->paths[i], strlen(o->paths[i]), 256, NULL);
			sbx_warn("promote: \"%s\": expected a path relative to /work/out without \".\", \"..\" or empty components",
				 p);
			code = SBX_EXIT_USAGE;
			goto out;
		}
	/* Without --artifacts: the run's results directory (results.h),
	 * whose area the config may name, so the config comes first. */
	if (!o->artifacts && (sbx_hostconfig_load(&cfg, o->common.config, &err) < 0 ||
			      sbx_results_area(cfg.results_dir, &area_path, &err) < 0))
		goto fail;
	dir = o->artifacts ? sbx_xstrdup(o->artifacts) :
			     sbx_xasprintf("%s/%s/promoted", area_path, o->run_id);
	if (sbx_artifacts_dir_open(dir, &ad, &err) < 0 ||
	    (o->artifacts && sbx_hostconfig_load(&cfg, o->common.config, &err) < 0) ||
	    sbx_sign_default_key(o->key, cfg.signing_key, &key, &err) < 0)
		goto fail;

	area_fd = sbx_hold_area_open(&cfg, false, &area, &err);
	if (area_fd < 0 && !err.code) {
		sbx_error_set(&err, SBX_EXIT_FAILED, 0, NO_HOLD, o->run_id);
		goto fail;
	}
	if (area_fd < 0)
		goto fail;
	run_fd = openat(area_fd, o->run_id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (run_fd < 0) {
		sbx_error_set(&err, SBX_EXIT_FAILED, errno == ENOENT ? 0 : errno,
			      errno == ENOENT ? NO_HOLD : "promote: %s: the hold is not a directory (or a symlink)",
			      o->run_id);
		goto fail;
	}
	if (fstat(run_fd, &st) < 0 || (st.st_uid != geteuid() && geteuid() != 0)) {
		sbx_error_set(&err, SBX_EXIT_REFUSED, 0,
			      "promote: %s: held by uid %u; only its owner or root may promote it",
			      o->run_id, (unsigned)st.st_uid);
		goto fail;
	}
	/* gc leaves a locked hold alone; a second promote waits here, and then
	 * finds the files promoted (or the hold gone). */
	while (flock(run_fd, LOCK_EX) < 0)
		if (errno != EINTR) {
			sbx_error_set(&err, SBX_EXIT_SOFTWARE, errno, "promote: %s: cannot lock", o->run_id);
			goto fail;
		}
	/* The promote key signs only what it signed before: the run manifest
	 * first, then the record as far as it agrees with that manifest. */
	man = load_manifest(run_fd, o->run_id, &key, man_sha, &err);
	if (!man || !(held = held_by_path(man, o->run_id, &err)) ||
	    !(rec = load_record(run_fd, o->run_id, held, man_sha, &err)))
		goto fail;
	if (json_integer_value(json_object_get(rec, "uid")) != (json_int_t)geteuid() && geteuid() != 0) {
		sbx_error_set(&err, SBX_EXIT_REFUSED, 0,
			      "promote: %s: held for uid %" JSON_INTEGER_FORMAT "; only its owner or root may promote it",
			      o->run_id, json_integer_value(json_object_get(rec, "uid")));
		goto fail;
	}
	files_fd = openat(run_fd, HOLD_FILES, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (files_fd < 0) {
		sbx_error_set(&err, SBX_EXIT_FAILED, errno, "promote: %s: %s/", o->run_id, HOLD_FILES);
		goto fail;
	}
	files = json_object_get(rec, "files");

	/* What is asked for: the named paths, else all not yet promoted. */
	for (i = 0; i < o->n_paths; i++) {
		f = find_file(files, o->paths[i]);
		if (!f)
			refuse(refused, o->paths[i], "not held for this run");
		else if (json_is_true(json_object_get(f, "promoted")))
			refuse(refused, o->paths[i], "already promoted");
		else
			json_object_set_new(f, "selected", json_true());
	}
	json_array_foreach(files, i, f)
		if (!o->n_paths && !json_is_true(json_object_get(f, "promoted")))
			json_object_set_new(f, "selected", json_true());

	json_array_foreach(files, i, f) {
		const char *path = json_string_value(json_object_get(f, "path"));
		/* Size and digest as the verified manifest has them. */
		const json_t *a = json_object_get(json_object_get(held, path), "entry");
		const char *why = NULL;
		int r;

		if (!json_is_true(json_object_get(f, "selected")))
			continue;
		json_object_del(f, "selected");
		if (rootfd < 0 && (rootfd = sbx_artifacts_dir_make(&ad, true, &err)) < 0)
			goto fail;
		r = sbx_collect_release(files_fd, json_string_value(json_object_get(f, "name")),
					(uint64_t)json_integer_value(json_object_get(a, "size")),
					json_string_value(json_object_get(a, "sha256")), rootfd, path, &why,
					&err);
		if (r < 0) {
			/* What was delivered so far is still recorded and signed. */
			sbx_error_print(&err);
			refuse(refused, path, "not promoted: an I/O error stopped the promote");
			io_failed = true;
			break;
		}
		if (r > 0) {
			refuse(refused, path, why);
			continue;
		}
		json_object_set_new(f, "promoted", json_true());
		json_array_append_new(promoted, promoted_entry(a));
	}
	json_array_foreach(files, i, f) {
		json_object_del(f, "selected");
		remaining += !json_is_true(json_object_get(f, "promoted"));
	}
	/* Nothing held is left: the hold goes (under the lock still). */
	if (remaining == 0) {
		if (sbx_hold_remove(area_fd, o->run_id) < 0)
			sbx_warn("promote: %s/%s: cannot remove the emptied hold: %m", area, o->run_id);
	} else if (json_array_size(promoted) && sbx_hold_write_record(run_fd, rec, &err) < 0) {
		goto fail;
	}

	sbx_format_rfc3339_ms(started, at);
	sbx_format_rfc3339_ms(sbx_now_real_ms(), end);
	m = json_pack("{s:s,s:i,s:s,s:s,s:O,s:s,s:I,s:o,s:o,s:I,s:{s:s,s:s,s:I}}", "kind", "promote",
		      "manifest_version", PROMOTE_MANIFEST_VERSION, "sbx_version", PACKAGE_VERSION,
		      "run_id", o->run_id, "principal", json_object_get(man, "principal"),
		      "run_manifest_sha256", man_sha, "promoted_by_uid", (json_int_t)geteuid(),
		      "artifacts", promoted, "refused", refused, "held_remaining",
		      (json_int_t)remaining, "timing", "started_at", at, "ended_at", end, "wall_ms",
		      (json_int_t)((sbx_now_mono_ns() - t0) / 1000000));
	promoted = refused = NULL;
	if (!m || sbx_manifest_finish(m, &key, &line, &len, &err) < 0) {
		if (!err.code)
			sbx_error_set(&err, SBX_EXIT_SOFTWARE, 0, "promote: manifest: out of memory");
		goto fail;
	}
	fwrite(line, 1, len, stdout);
	fflush(stdout);
	code = io_failed ? (err.code ? err.code : SBX_EXIT_SOFTWARE) :
	       json_array_size(json_object_get(m, "refused")) ? SBX_EXIT_FAILED : SBX_EXIT_OK;
	goto out;
fail:
	sbx_error_print(&err);
	code = err.code ? err.code : SBX_EXIT_SOFTWARE;
out:
	json_decref(promoted);
	json_decref(refused);
	sbx_key_clear(&key);
	sbx_hostconfig_free(&cfg);
	sbx_artifacts_dir_close(&ad);
	return code;
}
