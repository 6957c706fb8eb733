/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-catalog.c - libFuzzer entry point for the catalog's file parsers:
 * the first byte picks the kind (runtime profile, network profile,
 * seccomp policy), the rest is one file's bytes.  An accepted seccomp
 * policy is also compiled, as a run would.  Errors are 69, one clean line.
 */
#include "fuzz-util.h"

#include "catalog.h"
#include "netcheck.h"
#include "sandbox.h"

static void check_profile(const struct sbx_profile *pr)
{
	fuzz_assert(pr->argv && pr->argv[0] && pr->code_file && pr->seccomp);
	fuzz_assert(pr->allowed_outputs && pr->network_profiles && pr->env && pr->env_allow);
	for (size_t i = 0; i < pr->n_binds; i++)
		fuzz_assert(pr->binds[i].src[0] == '/' && pr->binds[i].dst[0] == '/');
	for (size_t i = 0; pr->allowed_outputs[i]; i++)
		fuzz_assert(sbx_media_type_known(pr->allowed_outputs[i]));
	for (size_t i = 0; i < _SBX_LIMIT_MAX; i++)
		fuzz_assert(pr->minimums.v[i] <= pr->defaults.v[i] &&
			    pr->defaults.v[i] <= pr->maximums.v[i]);
}

static void check_network(const struct sbx_netprofile *np)
{
	for (size_t i = 0; i < np->n_allow; i++) {
		const char *h = np->allow[i].host;
		char out[SBX_HOST_MAX];
		enum sbx_host_kind kind;

		/* A listed host is in the form the proxy compares with. */
		if (strncmp(h, "*.", 2) == 0)
			h += 2;
		fuzz_assert(sbx_netcheck_host_normalize(h, strlen(h), out, &kind) &&
			    strcmp(out, h) == 0);
		fuzz_assert(np->allow[i].n_ports > 0);
		for (size_t k = 0; k < np->allow[i].n_ports; k++)
			fuzz_assert(np->allow[i].ports[k] != 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const subs[] = { "profiles", "network", "seccomp" };
	struct sbx_catalog cat = { 0 };
	struct sbx_error err = { 0 };
	const char *sub;
	int r;

	if (size < 1)
		return 0;
	sub = subs[data[0] % 3];
	r = sbx_catalog_parse_file(&cat, sub, "policy/x/p.json", "p", (const char *)data + 1,
				   size - 1, &err);
	if (r < 0) {
		fuzz_check_error(&err, SBX_EXIT_UNAVAILABLE);
	} else if (cat.n_profiles) {
		fuzz_assert(cat.n_profiles == 1 && strcmp(cat.profiles[0].name, "p") == 0);
		check_profile(&cat.profiles[0]);
	} else if (cat.n_networks) {
		fuzz_assert(cat.n_networks == 1);
		check_network(&cat.networks[0]);
	} else {
		struct sock_fprog prog = { 0 };

		fuzz_assert(cat.n_seccomp == 1);
		memset(&err, 0, sizeof(err));
		if (sbx_seccomp_compile(&cat.seccomp[0], &prog, &err) < 0)
			fuzz_assert(fuzz_clean_line(err.msg));
		else
			fuzz_assert(prog.len > 0 && prog.filter);
		sbx_seccomp_free(&prog);
	}
	sbx_catalog_free(&cat);
	return 0;
}
