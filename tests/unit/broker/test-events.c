/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-events.c - the JSON Lines event writer. */
#include "config.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "events.h"

static const char RUN_ID[] = "0123456789abcdef0123456789abcdef";

static char *make_tmpdir(void)
{
	char *d = sbx_xstrdup("/tmp/sbx-test-events-XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static void rm_rf(const char *d)
{
	_cleanup_free_ char *cmd = sbx_xasprintf("rm -rf '%s'", d);

	assert_int_equal(system(cmd), 0);
}

static char *slurp(const char *path, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf = sbx_xmalloc(1 << 20);
	ssize_t n;

	assert_true(fd >= 0);
	n = sbx_read_all(fd, buf, (1 << 20) - 1);
	assert_true(n >= 0);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* Split into lines; each must be one JSON object with the fixed members.
 * Returns the number of lines; the parsed objects go to @objs if given. */
static size_t check_lines(char *text, json_t **objs, size_t max)
{
	size_t n = 0;
	char *save = NULL;

	assert_true(text[0] == '\0' || text[strlen(text) - 1] == '\n');
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		json_error_t je;
		json_t *o = json_loads(line, 0, &je);

		assert_non_null(o);
		assert_true(json_is_object(o));
		assert_string_equal(json_string_value(json_object_get(o, "run_id")), RUN_ID);
		assert_true(json_is_integer(json_object_get(o, "t_ms")));
		assert_true(json_integer_value(json_object_get(o, "t_ms")) >= 0);
		assert_true(json_is_string(json_object_get(o, "event")));
		if (objs && n < max)
			objs[n] = o;
		else
			json_decref(o);
		n++;
	}
	return n;
}

static void test_file_lines(void **state)
{
	_cleanup_free_ char *dir = make_tmpdir();
	_cleanup_free_ char *path = sbx_xasprintf("%s/ev.jsonl", dir);
	_cleanup_free_ char *text = NULL;
	struct sbx_events *ev = NULL;
	struct sbx_error err = { 0 };
	json_t *objs[4] = { 0 };
	struct stat st;
	size_t len;
	const char *names[] = { "admitted", "started", "exited" };

	assert_int_equal(sbx_events_open(path, RUN_ID, &ev, &err), 0);
	assert_true(sbx_events_enabled(ev));
	sbx_events_emit(ev, "admitted", NULL);
	/* Extras follow; they cannot overwrite the fixed members. */
	sbx_events_emit(ev, "started",
			json_pack("{s:i, s:s, s:s}", "pid", 42, "run_id", "forged", "event", "x"));
	sbx_events_emit(ev, "exited", json_pack("{s:i}", "code", 3));
	sbx_events_close(ev);

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644); /* umask 022, set in main */
	text = slurp(path, &len);
	assert_int_equal(check_lines(text, objs, 4), 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(json_string_value(json_object_get(objs[i], "event")), names[i]);
	assert_int_equal(json_integer_value(json_object_get(objs[1], "pid")), 42);
	assert_int_equal(json_integer_value(json_object_get(objs[2], "code")), 3);
	/* The fixed members come first, in order. */
	{
		void *it = json_object_iter(objs[1]);
		assert_string_equal(json_object_iter_key(it), "run_id");
		it = json_object_iter_next(objs[1], it);
		assert_string_equal(json_object_iter_key(it), "t_ms");
		it = json_object_iter_next(objs[1], it);
		assert_string_equal(json_object_iter_key(it), "event");
	}
	for (size_t i = 0; i < 3; i++)
		json_decref(objs[i]);
	rm_rf(dir);
}

static void test_appends(void **state)
{
	_cleanup_free_ char *dir = make_tmpdir();
	_cleanup_free_ char *path = sbx_xasprintf("%s/ev.jsonl", dir);
	_cleanup_free_ char *text = NULL;
	struct sbx_events *ev = NULL;
	struct sbx_error err = { 0 };
	size_t len;

	/* An existing file is appended to, never truncated. */
	assert_int_equal(sbx_events_open(path, RUN_ID, &ev, &err), 0);
	sbx_events_emit(ev, "admitted", NULL);
	sbx_events_close(ev);
	ev = NULL;
	assert_int_equal(sbx_events_open(path, RUN_ID, &ev, &err), 0);
	sbx_events_emit(ev, "cleaned", NULL);
	sbx_events_close(ev);
	text = slurp(path, &len);
	assert_int_equal(check_lines(text, NULL, 0), 2);
	rm_rf(dir);
}

/* Several processes sharing one file: every line stays whole. */
static void test_concurrent_writers(void **state)
{
	_cleanup_free_ char *dir = make_tmpdir();
	_cleanup_free_ char *path = sbx_xasprintf("%s/ev.jsonl", dir);
	_cleanup_free_ char *text = NULL;
	enum { WRITERS = 4, LINES = 300 };
	size_t len;

	for (int w = 0; w < WRITERS; w++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct sbx_events *ev = NULL;
			struct sbx_error err = { 0 };
			if (sbx_events_open(path, RUN_ID, &ev, &err) < 0)
				_exit(1);
			for (int i = 0; i < LINES; i++)
				sbx_events_emit(ev, "started",
						json_pack("{s:i, s:s}", "writer", w, "pad",
							  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
							  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
			sbx_events_close(ev);
			_exit(0);
		}
	}
	for (int w = 0; w < WRITERS; w++) {
		int status;
		assert_true(wait(&status) > 0);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	text = slurp(path, &len);
	assert_int_equal(check_lines(text, NULL, 0), WRITERS * LINES);
	rm_rf(dir);
}

/* Run @fn with fd 2 redirected to a file; return what it wrote there. */
static char *capture_stderr(const char *dir, void (*fn)(void))
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/stderr", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int saved = dup(STDERR_FILENO);
	size_t len;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
	fn();
	fflush(stderr);
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
	return slurp(path, &len);
}

static void emit_to_dash(void)
{
	struct sbx_events *ev = NULL;
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_events_open("-", RUN_ID, &ev, &err), 0);
	sbx_events_emit(ev, "queued", NULL);
	sbx_events_emit(ev, "admitted", json_pack("{s:i}", "slot", 0));
	sbx_events_close(ev);
	/* stderr itself stays open. */
	assert_true(fcntl(STDERR_FILENO, F_GETFD) >= 0);
}

static void emit_disabled(void)
{
	struct sbx_events *ev = NULL;
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_events_open(NULL, RUN_ID, &ev, &err), 0);
	assert_false(sbx_events_enabled(ev));
	/* The extra is released (LeakSanitizer would notice) and nothing is
	 * written; the clock still runs for the manifest's timing. */
	sbx_events_emit(ev, "started", json_pack("{s:i}", "pid", 1));
	sbx_events_emit(NULL, "started", json_pack("{s:i}", "pid", 1));
	assert_false(sbx_events_enabled(NULL));
	assert_int_equal(sbx_events_t_ms(NULL), 0);
	sbx_events_close(ev);
	sbx_events_close(NULL);
}

static void test_dash_is_stderr(void **state)
{
	_cleanup_free_ char *dir = make_tmpdir();
	_cleanup_free_ char *text = capture_stderr(dir, emit_to_dash);

	assert_int_equal(check_lines(text, NULL, 0), 2);
	assert_non_null(strstr(text, "\"event\":\"queued\""));
	rm_rf(dir);
}

static void test_disabled(void **state)
{
	_cleanup_free_ char *dir = make_tmpdir();
	_cleanup_free_ char *text = capture_stderr(dir, emit_disabled);

	assert_string_equal(text, "");
	rm_rf(dir);
}

static void test_clock(void **state)
{
	struct sbx_events *ev = NULL;
	struct sbx_error err = { 0 };
	struct timespec ts = { 0, 60 * 1000000L };
	uint64_t t;

	assert_int_equal(sbx_events_open(NULL, RUN_ID, &ev, &err), 0);
	assert_true(sbx_events_t_ms(ev) < 60);
	nanosleep(&ts, NULL);
	t = sbx_events_t_ms(ev);
	assert_true(t >= 60 && t < 10000);
	sbx_events_close(ev);
}

static void test_open_failure(void **state)
{
	struct sbx_events *ev = NULL;
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_events_open("/nonexistent-dir/ev.jsonl", RUN_ID, &ev, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_USAGE);
	assert_int_equal(err.errnum, ENOENT);
	assert_non_null(strstr(err.msg, "--events: /nonexistent-dir/ev.jsonl"));
	assert_null(ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_lines),
		cmocka_unit_test(test_appends),
		cmocka_unit_test(test_concurrent_writers),
		cmocka_unit_test(test_dash_is_stderr),
		cmocka_unit_test(test_disabled),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_open_failure),
	};

	umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
