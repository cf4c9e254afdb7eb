/* oware (Abapa, seed 002) and awari (the rules of Romein & Bal's solution).
 *
 * Single sowing that skips the origin on every lap; the last seed making 2 or 3
 * in an opponent hole takes it and the unbroken run of 2s and 3s before it in
 * the opponent's row.  The run is found with one word-wide compare per word.
 */
#include "core.h"

/* Bit i set for lanes holding 2 or 3 seeds: (x & ~1) == 2 bytewise. */
CORE_INLINE uint64_t two_or_three(const board_t *b, int nw)
{
    uint64_t m = 0;
    for (int w = 0; w < nw; w++)
        m |= (uint64_t)board_gather(board_zero_bytes((b->w[w] & (BOARD_ONES * 0xFE)) ^
                                                     (BOARD_ONES * 2)))
             << (8 * w);
    return m;
}

/* Seeds the last seed at `last` captures for the mover; the run is [*lo, last]. */
CORE_INLINE int capture_run(const struct ruleset *rs, const board_t *b, int side, int last,
                            int *lo, int nw)
{
    int P = rs->pits, opp = !side;
    if ((unsigned)(last - opp * P) >= (unsigned)P || (b->h[last] & 0xFE) != 2)
        return 0;
    uint64_t row = ((1ULL << P) - 1) << (opp * P);
    uint64_t upto = (2ULL << last) - 1;
    uint64_t m = two_or_three(b, nw) & row & upto;
    uint64_t gaps = ~m & upto;                   /* bit `last` is clear here */
    *lo = gaps ? 64 - __builtin_clzll(gaps) : 0; /* one above the highest gap */
    return board_sum_range(b, *lo, last + 1);
}

CORE_INLINE void oware(const struct ruleset *rs, const sow_position *p, struct sow_movelist *ml,
                       struct sow_relay_cache *cache, struct sow_stats *st, const int nw)
{
    (void)cache;
    (void)st;
    int side = p->side, opp = !side, P = rs->pits, own = side * P;
    bool awari = rs->family == SOW_AWARI;
    ml->n = 0;
    ml->end = SOW_END_NONE;
    ml->endless = 0;
    if (!core_side_any(rs, &p->board, side, nw)) {
        /* Game over; the opponent takes what is left (all on his side). */
        ml->end = SOW_END_NO_SEEDS;
        ml->settle[side] = 0;
        ml->settle[opp] = (uint8_t)core_side_seeds(rs, &p->board, opp);
        return;
    }
    bool opp_empty = !core_side_any(rs, &p->board, opp, nw);
    bool starving[SOW_MAX_PITS];
    int nstarve = 0;
    uint64_t holes = board_nonzero(&p->board, nw, rs->holes) >> own & ((1ULL << P) - 1);
    for (; holes; holes &= holes - 1) {
        int k = __builtin_ctzll(holes), h = own + k, s = p->board.h[h];
        struct sow_child *c = &ml->c[ml->n];
        core_child_init(c, p, (sow_move)k);
        board_t *b = &c->pos.board;
        b->h[h] = 0;
        int last = core_sow_skip(rs, b, h, s, nw);
        if (!awari && opp_empty && !core_side_any(rs, b, opp, nw))
            continue; /* oware: must feed an empty opponent */
        int lo = 0, cap = capture_run(rs, b, side, last, &lo, nw);
        bool starves = false;
        if (cap) {
            int opp_after = core_side_seeds(rs, b, opp);
            /* oware: a capture of everything the opponent has takes nothing */
            if (awari || cap < opp_after) {
                for (int w = 0; w < nw; w++)
                    b->w[w] &= ~(board_range_word(w, lo, last + 1) * 0xFF);
                c->captured[side] = (uint8_t)cap;
                c->pos.store[side] = (uint16_t)(c->pos.store[side] + cap);
                starves = cap == opp_after;
            }
        } else if (awari && opp_empty) {
            starves = !core_side_any(rs, b, opp, nw);
        }
        starving[ml->n] = starves;
        nstarve += starves;
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
        ml->settle[side] = (uint8_t)core_side_seeds(rs, &p->board, side);
        ml->settle[opp] = 0;
    }
}

CORE_GENERATORS(oware);

/* oware's legal moves without making them: every non-empty hole, except that
 * an empty opponent must be fed (the seeds must reach his row). */
int oware_count(const struct ruleset *rs, const sow_position *p, struct sow_relay_cache *cache)
{
    (void)cache;
    int P = rs->pits, own = p->side * P;
    uint64_t holes = board_nonzero(&p->board, rs->nwords, rs->holes) >> own & ((1ULL << P) - 1);
    if (!holes)
        return 0;
    if (core_side_any(rs, &p->board, !p->side, rs->nwords))
        return __builtin_popcountll(holes);
    int n = 0;
    for (; holes; holes &= holes - 1) {
        int k = __builtin_ctzll(holes);
        n += p->board.h[own + k] >= P - k; /* reaches hole 1 of the opponent */
    }
    return n;
}
