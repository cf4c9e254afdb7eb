/* The engine's fast paths (engine.c): small, exact shortcuts of the generic
 * rules API for the hot leaves of the search.  Each has an obvious twin it
 * is tested against (tests/test_engine_fast.c, randomized over rule sets).
 * Private to src/search (and the tests); everything here is pure and
 * thread-safe once efast_init has filled the struct.
 *
 * Side masks: byte lanes of each side's row, per board word (board.h).
 * Example, 2x6 (12 holes, 2 words):
 *   side[0] = {0x0000FFFFFFFFFFFF, 0}                    A's holes 0..5
 *   side[1] = {0xFFFF000000000000, 0x00000000FFFFFFFF}   B's holes 6..11
 */
#ifndef SOW_ENGINE_FAST_H
#define SOW_ENGINE_FAST_H

#include <stdbool.h>
#include <stdint.h>

#include "sow/engine.h"
#include "sow/rules.h"

struct efast {
    int nw;                              /* board words in use */
    int pits;
    /* Oware and awari: a position where both rows hold seeds has a legal
     * move (every non-empty hole of the mover is legal once the opponent
     * has seeds), so the leaves need no move count. */
    bool any_row_moves;
    uint64_t side[2][SOW_BOARD_WORDS];
    /* The evaluation by table (efast_eval): eval_position's sum is linear
     * in per-hole terms that depend only on the hole's count and its place
     * in its row (seeds, non-empty, vulnerable, a full lap, reaching the
     * other row), the same function for both rows.  Not for relay games:
     * their relay term looks at the hole the sowing reaches. */
    bool eval_table;
    int tempo;
    int32_t ev[SOW_MAX_PITS][256];
};

static inline void efast_init(struct efast *f, const struct ruleset *rs)
{
    f->nw = rs->nwords;
    f->pits = rs->pits;
    f->eval_table = false; /* until efast_eval_init */
    f->any_row_moves = rs->family == SOW_OWARE || rs->family == SOW_AWARI;
    for (int s = 0; s < 2; s++)
        for (int w = 0; w < SOW_BOARD_WORDS; w++)
            f->side[s][w] = w < rs->nwords
                                ? board_range_word(w, s * rs->pits, (s + 1) * rs->pits) * 0xFF
                                : 0;
}

/* Fill the evaluation table from the weights (docs/engine.md
 * "Evaluation"; each term exactly as eval.c computes it). */
static inline void efast_eval_init(struct efast *f, const struct ruleset *rs,
                                   const struct eval_weights *w)
{
    const int N = rs->pits, H = rs->holes;
    const bool two_three = rs->family == SOW_OWARE || rs->family == SOW_AWARI;
    f->eval_table = !rs->relay;
    f->tempo = w->w[EW_TEMPO];
    for (int k = 0; k < N; k++)
        for (int x = 0; x < 256; x++) {
            int vul = two_three ? (x == 1 || x == 2) : x == 3;
            int reach = x > 0 && (k + x) % H >= N;
            /* the mover's row counts +, the opponent's - (vuln the other
             * way round: the opponent's weak holes are good) */
            f->ev[k][x] = w->w[EW_SIDE] * x + w->w[EW_MOBILITY] * (x > 0) -
                          w->w[EW_VULN] * vul + w->w[EW_BIG] * (x >= H - 1) +
                          w->w[EW_REACH] * reach;
        }
}

/* eval_position(rs, w, p) for a rule set with f->eval_table (same value,
 * tests/test_engine_fast.c). */
static inline int efast_eval(const struct efast *f, const sow_position *p)
{
    const int N = f->pits;
    const uint8_t *own = p->board.h + (p->side ? N : 0), *opp = p->board.h + (p->side ? 0 : N);
    int s = f->tempo, n = 0;
    for (int k = 0; k < N; k++) {
        s += f->ev[k][own[k]] - f->ev[k][opp[k]];
        n += own[k] + opp[k];
    }
    int lim = 100 * n;
    return s > lim ? lim : s < -lim ? -lim : s;
}

/* Does `side` have a seed on its row? */
static inline bool efast_row_any(const struct efast *f, const sow_position *p, int side)
{
    uint64_t any = 0;
    for (int w = 0; w < f->nw; w++)
        any |= p->board.w[w] & f->side[side][w];
    return any != 0;
}

/* true: p surely has a legal move; false: unknown (ask rs->count). */
static inline bool efast_has_moves(const struct efast *f, const sow_position *p)
{
    return f->any_row_moves && efast_row_any(f, p, 0) && efast_row_any(f, p, 1);
}

/* The same position for repetitions: what tt_key hashes (the board words
 * in use, side and state; stores never differ within one level). */
static inline bool efast_same_pos(const sow_position *a, const sow_position *b, int nw)
{
    return a->side == b->side && a->state == b->state && board_equal(&a->board, &b->board, nw);
}

#endif
