/* The engine's move ordering: see engine_pick.h. */
#include <string.h>

#include "engine_pick.h"

void pick_set_counts(struct pick *pk, const struct ruleset *rs)
{
    pk->cnt_cap = rs->relay ? 0 : PICK_CNT - 1;
    pick_clear(pk);
}

void pick_clear(struct pick *pk)
{
    int cap = pk->cnt_cap;
    memset(pk, 0, sizeof *pk);
    pk->cnt_cap = cap;
    for (int i = 0; i < ENGINE_MAX_PLY + 2; i++)
        pk->killer[i][0] = pk->killer[i][1] = SOW_MOVE_NONE;
}

void pick_order(const struct pick *pk, const struct sow_movelist *ml, const sow_position *p,
                int P, int ply, sow_move ttm, uint8_t *order)
{
    int64_t key[SOW_MAX_PITS + 1];
    int b = pick_keys(pk, ml, p, P, ply, ttm, key);
    /* as the engine picks: the first move from pick_keys' maximum */
    for (int k = 0; k < ml->n; k++)
        order[k] = (uint8_t)(k == 0 ? pick_first(key, b) : pick_next(key, ml->n, k));
}
