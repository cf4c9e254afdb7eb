/* Iteration counts of the randomized tests, scaled by SOW_TEST_SCALE (0..1].
 *
 * The release build runs every test at full size.  The sanitizer builds
 * (scripts/test) run the same tests with SOW_TEST_SCALE=0.25: every check is
 * still made, on fewer random positions, so the suite fits CI's time. */
#ifndef SOW_TEST_SCALE_H
#define SOW_TEST_SCALE_H

#include <stdlib.h>

static inline double test_scale(void)
{
    const char *s = getenv("SOW_TEST_SCALE");
    double f = s ? atof(s) : 1.0;
    return f > 0 && f <= 1 ? f : 1.0;
}

static inline long test_scaled(long n)
{
    long m = (long)((double)n * test_scale());
    return m < 1 ? 1 : m;
}

/* Sizes that do not scale linearly (a top level, a board's seeds): `full`
 * in the release build, the smaller `sanitized` under SOW_TEST_SCALE < 1. */
static inline int test_size(int full, int sanitized)
{
    return test_scale() < 1 ? sanitized : full;
}

/* Every k-th of n items, so that about test_scaled(n) of them are visited. */
static inline long test_stride(long n)
{
    long m = test_scaled(n);
    return n / m > 1 ? n / m : 1;
}

#endif
