/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * runid.h - run ids and unguessable random bytes (getrandom only).
 */
#ifndef SBX_RUNID_H
#define SBX_RUNID_H

#include <stdbool.h>
#include <stddef.h>

/* A run id: 32 lowercase hex characters. */
#define SBX_RUN_ID_LEN 32

/*
 * sbx_run_id_new() - a fresh run id into @out (33 bytes, NUL-terminated).
 * The first 12 hex digits are the wall clock in milliseconds since the
 * epoch, so ids sort by start time; the other 20 are 80 bits from
 * getrandom().  Aborts if the kernel cannot give randomness (it always can
 * on the kernels sbx supports: getrandom blocks only until the pool is
 * initialized, early at boot).
 */
void sbx_run_id_new(char out[SBX_RUN_ID_LEN + 1]);

/* sbx_random_bytes() - @len bytes from getrandom(2); aborts when the kernel
 * has none to give (ids and names made from them must not be guessable). */
void sbx_random_bytes(unsigned char *buf, size_t len);

/* True when @s is exactly 32 lowercase hex characters. */
bool sbx_run_id_valid(const char *s);

#endif
