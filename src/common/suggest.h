/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * suggest.h - "did you mean": the closest of a set of known names to a
 * name that is not one of them, for messages about subcommands, options,
 * keys and catalog names.  Pure; allocates nothing.
 */
#ifndef SBX_SUGGEST_H
#define SBX_SUGGEST_H

#include <stddef.h>

/* Names longer than this are never compared (nor suggested). */
#define SBX_SUGGEST_MAX_LEN 64

/*
 * Candidates are offered one at a time, so that callers can walk whatever
 * holds their names (a NULL-terminated list, an array of structs).
 */
struct sbx_suggest {
	const char *word;
	const char *best;
	unsigned best_distance;
};

void sbx_suggest_init(struct sbx_suggest *s, const char *word);
void sbx_suggest_add(struct sbx_suggest *s, const char *candidate);
/*
 * sbx_suggest_add_stem() - offer @candidate, also measured by its first
 * word (up to the first '-'): a catalog names profiles "python-analysis",
 * and a person types "python" or "pyhton".  The candidate itself is what
 * is suggested, on the same terms as sbx_suggest_result() says.
 */
void sbx_suggest_add_stem(struct sbx_suggest *s, const char *candidate);

/*
 * sbx_suggest_result() - the candidate closest to the word, or NULL when
 * none is close enough to be a likely typo: at most one edit (insertion,
 * deletion, substitution or swap of two neighbours) for words of up to
 * four bytes, two for up to eight, three beyond, and always fewer edits
 * than the word has bytes.  A candidate equal to the word is no
 * suggestion.  On a tie the candidate offered first wins.
 */
const char *sbx_suggest_result(const struct sbx_suggest *s);

/* The same over a NULL-terminated list. */
const char *sbx_suggest_strv(const char *word, const char *const *candidates);

/*
 * sbx_suggest_suffix() - "; did you mean \"BEST\"?" in @buf for a message
 * (with @quote as the quote character), or "" when @best is NULL.
 * Returns @buf.
 */
const char *sbx_suggest_suffix(char *buf, size_t len, const char *best, char quote);

/* The suffix for @best in a buffer that lives as long as the enclosing
 * block: for the argument list of a message. */
#define SBX_SUGGEST_BUF (SBX_SUGGEST_MAX_LEN + 24)
#define sbx_did_you_mean(best) \
	sbx_suggest_suffix((char[SBX_SUGGEST_BUF]){ 0 }, SBX_SUGGEST_BUF, (best), '"')

/* The optimal-string-alignment distance of @a and @b (each at most
 * SBX_SUGGEST_MAX_LEN bytes; longer gives a distance too large to
 * suggest). */
unsigned sbx_suggest_distance(const char *a, const char *b);

#endif
