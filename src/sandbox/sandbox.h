/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sandbox.h - the sandbox as one prepared description and the messages
 * that cross the boundary while it is built.
 *
 * The broker (parent) computes everything the sandbox needs before the
 * clone: every path, the argv and envp, the compiled seccomp program, the
 * /etc files.  It travels to sbx-init as one sealed block (spec-blob.c),
 * and the init only executes a list of steps over it: nothing is parsed
 * there beyond bounds checks, and a failure is one fixed-size record on a
 * socket.
 */
#ifndef SBX_SANDBOX_H
#define SBX_SANDBOX_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "subids.h"

#include "catalog.h"
#include "error.h"
#include "spec.h"
#include "job.h"
#include "joblimits.h"
#include "policy.h"
#include "userns.h"

/* seccomp.c: compile a catalog policy into @prog (owned; free with
 * sbx_seccomp_free). */
int sbx_seccomp_compile(const struct sbx_seccomp_policy *pol, struct sock_fprog *prog,
			struct sbx_error *err);
void sbx_seccomp_free(struct sock_fprog *prog);
/* seccomp-cache.c: the same program, kept in @state_dir/seccomp between
 * runs (NULL @state_dir: compile).  sbx_seccomp_cache_key() is what a
 * cache entry must match, exposed for the tests; NULL without a build id. */
int sbx_seccomp_compile_cached(const struct sbx_seccomp_policy *pol, const char *state_dir,
			       struct sock_fprog *prog, struct sbx_error *err);
char *sbx_seccomp_cache_key(const struct sbx_seccomp_policy *pol, size_t *len);
/* Whether @state_dir's cache holds the program of these exact policy
 * bytes for this build (which compiled them only after parsing and
 * accepting them): sbx run's hook for sbx_catalog_load_with().  Reads
 * only; false when anything is missing or not the caller's own. */
bool sbx_seccomp_cache_known(const char *state_dir, const char *raw, size_t len);


/*
 * The broker's handle on one sandbox while it is built and runs.
 *
 * Sequence: sbx_spawn_start() (clone3 into new user and pid namespaces,
 * executing sbx-init, which makes the other five while the caller goes
 * on), cgroup placement by the caller, sbx_spawn_prepare() (the spec
 * computed and packed), sbx_spawn_release() (id maps, go-ahead with the
 * spec, lo brought up over the init's netlink socket),
 * sbx_spawn_receive_work() (the /work/in and /work/out fds), input
 * materialization by the caller, sbx_spawn_continue(); then the supervisor
 * reads reports from ->sock.
 */
struct sbx_spawn {
	struct sbx_spec spec;
	char **argv;
	char **envp;     /* the plan's env with the profile's thread_env */
	const char *code;
	size_t code_len;
	pid_t pid;       /* host pid of the sandbox's init */
	int pidfd;
	int sock;        /* reports from the init */
	int out_rd;      /* payload stdout */
	int err_rd;      /* payload stderr */
	/* --stdin: the payload's stdin is a pipe whose write end this is
	 * (set want_stdin before sbx_spawn_start()); else it is /dev/null
	 * and this -1. */
	bool want_stdin;
	int in_wr;
	int in_fd;       /* /work/in until inputs are in */
	int outroot_fd;  /* /work/out, kept after the sandbox is gone */
	int proxy_fd;    /* the proxy listener (spec.proxy_listener), or -1 */
	int spec_fd;     /* the packed spec (spec-blob.c) until the go-ahead */
	int init_fd;     /* O_PATH of sbx-init */
	/* cgroup v2: the run's cgroup (sbx_cgroup_clone_fd), for the init to
	 * be cloned into (CLONE_INTO_CGROUP), or -1.  in_cgroup says whether
	 * it was: if the kernel refused, the init is cloned as without it and
	 * the caller attaches it (sbx_cgroup_attach), whose errors and Hints
	 * explain the refusal. */
	int cgroup_fd;
	bool in_cgroup;
	/* The host uid and gid the sandbox user maps to, set before
	 * sbx_spawn_prepare(): root's runs get one of their own from
	 * rootids.c, never 0; (uid_t)-1 is the caller's own ids. */
	uid_t host_id;
	/* Root's run whose user namespace the run's id owns (become_owner()
	 * in sandbox.c); false where the broker kept it. */
	bool owner_is_run;
	/* An ordinary user's run with subordinate ids (subids.h): the
	 * sandbox user's host uid and gid from the caller's ranges, mapped
	 * by newuidmap/newgidmap with the caller as the namespace's root;
	 * (uid_t)-1 when not in that mode. */
	uid_t sub_uid;
	gid_t sub_gid;
	/* Subordinate ids: the sandbox's user namespace, opened while its
	 * init lives, for the opener that reads the payload's outputs
	 * (opener.h); -1 otherwise. */
	int userns_fd;
	/* Subordinate ids: newuidmap and newgidmap, started right after the
	 * clone and waited for just before the go-ahead. */
	struct sbx_sub_ids_maps maps;
	/* The state dir, where compiled seccomp programs are kept between
	 * runs (seccomp-cache.c); NULL compiles every time. */
	const char *state_dir;
	struct sbx_userns_diagnosis userns; /* why the namespaces were refused */
	/* The profile's template (template-spawn.c): set @template_sock and
	 * @template_digest before sbx_spawn_start() to ask it for the init;
	 * if it cannot, the start is cold and @template_fallback says why.
	 * @template_fd is the connection for the run's length. */
	const char *template_sock;
	const char *template_digest;
	const char *template_fallback; /* static text */
	int template_fd;
	bool from_template;
	bool template_lost;            /* it died before saying how the init ended */
};

#define SBX_SPAWN_INIT { .pid = -1, .pidfd = -1, .sock = -1, .out_rd = -1, .err_rd = -1, \
			 .in_wr = -1, .in_fd = -1, .outroot_fd = -1, .proxy_fd = -1, .spec_fd = -1, .init_fd = -1, \
			 .cgroup_fd = -1, .host_id = (uid_t)-1, .template_fd = -1, \
			 .sub_uid = (uid_t)-1, .sub_gid = (gid_t)-1, .userns_fd = -1, \
			 .maps = SBX_SUB_IDS_MAPS_INIT }

/*
 * sbx_profile_host_check() - what a profile needs of this host: its
 * required binds, and its interpreter (argv[0], through the profile's
 * symlinks and binds) an executable file.  0, or -1 with 69 and a Hint;
 * sbx_spawn_prepare() and `sbx check` both ask.
 */
int sbx_profile_host_check(const struct sbx_profile *p, struct sbx_error *err);
/* The host's site trees the sandbox covers wherever a bind carries them
 * (spawn-spec.c), NULL-terminated: a profile's template hides them too. */
extern const char *const sbx_site_trees[];
/* Does a bind of host @src carry @tree (a path strictly below it)? */
bool sbx_bind_carries(const char *src, const char *tree);

int sbx_spawn_prepare(struct sbx_spawn *sp, const struct sbx_plan *plan, const struct sbx_job *job,
		      struct sbx_error *err);
int sbx_spawn_start(struct sbx_spawn *sp, struct sbx_error *err);
int sbx_spawn_release(struct sbx_spawn *sp, struct sbx_error *err);
int sbx_spawn_receive_work(struct sbx_spawn *sp, struct sbx_error *err);
int sbx_spawn_continue(struct sbx_spawn *sp, struct sbx_error *err);
/* One record (and up to @nfds passed fds) from the init; returns the
 * byte count, 0 at EOF, < 0 on error. */
int sbx_spawn_recv_report(int sock, struct sbx_report *rep, int *fds, size_t nfds);
int sbx_spawn_report_error(const struct sbx_report *rep, struct sbx_error *err);
/*
 * sbx_spawn_probe() - for `sbx check`: the steps of a run that the host
 * may restrict (the clone into new user and pid namespaces, the id maps,
 * the init's own namespaces, lo), as a run takes them, then the init is
 * killed.  Returns 0, or -1 with the error a run would report (69, with a
 * Hint) and in @diag the restriction found (cause UNEXPLAINED and an empty
 * setting when none, or when the failure was not the namespaces').
 */
int sbx_spawn_probe(struct sbx_userns_diagnosis *diag, struct sbx_error *err);
void sbx_spawn_free(struct sbx_spawn *sp);

/*
 * template-spawn.c: sbx_spawn_start()'s way through the profile's
 * template.  sbx_spawn_start_template() returns 0 with the init cloned
 * (sp->from_template), or -1 with nothing left open and
 * sp->template_fallback set: the caller starts cold.  Once the pidfd
 * says the init is gone, sbx_spawn_template_exited() gives its wait
 * status from the template (-1 and a SIGKILL status when the template
 * died first, sp->template_lost).  sbx_spawn_template_reap() kills the
 * init and waits for it to be gone.
 */
int sbx_spawn_start_template(struct sbx_spawn *sp);
int sbx_spawn_template_exited(struct sbx_spawn *sp, int *status);
void sbx_spawn_template_reap(struct sbx_spawn *sp);

#endif
