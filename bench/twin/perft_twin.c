/* Obvious oware perft (the rules of docs/rules.md, written the plain way). */
#include <string.h>

#include "perft_twin.h"

static int side_sum(const struct twin_pos *p, int side)
{
    int s = 0;
    for (int k = 0; k < p->pits; k++)
        s += p->hole[side * p->pits + k];
    return s;
}

/* Legal children of p into out[]; returns how many. */
static int twin_children(const struct twin_pos *p, struct twin_pos *out)
{
    int P = p->pits, H = 2 * P, side = p->side, opp = !side, n = 0;
    if (side_sum(p, side) == 0)
        return 0;
    int opp_before = side_sum(p, opp);
    for (int k = 0; k < P; k++) {
        int origin = side * P + k;
        if (!p->hole[origin])
            continue;
        struct twin_pos c = *p;
        int seeds = c.hole[origin], i = origin;
        c.hole[origin] = 0;
        while (seeds) {
            i = (i + 1) % H;
            if (i == origin)
                continue;
            c.hole[i]++;
            seeds--;
        }
        int opp_after = side_sum(&c, opp);
        if (opp_before == 0 && opp_after == 0)
            continue;
        int cap = 0, j = i;
        while (j / P == opp && (c.hole[j] == 2 || c.hole[j] == 3)) {
            cap += c.hole[j];
            if (j == opp * P)
                break;
            j--;
        }
        if (cap && cap < opp_after) {
            j = i;
            while (j / P == opp && (c.hole[j] == 2 || c.hole[j] == 3)) {
                c.hole[j] = 0;
                if (j == opp * P)
                    break;
                j--;
            }
        }
        c.side = opp;
        out[n++] = c;
    }
    return n;
}

uint64_t twin_perft(const struct twin_pos *p, int depth)
{
    if (depth == 0)
        return 1;
    struct twin_pos kids[18];
    int n = twin_children(p, kids);
    if (depth == 1)
        return (uint64_t)n;
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += twin_perft(&kids[i], depth - 1);
    return total;
}
