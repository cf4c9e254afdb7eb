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
    int score[SOW_MAX_PITS + 1];
    const int n = ml->n;
    for (int i = 0; i < n; i++) {
        const struct sow_child *ch = &ml->c[i];
        sow_move m = ch->move;
        int sc;
        int net = ch->captured[side] - ch->captured[!side];
        if (m == ttm)
            sc = 1 << 28;
        else if (net > 0)
            sc = (1 << 26) + net * 4096;
        else if (m == pk->killer[ply][0])
            sc = 1 << 25;
        else if (m == pk->killer[ply][1])
            sc = (1 << 25) - 1;
        else
            sc = pk->history[side][pick_slot(m)] + net * 65536; /* losing captures last */
        score[i] = sc;
        int j = i;
        while (j > 0 && score[order[j - 1]] < sc) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint8_t)i;
    }
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
