/* jodu (Kyekyemapuduo, seeds 001/003), jodu-ibadan and jodu-starve.
 *
 * Relay sowing, origin never skipped: a last seed landing in an occupied hole
 * lifts that hole (with the seed) and sows on.  A last seed in an empty hole
 * ends the move; in the mover's row it captures the facing hole (and, except
 * in jodu-ibadan, itself; in jodu-starve itself even when the facing hole is
 * empty).  A relay that returns to an earlier state never ends; it then
 * returns to its first state (see "Why the start" below), which is what is
 * compared.
 */
#include <string.h>

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

/* ---- boards of at most 16 lanes (up to 2x8): one vector add per lift ----
 *
 * The board is a vector of 16 byte lanes.  Lifting s < H seeds from hole c
 * and sowing them is one lane-wise addition (mod 256 per lane) of
 * jodu_step[H][c][s]: 1 on the s lanes after c (wrapping), 256 - s on lane c
 * (which held s, so it becomes 0), 0 elsewhere; 0 outside H <= 16, c < H,
 * 1 <= s < H.  Worked example, H = 12, c = 10, s = 3: lanes 11, 0, 1 get +1,
 * lane 10 gets 253 (-3); the last seed is in lane 1.  A lift of s >= H seeds
 * (about 3% of the lifts on 2x6) adds s / H on every lane on top of the entry
 * for s % H.  The table is 17 x 16 x 16 entries of 16 bytes (68 KiB, read
 * only; 4 KiB of it in use for a given board size).  GCC vector extensions:
 * paddb on x86-64, the like on any target GCC and clang support. */
typedef uint8_t jodu_v16 __attribute__((vector_size(16)));

#define JIN(H, c, s, i) ((i) < (H) && (((i) + 2 * (H) - (c) - 1) % ((H) ? (H) : 1)) < (s))
#define JOK(H, c, s) ((c) < (H) && (s) >= 1 && (s) < (H))
#define JL(H, c, s, i)                                                                         \
    ((uint8_t)(JOK(H, c, s) ? JIN(H, c, s, i) - ((i) == (c) ? (s) : 0) : 0))
#define JE(H, c, s)                                                                            \
    {JL(H, c, s, 0),  JL(H, c, s, 1),  JL(H, c, s, 2),  JL(H, c, s, 3),                       \
     JL(H, c, s, 4),  JL(H, c, s, 5),  JL(H, c, s, 6),  JL(H, c, s, 7),                       \
     JL(H, c, s, 8),  JL(H, c, s, 9),  JL(H, c, s, 10), JL(H, c, s, 11),                      \
     JL(H, c, s, 12), JL(H, c, s, 13), JL(H, c, s, 14), JL(H, c, s, 15)}
#define JROW(M, H, c)                                                                          \
    {M(H, c, 0),  M(H, c, 1),  M(H, c, 2),  M(H, c, 3), M(H, c, 4),  M(H, c, 5),              \
     M(H, c, 6),  M(H, c, 7),  M(H, c, 8),  M(H, c, 9), M(H, c, 10), M(H, c, 11),             \
     M(H, c, 12), M(H, c, 13), M(H, c, 14), M(H, c, 15)}
#define JTAB(M, H)                                                                             \
    {JROW(M, H, 0),  JROW(M, H, 1),  JROW(M, H, 2),  JROW(M, H, 3),                           \
     JROW(M, H, 4),  JROW(M, H, 5),  JROW(M, H, 6),  JROW(M, H, 7),                           \
     JROW(M, H, 8),  JROW(M, H, 9),  JROW(M, H, 10), JROW(M, H, 11),                          \
     JROW(M, H, 12), JROW(M, H, 13), JROW(M, H, 14), JROW(M, H, 15)}
#define JALL(M)                                                                                \
    {JTAB(M, 0),  JTAB(M, 1),  JTAB(M, 2),  JTAB(M, 3),  JTAB(M, 4),  JTAB(M, 5),             \
     JTAB(M, 6),  JTAB(M, 7),  JTAB(M, 8),  JTAB(M, 9),  JTAB(M, 10), JTAB(M, 11),            \
     JTAB(M, 12), JTAB(M, 13), JTAB(M, 14), JTAB(M, 15), JTAB(M, 16)}
static const jodu_v16 jodu_step[17][16][16] = JALL(JE);
/* Lane masks: jodu_lanes[H] is 0xFF on lanes < H, jodu_lane[c] on lane c. */
#define JM(k, i) ((uint8_t)((i) < (k) ? 0xFF : 0))
#define JMV(k)                                                                                 \
    {JM(k, 0), JM(k, 1), JM(k, 2),  JM(k, 3),  JM(k, 4),  JM(k, 5),  JM(k, 6),  JM(k, 7),      \
     JM(k, 8), JM(k, 9), JM(k, 10), JM(k, 11), JM(k, 12), JM(k, 13), JM(k, 14), JM(k, 15)}
static const jodu_v16 jodu_lanes[17] = {JMV(0),  JMV(1),  JMV(2),  JMV(3),  JMV(4),  JMV(5),
                                        JMV(6),  JMV(7),  JMV(8),  JMV(9),  JMV(10), JMV(11),
                                        JMV(12), JMV(13), JMV(14), JMV(15), JMV(16)};
#undef JM
#define JM(k, i) ((uint8_t)((i) == (k) ? 0xFF : 0))
static const jodu_v16 jodu_lane[16] = {JMV(0), JMV(1), JMV(2),  JMV(3),  JMV(4),  JMV(5),
                                       JMV(6), JMV(7), JMV(8),  JMV(9),  JMV(10), JMV(11),
                                       JMV(12), JMV(13), JMV(14), JMV(15)};
#undef JMV
#undef JM
#undef JALL
#undef JTAB
#undef JROW
#undef JE
#undef JOK
#undef JL
#undef JIN

static inline bool jodu_v16_equal(jodu_v16 a, jodu_v16 b)
{
    uint64_t x[2], y[2];
    memcpy(x, &a, 16);
    memcpy(y, &b, 16);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}

/* The relay of jodu_relay (below) on a board of H <= 16 lanes held in one
 * vector.  A relay that never ends comes back to its starting state (see
 * "Why the start" above jodu_relay), so repetition is a compare with that
 * state when the last seed falls into the starting hole.  Past
 * RELAY_CACHE_AFTER lifts the compare is with the start turned to the last
 * hole ("Turns of the start" below): rot[c] is the starting board turned by
 * c - h holes, and one compare a lift finds the first turn.  The memo look-up
 * after RELAY_CACHE_AFTER lifts and the stop poll run between chunks of
 * lifts: a chunk is the lift, the end test and one compare per lift, and a
 * relay that ends within RELAY_CACHE_AFTER lifts (nearly all) is one chunk. */
CORE_INLINE int jodu_relay16(const struct ruleset *rs, board_t *b, int h,
                             struct sow_relay_cache *cache, struct sow_stats *st)
{
    const int H = rs->holes;
    const jodu_v16 *const step = &jodu_step[H][0][0]; /* [c * 16 + s] */
    jodu_v16 x0;
    memcpy(&x0, b, 16);
    jodu_v16 x = x0;
    uint8_t buf[16]; /* x in memory, for reading one lane */
    memcpy(buf, &x0, 16);
    int c = h, s = b->h[h], last;
    uint64_t n = 0, limit = RELAY_CACHE_AFTER;
    jodu_v16 rot[16]; /* the start's turns, from RELAY_CACHE_AFTER lifts on */
    bool turns = false;
    for (;;) {
        do {
            if (__builtin_expect(s < H, 1)) {
                /* the last hole gets exactly one seed: its new count is read
                 * from the board in memory before the add is stored, which
                 * keeps the add off the chain from one lift to the next */
                x += step[c * 16 + s];
                last = c + s >= H ? c + s - H : c + s;
                s = buf[last] + 1;
            } else { /* full laps: s / H on every lane, then the rest; lane
                      * c, which lost s, gets the laps back */
                int laps = s / H, r = s - laps * H;
                x += step[c * 16 + r] + (jodu_lanes[H] & (uint8_t)laps) -
                     (jodu_lane[c] & (uint8_t)(s - r));
                last = c + r >= H ? c + r - H : c + r;
                memcpy(buf, &x, 16);
                s = buf[last];
            }
            memcpy(buf, &x, 16);
            n++;
            if (s == 1)
                goto ended;
            if (__builtin_expect(!turns, 1) ? last == h && jodu_v16_equal(x, x0)
                                            : jodu_v16_equal(x, rot[last])) {
                x = x0; /* the cycle, finished, would come back to the start */
                last = -1;
                goto ended;
            }
            c = last;
        } while (n != limit);
        if (n == RELAY_CACHE_AFTER) {
            board_t start = *b; /* *b is still the starting board */
            if (jodu_memo(rs, &start, h, b, &last, cache, st, (int)n))
                return last;
            uint8_t x0b[16], t[16];
            memcpy(x0b, &x0, 16);
            for (int k = 0; k < H; k++) { /* rot[h + k] = start turned by k */
                memcpy(t, x0b, 16);
                for (int i = 0; i < H; i++)
                    t[i + k < H ? i + k : i + k - H] = x0b[i];
                memcpy(&rot[h + k < H ? h + k : h + k - H], t, 16);
            }
            turns = true;
        }
        if (!(n & (RELAY_POLL_EVERY - 1)) && relay_cache_stopped(cache))
            return -1; /* cut: nothing stored, the board is not used */
        limit = (n | (RELAY_POLL_EVERY - 1)) + 1; /* the next poll */
    }
ended:
    if (n > RELAY_CACHE_AFTER && cache) {
        const int nocap[2] = {0, 0};
        board_t out = *b; /* *b is still the starting board: the memo's key */
        memcpy(&out, &x, 16);
        relay_cache_put(cache, rs, b, h, &out, last, nocap);
    }
    memcpy(b, &x, 16);
    if (st)
        st->pickups += n, st->endless += last < 0, st->endless_pickups += last < 0 ? n : 0;
    return last;
}

/* Is b the board start turned by r holes (r in -H..H)?  Only the H holes
 * count: a jodu board holds nothing else. */
static inline bool jodu_turned(const board_t *b, const board_t *start, int H, int r)
{
    if (r < 0)
        r += H;
    for (int i = 0; i < H; i++)
        if (b->h[i + r < H ? i + r : i + r - H] != start->h[i])
            return false;
    return true;
}

/* Why the start.  A jodu relay state is (board, hole about to be lifted), and
 * a lift is a map F on states.  F is one-to-one: from y = F(x), with last
 * hole c' and m the smallest count on y's board, x's lifted hole c is c'
 * itself if y[c'] == m, else the first hole behind c' holding m; then x took
 * s = m * H + ((c' - c) mod H) seeds from c.  (Sowing s seeds gives every
 * hole s / H, the s % H holes after c one more, c itself none more: so c
 * holds the minimum, the holes from c+1 to c' hold more, and c' == c only
 * when s % H == 0.)  A walk under a one-to-one map that repeats a state
 * repeats its first one, so a relay that never ends comes back to its start,
 * and comparing with the start decides it exactly: after one turn of the
 * cycle, where Brent's detector needs up to three.  tests/test_relay.c
 * checks this against the reference, which remembers every state.
 * docs/rules.md says the same for users.
 *
 * Turns of the start.  A lift does not care where the board's hole 0 is:
 * turning a state by r holes (every count moved r holes on, the hole to lift
 * too) and lifting gives the lift's result turned by r, and whether a relay
 * ends (its last seed in an empty hole) does not change under a turn.  So a
 * relay that reaches its start turned by r holes, after k lifts, repeats
 * those k lifts turned by r, 2r, ... and is back at its start after
 * k * H / gcd(r, H) lifts without ever ending: it never ends, and the compare
 * with the start's H turns proves it that many times sooner.  Measured on
 * the 3,988 never-ending relays a jodu solve proved in its first 40 s (levels
 * to 13): 155.5 M lifts to the start, 19.9 M to its first turn (7.8x; the
 * share of each factor: 6x 35%, 3x 23%, 4x 19%, 2x 14%, 12x 7%, 1x 1%).
 *
 * Relay from hole h of board b (in place).  Returns the hole of the last seed,
 * or -1 if the sowing never ends. */
CORE_INLINE int jodu_relay(const struct ruleset *rs, board_t *b, int h,
                           struct sow_relay_cache *cache, struct sow_stats *st, const int nw)
{
    if (nw <= 2)
        return jodu_relay16(rs, b, h, cache, st);
    board_t start = *b;
    int cur = h, last;
    uint64_t n = 0;
    for (;;) {
        if (n == RELAY_CACHE_AFTER && jodu_memo(rs, &start, h, b, &last, cache, st, (int)n))
            return last;
        int s = b->h[cur];
        b->h[cur] = 0;
        last = core_sow(rs, b, cur, s, nw);
        n++;
        if (b->h[last] == 1)
            break;
        if (n < RELAY_CACHE_AFTER ? last == h && board_equal(b, &start, nw)
                                  : jodu_turned(b, &start, rs->holes, last - h)) {
            *b = start; /* endless: the finished cycle would come back to it */
            last = -1;
            break;
        }
        if (!(n & (RELAY_POLL_EVERY - 1)) && relay_cache_stopped(cache))
            return -1; /* cut: nothing stored, the board is not used */
        cur = last;
    }
    if (n > RELAY_CACHE_AFTER && cache) {
        const int nocap[2] = {0, 0};
        relay_cache_put(cache, rs, &start, h, b, last, nocap);
    }
    if (st)
        st->pickups += n, st->endless += last < 0, st->endless_pickups += last < 0 ? n : 0;
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
