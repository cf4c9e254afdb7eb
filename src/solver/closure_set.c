/* The closure's hash set: cells of fingerprint << 32 | node index, linear
 * probing, at most LOAD_NUM/LOAD_DEN full (closure.c "Races" for the
 * concurrent inserts).  The hot look-ups (set_insert, set_find) are inline
 * in closure_internal.h; here the rebuild and the set's size.  Part of the
 * closure solver: closure_internal.h maps its files. */
#include "closure_internal.h"

static void set_put(uint64_t *set, uint64_t scap, uint64_t h, uint32_t idx)
{
    uint64_t s = slot_of(h, scap);
    while (set[s] != EMPTY_CELL)
        s = s + 1 == scap ? 0 : s + 1;
    set[s] = make_cell(h, idx);
}

enum clos_err clos_rebuild_set(struct clos *c, const struct clos_env *env, uint64_t ncap)
{
    double b = clos_arrays_bytes(c, c->cap, ncap); /* the old set is freed first */
    if (clos_over(c, env, b))
        return CLOS_TOO_BIG;
    clos_note_peak(c, b);
    free(c->set);
    c->set = NULL;
    c->scap = 0;
    uint64_t *ns = malloc(sizeof *ns * (size_t)ncap);
    if (!ns)
        return CLOS_OOM;
    util_huge(ns, sizeof *ns * (size_t)ncap);
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

uint64_t clos_set_cap_for(uint64_t n)
{
    uint64_t s = n / LOAD_NUM * LOAD_DEN + 1024;
    return s;
}

uint64_t clos_set_cells_for(uint64_t n) { return clos_set_cap_for(n); }
