/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-profiles.c - `sbx profiles`: the catalog as an operator reads it,
 * each runtime profile with its limits and each network profile with what
 * it allows.
 */
#include "config.h"

#include <jansson.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "hostconfig.h"
#include "job.h"

static void print_list(const char *label, char *const *v)
{
	printf("  %-12s", label);
	if (!v || !v[0])
		fputs(" (none)", stdout);
	for (size_t i = 0; v && v[i]; i++)
		printf("%s%s", i ? ", " : " ", v[i]);
	putchar('\n');
}

static void print_profile(const struct sbx_profile *pr)
{
	printf("%s - %s\n", pr->name, pr->description);
	printf("  %-12s", "argv");
	for (size_t i = 0; pr->argv[i]; i++)
		printf(" %s", pr->argv[i]);
	printf("   ({code} = /work/%s)\n", pr->code_file);
	printf("  %-12s %s\n", "seccomp", pr->seccomp);
	print_list("network", pr->network_profiles);
	if (pr->fetch_profiles[0])
		print_list("fetch", pr->fetch_profiles);
	print_list("outputs", pr->allowed_outputs);
	print_list("env_allow", pr->env_allow);
	printf("  %-16s %10s %10s %12s\n", "limit", "minimum", "default", "maximum");
	for (size_t i = 0; i < _SBX_LIMIT_MAX; i++) {
		enum sbx_limit_id id = (enum sbx_limit_id)i;
		char lo[32], def[32], hi[32];

		sbx_limit_format(id, pr->minimums.v[i], lo, sizeof(lo));
		sbx_limit_format(id, pr->defaults.v[i], def, sizeof(def));
		sbx_limit_format(id, pr->maximums.v[i], hi, sizeof(hi));
		printf("  %-16s %10s %10s %12s\n", sbx_limit_table[i].key, lo, def, hi);
	}
}

static void print_network(const struct sbx_netprofile *np)
{
	printf("%s - %s\n", np->name, np->description);
	printf("  %-12s %s\n", "kind", np->kind == SBX_NET_EGRESS ? "egress" : "disabled");
	for (size_t i = 0; i < np->n_allow; i++) {
		printf("  %-12s %s:", i ? "" : "allow", np->allow[i].host);
		for (size_t k = 0; k < np->allow[i].n_ports; k++)
			printf("%s%u", k ? "," : "", np->allow[i].ports[k]);
		putchar('\n');
	}
	if (np->allow_cidrs && np->allow_cidrs[0])
		print_list("allow_cidrs", np->allow_cidrs);
	if (np->kind == SBX_NET_EGRESS) {
		printf("  %-12s ", "connect");
		if (np->connect == SBX_CONNECT_ANY)
			printf("any allowed port");
		else if (np->connect == SBX_CONNECT_NONE)
			printf("no");
		for (size_t k = 0; k < np->n_connect_ports; k++)
			printf("%s%u", k ? "," : "", np->connect_ports[k]);
		putchar('\n');
	}
}

static void print_fetch(const struct sbx_fetchprofile *fp)
{
	printf("%s - %s\n", fp->name, fp->net.description);
	for (size_t i = 0; i < fp->net.n_allow; i++) {
		printf("  %-12s %s:", i ? "" : "allow", fp->net.allow[i].host);
		for (size_t k = 0; k < fp->net.allow[i].n_ports; k++)
			printf("%s%u", k ? "," : "", fp->net.allow[i].ports[k]);
		putchar('\n');
	}
	if (fp->net.allow_cidrs && fp->net.allow_cidrs[0])
		print_list("allow_cidrs", fp->net.allow_cidrs);
	printf("  %-12s %s\n", "schemes", fp->allow_http ? "https http" : "https");
	printf("  %-12s %" PRIu64 " a run, %" PRIu64 " a file, %" PRIu64 " s a request, %" PRIu64
	       " redirects\n",
	       "limits", fp->net.max_bytes, fp->max_file_bytes, fp->timeout_seconds,
	       fp->max_redirects);
	if (fp->ca_file)
		printf("  %-12s %s\n", "ca_file", fp->ca_file);
}

/* --- --json -------------------------------------------------------------- */

static json_t *strv_json(char *const *v)
{
	json_t *a = json_array();

	for (size_t i = 0; v && v[i]; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *ports_json(const uint16_t *p, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer(p[i]));
	return a;
}

static void put_sha256(json_t *o, const char *raw, size_t len)
{
	char hex[65];

	json_object_set_new(o, "sha256",
			    sbx_catalog_sha256(raw, len, hex) == 0 ? json_string(hex) : json_null());
}

/*
 * A runtime profile as the catalog gives it (what the file leaves out
 * filled in as the catalog fills it).  Limits are keyed and valued as in the manifest's "limits"
 * (cpu_cores as cpu_millicores): integers only.
 */
static json_t *profile_json(const struct sbx_profile *pr)
{
	json_t *o = json_object(), *binds = json_array(), *links = json_array(),
	       *env = json_object(), *limits = json_object();
	const struct sbx_kernel_quotas *q = &pr->quotas;

	json_object_set_new(o, "name", json_string(pr->name));
	json_object_set_new(o, "description", json_string(pr->description));
	put_sha256(o, pr->raw, pr->raw_len);
	json_object_set_new(o, "argv", strv_json(pr->argv));
	json_object_set_new(o, "code_file", json_string(pr->code_file));
	for (size_t i = 0; i < pr->n_binds; i++)
		json_array_append_new(binds, json_pack("{s:s, s:s, s:b}", "src", pr->binds[i].src,
						       "dst", pr->binds[i].dst, "optional",
						       pr->binds[i].optional));
	json_object_set_new(o, "binds", binds);
	for (size_t i = 0; i < pr->n_symlinks; i++)
		json_array_append_new(links, json_pack("{s:s, s:s}", "path", pr->symlinks[i].path,
						       "target", pr->symlinks[i].target));
	json_object_set_new(o, "symlinks", links);
	for (size_t i = 0; pr->env && pr->env[i]; i++) {
		const char *eq = strchr(pr->env[i], '=');
		_cleanup_free_ char *k = eq ? sbx_xstrndup(pr->env[i], (size_t)(eq - pr->env[i])) : NULL;

		if (k)
			json_object_set_new(env, k, json_string(eq + 1));
	}
	json_object_set_new(o, "env", env);
	json_object_set_new(o, "env_allow", strv_json(pr->env_allow));
	json_object_set_new(o, "seccomp", json_string(pr->seccomp));
	json_object_set_new(o, "network_profiles", strv_json(pr->network_profiles));
	json_object_set_new(o, "fetch_profiles", strv_json(pr->fetch_profiles));
	json_object_set_new(o, "allowed_outputs", strv_json(pr->allowed_outputs));
	json_object_set_new(o, "input_bytes_max", json_integer((json_int_t)pr->input_bytes_max));
	json_object_set_new(o, "stream_bytes_max", json_integer((json_int_t)pr->stream_bytes_max));
	for (size_t i = 0; i < _SBX_LIMIT_MAX; i++)
		json_object_set_new(limits, sbx_limit_table[i].manifest_key,
				    json_pack("{s:I, s:I, s:I}", "minimum",
					      (json_int_t)pr->minimums.v[i], "default",
					      (json_int_t)pr->defaults.v[i], "maximum",
					      (json_int_t)pr->maximums.v[i]));
	json_object_set_new(o, "limits", limits);
	json_object_set_new(o, "kernel_quotas",
			    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
				      "inotify_instances", (json_int_t)q->inotify_instances,
				      "inotify_watches", (json_int_t)q->inotify_watches,
				      "fanotify_groups", (json_int_t)q->fanotify_groups,
				      "fanotify_marks", (json_int_t)q->fanotify_marks,
				      "sigpending", (json_int_t)q->sigpending,
				      "msgqueue_bytes", (json_int_t)q->msgqueue_bytes,
				      "memlock_bytes", (json_int_t)q->memlock_bytes));
	return o;
}

static json_t *network_json(const struct sbx_netprofile *np)
{
	json_t *o = json_object(), *allow = json_array();

	json_object_set_new(o, "name", json_string(np->name));
	json_object_set_new(o, "description", json_string(np->description));
	put_sha256(o, np->raw, np->raw_len);
	json_object_set_new(o, "kind", json_string(np->kind == SBX_NET_EGRESS ? "egress" : "disabled"));
	for (size_t i = 0; i < np->n_allow; i++)
		json_array_append_new(allow, json_pack("{s:s, s:o}", "host", np->allow[i].host, "ports",
						       ports_json(np->allow[i].ports,
								  np->allow[i].n_ports)));
	json_object_set_new(o, "allow", allow);
	json_object_set_new(o, "allow_cidrs", strv_json(np->allow_cidrs));
	/* 0: the proxy's own default applies; said as null, not as 0. */
	json_object_set_new(o, "max_connections",
			    np->max_connections ? json_integer((json_int_t)np->max_connections) :
						  json_null());
	json_object_set_new(o, "max_bytes",
			    np->max_bytes ? json_integer((json_int_t)np->max_bytes) : json_null());
	/* As in the catalog file: true, false, or the ports (null: no
	 * network to connect to). */
	json_object_set_new(o, "connect",
			    np->kind != SBX_NET_EGRESS      ? json_null() :
			    np->connect == SBX_CONNECT_ANY  ? json_true() :
			    np->connect == SBX_CONNECT_NONE ? json_false() :
							      ports_json(np->connect_ports,
									 np->n_connect_ports));
	return o;
}

static json_t *fetch_json(const struct sbx_fetchprofile *fp)
{
	json_t *o = network_json(&fp->net);

	/* The egress profile's members that a fetch profile does not have. */
	json_object_del(o, "kind");
	json_object_del(o, "max_connections");
	json_object_del(o, "connect");
	json_object_set_new(o, "name", json_string(fp->name));
	put_sha256(o, fp->raw, fp->raw_len);
	json_object_set_new(o, "schemes", fp->allow_http ? json_pack("[s,s]", "https", "http") :
							   json_pack("[s]", "https"));
	json_object_set_new(o, "max_bytes", json_integer((json_int_t)fp->net.max_bytes));
	json_object_set_new(o, "max_file_bytes", json_integer((json_int_t)fp->max_file_bytes));
	json_object_set_new(o, "timeout_seconds", json_integer((json_int_t)fp->timeout_seconds));
	json_object_set_new(o, "max_redirects", json_integer((json_int_t)fp->max_redirects));
	json_object_set_new(o, "ca_file", fp->ca_file ? json_string(fp->ca_file) : json_null());
	return o;
}

/* The whole catalog as one JSON object on one line. */
static int print_json(const struct sbx_catalog *cat)
{
	json_t *doc = json_object(), *profiles = json_array(), *networks = json_array();
	json_t *fetches = json_array();
	char *line;
	int r = 0;

	for (size_t i = 0; i < cat->n_profiles; i++)
		json_array_append_new(profiles, profile_json(&cat->profiles[i]));
	for (size_t i = 0; i < cat->n_networks; i++)
		json_array_append_new(networks, network_json(&cat->networks[i]));
	json_object_set_new(doc, "catalog", json_string(cat->dir));
	json_object_set_new(doc, "profiles", profiles);
	json_object_set_new(doc, "networks", networks);
	for (size_t i = 0; i < cat->n_fetches; i++)
		json_array_append_new(fetches, fetch_json(&cat->fetches[i]));
	json_object_set_new(doc, "fetches", fetches);
	line = json_dumps(doc, JSON_COMPACT);
	if (line)
		puts(line);
	else
		r = -1;
	free(line);
	json_decref(doc);
	return r;
}

int sbx_cmd_profiles(const struct sbx_common_opts *o)
{
	struct sbx_hostconfig cfg = { 0 };
	struct sbx_catalog cat = { 0 };
	struct sbx_error err = { 0 };
	int r = SBX_EXIT_OK;

	if (sbx_hostconfig_load(&cfg, o->config, &err) < 0 ||
	    sbx_catalog_load(&cat, sbx_catalog_default_dir(o->policy, &cfg), &err) < 0) {
		sbx_error_print(&err);
		r = err.code;
		goto out;
	}
	if (o->json) {
		if (print_json(&cat) < 0)
			r = SBX_EXIT_SOFTWARE;
		goto flush;
	}
	printf("Runtime profiles (%s/profiles):\n\n", cat.dir);
	for (size_t i = 0; i < cat.n_profiles; i++) {
		print_profile(&cat.profiles[i]);
		putchar('\n');
	}
	printf("Network profiles (%s/network):\n\n", cat.dir);
	for (size_t i = 0; i < cat.n_networks; i++) {
		print_network(&cat.networks[i]);
		if (i + 1 < cat.n_networks)
			putchar('\n');
	}
	if (cat.n_fetches)
		printf("\nFetch profiles (%s/fetch):\n\n", cat.dir);
	for (size_t i = 0; i < cat.n_fetches; i++) {
		print_fetch(&cat.fetches[i]);
		if (i + 1 < cat.n_fetches)
			putchar('\n');
	}
flush:
	if (fflush(stdout) != 0) {
		sbx_warn("stdout: write failed");
		r = SBX_EXIT_SOFTWARE;
	}
out:
	sbx_catalog_free(&cat);
	sbx_hostconfig_free(&cfg);
	return r;
}
