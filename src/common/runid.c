/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * runid.c - run ids: 48 bits of wall-clock milliseconds then 80 random
 * bits, as 32 lowercase hex digits.  The time prefix makes `ls` of the
 * artifacts or state directory list runs in start order; 80 random bits
 * make a collision within one millisecond negligible.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "runid.h"
#include "util.h"

void sbx_random_bytes(unsigned char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = getrandom(buf + done, len - done, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* Without randomness run ids could collide and a
			 * guessed id could be cancelled; nothing sane to do. */
			perror("sbx: getrandom");
			abort();
		}
		done += (size_t)r;
	}
}

void sbx_run_id_new(char out[SBX_RUN_ID_LEN + 1])
{
	unsigned char b[16];
	uint64_t ms = sbx_now_real_ms() & 0xffffffffffffull;

	for (int i = 0; i < 6; i++)
		b[i] = (unsigned char)(ms >> (8 * (5 - i)));
	sbx_random_bytes(b + 6, sizeof(b) - 6);
	sbx_hex(b, sizeof(b), out);
}

bool sbx_run_id_valid(const char *s)
{
	size_t i;

	if (!s)
		return false;
	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == SBX_RUN_ID_LEN;
}
