/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prepare-recipe.c - what a profile's prepared state was built from, as
 * far as the profile says it (prepare-internal.h): the recipe and the
 * interpreter.
 *
 * The state is stale when what `sbx prepare` ran could now build another
 * tree: the "prepare" object (its command, env, network, declared
 * inputs, mount and seed), and the profile keys that make the sandbox the
 * step runs in, namely "binds" and "symlinks" (the host files it sees) and
 * "env" (its environment, under prepare.env).  Nothing else: a network
 * profile allowed, a limit, a description or the outputs a run may keep
 * do not change what the step writes, and used to refuse every run until
 * someone prepared again.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "canonjson.h"
#include "json.h"
#include "prepare-internal.h"

/* The profile keys that shape the prepare step's sandbox (see above). */
static const char *const recipe_keys[] = { "prepare", "binds", "symlinks", "env" };

int sbx_prepare_recipe(const struct sbx_profile *pr, char **out, size_t *len,
		       struct sbx_error *err)
{
	_cleanup_json_ json_t *doc = NULL, *recipe = json_object();
	json_error_t jerr;

	/* The catalog loader parsed these very bytes; it cannot fail here
	 * but for memory. */
	doc = json_loadb(pr->raw, pr->raw_len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(doc) || !recipe)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "%s: %s", pr->file,
				     doc ? "not an object" : jerr.text);
	for (size_t i = 0; i < sizeof(recipe_keys) / sizeof(recipe_keys[0]); i++) {
		json_t *v = json_object_get(doc, recipe_keys[i]);

		if (v)
			json_object_set(recipe, recipe_keys[i], v);
	}
	/* Canonical (RFC 8785): key order, spacing and comments-free
	 * reformatting of the file do not make the state stale either. */
	return sbx_canonjson_dump(recipe, out, len, err);
}

/* @p below the directory @dir (component-wise): the rest ("" or "/..."). */
static const char *below(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (strncmp(p, dir, n) || (p[n] && p[n] != '/'))
		return NULL;
	return p + n;
}

char *sbx_prepare_interpreter(const struct sbx_profile *pr)
{
	const char *argv0 = pr->prepare->argv[0], *rest, *best_rest = NULL;
	_cleanup_free_ char *inside = NULL;
	const struct sbx_bind *best = NULL;
	size_t best_len = 0;

	/* The profile's own symbolic links first (/bin -> usr/bin): one
	 * step, as they point at bound directories. */
	for (size_t i = 0; i < pr->n_symlinks && !inside; i++) {
		const struct sbx_symlink *l = &pr->symlinks[i];

		if ((rest = below(argv0, l->path)))
			inside = l->target[0] == '/' ? sbx_xasprintf("%s%s", l->target, rest) :
						       sbx_xasprintf("/%s%s", l->target, rest);
	}
	if (!inside)
		inside = sbx_xstrdup(argv0);
	/* Then the bind it is under, the deepest one winning as the mounts
	 * do; a path under none is named as it is (and found absent or not
	 * on the host, which is all the identity can say). */
	for (size_t i = 0; i < pr->n_binds; i++) {
		const struct sbx_bind *b = &pr->binds[i];
		const char *dst = b->dst ? b->dst : b->src;

		if ((rest = below(inside, dst)) && strlen(dst) >= best_len) {
			best = b;
			best_len = strlen(dst);
			best_rest = rest;
		}
	}
	if (best)
		return sbx_xasprintf("%s%s", best->src, best_rest);
	return TAKE_PTR(inside);
}
