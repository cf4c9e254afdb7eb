/* Endgame tables: un-sowing (tables/tb_lean.h explains it); inline, so that the
 * lean builder's inner loop makes no calls for the candidates. */
#ifndef SOW_TABLES_UNMOVE_H
#define SOW_TABLES_UNMOVE_H

#include <string.h>

#include "tables/tb_lean.h"

/* Oware and awari skip the origin when a sowing laps; darra does not. */
static inline bool unmove_skips_origin(const struct ruleset *rs)
{
    return rs->family == SOW_OWARE || rs->family == SOW_AWARI;
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

/* Candidates for child q (tables/tb_lean.h: every (h, l, r) with q large
 * enough, and darra's pass), in order of origin, laps, remainder; with
 * filter, only the in-level predecessors: the candidates less the ones the
 * forward check would drop, decided from q alone where possible
 * (docs/tables.md "Lean builder"):
 *
 *   oware, awari (the origin skipped, ring = 2N-1): a sowing's last seed
 *     lands at h + r (r = s mod ring), or at h - 1 when r = 0.  It captures
 *     iff that hole is the opponent's and holds 2 or 3 in q (with the run of
 *     2s and 3s back from it in his row), except that oware's capture of
 *     everything he has (grand slam) takes nothing.  So which last holes are
 *     allowed is one mask per q.  An opponent row empty in q was empty
 *     before the move too: oware's move does not feed him (illegal: q has no
 *     predecessor); awari's move starves him, which is legal only if every
 *     move of the predecessor does: *check is set and every candidate is
 *     returned, for the caller to confirm with unmove_confirm.
 *   darra (ring = 2N): a seed that makes a hole exactly 4 captures (the last
 *     seed too), so the move captures nothing iff no hole goes from below 4
 *     to 4 or more: the origin gets l = s / 2N back from 0 (l < 4), every
 *     other hole l or l + 1; for laps l no other hole may hold 4..3+l, and r
 *     must stop before the first hole after h that holds 4+l.  Fewer than 5
 *     seeds: no move at all.  The pass (p's row empty, p = q) is then p's
 *     only move.
 *
 * With filter, the same list as without followed by unmove_confirm (tested
 * exhaustively on small levels, tests/test_lean.c), in the same order.
 * skip = origin skipped on laps (oware, awari); pass = darra's pass. */
/* Over 120 lines on purpose: always inlined into the builders' hot loops
 * with constant flags (skip, pass, awari, filter), so that each caller gets
 * a copy specialised to its rule set; cut into calls, the flags would no
 * longer fold away. */
static inline __attribute__((always_inline)) int
unmove_preds_(const sow_position *q, int P, bool skip, bool pass, bool awari, bool filter,
              sow_position *out, sow_move *mv, int max, bool *check)
{
    int H = 2 * P, ps = !q->side, o = ps * P, oo = (!ps) * P, ring = skip ? H - 1 : H, k = 0;
    const uint8_t *c = q->board.h;
    uint8_t cc[2 * SOW_MAX_HOLES]; /* the board twice: hole h + j without a modulo */
    memcpy(cc, c, (size_t)H);
    memcpy(cc + H, c, (size_t)H);
    uint64_t okl = ~0ull; /* skip: allowed last holes */
    *check = false;
    if (!filter) {
        /* every candidate */
    } else if (skip) {
        int opp = 0;
        for (int i = oo; i < oo + P; i++)
            opp += c[i];
        if (opp == 0) {
            if (!awari)
                return 0;
            *check = true;
        }
        for (int i = oo; i < oo + P; i++) {
            if ((c[i] & 0xFE) != 2)
                continue;
            int cap = 0;
            for (int x = i; x >= oo && (c[x] & 0xFE) == 2; x--)
                cap += c[x];
            if (awari || cap != opp) /* oware's grand slam takes nothing */
                okl &= ~(1ull << i);
        }
    } else {
        int total = 0;
        for (int i = 0; i < H; i++)
            total += c[i];
        if (total < 5)
            return 0;
    }
    /* The smallest count (n1 holes hold it) and the next one: the minimum
     * over every hole but h is m2 if h alone holds m1, else m1. */
    int m1 = 255, n1 = 0, m2 = 255;
    for (int i = 0; i < H; i++) {
        int x = c[i];
        if (x < m1)
            m2 = m1, m1 = x, n1 = 1;
        else if (x == m1)
            n1++;
        else if (x < m2)
            m2 = x;
    }
    /* q's holes, the predecessor's side and q's state; subtracting l from
     * every lane but h is then one subtraction per word (no borrows: those
     * lanes hold at least l). */
    int nwd = (H + 7) / 8;
    uint64_t ones[SOW_BOARD_WORDS]; /* 0x01 in lanes 0..H-1 */
    for (int w = 0; w < nwd; w++)
        ones[w] = board_range_word(w, 0, H);
    sow_position base;
    memset(&base, 0, sizeof base);
    memcpy(base.board.h, c, (size_t)H);
    base.side = (uint8_t)ps;
    base.state = q->state;
    for (int m = 0; m < P; m++) {
        int h = o + m;
        if (skip && c[h] != 0)
            continue;
        int minrest = c[h] == m1 && n1 == 1 ? m2 : m1;
        uint64_t lanes[SOW_BOARD_WORDS]; /* 0x01 in every lane but h */
        for (int w = 0; w < nwd; w++)
            lanes[w] = ones[w] & ~(w == h / 8 ? 1ull << (8 * (h % 8)) : 0);
        int l0 = skip ? 0 : c[h], l1 = skip ? minrest : c[h];
        for (int l = l0; l <= l1 && l <= minrest; l++) {
            int rmax = ring; /* darra: r below the first hole after h holding 4 + l */
            if (filter && !skip) {
                if (l >= 4)
                    break;
                bool lapbad = false;
                for (int j = 1; j < H; j++) {
                    int x = cc[h + j];
                    lapbad |= x >= 4 && x < 4 + l;
                    if (x == 4 + l && j < rmax)
                        rmax = j;
                }
                if (lapbad)
                    continue;
            }
            sow_position cur = base;
            for (int w = 0; w < nwd; w++)
                cur.board.w[w] -= (uint64_t)l * lanes[w];
            for (int r = 0; r < rmax; r++) {
                int i = h + r < H ? h + r : h + r - H;
                if (r > 0) {
                    if (cc[h + r] < l + 1)
                        break;
                    cur.board.h[i]--;
                }
                int s = l * ring + r;
                if (s == 0)
                    continue;
                if (s > SOW_MAX_SEEDS)
                    break;
                if (filter && skip) {
                    int last = r ? i : (h ? h - 1 : H - 1);
                    if (!(okl >> last & 1))
                        continue;
                }
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

#endif
