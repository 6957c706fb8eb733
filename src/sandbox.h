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

#include "catalog.h"
#include "error.h"
#include "job.h"
#include "joblimits.h"
#include "policy.h"
#include "userns.h"

#define SBX_SANDBOX_UID 1000
#define SBX_SANDBOX_GID 1000

/* Steps between clone and execve, in order.  Each failure names one. */
enum sbx_stage {
	SBX_STAGE_EXEC_INIT,   /* the clone exec'ing sbx-init */
	SBX_STAGE_NAMESPACES,  /* the namespaces the init makes itself */
	SBX_STAGE_SYNC,        /* waiting for the broker (maps, cgroup) */
	SBX_STAGE_IDENTITY,    /* hostname, setsid */
	SBX_STAGE_NET,         /* lo up in the new net namespace */
	SBX_STAGE_MOUNT_PRIVATE,
	SBX_STAGE_ROOT,        /* tmpfs root */
	SBX_STAGE_BINDS,       /* profile's read-only binds */
	SBX_STAGE_ETC,
	SBX_STAGE_DEV,
	SBX_STAGE_PROC,
	SBX_STAGE_WORK,        /* /tmp, /work, /work/in, /work/out */
	SBX_STAGE_INPUTS,      /* handing /work to the broker, code file */
	SBX_STAGE_PIVOT,
	SBX_STAGE_READONLY,
	SBX_STAGE_CREDENTIALS, /* capabilities, no_new_privs */
	SBX_STAGE_SECCOMP,
	SBX_STAGE_LANDLOCK,
	SBX_STAGE_FORK,
	SBX_STAGE_RLIMITS,
	SBX_STAGE_FDS,
	SBX_STAGE_EXEC,
	_SBX_STAGE_MAX,
};

const char *sbx_stage_name(enum sbx_stage s);

/* Messages from the sandbox's init to the broker (SOCK_SEQPACKET). */
enum sbx_report_kind {
	SBX_REPORT_FAILED = 1, /* a setup step failed: stage, err, msg */
	SBX_REPORT_STARTED,    /* the payload's execve succeeded; status: the
				* Landlock ABI applied, 0 for none */
	SBX_REPORT_EXITED,     /* the payload ended: status (wait status) */
};

struct sbx_report {
	uint32_t kind;
	uint32_t stage;
	int32_t err;       /* errno */
	int32_t status;    /* wait status of the payload */
	/* A missing feature (69) rather than a bug (70) when nonzero: a byte,
	 * not a bool, because the broker reads raw bytes from another
	 * process and a bool holding 5 is undefined behaviour. */
	uint8_t unavailable;
	int32_t memfd_noexec; /* STARTED: the pid namespace's vm.memfd_noexec,
			       * -1 where the kernel has none */
	char msg[256];
};

#define SBX_MAX_MOUNTS 64
#define SBX_MAX_INPUTS 64

/* Longest bind path accepted (the init builds "/tmp" + path in 512). */
#define SBX_SPEC_PATH_MAX 256

struct sbx_spec_bind {
	const char *src;
	const char *dst;
	bool is_dir;
};

/* An empty tmpfs over a host site tree that a bind carries (/usr/local
 * in a bind of /usr), mounted right after bind @after_bind, read-only
 * once every bind is in place. */
struct sbx_spec_mask {
	char path[SBX_SPEC_PATH_MAX + 16];
	uint32_t after_bind;
};
#define SBX_MAX_MASKS 8

struct sbx_spec_file {   /* a generated file inside the new root */
	char path[64];
	const char *data;
	size_t len;
};

struct sbx_spec {
	/* Identity mapping (written by the broker into /proc/<pid>/...). */
	uid_t outer_uid;
	gid_t outer_gid;

	/* Filesystem */
	struct sbx_spec_bind binds[SBX_MAX_MOUNTS];
	size_t n_binds;
	struct sbx_spec_mask masks[SBX_MAX_MASKS];
	size_t n_masks;
	const struct sbx_symlink *symlinks;
	size_t n_symlinks;
	struct sbx_spec_file etc[8];
	size_t n_etc;
	char workspace_opts[128];   /* tmpfs options for /tmp, /work, /dev/shm */
	char out_opts[128];         /* tmpfs options for /work/out */
	char in_opts[128];          /* tmpfs options for /work/in */
	const char *code;           /* written to /work/<code_file> */
	size_t code_len;
	char code_path[300];

	/* Credentials and policy */
	struct sock_fprog seccomp;  /* compiled by the broker */

	/* Resources */
	uint64_t rlimit_fsize;
	uint64_t rlimit_nofile;
	uint64_t rlimit_nproc;
	/* The profile's kernel_quotas: the run's user namespace limits
	 * (/proc/sys/user/max_*) and the payload's rlimits of the same name. */
	struct sbx_kernel_quotas quotas;

	/* Network: an egress profile's proxy listener on 127.0.0.1:3128 in the
	 * new namespace, created by the init and handed to the broker. */
	bool proxy_listener;

	/* The payload */
	char *const *argv;
	char *const *envp;
};

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

/* spec-blob.c: @spec and all it points to as one sealed memfd, for
 * sbx-init; and back, in place, in the init's private copy of it (NULL if
 * anything in the block is out of bounds). */
int sbx_spec_pack(const struct sbx_spec *spec, int *memfd, struct sbx_error *err);
struct sbx_spec *sbx_spec_unpack(void *blob, size_t size);
/* The init's side: a private copy of the packed spec in @memfd, unpacked;
 * NULL if it cannot be read or is malformed. */
struct sbx_spec *sbx_spec_map(int memfd);

/* init.c: the sandbox's init, in sbx-init.  Never returns. */
_noreturn_ void sbx_init_main(int sock, int out_fd, int err_fd);

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
	const char *code;
	size_t code_len;
	pid_t pid;       /* host pid of the sandbox's init */
	int pidfd;
	int sock;        /* reports from the init */
	int out_rd;      /* payload stdout */
	int err_rd;      /* payload stderr */
	int in_fd;       /* /work/in until inputs are in */
	int outroot_fd;  /* /work/out, kept after the sandbox is gone */
	int proxy_fd;    /* the proxy listener (spec.proxy_listener), or -1 */
	int spec_fd;     /* the packed spec (spec-blob.c) until the go-ahead */
	int init_fd;     /* O_PATH of sbx-init */
	/* The host uid and gid the sandbox user maps to, set before
	 * sbx_spawn_prepare(): root's runs get one of their own from
	 * rootids.c, never 0; (uid_t)-1 is the caller's own ids. */
	uid_t host_id;
	/* The state dir, where compiled seccomp programs are kept between
	 * runs (seccomp-cache.c); NULL compiles every time. */
	const char *state_dir;
	struct sbx_userns_diagnosis userns; /* why the namespaces were refused */
};

#define SBX_SPAWN_INIT { .pid = -1, .pidfd = -1, .sock = -1, .out_rd = -1, .err_rd = -1, \
			 .in_fd = -1, .outroot_fd = -1, .proxy_fd = -1, .spec_fd = -1, .init_fd = -1, \
			 .host_id = (uid_t)-1 }

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

#endif
