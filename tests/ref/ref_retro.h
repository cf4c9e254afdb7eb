/* The slow, obvious twin of the endgame-table builder.
 *
 * Every level of a rule set and board size, solved by the definition of
 * docs/rules.md taken literally: for every threshold t the least fixed point
 * of "the mover can force an exit worth >= t" (and of "the mover is forced to
 * <= -t") by repeated passes over plain arrays until nothing changes; lo, hi
 * from those sets, value = clamp(cycle settlement, lo, hi).  Its own position
 * list (sorted keys, binary search), its own normalisation, and the
 * seed-by-seed reference rules (ref_rules.c): it shares no code with
 * src/tables.  Thread-safety: reentrant; one object per caller.
 */
#ifndef SOW_REF_RETRO_H
#define SOW_REF_RETRO_H

#include "ref_rules.h"

struct ref_retro;

/* Solve levels 0..max_level for the family on 2 x pits holes (NULL if out
 * of memory). */
struct ref_retro *ref_retro_solve(enum sow_family fam, int pits, int max_level);
void ref_retro_free(struct ref_retro *r);

/* Positions of level n (normalised: side A to move, stores 0). */
int ref_retro_count(const struct ref_retro *r, int n);
/* Position i of level n with its value, lo and hi (mover's view). */
void ref_retro_get(const struct ref_retro *r, int n, int i, struct ref_pos *p, int *value,
                   int *lo, int *hi);
/* Value of any position (either side to move), or -1000 if not covered. */
int ref_retro_value(const struct ref_retro *r, const struct ref_pos *p);

#endif
