/* darra (Hausa, seed 004): single sowing, origin never skipped, captures of
 * four as in odu, no feeding; fewer than 5 seeds left go to the player who
 * captured last (the position's state). */
#include "core.h"

CORE_INLINE void darra(const struct ruleset *rs, const sow_position *p, struct sow_movelist *ml,
                    struct sow_relay_cache *cache, struct sow_stats *st, const int nw)
{
    (void)cache;
    (void)st;
    int side = p->side, P = rs->pits, own = side * P;
    ml->n = 0;
    ml->end = SOW_END_NONE;
    ml->endless = 0;
    int total = rules_board_seeds(rs, p);
    if (total < 5) {
        ml->end = SOW_END_FEW_SEEDS;
        ml->settle[0] = (uint8_t)(p->state == SOW_STATE_A ? total : 0);
        ml->settle[1] = (uint8_t)(p->state == SOW_STATE_B ? total : 0);
        return;
    }
    if (core_side_seeds(rs, &p->board, side) == 0) {
        core_child_init(&ml->c[0], p, SOW_MOVE_PASS); /* no feeding: the mover passes */
        ml->n = 1;
        return;
    }
    for (int k = 0; k < P; k++) {
        int h = own + k, s = p->board.h[h];
        if (!s)
            continue;
        struct sow_child *c = &ml->c[ml->n++];
        core_child_init(c, p, (sow_move)k);
        board_t *b = &c->pos.board;
        board_set_lane(b, h, 0); /* a word's write: core_sow_four reads words */
        struct core_four f = {{0, 0}, -1, 0};
        int last = core_sow_four(rs, b, h, s, &f, nw);
        if (f.last_seeds == 4) {
            f.cap[side] += 4;
            board_set_lane(b, last, 0);
            f.last_owner = side;
        }
        for (int i = 0; i < 2; i++) {
            c->captured[i] = (uint8_t)f.cap[i];
            c->pos.store[i] = (uint16_t)(c->pos.store[i] + f.cap[i]);
        }
        if (f.last_owner >= 0)
            c->pos.state = f.last_owner == SOW_A ? SOW_STATE_A : SOW_STATE_B;
    }
}

CORE_GENERATORS(darra);
