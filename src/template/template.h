/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * template.h - what the files of sbx-template share.
 *
 * sbx-template is a profile's interpreter with its imports done, kept
 * alive for the runs of that profile (docs/design.md, "Templates").  The
 * broker starts it, detached and in a cgroup of its own, and asks it over
 * a unix socket to clone each run's pid 1 (template-proto.h).  It holds
 * nothing secret: no key, no catalog, no job data; what it knows of a run
 * are the fds the broker hands it, which it passes to the child and
 * closes.  The files, by concern:
 *
 *   main.c     the command line's effect: the interpreter started with
 *              the profile's options, the imports, the single-thread
 *              check, the ready line; then serve()
 *   args.c     the command line parsed (no Python: unit-tested alone)
 *   procview.c what /proc shows of a run's processes (unit-tested alone)
 *   serve.c    the socket loop: SO_PEERCRED, requests, replies, reaping,
 *              EXITED records, the kill on the broker's EOF, STATUS,
 *              STOP, the lifetime (idle, max runs, max seconds)
 *   clone.c    one run's clone3: owner ids for root, CLONE_INTO_CGROUP,
 *              the interpreter's fork hooks, and the child's first steps
 *              before src/init takes over
 *   payload.c  the payload's process: fds, signals, environment, the
 *              RNGs reseeded, the profile's reset code, a fresh __main__,
 *              the job's code, the exit status python3 would give
 */
#ifndef SBX_TEMPLATE_H
#define SBX_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "template-proto.h"

struct sbx_spec;

#define SBX_TEMPLATE_MAX_IMPORTS 64
#define SBX_TEMPLATE_MAX_ARGV 16
#define SBX_TEMPLATE_MAX_CGROUPS 16
#define SBX_TEMPLATE_MAX_HIDE 8
/* The profile's reset code, read whole from --reset-file. */
#define SBX_TEMPLATE_RESET_MAX (256 * 1024)

/* The interpreter options a template applies (the profile's argv between
 * the interpreter and "{code}"), as PyConfig settings. */
struct sbx_template_pyopts {
	bool isolated;     /* -I */
	bool no_bytecode;  /* -B */
	bool ignore_env;   /* -E */
	bool no_user_site; /* -s */
	bool no_site;      /* -S */
	bool unbuffered;   /* -u */
};

struct sbx_template_args {
	int listen_fd;
	int ready_fd;
	int reset_fd; /* -1: no reset code */
	char digest[SBX_TEMPLATE_DIGEST_SIZE];
	uint32_t idle_seconds;
	uint32_t max_runs;
	uint32_t max_seconds;
	const char *imports[SBX_TEMPLATE_MAX_IMPORTS];
	size_t n_imports;
	/* Host trees the sandbox covers (an empty tmpfs over /usr/local in a
	 * bind of /usr): no import may come from them. */
	const char *hide[SBX_TEMPLATE_MAX_HIDE];
	size_t n_hide;
	/* --cgroup: the template's own cgroup directories (one per v1
	 * hierarchy), which it leaves and removes when it exits, so that a
	 * template that ends (idle, stop, age) leaves nothing for sbx gc. */
	const char *cgroups[SBX_TEMPLATE_MAX_CGROUPS];
	size_t n_cgroups;
	/* --warm: the profile's warm-up code, run once after the imports. */
	const char *warm;
	/* The profile's argv up to "{code}": the interpreter and options. */
	char *const *argv;
	size_t argc;
	struct sbx_template_pyopts py;
};

/* args.c */
/**
 * sbx_template_parse_args() - parse sbx-template's command line into @a.
 * Returns 0, or -1 with a one-line reason in @why (@len bytes).
 */
int sbx_template_parse_args(int argc, char **argv, struct sbx_template_args *a, char *why,
			    size_t len);
/**
 * sbx_template_parse_pyopt() - apply one interpreter option word ("-I",
 * or letters of the allowed set run together: "-IB") to @o.
 * Returns 0, or -1 for anything else.
 */
int sbx_template_parse_pyopt(const char *word, struct sbx_template_pyopts *o);

/* The PyConfig settings @o gives, as `python3` derives them from its
 * command line (-I implies -E, -s and -P in 3.11). */
struct sbx_template_pyconfig {
	int isolated, use_environment, user_site_directory, safe_path;
	int write_bytecode, site_import, buffered_stdio;
};
void sbx_template_pyconfig(const struct sbx_template_pyopts *o, struct sbx_template_pyconfig *c);

/* main.c: the run-independent state the payload needs. */
extern const struct sbx_template_args *sbx_template;
extern const char *sbx_template_reset_code; /* NULL: none */
/* The template's environment as the interpreter read it at start (a
 * copy, NULL-terminated): what a run's must agree with for the imported
 * interpreter to be the one its job would get (payload.c). */
extern char **sbx_template_start_env;

/*
 * What /proc/<pid>/cmdline and environ show is the memory the kernel
 * placed the command line and environment in at exec: in a run that is
 * sbx-template's, which names the template (its digest, its options)
 * and the host's paths in its environment.  Each process of a run
 * writes over it what an exec'd one would show (sbx-init, or the
 * interpreter's argv and the run's environment), cut to the area's size.
 */
struct sbx_template_area {
	char *start;
	size_t len;
};
extern struct sbx_template_area sbx_template_argv_area, sbx_template_env_area;
/* procview.c: write @words (NULL-terminated) into @area as the kernel lays
 * them out, NUL after each, cut to fit, NUL-filled to the end (the last
 * byte is always NUL, so the kernel reads the area as argv, not as a
 * setproctitle() string). */
void sbx_template_area_write(const struct sbx_template_area *area, char *const *words);
/**
 * sbx_template_show() - make /proc/self/cmdline and environ show @argv and
 * @envp exactly (PR_SET_MM_MAP); where the kernel does not allow it,
 * write them over the template's areas instead.
 * Returns 0 when exact, -1 when written over the old areas.
 */
int sbx_template_show(char *const *argv, char *const *envp);
/* The area @v's strings occupy, as exec laid them out one after the
 * other; { NULL, 0 } if they are not contiguous. */
struct sbx_template_area sbx_template_area_of(char *const *v);

/* payload.c */
/* The pending Python exception as one line ("ImportError: no module..."),
 * into @buf of @len bytes; the exception is cleared. */
void sbx_template_exception_text(char *buf, size_t len);

/* clone.c */
struct sbx_template_spawn {
	int fds[SBX_TEMPLATE_MAX_FDS]; /* sock, out, err, stdin (-1), cgroup (-1) */
	uid_t owner_uid;               /* (uid_t)-1: the template's own */
};
/**
 * sbx_template_clone() - clone a run's pid 1 (new user and pid
 * namespaces, a real copy of this process) that runs src/init with the
 * template's payload hook.  @keep: fds of the template the child closes
 * at once are all but @sp's; nothing to pass.
 * Returns the child's pid with its pidfd in *@pidfd and whether it was
 * born in the cgroup in *@in_cgroup, or -1 with errno set.
 */
pid_t sbx_template_clone(const struct sbx_template_spawn *sp, int *pidfd, bool *in_cgroup);

/* payload.c */
/**
 * sbx_template_payload_prepare() - compile, in the template, the code
 * each payload runs before the job's (so that no run pays for it).
 * Returns 0, or -1 with a Python exception set.
 */
int sbx_template_payload_prepare(void);
/* The spawn hook of src/init (init.h) for the template's runs. */
pid_t sbx_template_spawn_payload(const struct sbx_spec *spec, int out_fd, int err_fd, int in_fd);

/* serve.c */
/* Serve requests on the listening socket until stopped; returns the exit status. */
int sbx_template_serve(const struct sbx_template_args *a);

#endif
