/* Solution files as exact knowledge of the engine (engine_know.h). */
#include "engine_know.h"
#include "solver/solution.h"

bool know_probe(const struct sol *s, const sow_position *p, int *v)
{
    return sol_find(s, p, NULL, NULL, v);
}

bool know_root(const struct sol *s, const sow_position *p, const struct sow_movelist *ml,
               int *value, sow_move *best)
{
    int vals[SOW_MAX_PITS + 1];
    if (!sol_find(s, p, NULL, NULL, value))
        return false;
    int n = sol_move_values(s, p, vals);
    /* Every child of a position of a closure is in it; a file whose
     * children are missing is not this game's (e.g. other pits). */
    if (n != ml->n)
        return false;
    for (int k = 0; k < n; k++)
        if (vals[k] == *value) {
            *best = ml->c[k].move;
            return true;
        }
    return false;
}
