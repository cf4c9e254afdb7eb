/* The exact solver's closure: every position reachable from a root (by all
 * moves, through every lower level), normalised to the mover, each expanded
 * once, then solved level by level (fewest seeds first) with a bucket-queue
 * retrograde over the in-level graph.  docs/solver.md "Algorithm" explains
 * why this is the value of docs/rules.md, "Memory" what each byte is;
 * closure.c and its files (closure_internal.h) say how.  Internal to
 * src/solver.
 *
 * A position is kept as a key of K 64-bit words (K = 1 on 2x6 up to 62
 * seeds), mover-normalised (the mover's holes first, side A, darra's state
 * relative to the mover) and packed as what the seed count needs, bits from
 * the least significant up:
 *
 *   bits 0-1   state: 0 none, 1 mover captured last, 2 the other did,
 *              3 jerin's opening double move due
 *   then per hole (mover's holes 1..N, then the other's 1..N):
 *              one 1 bit per seed, then a 0 bit
 *
 * so a position of s seeds on H holes takes 2 + s + H bits, and the number
 * of 1 bits above bit 1 is its level.  Example (oware 2x6): the position
 * 1,0,1,0,1,1/0,1,1,0,0,1/B (B to move, 7 seeds) normalises to B's holes
 * first, 0,1,1,0,0,1 | 1,0,1,0,1,1, state none, and packs (bit 0 first) as
 *
 *   bit  0 1 | 2 | 3 4 | 5 6 | 7 | 8 | 9 10 | 11 12 | 13 | 14 15 | 16 | 17 18 | 19 20
 *        0 0 | 0 | 1 0 | 1 0 | 0 | 0 | 1  0 | 1  0  | 0  | 1  0  | 0  | 1  0  | 1  0
 *   state    | 0 |  1  |  1  | 0 | 0 |  1   |  1    | 0  |  1    | 0  |  1    |  1
 *
 *   key = bits 3, 5, 9, 11, 14, 17, 19 = 0xA4A28 (21 bits; tested in
 *   closure/key_example).  The same position with A to move and the sides
 *   swapped has the same key.
 *
 * Per node i (nodes numbered by level after the expansion, fewest seeds
 * first): key[i*K .. i*K+K-1], lo[i], hi[i], v[i] (int8, mover's view).
 * Set: open addressing over 32-bit cells holding node indices
 * (0xFFFFFFFF free, 0xFFFFFFFE being written), load at most 0.6, the key
 * compared on each index met.  Children are not stored: the level phase
 * generates each node's moves a second time (docs/solver.md "Memory").
 *
 * Thread-safety: one caller at a time per struct clos; clos_build runs
 * env->threads OpenMP threads inside (concurrent insertion: CAS on the
 * cell, index published with release; see closure.c "Races").  clos_find
 * and the other readers are read-only.
 */
#ifndef SOW_SOLVER_CLOSURE_H
#define SOW_SOLVER_CLOSURE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "sow/rules.h"
#include "tables/tables.h"

struct clos;

/* What a build reached (filled on every return of clos_build). */
struct clos_info {
    uint64_t positions;   /* positions found (normalised to the mover) */
    uint64_t layers;      /* breadth-first layers expanded */
    double bytes;         /* bytes held at the end (or at the refusal) */
    double peak;          /* most bytes held at once (model of the arrays) */
    double need;          /* CLOS_TOO_BIG: bytes the refused step would need
                             (the next layer, a growth, a level's retrograde) */
    uint64_t next_est;    /* CLOS_TOO_BIG: positions expected after it */
    bool by_memory;       /* CLOS_TOO_BIG: refused by the memory budget
                             (else by max_nodes or the 32-bit index) */
    uint64_t level_count[SOW_MAX_SEEDS + 1]; /* positions per level (CLOS_TOO_BIG:
                                                 found by the last layer checked) */
    double expand_s, solve_s; /* seconds in the two phases */
    char why[256];        /* CLOS_TOO_BIG for a format limit: why, else "" */
};

struct clos_env {
    int threads;
    struct sow_relay_cache **cache;   /* [threads], entries may be NULL */
    volatile sig_atomic_t *stop;      /* may be NULL */
    const struct tb_set *tb;          /* may be NULL */
    uint64_t *nodes;                  /* [threads]: positions expanded */
    uint64_t *visits;                 /* [threads]: children made and looked up */
    uint64_t *tb_hits;                /* [threads]: probes of levels <= tb_hits_max */
    int tb_hits_max;                  /* highest level loaded from files (-1: none) */
    uint64_t max_nodes;               /* refuse closures larger than this
                                         (checked between breadth-first layers) */
    double memory;                    /* bytes the closure may hold (0: no limit):
                                         checked before each layer, with headroom
                                         for the level phase; any growth past it
                                         stops the build */
    /* Called between expansion rounds and levels, and within a level's
     * move passes and retrograde, from the calling thread, at most about
     * once a second (layers and levels of more than 1 M positions always):
     * one line of progress.  May be NULL. */
    void (*progress)(void *arg, const char *line);
    void *progress_arg;
    struct clos_info *info;           /* may be NULL */
    /* Checkpoint directory (may be NULL): the expanded closure and the
     * levels solved are kept there, and a build of the same root with the
     * same tables resumes from them (closure_ckpt.c "checkpoints"). */
    const char *work;
    /* Level by level on disk (needs work; not with
     * max_nodes): each level's positions kept sorted in files in work, one
     * level in memory at a time (closure_disk.c "the closure level by level
     * on disk"); the same positions, values and node counts as in memory. */
    bool disk;
    /* Entries of a level's retrograde stacks, its threads' together
     * (closure_rounds.c); 0: a sixteenth of the level's positions plus 4096
     * where the predecessors come from unmoves (on disk, single-sowing rule
     * sets), 8192 a thread elsewhere.  The copies that do not fit wait in a
     * bitmap: the values are the same whatever the size (tests set it to 1). */
    uint64_t um_stack;
    /* (tests) Single sowing on disk: predecessors by unmoves even where the
     * budget holds a level's reverse edges (which dk_up takes then). */
    bool unmoves_only;
    /* (tests) Expansions a round of a level on disk at most (0: 2^20,
     * closure_internal.h DK_ROUND_MAX): the same positions and values whatever it
     * is. */
    uint64_t round_max;
    /* (tests) The lines of progress within a level (its move passes, its
     * retrograde) from its first step instead of after a second, so that a
     * test can stop a solve inside any level. */
    bool eager_lines;
    /* (tests) In-memory levels of at least this many positions take the
     * threaded retrograde when threads > 1 (0: 2^16, below which barriers
     * cost more than they save): the same values whatever it is. */
    uint64_t par_min;
};

enum clos_err { CLOS_OK = 0, CLOS_STOPPED, CLOS_OOM, CLOS_TOO_BIG };

struct clos *clos_new(const struct ruleset *rs);
void clos_free(struct clos *c);
void clos_reset(struct clos *c);

/* Replace the closure by the one of root and solve it. */
enum clos_err clos_build(struct clos *c, const struct clos_env *env, const sow_position *root);

/* p's exact results if p is in the closure: lo, hi and the value v (mover's
 * view).  *expanded is always true now (kept for the callers).  false if p
 * is not in it. */
bool clos_find(const struct clos *c, const sow_position *p, int *lo, int *hi, int *v,
               bool *expanded);

/* Positions in the closure (in memory or, env->disk, in its level files). */
uint64_t clos_size(const struct clos *c);

/* Read access for the solution files (solution.c): words per key, and node
 * i's key words, lo, hi and v.  Nodes are ordered by level.  Not for a
 * closure built on disk (clos_on_disk): its levels are in files. */
bool clos_on_disk(const struct clos *c);
int clos_key_words(const struct clos *c);
const uint64_t *clos_keys(const struct clos *c);
const int8_t *clos_lo(const struct clos *c);
const int8_t *clos_hi(const struct clos *c);
const int8_t *clos_v(const struct clos *c);
/* The set's cells (S) and cell j's node index (UINT32_MAX: free). */
uint64_t clos_cells(const struct clos *c);
uint32_t clos_cell(const struct clos *c, uint64_t j);
/* The cells a set of n positions is built with (load at most 3/5). */
uint64_t clos_set_cells_for(uint64_t n);

/* (tests) The set's cells for the nodes 0 .. n-1, n < ncap, filled on
 * `threads` threads as a rebuild fills them (closure_set.c), against the
 * serial fill's: how many range boundaries had a run put back across them
 * (>= 0) when the cells are the same, -1 when they differ, -2 when the
 * threaded fill refused (a run reaching past a quarter of a range: a
 * rebuild then fills serially) or memory ran out.  Thread-safe for
 * distinct closures. */
int clos_set_fill_check(const struct clos *c, uint64_t ncap, int threads);
/* (tests) The sorted-key searches of the closure on disk: w's index in n
 * sorted keys k of K words (-1 if absent), and cnt of them at once (ks[j],
 * ns[j], the key ws[j * K ..]; cnt at most SOW_MAX_PITS + 1), their probes
 * interleaved.  Pure; thread-safe. */
int64_t clos_key_find(const uint64_t *k, uint64_t n, const uint64_t *w, int K);
void clos_key_find_many(const uint64_t *const *ks, const uint64_t *ns, const uint64_t *ws,
                        int cnt, int K, int64_t *out);
/* A closure built on disk, every level solved: level l's positions (the
 * count, 0 for a level it has none of or before the solve ended), their keys
 * (n x K words, increasing) and lo, hi, V (n each) from the mapped level
 * files.  Read-only: any thread while the closure lives. */
uint64_t clos_disk_level(const struct clos *c, int l, const uint64_t **keys, const int8_t **lo,
                         const int8_t **hi, const int8_t **v);
/* The ranks of the MPI job that built closure c on disk (1: one process). */
int clos_disk_ranks(const struct clos *c);

/* Key packing (the layout above), shared with solution.c: K words per key
 * for positions of at most `seeds` seeds; clos_pack returns false if p does
 * not fit K words. */
int clos_words_for(const struct ruleset *rs, int seeds);
bool clos_pack(const struct ruleset *rs, int K, const sow_position *p, uint64_t *w);
void clos_unpack(const struct ruleset *rs, int K, const uint64_t *w, sow_position *p);
uint64_t clos_hash(const uint64_t *w, int K);
/* The seeds a key holds (its level): the ones past the state's 2 bits. */
static inline int key_level(const uint64_t *w, int K)
{
    int s = __builtin_popcountll(w[0] >> 2);
    for (int k = 1; k < K; k++)
        s += __builtin_popcountll(w[k]);
    return s;
}

/* Checkpoint files (closure_ckpt.c "checkpoints"), shared with levels.c: DIR/name
 * is a 64-byte header (magic, payload bytes, XXH3-64 of the payload and of
 * the header) then the parts; written to a temporary file, synced and
 * renamed.  clos_ck_read: true if the file has this magic, exactly these
 * part sizes and both checksums hold (the parts are then filled). */
bool clos_ck_write(const char *dir, const char *name, const char *magic, const void *const *parts,
                   const uint64_t *sizes, int np);
/* The same, *e saying why on failure (the file and strerror: "No space
 * left on device"). */
bool clos_ck_write_e(const char *dir, const char *name, const char *magic,
                     const void *const *parts, const uint64_t *sizes, int np, struct sow_error *e);
bool clos_ck_read(const char *dir, const char *name, const char *magic, void *const *parts,
                  const uint64_t *sizes, int np);
/* A --work directory before a solve uses it: SOW_E_INPUT naming the first
 * checkpoint name there (closure.*, disk.state, disk-*.keys, disk-*.values,
 * level-*.ck) that is not a regular file (a FIFO, device, directory, socket
 * or symbolic link: sow writes only regular files, fileio.h rule 2), else
 * SOW_OK.  So a checkpoint's save cannot fail later on what was there. */
enum sow_status clos_work_check(const char *dir, struct sow_error *e);

#endif
