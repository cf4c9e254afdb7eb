/* The closure solver's files share this (not part of the API; closure.h is
 * the solver's interface to it).  One idea per file:
 *
 *   closure.c            clos_build, clos_find; the struct's life (clos_new,
 *      |                 clos_reset, clos_free) and accessors
 *      |-- closure_expand.c     1. expansion in layers, 2. renumbering
 *      |-- closure_retro.c      3. values: level moves, reverse edges,
 *      |      `-- closure_rounds.c     a level's retrograde (retro_rounds)
 *      |-- closure_ckpt.c       checkpoints of the in-memory closure
 *      `-- closure_disk.c       the closure on disk: level files, dk_build
 *             |-- closure_disk_down.c   pass 1: expansion, level by level
 *             `-- closure_disk_up.c     pass 2: values, level by level
 *   below all of them:
 *      closure_budget.c     node arrays, bytes, the memory budget
 *      closure_set.c        the hash set (hot look-ups inline below)
 *      closure_keys.c       key codec, hash, sorted-key look-up
 *
 * Shared functions are named clos_* (dk_* for the closure on disk);
 * closure.c's head comment explains the algorithm, each file's its part.
 */
#ifndef SOW_SOLVER_CLOSURE_INTERNAL_H
#define SOW_SOLVER_CLOSURE_INTERNAL_H

#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "closure.h"
#include "retro/retro.h"
#include "sow/tables_probe.h"
#include "tables/tb_lean.h"
#include "util.h"

#define EMPTY_CELL UINT64_MAX
#define BUSY_IDX (UINT32_MAX - 1)
#define CELL_IDX(x) ((uint32_t)(x))
#define CELL_FP(x) ((uint32_t)((x) >> 32))
#define MAX_NODES ((uint64_t)UINT32_MAX - 2)
#define MAX_KEY_WORDS 6
#define KF_MAX 32    /* look-ups one clos_key_find_rows interleaves at most */
#define UM_BATCH 256  /* copies whose unmoves are looked up together */
#define LOAD_NUM 3 /* set load at most 3/5 */
#define LOAD_DEN 5
#define BIG_LINE 1000000 /* layers and levels this large always report */
#define DK_FIRST_ROUND 65536 /* a resumed level's first round, which measures its moves */
/* Expansions a round of a level on disk at most: rounds end where the set
 * must grow, which near the end of a big level (or after a resumed level's
 * set was rebuilt with room) was minutes apart at jodu's 100 k expansions a
 * second, with no line of progress and Ctrl-C waiting; 2^20 are about 10 s
 * of jodu's and 1 s of darra's on two threads. */
#define DK_ROUND_MAX ((uint64_t)1 << 20)
#define CKPT_EVERY 30.0  /* seconds between checkpoints of the levels solved */

_Static_assert(2 + SOW_MAX_SEEDS + SOW_MAX_HOLES <= 64 * MAX_KEY_WORDS, "keys fit");

struct clos {
    const struct ruleset *rs;
    int pits, holes, slots, K;
    uint64_t n, cap;                   /* nodes, capacity of the node arrays */
    uint64_t *key;                     /* [cap * K] (keys_resize: kbytes mapped) */
    size_t kbytes;
    int8_t *lo, *hi, *v;               /* [cap] */
    uint64_t *set;                     /* cells: fingerprint << 32 | node index */
    uint64_t scap;
    uint64_t start[SOW_MAX_SEEDS + 2]; /* level ranges once solved */
    double peak;
    double refused;                    /* bytes of the last growth over the budget */
    struct clos_disk *dk;              /* env->disk: the levels in files (else NULL) */
    bool um;                           /* on disk, the in-level predecessors by unmoves */
    bool keys_only;                    /* on disk, expanding: no lo, hi, v (dk_keys_only) */
};

/* ---- shared structs (each beside the file that owns it) ---- */

/* Where the expansion stands between two rounds: nodes [0, a) expanded,
 * [a, end) the rest of the current layer, [end, n) found by it so far.
 * Everything a rerun needs to go on exactly as if never stopped (the
 * expansion checkpoint, "checkpoints" below). */
struct exp_state {
    uint64_t a, end, layers, prev_frontier, prev_found;
};

/* What an expansion checkpoint is checked against (clos_ck_save_expand). */
struct ck_meta;
struct exp_ck {
    int tbmax;
    const uint64_t *root;
    const struct ck_meta *base; /* counters before this build */
};

struct level_work {
    int8_t *be;
    uint8_t *cnt;
    uint32_t *fwd;  /* [Nl * slots]: local in-level children, UINT32_MAX past the last (LM_FWD) */
    uint32_t *roff; /* [Nl + 1] */
    uint32_t *rev;  /* the in-level predecessors (NULL: by unmoves, c->key sorted) */
    uint64_t nl;    /* positions of the level being solved */
    /* the retrograde's (closure_rounds.c) */
    uint32_t *order;  /* [Nl]: positions with an exit by its value (NULL: scans of be) */
    uint64_t *pend;   /* [(2 Nl + 63) / 64]: copies final that did not fit a stack */
    uint8_t *pdirty;  /* [pend's words / 1024 + 1]: blocks of pend with a copy waiting */
    uint64_t stack;   /* the threads' stacks' entries together (0: 8192 a thread) */
};

/* A share of a level split across MPI ranks, as its retrograde sees it
 * (closure_mpi_levels.c): predecessors name their rank, updates for other
 * ranks' copies are sent, and the ranks agree on the rounds. */
#define CLOS_CLAIM ((uint64_t)1 << 32) /* an update: claim an L copy (else count an H copy down) */
struct clos_ranks {
    void *ctx;
    int me;
    const uint64_t *roff, *rev; /* predecessors of own position q: rev[roff[q] ..
                                 * roff[q + 1]), each rank << 32 | index there */
    /* Update w (CLOS_CLAIM | index) queued for rank o by thread th of the
     * level's retrograde (each thread its own queues: called from every
     * thread at once); false: out of memory. */
    bool (*send)(void *ctx, int th, int o, uint64_t w);
    /* A superstep (every rank; thread 0 of the retrograde while the others
     * wait): what every thread queued exchanged, what came here in
     * *in (malloc'd, *nin words); 1: updates in flight, 0: the round is over
     * everywhere, -1: a rank failed (fail) or was stopped. */
    int (*superstep)(void *ctx, bool fail, uint64_t **in, size_t *nin);
    /* Before a round (every rank): a rank failed or was stopped. */
    bool (*stopped)(void *ctx, bool fail);
    /* x[0 .. n) summed over the ranks, in place. */
    void (*sum)(void *ctx, uint64_t *x, int n);
};

/* What level_moves does with a node's in-level children: keep them in its
 * forward slots (the in-memory closure), count them into roff[q + 1], or
 * (the moves generated a second time) put the node into rev at roff[q]'s
 * cursor.  The last two build the reverse edges without forward slots (the
 * closure on disk: 4 * slots bytes a position less); roff and the cursors
 * are shared, so they count with atomic adds. */
enum lm_mode { LM_FWD, LM_COUNT, LM_FILL };

#define CK_HEAD 64

struct ck_meta {
    char rules[24];
    uint32_t pits, K;
    int32_t tbmax, levels_done;
    uint64_t n;
    uint64_t root[MAX_KEY_WORDS];
    uint64_t start[SOW_MAX_SEEDS + 2];
    uint64_t nodes, visits, tb_hits; /* the expansion's counters */
};

#define DK_BUF 1024 /* keys buffered per thread and level before a block is appended */

struct dk_meta {
    char rules[24];
    uint32_t pits, K;
    int32_t tbmax, top;
    int32_t expanded_to; /* levels >= it are expanded (top + 1: none) */
    int32_t solved_to;   /* levels <= it are solved (-1: none) */
    uint64_t root[MAX_KEY_WORDS];
    uint64_t cnt[SOW_MAX_SEEDS + 1];   /* positions of each level expanded */
    uint64_t inlen[SOW_MAX_SEEDS + 1]; /* valid bytes of each incoming file */
    uint64_t nodes, visits, tb_hits;   /* the down pass's counters so far */
};

struct dk_lvl {
    char rules[24];
    uint32_t pits, K;
    int32_t level, kind; /* kind 0: keys, 1: values */
    uint64_t n;
    uint64_t root[MAX_KEY_WORDS];
};

_Static_assert(sizeof(struct dk_lvl) % 8 == 0 && CK_HEAD % 8 == 0,
               "a level file's keys are 8-aligned in its mapping");

struct clos_disk {
    char dir[4096];
    struct dk_meta st;
    FILE *in[SOW_MAX_SEEDS + 1];       /* incoming files open for appending */
    bool ioerr;                        /* an append failed */
    struct sow_error err;              /* why the first append, or the last
                                        * level or state write, failed */
    void *map[2][SOW_MAX_SEEDS + 1];   /* level files mapped: keys, values */
    size_t msz[2][SOW_MAX_SEEDS + 1];
    bool solved;                       /* every level solved and mapped */
    int ranks;                         /* merged from that many ranks' shares (0: one process) */
    uint64_t base[3];                  /* env counters before this build */
    /* The level being expanded, resumed: the in-level moves of the
     * expansions before this run (from disk-cur.keys), or, not recorded
     * there, how many expansions dk_deg leaves out. */
    double inl0;
    uint64_t askip;
};

struct dk_thread {
    struct sow_movelist ml;
    uint64_t *buf[SOW_MAX_SEEDS + 1];  /* exits buffered per level */
    uint32_t nb[SOW_MAX_SEEDS + 1];
    uint64_t inl; /* in-level moves of the nodes expanded (dk_down's budget) */
    bool oom;
};

/* The level being expanded, between two rounds (DIR/disk-cur.keys, magic
 * SOWDKC01: this, then the n keys found so far in the order found): saved
 * when stopped, when refused by the budget and at most every CKPT_EVERY
 * seconds or ten times the last save's time, whichever is longer (a save
 * writes the whole level so far), so that a rerun goes on with the level
 * instead of starting it over; the incoming files' lengths are those of the same moment. */
struct dk_cur {
    int32_t level;
    uint32_t deg_ppm;                  /* in-level moves per position expanded so far,
                                          in millionths (0: not recorded) */
    uint64_t n, a;                     /* positions found, expanded */
    uint64_t nodes, visits, tb_hits;   /* counters, as in dk_meta */
    uint64_t root[MAX_KEY_WORDS];
    uint64_t inlen[SOW_MAX_SEEDS + 1];
};

/* (closure_disk.c) the level files' names and magics, by kind */
extern const char *const dk_fmt[2];
extern const char *const dk_magic[2];

/* ---- closure_keys.c ---- */

void clos_key_find_rows(const uint64_t *const *ks, const uint64_t *ns,
                        const uint64_t (*ws)[MAX_KEY_WORDS], int cnt, int K, int64_t *out);

/* ---- closure_budget.c ---- */

size_t clos_keys_bytes(uint64_t words);
uint64_t *clos_keys_map(size_t nb);
void clos_keys_free(struct clos *c);
void clos_free_arrays(struct clos *c);
double clos_arrays_bytes(const struct clos *c, uint64_t cap, uint64_t scap);
double clos_level_work_per(const struct clos *c);
bool clos_over_budget(const struct clos_env *env, double bytes);
bool clos_over(struct clos *c, const struct clos_env *env, double bytes);
void clos_note_peak(struct clos *c, double b);
enum clos_err clos_grow_nodes(struct clos *c, const struct clos_env *env, uint64_t need);
void dk_keys_only(struct clos *c, bool on);
double dk_need_by(const struct clos *c, const struct clos_env *env, uint64_t n,
                  double deg, bool um);
double dk_need(const struct clos *c, const struct clos_env *env, uint64_t n, double deg);
uint64_t dk_most(const struct clos *c, const struct clos_env *env);

/* ---- closure_set.c ---- */

enum clos_err clos_rebuild_set(struct clos *c, const struct clos_env *env, uint64_t ncap);
uint64_t clos_set_cap_for(uint64_t n);

/* ---- closure_expand.c ---- */

bool clos_stopped(const struct clos_env *env);
void clos_say(const struct clos_env *env, double *last, bool force, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
enum clos_err clos_expand_all(struct clos *c, const struct clos_env *env, int tbmax,
                              struct clos_info *info, uint64_t *lvl, struct exp_state *st,
                              const struct exp_ck *ck);
enum clos_err clos_renumber(struct clos *c, const struct clos_env *env, const uint64_t *lvl);

/* ---- closure_retro.c ---- */

bool clos_level_moves_all(struct clos *c, const struct clos_env *env, int m, uint64_t s0,
                          uint64_t n, int tbmax, struct level_work *w, bool *missing,
                          enum lm_mode mode);
void clos_roff_sum(uint32_t *roff, uint64_t Nl);
void clos_roff_back(uint32_t *roff, uint64_t Nl);
/* ---- closure_rounds.c ---- */

/* Level m's retrograde, nodes [s0, s0 + Nl) (w: be, cnt and the
 * predecessors filled; order, pend, pdirty allocated): lo and hi into
 * c->lo, c->hi.  rk: the level is a share across ranks (every rank calls
 * it).  CLOS_STOPPED: Ctrl-C (lo and hi unfinished), CLOS_OOM: a thread's
 * memory refused (across ranks: this rank's). */
enum clos_err clos_retro(struct clos *c, const struct clos_env *env, int m, uint64_t s0,
                         uint64_t Nl, struct level_work *w, const struct clos_ranks *rk);
/* Bytes of w's retrograde arrays for a level of n positions (order: with
 * w->order), besides be, cnt and the predecessors. */
double clos_retro_bytes(uint64_t n, bool order, uint64_t stack, int threads);
/* w's order (if order), pend and pdirty for levels of up to n positions;
 * false if refused (clos_free_work frees them). */
bool clos_retro_alloc(struct level_work *w, uint64_t n, bool order);
void clos_level_values(struct clos *c, uint64_t s0, uint64_t Nl, const uint64_t *keys, int threads);
void clos_free_work(struct level_work *w);
enum clos_err clos_solve_levels(struct clos *c, const struct clos_env *env, int tbmax,
                                struct clos_info *info, int done_level);

/* ---- closure_ckpt.c ---- */

/* A file of the work directory opened for reading as fileio.h's rule 1
 * says: a regular file or NULL (a FIFO, device or directory is treated as
 * missing, never waited on).  (Files appended to: fio_open_log.) */
FILE *clos_fopen_in(const char *path);
void clos_ck_meta_of(const struct clos *c, const struct clos_env *env, int tbmax,
                     const uint64_t *root, struct ck_meta *m);
bool clos_ck_save_keys(const struct clos *c, const struct clos_env *env, int tbmax,
                       const uint64_t *root, const struct ck_meta *base);
bool clos_ck_save_values(const struct clos *c, const struct clos_env *env, int done);
bool clos_ck_save_expand(const struct clos *c, const struct clos_env *env,
                         const struct exp_ck *ck, const struct exp_state *st);
enum clos_err clos_ck_load_expand(struct clos *c, const struct clos_env *env, int tbmax,
                                  const uint64_t *root, struct exp_state *st, bool *loaded);
enum clos_err clos_ck_load(struct clos *c, const struct clos_env *env, int tbmax,
                           const uint64_t *root, int *done, bool *loaded);

/* ---- closure_disk.c ---- */

void dk_path(char *buf, size_t len, const struct clos_disk *dk, const char *fmt, int l);
/* An append to disk-in-LLL.keys failed with errno err: dk->ioerr set, the
 * first failure's reason kept in dk->err. */
void dk_in_failed(struct clos_disk *dk, int l, int err);
void dk_close_in(struct clos_disk *dk, bool sync);
void dk_free(struct clos *c);
void dk_unmap(struct clos_disk *dk);
uint64_t dk_total(const struct clos *c);
void dk_lvl_of(const struct clos *c, int l, int kind, struct dk_lvl *h);
bool dk_map(struct clos *c, int l, int kind, bool verify);
bool dk_map_in(const struct clos *c, struct clos_disk *dk, int l, int kind, bool verify);
const uint64_t *dk_keys(const struct clos *c, int l, uint64_t *n);
int64_t dk_find(const struct clos *c, int l, const uint64_t *w);
int8_t dk_value(const struct clos *c, int l, int64_t q);
void dk_sort(uint64_t *key, uint64_t *tmp, uint64_t n, int K);
/* The end of level m's expansion (in one process, or a rank's share): its
 * set's keys c->key[0..c->n-1] sorted and written to disk-LLL.keys, its
 * incoming file removed, disk.state saved.  The caller has checked the
 * sort's memory.  CLOS_OK, or CLOS_OOM with the reason in why. */
enum clos_err dk_keys_write(struct clos *c, const struct clos_env *env, int m, char *why,
                            size_t wlen);
/* The end of level m's retrograde (in one process, or a rank's share of n
 * positions): its lo, hi and V written to disk-LLL.values, the level's
 * keys and values files mapped, disk.state saved.  0; 1 if a write
 * failed (dk->err says why); 2 if the files could not be mapped. */
int dk_values_write(struct clos *c, const struct clos_env *env, int m, uint64_t n);
void dk_sums(const struct clos_env *env, uint64_t *x);
bool dk_save_state(struct clos *c, const struct clos_env *env);
enum clos_err dk_build(struct clos *c, const struct clos_env *env, int top, int tbmax,
                       const uint64_t *rootw, struct clos_info *info);

/* ---- closure_disk_down.c ---- */

/* (also the distributed closure's, closure_mpi_levels.c and
 * closure_mpi_reshard.c) a block of exits appended or read back, a seed
 * added, the set grown, a level's incoming file read */
void dk_flush(struct clos *c, int l, const uint64_t *keys, uint64_t cnt);
bool dk_read_block(FILE *f, int K, uint64_t *left, uint64_t *buf, uint64_t *n);
enum clos_err dk_seed(struct clos *c, const struct clos_env *env, const uint64_t *w);
enum clos_err dk_grow_set(struct clos *c, const struct clos_env *env, uint64_t least);
enum clos_err dk_read_seeds(struct clos *c, const struct clos_env *env, int m,
                            uint64_t *incoming, double *last, bool *damaged);

enum clos_err dk_load_cur(struct clos *c, const struct clos_env *env, int m,
                          struct dk_cur *cur, bool *have, bool *bad);
void dk_refuse(struct clos *c, const struct clos_env *env, struct clos_info *info, int m,
               uint64_t expanded, double deg);
enum clos_err dk_down(struct clos *c, const struct clos_env *env, int tbmax, int m,
                      const uint64_t *rootw, struct dk_thread *et, int nt, bool *damaged,
                      struct clos_info *info, uint64_t resume_a);

/* ---- closure_mpi.c (the closure on disk across MPI ranks) ----
 * Defined only in the sow executable built with MPI (src/cli/meson.build);
 * elsewhere (libsow alone, its tests, the Python module) the weak
 * reference is NULL and clos_build runs dk_build.  *took: false when MPI
 * is not running (the caller then runs dk_build). */
enum clos_err clos_mpi_build(struct clos *c, const struct clos_env *env, int top, int tbmax,
                             const uint64_t *rootw, struct clos_info *info, bool *took)
    __attribute__((weak, visibility("hidden")));

/* ---- closure_disk_up.c ---- */

enum clos_err dk_up(struct clos *c, const struct clos_env *env, int tbmax, int m,
                    bool *damaged, struct clos_info *info, double t0, uint64_t *done,
                    uint64_t resumed);

/* ---- inline: the hot paths of the key codec, the set and the expansion ---- */

static inline bool same_key(const uint64_t *a, const uint64_t *b, int K)
{
    uint64_t d = 0;
    for (int k = 0; k < K; k++)
        d |= a[k] ^ b[k];
    return d == 0;
}

static inline uint64_t slot_of(uint64_t h, uint64_t cap)
{
    return (uint64_t)(((unsigned __int128)h * cap) >> 64);
}

/* A cell: the low 32 bits of the key's hash (the slot comes from the high
 * bits) as a fingerprint, so that most cells met are passed over without
 * reading their node's key, and the node index. */
static inline uint64_t make_cell(uint64_t h, uint32_t idx)
{
    return (uint64_t)(uint32_t)h << 32 | idx;
}

static inline void set_prefetch(const struct clos *c, uint64_t h)
{
    __builtin_prefetch(&c->set[slot_of(h, c->scap)]);
}

/* Find or add the position with key w (hash h).  par: other threads insert
 * at the same time.  *added set if new. */
static inline uint32_t set_insert(struct clos *c, const uint64_t *w, uint64_t h, bool par,
                                  bool *added)
{
    const int K = c->K;
    const uint64_t scap = c->scap;
    const uint32_t fp = (uint32_t)h;
    uint64_t s = slot_of(h, scap);
    for (;; s = s + 1 == scap ? 0 : s + 1) {
        uint64_t *cl = &c->set[s];
        uint64_t x = par ? __atomic_load_n(cl, __ATOMIC_ACQUIRE) : *cl;
        if (x == EMPTY_CELL) {
            uint32_t idx;
            if (par) {
                if (!__atomic_compare_exchange_n(cl, &x, make_cell(h, BUSY_IDX), false,
                                                 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                    goto taken; /* x now holds the winner's cell */
                idx = (uint32_t)__atomic_fetch_add(&c->n, 1, __ATOMIC_RELAXED);
            } else {
                idx = (uint32_t)c->n++;
            }
            memcpy(&c->key[(uint64_t)idx * K], w, (size_t)K * 8);
            if (par)
                __atomic_store_n(cl, make_cell(h, idx), __ATOMIC_RELEASE);
            else
                *cl = make_cell(h, idx);
            *added = true;
            return idx;
        }
    taken:
        if (CELL_FP(x) != fp)
            continue;
        if (par)
            while (CELL_IDX(x) == BUSY_IDX) {
                __builtin_ia32_pause();
                x = __atomic_load_n(cl, __ATOMIC_ACQUIRE);
            }
        if (same_key(&c->key[(uint64_t)CELL_IDX(x) * K], w, K))
            return CELL_IDX(x);
    }
}

static inline int64_t set_find_h(const struct clos *c, const uint64_t *w, uint64_t h)
{
    const int K = c->K;
    const uint64_t scap = c->scap;
    const uint32_t fp = (uint32_t)h;
    if (!scap)
        return -1;
    for (uint64_t s = slot_of(h, scap);; s = s + 1 == scap ? 0 : s + 1) {
        uint64_t x = c->set[s];
        if (x == EMPTY_CELL)
            return -1;
        if (CELL_FP(x) == fp && same_key(&c->key[(uint64_t)CELL_IDX(x) * K], w, K))
            return CELL_IDX(x);
    }
}

static inline int64_t set_find(const struct clos *c, const uint64_t *w)
{
    return set_find_h(c, w, clos_hash(w, c->K));
}

static inline bool tb_exit(const struct clos_env *env, int tbmax, const struct sow_child *ch, int cl,
                           int *tv)
{
    return retro_taken(ch) && cl <= tbmax && tb_probe(env->tb, &ch->pos, tv);
}

/* The loaded tables' levels 0 .. tbmax read in place where they are not
 * compressed: a table exit's value byte found by its index, as tb_probe
 * finds it (tables/file.c: the relative state, the level by the board's
 * seeds, state x boards + rank), so that the passes that take nodes in
 * groups prefetch it with the set's cells instead of waiting for it.
 * Filled once per pass; read-only, any thread. */
struct tb_direct {
    const struct tb_index *ix;
    int tbmax, holes;
    const int8_t *v[SOW_MAX_SEEDS + 1]; /* NULL: compressed (tb_probe) or not loaded */
    uint64_t boards[SOW_MAX_SEEDS + 1];
};

static inline void tb_direct_init(struct tb_direct *d, const struct clos_env *env, int tbmax)
{
    memset(d, 0, sizeof *d);
    d->tbmax = env->tb ? tbmax : -1;
    if (d->tbmax < 0)
        return;
    d->ix = tb_set_index(env->tb);
    d->holes = d->ix->holes;
    for (int n = 0; n <= d->tbmax && n <= SOW_MAX_SEEDS; n++) {
        d->v[n] = tb_level_values(env->tb, n, NULL);
        d->boards[n] = tb_level_boards(d->ix, n);
    }
}

/* Child ch (cl seeds on its board) as tb_exit sees it: 0 not a table exit,
 * 1 a table exit whose value is at *at, 2 a table exit whose value is *tv
 * (tb_probe: a compressed level). */
static inline int tb_exit_at(const struct clos_env *env, const struct tb_direct *d,
                             const struct sow_child *ch, int cl, const int8_t **at, int *tv)
{
    if (!retro_taken(ch) || cl > d->tbmax)
        return 0;
    const sow_position *p = &ch->pos;
    int n = 0;
    for (int i = 0; i < d->holes; i++)
        n += p->board.h[i];
    if (n > SOW_MAX_SEEDS || n > d->tbmax || !d->v[n])
        return tb_probe(env->tb, p, tv) ? 2 : 0;
    int st = tb_rel_state(d->ix, p);
    if (st < 0)
        return 0;
    *at = &d->v[n][(uint64_t)st * d->boards[n] + tb_rank_side(d->ix, p->board.h, p->side)];
    return 1;
}

static inline const void *dk_payload(const struct clos_disk *dk, int kind, int l)
{
    return (const uint8_t *)dk->map[kind][l] + CK_HEAD + sizeof(struct dk_lvl);
}

#endif
