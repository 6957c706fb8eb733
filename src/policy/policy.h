/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.h - the policy decision: a parsed job against the catalog.
 *
 * Everything here is a refusal (77) when it fails: the job was well formed
 * but asks for something the profile does not allow.  On success the
 * result is the effective plan later stages consume; nothing in it comes
 * from the job without having been checked against the profile.
 */
#ifndef SBX_POLICY_H
#define SBX_POLICY_H

#include "catalog.h"
#include "job.h"

struct sbx_plan {
	const struct sbx_profile *profile;
	const struct sbx_netprofile *network;
	const struct sbx_seccomp_policy *seccomp;
	const struct sbx_fetchprofile *fetch; /* the job's fetch_profile; NULL: none */
	struct sbx_limits limits;  /* every key set; soft 0 = no soft deadline */
	char **allowed_outputs;    /* effective: job's list, or the profile's */
	char **env;                /* profile env + allowed job env, KEY=VALUE */
	/* The profile's prepared tree (broker/cmd/prepare.h), set after
	 * admission when it has one: bound read-only at prepare.mount. */
	char *prepared_tree;       /* host directory; NULL: none */
	char prepared_sha256[65];
	/* `sbx prepare`: the prepare command, run as is; NULL: the profile's
	 * argv with its placeholders expanded. */
	char **argv;
};

/*
 * sbx_policy_admit() - decide whether @job may run under @cat.
 * Errors: SBX_EXIT_REFUSED with "<source>: <json path>: <why>", or
 * SBX_EXIT_INVALID when an explicit soft_seconds is not below the profile's
 * default wall.  On error, @plan->profile/network/seccomp keep whatever was
 * found (for the manifest of a refused run); sbx_plan_free() in every case.
 */
int sbx_policy_admit(struct sbx_plan *plan, const struct sbx_job *job,
		     const struct sbx_catalog *cat, struct sbx_error *err);
void sbx_plan_free(struct sbx_plan *plan);

#endif
