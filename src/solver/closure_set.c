/* The closure's hash set: cells of fingerprint << 32 | node index, linear
 * probing, at most LOAD_NUM/LOAD_DEN full (closure.c "Races" for the
 * concurrent inserts).  The hot look-ups (set_insert, set_find) are inline
 * in closure_internal.h; here the rebuild and the set's size.  Part of the
 * closure solver: closure_internal.h maps its files.
 *
 * A rebuild puts the nodes 0 .. n-1 into an empty set in index order.  The
 * in-memory closure's cells are written into solution files, so a rebuild
 * on several threads must give exactly the serial one's cells.  It does, by
 * what linear probing guarantees: a run of full cells between two empty
 * ones holds exactly the keys whose first cell is in it, placed by their
 * insertion order among themselves alone.  So the cells are cut into one
 * range a thread; each thread inserts, in index order, the keys whose first
 * cell is in its range, a probe that runs off its range's end going on in
 * a spill list of its own; then, one boundary after the other, the run that
 * crosses it (the run ending at the boundary, the spill, the run starting
 * after it, and any run these join once placed) is emptied and its keys put
 * back in index order.  Runs are tens of cells at 3/5 load, ranges millions:
 * should a boundary's run reach far into a range, the set is filled
 * serially instead. */
#include "closure_internal.h"

static void set_put(uint64_t *set, uint64_t scap, uint64_t h, uint32_t idx)
{
    uint64_t s = slot_of(h, scap);
    while (set[s] != EMPTY_CELL)
        s = s + 1 == scap ? 0 : s + 1;
    set[s] = make_cell(h, idx);
}

/* A cell's first slot again (from the key), for the boundaries' runs. */
static uint64_t cell_home(const struct clos *c, uint64_t cell, uint64_t scap)
{
    return slot_of(clos_hash(&c->key[(uint64_t)CELL_IDX(cell) * c->K], c->K), scap);
}

static void set_fill_serial(const struct clos *c, uint64_t *ns, uint64_t ncap)
{
    const uint64_t n = c->n;
    for (uint64_t i = 0; i < n; i++)
        set_put(ns, ncap, clos_hash(&c->key[i * c->K], c->K), (uint32_t)i);
}

/* The keys whose first slot is in [lo, hi), in index order; probes past hi
 * appended to *sp (grown as needed; false: out of memory). */
#define FILL_AHEAD 16
static bool fill_range(const struct clos *c, uint64_t *ns, uint64_t ncap, uint64_t lo,
                       uint64_t hi, uint64_t **sp, size_t *nsp, size_t *spcap)
{
    const uint64_t n = c->n;
    const int K = c->K;
    /* a ring of the next keys in range, their cells prefetched */
    uint64_t rh[FILL_AHEAD];
    uint32_t ri[FILL_AHEAD];
    int head = 0, cnt = 0;
    uint64_t i = 0;
    for (;;) {
        while (cnt < FILL_AHEAD && i < n) {
            uint64_t h = clos_hash(&c->key[i * K], K), s = slot_of(h, ncap);
            if (s >= lo && s < hi) {
                __builtin_prefetch(&ns[s], 1);
                int at = (head + cnt) % FILL_AHEAD;
                rh[at] = h;
                ri[at] = (uint32_t)i;
                cnt++;
            }
            i++;
        }
        if (!cnt)
            return true;
        uint64_t h = rh[head];
        uint32_t idx = ri[head];
        head = (head + 1) % FILL_AHEAD;
        cnt--;
        uint64_t s = slot_of(h, ncap);
        while (s < hi && ns[s] != EMPTY_CELL)
            s++;
        if (s < hi) {
            ns[s] = make_cell(h, idx);
            continue;
        }
        if (*nsp == *spcap) {
            size_t ncp = *spcap ? 2 * *spcap : 64;
            uint64_t *x = realloc(*sp, sizeof *x * ncp);
            if (!x)
                return false;
            *sp = x;
            *spcap = ncp;
        }
        (*sp)[(*nsp)++] = make_cell(h, idx);
    }
}

static int cell_idx_cmp(const void *a, const void *b)
{
    uint32_t x = CELL_IDX(*(const uint64_t *)a), y = CELL_IDX(*(const uint64_t *)b);
    return x < y ? -1 : x > y;
}

/* Cells put back from x on, in index order, as the serial fill puts them
 * when nothing else is in the way: sc[o] is cell x + o (mod ncap); *end:
 * one past the last offset written.  false: out of memory. */
static bool place_run(const struct clos *c, uint64_t ncap, uint64_t x, const uint64_t *run,
                      size_t m, uint64_t **sc, size_t *sccap, uint64_t *end)
{
    *end = 0;
    for (size_t j = 0; j < *sccap; j++)
        (*sc)[j] = EMPTY_CELL;
    for (size_t j = 0; j < m; j++) {
        uint64_t h = cell_home(c, run[j], ncap);
        uint64_t o = h >= x ? h - x : h + ncap - x;
        for (;; o++) {
            if (o >= *sccap) {
                size_t nc = 2 * (o + 1);
                uint64_t *y = realloc(*sc, sizeof *y * nc);
                if (!y)
                    return false;
                for (size_t k = *sccap; k < nc; k++)
                    y[k] = EMPTY_CELL;
                *sc = y;
                *sccap = nc;
            }
            if ((*sc)[o] == EMPTY_CELL)
                break;
        }
        (*sc)[o] = run[j];
        if (o + 1 > *end)
            *end = o + 1;
    }
    return true;
}

/* The run crossing boundary b (the end of range [lo, b)), with that range's
 * spill, put in place as the serial fill would; nxt: where the next range
 * ends.  Each boundary's work stays within a quarter of the ranges on
 * either side, so that boundaries never meet.  false: a run reaches
 * further (or out of memory): the caller fills serially. */
static bool fix_boundary(const struct clos *c, uint64_t *ns, uint64_t ncap, uint64_t lo,
                         uint64_t b, uint64_t nxt, const uint64_t *sp, size_t nsp)
{
    if (!nsp)
        return true; /* nothing crossed: the ranges' cells are the serial ones */
    const uint64_t len = b - lo, nlen = (nxt > b ? nxt : nxt + ncap) - b;
    uint64_t x = b; /* the run that ends at b starts at x */
    while (ns[x - 1] != EMPTY_CELL)
        if (b - --x >= len / 4)
            return false;
    size_t cap = 64 + nsp + (size_t)(b - x), m = 0, sccap = 0;
    uint64_t *run = malloc(sizeof *run * cap), *sc = NULL;
    if (!run)
        return false;
    for (uint64_t s = x; s < b; s++)
        run[m++] = ns[s], ns[s] = EMPTY_CELL;
    memcpy(&run[m], sp, sizeof *sp * nsp);
    m += nsp;
    /* cut: offsets from x below it are emptied into run; from it on, the
     * table's cells are the ranges' own */
    uint64_t cut = b - x, end = 0;
    bool ok = true;
    for (;;) {
        /* the full cells from cut on join the run */
        for (;;) {
            uint64_t s = x + cut >= ncap ? x + cut - ncap : x + cut;
            if (ns[s] == EMPTY_CELL)
                break;
            if (cut >= (b - x) + nlen / 4) {
                ok = false;
                break;
            }
            if (m == cap) {
                uint64_t *r2 = realloc(run, sizeof *run * cap * 2);
                if (!r2) {
                    ok = false;
                    break;
                }
                run = r2;
                cap *= 2;
            }
            run[m++] = ns[s];
            ns[s] = EMPTY_CELL;
            cut++;
        }
        if (!ok)
            break;
        qsort(run, m, sizeof *run, cell_idx_cmp);
        if (!(ok = place_run(c, ncap, x, run, m, &sc, &sccap, &end)))
            break;
        /* another run's cell among those the run now covers: it joins */
        uint64_t f = cut;
        while (f < end) {
            uint64_t s = x + f >= ncap ? x + f - ncap : x + f;
            if (ns[s] != EMPTY_CELL)
                break;
            f++;
        }
        if (f >= end)
            break;
        cut = f;
    }
    if (ok)
        for (uint64_t o = 0; o < end; o++)
            if (sc[o] != EMPTY_CELL)
                ns[x + o >= ncap ? x + o - ncap : x + o] = sc[o];
    free(run);
    free(sc);
    return ok;
}
#undef FILL_AHEAD

/* Nodes 0 .. c->n-1 into the empty set ns of ncap cells, on nt threads:
 * the serial fill's cells. */
static bool set_fill_par(const struct clos *c, uint64_t *ns, uint64_t ncap, int nt, int *fixed)
{
    uint64_t *sp[64] = {0};
    size_t nsp[64] = {0}, spcap[64] = {0};
    bool ok = true;
    if (nt > 64)
        nt = 64;
#pragma omp parallel num_threads(nt) reduction(&& : ok)
    {
        int r = omp_get_thread_num(), k = omp_get_num_threads();
        if (k == nt)
            ok = fill_range(c, ns, ncap, ncap * (uint64_t)r / (uint64_t)nt,
                            ncap * (uint64_t)(r + 1) / (uint64_t)nt, &sp[r], &nsp[r], &spcap[r]);
        else
            ok = false;
    }
    for (int r = 0; ok && r < nt; r++) {
        if (fixed && nsp[r])
            (*fixed)++;
        uint64_t lo = ncap * (uint64_t)r / (uint64_t)nt, b = ncap * (uint64_t)(r + 1) / (uint64_t)nt;
        uint64_t nxt = ncap * (uint64_t)((r + 1) % nt + 1) / (uint64_t)nt;
        ok = fix_boundary(c, ns, ncap, lo, b, nxt, sp[r], nsp[r]);
    }
    for (int r = 0; r < nt; r++)
        free(sp[r]);
    return ok;
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
    const int nt = env->threads > 1 && n >= ((uint64_t)1 << 14) ? env->threads : 1;
    if (nt > 1 && c->dk) {
        /* on disk, where a level's set is never saved: the keys are
         * distinct, so threads only race for empty cells: a cell taken
         * under a thread's feet sends it to the next one.  The cells'
         * order then depends on the threads, which nothing reads: a
         * lookup finds its key wherever the probe put it. */
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
    } else if (nt == 1 || ncap < ((uint64_t)1 << 16) * (uint64_t)nt ||
               !set_fill_par(c, ns, ncap, nt, NULL)) {
        /* (the parallel fill refused: the set emptied, then filled again) */
        if (nt > 1)
            memset(ns, 0xFF, sizeof *ns * (size_t)ncap);
        set_fill_serial(c, ns, ncap);
    }
    c->set = ns;
    c->scap = ncap;
    return CLOS_OK;
}

int clos_set_fill_check(const struct clos *c, uint64_t ncap, int threads)
{
    uint64_t *a = malloc(sizeof *a * (size_t)ncap), *b = malloc(sizeof *b * (size_t)ncap);
    int r = -2, fixed = 0;
    if (a && b && c->n < ncap) {
        memset(a, 0xFF, sizeof *a * (size_t)ncap);
        memset(b, 0xFF, sizeof *b * (size_t)ncap);
        set_fill_serial(c, a, ncap);
        if (set_fill_par(c, b, ncap, threads, &fixed))
            r = memcmp(a, b, sizeof *a * (size_t)ncap) ? -1 : fixed;
    }
    free(a);
    free(b);
    return r;
}

uint64_t clos_set_cap_for(uint64_t n)
{
    uint64_t s = n / LOAD_NUM * LOAD_DEN + 1024;
    return s;
}

uint64_t clos_set_cells_for(uint64_t n) { return clos_set_cap_for(n); }
