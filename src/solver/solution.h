/* Solution files: a solved closure kept on disk (docs/solutions.md "File
 * format"), memory-mapped to answer any position in it with every move's
 * value, without search.  Internal to src/solver (the CLI reaches it
 * through search.h's search_save / sow_solution_*).
 *
 * Layout (little-endian; header 128 bytes, then the payload):
 *
 *   off  size  field
 *     0     8  magic "SOWSOLN1"
 *     8     4  format version (1)
 *    12     4  header size (128)
 *    16    24  rule set name, NUL-padded
 *    40     4  pits per side
 *    44     4  K: 64-bit words per key (closure.h key layout)
 *    48     8  N: positions
 *    56     8  S: set cells (S > N)
 *    64     4  root level (seeds on the root's board)
 *    68     4  hash scheme (1: closure_keys.c's clos_hash, slot = hash * S >> 64,
 *              linear probing)
 *    72     8  XXH3-64 of the payload
 *    80     8  payload bytes
 *    88    32  reserved (0)
 *   120     8  XXH3-64 of header bytes 0..119
 *   payload:
 *     root key          K x u64
 *     keys              N x K x u64  (node i's key; nodes by level)
 *     lo, hi, v         N x i8 each  (mover's view)
 *     padding           0..3 zero bytes (the set starts 4-aligned)
 *     set               S x u32      (node index, 0xFFFFFFFF free)
 *
 * Example: the oware 2x1 start 1/1/A has a closure of 2 positions
 * normalised to the mover (1/1 and 0/2, A to move): N = 2, K = 1, a file of
 * 128 + 8 + 16 + 6 + 2 + 4 S bytes.
 *
 * Thread-safety: sol_save reads the closure only; an opened struct sol is
 * read-only and may be probed from many threads.
 */
#ifndef SOW_SOLVER_SOLUTION_H
#define SOW_SOLVER_SOLUTION_H

#include <stdbool.h>
#include <stdint.h>

#include "closure.h"
#include "sow/rules.h"
#include "sow/status.h"

struct sol;

/* Write closure c (solved from root) to path (through a temporary file,
 * renamed when complete). */
enum sow_status sol_save(const struct ruleset *rs, const struct clos *c, const sow_position *root,
                         const char *path, struct sow_error *e);

/* Open and verify path (checksums, header, ranges) for rule set rs. */
enum sow_status sol_open(const struct ruleset *rs, const char *path, struct sol **out,
                         struct sow_error *e);
void sol_close(struct sol *s);

/* lo, hi and V of p (mover's view); false if p is not in the solution. */
bool sol_find(const struct sol *s, const sow_position *p, int *lo, int *hi, int *v);

/* Every legal move's value of p (rules_generate order); the number of
 * moves, or -1 if p or a child is not in the solution. */
int sol_move_values(const struct sol *s, const sow_position *p, int *vals);

/* Positions in the solution, node i's position (normalised: side A), and
 * the root (as solved, normalised). */
uint64_t sol_size(const struct sol *s);
void sol_position(const struct sol *s, uint64_t i, sow_position *p);
void sol_root(const struct sol *s, sow_position *p);

#endif
