/* The engine's move ordering: see engine_pick.h. */
#include <string.h>

#include "engine_pick.h"

void pick_clear(struct pick *pk)
{
    memset(pk, 0, sizeof *pk);
    for (int i = 0; i < ENGINE_MAX_PLY + 2; i++)
        pk->killer[i][0] = pk->killer[i][1] = SOW_MOVE_NONE;
}

void pick_order(const struct pick *pk, const struct sow_movelist *ml, int side, int ply,
                sow_move ttm, uint8_t *order)
{
    int64_t key[SOW_MAX_PITS + 1];
    int b = pick_keys(pk, ml, side, ply, ttm, key);
    /* as the engine picks: the first move from pick_keys' maximum */
    for (int k = 0; k < ml->n; k++)
        order[k] = (uint8_t)(k == 0 ? pick_first(key, b) : pick_next(key, ml->n, k));
}

static void hist_add(int32_t *h, int bonus)
{
    /* Gravity: entries saturate near +-2^20 and stay below the killers. */
    *h += bonus - (int32_t)((int64_t)*h * (bonus < 0 ? -bonus : bonus) / (1 << 20));
}

void pick_cutoff(struct pick *pk, int side, int ply, int depth, sow_move m)
{
    if (pk->killer[ply][0] != m) {
        pk->killer[ply][1] = pk->killer[ply][0];
        pk->killer[ply][0] = m;
    }
    int b = depth * depth > 4096 ? 4096 : depth * depth;
    hist_add(&pk->history[side][pick_slot(m)], 16 * b);
}

void pick_penalty(struct pick *pk, int side, int depth, sow_move m)
{
    int b = depth * depth > 4096 ? 4096 : depth * depth;
    hist_add(&pk->history[side][pick_slot(m)], -16 * b);
}
