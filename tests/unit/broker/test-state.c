/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-state.c - run ids, the state directory, gc and cancel. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "state.h"
#include "skip.h"

/* Per test: <root>/state (the state dir) and <root>/tmp ($TMPDIR). */
struct fx {
	char *root;
	char *state;
	char *tmp;
};

static int setup(void **state)
{
	struct fx *f = sbx_xcalloc(1, sizeof(*f));
	struct sbx_error err = { 0 };
	_cleanup_free_ char *want = NULL;

	f->root = sbx_xstrdup("/tmp/sbx-test-state-XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	want = sbx_xasprintf("%s/state", f->root);
	if (sbx_state_dir(want, &f->state, &err) < 0)
		return -1;
	f->tmp = sbx_xasprintf("%s/tmp", f->root);
	if (mkdir(f->tmp, 0700) < 0)
		return -1;
	setenv("TMPDIR", f->tmp, 1);
	*state = f;
	return 0;
}

static char *g_cgroups[3];

/* After a failed cgroup test: kill and remove what it left. */
static void cgroups_cleanup(void)
{
	for (int i = 0; g_cgroups[i]; i++) {
		_cleanup_free_ char *cmd = sbx_xasprintf(
			"d='%s'; for p in $(cat $d/payload/cgroup.procs $d/cgroup.procs 2>/dev/null); "
			"do kill -9 $p; done; sleep 0.2; rmdir $d/payload $d 2>/dev/null",
			g_cgroups[i]);
		(void)!system(cmd);
		free(g_cgroups[i]);
		g_cgroups[i] = NULL;
	}
}

static int teardown(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *cmd = sbx_xasprintf("chmod -R u+rwx '%s'; rm -rf '%s'", f->root, f->root);
	int r;

	cgroups_cleanup();
	r = system(cmd);
	unsetenv("TMPDIR");
	free(f->root);
	free(f->state);
	free(f->tmp);
	free(f);
	return r == 0 ? 0 : -1;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static size_t count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void write_text(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(sbx_write_all(fd, text, strlen(text)), (ssize_t)strlen(text));
}

static json_t *read_state_json(const char *state_dir, const char *id)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/runs/%s/state.json", state_dir, id);
	json_error_t je;
	json_t *o = json_load_file(p, 0, &je);

	assert_non_null(o);
	return o;
}

/* --- run ids -------------------------------------------------------------- */

static void test_run_ids(void **state)
{
	enum { N = 200 };
	char ids[N][SBX_RUN_ID_LEN + 1];
	char prefix[13];
	uint64_t ms = sbx_now_real_ms(), got;

	for (int i = 0; i < N; i++) {
		sbx_run_id_new(ids[i]);
		assert_int_equal(strlen(ids[i]), SBX_RUN_ID_LEN);
		assert_true(sbx_run_id_valid(ids[i]));
		for (int j = 0; j < i; j++)
			assert_string_not_equal(ids[i], ids[j]);
	}
	/* The first 12 digits are the wall clock in ms. */
	memcpy(prefix, ids[0], 12);
	prefix[12] = '\0';
	got = strtoull(prefix, NULL, 16);
	assert_true(got + 5000 >= ms && got <= ms + 5000);
	assert_true(strncmp(ids[0], ids[N - 1], 12) <= 0);
}

static void test_run_id_valid(void **state)
{
	static const struct {
		const char *s;
		bool ok;
	} cases[] = {
		{ "0123456789abcdef0123456789abcdef", true },
		{ "0123456789ABCDEF0123456789abcdef", false },
		{ "0123456789abcdef0123456789abcde", false },
		{ "0123456789abcdef0123456789abcdef0", false },
		{ "0123456789abcdef0123456789abcdeg", false },
		{ "../../../../../../../../../../etc", false },
		{ "", false },
		{ NULL, false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_int_equal(sbx_run_id_valid(cases[i].s), cases[i].ok);
}

/* --- the state directory -------------------------------------------------------- */

static void test_state_dir(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *fresh = sbx_xasprintf("%s/fresh", f->root);
	_cleanup_free_ char *link = sbx_xasprintf("%s/link", f->root);
	_cleanup_free_ char *open_dir = sbx_xasprintf("%s/open", f->root);
	char *out = NULL;
	struct sbx_error err = { 0 };
	struct stat st;

	assert_int_equal(sbx_state_dir(fresh, &out, &err), 0);
	assert_string_equal(out, fresh);
	free(out);
	assert_int_equal(stat(fresh, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);

	/* A symlink is refused, even to a good directory. */
	assert_int_equal(symlink(fresh, link), 0);
	assert_int_equal(sbx_state_dir(link, &out, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);

	/* Group- or world-writable is refused. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(mkdir(open_dir, 0700), 0);
	assert_int_equal(chmod(open_dir, 0777), 0);
	assert_int_equal(sbx_state_dir(open_dir, &out, &err), -1);
	assert_non_null(strstr(err.msg, "writable by group or others"));

	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_state_dir("relative/dir", &out, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
}

static void test_temp_path(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *p = sbx_state_temp_path("0123456789abcdef0123456789abcdef", "-q");
	_cleanup_free_ char *want =
		sbx_xasprintf("%s/sbx-run-0123456789abcdef0123456789abcdef-q", f->tmp);

	assert_string_equal(p, want);
}

/* --- one entry ------------------------------------------------------------------- */

static void test_create_finish(void **state)
{
	struct fx *f = *state;
	struct sbx_run_state *st = NULL;
	struct sbx_error err = { 0 };
	char id[SBX_RUN_ID_LEN + 1];
	_cleanup_free_ char *runs = sbx_xasprintf("%s/runs", f->state);
	_cleanup_free_ char *temp = NULL, *cg = NULL;
	json_t *o;

	sbx_run_id_new(id);
	temp = sbx_state_temp_path(id, "");
	cg = sbx_xasprintf("/sys/fs/cgroup/pids/sbx-%s", id);
	assert_int_equal(sbx_state_create(f->state, id, "alice", &st, &err), 0);
	assert_string_equal(sbx_state_run_id(st), id);
	assert_int_equal(sbx_state_add_temp(st, temp, &err), 0);
	assert_int_equal(sbx_state_add_cgroup(st, cg, &err), 0);
	assert_int_equal(sbx_state_save(st, &err), 0);

	o = read_state_json(f->state, id);
	assert_string_equal(json_string_value(json_object_get(o, "run_id")), id);
	assert_int_equal(json_integer_value(json_object_get(o, "broker_pid")), getpid());
	assert_int_equal(json_integer_value(json_object_get(o, "uid")), getuid());
	assert_string_equal(json_string_value(json_object_get(o, "principal")), "alice");
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "temps"), 0)), temp);
	assert_string_equal(json_string_value(json_array_get(json_object_get(o, "cgroups"), 0)), cg);
	assert_true(json_integer_value(json_object_get(o, "broker_start")) > 0);
	json_decref(o);

	/* The same id twice is an error, and leaves the first entry alone. */
	{
		struct sbx_run_state *dup = NULL;
		struct sbx_error e2 = { 0 };
		assert_int_equal(sbx_state_create(f->state, id, NULL, &dup, &e2), -1);
		assert_int_equal(count_entries(runs), 1);
	}

	sbx_state_finish(st);
	assert_int_equal(count_entries(runs), 0);
	sbx_state_finish(NULL);
}

static void test_bad_paths_refused(void **state)
{
	struct fx *f = *state;
	struct sbx_run_state *st = NULL;
	struct sbx_error err = { 0 };
	static const char id[] = "0123456789abcdef0123456789abcdef";
	const char *temps[] = {
		"/etc/passwd",
		"/tmp/sbx-run-fedcba9876543210fedcba9876543210",
		"/tmp/../etc/sbx-run-0123456789abcdef0123456789abcdef",
		"/tmp/sub/sbx-run-0123456789abcdef0123456789abcdef",
		"/tmp/sbx-run-0123456789abcdef0123456789abcdef/",
		"tmp/sbx-run-0123456789abcdef0123456789abcdef",
		"/tmp//sbx-run-0123456789abcdef0123456789abcdef",
		"/var/tmp/sbx-run-0123456789abcdef0123456789abcdef",
	};
	const char *cgroups[] = {
		"/sys/fs/cgroup/pids",
		"/sys/fs/cgroup/pids/sbx-fedcba9876543210fedcba9876543210",
		"/sys/fs/cgroup/pids/../sbx-0123456789abcdef0123456789abcdef",
		"/etc/sbx-0123456789abcdef0123456789abcdef",
		"/sys/fs/cgroup-0123456789abcdef0123456789abcdef",
	};

	assert_int_equal(sbx_state_create(f->state, id, NULL, &st, &err), 0);
	for (size_t i = 0; i < ARRAY_SIZE(temps); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(sbx_state_add_temp(st, temps[i], &err), -1);
	}
	for (size_t i = 0; i < ARRAY_SIZE(cgroups); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(sbx_state_add_cgroup(st, cgroups[i], &err), -1);
	}
	/* /tmp itself is allowed besides $TMPDIR, and a suffix. */
	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_state_add_temp(
				 st, "/tmp/sbx-run-0123456789abcdef0123456789abcdef-quarantine", &err),
			 0);
	sbx_state_finish(st);
}

/* --- gc --------------------------------------------------------------------------- */

/* A child that registers run @id, runs @fn (may be NULL) and _exits
 * without finishing: what a crash leaves. */
static void dead_run(const char *state_dir, const char *id, void (*fn)(struct sbx_run_state *))
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		struct sbx_run_state *st = NULL;
		struct sbx_error err = { 0 };

		if (sbx_state_create(state_dir, id, NULL, &st, &err) < 0)
			_exit(3);
		if (fn)
			fn(st);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static char *g_outside; /* a directory outside every temp dir */

/* The run's temp dir, with what a payload might leave in it. */
static void make_messy_temp(struct sbx_run_state *st)
{
	_cleanup_free_ char *t = sbx_state_temp_path(sbx_state_run_id(st), "");
	_cleanup_free_ char *cmd = NULL;
	struct sbx_error err = { 0 };

	if (sbx_state_add_temp(st, t, &err) < 0 || sbx_state_save(st, &err) < 0)
		_exit(4);
	cmd = sbx_xasprintf("set -e; cd '%s' && mkdir -p %s/a/b/c %s/locked/inner %s/ro && "
			    "echo x > %s/a/b/c/f && echo y > %s/locked/inner/g && touch %s/ro/h && "
			    "ln -s '%s' %s/escape && ln -s '%s' %s/a/b/escape2 && "
			    "mkfifo %s/fifo && chmod 000 %s/locked && chmod 500 %s/ro",
			    "/", t, t, t, t, t, t, g_outside, t, g_outside, t, t, t, t);
	if (system(cmd) != 0)
		_exit(5);
}

static void test_gc_reaps_dead_keeps_live(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *runs = sbx_xasprintf("%s/runs", f->state);
	_cleanup_free_ char *outside = sbx_xasprintf("%s/outside", f->root);
	_cleanup_free_ char *canary = sbx_xasprintf("%s/outside/canary", f->root);
	_cleanup_free_ char *dead_dir = NULL, *dead_temp = NULL, *live_dir = NULL;
	struct sbx_run_state *live = NULL;
	struct sbx_error err = { 0 };
	char dead_id[SBX_RUN_ID_LEN + 1], live_id[SBX_RUN_ID_LEN + 1];
	unsigned reaped = 99;

	assert_int_equal(mkdir(outside, 0700), 0);
	write_text(canary, "alive");
	g_outside = outside;

	sbx_run_id_new(dead_id);
	sbx_run_id_new(live_id);
	dead_run(f->state, dead_id, make_messy_temp);
	dead_dir = sbx_xasprintf("%s/%s", runs, dead_id);
	dead_temp = sbx_state_temp_path(dead_id, "");
	assert_true(exists(dead_dir));
	assert_true(exists(dead_temp));

	assert_int_equal(sbx_state_create(f->state, live_id, NULL, &live, &err), 0);
	live_dir = sbx_xasprintf("%s/%s", runs, live_id);

	assert_int_equal(sbx_state_gc(f->state, &reaped, &err), 0);
	assert_int_equal(reaped, 1);
	assert_false(exists(dead_dir));
	assert_false(exists(dead_temp));
	assert_true(exists(canary)); /* symlinks were removed, not followed */
	assert_true(exists(live_dir));

	/* Idempotent: nothing more to do. */
	assert_int_equal(sbx_state_gc(f->state, &reaped, &err), 0);
	assert_int_equal(reaped, 0);
	assert_true(exists(live_dir));

	sbx_state_finish(live);
	assert_int_equal(count_entries(runs), 0);
	g_outside = NULL;
}

static void test_gc_nothing(void **state)
{
	struct fx *f = *state;
	struct sbx_error err = { 0 };
	unsigned reaped = 99;

	/* No runs/ at all yet. */
	assert_int_equal(sbx_state_gc(f->state, &reaped, &err), 0);
	assert_int_equal(reaped, 0);
}

static void test_gc_tampered(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *outside = sbx_xasprintf("%s/outside", f->root);
	_cleanup_free_ char *canary = sbx_xasprintf("%s/outside/canary", f->root);
	_cleanup_free_ char *json_path = NULL, *text = NULL, *own = NULL, *other_tmp = NULL;
	struct sbx_error err = { 0 };
	char id[SBX_RUN_ID_LEN + 1], other[SBX_RUN_ID_LEN + 1];
	unsigned reaped = 0;
	json_t *o;

	assert_int_equal(mkdir(outside, 0700), 0);
	write_text(canary, "alive");
	sbx_run_id_new(id);
	sbx_run_id_new(other);
	dead_run(f->state, id, NULL);

	/* A live-looking temp dir of another run, and our own name as a
	 * symlink to the outside directory. */
	other_tmp = sbx_state_temp_path(other, "");
	assert_int_equal(mkdir(other_tmp, 0700), 0);
	own = sbx_state_temp_path(id, "");
	assert_int_equal(symlink(outside, own), 0);

	o = read_state_json(f->state, id);
	json_object_set_new(o, "temps",
			    json_pack("[s,s,s,s,s]", outside, canary, other_tmp, own,
				      "/tmp/../../etc"));
	json_object_set_new(o, "cgroups", json_pack("[s,s]", "/sys/fs/cgroup/pids", "/"));
	text = json_dumps(o, 0);
	json_decref(o);
	json_path = sbx_xasprintf("%s/runs/%s/state.json", f->state, id);
	write_text(json_path, text);

	assert_int_equal(sbx_state_gc(f->state, &reaped, &err), 0);
	assert_int_equal(reaped, 1);
	assert_true(exists(canary));
	assert_true(exists(outside));
	assert_true(exists(other_tmp));
	assert_true(exists("/sys/fs/cgroup"));
	/* The symlink named like ours goes; what it points at stays. */
	assert_false(exists(own));
}

static void test_gc_corrupt_entry(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *json_path = NULL, *entry = NULL, *stray = NULL;
	struct sbx_error err = { 0 };
	char id[SBX_RUN_ID_LEN + 1];
	unsigned reaped = 0;

	sbx_run_id_new(id);
	dead_run(f->state, id, NULL);
	json_path = sbx_xasprintf("%s/runs/%s/state.json", f->state, id);
	write_text(json_path, "{\"run_id\": 12");
	entry = sbx_xasprintf("%s/runs/%s", f->state, id);
	/* A name in runs/ that is not a run id is not ours: left alone. */
	stray = sbx_xasprintf("%s/runs/not-a-run", f->state);
	assert_int_equal(mkdir(stray, 0700), 0);

	assert_int_equal(sbx_state_gc(f->state, &reaped, &err), 0);
	assert_int_equal(reaped, 1);
	assert_false(exists(entry));
	assert_true(exists(stray));
}

static void test_gc_concurrent(void **state)
{
	struct fx *f = *state;
	_cleanup_free_ char *runs = sbx_xasprintf("%s/runs", f->state);
	enum { DEAD = 24, GCS = 3 };
	_cleanup_free_ char *outside = sbx_xasprintf("%s/outside", f->root);
	unsigned total = 0;
	pid_t pids[GCS];
	int fds[2];

	assert_int_equal(mkdir(outside, 0700), 0);
	g_outside = outside;
	for (int i = 0; i < DEAD; i++) {
		char id[SBX_RUN_ID_LEN + 1];
		sbx_run_id_new(id);
		dead_run(f->state, id, make_messy_temp);
	}
	assert_int_equal(count_entries(runs), DEAD);
	assert_int_equal(count_entries(f->tmp), DEAD);
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	for (int g = 0; g < GCS; g++) {
		pids[g] = fork();
		assert_true(pids[g] >= 0);
		if (pids[g] == 0) {
			struct sbx_error err = { 0 };
			unsigned reaped = 0;

			if (sbx_state_gc(f->state, &reaped, &err) < 0)
				_exit(1);
			(void)!write(fds[1], &reaped, sizeof(reaped));
			_exit(0);
		}
	}
	close(fds[1]);
	for (int g = 0; g < GCS; g++) {
		int status;
		unsigned r;

		assert_int_equal(waitpid(pids[g], &status, 0), pids[g]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(read(fds[0], &r, sizeof(r)), sizeof(r));
		total += r;
	}
	close(fds[0]);
	/* Each entry reaped exactly once, everything gone. */
	assert_int_equal(total, DEAD);
	assert_int_equal(count_entries(runs), 0);
	assert_int_equal(count_entries(f->tmp), 0);
	assert_int_equal(count_entries(outside), 0);
	g_outside = NULL;
}

/* --- gc against this host's cgroups ------------------------------------------ */

/* g_cgroups: the cgroup dirs a dead run records: on v1 its pids and
 * freezer cgroups under ours, on v2 one under ours; each with a nested
 * child. */

static char *own_cgroup(const char *controller)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[1024];
	char *r = NULL;

	assert_non_null(f);
	while (!r && fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *path;
		if (!ctl)
			continue;
		path = strchr(++ctl, ':');
		if (!path)
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (strcmp(ctl, controller) == 0)
			r = sbx_xstrdup(strcmp(path, "/") ? path : "");
	}
	fclose(f);
	return r;
}

static void make_cgroups_with_orphan(struct sbx_run_state *st)
{
	struct sbx_error err = { 0 };
	int go[2];
	pid_t pid;
	char ready;

	for (int i = 0; g_cgroups[i]; i++) {
		_cleanup_free_ char *nested = sbx_xasprintf("%s/payload", g_cgroups[i]);
		if (sbx_state_add_cgroup(st, g_cgroups[i], &err) < 0 || sbx_state_save(st, &err) < 0 ||
		    mkdir(g_cgroups[i], 0755) < 0 ||
		    mkdir(nested, 0755) < 0)
			_exit(6);
	}
	if (pipe2(go, O_CLOEXEC) < 0)
		_exit(7);
	/* The payload: moves itself into the nested cgroups, forks a
	 * second process there, and outlives this "sbx". */
	pid = fork();
	if (pid < 0)
		_exit(8);
	if (pid == 0) {
		/* What exec (close-on-exec) or the sandbox's close_range
		 * does: the run's lock must not outlive sbx in the payload. */
		close_range(3, (unsigned)go[1] - 1, 0);
		close_range((unsigned)go[1] + 1, ~0u, 0);
		for (int i = 0; g_cgroups[i]; i++) {
			_cleanup_free_ char *procs = sbx_xasprintf("%s/payload/cgroup.procs",
								  g_cgroups[i]);
			int fd = open(procs, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "0", 1) != 1)
				_exit(9);
			close(fd);
		}
		if (fork() == 0)
			pause();
		(void)!write(go[1], "r", 1);
		pause();
		_exit(0);
	}
	close(go[1]);
	if (read(go[0], &ready, 1) != 1)
		_exit(10);
}

/*
 * Against this host's real hierarchy, like the cgroup module's test: it
 * needs root or a delegated cgroup, and fails saying so rather than
 * skipping.
 */
static void test_gc_kills_cgroups(void **state)
{
	struct fx *f = *state;
	struct sbx_error err = { 0 };
	char id[SBX_RUN_ID_LEN + 1];
	unsigned reaped = 0;
	int n = 0, status, reaped_children = 0;
	pid_t pid;

	sbx_run_id_new(id);
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
		_cleanup_free_ char *own = own_cgroup("");
		assert_non_null(own);
		g_cgroups[n++] = sbx_xasprintf("/sys/fs/cgroup%s/sbx-%s", own, id);
	} else {
		_cleanup_free_ char *pids = own_cgroup("pids");
		_cleanup_free_ char *frz = own_cgroup("freezer");
		if (!pids || !frz)
			fail_msg("this test needs the v1 pids and freezer controllers");
		g_cgroups[n++] = sbx_xasprintf("/sys/fs/cgroup/pids%s/sbx-%s", pids, id);
		g_cgroups[n++] = sbx_xasprintf("/sys/fs/cgroup/freezer%s/sbx-%s", frz, id);
	}
	g_cgroups[n] = NULL;
	{
		_cleanup_free_ char *parent = sbx_xstrdup(g_cgroups[0]);
		*strrchr(parent, '/') = '\0';
		if (access(parent, W_OK) < 0) {
			if (geteuid() != 0)
				SBX_TEST_SKIP("needs root or a delegated cgroup: %s is not writable",
					      parent);
			fail_msg("creating a cgroup under %s needs root or delegation (euid %d)",
				 parent, (int)geteuid());
		}
	}

	/* Orphans come back to us, so we can see how they died. */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	dead_run(f->state, id, make_cgroups_with_orphan);
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *procs = sbx_xasprintf("%s/payload/cgroup.procs", g_cgroups[i]);
		_cleanup_close_ int fd = open(procs, O_RDONLY | O_CLOEXEC);
		char buf[256] = "";
		assert_true(fd >= 0);
		assert_true(read(fd, buf, sizeof(buf) - 1) > 0);
		assert_non_null(strchr(buf, '\n')); /* two tasks in there */
		assert_non_null(strchr(strchr(buf, '\n') + 1, '\n'));
	}

	assert_int_equal(sbx_state_gc(f->state, &reaped, &err), 0);
	assert_int_equal(reaped, 1);
	for (int i = 0; i < n; i++) {
		assert_false(exists(g_cgroups[i]));
		free(g_cgroups[i]);
		g_cgroups[i] = NULL;
	}
	/* Both payload processes died of SIGKILL. */
	while ((pid = waitpid(-1, &status, 0)) > 0) {
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), SIGKILL);
		reaped_children++;
	}
	assert_int_equal(reaped_children, 2);
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

/* --- cancel ------------------------------------------------------------------------ */

static volatile sig_atomic_t got_term;
static void on_term(int sig)
{
	got_term = 1;
}

/* A "broker" child: registers @id, reports ready, exits 42 on SIGTERM or
 * 0 after 10 s. */
static pid_t live_broker(const char *state_dir, const char *id)
{
	int fds[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sbx_run_state *st = NULL;
		struct sbx_error err = { 0 };
		struct sigaction sa = { .sa_handler = on_term };

		sigaction(SIGTERM, &sa, NULL);
		if (sbx_state_create(state_dir, id, NULL, &st, &err) < 0)
			_exit(3);
		(void)!write(fds[1], "r", 1);
		for (int i = 0; i < 1000 && !got_term; i++) {
			struct timespec ts = { 0, 10 * 1000000L };
			nanosleep(&ts, NULL);
		}
		if (got_term) {
			sbx_state_finish(st);
			_exit(42);
		}
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1);
	close(fds[0]);
	return pid;
}

static void test_cancel(void **state)
{
	struct fx *f = *state;
	struct sbx_error err = { 0 };
	char id[SBX_RUN_ID_LEN + 1];
	int status;
	pid_t pid;

	sbx_run_id_new(id);
	pid = live_broker(f->state, id);
	assert_int_equal(sbx_state_cancel(f->state, id, &err), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);

	/* Gone now: nothing to cancel. */
	assert_int_equal(sbx_state_cancel(f->state, id, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_FAILED);

	/* Dead but not reaped: its lock is free, so it is not live. */
	sbx_run_id_new(id);
	dead_run(f->state, id, NULL);
	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_state_cancel(f->state, id, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_FAILED);
	assert_non_null(strstr(err.msg, "no such live run"));

	memset(&err, 0, sizeof(err));
	assert_int_equal(sbx_state_cancel(f->state, "../../etc/passwd", &err), -1);
	assert_int_equal(err.code, SBX_EXIT_USAGE);
}

/* A recorded start time that does not match: the pid is someone else's
 * now, and must not be signalled. */
static void test_cancel_pid_reuse(void **state)
{
	struct fx *f = *state;
	struct sbx_error err = { 0 };
	char id[SBX_RUN_ID_LEN + 1];
	_cleanup_free_ char *json_path = NULL, *text = NULL;
	json_t *o;
	int status;
	pid_t pid;

	sbx_run_id_new(id);
	pid = live_broker(f->state, id);
	o = read_state_json(f->state, id);
	json_object_set_new(o, "broker_start",
			    json_integer(json_integer_value(json_object_get(o, "broker_start")) + 1));
	text = json_dumps(o, 0);
	json_decref(o);
	json_path = sbx_xasprintf("%s/runs/%s/state.json", f->state, id);
	write_text(json_path, text);

	assert_int_equal(sbx_state_cancel(f->state, id, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_FAILED);
	assert_non_null(strstr(err.msg, "another process"));
	/* Not signalled: stop it ourselves. */
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_ids),
		cmocka_unit_test(test_run_id_valid),
		cmocka_unit_test_setup_teardown(test_state_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_temp_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_finish, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_paths_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_reaps_dead_keeps_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_tampered, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_corrupt_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_concurrent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc_kills_cgroups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_pid_reuse, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
