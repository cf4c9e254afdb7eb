/* The closure's node arrays and its memory budget (env->memory; closure.c
 * "Memory"): the key array's mapping, what the arrays, the levels' work and
 * the closure on disk cost in bytes, and the growth of the node arrays
 * within the budget.  Part of the closure solver: closure_internal.h maps
 * its files. */
#include "closure_internal.h"

/* The key array is anonymous memory of its own, grown by mremap, which
 * moves its pages instead of copying them: a growth holds the new size
 * only, where realloc may hold the old and the new block (glibc's does
 * mremap only above its mmap threshold, at most 32 MB). */
size_t clos_keys_bytes(uint64_t words)
{
    return ((size_t)words * 8 + 4096) / 4096 * 4096;
}

uint64_t *clos_keys_map(size_t nb)
{
    void *p = mmap(NULL, nb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    /* huge pages for the whole mapping, not util_huge's 2 MiB-aligned part:
     * advice on a part splits the mapping in up to three, and mremap (keys_resize)
     * refuses a range over several (EFAULT); mremap moves the advice with the
     * pages */
    madvise(p, nb, MADV_HUGEPAGE);
    return p;
}

/* Resized to hold words words (the old contents kept); false if refused. */
static bool keys_resize(struct clos *c, uint64_t words)
{
    const size_t nb = clos_keys_bytes(words);
    void *p = c->key ? mremap(c->key, c->kbytes, nb, MREMAP_MAYMOVE) : clos_keys_map(nb);
    if (!p || p == MAP_FAILED)
        return false;
    c->key = p;
    c->kbytes = nb;
    return true;
}

void clos_keys_free(struct clos *c)
{
    if (c->key)
        munmap(c->key, c->kbytes);
    c->key = NULL;
    c->kbytes = 0;
}

void clos_free_arrays(struct clos *c)
{
    clos_keys_free(c);
    free(c->lo);
    free(c->hi);
    free(c->v);
    free(c->set);
    c->key = NULL;
    c->lo = c->hi = c->v = NULL;
    c->set = NULL;
    c->cap = c->scap = 0;
}

/* Bytes of the node arrays at capacity cap and of the set at scap. */
double clos_arrays_bytes(const struct clos *c, uint64_t cap, uint64_t scap)
{
    return (double)cap * (8.0 * c->K + (c->keys_only ? 0.0 : 3.0)) + 8.0 * (double)scap;
}

/* Work bytes per position of the level being solved: be, cnt, forward
 * in-level children (slots), roff, reverse edges (at most slots), the
 * retrograde's seeds by value (4) and bitmap of both copies (0.25); the
 * threads' stacks (closure_rounds.c, 32 KB each) are not counted. */
double clos_level_work_per(const struct clos *c)
{
    return 2.0 + 4.0 * c->slots + 4.0 + 4.0 * c->slots + 4.25;
}

/* Work bytes per position of a level solved on disk (dk_up) with deg
 * in-level moves a position, besides its keys and values: be, cnt, roff and
 * 4 per in-level move (reverse edges) while the moves are listed; no forward
 * slots (the moves are generated twice).  The retrograde's seeds by value
 * and bitmap (4.25 bytes) are allocated only once the keys (8 bytes or
 * more) are freed (dk_up), so they never add to them: on 2x6 with 4
 * in-level moves 22 bytes against clos_level_work_per's 58.25. */
static double dk_work_per(double deg)
{
    return 2.0 + 4.0 + 4.0 * deg;
}

/* The same with the predecessors by unmoves (c->um: closure_rounds.c um_preds), whatever
 * the in-level moves: be, cnt, the bitmap of copies waiting (2 bits) and
 * the stack (4 bytes an entry; per position at the default size), the keys
 * kept for the unmoves' look-ups; besides, 4096 entries and the unmove
 * buffers.  On 2x6 (K = 1) 8 + 3 + 2.5 = 13.5 bytes a position. */
static double dk_um_per(const struct clos_env *env, uint64_t n)
{
    double st = env->um_stack ? 4.0 * (double)env->um_stack : 4.0 * ((double)n / 16 + 4096);
    return 2.0 + 0.25 + (n ? st / (double)n : 0.0);
}

/* Each thread's unmoves, batch and the batch's predecessors
 * (closure_rounds.c). */
#define UM_FIXED(nt)                                                                              \
    ((double)(nt) * ((double)TB_UNMOVE_MAX * (sizeof(struct tb_unmove) + 16.0) + 10.0 * UM_BATCH))

bool clos_over_budget(const struct clos_env *env, double bytes)
{
    return env->memory > 0 && bytes > env->memory;
}

/* clos_over_budget, remembering the bytes refused: a refusal then names what the
 * structure refused would have needed (a node array or the set grown
 * mid-layer, a level's retrograde), not an earlier estimate that fitted. */
bool clos_over(struct clos *c, const struct clos_env *env, double bytes)
{
    if (!clos_over_budget(env, bytes))
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

void clos_note_peak(struct clos *c, double b)
{
    if (b > c->peak)
        c->peak = b;
}

enum clos_err clos_grow_nodes(struct clos *c, const struct clos_env *env, uint64_t need)
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
    double b = clos_arrays_bytes(c, nc, c->scap) + old;
    if (clos_over_budget(env, b) && nc > need) {
        /* near the budget: the most that fits, if that holds need (else the
         * refusal names need's bytes, not the step's) */
        double fit = (env->memory - 8.0 * (double)c->scap - old) / per;
        nc = fit > (double)need ? (fit < (double)nc ? (uint64_t)fit : nc) : need;
        b = clos_arrays_bytes(c, nc, c->scap) + old;
    }
    if (clos_over(c, env, b))
        return CLOS_TOO_BIG;
    clos_note_peak(c, b);
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

/* The node arrays of a closure on disk: while its levels are expanded
 * (keys_only) only keys, which the expansion appends to and the set points
 * into (no values yet: 3 bytes a position less); while they are solved
 * keys and values, allocated anew (dk_up reads the keys from the level's
 * file). */
void dk_keys_only(struct clos *c, bool on)
{
    if (on == c->keys_only)
        return;
    if (on) {
        free(c->lo);
        free(c->hi);
        free(c->v);
        c->lo = c->hi = c->v = NULL;
    } else {
        clos_keys_free(c);
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
double dk_need_by(const struct clos *c, const struct clos_env *env, uint64_t n,
                  double deg, bool um)
{
    const double kb = 8.0 * c->K * (double)n;
    double down = kb + 8.0 * (double)clos_set_cap_for(n); /* keys only (dk_keys_only) */
    double up = kb + 3.0 * (double)n + (um ? dk_um_per(env, n) * (double)n + UM_FIXED(env->threads)
                                           : dk_work_per(deg) * (double)n);
    _Static_assert(sizeof(uint32_t) + 1 <= 8, "seeds and bitmap fit where the keys were");
    return down > up ? down : up;
}

/* dk_need_by with the predecessors the budget can always count on: unmoves
 * where the rule set has them (dk_up takes reverse edges instead when they
 * fit). */
double dk_need(const struct clos *c, const struct clos_env *env, uint64_t n, double deg)
{
    return dk_need_by(c, env, n, deg, c->um);
}

/* The most positions a level on disk can hold while expanded under the
 * budget (its keys and set: dk_need's down pass). */
uint64_t dk_most(const struct clos *c, const struct clos_env *env)
{
    double per = 8.0 * c->K + 8.0 * LOAD_DEN / LOAD_NUM;
    double n = (env->memory - 8.0 * 1024) / per;
    return n > 0 ? (uint64_t)n : 0;
}
