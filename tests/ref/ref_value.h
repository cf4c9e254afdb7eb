/* The obvious twin of the solver: values by the definition, level by level.
 *
 * docs/rules.md "Value of a position", computed as literally as possible and
 * sharing no code with src/solver (moves come from the seed-by-seed reference
 * rules, ref_rules.h): for a position, collect every position its level can
 * reach by moves that keep the seed count; give every exit its value (lower
 * levels first, recursively, memoised); then for every threshold t compute the
 * least fixed points W_t and L_-t by plain repeated sweeps until nothing
 * changes; lo = max{t : W_t}, hi = min{u : L_u} clamped to [-n, n], and
 * V = clamp(cyc, lo, hi).  Slow (levels of a few thousand positions at most).
 *
 * Thread-safety: a context is used by one thread at a time.
 */
#ifndef SOW_REF_VALUE_H
#define SOW_REF_VALUE_H

#include "ref_rules.h"
#include "sow/rules.h"

struct ref_value_ctx;

struct ref_value_ctx *ref_value_new(const struct ruleset *rs);
void ref_value_free(struct ref_value_ctx *c);

/* V(p), and lo(p), hi(p) (mover's view, stores ignored). */
int ref_value(struct ref_value_ctx *c, const sow_position *p, int *lo, int *hi);

/* Value of legal move number i of p (in generation order): exits d - V(child),
 * moves staying in the level clamp(cyc(p), -hi(child), -lo(child)).  Returns
 * the number of moves (0 if p is over). */
int ref_move_values(struct ref_value_ctx *c, const sow_position *p, int *vals);

/* Positions solved so far (memo size), for the tests' statistics. */
long ref_value_known(const struct ref_value_ctx *c);

#endif
