/* sow solve: exact value, best move and principal variation of a position. */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "sow/search.h"
#include "tables/tables.h"
#include "tables_path.h"
#include "util.h"
#ifdef SOW_MPI
#include "solver/closure_mpi.h"
#include "tables/tables_mpi.h"
#endif

static const char usage[] =
    "usage: sow solve [--rules R] [--pits N] [--seeds S] [POS] [--threads T] [--hash MB]\n"
    "                 [--tables DIR[:DIR..] | --no-tables] [--table-cache MB] [--levels MPOS]\n"
    "                 [--memory GB] [--depth D | --time S [--threshold]] [--moves] [--json]\n"
    "                 [--save FILE | --solution FILE]\n"
    "                 [--work DIR [--disk]]\n"
    "Solve POS (default: the start): the value is the net number of seeds the player\n"
    "to move captures from now on under perfect play (docs/rules.md, \"Value of a\n"
    "position\"; endless cycles settled by the repetition rule).  Prints the value,\n"
    "the best move, a principal variation to the end of the game, nodes (positions\n"
    "visited: children made and looked up), positions expanded, time, nodes/second\n"
    "and endgame-table hits.\n";

static const char notes[] =
    "--hash is the transposition table of the bounded mode (the exact mode does not\n"
    "use it, docs/solver.md).  --levels: the exact mode solves the lowest levels whole\n"
    "in memory (the table builder, ~3 bytes kept per position) while they add up to\n"
    "at most MPOS million positions; 0: none (the closure of the position\n"
    "does every level).  --memory bounds the levels in memory and the closure: a\n"
    "level whose build would not fit is left to the closure, a closure that would\n"
    "not fit is refused before it is built (exit 2).  --save implies --levels 0\n"
    "(every position the start reaches goes into the file, docs/solutions.md).\n"
    "--disk (with --work): the closure level by level on disk in DIR, one level in\n"
    "memory at a time, for closures past RAM (docs/solver.md \"Past RAM\").\n"
    "Bounded modes\n"
    "(--depth, --time) run the alpha-beta engine (docs/engine.md): a heuristic\n"
    "value (exact when the engine proved it), its PV, depth, seldepth and hashfull;\n"
    "with --threshold the older threshold search: proven bounds, the best move\n"
    "alone as the PV.  --solution FILE with --depth/--time: the engine takes the\n"
    "file's positions as exact knowledge (with --tables too); without --solution,\n"
    "a solution file in the --tables DIR that holds POS, as the exact mode finds it.\n"
    "--depth/--time without --tables probe the default tables ($SOW_TABLES, else\n"
    "./tables) where they exist; --no-tables probes none.\n"
    "JSON: position, rules, value, exact, best, pv, moves, nodes, nps, time_ms (and\n"
    "pits, lower, upper, expanded, tb_hits; the engine adds score_cp, depth,\n"
    "seldepth, hashfull).\n"
    "Progress goes to stderr on long solves; Ctrl-C stops (exit 130, no output;\n"
    "SIGTERM: 143); a second Ctrl-C ends it at once.\n";

struct prog {
    double t0;
};

static void on_progress(void *arg, const char *line)
{
    struct prog *pr = arg;
    double dt = util_now() - pr->t0;
    /* notes (a damaged checkpoint rebuilt, one not written) always show */
    if (dt >= 1.0 || strncmp(line, "note: ", 6) == 0)
        fprintf(stderr, "sow solve: %s  (%.1f s)\n", line, dt);
}

/* Replay the PV from p: names with the right side, and the final position. */
static int pv_names(const struct ruleset *rs, const sow_position *p, const struct search_result *r,
                    char names[][SOW_MOVE_MAXLEN], sow_position *last,
                    struct sow_relay_cache *cache)
{
    sow_position q = *p;
    struct sow_movelist ml;
    int k;
    for (k = 0; k < r->pv_len; k++) {
        rs->generate(rs, &q, &ml, cache, NULL);
        int i = rules_find_move(&ml, r->pv[k]);
        if (i < 0)
            break;
        move_format(rs, q.side, r->pv[k], names[k], SOW_MOVE_MAXLEN);
        q = ml.c[i].pos;
    }
    *last = q;
    return k;
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
    putchar('"');
}

struct solve_args {
    struct cli_game g;
    long threads, hash, depth, levels;
    double tlimit;
    const char *tables;
    const char *tables_default;             /* the default path, in use without --tables */
    long table_cache;                       /* MiB, 0: tb_open's default */
    bool no_tables;                         /* --no-tables */
    bool moves, json, have_depth, have_time, threshold;
    double memgb;                           /* the closure's memory budget */
    const char *save, *solution, *work;
    bool disk;                              /* (diskclosure) */
};

/* --work made if missing; --save's directory writable before the solve,
 * not after it.  0 or CLI_BAD (message printed). */
static int solve_check_paths(struct solve_args *a)
{
    if (a->work) {
        struct stat sb;
        if (mkdir(a->work, 0777) < 0 && errno != EEXIST)
            return cli_bad("solve", "--work %s: cannot create: %s", a->work, strerror(errno));
        if (stat(a->work, &sb) < 0 || !S_ISDIR(sb.st_mode))
            return cli_bad("solve", "--work %s: not a directory", a->work);
    }
    if (a->save) {
        /* Where the file goes is checked before the solve, not after it. */
        char dir[4096];
        const char *slash = strrchr(a->save, '/');
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else
            snprintf(dir, sizeof dir, "%.*s", (int)(slash == a->save ? 1 : slash - a->save),
                     a->save);
        struct stat sb;
        if (slash && !slash[1])
            return cli_bad("solve", "--save %s: a file name is needed, not a directory", a->save);
        if (stat(a->save, &sb) == 0 && S_ISDIR(sb.st_mode))
            return cli_bad("solve", "--save %s: is a directory", a->save);
        if (stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode))
            return cli_bad("solve", "--save %s: no directory %s", a->save, dir);
        if (access(dir, W_OK | X_OK) < 0)
            return cli_bad("solve", "--save %s: cannot write in %s: %s", a->save, dir,
                           strerror(errno));
        a->levels = 0; /* the closure alone: every position the start reaches, in the file */
    }
    return 0;
}

/* The tables options: an explicit path checked (a mistyped --tables would
 * otherwise solve without them), else the default path in the bounded
 * modes.  0 or CLI_BAD (message printed). */
static int solve_tables_args(struct solve_args *a, bool bounded)
{
    char tmsg[600];
    if (a->tables && a->no_tables)
        return cli_bad("solve", "--tables and --no-tables exclude each other");
    if (a->tables && tpath_check(a->tables, tmsg, sizeof tmsg) < 0)
        return cli_bad("solve", "--tables %s", tmsg);
    if (!a->tables && !a->no_tables && bounded) {
        char note[700];
        a->tables = a->tables_default = tpath_default_usable(note, sizeof note); /* NULL: none */
        if (*note)
            fprintf(stderr, "sow solve: %s\n", note);
    }
    if (a->table_cache && !a->tables)
        return cli_bad("solve", "--table-cache sizes the tables' cache: give --tables");
    return 0;
}

/* Parse and validate: 0, CLI_HELP or CLI_BAD (message printed). */
static int solve_parse(int argc, char **argv, struct solve_args *a)
{
    /* Defaults live in the library: 0 asks search_new for SEARCH_HASH_MB and
     * SEARCH_LEVEL_BUDGET (sow/search.h). */
    *a = (struct solve_args){.g = {.seeds = -1}, .threads = 1, .levels = -1};
    char hash_help[64], levels_help[96];
    snprintf(hash_help, sizeof hash_help, "transposition table, MiB, default %d", SEARCH_HASH_MB);
    snprintf(levels_help, sizeof levels_help,
             "exact mode: levels solved in memory, million positions, default %.1f",
             (double)SEARCH_LEVEL_BUDGET / 1e6);
    const struct cli_option opts[] = {
        CLI_GAME_OPTIONS(a->g),
        {"--threads", CLI_LONG, &a->threads, 1, (double)cli_max_threads(), "T",
         "threads, default 1; the value never depends on it", 0, 0},
        {"--hash", CLI_LONG, &a->hash, 1, 1 << 20, "MB", hash_help, 0, 0},
        {"--tables", CLI_STR, &a->tables, 0, 0, "DIR[:DIR..]",
         "probe the endgame tables in the DIRs (and their solution files)", 0, 0},
        {"--no-tables", CLI_FLAG, &a->no_tables, 0, 0, NULL,
         "--depth/--time: no tables, not even the default ones", 0, 0},
        {"--table-cache", CLI_LONG, &a->table_cache, 1, 1 << 20, "MB",
         "the tables' cache of decompressed blocks, MiB (default: all of them, at most "
         "1/8 of the memory budget)", 0, 0},
        {"--levels", CLI_LONG, &a->levels, 0, 1 << 20, "MPOS", levels_help, 0, 0},
        {"--depth", CLI_LONG, &a->depth, 1, 10000, "D", "bounded search to D plies", 0,
         &a->have_depth},
        {"--time", CLI_DOUBLE, &a->tlimit, 0, 1e7, "S", "bounded search, deepening for S seconds",
         true, &a->have_time},
        {"--moves", CLI_FLAG, &a->moves, 0, 0, NULL, "also every legal move's exact value", 0, 0},
        {"--json", CLI_FLAG, &a->json, 0, 0, NULL, "one JSON object", 0, 0},
        {"--threshold", CLI_FLAG, &a->threshold, 0, 0, NULL,
         "bounded modes by the older threshold search", 0, 0},
        {"--memory", CLI_DOUBLE, &a->memgb, 0.001, 1e6, "GB",
         "exact mode: memory the closure may use, default 3/4 of RAM", 0, 0},
        {"--save", CLI_STR, &a->save, 0, 0, "FILE",
         "solve by the closure alone and keep it as a solution file", 0, 0},
        {"--solution", CLI_STR, &a->solution, 0, 0, "FILE",
         "answer POS from a solution file, with every move's value (with --depth/"
         "--time: the engine's exact knowledge)", 0, 0},
        {"--work", CLI_STR, &a->work, 0, 0, "DIR",
         "checkpoint the closure and levels in DIR (made if missing); a rerun resumes",
         0, 0},
        {"--disk", CLI_FLAG, &a->disk, 0, 0, NULL,
         "with --work: the closure level by level on disk in DIR (past RAM)", 0, 0},
        {0}};
    const struct cli_spec spec = {"solve", usage, opts, notes, 1, "position"};
    int r = cli_parse(&spec, argc, argv, &a->g.pos, NULL);
    if (r)
        return r;
    bool bounded = a->have_depth || a->have_time;
    double ram = util_phys_memory();
    if (cli_hash_check("solve", "--hash", a->hash))
        return CLI_BAD;
    if (a->have_depth && a->have_time)
        return cli_bad("solve", "--depth and --time exclude each other");
    if (a->levels >= 0 && bounded)
        return cli_bad("solve", "--levels is for the exact mode: not with --depth/--time");
    if (a->levels > 0 && ram > 0 && (double)a->levels * 1e6 * 3.0 > 0.75 * ram)
        return cli_bad("solve",
                       "--levels %ld: %ld million positions need %.0f MiB to keep, this "
                       "machine has %.0f MiB",
                       a->levels, a->levels, (double)a->levels * 3e6 / 1048576.0,
                       ram / 1048576.0);
    if (a->threshold && !bounded)
        return cli_bad("solve", "--threshold is for the bounded modes: give --depth or --time");
    if (a->moves && bounded)
        return cli_bad("solve", "--moves gives exact values: not with --depth/--time");
    if (a->memgb > 0 && bounded)
        return cli_bad("solve", "--memory is for the exact mode: not with --depth/--time");
    if (a->memgb > 0 && cli_memory_check("solve", a->memgb))
        return CLI_BAD;
    if ((a->save || a->work) && bounded)
        return cli_bad("solve", "--save/--work are for the exact mode: not with "
                                "--depth/--time");
    /* --solution with --depth/--time: the engine
     * probes the file as exact knowledge (docs/engine.md) */
    if (a->solution && bounded && a->threshold)
        return cli_bad("solve", "--solution with --depth/--time is for the engine: not with "
                                "--threshold");
    if (a->save && (a->solution || a->tables || a->levels >= 0))
        return cli_bad("solve", "--save solves by the closure alone: not with --solution, "
                                "--tables or --levels");
    if (a->solution && !bounded && (a->tables || a->levels >= 0 || a->memgb > 0 || a->work))
        return cli_bad("solve", "--solution answers from the file: not with --tables, --levels, "
                                "--memory or --work");
    if (a->disk && (!a->work || a->solution || bounded))
        return cli_bad("solve", "--disk keeps the closure's levels in the --work directory: "
                                "give --work DIR, not with --solution, --depth/--time");
    if (solve_check_paths(a))
        return CLI_BAD;
    if (cli_game_setup("solve", &a->g))
        return CLI_BAD;
    return solve_tables_args(a, bounded);
}

/* Print the result (text or JSON).  0, or -1 if stopped meanwhile (the
 * PV is replayed, and a relay cut by the stop may miss a move). */
static int solve_print(const struct solve_args *a, struct search_ctx *s,
                       const struct search_result *r, const int *vals, int nmv, double t0,
                       volatile sig_atomic_t *stop)
{
    const struct cli_game g = a->g;
    bool json = a->json;
    /* the bounded modes by the alpha-beta engine (docs/engine.md) */
    const bool engine = (a->have_depth || a->have_time) && !a->threshold;
    struct sow_relay_cache *cache = cli_relay_cache(&g.rs, 12, stop);
    struct sow_movelist ml;
    g.rs.generate(&g.rs, &g.p, &ml, cache, NULL);
    /* Counters over the whole command (solve, PV and --moves). */
    uint64_t nodes, hits, expanded = search_expanded(s);
    search_counters(s, &nodes, &hits);
    double secs = util_now() - t0;
    double nps = secs > 0 ? (double)nodes / secs : 0;

    char pos[SOW_POS_MAXLEN], best[SOW_MOVE_MAXLEN] = "none";
    char names[SEARCH_MAX_PV][SOW_MOVE_MAXLEN];
    sow_position last;
    pos_format(&g.rs, &g.p, pos, sizeof pos);
    if (r->best != SOW_MOVE_NONE)
        move_format(&g.rs, g.p.side, r->best, best, sizeof best);
    int npv = pv_names(&g.rs, &g.p, r, names, &last, cache);
    struct sow_movelist lml;
    g.rs.generate(&g.rs, &last, &lml, cache, NULL);
    rules_cache_free(cache);
    if (*stop)
        return -1;

    if (json) {
        printf("{\"position\":");
        json_str(pos);
        printf(",\"rules\":\"%s\",\"pits\":%d,\"value\":%d,\"exact\":%s,\"lower\":%d,"
               "\"upper\":%d,\"best\":",
               g.rs.name, g.rs.pits, r->value, r->exact ? "true" : "false", r->lower, r->upper);
        if (r->best != SOW_MOVE_NONE)
            json_str(best);
        else
            printf("null");
        printf(",\"pv\":[");
        for (int k = 0; k < npv; k++)
            printf("%s\"%s\"", k ? "," : "", names[k]);
        printf("],\"moves\":[");
        for (int i = 0; i < nmv; i++) {
            char mv[SOW_MOVE_MAXLEN];
            move_format(&g.rs, g.p.side, ml.c[i].move, mv, sizeof mv);
            printf("%s{\"move\":\"%s\",\"value\":%d}", i ? "," : "", mv, vals[i]);
        }
        printf("],\"nodes\":%llu,\"expanded\":%llu,\"nps\":%.0f,\"time_ms\":%.0f,"
               "\"tb_hits\":%llu",
               (unsigned long long)nodes, (unsigned long long)expanded, nps, secs * 1000,
               (unsigned long long)hits);
        if (engine)
            printf(",\"score_cp\":%d,\"depth\":%d,\"seldepth\":%d,\"hashfull\":%d",
                   r->score_cp, r->depth, r->seldepth, r->hashfull);
        printf("}\n");
    } else {
        printf("position : %s\n", pos);
        printf("rules    : %s 2x%d\n", g.rs.name, g.rs.pits);
        if (r->exact)
            printf("value    : %d (exact: net seeds the player to move captures from now on)\n",
                   r->value);
        else if (engine)
            printf("value    : %d (heuristic, NOT exact: engine score %+.2f seeds)\n", r->value,
                   r->score_cp / 100.0);
        else
            printf("value    : %d (heuristic, NOT exact; proven bounds [%d, %d] at depth %d)\n",
                   r->value, r->lower, r->upper, r->depth);
        if (r->over)
            printf("best     : none (game over: %s)\n", rules_end_name(ml.end));
        else
            printf("best     : %s\n", best);
        if ((r->exact || engine) && !r->over) {
            printf("pv       :");
            for (int k = 0; k < npv; k++)
                printf(" %s", names[k]);
            if (r->pv_repeats)
                printf(" (position repeats: cycle settled)\n");
            else if (lml.n == 0)
                printf(" (game over: %s)\n", rules_end_name(lml.end));
            else
                printf(" ...\n");
        }
        for (int i = 0; i < nmv; i++) {
            char mv[SOW_MOVE_MAXLEN];
            move_format(&g.rs, g.p.side, ml.c[i].move, mv, sizeof mv);
            printf("move %-5s: %d%s\n", mv, vals[i], vals[i] == r->value ? " (best)" : "");
        }
        if (engine) {
            printf("depth    : %d (seldepth %d)\n", r->depth, r->seldepth);
            printf("hashfull : %d (per mille of the table written by this search)\n",
                   r->hashfull);
        }
        printf("nodes    : %llu (positions visited)\n", (unsigned long long)nodes);
        printf("expanded : %llu (positions whose moves were generated)\n",
               (unsigned long long)expanded);
        printf("time     : %.3f s\n", secs);
        printf("nodes/s  : %.0f\n", nps);
        printf("tb hits  : %llu\n", (unsigned long long)hits);
    }
    return 0;
}

/* How a message names the tables path: the option, or the default path
 * the user did not type. */
static const char *tables_named(const struct solve_args *a)
{
    return a->tables_default ? "the default tables path" : "--tables";
}

/* The files cmd_solve reads before it searches: --tables DIR (and its
 * block cache), the engine's solution file (--solution with --depth or
 * --time), or DIR's solution file holding the position.  0, or an exit
 * status after one line on stderr (nothing left open). */
static int solve_open(struct solve_args *a, struct cli_game *g, struct tb_set **tb,
                      struct sol **esol)
{
    struct sow_error e;
    if (a->tables && tpath_open(&g->rs, a->tables, a->table_cache, tb, &e) != SOW_OK) {
        cli_bad("solve", "%s %s: %s", tables_named(a), a->tables, e.msg);
        return cli_exit_code(e.status); /* missing or damaged: bad input */
    }
    if (*tb && a->tables_default && tb_max_level(*tb) >= 0)
        fprintf(stderr, "sow solve: the engine probes the tables in %s (levels 0..%d)\n",
                a->tables, tb_max_level(*tb));
    /* the block cache of compressed levels within --memory */
    if (*tb && a->memgb > 0 && !a->table_cache &&
        tb_set_cache(*tb, tb_cache_default(*tb, a->memgb * 1e9), &e) != SOW_OK) {
        tb_close(*tb);
        cli_bad("solve", "%s %s: %s", tables_named(a), a->tables, e.msg);
        return cli_exit_code(e.status);
    }
    /* the engine's solution file */
    if (a->solution && (a->have_depth || a->have_time)) {
        enum sow_status st0 = search_solution_open(&g->rs, a->solution, esol, &e);
        if (st0 != SOW_OK) {
            tb_close(*tb);
            cli_bad("solve", "%s", e.msg);
            return cli_exit_code(st0);
        }
        a->solution = NULL; /* not the exact mode's answer from the file */
    }
    /* the engine with --tables DIR and no --solution: a
     * solution file in DIR holding the position is its exact knowledge, as
     * the exact mode answers from it (docs/engine.md "Solution files") */
    if (a->tables && !*esol && !a->solution && (a->have_depth || a->have_time) &&
        !a->threshold) {
        struct sow_error se = {0};
        char epath[4096];
        enum sow_status st0 =
            tpath_solution_find(&g->rs, a->tables, &g->p, esol, epath, sizeof epath, &se);
        if (st0 != SOW_OK) {
            tb_close(*tb);
            cli_bad("solve", "%s %s: %s", tables_named(a), a->tables, se.msg);
            return cli_exit_code(st0);
        }
        if (*esol)
            fprintf(stderr, "sow solve: the engine probes the solution file %s\n", epath);
    }
    return 0;
}

/* The answer of a solution file (dsol, else the file at path) for g's
 * position: value and best move into r, *nmv move values into vals. */
static enum sow_status solve_from_file(const struct cli_game *g, const char *path,
                                       struct sol *dsol, struct search_result *r, int *vals,
                                       int *nmv, struct sow_error *se)
{
    struct sol *sol = dsol;
    enum sow_status st = dsol ? SOW_OK : search_solution_open(&g->rs, path, &sol, se);
    if (st == SOW_OK) {
        *nmv = search_solution_answer(sol, &g->p, r, vals);
        search_solution_close(sol);
        if (*nmv < 0)
            st = sow_fail(se, SOW_E_INPUT, "%s: the position is not in this solution", path);
    }
    return st;
}

/* cmd_solve's end once the search exists: everything closed, rc returned. */
static int solve_end(int rc, struct search_ctx *s, struct tb_set *tb, struct sol *esol)
{
    search_free(s);
    tb_close(tb);
    search_solution_close(esol);
    return rc;
}

static void solve_waiting(void *ctx)
{
    fprintf(stderr, "sow solve: waiting for another sow solving in --work %s\n",
            (const char *)ctx);
}

static int solve_run(struct solve_args a);

/* --work DIR: one solve per work directory (fileio.h rule 3, as a tables
 * directory has one builder); a second waits, says so, and Ctrl-C stops the
 * wait.  The lock is held until the solve has ended. */
static int cmd_solve_one(int argc, char **argv, int rank);

/* Under mpirun (docs/distributed.md "The exact solver across ranks"):
 * every rank runs the same solve, the closure on disk is shared, rank 0
 * alone prints and its exit status is the job's. */
int cmd_solve(int argc, char **argv)
{
#ifdef SOW_MPI
    if (tb_mpi_launched()) {
        int rank = clos_mpi_start();
        cli_catch_usr1(); /* scripts/sow-mpirun's Ctrl-C */
        return clos_mpi_end(cmd_solve_one(argc, argv, rank));
    }
#endif
    return cmd_solve_one(argc, argv, 0);
}

static int cmd_solve_one(int argc, char **argv, int rank)
{
    struct solve_args a;
    int r0 = solve_parse(argc, argv, &a);
    if (r0)
        return r0 == CLI_HELP ? CLI_OK : r0;
    char own[4096];
#ifdef SOW_MPI
    /* the other ranks' --work: DIR/rank-R-of-N, each its own (their levels
     * in memory kept there, their shares of the closure on disk) */
    if (rank > 0 && a.work) {
        a.work = clos_mpi_work(a.work, own, sizeof own);
        if (mkdir(a.work, 0777) < 0 && errno != EEXIST)
            return cli_bad("solve", "--work %s: cannot create: %s", a.work, strerror(errno));
    }
    if (rank > 0)
        a.save = NULL; /* rank 0 writes the solution file (a.levels stays 0: the same solve) */
#else
    (void)rank;
    (void)own;
#endif
    if (!a.work)
        return solve_run(a);
    volatile sig_atomic_t *stop = cli_catch_signals(true);
    struct fio_lock wl;
    struct sow_error e;
    enum sow_status st = fio_lock_dir(a.work, &wl, stop, solve_waiting, (void *)a.work, &e);
    if (st == SOW_E_INTERRUPTED) {
        fprintf(stderr, "sow solve: interrupted while waiting for --work %s\n", a.work);
        return cli_interrupted();
    }
    if (st != SOW_OK) {
        cli_bad("solve", "--work %s: %s", a.work, e.msg);
        return cli_exit_code(st);
    }
    int rc = solve_run(a);
    fio_unlock(&wl);
    return rc;
}

static int solve_run(struct solve_args a)
{
    struct cli_game g = a.g;
    const char *tables = a.tables;
    bool moves = a.moves;
    struct tb_set *tb = NULL;
    struct sow_error e;
    struct sol *esol = NULL;
    int orc = solve_open(&a, &g, &tb, &esol);
    if (orc)
        return orc;
    /* A second Ctrl-C ends the process at once: solve writes no file. */
    volatile sig_atomic_t *stop = cli_catch_signals(true);
    struct prog pr = {util_now()};
    struct search_opts o = {
        .threads = (int)a.threads,
        .hash_mb = (unsigned)a.hash,
        .depth = (int)a.depth,
        .time_limit = a.tlimit,
        .tb = tb,
        .level_budget = a.levels < 0 ? 0 : a.levels == 0 ? -1 : a.levels * 1000000LL,
        .memory = a.memgb * 1e9,
        .work = a.work,
        .disk = a.disk,
        .stop = stop,
        .progress = on_progress,
        .progress_arg = &pr,
        .threshold = a.threshold,
        .solution = esol,
    };
    struct search_ctx *s;
    enum sow_status st = search_new(&g.rs, &o, &s, &e);
    if (st != SOW_OK) {
        tb_close(tb);
        search_solution_close(esol);
        cli_bad("solve", "%s", e.msg);
        return cli_exit_code(st);
    }
    struct search_result r;
    int vals[SOW_MAX_PITS + 1];
    int nmv = 0;
    /* an exact solve with --tables DIR: a solution file
     * in DIR holding the position answers it (docs/solutions.md) */
    char found[4096] = "";
    struct sol *dsol = NULL;
    if (tables && !a.solution && !a.save && !a.work && !a.have_depth && !a.have_time) {
        struct sow_error se = {0};
        st = tpath_solution_find(&g.rs, tables, &g.p, &dsol, found, sizeof found, &se);
        if (st != SOW_OK) {
            cli_bad("solve", "%s %s: %s", tables_named(&a), tables, se.msg);
            return solve_end(cli_exit_code(st), s, tb, esol);
        }
        if (dsol) {
            a.solution = found;
            fprintf(stderr, "sow solve: answered from the solution file %s\n", found);
        }
    }
    if (a.solution) {
        struct sow_error se = {0};
        st = solve_from_file(&g, a.solution, dsol, &r, vals, &nmv, &se);
        if (st != SOW_OK) {
            cli_bad("solve", "%s", se.msg);
            return solve_end(cli_exit_code(st), s, tb, esol);
        }
    } else {
        st = search_solve(s, &g.p, &r);
        if (st == SOW_OK && moves) {
            nmv = search_move_values(s, &g.p, vals);
            if (nmv < 0)
                st = search_last_error(s)->status;
        }
        if (st == SOW_OK && a.save) {
            struct sow_error se = {0};
            st = search_save(s, &g.p, a.save, &se);
            if (st != SOW_OK) {
                cli_bad("solve", "%s", se.msg);
                return solve_end(cli_exit_code(st), s, tb, esol);
            }
        }
    }
    /* After a stop, a relay cut short may have left a move out: nothing
     * computed then is printed (rules_cache_set_stop). */
    if (st == SOW_OK && *stop)
        st = SOW_E_INTERRUPTED;
    /* a damaged block of a compressed level met by a probe: the
     * answer is not to be trusted, whatever the search made of it */
    struct sow_error de;
    if (st != SOW_E_INTERRUPTED && tb && tb_set_damaged(tb, &de)) {
        cli_bad("solve", "%s %s: %s", tables_named(&a), tables, de.msg);
        return solve_end(cli_exit_code(SOW_E_INPUT), s, tb, esol);
    }
    if (st != SOW_OK) {
        if (st == SOW_E_INTERRUPTED)
            fprintf(stderr, "sow solve: interrupted\n");
        else
            cli_bad("solve", "%s", search_last_error(s)->msg);
        return solve_end(cli_exit_code(st), s, tb, esol);
    }
    int pr_rc = solve_print(&a, s, &r, vals, nmv, pr.t0, stop);
    search_free(s);
    tb_close(tb);
    search_solution_close(esol);
    if (pr_rc < 0) {
        fprintf(stderr, "sow solve: interrupted\n");
        return cli_interrupted();
    }
    return CLI_OK;
}
