/* sow — endgame tables, the probe side: index, level files, loaded sets and
 * the probe the solver uses.  It knows nothing of building (tables/tables.h, the
 * build side, uses it): index.c and file.c reference nothing of build.c, so a
 * program that only probes pulls no builder (no OpenMP) code out of libsow.a.
 * docs/tables.md explains the algorithm and the file format.
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
 * read-only (but for the block cache of compressed levels, which locks);
 * tb_rank/tb_unrank/tb_index_of/tb_position_of/tb_probe/tb_probe_bounds may
 * be called from any number of threads at once; tb_open/tb_close are not
 * concurrent with probes.
 */
#ifndef SOW_TABLES_PROBE_H
#define SOW_TABLES_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sow/rules.h"
#include "sow/status.h"
#include "sow/export.h"

/* Highest level a table can hold: values are int8 and |V| <= n. */
#define TB_MAX_LEVEL 127
/* Entries of one level must fit 31-bit indices (solve updates keep a kind bit). */
#define TB_MAX_ENTRIES 0x7FFFFFFFULL
/* Value encoding 1: int8 two's complement, -n..n. */
#define TB_FORMAT_VERSION 1
#define TB_INDEX_SCHEME 1
#define TB_VALUE_INT8 1
#define TB_HEADER_SIZE 128

/* ---- index ------------------------------------------------------------- */

/* Binomial terms of the rank for one board size: t[i][s] = C(s + i, i + 1),
 * saturated at UINT64_MAX.  Immutable after tb_index_init. */
struct tb_index {
    int pits, holes;   /* N and H = 2N */
    int states;        /* rs->index_states: 3 for darra (relative last capturer), else 1 */
    int (*rel_state)(const sow_position *p);     /* rs->rel_state (-1: not indexed) */
    uint8_t (*state_of_rel)(int rel, int side);  /* rs->state_of_rel */
    uint64_t t[SOW_MAX_HOLES][TB_MAX_LEVEL + 1];
};

SOW_API void tb_index_init(struct tb_index *ix, const struct ruleset *rs);

/* Boards of one level (per state) and entries of one level, saturated. */
SOW_API uint64_t tb_level_boards(const struct tb_index *ix, int n);
SOW_API uint64_t tb_level_entries(const struct tb_index *ix, int n);

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
SOW_API void tb_unrank(const struct tb_index *ix, int n, uint64_t r, uint8_t *h);

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

/* Relative state of p for its mover (the rule set's normalisation hook,
 * sow/rules.h: darra 0 none, 1 mover, 2 opponent; else 0) or -1 if not
 * indexed (jerin `open`). */
SOW_API int tb_rel_state(const struct tb_index *ix, const sow_position *p);

/* Level (seeds on the board) and index of p; false if not indexed or the
 * level is above TB_MAX_LEVEL. */
SOW_API bool tb_index_of(const struct tb_index *ix, const sow_position *p, int *level,
                         uint64_t *idx);

/* The normalised position (side A to move, stores 0) of entry idx of level n. */
SOW_API void tb_position_of(const struct tb_index *ix, int n, uint64_t idx, sow_position *p);

/* ---- loaded table sets -------------------------------------------------- */

struct tb_set;

/* Load every level present in dir for this rule set and size (missing or
 * empty dir: an empty set) into *out.  dir may list several directories
 * separated by ':' (as PATH): each level (and its bounds file) comes from
 * the first directory that holds its level file.  SOW_E_INPUT on a damaged or foreign
 * file, SOW_E_IO if one cannot be read, SOW_E_NOMEM; *out is NULL then. */
SOW_API enum sow_status tb_open(const struct ruleset *rs, const char *dir, struct tb_set **out,
                                struct sow_error *e);
SOW_API void tb_close(struct tb_set *set);

/* Internal to libsow (the builder and the solver fill sets with these): not
 * exported by the shared library.
 * An empty set for rs in dir, to which levels are added (NULL: out of memory). */
struct tb_set *tb_set_new(const struct ruleset *rs, const char *dir);
/* Load level n from dir into the set (replacing nothing); as tb_file_load. */
enum sow_status tb_set_load_level(struct tb_set *set, int n, struct sow_error *e);
/* Make levels 0..tb_max_level(src) of dst point at src's values (src must
 * outlive dst; same rule set and size).  Not concurrent with probes of dst. */
void tb_set_borrow(struct tb_set *dst, const struct tb_set *src);

/* Highest seed count n such that levels 0..n are all loaded, or -1. */
SOW_API int tb_max_level(const struct tb_set *set);

/* Value of p if its level is loaded (and the position is one the tables
 * index, e.g. not jerin's opening): true and *value set; else false. */
SOW_API bool tb_probe(const struct tb_set *set, const sow_position *p, int *value);

/* p's value and forced bounds lo <= V <= hi (docs/rules.md), if p's level
 * holds bounds (levels built in memory, tb_mem in tables/tables.h, or levels
 * whose bounds file tb_open found); false otherwise (or p not indexed). */
SOW_API bool tb_probe_bounds(const struct tb_set *set, const sow_position *p, int *lo, int *hi,
                             int *value);

/* Whether level n is loaded with its forced bounds (tb_probe_bounds answers
 * its positions). */
SOW_API bool tb_level_has_bounds(const struct tb_set *set, int n);

/* The values of level n (entries in index order), or NULL if not loaded. */
SOW_API const int8_t *tb_level_values(const struct tb_set *set, int n, uint64_t *entries);
SOW_API const struct tb_index *tb_set_index(const struct tb_set *set);

/* ---- compressed levels: the block cache -----------------------
 * tb_open keeps compressed (version 2) levels mapped and compressed; tb_probe
 * of one reads its block through one cache per set, shared by every thread
 * probing the set (and by sets borrowing its levels: tb_mem): a hit reads
 * one byte under one set's mutex, a miss decompresses exactly one block
 * (src/tables/compress.h draws the cache).  tb_open gives the cache the
 * default size, tb_cache_default(set, 0). */

/* Share of the memory budget the cache may take at most by default. */
#define TB_CACHE_SHARE 8

/* Raw bytes of the set's compressed levels. */
SOW_API uint64_t tb_set_compressed_bytes(const struct tb_set *set);
/* The default cache size: room for every block of the set's compressed
 * levels (about their raw bytes: a warm cache never misses), at most
 * memory / TB_CACHE_SHARE (memory <= 0: 3/4 of RAM). */
SOW_API uint64_t tb_cache_default(const struct tb_set *set, double memory);
/* Replace the set's cache by one of `bytes` (0: the default; at least one
 * set of 8 blocks).  SOW_OK (also when no level is compressed: no cache) or
 * SOW_E_NOMEM.  Not concurrent with probes of the set or of sets borrowing
 * its levels. */
SOW_API enum sow_status tb_set_cache(struct tb_set *set, uint64_t bytes, struct sow_error *e);

struct tb_cache_stats {
    uint64_t hits, misses; /* probes answered from the cache / blocks decompressed */
    uint64_t bytes;        /* the cache's capacity */
};
/* The counts of the caches the set's compressed levels probe through (false
 * if none).  May run alongside probes. */
SOW_API bool tb_set_cache_stats(const struct tb_set *set, struct tb_cache_stats *st);
/* True, with the first one-line reason in *e, if a probe of the set met a
 * damaged block (tb_probe then returned false).  May run alongside probes. */
SOW_API bool tb_set_damaged(const struct tb_set *set, struct sow_error *e);

/* ---- files -------------------------------------------------------------- */

/* The header of a level file (docs/tables.md, 128 bytes little-endian). */
struct tb_header {
    char rules[24];        /* canonical rule-set name */
    uint32_t version, index_scheme, value_encoding;
    uint32_t pits, level, states;
    uint64_t entries;
    uint64_t checksum;     /* XXH3-64 of the values (the payload of version 1) */
    uint64_t stored;       /* bytes of the file (version 2: compressed, docs/tables.md) */
};

/* "DIR/RULES-2xN-LLL.sowtb" into buf. */
SOW_API void tb_file_name(const char *dir, const char *rules, int pits, int level, char *buf,
                          size_t len);

/* Read and check a level file completely (header fields, size, payload
 * checksum, and, if rs != NULL, that it belongs to rs at `level`).  On success
 * fills *h and, if values != NULL, maps the payload read-only into *values
 * (release with tb_file_unmap).  Otherwise SOW_E_INPUT (damaged, foreign
 * or not a table file), SOW_E_IO (cannot open, stat or map) or SOW_E_NOMEM,
 * with a one-line reason naming the file. */
SOW_API enum sow_status tb_file_load(const char *path, const struct ruleset *rs, int level,
                                     struct tb_header *h, const int8_t **values, void **map,
                                     size_t *maplen, struct sow_error *e);
SOW_API void tb_file_unmap(void *map, size_t maplen);

/* Write a level: temp file, fsync, rename, fsync of the directory (internal to
 * libsow, the builder's: not exported by the shared library).
 * SOW_OK or SOW_E_IO (the temp file removed). */
enum sow_status tb_file_write(const char *dir, const struct ruleset *rs, int level,
                              const int8_t *values, uint64_t entries, struct sow_error *e);

/* ---- bounds files -------------------------------------------------------
 * Optional, beside a level file: "DIR/RULES-2xN-LLL.sowtbb" holds the
 * level's forced bounds (lo, hi: two int8 per entry in index order), from
 * which its values came (V = clamp(cyc, lo, hi)); a move that keeps the
 * seeds on the board is worth clamp(cyc(p), -hi(q), -lo(q)) for its child q,
 * so exact move values above the lowest levels need them (docs/rules.md).
 * The header is the level file's (docs/tables.md "Bounds files") with magic
 * "SOWTBB\r\n", its own version and encoding, and the XXH3-64 of the raw
 * values it belongs to (a level file rebuilt or replaced makes its old
 * bounds file foreign).  tb_open and tb_open_values load a level's bounds
 * file when it is present: a damaged or foreign one fails them as a damaged
 * level file does. */
#define TB_BOUNDS_VERSION 1
#define TB_BOUNDS_INT8_PAIRS 1

/* "DIR/RULES-2xN-LLL.sowtbb" into buf. */
SOW_API void tb_bounds_name(const char *dir, const char *rules, int pits, int level, char *buf,
                            size_t len);

/* Read and check a bounds file completely (header, size, payload checksum,
 * every pair -n <= lo <= hi <= n, and, if rs != NULL, that it belongs to rs
 * at `level`): *h filled (h->checksum: the pairs'), *values_sum the XXH3-64
 * of the values it belongs to, and, if lohi != NULL, the pairs mapped
 * read-only (release with tb_file_unmap).  Otherwise as tb_file_load. */
SOW_API enum sow_status tb_bounds_load(const char *path, const struct ruleset *rs, int level,
                                       struct tb_header *h, uint64_t *values_sum,
                                       const int8_t **lohi, void **map, size_t *maplen,
                                       struct sow_error *e);

/* Write level's bounds file (internal to libsow, the builders'), as
 * tb_file_write: lohi[2 * entries], values_sum the XXH3-64 of the level's
 * values.  SOW_OK or SOW_E_IO (the temp file removed). */
enum sow_status tb_bounds_write(const char *dir, const struct ruleset *rs, int level,
                                const int8_t *lohi, uint64_t entries, uint64_t values_sum,
                                struct sow_error *e);

/* Default table directory: $SOW_TABLES, else "tables". */
SOW_API const char *tb_default_dir(void);

#endif
