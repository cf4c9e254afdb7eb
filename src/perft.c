#include "perft.h"

uint64_t perft(const struct ruleset *rs, const sow_position *p, int depth,
               struct sow_relay_cache *cache)
{
    if (depth == 0)
        return 1;
    if (depth == 1)
        return (uint64_t)rs->count(rs, p, cache); /* bulk count at the leaves */
    struct sow_movelist ml;
    rs->generate(rs, p, &ml, cache, NULL);
    uint64_t n = 0;
    for (int i = 0; i < ml.n; i++)
        n += perft(rs, &ml.c[i].pos, depth - 1, cache);
    return n;
}
