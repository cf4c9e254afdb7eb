/* sow — the lean retrograde builder: predecessors by un-sowing (single
 * sowing) or from in-level edges kept on disk (relay rule sets), none in
 * memory.  docs/tables.md "Lean builder" explains the algorithm.
 *
 * Unmoves (oware, awari, darra: single sowing)
 * ---------------------------------------------
 * An in-level move is one that captures nothing: the board keeps its seeds,
 * the side changes, darra's last-capturer state stays.  Its predecessors are
 * found by taking a sowing back: for an origin hole h of the previous mover
 * and s seeds sown from it, a sowing adds to every hole
 *
 *     skip origin (oware, awari), ring = 2N-1:  l = s / ring laps, r = s % ring
 *         adds[h] = 0,  adds[h+j] = l + (j <= r)       (j = 1..2N-1, mod 2N)
 *     no skip (darra), ring = 2N:  l = s / 2N, r = s % 2N
 *         adds[h] = l,  adds[h+j] = l + (j <= r)
 *
 * so the candidate predecessor is p = c - adds with p[h] = s, provided
 * c[h] = adds[h] and c[i] >= adds[i] everywhere (c = the child's board).
 * Darra also has the pass (the mover's row empty): p = c, side changed.
 * The candidate is kept iff p's move h is legal and captures nothing
 * (feeding, awari's starving rule, oware's grand slam, captures of four
 * during the sowing): the definition is that rules' generate() of p lists
 * move h with no capture and exactly c (board and state) as its child.
 * tb_unmoves decides it from c without generating (the last hole of the
 * sowing, the counts in c: src/tables/unmove.h, unmove_preds_) except for
 * awari's starving moves, which it hands to generate(); the tests hold it to
 * the definition candidate by candidate.  Each (p, move) pair is found once,
 * so predecessors come with the multiplicity of the edges (the builder's
 * counters count moves).
 *
 * Worked example (oware 2x2, lanes 0..3 = A1 A2 B1 B2, ring 3): child
 * c = 1,1,0,2 with A to move, so B moved.  Origin B2 (lane 3): c[3] = 2 is
 * not 0, nothing.  Origin B1 (lane 2), c[2] = 0: l = 0, r = 1 (lane 3) gives
 * s = 1, p = 1,1,1,1; r = 2 (lanes 3, 0) gives s = 2, p = 0,1,2,1; r = 3 is
 * a lap.  l = 1 (every other lane >= 1): r = 0, s = 3, p = 0,0,3,1; r = 1
 * (lane 3 >= 2), s = 4, p = 0,0,4,0; r = 2 needs lane 0 >= 2, stop.  All
 * four capture nothing, so 1,1,0,2/A has four in-level predecessors.
 *
 * Thread-safety: every function here is reentrant (no shared state).
 */
#ifndef SOW_TB_LEAN_H
#define SOW_TB_LEAN_H

#include <stdbool.h>
#include <stdint.h>

#include "sow/rules.h"
#include "tables/tables.h"

struct tbz_write_opts; /* tables/compress.h */

/* True for the rule sets whose unmoves sow sets up (single sowing). */
bool tb_unmove_supported(const struct ruleset *rs);

/* The most entries a level the lean builder builds in one process may have:
 * with unmoves its work lists hold 64-bit indices (levels past 28 on 2x6);
 * the relay rule sets' predecessor lists on disk hold 32-bit ones, so they
 * stop where the fast builder does (TB_MAX_ENTRIES). */
#define TB_LEAN_MAX_ENTRIES ((uint64_t)1 << 40)
uint64_t tb_lean_max_entries(const struct ruleset *rs);

/* Most unmoves one position can have: per origin at most one candidate per
 * sowing length s <= the level's seeds, plus the pass. */
#define TB_UNMOVE_MAX (SOW_MAX_PITS * (SOW_MAX_SEEDS + 1) + 1)

struct tb_unmove {
    sow_position pos; /* the predecessor (stores 0, side = the child's opponent) */
    sow_move move;    /* its move that leads to the child */
};

/* Every in-level predecessor of q (q's stores are ignored): positions p with
 * a legal move that captures nothing and whose child has q's board, side and
 * state.  Fills out[0..k) and returns k (<= max; candidates beyond max are
 * dropped, so pass TB_UNMOVE_MAX to get them all).  Only for
 * tb_unmove_supported rule sets (0 otherwise). */
int tb_unmoves(const struct ruleset *rs, const sow_position *q, struct tb_unmove *out, int max);

/* The candidates alone, before the forward check (for the tests: every
 * confirmed unmove is one of them). */
int tb_unmove_candidates(const struct ruleset *rs, const sow_position *q, struct tb_unmove *out,
                         int max);

/* ---- the lean builder ------------------------------------------------------ */

/* Bytes the lean builder needs for a level of E entries at its peak (the
 * level's arrays and the threads' work lists; lower levels not counted), for
 * the single-sowing rule sets (the relay ones: lean.c's lean_memory). */
double tb_lean_level_memory(uint64_t E, int threads);

/* Solve level n with the lean builder into out[entries] (lower levels from
 * `lower`, which must hold 0..n-1).  Same values as tb_solve_level.  SOW_OK,
 * SOW_E_INTERRUPTED, SOW_E_TOO_BIG, SOW_E_NOMEM or (relay rule sets: the
 * edges go to temporary files in $TMPDIR or /tmp) SOW_E_IO, with a reason
 * in *e.  *peak_bytes (if not NULL) gets the bytes the level's arrays, work
 * lists and edge buffers reached. */
enum sow_status tb_lean_solve_level(const struct ruleset *rs, const struct tb_set *lower, int n,
                                    int8_t *out, const struct tb_build_opts *opt,
                                    double *peak_bytes, struct sow_error *e);

/* ---- compressed files (format version 2, docs/tables.md) ---------------- */

/* Rewrite level `level` of rs in dir compressed in independent zstd blocks
 * (temp file and rename; the new file is checked after; wo as tbz_write's).  *raw and *stored
 * get the raw and compressed sizes.  A file already compressed is checked
 * and left as it is, *already (if not NULL) set to say so.  SOW_OK,
 * SOW_E_INPUT (damaged), SOW_E_IO or SOW_E_NOMEM. */
enum sow_status tb_compress_level(const struct ruleset *rs, const char *dir, int level,
                                  const struct tbz_write_opts *wo, uint64_t *raw,
                                  uint64_t *stored, bool *already, struct sow_error *e);

/* tb_open, but compressed levels are decompressed into memory (1 byte per
 * position): for what reads whole levels (verify, the builders). */
enum sow_status tb_open_values(const struct ruleset *rs, const char *dir, struct tb_set **out,
                               struct sow_error *e);

#endif
