/* oware (Abapa, seed 002) and awari (the rules of Romein & Bal's solution).
 *
 * Single sowing that skips the origin on every lap; the last seed making 2 or 3
 * in an opponent hole takes it and the unbroken run of 2s and 3s before it in
 * the opponent's row.  The run is found with one word-wide compare per word.
 */
#include "core.h"

/* Bit i set for lanes holding 2 or 3 seeds: (x & ~1) == 2 bytewise. */
static inline uint64_t two_or_three(const struct ruleset *rs, const board_t *b)
{
    uint64_t m = 0;
    for (int w = 0; w < rs->nwords; w++)
        m |= (uint64_t)board_gather(board_zero_bytes((b->w[w] & (BOARD_ONES * 0xFE)) ^
                                                     (BOARD_ONES * 2)))
             << (8 * w);
    return m & ((1ULL << rs->holes) - 1);
}

/* Seeds the last seed at `last` captures for the mover, and the lanes [lo, last]. */
static inline int capture_run(const struct ruleset *rs, const board_t *b, int side, int last,
                              int *lo)
{
    int P = rs->pits, opp = !side;
    if (last / P != opp)
        return 0;
    uint64_t row = ((1ULL << P) - 1) << (opp * P);
    uint64_t upto = (2ULL << last) - 1;
    uint64_t m = two_or_three(rs, b) & row & upto;
    if (!(m >> last & 1))
        return 0;
    uint64_t gaps = ~m & upto;                   /* bit last is clear here */
    *lo = gaps ? 64 - __builtin_clzll(gaps) : 0; /* one above the highest gap */
    return board_sum_range(b, *lo, last + 1);
}

void oware_generate(const struct ruleset *rs, const sow_position *p, struct sow_movelist *ml,
                    struct sow_relay_cache *cache, struct sow_stats *st)
{
    (void)cache;
    (void)st;
    int side = p->side, opp = !side, P = rs->pits, own = side * P;
    bool awari = rs->family == SOW_AWARI;
    int own_seeds = core_side_seeds(rs, &p->board, side);
    int opp_seeds = core_side_seeds(rs, &p->board, opp);
    ml->n = 0;
    ml->end = SOW_END_NONE;
    ml->endless = 0;
    if (own_seeds == 0) {
        /* Game over; the opponent takes what is left (all on his side). */
        ml->end = SOW_END_NO_SEEDS;
        ml->settle[side] = 0;
        ml->settle[opp] = (uint8_t)opp_seeds;
        return;
    }
    bool starving[SOW_MAX_PITS];
    int nstarve = 0;
    for (int k = 0; k < P; k++) {
        int h = own + k, s = p->board.h[h];
        if (!s)
            continue;
        struct sow_child *c = &ml->c[ml->n];
        core_child_init(c, p, (sow_move)k);
        board_t *b = &c->pos.board;
        b->h[h] = 0;
        int last = core_sow_skip(rs, b, h, s);
        int opp_after = core_side_seeds(rs, b, opp);
        if (!awari && opp_seeds == 0 && opp_after == 0)
            continue; /* oware: must feed an empty opponent */
        int lo = 0, cap = capture_run(rs, b, side, last, &lo);
        if (cap && (awari || cap < opp_after)) {
            /* oware: a capture of everything the opponent has takes nothing */
            for (int i = lo; i <= last; i++)
                b->h[i] = 0;
            c->captured[side] = (uint8_t)cap;
            c->pos.store[side] = (uint16_t)(c->pos.store[side] + cap);
        }
        starving[ml->n] = awari && opp_after - (c->captured[side]) == 0;
        nstarve += starving[ml->n];
        ml->n++;
    }
    if (awari && nstarve && nstarve < ml->n) {
        /* awari: leaving the opponent without seeds is illegal unless forced */
        int j = 0;
        for (int i = 0; i < ml->n; i++)
            if (!starving[i])
                ml->c[j++] = ml->c[i];
        ml->n = j;
    }
    if (ml->n == 0) {
        /* oware: opponent empty and no move feeds him; the mover takes his side. */
        ml->end = SOW_END_NO_FEED;
        ml->settle[side] = (uint8_t)own_seeds;
        ml->settle[opp] = 0;
    }
}
