/* Endgame tables: the combinatorial index (see tables/tables.h for the scheme). */
#include <string.h>

#include "sow/tables_probe.h"

void tb_index_init(struct tb_index *ix, const struct ruleset *rs)
{
    memset(ix, 0, sizeof *ix);
    ix->pits = rs->pits;
    ix->holes = rs->holes;
    ix->states = rs->index_states;
    ix->rel_state = rs->rel_state;
    ix->state_of_rel = rs->state_of_rel;
    /* Pascal's triangle, saturating: C(m, k) for m <= TB_MAX_LEVEL + H. */
    enum { M = TB_MAX_LEVEL + SOW_MAX_HOLES + 1 };
    static const uint64_t SAT = UINT64_MAX;
    uint64_t c[M][SOW_MAX_HOLES + 1];
    for (int m = 0; m < M; m++)
        for (int k = 0; k <= SOW_MAX_HOLES; k++) {
            if (k == 0)
                c[m][k] = 1;
            else if (m == 0)
                c[m][k] = 0;
            else {
                uint64_t a = c[m - 1][k - 1], b = c[m - 1][k];
                c[m][k] = (a == SAT || b == SAT || a > SAT - b) ? SAT : a + b;
            }
        }
    for (int i = 0; i < ix->holes; i++)
        for (int s = 0; s <= TB_MAX_LEVEL; s++)
            ix->t[i][s] = c[s + i][i + 1];
}

uint64_t tb_level_boards(const struct tb_index *ix, int n)
{
    /* C(n + H - 1, H - 1) by C(n+i, i) = C(n+i-1, i-1) * (n+i) / i, exact in 128 bits. */
    if (n < 0 || n > TB_MAX_LEVEL)
        return 0;
    if (ix->holes == 1)
        return 1;
    unsigned __int128 v = 1;
    int k = ix->holes - 1;
    for (int i = 1; i <= k; i++) {
        v = v * (unsigned)(n + i) / (unsigned)i; /* C(n+i, i), exact at each step */
        if (v > UINT64_MAX)
            return UINT64_MAX;
    }
    return (uint64_t)v;
}

uint64_t tb_level_entries(const struct tb_index *ix, int n)
{
    uint64_t b = tb_level_boards(ix, n);
    if (b > UINT64_MAX / (uint64_t)ix->states)
        return UINT64_MAX;
    return b * (uint64_t)ix->states;
}

void tb_unrank(const struct tb_index *ix, int n, uint64_t r, uint8_t *h)
{
    int H = ix->holes, hi = n;
    int s[SOW_MAX_HOLES];
    for (int i = H - 2; i >= 0; i--) {
        /* Largest s <= hi with t[i][s] <= r (t is increasing in s, t[i][0]
         * = 0), scanned down from hi: the steps are the seeds of hole i + 1,
         * n in all and one mispredicted branch a bar, where a binary search
         * mispredicts about half of its log2(hi) branches. */
        int lo = hi;
        while (ix->t[i][lo] > r)
            lo--;
        s[i] = lo;
        r -= ix->t[i][lo];
        hi = lo;
    }
    int prev = 0;
    for (int i = 0; i < H - 1; i++) {
        h[i] = (uint8_t)(s[i] - prev);
        prev = s[i];
    }
    h[H - 1] = (uint8_t)(n - prev);
}

int tb_rel_state(const struct tb_index *ix, const sow_position *p)
{
    return ix->rel_state(p);
}

bool tb_index_of(const struct tb_index *ix, const sow_position *p, int *level, uint64_t *idx)
{
    int st = tb_rel_state(ix, p);
    if (st < 0)
        return false;
    int n = 0;
    for (int i = 0; i < ix->holes; i++)
        n += p->board.h[i];
    *level = n;
    if (n > TB_MAX_LEVEL)
        return false;
    *idx = (uint64_t)st * tb_level_boards(ix, n) + tb_rank_side(ix, p->board.h, p->side);
    return true;
}

void tb_position_of(const struct tb_index *ix, int n, uint64_t idx, sow_position *p)
{
    memset(p, 0, sizeof *p);
    uint64_t boards = tb_level_boards(ix, n);
    int st = (int)(idx / boards);
    tb_unrank(ix, n, idx % boards, p->board.h);
    p->side = SOW_A;
    p->state = ix->state_of_rel(st, SOW_A);
}
