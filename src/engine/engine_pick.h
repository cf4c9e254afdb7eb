/* The engine's move ordering (engine.c): the table's move, captures (largest
 * net capture first), two killers per ply, then the history heuristic.
 * Private to src/engine; one struct per searching thread. */
#ifndef SOW_ENGINE_PICK_H
#define SOW_ENGINE_PICK_H

#include "sow/engine.h"

_Static_assert(SOW_MAX_PITS + 1 <= 32, "a move's index fits the 5 low bits of its sort key");

/* Move -> small index: holes 0..17, jerin's doubles 18..35, pass 36. */
#define PICK_SLOTS 38
/* The history is kept per move slot and per seed count of the moved hole
 * (0 .. cnt_cap, the last class for that many or more): in the single-lap
 * games (oware, awari, darra) a hole and its count fix the whole sowing
 * (where it ends, what it passes), so "this sowing refuted" is more
 * specific than "this hole did" (oware bench at depth 16: 4% fewer nodes).
 * In the relay games the sowing goes on from where it ends, and counts
 * split the history too thinly (more nodes): cnt_cap 0, one class. */
#define PICK_CNT 16

struct pick {
    sow_move killer[ENGINE_MAX_PLY + 2][2];
    int32_t history[2][PICK_SLOTS][PICK_CNT];
    int cnt_cap; /* pick_set_counts; kept by pick_clear */
};

static inline int pick_slot(sow_move m)
{
    if (m == SOW_MOVE_PASS)
        return 36;
    return (m & SOW_MOVE_DOUBLE) ? 18 + (m & 0x3F) : m & 0x3F;
}

/* The count class of move m in p, whose mover's row has P holes (a pass:
 * 0; jerin's double: its first hole). */
static inline int pick_cnt(const struct pick *pk, const sow_position *p, int P, sow_move m)
{
    if (m == SOW_MOVE_PASS)
        return 0;
    int c = p->board.h[p->side * P + (m & 0x3F)];
    return c < pk->cnt_cap ? c : pk->cnt_cap;
}

/* The history entry of move m in p. */
static inline int32_t *pick_hist(struct pick *pk, const sow_position *p, int P, sow_move m)
{
    return &pk->history[p->side][pick_slot(m)][pick_cnt(pk, p, P, m)];
}

/* The history values of the holes 0..P-1 of p's mover (P <= 8), as
 * pick_keys_hist reads them: a copy taken before a subtree changes them. */
static inline void pick_hist_snap(const struct pick *pk, const sow_position *p, int P,
                                  int32_t *snap)
{
    for (int k = 0; k < P; k++)
        snap[k] = pk->history[p->side][k][pick_cnt(pk, p, P, (sow_move)k)];
}

/* Count classes for the rule set (0 .. PICK_CNT-1, or one for the relay
 * games: see struct pick), then pick_clear. */
void pick_set_counts(struct pick *pk, const struct ruleset *rs);
void pick_clear(struct pick *pk);
/* Sort keys of ml's moves (the moves of p, whose rows have P holes) at
 * `ply`: the move's score times 32 plus (31 - its index), so the keys are
 * distinct and equal scores keep the generation order (inline: once per
 * node of the search).  Returns the index of the largest key (for
 * pick_first).
 * pick_keys_hist: the same with the history read from snap (pick_hist_snap,
 * indexed by hole; moves are holes < 8): a copy taken earlier, since the
 * engine's table move is searched before the other moves are made, and its
 * subtree updates the history. */
static inline __attribute__((always_inline)) int
pick_keys_hist(const struct pick *pk, const struct sow_movelist *ml, const sow_position *p, int P,
               int ply, sow_move ttm, int64_t *key, const int32_t *snap)
{
    const int n = ml->n, side = p->side;
    const sow_move k0 = pk->killer[ply][0], k1 = pk->killer[ply][1];
    int b = 0;
    for (int i = 0; i < n; i++) {
        const struct sow_child *ch = &ml->c[i];
        sow_move m = ch->move;
        int sc;
        int net = ch->captured[side] - ch->captured[!side];
        if (m == ttm)
            sc = 1 << 28;
        else if (net > 0)
            sc = (1 << 26) + net * 4096;
        else if (m == k0)
            sc = 1 << 25;
        else if (m == k1)
            sc = (1 << 25) - 1;
        else
            sc = (snap ? snap[m] : pk->history[side][pick_slot(m)][pick_cnt(pk, p, P, m)]) +
                 net * 65536; /* losing captures last */
        key[i] = (int64_t)sc * 32 + (31 - i);
        b = key[i] > key[b] ? i : b;
    }
    return b;
}

/* pick_keys_hist for the lists of oware and awari (engine_fast.h's
 * generator, rows of at most 8 holes): moves are holes, only the mover
 * captures, counts in PICK_CNT classes (pick_set_counts); the same keys
 * (tests/test_engine_fast.c) for less work at every inner node. */
static inline __attribute__((always_inline)) int
pick_keys_ow(const struct pick *pk, const struct sow_movelist *ml, const sow_position *p, int P,
             int ply, sow_move ttm, int64_t *key, const int32_t *snap)
{
    const int n = ml->n, side = p->side;
    const sow_move k0 = pk->killer[ply][0], k1 = pk->killer[ply][1];
    const uint8_t *own = p->board.h + side * P;
    const int32_t(*hist)[PICK_CNT] = pk->history[side];
    int b = 0;
    for (int i = 0; i < n; i++) {
        const struct sow_child *ch = &ml->c[i];
        const sow_move m = ch->move;
        const int net = ch->captured[side];
        int sc;
        if (m == ttm)
            sc = 1 << 28;
        else if (net > 0)
            sc = (1 << 26) + net * 4096;
        else if (m == k0)
            sc = 1 << 25;
        else if (m == k1)
            sc = (1 << 25) - 1;
        else
            sc = snap ? snap[m] : hist[m][own[m] < PICK_CNT - 1 ? own[m] : PICK_CNT - 1];
        key[i] = (int64_t)sc * 32 + (31 - i);
        b = key[i] > key[b] ? i : b;
    }
    return b;
}

static inline __attribute__((always_inline)) int
pick_keys(const struct pick *pk, const struct sow_movelist *ml, const sow_position *p, int P,
          int ply, sow_move ttm, int64_t *key)
{
    return pick_keys_hist(pk, ml, p, P, ply, ttm, key, NULL);
}

/* The k-th move in order (its index in ml), key[0..k-1] being the first k
 * already: a selection step, so that a node cut off after one move pays
 * for one scan, not for a sort.  Moves key[k]'s entry to key[k]. */
static inline int pick_next(int64_t *key, int n, int k)
{
    int b = k;
    for (int i = k + 1; i < n; i++)
        if (key[i] > key[b])
            b = i;
    int64_t x = key[b];
    key[b] = key[k];
    key[k] = x;
    return 31 - (int)(x & 31);
}
/* pick_next(key, n, 0) when b is the index of the largest key (what
 * pick_keys returns): the first move without a scan. */
/* (GCC cannot see that b < n: key[b] was written by pick_keys) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
static inline int pick_first(int64_t *key, int b)
{
    int64_t x = key[b];
    key[b] = key[0];
    key[0] = x;
    return 31 - (int)(x & 31);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* The index of the j-th move picked (j < k after pick_next(.., k)). */
static inline int pick_index(const int64_t *key, int j)
{
    return 31 - (int)(key[j] & 31);
}
/* The whole order of p's moves ml into order[0..n-1] (pick_keys,
 * pick_first, then pick_next). */
void pick_order(const struct pick *pk, const struct sow_movelist *ml, const sow_position *p,
                int P, int ply, sow_move ttm, uint8_t *order);
static inline void pick_hist_add(int32_t *h, int bonus)
{
    /* Gravity: entries saturate near +-2^20 and stay below the killers. */
    *h += bonus - (int32_t)((int64_t)*h * (bonus < 0 ? -bonus : bonus) / (1 << 20));
}

/* A quiet (non-capturing) move m of p caused a cutoff at ply with depth
 * left (inline: at every quiet cutoff of the search). */
static inline void pick_cutoff(struct pick *pk, const sow_position *p, int P, int ply, int depth,
                               sow_move m)
{
    if (pk->killer[ply][0] != m) {
        pk->killer[ply][1] = pk->killer[ply][0];
        pk->killer[ply][0] = m;
    }
    int b = depth * depth > 4096 ? 4096 : depth * depth;
    pick_hist_add(pick_hist(pk, p, P, m), 16 * b);
}

/* Moves of p tried before the cutoff move lose history. */
static inline void pick_penalty(struct pick *pk, const sow_position *p, int P, int depth,
                                sow_move m)
{
    int b = depth * depth > 4096 ? 4096 : depth * depth;
    pick_hist_add(pick_hist(pk, p, P, m), -16 * b);
}

#endif
