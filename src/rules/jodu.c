/* jodu (Kyekyemapuduo, seeds 001/003), jodu-ibadan and jodu-starve.
 *
 * Relay sowing, origin never skipped: a last seed landing in an occupied hole
 * lifts that hole (with the seed) and sows on.  A last seed in an empty hole
 * ends the move; in the mover's row it captures the facing hole (and, except
 * in jodu-ibadan, itself; in jodu-starve itself even when the facing hole is
 * empty).  A relay that returns to an earlier state never ends; Brent's cycle
 * detector finds that exactly with one saved state.
 */
#include "core.h"
#include "relay_cache.h"

/* A relay still going after RELAY_CACHE_AFTER lifts is looked up by its
 * starting state: on a hit *b and *last take the remembered outcome. */
static inline bool jodu_memo(const struct ruleset *rs, const board_t *start, int h, board_t *b,
                             int *last, struct sow_relay_cache *cache, struct sow_stats *st, int n)
{
    int cap[2];
    if (!cache || !relay_cache_get(cache, rs, start, h, b, last, cap))
        return false;
    if (st)
        st->cache_hits++, st->pickups += (uint64_t)n, st->endless += *last < 0;
    return true;
}

/* Relay from hole h of board b (in place).  Returns the hole of the last seed,
 * or -1 if the sowing never ends. */
CORE_INLINE int jodu_relay(const struct ruleset *rs, board_t *b, int h,
                           struct sow_relay_cache *cache, struct sow_stats *st, const int nw)
{
    board_t start = *b;
    int cur = h, last, n = 0;
    if (nw <= 2) {
        /* The same relay and the same Brent detector on a register board. */
        core_u128 x = core_load128(b), saved = x;
        int saved_hole = h, H = rs->holes;
        uint32_t power = 1, lam = 1;
        for (;;) {
            if (n == RELAY_CACHE_AFTER && jodu_memo(rs, &start, h, b, &last, cache, st, n))
                return last;
            int s = core_lane128(x, cur);
            x &= ~((core_u128)0xFF << (8 * cur));
            last = core_sow128(H, &x, cur, s);
            n++;
            if (core_lane128(x, last) == 1)
                break;
            if (last == saved_hole && x == saved) {
                last = -1;
                break;
            }
            if (!(n & (RELAY_POLL_EVERY - 1)) && relay_cache_stopped(cache))
                return -1; /* cut: nothing stored, the board is not used */
            if (lam == power) {
                saved = x;
                saved_hole = last;
                power *= 2;
                lam = 0;
            }
            lam++;
            cur = last;
        }
        core_store128(b, x);
    } else {
        struct core_brent br;
        core_brent_init(&br, b, h);
        for (;;) {
            if (n == RELAY_CACHE_AFTER && jodu_memo(rs, &start, h, b, &last, cache, st, n))
                return last;
            int s = b->h[cur];
            b->h[cur] = 0;
            last = core_sow(rs, b, cur, s, nw);
            n++;
            if (b->h[last] == 1)
                break;
            if (core_brent_step(&br, b, last, nw)) {
                last = -1;
                break;
            }
            if (!(n & (RELAY_POLL_EVERY - 1)) && relay_cache_stopped(cache))
                return -1; /* cut: nothing stored, the board is not used */
            cur = last;
        }
    }
    if (n > RELAY_CACHE_AFTER && cache) {
        const int nocap[2] = {0, 0};
        relay_cache_put(cache, rs, &start, h, b, last, nocap);
    }
    if (st)
        st->pickups += (uint64_t)n, st->endless += last < 0,
            st->endless_pickups += last < 0 ? (uint64_t)n : 0;
    return last;
}

CORE_INLINE void jodu(const struct ruleset *rs, const sow_position *p, struct sow_movelist *ml,
                   struct sow_relay_cache *cache, struct sow_stats *st, const int nw)
{
    int side = p->side, P = rs->pits, H = rs->holes, own = side * P;
    enum sow_family fam = rs->family;
    ml->n = 0;
    ml->end = SOW_END_NONE;
    ml->endless = 0;
    if (core_side_seeds(rs, &p->board, side) == 0) {
        if (fam != SOW_JODU_STARVE) {
            core_settle_own_sides(rs, p, ml, SOW_END_NO_SEEDS);
        } else if (core_side_seeds(rs, &p->board, !side) == 0) {
            core_settle_own_sides(rs, p, ml, SOW_END_EMPTY);
        } else {
            core_child_init(&ml->c[0], p, SOW_MOVE_PASS); /* starved: the other plays again */
            ml->n = 1;
        }
        return;
    }
    for (int k = 0; k < P; k++) {
        int h = own + k;
        if (!p->board.h[h])
            continue;
        struct sow_child *c = &ml->c[ml->n];
        core_child_init(c, p, (sow_move)k);
        board_t *b = &c->pos.board;
        int last = jodu_relay(rs, b, h, cache, st, nw);
        if (last < 0) {
            ml->endless++;
            continue;
        }
        int cap = 0;
        if (last / P == side) {
            int f = H - 1 - last, facing = b->h[f];
            if (facing || fam == SOW_JODU_STARVE) {
                cap = facing + (fam == SOW_JODU_IBADAN ? 0 : 1);
                b->h[f] = 0;
                if (fam != SOW_JODU_IBADAN)
                    b->h[last] = 0;
            }
        }
        c->captured[side] = (uint8_t)cap;
        c->pos.store[side] = (uint16_t)(c->pos.store[side] + cap);
        ml->n++;
    }
    if (ml->n == 0)
        core_settle_own_sides(rs, p, ml, SOW_END_ENDLESS);
}

CORE_GENERATORS(jodu);
