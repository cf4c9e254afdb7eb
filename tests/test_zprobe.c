/* Compressed level files at probe speed: the shared block cache.
 * Compressed and raw probe identically for every rule set (every entry, and
 * every child, through caches of one set and of every block), a cold probe
 * decompresses exactly one block, eviction keeps answers right, threads
 * share one cache, a damaged block is reported, and the solver's in-memory
 * levels build above borrowed compressed levels as above raw ones. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "test_scale.h"
#include "tables/tables.h"
#include "tables/tb_lean.h" /* tb_open_values */
#include "util.h"
#include "tables/compress.h"

#include "test_passive.h" /* OpenMP threads wait passively */

static struct ruleset rules(const char *name, int pits)
{
    struct ruleset rs;
    struct sow_error e;
    cr_assert_eq(rules_init(&rs, name, pits, 0, &e), SOW_OK, "%s", e.msg);
    return rs;
}

/* Raw levels 0..top of rs in dr, the same compressed (blocks of 2^b) in dz. */
struct pair {
    char dr[32], dz[32];
    struct tb_set *raw, *z;
};

static void make_pair(struct pair *P, const struct ruleset *rs, int top, unsigned b)
{
    struct sow_error e;
    snprintf(P->dr, sizeof P->dr, "/tmp/sow-test-zprobe-XXXXXX");
    snprintf(P->dz, sizeof P->dz, "/tmp/sow-test-zprobe-XXXXXX");
    cr_assert(mkdtemp(P->dr) && mkdtemp(P->dz));
    struct tb_build_opts bo = {.threads = 1};
    cr_assert_eq(tb_build(rs, P->dr, top, &bo, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_open(rs, P->dr, &P->raw, &e), SOW_OK, "%s", e.msg);
    for (int n = 0; n <= top; n++) {
        uint64_t E;
        const int8_t *v = tb_level_values(P->raw, n, &E);
        cr_assert_not_null(v);
        cr_assert_eq(tbz_write_b(P->dz, rs, n, v, E, 3, b, &(struct tbz_write_opts){.threads = 1}, &e), SOW_OK, "%s", e.msg);
    }
    cr_assert_eq(tb_open(rs, P->dz, &P->z, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_max_level(P->z), top);
    cr_assert_null(tb_level_values(P->z, top, NULL), "kept compressed");
}

static void free_pair(struct pair *P)
{
    tb_close(P->raw);
    tb_close(P->z);
    util_rmdir_flat(P->dr);
    util_rmdir_flat(P->dz);
}

/* Probe p in both sets: the same answer (found or not, and the value). */
static void same_probe(const struct pair *P, const sow_position *p, const char *what, int n,
                       uint64_t i)
{
    int a = 99, b = 98;
    bool fa = tb_probe(P->raw, p, &a), fb = tb_probe(P->z, p, &b);
    cr_assert_eq(fa, fb, "%s level %d entry %llu: found %d vs %d", what, n,
                 (unsigned long long)i, fa, fb);
    if (fa)
        cr_assert_eq(a, b, "%s level %d entry %llu: %d vs %d", what, n, (unsigned long long)i, a,
                     b);
}

/* Every entry of levels 0..top (side A, and the same board with B to move)
 * and every child of each, in a scattered order (under SOW_TEST_SCALE, the
 * sanitizer builds', that share of them). */
static void compare_all(const struct pair *P, const struct ruleset *rs, int top)
{
    const struct tb_index *ix = tb_set_index(P->raw);
    for (int n = 0; n <= top; n++) {
        uint64_t E = tb_level_entries(ix, n), K = (uint64_t)test_scaled((long)E);
        for (uint64_t k = 0, i = 0; k < K; k++, i = (i + 7919) % E) {
            sow_position p;
            tb_position_of(ix, n, i, &p);
            same_probe(P, &p, rs->name, n, i);
            p.side ^= 1;
            same_probe(P, &p, rs->name, n, i);
            p.side ^= 1;
            struct sow_movelist ml;
            rules_generate(rs, &p, &ml);
            for (int c = 0; c < ml.n; c++)
                same_probe(P, &ml.c[c].pos, "child", n, i);
        }
    }
}

/* Every rule set, 2x4 levels 0..7 in blocks of 256 values: through a cache
 * of one set of 8 blocks (evicting all the time), then the default one. */
Test(zprobe, compressed_and_raw_probe_identically_every_ruleset)
{
    static const char *const names[] = {"oware", "awari", "jodu", "jodu-ibadan",
                                        "jodu-starve", "odu", "jerin", "darra"};
    for (size_t r = 0; r < sizeof names / sizeof *names; r++) {
        struct ruleset rs = rules(names[r], 4);
        struct pair P;
        struct sow_error e;
        make_pair(&P, &rs, 7, 8);
        cr_assert_eq(tb_set_cache(P.z, 1, &e), SOW_OK, "%s", e.msg);
        struct tb_cache_stats st;
        cr_assert(tb_set_cache_stats(P.z, &st));
        cr_assert_eq(st.bytes, 8u << 8, "the smallest cache: one set of 8 blocks");
        compare_all(&P, &rs, 7);
        cr_assert(tb_set_cache_stats(P.z, &st));
        cr_assert(st.misses > 100, "%s: a small cache misses (%llu)", names[r],
                  (unsigned long long)st.misses);
        cr_assert_eq(tb_set_cache(P.z, 0, &e), SOW_OK, "%s", e.msg);
        compare_all(&P, &rs, 7);
        struct tb_cache_stats s1, s2;
        cr_assert(tb_set_cache_stats(P.z, &s1));
        compare_all(&P, &rs, 7);
        cr_assert(tb_set_cache_stats(P.z, &s2));
        cr_assert_eq(s2.misses, s1.misses, "%s: the default cache holds every block: warm, "
                                           "no misses", names[r]);
        cr_assert(s2.hits > s1.hits);
        cr_assert_not(tb_set_damaged(P.z, NULL));
        free_pair(&P);
    }
}

/* Compressed levels read whole (tb_open_values: the builders' and verify's
 * lower levels) hold the raw values, every level of every rule set: each
 * level's last block is short, decompressed in place into a mapping of its
 * own, and zstd's copies past a block's end must not reach the next
 * mapping (the small levels' mappings lie side by side). */
Test(zprobe, compressed_levels_read_whole_are_the_raw_values)
{
    static const char *const names[] = {"oware", "darra", "jodu"};
    for (size_t r = 0; r < sizeof names / sizeof *names; r++) {
        struct ruleset rs = rules(names[r], 6);
        struct pair P;
        struct sow_error e;
        make_pair(&P, &rs, 8, 14);
        struct tb_set *w;
        cr_assert_eq(tb_open_values(&rs, P.dz, &w, &e), SOW_OK, "%s", e.msg);
        for (int n = 0; n <= 8; n++) {
            uint64_t E, F;
            const int8_t *a = tb_level_values(P.raw, n, &E), *b = tb_level_values(w, n, &F);
            cr_assert(a && b && E == F);
            uint64_t d = 0;
            while (d < E && a[d] == b[d])
                d++;
            cr_assert_eq(d, E, "%s level %d entry %llu: %d read whole, %d raw", names[r], n,
                         (unsigned long long)d, d < E ? b[d] : 0, d < E ? a[d] : 0);
        }
        tb_close(w);
        free_pair(&P);
    }
}

/* A cold probe decompresses exactly one block; a second probe of that block
 * none; eviction in a full set takes the least recently used block. */
Test(zprobe, cold_probe_one_block_and_lru_eviction)
{
    struct ruleset rs = rules("oware", 6);
    struct pair P;
    struct sow_error e;
    make_pair(&P, &rs, 9, 8); /* level 9: 167,960 values, 657 blocks of 256 */
    const struct tb_index *ix = tb_set_index(P.raw);
    /* the 9 entries 0, 2048, ..., 16384 of level 9: blocks 0, 8, .., 64 of
     * that level, all in one set of a one-set cache */
    cr_assert_eq(tb_set_cache(P.z, 1, &e), SOW_OK, "%s", e.msg);
    struct tb_cache_stats st;
    sow_position p[9];
    for (int j = 0; j < 9; j++)
        tb_position_of(ix, 9, (uint64_t)j * 2048, &p[j]);
    int v, w;
    cr_assert(tb_probe(P.z, &p[0], &v));
    tb_set_cache_stats(P.z, &st);
    cr_assert(st.misses == 1 && st.hits == 0, "cold: one block (%llu)",
              (unsigned long long)st.misses);
    sow_position q;
    tb_position_of(ix, 9, 17, &q); /* block 0 too */
    cr_assert(tb_probe(P.z, &q, &v));
    tb_set_cache_stats(P.z, &st);
    cr_assert(st.misses == 1 && st.hits == 1, "warm: no block");
    for (int j = 1; j < 8; j++) /* fill the set's 8 ways */
        cr_assert(tb_probe(P.z, &p[j], &v));
    tb_set_cache_stats(P.z, &st);
    cr_assert_eq(st.misses, 8);
    cr_assert(tb_probe(P.z, &p[0], &v)); /* hit: block 0 now most recent */
    cr_assert(tb_probe(P.z, &p[8], &v)); /* evicts the LRU: block of p[1] */
    tb_set_cache_stats(P.z, &st);
    cr_assert_eq(st.misses, 9);
    cr_assert(tb_probe(P.z, &p[0], &v) && tb_probe(P.z, &p[2], &v));
    tb_set_cache_stats(P.z, &st);
    cr_assert_eq(st.misses, 9, "blocks 0 and 16 stayed");
    cr_assert(tb_probe(P.z, &p[1], &v) && tb_probe(P.raw, &p[1], &w));
    cr_assert_eq(v, w, "an evicted block read again");
    tb_set_cache_stats(P.z, &st);
    cr_assert_eq(st.misses, 10, "block 8 was the one evicted");
    /* every probe of the level, each miss one block, the values right */
    for (uint64_t i = 0; i < tb_level_entries(ix, 9); i += 97) {
        tb_position_of(ix, 9, i, &q);
        cr_assert(tb_probe(P.z, &q, &v) && tb_probe(P.raw, &q, &w));
        cr_assert_eq(v, w, "entry %llu", (unsigned long long)i);
    }
    struct tb_cache_stats s2;
    tb_set_cache_stats(P.z, &s2);
    cr_assert(s2.misses - st.misses <= 657 + 8, "at most one block per probe of a new block");
    free_pair(&P);
}

/* Threads probing one small cache at once (evictions under contention):
 * every answer right.  (TSan: tests/cli/threads.sh runs a threaded solve
 * on compressed tables.) */
struct thr {
    const struct pair *P;
    int top, t;
    int bad;
};

static void *prober(void *arg)
{
    struct thr *T = arg;
    const struct tb_index *ix = tb_set_index(T->P->raw);
    for (int n = T->top; n >= 0; n--) {
        uint64_t E = tb_level_entries(ix, n);
        for (uint64_t k = 0, i = (uint64_t)T->t * 101 % E; k < E; k++, i = (i + 7919) % E) {
            sow_position p;
            tb_position_of(ix, n, i, &p);
            int a, b;
            if (!tb_probe(T->P->raw, &p, &a) || !tb_probe(T->P->z, &p, &b) || a != b)
                T->bad++;
        }
    }
    return NULL;
}

Test(zprobe, threads_share_one_cache)
{
    struct ruleset rs = rules("awari", 6);
    struct pair P;
    struct sow_error e;
    make_pair(&P, &rs, 9, 8);
    cr_assert_eq(tb_set_cache(P.z, 3 * 8 * 256, &e), SOW_OK, "%s", e.msg); /* 3 sets */
    pthread_t th[4];
    struct thr T[4];
    for (int t = 0; t < 4; t++) {
        T[t] = (struct thr){.P = &P, .top = 9, .t = t};
        cr_assert_eq(pthread_create(&th[t], NULL, prober, &T[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        cr_assert_eq(T[t].bad, 0, "thread %d: %d wrong answers", t, T[t].bad);
    }
    free_pair(&P);
}

/* A block damaged after the file passed its checks (payload checksum made
 * to match again): tb_open accepts it, a probe of that block fails and the
 * set reports it in one line; other blocks still answer. */
Test(zprobe, damaged_block_reported)
{
    struct ruleset rs = rules("oware", 6);
    struct pair P;
    struct sow_error e;
    make_pair(&P, &rs, 8, 10); /* level 8: 75,582 values, 74 blocks of 1,024 */
    char path[4200];
    tb_file_name(P.dz, rs.name, rs.pits, 8, path, sizeof path);
    FILE *f = fopen(path, "r+b");
    cr_assert(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    uint8_t *m = malloc((size_t)size);
    fseek(f, 0, SEEK_SET);
    cr_assert_eq(fread(m, 1, (size_t)size, f), (size_t)size);
    uint64_t a, b, sum, hsum;
    memcpy(&a, m + TB_HEADER_SIZE + 3 * TBZ_INDEX_ENTRY, 8);
    memcpy(&b, m + TB_HEADER_SIZE + 4 * TBZ_INDEX_ENTRY, 8);
    m[(a + b) / 2] ^= 0x21; /* inside block 3 */
    sum = XXH3_64bits(m + TB_HEADER_SIZE, (size_t)size - TB_HEADER_SIZE);
    memcpy(m + 72, &sum, 8);
    hsum = XXH3_64bits(m, 120);
    memcpy(m + 120, &hsum, 8);
    fseek(f, 0, SEEK_SET);
    cr_assert_eq(fwrite(m, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    free(m);
    struct tb_set *d;
    cr_assert_eq(tb_open(&rs, P.dz, &d, &e), SOW_OK, "the stored checksum matches: %s", e.msg);
    const struct tb_index *ix = tb_set_index(d);
    sow_position p;
    int v, w;
    tb_position_of(ix, 8, 3 * 1024 + 7, &p);
    cr_assert_not(tb_set_damaged(d, NULL));
    cr_assert_not(tb_probe(d, &p, &v), "a damaged block answers nothing");
    cr_assert(tb_set_damaged(d, &e));
    cr_assert(strstr(e.msg, "level 8 block 3 damaged") && !strchr(e.msg, '\n'), "%s", e.msg);
    cr_assert_not(tb_probe(d, &p, &v), "nor later");
    tb_position_of(ix, 8, 5 * 1024 + 7, &p);
    cr_assert(tb_probe(d, &p, &v) && tb_probe(P.raw, &p, &w));
    cr_assert_eq(v, w);
    tb_close(d);
    free_pair(&P);
}

/* The solver's and the engine's levels in memory (tb_mem) over compressed
 * tables: the levels are borrowed compressed (probed through the tables'
 * cache), and the levels built above them equal those built above raw. */
Test(zprobe, mem_levels_above_compressed_tables)
{
    struct ruleset rs = rules("awari", 4);
    struct pair P;
    struct sow_error e;
    make_pair(&P, &rs, 6, 8);
    struct tb_mem *mr = tb_mem_new(&rs, P.raw), *mz = tb_mem_new(&rs, P.z);
    cr_assert(mr && mz);
    cr_assert_eq(tb_mem_top(mz), 6, "compressed levels borrowed");
    const struct tb_set *sz = tb_mem_set(mz), *sr = tb_mem_set(mr);
    struct tb_cache_stats s0, s1;
    cr_assert(tb_set_cache_stats(P.z, &s0));
    const struct tb_index *ix = tb_set_index(P.raw);
    for (uint64_t i = 0; i < tb_level_entries(ix, 6); i++) {
        sow_position p;
        tb_position_of(ix, 6, i, &p);
        int a, b;
        cr_assert(tb_probe(sr, &p, &a) && tb_probe(sz, &p, &b));
        cr_assert_eq(a, b);
    }
    cr_assert(tb_set_cache_stats(P.z, &s1));
    cr_assert(s1.hits + s1.misses > s0.hits + s0.misses, "through the tables' cache");
    struct tb_mem_opts o = {.threads = 1, .budget = 1u << 20};
    cr_assert_eq(tb_mem_extend(mr, 8, &o, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_mem_extend(mz, 8, &o, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_mem_top(mz), 8);
    for (int n = 0; n <= 8; n++) {
        uint64_t E;
        const int8_t *a = tb_level_values(sr, n, &E), *b = tb_level_values(sz, n, NULL);
        cr_assert(a && b && memcmp(a, b, E) == 0, "level %d", n);
    }
    tb_mem_free(mz);
    tb_mem_free(mr);
    /* the tables' own levels stay compressed and probe as before */
    cr_assert_null(tb_level_values(P.z, 6, NULL));
    compare_all(&P, &rs, 6);
    free_pair(&P);
}

Test(zprobe, block_shift_limits)
{
    struct ruleset rs = rules("oware", 2);
    struct sow_error e;
    int8_t v[4] = {0};
    cr_assert_eq(tbz_write_b("/nonexistent", &rs, 0, v, 1, 3, TBZ_BSHIFT_MIN - 1, NULL, &e),
                 SOW_E_INPUT);
    cr_assert_eq(tbz_write_b("/nonexistent", &rs, 0, v, 1, 3, TBZ_BSHIFT_MAX + 1, NULL, &e),
                 SOW_E_INPUT);
    cr_assert_null(tbz_cache_new(1 << 20, TBZ_BSHIFT_MAX + 1));
}

/* A write tells its progress between batches of blocks and stops at the
 * next batch once asked (Ctrl-C), leaving no file and the raw level as it
 * was. */
struct ztell {
    int calls, stop_after;
    double last;
    volatile sig_atomic_t stop;
};

static void ztell_progress(void *ctx, double frac)
{
    struct ztell *t = ctx;
    cr_assert(frac >= 0 && frac < 1 && (t->calls == 0 ? frac == 0 : frac > t->last),
              "call %d: %g after %g", t->calls, frac, t->last);
    t->last = frac;
    if (++t->calls == t->stop_after)
        t->stop = 1;
}

Test(zprobe, write_tells_progress_and_stops)
{
    struct ruleset rs = rules("oware", 6);
    struct sow_error e;
    char d[32] = "/tmp/sow-test-zstop-XXXXXX";
    cr_assert(mkdtemp(d));
    struct tb_build_opts bo = {.threads = 1};
    cr_assert_eq(tb_build(&rs, d, 8, &bo, &e), SOW_OK, "%s", e.msg);
    char path[4200], tmp[4300];
    tb_file_name(d, rs.name, rs.pits, 8, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    static uint8_t before[1 << 20], after[1 << 20];
    size_t nb = fread(before, 1, sizeof before, f);
    fclose(f);
    struct tb_set *raw;
    cr_assert_eq(tb_open(&rs, d, &raw, &e), SOW_OK, "%s", e.msg);
    uint64_t E;
    const int8_t *v = tb_level_values(raw, 8, &E);
    cr_assert_not_null(v);
    /* blocks of 2^8: E / 256 blocks in batches of 32 (one thread) */
    uint64_t K = (E + 255) / 256, batches = (K + 31) / 32;
    cr_assert_gt(batches, 4, "level 8: %llu batches", (unsigned long long)batches);
    struct ztell t = {.stop_after = 3};
    struct tbz_write_opts wo = {.threads = 1, .stop = &t.stop, .progress = ztell_progress,
                                .ctx = &t};
    cr_assert_eq(tbz_write_b(d, &rs, 8, v, E, 3, 8, &wo, &e), SOW_E_INTERRUPTED);
    cr_assert_eq(t.calls, 3, "stopped at the batch after the flag: %d calls", t.calls);
    cr_assert(strstr(e.msg, "interrupted"), "%s", e.msg);
    cr_assert_neq(access(tmp, F_OK), 0, "no temporary file left");
    f = fopen(path, "rb");
    cr_assert_not_null(f);
    size_t na = fread(after, 1, sizeof after, f);
    fclose(f);
    cr_assert(na == nb && memcmp(before, after, na) == 0, "the raw level as it was");
    t = (struct ztell){.stop_after = -1};
    cr_assert_eq(tbz_write_b(d, &rs, 8, v, E, 3, 8, &wo, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq((uint64_t)t.calls, batches, "one call a batch: %d of %llu", t.calls,
                 (unsigned long long)batches);
    tb_close(raw);
    struct tb_set *z;
    cr_assert_eq(tb_open(&rs, d, &z, &e), SOW_OK, "%s", e.msg);
    cr_assert_null(tb_level_values(z, 8, NULL), "level 8 compressed now");
    tb_close(z);
    util_rmdir_flat(d);
}
