/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-profiles.c - `sbx profiles`: the catalog as an operator reads it,
 * each runtime profile with its limits and each network profile with what
 * it allows.
 */
#include "config.h"

#include <stdio.h>

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
	if (fflush(stdout) != 0) {
		sbx_warn("stdout: write failed");
		r = SBX_EXIT_SOFTWARE;
	}
out:
	sbx_catalog_free(&cat);
	sbx_hostconfig_free(&cfg);
	return r;
}
