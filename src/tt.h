/* sow — transposition table of the solver: proven bounds on lo(p) and hi(p).
 *
 * What is stored
 * --------------
 * The solver (search.h, docs/solver.md) asks threshold questions about two
 * numbers of a position p with n seeds on the board, both in [-n, n]:
 *   lo(p) = best exit value the mover can force (endless play counts as -n),
 *   hi(p) = same with endless play counting as +n;      lo(p) <= hi(p),
 * and V(p) = clamp(cyc(p), lo(p), hi(p)).  An entry keeps the bounds proven so
 * far: loL <= lo <= loU and hiL <= hi <= hiU.  Every bound written is a proven
 * fact about the position alone (never about the path that led to it), so
 * entries stay true for the life of the table, across solves and threads, for
 * one rule set and board size (tt_clear when those change).
 *
 * Key: XXH3-64 of the packed position: the board words in use, then one
 * 64-bit word holding side | state << 8.  Stores are not part of it (values
 * are future captures only).  Key 0 is mapped to 1 so that 0 means empty.
 *
 * Layout
 * ------
 * The table is an array of buckets of 4 entries (one 64-byte cache line);
 * bucket index = high 64 bits of key * nbuckets (any table size works).
 * An entry is two 64-bit words:  check = key ^ data,  data:
 *
 *   bits  0.. 8  loL + 256      bits 36..43  best move (sow_move, 0xFE none)
 *   bits  9..17  loU + 256      bits 44..49  work: log2(nodes spent) + 1
 *   bits 18..26  hiL + 256      bits 50..57  generation (age for replacement)
 *   bits 27..35  hiU + 256      bits 58..63  zero
 *
 * Example: key 0x9E3779B97F4A7C15, lo in [-2, 3], hi in [3, 3], move 4,
 * work 10, generation 1:
 *   data  = 254 | 259<<9 | 259<<18 | 259<<27 | 4<<36 | 10<<44 | 1<<50
 *         = 0x0004A0481C0E06FE (254 = 0x0FE, 259 = 0x103)
 *   check = key ^ data = 0x9E33D9F163447AEB
 * A reader recomputes check ^ data and uses the entry only if it equals its
 * key: all 64 key bits are verified (the index bits are implied).
 *
 * Replacement: a store for a key already in the bucket merges into it
 * (bounds intersected, the larger work kept).  Otherwise the victim is the
 * entry with the least  work - 2 * age  (age = generations since written;
 * empty entries first), so deep results of the current solve survive.
 *
 * Thread-safety and the races (lock-free, "xor" entries à la Hyatt):
 * tt_probe and tt_store may run in any number of threads at once on one
 * table.  Each word is read and written with relaxed 64-bit atomics, so a
 * word is never torn; two writers racing on one entry can leave check from
 * one and data from the other: then check ^ data is not the reader's key and
 * the entry reads as a miss (a different key matching by chance would need a
 * 64-bit coincidence).  A merge (read, combine, write) racing with another
 * merge can lose the other's bounds: information is lost, nothing false is
 * written, because both writers only wrote true bounds.  Hence the solver's
 * values cannot depend on timing or thread count; only node counts can.
 * tt_new, tt_clear, tt_free and tt_new_generation must not run concurrently
 * with anything else on the same table.
 */
#ifndef SOW_TT_H
#define SOW_TT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sow/rules.h"

#define TT_VALUE_BIAS 256
#define TT_BUCKET 4

struct tt_entry {
    uint64_t check; /* key ^ data */
    uint64_t data;
};

_Static_assert(sizeof(struct tt_entry) * TT_BUCKET == 64, "a bucket is one cache line");
_Static_assert(2 * SOW_MAX_SEEDS + 1 <= 511, "values with bias fit 9 bits");

/* Decoded entry. */
struct tt_info {
    int16_t loL, loU, hiL, hiU;
    sow_move move;
    int work;
};

struct tt;

/* A table of about `mb` MiB (at least one bucket), zeroed, allocated once.
 * NULL if out of memory. */
struct tt *tt_new(size_t mb);
void tt_free(struct tt *t);
void tt_clear(struct tt *t);
/* Start a new solve: entries written before age for replacement. */
void tt_new_generation(struct tt *t);
size_t tt_entries(const struct tt *t);

/* Key of a position (see Layout).  Pure, thread-safe. */
uint64_t tt_key(const struct ruleset *rs, const sow_position *p);

/* Bounds known for key; false if none.  On a miss *out is untouched. */
bool tt_probe(const struct tt *t, uint64_t key, struct tt_info *out);

/* Merge proven bounds for key: lo >= loL, lo <= loU, hi >= hiL, hi <= hiU
 * (pass -SOW_MAX_SEEDS / SOW_MAX_SEEDS for "nothing new"), with move (SOW_MOVE_NONE to keep the old
 * one) and the log2 work spent.  Implied bounds (lo <= hi) are added. */
void tt_store(struct tt *t, uint64_t key, int loL, int loU, int hiL, int hiU, sow_move move,
              int work);

/* Pack/unpack one data word (exposed for the tests). */
uint64_t tt_pack(const struct tt_info *in, unsigned gen);
void tt_unpack(uint64_t data, struct tt_info *out);

/* ---- engine entries (the alpha-beta engine, include/sow/engine.h) ----------
 *
 * The heuristic engine shares this table type (the same buckets, keys, xor
 * check and races) but writes its own data word, so a table serves either
 * the solver or the engine, never both at once (each owns its struct tt).
 *
 *   bits  0..15  score + 32768 (centi-seeds, mover's view; |score| <= 25500)
 *   bits 16..17  bound: 1 upper (score >= value), 2 lower (value >= score),
 *                3 exact; never 0, so a used data word is never zero
 *   bit  18      proven: the bound rests only on exact knowledge (terminal
 *                positions, endgame tables), no evaluation and no repetition:
 *                a fact about the position, usable at any depth
 *   bits 19..26  best move (sow_move, 0xFE none)
 *   bits 27..34  depth searched (plies, 0..255)
 *   bits 35..42  generation (age)
 *   bits 43..63  zero
 *
 * Example: score -150 (1.5 seeds down), lower bound, not proven, move 3,
 * depth 9, generation 2:
 *   data = (32768-150) | 2<<16 | 0<<18 | 3<<19 | 9<<27 | 2<<35
 *        = 0x00000010481A7F6A
 *
 * Replacement (two tiers in each bucket of 4): entries 0..2 are
 * depth-preferred, entry 3 always-replace.  A store for a key already in the
 * bucket overwrites it unless the old entry is deeper, of the current
 * generation and the new one is not exact (then the move alone is updated
 * if given).  A new key takes the depth-preferred entry with the least
 * depth - 8 * age if its depth is at least that, else entry 3.
 * Thread-safety: as for the solver's entries (lock-free, torn pairs miss). */
#define TTE_BOUND_UPPER 1
#define TTE_BOUND_LOWER 2
#define TTE_BOUND_EXACT 3
#define TTE_SCORE_MAX 32000

struct tte_info {
    int score;
    int bound;  /* TTE_BOUND_* */
    bool proven;
    sow_move move;
    int depth;
};

uint64_t tte_pack(const struct tte_info *in, unsigned gen);
void tte_unpack(uint64_t data, struct tte_info *out);
bool tte_probe(const struct tt *t, uint64_t key, struct tte_info *out);
void tte_store(struct tt *t, uint64_t key, int score, int bound, bool proven, sow_move move,
               int depth);
/* Per mille of a sample of 1000 entries written in the current generation
 * (UCI "hashfull"). */
int tte_hashfull(const struct tt *t);
/* Prefetch the bucket of key (a hint; any thread). */
void tte_prefetch(const struct tt *t, uint64_t key);

#endif
