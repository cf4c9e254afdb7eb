/* Endgame tables: unmoves of the single-sowing rule sets (tables/tb_lean.h). */
#include <stdlib.h>

#include "unmove.h"

bool tb_unmove_supported(const struct ruleset *rs)
{
    return rs->family == SOW_OWARE || rs->family == SOW_AWARI || rs->family == SOW_DARRA;
}

uint64_t tb_lean_max_entries(const struct ruleset *rs)
{
    return tb_unmove_supported(rs) ? TB_LEAN_MAX_ENTRIES : TB_MAX_ENTRIES;
}

/* Candidates of q (filter: only the in-level predecessors) into out. */
static int unmoves(const struct ruleset *rs, const sow_position *q, struct tb_unmove *out, int max,
                   bool filter)
{
    if (!tb_unmove_supported(rs) || max <= 0)
        return 0;
    /* no allocation for up to TB_UNMOVE_MAX (every candidate), the closure
     * on disk calling this for every copy of a level (28 KB of stack) */
    sow_position sp[TB_UNMOVE_MAX];
    sow_move smv[TB_UNMOVE_MAX];
    const bool heap = max > TB_UNMOVE_MAX;
    sow_position *p = heap ? malloc((size_t)max * sizeof *p) : sp;
    sow_move *mv = heap ? malloc((size_t)max) : smv;
    if (!p || !mv) {
        if (heap) {
            free(p);
            free(mv);
        }
        return 0;
    }
    bool check;
    int k = unmove_preds_(q, rs->pits, unmove_skips_origin(rs), rs->family == SOW_DARRA,
                          rs->family == SOW_AWARI, filter, p, mv, max, &check),
        j = 0;
    struct sow_movelist ml;
    for (int i = 0; i < k; i++)
        if (!check || unmove_confirm(rs, &p[i], mv[i], q, &ml)) {
            out[j].pos = p[i];
            out[j++].move = mv[i];
        }
    if (heap) {
        free(p);
        free(mv);
    }
    return j;
}

int tb_unmove_candidates(const struct ruleset *rs, const sow_position *q, struct tb_unmove *out,
                         int max)
{
    return unmoves(rs, q, out, max, false);
}

int tb_unmoves(const struct ruleset *rs, const sow_position *q, struct tb_unmove *out, int max)
{
    return unmoves(rs, q, out, max, true);
}
