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

/* Play one move alone: true if its sowing never ends.  pickups: holes lifted
 * (the origin is the first); for an endless one, cycle_first = pick-ups done
 * before the state that repeats was first seen (0 = the move's own starting
 * state) and cycle_len = pick-ups in one turn of the cycle (else both -1). */
bool ref_move_endless(enum sow_family fam, const struct ref_pos *p, int move, long *pickups,
                      long *cycle_first, long *cycle_len);

/* ref_generate, but giving up (returning false, `out` cleared) as soon as one
 * move lifts more than `limit` holes, endless or not.  Not a rule: the
 * randomized tests use it to leave out the rare positions whose relays run
 * for millions of pick-ups (seconds in either implementation). */
bool ref_generate_bounded(enum sow_family fam, const struct ref_pos *p, struct ref_list *out,
                          long limit);

/* Move sequences of length depth (perft.h semantics, repetition ignored). */
uint64_t ref_perft(enum sow_family fam, const struct ref_pos *p, int depth);

/* Repetition settlement as net seeds for the mover (awari 0, else own side
 * minus the other), and the seeds on the board. */
int ref_cycle_value(enum sow_family fam, const struct ref_pos *p);
int ref_board_seeds(const struct ref_pos *p);

/* Conversions to and from the engine's packed position. */
void ref_from_sow(const struct ruleset *rs, const sow_position *p, struct ref_pos *out);
void ref_to_sow(const struct ref_pos *p, sow_position *out);

#endif
