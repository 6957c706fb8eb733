/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * traceback.c - the last Python traceback in a stderr tail (traceback.h).
 *
 * What CPython prints for an uncaught exception ends like this:
 *
 *     Traceback (most recent call last):
 *       File "/work/main.py", line 7, in <module>
 *         f(60)
 *       ...
 *       File "/work/main.py", line 3, in f
 *         return {}["missing key"]
 *                ~~^^^^^^^^^^^^^^^
 *     KeyError: 'missing key'
 *
 * (a SyntaxError's frame has no ", in NAME").  So: the last frame line in
 * the tail, then the first line after it that is not indented is the
 * exception line.  The header may lie before the tail; it is not needed.
 */
#include "config.h"

#include <string.h>

#include "traceback.h"

/* The next line of [*p, end): its start and length without the newline;
 * *p moves past it. */
static const char *next_line(const char **p, const char *end, size_t *n)
{
	const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));

	*n = (size_t)((nl ? nl : end) - s);
	*p = nl ? nl + 1 : end;
	if (*n > 0 && s[*n - 1] == '\r')
		(*n)--;
	return s;
}

static void copy_field(char *dst, size_t size, const char *s, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
	/* A NUL inside would cut the string short where the bytes do not. */
	for (size_t i = 0; i < n; i++)
		if (dst[i] == '\0')
			dst[i] = '?';
}

/* '  File "F", line N...' : F and N into @tb. */
static bool frame_line(const char *s, size_t n, struct sbx_traceback *tb)
{
	static const char head[] = "  File \"", mid[] = "\", line ";
	const size_t hl = sizeof(head) - 1, ml = sizeof(mid) - 1;
	size_t at = 0, digits = 0;
	uint64_t line = 0;

	if (n < hl + ml + 1 || memcmp(s, head, hl) != 0)
		return false;
	/* The last '", line ' of the line: a file name may hold the text. */
	for (size_t i = n - ml + 1; i-- > hl;)
		if (memcmp(s + i, mid, ml) == 0) {
			at = i;
			break;
		}
	if (!at)
		return false;
	for (size_t i = at + ml; i < n && s[i] >= '0' && s[i] <= '9' && digits < 9; i++, digits++)
		line = line * 10 + (uint64_t)(s[i] - '0');
	if (!digits || (at + ml + digits < n && s[at + ml + digits] != ','))
		return false;
	copy_field(tb->file, sizeof(tb->file), s + hl, at - hl);
	tb->line = line;
	return true;
}

static bool name_char(char c, bool first)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
	       (!first && ((c >= '0' && c <= '9') || c == '.'));
}

/* "Type" or "Type: message": into @tb. */
static bool exception_line(const char *s, size_t n, struct sbx_traceback *tb)
{
	size_t t = 0;

	while (t < n && t < sizeof(tb->type) - 1 && name_char(s[t], t == 0))
		t++;
	if (t == 0 || s[t - 1] == '.')
		return false;
	if (t < n && !(s[t] == ':' && (t + 1 == n || s[t + 1] == ' ')))
		return false;
	copy_field(tb->type, sizeof(tb->type), s, t);
	if (t + 2 <= n)
		copy_field(tb->message, sizeof(tb->message), s + t + 2, n - t - 2);
	else
		tb->message[0] = '\0';
	return true;
}

bool sbx_traceback_find(const char *buf, size_t len, struct sbx_traceback *tb)
{
	const char *end = buf + len, *p = len > SBX_TRACEBACK_TAIL ? end - SBX_TRACEBACK_TAIL : buf;
	struct sbx_traceback cur;
	bool in_frame = false, found = false;
	size_t n;

	memset(tb, 0, sizeof(*tb));
	memset(&cur, 0, sizeof(cur));
	/* A tail that is not the whole capture may start inside a line: its
	 * first line is dropped (nothing before the tail is read to tell). */
	if (p > buf)
		(void)next_line(&p, end, &n);
	/* Forward, once: each frame line starts a candidate, the first
	 * unindented line after it ends one; the last complete one wins. */
	while (p < end) {
		const char *s = next_line(&p, end, &n);

		if (frame_line(s, n, &cur)) {
			in_frame = true;
			continue;
		}
		if (!in_frame || n == 0 || s[0] == ' ' || s[0] == '\t')
			continue;
		in_frame = false;
		if (exception_line(s, n, &cur)) {
			*tb = cur;
			found = true;
		}
	}
	return found;
}
