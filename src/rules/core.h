/* Internal sowing primitives shared by the rule families.
 *
 * All of them work on whole words: a lap adds 1 to every lane at once, the
 * rest of a sowing adds 1 to a contiguous (possibly wrapping) lane range, and
 * captures are found by word-wide compares.  tests/ref holds the seed-by-seed
 * twin every one of these is checked against.
 */
#ifndef SOW_RULES_CORE_H
#define SOW_RULES_CORE_H

#include "sow/rules.h"

/* Inlined into every generator (the hot path). */
#define CORE_INLINE static inline __attribute__((always_inline))

/* Lanes [0, holes) as 0x01 bytes, word w. */
static inline uint64_t core_all_word(const struct ruleset *rs, int w)
{
    return board_range_word(w, 0, rs->holes);
}

/* Add 1 to the `r` lanes following `origin` (wrapping; r < holes). */
static inline __attribute__((always_inline)) void core_add_after(const struct ruleset *rs, board_t *b, int origin, int r, int nw)
{
    int a = origin + 1, e = a + r;
    if (e <= rs->holes) {
        board_add_range(b, nw, a, e);
    } else {
        board_add_range(b, nw, a, rs->holes);
        board_add_range(b, nw, 0, e - rs->holes);
    }
}

/* Mask (bit i = lane i) of the r lanes following origin, wrapping. */
static inline uint64_t core_after_mask(const struct ruleset *rs, int origin, int r)
{
    int a = origin + 1, e = a + r, H = rs->holes;
    uint64_t m;
    if (e <= H)
        m = ((1ULL << e) - 1) & ~((1ULL << a) - 1);
    else
        m = (((1ULL << H) - 1) & ~((1ULL << a) - 1)) | ((1ULL << (e - H)) - 1);
    return m;
}

/* Plain sowing of s seeds from `origin` (already emptied), one per hole, the
 * origin not skipped.  Returns the hole of the last seed. */
CORE_INLINE int core_sow(const struct ruleset *rs, board_t *b, int origin, int s, int nw)
{
    int H = rs->holes;
    if (s < H) { /* the common case: no full lap, no division */
        core_add_after(rs, b, origin, s, nw);
        int last = origin + s;
        return last >= H ? last - H : last;
    }
    int laps = s / H, r = s % H;
    if (laps)
        for (int w = 0; w < nw; w++)
            b->w[w] += (uint64_t)laps * core_all_word(rs, w);
    core_add_after(rs, b, origin, r, nw);
    return (origin + s) % H;
}

/* Sowing that skips the origin on every lap (oware, awari). */
CORE_INLINE int core_sow_skip(const struct ruleset *rs, board_t *b, int origin, int s, int nw)
{
    int H = rs->holes, ring = H - 1;
    if (ring == 0) /* 2x1 ... only for H == 1, which cannot happen (H >= 2) */
        return origin;
    if (s < ring) { /* the common case: no full lap, no division */
        core_add_after(rs, b, origin, s, nw);
        int last = origin + s;
        return last >= H ? last - H : last;
    }
    int laps = s / ring, r = s % ring;
    if (laps) {
        for (int w = 0; w < nw; w++)
            b->w[w] += (uint64_t)laps * core_all_word(rs, w);
        b->h[origin] = 0;
    }
    core_add_after(rs, b, origin, r, nw);
    if (r)
        return (origin + r) % H;
    return (origin + H - 1) % H;
}

/* Result of a sowing with captures of four. */
struct core_four {
    int cap[2];      /* seeds taken by A and by B during the sowing (not the last seed) */
    int last_owner;  /* owner of the chronologically last capture, or -1 */
    int last_seeds;  /* the last hole's seeds, its last seed included */
};

/* Sow s seeds from `origin` (emptied, not skipped); every seed but the last
 * that makes a hole exactly 4 gives those 4 to the hole's owner at once.  The
 * last seed is added but not judged: the caller applies its rule (its
 * count in f->last_seeds).  Returns the hole of the last seed.  (No
 * division by the board's size where there is less than a lap to sow.) */
CORE_INLINE int core_sow_four(const struct ruleset *rs, board_t *b, int origin, int s,
                                struct core_four *f, int nw)
{
    int H = rs->holes, P = rs->pits, n = s - 1;
    int laps = n < H ? 0 : n / H, r = n < H ? n : n % H;
    uint64_t amask = (1ULL << P) - 1;
    for (int lap = 0; lap <= laps; lap++) {
        int len = lap < laps ? H : r;
        if (len == 0)
            continue;
        uint64_t range;
        if (len == H) {
            for (int w = 0; w < nw; w++)
                b->w[w] += core_all_word(rs, w);
            range = (1ULL << H) - 1;
        } else {
            core_add_after(rs, b, origin, len, nw);
            range = core_after_mask(rs, origin, len);
        }
        uint64_t fours = board_lanes_equal(b, nw, H, 4) & range;
        if (fours) {
            int na = __builtin_popcountll(fours & amask), nb = __builtin_popcountll(fours >> P);
            f->cap[0] += 4 * na;
            f->cap[1] += 4 * nb;
            /* Latest in sowing order: rotate so that origin+1 is bit 0. */
            int sh = origin + 1 == H ? 0 : origin + 1;
            uint64_t rot = ((fours >> sh) | (fours << (H - sh))) & ((1ULL << H) - 1);
            int last = 63 - __builtin_clzll(rot) + sh;
            last -= last >= H ? H : 0;
            f->last_owner = last >= P;
            for (uint64_t m = fours; m; m &= m - 1)
                board_set_lane(b, __builtin_ctzll(m), 0);
        }
    }
    int last = origin + 1 + r; /* origin + s, less the laps */
    last -= last >= H ? H : 0;
    f->last_seeds = (int)board_inc_lane(b, last);
    return last;
}

static inline void core_child_init(struct sow_child *c, const sow_position *p, sow_move m)
{
    c->move = m;
    c->captured[0] = c->captured[1] = 0;
    c->pos = *p;
    c->pos.side = (uint8_t)!p->side;
}

/* Seeds on one side. */
static inline int core_side_seeds(const struct ruleset *rs, const board_t *b, int side)
{
    return board_sum_range(b, side * rs->pits, (side + 1) * rs->pits);
}

/* Does `side` have any seed?  (cheaper than counting) */
static inline bool core_side_any(const struct ruleset *rs, const board_t *b, int side, int nw)
{
    uint64_t any = 0;
    int a = side * rs->pits, e = a + rs->pits;
    for (int w = 0; w < nw; w++)
        any |= b->w[w] & (board_range_word(w, a, e) * 0xFF);
    return any != 0;
}

/* Boards of at most 16 lanes (up to 2x8) live in one 128-bit register during
 * a relay: lifting a hole, sowing and reading the last hole are then shifts
 * and adds on a register, with no byte stores followed by word loads. */
typedef unsigned __int128 core_u128;
#define CORE_ONES128 (((core_u128)BOARD_ONES << 64) | BOARD_ONES)

/* Lanes [0, k) as 0x01 bytes, k in 0..16. */
static inline core_u128 core_below128(int k)
{
    return k <= 0 ? 0 : CORE_ONES128 >> (8 * (16 - k));
}

static inline core_u128 core_load128(const board_t *b)
{
    return (core_u128)b->w[1] << 64 | b->w[0];
}

static inline void core_store128(board_t *b, core_u128 x)
{
    b->w[0] = (uint64_t)x;
    b->w[1] = (uint64_t)(x >> 64);
}

static inline int core_lane128(core_u128 x, int i)
{
    return (int)(x >> (8 * i)) & 0xFF;
}

/* core_sow on a register board of H <= 16 lanes (origin already emptied). */
static inline int core_sow128(int H, core_u128 *x, int origin, int s)
{
    int r = s;
    if (s >= H) {
        *x += (core_u128)(s / H) * core_below128(H);
        r = s % H;
    }
    int a = origin + 1, e = a + r;
    if (e <= H)
        *x += core_below128(e) - core_below128(a);
    else
        *x += core_below128(H) - core_below128(a) + core_below128(e - H);
    int last = origin + r;
    return last >= H ? last - H : last;
}

/* Brent cycle detector over relay states (board + hole about to be picked up). */
struct core_brent {
    board_t saved;
    int saved_hole;
    uint32_t power, lam;
};

/* The state to compare with: the nw words in use, no more. */
static inline void core_brent_save(struct core_brent *br, const board_t *b, int hole, int nw)
{
    for (int w = 0; w < nw; w++)
        br->saved.w[w] = b->w[w];
    br->saved_hole = hole;
}

static inline void core_brent_init(struct core_brent *br, const board_t *b, int hole, int nw)
{
    core_brent_save(br, b, hole, nw);
    br->power = br->lam = 1;
}

/* Returns true when the state (b, hole) was seen before: the sowing never ends. */
static inline bool core_brent_step(struct core_brent *br, const board_t *b, int hole, int nw)
{
    if (hole == br->saved_hole && board_equal(b, &br->saved, nw))
        return true;
    if (br->lam == br->power) {
        core_brent_save(br, b, hole, nw);
        br->power *= 2;
        br->lam = 0;
    }
    br->lam++;
    return false;
}

/* Shared generators for the pieces every family needs. */
void core_settle_own_sides(const struct ruleset *rs, const sow_position *p, struct sow_movelist *ml,
                           enum sow_end why);

/* One generator per board width: the family body is written once with the
 * word count NW as a parameter and compiled for NW = 1..5 (dav1d style), so
 * every word loop is unrolled with constants. */
typedef void (*core_generate_fn)(const struct ruleset *, const sow_position *,
                                 struct sow_movelist *, struct sow_relay_cache *,
                                 struct sow_stats *);

#define CORE_GENERATORS(body)                                                                   \
    static void body##_nw1(const struct ruleset *rs, const sow_position *p,                    \
                           struct sow_movelist *ml, struct sow_relay_cache *c,                 \
                           struct sow_stats *st) { body(rs, p, ml, c, st, 1); }                 \
    static void body##_nw2(const struct ruleset *rs, const sow_position *p,                    \
                           struct sow_movelist *ml, struct sow_relay_cache *c,                 \
                           struct sow_stats *st) { body(rs, p, ml, c, st, 2); }                 \
    static void body##_nw3(const struct ruleset *rs, const sow_position *p,                    \
                           struct sow_movelist *ml, struct sow_relay_cache *c,                 \
                           struct sow_stats *st) { body(rs, p, ml, c, st, 3); }                 \
    static void body##_nw4(const struct ruleset *rs, const sow_position *p,                    \
                           struct sow_movelist *ml, struct sow_relay_cache *c,                 \
                           struct sow_stats *st) { body(rs, p, ml, c, st, 4); }                 \
    static void body##_nw5(const struct ruleset *rs, const sow_position *p,                    \
                           struct sow_movelist *ml, struct sow_relay_cache *c,                 \
                           struct sow_stats *st) { body(rs, p, ml, c, st, 5); }                 \
    const core_generate_fn body##_by_width[SOW_BOARD_WORDS + 1] = {                            \
        0, body##_nw1, body##_nw2, body##_nw3, body##_nw4, body##_nw5}

typedef int (*core_count_fn)(const struct ruleset *, const sow_position *,
                             struct sow_relay_cache *);
int core_count_generic(const struct ruleset *rs, const sow_position *p,
                       struct sow_relay_cache *cache);
int oware_count(const struct ruleset *rs, const sow_position *p, struct sow_relay_cache *cache);

extern const core_generate_fn oware_by_width[SOW_BOARD_WORDS + 1];
extern const core_generate_fn jodu_by_width[SOW_BOARD_WORDS + 1];
extern const core_generate_fn odu_by_width[SOW_BOARD_WORDS + 1];
extern const core_generate_fn darra_by_width[SOW_BOARD_WORDS + 1];

#endif
