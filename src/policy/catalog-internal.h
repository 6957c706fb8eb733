/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog-internal.h - what the catalog loader (catalog.c) and the parser
 * of each kind of catalog file (catalog-*.c) share.  Not installed, and
 * included only from src/policy: the rest of sbx sees the catalog through
 * catalog.h alone.
 */
#ifndef SBX_CATALOG_INTERNAL_H
#define SBX_CATALOG_INTERNAL_H

#include <jansson.h>

#include "catalog.h"
#include "json.h"

/* The most entries (binds, symlinks, env, allow rules, ...) one list in a
 * catalog file may hold. */
#define CATALOG_MAX_ENTRIES 256
/* The most files one directory of the catalog may hold, and so the most
 * network profiles a runtime profile may name. */
#define CATALOG_MAX_FILES 256

/*
 * parse_profile() - parse the JSON @root of one runtime profile file into
 * @pr (zeroed, with name, file and raw bytes already set by the loader).
 * The seccomp policy and network profiles it names are not looked up here
 * (the loader does that once every file is in).  Messages name @c's
 * source and the JSON path.
 * Errors: -1 with @c's code (SBX_EXIT_UNAVAILABLE); @pr may be partly
 * filled and is freed with the catalog.
 */
int parse_profile(const struct sbx_jctx *c, const json_t *root, struct sbx_profile *pr);

/*
 * parse_template() - the profile's "template" member @v (NULL: none) into
 * @pr->template, once @pr->argv is parsed: the argv must suit a template
 * (a python3 interpreter, only -I -B -E -s -S -u, then "{code}",
 * "{args}").  Errors: -1 with @c's code, naming the JSON path.
 */
int parse_template(const struct sbx_jctx *c, const json_t *v, struct sbx_profile *pr);
void template_free(struct sbx_template *t);

/* profile_free() - free what @pr holds (not @pr itself). */
void profile_free(struct sbx_profile *pr);

/*
 * parse_network() - parse the JSON @root of one network profile file into
 * @np (zeroed, with name, file and raw bytes already set by the loader).
 * Messages name @c's source and the JSON path.
 * Errors: -1 with @c's code (SBX_EXIT_UNAVAILABLE); @np may be partly
 * filled and is freed with the catalog.
 */
int parse_network(const struct sbx_jctx *c, const json_t *root, struct sbx_netprofile *np);

/*
 * parse_allowlist() - an egress profile's "allow", "allow_cidrs",
 * "max_bytes" (and "max_connections", "connect", which a caller that
 * does not accept them has refused with its key list) from @root into
 * @np.  Shared by network and fetch profiles.
 */
int parse_allowlist(const struct sbx_jctx *c, const json_t *root, struct sbx_netprofile *np);

/* parse_fetch() - one fetch profile file (catalog-fetch.c), as above. */
int parse_fetch(const struct sbx_jctx *c, const json_t *root, struct sbx_fetchprofile *fp);
void fetch_free(struct sbx_fetchprofile *fp);

/* network_free() - free what @np holds (not @np itself). */
void network_free(struct sbx_netprofile *np);

/*
 * parse_seccomp() - parse the JSON @root of one seccomp policy file into
 * @sp (zeroed, with name, file and raw bytes already set by the loader).
 * Messages name @c's source and the JSON path.
 * Errors: -1 with @c's code (SBX_EXIT_UNAVAILABLE); @sp may be partly
 * filled and is freed with the catalog.
 */
int parse_seccomp(const struct sbx_jctx *c, const json_t *root, struct sbx_seccomp_policy *sp);

/* seccomp_free() - free what @sp holds (not @sp itself). */
void seccomp_free(struct sbx_seccomp_policy *sp);

#endif
