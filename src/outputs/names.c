/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * names.c - the rules on an output file's name, and how a name is shown.
 *
 * A name comes from getdents in the payload's tree and may hold any byte
 * but '/' and NUL.  Which names may become an artifact's name, and how a
 * refused one is written in the listing ("\xNN" for each offending byte),
 * is a question of text alone, apart from the walk that meets the names
 * (collect.c): here it can be read as one rule set, and the fuzzer and the
 * tests reach it through sbx_collect_check_name() without an output tree.
 */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "collect-internal.h"
#include "collect.h"
#include "util.h"

/*
 * Characters that make a name read as something it is not, refused in
 * names (sbx(1), OUTPUT NAMES):
 *  - C1 controls U+0080..U+009F, which some terminals obey;
 *  - bidirectional formatting: U+061C, U+200E, U+200F, U+202A..U+202E,
 *    U+2066..U+2069 (a name that displays in another order);
 *  - invisible characters and separators: U+00AD soft hyphen, U+180E,
 *    U+200B zero width space, U+2028 and U+2029 (line and paragraph
 *    separators, which break a listing's lines), U+2060..U+2064 (word
 *    joiner, invisible operators), U+FEFF, U+FFF9..U+FFFB (interlinear
 *    annotation), and the tag characters U+E0000..U+E007F (which can
 *    carry hidden text).
 * U+200C and U+200D (ZWNJ, ZWJ) stay allowed: Persian, Indic scripts and
 * emoji sequences need them, and they do not hide a name's other letters.
 */
static bool refused_char(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0xad || cp == 0x61c || cp == 0x180e ||
	       cp == 0x200b || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff ||
	       (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0xe0000 && cp <= 0xe007f);
}

/*
 * Length of the character at @s when it may appear in a name as is: a
 * printable ASCII byte other than the backslash, or a valid UTF-8 sequence
 * of a character refused_char() does not refuse.  0 when the byte must not
 * appear.
 */
static size_t clean_char(const unsigned char *s, size_t left)
{
	size_t len;
	uint32_t cp;

	/* A backslash introduces the \xNN of display paths: never as is. */
	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f && s[0] != '\\' ? 1 : 0;
	len = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!len || len > left || !sbx_utf8_valid((const char *)s, len))
		return 0;
	cp = s[0] & (0x7f >> len);
	for (size_t i = 1; i < len; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	return refused_char(cp) ? 0 : len;
}

/*
 * Display form of a name: as is when @escape is false (the name passed
 * every check), otherwise every byte that clean_char() refuses becomes
 * "\xNN".
 */
char *collect_display_name(const char *name, bool escape)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t n = strlen(name), o = 0;
	char *out;

	if (!escape)
		return sbx_xstrdup(name);
	out = sbx_xmalloc(4 * n + 1);
	for (size_t i = 0; i < n;) {
		size_t len = clean_char(s + i, n - i);

		if (len) {
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
		} else {
			o += (size_t)sprintf(out + o, "\\x%02x", s[i]);
			i++;
		}
	}
	out[o] = '\0';
	return out;
}

/* Why @name cannot be an artifact name, or NULL. */
const char *collect_name_problem(const char *name, size_t max_name)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t n = strlen(name);

	if (n > max_name)
		return "name too long";
	if (sbx_has_control(name, n))
		return "name contains control characters";
	if (!sbx_utf8_valid(name, n))
		return "name is not valid UTF-8";
	/* Windows reads it as a separator, and display paths escape with it:
	 * with no backslash in a promoted name, no display path of a
	 * rejected one can equal it. */
	if (memchr(name, '\\', n))
		return "name contains a backslash";
	for (size_t i = 0, len; i < n; i += len)
		if (!(len = clean_char(s + i, n - i)))
			return "name contains Unicode control, bidirectional or invisible characters";
	if (name[0] == '-')
		return "name starts with '-'";
	return NULL;
}

const char *sbx_collect_check_name(const char *name, size_t max_name, char **shown)
{
	const char *bad = collect_name_problem(name, max_name);

	*shown = collect_display_name(name, bad != NULL);
	return bad;
}
