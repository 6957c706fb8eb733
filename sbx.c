/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbx.c - the command line: a subcommand table, option parsing, and the
 * exit code.  Everything else lives in src/.
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "batch.h"
#include "cli.h"
#include "digest.h"
#include "error.h"
#include "suggest.h"
#include "util.h"

/* Which subcommands an option belongs to. */
enum {
	FOR_RUN = 1 << 0,
	FOR_VERIFY = 1 << 1,
	FOR_KEYGEN = 1 << 2,
	FOR_CHECK = 1 << 3,
	FOR_PROFILES = 1 << 4,
	FOR_CANCEL = 1 << 5,
	FOR_GC = 1 << 6,
	FOR_PS = 1 << 7,
	FOR_PROMOTE = 1 << 8,
	FOR_PREPARE = 1 << 9,
	FOR_BATCH = 1 << 10,
	FOR_TEMPLATE = 1 << 11,
	FOR_ALL = 0xffff,
};

enum {
	OPT_CONFIG = 0x100,
	OPT_POLICY,
	OPT_PRINCIPAL,
	OPT_STORE,
	OPT_ARTIFACTS,
	OPT_KEY,
	OPT_EVENTS,
	OPT_QUEUE_TIMEOUT,
	OPT_PUBKEY,
	OPT_LIMIT,
	OPT_ALLOW,
	OPT_REQUIRE,
	OPT_PRINT_JOB,
	OPT_DRY_RUN,
	OPT_VERSION,
	OPT_JSON,
	OPT_STDOUT,
	OPT_STDERR,
	OPT_OUT,
	OPT_ATTACH,
	OPT_NO_ATTACH,
	OPT_STDIN,
	OPT_MANIFEST,
	OPT_MANIFEST_FD,
	OPT_NO_TEMPLATE,
};

static const struct option long_options[] = {
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "principal", required_argument, NULL, OPT_PRINCIPAL },
	{ "store", required_argument, NULL, OPT_STORE },
	{ "artifacts", required_argument, NULL, OPT_ARTIFACTS },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "events", required_argument, NULL, OPT_EVENTS },
	{ "queue-timeout", required_argument, NULL, OPT_QUEUE_TIMEOUT },
	{ "profile", required_argument, NULL, 'p' },
	{ "network", required_argument, NULL, 'n' },
	{ "input", required_argument, NULL, 'i' },
	{ "limit", required_argument, NULL, OPT_LIMIT },
	{ "allow", required_argument, NULL, OPT_ALLOW },
	{ "require", required_argument, NULL, OPT_REQUIRE },
	{ "code", required_argument, NULL, 'c' },
	{ "print-job", no_argument, NULL, OPT_PRINT_JOB },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "pubkey", required_argument, NULL, OPT_PUBKEY },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "stdout", required_argument, NULL, OPT_STDOUT },
	{ "stderr", required_argument, NULL, OPT_STDERR },
	{ "output", required_argument, NULL, 'o' },
	{ "jobs", required_argument, NULL, 'j' },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "attach", no_argument, NULL, OPT_ATTACH },
	{ "no-attach", no_argument, NULL, OPT_NO_ATTACH },
	{ "stdin", no_argument, NULL, OPT_STDIN },
	{ "manifest", required_argument, NULL, OPT_MANIFEST },
	{ "manifest-fd", required_argument, NULL, OPT_MANIFEST_FD },
	{ "no-template", no_argument, NULL, OPT_NO_TEMPLATE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Before the subcommand: only what every subcommand accepts. */
static const struct option global_options[] = {
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* Which subcommands take each option, for "does not apply here" and for
 * the names a near miss is compared with. */
static unsigned option_owners(int val)
{
	switch (val) {
	case OPT_KEY:
		return FOR_RUN | FOR_BATCH | FOR_PROMOTE;
	case OPT_PRINCIPAL: case OPT_STORE: case OPT_QUEUE_TIMEOUT: case OPT_NO_TEMPLATE:
		return FOR_RUN | FOR_BATCH;
	case 'p':
		return FOR_RUN | FOR_TEMPLATE;
	case 'j': case OPT_OUT:
		return FOR_BATCH;
	case OPT_EVENTS: case 'n': case 'i': case OPT_LIMIT:
	case OPT_ALLOW: case OPT_REQUIRE: case 'c': case OPT_PRINT_JOB: case OPT_DRY_RUN:
	case OPT_STDOUT: case OPT_STDERR: case OPT_ATTACH: case OPT_NO_ATTACH: case OPT_STDIN:
	case OPT_MANIFEST: case OPT_MANIFEST_FD:
		return FOR_RUN;
	case OPT_ARTIFACTS:
		return FOR_RUN | FOR_VERIFY | FOR_BATCH | FOR_PROMOTE;
	case OPT_PUBKEY:
		return FOR_VERIFY;
	case OPT_JSON:
		return FOR_CHECK | FOR_PROFILES | FOR_PS | FOR_VERIFY | FOR_KEYGEN | FOR_GC |
		       FOR_CANCEL | FOR_BATCH | FOR_RUN | FOR_PREPARE | FOR_TEMPLATE;
	case 'o':
		return FOR_KEYGEN;
	default:
		return FOR_ALL;
	}
}

/* One line of a subcommand's --help. */
struct optdoc {
	unsigned who;
	const char *flags;
	const char *help;
};

static const struct optdoc optdocs[] = {
	{ FOR_RUN, "-p, --profile PROFILE", "one-line run: the runtime profile (the job is built\n"
					    "from these options; see --print-job)" },
	{ FOR_RUN, "-c, --code CODE", "one-line run: the program text; words after -- are\n"
				      "its args" },
	{ FOR_RUN, "-- FILE [ARGS...]", "one-line run: FILE's bytes are the code, ARGS its args" },
	{ FOR_RUN, "-n, --network NETWORK", "one-line run: the network profile (default disabled)" },
	{ FOR_RUN, "-i, --input HANDLE", "one-line run: an input handle of the store (repeatable)" },
	{ FOR_RUN, "-i, --input NAME=PATH", "one-line run: copy the local file PATH to /work/in/NAME;\n"
					    "-i DIR/FILE (with a '/') names it FILE (repeatable)" },
	{ FOR_RUN, "--limit KEY=VALUE", "one-line run: a limit, e.g. memory_mib=256 (repeatable)" },
	{ FOR_RUN, "--allow TYPE", "one-line run: an allowed output type (repeatable)" },
	{ FOR_RUN, "--require PATH", "one-line run: a required output (repeatable)" },
	{ FOR_RUN, "--print-job", "one-line run: print the job it builds and exit" },
	{ FOR_RUN, "--dry-run", "admit the job and print its effective limits, binds, env\n"
				"and outputs; run nothing" },
	{ FOR_RUN | FOR_BATCH, "--no-template", "start cold, not from the profile's template\n"
					       "(sbx(1) TEMPLATES)" },
	{ FOR_TEMPLATE, "-p, --profile PROFILE", "only this profile's template (default: every\n"
						 "profile with a template)" },
	{ FOR_BATCH, "-j, --jobs N", "at most N runs at once (default and maximum: the\n"
				     "host's max_concurrent)" },
	{ FOR_BATCH, "--out DIR", "each job's manifest as DIR/NAME; a job whose manifest\n"
				  "is there is skipped (default sbx-batch)" },
	{ FOR_BATCH, "--artifacts DIR", "each run's results in DIR/RUN_ID (default: the results\n"
					"area, $XDG_STATE_HOME/sbx/runs)" },
	{ FOR_BATCH, "--queue-timeout SECONDS", "how long each run may wait for capacity (default\n"
						"86400)" },
	{ FOR_RUN | FOR_BATCH, "--principal NAME", "whose input store the handles resolve in (default: the\n"
				       "invoking user's login name)" },
	{ FOR_RUN | FOR_BATCH, "--store DIR", "input store root, DIR/PRINCIPAL/HANDLE (default: config\n"
				  "store, else $XDG_DATA_HOME/sbx/store)" },
	{ FOR_RUN, "--artifacts DIR", "this run's results directory, new or empty (default\n"
				      "$XDG_STATE_HOME/sbx/runs/RUN_ID, made only if needed)" },
	{ FOR_VERIFY, "--artifacts DIR", "also check the artifacts' digests against files in DIR" },
	{ FOR_PROMOTE, "--artifacts DIR", "where the held files go, a new or empty directory\n"
					  "(default RESULTS/RUN_ID/promoted)" },
	{ FOR_PROMOTE, "--key FILE", "Ed25519 signing key (default: config signing_key, else\n"
				     "a per-user key)" },
	{ FOR_RUN | FOR_BATCH, "--key FILE", "Ed25519 signing key (default: config signing_key, else\n"
				 "a per-user key)" },
	{ FOR_RUN, "--events FILE|-", "lifecycle events as JSON Lines (- = stderr)" },
	{ FOR_RUN, "--stdout FILE", "keep the payload's captured stdout in FILE, a new file\n"
				   "(default DIR/.sbx/stdout beside the artifacts)" },
	{ FOR_RUN, "--stderr FILE", "keep the payload's captured stderr in FILE, a new file\n"
				   "(default DIR/.sbx/stderr beside the artifacts)" },
	{ FOR_RUN, "--queue-timeout SECONDS", "how long admission may wait for capacity (default 0)" },
	{ FOR_RUN, "--attach", "show the program's stdout and stderr live on sbx's (the\n"
			       "default when stdout is a terminal); the manifest goes to\n"
			       "--manifest, else DIR/.sbx/manifest.json" },
	{ FOR_RUN, "--no-attach", "the signed manifest on stdout, also on a terminal" },
	{ FOR_RUN, "--stdin", "pass sbx's stdin to the program's stdin, through a pipe" },
	{ FOR_RUN, "--manifest FILE", "write the signed manifest to FILE (made or emptied)" },
	{ FOR_RUN, "--manifest-fd N", "write the signed manifest to the open fd N" },
	{ FOR_VERIFY, "--pubkey FILE", "the public key (default: the one the manifest names)" },
	{ FOR_KEYGEN, "-o, --output FILE", "where the key goes (FILE.pub beside it)" },
/* What --json does to errors, for every subcommand that takes it. */
#define JSON_ERRORS "\nusage (64) and job file (65) errors: one JSON line on\nstderr (schema/error.schema.json)"
	{ FOR_CHECK | FOR_PROFILES, "--json", "one JSON object on one line instead of text" JSON_ERRORS },
	{ FOR_PS, "--json", "a JSON array, one object per run, instead of the table" JSON_ERRORS },
	{ FOR_RUN, "--json", "with --dry-run: the plan as one JSON object on one line\n"
			     "(schema/dry-run.schema.json); a run's manifest is JSON\n"
			     "already" JSON_ERRORS },
	{ FOR_BATCH, "--json", "after the manifests, the summary as one JSON object\n"
			       "on stdout (schema/batch-summary.schema.json)" JSON_ERRORS },
	{ FOR_VERIFY | FOR_KEYGEN | FOR_GC | FOR_CANCEL | FOR_PREPARE | FOR_TEMPLATE, "--json",
	  "the outcome as one JSON object on one line on stdout\n"
	  "(schema/SUBCOMMAND.schema.json); the exit status is the same" JSON_ERRORS },
	{ FOR_ALL, "--config FILE", "host configuration (default $SBX_CONFIG, else\n"
				    "$XDG_CONFIG_HOME/sbx/sbx.json (not for root), else\n"
				    SYSCONFDIR "/sbx/sbx.json)" },
	{ FOR_ALL, "--policy DIR", "the catalog (default: config, else the installed one)" },
	{ FOR_ALL, "-q, --quiet", "fewer diagnostics on stderr" },
	{ FOR_ALL, "-v, --verbose", "more diagnostics on stderr" },
	{ FOR_ALL, "-h, --help", "this text" },
};

struct parsed {
	struct sbx_run_opts run;
	const char *pubkey;
	const char *out;
	const char *batch_out;     /* batch --out */
	unsigned jobs;             /* batch -j */
	int attach;                /* --attach 1, --no-attach 0, neither -1 */
	bool queue_timeout_set;
	char **operands;
	int n_operands;
};

struct subcommand {
	const char *name;
	unsigned who;
	const char *synopsis;
	const char *what;
	int (*fn)(struct parsed *p);
};

static const char usage_text[] =
	"Usage: sbx [--config FILE] [--policy DIR] [-q|-v] SUBCOMMAND [options] [operands]\n"
	"\n"
	"  run [options] JOB            run one job (JOB is a path or - for stdin)\n"
	"  run [options] -p PROFILE [-c CODE | -- FILE [ARGS...]]\n"
	"                               a one-line run: the same job, built from options\n"
	"  verify [--pubkey F] [--artifacts DIR] MANIFEST\n"
	"                               check a manifest's signature and artifacts\n"
	"  keygen [-o FILE]             new Ed25519 signing key\n"
	"  check                        what this host can enforce; is the catalog valid\n"
	"  profiles                     list runtime and network profiles\n"
	"  cancel RUN_ID                cancel a running job\n"
	"  ps                           list the live runs the caller may see\n"
	"  gc                           reap what crashed runs left behind, old holds\n"
	"  promote RUN_ID [PATH...]     release held outputs; prints a signed manifest\n"
	"  batch [options] DIR|-        many job files through admission\n"
	"  prepare [PROFILE...]         build profiles' prepared runtime state\n"
	"  template start|stop|status [-p PROFILE]\n"
	"                               manage profiles' templates\n"
	"  --version | --help\n"
	"\n"
	"Options accepted by every subcommand, before or after it: --config FILE,\n"
	"--policy DIR, -q, -v.  'sbx SUBCOMMAND --help' lists a subcommand's options.\n"
	"See sbx(1).\n";

/* Print @text indented to @col, each of its lines after the first on a
 * line of its own. */
static void print_wrapped(const char *text, int col)
{
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		printf("%.*s\n", (int)n, p);
		p += n;
		if (*p == '\n' && *++p)
			printf("%*s", col, "");
	}
}

static void subcommand_help(const struct subcommand *sc)
{
	const int col = 28;

	printf("Usage: %s\n\n%s\n", sc->synopsis, sc->what);
	for (int pass = 0; pass < 2; pass++) {
		bool any = false;

		for (size_t i = 0; i < ARRAY_SIZE(optdocs); i++) {
			const struct optdoc *d = &optdocs[i];

			if (!(d->who & sc->who) || (pass == 0) != (d->who != FOR_ALL))
				continue;
			if (!any)
				printf("\n%s\n", pass == 0 ? "Options:" : "Options of every subcommand:");
			any = true;
			printf("  %-*s", col - 2, d->flags);
			if (strlen(d->flags) > (size_t)col - 3)
				printf("\n%*s", col, "");
			print_wrapped(d->help, col);
		}
	}
	printf("\nSee sbx(1).\n");
}

/*
 * A usage error: the message, then where to look, each line starting
 * "sbx: " (SPEC §2).
 */
static _printf_(2, 3) int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	if (sbx_error_json_on()) {
		char msg[1024], hint[128];
		int k = snprintf(msg, sizeof(msg), "%s%s", cmd ? cmd : "", cmd ? ": " : "");

		va_start(ap, fmt);
		vsnprintf(msg + k, sizeof(msg) - (size_t)k, fmt, ap);
		va_end(ap);
		snprintf(hint, sizeof(hint), "try 'sbx %s%s--help'", cmd ? cmd : "", cmd ? " " : "");
		sbx_error_print_json(SBX_EXIT_USAGE, msg, hint, NULL, NULL);
		return SBX_EXIT_USAGE;
	}
	fprintf(stderr, "sbx: %s%s", cmd ? cmd : "", cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fprintf(stderr, "sbx: try 'sbx %s%s--help'\n", cmd ? cmd : "", cmd ? " " : "");
	return SBX_EXIT_USAGE;
}

static int parse_seconds_ms(const char *s, uint64_t *ms)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || !(d >= 0) || d > 86400.0)
		return -1;
	*ms = (uint64_t)(d * 1000.0 + 0.5);
	return 0;
}

/* The long option of this subcommand nearest to a misspelt one. */
static const char *suggest_option(const char *arg, unsigned who)
{
	char word[SBX_SUGGEST_MAX_LEN + 1];
	struct sbx_suggest s;
	size_t n;

	if (strncmp(arg, "--", 2))
		return NULL;
	n = strcspn(arg + 2, "=");
	if (n > SBX_SUGGEST_MAX_LEN)
		return NULL;
	memcpy(word, arg + 2, n);
	word[n] = '\0';
	sbx_suggest_init(&s, word);
	for (const struct option *o = long_options; o->name; o++)
		if (option_owners(o->val) & who)
			sbx_suggest_add(&s, o->name);
	return sbx_suggest_result(&s);
}

static int unknown_option(const char *cmd, unsigned who, const char *arg)
{
	const char *best = suggest_option(arg, who);

	if (best)
		return usage_error(cmd, "unknown option '%s'; did you mean '--%s'?", arg, best);
	return usage_error(cmd, "unknown option '%s'", arg);
}

/* Add @s to the NULL-terminated list *@v. */
static void push(const char ***v, size_t *n, const char *s)
{
	*v = sbx_xrealloc(*v, (*n + 2) * sizeof(**v));
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
}

static void help_exit(const struct subcommand *sc)
{
	if (sc)
		subcommand_help(sc);
	else
		fputs(usage_text, stdout);
	exit(0);
}

/* Options every subcommand takes; 1 when @c was one. */
static int common_option(int c, const struct subcommand *sc, struct parsed *p)
{
	switch (c) {
	case OPT_CONFIG:
		p->run.common.config = optarg;
		return 1;
	case OPT_POLICY:
		p->run.common.policy = optarg;
		return 1;
	case 'q':
		p->run.common.verbosity = -1;
		return 1;
	case 'v':
		if (p->run.common.verbosity < 0)
			p->run.common.verbosity = 0;
		p->run.common.verbosity++;
		return 1;
	case 'h':
		help_exit(sc);
	}
	return 0;
}

/*
 * A subcommand's options, GNU style: options and operands in any order
 * (`sbx run job.json --store X`), "--" ends the options, and what follows
 * it are operands whatever they look like (a one-line run's FILE and
 * ARGS).  Operands are kept in the order given.
 */
static int parse_options(const struct subcommand *sc, int argc, char **argv, struct parsed *p)
{
	struct sbx_oneliner *one = &p->run.one;
	size_t n_in = 0, n_lim = 0, n_allow = 0, n_req = 0;
	const char *cmd = sc->name;
	int c;

	/* In order ("-"), so that nothing after "--" is taken for an
	 * option; errors are reported here (":"). */
	optind = 0;
	opterr = 0;
	p->operands = sbx_xcalloc((size_t)argc + 1, sizeof(char *));
	while ((c = getopt_long(argc, argv, "-:o:qvhp:n:i:c:j:", long_options, NULL)) != -1) {
		if (c == 1) {
			p->operands[p->n_operands++] = optarg;
			continue;
		}
		if (c == ':')
			return usage_error(cmd, "option '%s' needs an argument", argv[optind - 1]);
		if (c == '?')
			return optopt ? usage_error(cmd, "unknown option '-%c'", optopt) :
					unknown_option(cmd, sc->who, argv[optind - 1]);
		if (!(option_owners(c) & sc->who))
			return usage_error(cmd, "option '%s' does not apply here", argv[optind - 1]);
		if (common_option(c, sc, p))
			continue;
		switch (c) {
		case OPT_PRINCIPAL:
			p->run.principal = optarg;
			break;
		case OPT_STORE:
			p->run.store = optarg;
			break;
		case OPT_ARTIFACTS:
			p->run.artifacts = optarg;
			break;
		case OPT_KEY:
			p->run.key = optarg;
			break;
		case OPT_EVENTS:
			p->run.events = optarg;
			break;
		case OPT_QUEUE_TIMEOUT:
			if (parse_seconds_ms(optarg, &p->run.queue_timeout_ms) < 0)
				return usage_error(cmd, "--queue-timeout: expected seconds (0..86400), got '%s'",
						   optarg);
			p->queue_timeout_set = true;
			break;
		case 'j': {
			char *end;
			unsigned long n;

			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || n < 1 || n > 4096)
				return usage_error(cmd, "--jobs: expected a number 1..4096, got '%s'", optarg);
			p->jobs = (unsigned)n;
			break;
		}
		case OPT_OUT:
			p->batch_out = optarg;
			break;
		case 'p':
			one->profile = optarg;
			break;
		case 'n':
			one->network = optarg;
			break;
		case 'c':
			if (one->code)
				return usage_error(cmd, "-c given twice");
			one->code = optarg;
			break;
		case 'i':
			push(&one->handles, &n_in, optarg);
			break;
		case OPT_LIMIT:
			push(&one->limits, &n_lim, optarg);
			break;
		case OPT_ALLOW:
			push(&one->allow, &n_allow, optarg);
			break;
		case OPT_REQUIRE:
			push(&one->require, &n_req, optarg);
			break;
		case OPT_PRINT_JOB:
			p->run.print_job = true;
			break;
		case OPT_DRY_RUN:
			p->run.dry_run = true;
			break;
		case OPT_NO_TEMPLATE:
			p->run.no_template = true;
			break;
		case OPT_PUBKEY:
			p->pubkey = optarg;
			break;
		case OPT_JSON:
			p->run.common.json = true;
			break;
		case OPT_STDOUT:
			p->run.stdout_file = optarg;
			break;
		case OPT_STDERR:
			p->run.stderr_file = optarg;
			break;
		case OPT_ATTACH:
		case OPT_NO_ATTACH:
			if (p->attach >= 0 && p->attach != (c == OPT_ATTACH))
				return usage_error(cmd, "--attach and --no-attach exclude each other");
			p->attach = c == OPT_ATTACH;
			break;
		case OPT_STDIN:
			p->run.stdin_pipe = true;
			break;
		case OPT_MANIFEST:
			p->run.manifest_file = optarg;
			break;
		case OPT_MANIFEST_FD: {
			char *end;
			long fd;

			errno = 0;
			fd = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || fd < 0 || fd > 65535)
				return usage_error(cmd, "--manifest-fd: expected an open file descriptor number, got '%s'",
						   optarg);
			p->run.manifest_fd = (int)fd;
			p->run.manifest_fd_set = true;
			break;
		}
		case 'o':
			p->out = optarg;
			break;
		}
	}
	while (optind < argc)
		p->operands[p->n_operands++] = argv[optind++];
	return 0;
}

static int operands(const char *cmd, const struct parsed *p, int min, int max)
{
	if (p->n_operands < min)
		return usage_error(cmd, "%s", min == 1 && max == 1 ? "expected one operand" : "missing operand");
	if (p->n_operands > max)
		return usage_error(cmd, "unexpected operand '%s'", p->operands[max]);
	return 0;
}

static int do_run(struct parsed *p)
{
	struct sbx_oneliner *one = &p->run.one;
	int r;

	if (p->run.print_job && p->run.dry_run)
		return usage_error("run", "--print-job and --dry-run exclude each other");
	/* --json of a run: errors as JSON (main() set that); the manifest
	 * is JSON already.  --print-job prints the job as JSON anyway. */
	if (p->run.common.json && p->run.print_job)
		return usage_error("run", "--json does not go with --print-job (its job is JSON already)");
	/* A person at a terminal sees the program's output, as with docker
	 * run; a back end reading stdout through a pipe gets the manifest. */
	p->run.attach = p->attach >= 0 ? p->attach == 1 : isatty(STDOUT_FILENO) == 1;
	/* The copies go to fds 1 and 2 as they are now, and --stdin reads
	 * fd 0: one that is closed could be a file sbx opens later. */
	if (p->run.attach && (fcntl(STDOUT_FILENO, F_GETFD) < 0 || fcntl(STDERR_FILENO, F_GETFD) < 0))
		return usage_error("run", "--attach: standard output or error is closed; open both, "
					  "or use --no-attach");
	if (p->run.stdin_pipe && fcntl(STDIN_FILENO, F_GETFD) < 0)
		return usage_error("run", "--stdin: standard input is closed; open it (</dev/null for none)");
	if (!one->profile) {
		if (one->code || one->network || one->handles || one->limits || one->allow ||
		    one->require)
			return usage_error("run", "a one-line run needs -p PROFILE");
		if (p->run.print_job)
			return usage_error("run", "--print-job shows the job of a one-line run (-p PROFILE)");
		r = operands("run", p, 1, 1);
		if (r)
			return r;
		p->run.job = p->operands[0];
		return sbx_cmd_run(&p->run);
	}
	/* -c CODE [-- ARGS...] or -- FILE [ARGS...]. */
	if (!one->code) {
		if (p->n_operands < 1)
			return usage_error("run", "a one-line run needs -c CODE or -- FILE");
		one->file = p->operands[0];
		one->args = (const char *const *)p->operands + 1;
	} else {
		one->args = (const char *const *)p->operands;
	}
	return sbx_cmd_run(&p->run);
}

static int do_verify(struct parsed *p)
{
	int r = operands("verify", p, 1, 1);
	if (r)
		return r;
	return sbx_cmd_verify(&p->run.common, p->operands[0], p->pubkey, p->run.artifacts);
}

static int do_keygen(struct parsed *p)
{
	int r = operands("keygen", p, 0, 0);
	return r ? r : sbx_cmd_keygen(&p->run.common, p->out);
}

static int do_check(struct parsed *p)
{
	int r = operands("check", p, 0, 0);
	return r ? r : sbx_cmd_check(&p->run.common);
}

static int do_profiles(struct parsed *p)
{
	int r = operands("profiles", p, 0, 0);
	return r ? r : sbx_cmd_profiles(&p->run.common);
}

static int do_cancel(struct parsed *p)
{
	int r = operands("cancel", p, 1, 1);
	return r ? r : sbx_cmd_cancel(&p->run.common, p->operands[0]);
}

static int do_gc(struct parsed *p)
{
	int r = operands("gc", p, 0, 0);
	return r ? r : sbx_cmd_gc(&p->run.common);
}

static int do_promote(struct parsed *p)
{
	struct sbx_promote_opts o = {
		.common = p->run.common,
		.artifacts = p->run.artifacts,
		.key = p->run.key,
	};

	if (p->n_operands < 1)
		return usage_error("promote", "expected RUN_ID [PATH...]");
	o.run_id = p->operands[0];
	o.paths = p->operands + 1;
	o.n_paths = (size_t)(p->n_operands - 1);
	return sbx_cmd_promote(&o);
}

static int do_prepare(struct parsed *p)
{
	return sbx_cmd_prepare(&p->run.common, p->operands);
}

static int do_template(struct parsed *p)
{
	int r = operands("template", p, 1, 1);
	const char *verb;

	if (r)
		return r;
	verb = p->operands[0];
	if (strcmp(verb, "start") && strcmp(verb, "stop") && strcmp(verb, "status"))
		return usage_error("template", "expected start, stop or status, not '%s'", verb);
	return sbx_cmd_template(&p->run.common, verb, p->run.one.profile);
}

static int do_ps(struct parsed *p)
{
	int r = operands("ps", p, 0, 0);
	return r ? r : sbx_cmd_ps(&p->run.common, p->run.common.json);
}

static int do_batch(struct parsed *p)
{
	struct sbx_batch_opts b = {
		.run = p->run,
		.out = p->batch_out ? p->batch_out : "sbx-batch",
		.jobs = p->jobs,
		.queue_timeout_set = p->queue_timeout_set,
	};
	int r = operands("batch", p, 1, 1);

	if (r)
		return r;
	b.source = p->operands[0];
	return sbx_cmd_batch(&b);
}

static const struct subcommand subcommands[] = {
	{ "run", FOR_RUN,
	  "sbx run [options] JOB\n"
	  "       sbx run [options] -p PROFILE [-n NETWORK] [-i HANDLE]... [--limit KEY=VALUE]...\n"
	  "               [--allow TYPE]... [--require PATH]... (-c CODE [-- ARGS...] | -- FILE [ARGS...])",
	  "Run one job (JOB is a path, or - for stdin) in a fresh sandbox and print its\n"
	  "signed manifest on stdout.  On a terminal (or with --attach) the program's\n"
	  "stdout and stderr are shown live instead, the manifest is kept in the run's\n"
	  "directory (or --manifest FILE) and a one-line summary ends on stderr.\n"
	  "With -p, the job is built from the options instead, exactly as a job file\n"
	  "would hold it, and admitted on the same terms.",
	  do_run },
	{ "verify", FOR_VERIFY, "sbx verify [--pubkey FILE] [--artifacts DIR] [--json] MANIFEST",
	  "Check a manifest's signature and, with --artifacts, the artifacts' digests.", do_verify },
	{ "keygen", FOR_KEYGEN, "sbx keygen [-o FILE] [--json]",
	  "Make a new Ed25519 signing key (PKCS#8 PEM, mode 0600) and FILE.pub.", do_keygen },
	{ "check", FOR_CHECK, "sbx check [--policy DIR] [--json]",
	  "Report what this host can enforce, and whether the catalog is valid.", do_check },
	{ "profiles", FOR_PROFILES, "sbx profiles [--policy DIR] [--json]",
	  "List the catalog's runtime and network profiles.", do_profiles },
	{ "cancel", FOR_CANCEL, "sbx cancel [--json] RUN_ID",
	  "Cancel a running job (from another shell).", do_cancel },
	{ "gc", FOR_GC, "sbx gc [--json]",
	  "Reap what crashed runs left behind, and holds older than hold_max_age_hours.", do_gc },
	{ "promote", FOR_PROMOTE, "sbx promote [--artifacts DIR] [--key FILE] RUN_ID [PATH...]",
	  "Release a run's held outputs (all, or the PATHs named) into DIR and print a\n"
	  "signed promote manifest on stdout.  Only the run's owner or root may, with\n"
	  "the key that signed the run: its manifest must verify with --key.", do_promote },
	{ "prepare", FOR_PREPARE, "sbx prepare [--json] [PROFILE...]",
	  "Build the prepared runtime state of the named profiles (default: every\n"
	  "profile with a prepare step), as the owner of the catalog.", do_prepare },
	{ "template", FOR_TEMPLATE, "sbx template start|stop|status [-p PROFILE] [--json]",
	  "Start, stop or list the templates of profiles that have one (sbx(1)\n"
	  "TEMPLATES): a process per profile that imported its modules once, from\n"
	  "which runs are cloned.  Runs start one when none is running.", do_template },
	{ "ps", FOR_PS, "sbx ps [--json]",
	  "List the live runs the caller may see: run id, user, principal, profile,\n"
	  "stage, elapsed time, memory.", do_ps },
	{ "batch", FOR_BATCH, "sbx batch [options] DIR|-",
	  "Run the *.json job files of DIR (sorted), or those named one a line on stdin\n"
	  "(-), each as 'sbx run JOB' would, at most --jobs at once, through admission.\n"
	  "Each manifest goes to stdout as its run ends and to --out DIR; a job whose\n"
	  "manifest is there already is skipped.  A summary ends on stderr.", do_batch },
};
static const size_t n_subcommands = ARRAY_SIZE(subcommands);

static const struct subcommand *find_subcommand(const char *name)
{
	for (size_t i = 0; i < n_subcommands; i++)
		if (!strcmp(name, subcommands[i].name))
			return &subcommands[i];
	return NULL;
}

static int unknown_subcommand(const char *name)
{
	struct sbx_suggest s;
	const char *best;

	sbx_suggest_init(&s, name);
	for (size_t i = 0; i < n_subcommands; i++)
		sbx_suggest_add(&s, subcommands[i].name);
	best = sbx_suggest_result(&s);
	if (best)
		return usage_error(NULL, "unknown subcommand '%s'; did you mean '%s'?", name, best);
	return usage_error(NULL, "unknown subcommand '%s'", name);
}

/*
 * A page fault costs 10-25 us on some virtual machines, a page of
 * MADV_POPULATE_WRITE well under one.  sbx run uses a few hundred KiB of
 * heap (the catalog, the job, OpenSSL, the manifest), so the heap grows
 * to 1 MiB at once, populated in one call, and stays: nothing is trimmed
 * and buffers up to 4 MiB come from it rather than from fresh mmaps (each
 * of which faults page by page and flushes the TLB when unmapped).  A
 * kernel without MADV_POPULATE_WRITE (before 5.14) faults pages in as
 * usual.
 */
static void prefault_heap(void)
{
	const size_t size = 1 << 20;
	struct mallinfo2 mi;
	char *start, *end;
	void *p;

	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 8 << 20);
	mallopt(M_TOP_PAD, (int)size);
	/* The main arena runs contiguously from its start to the break; a
	 * request its top chunk cannot hold grows it by M_TOP_PAD. */
	mi = mallinfo2();
	start = (char *)sbrk(0) - mi.arena;
	p = malloc(mi.keepcost + 1);
	end = sbrk(0);
	free(p);
	if (end > start)
		(void)madvise(start, (size_t)(end - start), MADV_POPULATE_WRITE);
	mallopt(M_TOP_PAD, 128 * 1024); /* glibc's default from here on */
}

int main(int argc, char **argv)
{
	const struct subcommand *sc;
	struct parsed p = { .attach = -1 };
	int c, r;

	/* Options before the subcommand: only those every subcommand takes
	 * ("+": the subcommand's name ends them). */
	opterr = 0;
	/* --json anywhere before "--" makes the usage and job errors JSON,
	 * also those met before the option itself is parsed. */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--json") == 0)
			sbx_error_json(true);
	while ((c = getopt_long(argc, argv, "+:qvh", global_options, NULL)) != -1) {
		if (c == OPT_VERSION) {
			printf("sbx %s\n", PACKAGE_VERSION);
			return 0;
		}
		if (c == ':')
			return usage_error(NULL, "option '%s' needs an argument", argv[optind - 1]);
		if (c == '?') {
			if (optopt)
				return usage_error(NULL, "unknown option '-%c' before the subcommand",
						   optopt);
			return usage_error(NULL, "option '%s' goes after the subcommand, or is unknown",
					   argv[optind - 1]);
		}
		common_option(c, NULL, &p);
	}
	if (optind >= argc)
		return usage_error(NULL, "%s", "missing subcommand");
	if (!strcmp(argv[optind], "help")) {
		if (optind + 1 < argc) {
			sc = find_subcommand(argv[optind + 1]);
			if (!sc)
				return unknown_subcommand(argv[optind + 1]);
			help_exit(sc);
		}
		help_exit(NULL);
	}
	sc = find_subcommand(argv[optind]);
	if (!sc)
		return unknown_subcommand(argv[optind]);
	prefault_heap();
	r = parse_options(sc, argc - optind, argv + optind, &p);
	if (r)
		return r;
	return sc->fn(&p);
}
