/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-tls-hello.c - libFuzzer entry point for the egress proxy's
 * ClientHello parser (the server name check of CONNECT tunnels to 443). */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[SBX_HOST_MAX];
	const char *why = NULL;
	size_t used = 0;
	int r = sbx_tls_client_hello(data, size, name, &used, &why);

	switch (r) {
	case SBX_TLS_MORE:
		/* More is asked for only below the cap, and never with a
		 * reason. */
		if (size >= SBX_TLS_PEEK_MAX || why)
			__builtin_trap();
		break;
	case SBX_TLS_HELLO:
		/* The records used lie inside what was given and what the
		 * proxy reads; the name is a normalized DNS name or empty. */
		if (used < 5 + 4 || used > size || used > SBX_TLS_PEEK_MAX || strlen(name) >= SBX_HOST_MAX)
			__builtin_trap();
		for (const char *p = name; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '.'))
				__builtin_trap();
		/* A prefix of a whole ClientHello is never judged whole. */
		if (sbx_tls_client_hello(data, used - 1, name, &used, &why) == SBX_TLS_HELLO)
			__builtin_trap();
		break;
	case SBX_TLS_BAD:
		if (!why || !why[0])
			__builtin_trap();
		break;
	default:
		__builtin_trap();
	}
	return 0;
}
