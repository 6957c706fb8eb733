/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * catalog.h - the server-owned policy catalog (SPEC §4): runtime profiles,
 * network profiles and seccomp policies, each a JSON file in policy/.
 *
 * Loading is strict: an unknown key, a wrong type or a dangling reference
 * (a profile naming a seccomp policy or network profile that does not
 * exist) is an error naming file and JSON path, and makes sbx run refuse
 * with 69.  Nothing runs on a partial policy.
 */
#ifndef SBX_CATALOG_H
#define SBX_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "joblimits.h"
#include "spec.h"

/* A read-only bind of a host path.  @dst is where it appears inside
 * (defaults to @src).  @optional binds are skipped when the host lacks the
 * path (e.g. /etc/matplotlibrc); required ones make the run refuse (69). */
struct sbx_bind {
	char *src;
	char *dst;
	bool optional;
};

/*
 * A profile's "prepare" step (sbx-policy(5)): a trusted command that `sbx
 * prepare` runs once in a sandbox of the profile, writing /work/out; that
 * tree, content-hashed, is bound read-only at @mount in every run, and
 * its directory @seed_src (if any) is copied into the writable @seed_dst.
 */
struct sbx_prepare {
	char **argv;             /* run as is: no placeholders */
	char **env;              /* "KEY=VALUE" over the profile's env */
	char *network;           /* a name of network_profiles; NULL: none */
	char **inputs;           /* host paths the tree is built from */
	uint64_t timeout_seconds;
	char *mount;             /* absolute path inside the sandbox */
	char *seed_src;          /* a directory name of the tree, or NULL */
	char *seed_dst;          /* under /tmp or /work */
};

/*
 * A profile's "template" (sbx-policy(5)): the modules an sbx-template
 * process imports once so that runs start from an interpreter that has
 * them (src/broker/template.c).  Only for python3 argvs of the shape
 * [python3, options..., "{code}", "{args}"].
 */
struct sbx_template {
	char **imports;          /* dotted module names, in import order */
	char *reset;             /* trusted Python run in each child; NULL: none */
	char *warm;              /* trusted Python run once in the template; NULL: none */
	char options[8];         /* the argv's options as letters, e.g. "I" */
	size_t argc;             /* argv entries before "{code}" */
};

struct sbx_profile {
	char *name;
	char *file;              /* path of the JSON file it came from */
	char *raw;               /* that file's bytes (sbx_catalog_sha256) */
	size_t raw_len;
	char *description;
	char **argv;             /* with "{code}" and "{args}" placeholders */
	char *code_file;         /* file name in /work, e.g. "main.py" */
	struct sbx_bind *binds;
	size_t n_binds;
	struct sbx_symlink *symlinks;
	size_t n_symlinks;
	char **env;              /* fixed "KEY=VALUE" */
	char **env_allow;        /* keys a job may set */
	char *seccomp;           /* seccomp policy name */
	struct sbx_limits defaults; /* every key set */
	struct sbx_limits minimums; /* every key set */
	struct sbx_limits maximums; /* every key set */
	uint64_t input_bytes_max;   /* per input file and in total */
	uint64_t stream_bytes_max;  /* captured stdout / stderr each */
	char **allowed_outputs;
	/* "refuse_active_content": of text/html and text/markdown, the types
	 * whose outputs flagged active_content are refused (never NULL). */
	char **refuse_active;
	char **network_profiles;
	char **fetch_profiles;   /* fetch profiles its jobs may name (never NULL) */
	struct sbx_kernel_quotas quotas; /* every key set (defaults filled in) */
	bool workspace_exec;     /* /tmp and /work without noexec */
	char **thread_env;       /* variables set to the run's CPU count */
	struct sbx_prepare *prepare; /* NULL: nothing to prepare */
	struct sbx_template *template; /* NULL: always cold */
	/* Seconds the output validator may take beyond the run's wall
	 * clock ("validate_seconds"). */
	uint64_t validate_seconds;
};

#define SBX_VALIDATE_SECONDS_DEFAULT 10
#define SBX_VALIDATE_SECONDS_MAX 600

enum sbx_net_kind { SBX_NET_DISABLED, SBX_NET_EGRESS };

/* Where an egress profile lets CONNECT tunnels go ("connect"). */
enum sbx_connect_mode {
	SBX_CONNECT_ANY,   /* true (the default): any port of the allowlist */
	SBX_CONNECT_NONE,  /* false: plain http:// requests only */
	SBX_CONNECT_PORTS, /* [PORT, ...]: only these ports */
};

struct sbx_egress_rule {
	char *host;          /* exact name, or "*.suffix" */
	uint16_t *ports;
	size_t n_ports;
};

struct sbx_netprofile {
	char *name;
	char *file;
	char *raw;
	size_t raw_len;
	char *description;
	enum sbx_net_kind kind;
	struct sbx_egress_rule *allow;
	size_t n_allow;
	char **allow_cidrs;      /* operator escape hatch; empty by default */
	uint64_t max_connections;/* 0 = profile default */
	uint64_t max_bytes;
	enum sbx_connect_mode connect;
	uint16_t *connect_ports; /* SBX_CONNECT_PORTS */
	size_t n_connect_ports;
};

/*
 * A fetch profile, DIR/fetch/NAME.json (sbx-policy(5), FETCH PROFILES):
 * what the confined fetcher may get before the payload starts.  @net
 * holds the allowlist and allow_cidrs in the egress profile's form
 * (kind SBX_NET_EGRESS, max_bytes the total a run may fetch), so that
 * the fetcher judges hosts and addresses with the proxy's own rules
 * (netcheck.h).
 */
struct sbx_fetchprofile {
	char *name;
	char *file;
	char *raw;
	size_t raw_len;
	struct sbx_netprofile net;
	bool allow_http;          /* "schemes" lists "http"; https is always allowed */
	uint64_t max_file_bytes;  /* per fetched file */
	uint64_t timeout_seconds; /* per request, and the slow-transfer window */
	uint64_t max_redirects;
	char *ca_file;            /* CA bundle for https; NULL: the system's */
};

#define SBX_FETCH_MAX_BYTES_DEFAULT (UINT64_C(256) << 20)
#define SBX_FETCH_TIMEOUT_DEFAULT 30
#define SBX_FETCH_REDIRECTS_DEFAULT 5

enum sbx_seccomp_op {
	SBX_SC_OP_EQ,        /* arg == value */
	SBX_SC_OP_MASKED_EQ, /* (arg & mask) == value */
	SBX_SC_OP_NE,        /* arg != value */
	/* Not written in the catalog: the parser produces them when it
	 * expands "not_in" (all comparisons are unsigned 64-bit). */
	SBX_SC_OP_LT,        /* arg < value */
	SBX_SC_OP_GT,        /* arg > value */
};

struct sbx_seccomp_arg {
	unsigned index;      /* 0..5 */
	enum sbx_seccomp_op op;
	uint64_t mask;
	uint64_t value;
};

struct sbx_seccomp_rule {
	char **syscalls;     /* names; resolved with seccomp_syscall_resolve_name */
	int errnum;          /* errno returned (EPERM, ENOSYS, ...) */
	struct sbx_seccomp_arg *args; /* all must match (AND) */
	size_t n_args;
	char *why;           /* mandatory: the reason for the deny */
};

struct sbx_seccomp_policy {
	char *name;
	char *file;
	char *raw;
	size_t raw_len;
	char *description;
	struct sbx_seccomp_rule *rules;
	size_t n_rules;
	/* The calls the policy lets through, each with its reason in the
	 * file ("allowed"); documentation checked by the parser and by the
	 * tests, not used by the filter (default allow).  NULL when the
	 * file has no "allowed". */
	char **allowed;
	/* Loaded as bytes only (sbx_catalog_load_with): no description or
	 * rules until sbx_catalog_seccomp_parse(). */
	bool rules_pending;
};

struct sbx_catalog {
	char *dir;
	struct sbx_profile *profiles;
	size_t n_profiles;
	struct sbx_netprofile *networks;
	size_t n_networks;
	struct sbx_seccomp_policy *seccomp;
	size_t n_seccomp;
	struct sbx_fetchprofile *fetches; /* DIR/fetch, which may be absent */
	size_t n_fetches;
};

/*
 * sbx_catalog_load() - load and cross-check every file under @dir.
 * Errors: SBX_EXIT_UNAVAILABLE (69) with "<file>: <json path>: ...".
 */
int sbx_catalog_load(struct sbx_catalog *cat, const char *dir, struct sbx_error *err);
void sbx_catalog_free(struct sbx_catalog *cat);

/*
 * sbx_catalog_load_with() - sbx_catalog_load(), except that a seccomp
 * policy whose exact bytes @seccomp_known(@ud, raw, len) vouches for is
 * not parsed: it is kept as bytes with rules_pending set.  The hook says
 * that this build parsed and accepted those bytes before (sbx run: the
 * program compiled from them is in the caller's cache), so the catalog is
 * still validated as a whole; sbx_catalog_seccomp_parse() gives the rules
 * when they are needed after all.
 */
struct sbx_catalog_hooks {
	bool (*seccomp_known)(void *ud, const char *raw, size_t len);
	void *ud;
};
int sbx_catalog_load_with(struct sbx_catalog *cat, const char *dir,
			  const struct sbx_catalog_hooks *hooks, struct sbx_error *err);

/*
 * sbx_catalog_seccomp_parse() - the rules of @pol (which may be pending)
 * into @out, a policy of its own to free with sbx_catalog_seccomp_free().
 * Errors: as sbx_catalog_load() reports them for that file (69).
 */
int sbx_catalog_seccomp_parse(const struct sbx_seccomp_policy *pol,
			      struct sbx_seccomp_policy *out, struct sbx_error *err);
void sbx_catalog_seccomp_free(struct sbx_seccomp_policy *pol);

/* Lookups by exact name; NULL when absent.  Names are compared as opaque
 * strings, so "../x" or "/usr/bin/python" simply do not exist. */
const struct sbx_profile *sbx_catalog_profile(const struct sbx_catalog *cat, const char *name);
const struct sbx_netprofile *sbx_catalog_network(const struct sbx_catalog *cat, const char *name);
const struct sbx_seccomp_policy *sbx_catalog_seccomp(const struct sbx_catalog *cat,
						     const char *name);
const struct sbx_fetchprofile *sbx_catalog_fetch(const struct sbx_catalog *cat, const char *name);

/* Hex SHA-256 of a catalog file's bytes into @out; 0, or -1 on failure.
 * Computed when the manifest is written, not at load: the first use of
 * libcrypto costs milliseconds that a run spends off its critical path. */
int sbx_catalog_sha256(const char *raw, size_t len, char out[65]);

/*
 * sbx_catalog_parse_file() - what sbx_catalog_load() does with one file of
 * @sub ("profiles", "network", "fetch" or "seccomp"; anything else is read as
 * seccomp) once its @len bytes are read: parse them as the entry @name
 * (already checked with sbx_catalog_name_valid()), named @file in
 * messages, and add it to @cat.  References to other files are not
 * checked.  For tests and fuzzers; free @cat with sbx_catalog_free().
 * Errors: -1 with SBX_EXIT_UNAVAILABLE naming @file and the JSON path.
 */
int sbx_catalog_parse_file(struct sbx_catalog *cat, const char *sub, const char *file,
			   const char *name, const char *data, size_t len, struct sbx_error *err);

/* The media types sbx knows how to validate; catalogs may not list others. */
bool sbx_media_type_known(const char *type);

/* ^[a-z0-9][a-z0-9_-]{0,63}$: the names of catalog files (without .json). */
bool sbx_catalog_name_valid(const char *name);

struct sbx_hostconfig;

/*
 * sbx_catalog_default_dir() - the catalog to load: @opt (--policy), else the
 * host configuration's "policy", else SYSCONFDIR/sbx/policy when it exists,
 * else DATADIR/sbx/policy.  Never NULL; points into @opt, @cfg or static
 * storage.
 */
const char *sbx_catalog_default_dir(const char *opt, const struct sbx_hostconfig *cfg);

#endif
