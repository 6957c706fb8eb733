/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * template.c - `sbx template start|stop|status [-p PROFILE] [--json]`:
 * profiles' templates by hand (sbx(1) TEMPLATES).  Runs start a template
 * themselves when they want one; this is for starting ahead of the first
 * run, stopping one now (after an upgrade, to end the shared hash secret
 * early), and seeing what runs.
 *
 * status lists what is in the caller's templates directory, whatever
 * catalog it came from: each socket with its record, and what the
 * template answers (STATUS).  A socket nobody answers at is "dead" (sbx
 * gc removes it); one of another digest than the profile's now is
 * "stale" (the next run stops it and starts another).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "catalog-suggest.h"
#include "cli.h"
#include "cmd-json.h"
#include "json.h"
#include "prepare.h"
#include "state.h"
#include "suggest.h"
#include "template-life.h"

struct tcmd {
	const struct sbx_common_opts *o;
	struct sbx_hostconfig cfg;
	struct sbx_catalog cat;
	char *state_dir;
	json_t *list;            /* --json: the entries */
	struct sbx_error fail;   /* the first failure */
	int code;
};

static void failed(struct tcmd *t, const struct sbx_error *err)
{
	sbx_error_print(err);
	if (!t->fail.code)
		t->fail = *err;
	t->code = err->code;
}

/* The place of @pr's template as a run now would want it. */
static int locate(struct tcmd *t, const struct sbx_profile *pr, struct sbx_template_place *pl,
		  struct sbx_prepared *prep, struct sbx_error *err)
{
	char why[192];

	if (pr->prepare && sbx_prepared_lookup(&t->cfg, &t->cat, pr, false, prep, err) < 0)
		return -1;
	if (sbx_template_locate(&t->cfg, &t->cat, pr, pr->prepare ? prep->sha256 : NULL,
				t->state_dir, pl, why, sizeof(why)) < 0) {
		sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "template: %s: %s", pr->name, why);
		sbx_error_hint(err, "runs of %s start cold; the profile's argv[0] must be the "
			       "interpreter sbx-template was built with",
			       pr->name);
		return -1;
	}
	return 0;
}

static void start_one(struct tcmd *t, const struct sbx_profile *pr)
{
	struct sbx_template_place pl = { 0 };
	struct sbx_prepared prep = { 0 };
	struct sbx_template_info info = { 0 };
	struct sbx_error err = { 0 };
	char why[192];

	if (locate(t, pr, &pl, &prep, &err) < 0)
		goto fail;
	if (sbx_template_start(&t->cfg, &t->cat, pr, prep.tree, &pl, why, sizeof(why)) < 0) {
		sbx_error_set(&err, SBX_EXIT_UNAVAILABLE, 0, "template: %s: %s", pr->name, why);
		sbx_error_hint(&err, "runs of %s start cold meanwhile; sbx check says what the "
			       "host lacks", pr->name);
		goto fail;
	}
	if (sbx_template_query(pl.sock_path, false, &info, &err) < 0)
		goto fail;
	if (t->list)
		json_array_append_new(t->list, json_pack("{s:s,s:s,s:o}", "profile", pr->name,
							  "digest", pl.digest, "pid",
							  info.pid ? json_integer(info.pid) : json_null()));
	else
		printf("%s: template %s running (pid %d)\n", pr->name, pl.digest, (int)info.pid);
	goto out;
fail:
	failed(t, &err);
out:
	sbx_prepared_free(&prep);
	sbx_template_place_free(&pl);
}

/* "<catalog>-<profile>-<digest>@ext": the profile and digest, or false. */
static bool parse_name(const char *name, const char *ext, char *profile, size_t plen,
		       char digest[17])
{
	size_t n = strlen(name), e = strlen(ext);
	const char *dash;

	if (n < 9 + 1 + 1 + 16 + e || strcmp(name + n - e, ext) != 0 || name[8] != '-' ||
	    name[n - e - 17] != '-')
		return false;
	dash = name + n - e - 17;
	if ((size_t)(dash - (name + 9)) >= plen || dash <= name + 9)
		return false;
	memcpy(profile, name + 9, (size_t)(dash - (name + 9)));
	profile[dash - (name + 9)] = '\0';
	memcpy(digest, dash + 1, 16);
	digest[16] = '\0';
	return strspn(digest, "0123456789abcdef") == 16 && sbx_catalog_name_valid(profile);
}

/* The digest a run of @profile would want now, or "" (no such profile
 * here, no template, or none can be had). */
static void current_digest(struct tcmd *t, const char *profile, char out[17])
{
	const struct sbx_profile *pr = sbx_catalog_profile(&t->cat, profile);
	struct sbx_template_place pl = { 0 };
	struct sbx_prepared prep = { 0 };
	struct sbx_error err = { 0 };

	out[0] = '\0';
	if (pr && pr->template && locate(t, pr, &pl, &prep, &err) == 0)
		memcpy(out, pl.digest, 17);
	sbx_prepared_free(&prep);
	sbx_template_place_free(&pl);
}

/* The failed starts of this catalog's profiles at the digest a run
 * would want now (runs report them and start cold): state "failed" with
 * the reason.  Whether a header was printed. */
static bool list_failed(struct tcmd *t, const char *dir, const char *key, const char *only,
			bool header)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char profile[65], digest[17], cur[17];
		_cleanup_free_ char *path = NULL;
		_cleanup_json_ json_t *rec = NULL;
		const char *why;

		if (!parse_name(de->d_name, ".failed", profile, sizeof(profile), digest) ||
		    strncmp(de->d_name, key, 8) != 0 || (only && strcmp(profile, only)))
			continue;
		current_digest(t, profile, cur);
		path = sbx_xasprintf("%s/%s", dir, de->d_name);
		rec = json_load_file(path, 0, NULL);
		why = rec ? json_string_value(json_object_get(rec, "why")) : NULL;
		if (strcmp(cur, digest) != 0 || !why)
			continue;
		if (t->list) {
			json_array_append_new(t->list, json_pack("{s:s,s:s,s:s,s:n,s:s}", "profile", profile,
								  "digest", digest, "state", "failed",
								  "pid", "why", why));
			continue;
		}
		if (!header)
			printf("%-20s %-16s %-8s %8s %6s %6s %6s\n", "PROFILE", "DIGEST", "STATE", "PID",
			       "RUNS", "ACTIVE", "IDLE");
		header = true;
		printf("%-20s %-16s %-8s %8s %6s %6s %6s  %s\n", profile, digest, "failed", "-", "-",
		       "-", "-", why);
	}
	if (d)
		closedir(d);
	return header;
}

/* Each template socket of the caller (of @only's profile, when given):
 * stopped, or listed. */
static void walk(struct tcmd *t, const char *only, bool stop)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/templates", t->state_dir);
	char key[9];
	DIR *d = opendir(dir);
	struct dirent *de;
	bool header = false;

	sbx_template_catalog_key(t->cat.dir, key);
	while (d && (de = readdir(d))) {
		char profile[65], digest[17], cur[17];
		_cleanup_free_ char *sock = NULL;
		struct sbx_template_info info = { 0 };
		struct sbx_error err = { 0 };
		bool alive, mine, starting;
		const char *state;

		if (!parse_name(de->d_name, ".sock", profile, sizeof(profile), digest))
			continue;
		mine = !strncmp(de->d_name, key, 8);
		if (only && (!mine || strcmp(profile, only)))
			continue;
		sock = sbx_xasprintf("%s/%s", dir, de->d_name);
		if (stop) {
			/* A start under way (a run's, in the background) ends
			 * first: its template would otherwise come up after
			 * the stop, at a path already gone. */
			for (uint64_t ms = 0; sbx_template_starting(dir, de->d_name) &&
					      ms < t->cfg.template_start_seconds * 1000 + 1000; ms += 50)
				usleep(50 * 1000);
			/* The broker owns the paths: the template stops
			 * taking runs, finishes those it has, exits. */
			alive = sbx_template_query(sock, true, NULL, &err) == 0;
			/* Its record stays for sbx gc, which removes it with
			 * the cgroup once the template has exited. */
			unlink(sock);
			if (t->list)
				json_array_append_new(t->list, json_pack("{s:s,s:s,s:b}", "profile",
									  profile, "digest", digest,
									  "was_running", alive));
			else if (alive)
				printf("%s: template %s stopped\n", profile, digest);
			continue;
		}
		/* A start under way holds the profile's lock, and its
		 * socket does not answer until the imports are done. */
		starting = sbx_template_starting(dir, de->d_name);
		alive = !starting && sbx_template_query(sock, false, &info, &err) == 0;
		current_digest(t, profile, cur);
		state = starting ? "starting" : !alive ? "dead" :
			(!mine || strcmp(cur, digest)) ? "stale" : "running";
		if (t->list) {
			json_t *e = json_pack("{s:s,s:s,s:s,s:s}", "profile", profile, "digest", digest,
					      "state", state, "socket", sock);

			json_object_set_new(e, "pid", alive && info.pid ? json_integer(info.pid) : json_null());
			json_object_set_new(e, "runs", alive ? json_integer(info.runs) : json_null());
			json_object_set_new(e, "active", alive ? json_integer(info.active) : json_null());
			json_object_set_new(e, "idle_seconds",
					    alive ? json_integer(info.active ? 0 :
								 time(NULL) - info.last_used) :
						    json_null());
			json_object_set_new(e, "started", alive ? json_integer(info.started) : json_null());
			json_array_append_new(t->list, e);
			continue;
		}
		if (!header)
			printf("%-20s %-16s %-8s %8s %6s %6s %6s\n", "PROFILE", "DIGEST", "STATE", "PID",
			       "RUNS", "ACTIVE", "IDLE");
		header = true;
		if (alive)
			printf("%-20s %-16s %-8s %8d %6u %6u %5llds\n", profile, digest, state,
			       (int)info.pid, info.runs, info.active,
			       (long long)(info.active ? 0 : time(NULL) - info.last_used));
		else
			printf("%-20s %-16s %-8s %8s %6s %6s %6s\n", profile, digest, state, "-", "-",
			       "-", "-");
	}
	if (d)
		closedir(d);
	if (!stop)
		header = list_failed(t, dir, key, only, header);
	if (!header && !stop && !t->list)
		printf("no templates (runs of a profile with a template start one)\n");
}

int sbx_cmd_template(const struct sbx_common_opts *o, const char *verb, const char *profile)
{
	struct tcmd t = { .o = o };
	struct sbx_error err = { 0 };
	const struct sbx_profile *pr = NULL;

	t.list = o->json ? json_array() : NULL;
	if (sbx_hostconfig_load(&t.cfg, o->config, &err) < 0 ||
	    sbx_catalog_load(&t.cat, sbx_catalog_default_dir(o->policy, &t.cfg), &err) < 0 ||
	    sbx_state_dir(t.cfg.state_dir, &t.state_dir, &err) < 0) {
		failed(&t, &err);
		goto out;
	}
	if (profile) {
		pr = sbx_catalog_profile(&t.cat, profile);
		if (!pr || !pr->template) {
			sbx_error_set(&err, SBX_EXIT_USAGE, 0, "template: %s: %s%s", profile,
				      pr ? "the profile has no template" : "no such runtime profile",
				      pr ? "" :
					   sbx_did_you_mean(sbx_catalog_suggest_profile(&t.cat, profile)));
			sbx_error_hint(&err, "a profile opts in with \"template\" (sbx-policy(5)); "
				       "sbx profiles lists the catalog's profiles");
			failed(&t, &err);
			goto out;
		}
	}
	if (!strcmp(verb, "start")) {
		for (size_t i = 0; i < t.cat.n_profiles; i++)
			if (t.cat.profiles[i].template && (!pr || pr == &t.cat.profiles[i]))
				start_one(&t, &t.cat.profiles[i]);
	} else {
		walk(&t, profile, !strcmp(verb, "stop"));
	}
out:
	if (t.list) {
		json_t *res = json_pack("{s:b,s:i,s:s,s:o}", "ok", t.code == 0, "exit", t.code,
					"action", verb, "templates", t.list);
		int w;

		if (t.code) {
			sbx_cmd_json_error(res, &t.fail);
			json_object_set_new(res, "exit", json_integer(t.code));
		}
		w = sbx_cmd_json_print(res);
		if (w && !t.code)
			t.code = w;
	}
	free(t.state_dir);
	sbx_catalog_free(&t.cat);
	sbx_hostconfig_free(&t.cfg);
	return t.code;
}
