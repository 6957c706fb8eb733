/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog-suggest.c - "did you mean" over the catalog's names.  The
 * names offered are the operator's (the catalog), never the job's, so a
 * suggestion cannot carry a hostile string into a message.
 */
#include "config.h"

#include "catalog-suggest.h"

const char *sbx_catalog_suggest_profile(const struct sbx_catalog *cat, const char *name)
{
	struct sbx_suggest s;

	sbx_suggest_init(&s, name);
	for (size_t i = 0; i < cat->n_profiles; i++)
		sbx_suggest_add_stem(&s, cat->profiles[i].name);
	return sbx_suggest_result(&s);
}

const char *sbx_catalog_suggest_network(const struct sbx_catalog *cat, const char *name)
{
	struct sbx_suggest s;

	sbx_suggest_init(&s, name);
	for (size_t i = 0; i < cat->n_networks; i++)
		sbx_suggest_add_stem(&s, cat->networks[i].name);
	return sbx_suggest_result(&s);
}

const char *sbx_catalog_suggest_seccomp(const struct sbx_catalog *cat, const char *name)
{
	struct sbx_suggest s;

	sbx_suggest_init(&s, name);
	for (size_t i = 0; i < cat->n_seccomp; i++)
		sbx_suggest_add(&s, cat->seccomp[i].name);
	return sbx_suggest_result(&s);
}
