/* Endgame tables: un-sowing (sow/tb_lean.h explains it); inline, so that the
 * lean builder's inner loop makes no calls for the candidates. */
#ifndef SOW_TABLES_UNMOVE_H
#define SOW_TABLES_UNMOVE_H

#include <string.h>

#include "sow/tb_lean.h"

/* Oware and awari skip the origin when a sowing laps; darra does not. */
static inline bool unmove_skips_origin(const struct ruleset *rs)
{
    return rs->family == SOW_OWARE || rs->family == SOW_AWARI;
}

/* Candidates for child q: calls EMIT(p, move) for each (p: sow_position *).
 * skip = origin skipped on laps (oware, awari); pass = darra's pass. */
static inline __attribute__((always_inline)) int
unmove_candidates_(const sow_position *q, int P, bool skip, bool pass, sow_position *out,
                   sow_move *mv, int max)
{
    int H = 2 * P, ps = !q->side, o = ps * P, ring = skip ? H - 1 : H, k = 0;
    const uint8_t *c = q->board.h;
    uint8_t cc[2 * SOW_MAX_HOLES]; /* the board twice: hole h + j without a modulo */
    memcpy(cc, c, (size_t)H);
    memcpy(cc + H, c, (size_t)H);
    for (int m = 0; m < P; m++) {
        int h = o + m;
        if (skip && c[h] != 0)
            continue;
        int minrest = 255;
        for (int j = 1; j < H; j++)
            minrest = cc[h + j] < minrest ? cc[h + j] : minrest;
        /* laps l: skip needs c[h] == 0 (any l), no skip c[h] == l */
        int l0 = skip ? 0 : c[h], l1 = skip ? minrest : c[h];
        for (int l = l0; l <= l1 && l <= minrest; l++) {
            /* p = c less l on every other hole, then less one per hole of
             * the remainder as r grows (one hole changes per step) */
            sow_position cur;
            memset(&cur, 0, sizeof cur);
            for (int j = 1; j < H; j++) {
                int i = h + j < H ? h + j : h + j - H;
                cur.board.h[i] = (uint8_t)(c[i] - l);
            }
            cur.side = (uint8_t)ps;
            cur.state = q->state;
            for (int r = 0; r < ring; r++) {
                if (r > 0) {
                    int i = h + r < H ? h + r : h + r - H;
                    if (cc[h + r] < l + 1)
                        break;
                    cur.board.h[i]--;
                }
                int s = l * ring + r;
                if (s == 0)
                    continue;
                if (s > SOW_MAX_SEEDS)
                    break;
                if (k >= max)
                    return k;
                cur.board.h[h] = (uint8_t)s;
                out[k] = cur;
                mv[k++] = (sow_move)m;
            }
        }
    }
    if (pass) {
        bool empty = true;
        for (int m = 0; m < P; m++)
            empty &= c[o + m] == 0;
        if (empty && k < max) {
            sow_position *p = &out[k];
            memset(p, 0, sizeof *p);
            p->board = q->board;
            p->side = (uint8_t)ps;
            p->state = q->state;
            mv[k++] = SOW_MOVE_PASS;
        }
    }
    return k;
}

/* The forward check: p's generated moves include m, capturing nothing, with
 * q's board and state as its child. */
static inline bool unmove_confirm(const struct ruleset *rs, const sow_position *p, sow_move m,
                                  const sow_position *q, struct sow_movelist *ml)
{
    rs->generate(rs, p, ml, NULL, NULL);
    for (int i = 0; i < ml->n; i++) {
        const struct sow_child *ch = &ml->c[i];
        if (ch->move != m)
            continue;
        return ch->captured[0] == 0 && ch->captured[1] == 0 && ch->pos.state == q->state &&
               board_equal(&ch->pos.board, &q->board, rs->nwords);
    }
    return false;
}

/* The forward check without generating, for a candidate (p, m) of q made by
 * unmove_candidates_ (so sowing m in p gives q's board if nothing is
 * captured).  What generate() would decide, from q and the sowing alone:
 *
 *   oware, awari (the origin skipped, ring = 2N-1): the last seed lands at
 *     h + r (r = s mod ring), or h - 1 when r = 0; it captures iff that hole
 *     is the opponent's and holds 2 or 3 in q (then the run of 2s and 3s
 *     back from it in his row), except that oware's capture of everything
 *     he has (grand slam) takes nothing.  An opponent row empty in q was
 *     empty in p too: oware's move does not feed him (illegal); awari's
 *     starves him, which is legal only if every move of p does: undecided
 *     here (-1), generate() decides.
 *   darra (ring = 2N): a seed that makes a hole exactly 4 captures (the last
 *     seed too), so the move captures nothing iff no hole goes from below 4
 *     to 4 or more: p'[i] < 4 <= q[i] for no i, p' = p with the origin
 *     emptied (it gets l = s / 2N back).  Fewer than 5 seeds on the board:
 *     p has no move.  The pass (p's row empty, p = q) is then p's only move.
 *
 * Returns 1 (the move is in-level: legal, captures nothing), 0 (it is not)
 * or -1 (undecided: ask unmove_confirm).  tests/test_lean.c checks it
 * against unmove_confirm for every candidate of small levels. */
static inline __attribute__((always_inline)) int
unmove_quick_(const sow_position *p, sow_move m, const sow_position *q, int P, bool skip,
              bool awari)
{
    int H = 2 * P, ps = p->side, oo = (!ps) * P;
    const uint8_t *c = q->board.h;
    if (skip) {
        int h = ps * P + m, s = p->board.h[h], ring = H - 1;
        int r = s < ring ? s : s % ring;
        int last = h + (r ? r : ring);
        last = last >= H ? last - H : last;
        int opp = 0;
        for (int i = oo; i < oo + P; i++)
            opp += c[i];
        if (opp == 0)
            return awari ? -1 : 0;
        if ((unsigned)(last - oo) >= (unsigned)P || (c[last] & 0xFE) != 2)
            return 1;
        if (awari)
            return 0;
        int cap = 0;
        for (int i = last; i >= oo && (c[i] & 0xFE) == 2; i--)
            cap += c[i];
        return cap == opp; /* the grand slam takes nothing */
    }
    int total = 0;
    for (int i = 0; i < H; i++)
        total += c[i];
    if (total < 5)
        return 0;
    if (m == SOW_MOVE_PASS)
        return 1;
    int h = ps * P + m, s = p->board.h[h];
    if (s / H >= 4) /* the origin gets l back, from 0 */
        return 0;
    bool four = false;
    for (int i = 0; i < H; i++)
        four |= i != h && p->board.h[i] < 4 && c[i] >= 4;
    return !four;
}

static inline int unmove_quick(const struct ruleset *rs, const sow_position *p, sow_move m,
                               const sow_position *q)
{
    return unmove_quick_(p, m, q, rs->pits, unmove_skips_origin(rs), rs->family == SOW_AWARI);
}

#endif
