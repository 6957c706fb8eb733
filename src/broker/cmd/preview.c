/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * preview.c - `sbx run --print-job` and `sbx run --dry-run`: what a run
 * would be, without running it.
 *
 * Neither takes a step of the run that leaves a trace: no signing key is
 * read or made, no artifacts directory, state entry, admission slot,
 * cgroup or namespace is created, and the input store is not opened.
 * --print-job stops after the one-liner's job is built and parsed;
 * --dry-run goes on through the host config, the catalog and admission
 * (the same refusals as a run, 65 and 77, but no manifest) and prints the
 * plan the sandbox would be built from.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd-json.h"
#include "contract.h"
#include "hostconfig.h"
#include "job.h"
#include "json.h"
#include "oneliner.h"
#include "policy.h"

#define COL 20

static void line(const char *key, const char *value)
{
	printf("%-*s %s\n", COL, key, value);
}

/* A value from the job, with control characters escaped. */
static void line_job(const char *key, const char *value)
{
	char esc[1024];

	sbx_json_escape(value, esc, sizeof(esc));
	line(key, esc);
}

static void print_argv(const struct sbx_profile *pr, const struct sbx_job *job)
{
	_cleanup_free_ char *code = sbx_xasprintf("/work/%s", pr->code_file);

	for (char **a = pr->argv; *a; a++) {
		if (!strcmp(*a, "{args}"))
			for (char **x = job->args; x && *x; x++)
				line_job("argv", *x);
		else
			line("argv", !strcmp(*a, "{code}") ? code : *a);
	}
}

static const char *partial_name(enum sbx_partial p)
{
	return p == SBX_PARTIAL_RETAIN ? "retain" : p == SBX_PARTIAL_HOLD ? "hold" : "discard";
}

static void print_plan(const struct sbx_plan *plan, const struct sbx_job *job)
{
	const struct sbx_profile *pr = plan->profile;
	char buf[64];

	line_job("source", job->source);
	line("runtime_profile", pr->name);
	line("network_profile", plan->network->name);
	/* Keyed and valued as the manifest's "limits" (cpu_millicores 500,
	 * not cpu_cores 0.5), so that a plan and the run's manifest can be
	 * compared line by line; the job's own spelling follows a fraction. */
	for (size_t i = 0; i < _SBX_LIMIT_MAX; i++) {
		const struct sbx_limit_info *d = &sbx_limit_table[i];
		_cleanup_free_ char *key = sbx_xasprintf("limits.%s", d->manifest_key);
		_cleanup_free_ char *v = NULL;

		sbx_limit_format((enum sbx_limit_id)i, plan->limits.v[i], buf, sizeof(buf));
		v = d->fraction ? sbx_xasprintf("%" PRIu64 " (%s %s in a job)", plan->limits.v[i],
						d->key, buf)
				: sbx_xstrdup(buf);
		line(key, v);
	}
	print_argv(pr, job);
	if (job->code_handle) {
		line_job("code_handle", job->code_handle);
	} else {
		_cleanup_free_ char *c = sbx_xasprintf("/work/%s (%zu bytes)", pr->code_file,
						       job->code_len);
		line("code", c);
	}
	for (size_t i = 0; job->input_handles[i]; i++) {
		bool x = false;

		for (size_t k = 0; job->extract && job->extract[k]; k++)
			x = x || !strcmp(job->extract[k], job->input_handles[i]);
		_cleanup_free_ char *s = sbx_xasprintf("/work/in/%s%s", job->input_handles[i],
						       x ? " (extracted)" : "");
		line_job("input", s);
	}
	for (size_t i = 0; i < pr->n_binds; i++) {
		const struct sbx_bind *b = &pr->binds[i];
		const char *dst = b->dst ? b->dst : b->src;
		_cleanup_free_ char *s = sbx_xasprintf("%s%s%s (read-only%s)", b->src,
						       strcmp(dst, b->src) ? " -> " : "",
						       strcmp(dst, b->src) ? dst : "",
						       b->optional ? ", optional" : "");
		line("bind", s);
	}
	for (char **e = plan->env; e && *e; e++)
		line_job("env", *e);
	for (char **t = plan->allowed_outputs; t && *t; t++)
		line("allowed_outputs", *t);
	for (char **r = job->required_outputs; r && *r; r++)
		line_job("required_outputs", *r);
	{
		const char *path;
		json_t *k;

		/* Each output contract by path; its checks are the job's. */
		json_object_foreach(job->outputs, path, k) {
			const json_t *req = json_object_get(k, "required");
			_cleanup_free_ char *v = sbx_xasprintf("%s (contract, %s)", path,
								json_is_false(req) ? "optional" : "required");
			line_job("outputs", v);
		}
	}
	line("partial_outputs", partial_name(job->partial_outputs));
}

/*
 * --dry-run --json: the same plan as one object on one line
 * (schema/dry-run.schema.json), limits keyed and valued as in the
 * manifest.
 */
static json_t *plan_json(const struct sbx_plan *plan, const struct sbx_job *job)
{
	const struct sbx_profile *pr = plan->profile;
	json_t *o = json_object(), *limits = json_object(), *argv = json_array(),
	       *inputs = json_array(), *binds = json_array(), *env = json_array(),
	       *allowed = json_array(), *required = json_array(), *outputs = json_array();
	const char *path;
	json_t *k;

	json_object_set_new(o, "source", json_string(job->source));
	json_object_set_new(o, "runtime_profile", json_string(pr->name));
	json_object_set_new(o, "network_profile", json_string(plan->network->name));
	for (size_t i = 0; i < _SBX_LIMIT_MAX; i++)
		json_object_set_new(limits, sbx_limit_table[i].manifest_key,
				    json_integer((json_int_t)plan->limits.v[i]));
	json_object_set_new(o, "limits", limits);
	for (char **a = pr->argv; *a; a++) {
		if (!strcmp(*a, "{args}")) {
			for (char **x = job->args; x && *x; x++)
				json_array_append_new(argv, json_string(*x));
		} else if (!strcmp(*a, "{code}")) {
			_cleanup_free_ char *code = sbx_xasprintf("/work/%s", pr->code_file);
			json_array_append_new(argv, json_string(code));
		} else {
			json_array_append_new(argv, json_string(*a));
		}
	}
	json_object_set_new(o, "argv", argv);
	if (job->code_handle) {
		json_object_set_new(o, "code_handle", json_string(job->code_handle));
		json_object_set_new(o, "code_bytes", json_null());
	} else {
		json_object_set_new(o, "code_handle", json_null());
		json_object_set_new(o, "code_bytes", json_integer((json_int_t)job->code_len));
	}
	for (size_t i = 0; job->input_handles[i]; i++) {
		bool x = false;

		for (size_t n = 0; job->extract && job->extract[n]; n++)
			x = x || !strcmp(job->extract[n], job->input_handles[i]);
		json_array_append_new(inputs, json_pack("{s:s, s:b}", "handle", job->input_handles[i],
							"extracted", x));
	}
	json_object_set_new(o, "inputs", inputs);
	for (size_t i = 0; i < pr->n_binds; i++) {
		const struct sbx_bind *b = &pr->binds[i];

		json_array_append_new(binds, json_pack("{s:s, s:s, s:b}", "src", b->src, "dst",
						       b->dst ? b->dst : b->src, "optional",
						       b->optional));
	}
	json_object_set_new(o, "binds", binds);
	for (char **e = plan->env; e && *e; e++)
		json_array_append_new(env, json_string(*e));
	json_object_set_new(o, "env", env);
	for (char **t = plan->allowed_outputs; t && *t; t++)
		json_array_append_new(allowed, json_string(*t));
	json_object_set_new(o, "allowed_outputs", allowed);
	for (char **r = job->required_outputs; r && *r; r++)
		json_array_append_new(required, json_string(*r));
	json_object_set_new(o, "required_outputs", required);
	json_object_foreach(job->outputs, path, k)
		json_array_append_new(outputs,
				      json_pack("{s:s, s:b}", "path", path, "required",
						!json_is_false(json_object_get(k, "required"))));
	json_object_set_new(o, "outputs", outputs);
	json_object_set_new(o, "partial_outputs", json_string(partial_name(job->partial_outputs)));
	return o;
}

static int dry_run(const struct sbx_run_opts *o, struct sbx_job *job, bool have_job,
		   struct sbx_error *err)
{
	struct sbx_hostconfig cfg = { 0 };
	struct sbx_catalog cat = { 0 };
	struct sbx_plan plan = { 0 };
	struct sbx_contracts contracts = { 0 };
	int code = 0;

	if (sbx_hostconfig_load(&cfg, o->common.config, err) < 0) {
		sbx_hostconfig_free(&cfg);
		return -1;
	}
	if (sbx_catalog_load(&cat, sbx_catalog_default_dir(o->common.policy, &cfg), err) < 0 ||
	    (!have_job && sbx_job_load(job, o->job, err) < 0) ||
	    sbx_contracts_parse(job->outputs, job->source, &contracts, err) < 0 ||
	    sbx_policy_admit(&plan, job, &cat, err) < 0 ||
	    sbx_contracts_admit(&contracts, job->source, plan.profile->name,
				plan.profile->allowed_outputs, &plan.allowed_outputs, err) < 0)
		code = -1;
	else if (!o->common.json)
		print_plan(&plan, job);
	else if (sbx_cmd_json_print(plan_json(&plan, job)))
		code = sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "--dry-run --json: stdout");
	fflush(stdout);
	sbx_contracts_free(&contracts);
	sbx_plan_free(&plan);
	sbx_catalog_free(&cat);
	sbx_hostconfig_free(&cfg);
	return code;
}

int sbx_run_preview(const struct sbx_run_opts *o)
{
	struct sbx_error err = { 0 };
	struct sbx_job job = { 0 };
	_cleanup_free_ char *bytes = NULL;
	size_t len = 0;
	int r = 0;

	if (o->one.profile) {
		struct sbx_contracts contracts = { 0 };

		if (sbx_oneliner_build(&o->one, &bytes, &len, &err) < 0 ||
		    sbx_job_parse(&job, SBX_ONELINER_SOURCE, bytes, len, &err) < 0 ||
		    sbx_contracts_parse(job.outputs, job.source, &contracts, &err) < 0) {
			sbx_contracts_free(&contracts);
			r = -1;
			goto out;
		}
		sbx_contracts_free(&contracts);
		if (o->print_job) {
			/* The job's bytes exactly: saved to a file, they are a
			 * job with the same job_sha256.  A newline only for a
			 * person at a terminal. */
			fwrite(bytes, 1, len, stdout);
			if (isatty(STDOUT_FILENO))
				fputc('\n', stdout);
			if (fflush(stdout) != 0)
				r = sbx_error_set(&err, SBX_EXIT_SOFTWARE, errno, "stdout");
			goto out;
		}
	}
	r = dry_run(o, &job, o->one.profile != NULL, &err);
out:
	sbx_job_free(&job);
	if (r < 0) {
		if (err.code == SBX_EXIT_USAGE)
			sbx_oneliner_usage_print(&err);
		else
			sbx_error_print(&err);
		return err.code;
	}
	return 0;
}
