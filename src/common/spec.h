/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spec.h - the contract between the broker and sbx-init: the sandbox as
 * one prepared description (struct sbx_spec), the fixed-size reports the
 * init sends back, and the few facts both sides must agree on (the
 * sandbox's ids, where the proxy listens).
 *
 * The broker computes everything the sandbox needs before the clone:
 * every path, the argv and envp, the compiled seccomp program, the /etc
 * files.  It travels to sbx-init as one sealed block (spec-blob.c), and
 * the init only executes a list of steps over it: nothing is parsed there
 * beyond bounds checks, and a failure is one fixed-size record on a
 * socket.  This header is all the init sees of the broker: it includes
 * nothing but the C library and the kernel's headers.
 */
#ifndef SBX_SPEC_H
#define SBX_SPEC_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* Where the payload finds the proxy, inside its own network namespace. */
#define SBX_PROXY_ADDR "127.0.0.1"
#define SBX_PROXY_PORT 3128
#define SBX_PROXY_URL "http://127.0.0.1:3128"

struct sbx_symlink {
	char *path;   /* absolute path inside, e.g. /bin */
	char *target; /* link text, e.g. usr/bin */
};

/*
 * Per-user kernel quotas of a run (profile key "kernel_quotas"): the
 * limits of the run's own user namespace (/proc/sys/user/max_*) and the
 * payload's rlimits on kernel objects that are charged to the user who
 * created the namespace - the caller - as well as to the payload.
 */
struct sbx_kernel_quotas {
	uint64_t inotify_instances;
	uint64_t inotify_watches;
	uint64_t fanotify_groups;
	uint64_t fanotify_marks;
	uint64_t sigpending;     /* RLIMIT_SIGPENDING */
	uint64_t msgqueue_bytes; /* RLIMIT_MSGQUEUE */
	uint64_t memlock_bytes;  /* RLIMIT_MEMLOCK */
};

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
	/* Subordinate ids: setgroups is left allowed (newgidmap's choice for
	 * a subordinate range), and the init clears the caller's
	 * supplementary groups, which it inherited, before anything else. */
	bool clear_groups;

	/* Filesystem */
	struct sbx_spec_bind binds[SBX_MAX_MOUNTS];
	size_t n_binds;
	struct sbx_spec_mask masks[SBX_MAX_MASKS];
	size_t n_masks;
	const struct sbx_symlink *symlinks;
	size_t n_symlinks;
	struct sbx_spec_file etc[8];
	size_t n_etc;
	/* The profile's workspace_exec: /tmp and /work without noexec. */
	bool workspace_exec;
	char workspace_opts[128];   /* tmpfs options for /tmp, /work, /dev/shm */
	char out_opts[128];         /* tmpfs options for /work/out */
	char in_opts[128];          /* tmpfs options for /work/in */
	/* A profile's prepared tree (bound like a bind above): the files of
	 * its directory @seed_src, copied into @seed_dst ("" for none). */
	char seed_src[SBX_SPEC_PATH_MAX + 72];
	char seed_dst[SBX_SPEC_PATH_MAX];
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
	/* CPUs the payload is pinned to (the job's cpu_cores rounded up), set
	 * by the init from its own affinity and shown in
	 * /sys/devices/system/cpu/online; 0 leaves the affinity alone. */
	uint32_t n_cpus;

	/* Network: an egress profile's proxy listener on 127.0.0.1:3128 in the
	 * new namespace, created by the init and handed to the broker. */
	bool proxy_listener;

	/* The payload */
	char *const *argv;
	char *const *envp;
};

/* spec-blob.c: @spec and all it points to as one sealed memfd, for
 * sbx-init; and back, in place, in the init's private copy of it (NULL if
 * anything in the block is out of bounds). */
int sbx_spec_pack(const struct sbx_spec *spec, int *memfd, struct sbx_error *err);
struct sbx_spec *sbx_spec_unpack(void *blob, size_t size);
/* The init's side: a private copy of the packed spec in @memfd, unpacked;
 * NULL if it cannot be read or is malformed. */
struct sbx_spec *sbx_spec_map(int memfd);

/* The sandbox's init itself is a library of its own, run by sbx-init and
 * sbx-template: src/init/init.h. */

#endif
