/* The seed-by-seed reference of every rule set.
 *
 * Deliberately obvious: plain int arrays, copy-make, one seed dropped at a
 * time, never-ending relays found by remembering every state seen.  It shares
 * no code with src/rules; the randomized differential tests and the benches
 * hold the fast engine to it.
 *
 * Moves are encoded as in sow/rules.h (0..N-1, SOW_MOVE_PASS, SOW_MOVE_DOUBLE|k)
 * and listed in the same order (ascending hole); endings use enum sow_end.
 * Thread-safety: reentrant.
 */
#ifndef SOW_REF_RULES_H
#define SOW_REF_RULES_H

#include "sow/rules.h"

struct ref_pos {
    int pits;              /* holes per side */
    int hole[SOW_MAX_HOLES]; /* same indexing as the board: A1..AN, B1..BN */
    int store[2];
    int side;              /* 0 = A, 1 = B */
    int state;             /* enum sow_state */
};

struct ref_child {
    int move;
    int captured[2];
    struct ref_pos pos;
};

struct ref_list {
    int n;                 /* legal moves; 0 iff the game is over */
    int end;               /* enum sow_end when over */
    int settle[2];         /* seeds the board gives A and B when over */
    int endless;           /* moves left out because they never end */
    struct ref_child c[SOW_MAX_PITS + 1];
};

void ref_generate(enum sow_family fam, const struct ref_pos *p, struct ref_list *out);

/* Conversions to and from the engine's packed position. */
void ref_from_sow(const struct ruleset *rs, const sow_position *p, struct ref_pos *out);
void ref_to_sow(const struct ref_pos *p, sow_position *out);

#endif
