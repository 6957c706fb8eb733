/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-catalog.c - the shipped catalog loads and says what SPEC §4 asks;
 * broken catalogs written to a temporary directory fail with 69 naming
 * the file and the JSON path.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <ftw.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/stat.h>

#include "catalog.h"
#include "hostconfig.h"
#include "mediatype.h"
#include "sandbox.h"

static const char *srcdir(void)
{
	const char *s = getenv("SBX_SRCDIR");
	return s && *s ? s : SBX_SRCDIR;
}

static void test_shipped(void **state)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/policy", srcdir());
	struct sbx_catalog cat;
	struct sbx_error err = { 0 };
	const struct sbx_profile *py, *sh, *js;
	const struct sbx_seccomp_policy *sc;
	const struct sbx_netprofile *np;
	bool saw_tiocsti = false, saw_clone3 = false, saw_newuser = false;

	if (sbx_catalog_load(&cat, dir, &err) < 0)
		fail_msg("shipped catalog: %s", err.msg);
	assert_int_equal(cat.n_profiles, 3);
	py = sbx_catalog_profile(&cat, "python-analysis");
	sh = sbx_catalog_profile(&cat, "shell");
	js = sbx_catalog_profile(&cat, "node");
	assert_non_null(py);
	assert_non_null(sh);
	assert_non_null(js);
	assert_null(sbx_catalog_profile(&cat, "../profiles/shell"));
	assert_null(sbx_catalog_profile(&cat, "/usr/bin/python3"));
	assert_null(sbx_catalog_profile(&cat, "shell.json"));

	/* SPEC §4 floor for both profiles. */
	for (const struct sbx_profile *p = py; p; p = p == py ? sh : NULL) {
		assert_true(p->minimums.v[SBX_LIMIT_WALL_SECONDS] <= 1);
		assert_true(p->maximums.v[SBX_LIMIT_WALL_SECONDS] >= 3600);
		assert_true(p->minimums.v[SBX_LIMIT_MEMORY_MIB] <= 16);
		assert_true(p->maximums.v[SBX_LIMIT_MEMORY_MIB] >= 8192);
		assert_true(p->minimums.v[SBX_LIMIT_PIDS] <= 8);
		assert_true(p->maximums.v[SBX_LIMIT_PIDS] >= 1024);
		assert_true(p->minimums.v[SBX_LIMIT_WORKSPACE_MIB] <= 8);
		assert_true(p->maximums.v[SBX_LIMIT_WORKSPACE_MIB] >= 4096);
		assert_true(p->maximums.v[SBX_LIMIT_OUTPUT_FILES] >= 10000);
		assert_true(p->maximums.v[SBX_LIMIT_OUTPUT_BYTES] >= 1073741824);
		assert_int_equal(p->minimums.v[SBX_LIMIT_CPU_MILLICORES], 100);
		assert_int_equal(p->maximums.v[SBX_LIMIT_CPU_MILLICORES], 2000);
		char sha[65];
		assert_int_equal(sbx_catalog_sha256(p->raw, p->raw_len, sha), 0);
		assert_int_equal(strlen(sha), 64);
		assert_string_equal(p->seccomp, "default");
	}
	/* No kernel_quotas in the shipped profiles: the defaults. */
	for (const struct sbx_profile *p = py; p; p = p == py ? sh : NULL) {
		assert_int_equal(p->quotas.inotify_instances, 16);
		assert_int_equal(p->quotas.inotify_watches, 1024);
		assert_int_equal(p->quotas.fanotify_groups, 0);
		assert_int_equal(p->quotas.fanotify_marks, 0);
		assert_int_equal(p->quotas.sigpending, 128);
		assert_int_equal(p->quotas.msgqueue_bytes, 0);
		assert_int_equal(p->quotas.memlock_bytes, 65536);
	}
	/* What ordinary code needs (sbx-policy(5)): exec in the workspace,
	 * the thread-count variables and room for threads in the analysis
	 * profile; the shell keeps a noexec workspace. */
	assert_true(py->workspace_exec);
	/* python-analysis allows HTML only without active content. */
	assert_int_equal(sbx_strv_length(py->refuse_active), 1);
	assert_string_equal(py->refuse_active[0], "text/html");
	assert_int_equal(sbx_strv_length(sh->refuse_active), 0);
	assert_false(sh->workspace_exec);
	assert_int_equal(sbx_strv_length(py->thread_env), 3);
	assert_string_equal(py->thread_env[0], "OMP_NUM_THREADS");
	assert_int_equal(sbx_strv_length(sh->thread_env), 0);
	/* python-analysis prepares matplotlib's font cache; shell nothing. */
	assert_non_null(py->prepare);
	assert_string_equal(py->prepare->seed_dst, "/tmp/mpl");
	assert_null(sh->prepare);
	/* python-analysis opts in to a template with the README job's
	 * imports; the others stay cold. */
	assert_non_null(py->template);
	assert_string_equal(py->template->imports[0], "numpy");
	assert_string_equal(py->template->imports[1], "pandas");
	assert_string_equal(py->template->imports[2], "matplotlib");
	assert_string_equal(py->template->imports[3], "matplotlib.pyplot");
	assert_null(py->template->imports[4]);
	assert_null(py->template->reset);
	assert_string_equal(py->template->options, "I");
	assert_int_equal(py->template->argc, 2);
	assert_null(sh->template);
	assert_null(js->template);
	assert_int_equal(py->defaults.v[SBX_LIMIT_PIDS], 256);
	assert_int_equal(sh->defaults.v[SBX_LIMIT_PIDS], 128);
	assert_string_equal(py->argv[0], "/usr/bin/python3");
	assert_string_equal(py->code_file, "main.py");
	assert_int_equal(sbx_strv_length(py->allowed_outputs), 17);
	assert_string_equal(py->allowed_outputs[6], "image/svg+xml");
	/* xlsx and docx, what openpyxl and python-docx write; pptx only by a
	 * catalog's opt-in (sbx-policy(5)). */
	assert_true(sbx_media_type_in(py->allowed_outputs,
				      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"));
	assert_true(sbx_media_type_in(py->allowed_outputs,
				      "application/vnd.openxmlformats-officedocument.wordprocessingml.document"));
	assert_false(sbx_media_type_in(py->allowed_outputs,
				       "application/vnd.openxmlformats-officedocument.presentationml.presentation"));
	assert_string_equal(py->allowed_outputs[12], "text/html");
	/* HTML leaves only where a catalog says so (sbx-policy(5)): shell
	 * does not list it. */
	for (char **t = sh->allowed_outputs; *t; t++)
		assert_string_not_equal(*t, "text/html");
	assert_int_equal(sbx_strv_length(sh->allowed_outputs), 4);
	/* The second language (docs/profiles.md): node from /usr, a
	 * noexec workspace like the shell's (V8's JIT maps anonymous
	 * memory, never a file), room for its threads, a floor it can start
	 * in, no network but disabled, no HTML. */
	assert_string_equal(js->argv[0], "/usr/bin/node");
	assert_string_equal(js->code_file, "main.js");
	assert_string_equal(js->seccomp, "default");
	assert_false(js->workspace_exec);
	assert_int_equal(sbx_strv_length(js->thread_env), 0);
	assert_int_equal(js->defaults.v[SBX_LIMIT_PIDS], 256);
	assert_int_equal(js->minimums.v[SBX_LIMIT_MEMORY_MIB], 32);
	assert_true(js->maximums.v[SBX_LIMIT_MEMORY_MIB] >= 8192);
	assert_true(js->maximums.v[SBX_LIMIT_PIDS] >= 1024);
	assert_int_equal(sbx_strv_length(js->network_profiles), 1);
	assert_string_equal(js->network_profiles[0], "disabled");
	for (char **t = js->allowed_outputs; *t; t++)
		assert_string_not_equal(*t, "text/html");
	assert_string_equal(js->allowed_outputs[0], "application/json");
	assert_string_equal(js->allowed_outputs[3], "image/svg+xml");
	assert_string_equal(py->binds[0].src, "/usr");
	assert_string_equal(py->binds[0].dst, "/usr");
	assert_false(py->binds[0].optional);
	{
		bool mpl = false, agg = false;
		for (size_t i = 0; i < py->n_binds; i++)
			if (strcmp(py->binds[i].src, "/etc/matplotlibrc") == 0)
				mpl = py->binds[i].optional;
		for (size_t i = 0; py->env[i]; i++)
			if (strcmp(py->env[i], "MPLBACKEND=Agg") == 0)
				agg = true;
		assert_true(mpl);
		assert_true(agg);
	}

	np = sbx_catalog_network(&cat, "disabled");
	assert_non_null(np);
	assert_int_equal(np->kind, SBX_NET_DISABLED);
	np = sbx_catalog_network(&cat, "egress-example");
	assert_non_null(np);
	assert_int_equal(np->kind, SBX_NET_EGRESS);
	assert_true(np->n_allow >= 1);
	assert_int_equal(np->allow[0].ports[0], 443);

	sc = sbx_catalog_seccomp(&cat, "default");
	assert_non_null(sc);
	for (size_t i = 0; i < sc->n_rules; i++) {
		const struct sbx_seccomp_rule *r = &sc->rules[i];
		assert_true(strlen(r->why) > 20);
		if (strcmp(r->syscalls[0], "ioctl") == 0 && r->n_args == 1 && r->args[0].value == 0x5412) {
			/* The kernel truncates cmd to 32 bits: the rule must mask. */
			assert_int_equal(r->args[0].op, SBX_SC_OP_MASKED_EQ);
			assert_int_equal(r->args[0].mask, 0xffffffffu);
			assert_int_equal(r->args[0].index, 1);
			saw_tiocsti = true;
		}
		if (strcmp(r->syscalls[0], "clone3") == 0) {
			assert_int_equal(r->errnum, ENOSYS);
			saw_clone3 = true;
		}
		if (strcmp(r->syscalls[0], "unshare") == 0 && r->n_args == 1 &&
		    r->args[0].mask == 0x10000000 && r->args[0].value == 0x10000000)
			saw_newuser = true;
	}
	assert_true(saw_tiocsti);
	assert_true(saw_clone3);
	assert_true(saw_newuser);
	sbx_catalog_free(&cat);
}

/*
 * Every system call of the x86-64 table has a written reason in the
 * shipped default policy: it is in a deny rule (with the rule's "why"),
 * or in "allowed" (with the group's).  A call added to the kernel's table
 * (and so to libseccomp's) fails here until someone decides which.  And
 * no "allowed" name is denied whatever its arguments: the note would lie.
 */
static void test_every_syscall_has_a_reason(void **state)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/policy", srcdir());
	const struct sbx_seccomp_policy *sc;
	struct sbx_catalog cat;
	struct sbx_error err = { 0 };
	size_t seen = 0, missing = 0;

	(void)state;
	assert_int_equal(sbx_catalog_load(&cat, dir, &err), 0);
	sc = sbx_catalog_seccomp(&cat, "default");
	assert_non_null(sc);
	assert_non_null(sc->allowed);
	for (int nr = 0; nr < 1024; nr++) {
		_cleanup_free_ char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
		bool found = false;

		if (!name)
			continue;
		seen++;
		for (size_t k = 0; !found && sc->allowed[k]; k++)
			found = strcmp(sc->allowed[k], name) == 0;
		for (size_t r = 0; !found && r < sc->n_rules; r++)
			for (size_t k = 0; !found && sc->rules[r].syscalls[k]; k++)
				found = strcmp(sc->rules[r].syscalls[k], name) == 0;
		if (!found) {
			print_message("policy/seccomp/default.json: %s (x86-64 %d) has no reason\n", name, nr);
			missing++;
		}
	}
	for (size_t k = 0; sc->allowed[k]; k++)
		for (size_t r = 0; r < sc->n_rules; r++)
			for (size_t j = 0; sc->rules[r].n_args == 0 && sc->rules[r].syscalls[j]; j++)
				if (strcmp(sc->rules[r].syscalls[j], sc->allowed[k]) == 0) {
					print_message("policy/seccomp/default.json: %s is allowed and "
						      "denied whatever its arguments\n", sc->allowed[k]);
					missing++;
				}
	/* libseccomp's table, not an empty one. */
	assert_true(seen > 300);
	assert_int_equal(missing, 0);
	sbx_catalog_free(&cat);
}

/* Does a rule of @sc deny @name(@args), judged from the parsed rules the
 * way the filter would? */
static bool rule_matches(const struct sbx_seccomp_rule *r, const uint64_t *args)
{
	for (size_t k = 0; k < r->n_args; k++) {
		const struct sbx_seccomp_arg *a = &r->args[k];
		uint64_t arg = args[a->index];
		bool match = false;

		switch (a->op) {
		case SBX_SC_OP_EQ:
			match = arg == a->value;
			break;
		case SBX_SC_OP_NE:
			match = arg != a->value;
			break;
		case SBX_SC_OP_MASKED_EQ:
			match = (arg & a->mask) == a->value;
			break;
		case SBX_SC_OP_LT:
			match = arg < a->value;
			break;
		case SBX_SC_OP_GT:
			match = arg > a->value;
			break;
		}
		if (!match)
			return false;
	}
	return true;
}

static bool policy_denies(const struct sbx_seccomp_policy *sc, const char *name,
			  const uint64_t *args)
{
	for (size_t i = 0; i < sc->n_rules; i++)
		for (char **n = sc->rules[i].syscalls; *n; n++)
			if (strcmp(*n, name) == 0 && rule_matches(&sc->rules[i], args))
				return true;
	return false;
}

/* The personality rules must deny everything but 0 and 0xffffffff, in the
 * low 32 bits the kernel reads. */
static bool personality_denied(const struct sbx_seccomp_policy *sc, uint64_t arg)
{
	return policy_denies(sc, "personality", (const uint64_t[6]){ arg });
}

static void test_personality(void **state)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/policy", srcdir());
	struct sbx_catalog cat;
	struct sbx_error err = { 0 };
	const struct sbx_seccomp_policy *sc;
	static const uint64_t allowed[] = { 0, 0xffffffff, 0x100000000, 0xffffffffffffffff };
	static const uint64_t denied[] = { 0x8, 0x0040000, 0x0400000, 0x0400008, 0x00400ff,
					   0x80000000, 0x7fffffff, 0xfffffffe, 1, 0x1000000ff };

	assert_int_equal(sbx_catalog_load(&cat, dir, &err), 0);
	sc = sbx_catalog_seccomp(&cat, "default");
	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
		if (personality_denied(sc, allowed[i]))
			fail_msg("personality(%#llx) denied", (unsigned long long)allowed[i]);
	for (size_t i = 0; i < ARRAY_SIZE(denied); i++)
		if (!personality_denied(sc, denied[i]))
			fail_msg("personality(%#llx) allowed", (unsigned long long)denied[i]);
	/* every single bit and every value with one bit cleared */
	for (int b = 0; b < 32; b++) {
		assert_true(personality_denied(sc, 1ull << b));
		assert_true(personality_denied(sc, 0xffffffffull & ~(1ull << b)));
	}
	sbx_catalog_free(&cat);
}

/* ---- the compiled filter's verdicts ---------------------------------- */

/*
 * The filter libseccomp builds, run on a struct seccomp_data the way the
 * kernel runs it: what the catalog says is only half of the truth, the
 * other half is how libseccomp compiles "not_in", 64-bit comparisons and
 * masks.  An interpreter for the classic BPF that libseccomp emits, no
 * more; an instruction it does not know fails the test.
 */
static uint32_t bpf_run(const struct sock_fprog *prog, const struct seccomp_data *d)
{
	uint32_t A = 0, X = 0, mem[BPF_MEMWORDS] = { 0 };

	for (unsigned pc = 0; pc < prog->len; pc++) {
		const struct sock_filter *f = &prog->filter[pc];
		uint32_t k = f->k;

		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (k > sizeof(*d) - 4 || k % 4)
				fail_msg("bad load offset %u", k);
			memcpy(&A, (const char *)d + k, 4);
			break;
		case BPF_LD | BPF_MEM:
			A = mem[k];
			break;
		case BPF_LDX | BPF_MEM:
			X = mem[k];
			break;
		case BPF_ST:
			mem[k] = A;
			break;
		case BPF_STX:
			mem[k] = X;
			break;
		case BPF_MISC | BPF_TAX:
			X = A;
			break;
		case BPF_MISC | BPF_TXA:
			A = X;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			A &= k;
			break;
		case BPF_JMP | BPF_JA:
			pc += k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += A == k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += A > k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += A >= k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (A & k) ? f->jt : f->jf;
			break;
		case BPF_RET | BPF_K:
			return k;
		default:
			fail_msg("instruction %u: opcode %#x not interpreted", pc, f->code);
		}
	}
	fail_msg("fell off the end of the filter");
	return 0;
}

/* The errno the filter returns for @name(a0..a5), 0 if it allows it. */
static int verdict(const struct sock_fprog *prog, const char *name, uint64_t a0, uint64_t a1,
		   uint64_t a2)
{
	struct seccomp_data d = { .nr = seccomp_syscall_resolve_name(name), .arch = AUDIT_ARCH_X86_64,
				  .args = { a0, a1, a2 } };
	uint32_t r = bpf_run(prog, &d);

	if (r == SECCOMP_RET_ALLOW)
		return 0;
	if ((r & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO)
		fail_msg("%s: action %#x", name, r);
	return (int)(r & SECCOMP_RET_DATA);
}

static void compile_shipped(struct sbx_catalog *cat, struct sock_fprog *prog)
{
	_cleanup_free_ char *dir = sbx_xasprintf("%s/policy", srcdir());
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_catalog_load(cat, dir, &err), 0);
	if (sbx_seccomp_compile(sbx_catalog_seccomp(cat, "default"), prog, &err) < 0)
		fail_msg("%s", err.msg);
}

#define HI (UINT64_C(1) << 32)

/* socket/socketpair: AF_UNIX, AF_INET, AF_INET6, AF_NETLINK and nothing
 * else, whatever the high 32 bits say; netlink only NETLINK_ROUTE. */
static void test_socket_families(void **state)
{
	static const uint64_t odd[] = { HI | 40, HI | 1, HI | 2, HI | 16, UINT64_MAX,
					0xffffffff, 0x7fffffff, 46, 255, 65535 };
	struct sbx_catalog cat;
	struct sock_fprog prog;

#if !defined(__x86_64__)
	skip();
#endif
	compile_shipped(&cat, &prog);
	for (const char *const *sc = (const char *const[]){ "socket", "socketpair", NULL }; *sc; sc++) {
		for (uint64_t f = 0; f <= 300; f++) {
			bool allowed = f == 1 || f == 2 || f == 10 || f == 16;
			for (uint64_t type = 1; type <= 5; type++)
				if (verdict(&prog, *sc, f, type, 0) != (allowed ? 0 : EAFNOSUPPORT))
					fail_msg("%s(%llu, %llu, 0): wrong verdict", *sc,
						 (unsigned long long)f, (unsigned long long)type);
		}
		for (size_t i = 0; i < ARRAY_SIZE(odd); i++)
			if (verdict(&prog, *sc, odd[i], 1, 0) != EAFNOSUPPORT)
				fail_msg("%s(%#llx): not refused", *sc, (unsigned long long)odd[i]);
	}
	assert_int_equal(verdict(&prog, "socket", 16, 3, 0), 0);
	assert_int_equal(verdict(&prog, "socket", 16, 2, 0), 0);
	for (uint64_t p = 1; p <= 31; p++)
		assert_int_equal(verdict(&prog, "socket", 16, 3, p), EPROTONOSUPPORT);
	assert_int_equal(verdict(&prog, "socket", 16, 3, HI), EPROTONOSUPPORT);
	assert_int_equal(verdict(&prog, "socket", 16, 3, UINT64_MAX), EPROTONOSUPPORT);
	/* Protocols of the other families are theirs to judge. */
	assert_int_equal(verdict(&prog, "socket", 2, 1, 6), 0);
	assert_int_equal(verdict(&prog, "socket", 10, 2, 17), 0);
	sbx_seccomp_free(&prog);
	sbx_catalog_free(&cat);
}

/* Limits and scheduling of the init (pid 1) are out of reach; the
 * payload's own (pid 0, its children, its process group) are not. */
static void test_init_protection(void **state)
{
	static const char *const sched[] = { "sched_setscheduler", "sched_setparam", "sched_setattr",
					     "sched_setaffinity", NULL };
	struct sbx_catalog cat;
	struct sock_fprog prog;
	const uint64_t ptr = 0x7ffc0000;

#if !defined(__x86_64__)
	skip();
#endif
	compile_shipped(&cat, &prog);
	/* prlimit64(pid, resource, new, old) */
	assert_int_equal(verdict(&prog, "prlimit64", 0, 0, ptr), 0);
	assert_int_equal(verdict(&prog, "prlimit64", 0, 7, 0), 0);
	assert_int_equal(verdict(&prog, "prlimit64", 1, 0, 0), 0); /* reading */
	for (uint64_t pid = 1; pid <= 100; pid++)
		assert_int_equal(verdict(&prog, "prlimit64", pid, 0, ptr), EPERM);
	assert_int_equal(verdict(&prog, "prlimit64", HI | 1, 0, ptr), EPERM);
	assert_int_equal(verdict(&prog, "prlimit64", HI, 0, ptr), EPERM);
	assert_int_equal(verdict(&prog, "prlimit64", UINT64_MAX, 0, ptr), EPERM);
	assert_int_equal(verdict(&prog, "setrlimit", 0, ptr, 0), 0);
	/* setpriority(which, who, prio): PRIO_PROCESS 0, PGRP 1, USER 2 */
	for (uint64_t which = 0; which <= 1; which++) {
		assert_int_equal(verdict(&prog, "setpriority", which, 0, 10), 0);
		assert_int_equal(verdict(&prog, "setpriority", which, 2, 10), 0);
		assert_int_equal(verdict(&prog, "setpriority", which, 1, 10), EPERM);
		assert_int_equal(verdict(&prog, "setpriority", which, HI | 1, 10), EPERM);
		assert_int_equal(verdict(&prog, "setpriority", which | HI, 1, 10), EPERM);
	}
	assert_int_equal(verdict(&prog, "setpriority", 2, 0, 10), EPERM);
	assert_int_equal(verdict(&prog, "setpriority", 2, 1000, 10), EPERM);
	assert_int_equal(verdict(&prog, "setpriority", HI | 2, 0, 10), EPERM);
	/* ioprio_set(which, who, prio): WHO_PROCESS 1, PGRP 2, USER 3 */
	for (uint64_t which = 1; which <= 2; which++) {
		assert_int_equal(verdict(&prog, "ioprio_set", which, 0, 0), 0);
		assert_int_equal(verdict(&prog, "ioprio_set", which, 5, 0), 0);
		assert_int_equal(verdict(&prog, "ioprio_set", which, 1, 0), EPERM);
		assert_int_equal(verdict(&prog, "ioprio_set", which, HI | 1, 0), EPERM);
	}
	assert_int_equal(verdict(&prog, "ioprio_set", 3, 1000, 0), EPERM);
	assert_int_equal(verdict(&prog, "ioprio_set", HI | 3, 1000, 0), EPERM);
	for (const char *const *sc = sched; *sc; sc++) {
		assert_int_equal(verdict(&prog, *sc, 0, 0, 0), 0);
		assert_int_equal(verdict(&prog, *sc, 2, 0, 0), 0);
		assert_int_equal(verdict(&prog, *sc, 1, 0, 0), EPERM);
		assert_int_equal(verdict(&prog, *sc, HI | 1, 0, 0), EPERM);
	}
	/* The reading side stays open. */
	assert_int_equal(verdict(&prog, "getpriority", 0, 1, 0), 0);
	assert_int_equal(verdict(&prog, "sched_getaffinity", 1, 128, ptr), 0);
	/* The size of the whole filter: a bound, so that growth is a decision. */
	assert_in_range(prog.len, 100, 400);
	sbx_seccomp_free(&prog);
	sbx_catalog_free(&cat);
}

/* ---- broken catalogs --------------------------------------------------- */

static const char good_seccomp[] =
	"{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"bpf\"],\"errno\":\"EPERM\","
	"\"why\":\"kernel attack surface\"}]}";
static const char good_network[] = "{\"description\":\"d\",\"kind\":\"disabled\"}";

#define LIMITS(w) "{\"wall_seconds\":" #w ",\"soft_seconds\":5,\"grace_seconds\":1," \
	"\"memory_mib\":64,\"cpu_cores\":1,\"pids\":16,\"output_bytes\":1000," \
	"\"output_files\":4,\"workspace_mib\":16}"

/* A small valid profile; @extra_key/@extra_value add one member (to test
 * unknown or duplicate keys), @binds and @outputs replace those values. */
static char *profile(const char *extra_key, const char *extra_value, const char *seccomp,
		     const char *defaults_wall, const char *binds, const char *outputs)
{
	return sbx_xasprintf(
		"{\"description\":\"d\",\"argv\":[\"/bin/sh\",\"{code}\",\"{args}\"],"
		"\"code_file\":\"main.sh\",\"binds\":%s,"
		"\"symlinks\":[{\"path\":\"/bin\",\"target\":\"usr/bin\"}],"
		"\"env\":{\"PATH\":\"/usr/bin\"},\"env_allow\":[\"TZ\"],\"seccomp\":\"%s\","
		"\"defaults\":{\"wall_seconds\":%s,\"soft_seconds\":5,\"grace_seconds\":1,"
		"\"memory_mib\":64,\"cpu_cores\":1,\"pids\":16,\"output_bytes\":1000,"
		"\"output_files\":4,\"workspace_mib\":16},"
		"\"minimums\":" LIMITS(1) ",\"maximums\":" LIMITS(100) ","
		"\"input_bytes_max\":1000,\"stream_bytes_max\":1000,"
		"\"allowed_outputs\":%s,\"network_profiles\":[\"disabled\"]%s%s%s}",
		binds ? binds : "[\"/usr\"]", seccomp, defaults_wall,
		outputs ? outputs : "[\"text/plain\"]", extra_key ? ",\"" : "", extra_key ? extra_key : "",
		extra_key ? extra_value : "");
}

static void write_file(const char *dir, const char *name, const char *body)
{
	_cleanup_free_ char *path = sbx_xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	fputs(body, f);
	assert_int_equal(fclose(f), 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

struct broken {
	const char *name;
	const char *file;     /* relative to the catalog dir */
	const char *body;     /* NULL: generated profile below */
	const char *pkey, *pval, *seccomp, *wall;
	const char *message;  /* start of the message after "<dir>/"; NULL: loads */
	const char *binds, *outputs;
};

/* Most cases leave the trailing members out (NULL: the good default). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct broken broken[] = {
	{ "valid control", NULL, NULL, NULL, NULL, "strict", "10", NULL },
	{ "unknown key", NULL, NULL, "image\":", "\"x\"", "strict", "10",
	  "profiles/p.json: image: unknown key" },
	{ "kernel quotas ok", NULL, NULL, "kernel_quotas\":", "{\"fanotify_groups\":1,\"sigpending\":0}",
	  "strict", "10", NULL },
	{ "workspace_exec ok", NULL, NULL, "workspace_exec\":", "true", "strict", "10", NULL },
	{ "workspace_exec not a boolean", NULL, NULL, "workspace_exec\":", "\"yes\"", "strict",
	  "10", "profiles/p.json: workspace_exec: expected true or false" },
	{ "refuse_active_content ok", NULL, NULL, "refuse_active_content\":", "[\"text/html\"]",
	  "strict", "10", NULL, NULL, "[\"text/plain\",\"text/html\"]" },
	{ "refuse_active_content not allowed", NULL, NULL, "refuse_active_content\":",
	  "[\"text/html\"]", "strict", "10",
	  "profiles/p.json: refuse_active_content[0]: text/html is not in allowed_outputs" },
	{ "refuse_active_content of a type never flagged", NULL, NULL, "refuse_active_content\":",
	  "[\"text/plain\"]", "strict", "10",
	  "profiles/p.json: refuse_active_content[0]: expected text/html or text/markdown" },
#define PREP(x) "{\"argv\":[\"/bin/true\"],\"mount\":\"/run/p\"" x "}"
	{ "prepare ok", NULL, NULL, "prepare\":",
	  PREP(",\"env\":{\"A\":\"b\"},\"inputs\":[\"/usr/share\"],\"timeout_seconds\":100,"
	       "\"network_profile\":\"disabled\",\"seed\":{\"src\":\"mpl\",\"dst\":\"/tmp/mpl\"}"),
	  "strict", "10", NULL },
	{ "prepare unknown key", NULL, NULL, "prepare\":", PREP(",\"cmd\":1"), "strict", "10",
	  "profiles/p.json: prepare.cmd: unknown key" },
	{ "prepare without mount", NULL, NULL, "prepare\":", "{\"argv\":[\"/bin/true\"]}",
	  "strict", "10", "profiles/p.json: prepare.mount: missing required key" },
	{ "prepare relative program", NULL, NULL, "prepare\":",
	  "{\"argv\":[\"true\"],\"mount\":\"/run/p\"}", "strict", "10",
	  "profiles/p.json: prepare.argv[0]: expected an absolute path in normal form" },
	{ "prepare mount in /work", NULL, NULL, "prepare\":",
	  "{\"argv\":[\"/bin/true\"],\"mount\":\"/work/p\"}", "strict", "10",
	  "profiles/p.json: prepare.mount: /work/p is built by sbx itself" },
	{ "prepare mount in a bind", NULL, NULL, "prepare\":",
	  "{\"argv\":[\"/bin/true\"],\"mount\":\"/usr/p\"}", "strict", "10",
	  "profiles/p.json: prepare.mount: /usr/p overlaps the bind of /usr" },
	{ "prepare mount over a symlink", NULL, NULL, "prepare\":",
	  "{\"argv\":[\"/bin/true\"],\"mount\":\"/bin\"}", "strict", "10",
	  "profiles/p.json: prepare.mount: /bin overlaps the symlink /bin" },
	{ "prepare timeout above maximum", NULL, NULL, "prepare\":",
	  PREP(",\"timeout_seconds\":101"), "strict", "10",
	  "profiles/p.json: prepare.timeout_seconds: expected" },
	{ "prepare unlisted network", NULL, NULL, "prepare\":",
	  PREP(",\"network_profile\":\"egress\""), "strict", "10",
	  "profiles/p.json: prepare.network_profile: \"egress\" is not one of network_profiles" },
	{ "prepare seed path as src", NULL, NULL, "prepare\":",
	  PREP(",\"seed\":{\"src\":\"../x\",\"dst\":\"/tmp/x\"}"), "strict", "10",
	  "profiles/p.json: prepare.seed.src: expected a directory name" },
	{ "prepare seed outside the workspace", NULL, NULL, "prepare\":",
	  PREP(",\"seed\":{\"src\":\"x\",\"dst\":\"/etc/x\"}"), "strict", "10",
	  "profiles/p.json: prepare.seed.dst: expected a path below /tmp or /work" },
	{ "prepare seed into the outputs", NULL, NULL, "prepare\":",
	  PREP(",\"seed\":{\"src\":\"x\",\"dst\":\"/work/out/x\"}"), "strict", "10",
	  "profiles/p.json: prepare.seed.dst: expected a path below /tmp or /work" },
	{ "prepare seed over /tmp", NULL, NULL, "prepare\":",
	  PREP(",\"seed\":{\"src\":\"x\",\"dst\":\"/tmp\"}"), "strict", "10",
	  "profiles/p.json: prepare.seed.dst: expected a path below /tmp or /work" },
#undef PREP
/* A python profile with @argv and @tmpl as its "template". */
#define PYPROF(argv, tmpl)                                                                  \
	"{\"description\":\"d\",\"argv\":" argv ",\"code_file\":\"main.py\",\"binds\":[\"/usr\"]," \
	"\"seccomp\":\"strict\",\"defaults\":" LIMITS(10) ",\"minimums\":" LIMITS(1)           \
	",\"maximums\":" LIMITS(100) ",\"input_bytes_max\":1000,\"stream_bytes_max\":1000,"    \
	"\"allowed_outputs\":[\"text/plain\"],\"network_profiles\":[\"disabled\"],"            \
	"\"template\":" tmpl "}"
#define PYARGV "[\"/usr/bin/python3\",\"-I\",\"{code}\",\"{args}\"]"
#define TPL(x) "{\"imports\":[\"numpy\",\"matplotlib.pyplot\"]" x "}"
	{ "template ok", "profiles/p.json",
	  PYPROF("[\"/usr/bin/python3\",\"-I\",\"-B\",\"-s\",\"{code}\",\"{args}\"]",
		 TPL(",\"reset\":\"import sys\\nsys.flags\\n\"")) },
	{ "template python3.11 ok", "profiles/p.json",
	  PYPROF("[\"/usr/bin/python3.11\",\"{code}\",\"{args}\"]", TPL("")) },
	{ "template unknown key", "profiles/p.json", PYPROF(PYARGV, TPL(",\"modules\":[]")), NULL,
	  NULL, NULL, NULL, "profiles/p.json: template.modules: unknown key" },
	{ "template without imports", "profiles/p.json", PYPROF(PYARGV, "{}"), NULL, NULL, NULL,
	  NULL, "profiles/p.json: template.imports: missing required key" },
	{ "template empty imports", "profiles/p.json", PYPROF(PYARGV, "{\"imports\":[]}"), NULL,
	  NULL, NULL, NULL, "profiles/p.json: template.imports: expected at least one module" },
	{ "template import not a name", "profiles/p.json",
	  PYPROF(PYARGV, "{\"imports\":[\"os\",\"os; import x\"]}"), NULL, NULL, NULL, NULL,
	  "profiles/p.json: template.imports[1]: expected a module name" },
	{ "template relative import", "profiles/p.json",
	  PYPROF(PYARGV, "{\"imports\":[\".x\"]}"), NULL, NULL, NULL, NULL,
	  "profiles/p.json: template.imports[0]: expected a module name" },
	{ "template import trailing dot", "profiles/p.json",
	  PYPROF(PYARGV, "{\"imports\":[\"a.\"]}"), NULL, NULL, NULL, NULL,
	  "profiles/p.json: template.imports[0]: expected a module name" },
	{ "template import digit first", "profiles/p.json",
	  PYPROF(PYARGV, "{\"imports\":[\"a.2b\"]}"), NULL, NULL, NULL, NULL,
	  "profiles/p.json: template.imports[0]: expected a module name" },
	{ "template duplicate import", "profiles/p.json",
	  PYPROF(PYARGV, "{\"imports\":[\"numpy\",\"numpy\"]}"), NULL, NULL, NULL, NULL,
	  "profiles/p.json: template.imports" },
	{ "template warm ok", "profiles/p.json",
	  PYPROF(PYARGV, TPL(",\"warm\":\"import numpy\\nnumpy.zeros(1)\\n\"")) },
	{ "template warm not a string", "profiles/p.json", PYPROF(PYARGV, TPL(",\"warm\":[]")),
	  NULL, NULL, NULL, NULL, "profiles/p.json: template.warm: expected a string" },
	{ "template reset not a string", "profiles/p.json", PYPROF(PYARGV, TPL(",\"reset\":1")),
	  NULL, NULL, NULL, NULL, "profiles/p.json: template.reset: expected a string" },
	{ "template reset with NUL", "profiles/p.json",
	  PYPROF(PYARGV, TPL(",\"reset\":\"x\\u0000y\"")), NULL, NULL, NULL, NULL,
	  /* jansson refuses the NUL itself: the source reaches the
	   * template whole or not at all. */
	  "profiles/p.json: line 1 column" },
	{ "template on a shell", "profiles/p.json",
	  PYPROF("[\"/bin/sh\",\"{code}\",\"{args}\"]", TPL("")), NULL, NULL, NULL, NULL,
	  "profiles/p.json: template: a template needs argv[0] to be a python3 interpreter, not /bin/sh" },
	{ "template on python2", "profiles/p.json",
	  PYPROF("[\"/usr/bin/python2.7\",\"{code}\",\"{args}\"]", TPL("")), NULL, NULL, NULL,
	  NULL, "profiles/p.json: template: a template needs argv[0] to be a python3" },
	{ "template on python3-config", "profiles/p.json",
	  PYPROF("[\"/usr/bin/python3-config\",\"{code}\",\"{args}\"]", TPL("")), NULL, NULL,
	  NULL, NULL, "profiles/p.json: template: a template needs argv[0] to be a python3" },
	{ "template with -c", "profiles/p.json",
	  PYPROF("[\"/usr/bin/python3\",\"-c\",\"{code}\",\"{args}\"]", TPL("")), NULL, NULL,
	  NULL, NULL,
	  "profiles/p.json: argv[1]: a profile with a template allows only the options -I, -B, -E, -s, -S and -u before \"{code}\", got \"-c\"" },
	{ "template with -X", "profiles/p.json",
	  PYPROF("[\"/usr/bin/python3\",\"-X\",\"dev\",\"{code}\",\"{args}\"]", TPL("")), NULL,
	  NULL, NULL, NULL, "profiles/p.json: argv[1]: a profile with a template allows only" },
	{ "template with joined options", "profiles/p.json",
	  PYPROF("[\"/usr/bin/python3\",\"-IB\",\"{code}\",\"{args}\"]", TPL("")), NULL, NULL,
	  NULL, NULL, "profiles/p.json: argv[1]: a profile with a template allows only" },
	{ "template with an option twice", "profiles/p.json",
	  PYPROF("[\"/usr/bin/python3\",\"-I\",\"-I\",\"{code}\",\"{args}\"]", TPL("")), NULL,
	  NULL, NULL, NULL, "profiles/p.json: argv[2]: -I is given twice" },
	{ "template without {args}", "profiles/p.json",
	  PYPROF("[\"/usr/bin/python3\",\"{code}\"]", TPL("")), NULL, NULL, NULL, NULL,
	  "profiles/p.json: argv: a profile with a template needs \"{code}\", \"{args}\"" },
	{ "template with a word after {args}", "profiles/p.json",
	  PYPROF("[\"/usr/bin/python3\",\"{code}\",\"{args}\",\"x\"]", TPL("")), NULL, NULL,
	  NULL, NULL, "profiles/p.json: argv: a profile with a template needs" },
#undef TPL
#undef PYARGV
#undef PYPROF
	{ "thread_env ok", NULL, NULL, "thread_env\":", "[\"OMP_NUM_THREADS\"]", "strict", "10",
	  NULL },
	{ "thread_env LD_ name", NULL, NULL, "thread_env\":", "[\"LD_PRELOAD\"]", "strict", "10",
	  "profiles/p.json: thread_env[0]: expected a variable name not starting with LD_" },
	{ "thread_env duplicate", NULL, NULL, "thread_env\":", "[\"A\",\"A\"]", "strict", "10",
	  "profiles/p.json: thread_env" },
	{ "kernel quotas unknown key", NULL, NULL, "kernel_quotas\":", "{\"inotify\":1}", "strict",
	  "10", "profiles/p.json: kernel_quotas.inotify: unknown key" },
	{ "kernel quotas above bound", NULL, NULL, "kernel_quotas\":", "{\"sigpending\":65537}",
	  "strict", "10",
	  "profiles/p.json: kernel_quotas.sigpending: expected a non-negative integer of at most 65536, got 65537" },
	{ "kernel quotas negative", NULL, NULL, "kernel_quotas\":", "{\"memlock_bytes\":-1}",
	  "strict", "10",
	  "profiles/p.json: kernel_quotas.memlock_bytes: expected a non-negative integer" },
	{ "kernel quotas not an object", NULL, NULL, "kernel_quotas\":", "16", "strict", "10",
	  "profiles/p.json: kernel_quotas: expected an object" },
	{ "dangling seccomp", NULL, NULL, NULL, NULL, "missing", "10",
	  "profiles/p.json: seccomp: no seccomp policy \"missing\"" },
	{ "default above maximum", NULL, NULL, NULL, NULL, "strict", "101",
	  "profiles/p.json: defaults.wall_seconds: 101 is above maximums.wall_seconds (100)" },
	{ "default below minimum", NULL, NULL, NULL, NULL, "strict", "0",
	  "profiles/p.json: defaults.wall_seconds: expected a positive integer, got 0" },
	{ "relative bind", NULL, NULL, NULL, NULL, NULL, NULL,
	  "profiles/p.json: binds[0]: expected an absolute path in normal form, got \"usr\"",
	  "[\"usr\"]" },
	{ "dotdot bind", NULL, NULL, NULL, NULL, NULL, NULL,
	  "profiles/p.json: binds[0].src: expected an absolute path", "[{\"src\":\"/usr/../etc\"}]" },
	{ "bind over /work", NULL, NULL, NULL, NULL, NULL, NULL,
	  "profiles/p.json: binds[0].dst: /work/x is built by sbx itself",
	  "[{\"src\":\"/srv\",\"dst\":\"/work/x\"}]" },
	{ "bind unknown key", NULL, NULL, NULL, NULL, NULL, NULL,
	  "profiles/p.json: binds[0].ro: unknown key", "[{\"src\":\"/srv\",\"ro\":true}]" },
	{ "optional bind ok", NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	  "[\"/usr\",{\"src\":\"/etc/x\",\"dst\":\"/opt/x\",\"optional\":true}]" },
	{ "duplicate json key", NULL, NULL, "seccomp\":", "\"strict\"", NULL, NULL,
	  "profiles/p.json: line 1 column" },
	{ "unknown output type", NULL, NULL, NULL, NULL, NULL, NULL,
	  "profiles/p.json: allowed_outputs[0]: expected a media type sbx validates, got "
	  "\"application/x-tar\"",
	  NULL, "[\"application/x-tar\"]" },
	{ "bad syscall name", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"bpf\",\"frobnicate\"],"
	  "\"errno\":\"EPERM\",\"why\":\"typo catcher\"}]}",
	  NULL, NULL, NULL, NULL,
	  "seccomp/strict.json: deny[0].syscalls[1]: expected a system call name libseccomp knows, got \"frobnicate\"" },
	{ "seccomp without why", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"bpf\"],\"errno\":\"EPERM\"}]}", NULL, NULL,
	  NULL, NULL, "seccomp/strict.json: deny[0].why: missing required key" },
	{ "seccomp bad errno", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"bpf\"],\"errno\":\"EWHAT\",\"why\":\"because so\"}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].errno: expected an errno name" },
	{ "seccomp same arg twice", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"personality\"],\"errno\":\"EPERM\","
	  "\"why\":\"because so\",\"args\":[{\"index\":0,\"op\":\"ne\",\"value\":0},"
	  "{\"index\":0,\"op\":\"ne\",\"value\":\"0xffffffff\"}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[1]: argument 0 is compared twice" },
	{ "seccomp value outside mask", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"ioctl\"],\"errno\":\"EPERM\","
	  "\"why\":\"because so\",\"args\":[{\"index\":1,\"op\":\"masked_eq\",\"mask\":\"0xff\",\"value\":\"0x5412\"}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].value: has bits outside the mask" },
	{ "seccomp bad hex", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"ioctl\"],\"errno\":\"EPERM\","
	  "\"why\":\"because so\",\"args\":[{\"index\":1,\"op\":\"eq\",\"value\":\"0xfffffffffffffffff\"}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].value: expected a non-negative integer or a string" },
	{ "allowed control", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EPERM\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"eq\",\"value\":40}]}],"
	  "\"allowed\":[{\"syscalls\":[\"read\",\"socket\"],\"why\":\"because so\"}]}",
	  NULL, NULL, NULL, NULL, NULL },
	{ "allowed and denied loads", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"bpf\"],\"errno\":\"EPERM\",\"why\":\"because so\"}],"
	  "\"allowed\":[{\"syscalls\":[\"read\",\"bpf\"],\"why\":\"because so\"}]}",
	  NULL, NULL, NULL, NULL, NULL },
	{ "allowed twice", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[],\"allowed\":[{\"syscalls\":[\"read\"],\"why\":\"because so\"},"
	  "{\"syscalls\":[\"write\",\"read\"],\"why\":\"because so\"}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: allowed[1].syscalls[1]: \"read\" is listed as allowed twice" },
	{ "allowed unknown name", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[],\"allowed\":[{\"syscalls\":[\"frobnicate\"],\"why\":\"because so\"}]}",
	  NULL, NULL, NULL, NULL,
	  "seccomp/strict.json: allowed[0].syscalls[0]: expected a system call name libseccomp knows" },
	{ "allowed without why", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[],\"allowed\":[{\"syscalls\":[\"read\"]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: allowed[0].why: missing required key" },
	{ "not_in control", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\",\"values\":[1,2,\"0xa\",16]},{\"index\":2,\"op\":\"eq\",\"value\":0}]}]}",
	  NULL, NULL, NULL, NULL, NULL },
	{ "not_in in any_args", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"any_args\":[[{\"index\":0,\"op\":\"not_in\",\"values\":[1]}],[{\"index\":1,\"op\":\"eq\",\"value\":3}]]}]}",
	  NULL, NULL, NULL, NULL, NULL },
	{ "not_in with value", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\",\"values\":[1],\"value\":1}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].value: not allowed with op \"not_in\"" },
	{ "not_in with mask", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\",\"values\":[1],\"mask\":1}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].mask: not allowed with op \"not_in\"" },
	{ "not_in without values", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\"}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].values: missing required key" },
	{ "values with eq", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"eq\",\"value\":1,\"values\":[1]}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].values: only allowed with op \"not_in\"" },
	{ "not_in empty", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\",\"values\":[]}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].values: expected at least one value" },
	{ "not_in not a list", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\",\"values\":1}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].values: expected an array" },
	{ "not_in duplicate", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\",\"values\":[2,1,\"0x2\"]}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].values[2]: 2 is listed twice" },
	{ "not_in bad value", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\",\"values\":[-1]}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].values[0]: expected a non-negative integer or a string" },
	{ "not_in too long", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\",\"values\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32]}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[0].values: expected at most 32 entries, got 33" },
	{ "two not_in", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\",\"values\":[1]},{\"index\":2,\"op\":\"not_in\",\"values\":[0]}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[1]: only one \"not_in\" condition per rule" },
	{ "not_in and eq on one argument", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\",\"values\":[1]},{\"index\":0,\"op\":\"eq\",\"value\":5}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args[1]: argument 0 is compared twice" },
	{ "not_in expands too far", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"args\":[{\"index\":0,\"op\":\"not_in\",\"values\":[1,\"0x8000000000000000\",\"0xc000000000000001\"]}]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].args: the \"not_in\" list expands into more than 64 rules" },
	{ "not_in expands too far in any_args", "seccomp/strict.json",
	  "{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],\"errno\":\"EAFNOSUPPORT\",\"why\":\"because so\","
	  "\"any_args\":[[{\"index\":0,\"op\":\"eq\",\"value\":1}],[{\"index\":0,\"op\":\"not_in\",\"values\":[1,\"0x8000000000000000\",\"0xc000000000000001\"]}]]}]}",
	  NULL, NULL, NULL, NULL, "seccomp/strict.json: deny[0].any_args[1]: the \"not_in\" list expands into more than 64 rules" },
	/* Fetch profiles: the egress allowlist's parser, the fetch keys. */
#define FETCH(extra) "{\"description\":\"d\",\"kind\":\"fetch\",\"allow\":[{\"host\":\"example.org\",\"ports\":[443]}]" extra "}"
	{ "fetch valid", "fetch/f.json",
	  FETCH(",\"schemes\":[\"https\",\"http\"],\"max_bytes\":100,\"max_file_bytes\":50,"
		"\"timeout_seconds\":5,\"max_redirects\":0,\"ca_file\":\"/etc/ssl/x.pem\""),
	  NULL, NULL, NULL, NULL, NULL },
	{ "fetch kind", "fetch/f.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[]}", NULL, NULL, NULL, NULL,
	  "fetch/f.json: kind: expected \"fetch\"" },
	{ "fetch no allow", "fetch/f.json", "{\"description\":\"d\",\"kind\":\"fetch\"}", NULL, NULL,
	  NULL, NULL, "fetch/f.json: allow: missing required key" },
	{ "fetch http alone", "fetch/f.json", FETCH(",\"schemes\":[\"http\"]"), NULL, NULL, NULL, NULL,
	  "fetch/f.json: schemes: expected \"https\" among them" },
	{ "fetch ftp", "fetch/f.json", FETCH(",\"schemes\":[\"https\",\"ftp\"]"), NULL, NULL, NULL,
	  NULL, "fetch/f.json: schemes[1]: expected \"https\" or \"http\"" },
	{ "fetch egress key", "fetch/f.json", FETCH(",\"connect\":true"), NULL, NULL, NULL, NULL,
	  "fetch/f.json: connect: unknown key" },
	{ "fetch file above total", "fetch/f.json", FETCH(",\"max_bytes\":100,\"max_file_bytes\":101"),
	  NULL, NULL, NULL, NULL, "fetch/f.json: max_file_bytes: expected a positive integer of at most 100" },
	{ "fetch redirects", "fetch/f.json", FETCH(",\"max_redirects\":21"), NULL, NULL, NULL, NULL,
	  "fetch/f.json: max_redirects: expected an integer from 0 to 20" },
	{ "fetch relative ca", "fetch/f.json", FETCH(",\"ca_file\":\"ca.pem\""), NULL, NULL, NULL, NULL,
	  "fetch/f.json: ca_file: expected an absolute path" },
	{ "fetch_profiles dangling", NULL, NULL, "fetch_profiles\":", "[\"nope\"]", "strict", "10",
	  "profiles/p.json: fetch_profiles[0]: no fetch profile \"nope\"" },
#undef FETCH
	{ "bad file name", "profiles/Bad.json", "{}", NULL, NULL, NULL, NULL,
	  "profiles/Bad.json: name \"Bad\" does not match" },
	{ "stray file", "network/notes.txt", "x", NULL, NULL, NULL, NULL,
	  "network/notes.txt: not a catalog file" },
	{ "egress on disabled", "network/disabled.json",
	  "{\"description\":\"d\",\"kind\":\"disabled\",\"allow\":[]}", NULL, NULL, NULL, NULL,
	  "network/disabled.json: allow: only allowed with kind \"egress\"" },
	{ "egress bad host", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[{\"host\":\"Exa_mple.com\",\"ports\":[443]}]}",
	  NULL, NULL, NULL, NULL, "network/web.json: allow[0].host: expected a lowercase host name" },
	{ "egress bad port", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[{\"host\":\"example.com\",\"ports\":[70000]}]}",
	  NULL, NULL, NULL, NULL, "network/web.json: allow[0].ports[0]: expected a positive integer of at most 65535, got 70000" },
	{ "egress bad cidr", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[],\"allow_cidrs\":[\"10.0.0.0/33\"]}",
	  NULL, NULL, NULL, NULL, "network/web.json: allow_cidrs[0]: expected an address/prefix" },
	{ "connect not bool", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[],\"connect\":\"yes\"}",
	  NULL, NULL, NULL, NULL, "network/web.json: connect: expected true, false or an array of ports" },
	{ "connect no ports", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[],\"connect\":[]}",
	  NULL, NULL, NULL, NULL, "network/web.json: connect: expected at least one port" },
	{ "connect port twice", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[],\"connect\":[443,8443,443]}",
	  NULL, NULL, NULL, NULL, "network/web.json: connect[2]: port listed twice" },
	{ "connect port zero", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[],\"connect\":[0]}",
	  NULL, NULL, NULL, NULL, "network/web.json: connect[0]: expected a positive integer" },
	{ "connect ports ok", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[],\"connect\":[443]}",
	  NULL, NULL, NULL, NULL, NULL },
	{ "connect false ok", "network/web.json",
	  "{\"description\":\"d\",\"kind\":\"egress\",\"allow\":[],\"connect\":false}",
	  NULL, NULL, NULL, NULL, NULL },
	{ "connect on disabled", "network/disabled.json",
	  "{\"description\":\"d\",\"kind\":\"disabled\",\"connect\":false}", NULL, NULL, NULL, NULL,
	  "network/disabled.json: connect: only allowed with kind \"egress\"" },
};
#pragma GCC diagnostic pop

static void test_broken(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(broken); i++) {
		const struct broken *b = &broken[i];
		char dir[] = "/tmp/sbx-test-catalog-XXXXXX";
		_cleanup_free_ char *prof = NULL, *sub = NULL, *want = NULL;
		struct sbx_catalog cat;
		struct sbx_error err = { 0 };
		int r;

		assert_non_null(mkdtemp(dir));
		/* fetch/ empty unless a case writes there: an empty one loads. */
		for (const char *const *s =
			     (const char *const[]){ "profiles", "network", "seccomp", "fetch", NULL };
		     *s; s++) {
			_cleanup_free_ char *p = sbx_xasprintf("%s/%s", dir, *s);
			assert_int_equal(mkdir(p, 0700), 0);
		}
		write_file(dir, "seccomp/strict.json", good_seccomp);
		write_file(dir, "network/disabled.json", good_network);
		if (b->body) {
			prof = profile(NULL, NULL, "strict", "10", NULL, NULL);
			write_file(dir, "profiles/p.json", prof);
			write_file(dir, b->file, b->body);
		} else {
			prof = profile(b->pkey, b->pval, b->seccomp ? b->seccomp : "strict",
				       b->wall ? b->wall : "10", b->binds, b->outputs);
			write_file(dir, "profiles/p.json", prof);
		}

		r = sbx_catalog_load(&cat, dir, &err);
		if (!b->message) {
			if (r != 0)
				fail_msg("%s: %s", b->name, err.msg);
			assert_int_equal(cat.n_profiles, 1);
			sbx_catalog_free(&cat);
		} else {
			if (r == 0)
				fail_msg("%s: loaded", b->name);
			assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
			/* Nothing of a broken catalog is left behind. */
			assert_null(cat.profiles);
			assert_int_equal(cat.n_seccomp, 0);
			want = sbx_xasprintf("%s/%s", dir, b->message);
			if (strncmp(err.msg, want, strlen(want)) != 0)
				fail_msg("%s: message \"%s\" does not start \"%s\"", b->name, err.msg, want);
		}
		assert_int_equal(nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS), 0);
	}
}

/* A catalog with a valid profile and @seccomp as seccomp/strict.json. */
static void load_with_seccomp(struct sbx_catalog *cat, const char *seccomp)
{
	char dir[] = "/tmp/sbx-test-catalog-XXXXXX";
	_cleanup_free_ char *prof = profile(NULL, NULL, "strict", "10", NULL, NULL);
	struct sbx_error err = { 0 };

	assert_non_null(mkdtemp(dir));
	for (const char *const *s = (const char *const[]){ "profiles", "network", "seccomp", NULL };
	     *s; s++) {
		_cleanup_free_ char *p = sbx_xasprintf("%s/%s", dir, *s);
		assert_int_equal(mkdir(p, 0700), 0);
	}
	write_file(dir, "seccomp/strict.json", seccomp);
	write_file(dir, "network/disabled.json", good_network);
	write_file(dir, "profiles/p.json", prof);
	if (sbx_catalog_load(cat, dir, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS), 0);
}

/*
 * "not_in" expands into rules that deny exactly the values outside the
 * list, judged both from the parsed rules and by the compiled filter, for
 * values around every listed one, at both ends of the 64-bit range and
 * with high bits set; combined with a plain condition on another
 * argument, which must still hold.  The rule counts pin the expansion's
 * size: a longer one is a bigger filter on every run.
 */
static void test_not_in_expansion(void **state)
{
	static const struct {
		const char *values;
		size_t n;
		uint64_t v[6];
		size_t rules;
	} cases[] = {
		{ "[1, 2, 10, 16]", 4, { 1, 2, 10, 16 }, 7 },
		{ "[0]", 1, { 0 }, 1 },
		{ "[0, 1, 2]", 3, { 0, 1, 2 }, 1 },
		{ "[3, 4]", 2, { 3, 4 }, 2 },
		{ "[\"0xffffffffffffffff\"]", 1, { UINT64_MAX }, 1 },
		{ "[\"0xfffffffffffffffe\"]", 1, { UINT64_MAX - 1 }, 2 },
		{ "[1000, 1, 5, 3, 100]", 5, { 1, 3, 5, 100, 1000 }, 21 },
	};

	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		_cleanup_free_ char *body = sbx_xasprintf(
			"{\"description\":\"d\",\"deny\":[{\"syscalls\":[\"socket\"],"
			"\"errno\":\"EAFNOSUPPORT\",\"why\":\"an allowlist\",\"args\":["
			"{\"index\":2,\"op\":\"eq\",\"value\":7},"
			"{\"index\":1,\"op\":\"not_in\",\"values\":%s}]}]}",
			cases[c].values);
		uint64_t probe[64 + 2048];
		size_t n_probe = 0;
		struct sbx_catalog cat;
		struct sbx_error err = { 0 };
		struct sock_fprog prog;
		const struct sbx_seccomp_policy *sc;

		load_with_seccomp(&cat, body);
		sc = sbx_catalog_seccomp(&cat, "strict");
		if (sc->n_rules != cases[c].rules)
			fail_msg("%s: %zu rules, want %zu", cases[c].values, sc->n_rules, cases[c].rules);
		if (sbx_seccomp_compile(sc, &prog, &err) < 0)
			fail_msg("%s", err.msg);
		for (uint64_t v = 0; v < 2048; v++)
			probe[n_probe++] = v;
		for (size_t i = 0; i < cases[c].n; i++) {
			uint64_t v = cases[c].v[i];
			probe[n_probe++] = v - 1;
			probe[n_probe++] = v + 1;
			probe[n_probe++] = v;
			probe[n_probe++] = v ^ (UINT64_C(1) << 32);
			probe[n_probe++] = v ^ (UINT64_C(1) << 63);
		}
		probe[n_probe++] = UINT64_MAX;
		probe[n_probe++] = UINT64_MAX - 1;
		probe[n_probe++] = UINT64_C(1) << 63;
		probe[n_probe++] = 0xffffffff;
		for (size_t i = 0; i < n_probe; i++) {
			uint64_t v = probe[i];
			bool listed = false;

			for (size_t k = 0; k < cases[c].n; k++)
				listed |= cases[c].v[k] == v;
			if (policy_denies(sc, "socket", (const uint64_t[6]){ 0, v, 7 }) == listed)
				fail_msg("%s: rules say %s for %#llx", cases[c].values,
					 listed ? "denied" : "allowed", (unsigned long long)v);
			if (policy_denies(sc, "socket", (const uint64_t[6]){ 0, v, 8 }))
				fail_msg("%s: %#llx denied without the other condition",
					 cases[c].values, (unsigned long long)v);
#if defined(__x86_64__)
			if (verdict(&prog, "socket", 0, v, 7) != (listed ? 0 : EAFNOSUPPORT))
				fail_msg("%s: the filter is wrong for %#llx", cases[c].values,
					 (unsigned long long)v);
			if (verdict(&prog, "socket", 0, v, 8) != 0)
				fail_msg("%s: the filter denies %#llx without the other condition",
					 cases[c].values, (unsigned long long)v);
#endif
		}
		sbx_seccomp_free(&prog);
		sbx_catalog_free(&cat);
	}
}

static void test_missing_dir(void **state)
{
	struct sbx_catalog cat;
	struct sbx_error err = { 0 };

	assert_int_equal(sbx_catalog_load(&cat, "/nonexistent/sbx-policy", &err), -1);
	assert_int_equal(err.code, SBX_EXIT_UNAVAILABLE);
	assert_int_equal(err.errnum, ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/sbx-policy/seccomp"));
}

static void test_default_dir(void **state)
{
	struct sbx_hostconfig cfg = { .policy = (char *)"/etc/custom" };
	const char *d;

	assert_string_equal(sbx_catalog_default_dir("/opt/p", &cfg), "/opt/p");
	assert_string_equal(sbx_catalog_default_dir(NULL, &cfg), "/etc/custom");
	cfg.policy = NULL;
	d = sbx_catalog_default_dir(NULL, &cfg);
	assert_true(strcmp(d, SYSCONFDIR "/sbx/policy") == 0 || strcmp(d, DATADIR "/sbx/policy") == 0);
}

static void test_media_and_names(void **state)
{
	assert_true(sbx_media_type_known("text/csv"));
	assert_true(sbx_media_type_known("application/pdf"));
	assert_true(sbx_media_type_known("image/svg+xml"));
	assert_true(sbx_media_type_known("text/tab-separated-values"));
	assert_true(sbx_media_type_known("application/x-ndjson"));
	assert_true(sbx_media_type_known("text/markdown"));
	/* Validated, so a profile may list it; no shipped one does. */
	assert_true(sbx_media_type_known("text/html"));
	/* Each member validated as an output of its own (serve-zip.c). */
	assert_true(sbx_media_type_known("application/zip"));
	assert_false(sbx_media_type_known("application/x-tar"));
	assert_false(sbx_media_type_known("image/svg"));
	assert_false(sbx_media_type_known("TEXT/CSV"));
	assert_true(sbx_catalog_name_valid("python-analysis"));
	assert_true(sbx_catalog_name_valid("a_1"));
	assert_false(sbx_catalog_name_valid("-a"));
	assert_false(sbx_catalog_name_valid("A"));
	assert_false(sbx_catalog_name_valid(".."));
	assert_false(sbx_catalog_name_valid(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped),      cmocka_unit_test(test_personality),
		cmocka_unit_test(test_every_syscall_has_a_reason),
		cmocka_unit_test(test_socket_families), cmocka_unit_test(test_init_protection),
		cmocka_unit_test(test_broken),       cmocka_unit_test(test_not_in_expansion),
		cmocka_unit_test(test_missing_dir),
		cmocka_unit_test(test_default_dir),  cmocka_unit_test(test_media_and_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
