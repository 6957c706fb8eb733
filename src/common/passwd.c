/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * passwd.c - pure parsers of nsswitch.conf and /etc/passwd text (see
 * passwd.h).  They are strict on purpose: glibc's parser accepts things
 * (leading blanks, signs in numbers, short lines) whose meaning is its own,
 * and any such line makes the answer "ask NSS" rather than a guess.
 */
#include "config.h"

#include <string.h>

#include "passwd.h"

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

bool sbx_nsswitch_passwd_files_first(const char *conf, size_t len)
{
	const char *p = conf, *end = conf + len;
	int seen = 0;
	bool files = false;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *hash = memchr(p, '#', (size_t)(le - p));
		const char *q = p;

		if (hash)
			le = hash;
		if (memchr(p, '\0', (size_t)(le - p)))
			return false;
		while (q < le && blank(*q))
			q++;
		if ((size_t)(le - q) >= 6 && !memcmp(q, "passwd", 6)) {
			const char *r = q + 6;

			while (r < le && blank(*r))
				r++;
			if (r < le && *r == ':') {
				r++;
				seen++;
				while (r < le && blank(*r))
					r++;
				files = (size_t)(le - r) >= 5 && !memcmp(r, "files", 5) &&
					(r + 5 == le || blank(r[5]) || r[5] == '[' || r[5] == '\r');
			}
		}
		p = nl ? nl + 1 : end;
	}
	return seen == 1 && files;
}

/* Field @s[0..@n) as a plain decimal below 2^32 (what a uid is). */
static bool decimal_u32(const char *s, size_t n, uint32_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

enum sbx_passwd_lookup sbx_passwd_name(const char *buf, size_t len, uint32_t uid, char *name,
				       size_t name_len)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *start = p, *le = nl ? nl : end;
		const char *f[7];
		size_t n[7], k = 0;
		uint32_t u, g;

		p = nl ? nl + 1 : end;
		if (start == le || *start == '#')
			continue;
		/* glibc skips leading white space (isspace: also \v, \f, \r)
		 * and stops at a NUL; no plain entry has a control character. */
		for (const char *q = start; q < le; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				return SBX_PASSWD_UNSURE;
		if (*start == '+' || *start == '-' || *start == ' ')
			return SBX_PASSWD_UNSURE;
		for (const char *q = start; k < 7;) {
			const char *c = memchr(q, ':', (size_t)(le - q));

			f[k] = q;
			n[k] = (size_t)((c ? c : le) - q);
			k++;
			if (!c)
				break;
			q = c + 1;
		}
		/* Seven fields exactly: the seventh holds no ':'. */
		if (k != 7 || memchr(f[6], ':', (size_t)(le - f[6])) || n[0] == 0)
			return SBX_PASSWD_UNSURE;
		for (size_t i = 0; i < n[0]; i++)
			if (f[0][i] == ' ')
				return SBX_PASSWD_UNSURE;
		if (!decimal_u32(f[2], n[2], &u) || !decimal_u32(f[3], n[3], &g))
			return SBX_PASSWD_UNSURE;
		if (u != uid)
			continue;
		if (n[0] >= name_len)
			return SBX_PASSWD_UNSURE;
		memcpy(name, f[0], n[0]);
		name[n[0]] = '\0';
		return SBX_PASSWD_FOUND;
	}
	return SBX_PASSWD_ABSENT;
}
