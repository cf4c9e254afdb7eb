/* The lean builder's parts (not part of the API): what lean.c (the level's
 * solve), lean_moves.c (its move pass) and lean_run.c (the levels of a
 * build) share.  How it works: lean.c's header; the game: retro/retro.h.
 *
 * Thread-safety: a struct lean belongs to one level's solve; the passes
 * start their own OpenMP threads and return when they have joined; a struct
 * lean_work belongs to one build.
 */
#ifndef SOW_TABLES_LEAN_LEVEL_H
#define SOW_TABLES_LEAN_LEVEL_H

#include <stdbool.h>
#include <stdint.h>

#include "lean_relay.h"
#include "progress.h"
#include "retro/retro.h"
#include "tables/tables.h"
#include "tables/tb_lean.h"
#include "tables_internal.h"

#define LMAX_THREADS 64
#define SBSHIFT 14          /* seed blocks of 2^14 entries: a 256-bit value mask each */
_Static_assert((1 << SBSHIFT) % 4096 == 0, "a move pass chunk (256 or 4096) lies in one seed block");
/* A work list entry or an update: the entry's index, and in the top bit
 * (KIND_H) the node's side (a work list entry: its H node became final; an
 * update: a claim on its L node, else a decrement of its H node).  64 bits,
 * so that levels past 2^31 entries index as the small ones do. */
typedef uint64_t lean_item;
#define KIND_H ((lean_item)1 << 63)
#define IDX_MASK (KIND_H - 1)
#define FBATCH 16           /* final nodes un-sown per batch */

struct lnode {
    int8_t be;   /* best exit, RETRO_NONE_EXIT if none; the value at the end */
    uint8_t cnt; /* in-level out-degree, counted down */
    int8_t xl;   /* X-value of (p,L) = lo, RETRO_UNDONE until final */
    int8_t xh;   /* X-value of (p,H) = -hi */
};
_Static_assert(sizeof(struct lnode) == 4, "lean node is 4 bytes");
_Static_assert(TB_MAX_ENTRIES <= IDX_MASK, "indices leave the top bit for the kind");

/* Regions reused from level to level (pages zeroed by the kernel once). */
struct lean_work {
    struct retro_region nd, lfin, pend, vmask; /* RETRO_HUGE, exact sizes */
    int squeeze; /* work lists and held updates cut by 2^squeeze (lean_run.c) */
    uint64_t zcap; /* exits a thread queues (lower levels compressed; 0: its own) */
};

/* ---- the level ------------------------------------------------------------ */

struct lean {
    const struct ruleset *rs;
    const struct tb_set *lower;
    const struct tb_index *ix;
    const struct tb_build_opts *opt;
    int n, threads;
    uint64_t boards, E, chunk, nchunks, nsb;
    struct lnode *nd;
    uint64_t *lfin;  /* bit per entry: L node final */
    uint64_t *pend;  /* bits 2i (L) and 2i+1 (H): final, waiting in no work list */
    uint64_t *vmask; /* 4 words per seed block: bit be+128 set if an entry has it */
    uint64_t gmask[4];
    int overflow;    /* pend has bits (set by any thread) */
    uint64_t qcap;
    uint32_t bcap;   /* updates per bucket (0: not bucketed; "Updates by region") */
    int squeeze;     /* lists and buckets 2^squeeze times shorter (lean_work) */
    int rshift;      /* log2 entries per region */
    uint64_t qpeak;  /* longest work list seen (all threads) */
    uint64_t listbytes; /* the threads' work lists and buffers at their largest */
    int pkbits;      /* bits per hole of a packed board, 0 if the board does not fit 63 bits */
    uint64_t finals; /* final nodes propagated so far (progress) */
    double expect;   /* of about this many (0: unknown) */
    uint64_t moves;
    bool failed;
    /* ---- lower levels kept compressed (lean_exits.c) ---- */
    bool zlower;     /* a lower level is kept compressed: its exits queued */
    uint8_t *zlevel; /* the level of each block number of the set */
    uint64_t zcap;   /* exits a thread queues before it answers them */
    uint64_t zbatches; /* batches answered (all threads) */
    bool zdamaged;   /* a block was damaged (or memory ran out): zerr says */
    struct sow_error zerr;
    struct tb_progress pr; /* progress.h */
    /* ---- relay rule sets (lean_relay.h): NULL for the single-sowing ones ---- */
    struct lrel *rel;
    double sbase;    /* where the solve's progress starts (0.2; relay 0.4) */
    /* statistics (SOW_LEAN_STATS): non-empty rounds, pend scans, blocks read
     * whole, lists read alone */
    uint64_t rounds, scans, reads, sreads;
    /* in-level updates applied: decrements, claims, claims dropped by the
     * L-final bit */
    uint64_t decs, claims, dropped;
    uint64_t sblocks; /* seed blocks scanned, of nsb per round */
    double idle;      /* thread-seconds waiting at the rounds' ends */
    double scan;      /* thread-seconds in the seed scans, their drains excluded */
    bool stats;       /* SOW_LEAN_STATS set: the clock reads above are taken */
};

static inline bool lstopped(const struct lean *L)
{
    return tb_stopped(L->opt);
}

/* tb_position_of without recomputing the level's size (a 128-bit division). */
static inline void lentry_pos(const struct lean *L, uint64_t idx, sow_position *p)
{
    memset(p, 0, sizeof *p);
    int st = L->ix->states > 1 ? (int)(idx / L->boards) : 0;
    tb_unrank(L->ix, L->n, st ? idx - (uint64_t)st * L->boards : idx, p->board.h);
    p->state = L->ix->state_of_rel(st, SOW_A);
}

static inline void lentry_next(const struct lean *L, uint64_t idx, sow_position *p)
{
    if (!tb_index_next(L->ix, p->board.h))
        lentry_pos(L, idx + 1, p);
}

static inline bool has_value(const uint64_t *m, int v)
{
    unsigned u = (unsigned)(v + 128);
    return (m[u >> 6] >> (u & 63)) & 1;
}

/* ---- exits into compressed lower levels (lean_exits.c) ---------------------- */

struct ZSTD_DCtx_s;
/* One thread's queue of exits (lean_exits.c draws an entry). */
struct lexits {
    struct lexit *buf;  /* 2 * cap entries: the queue, then its sorted copy */
    uint64_t n, cap;
    uint64_t *count;    /* per block number (the set's next_block + 1) */
    struct ZSTD_DCtx_s *dc;
    int8_t *blk;        /* one decompressed block */
    uint64_t batches;
};
/* Block number -> level for the levels below n kept compressed (malloc'd;
 * NULL if out of memory). */
uint8_t *lexit_levels(const struct tb_set *set, int n);
/* A queue of up to cap exits; false if out of memory. */
bool lexits_init(struct lexits *x, const struct lean *L, uint64_t cap);
void lexits_free(struct lexits *x);
/* Queue the exit of entry src into entry q of level z (d: the mover's
 * capture less the opponent's).  The queue has room for a group's exits;
 * the caller answers it (lexits_flush) after a group's best exits are
 * stored, once fewer than LEXIT_GROUP places are left. */
#define LEXIT_GROUP (16 * (SOW_MAX_PITS + 1))
void lexits_add(struct lexits *x, const struct tbz *z, uint64_t q,
                uint64_t src, int d);
/* Answer the queue: each exit's value folded into its entry's be. */
void lexits_flush(struct lean *L, struct lexits *x);
/* Fail the level for want of memory (L->zerr says so). */
void lexits_fail_nomem(struct lean *L);

/* The move pass (best exits, out-degrees, the seed blocks' value masks) and
 * the level's mask of best-exit values. */
void tb_lean_pass_moves(struct lean *L);
void tb_lean_level_mask(struct lean *L);

void tb_lean_work_free(struct lean_work *w);
/* SOW_LEAN_STATS: the level's counts and phase times (dt: moves, edges,
 * solve, finish) on stderr.  (lean_run.c) */
void tb_lean_stats(const struct lean *L, uint64_t edges, uint64_t nblk, const double *peak,
                   const double *dt);
/* The threads level E is solved with (opt->threads, retro_threads). */
int tb_lean_threads(const struct tb_build_opts *opt, uint64_t E);
/* Solve level n; out may be NULL (then the values stay in the nodes' memory
 * and *values points at them); lohi (or NULL) gets the forced bounds (lo, hi)
 * per entry, as tb_solve_level's. */
enum sow_status tb_lean_level(const struct ruleset *rs, const struct tb_set *lower, int n, int8_t *out,
                      int8_t *lohi, const struct tb_build_opts *opt, struct lean_work *wk, int8_t **values,
                      double *peak, double *ratio, const char *tmpdir, struct sow_error *e);

/* ---- the memory model (lean_memory.c) ---------------------------------- */

/* Updates by region (lean.c's drain): regions of 2^LREGION entries (fewer
 * where the options ask, as the tests do), a bucket per region and thread
 * on levels of at least LBMIN regions. */
#define LREGION 20
#define LBMIN 8
/* The region size the options ask for (2^8..2^LREGION entries). */
int lean_region_shift(const struct tb_build_opts *opt);
/* Updates a bucket holds (0: no buckets, updates applied at once), and the
 * buckets' bytes per thread, for a level of E entries (squeezed: 2^squeeze
 * times fewer updates a bucket). */
uint32_t lean_bcap(uint64_t E, int shift);
double lean_bucket_bytes(uint64_t E, int shift, int squeeze);
/* Work list entries a thread may hold before it spills into pend (and as
 * many, squeezed). */
uint64_t lean_qcap(uint64_t E);
uint64_t lean_qcap_squeezed(uint64_t E, int squeeze);
/* Bytes a level of E entries needs with T threads (the budget's model),
 * its lists 2^squeeze times shorter (the relay rule sets have none; a
 * negative squeeze: the nodes and bitmaps alone, as in the move pass). */
double tb_lean_memory(const struct ruleset *rs, uint64_t E, int threads, int squeeze);

#endif
