/* The move passes' loop, shared by the table builders (fast_moves.c,
 * lean_moves.c, mpi_moves.c; not part of the API): a chunk of a level's
 * entries walked in groups of TB_MGROUP positions, each position's moves
 * generated, its in-level children counted and handed to the builder, its
 * exits probed in the lower levels; the lower levels' values of a group's
 * exits are prefetched while the rest of the group is generated, and read
 * after it (random reads in levels of up to GBs).
 *
 * What differs between the builders comes in as hooks, functions the
 * builder defines static inline and passes by name: tb_move_chunk is
 * always inlined, so each hook is called directly and inlined in turn,
 * and the per-position loop stays one loop (a hook's ctx is the builder's
 * thread state, a local struct the compiler keeps in registers):
 *
 *   pos(ctx, idx, p)          p = entry idx of the level (at the chunk's
 *                             start, and where tb_index_next wraps a state)
 *   edge(ctx, idx, c, N)      in-level child c of entry idx (counted in deg)
 *   exit(ctx, G, idx, j, c, N) exit c of entry idx, the group's position j;
 *                             NULL: probed in the mapped lower level
 *                             (tb_mgroup_probe)
 *   done(ctx, idx, p, N)      entry idx's moves done (p is still entry idx);
 *                             may be NULL
 *   group(ctx, G, g, ge)      entries [g, ge) done: G->best[idx - g] their
 *                             best exits (probes folded), G->deg[] their
 *                             in-level out-degrees
 *
 * N, the holes per side, is a constant where the caller makes it one (the
 * ranks unroll).  Thread-safety: a struct tb_mgroup is one thread's; the
 * pass's struct tb_mpass is read only.
 */
#ifndef SOW_TABLES_MOVE_GROUP_H
#define SOW_TABLES_MOVE_GROUP_H

#include <stdint.h>

#include "retro/retro.h"
#include "tables/tables.h"
#include "tables_internal.h"

#define TB_MGROUP 16 /* positions a group */

/* What a move pass reads: the same for every chunk and thread. */
struct tb_mpass {
    const struct ruleset *rs;
    const struct tb_index *ix;
    const struct tb_set *lower; /* the levels below, mapped (lv[m].v) */
    int n;                      /* the level */
};

/* One thread's group: its move list and relay cache, the exits probed,
 * the positions' best exits and in-level out-degrees, the moves counted.
 * The move list lies outside (the generator writes it; what it may write
 * is then not this struct, which stays in the caller's registers and
 * cache lines). */
struct tb_mgroup {
    struct sow_movelist *ml;
    struct sow_relay_cache *cache; /* the thread's, NULL without relays */
    struct retro_probe pr[TB_MGROUP * (SOW_MAX_PITS + 1)];
    int best[TB_MGROUP], deg[TB_MGROUP];
    uint64_t moves;
};

/* Exit c of the group's position j probed in its lower level (mapped):
 * the value prefetched, the probe appended to pr[*np]. */
static inline __attribute__((always_inline)) void
tb_mgroup_probe(const struct tb_mpass *P, struct tb_mgroup *G, int *np, int j,
                const struct sow_child *c, int N)
{
    int m = P->n - retro_taken(c);
    uint64_t q = tb_index_b(P->ix, &c->pos, N, P->lower->boards[m]);
    retro_probe_add(G->pr, np, P->lower->lv[m].v + q, c, j);
}

typedef void tb_mg_pos(void *ctx, uint64_t idx, sow_position *p);
typedef void tb_mg_edge(void *ctx, uint64_t idx, const struct sow_child *c, int N);
typedef void tb_mg_exit(void *ctx, struct tb_mgroup *G, int *np, uint64_t idx, int j,
                        const struct sow_child *c, int N);
typedef void tb_mg_done(void *ctx, uint64_t idx, const sow_position *p, int N);
typedef void tb_mg_group(void *ctx, const struct tb_mgroup *G, uint64_t g, uint64_t ge);

/* The moves of entries [a, b) of level P->n (see above).  An exit hook
 * that probes appends to pr[*np] (tb_mgroup_probe). */
static inline __attribute__((always_inline)) void
tb_move_chunk(const struct tb_mpass *P, struct tb_mgroup *G, void *ctx, uint64_t a, uint64_t b,
              int N, tb_mg_pos *pos, tb_mg_edge *edge, tb_mg_exit *exit, tb_mg_done *done,
              tb_mg_group *group)
{
    struct sow_movelist *ml = G->ml;
    struct sow_relay_cache *cache = G->cache;
    uint64_t moves = 0;
    sow_position p;
    pos(ctx, a, &p);
    for (uint64_t g = a; g < b; g += TB_MGROUP) {
        uint64_t ge = g + TB_MGROUP < b ? g + TB_MGROUP : b;
        int np = 0;
        for (uint64_t idx = g; idx < ge; idx++) {
            int j = (int)(idx - g), deg = 0;
            P->rs->generate(P->rs, &p, ml, cache, NULL);
            moves += (uint64_t)ml->n;
            G->best[j] = retro_be_start(ml);
            for (int k = 0, nk = ml->n; k < nk; k++) {
                const struct sow_child *c = &ml->c[k];
                if (!retro_taken(c)) {
                    deg++;
                    edge(ctx, idx, c, N);
                } else if (exit)
                    exit(ctx, G, &np, idx, j, c, N);
                else
                    tb_mgroup_probe(P, G, &np, j, c, N);
            }
            G->deg[j] = deg;
            if (done)
                done(ctx, idx, &p, N);
            if (idx + 1 < b && !tb_index_next(P->ix, p.board.h))
                pos(ctx, idx + 1, &p);
        }
        retro_fold_probes(G->pr, np, G->best);
        group(ctx, G, g, ge);
    }
    G->moves += moves;
}

#endif
