/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * excerpt.c - see excerpt.h.  Only the captured bytes are quoted: the
 * excerpt is a view of what the manifest's sha256 covers (and of the
 * file sbx keeps), never of bytes past stream_bytes_max.  Every input
 * byte becomes at most 3 output bytes (U+FFFD), so the cleaner is given
 * room for all of them.
 */
#include "config.h"

#include <string.h>

#include "canonjson.h"
#include "excerpt.h"
#include "util.h"

static bool continuation(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

char *sbx_excerpt(const char *buf, size_t len, size_t *left_out)
{
	size_t head, tail, nl_window;
	_cleanup_free_ char *h = NULL, *t = NULL;
	const char *p;

	*left_out = 0;
	if (len <= SBX_EXCERPT_HEAD + SBX_EXCERPT_TAIL)
		return sbx_canonjson_clean_text(buf, len, 3 * len + 3, NULL);
	/* A UTF-8 character is at most 4 bytes: at most 3 steps each way. */
	head = SBX_EXCERPT_HEAD;
	for (int i = 0; i < 3 && head > 0 && continuation((unsigned char)buf[head]); i++)
		head--;
	tail = len - SBX_EXCERPT_TAIL;
	for (int i = 0; i < 3 && tail < len && continuation((unsigned char)buf[tail]); i++)
		tail++;
	/* Start the tail on a line of its own when one starts early in it:
	 * a traceback's frames read whole, not from the middle of one. */
	nl_window = (len - tail) / 4;
	p = memchr(buf + tail, '\n', nl_window);
	if (p && (size_t)(p + 1 - buf) < len)
		tail = (size_t)(p + 1 - buf);
	*left_out = tail - head;
	h = sbx_canonjson_clean_text(buf, head, 3 * head + 3, NULL);
	t = sbx_canonjson_clean_text(buf + tail, len - tail, 3 * (len - tail) + 3, NULL);
	return sbx_xasprintf("%s%s[sbx: %zu bytes left out]\n%s", h,
			     head && buf[head - 1] == '\n' ? "" : "\n", *left_out, t);
}
