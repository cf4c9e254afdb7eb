/* sow match: two players over N games from fixed openings, colours
 * swapped, games spread over match_worker threads (docs/engine.md "Matches"). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "book/builtin.h"
#include "cli.h"
#include "fileio.h"
#include "match.h"
#include "tables_path.h"
#include "sow/search.h"
#include "sow/version.h"
#include "util.h"

static const char usage[] =
    "usage: sow match [--rules R] [--pits N] [--seeds S] --a SPEC --b SPEC [--games N]\n"
    "                 [--time MS] [--concurrency J] [--opening-plies K] [--max-plies M]\n"
    "                 [--out FILE] [--balance S] [--balance-depth D] [--balance-exact FILE]\n"
    "                 [--unbalanced] [--openings FILE] [--save-openings FILE]\n"
    "                 [--clock wall|cpu] [--tc MS[+INC]] [--ponder a|b|ab] [--grace MS]\n"
    "                 [--resume]\n"
    "Plays SPEC a against SPEC b over N games (default 20, even): N/2 fixed openings\n"
    "(K pseudo-random moves from the start, default 4, moves that capture nothing\n"
    "where there are some), each played twice with the\n"
    "colours swapped.  Prints wins/draws/losses and the score of a, and the Elo\n"
    "difference of a over b with a 95% interval over the games and one over the\n"
    "pairs (an opening's two games as one sample: what the opening gives cancels).\n"
    "SPEC:\n"
    "  sow[:KEY=V,...]        the engine; keys: depth, time (ms per move), threads,\n"
    "                         hash (MiB), tables (DIR[:DIR..]: their levels, and the\n"
    "                         solution file of the start without solution=; default\n"
    "                         $SOW_TABLES, else ./tables, where it exists; tables= none),\n"
    "                         tablecache (MiB: the tables' block cache), weights (w1/.../w7\n"
    "                         or a weights file: docs/engine.md),\n"
    "                         solution (FILE of sow solve --save: exact knowledge),\n"
    "                         book (FILE of sow book build, or builtin: sow's own;\n"
    "                         its moves played while it holds the position),\n"
    "                         lmr (1/0: late-move reductions on/off; default on in\n"
    "                         oware and awari, off elsewhere: docs/engine.md),\n"
    "                         qs (0..16: plies of capture search below the leaves;\n"
    "                         default 0, none), swindle (1/0: at a proven root, the\n"
    "                         move leaving the fewest good replies; default 0),\n"
    "                         rootclosure (K: at a root the tables hold, its closure\n"
    "                         of at most K thousand positions tells the move; default\n"
    "                         4000; 0: none, the search chooses: docs/engine.md)\n"
    "  threshold[:KEY=V,...]  the threshold search's bounded mode (sow solve --threshold): depth, time\n"
    "  greedy                 one ply: the largest net capture, else the first move\n"
    "  cmd:COMMAND            a program speaking the engine protocol (sh -c COMMAND)\n"
    "Openings are balanced: only those the engine (fixed depth, --balance-depth)\n"
    "scores within --balance seeds for South (stores included) are played,\n"
    "each once (after each 1000 candidates, openings get one move longer;\n"
    "with --balance-exact after 20000 looked up or 1000 searched);\n"
    "--balance-exact FILE judges each candidate by its exact value in the solution\n"
    "file FILE (sow solve --save of the start; or a directory: its file of the\n"
    "start, named as sow solve --tables finds it) instead, where FILE holds it.\n"
    "--unbalanced plays the first candidates as they come; --openings FILE plays\n"
    "the positions of FILE (one a line, e.g. from --save-openings) as given.\n"
    "--time applies where a SPEC gives neither depth nor time.  A position that\n"
    "repeats ends the game with the repetition settlement, as does the move limit.\n"
    "--clock cpu counts a move's time as the CPU time of the thread that thinks\n"
    "(sow and threshold players with one thread): each move gets the computation\n"
    "it would get on an idle machine, however busy this one is (wall: the default).\n"
    "--tc MS[+INC] plays with a game clock instead: each player has MS ms of wall\n"
    "time for its moves of a game, and INC more after each move (sow players and\n"
    "programs, whose SPECs give no depth or time; a program gets go wtime btime\n"
    "winc binc).  A player whose clock falls below -(--grace) loses the game on time.\n"
    "--ponder a|b|ab lets those players, programs (cmd:), think on the opponent's\n"
    "time: Ponder set true, go ponder on the reply each bestmove names, then\n"
    "ponderhit if the opponent played it, else stop (each ponder a CPU more).\n"
    "A program (cmd:) that does not answer go within its time plus --grace MS\n"
    "(default 2000), or to stop a ponder within MS and a second, crashes, or plays\n"
    "an illegal move\n"
    "forfeits the game, with the reason on stderr; it is killed (its process group)\n"
    "and started again for the next game.  SIGINT and SIGTERM stop the match at\n"
    "once (exit 130, 143), the programs killed; the games played are reported.\n"
    "Each game's result goes to stderr as it ends, with the games done, a's points\n"
    "so far and an ETA.\n"
    "--out FILE gets a header line, then each game's line as it ends; --resume\n"
    "with the same --out FILE and settings plays only the games FILE lacks.\n";

/* The command line of a match, as given (cmd_match's options). */
struct match_args {
    struct cli_game g;
    const char *sa, *sb, *out, *openings, *save_open;
    const char *bexact; /* (engstr) --balance-exact */
    const char *clock, *tc, *ponder;
    bool resume, unbalanced;
    double tc_ms, tc_inc; /* --tc, read */
    long games, conc, oplies, maxplies, bdepth;
    double defms, balance, grace;
};

/* Options into a, and the checks that need no file: 0, CLI_HELP (usage
 * printed), or an exit status after one line on stderr. */
static int match_parse_args(struct match_args *a, int argc, char **argv)
{
    *a = (struct match_args){.g = {.seeds = -1}, .clock = "wall", .games = 20, .conc = 2,
                             .oplies = 4, .maxplies = 600, .bdepth = 10, .defms = 100,
                             .balance = 2, .grace = 2000};
    const struct cli_option opts[] = {
        CLI_GAME_OPTIONS(a->g),
        {"--a", CLI_STR, &a->sa, 0, 0, "SPEC", "player a (see above)", 0, 0},
        {"--b", CLI_STR, &a->sb, 0, 0, "SPEC", "player b", 0, 0},
        {"--games", CLI_LONG, &a->games, 2, 100000, "N", "games, even, default 20", 0, 0},
        {"--time", CLI_DOUBLE, &a->defms, 0, 1e7, "MS", "default time per move, ms (100)", true,
         0},
        {"--concurrency", CLI_LONG, &a->conc, 1, 256, "J", "games at once, default 2", 0, 0},
        {"--grace", CLI_DOUBLE, &a->grace, 0, 1e7, "MS",
         "how long past its time a program may take to answer, default 2000", true, 0},
        {"--clock", CLI_STR, &a->clock, 0, 0, "wall|cpu",
         "what a move's time counts: wall time (default) or the thinker's CPU time", 0, 0},
        {"--tc", CLI_STR, &a->tc, 0, 0, "MS[+INC]",
         "a game clock: MS ms a player a game, INC ms more a move", 0, 0},
        {"--ponder", CLI_STR, &a->ponder, 0, 0, "a|b|ab",
         "these players (programs) think on the opponent's time", 0, 0},
        {"--opening-plies", CLI_LONG, &a->oplies, 0, 100, "K", "opening moves, default 4", 0, 0},
        {"--max-plies", CLI_LONG, &a->maxplies, 1, MAXG - 2, "M", "move limit, default 600", 0,
         0},
        {"--out", CLI_STR, &a->out, 0, 0, "FILE", "write the games as text", 0, 0},
        {"--resume", CLI_FLAG, &a->resume, 0, 0, NULL,
         "play only the games the --out FILE of this match lacks", 0, 0},
        {"--balance", CLI_DOUBLE, &a->balance, 0, 1000, "S",
         "openings within +-S seeds for South, default 2", 0, 0},
        {"--balance-depth", CLI_LONG, &a->bdepth, 1, 40, "D",
         "depth of that estimate, default 10", 0, 0},
        {"--unbalanced", CLI_FLAG, &a->unbalanced, 0, 0, NULL,
         "openings not checked for balance", 0, 0},
        {"--openings", CLI_STR, &a->openings, 0, 0, "FILE",
         "the openings, one position per line ('#' comments)", 0, 0},
        {"--save-openings", CLI_STR, &a->save_open, 0, 0, "FILE", "write the openings used", 0,
         0},
        {"--balance-exact", CLI_STR, &a->bexact, 0, 0, "FILE",
         "balance by exact values from a solution file (sow solve --save)", 0, 0},
        {0}};
    const struct cli_spec spec = {"match", usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr;
    if (!a->sa || !a->sb)
        return cli_bad("match", "give both players: --a SPEC --b SPEC (see --help)");
    if (a->games % 2)
        return cli_bad("match", "--games %ld: must be even (each opening twice)", a->games);
    if (a->bexact && (a->unbalanced || a->openings))
        return cli_bad("match", "--balance-exact chooses balanced openings: not with %s",
                       a->unbalanced ? "--unbalanced" : "--openings");
    if (a->resume && !a->out)
        return cli_bad("match", "--resume continues the games of an --out FILE: give --out");
    if (strcmp(a->clock, "wall") && strcmp(a->clock, "cpu"))
        return cli_bad("match", "--clock %s: expected wall or cpu", a->clock);
    if (a->ponder && strcmp(a->ponder, "a") && strcmp(a->ponder, "b") &&
        strcmp(a->ponder, "ab") && strcmp(a->ponder, "ba"))
        return cli_bad("match", "--ponder %s: expected a, b or ab (the players that ponder)",
                       a->ponder);
    if (a->tc) {
        char *end;
        errno = 0;
        a->tc_ms = strtod(a->tc, &end);
        if (*end == '+' && isdigit((unsigned char)end[1]))
            a->tc_inc = strtod(end + 1, &end);
        if (errno || *end || !isdigit((unsigned char)a->tc[0]) ||
            !(a->tc_ms >= 1 && a->tc_ms <= 1e9) || !(a->tc_inc >= 0 && a->tc_inc <= 1e9))
            return cli_bad("match", "--tc %s: expected MS or MS+INC, MS in 1..1e9 and INC "
                           "in 0..1e9 (milliseconds)", a->tc);
        if (strcmp(a->clock, "wall"))
            return cli_bad("match", "--tc counts wall time: not with --clock %s", a->clock);
    }
    return 0;
}

/* The players' SPECs, the clock, the rule set, and the players' files:
 * tables=, solution=, and tables=DIR's solution file of the start.  0 or
 * an exit status after one line on stderr. */
static int match_setup_players(struct mctx *M, struct match_args *a)
{
    char err[400];
    if (match_parse_spec(a->sa, &M->spec[0], err, sizeof err) < 0 ||
        match_parse_spec(a->sb, &M->spec[1], err, sizeof err) < 0)
        return cli_bad("match", "%s", err);
    /* the in-process players' transposition tables: each game under way
     * holds one a player */
    long at_once = a->conc < a->games ? a->conc : a->games, mb = 0;
    for (int k = 0; k < 2; k++)
        if (M->spec[k].kind == P_SOW || M->spec[k].kind == P_THRESHOLD)
            mb += (long)M->spec[k].hash * at_once;
    if (mb && cli_hash_check("match", "the players' tables (hash= of each, a game at once):",
                             mb))
        return CLI_BAD;
    M->cpu_clock = !strcmp(a->clock, "cpu");
    /* under a clock each move's time is the clock's share (timeman.h) */
    M->tc = a->tc != NULL;
    M->tc_ms = a->tc_ms;
    M->tc_inc = a->tc_inc;
    for (int k = 0; M->tc && k < 2; k++)
        if (M->spec[k].kind == P_THRESHOLD || M->spec[k].depth || M->spec[k].ms > 0)
            return cli_bad("match", "--tc: player %c (%s) %s", 'a' + k, M->spec[k].text,
                           M->spec[k].kind == P_THRESHOLD
                               ? "plays by depth or time, not by a clock"
                               : "gives its own depth or time: the clock sets each move's");
    /* --ponder: the protocol's go ponder / ponderhit / stop, so programs
     * only (an engine in this process has no thread to ponder on) */
    for (int k = 0; a->ponder && k < 2; k++) {
        M->ponder[k] = strchr(a->ponder, 'a' + k) != NULL;
        if (M->ponder[k] && M->spec[k].kind != P_CMD)
            return cli_bad("match", "--ponder: player %c (%s) is not a program: pondering is "
                           "for cmd:COMMAND (e.g. cmd:sow engine)", 'a' + k, M->spec[k].text);
        if (M->ponder[k] && M->cpu_clock)
            return cli_bad("match", "--ponder: not with --clock cpu (a program's time is wall "
                           "time)");
    }
    /* The CPU clock is one thread's: a program of its own, or helper
     * threads, would think on time it does not count. */
    for (int k = 0; M->cpu_clock && k < 2; k++)
        if (M->spec[k].kind == P_CMD || (M->spec[k].kind == P_SOW && M->spec[k].threads > 1))
            return cli_bad("match", "--clock cpu: player %c (%s) %s", 'a' + k, M->spec[k].text,
                           M->spec[k].kind == P_CMD
                               ? "is a program: its CPU time is not ours to count"
                               : "thinks with several threads: give threads=1");
    if (cli_game_setup("match", &a->g))
        return CLI_BAD;
    M->rs = a->g.rs;
    int noted = 0;
    for (int k = 0; k < 2; k++) {
        struct pspec *sp = &M->spec[k];
        bool dflt = false;
        char tmsg[600];
        if (sp->kind == P_SOW && !sp->tables) { /* the default path where it exists */
            char note[700];
            dflt = (sp->tables = tpath_default_usable(note, sizeof note)) != NULL;
            if (*note && !noted++)
                fprintf(stderr, "sow match: %s\n", note);
        }
        if (sp->tables && !*sp->tables)
            sp->tables = NULL; /* tables= : none */
        if (sp->table_cache && !sp->tables)
            return cli_bad("match", "player %c: tablecache= sizes the tables' cache: give "
                           "tables=DIR", 'a' + k);
        if (!sp->tables)
            continue;
        if (!dflt && tpath_check(sp->tables, tmsg, sizeof tmsg) < 0)
            return cli_bad("match", "player %c: tables %s", 'a' + k, tmsg);
        struct sow_error te;
        enum sow_status st = tpath_open(&M->rs, sp->tables, sp->table_cache, &M->tb[k], &te);
        if (st != SOW_OK) {
            fprintf(stderr, "sow match: tables %s: %s\n", sp->tables, te.msg);
            return cli_exit_code(st);
        }
        if (dflt && tb_max_level(M->tb[k]) >= 0)
            fprintf(stderr, "sow match: player %c probes the tables in %s (levels 0..%d)\n",
                    'a' + k, sp->tables, tb_max_level(M->tb[k]));
    }
    /* bad files before the openings' search */
    for (int k = 0; k < 2; k++)
        if (M->spec[k].solution) {
            struct sow_error se;
            enum sow_status st =
                search_solution_open(&M->rs, M->spec[k].solution, &M->sol[k], &se);
            if (st != SOW_OK) {
                fprintf(stderr, "sow match: %s\n", se.msg);
                return cli_exit_code(st);
            }
        }
    for (int k = 0; k < 2; k++)
        if (M->spec[k].book) {
            struct sow_error be;
            enum sow_status st = strcmp(M->spec[k].book, "builtin")
                                     ? book_open(M->spec[k].book, &M->rs, &M->book[k], &be)
                                     : book_load_builtin(&M->rs, &M->book[k], &be);
            if (st != SOW_OK) {
                fprintf(stderr, "sow match: player %c: %s\n", 'a' + k, be.msg);
                return cli_exit_code(st);
            }
            M->have_book[k] = true;
        }
    /* tables=DIR without solution=: DIR's solution file of the
     * start, if there is one, as sow solve --tables finds it (every game
     * position descends from the start, so that file holds them all) */
    for (int k = 0; k < 2; k++)
        if (M->spec[k].tables && !M->spec[k].solution) {
            struct sow_error se = {0};
            char found[4096];
            sow_position start = rules_start(&M->rs);
            enum sow_status st = tpath_solution_find(&M->rs, M->spec[k].tables, &start,
                                                     &M->sol[k], found, sizeof found, &se);
            if (st != SOW_OK) {
                fprintf(stderr, "sow match: tables %s: %s\n", M->spec[k].tables, se.msg);
                return cli_exit_code(st);
            }
            if (M->sol[k])
                fprintf(stderr, "sow match: player %c probes the solution file %s\n", 'a' + k,
                        found);
        }
    return 0;
}

/* (engstr) --balance-exact FILE or DIR: the file is checked before any
 * game.  0 or an exit status after one line on stderr. */
static int match_open_bexact(struct mctx *M, const char *bexact)
{
    struct sow_error se = {0};
    struct stat sb;
    static char found[4096];
    enum sow_status st;
    if (stat(bexact, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        /* a tables directory: its solution file of the start, by name */
        sow_position start = rules_start(&M->rs);
        st = search_solution_find(&M->rs, bexact, &start, &M->bsol, found, sizeof found, &se);
        if (st == SOW_OK && !M->bsol)
            st = sow_fail(&se, SOW_E_INPUT, "no solution file in %s holds the start", bexact);
        bexact = found;
    } else {
        st = search_solution_open(&M->rs, bexact, &M->bsol, &se);
    }
    if (st != SOW_OK) {
        fprintf(stderr, "sow match: --balance-exact: %s\n", se.msg);
        return cli_exit_code(st);
    }
    M->bsol_path = bexact;
    return 0;
}

/* The settings into M, and its per-game and per-opening arrays: 0 or
 * CLI_FAIL (out of memory, message printed). */
static int match_alloc(struct mctx *M, const struct match_args *a)
{
    M->games = (int)a->games;
    M->oplies = (int)a->oplies;
    M->maxplies = (int)a->maxplies;
    M->defms = a->defms;
    M->grace = a->grace / 1000;
    M->balance = a->unbalanced ? -1 : a->balance;
    M->bdepth = (int)a->bdepth;
    M->score = calloc((size_t)a->games, sizeof *M->score);
    M->text = calloc((size_t)a->games, sizeof *M->text);
    M->open = calloc((size_t)a->games / 2, sizeof *M->open);
    M->omargin = calloc((size_t)a->games / 2, sizeof *M->omargin);
    M->oexact = calloc((size_t)a->games / 2, sizeof *M->oexact);
    M->omoves = calloc((size_t)a->games / 2, sizeof *M->omoves);
    M->tcleft = calloc((size_t)a->games, sizeof *M->tcleft);
    M->tcdone = calloc((size_t)a->games, sizeof *M->tcdone);
    if (!M->score || !M->text || !M->open || !M->omargin || !M->oexact || !M->omoves ||
        !M->tcleft || !M->tcdone) {
        fprintf(stderr, "sow match: out of memory\n");
        return CLI_FAIL;
    }
    pthread_mutex_init(&M->lock, NULL);
    pthread_cond_init(&M->opened, NULL);
    return 0;
}

/* --save-openings: the openings, one a line, with their balance as a
 * comment; through fileio (a regular file replaced whole: temporary file,
 * fsync, rename).  0 or an exit status after one line on stderr. */
static int match_save_openings(const struct mctx *M, const struct match_args *a)
{
    struct fio_out o;
    struct sow_error fe;
    if (fio_out_begin(&o, a->save_open, NULL, &fe)) {
        fprintf(stderr, "sow match: --save-openings: %s\n", fe.msg);
        return cli_exit_code(fe.status);
    }
    FILE *fs = fio_out_stream(&o);
    if (!fs) {
        fio_out_abort(&o);
        fprintf(stderr, "sow match: --save-openings %s: out of memory\n", a->save_open);
        return CLI_FAIL;
    }
    for (int i = 0; i < M->games / 2; i++) {
        char pos[SOW_POS_MAXLEN];
        pos_format(&M->rs, &M->open[i], pos, sizeof pos);
        fprintf(fs, "%s", pos);
        if (M->balance >= 0 && !a->openings && M->oexact[i])
            fprintf(fs, "  # South %+d exact", M->omargin[i] / 100);
        else if (M->balance >= 0 && !a->openings)
            fprintf(fs, "  # South %+.2f at depth %d", M->omargin[i] / 100.0, M->bdepth);
        /* the moves too: a large set's later openings are longer (match_openings.c) */
        if (M->omoves[i])
            fprintf(fs, "%s%d moves", M->balance >= 0 ? ", " : "  # ", M->omoves[i]);
        fputc('\n', fs);
    }
    if (fio_out_commit(&o, &fe)) {
        fprintf(stderr, "sow match: --save-openings: %s\n", fe.msg);
        return cli_exit_code(fe.status);
    }
    return 0;
}

/* --out: a header line of the match's settings (head, len hlen), then each
 * game's line as it ends (so that --resume can continue a killed or
 * interrupted match); at the end the file is rewritten in game order.
 * With --resume, the earlier run's games are read first (*heads: its
 * header lines).  0 or an exit status after one line on stderr. */
static int match_out_open(struct mctx *M, const struct match_args *a, char *head, size_t hlen,
                          char **heads)
{
    char err[400];
    char tm[64]; /* the move's time, or the game clock (a header without tc: as before) */
    if (M->tc)
        snprintf(tm, sizeof tm, "tc %g+%g ms", M->tc_ms, M->tc_inc);
    else
        snprintf(tm, sizeof tm, "time %g ms", M->defms);
    char pd[16] = ""; /* who ponders (a header without it: as before) */
    if (a->ponder)
        snprintf(pd, sizeof pd, "; ponder %s%s", M->ponder[0] ? "a" : "", M->ponder[1] ? "b" : "");
    snprintf(head, hlen,
             "# sow match: rules %s 2x%d seeds %d; a %s; b %s; clock %s; %s; games %d; "
             "max-plies %d%s", M->rs.name, M->rs.pits, M->rs.seeds, M->spec[0].text,
             M->spec[1].text, a->clock, tm, M->games, M->maxplies, pd);
    *heads = NULL;
    if (a->resume && match_resume_read(M, a->out, head, heads, err, sizeof err) < 0)
        return cli_bad("match", "--resume %s: %s", a->out, err);
    /* The games go to FILE itself as they end (a killed match resumes from
     * it): a log appended in place (fileio.h rule 6), not an fio_out; the
     * target is checked first as fileio's outputs are: a link, FIFO (which
     * would block here), device or directory is refused. */
    struct sow_error fe;
    if (a->out && fio_check_target(a->out, &fe)) {
        free(*heads);
        fprintf(stderr, "sow match: --out: %s\n", fe.msg);
        return cli_exit_code(fe.status);
    }
    if (a->out && !(M->fo = fio_open_log(a->out, !a->resume, &fe))) {
        free(*heads);
        return cli_bad("match", "--out %s", fe.msg);
    }
    if (M->fo) {
        fprintf(M->fo, "%s (sow %s %s%s)\n", head, sow_version(), sow_commit(),
                a->resume ? ", resumed" : "");
        fflush(M->fo);
    }
    return 0;
}

/* The games, on min(--concurrency, games) worker threads. */
static void match_run(struct mctx *M, long conc)
{
    pthread_t th[256];
    int nt = (int)(conc < M->games ? conc : M->games), started = 0;
    M->opening = nt; /* the workers wait for each other's players (match_worker) */
    for (int g = 0; g < M->games; g++)
        if (M->text[g]) { /* resumed */
            M->done++;
            M->points += M->score[g];
        }
    M->t_run = util_now();
    for (int i = 0; i < nt; i++)
        if (pthread_create(&th[started], NULL, match_worker, M) == 0)
            started++;
    if (started < nt) {
        pthread_mutex_lock(&M->lock);
        M->opening -= nt - started;
        pthread_cond_broadcast(&M->opened);
        pthread_mutex_unlock(&M->lock);
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

/* After the games: the --out FILE rewritten in game order (every header
 * line first, through fileio), and the results counted into t.  0 or an
 * exit status after one line on stderr. */
static int match_finish(struct mctx *M, const struct match_args *a, const char *head,
                        char *heads, struct match_tally *t)
{
    struct fio_out o;
    struct sow_error fe;
    FILE *fo = NULL;
    if (M->fo) {
        /* in game order now, every header line first (fileio: temporary
         * file, fsync, rename) */
        fclose(M->fo);
        M->fo = NULL;
        if (!M->failed || match_stop) {
            if (fio_out_begin(&o, a->out, NULL, &fe)) {
                free(heads);
                fprintf(stderr, "sow match: --out: %s\n", fe.msg);
                return cli_exit_code(fe.status);
            }
            if (!(fo = fio_out_stream(&o))) {
                fio_out_abort(&o);
                free(heads);
                fprintf(stderr, "sow match: --out %s: out of memory\n", a->out);
                return CLI_FAIL;
            }
            fprintf(fo, "%s%s (sow %s %s%s)\n", heads ? heads : "", head, sow_version(),
                    sow_commit(), a->resume ? ", resumed" : "");
        }
    }
    free(heads);
    if (M->failed && !match_stop) {
        fprintf(stderr, "sow match: %s\n", M->why);
        return M->fail_status ? M->fail_status : CLI_FAIL;
    }
    *t = (struct match_tally){0};
    for (int i = 0; i + 1 < M->games; i += 2) /* game 2k+1 and 2k+2: opening k */
        if (M->text[i] && M->text[i + 1])
            t->pair[(int)lround(2 * (M->score[i] + M->score[i + 1]))]++;
    for (int i = 0; i < M->games; i++) {
        if (!M->text[i])
            continue;
        t->played++;
        double x = M->score[i];
        t->w += x == 1.0;
        t->d += x == 0.5;
        t->l += x == 0.0;
        t->sum += x;
        t->sum2 += x * x;
        if (fo)
            fprintf(fo, "%s\n", M->text[i]);
        free(M->text[i]);
    }
    if (fo && fio_out_commit(&o, &fe)) {
        fprintf(stderr, "sow match: --out: %s\n", fe.msg);
        return cli_exit_code(fe.status);
    }
    return 0;
}

static void match_free(struct mctx *M)
{
    for (int k = 0; k < 2; k++) {
        tb_close(M->tb[k]);
        search_solution_close(M->sol[k]);
        book_free(&M->book[k]);
    }
    free(M->score);
    free(M->text);
    free(M->open);
    free(M->omargin);
    free(M->oexact);
    free(M->omoves);
    free(M->tcleft);
    free(M->tcdone);
    search_solution_close(M->bsol);
}

int cmd_match(int argc, char **argv)
{
    struct match_args a;
    int rc = match_parse_args(&a, argc, argv);
    if (rc)
        return rc == CLI_HELP ? CLI_OK : rc;
    static struct mctx M;
    if ((rc = match_setup_players(&M, &a)) ||
        (a.bexact && (rc = match_open_bexact(&M, a.bexact))) || (rc = match_alloc(&M, &a)))
        return rc;
    /* SIGINT and SIGTERM alike: the games stop at once and the programs
     * are killed (the default SIGTERM left them running) */
    struct sigaction sa_, old, oldterm;
    memset(&sa_, 0, sizeof sa_);
    sa_.sa_handler = match_on_sigint;
    sigemptyset(&sa_.sa_mask);
    sigaction(SIGINT, &sa_, &old);
    sigaction(SIGTERM, &sa_, &oldterm);
    signal(SIGPIPE, SIG_IGN);
    double t0 = util_now();
    char err[400];
    if (a.openings ? match_read_openings(&M, a.openings, err, sizeof err) < 0
                   : match_choose_openings(&M, err, sizeof err) < 0) {
        sigaction(SIGINT, &old, NULL);
        sigaction(SIGTERM, &oldterm, NULL);
        if (match_stop) {
            fprintf(stderr, "sow match: interrupted while choosing openings\n");
            return match_stop == SIGTERM ? CLI_TERMINATED : CLI_INTERRUPTED;
        }
        return cli_bad("match", "%s", err);
    }
    char head[3000];
    char *heads = NULL; /* the header lines of the file resumed */
    if ((a.save_open && (rc = match_save_openings(&M, &a))) ||
        (rc = match_out_open(&M, &a, head, sizeof head, &heads))) {
        sigaction(SIGINT, &old, NULL);
        sigaction(SIGTERM, &oldterm, NULL);
        return rc;
    }
    match_run(&M, a.conc);
    sigaction(SIGINT, &old, NULL);
    sigaction(SIGTERM, &oldterm, NULL);
    struct match_tally t;
    if ((rc = match_finish(&M, &a, head, heads, &t)))
        return rc;
    if (match_stop && t.played < M.games)
        fprintf(stderr, "sow match: interrupted after %d games\n", t.played);
    match_print_report(&M, &t, a.openings, util_now() - t0);
    match_free(&M);
    return match_stop == SIGTERM ? CLI_TERMINATED : match_stop ? CLI_INTERRUPTED : CLI_OK;
}
