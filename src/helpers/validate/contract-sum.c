/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * contract-sum.c - the exact sums of a contract's `sum` check.
 *
 * A column's cells are decimal text, and so is what the job says the sum
 * equals: the sum is kept as a decimal fixed-point number, and nothing is
 * rounded on the way.  Binary floating point, even compensated, is not
 * enough: 1e300 + 1000000 - 1e300 is 0 in long double, so a column that
 * should sum to 1000000 passed `equals 0`.
 *
 * The number is SBX_SUM_LIMBS limbs of 9 decimal digits in int64_t, limb 0
 * holding the digits 10^-351 .. 10^-343 (SBX_SUM_FRAC digits after the
 * point).  A cell adds each of its digits into its limb without carrying,
 * less than 10^9 a limb, so the limbs are carried only every 2^30 cells.
 * The type check refuses a number beyond a double (about 1.8e308), so a
 * cell has no digit above 10^308, and the 333 digits above the point hold
 * the sum of 2^64 of them.  Digits below 10^-351 are not added (a cell of
 * 1e-400 is 0 to the type check too): each cell may be short by less than
 * 10^-351, and nothing else is inexact.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "contract-check.h"

#define BASE 1000000000LL
#define TOP_DIGIT (SBX_SUM_LIMBS * 9 - SBX_SUM_FRAC - 1)

static const int64_t pow10_9[9] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
				    100000000 };

/* Every limb but the top one in [0, BASE); the top one has the sign. */
static void carry(struct sbx_contract_sum *s)
{
	for (size_t i = 0; i + 1 < SBX_SUM_LIMBS; i++) {
		int64_t q = s->limb[i] / BASE;

		if (s->limb[i] - q * BASE < 0)
			q--;
		s->limb[i] -= q * BASE;
		s->limb[i + 1] += q;
	}
	s->adds = 0;
}

static void added(struct sbx_contract_sum *s)
{
	if (++s->adds >= (1u << 30))
		carry(s);
}

void sbx_contract_sum_add_int(struct sbx_contract_sum *s, int64_t v)
{
	/* As unsigned: -INT64_MIN does not fit an int64_t. */
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	int64_t sign = v < 0 ? -1 : 1;

	for (size_t i = SBX_SUM_FRAC / 9; m; i++, m /= BASE)
		s->limb[i] += sign * (int64_t)(m % BASE);
	added(s);
}

void sbx_contract_sum_add_text(struct sbx_contract_sum *s, const char *t, bool negate)
{
	const char *p = t, *digits, *end;
	int64_t exp = 0, pos;
	int64_t sign = negate ? -1 : 1;
	size_t nint = 0;

	if (*p == '+' || *p == '-')
		sign = *p++ == '-' ? -sign : sign;
	digits = p;
	for (; *p >= '0' && *p <= '9'; p++)
		nint++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	end = p;
	if (*p == 'e' || *p == 'E') {
		bool eneg = false;

		p++;
		if (*p == '+' || *p == '-')
			eneg = *p++ == '-';
		/* Past a billion only the direction matters: every digit is
		 * then below the kept ones or above any valid number's. */
		for (; *p >= '0' && *p <= '9'; p++)
			if (exp < 1000000000)
				exp = exp * 10 + (*p - '0');
		exp = eneg ? -exp : exp;
	}
	/* The power of ten of the first digit, then one less each digit. */
	pos = exp + (int64_t)nint - 1;
	for (p = digits; p < end && pos >= -SBX_SUM_FRAC; p++) {
		int64_t d, i;

		if (*p == '.')
			continue;
		d = *p - '0';
		/* No valid number has a digit above TOP_DIGIT but zeros. */
		if (d && pos <= TOP_DIGIT) {
			i = pos + SBX_SUM_FRAC;
			s->limb[i / 9] += sign * d * pow10_9[i % 9];
		}
		pos--;
	}
	added(s);
}

int sbx_contract_sum_sign(struct sbx_contract_sum *s)
{
	carry(s);
	if (s->limb[SBX_SUM_LIMBS - 1])
		return s->limb[SBX_SUM_LIMBS - 1] < 0 ? -1 : 1;
	for (size_t i = 0; i + 1 < SBX_SUM_LIMBS; i++)
		if (s->limb[i])
			return 1;
	return 0;
}

void sbx_contract_sum_abs(struct sbx_contract_sum *s)
{
	if (sbx_contract_sum_sign(s) >= 0)
		return;
	for (size_t i = 0; i < SBX_SUM_LIMBS; i++)
		s->limb[i] = -s->limb[i];
	carry(s);
}

/*
 * Plain decimal from 10^-7 to 10^21 with no digit below 10^-30 ("15.5",
 * "-10.5", "9223372036854775809"), else the first 17 significant digits,
 * "..." when more were cut, and the exponent ("1e-23",
 * "1.0000000000000000...e+300").
 */
void sbx_contract_sum_format(const struct sbx_contract_sum *in, char *buf, size_t len)
{
	struct sbx_contract_sum s = *in;
	char d[SBX_SUM_LIMBS * 9 + 1]; /* d[k]: the digit of 10^(TOP_DIGIT - k) */
	size_t n = sizeof(d) - 1, first, last, point = (size_t)TOP_DIGIT, k;
	bool neg = sbx_contract_sum_sign(&s) < 0;
	char *o = buf;

	sbx_contract_sum_abs(&s);
	for (size_t i = 0; i < SBX_SUM_LIMBS; i++) {
		int64_t v = s.limb[i];

		for (int j = 0; j < 9; j++, v /= 10)
			d[n - 1 - (i * 9 + (size_t)j)] = (char)('0' + v % 10);
	}
	d[n] = '\0';
	for (first = 0; first < n && d[first] == '0'; first++)
		;
	if (first == n) {
		snprintf(buf, len, "0");
		return;
	}
	for (last = n - 1; d[last] == '0'; last--)
		;
	if (neg && len > 1)
		*o++ = '-', len--;
	/* point: the index of the digit of 10^0 */
	if (first + 21 > point && first <= point + 7 && last <= point + 30) {
		size_t from = first < point ? first : point, to = last > point ? last : point;

		for (k = from; k <= to && len > 1; k++) {
			*o++ = d[k], len--;
			if (k == point && k < to && len > 1)
				*o++ = '.', len--;
		}
		*o = '\0';
		return;
	}
	{
		char m[20];
		size_t nm = 0;

		for (k = first; k <= last && nm < 17; k++)
			m[nm++] = d[k];
		while (k > last && nm > 1 && m[nm - 1] == '0')
			nm--;
		snprintf(o, len, "%c%s%.*s%se%+lld", m[0], nm > 1 ? "." : "", (int)(nm - 1), m + 1,
			 k <= last ? "..." : "", (long long)point - (long long)first);
	}
}
