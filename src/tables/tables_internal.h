/* Endgame tables: what the module's files share (not part of the API).
 * The probe side (index.c, file.c) defines all of it; the build side
 * (build.c) uses it to add levels to sets. */
#ifndef SOW_TABLES_INTERNAL_H
#define SOW_TABLES_INTERNAL_H

#include "retro/retro.h"
#include "sow/tables_probe.h"

struct tbz; /* compress.h */

/* ---- the 128-byte level-file header, both versions (docs/tables.md "File
 * format"; compress.h draws version 2): one layout and one encoder for the
 * raw writer (file.c), the compressed writer (zwrite.c) and the readers
 * (file.c checks the common fields, zprobe.c the version-2 ones).  Bounds
 * files (sow/tables_probe.h) share it: their own magic "SOWTBB\r\n",
 * version TB_BOUNDS_VERSION, encoding TB_BOUNDS_INT8_PAIRS, VALUESUM. */
enum {
    TBH_MAGIC = 0,        /* 8 bytes "SOWTBL\r\n" */
    TBH_VERSION = 8,      /* u32: 1 raw, 2 compressed */
    TBH_HSIZE = 12,       /* u32, 128 */
    TBH_RULES = 16,       /* 24 bytes, NUL-padded */
    TBH_PITS = 40,        /* u32 */
    TBH_LEVEL = 44,       /* u32 */
    TBH_SCHEME = 48,      /* u32 */
    TBH_STATES = 52,      /* u32 */
    TBH_ENTRIES = 56,     /* u64 */
    TBH_ENCODING = 64,    /* u32 */
    TBH_COMPRESSION = 68, /* u32: 0 (version 1), 1 zstd (version 2) */
    TBH_CHECKSUM = 72,    /* u64 XXH3-64 of the payload (all bytes after the header) */
    TBH_PAYLOAD = 80,     /* u64 payload offset = 128 */
    TBH_BSHIFT = 88,      /* u32 block shift (version 2; else 0) */
    TBH_VALUESUM = 88,    /* u64 bounds files: XXH3-64 of the raw values they belong to */
    TBH_NBLOCKS = 96,     /* u64 block count (version 2; else 0) */
    TBH_RAWSUM = 104,     /* u64 XXH3-64 of the raw values (version 2; else 0) */
    TBH_HCHECK = 120,     /* u64 XXH3-64 of bytes 0..119 */
};
_Static_assert(TBH_HCHECK + 8 == TB_HEADER_SIZE, "the header is 128 bytes");

/* The fields both versions share into h[128] (zeroed first): magic, version,
 * sizes, rules, pits, level, scheme, states, entries, encoding, payload
 * checksum and offset.  The caller adds its version's fields, then seals. */
void tb_header_encode(uint8_t *h, const struct ruleset *rs, int level, uint32_t version,
                      uint64_t entries, uint64_t payload_sum);
/* The header checksum (bytes 0..119 into 120). */
void tb_header_seal(uint8_t *h);

struct tb_level {
    const int8_t *v;   /* values in index order, NULL if not loaded */
    uint64_t entries;
    uint64_t checksum;
    void *map;         /* the file mapping (NULL for levels put from memory) */
    size_t maplen;
    int8_t *own;       /* values owned by the set (tb_set_own_level), else NULL */
    int8_t *lohi;      /* owned forced bounds (lo, hi) per entry, or NULL */
    struct tbz *z;     /* a compressed level kept compressed (v NULL); map is its file */
    bool z_borrowed;   /* z is another set's (tb_set_borrow): not freed here */
    /* The forced bounds (lo, hi) per entry that probes read: lohi, the
     * mapping of the level's bounds file (bmap), or another set's
     * (tb_set_borrow); NULL if the level has none. */
    const int8_t *bd;
    void *bmap;        /* the bounds file's mapping (tb_set_load_bounds), or NULL */
    size_t bmaplen;
};

struct tb_set {
    struct ruleset rs;
    char dir[4096];
    struct tb_index ix;
    uint64_t boards[TB_MAX_LEVEL + 1]; /* boards per state of each level */
    struct tb_level lv[TB_MAX_LEVEL + 1];
    bool keep_compressed; /* tb_open: compressed levels stay so (else decompressed on load) */
    struct tbz_cache *cache; /* blocks of this set's own compressed levels (compress.h) */
    uint64_t next_block;     /* blocks of its compressed levels so far (tbz gbase) */
};

/* Level n (E entries) can be solved in one process over `lower`: E is at
 * most the builder's limit (max: TB_MAX_ENTRIES for 31-bit indices) and
 * every level below it is loaded (as values, or kept compressed if
 * compressed_ok: a builder that probes through the set's block cache).
 * SOW_OK, SOW_E_TOO_BIG or SOW_E_INPUT with the reason.  (file.c) */
enum sow_status tb_level_solvable(const struct tb_set *lower, int n, uint64_t E, uint64_t max,
                                  bool compressed_ok, struct sow_error *e);

/* The index of a position with B to move (a child of a normalised
 * position, or a predecessor) in a level of `boards` boards per state: its
 * board ranked from B's row (rotated by N: tb_rank_side's sum), its state
 * relative to B (the rules' hook, called only where the rule set indexes
 * states).  N = holes per side: a constant where the caller makes it one,
 * so that the loops unroll (the builders' move passes and unmoves). */
static inline __attribute__((always_inline)) uint64_t
tb_index_b(const struct tb_index *ix, const sow_position *c, int N, uint64_t boards)
{
    const uint8_t *h = c->board.h;
    uint64_t r = 0;
    int s = 0, i = 0;
    for (int k = N; k < 2 * N; k++, i++) {
        s += h[k];
        r += ix->t[i][s];
    }
    for (int k = 0; k < N - 1; k++, i++) {
        s += h[k];
        r += ix->t[i][s];
    }
    int st = ix->states > 1 ? ix->rel_state(c) : 0;
    return (uint64_t)st * boards + r;
}

/* The start of a builder's level L (struct lvl, struct lean: the fields of
 * these names): zeroed; its rule set, lower levels and their index, the
 * options, level n, boards per state, entries E, the move and values
 * passes' chunks (small on small levels, so that threads interleave there
 * too) and the progress report (progress.h).  A macro: the builders' level
 * structs differ in the rest. */
#define TB_LEVEL_START(L, rs_, lower_, n_, opt_)                                                   \
    do {                                                                                           \
        memset((L), 0, sizeof *(L));                                                               \
        (L)->rs = (rs_);                                                                           \
        (L)->lower = (lower_);                                                                     \
        (L)->ix = &(lower_)->ix;                                                                   \
        (L)->opt = (opt_);                                                                         \
        (L)->n = (n_);                                                                             \
        (L)->boards = tb_level_boards((L)->ix, (L)->n);                                            \
        (L)->E = tb_level_entries((L)->ix, (L)->n);                                                \
        (L)->chunk = (L)->E < (1u << 20) ? 256 : 4096;                                             \
        (L)->nchunks = ((L)->E + (L)->chunk - 1) / (L)->chunk;                                     \
        tb_progress_init(&(L)->pr, (L)->opt, (L)->n, (L)->E);                                      \
    } while (0)

/* Entries [a, b) of the level file `path` (rule set rs, level) into out,
 * without holding the rest: the header checked as tb_file_load checks it,
 * the slice's values (raw) or the blocks that hold it (compressed, each
 * block's checksum) checked, and with whole_sum the whole payload's
 * checksum streamed through a small buffer.  Ranks that each hold a slice
 * of a lower level read it so, one of them with whole_sum.  (file.c) */
enum sow_status tb_file_read_slice(const char *path, const struct ruleset *rs, int level,
                                   uint64_t a, uint64_t b, int8_t *out, bool whole_sum,
                                   struct sow_error *e);

/* A present level that a build cannot use: st, its message ending with
 * what to do (" (delete it to rebuild)").  SOW_OK passes through. */
enum sow_status tb_rebuild_hint(enum sow_status st, struct sow_error *e);

/* The bounds file of loaded level n of s, if present in s's directory:
 * checked completely (tb_bounds_load, against the level's values checksum)
 * and mapped for tb_probe_bounds.  SOW_OK also when there is none (or level
 * n is not loaded); SOW_E_INPUT (damaged, foreign, or the bounds of other
 * values), SOW_E_IO or SOW_E_NOMEM with the reason.  (file.c) */
enum sow_status tb_set_load_bounds(struct tb_set *s, int n, struct sow_error *e);

/* Level n of s just solved into v (and its forced bounds into lohi, or
 * NULL), out to s's directory: the level file written, or, if s holds
 * level n from its file already (a build for its bounds), the values
 * checked identical to the file's (SOW_E_INPUT naming it if not); then the
 * bounds file if lohi.  SOW_OK, SOW_E_INPUT or SOW_E_IO.  (file.c) */
enum sow_status tb_level_output(const struct tb_set *s, int n, const int8_t *v,
                                const int8_t *lohi, uint64_t entries, struct sow_error *e);
/* Whether a build with these bounds wants level n of rs in dir built: its
 * level file missing, or (bounds) its bounds file.  (file.c) */
bool tb_level_wanted(const struct ruleset *rs, const char *dir, int n, bool bounds);

/* Make level n of s point at values held elsewhere (not owned). */
void tb_set_put_level(struct tb_set *s, int n, const int8_t *v, uint64_t entries);
/* Give level n of s values v and bounds lohi (malloc'd, owned by s from now,
 * freed by tb_close), replacing what it held; with lohi NULL the level keeps
 * the bounds it had (a bounds file's or a borrowed level's). */
void tb_set_own_level(struct tb_set *s, int n, int8_t *v, int8_t *lohi, uint64_t entries);

/* Level n of s unloaded: its mappings, owned values, bounds and tbz
 * released, as tb_close does for every level.  (file.c) */
void tb_set_unload_level(struct tb_set *s, int n);

/* Decompress compressed level n of s into values s owns (a borrowed level's
 * file stays its owner's), for readers of whole levels (tb_mem's builds).
 * SOW_OK (also if n is raw or not loaded), SOW_E_INPUT (damaged) or
 * SOW_E_NOMEM.  Not concurrent with probes of s.  (zwrite.c) */
enum sow_status tb_set_inflate_level(struct tb_set *s, int n, int threads, struct sow_error *e);

/* The builders' node state and its primitives: retro/retro.h. */

#endif
