/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog-seccomp.c - parse one seccomp policy, DIR/seccomp/NAME.json
 * (format in sbx-policy(5)), into plain AND rules.
 *
 * Its own file because it is the one parser that does more than check
 * and copy: "any_args" and "not_in" are expanded here into one rule per
 * alternative, so that the filter builder sees only plain AND rules that
 * libseccomp can take, and the bounds on how many rules a catalog may ask
 * for (NOT_IN_MAX, ALTERNATIVES_MAX) sit with that expansion.  The loader
 * (catalog.c) calls parse_seccomp() for each file of DIR/seccomp.
 *
 * "allowed" lists the calls the policy lets through, grouped, each group
 * with its reason.  The filter does not need it (the default action is
 * allow); it is parsed so that the reasons stay true: every name must be
 * one libseccomp knows and listed once.  A name a deny rule also covers
 * is not refused: an operator who adds a deny rule in a hurry must not
 * have the policy refused for a stale note.  That the shipped policy has
 * no such name, and that its lists cover the whole system call table, is
 * the unit tests' business (test-catalog.c).
 */
#include "config.h"

#include <inttypes.h>
#include <seccomp.h>
#include <string.h>

#include "catalog-internal.h"

static const struct {
	const char *name;
	int value;
} errnos[] = {
	{ "EPERM", EPERM },   { "ENOSYS", ENOSYS }, { "EACCES", EACCES },
	{ "EINVAL", EINVAL }, { "ENOTTY", ENOTTY }, { "EOPNOTSUPP", EOPNOTSUPP },
	{ "ENOMEM", ENOMEM }, { "EAGAIN", EAGAIN }, { "ENOENT", ENOENT },
	{ "EROFS", EROFS },   { "EAFNOSUPPORT", EAFNOSUPPORT },
	{ "EPROTONOSUPPORT", EPROTONOSUPPORT },
};

/* The largest "not_in" list, and the most rules one set of conditions may
 * expand into: bounds on the filter a catalog can ask for. */
#define NOT_IN_MAX 32
#define ALTERNATIVES_MAX 64

/* A "not_in" condition before expansion: argument @index is none of
 * @values (sorted, distinct).  n == 0: the set has none. */
struct not_in {
	unsigned index;
	uint64_t values[NOT_IN_MAX];
	size_t n;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int parse_not_in(const struct sbx_jctx *c, const char *path, const json_t *e,
			struct not_in *ni)
{
	const json_t *f;
	char q[SBX_JSON_PATH_MAX];

	for (const char *const *k = (const char *const[]){ "value", "mask", NULL }; *k; k++)
		if (json_object_get(e, *k)) {
			sbx_json_path_key(q, path, *k);
			return sbx_json_error(c, q, "not allowed with op \"not_in\" (it takes \"values\")");
		}
	if (!(f = sbx_json_required(c, path, e, "values")))
		return -1;
	sbx_json_path_key(q, path, "values");
	if (sbx_json_array(c, q, f, NOT_IN_MAX) < 0)
		return -1;
	if (json_array_size(f) == 0)
		return sbx_json_error(c, q, "expected at least one value");
	ni->n = json_array_size(f);
	for (size_t i = 0; i < ni->n; i++) {
		char p[SBX_JSON_PATH_MAX];

		sbx_json_path_index(p, q, i);
		if (sbx_json_u64(c, p, json_array_get(f, i), &ni->values[i]) < 0)
			return -1;
		for (size_t k = 0; k < i; k++)
			if (ni->values[k] == ni->values[i])
				return sbx_json_error(c, p, "%" PRIu64 " is listed twice", ni->values[i]);
	}
	qsort(ni->values, ni->n, sizeof(ni->values[0]), cmp_u64);
	return 0;
}

/* A condition: 0 when it filled @a, 1 when it was "not_in" and filled @ni
 * instead (@ni->n must be 0 then). */
static int parse_cond(const struct sbx_jctx *c, const char *path, const json_t *e,
		      struct sbx_seccomp_arg *a, struct not_in *ni)
{
	static const char *const cond_keys[] = { "index", "op", "mask", "value", "values", NULL };
	const json_t *f;
	char q[SBX_JSON_PATH_MAX];
	uint64_t index;

	if (sbx_json_check_keys(c, path, e, cond_keys) < 0)
		return -1;
	if (!(f = sbx_json_required(c, path, e, "index")))
		return -1;
	sbx_json_path_key(q, path, "index");
	if (sbx_json_uint(c, q, f, 0, 5, &index) < 0)
		return -1;
	a->index = (unsigned)index;
	if (!(f = sbx_json_required(c, path, e, "op")))
		return -1;
	sbx_json_path_key(q, path, "op");
	if (json_is_string(f) && strcmp(json_string_value(f), "not_in") == 0) {
		if (ni->n > 0)
			return sbx_json_error(c, path, "only one \"not_in\" condition per rule");
		ni->index = a->index;
		return parse_not_in(c, path, e, ni) < 0 ? -1 : 1;
	}
	if (json_is_string(f) && strcmp(json_string_value(f), "eq") == 0)
		a->op = SBX_SC_OP_EQ;
	else if (json_is_string(f) && strcmp(json_string_value(f), "ne") == 0)
		a->op = SBX_SC_OP_NE;
	else if (json_is_string(f) && strcmp(json_string_value(f), "masked_eq") == 0)
		a->op = SBX_SC_OP_MASKED_EQ;
	else
		return sbx_json_expected(c, q, f, "\"eq\", \"ne\", \"masked_eq\" or \"not_in\"");
	if (json_object_get(e, "values")) {
		sbx_json_path_key(q, path, "values");
		return sbx_json_error(c, q, "only allowed with op \"not_in\"");
	}
	f = json_object_get(e, "mask");
	sbx_json_path_key(q, path, "mask");
	if (a->op == SBX_SC_OP_MASKED_EQ) {
		if (!f)
			return sbx_json_error(c, q, "missing required key for op \"masked_eq\"");
		if (sbx_json_u64(c, q, f, &a->mask) < 0)
			return -1;
	} else if (f) {
		return sbx_json_error(c, q, "only allowed with op \"masked_eq\"");
	} else {
		a->mask = UINT64_MAX;
	}
	if (!(f = sbx_json_required(c, path, e, "value")))
		return -1;
	sbx_json_path_key(q, path, "value");
	if (sbx_json_u64(c, q, f, &a->value) < 0)
		return -1;
	/* A value with bits outside the mask can never match: a deny rule
	 * that silently denies nothing. */
	if (a->op == SBX_SC_OP_MASKED_EQ && (a->value & ~a->mask))
		return sbx_json_error(c, q, "has bits outside the mask, so the rule never matches");
	return 0;
}

/* One AND-set of argument conditions.  libseccomp takes at most one
 * comparison per argument in a rule, so a repeated index is refused here
 * rather than at filter build time.  A "not_in" condition goes to @ni (at
 * most one per set), the others to @out. */
static int parse_conds(const struct sbx_jctx *c, const char *path, const json_t *v,
		       struct sbx_seccomp_arg **out, size_t *n_out, struct not_in *ni)
{
	_cleanup_free_ struct sbx_seccomp_arg *args = NULL;
	unsigned seen = 0;
	size_t n, k = 0;

	ni->n = 0;
	if (sbx_json_array(c, path, v, 6) < 0)
		return -1;
	n = json_array_size(v);
	args = sbx_xcalloc(n, sizeof(*args));
	for (size_t i = 0; i < n; i++) {
		char p[SBX_JSON_PATH_MAX];
		int r;

		sbx_json_path_index(p, path, i);
		if ((r = parse_cond(c, p, json_array_get(v, i), &args[k], ni)) < 0)
			return -1;
		if (seen & (1u << args[k].index))
			return sbx_json_error(c, p, "argument %u is compared twice in one rule",
					      args[k].index);
		seen |= 1u << args[k].index;
		/* A "not_in" leaves its slot to the next condition. */
		if (r == 0)
			k++;
	}
	*out = k ? TAKE_PTR(args) : NULL;
	*n_out = k;
	return 0;
}

static bool add_alternative(struct sbx_seccomp_arg *alt, size_t *n, unsigned index,
			    enum sbx_seccomp_op op, uint64_t mask, uint64_t value)
{
	if (*n == ALTERNATIVES_MAX)
		return false;
	alt[(*n)++] = (struct sbx_seccomp_arg){ .index = index, .op = op, .mask = mask, .value = value };
	return true;
}

/* The values a..b (a <= b < UINT64_MAX) as aligned power-of-two blocks,
 * each one comparison: a single value is "eq", a block of 2^k values
 * starting at a multiple of 2^k is "masked_eq" with the low k bits
 * masked off. */
static bool add_range(struct sbx_seccomp_arg *alt, size_t *n, unsigned index, uint64_t a,
		      uint64_t b)
{
	while (a <= b) {
		uint64_t size = a ? a & -a : UINT64_C(1) << 63;

		while (size - 1 > b - a)
			size >>= 1;
		if (!add_alternative(alt, n, index, size == 1 ? SBX_SC_OP_EQ : SBX_SC_OP_MASKED_EQ,
				     ~(size - 1), a))
			return false;
		a += size;
	}
	return true;
}

/*
 * "Argument i is none of v1 < ... < vk" as alternatives, each a single
 * comparison on argument i, any of which may match: the gaps between the
 * values, "lt v1" below them and "gt vk" above.  libseccomp compares one
 * argument at most once in a rule, so "ne v1 and ne v2 ..." cannot be one
 * rule; several rules under one action are an OR, which this is.
 * Comparisons are 64-bit: an argument with bits above the listed values
 * (e.g. an int family with bit 32 set) is in a gap, so the deny matches.
 * Returns the number of alternatives, 0 if there would be too many.
 */
static size_t not_in_alternatives(const struct not_in *ni, struct sbx_seccomp_arg *alt)
{
	const uint64_t *v = ni->values;
	size_t n = 0;

	if (v[0] == 1 && !add_alternative(alt, &n, ni->index, SBX_SC_OP_EQ, UINT64_MAX, 0))
		return 0;
	if (v[0] > 1 && !add_alternative(alt, &n, ni->index, SBX_SC_OP_LT, UINT64_MAX, v[0]))
		return 0;
	for (size_t i = 0; i + 1 < ni->n; i++)
		if (v[i] + 1 < v[i + 1] && !add_range(alt, &n, ni->index, v[i] + 1, v[i + 1] - 1))
			return 0;
	if (v[ni->n - 1] == UINT64_MAX - 1 &&
	    !add_alternative(alt, &n, ni->index, SBX_SC_OP_EQ, UINT64_MAX, UINT64_MAX))
		return 0;
	if (v[ni->n - 1] < UINT64_MAX - 1 &&
	    !add_alternative(alt, &n, ni->index, SBX_SC_OP_GT, UINT64_MAX, v[ni->n - 1]))
		return 0;
	return n;
}

static void rule_free(struct sbx_seccomp_rule *r)
{
	sbx_strv_free(r->syscalls);
	free(r->args);
	free(r->why);
}

/*
 * A deny entry: {"syscalls", "errno", "why", and "args" (all must match)
 * or "any_args" (a list of such sets, any may match)}.  "any_args" and
 * "not_in" are expanded here into one rule per alternative, so consumers
 * see plain AND rules; they exist because a condition like "arg0 is
 * neither 0 nor 0xffffffff" needs several rules in libseccomp, and they
 * share one reason.
 */
static int parse_deny(const struct sbx_jctx *c, const char *path, const json_t *e,
		      struct sbx_seccomp_policy *sp)
{
	static const char *const deny_keys[] = { "syscalls", "errno", "args", "any_args", "why",
						 NULL };
	_cleanup_strv_free_ char **syscalls = NULL;
	_cleanup_free_ char *why = NULL;
	const json_t *f, *args, *any;
	char q[SBX_JSON_PATH_MAX];
	size_t n_sets;
	int errnum = 0;

	if (sbx_json_check_keys(c, path, e, deny_keys) < 0)
		return -1;
	if (!(f = sbx_json_required(c, path, e, "syscalls")))
		return -1;
	sbx_json_path_key(q, path, "syscalls");
	if (sbx_json_strv(c, q, f, 64, 64, NULL, NULL, true, &syscalls) < 0)
		return -1;
	if (!syscalls[0])
		return sbx_json_error(c, q, "expected at least one system call");
	for (size_t i = 0; syscalls[i]; i++) {
		char p[SBX_JSON_PATH_MAX];

		/* __NR_SCMP_ERROR: unknown on every architecture libseccomp
		 * knows (a typo).  A name that exists elsewhere but not on
		 * this architecture resolves to a negative pseudo number and
		 * is accepted: the rule then simply has nothing to deny. */
		sbx_json_path_index(p, q, i);
		if (seccomp_syscall_resolve_name(syscalls[i]) == __NR_SCMP_ERROR)
			return sbx_json_expected(c, p, json_array_get(f, i),
						 "a system call name libseccomp knows");
	}
	if (!(f = sbx_json_required(c, path, e, "errno")))
		return -1;
	sbx_json_path_key(q, path, "errno");
	for (size_t i = 0; i < ARRAY_SIZE(errnos); i++)
		if (json_is_string(f) && strcmp(json_string_value(f), errnos[i].name) == 0)
			errnum = errnos[i].value;
	if (!errnum)
		return sbx_json_expected(c, q, f, "an errno name such as \"EPERM\" or \"ENOSYS\"");
	/* Every deny says why: a rule nobody can explain is a rule nobody
	 * dares remove or fix. */
	if (!(f = sbx_json_required(c, path, e, "why")))
		return -1;
	sbx_json_path_key(q, path, "why");
	if (sbx_json_string(c, q, f, 1024, &why) < 0)
		return -1;
	if (strlen(why) < 8)
		return sbx_json_expected(c, q, f, "a reason of at least a few words");

	args = json_object_get(e, "args");
	any = json_object_get(e, "any_args");
	if (args && any) {
		sbx_json_path_key(q, path, "any_args");
		return sbx_json_error(c, q, "\"args\" and \"any_args\" exclude each other");
	}
	if (any) {
		sbx_json_path_key(q, path, "any_args");
		if (sbx_json_array(c, q, any, 64) < 0)
			return -1;
		if (json_array_size(any) == 0)
			return sbx_json_error(c, q, "expected at least one set of conditions");
	}
	n_sets = any ? json_array_size(any) : 1;
	for (size_t s = 0; s < n_sets; s++) {
		_cleanup_free_ struct sbx_seccomp_arg *set = NULL;
		struct sbx_seccomp_arg alt[ALTERNATIVES_MAX];
		struct not_in ni = { .n = 0 };
		char p[SBX_JSON_PATH_MAX] = "";
		size_t n_set = 0, n_alt = 1;

		if (any) {
			sbx_json_path_key(q, path, "any_args");
			sbx_json_path_index(p, q, s);
			if (parse_conds(c, p, json_array_get(any, s), &set, &n_set, &ni) < 0)
				return -1;
			if (n_set == 0 && ni.n == 0)
				return sbx_json_error(c, p, "expected at least one condition");
		} else if (args) {
			sbx_json_path_key(p, path, "args");
			if (parse_conds(c, p, args, &set, &n_set, &ni) < 0)
				return -1;
		}
		if (ni.n > 0 && !(n_alt = not_in_alternatives(&ni, alt)))
			return sbx_json_error(c, p, "the \"not_in\" list expands into more than %d rules",
					      ALTERNATIVES_MAX);
		sp->rules = sbx_xrealloc(sp->rules, (sp->n_rules + n_alt) * sizeof(*sp->rules));
		for (size_t a = 0; a < n_alt; a++) {
			struct sbx_seccomp_rule *r = &sp->rules[sp->n_rules];

			memset(r, 0, sizeof(*r));
			r->n_args = n_set + (ni.n > 0);
			if (r->n_args) {
				r->args = sbx_xcalloc(r->n_args, sizeof(*r->args));
				if (n_set)
					memcpy(r->args, set, n_set * sizeof(*set));
				if (ni.n > 0)
					r->args[n_set] = alt[a];
			}
			r->syscalls = sbx_strv_copy(syscalls);
			r->errnum = errnum;
			r->why = sbx_xstrdup(why);
			sp->n_rules++;
		}
	}
	return 0;
}

/* An "allowed" entry: {"syscalls", "why"}; its names are added to
 * @sp->allowed, after the deny rules are parsed. */
static int parse_allowed(const struct sbx_jctx *c, const char *path, const json_t *e,
			 struct sbx_seccomp_policy *sp, size_t *n_allowed)
{
	static const char *const allowed_keys[] = { "syscalls", "why", NULL };
	_cleanup_strv_free_ char **syscalls = NULL;
	_cleanup_free_ char *why = NULL;
	const json_t *f;
	char q[SBX_JSON_PATH_MAX];
	size_t n = 0;

	if (sbx_json_check_keys(c, path, e, allowed_keys) < 0)
		return -1;
	if (!(f = sbx_json_required(c, path, e, "syscalls")))
		return -1;
	sbx_json_path_key(q, path, "syscalls");
	if (sbx_json_strv(c, q, f, 128, 64, NULL, NULL, true, &syscalls) < 0)
		return -1;
	if (!syscalls[0])
		return sbx_json_error(c, q, "expected at least one system call");
	while (syscalls[n])
		n++;
	for (size_t i = 0; i < n; i++) {
		char p[SBX_JSON_PATH_MAX];

		sbx_json_path_index(p, q, i);
		if (seccomp_syscall_resolve_name(syscalls[i]) == __NR_SCMP_ERROR)
			return sbx_json_expected(c, p, json_array_get(f, i),
						 "a system call name libseccomp knows");
		for (size_t k = 0; k < *n_allowed; k++)
			if (strcmp(sp->allowed[k], syscalls[i]) == 0)
				return sbx_json_error(c, p, "\"%s\" is listed as allowed twice", syscalls[i]);
		sp->allowed = sbx_xrealloc(sp->allowed, (*n_allowed + 2) * sizeof(*sp->allowed));
		sp->allowed[(*n_allowed)++] = sbx_xstrdup(syscalls[i]);
		sp->allowed[*n_allowed] = NULL;
	}
	if (!(f = sbx_json_required(c, path, e, "why")))
		return -1;
	sbx_json_path_key(q, path, "why");
	if (sbx_json_string(c, q, f, 2048, &why) < 0)
		return -1;
	if (strlen(why) < 8)
		return sbx_json_expected(c, q, f, "a reason of at least a few words");
	return 0;
}

int parse_seccomp(const struct sbx_jctx *c, const json_t *root, struct sbx_seccomp_policy *sp)
{
	static const char *const seccomp_keys[] = { "description", "deny", "allowed", NULL };
	size_t n_allowed = 0;
	const json_t *v;

	if (sbx_json_check_keys(c, "", root, seccomp_keys) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "description")) ||
	    sbx_json_string(c, "description", v, 1024, &sp->description) < 0)
		return -1;
	if (!(v = sbx_json_required(c, "", root, "deny")) ||
	    sbx_json_array(c, "deny", v, 1024) < 0)
		return -1;
	for (size_t i = 0; i < json_array_size(v); i++) {
		char p[SBX_JSON_PATH_MAX];

		sbx_json_path_index(p, "deny", i);
		if (parse_deny(c, p, json_array_get(v, i), sp) < 0)
			return -1;
	}
	/* Optional: policies written before it existed load as they did. */
	if (!(v = json_object_get(root, "allowed")))
		return 0;
	if (sbx_json_array(c, "allowed", v, 64) < 0)
		return -1;
	for (size_t i = 0; i < json_array_size(v); i++) {
		char p[SBX_JSON_PATH_MAX];

		sbx_json_path_index(p, "allowed", i);
		if (parse_allowed(c, p, json_array_get(v, i), sp, &n_allowed) < 0)
			return -1;
	}
	return 0;
}

void seccomp_free(struct sbx_seccomp_policy *sp)
{
	free(sp->name);
	free(sp->file);
	free(sp->raw);
	free(sp->description);
	for (size_t i = 0; i < sp->n_rules; i++)
		rule_free(&sp->rules[i]);
	free(sp->rules);
	sbx_strv_free(sp->allowed);
}
