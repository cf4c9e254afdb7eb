/* Endgame tables: the lean builder's memory model (lean_level.h): what a
 * level's solve holds per entry and per thread, checked against --memory
 * before the level is started (lean_run.c, the MPI builder) and used by
 * lean.c to size its work lists and update buckets. */
#include "lean_level.h"
#include "lean_relay.h"
#include "tables/tb_lean.h"

/* Updates by region (the solve's drain, below): regions of 2^shift
 * entries (LREGION unless the options ask for smaller ones, as the tests
 * do), a bucket of 2^(shift-6) updates (16 bytes each: 0.25 bytes per entry)
 * per region and thread, on levels of at least LBMIN regions. */
int lean_region_shift(const struct tb_build_opts *opt)
{
    int r = opt ? opt->lean_region_shift : 0;
    return r >= 8 && r <= LREGION ? r : LREGION;
}

uint32_t lean_bcap(uint64_t E, int shift)
{
    return (E >> shift) >= LBMIN ? 1u << (shift - 6) : 0;
}

double lean_bucket_bytes(uint64_t E, int shift, int squeeze)
{
    uint32_t c = lean_bcap(E, shift) >> squeeze;
    return c ? (double)((E >> shift) + 1) * (16.0 * c + 4) : 0;
}

/* Work list entries a thread may hold (16 bytes each: a lean_item and a
 * packed board, 0.33 bytes per entry of the level), beyond which final
 * nodes spill into the pend bitmap. */
uint64_t lean_qcap(uint64_t E)
{
    uint64_t c = E / 48;
    return c < 1024 ? 1024 : c;
}

/* A squeezed level (lean_run.c, when the budget is short) holds 2^squeeze
 * times fewer work list entries and held updates: more nodes wait in the
 * pend bitmap and more updates are applied unsorted, the same values. */
uint64_t lean_qcap_squeezed(uint64_t E, int squeeze)
{
    uint64_t c = lean_qcap(E) >> squeeze;
    return c < 1024 ? 1024 : c;
}

/* squeeze < 0: the nodes and bitmaps alone (the move pass's share) */
static double level_memory(uint64_t E, int threads, int squeeze)
{
    double T = threads > 0 ? threads : 1;
    double nodes = (double)E * (4.0 + 1.0 / 8 + 2.0 / 8) + (double)(E >> SBSHIFT) * 32 + (1 << 20);
    if (squeeze < 0)
        return nodes;
    return nodes + T * (16.0 * (double)lean_qcap_squeezed(E, squeeze) + (1 << 16) +
                        lean_bucket_bytes(E, LREGION, squeeze));
}

double tb_lean_level_memory(uint64_t E, int threads)
{
    return level_memory(E, threads, 0);
}

/* The same for any rule set: the relay ones have no work lists but the edge
 * store's buffers (lean_relay.h) and a relay memo per thread (2^16 entries
 * of 96 bytes, as build.c's move pass has). */
double tb_lean_memory(const struct ruleset *rs, uint64_t E, int threads, int squeeze)
{
    if (tb_unmove_supported(rs))
        return level_memory(E, threads, squeeze);
    double T = threads > 0 ? threads : 1;
    /* (the edge store's buffers are filled in the move pass: no squeeze) */
    return level_memory(E, threads, -1) + lrel_memory(E, rs->pits, (int)T) +
           T * ((1 << 16) + 6.5e6);
}
