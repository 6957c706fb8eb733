/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * seccomp.c - turn a catalog seccomp policy into a BPF program.
 *
 * The broker compiles the filter with libseccomp before the clone and
 * hands the child a plain struct sock_fprog, so the child loads it with
 * one prctl() and allocates nothing.  The policy is a deny list over a
 * default of "allow": denials return an errno (EPERM, or ENOSYS where libc
 * should fall back), not a kill, so ordinary programs get an error they
 * can handle.  Two things are not in the catalog because no policy may
 * relax them: only the native architecture's ABI is accepted (i386 and
 * x32 system calls kill the process, closing the classic "same number,
 * other table" bypass), and the program is always loaded with
 * no_new_privs.
 */
#include "config.h"

#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "sandbox.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(scmp_filter_ctx, seccomp_release)

static int add_rule(scmp_filter_ctx ctx, const struct sbx_seccomp_policy *pol,
		    const struct sbx_seccomp_rule *rule, const char *name, struct sbx_error *err)
{
	struct scmp_arg_cmp cmp[6];
	int nr, r;

	nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0,
				     "%s: syscall \"%s\" is unknown on this architecture", pol->file,
				     name);
	/* A negative pseudo number: the call does not exist on this
	 * architecture, so there is nothing to deny. */
	if (nr < 0)
		return 0;
	if (rule->n_args > ARRAY_SIZE(cmp))
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "%s: too many argument checks",
				     pol->file);
	for (size_t i = 0; i < rule->n_args; i++) {
		const struct sbx_seccomp_arg *a = &rule->args[i];
		switch (a->op) {
		case SBX_SC_OP_EQ:
			cmp[i] = SCMP_CMP64(a->index, SCMP_CMP_EQ, a->value);
			break;
		case SBX_SC_OP_MASKED_EQ:
			cmp[i] = SCMP_CMP64(a->index, SCMP_CMP_MASKED_EQ, a->mask, a->value);
			break;
		case SBX_SC_OP_NE:
			cmp[i] = SCMP_CMP64(a->index, SCMP_CMP_NE, a->value);
			break;
		case SBX_SC_OP_LT:
			cmp[i] = SCMP_CMP64(a->index, SCMP_CMP_LT, a->value);
			break;
		case SBX_SC_OP_GT:
			cmp[i] = SCMP_CMP64(a->index, SCMP_CMP_GT, a->value);
			break;
		default:
			return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "%s: bad argument op",
					     pol->file);
		}
	}
	r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((uint16_t)rule->errnum), nr,
				   (unsigned)rule->n_args, cmp);
	/* -EEXIST: the same action is already there (a syscall listed twice). */
	if (r < 0 && r != -EEXIST)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, -r, "%s: rule for \"%s\"",
				     pol->file, name);
	return 0;
}

int sbx_seccomp_compile(const struct sbx_seccomp_policy *pol, struct sock_fprog *prog,
			struct sbx_error *err)
{
	_cleanup_(seccomp_releasep) scmp_filter_ctx ctx = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	void *buf;
	ssize_t n;

	/* Bytes without their rules (sbx_catalog_load_with) would compile
	 * into a filter that allows everything. */
	if (pol->rules_pending)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, 0, "%s: seccomp policy not parsed",
				     pol->file ? pol->file : "seccomp");
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "seccomp: cannot initialize libseccomp");
	/* Any other ABI (i386 via int 0x80, x32) is not in the filter's arch
	 * list and kills the whole process. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0 ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "seccomp: cannot set filter attributes");
	/* Most system calls are allowed, and every one of them passes the
	 * filter: a binary tree over the syscall numbers decides in a few
	 * comparisons instead of one per rule.  Only speed: a libseccomp
	 * without it (before 2.5) gives the same verdicts in a list. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

	for (size_t i = 0; i < pol->n_rules; i++)
		for (char **s = pol->rules[i].syscalls; s && *s; s++)
			if (add_rule(ctx, pol, &pol->rules[i], *s, err) < 0)
				return -1;

	/* libseccomp 2.5 exports only to an fd; a memfd keeps it in memory. */
	fd = memfd_create("sbx-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "seccomp: memfd_create");
	if (seccomp_export_bpf(ctx, fd) < 0)
		return sbx_error_set(err, SBX_EXIT_UNAVAILABLE, 0, "seccomp: cannot export filter");
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
	    st.st_size > 65536 * (off_t)sizeof(struct sock_filter))
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "seccomp: bad exported filter");
	buf = sbx_xmalloc((size_t)st.st_size);
	n = pread(fd, buf, (size_t)st.st_size, 0);
	if (n != st.st_size) {
		free(buf);
		return sbx_error_set(err, SBX_EXIT_SOFTWARE, errno, "seccomp: reading the filter");
	}
	prog->filter = buf;
	prog->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	return 0;
}

void sbx_seccomp_free(struct sock_fprog *prog)
{
	free(prog->filter);
	prog->filter = NULL;
	prog->len = 0;
}
