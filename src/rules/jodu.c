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

/* ---- boards of at most 16 lanes (up to 2x8): one table add per lift ----
 *
 * Lifting s < H seeds from hole c and sowing them is one 128-bit addition:
 * +1 on the s lanes after c (wrapping) and -s on lane c.  jodu_step[H][c][s]
 * holds that addend for every H <= 16, c < H, 1 <= s < H (0 elsewhere), as a
 * 128-bit two's complement number: lanes never leave 0..255, so the borrow
 * from lane c runs through to the top and cancels.  Worked example, H = 12,
 * c = 10, s = 3: +1 on lanes 11, 0 and 1, -3 on lane 10, i.e.
 *   2^(8*11) + 2^0 + 2^8 - 3 * 2^(8*10).
 * A lift of s >= H seeds (about 3% of lifts on 2x6) adds s / H full laps on
 * top of the entry for s % H.  The table is 17 x 16 x 16 x 16 bytes (68 KiB,
 * read only; 4 KiB of it in use for a given board size). */
#define JB(k) ((k) <= 0 ? (core_u128)0 : CORE_ONES128 >> ((8 * (16 - (k))) & 127))
#define JRANGE(H, c, s)                                                                        \
    ((c) + 1 + (s) <= (H) ? JB((c) + 1 + (s)) - JB((c) + 1)                                     \
                          : JB(H) - JB((c) + 1) + JB((c) + 1 + (s) - (H)))
#define JE(H, c, s)                                                                            \
    ((c) < (H) && (s) >= 1 && (s) < (H)                                                        \
         ? JRANGE(H, c, s) - ((core_u128)(s) << ((8 * (c)) & 127))                             \
         : (core_u128)0)
#define JROW(H, c)                                                                             \
    {JE(H, c, 0),  JE(H, c, 1),  JE(H, c, 2),  JE(H, c, 3), JE(H, c, 4),  JE(H, c, 5),          \
     JE(H, c, 6),  JE(H, c, 7),  JE(H, c, 8),  JE(H, c, 9), JE(H, c, 10), JE(H, c, 11),         \
     JE(H, c, 12), JE(H, c, 13), JE(H, c, 14), JE(H, c, 15)}
#define JTAB(H)                                                                                \
    {JROW(H, 0),  JROW(H, 1),  JROW(H, 2),  JROW(H, 3), JROW(H, 4),  JROW(H, 5),                \
     JROW(H, 6),  JROW(H, 7),  JROW(H, 8),  JROW(H, 9), JROW(H, 10), JROW(H, 11),               \
     JROW(H, 12), JROW(H, 13), JROW(H, 14), JROW(H, 15)}
static const core_u128 jodu_step[17][16][16] = {
    JTAB(0),  JTAB(1),  JTAB(2),  JTAB(3),  JTAB(4),  JTAB(5),  JTAB(6),  JTAB(7),  JTAB(8),
    JTAB(9),  JTAB(10), JTAB(11), JTAB(12), JTAB(13), JTAB(14), JTAB(15), JTAB(16)};
#undef JTAB
#undef JROW
#undef JE
#undef JRANGE
#undef JB

/* Lane i (< 16) of a register board. */
static inline int jodu_lane16(core_u128 x, int i)
{
    uint64_t w = i & 8 ? (uint64_t)(x >> 64) : (uint64_t)x;
    return (int)(uint8_t)(w >> (8 * (i & 7)));
}

/* The relay of jodu_relay (below) on a board of H <= 16 lanes held in one
 * 128-bit register.  Repetition is found two ways, both exact: against the
 * starting state (a relay whose lifts all hold fewer than H seeds is
 * reversible, docs/rules.md, so if it never ends it comes back to its first
 * state, found after one turn of the cycle instead of Brent's up to three),
 * and by Brent's detector for the rest (a lift of H or more can join a cycle
 * from outside).  The checks that are not per lift (Brent's new saved state,
 * the memo after RELAY_CACHE_AFTER lifts, the stop flag) run between chunks
 * of lifts, so the inner loop is the lift, the end test and two compares. */
CORE_INLINE int jodu_relay16(const struct ruleset *rs, board_t *b, int h,
                             struct sow_relay_cache *cache, struct sow_stats *st)
{
    const int H = rs->holes;
    const core_u128(*const step)[16] = jodu_step[H];
    const core_u128 x0 = core_load128(b);
    core_u128 x = x0, saved = x0;
    int c = h, s = b->h[h], saved_c = h, last;
    uint32_t n = 0, brent_next = 1, limit = 1;
    for (;;) {
        do {
            if (__builtin_expect(s < H, 1)) {
                x += step[c][s];
                last = c + s;
            } else { /* full laps: s / H on every lane, then the rest */
                int laps = s / H, r = s - laps * H;
                x += step[c][r] + (core_u128)laps * core_below128(H) -
                     ((core_u128)(s - r) << (8 * c));
                last = c + r;
            }
            last = last >= H ? last - H : last;
            n++;
            s = jodu_lane16(x, last);
            if (s == 1)
                goto ended;
            if ((last == h && x == x0) || (last == saved_c && x == saved)) {
                last = -1;
                goto ended;
            }
            c = last;
        } while (n != limit);
        if (n == RELAY_CACHE_AFTER) {
            board_t start = *b;
            if (jodu_memo(rs, &start, h, b, &last, cache, st, (int)n))
                return last;
        }
        if (!(n & (RELAY_POLL_EVERY - 1)) && relay_cache_stopped(cache))
            return -1; /* cut: nothing stored, the board is not used */
        if (n == brent_next) {
            saved = x;
            saved_c = c;
            brent_next *= 2;
        }
        /* next stop: Brent's next save, the memo look-up, the next poll */
        limit = brent_next;
        if (n < RELAY_CACHE_AFTER && limit > RELAY_CACHE_AFTER)
            limit = RELAY_CACHE_AFTER;
        uint32_t poll = (n | (RELAY_POLL_EVERY - 1)) + 1;
        if (limit > poll)
            limit = poll;
    }
ended:;
    /* *b is still the starting board: the memo's key */
    board_t out = *b;
    core_store128(&out, x);
    if (n > RELAY_CACHE_AFTER && cache) {
        const int nocap[2] = {0, 0};
        relay_cache_put(cache, rs, b, h, &out, last, nocap);
    }
    *b = out;
    if (st)
        st->pickups += (uint64_t)n, st->endless += last < 0,
            st->endless_pickups += last < 0 ? (uint64_t)n : 0;
    return last;
}

/* Relay from hole h of board b (in place).  Returns the hole of the last seed,
 * or -1 if the sowing never ends. */
CORE_INLINE int jodu_relay(const struct ruleset *rs, board_t *b, int h,
                           struct sow_relay_cache *cache, struct sow_stats *st, const int nw)
{
    if (nw <= 2)
        return jodu_relay16(rs, b, h, cache, st);
    board_t start = *b;
    int cur = h, last, n = 0;
    {
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
            /* the start first: a reversible relay comes back to it (above) */
            if ((last == h && board_equal(b, &start, nw)) || core_brent_step(&br, b, last, nw)) {
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
