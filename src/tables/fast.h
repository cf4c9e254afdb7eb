/* The fast builder's parts (not part of the API): what build.c (the
 * level's solve), fast_moves.c (its move, edge and seed passes), build_run.c
 * (levels 0..max into a directory), verify.c and mem_levels.c (the solver's
 * levels in memory) share.  The passes and the solve: build.c's header; the
 * game: retro/retro.h.
 *
 * Thread-safety: a struct lvl belongs to one level's solve; the passes start
 * their own OpenMP threads and return when they have joined; a struct
 * tb_work belongs to one build.
 */
#ifndef SOW_TABLES_FAST_H
#define SOW_TABLES_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "progress.h"
#include "retro/retro.h"
#include "tables/tables.h"
#include "tables_internal.h"

#define CHUNK 4096
#define MAX_THREADS 64

/* What the solve keeps per entry (8 bytes): the state and where the entry's
 * predecessor list starts, so that a node that becomes final has its list's
 * offsets in the cache line that was just written (the list ends at the next
 * entry's off; entry E holds the total). */
struct node {
    int8_t be;    /* best exit value, RETRO_NONE_EXIT if none */
    uint8_t cnt;  /* in-level out-degree, counted down in the solve */
    int8_t xl;    /* X-value of (p,L): lo */
    int8_t xh;    /* X-value of (p,H): -hi */
    uint32_t off; /* first predecessor in rev[] */
};
_Static_assert(sizeof(struct node) == 8, "node packs into 8 bytes");

/* Solve updates: predecessor index | kind.  Entries < 2^31 (TB_MAX_ENTRIES). */
#define UPD_CLAIM 0x80000000u /* a child's H node is final: the L node has an option t */
#define UPD_IDX 0x7FFFFFFFu   /* else: a child's L node is final: the H node loses one */
#define UPD_SKIP 0xFFFFFFFFu  /* dropped (index 2^31 - 1 is never an entry) */
_Static_assert(TB_MAX_ENTRIES <= UPD_IDX, "indices < 2^31 - 1 leave the top bit for the kind");

/* ---- memory: regions (retro.h), edge bins ----------------------------- */

#define HUGE_2M ((size_t)2 << 20)

/* Bins: chains of 4 KB blocks of 32-bit words, filled by one thread.  The
 * blocks come from one arena (bump pointer, then per-thread free lists). */
#define BLK_WORDS 1020
struct blk {
    struct blk *next;
    uint64_t pad_;
    uint32_t w[BLK_WORDS];
};
_Static_assert(sizeof(struct blk) == 4096, "bin blocks are 4 KB");

struct bin {
    uint32_t *cur, *end; /* free space of the head block */
    struct blk *head;    /* newest block; older ones are full */
    uint32_t lastph;     /* edge bins: source high bits of the last marker */
    uint32_t edges;      /* edge bins: edges held */
};

/* Block size (entries) of the edge pass and the seeds: a block's nodes and
 * predecessor lists stay in the cache while its lists are built. */
#define BSHIFT 16

struct pool {
    struct blk *free;
    bool failed;
    char pad_[64 - sizeof(struct blk *) - sizeof(bool)]; /* own cache line */
};

/* The workspace of a build: regions reused from level to level. */
struct tb_work {
    struct retro_region nd, rev, arena, lfin; /* arena: edge bins, then the seeds */
    /* Relay rule sets: one relay cache per thread, kept from level to level
     * (6 MB each: made afresh per level, its first touch cost the jodu
     * family about a fifth of a solve's time; entries hold for any level). */
    struct sow_relay_cache *cache[MAX_THREADS];
};

static inline size_t arena_blocks(uint64_t E, int pits, int threads, uint64_t nblocks)
{
    /* edge bins: at most 2 words per in-level move (<= N per entry; one
     * word, plus a marker per run of sources), plus one partly filled block
     * per bin (T per block); at least one word per entry for the seeds. */
    size_t edges = (size_t)(2 * E * (uint64_t)pits / (BLK_WORDS - 2) + 1),
           seeds = (size_t)(E / BLK_WORDS + 1);
    return (edges > seeds ? edges : seeds) + (size_t)threads * nblocks + 64;
}

struct lvl {
    const struct ruleset *rs;
    const struct tb_set *lower;
    const struct tb_index *ix;
    const struct tb_build_opts *opt;
    struct tb_work *wk; /* the workspace (regions, relay caches) */
    int n, threads;
    uint64_t boards, E, nchunks, chunk;
    struct node *nd;   /* per entry, plus one holding the edge total */
    int8_t *out;       /* the level's values; the repetition settlement until then */
    uint64_t *lfin;    /* bit per entry: L node final (1 bit: stays in the cache) */
    uint32_t *rev;     /* predecessors, grouped by target */
    uint32_t *seeds;   /* entries with an exit, by (best exit, block, index) */
    uint32_t *seedoff; /* (2n+1) * nblocks + 1 offsets into seeds */
    int bshift;        /* block = 2^bshift entries */
    uint64_t nblocks;
    /* arena */
    char *arena;
    size_t arena_cap, arena_used;
    struct pool pool[MAX_THREADS];
    struct bin *ebin; /* edges: [thread][block], a thread's row from a cache line */
    uint64_t ebstride; /* bins per row: nblocks rounded up to whole cache lines */
    uint64_t moves;    /* moves generated in the move pass (children looked up) */
    struct tb_progress pr; /* progress.h */
};

static inline bool stopped(const struct lvl *L)
{
    return tb_stopped(L->opt);
}

/* The position of entry idx (normalised: side A); st/boards split. */
static inline void entry_pos(const struct lvl *L, uint64_t idx, sow_position *p)
{
    tb_position_of(L->ix, L->n, idx, p);
}

/* Step p (entry idx) to entry idx+1. */
static inline void entry_next(const struct lvl *L, uint64_t idx, sow_position *p)
{
    if (!tb_index_next(L->ix, p->board.h))
        entry_pos(L, idx + 1, p);
}

/* In-level child's index (child c of a normalised position, mover B). */
static inline uint64_t child_index(const struct lvl *L, const sow_position *c, int n, uint64_t boards)
{
    /* relative to B, the child's mover (rules' hook; a call only where the
     * rule set indexes states) */
    int st = L->ix->states > 1 ? L->ix->rel_state(c) : 0;
    (void)n;
    return (uint64_t)st * boards + tb_rank_side(L->ix, c->board.h, 1);
}

/* The move pass's relay cache for a thread (NULL: no relays). */
struct sow_relay_cache *tb_fast_thread_cache(const struct ruleset *rs);
/* Pass 1 (moves), 2 (reverse edges from the bins; ebase: each block's first
 * edge) and 3 (seeds by best exit and block; cnt: scratch counters). */
void tb_fast_pass_moves(struct lvl *L);
void tb_fast_pass_edges(struct lvl *L, const uint32_t *ebase);
void tb_fast_pass_seeds(struct lvl *L, uint32_t *cnt);

/* The threads level E is solved with (opt->threads, retro_threads). */
int tb_fast_threads(const struct tb_build_opts *opt, uint64_t E);
/* Reserve (virtually) the workspace for levels up to E entries; free it. */
bool tb_fast_work_reserve(struct tb_work *wk, uint64_t E, int pits, int threads);
void tb_fast_work_free(struct tb_work *wk);
/* Solve level n into out (and its forced bounds into lohi, if not NULL)
 * with the workspace wk. */
enum sow_status tb_fast_solve_level(const struct ruleset *rs, const struct tb_set *lower, int n,
                                    int8_t *out, int8_t *lohi, const struct tb_build_opts *opt,
                                    struct tb_work *wk, struct sow_error *e);

#endif
