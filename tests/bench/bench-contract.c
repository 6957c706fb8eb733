/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-contract - the cost of checking an output contract on a 12 MB
 * CSV against the cost of validating it (the media check every CSV gets):
 * the same file in a memfd, the validator and the contract's checks (a
 * date column not null, an integer column with a minimum, a number
 * column's sum, a unique id, the row count) run in turn.  Prints medians
 * in milliseconds and the ratio; the target is a contract costing at most
 * twice the validation.  `bench-contract RUNS '{"t.csv": {...}}'` times
 * another contract on the same file.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "contract-check.h"
#include "util.h"
#include "validate.h"

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

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 15;
	int fd = memfd_create("bench-contract", MFD_CLOEXEC);
	FILE *f = fdopen(dup(fd), "w");
	double *tv = calloc((size_t)runs, sizeof(double)), *tc = calloc((size_t)runs, sizeof(double));
	long long sum = 0;
	uint64_t size, rows = 0;
	char contract[512];
	json_t *j;
	struct sbx_contracts cs;
	struct sbx_error err = { 0 };
	struct sbx_contract_result res;
	struct sbx_media_report rep;

	if (fd < 0 || !f || !tv || !tc)
		return 1;
	fprintf(f, "id,date,region,product,qty,price,total\n");
	for (size = 0; size < 12u << 20; rows++) {
		int qty = (int)(rows % 17) + 1;
		int n = fprintf(f, "%llu,2026-%02llu-%02llu,region-%llu,\"product %llu, boxed\",%d,%d.25,%d.%02d\n",
				(unsigned long long)rows, (unsigned long long)(rows % 12 + 1),
				(unsigned long long)(rows % 28 + 1), (unsigned long long)(rows % 7),
				(unsigned long long)(rows % 113), qty, qty * 3, qty * 9, (int)(rows % 100));
		sum += (long long)(qty * 9) * 100 + (long long)(rows % 100);
		size += (uint64_t)n;
	}
	fclose(f);
	size = (uint64_t)lseek(fd, 0, SEEK_END);
	snprintf(contract, sizeof(contract),
		 "{\"t.csv\": {\"rows\": {\"min\": 1}, \"columns\": {"
		 "\"id\": {\"type\": \"integer\", \"unique\": true},"
		 "\"date\": {\"type\": \"date\", \"not_null\": true},"
		 "\"qty\": {\"type\": \"integer\", \"min\": 1},"
		 "\"total\": {\"type\": \"number\", \"sum\": {\"equals\": %lld.%02lld, \"tolerance\": 0.01}}}}}",
		 sum / 100, sum % 100);
	/* argv[2]: another contract for "t.csv", to see what one check costs. */
	j = json_loads(argc > 2 ? argv[2] : contract, 0, NULL);
	if (!j || sbx_contracts_parse(j, "bench", &cs, &err) < 0) {
		fprintf(stderr, "bench-contract: %s\n", err.msg);
		return 1;
	}
	for (int i = 0; i < runs; i++) {
		double t0 = now_ms();

		if (sbx_media_validate("text/csv", fd, size, &rep) < 0) {
			fprintf(stderr, "bench-contract: not valid: %s\n", rep.reason);
			return 1;
		}
		tv[i] = now_ms() - t0;
		t0 = now_ms();
		sbx_contract_check(&cs.v[0], fd, size, "text/csv", 0, 0, &res);
		tc[i] = now_ms() - t0;
		if (!res.ok) {
			fprintf(stderr, "bench-contract: contract failed: %s: %s\n", res.fail[0].check,
				res.fail[0].detail);
			return 1;
		}
	}
	qsort(tv, (size_t)runs, sizeof(double), cmp);
	qsort(tc, (size_t)runs, sizeof(double), cmp);
	printf("csv %.1f MB, %llu rows, %s: validate %.1f ms, contract %.1f ms "
	       "(%.2fx the validation; validate + contract %.2fx)\n",
	       (double)size / 1e6, (unsigned long long)rows,
	       argc > 2 ? "the given contract" : "4 checked columns", tv[runs / 2], tc[runs / 2],
	       tc[runs / 2] / tv[runs / 2], (tv[runs / 2] + tc[runs / 2]) / tv[runs / 2]);
	sbx_contracts_free(&cs);
	json_decref(j);
	return 0;
}
