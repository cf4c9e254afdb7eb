/* The verifier (tables/tables.h tb_verify_level): a level solved again and
 * every entry checked against the game's equations from its children. */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fast.h"
#include "util.h"

/* ---- verification --------------------------------------------------------- */

enum sow_status tb_verify_level(const struct tb_set *set, int n, const struct tb_build_opts *opt,
                                int64_t *nbad, struct sow_error *e)
{
    uint64_t E;
    const int8_t *v = tb_level_values(set, n, &E);
    if (!v)
        return sow_fail(e, SOW_E_INPUT, "level %d is not loaded", n);
    int8_t *re = malloc(E ? E : 1), *lohi = malloc(2 * (E ? E : 1));
    if (!re || !lohi) {
        free(re);
        free(lohi);
        return sow_fail(e, SOW_E_NOMEM, "level %d: out of memory", n);
    }
    enum sow_status rc = tb_solve_level(&set->rs, set, n, re, lohi, opt, e);
    if (rc != SOW_OK) {
        free(re);
        free(lohi);
        if (rc == SOW_E_INTERRUPTED)
            sow_fail(e, rc, "interrupted");
        return rc;
    }
    struct lvl L;
    memset(&L, 0, sizeof L);
    L.rs = &set->rs;
    L.lower = set;
    L.ix = &set->ix;
    L.n = n;
    L.boards = set->boards[n];
    L.E = E;
    int threads = opt && opt->threads > 0 ? opt->threads : omp_get_max_threads();
    L.chunk = CHUNK;
    uint64_t nchunks = (E + CHUNK - 1) / CHUNK;
    uint64_t bad = 0, first = UINT64_MAX;
    const int8_t *bd = set->lv[n].bd; /* the level's bounds file, if loaded (tb_open_values) */
    char why[160] = "";
    /* Local checks against the successors: the stored value is the
     * recomputed one, within [-n, n], at least every exit, equal to the best
     * exit without in-level moves; and the recomputed bounds satisfy
     * lo = max(exits, -hi(q)), hi = max(exits, -lo(q)) over in-level q and
     * equal those of the level's bounds file, if it has one. */
#pragma omp parallel num_threads(threads)
    {
        struct sow_relay_cache *cache = tb_fast_thread_cache(&set->rs);
        struct sow_movelist ml;
#pragma omp for schedule(dynamic, 1) reduction(+ : bad)
        for (uint64_t ch = 0; ch < nchunks; ch++) {
            uint64_t a = ch * CHUNK, b = a + CHUNK < E ? a + CHUNK : E;
            sow_position p;
            entry_pos(&L, a, &p);
            for (uint64_t idx = a; idx < b; idx++) {
                const char *w = NULL;
                set->rs.generate(&set->rs, &p, &ml, cache, NULL);
                int best = retro_be_start(&ml), blo = RETRO_NONE_EXIT, bhi = RETRO_NONE_EXIT, inlevel = 0;
                for (int k = 0; k < ml.n; k++) {
                    const struct sow_child *c = &ml.c[k];
                    int cap = retro_taken(c);
                    if (cap) {
                        int m = n - cap;
                        uint64_t q = child_index(&L, &c->pos, m, set->boards[m]);
                        int e = retro_gain(c) - set->lv[m].v[q];
                        if (e > best)
                            best = e;
                    } else {
                        uint64_t q = child_index(&L, &c->pos, n, L.boards);
                        inlevel++;
                        if (-lohi[2 * q + 1] > blo)
                            blo = -lohi[2 * q + 1];
                        if (-lohi[2 * q] > bhi)
                            bhi = -lohi[2 * q];
                    }
                }
                int lo = lohi[2 * idx], hi = lohi[2 * idx + 1];
                int wlo = best > blo ? best : blo, whi = best > bhi ? best : bhi;
                if (v[idx] != re[idx])
                    w = "differs from the recomputed value";
                else if (v[idx] < -n || v[idx] > n)
                    w = "out of range";
                else if (best != RETRO_NONE_EXIT && v[idx] < best)
                    w = "below the value of an exit move";
                else if (!inlevel && v[idx] != best)
                    w = "not the best exit although no move stays in the level";
                else if (lo != (wlo < -n ? -n : wlo) || hi != (whi < -n ? -n : whi))
                    w = "bounds inconsistent with the successors";
                else if (bd && (bd[2 * idx] != lo || bd[2 * idx + 1] != hi))
                    w = "its bounds file's lo, hi differ from the recomputed ones";
                if (w) {
                    bad++;
#pragma omp critical(tb_verify)
                    if (idx < first) {
                        first = idx;
                        snprintf(why, sizeof why, "level %d entry %llu: %s (stored %d)", n,
                                 (unsigned long long)idx, w, v[idx]);
                    }
                }
                if (idx + 1 < b)
                    entry_next(&L, idx, &p);
            }
        }
        rules_cache_free(cache);
    }
    free(re);
    free(lohi);
    if (bad)
        sow_fail(e, SOW_OK, "%s; %llu bad entries", why, (unsigned long long)bad);
    *nbad = (int64_t)bad;
    return SOW_OK;
}

