/* The distributed builder's slices (src/tables/mpi_slice.h): global index
 * <-> (rank, local index) at the sizes where 32-bit arithmetic would break,
 * levels 30 and 32 of 2x6 (past 2^31 and past 2^32 entries) over 1..64
 * ranks, against a slow twin (128-bit products, the slices walked one by
 * one); and how many ranks a level needs.  Pure functions: no MPI job. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "tables/mpi_slice.h"
#include "tables/tables.h"

static uint64_t binom(uint64_t n, uint64_t k)
{
    unsigned __int128 c = 1;
    for (uint64_t j = 1; j <= k; j++)
        c = c * (n - k + j) / j;
    return (uint64_t)c;
}

/* The twin: slice bounds from exact 128-bit products, the owner by walking
 * the slices from rank 0. */
static uint64_t twin_lo(uint64_t E, int R, int r)
{
    return (uint64_t)((unsigned __int128)E * (unsigned)r / (unsigned)R);
}

static int twin_owner(uint64_t E, int R, uint64_t q)
{
    for (int r = 0; r < R; r++)
        if (q >= twin_lo(E, R, r) && q < twin_lo(E, R, r + 1))
            return r;
    return -1;
}

static uint64_t entries(int pits, int n)
{
    struct ruleset rs;
    struct sow_error e;
    cr_assert_eq(rules_init(&rs, "oware", pits, 0, &e), SOW_OK, "%s", e.msg);
    struct tb_index *ix = malloc(sizeof *ix);
    tb_index_init(ix, &rs);
    uint64_t E = tb_level_entries(ix, n);
    free(ix);
    return E;
}

/* The levels named: 2x6 level n has C(n + 11, 11) entries. */
Test(mpi_slice, level_sizes)
{
    cr_assert_eq(entries(6, 29), 2311801440ull);
    cr_assert_eq(entries(6, 30), binom(41, 11));
    cr_assert_eq(binom(41, 11), 3159461968ull);
    cr_assert_eq(entries(6, 32), binom(43, 11));
    cr_assert_gt(binom(43, 11), (uint64_t)1 << 32);
}

/* One index q of a level of E entries over R ranks, with base 0 and 2^32:
 * the owner and the local index as the twin has them, the local index
 * under 2^31 when the level fits, and back to the same global index. */
static void one(uint64_t E, int R, const uint64_t *b0, const uint64_t *b32, uint64_t q)
{
    int r = twin_owner(E, R, q);
    cr_assert_geq(r, 0);
    cr_assert_eq(tbm_owner(E, R, q), r, "E %llu R %d q %llu", (unsigned long long)E, R,
                 (unsigned long long)q);
    const uint64_t *bs[2] = {b0, b32};
    for (int k = 0; k < 2; k++) {
        const uint64_t *b = bs[k];
        uint64_t g = b[0] + q;
        int o = tbm_owner_of(b, E, R, g);
        cr_assert_eq(o, r, "E %llu R %d g %llu", (unsigned long long)E, R, (unsigned long long)g);
        uint64_t local = g - b[o];
        cr_assert_eq(local, q - twin_lo(E, R, r));
        cr_assert_eq(b[o] + local, g);
        if (tbm_slices_ok(E, b[0], R)) { /* as it travels: a 4-byte word, bit 31 free */
            cr_assert_leq(local, TBM_SLICE_MAX);
            uint32_t w = (uint32_t)local | 0x80000000u;
            cr_assert_eq(b[o] + (w & 0x7FFFFFFFu), g);
        }
    }
}

static void level(uint64_t E)
{
    uint64_t b0[65], b32[65];
    uint64_t marks[] = {0, 1, E / 2, E - 2, E - 1, ((uint64_t)1 << 31) - 2,
                        ((uint64_t)1 << 31) - 1, (uint64_t)1 << 31, ((uint64_t)1 << 31) + 1,
                        ((uint64_t)1 << 32) - 2, ((uint64_t)1 << 32) - 1, (uint64_t)1 << 32,
                        ((uint64_t)1 << 32) + 1};
    uint64_t x = 88172645463325252ull; /* xorshift64 */
    for (int R = 1; R <= 64; R++) {
        tbm_bounds(E, 0, R, b0);
        tbm_bounds(E, (uint64_t)1 << 32, R, b32);
        uint64_t most = 0;
        for (int r = 0; r <= R; r++) {
            cr_assert_eq(b0[r], twin_lo(E, R, r));
            cr_assert_eq(b32[r], ((uint64_t)1 << 32) + twin_lo(E, R, r));
            cr_assert_eq(tbm_slice_lo(E, R, r), twin_lo(E, R, r));
            if (r < R && b0[r + 1] - b0[r] > most)
                most = b0[r + 1] - b0[r];
        }
        cr_assert_eq(b0[R], E);
        /* fits exactly when every slice has under 2^31 entries */
        cr_assert_eq(tbm_slices_ok(E, 0, R), most <= TBM_SLICE_MAX, "E %llu R %d",
                     (unsigned long long)E, R);
        cr_assert_eq(tbm_slices_ok(E, (uint64_t)1 << 32, R), most <= TBM_SLICE_MAX);
        for (size_t k = 0; k < sizeof marks / sizeof *marks; k++)
            if (marks[k] < E)
                one(E, R, b0, b32, marks[k]);
        for (int r = 1; r < R; r++) { /* each slice's first entry and the one before */
            one(E, R, b0, b32, b0[r] - 1);
            one(E, R, b0, b32, b0[r]);
        }
        for (int k = 0; k < 200; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            one(E, R, b0, b32, x % E);
        }
    }
}

Test(mpi_slice, level_30_past_2_31)
{
    level(binom(41, 11));
}

Test(mpi_slice, level_32_past_2_32)
{
    level(binom(43, 11));
}

/* The ranks a level needs: the fewest whose slices all fit, the twin
 * checked one rank below it. */
Test(mpi_slice, ranks_needed)
{
    cr_assert_eq(tbm_ranks_needed(0), 1);
    cr_assert_eq(tbm_ranks_needed(TBM_SLICE_MAX), 1);
    cr_assert_eq(tbm_ranks_needed(TBM_SLICE_MAX + 1), 2);
    cr_assert_eq(tbm_ranks_needed(2311801440ull), 2); /* level 29 */
    cr_assert_eq(tbm_ranks_needed(binom(41, 11)), 2);
    cr_assert_eq(tbm_ranks_needed(binom(43, 11)), 3);
    cr_assert_eq(tbm_ranks_needed(binom(59, 11)), 131); /* level 48: 279,871,768,995 */
    uint64_t sizes[] = {binom(40, 11), binom(41, 11), binom(43, 11), binom(59, 11),
                        2 * TBM_SLICE_MAX, 2 * TBM_SLICE_MAX + 1};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        uint64_t E = sizes[k];
        int need = (int)tbm_ranks_needed(E);
        cr_assert(tbm_slices_ok(E, 0, need));
        cr_assert(!tbm_slices_ok(E, 0, need - 1));
        uint64_t most = 0;
        for (int r = 0; r < need - 1; r++) {
            uint64_t s = twin_lo(E, need - 1, r + 1) - twin_lo(E, need - 1, r);
            most = s > most ? s : most;
        }
        cr_assert_gt(most, TBM_SLICE_MAX, "one rank fewer: a slice of 2^31 entries or more");
    }
    /* the arithmetic's own limits: E * R and base + E within 64 bits */
    cr_assert(!tbm_slices_ok((uint64_t)1 << 62, 0, 8));
    cr_assert(!tbm_slices_ok(1000, UINT64_MAX - 10, 1));
    cr_assert(!tbm_slices_ok(1000, 0, 0));
}
