/* sow match: two players over N games from fixed openings, colours
 * swapped, games spread over match_worker threads (docs/engine.md "Matches"). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "match.h"
#include "sow/search.h"
#include "sow/version.h"
#include "util.h"

static const char usage[] =
    "usage: sow match [--rules R] [--pits N] [--seeds S] --a SPEC --b SPEC [--games N]\n"
    "                 [--time MS] [--concurrency J] [--opening-plies K] [--max-plies M]\n"
    "                 [--out FILE] [--balance S] [--balance-depth D] [--balance-exact FILE]\n"
    "                 [--unbalanced] [--openings FILE] [--save-openings FILE]\n"
    "                 [--clock wall|cpu] [--resume]\n"
    "Plays SPEC a against SPEC b over N games (default 20, even): N/2 fixed openings\n"
    "(K pseudo-random moves from the start, default 4, moves that capture nothing\n"
    "where there are some), each played twice with the\n"
    "colours swapped.  Prints wins/draws/losses and the score of a, and the Elo\n"
    "difference of a over b with a 95% interval.\n"
    "SPEC:\n"
    "  sow[:KEY=V,...]        the engine; keys: depth, time (ms per move), threads,\n"
    "                         hash (MiB), tables (DIR: its levels, and its solution\n"
    "                         file of the start without solution=), weights (w1/.../w7),\n"
    "                         solution (FILE of sow solve --save: exact knowledge)\n"
    "  threshold[:KEY=V,...]  today's bounded mode (sow solve --threshold): depth, time\n"
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
    "--out FILE gets a header line, then each game's line as it ends; --resume\n"
    "with the same --out FILE and settings plays only the games FILE lacks.\n";

int cmd_match(int argc, char **argv)
{
    struct cli_game g = {.seeds = -1};
    const char *sa = NULL, *sb = NULL, *out = NULL, *openings = NULL, *save_open = NULL;
    const char *bexact = NULL; /* (engstr) --balance-exact */
    const char *clock = "wall";
    bool resume = false;
    long games = 20, conc = 2, oplies = 4, maxplies = 600;
    double defms = 100, balance = 2;
    long bdepth = 10;
    bool unbalanced = false;
    const struct cli_option opts[] = {
        CLI_GAME_OPTIONS(g),
        {"--a", CLI_STR, &sa, 0, 0, "SPEC", "player a (see above)", 0, 0},
        {"--b", CLI_STR, &sb, 0, 0, "SPEC", "player b", 0, 0},
        {"--games", CLI_LONG, &games, 2, 100000, "N", "games, even, default 20", 0, 0},
        {"--time", CLI_DOUBLE, &defms, 0, 1e7, "MS", "default time per move, ms (100)", true, 0},
        {"--concurrency", CLI_LONG, &conc, 1, 256, "J", "games at once, default 2", 0, 0},
        {"--clock", CLI_STR, &clock, 0, 0, "wall|cpu",
         "what a move's time counts: wall time (default) or the thinker's CPU time", 0, 0},
        {"--opening-plies", CLI_LONG, &oplies, 0, 100, "K", "opening moves, default 4", 0, 0},
        {"--max-plies", CLI_LONG, &maxplies, 1, MAXG - 2, "M", "move limit, default 600", 0, 0},
        {"--out", CLI_STR, &out, 0, 0, "FILE", "write the games as text", 0, 0},
        {"--resume", CLI_FLAG, &resume, 0, 0, NULL,
         "play only the games the --out FILE of this match lacks", 0, 0},
        {"--balance", CLI_DOUBLE, &balance, 0, 1000, "S",
         "openings within +-S seeds for South, default 2", 0, 0},
        {"--balance-depth", CLI_LONG, &bdepth, 1, 40, "D", "depth of that estimate, default 10",
         0, 0},
        {"--unbalanced", CLI_FLAG, &unbalanced, 0, 0, NULL, "openings not checked for balance",
         0, 0},
        {"--openings", CLI_STR, &openings, 0, 0, "FILE",
         "the openings, one position per line ('#' comments)", 0, 0},
        {"--save-openings", CLI_STR, &save_open, 0, 0, "FILE", "write the openings used", 0, 0},
        {"--balance-exact", CLI_STR, &bexact, 0, 0, "FILE",
         "balance by exact values from a solution file (sow solve --save)", 0, 0},
        {0}};
    const struct cli_spec spec = {"match", usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;
    if (!sa || !sb)
        return cli_bad("match", "give both players: --a SPEC --b SPEC (see --help)");
    if (games % 2)
        return cli_bad("match", "--games %ld: must be even (each opening twice)", games);
    if (bexact && (unbalanced || openings))
        return cli_bad("match", "--balance-exact chooses balanced openings: not with %s",
                       unbalanced ? "--unbalanced" : "--openings");
    if (resume && !out)
        return cli_bad("match", "--resume continues the games of an --out FILE: give --out");
    if (strcmp(clock, "wall") && strcmp(clock, "cpu"))
        return cli_bad("match", "--clock %s: expected wall or cpu", clock);
    static struct mctx M;
    char err[400];
    if (match_parse_spec(sa, &M.spec[0], err, sizeof err) < 0 ||
        match_parse_spec(sb, &M.spec[1], err, sizeof err) < 0)
        return cli_bad("match", "%s", err);
    M.cpu_clock = !strcmp(clock, "cpu");
    /* The CPU clock is one thread's: a program of its own, or helper
     * threads, would think on time it does not count. */
    for (int k = 0; M.cpu_clock && k < 2; k++)
        if (M.spec[k].kind == P_CMD || (M.spec[k].kind == P_SOW && M.spec[k].threads > 1))
            return cli_bad("match", "--clock cpu: player %c (%s) %s", 'a' + k, M.spec[k].text,
                           M.spec[k].kind == P_CMD ? "is a program: its CPU time is not ours to count"
                                                   : "thinks with several threads: give threads=1");
    if (cli_game_setup("match", &g))
        return CLI_BAD;
    M.rs = g.rs;
    for (int k = 0; k < 2; k++)
        if (M.spec[k].tables) {
            if (cli_check_dir("match", M.spec[k].tables))
                return CLI_BAD;
            struct sow_error te;
            enum sow_status st = tb_open(&M.rs, M.spec[k].tables, &M.tb[k], &te);
            if (st != SOW_OK) {
                fprintf(stderr, "sow match: tables %s: %s\n", M.spec[k].tables, te.msg);
                return cli_exit_code(st);
            }
        }
    /* bad files before the openings' search */
    for (int k = 0; k < 2; k++)
        if (M.spec[k].solution) {
            struct sow_error se;
            enum sow_status st = search_solution_open(&M.rs, M.spec[k].solution, &M.sol[k], &se);
            if (st != SOW_OK) {
                fprintf(stderr, "sow match: %s\n", se.msg);
                return cli_exit_code(st);
            }
        }
    /* (issue 12) tables=DIR without solution=: DIR's solution file of the
     * start, if there is one, as sow solve --tables finds it (every game
     * position descends from the start, so that file holds them all) */
    for (int k = 0; k < 2; k++)
        if (M.spec[k].tables && !M.spec[k].solution) {
            struct sow_error se = {0};
            char found[4096];
            sow_position start = rules_start(&M.rs);
            enum sow_status st = search_solution_find(&M.rs, M.spec[k].tables, &start, &M.sol[k],
                                                      found, sizeof found, &se);
            if (st != SOW_OK) {
                fprintf(stderr, "sow match: tables %s: %s\n", M.spec[k].tables, se.msg);
                return cli_exit_code(st);
            }
            if (M.sol[k])
                fprintf(stderr, "sow match: player %c probes the solution file %s\n", 'a' + k,
                        found);
        }
    /* (engstr) --balance-exact: the file is checked before any game */
    if (bexact) {
        struct sow_error se = {0};
        struct stat sb;
        static char found[4096];
        enum sow_status st;
        if (stat(bexact, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            /* a tables directory: its solution file of the start, by name */
            sow_position start = rules_start(&M.rs);
            st = search_solution_find(&M.rs, bexact, &start, &M.bsol, found, sizeof found, &se);
            if (st == SOW_OK && !M.bsol)
                st = sow_fail(&se, SOW_E_INPUT, "no solution file in %s holds the start",
                              bexact);
            bexact = found;
        } else {
            st = search_solution_open(&M.rs, bexact, &M.bsol, &se);
        }
        if (st != SOW_OK) {
            fprintf(stderr, "sow match: --balance-exact: %s\n", se.msg);
            return cli_exit_code(st);
        }
        M.bsol_path = bexact;
    }
    M.games = (int)games;
    M.oplies = (int)oplies;
    M.maxplies = (int)maxplies;
    M.defms = defms;
    M.balance = unbalanced ? -1 : balance;
    M.bdepth = (int)bdepth;
    M.score = calloc((size_t)games, sizeof *M.score);
    M.text = calloc((size_t)games, sizeof *M.text);
    M.open = calloc((size_t)games / 2, sizeof *M.open);
    M.omargin = calloc((size_t)games / 2, sizeof *M.omargin);
    M.oexact = calloc((size_t)games / 2, sizeof *M.oexact);
    if (!M.score || !M.text || !M.open || !M.omargin || !M.oexact) {
        fprintf(stderr, "sow match: out of memory\n");
        return CLI_FAIL;
    }
    pthread_mutex_init(&M.lock, NULL);
    struct sigaction sa_, old;
    memset(&sa_, 0, sizeof sa_);
    sa_.sa_handler = match_on_sigint;
    sigemptyset(&sa_.sa_mask);
    sigaction(SIGINT, &sa_, &old);
    signal(SIGPIPE, SIG_IGN);
    double t0 = util_now();
    if (openings ? match_read_openings(&M, openings, err, sizeof err) < 0
                 : match_choose_openings(&M, err, sizeof err) < 0) {
        sigaction(SIGINT, &old, NULL);
        if (match_stop) {
            fprintf(stderr, "sow match: interrupted while choosing openings\n");
            return CLI_INTERRUPTED;
        }
        return cli_bad("match", "%s", err);
    }
    if (save_open) {
        FILE *fs = fopen(save_open, "w");
        for (int i = 0; fs && i < M.games / 2; i++) {
            char pos[SOW_POS_MAXLEN];
            pos_format(&M.rs, &M.open[i], pos, sizeof pos);
            fprintf(fs, "%s", pos);
            if (M.balance >= 0 && !openings && M.oexact[i])
                fprintf(fs, "  # South %+d exact", M.omargin[i] / 100);
            else if (M.balance >= 0 && !openings)
                fprintf(fs, "  # South %+.2f at depth %d", M.omargin[i] / 100.0, M.bdepth);
            fputc('\n', fs);
        }
        if (!fs || fclose(fs) != 0) {
            sigaction(SIGINT, &old, NULL);
            fprintf(stderr, "sow match: --save-openings %s: %s\n", save_open, strerror(errno));
            return CLI_FAIL;
        }
    }
    /* --out: a header line of the match's settings, then each game's line
     * as it ends (so that --resume can continue a killed or interrupted
     * match); at the end the file is rewritten in game order. */
    char head[3000];
    snprintf(head, sizeof head,
             "# sow match: rules %s 2x%d seeds %d; a %s; b %s; clock %s; time %g ms; games %d; "
             "max-plies %d", M.rs.name, M.rs.pits, M.rs.seeds, M.spec[0].text, M.spec[1].text,
             clock, M.defms, M.games, M.maxplies);
    char *heads = NULL; /* the header lines of the file resumed */
    if (resume && match_resume_read(&M, out, head, &heads, err, sizeof err) < 0) {
        sigaction(SIGINT, &old, NULL);
        return cli_bad("match", "--resume %s: %s", out, err);
    }
    if (out && !(M.fo = fopen(out, resume ? "a" : "w"))) {
        sigaction(SIGINT, &old, NULL);
        free(heads);
        return cli_bad("match", "--out %s: %s", out, strerror(errno));
    }
    if (M.fo) {
        fprintf(M.fo, "%s (sow %s %s%s)\n", head, sow_version(), sow_commit(),
                resume ? ", resumed" : "");
        fflush(M.fo);
    }
    pthread_t th[256];
    int nt = (int)(conc < games ? conc : games);
    for (int i = 0; i < nt; i++)
        pthread_create(&th[i], NULL, match_worker, &M);
    for (int i = 0; i < nt; i++)
        pthread_join(th[i], NULL);
    sigaction(SIGINT, &old, NULL);
    FILE *fo = NULL;
    if (M.fo) {
        /* in game order now, every header line first (temp + rename) */
        fclose(M.fo);
        M.fo = NULL;
        static char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp", out);
        fo = fopen(tmp, "w");
        if (fo)
            fprintf(fo, "%s%s (sow %s %s%s)\n", heads ? heads : "", head, sow_version(),
                    sow_commit(), resume ? ", resumed" : "");
    }
    free(heads);
    if (M.failed) {
        if (fo) {
            fclose(fo);
            snprintf(err, sizeof err, "%s.tmp", out);
            unlink(err);
        }
        fprintf(stderr, "sow match: %s\n", M.why);
        return CLI_FAIL;
    }
    int played = 0, w = 0, d = 0, l = 0;
    double sum = 0, sum2 = 0;
    for (int i = 0; i < M.games; i++) {
        if (!M.text[i])
            continue;
        played++;
        double x = M.score[i];
        w += x == 1.0;
        d += x == 0.5;
        l += x == 0.0;
        sum += x;
        sum2 += x * x;
        if (fo)
            fprintf(fo, "%s\n", M.text[i]);
        free(M.text[i]);
    }
    if (fo) {
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp", out);
        if (fclose(fo) != 0 || rename(tmp, out) != 0) {
            fprintf(stderr, "sow match: --out %s: %s\n", out, strerror(errno));
            unlink(tmp);
            return CLI_FAIL;
        }
    }
    if (match_stop && played < M.games)
        fprintf(stderr, "sow match: interrupted after %d games\n", played);
    double s = played ? sum / played : 0, var = played ? sum2 / played - s * s : 0;
    /* All games with one result: no spread to measure; count one more game
     * half won (the usual correction) so that the interval is not empty. */
    if (played && var <= 0) {
        double s1 = (sum + 0.5) / (played + 1);
        var = s1 * (1 - s1);
    }
    double se = played ? sqrt(var / played) : 0;
    printf("rules    : %s 2x%d\n", M.rs.name, M.rs.pits);
    printf("a        : %s\n", M.spec[0].text);
    printf("b        : %s\n", M.spec[1].text);
    if (M.cpu_clock)
        printf("clock    : CPU time of the thinking thread (--clock cpu)\n");
    char plies[32];
    if (M.maxoplies > M.oplies)
        snprintf(plies, sizeof plies, "%d-%d", M.oplies, M.maxoplies);
    else
        snprintf(plies, sizeof plies, "%d", M.oplies);
    printf("games    : %d (%d openings of %s moves, colours swapped; %.0f s)\n", played,
           M.games / 2, plies, util_now() - t0);
    if (openings)
        printf("openings : from %s\n", openings);
    else if (M.bsol)
        printf("openings : South within +-%g seeds: %d exact (%s), %d at depth %d (%ld "
               "candidates tried)\n",
               M.balance, M.nexact, M.bsol_path, M.games / 2 - M.nexact, M.bdepth, M.ncand);
    else if (M.balance >= 0)
        printf("openings : South within +-%g seeds at depth %d (%ld candidates tried)\n",
               M.balance, M.bdepth, M.ncand);
    else
        printf("openings : not checked for balance\n");
    printf("a W/D/L  : %d / %d / %d\n", w, d, l);
    printf("score a  : %.1f / %d (%.1f%%)\n", sum, played, played ? 100 * s : 0);
    printf("elo a-b  : %+.1f (95%%: %+.1f .. %+.1f)\n", match_elo(s), match_elo(s - 1.96 * se),
           match_elo(s + 1.96 * se));
    for (int k = 0; k < 2; k++) {
        tb_close(M.tb[k]);
        search_solution_close(M.sol[k]);
    }
    free(M.score);
    free(M.text);
    free(M.open);
    free(M.omargin);
    free(M.oexact);
    search_solution_close(M.bsol);
    return match_stop ? CLI_INTERRUPTED : CLI_OK;
}
