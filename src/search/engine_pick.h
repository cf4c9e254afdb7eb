/* The engine's move ordering (engine.c): the table's move, captures (largest
 * net capture first), two killers per ply, then the history heuristic.
 * Private to src/search; one struct per searching thread. */
#ifndef SOW_ENGINE_PICK_H
#define SOW_ENGINE_PICK_H

#include "sow/engine.h"

_Static_assert(SOW_MAX_PITS + 1 <= 32, "a move's index fits the 5 low bits of its sort key");

/* Move -> small index: holes 0..17, jerin's doubles 18..35, pass 36. */
#define PICK_SLOTS 38

struct pick {
    sow_move killer[ENGINE_MAX_PLY + 2][2];
    int32_t history[2][PICK_SLOTS];
};

static inline int pick_slot(sow_move m)
{
    if (m == SOW_MOVE_PASS)
        return 36;
    return (m & SOW_MOVE_DOUBLE) ? 18 + (m & 0x3F) : m & 0x3F;
}

void pick_clear(struct pick *pk);
/* Sort keys of ml's moves for the mover `side` at `ply`: the move's score
 * times 32 plus (31 - its index), so the keys are distinct and equal scores
 * keep the generation order (inline: once per node of the search).
 * Returns the index of the largest key (for pick_first).
 * pick_keys_hist: the same with the history of `side` read from hist
 * (a copy taken earlier: the engine's table move is searched before the
 * other moves are made, and its subtree updates the history). */
static inline int pick_keys_hist(const struct pick *pk, const struct sow_movelist *ml,
                                 int side, int ply, sow_move ttm, int64_t *key,
                                 const int32_t *hist)
{
    const int n = ml->n;
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
            sc = hist[pick_slot(m)] + net * 65536; /* losing captures last */
        key[i] = (int64_t)sc * 32 + (31 - i);
        b = key[i] > key[b] ? i : b;
    }
    return b;
}

static inline int pick_keys(const struct pick *pk, const struct sow_movelist *ml, int side,
                            int ply, sow_move ttm, int64_t *key)
{
    return pick_keys_hist(pk, ml, side, ply, ttm, key, pk->history[side]);
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
/* The whole order into order[0..n-1] (pick_keys, pick_first, then pick_next). */
void pick_order(const struct pick *pk, const struct sow_movelist *ml, int side, int ply,
                sow_move ttm, uint8_t *order);
/* A quiet (non-capturing) move m caused a cutoff at ply with depth left. */
void pick_cutoff(struct pick *pk, int side, int ply, int depth, sow_move m);
/* Moves tried before the cutoff move lose history. */
void pick_penalty(struct pick *pk, int side, int depth, sow_move m);

#endif
