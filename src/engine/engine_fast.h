/* The engine's fast paths (engine.c): small, exact shortcuts of the generic
 * rules API for the hot leaves of the search.  Each has an obvious twin it
 * is tested against (tests/test_engine_fast.c, randomized over rule sets).
 * Private to src/engine (and the tests); everything here is pure and
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
#include <string.h>

#include "sow/engine.h"
#include "sow/rules.h"

typedef unsigned __int128 efast_u128;

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
     * other row, the hole terms), the same function for both rows, plus
     * the threat terms when their weights are not 0 (threats): tgt[k][c]
     * is the other row's hole that a sowing of c seeds from hole k ends on
     * (less than a lap), else -1; vul[c] whether c seeds are vulnerable.
     * Not for relay games: their relay term looks at the hole the sowing
     * reaches. */
    bool eval_table, threats;
    int thr_w[2];
    int8_t tgt[SOW_MAX_PITS][256];
    uint8_t vul[256];
    /* Oware and awari on boards of at most 16 holes (2x8): moves made on a
     * 128-bit register (efast_gen_oware), the generic generator's twin. */
    bool gen_oware, awari;
    efast_u128 row128[2];                /* lanes of each row, 0xFF bytes */
    efast_u128 lane[16];                 /* lane i, 0xFF */
    efast_u128 fill[17];                 /* lanes [0, i), 0xFF bytes */
    efast_u128 ones;                     /* 0x01 in every hole's lane */
    efast_u128 inc[16][16];              /* sowing s < 2N-1 seeds from hole h */
    efast_u128 sow[16][16];              /* the same less the s seeds taken from h */
    uint8_t last[16][16];                /* its last hole */
    int tempo;
    int32_t ev[SOW_MAX_PITS][256];
};

static inline void efast_init(struct efast *f, const struct ruleset *rs)
{
    f->nw = rs->nwords;
    f->pits = rs->pits;
    f->eval_table = false; /* until efast_eval_init */
    f->awari = rs->family == SOW_AWARI;
    f->gen_oware = (rs->family == SOW_OWARE || rs->family == SOW_AWARI) && rs->holes <= 16;
    f->any_row_moves = rs->family == SOW_OWARE || rs->family == SOW_AWARI;
    for (int s = 0; s < 2; s++)
        for (int w = 0; w < SOW_BOARD_WORDS; w++)
            f->side[s][w] = w < rs->nwords
                                ? board_range_word(w, s * rs->pits, (s + 1) * rs->pits) * 0xFF
                                : 0;
    for (int s = 0; s < 2; s++)
        f->row128[s] = (efast_u128)f->side[s][1] << 64 | f->side[s][0];
    if (!f->gen_oware)
        return;
    const int H = rs->holes;
    for (int i = 0; i <= 16; i++)
        f->fill[i] = i == 0 ? 0 : i == 16 ? ~(efast_u128)0 : ((efast_u128)1 << (8 * i)) - 1;
    for (int i = 0; i < 16; i++)
        f->lane[i] = (efast_u128)0xFF << (8 * i);
    f->ones = 0;
    for (int i = 0; i < H; i++)
        f->ones |= (efast_u128)1 << (8 * i);
    memset(f->inc, 0, sizeof f->inc);
    memset(f->last, 0, sizeof f->last);
    for (int h = 0; h < H; h++)
        for (int s = 0; s < H - 1; s++) { /* s seeds into the holes after h */
            for (int j = 1; j <= s; j++)
                f->inc[h][s] += (efast_u128)1 << (8 * ((h + j) % H));
            f->last[h][s] = (uint8_t)((h + s) % H);
            /* x + sow[h][s] empties hole h (it holds exactly s: no borrow
             * leaves its lane) and sows: one add, modulo 2^128 */
            f->sow[h][s] = f->inc[h][s] - ((efast_u128)s << (8 * h));
        }
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
    f->threats = w->x[EX_THREAT] || w->x[EX_THREATENED];
    f->thr_w[0] = w->x[EX_THREAT];
    f->thr_w[1] = w->x[EX_THREATENED];
    for (int x = 0; x < 256; x++)
        f->vul[x] = two_three ? (x == 1 || x == 2) : x == 3;
    for (int k = 0; k < N; k++)
        for (int x = 0; x < 256; x++) {
            int vul = f->vul[x];
            int reach = x > 0 && (k + x) % H >= N;
            int j = k + x;
            f->tgt[k][x] = (int8_t)(x > 0 && x < H - 1 && j >= N && j < H ? j - N : -1);
            /* the mover's row counts +, the opponent's - (vuln the other
             * way round: the opponent's weak holes are good) */
            f->ev[k][x] = w->w[EW_SIDE] * x + w->w[EW_MOBILITY] * (x > 0) -
                          w->w[EW_VULN] * vul + w->w[EW_BIG] * (x >= H - 1) +
                          w->w[EW_REACH] * reach +
                          (x ? w->hole[k][(x < EVAL_BUCKETS ? x : EVAL_BUCKETS) - 1] : 0);
        }
}

/* eval_position(rs, w, p) for a rule set with f->eval_table (same value,
 * tests/test_engine_fast.c); n is p's seed count on the board (the engine
 * knows it: no sum). */
static inline __attribute__((always_inline)) int efast_eval_p(const struct efast *f,
                                                              const sow_position *p, int n,
                                                              int N)
{
    const uint8_t *own = p->board.h + (p->side ? N : 0), *opp = p->board.h + (p->side ? 0 : N);
    int s = f->tempo;
    for (int k = 0; k < N; k++)
        s += f->ev[k][own[k]] - f->ev[k][opp[k]];
    if (f->threats) {
        int ta = 0, tb = 0;
        for (int k = 0; k < N; k++) {
            int a = f->tgt[k][own[k]], b = f->tgt[k][opp[k]];
            ta += a >= 0 && f->vul[opp[a]];
            tb += b >= 0 && f->vul[own[b]];
        }
        s += f->thr_w[0] * ta + f->thr_w[1] * tb;
    }
    int lim = 100 * n;
    return s > lim ? lim : s < -lim ? -lim : s;
}

static inline int efast_eval(const struct efast *f, const sow_position *p, int n)
{
    return f->pits == 6 ? efast_eval_p(f, p, n, 6) : efast_eval_p(f, p, n, f->pits);
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
static inline __attribute__((always_inline)) bool
efast_has_moves_nw(const struct efast *f, const sow_position *p, const int nw)
{
    uint64_t a = 0, b = 0;
    for (int w = 0; w < nw; w++) {
        a |= p->board.w[w] & f->side[0][w];
        b |= p->board.w[w] & f->side[1][w];
    }
    return f->any_row_moves && a && b;
}

static inline bool efast_has_moves(const struct efast *f, const sow_position *p)
{
    return efast_has_moves_nw(f, p, f->nw);
}

/* One of 64 bits for a position (board words in use and side): equal
 * positions get the same bit.  A cheap multiplicative hash. */
static inline uint64_t efast_pos_bit(const sow_position *p, int nw)
{
    uint64_t h = p->side;
    for (int w = 0; w < nw; w++)
        h = (h ^ p->board.w[w]) * 0x9E3779B97F4A7C15ULL;
    return 1ULL << (h >> 58);
}

/* The same position for repetitions: what tt_key hashes (the board words
 * in use, side and state; stores never differ within one level). */
static inline bool efast_same_pos(const sow_position *a, const sow_position *b, int nw)
{
    return a->side == b->side && a->state == b->state && board_equal(&a->board, &b->board, nw);
}

/* ---- oware and awari moves on a register (boards of <= 16 holes) ---- */

/* rs->generate for oware and awari when f->gen_oware: the same list (same
 * order, children, captures, endings; tests/test_engine_fast.c), rules as
 * in src/rules/oware.c: sowing skips the origin; the last seed making 2 or
 * 3 in the opponent's row takes the run of 2s and 3s before it; oware: an
 * empty opponent must be fed, a capture of all he has takes nothing;
 * awari: leaving him empty is illegal unless every move does.  The board
 * is one 128-bit value; a sowing of s < 2N-1 seeds from hole h is one add
 * of the table's sow[h][s] (variable 128-bit shifts cost more). */
static inline int efast_sum(efast_u128 x, efast_u128 m)
{
    x &= m;
    return (int)(((uint64_t)x * 0x0101010101010101ULL) >> 56) +
           (int)(((uint64_t)(x >> 64) * 0x0101010101010101ULL) >> 56);
}

/* One move of efast_gen_oware: hole own + k of p (board x, non-empty), its
 * child in *c.  false: oware's feeding rule forbids it (opp_empty: the
 * opponent's row was empty).  *starves: awari's child leaves the opponent
 * empty (legal only if every move does).  Also the engine's lazy table
 * move (efast_make_tt). */
static inline __attribute__((always_inline)) bool
efast_sow_one(const struct efast *f, const sow_position *restrict p, efast_u128 x, int P, int side,
              int k, int s, bool opp_empty, struct sow_child *restrict c, bool *starves)
{
    /* side is p->side, passed in: the child's byte stores could alias p
     * as far as the compiler knows, and would force reloads per move */
    const int H = 2 * P, opp = !side, own = side * P;
    const int ring = H - 1, olo = opp * P, ohi = olo + P;
    const bool awari = f->awari;
    const efast_u128 orow = f->row128[opp];
    const int h = own + k;
    efast_u128 y;
    int last;
    if (s < ring) {
        y = x + f->sow[h][s];
        last = f->last[h][s];
    } else {
        int laps = s / ring, r = s % ring;
        y = (((x & ~f->lane[h]) + (efast_u128)laps * f->ones) & ~f->lane[h]) + f->inc[h][r];
        last = r ? f->last[h][r] : (h + H - 1) % H;
    }
    if (!awari && opp_empty && !(y & orow))
        return false; /* oware: must feed an empty opponent */
    c->move = (sow_move)k;
    c->captured[0] = c->captured[1] = 0;
    c->pos = *p;
    c->pos.side = (uint8_t)opp;
    c->pos.board.w[0] = (uint64_t)y;
    c->pos.board.w[1] = (uint64_t)(y >> 64);
    *starves = false;
    const uint8_t *b = c->pos.board.h;
    if (last >= olo && last < ohi && (b[last] & 0xFE) == 2) {
        int cap = 0, j = last;
        for (; j >= olo && (b[j] & 0xFE) == 2; j--)
            cap += b[j];
        int opp_after = efast_sum(y, orow);
        if (awari || cap < opp_after) {
            y &= ~(f->fill[last + 1] & ~f->fill[j + 1]); /* lanes j+1..last */
            c->pos.board.w[0] = (uint64_t)y;
            c->pos.board.w[1] = (uint64_t)(y >> 64);
            c->captured[side] = (uint8_t)cap;
            c->pos.store[side] = (uint16_t)(c->pos.store[side] + cap);
            *starves = cap == opp_after;
        }
    } else if (awari && opp_empty) {
        *starves = !(y & orow);
    }
    return true;
}

static inline __attribute__((always_inline)) void
efast_gen_oware_p(const struct efast *f, const sow_position *restrict p,
                  struct sow_movelist *restrict ml, int P)
{
    const int side = p->side, opp = !side, own = side * P;
    const bool awari = f->awari;
    const efast_u128 x = (efast_u128)p->board.w[1] << 64 | p->board.w[0];
    const efast_u128 orow = f->row128[opp];
    ml->n = 0;
    ml->end = SOW_END_NONE;
    ml->endless = 0;
    if (!(x & f->row128[side])) {
        ml->end = SOW_END_NO_SEEDS;
        ml->settle[side] = 0;
        ml->settle[opp] = (uint8_t)efast_sum(x, orow);
        return;
    }
    const bool opp_empty = !(x & orow);
    bool starving[SOW_MAX_PITS];
    int nstarve = 0, nm = 0;
    for (int k = 0; k < P; k++) {
        const int s = p->board.h[own + k];
        bool starves;
        if (s && efast_sow_one(f, p, x, P, side, k, s, opp_empty, &ml->c[nm], &starves)) {
            starving[nm] = starves;
            nstarve += starves;
            nm++;
        }
    }
    ml->n = nm;
    if (awari && nstarve && nstarve < ml->n) {
        int j = 0;
        for (int i = 0; i < ml->n; i++)
            if (!starving[i])
                ml->c[j++] = ml->c[i];
        ml->n = j;
    }
    if (ml->n == 0) {
        ml->end = SOW_END_NO_FEED;
        ml->settle[side] = (uint8_t)efast_sum(x, f->row128[side]);
        ml->settle[opp] = 0;
    }
}

/* The generator (oware's 2x6 with the row length a constant: unrolled). */
static inline void efast_gen_oware(const struct efast *f, const sow_position *p,
                                   struct sow_movelist *ml)
{
    if (f->pits == 6)
        efast_gen_oware_p(f, p, ml, 6);
    else
        efast_gen_oware_p(f, p, ml, f->pits);
}

/* The table's move m alone, before the other moves are made (f->gen_oware):
 * true if m is surely legal in p, its child in *c exactly as
 * efast_gen_oware makes it; false: unknown (not a move of p, or awari's
 * starving move, legal only if every move starves): generate them all. */
static inline __attribute__((always_inline)) bool
efast_make_tt_p(const struct efast *f, const sow_position *p, sow_move m, struct sow_child *c,
                const int P)
{
    if (m >= P)
        return false; /* SOW_MOVE_NONE, or not a hole */
    const int s = p->board.h[p->side * P + m];
    if (!s)
        return false;
    const efast_u128 x = (efast_u128)p->board.w[1] << 64 | p->board.w[0];
    bool starves;
    return efast_sow_one(f, p, x, P, p->side, m, s, !(x & f->row128[!p->side]), c, &starves) &&
           !(f->awari && starves);
}

static inline bool efast_make_tt(const struct efast *f, const sow_position *p, sow_move m,
                                 struct sow_child *c)
{
    return efast_make_tt_p(f, p, m, c, f->pits);
}

#endif
