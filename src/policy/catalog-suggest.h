/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog-suggest.h - the catalog's name nearest to one that is not in
 * it, for "did you mean" in refusals and in the catalog's own
 * cross-checks.  NULL when nothing is close (suggest.h says how close).
 */
#ifndef SBX_CATALOG_SUGGEST_H
#define SBX_CATALOG_SUGGEST_H

#include "catalog.h"
#include "suggest.h"

const char *sbx_catalog_suggest_profile(const struct sbx_catalog *cat, const char *name);
const char *sbx_catalog_suggest_network(const struct sbx_catalog *cat, const char *name);
const char *sbx_catalog_suggest_seccomp(const struct sbx_catalog *cat, const char *name);

#endif
