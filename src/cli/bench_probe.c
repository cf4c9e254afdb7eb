/* sow bench probe: random probes per second of endgame tables, raw and
 * compressed (cold and warm block cache), and the compressed size per level
 * .  Levels 0..N are built into a temporary directory (or read from
 * --dir), compressed into another for each block shift asked, and probed at
 * the same random positions through tb_probe, the solver's and the engine's
 * probe.  Times are wall (monotonic) and the probing thread's CPU seconds:
 * on a shared machine the CPU figure is the comparable one. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "tables/compress.h"
#include "cli.h"
#include "tables/tables.h"
#include "util.h"

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *m = len > 0 ? malloc((size_t)len) : NULL;
    if (m && fread(m, 1, (size_t)len, f) != (size_t)len) {
        free(m);
        m = NULL;
    }
    fclose(f);
    *size = (size_t)len;
    return m;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* splitmix64: the positions depend on the seed only */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

struct pass {
    double wall, cpu;
    uint64_t sum, fails;
};

/* One probe of every position, in order: time, and a sum of the values
 * (raw and compressed must agree). */
static struct pass probe_pass(const struct tb_set *set, const sow_position *pos, size_t n)
{
    struct pass p = {0};
    double w0 = util_now(), c0 = thread_cpu();
    for (size_t i = 0; i < n; i++) {
        int v;
        if (tb_probe(set, &pos[i], &v))
            p.sum = p.sum * 31 + (uint64_t)(v + 128);
        else
            p.fails++;
    }
    p.wall = util_now() - w0;
    p.cpu = thread_cpu() - c0;
    return p;
}

static void print_pass(const char *what, const struct pass *p, size_t n, const char *extra)
{
    printf("  %-22s %10.0f probes/s wall %10.0f probes/s cpu (%zu probes, %.3f s, %.3f cpu-s)%s\n",
           what, p->wall > 0 ? (double)n / p->wall : 0.0, p->cpu > 0 ? (double)n / p->cpu : 0.0,
           n, p->wall, p->cpu, extra);
}

/* Levels 0..seeds of raw compressed into zdir with blocks of 2^bs values,
 * their raw and stored bytes printed.  false after a message, or when
 * *stop is set (Ctrl-C: the caller says so). */
static bool compress_levels(const struct ruleset *rs, const struct tb_set *raw, const char *zdir,
                            int from, int seeds, unsigned bs, int threads,
                            volatile sig_atomic_t *stop)
{
    struct sow_error e;
    uint64_t sraw = 0, sz = 0;
    const struct tbz_write_opts wo = {.threads = threads, .stop = stop};
    for (int n = from; n <= seeds; n++) {
        uint64_t E;
        const int8_t *v = tb_level_values(raw, n, &E);
        enum sow_status st = tbz_write_b(zdir, rs, n, v, E, TBZ_LEVEL, bs, &wo, &e);
        if (st == SOW_E_INTERRUPTED)
            return false;
        char path[4200];
        tb_file_name(zdir, rs->name, rs->pits, n, path, sizeof path);
        struct tb_header h;
        if (st == SOW_OK)
            st = tb_file_load(path, rs, n, &h, NULL, NULL, NULL, &e);
        if (st != SOW_OK) {
            fprintf(stderr, "sow bench probe: %s\n", e.msg);
            return false;
        }
        sraw += TB_HEADER_SIZE + E;
        sz += h.stored;
        printf("  level %3d %12llu raw bytes %12llu stored %6.2fx\n", n,
               (unsigned long long)(TB_HEADER_SIZE + E), (unsigned long long)h.stored,
               (double)(TB_HEADER_SIZE + E) / (double)h.stored);
    }
    printf("  levels %d..%d %12llu raw bytes %12llu stored %6.2fx\n", from, seeds,
           (unsigned long long)sraw, (unsigned long long)sz, (double)sraw / (double)sz);
    return true;
}

/* Every block of the top level of zdir decompressed once, as a miss does
 * it (zstd, then the block's checksum and value range), and the time a
 * block printed.  false after a message. */
static bool time_top_blocks(const struct ruleset *rs, const struct tb_index *ix, const char *zdir,
                            int seeds, unsigned bs)
{
    struct sow_error e;
    char path[4200];
    tb_file_name(zdir, rs->name, rs->pits, seeds, path, sizeof path);
    size_t size = 0;
    uint8_t *m = read_file(path, &size);
    struct tbz z;
    int8_t *buf = malloc((size_t)1 << bs);
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    if (!m || !buf || !dc ||
        tbz_parse(m, size, tb_level_entries(ix, seeds), seeds, path, &z, &e)) {
        fprintf(stderr, "sow bench probe: cannot read back %s\n", path);
        free(m);
        free(buf);
        ZSTD_freeDCtx(dc);
        return false;
    }
    double w0 = util_now(), c0 = thread_cpu();
    bool bad = false;
    for (uint64_t k = 0; k < z.nblocks; k++)
        bad |= tbz_block_dctx(&z, k, buf, dc, &e) < 0;
    double w = util_now() - w0, c = thread_cpu() - c0;
    printf("  level %d: %llu blocks, %.2f us a block wall, %.2f us cpu (%.0f MB/s "
           "cpu)%s\n",
           seeds, (unsigned long long)z.nblocks, 1e6 * w / (double)z.nblocks,
           1e6 * c / (double)z.nblocks, c > 0 ? (double)z.entries / c / 1e6 : 0.0,
           bad ? " DAMAGED" : "");
    free(m);
    free(buf);
    ZSTD_freeDCtx(dc);
    return true;
}

/* One block shift: levels 0..seeds of raw compressed into a temporary
 * directory, the top level's blocks timed, then the probes pos[0..np-1]
 * cold and warm, checked against the raw pass rp.  false after a message
 * (or values that differ). */
static bool bench_shift(const struct ruleset *rs, const struct tb_set *raw,
                        const sow_position *pos, size_t np, int from, int seeds, unsigned bs,
                        int threads, double cache_mb, const struct pass *rp,
                        volatile sig_atomic_t *stop)
{
    struct sow_error e;
    char zdir[4096];
    if (!util_mkdtemp(zdir, sizeof zdir, "sow-bench-probe")) {
        fprintf(stderr, "sow bench probe: cannot create a temporary directory in %s: %s\n",
                util_tmpdir(), strerror(errno));
        return false;
    }
    printf("block shift %u (%u values a block), zstd level %d:\n", bs, 1u << bs, TBZ_LEVEL);
    if (!compress_levels(rs, raw, zdir, from, seeds, bs, threads, stop) || *stop) {
        util_rmdir_flat(zdir);
        return false;
    }
    struct tb_set *zs;
    enum sow_status st = tb_open(rs, zdir, &zs, &e);
    if (st == SOW_OK && cache_mb > 0)
        st = tb_set_cache(zs, (uint64_t)(cache_mb * 1e6), &e);
    if (st != SOW_OK) {
        fprintf(stderr, "sow bench probe: %s\n", e.msg);
        util_rmdir_flat(zdir);
        return false;
    }
    if (!time_top_blocks(rs, tb_set_index(raw), zdir, seeds, bs)) {
        tb_close(zs);
        util_rmdir_flat(zdir);
        return false;
    }
    if (*stop) {
        tb_close(zs);
        util_rmdir_flat(zdir);
        return false;
    }
    struct pass cold = probe_pass(zs, pos, np);
    struct tb_cache_stats cs0, cs1;
    tb_set_cache_stats(zs, &cs0);
    struct pass warm = probe_pass(zs, pos, np);
    tb_set_cache_stats(zs, &cs1);
    char x[200];
    /* what the misses added to the same probes, per miss */
    double miss_us = cs0.misses ? 1e6 * (cold.cpu - warm.cpu) / (double)cs0.misses : 0.0;
    snprintf(x, sizeof x,
             "\n  %-22s %llu blocks decompressed (%.3f a probe, ~%.1f us cpu each), "
             "cache %.1f MB",
             "", (unsigned long long)cs0.misses, (double)cs0.misses / (double)np, miss_us,
             (double)cs0.bytes / 1e6);
    print_pass("compressed, cold cache", &cold, np, x);
    snprintf(x, sizeof x, "\n  %-22s %llu blocks decompressed (%.4f a probe)", "",
             (unsigned long long)(cs1.misses - cs0.misses),
             (double)(cs1.misses - cs0.misses) / (double)np);
    print_pass("compressed, warm cache", &warm, np, x);
    bool same = cold.sum == rp->sum && warm.sum == rp->sum && !cold.fails && !warm.fails &&
                cold.fails == rp->fails;
    printf("  values: %s\n", same ? "compressed and raw agree" : "DIFFER");
    tb_close(zs);
    util_rmdir_flat(zdir);
    return same;
}

/* Random positions over levels from..top, each entry equally likely (the
 * same for a seed); *total: the entries there.  NULL if out of memory. */
static sow_position *draw_positions(const struct tb_index *ix, int from, int top, long probes,
                                    uint64_t *total)
{
    *total = 0;
    for (int n = from; n <= top; n++)
        *total += tb_level_entries(ix, n);
    sow_position *pos = malloc((size_t)probes * sizeof *pos);
    uint64_t rnd = 20261130;
    for (long i = 0; pos && i < probes; i++) {
        uint64_t r = next_rand(&rnd) % *total;
        int n = from;
        while (r >= tb_level_entries(ix, n))
            r -= tb_level_entries(ix, n++);
        tb_position_of(ix, n, r, &pos[i]);
    }
    return pos;
}

int bench_probe(int argc, char **argv)
{
    const char *rules = "oware", *dir = NULL, *shifts = "14";
    long pits = 6, seeds = 14, probes = 1000000, threads = 0;
    double cache_mb = 0;
    bool top_only = false;
    static const char usage[] =
        "usage: sow bench probe [--rules R] [--pits N] [--seeds N] [--dir DIR] [--probes M]\n"
        "                       [--block-shift B[,B...]] [--cache MB] [--threads T]\n"
        "  builds levels 0..N (default oware 2x6 up to 14) into a temporary directory (or\n"
        "  reads them from DIR), compresses them (blocks of 2^B values, default B = 14),\n"
        "  prints raw and compressed bytes and the ratio per level, the time to\n"
        "  decompress one block of the top level, then random probes per second (M\n"
        "  positions, default 1,000,000, spread over the levels by size) of the raw\n"
        "  files and of the compressed ones, cold (a fresh cache) and warm (again);\n"
        "  --top-only: level N alone (its positions, its file; the levels below in DIR\n"
        "  may be compressed)\n";
    const struct cli_option opts[] = {
        {"--rules", CLI_STR, &rules, 0, 0, "R", "rule set, default oware", 0, 0},
        {"--pits", CLI_LONG, &pits, 1, SOW_MAX_PITS, "N", "holes per side, default 6", 0, 0},
        {"--seeds", CLI_LONG, &seeds, 0, TB_MAX_LEVEL, "N", "highest level, default 14", 0, 0},
        {"--dir", CLI_STR, &dir, 0, 0, "DIR", "read levels 0..N from DIR, build nothing", 0, 0},
        {"--probes", CLI_LONG, &probes, 1, 1e9, "M", "random positions, default 1000000", 0, 0},
        {"--block-shift", CLI_STR, &shifts, 0, 0, "B,...", "block shifts to compare", 0, 0},
        {"--cache", CLI_DOUBLE, &cache_mb, 0, 1e7, "MB", "block cache, default tb_open's", 0,
         0},
        {"--threads", CLI_LONG, &threads, 1, (double)cli_max_threads(), "T",
         "threads to build and compress, default all", 0, 0},
        {"--top-only", CLI_FLAG, &top_only, 0, 0, NULL, "probe level N alone", 0, 0},
        {0}};
    const struct cli_spec spec = {"bench probe", usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;
    struct ruleset rs;
    struct sow_error e;
    enum sow_status st = rules_init(&rs, rules, (int)pits, 0, &e);
    if (st != SOW_OK) {
        cli_bad("bench probe", "%s", e.msg);
        return cli_exit_code(st);
    }
    unsigned bs[8];
    int nbs = 0;
    char list[128];
    snprintf(list, sizeof list, "%s", shifts);
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long b = strtol(t, &end, 10);
        if (*end || b < TBZ_BSHIFT_MIN || b > TBZ_BSHIFT_MAX || nbs == 8)
            return cli_bad("bench probe", "--block-shift '%s': expected up to 8 of %d..%d",
                           shifts, TBZ_BSHIFT_MIN, TBZ_BSHIFT_MAX);
        bs[nbs++] = (unsigned)b;
    }
    /* Ctrl-C: the temporary directories (levels, GBs at large N) removed */
    volatile sig_atomic_t *stop = cli_catch_signals(false);
    char tmpraw[4096];
    const char *rawdir = dir;
    int rc = CLI_FAIL;
    struct tb_set *raw = NULL;
    sow_position *pos = NULL;
    if (!dir) {
        if (!util_mkdtemp(tmpraw, sizeof tmpraw, "sow-bench-probe")) {
            fprintf(stderr, "sow bench probe: cannot create a temporary directory in %s: %s\n",
                    util_tmpdir(), strerror(errno));
            return CLI_FAIL;
        }
        rawdir = tmpraw;
        struct tb_build_opts bo = {.threads = (int)threads, .stop = stop};
        double t0 = util_now();
        st = tb_build(&rs, rawdir, (int)seeds, &bo, &e);
        if (st != SOW_OK) {
            if (st != SOW_E_INTERRUPTED)
                fprintf(stderr, "sow bench probe: %s\n", e.msg);
            rc = cli_exit_code(st);
            goto out;
        }
        printf("%s 2x%ld levels 0..%ld built in %.2f s\n", rs.name, pits, seeds,
               util_now() - t0);
    }
    st = tb_open(&rs, rawdir, &raw, &e);
    if (st != SOW_OK || tb_max_level(raw) < seeds) {
        if (st == SOW_OK)
            sow_fail(&e, SOW_E_INPUT, "levels 0..%ld of %s 2x%ld are not all in --dir %s", seeds,
                     rs.name, pits, rawdir);
        fprintf(stderr, "sow bench probe: %s\n", e.msg);
        rc = st != SOW_OK ? cli_exit_code(st) : CLI_BAD;
        goto out;
    }
    int from = top_only ? (int)seeds : 0; /* the levels probed */
    if (top_only ? !tb_level_values(raw, (int)seeds, NULL) : tb_set_compressed_bytes(raw) > 0) {
        fprintf(stderr, "sow bench probe: %s holds %s compressed: give %s\n", rawdir,
                top_only ? "the top level" : "levels", top_only ? "it raw" : "raw ones");
        rc = CLI_BAD;
        goto out;
    }
    uint64_t total;
    if (!(pos = draw_positions(tb_set_index(raw), from, (int)seeds, probes, &total))) {
        fprintf(stderr, "sow bench probe: out of memory for %ld positions\n", probes);
        goto out;
    }
    size_t np = (size_t)probes;
    struct pass rp = probe_pass(raw, pos, np); /* pages of the files faulted in */
    rp = probe_pass(raw, pos, np);
    printf("random probes over levels %d..%ld (%llu positions):\n", from, seeds,
           (unsigned long long)total);
    print_pass("raw", &rp, np, "");
    for (int b = 0; b < nbs; b++)
        if (*stop || !bench_shift(&rs, raw, pos, np, from, (int)seeds, bs[b], (int)threads,
                                  cache_mb, &rp, stop))
            goto out;
    rc = CLI_OK;
out:
    free(pos);
    tb_close(raw);
    if (!dir)
        util_rmdir_flat(tmpraw);
    if (*stop) {
        fprintf(stderr, "sow bench probe: interrupted\n");
        return cli_interrupted();
    }
    return rc;
}
