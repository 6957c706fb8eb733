/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-seccomp-cache.c - a cached seccomp program is the compiled one, is
 * used only when every input matches, and a cache entry that is not the
 * caller's own private file, or has the wrong shape, is never loaded.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "sandbox.h"

static char dir[64];
static struct sbx_catalog cat;
static const struct sbx_seccomp_policy *pol;

static const char *srcdir(void)
{
	const char *s = getenv("SBX_SRCDIR");
	return s && *s ? s : SBX_SRCDIR;
}

static int setup(void **state)
{
	struct sbx_error err = { 0 };
	_cleanup_free_ char *p = sbx_xasprintf("%s/policy", srcdir());

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/sbx-test-sccache.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	if (sbx_catalog_load(&cat, p, &err) < 0) {
		sbx_error_print(&err);
		return -1;
	}
	pol = sbx_catalog_seccomp(&cat, "default");
	return pol ? 0 : -1;
}

static void rm_cache(void)
{
	_cleanup_free_ char *c = sbx_xasprintf("%s/seccomp", dir);
	DIR *d = opendir(c);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' || (de->d_name[1] && strcmp(de->d_name, "..")))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	rmdir(c);
}

static int teardown(void **state)
{
	(void)state;
	rm_cache();
	rmdir(dir);
	sbx_catalog_free(&cat);
	return 0;
}

/* The one entry in the cache dir (after one compile), as a path. */
static char *entry(void)
{
	_cleanup_free_ char *c = sbx_xasprintf("%s/seccomp", dir);
	DIR *d = opendir(c);
	struct dirent *de;
	char *found = NULL;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			free(found);
			found = sbx_xasprintf("%s/%s", c, de->d_name);
			n++;
		}
	closedir(d);
	assert_int_equal(n, 1);
	return found;
}

static void assert_same(const struct sock_fprog *a, const struct sock_fprog *b)
{
	assert_int_equal(a->len, b->len);
	assert_memory_equal(a->filter, b->filter, a->len * sizeof(struct sock_filter));
}

static void compile_ok(const struct sbx_seccomp_policy *p, const char *state,
		       struct sock_fprog *out)
{
	struct sbx_error err = { 0 };
	assert_int_equal(sbx_seccomp_compile_cached(p, state, out, &err), 0);
}

/* Flip one instruction of the stored program, so that a later load shows
 * whether the file was used (the flipped program) or not (the compiled). */
static void flip_stored(const char *path, size_t len)
{
	int fd = open(path, O_RDWR);
	struct sock_filter ins;
	off_t at;

	assert_true(fd >= 0);
	at = lseek(fd, 0, SEEK_END) - (off_t)(len * sizeof(ins));
	assert_int_equal(pread(fd, &ins, sizeof(ins), at), sizeof(ins));
	ins.k ^= 0x5a5a;
	assert_int_equal(pwrite(fd, &ins, sizeof(ins), at), sizeof(ins));
	close(fd);
}

static void test_hit_is_the_compiled_program(void **state)
{
	struct sock_fprog plain, first, second;
	struct sbx_error err = { 0 };

	(void)state;
	rm_cache();
	assert_int_equal(sbx_seccomp_compile(pol, &plain, &err), 0);
	compile_ok(pol, dir, &first);  /* miss: compiled and stored */
	assert_same(&plain, &first);
	_cleanup_free_ char *e = entry();
	compile_ok(pol, dir, &second); /* hit */
	assert_same(&plain, &second);

	/* That second one came from the file: change the file, and the next
	 * load returns the change (whoever can write the caller's private
	 * state dir can do this; see the trust note in seccomp-cache.c). */
	flip_stored(e, plain.len);
	struct sock_fprog third;
	compile_ok(pol, dir, &third);
	assert_int_equal(third.len, plain.len);
	assert_memory_not_equal(third.filter, plain.filter, plain.len * sizeof(struct sock_filter));
	sbx_seccomp_free(&third);

	/* Without a state dir: always compiled. */
	struct sock_fprog none;
	compile_ok(pol, NULL, &none);
	assert_same(&plain, &none);
	sbx_seccomp_free(&none);
	sbx_seccomp_free(&plain);
	sbx_seccomp_free(&first);
	sbx_seccomp_free(&second);
}

/* Another policy text, even one byte, is another entry: the entry of the
 * first is never loaded for the second (its name collides on purpose
 * here: the check is the whole key, not the name). */
static void test_other_policy_never_loads_entry(void **state)
{
	struct sbx_seccomp_policy other = *pol;
	struct sock_fprog a, b, plain;
	struct sbx_error err = { 0 };
	size_t klen_a, klen_b;

	(void)state;
	rm_cache();
	_cleanup_free_ char *raw = sbx_xmalloc(pol->raw_len + 1);
	memcpy(raw, pol->raw, pol->raw_len);
	raw[pol->raw_len] = '\n';
	other.raw = raw;
	other.raw_len = pol->raw_len + 1;
	_cleanup_free_ char *ka = sbx_seccomp_cache_key(pol, &klen_a);
	_cleanup_free_ char *kb = sbx_seccomp_cache_key(&other, &klen_b);
	assert_non_null(ka);
	assert_non_null(kb);
	assert_true(klen_a != klen_b || memcmp(ka, kb, klen_a) != 0);

	compile_ok(pol, dir, &a);
	_cleanup_free_ char *e = entry();
	flip_stored(e, a.len);
	/* Give the second policy's name to the first policy's (flipped)
	 * entry: a name match alone must not load it. */
	compile_ok(&other, dir, &b); /* stores its own entry */
	assert_int_equal(sbx_seccomp_compile(pol, &plain, &err), 0);
	assert_same(&plain, &b); /* same rules: same program */
	sbx_seccomp_free(&a);
	sbx_seccomp_free(&b);

	_cleanup_free_ char *c = sbx_xasprintf("%s/seccomp", dir);
	DIR *d = opendir(c);
	struct dirent *de;
	_cleanup_free_ char *bname = NULL;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && strcmp(strrchr(e, '/') + 1, de->d_name))
			bname = sbx_xasprintf("%s/%s", c, de->d_name);
	closedir(d);
	assert_non_null(bname);
	assert_int_equal(rename(e, bname), 0); /* first's flipped entry, second's name */
	compile_ok(&other, dir, &b);
	assert_same(&plain, &b);
	sbx_seccomp_free(&b);
	sbx_seccomp_free(&plain);
}

/* Entries that are not the caller's private regular file of the right
 * shape are not loaded, and are replaced by a good one. */
static void test_bad_entries_ignored(void **state)
{
	struct sock_fprog plain, got;
	struct sbx_error err = { 0 };

	(void)state;
	assert_int_equal(sbx_seccomp_compile(pol, &plain, &err), 0);

	/* Writable by others (and flipped, so a load would show). */
	rm_cache();
	compile_ok(pol, dir, &got);
	sbx_seccomp_free(&got);
	_cleanup_free_ char *e = entry();
	flip_stored(e, plain.len);
	assert_int_equal(chmod(e, 0666), 0);
	compile_ok(pol, dir, &got);
	assert_same(&plain, &got);
	sbx_seccomp_free(&got);
	struct stat st;
	assert_int_equal(stat(e, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600); /* replaced */

	/* Truncated. */
	assert_int_equal(truncate(e, st.st_size - 8), 0);
	compile_ok(pol, dir, &got);
	assert_same(&plain, &got);
	sbx_seccomp_free(&got);
	assert_int_equal(stat(e, &st), 0);

	/* A symlink at the name, to a good copy elsewhere: not followed. */
	_cleanup_free_ char *copy = sbx_xasprintf("%s/copy", dir);
	assert_int_equal(rename(e, copy), 0);
	flip_stored(copy, plain.len);
	assert_int_equal(symlink(copy, e), 0);
	compile_ok(pol, dir, &got);
	assert_same(&plain, &got);
	sbx_seccomp_free(&got);
	assert_int_equal(lstat(e, &st), 0);
	assert_true(S_ISREG(st.st_mode)); /* the link replaced, its target untouched */
	unlink(copy);

	/* A cache dir others may write: not used at all (compiled, nothing
	 * stored). */
	rm_cache();
	_cleanup_free_ char *c = sbx_xasprintf("%s/seccomp", dir);
	assert_int_equal(mkdir(c, 0777), 0);
	assert_int_equal(chmod(c, 0777), 0);
	compile_ok(pol, dir, &got);
	assert_same(&plain, &got);
	sbx_seccomp_free(&got);
	DIR *d = opendir(c);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	assert_int_equal(n, 0);

	/* A state dir that cannot hold it: still compiled. */
	compile_ok(pol, "/proc/self/no-such-dir", &got);
	assert_same(&plain, &got);
	sbx_seccomp_free(&got);
	sbx_seccomp_free(&plain);
}

static bool hook_known(void *ud, const char *raw, size_t len)
{
	return sbx_seccomp_cache_known(ud, raw, len);
}

static bool hook_yes(void *ud, const char *raw, size_t len)
{
	(void)ud, (void)raw, (void)len;
	return true;
}

/* sbx run's catalog: a policy is kept as bytes only when the cache holds
 * the program of exactly those bytes; such a policy compiles to the same
 * program, from the cache or, on a miss, after being parsed then; and a
 * policy without its rules never compiles into a filter. */
static void test_known_policy_loaded_as_bytes(void **state)
{
	_cleanup_free_ char *p = sbx_xasprintf("%s/policy", srcdir());
	struct sbx_catalog_hooks hooks = { .seccomp_known = hook_known, .ud = dir };
	struct sock_fprog plain, got;
	struct sbx_catalog lazy;
	struct sbx_error err = { 0 };
	const struct sbx_seccomp_policy *lp;

	(void)state;
	rm_cache();
	assert_int_equal(sbx_seccomp_compile(pol, &plain, &err), 0);
	/* Nothing cached: parsed as always. */
	assert_false(sbx_seccomp_cache_known(dir, pol->raw, pol->raw_len));
	assert_int_equal(sbx_catalog_load_with(&lazy, p, &hooks, &err), 0);
	lp = sbx_catalog_seccomp(&lazy, "default");
	assert_non_null(lp);
	assert_false(lp->rules_pending);
	assert_int_equal(lp->n_rules, pol->n_rules);
	sbx_catalog_free(&lazy);

	/* Cached: bytes only; the program is the cached one. */
	compile_ok(pol, dir, &got);
	sbx_seccomp_free(&got);
	assert_true(sbx_seccomp_cache_known(dir, pol->raw, pol->raw_len));
	assert_int_equal(sbx_catalog_load_with(&lazy, p, &hooks, &err), 0);
	lp = sbx_catalog_seccomp(&lazy, "default");
	assert_true(lp->rules_pending);
	assert_int_equal(lp->n_rules, 0);
	assert_int_equal(lp->raw_len, pol->raw_len);
	assert_memory_equal(lp->raw, pol->raw, pol->raw_len);
	compile_ok(lp, dir, &got);
	assert_same(&plain, &got);
	sbx_seccomp_free(&got);

	/* The cache gone: parsed now, compiled, the same program. */
	rm_cache();
	compile_ok(lp, dir, &got);
	assert_same(&plain, &got);
	sbx_seccomp_free(&got);
	compile_ok(lp, NULL, &got);
	assert_same(&plain, &got);
	sbx_seccomp_free(&got);

	/* Never an empty filter from a policy without its rules. */
	assert_int_equal(sbx_seccomp_compile(lp, &got, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_SOFTWARE);
	sbx_catalog_free(&lazy);
	sbx_seccomp_free(&plain);
}

/* Bytes that do not parse, vouched for by a (forged) hook, are refused
 * when they are needed, with the catalog's error for that file; the same
 * bytes without the hook make the whole catalog fail to load. */
static void test_pending_bad_policy_refused(void **state)
{
	struct sbx_seccomp_policy bad = { .name = "default", .file = "x/seccomp/default.json",
					  .raw = "{\"description\": \"d\", \"deny\": [{\"syscalls\": [\"nosuchcall\"]}]}",
					  .rules_pending = true };
	struct sbx_seccomp_policy out;
	struct sock_fprog got;
	struct sbx_error err = { 0 };

	(void)state;
	bad.raw_len = strlen(bad.raw);
	assert_int_equal(sbx_catalog_seccomp_parse(&bad, &out, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	assert_non_null(strstr(err.msg, "x/seccomp/default.json"));
	rm_cache();
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_seccomp_compile_cached(&bad, dir, &got, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);

	/* A catalog with that file: refused by plain loading, bytes only
	 * with a hook that says yes. */
	char cdir[64];
	snprintf(cdir, sizeof(cdir), "/tmp/sbx-test-sccat.XXXXXX");
	assert_non_null(mkdtemp(cdir));
	_cleanup_free_ char *cmd = sbx_xasprintf("cp -r '%s/policy/.' '%s/' && printf '%%s' '%s' > '%s/seccomp/default.json'",
						 srcdir(), cdir, bad.raw, cdir);
	assert_int_equal(system(cmd), 0);
	struct sbx_catalog c2;
	struct sbx_catalog_hooks yes = { .seccomp_known = hook_yes };
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_catalog_load(&c2, cdir, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_catalog_load_with(&c2, cdir, &yes, &err), 0);
	assert_true(sbx_catalog_seccomp(&c2, "default")->rules_pending);
	err = (struct sbx_error){ 0 };
	assert_int_equal(sbx_seccomp_compile_cached(sbx_catalog_seccomp(&c2, "default"), NULL, &got, &err), -1);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	sbx_catalog_free(&c2);
	free(cmd);
	cmd = sbx_xasprintf("rm -rf '%s'", cdir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_policy_loaded_as_bytes),
		cmocka_unit_test(test_pending_bad_policy_refused),
		cmocka_unit_test(test_hit_is_the_compiled_program),
		cmocka_unit_test(test_other_policy_never_loads_entry),
		cmocka_unit_test(test_bad_entries_ignored),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
