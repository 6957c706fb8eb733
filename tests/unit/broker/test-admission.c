/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-admission.c - slots and memory reservations across processes. */
#include "config.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>

#include <cmocka.h>

#include "admission.h"
#include "state.h"

static const char RUN_A[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char RUN_B[] = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

static int setup(void **state)
{
	char *d = sbx_xstrdup("/tmp/sbx-test-admission-XXXXXX");

	if (!mkdtemp(d))
		return -1;
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	_cleanup_free_ char *d = *state;
	_cleanup_free_ char *cmd = sbx_xasprintf("rm -rf '%s'", d);

	return system(cmd) == 0 ? 0 : -1;
}

static uint64_t now_ms(void)
{
	return sbx_now_mono_ns() / 1000000ull;
}

static void count_queued(void *p)
{
	(*(int *)p)++;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* A child that reserves @mib, tells the parent through @fds, holds it for
 * @hold_ms and exits without releasing: the kernel drops the reservation. */
static pid_t hold_in_child(const char *dir, const struct sbx_admission_limits *lim, uint64_t mib,
			   unsigned hold_ms)
{
	int fds[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sbx_admission *res = NULL;
		struct sbx_error err = { 0 };

		close(fds[0]);
		if (sbx_admission_reserve(dir, lim, mib, 0, RUN_B, NULL, NULL, &res, &err) < 0)
			_exit(err.code);
		(void)!write(fds[1], "r", 1);
		sleep_ms(hold_ms);
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	return pid;
}

static void reap(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_budget_from_meminfo(void **state)
{
	static const struct {
		const char *text;
		int r;
		uint64_t budget;
	} cases[] = {
		/* 24 GiB total, 23 GiB available: keep 10% of total. */
		{ "MemTotal:       25165824 kB\nMemFree:  1 kB\nMemAvailable:   24117248 kB\n", 0,
		  23552 - 2457 },
		/* 2 GiB total: 10% is below the 512 MiB floor. */
		{ "MemTotal: 2097152 kB\nMemAvailable: 1048576 kB\n", 0, 512 },
		/* Less available than the reserve: nothing to give. */
		{ "MemTotal: 2097152 kB\nMemAvailable: 262144 kB\n", 0, 0 },
		/* Order does not matter; a key is matched whole. */
		{ "MemAvailableX: 1 kB\nMemAvailable: 2097152 kB\nMemTotal: 4194304 kB\n", 0, 1536 },
		{ "MemTotal: 2097152 kB\n", -1, 0 },
		{ "MemAvailable: 2097152 kB\n", -1, 0 },
		{ "", -1, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t b = 777;
		int r = sbx_admission_budget_from_meminfo(cases[i].text, &b);

		assert_int_equal(r, cases[i].r);
		if (r == 0)
			assert_int_equal(b, cases[i].budget);
	}
}

static void test_defaults(void **state)
{
	struct sbx_admission_limits lim;
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_admission_limits_default(&lim, 3, 1000, &err), 0);
	assert_int_equal(lim.max_concurrent, 3);
	assert_int_equal(lim.memory_budget_mib, 1000);
	assert_int_equal(sbx_admission_limits_default(&lim, 0, 0, &err), 0);
	assert_true(lim.max_concurrent >= 2);
	assert_true(lim.max_concurrent == 2 || lim.max_concurrent == (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	assert_int_equal(sbx_admission_limits_default(&lim, 1000000, 1, &err), 0);
	assert_int_equal(lim.max_concurrent, SBX_ADMISSION_SLOTS_MAX);
}

/* A slot held (flock on its own open file) with @content, as another sbx
 * or a tampering hand could leave it; returns the fd that holds it. */
static int hold_slot(const char *dir, unsigned n, const char *content)
{
	_cleanup_free_ char *slots = sbx_xasprintf("%s/slots", dir);
	_cleanup_free_ char *path = sbx_xasprintf("%s/%u.lock", slots, n);
	int fd;

	(void)mkdir(slots, 0700);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	return fd;
}

/* Slot contents that strtoull() reads as huge ("-1" is 2^64-1) made the
 * reserved sum wrap, and a run was admitted past the budget.  What cannot
 * be read reserves everything now, and the sum saturates. */
static void test_unreadable_slot_fails_closed(void **state)
{
	static const char *const contents[] = {
		"18446744073709551615 x\n", "-1 x\n", "99999999999999999999999 x\n", "lots\n", "",
		" 5 x\n", "+5 x\n",
	};
	const char *dir = *state;
	struct sbx_admission_limits lim = { .max_concurrent = 4, .memory_budget_mib = 1000 };
	struct sbx_admission *a = NULL;
	struct sbx_error err = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(contents); i++) {
		int fd = hold_slot(dir, 3, contents[i]);

		memset(&err, 0, sizeof(err));
		if (sbx_admission_reserve(dir, &lim, 100, 0, RUN_A, NULL, NULL, &a, &err) == 0)
			fail_msg("slot content \"%s\": admitted past the budget", contents[i]);
		assert_int_equal(err.code, SBX_EXIT_CAPACITY);
		assert_non_null(strstr(err.msg, "1 of 4 runs active, 18446744073709551615 of 1000 MiB"));
		close(fd);
	}
	/* Two held slots whose sum passes 2^64 do not wrap either. */
	int f1 = hold_slot(dir, 2, "18446744073709551000 x\n"), f2 = hold_slot(dir, 3, "700 y\n");
	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_admission_reserve(dir, &lim, 100, 0, RUN_A, NULL, NULL, &a, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_CAPACITY);
	close(f1);
	close(f2);
	/* A well-formed slot still counts what it says. */
	f1 = hold_slot(dir, 3, "850 x\n");
	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_admission_reserve(dir, &lim, 100, 0, RUN_A, NULL, NULL, &a, &err), 0);
	sbx_admission_release(a);
	assert_int_equal(sbx_admission_reserve(dir, &lim, 200, 0, RUN_A, NULL, NULL, &a, &err), -1);
	assert_non_null(strstr(err.msg, "850 of 1000 MiB reserved"));
	close(f1);
}

static void test_second_refused_at_once(void **state)
{
	const char *dir = *state;
	struct sbx_admission_limits lim = { .max_concurrent = 1, .memory_budget_mib = 1000 };
	struct sbx_admission *a = NULL, *b = NULL;
	struct sbx_error err = { 0 };
	int queued = 0;
	uint64_t t0;

	assert_int_equal(sbx_admission_reserve(dir, &lim, 100, 0, RUN_A, count_queued, &queued, &a,
					       &err), 0);
	t0 = now_ms();
	assert_int_equal(sbx_admission_reserve(dir, &lim, 100, 0, RUN_B, count_queued, &queued, &b,
					       &err), -1);
	assert_true(now_ms() - t0 < 500);
	assert_int_equal(err.code, SBX_EXIT_CAPACITY);
	assert_string_equal(err.msg,
			    "admission: no capacity: 1 of 1 runs active, 100 of 1000 MiB reserved");
	assert_int_equal(queued, 0);
	assert_null(b);

	/* Released: the next one gets in. */
	sbx_admission_release(a);
	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_admission_reserve(dir, &lim, 100, 0, RUN_B, NULL, NULL, &b, &err), 0);
	sbx_admission_release(b);
	sbx_admission_release(NULL);
}

static void test_waits_for_exit(void **state)
{
	const char *dir = *state;
	struct sbx_admission_limits lim = { .max_concurrent = 1, .memory_budget_mib = 1000 };
	struct sbx_admission *a = NULL;
	struct sbx_error err = { 0 };
	int queued = 0;
	uint64_t t0, waited;
	pid_t pid;

	pid = hold_in_child(dir, &lim, 10, 300);
	t0 = now_ms();
	assert_int_equal(sbx_admission_reserve(dir, &lim, 10, 10000, RUN_A, count_queued, &queued,
					       &a, &err), 0);
	waited = now_ms() - t0;
	/* Woken by inotify when the holder exited (~300 ms), not by the
	 * 500 ms backstop, and long before the deadline. */
	assert_true(waited >= 150);
	assert_true(waited < 480);
	assert_int_equal(queued, 1);
	reap(pid);
	sbx_admission_release(a);
}

static void test_wait_times_out(void **state)
{
	const char *dir = *state;
	struct sbx_admission_limits lim = { .max_concurrent = 1, .memory_budget_mib = 1000 };
	struct sbx_admission *a = NULL, *b = NULL;
	struct sbx_error err = { 0 };
	int queued = 0;
	uint64_t t0, waited;

	assert_int_equal(sbx_admission_reserve(dir, &lim, 10, 0, RUN_A, NULL, NULL, &a, &err), 0);
	t0 = now_ms();
	assert_int_equal(sbx_admission_reserve(dir, &lim, 10, 400, RUN_B, count_queued, &queued, &b,
					       &err), -1);
	waited = now_ms() - t0;
	assert_int_equal(err.code, SBX_EXIT_CAPACITY);
	assert_true(waited >= 400 && waited < 2000);
	assert_int_equal(queued, 1);
	sbx_admission_release(a);
}

static void test_memory_budget(void **state)
{
	const char *dir = *state;
	struct sbx_admission_limits lim = { .max_concurrent = 4, .memory_budget_mib = 1000 };
	struct sbx_admission *r600 = NULL, *r400 = NULL, *r = NULL;
	struct sbx_error err = { 0 };
	int queued = 0;
	uint64_t t0;

	assert_int_equal(sbx_admission_reserve(dir, &lim, 600, 0, RUN_A, NULL, NULL, &r600, &err), 0);
	assert_int_equal(sbx_admission_reserve(dir, &lim, 500, 0, RUN_B, NULL, NULL, &r, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_CAPACITY);
	assert_string_equal(err.msg,
			    "admission: no capacity: 1 of 4 runs active, 600 of 1000 MiB reserved");
	memset(&err, 0, sizeof(err));
	/* Exactly the rest of the budget fits. */
	assert_int_equal(sbx_admission_reserve(dir, &lim, 400, 0, RUN_B, NULL, NULL, &r400, &err), 0);
	assert_int_equal(sbx_admission_reserve(dir, &lim, 1, 0, RUN_B, NULL, NULL, &r, &err), -1);
	assert_string_equal(err.msg,
			    "admission: no capacity: 2 of 4 runs active, 1000 of 1000 MiB reserved");
	memset(&err, 0, sizeof(err));
	sbx_admission_release(r600);
	assert_int_equal(sbx_admission_reserve(dir, &lim, 500, 0, RUN_B, NULL, NULL, &r, &err), 0);
	sbx_admission_release(r);
	sbx_admission_release(r400);

	/* More than the whole budget: refused at once, even with a queue. */
	t0 = now_ms();
	assert_int_equal(sbx_admission_reserve(dir, &lim, 1001, 10000, RUN_A, count_queued, &queued,
					       &r, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_CAPACITY);
	assert_true(now_ms() - t0 < 500);
	assert_int_equal(queued, 0);
}

/* Live reservations have distinct slot numbers, and a new one takes the
 * lowest free: root's per-run host ids are drawn from them. */
static void test_slot_numbers(void **state)
{
	const char *dir = *state;
	struct sbx_admission_limits lim = { .max_concurrent = 8, .memory_budget_mib = 1000 };
	struct sbx_admission *r[5] = { 0 };
	struct sbx_error err = { 0 };

	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(sbx_admission_reserve(dir, &lim, 1, 0, RUN_A, NULL, NULL, &r[i], &err), 0);
		assert_int_equal(sbx_admission_slot(r[i]), i);
	}
	sbx_admission_release(r[1]);
	sbx_admission_release(r[2]);
	assert_int_equal(sbx_admission_reserve(dir, &lim, 1, 0, RUN_B, NULL, NULL, &r[1], &err), 0);
	assert_int_equal(sbx_admission_slot(r[1]), 1);
	assert_int_equal(sbx_admission_reserve(dir, &lim, 1, 0, RUN_B, NULL, NULL, &r[2], &err), 0);
	assert_int_equal(sbx_admission_slot(r[2]), 2);
	assert_int_equal(sbx_admission_reserve(dir, &lim, 1, 0, RUN_B, NULL, NULL, &r[4], &err), 0);
	assert_int_equal(sbx_admission_slot(r[4]), 4);
	for (unsigned i = 0; i < 5; i++)
		sbx_admission_release(r[i]);
}

static void test_dies_with_process(void **state)
{
	const char *dir = *state;
	struct sbx_admission_limits lim = { .max_concurrent = 1, .memory_budget_mib = 1000 };
	struct sbx_admission *a = NULL;
	struct sbx_error err = { 0 };
	pid_t pid;

	/* The child reserves 900 MiB and exits without releasing.  Its slot
	 * still says 900 but is free, so that number no longer counts. */
	pid = hold_in_child(dir, &lim, 900, 0);
	reap(pid);
	assert_int_equal(sbx_admission_reserve(dir, &lim, 900, 0, RUN_A, NULL, NULL, &a, &err), 0);
	sbx_admission_release(a);

	/* Killed outright, the same. */
	pid = hold_in_child(dir, &lim, 900, 60000);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(sbx_admission_reserve(dir, &lim, 900, 0, RUN_A, NULL, NULL, &a, &err), 0);
	sbx_admission_release(a);
}

/* Many processes racing for 3 slots never hold more than 3 at once. */
static void test_race(void **state)
{
	const char *dir = *state;
	struct sbx_admission_limits lim = { .max_concurrent = 3, .memory_budget_mib = 1000 };
	enum { PROCS = 12 };
	struct shared {
		int inside;
		int most;
	} *sh;
	pid_t pids[PROCS];

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	for (int i = 0; i < PROCS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct sbx_admission *a = NULL;
			struct sbx_error err = { 0 };
			int now, most;

			if (sbx_admission_reserve(dir, &lim, 100, 20000, RUN_A, NULL, NULL, &a, &err) < 0)
				_exit(2);
			now = __atomic_add_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
			most = __atomic_load_n(&sh->most, __ATOMIC_SEQ_CST);
			while (now > most &&
			       !__atomic_compare_exchange_n(&sh->most, &most, now, false,
							    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
				;
			sleep_ms(40);
			__atomic_sub_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
			sbx_admission_release(a);
			_exit(0);
		}
	}
	for (int i = 0; i < PROCS; i++)
		reap(pids[i]);
	assert_true(sh->most <= 3);
	assert_true(sh->most >= 2); /* they did run side by side */
	assert_int_equal(sh->inside, 0);
	munmap(sh, sizeof(*sh));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_from_meminfo),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test_setup_teardown(test_second_refused_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_slot_fails_closed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waits_for_exit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wait_times_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_slot_numbers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dies_with_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_race, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
