/* sow — endgame tables: index, retrograde builder, files and the probe the
 * solver uses.  docs/tables.md explains the algorithm and the file format.
 *
 * A table set covers, for one rule set and board size, every level (seed count
 * on the board) 0..max_level that is present on disk.  Values are those of
 * docs/rules.md "Value of a position": net future captures for the player to
 * move under perfect play, endless cycles settled by the repetition rule.
 *
 * Index (scheme 1)
 * ----------------
 * A position is first normalised to its mover: the board is rotated so that
 * the mover's row comes first (h[0..N-1] = mover's holes 1..N, h[N..2N-1] =
 * opponent's holes 1..N), the side is then implicit, stores are ignored, and
 * darra's last-capturer state becomes relative: 0 = nobody, 1 = the mover,
 * 2 = the opponent.  Jerin positions in state `open` are not indexed.
 *
 * The H = 2N counts (h[0], ..., h[H-1]) with sum n are ranked by stars and
 * bars: prefix sums s_i = h[0] + ... + h[i] give the strictly increasing
 * "bars" b_i = s_i + i (i = 0..H-2) in [0, n+H-2], ranked in colex order:
 *
 *       rank = sum_{i=0}^{H-2} C(s_i + i, i + 1)          in [0, C(n+H-1, H-1))
 *
 *       index = state * C(n+H-1, H-1) + rank        (states = 3 for darra, else 1)
 *
 * Worked example, 2x2 board (H = 4), n = 3, h = (1,0,2,0):
 *   s = (1,1,3); rank = C(1,1) + C(2,2) + C(5,3) = 1 + 1 + 10 = 12 of C(6,3) = 20.
 * Rank 0 is all seeds in h[H-1]; the last rank is all seeds in h[0].
 * Successor in this order (tb_index_next): take the first j >= 1 with h[j] > 0,
 * then h[j] -= 1, h[j-1] = h[0] + 1 and (if j > 1) h[0] = 0.
 *
 * Thread-safety: a built `struct tb_index` and a loaded `struct tb_set` are
 * read-only; tb_rank/tb_unrank/tb_index_of/tb_position_of/tb_probe may be
 * called from any number of threads at once; tb_open/tb_close are not
 * concurrent with probes.  tb_build/tb_solve_level use OpenMP internally and
 * must not be called concurrently on the same directory.
 */
#ifndef SOW_TABLES_H
#define SOW_TABLES_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sow/rules.h"

/* Highest level a table can hold: values are int8 and |V| <= n. */
#define TB_MAX_LEVEL 127
/* Entries of one level must fit 31-bit indices (solve updates keep a kind bit). */
#define TB_MAX_ENTRIES 0x7FFFFFFFULL
/* Value encoding 1: int8 two's complement, -n..n. */
#define TB_FORMAT_VERSION 1
#define TB_INDEX_SCHEME 1
#define TB_VALUE_INT8 1
#define TB_HEADER_SIZE 128

/* tb_build's results besides 0 and -1. */
#define TB_INTERRUPTED 1

/* ---- index ------------------------------------------------------------- */

/* Binomial terms of the rank for one board size: t[i][s] = C(s + i, i + 1),
 * saturated at UINT64_MAX.  Immutable after tb_index_init. */
struct tb_index {
    int pits, holes;   /* N and H = 2N */
    int states;        /* 3 for darra (relative last capturer), else 1 */
    bool jerin;        /* state `open` is not indexed */
    uint64_t t[SOW_MAX_HOLES][TB_MAX_LEVEL + 1];
};

void tb_index_init(struct tb_index *ix, const struct ruleset *rs);

/* Boards of one level (per state) and entries of one level, saturated. */
uint64_t tb_level_boards(const struct tb_index *ix, int n);
uint64_t tb_level_entries(const struct tb_index *ix, int n);

/* Rank of the normalised counts h[0..H-1] (sum n <= TB_MAX_LEVEL). */
static inline uint64_t tb_rank(const struct tb_index *ix, const uint8_t *h)
{
    uint64_t r = 0;
    int s = 0;
    for (int i = 0; i < ix->holes - 1; i++) {
        s += h[i];
        r += ix->t[i][s];
    }
    return r;
}

/* Rank of an absolute board as seen by `side` (side 1: rotated by N). */
static inline uint64_t tb_rank_side(const struct tb_index *ix, const uint8_t *abs, int side)
{
    if (!side)
        return tb_rank(ix, abs);
    uint64_t r = 0;
    int s = 0, N = ix->pits, i = 0;
    for (int k = N; k < 2 * N; k++, i++) {
        s += abs[k];
        r += ix->t[i][s];
    }
    for (int k = 0; k < N - 1; k++, i++) {
        s += abs[k];
        r += ix->t[i][s];
    }
    return r;
}

/* Counts h[0..H-1] of rank r at level n (r < tb_level_boards). */
void tb_unrank(const struct tb_index *ix, int n, uint64_t r, uint8_t *h);

/* Step h to the next rank of its level; false if it was the last. */
static inline bool tb_index_next(const struct tb_index *ix, uint8_t *h)
{
    int j = 1;
    while (j < ix->holes && !h[j])
        j++;
    if (j >= ix->holes)
        return false;
    int h0 = h[0];
    h[j]--;
    if (j > 1)
        h[0] = 0;
    h[j - 1] = (uint8_t)(h0 + 1);
    return true;
}

/* Relative state of p for its mover (0 none, 1 mover, 2 opponent) or -1 if
 * not indexed (jerin `open`). */
int tb_rel_state(const struct tb_index *ix, const sow_position *p);

/* Level (seeds on the board) and index of p; false if not indexed or the
 * level is above TB_MAX_LEVEL. */
bool tb_index_of(const struct tb_index *ix, const sow_position *p, int *level, uint64_t *idx);

/* The normalised position (side A to move, stores 0) of entry idx of level n. */
void tb_position_of(const struct tb_index *ix, int n, uint64_t idx, sow_position *p);

/* ---- loaded table sets -------------------------------------------------- */

struct tb_set;

/* Load every level present in dir for this rule set and size (missing or
 * empty dir: an empty set).  Returns NULL with a one-line reason on a damaged
 * or foreign file. */
struct tb_set *tb_open(const struct ruleset *rs, const char *dir, char *err, int errlen);
void tb_close(struct tb_set *set);

/* Highest seed count n such that levels 0..n are all loaded, or -1. */
int tb_max_level(const struct tb_set *set);

/* Value of p if its level is loaded (and the position is one the tables
 * index, e.g. not jerin's opening): true and *value set; else false. */
bool tb_probe(const struct tb_set *set, const sow_position *p, int *value);

/* The values of level n (entries in index order), or NULL if not loaded. */
const int8_t *tb_level_values(const struct tb_set *set, int n, uint64_t *entries);
const struct tb_index *tb_set_index(const struct tb_set *set);

/* ---- files -------------------------------------------------------------- */

/* The header of a level file (docs/tables.md, 128 bytes little-endian). */
struct tb_header {
    char rules[24];        /* canonical rule-set name */
    uint32_t version, index_scheme, value_encoding;
    uint32_t pits, level, states;
    uint64_t entries;
    uint64_t checksum;     /* XXH3-64 of the payload */
};

/* "DIR/RULES-2xN-LLL.sowtb" into buf. */
void tb_file_name(const char *dir, const char *rules, int pits, int level, char *buf, size_t len);

/* Read and check a level file completely (header fields, size, payload
 * checksum, and, if rs != NULL, that it belongs to rs at `level`).  On success
 * fills *h and, if values != NULL, maps the payload read-only into *values
 * (release with tb_file_unmap).  -1 with a one-line reason otherwise. */
int tb_file_load(const char *path, const struct ruleset *rs, int level, struct tb_header *h,
                 const int8_t **values, void **map, size_t *maplen, char *err, int errlen);
void tb_file_unmap(void *map, size_t maplen);

/* Write a level: temp file, fsync, rename, fsync of the directory. */
int tb_file_write(const char *dir, const struct ruleset *rs, int level, const int8_t *values,
                  uint64_t entries, char *err, int errlen);

/* Default table directory: $SOW_TABLES, else "tables". */
const char *tb_default_dir(void);

/* ---- building ----------------------------------------------------------- */

struct tb_build_opts {
    int threads;              /* <= 0: OpenMP default */
    double memory_bytes;      /* refuse levels needing more; <= 0: 3/4 of RAM */
    volatile sig_atomic_t *stop; /* set asynchronously to interrupt; may be NULL */
    /* Called from the building thread (never concurrently) with the level,
     * the fraction of it done (0..1) and the phase name; may be NULL. */
    void (*progress)(void *ctx, int level, uint64_t entries, double frac, const char *phase);
    /* Called after each level is complete on disk (seconds spent on it). */
    void (*level_done)(void *ctx, int level, uint64_t entries, double seconds, bool built);
    void *ctx;
    /* If not NULL, the moves the build generated (every child position made
     * and looked up) are added to *moves: the solver's node count. */
    uint64_t *moves;
    /* ---- lean builder (issue 13; sow/tb_lean.h) ---- */
    int builder;              /* enum tb_builder: which builder tb_build uses */
    /* Called (if not NULL) before level_done of each level built: the
     * builder used and the bytes its arrays and lists reached for the level
     * (lower levels not counted). */
    void (*level_info)(void *ctx, int level, uint64_t entries, const char *builder,
                       double peak_bytes);
};

/* TB_BUILDER_AUTO: today's builder (build.c) when every missing level fits
 * the memory budget with it, else the lean one (lean.c) for the rule sets it
 * handles (oware, awari, darra); the relay rule sets always use today's. */
enum tb_builder { TB_BUILDER_AUTO = 0, TB_BUILDER_FAST, TB_BUILDER_LEAN };

/* Bytes one level needs while it is built (upper bound, lower levels not counted). */
double tb_level_memory(const struct tb_index *ix, int level);

/* Build every missing level 0..max_level of rs into dir (created if needed).
 * Returns 0, TB_INTERRUPTED (only complete levels left on disk) or -1 with a
 * one-line reason (too much memory, I/O error, damaged existing file). */
int tb_build(const struct ruleset *rs, const char *dir, int max_level,
             const struct tb_build_opts *opt, char *err, int errlen);

/* Solve level n in memory into out[entries], probing lower levels in `lower`
 * (which must hold 0..n-1).  Returns 0, TB_INTERRUPTED or -1 (out of memory).
 * Optional lohi[2*entries] receives the forced bounds (lo, hi) per entry. */
int tb_solve_level(const struct ruleset *rs, const struct tb_set *lower, int n, int8_t *out,
                   int8_t *lohi, const struct tb_build_opts *opt, char *err, int errlen);

/* Re-check level n of a loaded set: recompute it from levels < n and compare,
 * plus local checks (|V| <= n, V >= every exit, V equals the best exit where no
 * move stays in the level).  Returns the number of bad entries (0 = ok), or -1
 * with a reason; the first bad entry is described in err. */
int64_t tb_verify_level(const struct tb_set *set, int n, const struct tb_build_opts *opt,
                        char *err, int errlen);

/* An empty set for rs in dir, to which levels are added as they are built. */
struct tb_set *tb_set_new(const struct ruleset *rs, const char *dir);
/* Load level n from dir into the set (replacing nothing).  0 or -1 + reason. */
int tb_set_load_level(struct tb_set *set, int n, char *err, int errlen);

/* In-memory levels (the exact solver builds the small levels it needs on the
 * fly, docs/solver.md).  tb_set_borrow makes levels 0..tb_max_level(src) of
 * dst point at src's values (src must outlive dst; same rule set and size).
 * tb_set_build_level solves level n (levels 0..n-1 must be present) with
 * tb_solve_level and keeps, owned by the set and freed by tb_close, its
 * values and its forced bounds (lo, hi): 0, TB_INTERRUPTED or -1 + reason.
 * Neither may run concurrently with probes of dst. */
void tb_set_borrow(struct tb_set *dst, const struct tb_set *src);
int tb_set_build_level(struct tb_set *set, int n, const struct tb_build_opts *opt, char *err,
                       int errlen);
/* tb_set_build_level keeps the builder's workspace (about 33 bytes per
 * position of the largest level built) for the next level; this frees it. */
void tb_set_release_work(struct tb_set *set);

/* p's value and forced bounds lo <= V <= hi (docs/rules.md), if p's level was
 * built by tb_set_build_level; false otherwise (or p not indexed). */
bool tb_probe_bounds(const struct tb_set *set, const sow_position *p, int *lo, int *hi,
                     int *value);

#endif
