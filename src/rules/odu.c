/* odu (= Ayo Eleh = Ba-awa, seed 000) and jerin (the same with a double
 * opening move).
 *
 * Relay sowing, origin never skipped.  Every seed but the last of a sowing
 * that makes a hole exactly 4 gives the 4 to that hole's owner at once (found
 * word-wide per lap, see core_sow_four).  A last seed making 4 anywhere gives
 * them to the mover and ends the move; a last seed in an empty hole ends it;
 * otherwise the hole is lifted and sown on.
 *
 * The board is written a word at a time (board_set_lane), never a byte:
 * each lap reads whole words right after the last one lifted or filled a
 * hole, and a byte store there cost the closure's expansion a stall per lap.
 */
#include "core.h"
#include "relay_cache.h"

/* Relay sowing of s seeds already lifted from `origin`; *start is the
 * state before it (the board with them still there: for a single move the
 * parent's), for the cycle detector and the cache.  Returns the hole of
 * the last seed (its rule applied: a 4 there is taken by the mover and
 * counted in cap[side]) or -1 if the sowing never ends. */
CORE_INLINE int odu_relay(const struct ruleset *rs, board_t *b, const board_t *start, int origin,
                          int s, int side, int cap[2], struct sow_relay_cache *cache,
                          struct sow_stats *st, const int nw)
{
    struct core_brent br;
    core_brent_init(&br, start, origin, nw);
    int cur = origin, last, n = 0;
    for (;;) {
        if (n == RELAY_CACHE_AFTER && cache) {
            board_t out;
            int c2[2];
            if (relay_cache_get(cache, rs, start, origin, &out, &last, c2)) {
                *b = out;
                cap[0] = c2[0];
                cap[1] = c2[1];
                if (st)
                    st->cache_hits++, st->pickups += (uint64_t)n, st->endless += last < 0;
                return last;
            }
        }
        struct core_four f = {{0, 0}, -1, 0};
        last = core_sow_four(rs, b, cur, s, &f, nw);
        n++;
        cap[0] += f.cap[0];
        cap[1] += f.cap[1];
        if (f.last_seeds == 4) {
            cap[side] += 4;
            board_set_lane(b, last, 0);
            break;
        }
        if (f.last_seeds == 1)
            break;
        if (f.cap[0] | f.cap[1]) {
            core_brent_init(&br, b, last, nw); /* fewer seeds now: no earlier state recurs */
        } else if (core_brent_step(&br, b, last, nw)) {
            last = -1;
            break;
        }
        if (!(n & (RELAY_POLL_EVERY - 1)) && relay_cache_stopped(cache))
            return -1; /* cut: nothing stored, the board is not used */
        cur = last;
        s = f.last_seeds;
        board_set_lane(b, cur, 0);
    }
    if (n > RELAY_CACHE_AFTER && cache)
        relay_cache_put(cache, rs, start, origin, b, last, cap);
    if (st)
        st->pickups += (uint64_t)n, st->endless += last < 0,
            st->endless_pickups += last < 0 ? (uint64_t)n : 0;
    return last;
}

CORE_INLINE void odu(const struct ruleset *rs, const sow_position *p, struct sow_movelist *ml,
                  struct sow_relay_cache *cache, struct sow_stats *st, const int nw)
{
    int side = p->side, opp = !side, P = rs->pits, own = side * P;
    ml->n = 0;
    ml->end = SOW_END_NONE;
    ml->endless = 0;
    if (rules_board_seeds(rs, p) <= 4) {
        ml->end = SOW_END_FEW_SEEDS; /* the last seeds go to nobody */
        ml->settle[0] = ml->settle[1] = 0;
        return;
    }
    if (core_side_seeds(rs, &p->board, side) == 0) {
        core_child_init(&ml->c[0], p, SOW_MOVE_PASS);
        ml->n = 1;
        return;
    }
    bool must_feed = core_side_seeds(rs, &p->board, opp) == 0;
    int unfed = 0;
    /* jerin's opening lifts holes k and k+1 together; with one hole per side
     * there is no pair and the game opens with an ordinary move. */
    bool dbl = rs->family == SOW_JERIN && p->state == SOW_STATE_OPEN && P >= 2;
    for (int k = 0; k < P - dbl; k++) {
        int h = own + k, s = p->board.h[h] + (dbl ? p->board.h[h + 1] : 0);
        if (!s)
            continue;
        struct sow_child *c = &ml->c[ml->n];
        core_child_init(c, p, dbl ? (sow_move)(SOW_MOVE_DOUBLE | k) : (sow_move)k);
        c->pos.state = SOW_STATE_NONE;
        board_t *b = &c->pos.board;
        int origin = h + dbl;
        board_set_lane(b, h, 0);
        board_t start = p->board; /* jerin's pair: as if sown from the second hole */
        if (dbl) {
            board_set_lane(b, origin, 0);
            board_set_lane(&start, h, 0);
            board_set_lane(&start, origin, (unsigned)s);
        }
        int cap[2] = {0, 0};
        int last = odu_relay(rs, b, &start, origin, s, side, cap, cache, st, nw);
        if (last < 0) {
            ml->endless++;
            continue;
        }
        if (must_feed && core_side_seeds(rs, b, opp) == 0) {
            unfed++;
            continue;
        }
        for (int i = 0; i < 2; i++) {
            c->captured[i] = (uint8_t)cap[i];
            c->pos.store[i] = (uint16_t)(c->pos.store[i] + cap[i]);
        }
        ml->n++;
    }
    if (ml->n == 0)
        core_settle_own_sides(rs, p, ml, unfed ? SOW_END_NO_FEED : SOW_END_ENDLESS);
}

CORE_GENERATORS(odu);
