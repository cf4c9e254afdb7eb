/* Solution files: a solved closure kept on disk (docs/solutions.md "File
 * format"), memory-mapped to answer any position in it with every move's
 * value, without search.  Internal to src/solver (the CLI reaches it
 * through search.h's search_save / sow_solution_*).
 *
 * Layout (little-endian; header 128 bytes, then the payload):
 *
 *   off  size  field
 *     0     8  magic "SOWSOLN1"
 *     8     4  format version (1: 4-byte set cells; 2: 8-byte cells, for
 *              N >= 2^32 - 3)
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
 *     padding           zero bytes to the set's alignment (its cell size)
 *     set               S x u32      (version 1: node index, 0xFFFFFFFF free)
 *                       S x u64      (version 2: node index, all ones free)
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
#include <stddef.h>
#include <stdint.h>

#include "closure.h"
#include "sow/rules.h"
#include "sow/status.h"

struct sol;

/* Write closure c (solved from root) to path (through a temporary file,
 * renamed when complete).  A closure on disk has its file's set built here,
 * at most win cells (8 bytes each while built) held at a time; 0: the whole
 * set.  cw: the set's cell bytes, 4 (version 1) or 8 (version 2); 0: 4
 * when the node indices fit, else 8 (tests force 8 on small closures). */
enum sow_status sol_save(const struct ruleset *rs, const struct clos *c, const sow_position *root,
                         const char *path, uint64_t win, int cw, struct sow_error *e);

/* (solution_set.c) Home cells of nodes 0, 1, .. in order: next fills up to
 * max of them (0: no more), rewind starts again at node 0. */
struct sol_homes {
    size_t (*next)(void *ctx, uint64_t *home, size_t max);
    void (*rewind)(void *ctx);
    void *ctx;
};

/* The set of S cells (linear probing, wrapping) of src's nodes, in order
 * to put(ctx, cells, bytes) as cw-byte cells (4 or 8; all ones free),
 * built win cells at a time (0 or >= S: whole); the same cells whatever
 * win.  Nodes: at most 3/5 of S, and with cw 4 fewer than 2^32 - 1.
 * SOW_E_NOMEM if a window cannot be had (path names the file). */
enum sow_status sol_set_build(const struct sol_homes *src, uint64_t S, uint64_t win, int cw,
                              void (*put)(void *ctx, const void *p, size_t n), void *ctx,
                              const char *path, struct sow_error *e);

/* The set of S cells of closure c on disk (K words a
 * key), in order, to put(ctx, cells, bytes), built win cells at a time
 * (0 or >= S: whole); exactly the cells of inserting its nodes in order
 * into the whole set.  SOW_E_NOMEM if a window cannot be had. */
enum sow_status sol_disk_set(const struct clos *c, int K, uint64_t S, uint64_t win, int cw,
                             void (*put)(void *ctx, const void *p, size_t n), void *ctx,
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
