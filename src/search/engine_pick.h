/* The engine's move ordering (engine.c): the table's move, captures (largest
 * net capture first), two killers per ply, then the history heuristic.
 * Private to src/search; one struct per searching thread. */
#ifndef SOW_ENGINE_PICK_H
#define SOW_ENGINE_PICK_H

#include "sow/engine.h"

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
/* Order ml's moves into order[0..n-1] for the mover `side` at `ply`. */
void pick_order(const struct pick *pk, const struct sow_movelist *ml, int side, int ply,
                sow_move ttm, uint8_t *order);
/* A quiet (non-capturing) move m caused a cutoff at ply with depth left. */
void pick_cutoff(struct pick *pk, int side, int ply, int depth, sow_move m);
/* Moves tried before the cutoff move lose history. */
void pick_penalty(struct pick *pk, int side, int depth, sow_move m);

#endif
