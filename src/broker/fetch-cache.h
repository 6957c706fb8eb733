/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fetch-cache.h - the content-addressed cache of pinned remote inputs,
 * <state_dir>/fetch-cache/<sha256> (sbx-job(5), REMOTE INPUTS).
 *
 * Only an entry whose job pinned its sha256 is cached, after the broker
 * hashed the bytes the fetcher wrote and found the pin; a later run that
 * pins the same digest is served from here without the network, and its
 * copy is hashed again on the way in (a file changed in the cache is
 * dropped and fetched anew).  The directory is the caller's (0700), its
 * files are named by their digest and nothing else; it is bounded by the
 * host configuration's fetch_cache_bytes, oldest use first, after each
 * insertion and by `sbx gc`.
 */
#ifndef SBX_FETCH_CACHE_H
#define SBX_FETCH_CACHE_H

#include <stdint.h>

#include "error.h"

/* Open <state_dir>/fetch-cache/@sha256 for reading (and mark it used):
 * an fd, or -1 when it is not there. */
int sbx_fetch_cache_open(const char *state_dir, const char *sha256);

/* Drop @sha256 from the cache (its bytes did not match their name). */
void sbx_fetch_cache_drop(const char *state_dir, const char *sha256);

/*
 * sbx_fetch_cache_put() - copy @src_fd (from its start) into the cache as
 * @sha256, then prune to @max_bytes.  A cache that cannot be written is
 * not an error of the run: a warning, and 0.
 */
int sbx_fetch_cache_put(const char *state_dir, const char *sha256, int src_fd, uint64_t max_bytes);

/*
 * sbx_fetch_cache_prune() - remove the least recently used entries until
 * the cache holds at most @max_bytes; *@removed (may be NULL) counts them.
 * Return: 0, or -1 with @err set (70) when the directory cannot be read.
 */
int sbx_fetch_cache_prune(const char *state_dir, uint64_t max_bytes, unsigned *removed,
			  struct sbx_error *err);

#endif
