/* The engine's exact knowledge from solution files (solution.h): a solved
 * closure answers every position in it exactly, like an endgame table
 * (docs/engine.md "Solution files").  Private to src/engine.
 *
 * Which answers are exact (docs/rules.md "Value of a position"): V(p) is
 * the value of p entered afresh, i.e. by an exit (a move that changes the
 * seed count), when no earlier position of the game can repeat; a move
 * that stays in the level is worth clamp(cyc(parent), -hi(q), -lo(q)),
 * which sol_move_values gives.  So a position entered by an exit, and a
 * root with no earlier position of its level in the game, are answered
 * exactly; a position entered by a move inside its level gets V only as an
 * estimate (the path may matter).
 *
 * Thread-safety: all functions read the mapped file only; any thread.
 */
#ifndef SOW_ENGINE_KNOW_H
#define SOW_ENGINE_KNOW_H

#include <stdbool.h>

#include "sow/rules.h"

struct sol;

/* V(p) (mover's view) into *v if p is in the solution. */
bool know_probe(const struct sol *s, const sow_position *p, int *v);

/* A fresh root p in the solution: its value and the first move (ml order,
 * ml = p's moves, rules_generate) worth it.  False if p is not in the
 * solution. */
bool know_root(const struct sol *s, const sow_position *p, const struct sow_movelist *ml,
               int *value, sow_move *best);

#endif
