/* sow solve: exact value, best move and principal variation of a position. */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sow/search.h"
#include "sow/tables.h"
#include "sow/util.h"

static const char usage[] =
    "usage: sow solve [--rules R] [--pits N] [--seeds S] [POS] [--threads T] [--hash MB]\n"
    "                 [--tables DIR] [--levels MPOS] [--memory GB] [--depth D | --time S]\n"
    "                 [--moves] [--json] [--save FILE | --solution FILE] [--work DIR]\n"
    "Solve POS (default: the start): the value is the net number of seeds the player\n"
    "to move captures from now on under perfect play (docs/rules.md, \"Value of a\n"
    "position\"; endless cycles settled by the repetition rule).  Prints the value,\n"
    "the best move, a principal variation to the end of the game, nodes (positions\n"
    "visited: children made and looked up), positions expanded, time, nodes/second\n"
    "and endgame-table hits.\n"
    "  --threads T   threads, default 1; the value never depends on it\n"
    "  --hash MB     transposition table of the bounded mode, MiB, default 64\n"
    "                (the exact mode does not use it, docs/solver.md)\n"
    "  --tables DIR  probe the endgame tables in DIR (sow tables)\n"
    "  --levels MPOS exact mode: solve the lowest levels whole in memory (the table\n"
    "                builder, ~3 bytes kept per position) while they add up to at\n"
    "                most MPOS million positions, default 32; 0: none (the closure\n"
    "                of the position does every level)\n"
    "  --memory GB   exact mode: memory the closure may use, default 3/4 of RAM;\n"
    "                a closure that would need more is refused before it is built\n"
    "                (exit 2)\n"
    "  --save FILE   solve by the position's closure alone and write it, every\n"
    "                position with its value, as a solution file (docs/solutions.md)\n"
    "  --work DIR    keep the closure's checkpoints in DIR (made if missing): a solve\n"
    "                stopped (Ctrl-C) resumes there from its finished levels\n"
    "  --solution FILE  answer POS from a solution file at once, with every move's\n"
    "                value (no search)\n"
    "  --depth D     bounded search to D plies: proven bounds and a heuristic value\n"
    "                (bounded modes give the best move alone as the PV)\n"
    "  --time S      bounded search, deepening for S seconds\n"
    "  --moves       also print every legal move's exact value\n"
    "  --json        one JSON object: position, rules, value, exact, best, pv, moves,\n"
    "                nodes, nps, time_ms (and pits, lower, upper, expanded, tb_hits)\n"
    "Progress goes to stderr on long solves; Ctrl-C stops (exit 130, no output);\n"
    "a second Ctrl-C ends it at once.\n";

static volatile sig_atomic_t g_stop;

static void on_sigint(int sig)
{
    (void)sig;
    g_stop = 1;
}

struct prog {
    double t0;
};

static void on_progress(void *arg, const char *line)
{
    struct prog *pr = arg;
    double dt = util_now() - pr->t0;
    if (dt >= 1.0)
        fprintf(stderr, "sow solve: %s  (%.1f s)\n", line, dt);
}

/* Replay the PV from p: names with the right side, and the final position. */
static int pv_names(const struct ruleset *rs, const sow_position *p, const struct search_result *r,
                    char names[][SOW_MOVE_MAXLEN], sow_position *last)
{
    sow_position q = *p;
    struct sow_movelist ml;
    int k;
    for (k = 0; k < r->pv_len; k++) {
        rules_generate(rs, &q, &ml);
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

int cmd_solve(int argc, char **argv)
{
    struct cli_game g = {.seeds = -1};
    long threads = 1, hash = 64, depth = 0, levels = -1;
    double memgb = 0;
    const char *mstr = NULL;
    double tlimit = 0;
    const char *tables = NULL, *tstr = NULL, *save = NULL, *solution = NULL,
               *work = NULL;
    bool moves = false, json = false, have_depth = false;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) {
            fputs(usage, stdout);
            return CLI_OK;
        }
        if ((r = cli_game_opt("solve", argc, argv, &i, &g)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if ((r = cli_opt_long("solve", argc, argv, &i, "--threads", 1, 256, &threads)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if ((r = cli_opt_long("solve", argc, argv, &i, "--hash", 1, 1 << 20, &hash)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if ((r = cli_opt_long("solve", argc, argv, &i, "--levels", 0, 1 << 20, &levels)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if ((r = cli_opt("solve", argc, argv, &i, "--memory", &mstr)) < 0)
            return CLI_BAD;
        if (r) {
            char *end;
            memgb = strtod(mstr, &end);
            if (end == mstr || *end || !(memgb >= 0.001 && memgb <= 1e6))
                return cli_bad("solve", "--memory '%s': expected GB, at least 0.001", mstr);
            continue;
        }
        if ((r = cli_opt_long("solve", argc, argv, &i, "--depth", 1, 10000, &depth)) < 0)
            return CLI_BAD;
        if (r) {
            have_depth = true;
            continue;
        }
        if ((r = cli_opt("solve", argc, argv, &i, "--time", &tstr)) < 0)
            return CLI_BAD;
        if (r) {
            char *end;
            tlimit = strtod(tstr, &end);
            if (end == tstr || *end || !(tlimit > 0 && tlimit <= 1e7))
                return cli_bad("solve", "--time '%s': expected seconds > 0", tstr);
            continue;
        }
        if ((r = cli_opt("solve", argc, argv, &i, "--save", &save)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if ((r = cli_opt("solve", argc, argv, &i, "--work", &work)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if ((r = cli_opt("solve", argc, argv, &i, "--solution", &solution)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if ((r = cli_opt("solve", argc, argv, &i, "--tables", &tables)) < 0)
            return CLI_BAD;
        if (r)
            continue;
        if (strcmp(argv[i], "--moves") == 0) {
            moves = true;
            continue;
        }
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return cli_unknown("solve", argv[i]);
        if (g.pos)
            return cli_bad("solve", "more than one position given ('%s')", argv[i]);
        g.pos = argv[i];
    }
    double ram = util_phys_memory();
    if (ram > 0 && (double)hash * 1048576.0 > 0.75 * ram)
        return cli_bad("solve",
                       "--hash %ld MiB does not fit: this machine has %.0f MiB, at most %.0f MiB "
                       "(3/4 of it) can go to the table",
                       hash, ram / 1048576.0, 0.75 * ram / 1048576.0);
    if (have_depth && tstr)
        return cli_bad("solve", "--depth and --time exclude each other");
    if (levels >= 0 && (have_depth || tstr))
        return cli_bad("solve", "--levels is for the exact mode: not with --depth/--time");
    if (levels > 0 && ram > 0 && (double)levels * 1e6 * 3.0 > 0.75 * ram)
        return cli_bad("solve",
                       "--levels %ld: %ld million positions need %.0f MiB to keep, this "
                       "machine has %.0f MiB",
                       levels, levels, (double)levels * 3e6 / 1048576.0, ram / 1048576.0);
    if (memgb && (have_depth || tstr))
        return cli_bad("solve", "--memory is for the exact mode: not with --depth/--time");
    if (memgb && ram > 0 && (double)memgb * 1e9 > ram)
        return cli_bad("solve", "--memory %g GB is more than this machine has (%.1f GB of RAM)",
                       memgb, ram / 1e9);
    if (moves && (have_depth || tstr))
        return cli_bad("solve", "--moves gives exact values: not with --depth/--time");
    if ((save || solution) && (have_depth || tstr))
        return cli_bad("solve", "--save/--solution are for the exact mode: not with --depth/--time");
    if (save && (solution || tables || levels >= 0))
        return cli_bad("solve", "--save solves by the closure alone: not with --solution, "
                                "--tables or --levels");
    if (solution && (tables || levels >= 0 || memgb))
        return cli_bad("solve", "--solution answers from the file: not with --tables, --levels "
                                "or --memory");
    if (work && (have_depth || tstr || solution))
        return cli_bad("solve", "--work is for exact solves: not with --depth/--time/--solution");
    if (work) {
        struct stat sb;
        if (mkdir(work, 0777) < 0 && errno != EEXIST)
            return cli_bad("solve", "--work %s: cannot create: %s", work, strerror(errno));
        if (stat(work, &sb) < 0 || !S_ISDIR(sb.st_mode))
            return cli_bad("solve", "--work %s: not a directory", work);
    }
    if (cli_game_setup("solve", &g))
        return CLI_BAD;
    if (save)
        levels = 0; /* the closure alone: every position the start reaches, in the file */

    struct tb_set *tb = NULL;
    if (tables) {
        if (cli_check_dir("solve", tables))
            return CLI_BAD; /* a mistyped --tables would otherwise solve without them */
        struct sow_error e;
        if (tb_open(&g.rs, tables, &tb, &e) != SOW_OK) /* missing or damaged: bad input */
            return cli_bad("solve", "--tables %s: %s", tables, e.msg);
    }
    struct prog pr = {util_now()};
    struct search_opts o = {
        .threads = (int)threads,
        .hash_mb = (unsigned)hash,
        .depth = (int)depth,
        .time_limit = tlimit,
        .tb = tb,
        .level_budget = levels < 0 ? 0 : levels == 0 ? -1 : levels * 1000000LL,
        .memory = memgb * 1e9,
        .work = work,
        .stop = &g_stop,
        .progress = on_progress,
        .progress_arg = &pr,
    };
    struct search_ctx *s;
    struct sow_error e;
    enum sow_status st = search_new(&g.rs, &o, &s, &e);
    if (st != SOW_OK) {
        tb_close(tb);
        fprintf(stderr, "sow solve: %s\n", e.msg);
        return cli_exit_code(st);
    }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    /* A second Ctrl-C ends the process at once: solve writes no file, and a
     * single move can take long to decide (a very long relay, docs/rules.md). */
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);

    struct search_result r;
    struct sow_movelist ml;
    int vals[SOW_MAX_PITS + 1];
    int nmv = 0;
    rules_generate(&g.rs, &g.p, &ml);
    if (solution) {
        struct sol *sol = NULL;
        struct sow_error se = {0};
        st = search_solution_open(&g.rs, solution, &sol, &se);
        if (st == SOW_OK) {
            nmv = search_solution_answer(sol, &g.p, &r, vals);
            search_solution_close(sol);
            if (nmv < 0)
                st = sow_fail(&se, SOW_E_INPUT, "%s: the position is not in this solution",
                              solution);
        }
        if (st != SOW_OK) {
            sigaction(SIGINT, &old, NULL);
            fprintf(stderr, "sow solve: %s\n", se.msg);
            search_free(s);
            tb_close(tb);
            return cli_exit_code(st);
        }
        moves = true;
    } else {
        st = search_solve(s, &g.p, &r);
        if (st == SOW_OK && moves) {
            nmv = search_move_values(s, &g.p, vals);
            if (nmv < 0)
                st = search_last_error(s)->status;
        }
    }
    sigaction(SIGINT, &old, NULL);
    if (st != SOW_OK) {
        fprintf(stderr, "sow solve: %s\n", search_last_error(s)->msg);
        search_free(s);
        tb_close(tb);
        return cli_exit_code(st);
    }
    if (save) {
        struct sow_error se = {0};
        st = search_save(s, &g.p, save, &se);
        if (st != SOW_OK) {
            fprintf(stderr, "sow solve: %s\n", se.msg);
            search_free(s);
            tb_close(tb);
            return cli_exit_code(st);
        }
    }
    /* Counters over the whole command (solve, PV and --moves). */
    uint64_t nodes, hits, expanded = search_expanded(s);
    search_counters(s, &nodes, &hits);
    double secs = util_now() - pr.t0;
    double nps = secs > 0 ? (double)nodes / secs : 0;

    char pos[SOW_POS_MAXLEN], best[SOW_MOVE_MAXLEN] = "none";
    char names[SEARCH_MAX_PV][SOW_MOVE_MAXLEN];
    sow_position last;
    pos_format(&g.rs, &g.p, pos, sizeof pos);
    if (r.best != SOW_MOVE_NONE)
        move_format(&g.rs, g.p.side, r.best, best, sizeof best);
    int npv = pv_names(&g.rs, &g.p, &r, names, &last);
    struct sow_movelist lml;
    rules_generate(&g.rs, &last, &lml);

    if (json) {
        printf("{\"position\":");
        json_str(pos);
        printf(",\"rules\":\"%s\",\"pits\":%d,\"value\":%d,\"exact\":%s,\"lower\":%d,"
               "\"upper\":%d,\"best\":",
               g.rs.name, g.rs.pits, r.value, r.exact ? "true" : "false", r.lower, r.upper);
        if (r.best != SOW_MOVE_NONE)
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
               "\"tb_hits\":%llu}\n",
               (unsigned long long)nodes, (unsigned long long)expanded, nps, secs * 1000,
               (unsigned long long)hits);
    } else {
        printf("position : %s\n", pos);
        printf("rules    : %s 2x%d\n", g.rs.name, g.rs.pits);
        if (r.exact)
            printf("value    : %d (exact: net seeds the player to move captures from now on)\n",
                   r.value);
        else
            printf("value    : %d (heuristic, NOT exact; proven bounds [%d, %d] at depth %d)\n",
                   r.value, r.lower, r.upper, r.depth);
        if (r.over)
            printf("best     : none (game over: %s)\n", rules_end_name(ml.end));
        else
            printf("best     : %s\n", best);
        if (r.exact && !r.over) {
            printf("pv       :");
            for (int k = 0; k < npv; k++)
                printf(" %s", names[k]);
            if (r.pv_repeats)
                printf(" (position repeats: cycle settled)\n");
            else if (lml.n == 0)
                printf(" (game over: %s)\n", rules_end_name(lml.end));
            else
                printf(" ...\n");
        }
        for (int i = 0; i < nmv; i++) {
            char mv[SOW_MOVE_MAXLEN];
            move_format(&g.rs, g.p.side, ml.c[i].move, mv, sizeof mv);
            printf("move %-5s: %d%s\n", mv, vals[i], vals[i] == r.value ? " (best)" : "");
        }
        printf("nodes    : %llu (positions visited)\n", (unsigned long long)nodes);
        printf("expanded : %llu (positions whose moves were generated)\n",
               (unsigned long long)expanded);
        printf("time     : %.3f s\n", secs);
        printf("nodes/s  : %.0f\n", nps);
        printf("tb hits  : %llu\n", (unsigned long long)hits);
    }
    search_free(s);
    tb_close(tb);
    return CLI_OK;
}
