/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-run - time several commands interleaved, so that a drift in the
 * machine's load hits them all alike.
 *
 *   bench-run -n RUNS [-w WARMUP] [-o FILE] NAME=COMMAND...
 *
 * Each COMMAND is split on spaces and spawned directly (no shell in the
 * measurement), stdout and stderr to /dev/null.  Prints one line per
 * command: name, median and p90 wall milliseconds, the ratio of its median
 * to the first command's, the median CPU milliseconds (user + system of the
 * command and of every process it started, which on a shared machine is
 * steadier than wall time) and the largest peak RSS over its runs.
 *
 * Every process the command started counts, also one its parent never
 * waited for: bench-run is their subreaper, and reaps what is left once the
 * command has exited.  (bubblewrap's outer process exits on its init's
 * report without reaping it: counting what wait4 reports for it alone
 * leaves out the init and the payload, whatever the payload costs.)  The
 * wall time ends when the command itself exits.
 * -o FILE also writes one line per command for scripts to compare pairs
 * of commands from the same rounds: "NAME MEDIAN_MS P90_MS CPU_MS FAILED".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct cmd {
	char *name;
	char *argv[64];
	double *ms;
	double *cpu_ms;
	long maxrss_kib;
	int failures;
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double tv_ms(struct timeval tv)
{
	return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

static double run_once(struct cmd *c, double *cpu_ms)
{
	posix_spawn_file_actions_t fa;
	double t0, t1;
	struct rusage ru;
	pid_t pid;
	int status;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	t0 = now_ms();
	if (posix_spawn(&pid, c->argv[0], &fa, NULL, c->argv, environ) != 0) {
		perror(c->argv[0]);
		exit(2);
	}
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	t1 = now_ms();
	*cpu_ms = tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
	if (ru.ru_maxrss > c->maxrss_kib)
		c->maxrss_kib = ru.ru_maxrss;
	/* What the command left running, reparented to us: its CPU is the
	 * run's too. */
	for (;;) {
		struct rusage rest;
		int st;
		if (wait4(-1, &st, 0, &rest) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		*cpu_ms += tv_ms(rest.ru_utime) + tv_ms(rest.ru_stime);
	}
	posix_spawn_file_actions_destroy(&fa);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		c->failures++;
	return t1 - t0;
}

int main(int argc, char **argv)
{
	int runs = 30, warmup = 3, opt, n = 0;
	const char *out_path = NULL;
	FILE *out = NULL;
	struct cmd *cmds;

	while ((opt = getopt(argc, argv, "n:w:o:")) != -1) {
		if (opt == 'n')
			runs = atoi(optarg);
		else if (opt == 'w')
			warmup = atoi(optarg);
		else if (opt == 'o')
			out_path = optarg;
		else
			return 2;
	}
	if (optind >= argc || runs < 1) {
		fprintf(stderr, "usage: bench-run -n RUNS [-w WARMUP] [-o FILE] NAME=COMMAND...\n");
		return 2;
	}
	if (out_path && !(out = fopen(out_path, "w"))) {
		perror(out_path);
		return 2;
	}
	cmds = calloc((size_t)(argc - optind), sizeof(*cmds));
	for (int i = optind; i < argc; i++, n++) {
		char *eq = strchr(argv[i], '=');
		int k = 0;
		if (!eq) {
			fprintf(stderr, "bench-run: expected NAME=COMMAND, got %s\n", argv[i]);
			return 2;
		}
		*eq = '\0';
		cmds[n].name = argv[i];
		for (char *tok = strtok(eq + 1, " "); tok && k < 63; tok = strtok(NULL, " "))
			cmds[n].argv[k++] = tok;
		cmds[n].ms = calloc((size_t)runs, sizeof(double));
		cmds[n].cpu_ms = calloc((size_t)runs, sizeof(double));
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("bench-run: PR_SET_CHILD_SUBREAPER");
		return 2;
	}
	double ignored;
	for (int r = 0; r < warmup; r++)
		for (int i = 0; i < n; i++)
			run_once(&cmds[i], &ignored);
	for (int r = 0; r < runs; r++)
		for (int i = 0; i < n; i++)
			cmds[i].ms[r] = run_once(&cmds[i], &cmds[i].cpu_ms[r]);

	double base = 0;
	printf("%-28s %10s %10s %8s %10s %12s\n", "command", "median ms", "p90 ms", "ratio", "CPU ms",
	       "max RSS KiB");
	for (int i = 0; i < n; i++) {
		qsort(cmds[i].ms, (size_t)runs, sizeof(double), cmp);
		qsort(cmds[i].cpu_ms, (size_t)runs, sizeof(double), cmp);
		double med = cmds[i].ms[runs / 2], p90 = cmds[i].ms[(runs * 9) / 10 < runs ? (runs * 9) / 10 : runs - 1];
		if (i == 0)
			base = med;
		printf("%-28s %10.2f %10.2f %8.2f %10.2f %12ld%s\n", cmds[i].name, med, p90, med / base,
		       cmds[i].cpu_ms[runs / 2], cmds[i].maxrss_kib, cmds[i].failures ? "  (FAILED RUNS)" : "");
		if (out)
			fprintf(out, "%s %.3f %.3f %.3f %d\n", cmds[i].name, med, p90, cmds[i].cpu_ms[runs / 2],
				cmds[i].failures);
	}
	if (out && fclose(out) != 0) {
		perror(out_path);
		return 2;
	}
	for (int i = 0; i < n; i++)
		if (cmds[i].failures)
			return 1;
	return 0;
}
