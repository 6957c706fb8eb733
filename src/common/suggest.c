/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * suggest.c - "did you mean": the nearest known name to a typo.
 *
 * The distance is Damerau-Levenshtein's restricted form (optimal string
 * alignment): the edits people make at a keyboard are a letter dropped
 * ("shel"), doubled, wrong, or two letters swapped ("chekc"), and each of
 * those costs one.  The names compared are short (subcommands, keys,
 * profile names), so the full matrix on the stack is cheap and this runs
 * only on a path that already ends in an error.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "suggest.h"

#define TOO_FAR (SBX_SUGGEST_MAX_LEN * 2u)

static unsigned min3(unsigned a, unsigned b, unsigned c)
{
	unsigned m = a < b ? a : b;
	return m < c ? m : c;
}

unsigned sbx_suggest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned d[SBX_SUGGEST_MAX_LEN + 1][SBX_SUGGEST_MAX_LEN + 1];

	if (la > SBX_SUGGEST_MAX_LEN || lb > SBX_SUGGEST_MAX_LEN)
		return TOO_FAR;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = a[i - 1] != b[j - 1];

			d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < d[i][j])
				d[i][j] = d[i - 2][j - 2] + 1;
		}
	return d[la][lb];
}

/* How many edits still read as a typo of a word of @len bytes. */
static unsigned allowed(size_t len)
{
	unsigned max = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	return len > max ? max : (unsigned)(len ? len - 1 : 0);
}

void sbx_suggest_init(struct sbx_suggest *s, const char *word)
{
	s->word = word;
	s->best = NULL;
	s->best_distance = TOO_FAR;
}

void sbx_suggest_add(struct sbx_suggest *s, const char *candidate)
{
	unsigned d;

	if (!s->word || !candidate || !strcmp(s->word, candidate))
		return;
	d = sbx_suggest_distance(s->word, candidate);
	if (d < s->best_distance) {
		s->best = candidate;
		s->best_distance = d;
	}
}

void sbx_suggest_add_stem(struct sbx_suggest *s, const char *candidate)
{
	char stem[SBX_SUGGEST_MAX_LEN + 1];
	size_t n;
	unsigned d;

	sbx_suggest_add(s, candidate);
	if (!s->word || !candidate)
		return;
	n = strcspn(candidate, "-");
	if (!candidate[n] || n == 0 || n > SBX_SUGGEST_MAX_LEN)
		return;
	memcpy(stem, candidate, n);
	stem[n] = '\0';
	/* The word equal to the stem is one edit short of the name, so that
	 * a real typo of a whole name still wins over a bare stem. */
	d = sbx_suggest_distance(s->word, stem) + 1;
	if (d < s->best_distance) {
		s->best = candidate;
		s->best_distance = d;
	}
}

const char *sbx_suggest_result(const struct sbx_suggest *s)
{
	if (!s->best || !s->word || s->best_distance > allowed(strlen(s->word)))
		return NULL;
	return s->best;
}

const char *sbx_suggest_strv(const char *word, const char *const *candidates)
{
	struct sbx_suggest s;

	sbx_suggest_init(&s, word);
	for (const char *const *c = candidates; c && *c; c++)
		sbx_suggest_add(&s, *c);
	return sbx_suggest_result(&s);
}

const char *sbx_suggest_suffix(char *buf, size_t len, const char *best, char quote)
{
	if (!len)
		return buf;
	if (best)
		snprintf(buf, len, "; did you mean %c%s%c?", quote, best, quote);
	else
		buf[0] = '\0';
	return buf;
}
