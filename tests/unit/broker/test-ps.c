/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-ps.c - `sbx ps`: entries read from state files, the table and the
 * JSON, and what a forged or half-made entry does to them; the escaping
 * of names on stderr (report.c). */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ps.h"
#include "report.h"
#include "state.h"

static const char ID[] = "0193f1c2a4b75d2e9c31a0f4e2b6d8c1";
static const char ID2[] = "0193f1c2a4b85d2e9c31a0f4e2b6d8c2";

static char *record(const char *id, unsigned uid, const char *extra)
{
	return sbx_xasprintf("{\"run_id\":\"%s\",\"broker_pid\":12345,\"broker_start\":987654,"
			     "\"started_at\":\"2026-11-30T02:10:27.123Z\",\"uid\":%u,"
			     "\"cgroups\":[],\"temps\":[]%s}",
			     id, uid, extra);
}

static const char RUNNING[] = "running        \n";

static void test_parse_live(void **state)
{
	_cleanup_free_ char *j = record(ID, 1000, ",\"principal\":\"alice\",\"profile\":\"shell\"");
	struct sbx_ps_list l = { 0 };
	struct sbx_error err = { 0 };

	(void)state;
	l.v = sbx_xcalloc(1, sizeof(*l.v));
	l.n = 1;
	assert_int_equal(sbx_ps_entry_parse(ID, 1000, j, strlen(j), RUNNING, 16, true, &l.v[0], &err), 0);
	assert_string_equal(l.v[0].run_id, ID);
	assert_string_equal(l.v[0].state, "running");
	assert_string_equal(l.v[0].principal, "alice");
	assert_string_equal(l.v[0].profile, "shell");
	assert_int_equal(l.v[0].uid, 1000);
	assert_int_equal(l.v[0].pid, 12345);
	assert_int_equal(l.v[0].started_ms, 1796004627123ull);
	sbx_ps_list_free(&l);
}

/* The lock is free: whatever the record says, the run is not live. */
static void test_parse_stale(void **state)
{
	_cleanup_free_ char *j = record(ID, 1000, "");
	struct sbx_ps_entry e;

	(void)state;
	assert_int_equal(sbx_ps_entry_parse(ID, 1000, j, strlen(j), RUNNING, 16, false, &e, NULL), 0);
	assert_string_equal(e.state, "stale");
	/* No principal or profile recorded (an older sbx): absent, not "". */
	assert_null(e.principal);
	assert_null(e.profile);
}

static void test_parse_words(void **state)
{
	_cleanup_free_ char *j = record(ID, 0, "");
	static const struct {
		const char *word;
		size_t n;
		const char *want;
	} cases[] = {
		{ "", 0, "starting" },               /* entry made an instant ago */
		{ "queued         \n", 16, "queued" },
		{ "collecting     \n", 16, "collecting" },
		{ "collrunning    \n", 16, "unknown" }, /* a torn record */
		{ "runnin", 6, "unknown" },
		{ "running", 7, "running" },
		{ "\033[2J           \n", 16, "unknown" },
	};
	struct sbx_ps_entry e;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(sbx_ps_entry_parse(ID, 0, j, strlen(j), cases[i].word, cases[i].n, true,
						    &e, NULL), 0);
		assert_string_equal(e.state, cases[i].want);
	}
}

/* A record naming another run or user is not listed under this one. */
static void test_parse_refuses(void **state)
{
	_cleanup_free_ char *other_id = record(ID2, 1000, "");
	_cleanup_free_ char *other_uid = record(ID, 0, "");
	_cleanup_free_ char *bad_name = record(ID, 1000, ",\"principal\":7");
	struct sbx_error err = { 0 };
	struct sbx_ps_entry e;

	(void)state;
	assert_int_equal(sbx_ps_entry_parse(ID, 1000, other_id, strlen(other_id), RUNNING, 16, true, &e,
					    &err), -1);
	assert_int_equal(err.code, SBX_EXIT_SOFTWARE);
	assert_int_equal(sbx_ps_entry_parse(ID, 1000, other_uid, strlen(other_uid), RUNNING, 16, true, &e,
					    NULL), -1);
	assert_int_equal(sbx_ps_entry_parse(ID, 1000, "{", 1, RUNNING, 16, true, &e, NULL), -1);
	/* A principal of the wrong type is shown as absent. */
	assert_int_equal(sbx_ps_entry_parse(ID, 1000, bad_name, strlen(bad_name), RUNNING, 16, true, &e,
					    NULL), 0);
	assert_null(e.principal);
}

static void fill(struct sbx_ps_list *l)
{
	l->n = 2;
	l->v = sbx_xcalloc(2, sizeof(*l->v));
	/* Out of order: sorting puts ID first. */
	memcpy(l->v[0].run_id, ID2, sizeof(ID2));
	l->v[0].uid = 1000;
	l->v[0].user = sbx_xstrdup("alice");
	/* What a forged entry could carry: an escape sequence and blanks. */
	l->v[0].principal = sbx_xstrdup("\033[2J x");
	l->v[0].profile = sbx_xstrdup("python-analysis");
	l->v[0].state = "collecting";
	l->v[0].started_ms = 1000000;
	l->v[0].has_memory = true;
	l->v[0].memory_bytes = 36175872; /* 34.5 MiB */
	memcpy(l->v[1].run_id, ID, sizeof(ID));
	l->v[1].uid = 1001;
	l->v[1].state = "queued";
	l->v[1].started_ms = 0;
	sbx_ps_sort(l);
}

static void test_table(void **state)
{
	struct sbx_ps_list l = { 0 };
	_cleanup_free_ char *t = NULL;
	char *lines[4] = { 0 }, *save = NULL;
	size_t n = 0;

	(void)state;
	fill(&l);
	t = sbx_ps_table(&l, 1000000 + 245000);
	assert_non_null(t);
	assert_null(strchr(t, '\033'));
	for (char *s = strtok_r(t, "\n", &save); s && n < 4; s = strtok_r(NULL, "\n", &save))
		lines[n++] = s;
	assert_int_equal(n, 3);
	assert_string_equal(lines[0], "RUN ID                            USER   PRINCIPAL  PROFILE          "
				      "STATE       ELAPSED  MEMORY");
	assert_string_equal(lines[1], "0193f1c2a4b75d2e9c31a0f4e2b6d8c1  1001   -          -                "
				      "queued      -        -");
	assert_string_equal(lines[2], "0193f1c2a4b85d2e9c31a0f4e2b6d8c2  alice  ?[2J?x     python-analysis  "
				      "collecting  4m05s    34.5 MiB");
	sbx_ps_list_free(&l);

	/* No runs: the header alone. */
	t = (free(t), sbx_ps_table(&l, 0));
	assert_string_equal(t, "RUN ID  USER  PRINCIPAL  PROFILE  STATE  ELAPSED  MEMORY\n");
}

static void test_json(void **state)
{
	struct sbx_ps_list l = { 0 };
	json_t *a, *o;

	(void)state;
	fill(&l);
	a = sbx_ps_json(&l, 1000000 + 245000);
	assert_int_equal(json_array_size(a), 2);
	o = json_array_get(a, 0);
	assert_string_equal(json_string_value(json_object_get(o, "run_id")), ID);
	assert_true(json_is_null(json_object_get(o, "user")));
	assert_true(json_is_null(json_object_get(o, "principal")));
	assert_true(json_is_null(json_object_get(o, "started_at")));
	assert_true(json_is_null(json_object_get(o, "elapsed_ms")));
	assert_true(json_is_null(json_object_get(o, "memory_bytes")));
	assert_string_equal(json_string_value(json_object_get(o, "state")), "queued");
	o = json_array_get(a, 1);
	/* JSON carries the name as recorded; escaping is the encoder's job. */
	assert_string_equal(json_string_value(json_object_get(o, "principal")), "\033[2J x");
	assert_string_equal(json_string_value(json_object_get(o, "user")), "alice");
	assert_int_equal(json_integer_value(json_object_get(o, "uid")), 1000);
	assert_int_equal(json_integer_value(json_object_get(o, "elapsed_ms")), 245000);
	assert_int_equal(json_integer_value(json_object_get(o, "memory_bytes")), 36175872);
	assert_string_equal(json_string_value(json_object_get(o, "started_at")),
			    "1970-01-01T00:16:40.000Z");
	json_decref(a);
	sbx_ps_list_free(&l);
}

static void test_elapsed(void **state)
{
	static const struct {
		uint64_t ms;
		const char *want;
	} cases[] = {
		{ 0, "0.0s" },        { 420, "0.4s" },         { 59999, "59.9s" },
		{ 60000, "1m00s" },   { 245000, "4m05s" },     { 3599999, "59m59s" },
		{ 3600000, "1h00m" }, { 7380000, "2h03m" },    { 86400000, "1d00h" },
		{ 273600000, "3d04h" },
	};
	char out[16];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		sbx_ps_format_elapsed(cases[i].ms, out);
		assert_string_equal(out, cases[i].want);
	}
}

/* A real state directory: a live entry with its stage, a dead one, and
 * entries made to trip the reader up. */
static void test_scan(void **state)
{
	char root[] = "/tmp/sbx-test-ps-XXXXXX";
	_cleanup_free_ char *sdir = NULL, *want = NULL, *path = NULL, *cmd = NULL;
	struct sbx_error err = { 0 };
	struct sbx_run_state *st = NULL;
	struct sbx_ps_list l = { 0 };
	_cleanup_close_ int fd = -1;
	static const char FIFO_ID[] = "0193f1c2a4b95d2e9c31a0f4e2b6d8c3";

	(void)state;
	assert_non_null(mkdtemp(root));
	want = sbx_xasprintf("%s/state", root);
	assert_int_equal(sbx_state_dir(want, &sdir, &err), 0);
	fd = open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);

	/* No runs/ yet: an empty list, no error. */
	assert_int_equal(sbx_ps_scan(fd, geteuid(), &l, &err), 0);
	assert_int_equal(l.n, 0);

	assert_int_equal(sbx_state_create_run(sdir, ID, "alice", "shell", &st, &err), 0);
	assert_int_equal(sbx_ps_scan(fd, geteuid(), &l, &err), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0].state, "starting");
	assert_string_equal(l.v[0].profile, "shell");
	assert_int_equal(l.v[0].pid, getpid());
	sbx_ps_list_free(&l);

	sbx_state_set_stage(st, "materializing");
	sbx_state_set_stage(st, "running");
	assert_int_equal(sbx_ps_scan(fd, geteuid(), &l, &err), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0].state, "running");
	assert_true(l.v[0].started_ms > 0);
	sbx_ps_list_free(&l);

	/* A fifo as state.json must not block the reader; a symlinked lock
	 * must not be followed; a name that is no run id is not sbx's. */
	path = sbx_xasprintf("%s/runs/%s", sdir, FIFO_ID);
	assert_int_equal(mkdir(path, 0700), 0);
	free(path);
	path = sbx_xasprintf("%s/runs/%s/state.json", sdir, FIFO_ID);
	assert_int_equal(mkfifo(path, 0600), 0);
	free(path);
	path = sbx_xasprintf("%s/runs/%s/lock", sdir, FIFO_ID);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	free(path);
	path = sbx_xasprintf("%s/runs/not-a-run", sdir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(sbx_ps_scan(fd, geteuid(), &l, &err), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.v[0].run_id, ID);
	sbx_ps_list_free(&l);

	/* Entries are listed only under their owner. */
	assert_int_equal(sbx_ps_scan(fd, geteuid() + 1, &l, &err), 0);
	assert_int_equal(l.n, 0);

	/* Finished: gone. */
	sbx_state_finish(st);
	assert_int_equal(sbx_ps_scan(fd, geteuid(), &l, &err), 0);
	assert_int_equal(l.n, 0);

	cmd = sbx_xasprintf("rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void test_escape(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "plain.txt", "plain.txt" },
		{ "a\033]0;x\007b", "a\\x1b]0;x\\x07b" },
		{ "line\nbreak\r", "line\\x0abreak\\x0d" },
		{ "del\177", "del\\x7f" },
		{ "\xc3\xa9", "\\xc3\\xa9" },
		{ "back\\x1b", "back\\x1b" },
		{ "", "" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *o = sbx_report_escape(cases[i].in);
		assert_string_equal(o, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_live),
		cmocka_unit_test(test_parse_stale),
		cmocka_unit_test(test_parse_words),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_elapsed),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_escape),
	};

	umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
