/* The closure solver (closure.h; docs/solver.md "Algorithm", "Memory").
 *
 * 1. Expansion: the root's closure under all moves, mover-normalised,
 *    discovered in breadth-first layers (each layer's nodes are expanded in
 *    rounds split between threads).  Every node's moves are generated once;
 *    each child is found or added in the set; exit children at levels the
 *    endgame tables cover are not added (the tables answer them).  Nothing
 *    but the key is kept per node: the children are not stored.
 * 2. Renumbering: nodes sorted by level (counting sort of the keys), the set
 *    rebuilt, so that level m is the index range [start[m], start[m+1]).
 * 3. Values, level by level from the fewest seeds up.  For level m each node
 *    p's moves are generated again (threads split the level): be(p) = best
 *    exit value (d - V(child), children one level down are final, from the
 *    set or the tables; a settlement is an exit), its in-level children (a
 *    local forward list, inverted into a reverse CSR).  Then one game on
 *    the copies (p,L) and (p,H) in X-values (X = the player for whom
 *    endless play is -infinity):
 *        (p,L) = max(be(p), (q,H) for in-level q)   = lo(p)
 *        (p,H) = min(-be(p), (q,L) for in-level q)  = -hi(p)
 *    solved by a bucket queue over t = m .. -m: an L copy is final the first
 *    time one of its options reaches t (a bucket at be, or a child's H copy
 *    final at t); an H copy when its last in-level child's L copy is final
 *    (counter), at min(-be, t) (deferred to bucket -be if that is lower).
 *    Copies never final are endless: lo = -m, hi = m.  V = clamp(cyc, lo, hi).
 *    This is the least-fixed-point (attractor) computation of the definition
 *    (W_t, L_u) for every threshold at once, on exactly the positions the root
 *    can reach, so it is exact with cycles and no result depends on a path.
 *    Mover normalisation changes none of it: lo, hi, V and the cycle value
 *    are all the mover's, and the rules are the same for both sides.
 *
 * Memory (the budget env->memory): the bytes of the arrays are modelled
 * exactly from their capacities (bytes_now); before each layer the next one
 * is estimated from the last layer's growth and the whole solve's need
 * (expansion, renumbering, the largest level's work) is checked against
 * the budget; any growth past it during a layer stops the build as well.
 *
 * Races (threads > 1, expansion only): a free cell is claimed by CAS to
 * BUSY; the claimer takes a node index (atomic add), writes the key, then
 * publishes the index with a release store; a thread meeting BUSY spins
 * until the index is published, then compares the keys.  Each node is
 * expanded by exactly one thread (its round range is split), and in the
 * level phase each node is written by the thread that generates its moves.
 * Which index a position gets during the expansion depends on timing; the
 * closure (a set), the level order of the renumbered nodes within a level
 * does too, but the values, the sizes and the node counts do not.
 */
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
#include "tables/tb_lean.h"
#include "util.h"

#define EMPTY_CELL UINT64_MAX
#define BUSY_IDX (UINT32_MAX - 1)
#define CELL_IDX(x) ((uint32_t)(x))
#define CELL_FP(x) ((uint32_t)((x) >> 32))
#define MAX_NODES ((uint64_t)UINT32_MAX - 2)
#define UNDONE INT8_MIN
#define NO_EXIT INT8_MIN
#define MAX_KEY_WORDS 6
#define KF_MAX 32    /* look-ups one key_find_many interleaves at most */
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

/* (diskclosure) the closure level by level on disk, at the end of this file */
static void dk_free(struct clos *c);
static int64_t dk_find(const struct clos *c, int l, const uint64_t *w);
static int64_t key_find(const uint64_t *k, uint64_t n, const uint64_t *w, int K);
static void key_find_many(const uint64_t *const *ks, const uint64_t *ns,
                          const uint64_t (*ws)[MAX_KEY_WORDS], int cnt, int K, int64_t *out);
static const uint64_t *dk_keys(const struct clos *c, int l, uint64_t *n);
static int8_t dk_value(const struct clos *c, int l, int64_t q);

/* ---- keys ---- */

int clos_words_for(const struct ruleset *rs, int seeds)
{
    return (2 + seeds + rs->holes + 63) / 64;
}

static inline int rel_state(const sow_position *p)
{
    switch (p->state) {
    case SOW_STATE_A: return p->side == SOW_A ? 1 : 2;
    case SOW_STATE_B: return p->side == SOW_B ? 1 : 2;
    case SOW_STATE_OPEN: return 3;
    default: return 0;
    }
}

static inline void set_ones(uint64_t *w, int b, int c)
{
    while (c > 0) {
        int off = b & 63, take = 64 - off < c ? 64 - off : c;
        uint64_t run = take == 64 ? ~0ULL : ((1ULL << take) - 1);
        w[b >> 6] |= run << off;
        b += take;
        c -= take;
    }
}

bool clos_pack(const struct ruleset *rs, int K, const sow_position *p, uint64_t *w)
{
    const int N = rs->pits, H = rs->holes, rot = p->side == SOW_B ? N : 0;
    const uint8_t *h = p->board.h;
    if (K == 1) {
        uint64_t k = (uint64_t)rel_state(p);
        int b = 2;
        for (int j = 0; j < H; j++) {
            int c = h[j + rot < H ? j + rot : j + rot - H];
            if (b + c + 1 > 64)
                return false;
            k |= ((1ULL << c) - 1) << b;
            b += c + 1;
        }
        w[0] = k;
        return true;
    }
    for (int k = 0; k < K; k++)
        w[k] = 0;
    w[0] = (uint64_t)rel_state(p);
    int b = 2;
    for (int j = 0; j < H; j++) {
        int c = h[j + rot < H ? j + rot : j + rot - H];
        if (b + c + 1 > 64 * K)
            return false;
        set_ones(w, b, c);
        b += c + 1;
    }
    return true;
}

/* Ones from bit b on (the hole's seed count); bits past the key are 0. */
static inline int count_ones(const uint64_t *w, int K, int b)
{
    int c = 0;
    for (;;) {
        int word = b >> 6, off = b & 63;
        if (word >= K)
            return c;
        uint64_t x = w[word] >> off;
        if (off && word + 1 < K)
            x |= w[word + 1] << (64 - off);
        int t = ~x ? __builtin_ctzll(~x) : 64;
        c += t;
        if (t < 64)
            return c;
        b += 64;
    }
}

void clos_unpack(const struct ruleset *rs, int K, const uint64_t *w, sow_position *p)
{
    const int H = rs->holes;
    memset(p, 0, sizeof *p);
    int st = (int)(w[0] & 3), b = 2;
    if (K == 1) {
        uint64_t k = w[0] >> 2;
        for (int j = 0; j < H; j++) {
            int c = __builtin_ctzll(~k);
            p->board.h[j] = (uint8_t)c;
            k >>= c;
            k >>= 1;
        }
    } else {
        for (int j = 0; j < H; j++) {
            int c = count_ones(w, K, b);
            p->board.h[j] = (uint8_t)c;
            b += c + 1;
        }
    }
    p->side = SOW_A;
    p->state = st == 1 ? SOW_STATE_A : st == 2 ? SOW_STATE_B : st == 3 ? SOW_STATE_OPEN
                                                                      : SOW_STATE_NONE;
}

static inline int key_level(const uint64_t *w, int K)
{
    int s = __builtin_popcountll(w[0] >> 2);
    for (int k = 1; k < K; k++)
        s += __builtin_popcountll(w[k]);
    return s;
}

uint64_t clos_hash(const uint64_t *w, int K)
{
    uint64_t h = 0x243F6A8885A308D3ULL;
    for (int k = 0; k < K; k++) {
        h = (h ^ w[k]) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return h;
}

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

/* ---- the struct ---- */

struct clos *clos_new(const struct ruleset *rs)
{
    struct clos *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->rs = rs;
    c->pits = rs->pits;
    c->holes = rs->holes;
    c->slots = SOW_MAX_PITS + 1;
    if (rs->pits + 1 < c->slots)
        c->slots = rs->pits + 1;
    c->K = 1;
    return c;
}

/* The key array is anonymous memory of its own, grown by mremap, which
 * moves its pages instead of copying them: a growth holds the new size
 * only, where realloc may hold the old and the new block (glibc's does
 * mremap only above its mmap threshold, at most 32 MB). */
static size_t keys_bytes(uint64_t words)
{
    return ((size_t)words * 8 + 4096) / 4096 * 4096;
}

static uint64_t *keys_map(size_t nb)
{
    void *p = mmap(NULL, nb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Resized to hold words words (the old contents kept); false if refused. */
static bool keys_resize(struct clos *c, uint64_t words)
{
    const size_t nb = keys_bytes(words);
    void *p = c->key ? mremap(c->key, c->kbytes, nb, MREMAP_MAYMOVE) : keys_map(nb);
    if (!p || p == MAP_FAILED)
        return false;
    c->key = p;
    c->kbytes = nb;
    return true;
}

static void keys_free(struct clos *c)
{
    if (c->key)
        munmap(c->key, c->kbytes);
    c->key = NULL;
    c->kbytes = 0;
}

static void free_arrays(struct clos *c)
{
    keys_free(c);
    free(c->lo);
    free(c->hi);
    free(c->v);
    free(c->set);
    c->key = NULL;
    c->lo = c->hi = c->v = NULL;
    c->set = NULL;
    c->cap = c->scap = 0;
}

void clos_free(struct clos *c)
{
    if (!c)
        return;
    dk_free(c);
    free_arrays(c);
    free(c);
}

static void dk_keys_only(struct clos *c, bool on);

void clos_reset(struct clos *c)
{
    dk_free(c);
    dk_keys_only(c, false); /* (a build on disk stopped while expanding) */
    c->um = false;
    c->n = 0;
    memset(c->start, 0, sizeof c->start);
}

static uint64_t dk_total(const struct clos *c);

uint64_t clos_size(const struct clos *c)
{
    return c->dk ? dk_total(c) : c->n;
}

bool clos_on_disk(const struct clos *c)
{
    return c->dk != NULL;
}

int clos_key_words(const struct clos *c) { return c->K; }
const uint64_t *clos_keys(const struct clos *c) { return c->key; }
const int8_t *clos_lo(const struct clos *c) { return c->lo; }
const int8_t *clos_hi(const struct clos *c) { return c->hi; }
const int8_t *clos_v(const struct clos *c) { return c->v; }
uint64_t clos_cells(const struct clos *c) { return c->scap; }
uint32_t clos_cell(const struct clos *c, uint64_t j)
{
    return c->set[j] == EMPTY_CELL ? UINT32_MAX : CELL_IDX(c->set[j]);
}

/* Bytes of the node arrays at capacity cap and of the set at scap. */
static double arrays_bytes(const struct clos *c, uint64_t cap, uint64_t scap)
{
    return (double)cap * (8.0 * c->K + (c->keys_only ? 0.0 : 3.0)) + 8.0 * (double)scap;
}

/* Work bytes per position of the level being solved: be, cnt, forward
 * in-level children (slots), roff, reverse edges (at most slots), bucket
 * links and stack of both copies. */
static double level_work_per(const struct clos *c)
{
    return 2.0 + 4.0 * c->slots + 4.0 + 4.0 * c->slots + 16.0;
}

/* Work bytes per position of a level solved on disk (dk_up) with deg
 * in-level moves a position, besides its keys and values: be, cnt, roff and
 * 4 per in-level move (reverse edges) while the moves are listed; no forward
 * slots (the moves are generated twice) and no bucket links (scans).  The
 * retrograde's stack of both copies (8 bytes) is allocated only once the
 * keys are freed (dk_up), so it never adds to them: on 2x6 with 4 in-level
 * moves 22 bytes against level_work_per's 70. */
static double dk_work_per(double deg)
{
    return 2.0 + 4.0 + 4.0 * deg;
}

/* The same with the predecessors by unmoves (c->um: um_preds), whatever
 * the in-level moves: be, cnt, the bitmap of copies waiting (2 bits) and
 * the stack (4 bytes an entry; per position at the default size), the keys
 * kept for the unmoves' look-ups; besides, 4096 entries and the unmove
 * buffers.  On 2x6 (K = 1) 8 + 3 + 2.5 = 13.5 bytes a position. */
static double dk_um_per(const struct clos_env *env, uint64_t n)
{
    double st = env->um_stack ? 4.0 * (double)env->um_stack : 4.0 * ((double)n / 16 + 4096);
    return 2.0 + 0.25 + (n ? st / (double)n : 0.0);
}
#define UM_FIXED(nt)                                                                              \
    ((double)TB_UNMOVE_MAX * ((double)(nt) * sizeof(struct tb_unmove) + 4.0 * UM_BATCH) +       \
     6.0 * UM_BATCH)

static bool over_budget(const struct clos_env *env, double bytes)
{
    return env->memory > 0 && bytes > env->memory;
}

/* over_budget, remembering the bytes refused: a refusal then names what the
 * structure refused would have needed (a node array or the set grown
 * mid-layer, a level's retrograde), not an earlier estimate that fitted. */
static bool over(struct clos *c, const struct clos_env *env, double bytes)
{
    if (!over_budget(env, bytes))
        return false;
    c->refused = bytes;
    return true;
}

#define GROW(arr, n)                                                                              \
    do {                                                                                          \
        void *np_ = realloc((arr), sizeof *(arr) * (size_t)(n));                                 \
        if (!np_)                                                                                 \
            return CLOS_OOM;                                                                      \
        (arr) = np_;                                                                              \
    } while (0)

static void note_peak(struct clos *c, double b)
{
    if (b > c->peak)
        c->peak = b;
}

static uint64_t dk_most(const struct clos *c, const struct clos_env *env);

static enum clos_err grow_nodes(struct clos *c, const struct clos_env *env, uint64_t need)
{
    if (need <= c->cap)
        return CLOS_OK;
    uint64_t nc = c->cap ? c->cap + c->cap / 2 : 4096;
    if (nc < need)
        nc = need;
    if (nc > MAX_NODES + 1)
        nc = MAX_NODES + 1;
    if (need > nc)
        return CLOS_TOO_BIG;
    /* a level on disk being expanded: never more keys than dk_most, which
     * leaves room for their set */
    if (c->keys_only && env->memory > 0) {
        uint64_t most = dk_most(c, env);
        if (most >= need && most < nc)
            nc = most;
    }
    /* growth peak: the arrays grow one at a time and the keys by mremap
     * (keys_resize), so besides the new ones at most an old value array is
     * held */
    const double old = c->keys_only ? 0.0 : (double)c->cap,
                 per = 8.0 * c->K + (c->keys_only ? 0.0 : 3.0);
    double b = arrays_bytes(c, nc, c->scap) + old;
    if (over_budget(env, b) && nc > need) {
        /* near the budget: the most that fits, if that holds need (else the
         * refusal names need's bytes, not the step's) */
        double fit = (env->memory - 8.0 * (double)c->scap - old) / per;
        nc = fit > (double)need ? (fit < (double)nc ? (uint64_t)fit : nc) : need;
        b = arrays_bytes(c, nc, c->scap) + old;
    }
    if (over(c, env, b))
        return CLOS_TOO_BIG;
    note_peak(c, b);
    if (!keys_resize(c, nc * (uint64_t)c->K))
        return CLOS_OOM;
    if (!c->keys_only) {
        GROW(c->lo, nc);
        GROW(c->hi, nc);
        GROW(c->v, nc);
    }
    c->cap = nc;
    return CLOS_OK;
}

/* A cell: the low 32 bits of the key's hash (the slot comes from the high
 * bits) as a fingerprint, so that most cells met are passed over without
 * reading their node's key, and the node index. */
static inline uint64_t make_cell(uint64_t h, uint32_t idx)
{
    return (uint64_t)(uint32_t)h << 32 | idx;
}

static void set_put(uint64_t *set, uint64_t scap, uint64_t h, uint32_t idx)
{
    uint64_t s = slot_of(h, scap);
    while (set[s] != EMPTY_CELL)
        s = s + 1 == scap ? 0 : s + 1;
    set[s] = make_cell(h, idx);
}

static enum clos_err rebuild_set(struct clos *c, const struct clos_env *env, uint64_t ncap)
{
    double b = arrays_bytes(c, c->cap, ncap); /* the old set is freed first */
    if (over(c, env, b))
        return CLOS_TOO_BIG;
    note_peak(c, b);
    free(c->set);
    c->set = NULL;
    c->scap = 0;
    uint64_t *ns = malloc(sizeof *ns * (size_t)ncap);
    if (!ns)
        return CLOS_OOM;
    memset(ns, 0xFF, sizeof *ns * (size_t)ncap);
    const uint64_t n = c->n;
    /* in parallel only on disk, where a level's set is never saved: the
     * in-memory closure's set is written into solution files, in the order
     * a serial rebuild gives whatever the thread count */
    const int nt = c->dk && env->threads > 1 && n >= ((uint64_t)1 << 14) ? env->threads : 1;
    if (nt == 1) {
        for (uint64_t i = 0; i < n; i++)
            set_put(ns, ncap, clos_hash(&c->key[i * c->K], c->K), (uint32_t)i);
    } else {
        /* the keys are distinct, so threads only race for empty cells: a
         * cell taken under a thread's feet sends it to the next one.  The
         * cells' order then depends on the threads, which nothing reads:
         * a lookup finds its key wherever the probe put it. */
#pragma omp parallel for num_threads(nt) schedule(static, 4096)
        for (uint64_t i = 0; i < n; i++) {
            uint64_t h = clos_hash(&c->key[i * c->K], c->K), s = slot_of(h, ncap);
            const uint64_t cell = make_cell(h, (uint32_t)i);
            for (;;) {
                uint64_t x = EMPTY_CELL;
                if (__atomic_load_n(&ns[s], __ATOMIC_RELAXED) == EMPTY_CELL &&
                    __atomic_compare_exchange_n(&ns[s], &x, cell, false, __ATOMIC_RELAXED,
                                                __ATOMIC_RELAXED))
                    break;
                s = s + 1 == ncap ? 0 : s + 1;
            }
        }
    }
    c->set = ns;
    c->scap = ncap;
    return CLOS_OK;
}

static uint64_t set_cap_for(uint64_t n)
{
    uint64_t s = n / LOAD_NUM * LOAD_DEN + 1024;
    return s;
}

uint64_t clos_set_cells_for(uint64_t n) { return set_cap_for(n); }

/* The node arrays of a closure on disk: while its levels are expanded
 * (keys_only) only keys, which the expansion appends to and the set points
 * into (no values yet: 3 bytes a position less); while they are solved
 * keys and values, allocated anew (dk_up reads the keys from the level's
 * file). */
static void dk_keys_only(struct clos *c, bool on)
{
    if (on == c->keys_only)
        return;
    if (on) {
        free(c->lo);
        free(c->hi);
        free(c->v);
        c->lo = c->hi = c->v = NULL;
    } else {
        keys_free(c);
        c->cap = 0;
    }
    c->keys_only = on;
}

/* What a level of n positions on disk holds at most: while expanded its
 * keys and set (no values yet: dk_keys_only); while solved, with reverse
 * edges (um false), while its moves are listed its keys, values and
 * dk_work_per (no set: the in-level children are found by binary search in
 * its sorted keys), in the retrograde the values, dk_work_per and the
 * stack, the keys freed (8 bytes a key or more, so never above the
 * listing); by unmoves (um), its keys, values and dk_um_per. */
static double dk_need_by(const struct clos *c, const struct clos_env *env, uint64_t n,
                         double deg, bool um)
{
    const double kb = 8.0 * c->K * (double)n;
    double down = kb + 8.0 * (double)set_cap_for(n); /* keys only (dk_keys_only) */
    double up = kb + 3.0 * (double)n + (um ? dk_um_per(env, n) * (double)n + UM_FIXED(env->threads)
                                           : dk_work_per(deg) * (double)n);
    _Static_assert(sizeof(int32_t) * 2 <= 8, "the stack fits where the keys were");
    return down > up ? down : up;
}

/* dk_need_by with the predecessors the budget can always count on: unmoves
 * where the rule set has them (dk_up takes reverse edges instead when they
 * fit). */
static double dk_need(const struct clos *c, const struct clos_env *env, uint64_t n, double deg)
{
    return dk_need_by(c, env, n, deg, c->um);
}

/* The most positions a level on disk can hold while expanded under the
 * budget (its keys and set: dk_need's down pass). */
static uint64_t dk_most(const struct clos *c, const struct clos_env *env)
{
    double per = 8.0 * c->K + 8.0 * LOAD_DEN / LOAD_NUM;
    double n = (env->memory - 8.0 * 1024) / per;
    return n > 0 ? (uint64_t)n : 0;
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

/* ---- expansion ---- */

struct exp_thread {
    struct sow_movelist ml;
    uint64_t lvl[SOW_MAX_SEEDS + 1]; /* positions added, per level */
};

static inline bool tb_exit(const struct clos_env *env, int tbmax, const struct sow_child *ch, int cl,
                           int *tv)
{
    return ch->captured[0] + ch->captured[1] && cl <= tbmax && tb_probe(env->tb, &ch->pos, tv);
}

/* Expand node i: generate its moves once, add the children. */
static inline void expand(struct clos *c, const struct clos_env *env, uint64_t i, int tid,
                          int tbmax, bool par, struct exp_thread *et)
{
    const struct ruleset *rs = c->rs;
    sow_position p;
    struct sow_movelist *ml = &et->ml;
    clos_unpack(rs, c->K, &c->key[i * c->K], &p);
    rs->generate(rs, &p, ml, env->cache[tid], NULL);
    env->nodes[tid]++;
    env->visits[tid] += (uint64_t)ml->n;
    int n = key_level(&c->key[i * c->K], c->K);
    uint64_t w[SOW_MAX_PITS + 1][MAX_KEY_WORDS], h[SOW_MAX_PITS + 1];
    int cls[SOW_MAX_PITS + 1], nk = 0;
    for (int k = 0; k < ml->n; k++) {
        const struct sow_child *ch = &ml->c[k];
        int cl = n - ch->captured[0] - ch->captured[1], tv;
        if (tb_exit(env, tbmax, ch, cl, &tv)) {
            if (cl <= env->tb_hits_max)
                env->tb_hits[tid]++;
            continue;
        }
        clos_pack(rs, c->K, &ch->pos, w[nk]);
        h[nk] = clos_hash(w[nk], c->K);
        set_prefetch(c, h[nk]);
        cls[nk++] = cl;
    }
    for (int k = 0; k < nk; k++) {
        bool added = false;
        set_insert(c, w[k], h[k], par, &added);
        if (added)
            et->lvl[cls[k]]++;
    }
}

static bool stopped(const struct clos_env *env)
{
    return env->stop && *env->stop;
}

static void say(const struct clos_env *env, double *last, bool force, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void say(const struct clos_env *env, double *last, bool force, const char *fmt, ...)
{
    if (!env->progress)
        return;
    double now = util_now();
    if (!force && now - *last < 1.0)
        return;
    *last = now;
    char line[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    env->progress(env->progress_arg, line);
}

/* Bytes the whole solve needs with N positions of which the largest level
 * holds L: the expansion's arrays, the renumbering (two key arrays, no
 * set), the level phase (arrays, set and the largest level's work). */
static double solve_need(const struct clos *c, uint64_t N, uint64_t L)
{
    uint64_t cap = N + N / 2, scap = set_cap_for(N) * 3 / 2;
    double expand = arrays_bytes(c, cap, scap);
    double renum = (double)N * (16.0 * c->K + 3.0);
    double level = arrays_bytes(c, N, set_cap_for(N)) + level_work_per(c) * (double)L;
    double m = expand > renum ? expand : renum;
    return m > level ? m : level;
}

/* Where the expansion stands between two rounds: nodes [0, a) expanded,
 * [a, end) the rest of the current layer, [end, n) found by it so far.
 * Everything a rerun needs to go on exactly as if never stopped (the
 * expansion checkpoint, "checkpoints" below). */
struct exp_state {
    uint64_t a, end, layers, prev_frontier, prev_found;
};

/* What an expansion checkpoint is checked against (ck_save_expand). */
struct ck_meta;
struct exp_ck {
    int tbmax;
    const uint64_t *root;
    const struct ck_meta *base; /* counters before this build */
};
static bool ck_save_expand(const struct clos *c, const struct clos_env *env,
                           const struct exp_ck *ck, const struct exp_state *st);

/* Expand from *st (fresh: all 0, the root alone found; resumed: as the
 * checkpoint left it).  With env->work the state is saved at a round
 * boundary when stopped, when the budget refuses the next layer (a rerun
 * with more --memory goes on) and at most every CKPT_EVERY seconds at a
 * layer's start; a capped try (env->max_nodes) is never saved: it would
 * replace the checkpoint of the solve it precedes. */
static enum clos_err expand_all(struct clos *c, const struct clos_env *env, int tbmax,
                                struct clos_info *info, uint64_t *lvl, struct exp_state *st,
                                const struct exp_ck *ck)
{
    const uint64_t slots = (uint64_t)c->slots;
    uint64_t a = st->a, end = st->end, prev_frontier = st->prev_frontier,
             prev_found = st->prev_found;
    int nt = env->threads;
    double last = 0, t0 = util_now(), lastck = t0;
    const bool keep = env->work && env->max_nodes == UINT64_MAX;
    struct exp_thread *et = calloc((size_t)nt, sizeof *et);
    if (!et)
        return CLOS_OOM;
    info->layers = st->layers;
    if (c->n > 1) { /* resumed: the positions found so far, per level */
        for (uint64_t i = 0; i < c->n; i++)
            et[0].lvl[key_level(&c->key[i * c->K], c->K)]++;
        et[0].lvl[key_level(&c->key[0], c->K)]--; /* the root is added apart */
    }
    enum clos_err e = CLOS_OK;
    while (a < c->n) {
        struct exp_state top = {a, end, info->layers, prev_frontier, prev_found};
        if (stopped(env)) {
            if (keep && ck_save_expand(c, env, ck, &top))
                say(env, &last, true, "stopped: the expansion (%llu positions, %llu expanded) "
                    "kept in %s", (unsigned long long)c->n, (unsigned long long)a, env->work);
            e = CLOS_STOPPED;
            break;
        }
        if (keep && a == end && a > 0 && util_now() - lastck >= CKPT_EVERY) {
            ck_save_expand(c, env, ck, &top);
            lastck = util_now();
        }
        if (a == end) {
            /* A breadth-first layer starts: [a, end) are the positions the
             * last layer found.  Limits are checked here, where the positions
             * found so far are the same set whatever the thread count
             * (within a layer, the order of indices is not), so that a
             * refused closure has cost the same nodes every time. */
            end = c->n;
            uint64_t frontier = end - a;
            memset(lvl, 0, sizeof *lvl * (SOW_MAX_SEEDS + 1));
            uint64_t L = 0;
            for (int t = 0; t < nt; t++)
                for (int m = 0; m <= SOW_MAX_SEEDS; m++)
                    lvl[m] += et[t].lvl[m];
            lvl[key_level(&c->key[0], c->K)]++; /* the root */
            for (int m = 0; m <= SOW_MAX_SEEDS; m++)
                if (lvl[m] > L)
                    L = lvl[m];
            /* next layer: the last layer's growth per position expanded
             * (moves per position at first), at most all moves new */
            double g = prev_frontier ? (double)prev_found / (double)prev_frontier : (double)slots;
            if (g > (double)slots)
                g = (double)slots;
            uint64_t est = c->n + (uint64_t)(g * (double)frontier);
            uint64_t Lest = (uint64_t)((double)L * ((double)est / (double)c->n)) + 1;
            double need = solve_need(c, est, Lest);
            info->layers++;
            info->next_est = est;
            info->need = need;
            memcpy(info->level_count, lvl, sizeof info->level_count); /* found so far */
            double dt = util_now() - t0;
            say(env, &last, frontier >= BIG_LINE,
                "closure layer %llu: %llu positions (%llu to expand), %.2f M/s, %.2f GB held "
                "(%.1f B/position); with the next layer the solve needs ~%.2f GB",
                (unsigned long long)info->layers, (unsigned long long)c->n,
                (unsigned long long)frontier, dt > 0 ? (double)(a - st->a) / dt / 1e6 : 0.0,
                arrays_bytes(c, c->cap, c->scap) / 1e9,
                arrays_bytes(c, c->cap, c->scap) / (double)c->n, need / 1e9);
            if (c->n > env->max_nodes) {
                e = CLOS_TOO_BIG;
                break;
            }
            if (over(c, env, need) || est > MAX_NODES) {
                info->by_memory = est <= MAX_NODES;
                e = CLOS_TOO_BIG;
                if (keep && info->by_memory && ck_save_expand(c, env, ck, &top))
                    say(env, &last, true, "the expansion so far (%llu positions) kept in %s: "
                        "a rerun with more --memory goes on from there",
                        (unsigned long long)c->n, env->work);
                break;
            }
            prev_frontier = frontier;
            prev_found = 0;
        }
        uint64_t want = end - a;
        uint64_t limit = c->scap / LOAD_DEN * LOAD_NUM;
        uint64_t room = limit > c->n ? (limit - c->n) / slots : 0;
        if (room < want && room < 4096) {
            /* by half each time (rounds shrink to the room left), so that
             * the set never jumps to a layer's worst case of all moves new */
            uint64_t ncap = c->scap * 3 / 2, least = set_cap_for(c->n + 4096 * slots);
            if ((e = rebuild_set(c, env, ncap > least ? ncap : least)) != CLOS_OK) {
                info->by_memory = e == CLOS_TOO_BIG;
                break;
            }
            continue;
        }
        uint64_t r = want < room ? want : room;
        if ((e = grow_nodes(c, env, c->n + r * slots)) != CLOS_OK) {
            info->by_memory = e == CLOS_TOO_BIG;
            break;
        }
        uint64_t b = a + r, before = c->n;
        bool par = nt > 1 && r >= 256;
        if (!par) {
            for (uint64_t i = a; i < b; i++)
                expand(c, env, i, 0, tbmax, false, &et[0]);
        } else {
#pragma omp parallel num_threads(nt)
            {
                int tid = omp_get_thread_num();
#pragma omp for schedule(dynamic, 64) nowait
                for (uint64_t i = a; i < b; i++)
                    expand(c, env, i, tid, tbmax, true, &et[tid]);
            }
        }
        prev_found += c->n - before;
        a = b;
        say(env, &last, false, "closure: %llu positions found, %llu expanded, %.2f GB held",
            (unsigned long long)c->n, (unsigned long long)a,
            arrays_bytes(c, c->cap, c->scap) / 1e9);
    }
    if (e == CLOS_OK) {
        memset(lvl, 0, sizeof *lvl * (SOW_MAX_SEEDS + 1));
        for (int t = 0; t < nt; t++)
            for (int m = 0; m <= SOW_MAX_SEEDS; m++)
                lvl[m] += et[t].lvl[m];
        lvl[key_level(&c->key[0], c->K)]++;
    }
    free(et);
    info->expand_s = util_now() - t0;
    return e;
}

/* ---- renumbering by level ---- */

static enum clos_err renumber(struct clos *c, const struct clos_env *env, const uint64_t *lvl)
{
    const int K = c->K;
    const uint64_t N = c->n;
    free(c->set);
    c->set = NULL;
    c->scap = 0;
    double b = (double)c->cap * (8.0 * K + 3.0) + (double)N * 8.0 * K;
    if (over(c, env, b))
        return CLOS_TOO_BIG;
    note_peak(c, b);
    const size_t nb = keys_bytes(N * K + 1);
    uint64_t *nk = keys_map(nb);
    if (!nk)
        return CLOS_OOM;
    uint64_t pos[SOW_MAX_SEEDS + 1];
    c->start[0] = 0;
    for (int m = 0; m <= SOW_MAX_SEEDS; m++) {
        c->start[m + 1] = c->start[m] + lvl[m];
        pos[m] = c->start[m];
    }
    for (uint64_t i = 0; i < N; i++) {
        const uint64_t *w = &c->key[i * K];
        uint64_t j = pos[key_level(w, K)]++;
        memcpy(&nk[j * K], w, (size_t)K * 8);
    }
    keys_free(c);
    c->key = nk;
    c->kbytes = nb;
    /* shrink the value arrays to N */
    int8_t *x;
    if ((x = realloc(c->lo, N + 1)))
        c->lo = x;
    if ((x = realloc(c->hi, N + 1)))
        c->hi = x;
    if ((x = realloc(c->v, N + 1)))
        c->v = x;
    c->cap = N;
    return rebuild_set(c, env, set_cap_for(N));
}

/* ---- values ---- */

/* The cycle value of the normalised node (mover = side A). */
static inline int cycle_value(const struct clos *c, const sow_position *p)
{
    int s0 = 0, s1 = 0;
    for (int j = 0; j < c->pits; j++) {
        s0 += p->board.h[j];
        s1 += p->board.h[j + c->pits];
    }
    return rules_cycle_net(c->rs, s0, s1);
}

static inline int8_t clamp8(int x, int lo, int hi)
{
    return (int8_t)(x < lo ? lo : x > hi ? hi : x);
}

struct level_work {
    int8_t *be;
    uint8_t *cnt;
    uint32_t *fwd;  /* [Nl * slots]: local in-level children, UINT32_MAX past the last (LM_FWD) */
    uint32_t *roff; /* [Nl + 1] */
    uint32_t *rev;
    int32_t *next;  /* [2 Nl]: bucket links (NULL: the buckets are scans, dk_up) */
    int32_t *stack; /* [scap] */
    uint64_t nl;    /* positions of the level being solved */
    /* (disk, single sowing: um_preds) no reverse edges: the predecessors by
     * un-sowing, found in the level's sorted keys (c->key); the stack then
     * holds scap < 2 Nl copies and the rest wait in the bitmap pend */
    struct tb_unmove *um; /* [nt * TB_UNMOVE_MAX]: each thread's unmoves */
    uint32_t *pbuf;       /* [UM_BATCH * TB_UNMOVE_MAX]: the batch's predecessors */
    uint16_t *pcnt;       /* [UM_BATCH]: how many each */
    int32_t *batch;       /* [UM_BATCH]: copies taken off the stack */
    uint64_t *pend;       /* [(2 Nl + 63) / 64]: copies final, not yet pushed */
    int64_t scap;         /* the stack's entries */
    int nt;               /* threads for um_batch */
};

/* What level_moves does with a node's in-level children: keep them in its
 * forward slots (the in-memory closure), count them into roff[q + 1], or
 * (the moves generated a second time) put the node into rev at roff[q]'s
 * cursor.  The last two build the reverse edges without forward slots (the
 * closure on disk: 4 * slots bytes a position less); roff and the cursors
 * are shared, so they count with atomic adds. */
enum lm_mode { LM_FWD, LM_COUNT, LM_FILL };

/* Generate node i's moves again: be, in-level children (as mode says; be and
 * cnt are left alone by LM_FILL, which looks at in-level children only). */
static inline void level_moves(struct clos *c, const struct clos_env *env, int m, uint64_t s0,
                               uint64_t i, int tid, int tbmax, struct sow_movelist *ml,
                               struct level_work *w, bool *missing, enum lm_mode mode)
{
    const struct ruleset *rs = c->rs;
    const uint64_t li = i - s0;
    sow_position p;
    clos_unpack(rs, c->K, &c->key[i * c->K], &p);
    rs->generate(rs, &p, ml, env->cache[tid], NULL);
    uint32_t *fw = mode == LM_FWD ? &w->fwd[li * (uint64_t)c->slots] : NULL;
    int b, deg = 0;
    if (ml->n > c->slots) { /* more moves than slots: cannot happen with the rule sets */
        *missing = true;
        ml->n = 0;
        b = 0;
    } else if (ml->n == 0) {
        b = ml->settle[0] - ml->settle[1];
    } else {
        b = NO_EXIT;
        /* keys and hashes first, cells prefetched, then the look-ups */
        uint64_t kw[SOW_MAX_PITS + 1][MAX_KEY_WORDS], kh[SOW_MAX_PITS + 1];
        int tvs[SOW_MAX_PITS + 1];
        bool tbx[SOW_MAX_PITS + 1];
        for (int k = 0; k < ml->n; k++) {
            const struct sow_child *ch = &ml->c[k];
            int cap = ch->captured[0] + ch->captured[1];
            if (cap && mode == LM_FILL)
                continue;
            tbx[k] = cap && tb_exit(env, tbmax, ch, m - cap, &tvs[k]);
            if (tbx[k])
                continue;
            clos_pack(rs, c->K, &ch->pos, kw[k]);
            if (c->set) {
                kh[k] = clos_hash(kw[k], c->K);
                set_prefetch(c, kh[k]);
            }
        }
        /* on disk the look-ups are binary searches in sorted keys (the
         * lower levels' files, the level's own keys): all of this node's at
         * once, their probes interleaved so that the cache misses overlap */
        int64_t qs[SOW_MAX_PITS + 1];
        if (c->dk || !c->set) {
            const uint64_t *ks[SOW_MAX_PITS + 1];
            uint64_t ns[SOW_MAX_PITS + 1];
            int at[SOW_MAX_PITS + 1], nq = 0;
            for (int k = 0; k < ml->n; k++) {
                int cap = ml->c[k].captured[0] + ml->c[k].captured[1];
                qs[k] = -1;
                if ((cap && (mode == LM_FILL || tbx[k] || !c->dk)) || (!cap && c->set))
                    continue;
                ks[nq] = cap ? dk_keys(c, m - cap, &ns[nq]) : c->key;
                if (!cap)
                    ns[nq] = c->n;
                if (!ks[nq])
                    continue;
                at[nq++] = k;
            }
            uint64_t qw[SOW_MAX_PITS + 1][MAX_KEY_WORDS];
            int64_t qo[SOW_MAX_PITS + 1];
            for (int j = 0; j < nq; j++)
                memcpy(qw[j], kw[at[j]], sizeof qw[j]);
            key_find_many(ks, ns, (const uint64_t(*)[MAX_KEY_WORDS])qw, nq, c->K, qo);
            for (int j = 0; j < nq; j++)
                qs[at[j]] = qo[j];
        }
        for (int k = 0; k < ml->n; k++) {
            const struct sow_child *ch = &ml->c[k];
            int cap = ch->captured[0] + ch->captured[1];
            if (cap && mode == LM_FILL)
                continue;
            if (cap) {
                int d = ch->captured[0] - ch->captured[1], val;
                if (tbx[k]) {
                    val = d - tvs[k];
                } else if (c->dk) { /* the lower levels are in files */
                    int64_t q = qs[k];
                    if (q < 0) {
                        *missing = true;
                        continue;
                    }
                    val = d - dk_value(c, m - cap, q);
                } else {
                    int64_t q = set_find_h(c, kw[k], kh[k]);
                    if (q < 0) {
                        *missing = true;
                        continue;
                    }
                    val = d - c->v[q];
                }
                if (val > b)
                    b = val;
                continue;
            }
            /* no set: a level on disk, solved (dk_up), its keys sorted */
            int64_t q = c->set ? set_find_h(c, kw[k], kh[k]) : qs[k];
            if (q < 0 || (uint64_t)q < s0 || (uint64_t)q - s0 >= w->nl) {
                *missing = true;
                continue;
            }
            uint32_t lq = (uint32_t)((uint64_t)q - s0);
            if (mode == LM_FWD)
                fw[deg] = lq;
            else if (mode == LM_COUNT && w->roff)
                __atomic_fetch_add(&w->roff[lq + 1], 1, __ATOMIC_RELAXED);
            else if (mode == LM_FILL) /* (no roff: the predecessors by unmoves) */
                w->rev[__atomic_fetch_add(&w->roff[lq], 1, __ATOMIC_RELAXED)] = (uint32_t)li;
            deg++;
        }
    }
    if (mode == LM_FILL)
        return;
    if (mode == LM_FWD && deg < c->slots)
        fw[deg] = UINT32_MAX;
    if (b != NO_EXIT)
        b = clamp8(b, -m, m); /* clamping commutes with max/min */
    w->be[li] = (int8_t)b;
    w->cnt[li] = (uint8_t)deg;
}

/* level_moves of nodes [s0, s0 + n) of level m, on env->threads threads
 * (one below 256 nodes), in chunks taken in turn.  A level of a billion
 * positions takes minutes here, so the calling thread (tid 0) says how far
 * it is (lm_pass names the pass) and watches for Ctrl-C between its chunks;
 * false: stopped, the pass left unfinished (the caller drops the level). */
static const char *const lm_pass[] = {"moves", "moves counted", "moves listed"};

/* What the threads of one level_moves_all share. */
struct lm_share {
    uint64_t next, chunk; /* the next chunk's first node (level-local), its size */
    bool stop;            /* Ctrl-C seen by the calling thread */
    double t0, last;      /* the pass's start, its last line of progress */
};

/* Thread tid's part of level_moves_all: chunks until none is left. */
static void lm_run(struct clos *c, const struct clos_env *env, int m, uint64_t s0, uint64_t n,
                   int tbmax, struct level_work *w, bool *missing, enum lm_mode mode, int tid,
                   struct lm_share *sh)
{
    struct sow_movelist ml;
    bool miss = false;
    for (;;) {
        const uint64_t a = __atomic_fetch_add(&sh->next, sh->chunk, __ATOMIC_RELAXED);
        if (a >= n || __atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
            break;
        const uint64_t b = a + sh->chunk < n ? a + sh->chunk : n;
        for (uint64_t i = s0 + a; i < s0 + b; i++)
            level_moves(c, env, m, s0, i, tid, tbmax, &ml, w, &miss, mode);
        if (tid != 0)
            continue;
        double dt = util_now() - sh->t0, rate = dt > 0 ? (double)b / dt : 0;
        say(env, &sh->last, false,
            "%s level %d: %s for %llu of %llu positions, %.2f M/s, ETA %.0f s",
            c->dk ? "closure on disk," : "closure", m, lm_pass[mode], (unsigned long long)b,
            (unsigned long long)n, rate / 1e6, rate > 0 ? (double)(n - b) / rate : 0.0);
        if (stopped(env)) {
            __atomic_store_n(&sh->stop, true, __ATOMIC_RELAXED);
            break;
        }
    }
    if (miss)
        __atomic_store_n(missing, true, __ATOMIC_RELAXED);
}

static bool level_moves_all(struct clos *c, const struct clos_env *env, int m, uint64_t s0,
                            uint64_t n, int tbmax, struct level_work *w, bool *missing,
                            enum lm_mode mode)
{
    const int nt = env->threads;
    struct lm_share sh = {.chunk = n >= BIG_LINE ? 4096 : 256, .t0 = util_now()};
    sh.last = env->eager_lines ? 0 : sh.t0;
    if (nt > 1 && n >= 256) {
#pragma omp parallel num_threads(nt)
        lm_run(c, env, m, s0, n, tbmax, w, missing, mode, omp_get_thread_num(), &sh);
    } else {
        lm_run(c, env, m, s0, n, tbmax, w, missing, mode, 0, &sh);
    }
    return !sh.stop;
}

/* roff[q + 1] holding q's in-level predecessors counted: each list's start
 * (roff[q]) and end (roff[q + 1]). */
static void roff_sum(uint32_t *roff, uint64_t Nl)
{
    for (uint64_t p = 0; p < Nl; p++)
        roff[p + 1] += roff[p];
}

/* After rev was filled at the cursors roff[q]++ (which then hold where the
 * next list starts), roff back to the lists' starts. */
static void roff_back(uint32_t *roff, uint64_t Nl)
{
    for (uint64_t p = Nl; p > 0; p--)
        roff[p] = roff[p - 1];
    roff[0] = 0;
}

/* The reverse CSR of the in-level edges (roff, rev) from the forward slots. */
static void reverse_edges(const struct clos *c, uint64_t Nl, struct level_work *w)
{
    const int slots = c->slots;
    memset(w->roff, 0, sizeof *w->roff * (Nl + 1));
    for (uint64_t p = 0; p < Nl; p++)
        for (int k = 0; k < w->cnt[p]; k++)
            w->roff[w->fwd[p * slots + k] + 1]++;
    roff_sum(w->roff, Nl);
    for (uint64_t p = 0; p < Nl; p++)
        for (int k = 0; k < w->cnt[p]; k++) {
            uint32_t q = w->fwd[p * slots + k];
            w->rev[w->roff[q]++] = (uint32_t)p;
        }
    roff_back(w->roff, Nl);
}

/* The in-level predecessors of copies batch[j0 .. j1) (level-local
 * indices, once per move, as reverse edges would list them: pbuf at
 * j * TB_UNMOVE_MAX, pcnt[j] of them), for a level on disk of a
 * single-sowing rule set: each node's unmoves (tables/tb_lean.h: every
 * position with a move that captures nothing and leads to it) looked up in
 * the level's sorted keys; one not found is not in the closure (the root
 * does not reach it), so it has no edge here.  KF_MAX look-ups at a time
 * run interleaved (key_find_many), across nodes.  Thread tid's buffers. */
struct um_looks {
    const uint64_t *ks[KF_MAX];
    uint64_t ns[KF_MAX], qw[KF_MAX][MAX_KEY_WORDS];
    int of[KF_MAX], nq; /* the copy each look-up is for; how many wait */
};

/* The waiting look-ups made, each found one appended to its copy's list. */
static void um_flush(const struct clos *c, struct level_work *w, struct um_looks *lk)
{
    int64_t r[KF_MAX];
    key_find_many(lk->ks, lk->ns, (const uint64_t(*)[MAX_KEY_WORDS])lk->qw, lk->nq, c->K, r);
    for (int i = 0; i < lk->nq; i++)
        if (r[i] >= 0)
            w->pbuf[(size_t)lk->of[i] * TB_UNMOVE_MAX + w->pcnt[lk->of[i]]++] = (uint32_t)r[i];
    lk->nq = 0;
}

static void um_chunk(const struct clos *c, struct level_work *w, int j0, int j1, int tid)
{
    const int K = c->K;
    struct tb_unmove *um = &w->um[(size_t)tid * TB_UNMOVE_MAX];
    struct um_looks lk;
    lk.nq = 0;
    for (int j = j0; j < j1; j++) {
        sow_position qp;
        clos_unpack(c->rs, K, &c->key[(uint64_t)((uint32_t)w->batch[j] >> 1) * K], &qp);
        const int k = tb_unmoves(c->rs, &qp, um, TB_UNMOVE_MAX);
        w->pcnt[j] = 0;
        for (int a = 0; a < k; a++) {
            /* an unmove keeps the board's seeds, so it packs in K words */
            if (!clos_pack(c->rs, K, &um[a].pos, lk.qw[lk.nq]))
                continue;
            lk.ks[lk.nq] = c->key;
            lk.ns[lk.nq] = w->nl;
            lk.of[lk.nq++] = j;
            if (lk.nq == KF_MAX)
                um_flush(c, w, &lk);
        }
    }
    if (lk.nq)
        um_flush(c, w, &lk);
}

/* um_chunk of batch[0 .. nb), split between w->nt threads (the look-ups
 * only read the keys; each copy's list is written by one thread). */
static void um_batch(const struct clos *c, struct level_work *w, int nb)
{
    if (w->nt > 1 && nb >= 64) {
#pragma omp parallel num_threads(w->nt)
        {
            int tid = omp_get_thread_num(), nt = omp_get_num_threads();
            um_chunk(c, w, nb * tid / nt, nb * (tid + 1) / nt, tid);
        }
    } else {
        um_chunk(c, w, 0, nb, 0);
    }
}

/* The stack refilled with copies waiting in w->pend (they were final while
 * the stack of w->scap entries was full): up to scap of them, from the word
 * *cur on, round the bitmap; returns how many. */
static int64_t pend_refill(struct level_work *w, uint64_t words, uint64_t *cur, uint64_t *npend)
{
    int64_t sp = 0;
    while (*npend && sp < w->scap) {
        uint64_t x = w->pend[*cur];
        while (x && sp < w->scap) {
            w->stack[sp++] = (int32_t)(*cur * 64 + (uint64_t)__builtin_ctzll(x));
            x &= x - 1;
            (*npend)--;
        }
        w->pend[*cur] = x;
        if (!x)
            *cur = *cur + 1 == words ? 0 : *cur + 1;
    }
    return sp;
}

/* The bucket-queue retrograde of level m, nodes [s0, s0 + Nl), with its
 * reverse edges in w->roff, w->rev.  Each node has two copies, L (lo: the
 * mover's best so far) and H (hi); a copy is final once its value t is
 * known, and the thresholds t go from m down to -m.  The buckets of t are
 * either linked lists (w->next) or, with w->next NULL, a scan of the level
 * at each t that occurs: L at t where be = t, H at t where be = -t and no
 * in-level move is left; the scan finds the same copies as the lists (the
 * closure on disk, 8 bytes a position less), at 2m + 1 passes over be and
 * cnt at most.  A line of progress at most once a second (the threshold t
 * and the copies final so far); false: stopped by Ctrl-C, lo and hi left
 * unfinished (the caller drops the level). */
static bool solve_level(struct clos *c, const struct clos_env *env, int m, uint64_t s0, uint64_t Nl,
                        struct level_work *w)
{
    int8_t *xl = c->lo + s0, *xh = c->hi + s0, *be = w->be;
    int32_t head[2 * SOW_MAX_SEEDS + 1];
    int32_t *next = w->next, *stack = w->stack;
    const bool scan = !next;
    /* a copy final while the stack is full waits in pend (um_preds) */
    const int64_t scap = w->scap;
    uint64_t npend = 0, cur = 0, words = (2 * Nl + 63) / 64;
    uint64_t fin = 0, steps = 0; /* copies final; stack pops since the last look at the clock */
    const double t0 = util_now();
    double last = env->eager_lines ? 0 : t0;
#define PUSH(e_)                                                                                  \
    do {                                                                                          \
        int32_t x_ = (e_);                                                                        \
        fin++;                                                                                    \
        if (sp < scap) {                                                                          \
            stack[sp++] = x_;                                                                     \
        } else {                                                                                  \
            w->pend[(uint32_t)x_ >> 6] |= 1ull << (x_ & 63);                                      \
            npend++;                                                                              \
        }                                                                                         \
    } while (0)
    uint64_t occurs[2 * SOW_MAX_SEEDS + 1] = {0}; /* nodes with be = t, for the scans */
    bool looked = false; /* (eager_lines) the first look at the clock made */

    for (int t = 0; t < 2 * SOW_MAX_SEEDS + 1; t++)
        head[t] = -1;
    for (uint64_t p = 0; p < Nl; p++) {
        int b = be[p];
        xl[p] = xh[p] = UNDONE;
        if (b != NO_EXIT && scan) {
            occurs[b + SOW_MAX_SEEDS]++;
        } else if (b != NO_EXIT) {
            int32_t e = (int32_t)(2 * p);
            next[e] = head[b + SOW_MAX_SEEDS];
            head[b + SOW_MAX_SEEDS] = e;
            if (w->cnt[p] == 0) {
                next[e + 1] = head[-b + SOW_MAX_SEEDS];
                head[-b + SOW_MAX_SEEDS] = e + 1;
            }
        }
    }
    for (int t = m; t >= -m; t--) {
        int64_t sp = 0;
        if (!scan) {
            for (int32_t e = head[t + SOW_MAX_SEEDS]; e >= 0; e = next[e]) {
                uint32_t p = (uint32_t)e >> 1;
                int8_t *x = (e & 1) ? &xh[p] : &xl[p];
                if (*x == UNDONE) {
                    *x = (int8_t)t;
                    PUSH(e);
                }
            }
        } else if (occurs[t + SOW_MAX_SEEDS] || occurs[-t + SOW_MAX_SEEDS]) {
            for (uint64_t p = 0; p < Nl; p++) {
                if (be[p] == NO_EXIT)
                    continue;
                if (be[p] == t && xl[p] == UNDONE) {
                    xl[p] = (int8_t)t;
                    PUSH((int32_t)(2 * p));
                }
                if (be[p] == -t && w->cnt[p] == 0 && xh[p] == UNDONE) {
                    xh[p] = (int8_t)t;
                    PUSH((int32_t)(2 * p + 1));
                }
            }
        }
        while (sp || (npend && (sp = pend_refill(w, words, &cur, &npend)))) {
            if (++steps >= (1u << 16) || (env->eager_lines && !looked)) {
                steps = 0;
                looked = true;
                say(env, &last, false, "%s level %d: retrograde at %d (from %d down to %d), %llu "
                    "of %llu bounds final, %.0f s so far", c->dk ? "closure on disk," : "closure",
                    m, t, m, -m, (unsigned long long)fin, (unsigned long long)(2 * Nl),
                    util_now() - t0);
                if (stopped(env))
                    return false;
            }
            /* one copy at a time with reverse edges; with unmoves a batch,
             * its look-ups made first (um_batch) */
            int nb = 1;
            int32_t one;
            const int32_t *eb = &one;
            if (w->rev) {
                one = stack[--sp];
            } else {
                nb = sp < UM_BATCH ? (int)sp : UM_BATCH;
                sp -= nb;
                memcpy(w->batch, &stack[sp], sizeof *stack * (size_t)nb);
                um_batch(c, w, nb);
                steps += (uint64_t)nb; /* a batch costs about nb pops' look-ups */
                eb = w->batch;
            }
            for (int j = 0; j < nb; j++) {
                int32_t e = eb[j];
                uint32_t q = (uint32_t)e >> 1;
                const uint32_t *pr, *pe;
                if (w->rev) {
                    pr = &w->rev[w->roff[q]];
                    pe = &w->rev[w->roff[q + 1]];
                } else {
                    pr = &w->pbuf[(size_t)j * TB_UNMOVE_MAX];
                    pe = pr + w->pcnt[j];
                }
                if (!(e & 1)) {
                    /* (q,L) final at t: H copies of its predecessors count down */
                    for (; pr < pe; pr++) {
                        uint32_t p = *pr;
                        if (xh[p] != UNDONE || --w->cnt[p])
                            continue;
                        int val = be[p] == NO_EXIT || -be[p] >= t ? t : -be[p];
                        if (val == t) {
                            xh[p] = (int8_t)t;
                            PUSH((int32_t)(2 * p + 1));
                        } else if (!scan) {
                            next[2 * p + 1] = head[val + SOW_MAX_SEEDS];
                            head[val + SOW_MAX_SEEDS] = (int32_t)(2 * p + 1);
                        } /* else the scan at val finds it: be = -val, cnt 0 */
                    }
                } else {
                    /* (q,H) final at t: L copies of its predecessors reach t */
                    for (; pr < pe; pr++) {
                        uint32_t p = *pr;
                        if (xl[p] == UNDONE) {
                            xl[p] = (int8_t)t;
                            PUSH((int32_t)(2 * p));
                        }
                    }
                }
            }
        }
    }
#undef PUSH
    for (uint64_t p = 0; p < Nl; p++) {
        xl[p] = (int8_t)(xl[p] == UNDONE ? -m : clamp8(xl[p], -m, m));
        xh[p] = (int8_t)(xh[p] == UNDONE ? m : clamp8(-xh[p], -m, m));
    }
    return true;
}

/* V of nodes s0 .. s0+Nl-1, their bounds solved (solve_level): the
 * repetition rule's value clamped into them.  keys: those nodes' keys (the
 * node array, or a block read back from a level's file on disk). */
static void level_values(struct clos *c, uint64_t s0, uint64_t Nl, const uint64_t *keys)
{
    for (uint64_t p = 0; p < Nl; p++) {
        sow_position pos;
        clos_unpack(c->rs, c->K, &keys[p * c->K], &pos);
        c->v[s0 + p] = clamp8(cycle_value(c, &pos), c->lo[s0 + p], c->hi[s0 + p]);
    }
}

static void free_work(struct level_work *w)
{
    free(w->um);
    free(w->pbuf);
    free(w->pcnt);
    free(w->batch);
    free(w->pend);
    free(w->be);
    free(w->cnt);
    free(w->fwd);
    free(w->roff);
    free(w->rev);
    free(w->next);
    free(w->stack);
}

static bool ck_save_values(const struct clos *c, const struct clos_env *env, int done);

/* Levels above `done` (those up to it are solved: a resumed solve). */
static enum clos_err solve_levels(struct clos *c, const struct clos_env *env, int tbmax,
                                  struct clos_info *info, int done_level)
{
    const uint64_t slots = (uint64_t)c->slots;
    uint64_t L = 0;
    for (int m = 0; m <= SOW_MAX_SEEDS; m++)
        if (c->start[m + 1] - c->start[m] > L)
            L = c->start[m + 1] - c->start[m];
    /* the budget is checked with every move an in-level edge (the bound);
     * the peak noted is what was held: reverse edges as the levels had */
    double b = arrays_bytes(c, c->cap, c->scap) + level_work_per(c) * (double)L;
    if (over(c, env, b)) {
        info->by_memory = true;
        info->need = b;
        struct util_gb2 g = util_gb2(b, env->memory);
        snprintf(info->why, sizeof info->why,
                 "%llu positions, every layer expanded; solving its largest level (%llu "
                 "positions) needs %s GB, the budget is %s GB: raise --memory, or solve more "
                 "levels first", (unsigned long long)c->n, (unsigned long long)L, g.need,
                 g.budget);
        return CLOS_TOO_BIG;
    }
    if (L * slots >= UINT32_MAX)
        return CLOS_TOO_BIG;
    struct level_work w = {0};
    w.be = malloc(L + 1);
    w.cnt = malloc(L + 1);
    w.fwd = malloc(sizeof *w.fwd * (size_t)(L * slots + 1));
    w.roff = malloc(sizeof *w.roff * (size_t)(L + 1));
    w.rev = malloc(sizeof *w.rev * 1024); /* sized per level to its in-level edges */
    uint64_t revcap = 1024;
    w.next = malloc(sizeof *w.next * (size_t)(2 * L + 1));
    w.stack = malloc(sizeof *w.stack * (size_t)(2 * L + 1));
    w.scap = (int64_t)(2 * L + 1);
    enum clos_err e = CLOS_OK;
    if (!w.be || !w.cnt || !w.fwd || !w.roff || !w.rev || !w.next || !w.stack)
        e = CLOS_OOM;
    double last = 0, t0 = util_now(), lastck = t0;
    uint64_t done = done_level >= 0 ? c->start[done_level + 1] : 0, resumed = done;
    int saved = done_level;
    int m = done_level + 1;
    for (; e == CLOS_OK && m <= SOW_MAX_SEEDS; m++) {
        uint64_t s0 = c->start[m], Nl = c->start[m + 1] - s0;
        if (!Nl)
            continue;
        if (stopped(env)) {
            e = CLOS_STOPPED;
            break;
        }
        if (env->work && m - 1 > saved && util_now() - lastck >= CKPT_EVERY) {
            if (ck_save_values(c, env, m - 1))
                saved = m - 1;
            lastck = util_now();
        }
        bool missing = false;
        w.nl = Nl;
        if (!level_moves_all(c, env, m, s0, Nl, tbmax, &w, &missing, LM_FWD)) {
            e = CLOS_STOPPED;
            break;
        }
        uint64_t edges = 0;
        for (uint64_t p = 0; p < Nl; p++)
            edges += w.cnt[p];
        if (edges > revcap) {
            uint32_t *nr = realloc(w.rev, sizeof *nr * (size_t)edges);
            if (!nr) {
                e = CLOS_OOM;
                break;
            }
            w.rev = nr;
            revcap = edges;
        }
        if (missing) { /* a child not in the closure: cannot happen */
            e = CLOS_OOM;
            break;
        }
        reverse_edges(c, Nl, &w);
        if (!solve_level(c, env, m, s0, Nl, &w)) {
            e = CLOS_STOPPED;
            break;
        }
        level_values(c, s0, Nl, &c->key[s0 * c->K]);
        done += Nl;
        double dt = util_now() - t0, rate = dt > 0 ? (double)(done - resumed) / dt : 0;
        say(env, &last, Nl >= BIG_LINE || env->eager_lines,
            "closure level %d solved: %llu positions, %llu of %llu done, %.2f M/s, ETA %.0f s", m,
            (unsigned long long)Nl, (unsigned long long)done, (unsigned long long)c->n, rate / 1e6,
            rate > 0 ? (double)(c->n - done) / rate : 0.0);
    }
    if (e == CLOS_STOPPED) { /* Ctrl-C, between levels or within one */
        const int kept = m - 1;
        if (env->work && kept > saved && ck_save_values(c, env, kept))
            saved = kept;
        if (env->work && saved >= 0)
            say(env, &last, true, "stopped while solving level %d: levels up to %d kept in %s", m,
                saved, env->work);
    }
    note_peak(c, arrays_bytes(c, c->cap, c->scap) + (level_work_per(c) - 4.0 * c->slots) * (double)L +
                     4.0 * (double)revcap);
    free_work(&w);
    if (e == CLOS_OK && env->work && saved < SOW_MAX_SEEDS)
        ck_save_values(c, env, SOW_MAX_SEEDS); /* a rerun answers at once */
    info->solve_s = util_now() - t0;
    return e;
}

/* ---- checkpoints (env->work; docs/solutions.md "Resuming") ----
 *
 * DIR/closure.keys: written once the closure is expanded and numbered by
 * level; DIR/closure.values: lo, hi, v of the levels solved so far,
 * rewritten (temporary file, renamed) at most every CKPT_EVERY seconds and
 * when the solve is stopped.  Both: a 64-byte header
 *   magic[8] | u64 payload bytes | u64 XXH3-64 of the payload | u64 XXH3-64
 *   of the header's first 24 bytes | 32 reserved
 * then the payload: struct ck_meta, and the keys (N x K x u64) or the
 * values (3 arrays of start[levels_done + 1] int8).  A checkpoint whose
 * rule set, size, root key or table cut differ from the solve's, or whose
 * checksums fail, is ignored (the solve starts over and replaces it).
 *
 * DIR/closure.expand: the expansion between two rounds (struct exp_state),
 * written when the solve is stopped while expanding, when the budget
 * refuses the next layer, and at most every CKPT_EVERY seconds at a layer's
 * start: payload struct ck_meta (levels_done -1, start[] 0, the counters of
 * the nodes expanded so far), struct exp_state, then the keys of the n
 * positions found, in the order found.  A rerun goes on from there exactly
 * as the uninterrupted expansion would have (the same positions, the same
 * node counts); it is removed once closure.keys is written. */

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

static bool ck_write(const char *dir, const char *name, const char *magic, const void *const *parts,
                     const uint64_t *sizes, int np)
{
    char path[4096], tmp[4200];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return false; /* a path past PATH_MAX: no file */
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    XXH3_state_t *xs = XXH3_createState();
    if (!xs)
        return false;
    XXH3_64bits_reset(xs);
    uint64_t total = 0;
    for (int k = 0; k < np; k++) {
        XXH3_64bits_update(xs, parts[k], (size_t)sizes[k]);
        total += sizes[k];
    }
    uint8_t h[CK_HEAD] = {0};
    memcpy(h, magic, 8);
    memcpy(h + 8, &total, 8);
    uint64_t x = XXH3_64bits_digest(xs);
    XXH3_freeState(xs);
    memcpy(h + 16, &x, 8);
    x = XXH3_64bits(h, 24);
    memcpy(h + 24, &x, 8);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return false;
    bool ok = fwrite(h, 1, CK_HEAD, f) == CK_HEAD;
    for (int k = 0; ok && k < np; k++)
        ok = fwrite(parts[k], 1, (size_t)sizes[k], f) == (size_t)sizes[k];
    ok = (fflush(f) == 0) && ok;
    ok = (fsync(fileno(f)) == 0) && ok;
    ok = (fclose(f) == 0) && ok;
    if (ok && rename(tmp, path) == 0)
        return true;
    unlink(tmp);
    return false;
}

/* Read DIR/name into parts (sizes known: the header must agree). */
static bool ck_read(const char *dir, const char *name, const char *magic, void *const *parts,
                    const uint64_t *sizes, int np)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
        return false;
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    uint8_t h[CK_HEAD];
    uint64_t total = 0, want = 0, sum, hsum;
    for (int k = 0; k < np; k++)
        want += sizes[k];
    bool ok = fread(h, 1, CK_HEAD, f) == CK_HEAD && memcmp(h, magic, 8) == 0;
    if (ok) {
        memcpy(&total, h + 8, 8);
        memcpy(&sum, h + 16, 8);
        memcpy(&hsum, h + 24, 8);
        ok = XXH3_64bits(h, 24) == hsum && total == want;
    }
    XXH3_state_t *xs = ok ? XXH3_createState() : NULL;
    ok = ok && xs;
    if (ok)
        XXH3_64bits_reset(xs);
    for (int k = 0; ok && k < np; k++) {
        ok = fread(parts[k], 1, (size_t)sizes[k], f) == (size_t)sizes[k];
        if (ok)
            XXH3_64bits_update(xs, parts[k], (size_t)sizes[k]);
    }
    ok = ok && fgetc(f) == EOF && XXH3_64bits_digest(xs) == sum;
    if (xs)
        XXH3_freeState(xs);
    fclose(f);
    return ok;
}

bool clos_ck_write(const char *dir, const char *name, const char *magic, const void *const *parts,
                   const uint64_t *sizes, int np)
{
    return ck_write(dir, name, magic, parts, sizes, np);
}

bool clos_ck_read(const char *dir, const char *name, const char *magic, void *const *parts,
                  const uint64_t *sizes, int np)
{
    return ck_read(dir, name, magic, parts, sizes, np);
}

static void ck_meta_of(const struct clos *c, const struct clos_env *env, int tbmax,
                       const uint64_t *root, struct ck_meta *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->rules, sizeof m->rules, "%s", c->rs->name);
    m->pits = (uint32_t)c->pits;
    m->K = (uint32_t)c->K;
    m->tbmax = tbmax;
    m->levels_done = -1;
    m->n = c->n;
    memcpy(m->root, root, sizeof *root * (size_t)c->K);
    memcpy(m->start, c->start, sizeof m->start);
    for (int t = 0; t < env->threads; t++) {
        m->nodes += env->nodes[t];
        m->visits += env->visits[t];
        m->tb_hits += env->tb_hits[t];
    }
}

static bool ck_save_keys(const struct clos *c, const struct clos_env *env, int tbmax,
                         const uint64_t *root, const struct ck_meta *base)
{
    struct ck_meta m;
    ck_meta_of(c, env, tbmax, root, &m);
    /* the counters of this build's expansion alone */
    m.nodes -= base->nodes;
    m.visits -= base->visits;
    m.tb_hits -= base->tb_hits;
    const void *parts[2] = {&m, c->key};
    uint64_t sizes[2] = {sizeof m, c->n * 8 * (uint64_t)c->K};
    return ck_write(env->work, "closure.keys", "SOWCKPK1", parts, sizes, 2);
}

static bool ck_save_values(const struct clos *c, const struct clos_env *env, int done)
{
    struct ck_meta m;
    memset(&m, 0, sizeof m);
    m.levels_done = done;
    m.n = c->n;
    uint64_t upto = c->start[done + 1];
    const void *parts[4] = {&m, c->lo, c->hi, c->v};
    uint64_t sizes[4] = {sizeof m, upto, upto, upto};
    return ck_write(env->work, "closure.values", "SOWCKPV1", parts, sizes, 4);
}

static bool ck_save_expand(const struct clos *c, const struct clos_env *env,
                           const struct exp_ck *ck, const struct exp_state *st)
{
    struct ck_meta m;
    ck_meta_of(c, env, ck->tbmax, ck->root, &m);
    memset(m.start, 0, sizeof m.start);
    m.nodes -= ck->base->nodes;
    m.visits -= ck->base->visits;
    m.tb_hits -= ck->base->tb_hits;
    const void *parts[3] = {&m, st, c->key};
    uint64_t sizes[3] = {sizeof m, sizeof *st, c->n * 8 * (uint64_t)c->K};
    return ck_write(env->work, "closure.expand", "SOWCKPE1", parts, sizes, 3);
}

/* The expansion checkpoint, if it is this solve's: keys [0, n) loaded (the
 * set is rebuilt by the caller), *st as saved, the counters added. */
static enum clos_err ck_load_expand(struct clos *c, const struct clos_env *env, int tbmax,
                                    const uint64_t *root, struct exp_state *st, bool *loaded)
{
    *loaded = false;
    char path[4096];
    snprintf(path, sizeof path, "%s/closure.expand", env->work);
    FILE *f = fopen(path, "rb");
    if (!f)
        return CLOS_OK;
    struct ck_meta m, want;
    struct exp_state x;
    uint8_t h[CK_HEAD];
    bool ok = fread(h, 1, CK_HEAD, f) == CK_HEAD && fread(&m, 1, sizeof m, f) == sizeof m &&
              fread(&x, 1, sizeof x, f) == sizeof x;
    fclose(f);
    ck_meta_of(c, env, tbmax, root, &want);
    if (!ok || strcmp(m.rules, want.rules) != 0 || m.pits != want.pits || m.K != want.K ||
        m.tbmax != tbmax || memcmp(m.root, root, 8 * (size_t)c->K) != 0 || !m.n ||
        m.n > MAX_NODES || x.a > x.end || x.end > m.n || x.layers == 0)
        return CLOS_OK;
    enum clos_err e = grow_nodes(c, env, m.n);
    if (e != CLOS_OK)
        return e;
    void *parts[3] = {&want, &x, c->key};
    uint64_t sizes[3] = {sizeof m, sizeof x, m.n * 8 * (uint64_t)c->K};
    if (!ck_read(env->work, "closure.expand", "SOWCKPE1", parts, sizes, 3) ||
        memcmp(c->key, root, 8 * (size_t)c->K) != 0) /* node 0 is the root */
        return CLOS_OK;
    c->n = m.n;
    *st = x;
    env->nodes[0] += want.nodes;
    env->visits[0] += want.visits;
    env->tb_hits[0] += want.tb_hits;
    *loaded = true;
    return CLOS_OK;
}

/* Load the keys checkpoint if it is this solve's; then the values of the
 * levels it had solved (*done, -1 if none). */
static enum clos_err ck_load(struct clos *c, const struct clos_env *env, int tbmax,
                             const uint64_t *root, int *done, bool *loaded)
{
    *loaded = false;
    *done = -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/closure.keys", env->work);
    FILE *f = fopen(path, "rb");
    if (!f)
        return CLOS_OK;
    struct ck_meta m;
    uint8_t h[CK_HEAD];
    bool ok = fread(h, 1, CK_HEAD, f) == CK_HEAD && fread(&m, 1, sizeof m, f) == sizeof m;
    fclose(f);
    struct ck_meta want;
    ck_meta_of(c, env, tbmax, root, &want);
    if (!ok || strcmp(m.rules, want.rules) != 0 || m.pits != want.pits || m.K != want.K ||
        m.tbmax != tbmax || memcmp(m.root, root, 8 * (size_t)c->K) != 0 || !m.n ||
        m.n > MAX_NODES || m.start[SOW_MAX_SEEDS + 1] != m.n)
        return CLOS_OK;
    enum clos_err e = grow_nodes(c, env, m.n);
    if (e != CLOS_OK)
        return e;
    void *parts[2] = {&want, c->key};
    uint64_t sizes[2] = {sizeof m, m.n * 8 * (uint64_t)c->K};
    if (!ck_read(env->work, "closure.keys", "SOWCKPK1", parts, sizes, 2))
        return CLOS_OK;
    for (uint64_t i = 0; i < m.n; i++) { /* the keys are where their levels say */
        int lv = key_level(&c->key[i * c->K], c->K);
        if (i < m.start[lv] || i >= m.start[lv + 1])
            return CLOS_OK;
    }
    c->n = m.n;
    memcpy(c->start, m.start, sizeof c->start);
    env->nodes[0] += m.nodes;
    env->visits[0] += m.visits;
    env->tb_hits[0] += m.tb_hits;
    *loaded = true;
    /* values */
    snprintf(path, sizeof path, "%s/closure.values", env->work);
    f = fopen(path, "rb");
    if (!f)
        return CLOS_OK;
    ok = fread(h, 1, CK_HEAD, f) == CK_HEAD && fread(&m, 1, sizeof m, f) == sizeof m;
    fclose(f);
    if (!ok || m.n != c->n || m.levels_done < 0 || m.levels_done > SOW_MAX_SEEDS)
        return CLOS_OK;
    uint64_t upto = c->start[m.levels_done + 1];
    void *vp[4] = {&want, c->lo, c->hi, c->v};
    uint64_t vs[4] = {sizeof m, upto, upto, upto};
    if (ck_read(env->work, "closure.values", "SOWCKPV1", vp, vs, 4))
        *done = m.levels_done;
    return CLOS_OK;
}

/* ---- the closure level by level on disk (env->disk; issue 11) ----
 *
 * For closures past RAM (docs/solver.md "Past RAM").  A move keeps a
 * position's level or lowers it, so level m's part of the closure is the
 * in-level closure of what reaches level m from above: the root at its own
 * level, exits from the higher levels below it.  Two passes over the levels,
 * one level in memory at a time:
 *
 * 1. Down, from the root's level: level m's seeds (the root, or the keys the
 *    levels above appended to DIR/disk-in-LLL.keys) go into the set, then
 *    its positions are expanded, each once, in rounds as in memory
 *    (expand_all); in-level children join the set, exits to a level l < m
 *    are appended to disk-in-l.keys (duplicates and all), exits the tables
 *    answer are counted as in memory.  The level's keys are then sorted and
 *    written to disk-LLL.keys, and its incoming file removed.
 * 2. Up, from the lowest level found: level m's keys are read back and its
 *    moves generated again (level_moves); exits are looked up by binary
 *    search in the lower levels' files (memory-mapped: the page cache, not
 *    --memory), in-level children in the set; the same retrograde
 *    (solve_level) gives lo, hi, V, written to disk-LLL.values.
 *
 * The positions (so the node counts) and the values are those of the
 * in-memory closure: the same positions are reachable, and each level's
 * retrograde sees the same children with the same values.
 *
 * Files in DIR, each level file being a checkpoint file (ck_write: 64-byte
 * header, XXH3-64 of header and payload) whose payload starts with struct
 * dk_lvl (rule set, size, level, kind, n, root key: a file of another solve
 * is refused):
 *
 *   disk.state        struct dk_meta: how far both passes got, positions per
 *                     level, the valid bytes of each incoming file, counters
 *   disk-in-LLL.keys  blocks: u64 count c (1..DK_BUF), u64 XXH3-64 of the
 *                     keys, c keys of K words; no header (removed once level
 *                     LLL is expanded)
 *   disk-LLL.keys     dk_lvl, then n keys (K x u64) in increasing order,
 *                     word K-1 most significant
 *   disk-LLL.values   dk_lvl, then lo[n], hi[n], v[n] (int8), key order
 *
 * Example: a root of 48 seeds whose captures take 4 or 8: level 48 is
 * expanded first and appends to disk-in-044 and disk-in-040; then 44
 * (seeded from disk-in-044, appending to 040 and 036), 40, ... down to the
 * lowest level reached; then the levels are solved from the lowest up, 48
 * last.  On 2x6 below 62 seeds K = 1: 8 bytes a key, 3 of values.
 *
 * Resuming: disk.state is rewritten (temporary file, renamed) at the start
 * and after each level of either pass; the level being expanded is kept
 * between two rounds in disk-cur.keys (struct dk_cur) when stopped, when
 * refused and every CKPT_EVERY seconds.  A rerun truncates the incoming files
 * to the bytes recorded with the newest of the two and goes on from there.
 * A damaged state, keys or incoming file starts the solve over, a damaged
 * disk-cur.keys expands its level again, a damaged values file solves the
 * levels from it up again; each with a note.
 *
 * Memory (env->memory): one level at a time: its keys, values and set while
 * expanded, and the level's retrograde work while solved; a level whose
 * solve would not fit is refused (CLOS_TOO_BIG) while it is expanded.
 * Thread-safety: as the in-memory closure; the incoming files are appended
 * under a critical section, in blocks. */

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
    void *map[2][SOW_MAX_SEEDS + 1];   /* level files mapped: keys, values */
    size_t msz[2][SOW_MAX_SEEDS + 1];
    bool solved;                       /* every level solved and mapped */
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

static void dk_path(char *buf, size_t len, const struct clos_disk *dk, const char *fmt, int l)
{
    char nm[64];
    snprintf(nm, sizeof nm, fmt, l);
    snprintf(buf, len, "%s/%s", dk->dir, nm);
}

static void dk_close_in(struct clos_disk *dk, bool sync)
{
    for (int l = 0; l <= SOW_MAX_SEEDS; l++)
        if (dk->in[l]) {
            bool ok = fflush(dk->in[l]) == 0;
            if (sync)
                ok = fsync(fileno(dk->in[l])) == 0 && ok;
            ok = fclose(dk->in[l]) == 0 && ok;
            if (!ok)
                dk->ioerr = true;
            dk->in[l] = NULL;
        }
}

static void dk_unmap(struct clos_disk *dk)
{
    for (int k = 0; k < 2; k++)
        for (int l = 0; l <= SOW_MAX_SEEDS; l++)
            if (dk->map[k][l]) {
                munmap(dk->map[k][l], dk->msz[k][l]);
                dk->map[k][l] = NULL;
            }
}

static void dk_free(struct clos *c)
{
    if (!c->dk)
        return;
    dk_close_in(c->dk, false);
    dk_unmap(c->dk);
    free(c->dk);
    c->dk = NULL;
}

static uint64_t dk_total(const struct clos *c)
{
    uint64_t t = 0;
    for (int l = 0; l <= SOW_MAX_SEEDS; l++)
        t += c->dk->st.cnt[l];
    return t;
}

static void dk_lvl_of(const struct clos *c, int l, int kind, struct dk_lvl *h)
{
    memset(h, 0, sizeof *h);
    snprintf(h->rules, sizeof h->rules, "%s", c->rs->name);
    h->pits = (uint32_t)c->pits;
    h->K = (uint32_t)c->K;
    h->level = l;
    h->kind = kind;
    h->n = c->dk->st.cnt[l];
    memcpy(h->root, c->dk->st.root, sizeof h->root);
}

static const char *const dk_fmt[2] = {"disk-%03d.keys", "disk-%03d.values"};
static const char *const dk_magic[2] = {"SOWDKK01", "SOWDKV01"};

/* Map level l's file of this kind, checked: header, meta and (verify: the
 * whole file read once) the payload's checksum.  false if missing or bad. */
static bool dk_map(struct clos *c, int l, int kind, bool verify)
{
    struct clos_disk *dk = c->dk;
    char path[4200];
    dk_path(path, sizeof path, dk, dk_fmt[kind], l);
    const uint64_t n = dk->st.cnt[l];
    const uint64_t pay = sizeof(struct dk_lvl) + (kind ? 3 * n : n * 8 * (uint64_t)c->K);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    struct stat sb;
    if (fstat(fd, &sb) < 0 || (uint64_t)sb.st_size != CK_HEAD + pay) {
        close(fd);
        return false;
    }
    void *mp = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mp == MAP_FAILED)
        return false;
    const uint8_t *h = mp;
    uint64_t total, sum, hsum;
    memcpy(&total, h + 8, 8);
    memcpy(&sum, h + 16, 8);
    memcpy(&hsum, h + 24, 8);
    struct dk_lvl want;
    dk_lvl_of(c, l, kind, &want);
    bool ok = memcmp(h, dk_magic[kind], 8) == 0 && total == pay && XXH3_64bits(h, 24) == hsum &&
              memcmp(h + CK_HEAD, &want, sizeof want) == 0;
    if (ok && verify)
        ok = XXH3_64bits(h + CK_HEAD, (size_t)pay) == sum;
    if (!ok) {
        munmap(mp, (size_t)sb.st_size);
        return false;
    }
    if (dk->map[kind][l])
        munmap(dk->map[kind][l], dk->msz[kind][l]);
    dk->map[kind][l] = mp;
    dk->msz[kind][l] = (size_t)sb.st_size;
    return true;
}

static inline const void *dk_payload(const struct clos_disk *dk, int kind, int l)
{
    return (const uint8_t *)dk->map[kind][l] + CK_HEAD + sizeof(struct dk_lvl);
}

uint64_t clos_disk_level(const struct clos *c, int l, const uint64_t **keys, const int8_t **lo,
                         const int8_t **hi, const int8_t **v)
{
    const struct clos_disk *dk = c->dk;
    if (!dk || !dk->solved || l < 0 || l > SOW_MAX_SEEDS || !dk->st.cnt[l] || !dk->map[0][l] ||
        !dk->map[1][l])
        return 0;
    uint64_t n = dk->st.cnt[l];
    const int8_t *x = dk_payload(dk, 1, l);
    *keys = dk_payload(dk, 0, l);
    *lo = x;
    *hi = x + n;
    *v = x + 2 * n;
    return n;
}

static inline int key_cmp(const uint64_t *a, const uint64_t *b, int K)
{
    for (int k = K - 1; k >= 0; k--)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

/* w's index in n sorted keys k of K words, -1 if absent. */
static int64_t key_find(const uint64_t *k, uint64_t n, const uint64_t *w, int K)
{
    uint64_t a = 0, b = n;
    while (a < b) {
        uint64_t mid = a + (b - a) / 2;
        int r = key_cmp(&k[mid * (uint64_t)K], w, K);
        if (r == 0)
            return (int64_t)mid;
        if (r < 0)
            a = mid + 1;
        else
            b = mid;
    }
    return -1;
}

/* cnt searches at once: ws[j]'s index in the ns[j] sorted keys ks[j] (K
 * words each) into out[j], -1 if absent; the same answers as key_find.
 * Each search halves its range with one comparison a step (the last key
 * <= w), and after each step the next probe's line is prefetched while the
 * other searches take theirs: one node's children, looked up one after
 * another, waited for every miss in turn. */
static void key_find_many(const uint64_t *const *ks, const uint64_t *ns,
                          const uint64_t (*ws)[MAX_KEY_WORDS], int cnt, int K, int64_t *out)
{
    uint64_t base[KF_MAX], len[KF_MAX];
    bool busy = false;
    for (int j = 0; j < cnt; j++) {
        base[j] = 0;
        len[j] = ns[j];
        if (len[j] > 1)
            __builtin_prefetch(&ks[j][(len[j] / 2) * (uint64_t)K]);
        busy |= len[j] > 1;
    }
    while (busy) {
        busy = false;
        for (int j = 0; j < cnt; j++) {
            if (len[j] <= 1)
                continue;
            uint64_t half = len[j] / 2;
            if (key_cmp(&ks[j][(base[j] + half) * (uint64_t)K], ws[j], K) <= 0)
                base[j] += half;
            len[j] -= half;
            if (len[j] > 1) {
                __builtin_prefetch(&ks[j][(base[j] + len[j] / 2) * (uint64_t)K]);
                busy = true;
            }
        }
    }
    for (int j = 0; j < cnt; j++)
        out[j] = ns[j] && key_cmp(&ks[j][base[j] * (uint64_t)K], ws[j], K) == 0
                     ? (int64_t)base[j] : -1;
}

int64_t clos_key_find(const uint64_t *k, uint64_t n, const uint64_t *w, int K)
{
    return key_find(k, n, w, K);
}

void clos_key_find_many(const uint64_t *const *ks, const uint64_t *ns, const uint64_t *ws,
                        int cnt, int K, int64_t *out)
{
    uint64_t w[SOW_MAX_PITS + 1][MAX_KEY_WORDS] = {{0}};
    if (cnt > SOW_MAX_PITS + 1 || K > MAX_KEY_WORDS)
        return;
    for (int j = 0; j < cnt; j++)
        memcpy(w[j], &ws[j * K], 8 * (size_t)K);
    key_find_many(ks, ns, (const uint64_t(*)[MAX_KEY_WORDS])w, cnt, K, out);
}

/* Level l's sorted keys (*n of them), NULL if l is not mapped. */
static const uint64_t *dk_keys(const struct clos *c, int l, uint64_t *n)
{
    const struct clos_disk *dk = c->dk;
    *n = 0;
    if (!dk || l < 0 || l > SOW_MAX_SEEDS || !dk->map[0][l])
        return NULL;
    *n = dk->st.cnt[l];
    return dk_payload(dk, 0, l);
}

/* w's index in level l's sorted keys, -1 if absent (or l not mapped). */
static int64_t dk_find(const struct clos *c, int l, const uint64_t *w)
{
    const struct clos_disk *dk = c->dk;
    if (l < 0 || l > SOW_MAX_SEEDS || !dk->map[0][l])
        return -1;
    return key_find(dk_payload(dk, 0, l), dk->st.cnt[l], w, c->K);
}

/* V of level l's position q (its values file mapped). */
static int8_t dk_value(const struct clos *c, int l, int64_t q)
{
    const int8_t *x = dk_payload(c->dk, 1, l);
    return x[2 * c->dk->st.cnt[l] + (uint64_t)q];
}

/* Sort n keys of K words (word K-1 most significant): LSD radix by bytes,
 * a pass skipped where every key has the same byte; tmp holds n * K words. */
static void dk_sort(uint64_t *key, uint64_t *tmp, uint64_t n, int K)
{
    uint64_t *src = key, *dst = tmp;
    for (int k = 0; k < K && n > 1; k++)
        for (int b = 0; b < 64; b += 8) {
            uint64_t cnt[256] = {0};
            for (uint64_t i = 0; i < n; i++)
                cnt[(src[i * K + k] >> b) & 255]++;
            if (cnt[(src[k] >> b) & 255] == n)
                continue;
            uint64_t pos = 0;
            for (int d = 0; d < 256; d++) {
                uint64_t x = cnt[d];
                cnt[d] = pos;
                pos += x;
            }
            for (uint64_t i = 0; i < n; i++) {
                uint64_t j = cnt[(src[i * K + k] >> b) & 255]++;
                memcpy(&dst[j * K], &src[i * K], 8 * (size_t)K);
            }
            uint64_t *t = src;
            src = dst;
            dst = t;
        }
    if (src != key)
        memcpy(key, src, 8 * (size_t)K * n);
}

static void dk_sums(const struct clos_env *env, uint64_t *x)
{
    x[0] = x[1] = x[2] = 0;
    for (int t = 0; t < env->threads; t++) {
        x[0] += env->nodes[t];
        x[1] += env->visits[t];
        x[2] += env->tb_hits[t];
    }
}

static bool dk_save_state(struct clos *c, const struct clos_env *env)
{
    struct clos_disk *dk = c->dk;
    uint64_t x[3];
    dk_sums(env, x);
    dk->st.nodes = x[0] - dk->base[0];
    dk->st.visits = x[1] - dk->base[1];
    dk->st.tb_hits = x[2] - dk->base[2];
    const void *parts[1] = {&dk->st};
    uint64_t sizes[1] = {sizeof dk->st};
    return ck_write(dk->dir, "disk.state", "SOWDKS01", parts, sizes, 1);
}

/* Forget every level of this build: the counters back to before it, the
 * incoming files removed, the state fresh. */
static void dk_start_over(struct clos *c, const struct clos_env *env, const struct dk_meta *fresh)
{
    struct clos_disk *dk = c->dk;
    uint64_t x[3];
    dk_sums(env, x);
    env->nodes[0] -= x[0] - dk->base[0];
    env->visits[0] -= x[1] - dk->base[1];
    env->tb_hits[0] -= x[2] - dk->base[2];
    dk_close_in(dk, false);
    dk_unmap(dk);
    for (int l = 0; l <= SOW_MAX_SEEDS; l++) {
        char path[4200];
        dk_path(path, sizeof path, dk, "disk-in-%03d.keys", l);
        unlink(path);
    }
    char cp[4200];
    snprintf(cp, sizeof cp, "%s/disk-cur.keys", dk->dir);
    unlink(cp);
    dk->st = *fresh;
}

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

static void dk_flush(struct clos *c, int l, const uint64_t *keys, uint64_t cnt);
static double dk_deg(const struct clos *c, const struct dk_thread *et, int nt, uint64_t a);

/* The exits still buffered by every thread, then every incoming file synced. */
static void dk_flush_all(struct clos *c, int m, struct dk_thread *et, int nt)
{
    for (int t = 0; t < nt; t++)
        for (int l = 0; l < m; l++)
            if (et[t].nb[l]) {
                dk_flush(c, l, et[t].buf[l], et[t].nb[l]);
                et[t].nb[l] = 0;
            }
    dk_close_in(c->dk, true);
}

static bool dk_save_cur(struct clos *c, const struct clos_env *env, int m, uint64_t a,
                        struct dk_thread *et, int nt)
{
    struct clos_disk *dk = c->dk;
    dk_flush_all(c, m, et, nt);
    if (dk->ioerr)
        return false;
    struct dk_cur cur;
    memset(&cur, 0, sizeof cur);
    uint64_t x[3];
    dk_sums(env, x);
    cur.level = m;
    cur.n = c->n;
    cur.a = a;
    if (a > dk->askip) {
        double deg = dk_deg(c, et, nt, a) * 1e6 + 0.5;
        cur.deg_ppm = deg >= 1 && deg < 4e9 ? (uint32_t)deg : 0;
    }
    cur.nodes = x[0] - dk->base[0];
    cur.visits = x[1] - dk->base[1];
    cur.tb_hits = x[2] - dk->base[2];
    memcpy(cur.root, dk->st.root, sizeof cur.root);
    memcpy(cur.inlen, dk->st.inlen, sizeof cur.inlen);
    const void *parts[2] = {&cur, c->key};
    uint64_t sizes[2] = {sizeof cur, c->n * 8 * (uint64_t)c->K};
    return ck_write(dk->dir, "disk-cur.keys", "SOWDKC01", parts, sizes, 2);
}

/* The saved part of level m's expansion into c (keys, n) and *cur, if it
 * is this solve's: *have; none: neither flag; damaged or another level's:
 * *bad.  A node array for it that the budget refuses is a refusal
 * (CLOS_TOO_BIG, the file kept for a rerun with more memory), not damage. */
static enum clos_err dk_load_cur(struct clos *c, const struct clos_env *env, int m,
                                 struct dk_cur *cur, bool *have, bool *bad)
{
    struct clos_disk *dk = c->dk;
    char path[4200];
    snprintf(path, sizeof path, "%s/disk-cur.keys", dk->dir);
    FILE *f = fopen(path, "rb");
    *have = *bad = false;
    if (!f)
        return CLOS_OK;
    uint8_t h[CK_HEAD];
    bool ok = fread(h, 1, CK_HEAD, f) == CK_HEAD && fread(cur, 1, sizeof *cur, f) == sizeof *cur;
    fclose(f);
    ok = ok && cur->level == m && memcmp(cur->root, dk->st.root, sizeof cur->root) == 0 &&
         cur->n > 0 && cur->n <= MAX_NODES && cur->a <= cur->n;
    if (ok) {
        enum clos_err e = grow_nodes(c, env, cur->n);
        if (e != CLOS_OK)
            return e;
    }
    struct dk_cur again;
    void *parts[2] = {&again, c->key};
    uint64_t sizes[2] = {sizeof again, ok ? cur->n * 8 * (uint64_t)c->K : 0};
    ok = ok && ck_read(dk->dir, "disk-cur.keys", "SOWDKC01", parts, sizes, 2) &&
         memcmp(&again, cur, sizeof again) == 0;
    *bad = !ok;
    *have = ok;
    if (ok)
        c->n = cur->n;
    return CLOS_OK;
}

/* Append cnt keys exiting to level l as one block of its incoming file. */
static void dk_flush(struct clos *c, int l, const uint64_t *keys, uint64_t cnt)
{
    struct clos_disk *dk = c->dk;
    const size_t kb = 8 * (size_t)c->K;
    uint64_t h[2] = {cnt, XXH3_64bits(keys, kb * (size_t)cnt)};
#pragma omp critical(sow_dk_in)
    {
        if (!dk->in[l]) {
            char path[4200];
            dk_path(path, sizeof path, dk, "disk-in-%03d.keys", l);
            dk->in[l] = fopen(path, "ab");
        }
        if (!dk->in[l] || fwrite(h, 8, 2, dk->in[l]) != 2 ||
            fwrite(keys, kb, (size_t)cnt, dk->in[l]) != (size_t)cnt)
            dk->ioerr = true;
        else
            dk->st.inlen[l] += 16 + kb * cnt;
    }
}

/* Expand node i of level m: in-level children into the set, exits buffered
 * for their levels' incoming files. */
static inline void dk_expand(struct clos *c, const struct clos_env *env, uint64_t i, int tid,
                             int tbmax, int m, bool par, struct dk_thread *et)
{
    const struct ruleset *rs = c->rs;
    const int K = c->K;
    sow_position p;
    struct sow_movelist *ml = &et->ml;
    clos_unpack(rs, K, &c->key[i * K], &p);
    rs->generate(rs, &p, ml, env->cache[tid], NULL);
    env->nodes[tid]++;
    env->visits[tid] += (uint64_t)ml->n;
    uint64_t w[SOW_MAX_PITS + 1][MAX_KEY_WORDS], h[SOW_MAX_PITS + 1];
    int nk = 0;
    for (int k = 0; k < ml->n; k++) {
        const struct sow_child *ch = &ml->c[k];
        int cl = m - ch->captured[0] - ch->captured[1], tv;
        if (tb_exit(env, tbmax, ch, cl, &tv)) {
            if (cl <= env->tb_hits_max)
                env->tb_hits[tid]++;
            continue;
        }
        if (cl == m) {
            clos_pack(rs, K, &ch->pos, w[nk]);
            h[nk] = clos_hash(w[nk], K);
            set_prefetch(c, h[nk]);
            nk++;
            continue;
        }
        if (!et->buf[cl] && !(et->buf[cl] = malloc(8 * (size_t)K * DK_BUF))) {
            et->oom = true;
            continue;
        }
        clos_pack(rs, K, &ch->pos, &et->buf[cl][(uint64_t)et->nb[cl] * K]);
        if (++et->nb[cl] == DK_BUF) {
            dk_flush(c, cl, et->buf[cl], DK_BUF);
            et->nb[cl] = 0;
        }
    }
    et->inl += (uint64_t)nk;
    for (int k = 0; k < nk; k++) {
        bool added;
        set_insert(c, w[k], h[k], par, &added);
    }
}

/* Add a seed key to level m's set (one thread). */
/* The set of a level on disk grown 1.5x, to at least least cells; near the
 * budget to the set of the largest level it holds while expanded (dk_most)
 * if that is more than least, so that the budget bounds the level, not the
 * step. */
static enum clos_err dk_grow_set(struct clos *c, const struct clos_env *env, uint64_t least)
{
    uint64_t ncap = c->scap * 3 / 2;
    if (ncap < least)
        ncap = least;
    /* never more than the set of the most positions whose keys fit beside
     * it: a larger one would take the room of the keys it is for; and near
     * the budget that set even when it is short of least, if it holds
     * another expansion's children (a level resumed near the budget has
     * its set rebuilt at its load, with no room to spare) */
    uint64_t fit = set_cap_for(dk_most(c, env));
    if (env->memory > 0 && fit < ncap &&
        (fit >= least || (fit > c->scap && fit / LOAD_DEN * LOAD_NUM >= c->n + (uint64_t)c->slots)))
        ncap = fit;
    return rebuild_set(c, env, ncap);
}

/* The set of a level resumed with c->n positions: the cells its first
 * growth would give it (dk_grow_set from the set at its load), so that it
 * is built once, not at its load and at once again (on jodu's level 48 at
 * 585 M positions each build took over a minute). */
static uint64_t dk_resume_cells(const struct clos *c, const struct clos_env *env)
{
    const uint64_t atload = set_cap_for(c->n);
    const uint64_t least = set_cap_for(c->n + 4096 * (uint64_t)c->slots);
    uint64_t ncap = atload * 3 / 2 > least ? atload * 3 / 2 : least;
    uint64_t fit = set_cap_for(dk_most(c, env));
    if (env->memory > 0 && fit < ncap)
        ncap = fit;
    return ncap > atload ? ncap : atload;
}

static enum clos_err dk_seed(struct clos *c, const struct clos_env *env, const uint64_t *w)
{
    enum clos_err e = grow_nodes(c, env, c->n + 1);
    if (e == CLOS_OK && c->n + 1 > c->scap / LOAD_DEN * LOAD_NUM)
        e = dk_grow_set(c, env, set_cap_for(c->n + 4096));
    if (e == CLOS_OK) {
        bool added;
        set_insert(c, w, clos_hash(w, c->K), false, &added);
    }
    return e;
}

/* The refusal of level m (positions found so far in info->level_count). */
static void dk_refuse(struct clos *c, const struct clos_env *env, struct clos_info *info, int m,
                      uint64_t expanded, double deg)
{
    uint64_t n = c->n;
    double need = dk_need(c, env, n, deg);
    if (c->refused > need) /* a growth of the arrays or the set, or the sort */
        need = c->refused;
    info->by_memory = true;
    info->need = need;
    info->next_est = n;
    memcpy(info->level_count, c->dk->st.cnt, sizeof info->level_count);
    info->level_count[m] = n;
    info->positions = dk_total(c) + n;
    struct util_gb2 g = util_gb2(need, env->memory);
    snprintf(info->why, sizeof info->why,
             "level %d, on disk, reached %llu positions (%llu expanded): holding and solving it "
             "in memory needs %s GB, the budget is %s GB: raise --memory, or solve more "
             "levels first",
             m, (unsigned long long)n, (unsigned long long)expanded, g.need, g.budget);
}

/* In-level moves a position of the level's nodes [0, a) expanded: this
 * run's and, resumed, those before it (dk->inl0), or, where disk-cur.keys
 * did not record them, this run's alone (dk->askip); before any, the bound
 * (slots). */
static double dk_deg(const struct clos *c, const struct dk_thread *et, int nt, uint64_t a)
{
    double s = c->dk->inl0;
    for (int t = 0; t < nt; t++)
        s += (double)et[t].inl;
    uint64_t e = a - c->dk->askip;
    return e ? s / (double)e : (double)c->slots;
}

/* Pass 1, level m: seeds, expansion, sorted keys file.  *damaged: an
 * incoming file failed its check. */
static enum clos_err dk_down(struct clos *c, const struct clos_env *env, int tbmax, int m,
                             const uint64_t *rootw, struct dk_thread *et, int nt, bool *damaged,
                             struct clos_info *info, uint64_t resume_a)
{
    struct clos_disk *dk = c->dk;
    const int K = c->K;
    const uint64_t slots = (uint64_t)c->slots;
    const size_t kb = 8 * (size_t)K;
    double last = 0, t0 = util_now(), lastck = t0, ckgap = CKPT_EVERY;
    const bool resuming = resume_a != UINT64_MAX; /* keys [0, c->n) loaded (dk_load_cur) */
    if (!resuming)
        c->n = 0;
    enum clos_err e = rebuild_set(c, env, resuming ? dk_resume_cells(c, env) : 4096);
    uint64_t incoming = 0;
    if (e == CLOS_OK && m == dk->st.top && !resuming)
        e = dk_seed(c, env, rootw);
    if (e == CLOS_OK && m != dk->st.top && !resuming) {
        char path[4200];
        dk_path(path, sizeof path, dk, "disk-in-%03d.keys", m);
        FILE *f = fopen(path, "rb");
        uint64_t *buf = malloc(kb * DK_BUF), got = 0, want = dk->st.inlen[m];
        if (!buf)
            e = CLOS_OOM;
        while (e == CLOS_OK && f && got < want) {
            if (stopped(env)) { /* a rerun seeds this level again */
                say(env, &last, true, "stopped while reading level %d's seeds: levels %d..%d "
                    "expanded, kept in %s", m, m + 1, dk->st.top, dk->dir);
                e = CLOS_STOPPED;
                break;
            }
            uint64_t hd[2];
            if (fread(hd, 8, 2, f) != 2 || hd[0] == 0 || hd[0] > DK_BUF ||
                fread(buf, kb, (size_t)hd[0], f) != (size_t)hd[0] ||
                XXH3_64bits(buf, kb * (size_t)hd[0]) != hd[1])
                break;
            uint64_t j = 0;
            for (; e == CLOS_OK && j < hd[0] && key_level(&buf[j * K], K) == m; j++)
                e = dk_seed(c, env, &buf[j * K]);
            if (j < hd[0])
                break; /* a key of another level: not this solve's file */
            got += 16 + kb * hd[0];
            incoming += hd[0];
        }
        if (e == CLOS_OK && got != want)
            *damaged = true;
        if (f)
            fclose(f);
        free(buf);
        if (*damaged)
            return CLOS_OK;
    }
    const bool seeded = e == CLOS_OK; /* every seed in the set */
    uint64_t seeds = c->n, a = resuming ? resume_a : 0;
    for (int t = 0; t < nt; t++)
        et[t].inl = 0;
    double w_t = util_now(); /* the previous progress line's time, expanded, found */
    uint64_t w_a = a, w_n = c->n;
    while (e == CLOS_OK && a < c->n) {
        if (stopped(env)) {
            if (dk_save_cur(c, env, m, a, et, nt))
                say(env, &last, true, "stopped while expanding level %d: %llu positions found, "
                    "%llu expanded, kept in %s with the levels above", m,
                    (unsigned long long)c->n, (unsigned long long)a, dk->dir);
            return CLOS_STOPPED;
        }
        /* The level's solve needs 4 bytes per in-level move (relays, or
         * edges), measured by the expansions (dk_deg; a resumed level's
         * from disk-cur.keys).  A resumed level whose file did not record
         * them has none yet, and every slot taken as in-level would refuse
         * what the run before held; so its first round is short and the
         * check waits for it. */
        const bool measured = a > c->dk->askip || !resuming;
        if (measured && over(c, env, dk_need(c, env, c->n, dk_deg(c, et, nt, a)))) {
            e = CLOS_TOO_BIG;
            break;
        }
        if (util_now() - lastck >= ckgap) {
            /* a save writes the whole level so far (4.5 GB at darra's 562 M
             * positions): keep saves to about a tenth of the time */
            double ts = util_now();
            dk_save_cur(c, env, m, a, et, nt);
            lastck = util_now();
            ckgap = 10.0 * (lastck - ts) > CKPT_EVERY ? 10.0 * (lastck - ts) : CKPT_EVERY;
        }
        uint64_t want = c->n - a, limit = c->scap / LOAD_DEN * LOAD_NUM;
        uint64_t room = limit > c->n ? (limit - c->n) / slots : 0;
        if (room < want && room < 4096) {
            e = dk_grow_set(c, env, set_cap_for(c->n + 4096 * slots));
            if (e != CLOS_TOO_BIG || room == 0)
                continue;
            e = CLOS_OK; /* near the budget: the set filled to its load first */
            c->refused = 0;
        }
        uint64_t r = want < room ? want : room;
        if (!measured && r > DK_FIRST_ROUND)
            r = DK_FIRST_ROUND;
        /* a line of progress and a look for Ctrl-C every few seconds */
        const uint64_t rmax = env->round_max ? env->round_max : DK_ROUND_MAX;
        if (r > rmax)
            r = rmax;
        /* near the budget, fewer expansions a round (room for slots
         * children each) rather than a refusal of what may not be needed */
        while ((e = grow_nodes(c, env, c->n + r * slots)) == CLOS_TOO_BIG && r > 64)
            r /= 2;
        if (e != CLOS_OK)
            break;
        c->refused = 0; /* a smaller round fitted */
        uint64_t b = a + r;
        bool par = nt > 1 && r >= 256;
        if (!par) {
            for (uint64_t i = a; i < b; i++)
                dk_expand(c, env, i, 0, tbmax, m, false, &et[0]);
        } else {
#pragma omp parallel num_threads(nt)
            {
                int tid = omp_get_thread_num();
#pragma omp for schedule(dynamic, 64) nowait
                for (uint64_t i = a; i < b; i++)
                    dk_expand(c, env, i, tid, tbmax, m, true, &et[tid]);
            }
        }
        for (int t = 0; t < nt; t++)
            if (et[t].oom)
                e = CLOS_OOM;
        a = b;
        double now = util_now();
        if (now - last >= 1.0) {
            /* Rate and growth since the previous line.  Each expansion finds
             * g new positions of the level, so while g < 1 the positions
             * waiting cost about wait / (1 - g) expansions in all (a
             * geometric series; g falls as the level saturates); while g is
             * near or above 1 no end is in sight yet, and the line says so. */
            double dt = now - w_t, de = (double)(a - w_a), dn = (double)(c->n - w_n);
            double rate = dt > 0 ? de / dt : 0, g = de > 0 ? dn / de : 0;
            uint64_t wait = c->n - a;
            char eta[96];
            if (g < 0.95 && rate > 0)
                snprintf(eta, sizeof eta, "ETA %.0f s", (double)wait / (1 - g) / rate);
            else
                snprintf(eta, sizeof eta, "no ETA yet");
            say(env, &last, false, "closure on disk, level %d: %llu positions found, %llu expanded "
                "(%.0f k/s, %.2f new per expansion), %.2f GB held, %s", m,
                (unsigned long long)c->n, (unsigned long long)a, rate / 1e3, g,
                arrays_bytes(c, c->cap, c->scap) / 1e9, eta);
            w_t = now;
            w_a = a;
            w_n = c->n;
        }
    }
    if (e == CLOS_TOO_BIG) {
        dk_refuse(c, env, info, m, a, dk_deg(c, et, nt, a));
        /* refused while reading its seeds: nothing kept (a kept expansion
         * is resumed without them), a rerun seeds the level again */
        if (seeded && dk_save_cur(c, env, m, a, et, nt))
            say(env, &last, true, "level %d's expansion so far (%llu positions) kept in %s: a "
                "rerun with more --memory goes on from there", m, (unsigned long long)c->n,
                dk->dir);
        return e;
    }
    if (e != CLOS_OK)
        return e;
    dk_flush_all(c, m, et, nt);
    const uint64_t n = c->n;
    /* sorted keys: the set goes (the up pass builds its own) */
    free(c->set);
    c->set = NULL;
    c->scap = 0;
    double bb = arrays_bytes(c, c->cap, 0) + (double)n * kb;
    if (over(c, env, bb)) {
        dk_refuse(c, env, info, m, a, dk_deg(c, et, nt, a));
        return CLOS_TOO_BIG;
    }
    note_peak(c, bb);
    uint64_t *tmp = malloc(kb * (size_t)n + 8);
    if (!tmp)
        return CLOS_OOM;
    dk_sort(c->key, tmp, n, K);
    free(tmp);
    dk->st.cnt[m] = n;
    struct dk_lvl hd;
    dk_lvl_of(c, m, 0, &hd);
    const void *parts[2] = {&hd, c->key};
    uint64_t sizes[2] = {sizeof hd, n * kb};
    char name[64];
    snprintf(name, sizeof name, dk_fmt[0], m);
    if (dk->ioerr || !ck_write(dk->dir, name, dk_magic[0], parts, sizes, 2)) {
        snprintf(info->why, sizeof info->why, "cannot write level %d's files in %.150s", m, dk->dir);
        return CLOS_OOM;
    }
    char path[4200];
    dk_path(path, sizeof path, dk, "disk-in-%03d.keys", m);
    unlink(path);
    dk->st.inlen[m] = 0;
    dk->st.expanded_to = m;
    if (!dk_save_state(c, env)) {
        snprintf(info->why, sizeof info->why, "cannot write %.150s/disk.state", dk->dir);
        return CLOS_OOM;
    }
    snprintf(path, sizeof path, "%s/disk-cur.keys", dk->dir);
    unlink(path);
    double dt = util_now() - t0;
    uint64_t below = 0;
    for (int l = 0; l < m; l++)
        below += dk->st.inlen[l];
    say(env, &last, true,
        "closure on disk, level %d expanded: %llu positions (%llu seeds of %llu incoming), "
        "%.2f M/s, %.2f GB held; %llu positions in levels %d..%d so far; %.2f GB of exits "
        "waiting below", m, (unsigned long long)n, (unsigned long long)seeds,
        (unsigned long long)(m == dk->st.top ? 1 : incoming),
        dt > 0 ? (double)n / dt / 1e6 : 0.0, arrays_bytes(c, c->cap, c->scap) / 1e9,
        (unsigned long long)dk_total(c), m, dk->st.top, (double)below / 1e9);
    return CLOS_OK;
}

/* V of level m's n nodes, their bounds solved: the keys read back from
 * disk-LLL.keys in blocks, checked against its checksum as they go (a
 * mismatch: *damaged, nothing kept). */
static enum clos_err dk_values(struct clos *c, int m, uint64_t n, bool *damaged)
{
    struct clos_disk *dk = c->dk;
    const int K = c->K;
    const uint64_t B = (uint64_t)1 << 16;
    char path[4200];
    dk_path(path, sizeof path, dk, dk_fmt[0], m);
    uint64_t *buf = malloc(8 * (size_t)K * B);
    XXH3_state_t *xs = XXH3_createState();
    FILE *f = fopen(path, "rb");
    if (!buf || !xs) {
        free(buf);
        XXH3_freeState(xs);
        if (f)
            fclose(f);
        return CLOS_OOM;
    }
    uint8_t h[CK_HEAD];
    struct dk_lvl hd, want;
    dk_lvl_of(c, m, 0, &want);
    uint64_t sum = 0;
    bool ok = f && fread(h, 1, CK_HEAD, f) == CK_HEAD && fread(&hd, sizeof hd, 1, f) == 1 &&
              memcmp(&hd, &want, sizeof hd) == 0;
    if (ok) {
        memcpy(&sum, h + 16, 8);
        XXH3_64bits_reset(xs);
        XXH3_64bits_update(xs, &hd, sizeof hd);
    }
    for (uint64_t a = 0; ok && a < n; a += B) {
        uint64_t cnt = n - a < B ? n - a : B;
        ok = fread(buf, 8 * (size_t)K, (size_t)cnt, f) == (size_t)cnt;
        if (ok) {
            XXH3_64bits_update(xs, buf, 8 * (size_t)K * (size_t)cnt);
            level_values(c, a, cnt, buf);
        }
    }
    ok = ok && fgetc(f) == EOF && XXH3_64bits_digest(xs) == sum;
    if (f)
        fclose(f);
    XXH3_freeState(xs);
    free(buf);
    *damaged = !ok;
    return CLOS_OK;
}

static enum clos_err dk_up_done(struct clos *c, const struct clos_env *env, int m,
                                struct clos_info *info, double t0, uint64_t *done,
                                uint64_t resumed);

/* Pass 2, level m: read back, moves again, retrograde, values file.  The
 * moves are generated twice, once to count each node's in-level
 * predecessors and once to list them (no forward slots), the buckets are
 * scans (no links), and the keys are freed for the retrograde (V reads them
 * back: dk_values): dk_work_per.  *damaged: its keys file failed its check. */
static enum clos_err dk_up(struct clos *c, const struct clos_env *env, int tbmax, int m,
                           bool *damaged, struct clos_info *info, double t0, uint64_t *done,
                           uint64_t resumed)
{
    struct clos_disk *dk = c->dk;
    const int K = c->K;
    const uint64_t n = dk->st.cnt[m];
    /* everything but the reverse edges first; those once counted */
    double need = dk_need(c, env, n, 0.0);
    enum clos_err e = CLOS_TOO_BIG;
    if (!over(c, env, need) && 2 * n + 1 < INT32_MAX) {
        free(c->set);
        c->set = NULL;
        c->scap = 0;
        dk_keys_only(c, false);
        e = grow_nodes(c, env, n); /* it may refuse what dk_need let through */
    }
    if (e == CLOS_TOO_BIG) {
        if (c->refused > need)
            need = c->refused;
        info->by_memory = true;
        info->need = need;
        struct util_gb2 g = util_gb2(need, env->memory);
        snprintf(info->why, sizeof info->why,
                 "level %d, on disk, holds %llu positions: solving it in memory needs %s GB%s, "
                 "the budget is %s GB: raise --memory", m, (unsigned long long)n, g.need,
                 c->um ? "" : " and 4 bytes per in-level move", g.budget);
        return CLOS_TOO_BIG;
    }
    if (e != CLOS_OK)
        return e;
    struct dk_lvl hd, want;
    dk_lvl_of(c, m, 0, &want);
    void *parts[2] = {&hd, c->key};
    uint64_t sizes[2] = {sizeof hd, n * 8 * (uint64_t)K};
    char name[64];
    snprintf(name, sizeof name, dk_fmt[0], m);
    if (!ck_read(dk->dir, name, dk_magic[0], parts, sizes, 2) ||
        memcmp(&hd, &want, sizeof hd) != 0) {
        *damaged = true;
        return CLOS_OK;
    }
    c->n = n; /* no set: level_moves finds in-level children in the sorted keys */
    struct level_work w = {0};
    w.be = malloc(n + 1);
    w.cnt = malloc(n + 1);
    /* Predecessors: reverse edges where they fit the budget (their lists
     * are read where unmoves cost look-ups: darra's retrograde took 1.5x
     * as long by unmoves), else, single sowing, unmoves.  The edges are
     * counted (roff, 4 bytes a position) if even none would fit beside
     * the rest. */
    bool um = c->um;
    const bool try_edges =
        !um || (!env->unmoves_only && !over_budget(env, dk_need_by(c, env, n, 0.0, false)));
    if (try_edges)
        w.roff = calloc((size_t)n + 1, sizeof *w.roff);
    w.nl = n;
    bool missing = false;
    if (!w.be || !w.cnt || (try_edges && !w.roff))
        e = CLOS_OOM;
    if (e == CLOS_OK && !level_moves_all(c, env, m, 0, n, tbmax, &w, &missing, LM_COUNT))
        e = CLOS_STOPPED;
    uint64_t edges = 0;
    for (uint64_t p = 0; e == CLOS_OK && p < n; p++)
        edges += w.cnt[p];
    if (e == CLOS_OK && missing) { /* a child not in the closure: cannot happen */
        snprintf(info->why, sizeof info->why, "level %d on disk: a child is missing (%.150s)", m,
                 dk->dir);
        e = CLOS_OOM;
    }
    const double deg = n ? (double)edges / (double)n : 0.0;
    const double need_edges = dk_need_by(c, env, n, deg, false);
    if (um && try_edges && !over_budget(env, need_edges) && edges < UINT32_MAX) {
        um = false;
    } else if (um) {
        free(w.roff);
        w.roff = NULL;
    }
    if (e == CLOS_OK && um) {
        /* no reverse edges: the keys stay for the unmoves' look-ups, and
         * the stack is short, the copies past it waiting in a bitmap */
        note_peak(c, need);
        uint64_t sc = env->um_stack ? env->um_stack : n / 16 + 4096;
        w.scap = (int64_t)(sc < 2 * n + 1 ? sc : 2 * n + 1);
        w.stack = malloc(sizeof *w.stack * (size_t)w.scap);
        w.pend = calloc((size_t)(2 * n + 63) / 64 + 1, sizeof *w.pend);
        w.nt = env->threads > 0 ? env->threads : 1;
        w.um = malloc(sizeof *w.um * TB_UNMOVE_MAX * (size_t)w.nt);
        w.pbuf = malloc(sizeof *w.pbuf * TB_UNMOVE_MAX * UM_BATCH);
        w.pcnt = malloc(sizeof *w.pcnt * UM_BATCH);
        w.batch = malloc(sizeof *w.batch * UM_BATCH);
        if (!w.stack || !w.pend || !w.um || !w.pbuf || !w.pcnt || !w.batch)
            e = CLOS_OOM;
        if (e == CLOS_OK && !solve_level(c, env, m, 0, n, &w))
            e = CLOS_STOPPED;
        if (e == CLOS_OK)
            level_values(c, 0, n, c->key);
        free_work(&w);
        if (e != CLOS_OK)
            return e;
        return dk_up_done(c, env, m, info, t0, done, resumed);
    }
    need = need_edges;
    if (e == CLOS_OK && (over(c, env, need) || edges >= UINT32_MAX)) {
        info->by_memory = true;
        info->need = need;
        struct util_gb2 g = util_gb2(need, env->memory);
        snprintf(info->why, sizeof info->why,
                 "level %d, on disk, holds %llu positions and %llu in-level moves: solving it in "
                 "memory needs %s GB, the budget is %s GB: raise --memory", m,
                 (unsigned long long)n, (unsigned long long)edges, g.need, g.budget);
        e = CLOS_TOO_BIG;
    }
    if (e == CLOS_OK) {
        note_peak(c, need);
        roff_sum(w.roff, n);
        w.rev = malloc(sizeof *w.rev * (size_t)(edges + 1));
        if (!w.rev)
            e = CLOS_OOM;
    }
    if (e == CLOS_OK && !level_moves_all(c, env, m, 0, n, tbmax, &w, &missing, LM_FILL))
        e = CLOS_STOPPED;
    if (e == CLOS_OK) {
        roff_back(w.roff, n);
        /* the retrograde needs no keys: its stack takes their place, and V
         * reads them back from the level's file (dk_values) */
        keys_free(c);
        c->cap = 0;
        w.stack = malloc(sizeof *w.stack * (size_t)(2 * n + 1));
        w.scap = (int64_t)(2 * n + 1);
        if (!w.stack)
            e = CLOS_OOM;
    }
    if (e == CLOS_OK && !solve_level(c, env, m, 0, n, &w))
        e = CLOS_STOPPED;
    free_work(&w);
    if (e == CLOS_OK)
        e = dk_values(c, m, n, damaged);
    if (e != CLOS_OK || *damaged)
        return e;
    return dk_up_done(c, env, m, info, t0, done, resumed);
}

/* dk_up's end, level m's lo, hi, V found: its values file, both files
 * mapped, the state, the progress line. */
static enum clos_err dk_up_done(struct clos *c, const struct clos_env *env, int m,
                                struct clos_info *info, double t0, uint64_t *done,
                                uint64_t resumed)
{
    struct clos_disk *dk = c->dk;
    const uint64_t n = dk->st.cnt[m];
    struct dk_lvl hd;
    char name[64];
    dk_lvl_of(c, m, 1, &hd);
    const void *vp[4] = {&hd, c->lo, c->hi, c->v};
    uint64_t vs[4] = {sizeof hd, n, n, n};
    snprintf(name, sizeof name, dk_fmt[1], m);
    dk->st.solved_to = m;
    if (!ck_write(dk->dir, name, dk_magic[1], vp, vs, 4) || !dk_map(c, m, 0, false) ||
        !dk_map(c, m, 1, false) || !dk_save_state(c, env)) {
        snprintf(info->why, sizeof info->why, "cannot write level %d's files in %.150s", m, dk->dir);
        return CLOS_OOM;
    }
    *done += n;
    uint64_t total = dk_total(c);
    double dt = util_now() - t0, rate = dt > 0 ? (double)(*done - resumed) / dt : 0;
    double l0 = 0;
    say(env, &l0, true,
        "closure on disk, level %d solved: %llu positions, %llu of %llu done, %.2f M/s, ETA %.0f s",
        m, (unsigned long long)n, (unsigned long long)*done, (unsigned long long)total,
        rate / 1e6, rate > 0 ? (double)(total - *done) / rate : 0.0);
    return CLOS_OK;
}

/* The closure of root (level top) on disk in env->work: both passes,
 * resumed from disk.state when it is this solve's. */
static enum clos_err dk_build(struct clos *c, const struct clos_env *env, int top, int tbmax,
                              const uint64_t *rootw, struct clos_info *info)
{
    struct clos_disk *dk = calloc(1, sizeof *dk);
    if (!dk)
        return CLOS_OOM;
    c->dk = dk;
    c->um = tb_unmove_supported(c->rs);
    snprintf(dk->dir, sizeof dk->dir, "%s", env->work);
    dk_sums(env, dk->base);
    double last = 0, t0 = util_now();
    struct dk_meta fresh;
    memset(&fresh, 0, sizeof fresh);
    snprintf(fresh.rules, sizeof fresh.rules, "%s", c->rs->name);
    fresh.pits = (uint32_t)c->pits;
    fresh.K = (uint32_t)c->K;
    fresh.tbmax = tbmax;
    fresh.top = top;
    fresh.expanded_to = top + 1;
    fresh.solved_to = -1;
    memcpy(fresh.root, rootw, 8 * (size_t)c->K);
    /* this solve's state, if DIR holds it */
    void *sp[1] = {&dk->st};
    uint64_t ss[1] = {sizeof dk->st};
    char path[4200];
    snprintf(path, sizeof path, "%s/disk.state", dk->dir);
    bool had = access(path, F_OK) == 0;
    bool resumed = ck_read(dk->dir, "disk.state", "SOWDKS01", sp, ss, 1) &&
                   strcmp(dk->st.rules, fresh.rules) == 0 && dk->st.pits == fresh.pits &&
                   dk->st.K == fresh.K && dk->st.tbmax == tbmax && dk->st.top == top &&
                   memcmp(dk->st.root, fresh.root, sizeof fresh.root) == 0 &&
                   dk->st.expanded_to >= 0 && dk->st.expanded_to <= top + 1 &&
                   dk->st.solved_to >= -1 && dk->st.solved_to <= top;
    struct dk_cur cur;
    bool have_cur = false, bad_cur = false;
    int next = dk->st.expanded_to - 1; /* the next level with seeds */
    while (resumed && next >= 0 && next != top && !dk->st.inlen[next])
        next--;
    if (resumed && next >= 0) {
        enum clos_err e = dk_load_cur(c, env, next, &cur, &have_cur, &bad_cur);
        if (e == CLOS_TOO_BIG) { /* too big for this budget: kept for a rerun with more */
            c->n = cur.n;
            dk_refuse(c, env, info, next, cur.a,
                      cur.deg_ppm ? cur.deg_ppm * 1e-6 : (double)c->slots);
            c->n = 0;
        }
        if (e != CLOS_OK)
            return e;
    }
    if (bad_cur)
        say(env, &last, true, "note: %s/disk-cur.keys is damaged or not this level's: level %d "
            "is expanded again from its start", dk->dir, next);
    if (have_cur) { /* the counters and incoming files of that moment */
        dk->st.nodes = cur.nodes;
        dk->st.visits = cur.visits;
        dk->st.tb_hits = cur.tb_hits;
        memcpy(dk->st.inlen, cur.inlen, sizeof cur.inlen);
    }
    if (resumed) {
        env->nodes[0] += dk->st.nodes;
        env->visits[0] += dk->st.visits;
        env->tb_hits[0] += dk->st.tb_hits;
        /* the appends of a level stopped mid-way are dropped */
        for (int l = 0; l < dk->st.expanded_to && resumed; l++) {
            dk_path(path, sizeof path, dk, "disk-in-%03d.keys", l);
            struct stat sb;
            if (!dk->st.inlen[l])
                unlink(path);
            else if (stat(path, &sb) < 0 || (uint64_t)sb.st_size < dk->st.inlen[l] ||
                     truncate(path, (off_t)dk->st.inlen[l]) < 0)
                resumed = false;
        }
        if (!resumed)
            say(env, &last, true, "note: %s/disk-in-*.keys damaged: the closure on disk starts "
                "over", dk->dir);
        else {
            char done[96] = "no level expanded yet", part[96] = "", sol[48] = "none solved yet";
            if (dk->st.expanded_to < top)
                snprintf(done, sizeof done, "levels %d..%d expanded (%llu positions)",
                         dk->st.expanded_to, top, (unsigned long long)dk_total(c));
            else if (dk->st.expanded_to == top)
                snprintf(done, sizeof done, "level %d expanded (%llu positions)", top,
                         (unsigned long long)dk_total(c));
            if (have_cur)
                snprintf(part, sizeof part,
                         ", level %d in progress (%llu positions, %llu expanded)", cur.level,
                         (unsigned long long)cur.n, (unsigned long long)cur.a);
            if (dk->st.solved_to >= 0)
                snprintf(sol, sizeof sol, "levels up to %d solved", dk->st.solved_to);
            say(env, &last, true, "closure on disk resumed from %s: %s%s, %s", dk->dir, done, part,
                sol);
        }
    } else if (had) {
        say(env, &last, true, "note: %s/disk.state is damaged or another solve's: the closure "
            "on disk starts over", dk->dir);
    }
    if (!resumed) { /* the state written at once: a stop in the first level resumes too */
        dk_start_over(c, env, &fresh);
        have_cur = false;
        if (!dk_save_state(c, env)) {
            snprintf(info->why, sizeof info->why, "cannot write %.150s/disk.state", dk->dir);
            return CLOS_OOM;
        }
    }
    int nt = env->threads;
    struct dk_thread *et = calloc((size_t)nt, sizeof *et);
    if (!et)
        return CLOS_OOM;
    enum clos_err e = CLOS_OK;
    for (int attempt = 0;; attempt++) {
        bool damaged = false;
        const char *what = "";
        /* pass 1: down from the root's level */
        dk_keys_only(c, true);
        for (int m = dk->st.expanded_to - 1; e == CLOS_OK && !damaged && m >= 0; m--) {
            if (stopped(env)) {
                say(env, &last, true, "stopped: levels %d..%d expanded, kept in %s", m + 1, top,
                    dk->dir);
                e = CLOS_STOPPED;
                break;
            }
            bool go_on = have_cur && m == cur.level;
            if (m != top && !dk->st.inlen[m] && !go_on)
                continue; /* nothing reaches level m */
            /* the in-level moves so far (dk_deg), if disk-cur.keys has them */
            dk->inl0 = go_on && cur.deg_ppm ? cur.deg_ppm * 1e-6 * (double)cur.a : 0.0;
            dk->askip = go_on && !cur.deg_ppm ? cur.a : 0;
            e = dk_down(c, env, tbmax, m, rootw, et, nt, &damaged, info,
                        go_on ? cur.a : UINT64_MAX);
            have_cur = false;
            if (damaged)
                what = "an incoming file (disk-in-*.keys)";
        }
        info->expand_s = util_now() - t0;
        double t1 = util_now();
        uint64_t done = 0;
        for (int m = 0; m <= dk->st.solved_to; m++)
            done += dk->st.cnt[m];
        const uint64_t resumed_done = done;
        /* pass 2: up from the lowest level; the levels solved before are
         * mapped and checked */
        for (int m = 0; e == CLOS_OK && !damaged && m <= top; m++) {
            if (!dk->st.cnt[m])
                continue;
            if (m <= dk->st.solved_to) {
                if (!dk_map(c, m, 0, true)) {
                    damaged = true;
                    what = "a level's keys (disk-*.keys)";
                    break;
                }
                if (dk_map(c, m, 1, true))
                    continue;
                say(env, &last, true, "note: %s/disk-%03d.values is damaged: levels %d..%d are "
                    "solved again", dk->dir, m, m, top);
                done = 0;
                for (int l = 0; l < m; l++)
                    done += dk->st.cnt[l];
                dk->st.solved_to = m - 1;
            }
            if (stopped(env)) {
                say(env, &last, true, "stopped: levels up to %d solved, kept in %s", m - 1,
                    dk->dir);
                e = CLOS_STOPPED;
                break;
            }
            e = dk_up(c, env, tbmax, m, &damaged, info, t1, &done, resumed_done);
            if (e == CLOS_STOPPED) /* within the level: a rerun solves it again */
                say(env, &last, true, "stopped while solving level %d: levels up to %d solved, "
                    "kept in %s", m, m - 1, dk->dir);
            if (damaged)
                what = "a level's keys (disk-*.keys)";
        }
        info->solve_s = util_now() - t1;
        if (e != CLOS_OK || !damaged)
            break;
        if (attempt) {
            snprintf(info->why, sizeof info->why, "the closure on disk in %.100s: %s is damaged again",
                     dk->dir, what);
            e = CLOS_OOM;
            break;
        }
        say(env, &last, true, "note: %s in %s is damaged: the closure on disk starts over", what,
            dk->dir);
        dk_start_over(c, env, &fresh);
        have_cur = false;
        dk_save_state(c, env);
    }
    for (int t = 0; t < nt; t++)
        for (int l = 0; l <= SOW_MAX_SEEDS; l++)
            free(et[t].buf[l]);
    free(et);
    dk_close_in(dk, e != CLOS_STOPPED);
    if (e == CLOS_OK) {
        dk->solved = true;
        info->positions = dk_total(c);
        memcpy(info->level_count, dk->st.cnt, sizeof info->level_count);
        c->n = 0; /* the in-memory arrays hold the last level solved, no more */
    } else if (e == CLOS_STOPPED) {
        /* the state as of the last level finished stays; nothing to add */
    }
    info->layers = 0;
    return e;
}

enum clos_err clos_build(struct clos *c, const struct clos_env *env, const sow_position *root)
{
    struct clos_info dummy, *info = env->info ? env->info : &dummy;
    memset(info, 0, sizeof *info);
    clos_reset(c);
    c->peak = 0;
    c->refused = 0;
    int n = rules_board_seeds(c->rs, root);
    int K = clos_words_for(c->rs, n);
    if (K > MAX_KEY_WORDS || n > 127) { /* values are kept in int8 */
        snprintf(info->why, sizeof info->why,
                 "the closure keeps values in one byte: at most 127 seeds on the board (%d)", n);
        return CLOS_TOO_BIG;
    }
    if (K != c->K) {
        free_arrays(c);
        c->K = K;
    }
    enum clos_err e = CLOS_OK;
    if (!c->set || c->scap > ((uint64_t)1 << 16)) {
        /* a small start: a big set kept from an earlier solve would cost
         * every small solve its clearing */
        free(c->set);
        c->set = NULL;
        c->scap = 0;
        e = rebuild_set(c, env, 1 << 12);
    } else {
        memset(c->set, 0xFF, sizeof *c->set * (size_t)c->scap);
    }
    if (e == CLOS_OK && c->cap > ((uint64_t)1 << 20)) {
        keys_free(c);
        free(c->lo);
        free(c->hi);
        free(c->v);
        c->key = NULL;
        c->lo = c->hi = c->v = NULL;
        c->cap = 0;
    }
    if (e == CLOS_OK)
        e = grow_nodes(c, env, 1);
    /* exits into levels the tables hold are answered by them */
    int tbmax = env->tb ? tb_max_level(env->tb) : -1;
    uint64_t lvl[SOW_MAX_SEEDS + 1] = {0}, rootw[MAX_KEY_WORDS] = {0};
    clos_pack(c->rs, K, root, rootw);
    int done = -1;
    bool loaded = false;
    double last = 0;
    if (e == CLOS_OK && env->disk && env->work && env->max_nodes == UINT64_MAX) {
        /* (diskclosure) level by level on disk */
        e = dk_build(c, env, n, tbmax, rootw, info);
        if (e == CLOS_TOO_BIG && c->refused > 0)
            info->by_memory = true;
        if (e == CLOS_TOO_BIG && c->refused > info->need)
            info->need = c->refused;
        info->bytes = arrays_bytes(c, c->cap, c->scap);
        info->peak = c->peak;
        if (e != CLOS_OK && e != CLOS_TOO_BIG)
            memset(info->level_count, 0, sizeof info->level_count);
        if (e != CLOS_OK)
            clos_reset(c);
        return e;
    }
    if (e == CLOS_OK && env->work)
        e = ck_load(c, env, tbmax, rootw, &done, &loaded);
    if (e == CLOS_OK && loaded) {
        for (int m = 0; m <= SOW_MAX_SEEDS; m++)
            lvl[m] = c->start[m + 1] - c->start[m];
        info->layers = 0;
        e = rebuild_set(c, env, set_cap_for(c->n));
        say(env, &last, true, "closure resumed from %s: %llu positions, levels up to %d solved",
            env->work, (unsigned long long)c->n, done);
    } else if (e == CLOS_OK) {
        struct ck_meta base;
        ck_meta_of(c, env, tbmax, rootw, &base);
        struct exp_state st = {0};
        struct exp_ck ck = {tbmax, rootw, &base};
        bool resumed = false;
        if (env->work && env->max_nodes == UINT64_MAX)
            e = ck_load_expand(c, env, tbmax, rootw, &st, &resumed);
        if (e == CLOS_OK && resumed) {
            e = rebuild_set(c, env, set_cap_for(c->n));
            say(env, &last, true, "closure expansion resumed from %s: %llu positions, "
                "%llu expanded, %llu layers", env->work, (unsigned long long)c->n,
                (unsigned long long)st.a, (unsigned long long)st.layers);
        } else if (e == CLOS_OK) {
            c->n = 0;
            bool added;
            set_insert(c, rootw, clos_hash(rootw, K), false, &added);
        }
        if (e == CLOS_OK)
            e = expand_all(c, env, tbmax, info, lvl, &st, &ck);
        if (e == CLOS_OK && (e = renumber(c, env, lvl)) == CLOS_TOO_BIG) {
            info->by_memory = true;
            struct util_gb2 g = util_gb2(c->refused, env->memory);
            snprintf(info->why, sizeof info->why,
                     "%llu positions, every layer expanded; numbering them by level needs %s "
                     "GB, the budget is %s GB: raise --memory, or solve more levels first",
                     (unsigned long long)c->n, g.need, g.budget);
        }
        if (e == CLOS_OK && env->work) {
            if (!ck_save_keys(c, env, tbmax, rootw, &base))
                say(env, &last, true, "cannot write the checkpoint in %s: continuing without",
                    env->work);
            else if (env->max_nodes == UINT64_MAX) {
                char path[4096];
                snprintf(path, sizeof path, "%s/closure.expand", env->work);
                unlink(path);
            }
        }
    }
    info->positions = c->n;
    if (e == CLOS_OK)
        e = solve_levels(c, env, tbmax, info, done);
    if (e == CLOS_TOO_BIG && c->refused > 0)
        info->by_memory = true; /* the set or node arrays refused before any layer */
    if (e == CLOS_TOO_BIG && c->refused > info->need)
        info->need = c->refused; /* a growth mid-layer, past the layer's estimate */
    info->bytes = arrays_bytes(c, c->cap, c->scap);
    info->peak = c->peak;
    if (e == CLOS_OK)
        memcpy(info->level_count, lvl, sizeof info->level_count);
    else if (e != CLOS_TOO_BIG)
        memset(info->level_count, 0, sizeof info->level_count);
    if (e != CLOS_OK)
        clos_reset(c);
    return e;
}

bool clos_find(const struct clos *c, const sow_position *p, int *lo, int *hi, int *v,
               bool *expanded)
{
    if (c->dk) { /* (diskclosure) the levels' files */
        uint64_t w[MAX_KEY_WORDS];
        if (!c->dk->solved || !clos_pack(c->rs, c->K, p, w))
            return false;
        int l = key_level(w, c->K);
        int64_t q = dk_find(c, l, w);
        if (q < 0 || !c->dk->map[1][l])
            return false;
        const int8_t *x = dk_payload(c->dk, 1, l);
        uint64_t N = c->dk->st.cnt[l];
        if (lo)
            *lo = x[q];
        if (hi)
            *hi = x[N + (uint64_t)q];
        if (v)
            *v = x[2 * N + (uint64_t)q];
        if (expanded)
            *expanded = true;
        return true;
    }
    if (!c->n || !c->start[SOW_MAX_SEEDS + 1])
        return false;
    uint64_t w[MAX_KEY_WORDS];
    if (!clos_pack(c->rs, c->K, p, w))
        return false;
    int64_t i = set_find(c, w);
    if (i < 0)
        return false;
    if (lo)
        *lo = c->lo[i];
    if (hi)
        *hi = c->hi[i];
    if (v)
        *v = c->v[i];
    if (expanded)
        *expanded = true;
    return true;
}
