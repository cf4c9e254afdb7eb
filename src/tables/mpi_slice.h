/* The distributed builder's slices (not part of the API): which rank owns
 * which entries of a level, and how an entry is named on the way.  Pure
 * arithmetic, no MPI: the tests (tests/test_mpi_slice.c) check it without
 * a job.
 *
 *   level of E entries, R ranks:   slice(r) = [ lo(r), lo(r+1) ),  lo(r) = floor(E*r/R)
 *
 *   level index q (0 <= q < E, 64-bit: the file's order)
 *        |
 *        |  global g = base + q       (base 0; tests/mpi/run.sh sets 2^32
 *        v                             with SOW_MPI_TEST_BASE, so that every
 *   global index g (64-bit)            global index held or sent is past 32 bits)
 *        |
 *        |  owner r = the slice holding q;  local i = q - lo(r)
 *        v
 *   (rank r, local index i)           i < lo(r+1) - lo(r) <= ceil(E/R) < 2^31
 *
 * What travels between ranks is always the (rank, local) form: an update is
 * the local index on its owner with the kind in bit 31 (4 bytes), an edge
 * p -> q the pair (q's local index on q's owner, p's local index on the
 * sender, which owns p), a probe of a lower level m the pair (m, the local
 * index on the owner in level m).  So messages stay 4-byte words while
 * levels pass 2^31 and 2^32 entries, as long as every slice has fewer than
 * 2^31 entries: tbm_ranks_needed says how many ranks a level needs.
 *
 * Worked example: E = 10, R = 3: lo = 0, 3, 6, 10; entry q = 7 is on rank 2
 * as local 1; with base 2^32 its global index is 4294967303.
 *
 * Thread-safety: every function here is pure.
 */
#ifndef SOW_TABLES_MPI_SLICE_H
#define SOW_TABLES_MPI_SLICE_H

#include <stdbool.h>
#include <stdint.h>

/* The most entries a slice may have: local indices leave bit 31 for the
 * kind of an update. */
#define TBM_SLICE_MAX 0x7FFFFFFFull

/* First level index of rank r's slice (r = R: E).  E * R must fit 64 bits
 * (tbm_slices_ok). */
static inline uint64_t tbm_slice_lo(uint64_t E, int R, int r)
{
    return E * (uint64_t)r / (uint64_t)R;
}

/* The rank whose slice holds level index q < E. */
static inline int tbm_owner(uint64_t E, int R, uint64_t q)
{
    int r = E ? (int)(q * (uint64_t)R / E) : 0;
    if (r >= R)
        r = R - 1;
    while (r > 0 && tbm_slice_lo(E, R, r) > q)
        r--;
    while (r + 1 < R && tbm_slice_lo(E, R, r + 1) <= q)
        r++;
    return r;
}

/* The same from the slices' first global indices bound[0..R] (bound[r] =
 * base + lo(r), bound[R] = base + E) and a global index g: no division
 * but the first guess. */
static inline int tbm_owner_of(const uint64_t *bound, uint64_t E, int R, uint64_t g)
{
    uint64_t q = g - bound[0];
    int r = E ? (int)(q * (uint64_t)R / E) : 0;
    if (r >= R)
        r = R - 1;
    while (r > 0 && bound[r] > g)
        r--;
    while (r + 1 < R && bound[r + 1] <= g)
        r++;
    return r;
}

/* The slices' bounds as global indices: bound[r] = base + lo(r), r = 0..R. */
static inline void tbm_bounds(uint64_t E, uint64_t base, int R, uint64_t *bound)
{
    for (int r = 0; r <= R; r++)
        bound[r] = base + tbm_slice_lo(E, R, r);
}

/* The fewest ranks whose slices of a level of E entries all have at most
 * TBM_SLICE_MAX entries (the largest slice is ceil(E/R)). */
static inline uint64_t tbm_ranks_needed(uint64_t E)
{
    return E ? (E + TBM_SLICE_MAX - 1) / TBM_SLICE_MAX : 1;
}

/* True if R ranks can hold a level of E entries: every slice under 2^31
 * entries, and the arithmetic above (E * R, base + E) within 64 bits. */
static inline bool tbm_slices_ok(uint64_t E, uint64_t base, int R)
{
    return R >= 1 && (uint64_t)R >= tbm_ranks_needed(E) && E <= UINT64_MAX / (uint64_t)R &&
           base <= UINT64_MAX - E;
}

#endif
