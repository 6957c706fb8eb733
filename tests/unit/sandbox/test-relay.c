/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-relay.c - the bounded relay in front of a caller's fd. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "relay.h"

/* Bytes go out in order, at most PIPE_BUF a write; the room comes back. */
static void test_order_and_room(void **state)
{
	struct sbx_relay r;
	int p[2];
	char in[3 * PIPE_BUF], out[sizeof(in)];
	size_t got = 0;

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 7);
	sbx_relay_init(&r, p[1]);
	assert_true(sbx_relay_active(&r));
	assert_int_equal(sbx_relay_room(&r), SBX_RELAY_CAP);
	sbx_relay_put(&r, in, sizeof(in));
	assert_int_equal(sbx_relay_pending(&r), sizeof(in));
	assert_int_equal(sbx_relay_write(&r), PIPE_BUF);
	assert_int_equal(sbx_relay_room(&r), SBX_RELAY_CAP - 2 * PIPE_BUF);
	sbx_relay_finish(&r);
	assert_int_equal(sbx_relay_pending(&r), 0);
	while (got < sizeof(out)) {
		ssize_t n = read(p[0], out + got, sizeof(out) - got);

		assert_true(n > 0);
		got += (size_t)n;
	}
	assert_memory_equal(in, out, sizeof(in));
	sbx_relay_free(&r);
	close(p[0]);
	close(p[1]);
}

/* A reader that went away: the relay is broken with EPIPE, drops what it
 * is given, and takes any amount (its source is still drained). */
static void test_broken_on_epipe(void **state)
{
	struct sbx_relay r;
	int p[2];

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	close(p[0]);
	sbx_relay_init(&r, p[1]);
	sbx_relay_put(&r, "abc", 3);
	assert_int_equal(sbx_relay_write(&r), 0);
	assert_true(r.broken);
	assert_int_equal(r.error, EPIPE);
	assert_int_equal(sbx_relay_pending(&r), 0);
	assert_true(sbx_relay_room(&r) > 0);
	sbx_relay_put(&r, "def", 3);
	assert_int_equal(sbx_relay_pending(&r), 0);
	sbx_relay_free(&r);
	close(p[1]);
}

/* No fd, no relay: NULL too. */
static void test_inactive(void **state)
{
	struct sbx_relay r;

	(void)state;
	sbx_relay_init(&r, -1);
	assert_false(sbx_relay_active(&r));
	assert_false(sbx_relay_active(NULL));
	assert_int_equal(sbx_relay_pending(&r), 0);
	sbx_relay_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_room),
		cmocka_unit_test(test_broken_on_epipe),
		cmocka_unit_test(test_inactive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
