/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * run-template.c - whether a run starts from its profile's template
 * (sbx(1) TEMPLATES), and what the manifest says of it (timing.start).
 *
 * A profile without a template costs nothing here: one pointer test.
 * With one, the run is cloned from the template when the host allows it
 * ("templates"), the caller did not ask for a cold run (--no-template),
 * every thread variable of the profile is 1 for this run (the template
 * imported with one thread; a run with more CPUs wants thread pools the
 * template does not have), and the job sets no variable to a value the
 * template did not start with.  Anything else on the way is a
 * cold run with the reason in timing.template_fallback, and so is a run
 * that finds no template answering: it has one started for the runs
 * after it and does not wait (template-want.c).
 */
#include "config.h"

#include <string.h>

#include "cpus.h"
#include "run.h"
#include "template-life.h"

/* The value @name has in the run: the job's (through env_allow), else
 * the run's CPU count, as sbx_cpus_env() sets it. */
static bool thread_var_is_one(const struct sbx_run *run, const char *name, unsigned n_cpus)
{
	size_t len = strlen(name);

	for (char **e = run->plan.env; e && *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			return !strcmp(*e + len + 1, "1");
	return n_cpus == 1;
}

static bool listed(char **list, const char *s)
{
	for (; list && *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

void sbx_run_template_choose(struct sbx_run *run, struct sbx_spawn *sp,
			     struct sbx_template_place *pl)
{
	const struct sbx_profile *pr = run->plan.profile;
	unsigned n_cpus;

	if (!pr->template)
		return;
	/* Cold by choice: nothing to explain. */
	if (!run->cfg.templates || run->opts->no_template || run->opts->prepare)
		return;
	n_cpus = sbx_cpus_for_run(run->plan.limits.v[SBX_LIMIT_CPU_MILLICORES]);
	for (char **v = pr->thread_env; *v; v++)
		if (!thread_var_is_one(run, *v, n_cpus)) {
			snprintf(run->template_fallback, sizeof(run->template_fallback),
				 "%s is not 1 for this run (the template has one thread)", *v);
			return;
		}
	/* The template imported with the profile's environment (and thread
	 * variables at 1): an interpreter and modules that read a variable
	 * at start-up or import (LANG and LC_* for the encodings, TZ,
	 * PYTHON*, MPLBACKEND...) read that one.  A job that sets another
	 * value wants what a fresh interpreter would make of it. */
	for (char **e = run->plan.env; e && *e; e++) {
		size_t klen = strcspn(*e, "=");
		bool thread = false;

		for (char **v = pr->thread_env; *v; v++)
			thread |= strlen(*v) == klen && !strncmp(*v, *e, klen);
		if (listed(pr->env, *e) || (thread && !strcmp(*e + klen, "=1")))
			continue;
		snprintf(run->template_fallback, sizeof(run->template_fallback),
			 "the job sets %.*s, which the template's interpreter did not start with",
			 (int)klen, *e);
		return;
	}
	if (sbx_template_locate(&run->cfg, &run->cat, pr,
				run->plan.prepared_tree ? run->plan.prepared_sha256 : NULL,
				run->state_dir, pl, run->template_fallback,
				sizeof(run->template_fallback)) < 0)
		return;
	if (sbx_template_want(&run->opts->common, &run->cat, pr, pl, run->template_fallback,
			      sizeof(run->template_fallback)) < 0)
		return;
	sp->template_sock = pl->sock_path;
	sp->template_digest = pl->digest;
}

void sbx_run_template_note(struct sbx_run *run, const struct sbx_spawn *sp)
{
	if (!sp->template_sock)
		return;
	run->from_template = sp->from_template;
	if (sp->from_template)
		snprintf(run->template_digest, sizeof(run->template_digest), "%s",
			 sp->template_digest);
	else if (sp->template_fallback)
		snprintf(run->template_fallback, sizeof(run->template_fallback), "%s",
			 sp->template_fallback);
}
