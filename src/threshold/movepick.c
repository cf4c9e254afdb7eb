/* Move ordering for the solver's searches (movepick.h). */
#include "movepick.h"

int movepick_threshold(const struct sow_movelist *ml, int side, sow_move ttm, uint64_t key,
                       int tid, uint8_t *order)
{
    int score[SOW_MAX_PITS + 1];
    int n = ml->n;
    for (int i = 0; i < n; i++) {
        const struct sow_child *ch = &ml->c[i];
        int sc;
        if (ch->move == ttm)
            sc = 1 << 20;
        else if (ch->captured[0] | ch->captured[1])
            sc = (1 << 12) + 64 * (ch->captured[side] - ch->captured[!side]);
        else
            sc = 0;
        if (tid)
            sc += (int)((key * (uint64_t)(2 * tid + 1) >> (i * 3 % 58)) & 31);
        score[i] = sc;
        int j = i;
        while (j > 0 && score[order[j - 1]] < sc) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint8_t)i;
    }
    return n;
}
