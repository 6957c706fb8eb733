/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog.c - load the policy catalog: DIR/profiles/NAME.json,
 * DIR/network/NAME.json, DIR/fetch/NAME.json and DIR/seccomp/NAME.json (formats in
 * sbx-policy(5)).
 *
 * This file is the loader: it lists each directory in name order, reads
 * each file and hands its bytes to the parser of its kind
 * (catalog-profile.c, catalog-network.c, catalog-seccomp.c, which share
 * catalog-internal.h with it), then cross-checks the whole catalog.  The
 * parsers are strict (unknown keys, wrong types and bad values, such as a
 * default outside the profile's own [minimum, maximum], are errors naming
 * file and JSON path); the cross-check fails the load on a profile naming
 * a seccomp policy or network profile that does not exist.  All failures
 * are 69: the operator's catalog is broken, and nothing may run on part
 * of a policy.  Also here: the lookups by name, the SHA-256 of a file's
 * bytes for the manifest, and where the catalog is found.
 */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "catalog.h"
#include "catalog-internal.h"
#include "catalog-suggest.h"
#include "hostconfig.h"
#include "json.h"

#define CATALOG_FILE_MAX (1u << 20)

int sbx_catalog_sha256(const char *raw, size_t len, char out[65])
{
	struct sha256_ctx ctx;
	uint8_t md[SHA256_DIGEST_SIZE];

	if (!raw)
		return -1;
	sha256_init(&ctx);
	sha256_update(&ctx, len, (const uint8_t *)raw);
	sha256_digest(&ctx, sizeof(md), md);
	sbx_hex(md, sizeof(md), out);
	return 0;
}

bool sbx_catalog_name_valid(const char *name)
{
	size_t n = 0;

	if (!name || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9')))
		return false;
	for (const char *p = name; *p; p++, n++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
			return false;
	return n <= 64;
}

/* ---- loading ----------------------------------------------------------- */

void sbx_catalog_free(struct sbx_catalog *cat)
{
	if (!cat)
		return;
	for (size_t i = 0; i < cat->n_profiles; i++)
		profile_free(&cat->profiles[i]);
	free(cat->profiles);
	for (size_t i = 0; i < cat->n_networks; i++)
		network_free(&cat->networks[i]);
	free(cat->networks);
	for (size_t i = 0; i < cat->n_seccomp; i++)
		seccomp_free(&cat->seccomp[i]);
	free(cat->seccomp);
	for (size_t i = 0; i < cat->n_fetches; i++)
		fetch_free(&cat->fetches[i]);
	free(cat->fetches);
	free(cat->dir);
	memset(cat, 0, sizeof(*cat));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The NAME.json files of @dir/@sub, sorted so that load order (and the
 * first error reported) does not depend on the file system. */
static int list_dir(const char *dir, const char *sub, char ***out, struct sbx_error *err)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", dir, sub);
	_cleanup_strv_free_ char **names = NULL;
	_cleanup_close_ int fd = -1;
	DIR *d;
	struct dirent *de;
	size_t n = 0;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: cannot open catalog directory",
				     path);
	d = fdopendir(fd);
	if (!d)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, errno, "%s: cannot read", path);
	fd = -1; /* owned by d now */
	names = sbx_xcalloc(1, sizeof(char *));
	while ((errno = 0, de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char esc[80];

		/* Dot files (editor state, ".", "..") are not catalog entries. */
		if (de->d_name[0] == '.')
			continue;
		if (len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0) {
			sbx_json_escape(de->d_name, esc, sizeof(esc));
			closedir(d);
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
					     "%s/%s: not a catalog file (expected NAME.json)", path, esc);
		}
		if (n >= CATALOG_MAX_FILES) {
			closedir(d);
			return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
					     "%s: more than %d files", path, CATALOG_MAX_FILES);
		}
		names = sbx_xrealloc(names, (n + 2) * sizeof(char *));
		names[n++] = sbx_xstrdup(de->d_name);
		names[n] = NULL;
	}
	if (errno) {
		int e = errno;
		closedir(d);
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, e, "%s: cannot read", path);
	}
	closedir(d);
	qsort(names, n, sizeof(char *), cmp_str);
	*out = TAKE_PTR(names);
	return 0;
}

enum kind { KIND_PROFILE, KIND_NETWORK, KIND_SECCOMP, KIND_FETCH };

static int parse_file(struct sbx_catalog *cat, enum kind kind, const char *file,
		      const char *name, const char *data, size_t len, struct sbx_error *err);

/*
 * Fill in what every kind of catalog entry keeps: its name, its file and
 * the exact bytes read.  The manifest names the exact bytes of the policy
 * that applied; they are hashed when it is written.
 */
static void entry_init(char **e_name, char **e_file, char **e_raw, size_t *e_raw_len,
		       const char *name, const char *file, const char *data, size_t len)
{
	*e_name = sbx_xstrdup(name);
	*e_file = sbx_xstrdup(file);
	*e_raw = sbx_xmalloc(len ? len : 1);
	memcpy(*e_raw, data, len);
	*e_raw_len = len;
}

/* A seccomp policy as bytes, its rules left for later (see catalog.h). */
static void add_pending_seccomp(struct sbx_catalog *cat, const char *file, const char *name,
				const char *data, size_t len)
{
	struct sbx_seccomp_policy *sp;

	cat->seccomp = sbx_xrealloc(cat->seccomp, (cat->n_seccomp + 1) * sizeof(*sp));
	sp = &cat->seccomp[cat->n_seccomp++];
	memset(sp, 0, sizeof(*sp));
	entry_init(&sp->name, &sp->file, &sp->raw, &sp->raw_len, name, file, data, len);
	sp->rules_pending = true;
}

static int load_file(struct sbx_catalog *cat, enum kind kind, const char *sub,
		     const char *fname, const struct sbx_catalog_hooks *hooks,
		     struct sbx_error *err)
{
	_cleanup_free_ char *file = sbx_xasprintf("%s/%s/%s", cat->dir, sub, fname);
	_cleanup_free_ char *name = sbx_xstrndup(fname, strlen(fname) - 5);
	_cleanup_free_ char *data = NULL;
	size_t len;

	if (!sbx_catalog_name_valid(name)) {
		char esc[80];
		sbx_json_escape(name, esc, sizeof(esc));
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				     "%s: name \"%s\" does not match [a-z0-9][a-z0-9_-]{0,63}", file,
				     esc);
	}
	if (sbx_json_read(file, CATALOG_FILE_MAX, SBX_EXIT_UNAVAILABLE, &data, &len, err) < 0)
		return -1;
	/* The largest file of the catalog, and the same bytes run after run:
	 * parsing it again would only find what was found before. */
	if (kind == KIND_SECCOMP && hooks && hooks->seccomp_known &&
	    hooks->seccomp_known(hooks->ud, data, len)) {
		add_pending_seccomp(cat, file, name, data, len);
		return 0;
	}
	return parse_file(cat, kind, file, name, data, len, err);
}

int sbx_catalog_seccomp_parse(const struct sbx_seccomp_policy *pol,
			      struct sbx_seccomp_policy *out, struct sbx_error *err)
{
	struct sbx_catalog one = { 0 };

	memset(out, 0, sizeof(*out));
	if (parse_file(&one, KIND_SECCOMP, pol->file, pol->name, pol->raw, pol->raw_len, err) < 0) {
		sbx_catalog_free(&one);
		return -1;
	}
	*out = one.seccomp[0];
	free(one.seccomp);
	return 0;
}

void sbx_catalog_seccomp_free(struct sbx_seccomp_policy *pol)
{
	if (!pol)
		return;
	seccomp_free(pol);
	memset(pol, 0, sizeof(*pol));
}

int sbx_catalog_parse_file(struct sbx_catalog *cat, const char *sub, const char *file,
			   const char *name, const char *data, size_t len, struct sbx_error *err)
{
	enum kind kind = strcmp(sub, "profiles") == 0 ? KIND_PROFILE :
			 strcmp(sub, "network") == 0  ? KIND_NETWORK :
			 strcmp(sub, "fetch") == 0    ? KIND_FETCH :
							KIND_SECCOMP;

	return parse_file(cat, kind, file, name, data, len, err);
}

static int parse_file(struct sbx_catalog *cat, enum kind kind, const char *file,
		      const char *name, const char *data, size_t len, struct sbx_error *err)
{
	_cleanup_json_ json_t *root = NULL;
	struct sbx_jctx c = { .source = file, .code = SBX_EXIT_UNAVAILABLE, .err = err };
	int r;

	root = sbx_json_parse(&c, data, len);
	if (!root)
		return -1;

	switch (kind) {
	case KIND_PROFILE: {
		struct sbx_profile *pr;
		cat->profiles = sbx_xrealloc(cat->profiles, (cat->n_profiles + 1) * sizeof(*pr));
		pr = &cat->profiles[cat->n_profiles++];
		memset(pr, 0, sizeof(*pr));
		entry_init(&pr->name, &pr->file, &pr->raw, &pr->raw_len, name, file, data, len);
		c.source = pr->file;
		r = parse_profile(&c, root, pr);
		break;
	}
	case KIND_NETWORK: {
		struct sbx_netprofile *np;
		cat->networks = sbx_xrealloc(cat->networks, (cat->n_networks + 1) * sizeof(*np));
		np = &cat->networks[cat->n_networks++];
		memset(np, 0, sizeof(*np));
		entry_init(&np->name, &np->file, &np->raw, &np->raw_len, name, file, data, len);
		c.source = np->file;
		r = parse_network(&c, root, np);
		break;
	}
	case KIND_FETCH: {
		struct sbx_fetchprofile *fp;
		cat->fetches = sbx_xrealloc(cat->fetches, (cat->n_fetches + 1) * sizeof(*fp));
		fp = &cat->fetches[cat->n_fetches++];
		memset(fp, 0, sizeof(*fp));
		entry_init(&fp->name, &fp->file, &fp->raw, &fp->raw_len, name, file, data, len);
		c.source = fp->file;
		r = parse_fetch(&c, root, fp);
		break;
	}
	case KIND_SECCOMP:
	default: {
		struct sbx_seccomp_policy *sp;
		cat->seccomp = sbx_xrealloc(cat->seccomp, (cat->n_seccomp + 1) * sizeof(*sp));
		sp = &cat->seccomp[cat->n_seccomp++];
		memset(sp, 0, sizeof(*sp));
		entry_init(&sp->name, &sp->file, &sp->raw, &sp->raw_len, name, file, data, len);
		c.source = sp->file;
		r = parse_seccomp(&c, root, sp);
		break;
	}
	}
	return r;
}

static int load_kind(struct sbx_catalog *cat, enum kind kind, const char *sub,
		     const struct sbx_catalog_hooks *hooks, struct sbx_error *err)
{
	_cleanup_strv_free_ char **names = NULL;

	if (list_dir(cat->dir, sub, &names, err) < 0)
		return -1;
	if (!names[0])
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s/%s: no NAME.json files",
				     cat->dir, sub);
	for (size_t i = 0; names[i]; i++)
		if (load_file(cat, kind, sub, names[i], hooks, err) < 0)
			return -1;
	return 0;
}

/* A kind that older catalogs lack (fetch profiles): no directory, or an
 * empty one, no entries; the files there are loaded as strictly as the
 * others'. */
static int load_optional(struct sbx_catalog *cat, enum kind kind, const char *sub,
			 struct sbx_error *err)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", cat->dir, sub);
	_cleanup_strv_free_ char **names = NULL;
	struct stat st;

	if (stat(path, &st) < 0 && errno == ENOENT)
		return 0;
	if (list_dir(cat->dir, sub, &names, err) < 0)
		return -1;
	for (size_t i = 0; names[i]; i++)
		if (load_file(cat, kind, sub, names[i], NULL, err) < 0)
			return -1;
	return 0;
}

/* References between files, checked once everything is loaded. */
static int cross_check(const struct sbx_catalog *cat, struct sbx_error *err)
{
	for (size_t i = 0; i < cat->n_profiles; i++) {
		const struct sbx_profile *pr = &cat->profiles[i];
		struct sbx_jctx c = { .source = pr->file, .code = SBX_EXIT_UNAVAILABLE, .err = err };

		if (!sbx_catalog_seccomp(cat, pr->seccomp))
			return sbx_json_error(&c, "seccomp", "no seccomp policy \"%s\" in %s/seccomp%s",
					      pr->seccomp, cat->dir,
					      sbx_did_you_mean(sbx_catalog_suggest_seccomp(cat, pr->seccomp)));
		for (size_t k = 0; pr->fetch_profiles[k]; k++) {
			char p[SBX_JSON_PATH_MAX];

			sbx_json_path_index(p, "fetch_profiles", k);
			if (!sbx_catalog_fetch(cat, pr->fetch_profiles[k]))
				return sbx_json_error(&c, p, "no fetch profile \"%s\" in %s/fetch",
						      pr->fetch_profiles[k], cat->dir);
		}
		for (size_t k = 0; pr->network_profiles[k]; k++) {
			char p[SBX_JSON_PATH_MAX];

			sbx_json_path_index(p, "network_profiles", k);
			if (!sbx_catalog_network(cat, pr->network_profiles[k]))
				return sbx_json_error(&c, p, "no network profile \"%s\" in %s/network%s",
						      pr->network_profiles[k], cat->dir,
						      sbx_did_you_mean(sbx_catalog_suggest_network(
							      cat, pr->network_profiles[k])));
		}
	}
	return 0;
}

int sbx_catalog_load(struct sbx_catalog *cat, const char *dir, struct sbx_error *err)
{
	return sbx_catalog_load_with(cat, dir, NULL, err);
}

int sbx_catalog_load_with(struct sbx_catalog *cat, const char *dir,
			  const struct sbx_catalog_hooks *hooks, struct sbx_error *err)
{
	memset(cat, 0, sizeof(*cat));
	cat->dir = sbx_xstrdup(dir);
	if (load_kind(cat, KIND_SECCOMP, "seccomp", hooks, err) < 0 ||
	    load_kind(cat, KIND_NETWORK, "network", NULL, err) < 0 ||
	    load_optional(cat, KIND_FETCH, "fetch", err) < 0 ||
	    load_kind(cat, KIND_PROFILE, "profiles", NULL, err) < 0 || cross_check(cat, err) < 0) {
		/* Nothing of a broken catalog stays visible. */
		sbx_catalog_free(cat);
		return -1;
	}
	return 0;
}

const struct sbx_profile *sbx_catalog_profile(const struct sbx_catalog *cat, const char *name)
{
	for (size_t i = 0; name && i < cat->n_profiles; i++)
		if (strcmp(cat->profiles[i].name, name) == 0)
			return &cat->profiles[i];
	return NULL;
}

const struct sbx_netprofile *sbx_catalog_network(const struct sbx_catalog *cat, const char *name)
{
	for (size_t i = 0; name && i < cat->n_networks; i++)
		if (strcmp(cat->networks[i].name, name) == 0)
			return &cat->networks[i];
	return NULL;
}

const struct sbx_fetchprofile *sbx_catalog_fetch(const struct sbx_catalog *cat, const char *name)
{
	for (size_t i = 0; name && i < cat->n_fetches; i++)
		if (strcmp(cat->fetches[i].name, name) == 0)
			return &cat->fetches[i];
	return NULL;
}

const struct sbx_seccomp_policy *sbx_catalog_seccomp(const struct sbx_catalog *cat,
						     const char *name)
{
	for (size_t i = 0; name && i < cat->n_seccomp; i++)
		if (strcmp(cat->seccomp[i].name, name) == 0)
			return &cat->seccomp[i];
	return NULL;
}

const char *sbx_catalog_default_dir(const char *opt, const struct sbx_hostconfig *cfg)
{
	static const char etc_dir[] = SYSCONFDIR "/sbx/policy";
	struct stat st;

	if (opt)
		return opt;
	if (cfg && cfg->policy)
		return cfg->policy;
	/* The operator's override wins over the packaged catalog only when
	 * it exists; an empty or broken override still fails loudly. */
	if (stat(etc_dir, &st) == 0)
		return etc_dir;
	return DATADIR "/sbx/policy";
}
