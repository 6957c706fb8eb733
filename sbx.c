/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sbx.c - the command line: a subcommand table, option parsing, and the
 * exit code.  Everything else lives in src/.
 */
#include "config.h"

#include <getopt.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "digest.h"
#include "error.h"

static const char usage_text[] =
	"Usage: sbx run [options] JOB            run one job (JOB is a path or - for stdin)\n"
	"       sbx verify [--pubkey F] [--artifacts DIR] MANIFEST\n"
	"       sbx keygen [-o FILE]\n"
	"       sbx check [--policy DIR]\n"
	"       sbx profiles [--policy DIR]\n"
	"       sbx cancel RUN_ID\n"
	"       sbx gc\n"
	"       sbx ps [--json]\n"
	"       sbx --version | --help\n"
	"\n"
	"Options accepted by every subcommand: --config FILE, --policy DIR, -q, -v.\n"
	"sbx run options: --principal NAME, --store DIR, --artifacts DIR, --key FILE,\n"
	"                 --events FILE|-, --queue-timeout SECONDS\n"
	"See sbx(1).\n";

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
	OPT_JSON,
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
	{ "pubkey", required_argument, NULL, OPT_PUBKEY },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Which options each subcommand accepts, beyond the common ones. */
enum {
	ACCEPT_RUN = 1 << 0,
	ACCEPT_VERIFY = 1 << 1,
	ACCEPT_KEYGEN = 1 << 2,
	ACCEPT_JSON = 1 << 3,
};

struct parsed {
	struct sbx_run_opts run;
	const char *pubkey;
	const char *out;
	bool json;
	char **operands;
	int n_operands;
};

static _printf_(2, 3) int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sbx: %s%s", cmd ? cmd : "", cmd ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fprintf(stderr, "Try 'sbx --help'.\n");
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

static int parse_options(const char *cmd, unsigned accept, int argc, char **argv, struct parsed *p)
{
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:qvh", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_CONFIG:
			p->run.common.config = optarg;
			break;
		case OPT_POLICY:
			p->run.common.policy = optarg;
			break;
		case 'q':
			p->run.common.verbosity = -1;
			break;
		case 'v':
			if (p->run.common.verbosity < 0)
				p->run.common.verbosity = 0;
			p->run.common.verbosity++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case OPT_PRINCIPAL:
		case OPT_STORE:
		case OPT_ARTIFACTS:
		case OPT_KEY:
		case OPT_EVENTS:
		case OPT_QUEUE_TIMEOUT:
			if (!(accept & ACCEPT_RUN))
				goto not_here;
			if (c == OPT_PRINCIPAL)
				p->run.principal = optarg;
			else if (c == OPT_STORE)
				p->run.store = optarg;
			else if (c == OPT_ARTIFACTS)
				p->run.artifacts = optarg;
			else if (c == OPT_KEY)
				p->run.key = optarg;
			else if (c == OPT_EVENTS)
				p->run.events = optarg;
			else if (parse_seconds_ms(optarg, &p->run.queue_timeout_ms) < 0)
				return usage_error(cmd, "--queue-timeout: expected seconds (0..86400), got '%s'",
						   optarg);
			break;
		case OPT_PUBKEY:
			if (!(accept & ACCEPT_VERIFY))
				goto not_here;
			p->pubkey = optarg;
			break;
		case OPT_JSON:
			if (!(accept & ACCEPT_JSON))
				goto not_here;
			p->json = true;
			break;
		case 'o':
			if (!(accept & ACCEPT_KEYGEN))
				goto not_here;
			p->out = optarg;
			break;
		case ':':
			return usage_error(cmd, "option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		}
		continue;
not_here:
		/* --artifacts is both a run and a verify option. */
		if (c == OPT_ARTIFACTS && (accept & ACCEPT_VERIFY)) {
			p->run.artifacts = optarg;
			continue;
		}
		return usage_error(cmd, "option '%s' does not apply here", argv[optind - 1]);
	}
	p->operands = argv + optind;
	p->n_operands = argc - optind;
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
	int r = operands("run", p, 1, 1);
	if (r)
		return r;
	p->run.job = p->operands[0];
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

static int do_ps(struct parsed *p)
{
	int r = operands("ps", p, 0, 0);
	return r ? r : sbx_cmd_ps(&p->run.common, p->json);
}

static const struct subcommand {
	const char *name;
	unsigned accept;
	int (*fn)(struct parsed *p);
} subcommands[] = {
	{ "run", ACCEPT_RUN, do_run },
	{ "verify", ACCEPT_VERIFY, do_verify },
	{ "keygen", ACCEPT_KEYGEN, do_keygen },
	{ "check", 0, do_check },
	{ "profiles", 0, do_profiles },
	{ "cancel", 0, do_cancel },
	{ "gc", 0, do_gc },
	{ "ps", ACCEPT_JSON, do_ps },
};

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
	struct parsed p = { 0 };
	int r;

	if (argc < 2)
		return usage_error(NULL, "%s", "missing subcommand");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("sbx %s\n", PACKAGE_VERSION);
		return 0;
	}
	prefault_heap();
	/* `sbx run` sets OpenSSL up later, off its start-up path (run.c). */
	if (strcmp(argv[1], "run") && sbx_crypto_init() < 0) {
		fputs("sbx: initializing OpenSSL failed\n", stderr);
		return SBX_EXIT_SOFTWARE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(subcommands); i++) {
		if (strcmp(argv[1], subcommands[i].name))
			continue;
		r = parse_options(subcommands[i].name, subcommands[i].accept, argc - 1, argv + 1, &p);
		if (r)
			return r;
		return subcommands[i].fn(&p);
	}
	return usage_error(NULL, "unknown subcommand '%s'", argv[1]);
}
