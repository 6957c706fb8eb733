/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.c - admission by policy: a well-formed job against the catalog.
 *
 * Every refusal here is 77 and names the JSON path of the job that asked
 * for too much.  Nothing is ever silently lowered: a limit above the
 * profile's maximum is refused, not clamped, so the job's author learns
 * what the operator allows instead of getting a different run than asked.
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "catalog-suggest.h"
#include "json.h"
#include "policy.h"
#include "spec.h"

static bool strv_contains(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

static int admit_limits(struct sbx_plan *plan, const struct sbx_job *job,
			const struct sbx_profile *pr, struct sbx_error *err)
{
	struct sbx_jctx c = { .source = job->source, .code = SBX_EXIT_REFUSED, .err = err };

	memset(&plan->limits, 0, sizeof(plan->limits));
	for (size_t i = 0; i < _SBX_LIMIT_MAX; i++) {
		enum sbx_limit_id id = (enum sbx_limit_id)i;
		char p[SBX_JSON_PATH_MAX], a[32], b[32];
		uint64_t v;

		if (!sbx_limit_is_set(&job->limits, id)) {
			sbx_limit_put(&plan->limits, id, pr->defaults.v[i]);
			continue;
		}
		v = job->limits.v[i];
		sbx_json_path_key(p, "limits", sbx_limit_table[i].key);
		sbx_limit_format(id, v, a, sizeof(a));
		if (v > pr->maximums.v[i]) {
			sbx_limit_format(id, pr->maximums.v[i], b, sizeof(b));
			return sbx_json_error(&c, p, "%s is above the maximum %s of profile \"%s\"",
					      a, b, pr->name);
		}
		if (v < pr->minimums.v[i]) {
			sbx_limit_format(id, pr->minimums.v[i], b, sizeof(b));
			return sbx_json_error(&c, p, "%s is below the minimum %s of profile \"%s\"",
					      a, b, pr->name);
		}
		sbx_limit_put(&plan->limits, id, v);
	}

	/* An explicit soft >= wall was already invalid (65) in the job; here
	 * at least one of them is the profile's.  A soft deadline the job
	 * gave itself that its (default) wall would cut short is still the
	 * job's mistake; a default soft deadline that never fires before the
	 * job's own wall is just not used. */
	if (plan->limits.v[SBX_LIMIT_SOFT_SECONDS] >= plan->limits.v[SBX_LIMIT_WALL_SECONDS]) {
		if (sbx_limit_is_set(&job->limits, SBX_LIMIT_SOFT_SECONDS)) {
			sbx_error_set(err, SBX_EXIT_INVALID, 0,
				      "%s: limits.soft_seconds: must be less than the wall deadline "
				      "(%" PRIu64 " s, the default of profile \"%s\"), got %" PRIu64,
				      job->source, plan->limits.v[SBX_LIMIT_WALL_SECONDS], pr->name,
				      plan->limits.v[SBX_LIMIT_SOFT_SECONDS]);
			return -1;
		}
		plan->limits.v[SBX_LIMIT_SOFT_SECONDS] = 0;
	}
	return 0;
}

/* An egress profile's proxy, as the payload finds it (proxy.h).  Both
 * spellings: curl reads lower case for http, python and others either.
 * NO_PROXY empty: nothing bypasses the proxy (nothing else is reachable). */
static const char *const proxy_env[] = {
	"HTTP_PROXY=" SBX_PROXY_URL, "HTTPS_PROXY=" SBX_PROXY_URL, "ALL_PROXY=" SBX_PROXY_URL,
	"http_proxy=" SBX_PROXY_URL, "https_proxy=" SBX_PROXY_URL, "all_proxy=" SBX_PROXY_URL,
	"NO_PROXY=",                 "no_proxy=",
};

/* Set KEY=VALUE @kv in @env (k entries), replacing an existing KEY. */
static void env_put(char **env, size_t *k, const char *kv)
{
	size_t keylen = strcspn(kv, "=");

	for (size_t j = 0; j < *k; j++)
		if (strncmp(env[j], kv, keylen + 1) == 0) {
			free(env[j]);
			env[j] = sbx_xstrdup(kv);
			return;
		}
	env[(*k)++] = sbx_xstrdup(kv);
}

/* Profile env first, then the job's: a job key is only here when it is in
 * env_allow, and then it may replace the profile's value (TZ, LANG...).
 * The proxy variables come last and win over both. */
static void build_env(struct sbx_plan *plan, const struct sbx_job *job,
		      const struct sbx_profile *pr)
{
	size_t n = sbx_strv_length(pr->env), m = sbx_strv_length(job->env);
	char **env = sbx_xcalloc(n + m + ARRAY_SIZE(proxy_env) + 1, sizeof(char *));
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		env[k++] = sbx_xstrdup(pr->env[i]);
	for (size_t i = 0; i < m; i++) {
		size_t keylen = strcspn(job->env[i], "=");
		bool replaced = false;

		for (size_t j = 0; j < k; j++)
			if (strncmp(env[j], job->env[i], keylen + 1) == 0) {
				free(env[j]);
				env[j] = sbx_xstrdup(job->env[i]);
				replaced = true;
				break;
			}
		if (!replaced)
			env[k++] = sbx_xstrdup(job->env[i]);
	}
	if (plan->network && plan->network->kind == SBX_NET_EGRESS)
		for (size_t i = 0; i < ARRAY_SIZE(proxy_env); i++)
			env_put(env, &k, proxy_env[i]);
	plan->env = env;
}

/* The job's fetch profile must be one its runtime profile lists, and no
 * entry may ask for more bytes than the profile allows a file. */
static int admit_fetch(struct sbx_plan *plan, const struct sbx_job *job,
		       const struct sbx_profile *pr, const struct sbx_catalog *cat,
		       const struct sbx_jctx *c)
{
	char esc[80];

	if (!job->fetch_profile)
		return 0;
	sbx_json_escape(job->fetch_profile, esc, sizeof(esc));
	plan->fetch = sbx_catalog_fetch(cat, job->fetch_profile);
	if (!plan->fetch)
		return sbx_json_error(c, "fetch_profile", "no fetch profile \"%s\" in the catalog",
				      esc);
	if (!strv_contains(pr->fetch_profiles, job->fetch_profile))
		return sbx_json_error(c, "fetch_profile",
				      "profile \"%s\" does not allow fetch profile \"%s\"", pr->name,
				      esc);
	for (size_t i = 0; i < job->n_fetch; i++) {
		char p[SBX_JSON_PATH_MAX], q[SBX_JSON_PATH_MAX];

		if (job->fetch[i].max_bytes <= plan->fetch->max_file_bytes)
			continue;
		sbx_json_path_index(p, "fetch", i);
		sbx_json_path_key(q, p, "max_bytes");
		return sbx_json_error(c, q,
				      "%" PRIu64 " is above fetch profile \"%s\"'s max_file_bytes %" PRIu64,
				      job->fetch[i].max_bytes, esc, plan->fetch->max_file_bytes);
	}
	return 0;
}

static int admit(struct sbx_plan *plan, const struct sbx_job *job, const struct sbx_catalog *cat,
		 struct sbx_error *err)
{
	struct sbx_jctx c = { .source = job->source, .code = SBX_EXIT_REFUSED, .err = err };
	const char *net = job->network_profile ? job->network_profile : "disabled";
	const struct sbx_profile *pr;
	char esc[80];

	/* Names are opaque keys into the catalog: "../x" or "/usr/bin/python3"
	 * are not looked up as paths, they simply are not there. */
	pr = sbx_catalog_profile(cat, job->runtime_profile);
	if (!pr) {
		sbx_json_escape(job->runtime_profile ? job->runtime_profile : "", esc, sizeof(esc));
		return sbx_json_error(&c, "runtime_profile", "no runtime profile \"%s\" in the catalog%s",
				      esc,
				      sbx_did_you_mean(sbx_catalog_suggest_profile(cat, job->runtime_profile)));
	}
	plan->profile = pr;

	plan->network = sbx_catalog_network(cat, net);
	if (!plan->network) {
		sbx_json_escape(net, esc, sizeof(esc));
		return sbx_json_error(&c, "network_profile", "no network profile \"%s\" in the catalog%s",
				      esc,
				      sbx_did_you_mean(sbx_catalog_suggest_network(cat, net)));
	}
	if (!strv_contains(pr->network_profiles, net))
		return sbx_json_error(&c, "network_profile",
				      "profile \"%s\" does not allow network profile \"%s\"", pr->name,
				      net);
	if (admit_fetch(plan, job, pr, cat, &c) < 0)
		return -1;
	/* The catalog was cross-checked at load; this cannot fail there. */
	plan->seccomp = sbx_catalog_seccomp(cat, pr->seccomp);
	if (!plan->seccomp)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "%s: seccomp: policy \"%s\" vanished",
				     pr->file, pr->seccomp);

	if (admit_limits(plan, job, pr, err) < 0)
		return -1;

	for (size_t i = 0; job->env && job->env[i]; i++) {
		_cleanup_free_ char *key = sbx_xstrndup(job->env[i], strcspn(job->env[i], "="));
		char p[SBX_JSON_PATH_MAX];

		if (!strv_contains(pr->env_allow, key)) {
			sbx_json_path_key(p, "env", key);
			return sbx_json_error(&c, p, "not in env_allow of profile \"%s\"", pr->name);
		}
	}

	if (job->allowed_outputs) {
		for (size_t i = 0; job->allowed_outputs[i]; i++) {
			char p[SBX_JSON_PATH_MAX];

			if (strv_contains(pr->allowed_outputs, job->allowed_outputs[i]))
				continue;
			sbx_json_path_index(p, "allowed_outputs", i);
			return sbx_json_error(&c, p, "profile \"%s\" does not allow output type %s",
					      pr->name, job->allowed_outputs[i]);
		}
		plan->allowed_outputs = sbx_strv_copy(job->allowed_outputs);
	} else {
		plan->allowed_outputs = sbx_strv_copy(pr->allowed_outputs);
	}
	build_env(plan, job, pr);
	return 0;
}

int sbx_policy_admit(struct sbx_plan *plan, const struct sbx_job *job,
		     const struct sbx_catalog *cat, struct sbx_error *err)
{
	memset(plan, 0, sizeof(*plan));
	if (admit(plan, job, cat, err) < 0) {
		/* Keep the catalog pointers that were found: a refused run's
		 * manifest still names the profile it asked for. */
		sbx_strv_free(plan->allowed_outputs);
		sbx_strv_free(plan->env);
		plan->allowed_outputs = plan->env = NULL;
		return -1;
	}
	return 0;
}

void sbx_plan_free(struct sbx_plan *plan)
{
	if (!plan)
		return;
	sbx_strv_free(plan->allowed_outputs);
	sbx_strv_free(plan->env);
	free(plan->prepared_tree);
	sbx_strv_free(plan->argv);
	memset(plan, 0, sizeof(*plan));
}
