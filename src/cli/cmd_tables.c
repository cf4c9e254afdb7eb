/* sow tables: build, inspect, verify and probe endgame tables. */
#include <dirent.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "sow/search.h"
#include "sow/position.h"
#include "tables/compress.h"
#include "tables/tables.h"
#ifdef SOW_MPI
#include "tables/tables_mpi.h"
#endif
#include "tables/tb_lean.h"
#include "util.h"

static const char usage[] =
    "usage: sow tables SUBCOMMAND [OPTIONS]\n"
    "  build  [--rules R] [--pits N] --seeds N [--dir DIR] [--threads T] [--memory GB]\n"
    "         [--builder auto|fast|lean] [--bounds]\n"
    "         build the missing levels 0..N (seeds on the board); interrupted builds\n"
    "         leave only complete levels and resume; --memory (default 3/4 of RAM)\n"
    "         refuses up front what does not fit; --builder auto (default) uses the\n"
    "         fast builder for the levels that fit --memory with it, the lean one from\n"
    "         the first that does not (relay rule sets: in-level edges in temporary\n"
    "         files in DIR, up to about 31 B/position);\n"
    "         --rules A,B,...: each rule set in turn (one MPI job for all of them);\n"
    "         --bounds: also each level's forced bounds (RULES-2xN-LLL.sowtbb, 2 B/position:\n"
    "         exact move values from the tables), levels present without them solved again\n"
    "  info   [DIR]              the level files present, sizes (raw and stored), checksums\n"
    "  compress [--rules R] [--pits N] [--dir DIR] [--threads T]\n"
    "         rewrite every level present in zstd blocks (probes stay exact; the\n"
    "         builders read compressed lower levels decompressed)\n"
    "  stats  [--rules R] [--pits N] --seeds n [--dir DIR] [--json]\n"
    "         counts of values > 0, = 0, < 0 and the histogram of level n\n"
    "  verify [DIR] [--threads T] [--memory GB] checksums, then every level recomputed\n"
    "         from the levels below and checked entry by entry against its successors;\n"
    "         a level that cannot fit --memory (default 3/4 of RAM) is not checked\n"
    "         and says what it needs (exit 2)\n"
    "  probe  [--rules R] [--pits N] [--dir DIR | --solution FILE] POS\n"
    "         the value of POS and of each of its moves\n"
    "DIR defaults to $SOW_TABLES, else ./tables.  Rule set default oware, 2x6.\n"
    "exit status: 0 ok, 1 failure (I/O, verification), 2 bad input, 130 interrupted,\n"
    "143 SIGTERM.  A second builder in the same DIR waits for the first (a lock).\n";

struct topts {
    const char *rules, *dir, *pos, *solution;
    long pits, seeds, threads;
    double memory_gb, memory;
    bool json, pits_given, bounds;
    const char *builder; /* --builder auto|fast|lean */
};

/* Which options a subcommand takes (bits of the table in parse). */
enum { T_RULES = 1, T_PITS = 2, T_SEEDS = 4, T_THREADS = 8, T_MEMORY = 16, T_DIR = 32,
       T_JSON = 64, T_BUILDER = 128, T_SOLUTION = 256, T_BOUNDS = 512 };

/* Parse a subcommand's options (those in `which`); the positional argument
 * into o->pos (and o->dir if pos_is_dir).  0, CLI_HELP or CLI_BAD. */
static int parse(const char *cmd, int argc, char **argv, struct topts *o, bool pos_is_dir,
                 unsigned which)
{
    memset(o, 0, sizeof *o);
    o->rules = "oware";
    o->pits = 6;
    o->seeds = -1;
    o->dir = tb_default_dir();
    const struct cli_option all[] = {
        {"--rules", CLI_STR, &o->rules, 0, 0, "R", "rule set, default oware", 0, 0},
        {"--pits", CLI_LONG, &o->pits, 1, SOW_MAX_PITS, "N", "holes per side, default 6", 0,
         &o->pits_given},
        {"--seeds", CLI_LONG, &o->seeds, 0, 255, "N", "seeds on the board: the level (0..127)",
         0, 0},
        {"--threads", CLI_LONG, &o->threads, 1, (double)cli_max_threads(), "T",
         "threads, default all", 0, 0},
        {"--memory", CLI_DOUBLE, &o->memory_gb, 0.001, 1e6, "GB", "memory limit, default 3/4 of RAM",
         0, 0},
        {"--dir", CLI_STR, &o->dir, 0, 0, "DIR", "table directory, default $SOW_TABLES or ./tables",
         0, 0},
        {"--json", CLI_FLAG, &o->json, 0, 0, NULL, "JSON output", 0, 0},
        {"--builder", CLI_STR, &o->builder, 0, 0, "auto|fast|lean",
         "the fast builder for the levels that fit --memory, the lean one above (default auto)", 0, 0},
        {"--solution", CLI_STR, &o->solution, 0, 0, "FILE",
         "probe: answer from a solution file (sow solve --save) instead", 0, 0},
        {"--bounds", CLI_FLAG, &o->bounds, 0, 0, NULL,
         "build: also write each level's forced bounds file (.sowtbb)", 0, 0},
    };
    struct cli_option opts[sizeof all / sizeof all[0] + 1];
    int k = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (which & (1u << i))
            opts[k++] = all[i];
    opts[k] = (struct cli_option){0};
    const struct cli_spec spec = {cmd, usage, opts, NULL, 1, pos_is_dir ? "directory" : NULL};
    int r = cli_parse(&spec, argc, argv, &o->pos, NULL);
    if (r)
        return r;
    if (o->pos && pos_is_dir)
        o->dir = o->pos;
    o->memory = o->memory_gb * 1e9;
    return o->memory_gb > 0 ? cli_memory_check(cmd, o->memory_gb) : 0;
}

static int setup_rules(const char *cmd, const struct topts *o, struct ruleset *rs)
{
    struct sow_error e;
    enum sow_status st = rules_init(rs, o->rules, (int)o->pits, 0, &e);
    if (st != SOW_OK) {
        cli_bad(cmd, "%s", e.msg);
        return cli_exit_code(st);
    }
    return 0;
}

/* ---- build ----------------------------------------------------------------- */

struct bar {
    int max_level;
    bool tty;
    double t0;
    int level;
    const char *builder; /* of the level last built */
    double peak;
    int fast_hi; /* the highest level the fast builder built, -1: none */
    double said; /* not a terminal: when the level's last progress line was written */
};

/* Not a terminal (a log file, a batch job's stderr): a whole progress line
 * at most this often, so that a long level still shows how far it is. */
#define BAR_LOG_EVERY 60.0

static void fmt_count(double x, char *buf, size_t len)
{
    if (x >= 1e9)
        snprintf(buf, len, "%.2fG", x / 1e9);
    else if (x >= 1e6)
        snprintf(buf, len, "%.2fM", x / 1e6);
    else if (x >= 1e3)
        snprintf(buf, len, "%.1fk", x / 1e3);
    else
        snprintf(buf, len, "%.0f", x);
}

static void on_progress(void *ctx, int level, uint64_t entries, double frac, const char *phase)
{
    struct bar *b = ctx;
    if (level < 0) { /* a note (another builder holds the directory) */
        fprintf(stderr, "sow tables build: %s\n", phase);
        return;
    }
    const double now = util_now();
    if (level != b->level) {
        b->level = level;
        b->t0 = b->said = now;
    }
    if (!b->tty && now - b->said < BAR_LOG_EVERY)
        return;
    double el = now - b->t0;
    double done = frac * (double)entries;
    char d[32], t[32], r[32];
    fmt_count(done, d, sizeof d);
    fmt_count((double)entries, t, sizeof t);
    fmt_count(el > 0 ? done / el : 0, r, sizeof r);
    double eta = frac > 0.01 ? el * (1 - frac) / frac : 0;
    if (!b->tty) {
        b->said = now;
        fprintf(stderr, "level %3d/%d: %3.0f%% %s, %s of %s positions, %.0f s so far, ETA %.0f s\n",
                level, b->max_level, 100 * frac, phase, d, t, el, eta);
        fflush(stderr);
        return;
    }
    char bar[21];
    int k = (int)(frac * 20);
    for (int i = 0; i < 20; i++)
        bar[i] = i < k ? '#' : '.';
    bar[20] = 0;
    fprintf(stderr, "\rlevel %3d/%d [%s] %3.0f%% %-6s %8s/%-8s pos %8s pos/s ETA %5.0fs ", level,
            b->max_level, bar, 100 * frac, phase, d, t, r, eta);
    fflush(stderr);
}

static void on_level(void *ctx, int level, uint64_t entries, double secs, bool built)
{
    struct bar *b = ctx;
    char e[32], r[32];
    fmt_count((double)entries, e, sizeof e);
    fmt_count(secs > 0 ? (double)entries / secs : 0, r, sizeof r);
    if (b->tty)
        fputs("\r\033[K", stderr);
    if (built)
        fprintf(stderr, "level %3d: %10llu positions (%s) in %7.2f s, %s pos/s, %s builder %.1f B/pos\n",
                level, (unsigned long long)entries, e, secs, r, b->builder ? b->builder : "?",
                entries ? b->peak / (double)entries : 0.0);
    else
        fprintf(stderr, "level %3d: present, %llu positions (checked)\n", level,
                (unsigned long long)entries);
}

static void on_level_info(void *ctx, int level, uint64_t entries, const char *builder, double peak)
{
    struct bar *b = ctx;
    (void)entries;
    b->builder = builder;
    b->peak = peak;
    if (builder && strcmp(builder, "fast") == 0)
        b->fast_hi = level;
}

/* One rule set's levels 0..o->seeds (tb_build, or tb_build_mpi under
 * mpirun); the exit code. */
static int build_one(const struct topts *op, const struct ruleset *rs, int builder,
                     volatile sig_atomic_t *stop)
{
    const struct topts o = *op;
    struct bar b = {.max_level = (int)o.seeds, .tty = isatty(2), .t0 = util_now(), .level = -1,
                    .fast_hi = -1};
    struct tb_build_opts opt = {.threads = (int)o.threads, .memory_bytes = o.memory,
                                .stop = stop, .progress = on_progress, .level_done = on_level,
                                .ctx = &b, .builder = builder, .level_info = on_level_info,
                                .bounds = o.bounds};
    struct sow_error e;
    double t0 = util_now();
    int rank = 0; /* MPI: only rank 0 reports (docs/distributed.md) */
#ifdef SOW_MPI
    enum sow_status st = tb_mpi_launched()
                             ? tb_build_mpi(rs, o.dir, (int)o.seeds, &opt, &rank, &e)
                             : tb_build(rs, o.dir, (int)o.seeds, &opt, &e);
#else
    enum sow_status st = tb_build(rs, o.dir, (int)o.seeds, &opt, &e);
#endif
    if (rank != 0)
        return cli_exit_code(st);
    if (b.tty)
        fputs("\r\033[K", stderr);
    if (st == SOW_E_INTERRUPTED || *stop) {
        fprintf(stderr, "sow tables build: interrupted; complete levels are kept, rerun to resume\n");
        return cli_interrupted();
    }
    if (st != SOW_OK) {
        fprintf(stderr, "sow tables build: %s\n", e.msg);
        return cli_exit_code(st);
    }
    /* which builders: auto may use the fast one for the lower levels, the lean one above */
    char used[80] = "";
    if (b.builder && b.fast_hi >= 0 && strcmp(b.builder, "fast") != 0)
        snprintf(used, sizeof used, " (fast builder to level %d, %s builder above)", b.fast_hi,
                 b.builder);
    else if (b.builder)
        snprintf(used, sizeof used, " (%s builder)", b.builder);
    printf("%s 2x%d levels 0..%ld in %s: done in %.2f s%s\n", rs->name, rs->pits, o.seeds, o.dir,
           util_now() - t0, used);
    fflush(stdout);
    return CLI_OK;
}

static int tables_build(int argc, char **argv)
{
    struct topts o;
    int r = parse("tables build", argc, argv, &o, false,
                  T_RULES | T_PITS | T_SEEDS | T_THREADS | T_MEMORY | T_DIR | T_BUILDER |
                      T_BOUNDS);
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    int builder = TB_BUILDER_AUTO;
    if (o.builder && strcmp(o.builder, "fast") == 0)
        builder = TB_BUILDER_FAST;
    else if (o.builder && strcmp(o.builder, "lean") == 0)
        builder = TB_BUILDER_LEAN;
    else if (o.builder && strcmp(o.builder, "auto") != 0)
        return cli_bad("tables build", "--builder '%s': expected auto, fast or lean", o.builder);
    if (o.pos)
        return cli_bad("tables build", "unexpected argument '%s'", o.pos);
    if (o.seeds < 0)
        return cli_bad("tables build", "--seeds N is required (build levels 0..N)");
    if (o.seeds > TB_MAX_LEVEL)
        return cli_bad("tables build",
                       "--seeds %ld: levels go up to %d (values are signed bytes, |V| <= n)",
                       o.seeds, TB_MAX_LEVEL);
#ifdef SOW_MPI
    if (o.bounds && tb_mpi_launched()) { /* refused by every rank, said by rank 0 */
        const char *r = getenv("OMPI_COMM_WORLD_RANK");
        r = r ? r : getenv("PMIX_RANK") ? getenv("PMIX_RANK") : getenv("PMI_RANK");
        if (r && atoi(r) != 0)
            return CLI_BAD;
        return cli_bad("tables build", "--bounds: the distributed builder (mpirun) does not "
                                       "write bounds files; build them without mpirun");
    }
#endif
    /* --rules A,B,...: every name checked first, then each built in turn
     * (under mpirun: in one job, MPI initialised once; docs/distributed.md) */
    char names[512];
    if (snprintf(names, sizeof names, "%s", o.rules) >= (int)sizeof names)
        return cli_bad("tables build", "--rules: the list is too long");
    const char *list[32];
    int nl = 0;
    for (char *sv = NULL, *t = strtok_r(names, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
        if (nl == (int)(sizeof list / sizeof list[0]))
            return cli_bad("tables build", "--rules: at most 32 rule sets");
        list[nl++] = t;
    }
    if (!nl)
        return cli_bad("tables build", "--rules: no rule set given");
    struct ruleset rs;
    for (int i = 0; i < nl; i++) {
        o.rules = list[i];
        if (setup_rules("tables build", &o, &rs))
            return CLI_BAD;
    }
    volatile sig_atomic_t *stop = cli_catch_signals(false);
#ifdef SOW_MPI
    if (tb_mpi_launched())
        cli_catch_usr1(); /* scripts/sow-mpirun's Ctrl-C */
#endif
    int rc = CLI_OK;
    for (int i = 0; i < nl && rc == CLI_OK; i++) {
        o.rules = list[i];
        setup_rules("tables build", &o, &rs);
        rc = build_one(&o, &rs, builder, stop);
    }
#ifdef SOW_MPI
    if (tb_mpi_launched())
        tb_mpi_finish();
#endif
    return rc;
}

/* ---- info ------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the table files (and leftovers) in dir. */
static char **list_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    *count = 0;
    if (!d)
        return NULL;
    char **v = NULL;
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        bool tb = (l > 6 && strcmp(e->d_name + l - 6, ".sowtb") == 0) ||
                  (l > 7 && strcmp(e->d_name + l - 7, ".sowtbb") == 0); /* bounds files */
        bool tmp = (l > 10 && strcmp(e->d_name + l - 10, ".sowtb.tmp") == 0) ||
                   (l > 11 && strcmp(e->d_name + l - 11, ".sowtbb.tmp") == 0);
        if (!tb && !tmp)
            continue;
        if (*count == cap) {
            cap = cap ? 2 * cap : 64;
            v = realloc(v, (size_t)cap * sizeof *v);
        }
        v[(*count)++] = strdup(e->d_name);
    }
    closedir(d);
    if (v)
        qsort(v, (size_t)*count, sizeof *v, cmp_str);
    return v;
}

/* info and verify: parse the options, check the directory, list its table
 * files.  -1 with *names and *count set when there is something to go
 * through; otherwise the exit status (help, bad input, nothing listed). */
static int list_tables(const char *cmd, int argc, char **argv, struct topts *o, char ***names,
                       int *count)
{
    bool verify = !strcmp(cmd, "tables verify"); /* (it solves levels again) */
    int r = parse(cmd, argc, argv, o, true, T_THREADS | T_DIR | (verify ? T_MEMORY : 0));
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    if (cli_check_dir(cmd, o->dir))
        return CLI_BAD;
    *names = list_dir(o->dir, count);
    if (!*count) {
        printf("%s: no table files\n", o->dir);
        return CLI_OK;
    }
    return -1;
}

/* What a level file's name says it holds: "RULES-2xN-LLL.sowtb" (rule-set
 * names may hold '-'), or its bounds file "RULES-2xN-LLL.sowtbb" (*bounds).
 * false if the name is not of that form or names no rule set. */
static bool name_says(const char *name, struct ruleset *rs, int *level, bool *bounds)
{
    const char *x = strstr(name, "-2x"), *nx;
    while (x && (nx = strstr(x + 1, "-2x")))
        x = nx;
    char rules[64];
    int pits, n, end = 0;
    if (!x || (size_t)(x - name) >= sizeof rules)
        return false;
    memcpy(rules, name, (size_t)(x - name));
    rules[x - name] = 0;
    if (sscanf(x, "-2x%d-%3d.sowtb%n", &pits, &n, &end) != 2)
        return false;
    *bounds = x[end] == 'b';
    if (x[end + *bounds] || pits < 1 ||
        pits > SOW_MAX_PITS || n < 0 || n > TB_MAX_LEVEL)
        return false;
    if (rules_init(rs, rules, pits, 0, NULL) != SOW_OK || strcmp(rs->name, rules) != 0)
        return false;
    *level = n;
    return true;
}

static int tables_info(int argc, char **argv)
{
    struct topts o;
    int count;
    char **names;
    int r = list_tables("tables info", argc, argv, &o, &names, &count);
    if (r >= 0)
        return r;
    int bad = 0, nbounds = 0;
    double total = 0, stored = 0, bbytes = 0;
    printf("%-28s %-12s %-6s %5s %14s %14s %14s  %-16s %s\n", "file", "rules", "board", "level",
           "entries", "raw bytes", "stored bytes", "xxh3-64", "status");
    for (int i = 0; i < count; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", o.dir, names[i]);
        size_t l = strlen(names[i]);
        if (strcmp(names[i] + l - 4, ".tmp") == 0) {
            printf("%-28s incomplete build leftover (ignored, replaced by the next build)\n",
                   names[i]);
            free(names[i]);
            continue;
        }
        struct tb_header h;
        struct ruleset nrs;
        int nlevel;
        struct sow_error e;
        /* The header must say what the name says, as probe and verify check. */
        bool bounds = false, named = name_says(names[i], &nrs, &nlevel, &bounds);
        if (!named) {
            printf("%-28s BAD: not a level file name (RULES-2xN-LLL.sowtb)\n", names[i]);
            bad++;
        } else if (bounds) { /* a level's bounds file: not in the totals of values */
            uint64_t vsum;
            if (tb_bounds_load(path, &nrs, nlevel, &h, &vsum, NULL, NULL, NULL, &e) != SOW_OK) {
                printf("%-28s BAD: %s\n", names[i], e.msg);
                bad++;
            } else {
                char board[16];
                snprintf(board, sizeof board, "2x%u", h.pits);
                printf("%-28s %-12s %-6s %5u %14llu %14llu %14llu  %016llx ok (bounds of "
                       "values %016llx)\n",
                       names[i], h.rules, board, h.level, (unsigned long long)h.entries,
                       (unsigned long long)h.stored, (unsigned long long)h.stored,
                       (unsigned long long)h.checksum, (unsigned long long)vsum);
                nbounds++;
                bbytes += (double)h.stored;
            }
        } else if (tb_file_load(path, &nrs, nlevel, &h, NULL, NULL, NULL, &e) != SOW_OK) {
            printf("%-28s BAD: %s\n", names[i], e.msg);
            bad++;
        } else {
            char board[16];
            snprintf(board, sizeof board, "2x%u", h.pits);
            /* raw: the level as version 1 stores it; stored: this file
             * (smaller when compressed, version 2) */
            printf("%-28s %-12s %-6s %5u %14llu %14llu %14llu  %016llx ok%s\n", names[i], h.rules,
                   board, h.level, (unsigned long long)h.entries,
                   (unsigned long long)(h.entries + TB_HEADER_SIZE), (unsigned long long)h.stored,
                   (unsigned long long)h.checksum, h.version == 2 ? " (compressed)" : "");
            total += (double)(h.entries + TB_HEADER_SIZE);
            stored += (double)h.stored;
        }
        free(names[i]);
    }
    free(names);
    printf("total %.0f bytes raw, %.0f stored (%.2fx) in %d files%s\n", total, stored,
           stored > 0 ? total / stored : 0.0, count - nbounds, bad ? ", some damaged" : "");
    if (nbounds)
        printf("bounds %.0f bytes in %d files\n", bbytes, nbounds);
    return bad ? CLI_BAD : CLI_OK;
}

/* ---- stats ----------------------------------------------------------------- */

static int tables_stats(int argc, char **argv)
{
    struct topts o;
    int r = parse("tables stats", argc, argv, &o, false, T_RULES | T_PITS | T_SEEDS | T_DIR | T_JSON);
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    if (o.pos)
        return cli_bad("tables stats", "unexpected argument '%s'", o.pos);
    if (o.seeds < 0)
        return cli_bad("tables stats", "--seeds n is required (the level)");
    if (o.seeds > TB_MAX_LEVEL)
        return cli_bad("tables stats", "--seeds %ld: levels go up to %d", o.seeds, TB_MAX_LEVEL);
    struct ruleset rs;
    if (setup_rules("tables stats", &o, &rs))
        return CLI_BAD;
    int n = (int)o.seeds;
    char path[4200];
    tb_file_name(o.dir, rs.name, rs.pits, n, path, sizeof path);
    if (access(path, F_OK) != 0) {
        fprintf(stderr, "sow tables stats: %s: level %d not built (sow tables build --rules %s "
                        "--pits %d --seeds %d)\n", path, n, rs.name, rs.pits, n);
        return CLI_BAD; /* a missing table file is bad input (docs/cli.md "Exit statuses") */
    }
    struct tb_header h;
    const int8_t *v;
    void *map;
    size_t maplen;
    struct sow_error e;
    if (tb_file_load(path, &rs, n, &h, &v, &map, &maplen, &e) != SOW_OK)
        return cli_bad("tables stats", "%s", e.msg); /* a damaged table file is bad input */
    int states = (int)h.states;
    uint64_t per = h.entries / (uint64_t)states;
    uint64_t hist[4][2 * TB_MAX_LEVEL + 1];
    memset(hist, 0, sizeof hist);
    for (uint64_t i = 0; i < h.entries; i++) {
        int s = (int)(i / per);
        hist[s][v[i] + TB_MAX_LEVEL]++;
        hist[3][v[i] + TB_MAX_LEVEL]++;
    }
    uint64_t vsum = h.checksum;
    tb_file_unmap(map, maplen);
    /* its bounds file, if any: positions whose bounds meet (lo = hi: forced
     * whatever the repetition rule says) and the others */
    char bpath[4200];
    long long forced = -1, open = 0;
    tb_bounds_name(o.dir, rs.name, rs.pits, n, bpath, sizeof bpath);
    if (access(bpath, F_OK) == 0) {
        const int8_t *b;
        uint64_t bsum;
        if (tb_bounds_load(bpath, &rs, n, &h, &bsum, &b, &map, &maplen, &e) != SOW_OK)
            return cli_bad("tables stats", "%s", e.msg);
        if (bsum != vsum) {
            tb_file_unmap(map, maplen);
            return cli_bad("tables stats", "%s: the bounds of other values (rebuild them with "
                                           "sow tables build --bounds)", bpath);
        }
        forced = 0;
        for (uint64_t i = 0; i < h.entries; i++)
            forced += b[2 * i] == b[2 * i + 1];
        open = (long long)h.entries - forced;
        tb_file_unmap(map, maplen);
    }
    static const char *const sname[3] = {"nobody captured yet", "mover captured last",
                                         "opponent captured last"};
    /* JSON and single-state rule sets: the whole level; darra also per state. */
    for (int s = (states == 1 || o.json ? 3 : 0); s <= 3; s++) {
        uint64_t pos = 0, neg = 0, zero = 0, tot = 0;
        for (int x = -n; x <= n; x++) {
            uint64_t c = hist[s][x + TB_MAX_LEVEL];
            tot += c;
            if (x > 0)
                pos += c;
            else if (x < 0)
                neg += c;
            else
                zero += c;
        }
        if (o.json) {
            printf("{\"positions\":%llu,\"positive\":%llu,\"zero\":%llu,\"negative\":%llu,"
                   "\"histogram\":{",
                   (unsigned long long)tot, (unsigned long long)pos, (unsigned long long)zero,
                   (unsigned long long)neg);
            for (int x = -n; x <= n; x++)
                printf("%s\"%d\":%llu", x == -n ? "" : ",", x,
                       (unsigned long long)hist[s][x + TB_MAX_LEVEL]);
            printf("}");
            if (forced >= 0)
                printf(",\"bounds\":{\"forced\":%lld,\"open\":%lld}", forced, open);
            printf("}\n");
            continue;
        }
        if (s == 3)
            printf("%s 2x%d level %d%s: %llu positions\n", rs.name, rs.pits, n,
                   states > 1 ? ", all states" : "", (unsigned long long)tot);
        else
            printf("%s 2x%d level %d, state: %s: %llu positions\n", rs.name, rs.pits, n, sname[s],
                   (unsigned long long)tot);
        printf("  value > 0 (mover ahead)  %llu\n  value = 0               %llu\n"
               "  value < 0 (mover behind) %llu\n  histogram:",
               (unsigned long long)pos, (unsigned long long)zero, (unsigned long long)neg);
        for (int x = -n; x <= n; x++)
            if (hist[s][x + TB_MAX_LEVEL])
                printf(" %d:%llu", x, (unsigned long long)hist[s][x + TB_MAX_LEVEL]);
        printf("\n");
    }
    if (forced >= 0 && !o.json)
        printf("  bounds file: lo = hi (forced) %lld, lo < hi (the repetition rule settles) "
               "%lld\n", forced, open);
    return CLI_OK;
}

/* ---- verify ---------------------------------------------------------------- */

static int tables_verify(int argc, char **argv)
{
    struct topts o;
    int count;
    char **names;
    int r = list_tables("tables verify", argc, argv, &o, &names, &count);
    if (r >= 0)
        return r;
    int rc = CLI_OK;
    volatile sig_atomic_t *stop = cli_catch_signals(false);
    /* Group the files by rule set and board; check each group's levels in order. */
    char done[256][40], lastbad[512] = "";
    int ndone = 0;
    for (int i = 0; i < count && !*stop; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", o.dir, names[i]);
        if (strstr(names[i], ".tmp"))
            continue;
        struct tb_header h;
        struct sow_error e;
        size_t nl = strlen(names[i]);
        bool bounds = nl > 7 && strcmp(names[i] + nl - 7, ".sowtbb") == 0;
        uint64_t vsum;
        if ((bounds ? tb_bounds_load(path, NULL, 0, &h, &vsum, NULL, NULL, NULL, &e)
                    : tb_file_load(path, NULL, 0, &h, NULL, NULL, NULL, &e)) != SOW_OK) {
            if (strcmp(e.msg, lastbad) != 0) /* its group may have listed it already */
                printf("BAD  %s\n", e.msg);
            snprintf(lastbad, sizeof lastbad, "%s", e.msg);
            rc = CLI_BAD;
            continue;
        }
        char key[40];
        snprintf(key, sizeof key, "%s-%u", h.rules, h.pits);
        bool seen = false;
        for (int k = 0; k < ndone; k++)
            seen |= strcmp(done[k], key) == 0;
        if (seen || ndone == 256)
            continue;
        snprintf(done[ndone++], sizeof done[0], "%s", key);
        struct ruleset rs;
        rules_init(&rs, h.rules, (int)h.pits, 0, NULL); /* tb_file_load checked the header */
        struct tb_set *set; /* whole levels are recomputed: compressed ones decompressed */
        if (tb_open_values(&rs, o.dir, &set, &e) != SOW_OK) {
            if (strcmp(e.msg, lastbad) != 0) /* the same damaged file, already listed */
                printf("BAD  %s\n", e.msg);
            snprintf(lastbad, sizeof lastbad, "%s", e.msg);
            rc = CLI_BAD;
            continue;
        }
        int top = tb_max_level(set);
        for (int n = top + 2; n <= TB_MAX_LEVEL; n++)
            if (tb_level_values(set, n, NULL)) {
                printf("BAD  %s 2x%d level %d: cannot be checked, level %d is missing\n", rs.name,
                       rs.pits, n, top + 1);
                rc = CLI_FAIL;
            }
        /* the level's progress as tables build shows it (a large level is
         * solved again: minutes), the bar cleared before its result line */
        struct bar b = {.max_level = top, .tty = isatty(2), .t0 = util_now(), .level = -1,
                        .fast_hi = -1};
        struct tb_build_opts opt = {.threads = (int)o.threads, .memory_bytes = o.memory,
                                    .stop = stop, .progress = on_progress, .ctx = &b};
        /* A level is solved again beside every level, held raw: one that
         * cannot fit the memory is not checked (that is not damage), and
         * the levels above it need more.  "Cannot": the solve's least
         * (its nodes, 9.125 bytes a position, and the two results, 3; the
         * edges come on top, from a few bytes a position to tb_level_memory's
         * bound), so that what fits in practice is still checked. */
        struct tb_index ix;
        tb_index_init(&ix, &rs);
        double held = 0;
        for (int n = 0; n <= top; n++)
            held += (double)tb_level_entries(&ix, n);
        const char *by, *raise;
        double limit = tb_memory_limit(&opt, &by, &raise);
        for (int n = 0; n <= top && !*stop; n++) {
            double t0 = util_now(), E = (double)tb_level_entries(&ix, n);
            double need = (9.125 + 3) * E + held;
            if (need > limit) {
                cli_bad("tables verify",
                        "%s 2x%d level %d not checked: it needs more than %.3g GB but %s is %.3g "
                        "GB (%s); levels up to %d are checked",
                        rs.name, rs.pits, n, need / 1e9, by, limit / 1e9, raise, n - 1);
                if (rc == CLI_OK)
                    rc = CLI_BAD;
                break;
            }
            int64_t bad = -1;
            enum sow_status vs = tb_verify_level(set, n, &opt, &bad, &e);
            if (b.tty)
                fputs("\r\033[K", stderr);
            if (vs == SOW_E_NOMEM || vs == SOW_E_TOO_BIG) {
                cli_bad("tables verify", "%s 2x%d level %d not checked: %s", rs.name, rs.pits, n,
                        e.msg);
                rc = cli_exit_code(vs);
                break;
            }
            if (vs != SOW_OK)
                bad = -1;
            if (bad == 0)
                printf("ok   %s 2x%d level %d (%.2f s)\n", rs.name, rs.pits, n, util_now() - t0);
            else {
                printf("BAD  %s 2x%d %s\n", rs.name, rs.pits, e.msg);
                rc = CLI_FAIL;
            }
            fflush(stdout);
        }
        tb_close(set);
    }
    for (int i = 0; i < count; i++)
        free(names[i]);
    free(names);
    if (*stop) {
        fprintf(stderr, "sow tables verify: interrupted\n");
        return cli_interrupted();
    }
    return rc;
}

/* ---- probe ----------------------------------------------------------------- */

/* probe --solution FILE: the position's value and every move's from a
 * solution file (sow solve --save; docs/solutions.md).  */
static int probe_solution(const struct cli_game *g, const char *path, struct sol *sol)
{
    struct sow_error e = {0};
    enum sow_status st = sol ? SOW_OK : search_solution_open(&g->rs, path, &sol, &e);
    if (st != SOW_OK) {
        cli_bad("tables probe", "%s", e.msg);
        return cli_exit_code(st);
    }
    struct search_result r;
    int vals[SOW_MAX_PITS + 1];
    int nm = search_solution_answer(sol, &g->p, &r, vals);
    search_solution_close(sol);
    if (nm < 0)
        return cli_bad("tables probe", "%s: the position is not in this solution", path);
    char buf[SOW_POS_MAXLEN];
    pos_format(&g->rs, &g->p, buf, sizeof buf);
    printf("position %s\nrules    %s 2x%d, %d seeds on the board\nvalue    %+d (net seeds the "
           "player to move captures from here on; from %s)\n",
           buf, g->rs.name, g->rs.pits, rules_board_seeds(&g->rs, &g->p), r.value, path);
    struct sow_movelist ml;
    rules_generate(&g->rs, &g->p, &ml);
    int me = g->p.side;
    if (ml.n == 0) {
        printf("game over (%s): settlement %d-%d\n", rules_end_name(ml.end), ml.settle[0],
               ml.settle[1]);
        return CLI_OK;
    }
    printf("%-8s %-9s %6s  %s\n", "move", "captured", "value", "result");
    for (int k = 0; k < ml.n; k++) {
        const struct sow_child *c = &ml.c[k];
        char mv[SOW_MOVE_MAXLEN], cb[SOW_POS_MAXLEN];
        move_format(&g->rs, me, c->move, mv, sizeof mv);
        pos_format(&g->rs, &c->pos, cb, sizeof cb);
        printf("%-8s %3d-%-5d %+6d  %s\n", mv, c->captured[0], c->captured[1], vals[k], cb);
    }
    return CLI_OK;
}

static int tables_probe(int argc, char **argv)
{
    struct topts o;
    int r = parse("tables probe", argc, argv, &o, false, T_RULES | T_PITS | T_DIR | T_SOLUTION);
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    if (!o.pos)
        return cli_bad("tables probe", "a position is required (see 'sow tables --help')");
    struct cli_game g;
    memset(&g, 0, sizeof g);
    g.rules = o.rules;
    g.seeds = -1;
    g.pos = o.pos;
    g.pits = o.pits_given ? o.pits : 0;
    if (cli_game_setup("tables probe", &g))
        return CLI_BAD;
    if (o.solution)
        return probe_solution(&g, o.solution, NULL);
    struct sow_error e;
    struct tb_set *set;
    if (tb_open(&g.rs, o.dir, &set, &e) != SOW_OK) {
        cli_bad("tables probe", "%s", e.msg); /* missing or damaged tables: bad input */
        return cli_exit_code(e.status);
    }
    char buf[SOW_POS_MAXLEN];
    pos_format(&g.rs, &g.p, buf, sizeof buf);
    int n = rules_board_seeds(&g.rs, &g.p), v;
    /* every probe first, so that a damaged block of a compressed
     * level is one line on stderr and nothing on stdout */
    struct sow_movelist ml;
    rules_generate(&g.rs, &g.p, &ml);
    bool found = tb_probe(set, &g.p, &v), cfound[SOW_MAX_PITS + 1], cbound[SOW_MAX_PITS + 1];
    int cvals[SOW_MAX_PITS + 1], lo[SOW_MAX_PITS + 1], hi[SOW_MAX_PITS + 1], nbound = 0;
    for (int k = 0; k < ml.n; k++) {
        cfound[k] = tb_probe(set, &ml.c[k].pos, &cvals[k]);
        /* a move that keeps the seeds on the board: its result's bounds, if
         * its level has them (docs/rules.md) */
        cbound[k] = ml.c[k].captured[0] + ml.c[k].captured[1] == 0 &&
                    tb_probe_bounds(set, &ml.c[k].pos, &lo[k], &hi[k], &cvals[k]);
        nbound += cbound[k];
    }
    if (tb_set_damaged(set, &e)) {
        tb_close(set);
        cli_bad("tables probe", "%s", e.msg);
        return CLI_BAD;
    }
    if (!found) {
        tb_close(set);
        /* a solution file in DIR holding the position */
        char solpath[4096];
        struct sol *sol = NULL;
        enum sow_status st =
            search_solution_find(&g.rs, o.dir, &g.p, &sol, solpath, sizeof solpath, &e);
        if (st != SOW_OK) {
            cli_bad("tables probe", "%s", e.msg);
            return cli_exit_code(st);
        }
        if (sol)
            return probe_solution(&g, solpath, sol);
        if (g.rs.family == SOW_JERIN && g.p.state == SOW_STATE_OPEN)
            fprintf(stderr, "sow tables probe: jerin positions with the opening move due are not "
                            "in the tables\n");
        else
            fprintf(stderr, "sow tables probe: level %d of %s 2x%d is not in %s (sow tables build "
                            "--rules %s --pits %d --seeds %d)\n",
                    n, g.rs.name, g.rs.pits, o.dir, g.rs.name, g.rs.pits, n);
        return CLI_BAD; /* a missing table file is bad input (docs/cli.md "Exit statuses") */
    }
    printf("position %s\nrules    %s 2x%d, %d seeds on the board\nvalue    %+d (net seeds the "
           "player to move captures from here on)\n",
           buf, g.rs.name, g.rs.pits, n, v);
    int me = g.p.side;
    if (ml.n == 0) {
        printf("game over (%s): settlement %d-%d\n", rules_end_name(ml.end), ml.settle[0],
               ml.settle[1]);
    } else {
        printf("%-8s %-9s %6s  %s\n", "move", "captured", "value", "result");
        for (int k = 0; k < ml.n; k++) {
            const struct sow_child *c = &ml.c[k];
            char mv[SOW_MOVE_MAXLEN], cb[SOW_POS_MAXLEN];
            move_format(&g.rs, me, c->move, mv, sizeof mv);
            pos_format(&g.rs, &c->pos, cb, sizeof cb);
            int cv = cvals[k];
            int d = c->captured[me] - c->captured[!me];
            int cyc = rules_cycle_value(&g.rs, &g.p);
            if (cbound[k])
                printf("%-8s %3d-%-5d %+6d  %s\n", mv, c->captured[0], c->captured[1],
                       cyc < -hi[k] ? -hi[k] : cyc > -lo[k] ? -lo[k] : cyc, cb);
            else if (cfound[k])
                printf("%-8s %3d-%-5d %+6d  %s\n", mv, c->captured[0], c->captured[1], d - cv, cb);
            else
                printf("%-8s %3d-%-5d %6s  %s\n", mv, c->captured[0], c->captured[1], "?", cb);
        }
        if (nbound)
            printf("(a move's value: a capture's net seeds minus the value of the result for\n"
                   " the opponent; a move that keeps the seeds on the board, the repetition\n"
                   " settlement clamped to the result's bounds (its bounds file): exact)\n");
        else
            printf("(a move's value: its captures, net, minus the value of the result for the\n"
                   " opponent; where cycles matter the position's value may differ from the best\n"
                   " move's, see docs/tables.md)\n");
    }
    tb_close(set);
    return CLI_OK;
}

/* ---- compress ------------------------------------------------------------------ */

/* compress's progress: a level's share written, shown as build's bar */
struct zbar {
    struct bar *b;
    int level;
    uint64_t entries;
};

static void on_zprogress(void *ctx, double frac)
{
    struct zbar *z = ctx;
    on_progress(z->b, z->level, z->entries, frac, "compress");
}

static int tables_compress(int argc, char **argv)
{
    struct topts o;
    int r = parse("tables compress", argc, argv, &o, false, T_RULES | T_PITS | T_DIR | T_THREADS);
    if (r)
        return r == CLI_HELP ? CLI_OK : r;
    if (o.pos)
        return cli_bad("tables compress", "unexpected argument '%s'", o.pos);
    struct ruleset rs; /* the rule set first: it is the likelier slip */
    if (setup_rules("tables compress", &o, &rs))
        return CLI_BAD;
    if (cli_check_dir("tables compress", o.dir))
        return CLI_BAD;
    volatile sig_atomic_t *stop = cli_catch_signals(false);
    int done = 0, skipped = 0;
    double traw = 0, tstored = 0;
    struct bar b = {.max_level = TB_MAX_LEVEL, .tty = isatty(2), .t0 = util_now(), .level = -1,
                    .fast_hi = -1};
    struct zbar zb = {.b = &b};
    struct tb_index ix;
    tb_index_init(&ix, &rs);
    for (int n = TB_MAX_LEVEL; n >= 0 && b.max_level == TB_MAX_LEVEL; n--) {
        char path[4200]; /* the bar's "level n/top": the highest level present */
        tb_file_name(o.dir, rs.name, rs.pits, n, path, sizeof path);
        if (fio_exists(path))
            b.max_level = n;
    }
    const struct tbz_write_opts wo = {.threads = (int)o.threads, .stop = stop,
                                      .progress = on_zprogress, .ctx = &zb};
    for (int n = 0; n <= TB_MAX_LEVEL && !*stop; n++) {
        char path[4200];
        tb_file_name(o.dir, rs.name, rs.pits, n, path, sizeof path);
        if (!fio_exists(path))
            continue;
        uint64_t raw = 0, stored = 0;
        bool already = false;
        struct sow_error e;
        double t0 = util_now();
        zb.level = n;
        zb.entries = tb_level_entries(&ix, n);
        enum sow_status st = tb_compress_level(&rs, o.dir, n, &wo, &raw, &stored, &already, &e);
        if (b.tty && b.level >= 0)
            fputs("\r\033[K", stderr);
        b.level = -1;
        if (st == SOW_E_INTERRUPTED)
            break;
        if (st != SOW_OK) {
            fprintf(stderr, "sow tables compress: %s\n", e.msg);
            return cli_exit_code(st);
        }
        double ratio = stored ? (double)raw / (double)stored : 0.0;
        if (already)
            printf("level %3d: %14llu raw bytes, %14llu stored (%.2fx), already compressed\n",
                   n, (unsigned long long)raw, (unsigned long long)stored, ratio);
        else
            printf("level %3d: %14llu raw bytes -> %14llu stored (%.2fx) in %.2f s\n", n,
                   (unsigned long long)raw, (unsigned long long)stored, ratio, util_now() - t0);
        skipped += already;
        traw += (double)raw;
        tstored += (double)stored;
        done++;
    }
    if (*stop) {
        fprintf(stderr, "sow tables compress: interrupted; every level is whole (raw or compressed)\n");
        return cli_exit_code(SOW_E_INTERRUPTED);
    }
    printf("%s 2x%d: %d levels (%d compressed now), %.0f raw bytes, %.0f stored (%.2fx)\n",
           rs.name, rs.pits, done, done - skipped, traw, tstored, tstored > 0 ? traw / tstored : 0.0);
    return CLI_OK;
}

int cmd_tables(int argc, char **argv)
{
    if (argc < 2)
        return cli_bad("tables", "a subcommand is needed: build, info, stats, verify, probe or compress "
                                 "(see 'sow tables --help')");
    if (cli_is_help(argv[1])) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    const char *s = argv[1];
    if (strcmp(s, "build") == 0)
        return tables_build(argc - 1, argv + 1);
    if (strcmp(s, "info") == 0)
        return tables_info(argc - 1, argv + 1);
    if (strcmp(s, "stats") == 0)
        return tables_stats(argc - 1, argv + 1);
    if (strcmp(s, "verify") == 0)
        return tables_verify(argc - 1, argv + 1);
    if (strcmp(s, "probe") == 0)
        return tables_probe(argc - 1, argv + 1);
    if (strcmp(s, "compress") == 0)
        return tables_compress(argc - 1, argv + 1);
    return cli_bad("tables", "unknown subcommand '%s' (see 'sow tables --help')", s);
}
