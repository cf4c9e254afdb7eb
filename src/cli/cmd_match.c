/* sow match: two players over N games from fixed openings, colours
 * swapped, games spread over worker threads (docs/engine.md "Matches"). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "sow/engine.h"
#include "sow/search.h"
#include "util.h"
#include "sow/version.h"

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

enum pkind { P_SOW, P_THRESHOLD, P_GREEDY, P_CMD };

struct pspec {
    enum pkind kind;
    int depth, threads;
    double ms;
    unsigned hash;
    const char *tables;
    const char *solution;      /* a solution file (sow solve --save) */
    bool have_weights;
    struct eval_weights w;
    char cmd[1024];
    char text[1100];
};

struct mctx {
    struct ruleset rs;
    struct pspec spec[2];
    struct tb_set *tb[2];
    struct sol *sol[2];
    int games, oplies, maxplies;
    double defms;
    bool cpu_clock;            /* --clock cpu: times are the thinking thread's CPU time */
    double balance;            /* seeds; < 0: openings not balanced */
    int bdepth;                /* depth of the balancing search */
    sow_position *open;        /* per pair of games: the opening */
    int *omargin;              /* its estimated margin for South, centi-seeds */
    long ncand;                /* candidates tried */
    int maxoplies;             /* the longest opening used */
    bool have_margin;          /* omargin holds the balancing search's estimates */
    /* (engstr) --balance-exact: candidates judged by their exact value */
    struct sol *bsol;          /* a solution file holding the openings, or NULL */
    const char *bsol_path;
    bool *oexact;              /* per opening: omargin is exact (seeds x 100) */
    int nexact;                /* openings judged exactly */
    int next;                  /* next game to play (atomic) */
    FILE *fo;                  /* --out: each game appended as it ends */
    double *score;             /* per game: points of player a */
    char **text;               /* per game: the line for --out */
    bool failed;
    char why[400];
    pthread_mutex_t lock;
};

static volatile sig_atomic_t g_stop;

/* ---- players ---- */

struct player {
    const struct pspec *sp;
    struct engine *e;
    struct search_ctx *s;
    pid_t pid;
    FILE *to, *from;
};

static int player_open(struct mctx *M, int who, struct player *pl, char *err, int errlen)
{
    const struct pspec *sp = &M->spec[who];
    memset(pl, 0, sizeof *pl);
    pl->sp = sp;
    if (sp->kind == P_SOW) {
        struct engine_opts o = {.threads = sp->threads, .hash_mb = sp->hash, .tb = M->tb[who],
                                .weights = sp->have_weights ? &sp->w : NULL,
                                .solution = M->sol[who]};
        struct sow_error ee;
        if (engine_new(&M->rs, &o, &pl->e, &ee) != SOW_OK) {
            snprintf(err, (size_t)errlen, "%s", ee.msg);
            return -1;
        }
        return 0;
    }
    if (sp->kind == P_THRESHOLD) {
        struct search_opts o = {.threads = 1, .hash_mb = sp->hash, .depth = sp->depth,
                                .time_limit = sp->depth ? 0 : (sp->ms > 0 ? sp->ms : M->defms) / 1000,
                                .cpu_clock = M->cpu_clock, .threshold = true};
        struct sow_error se;
        if (search_new(&M->rs, &o, &pl->s, &se) != SOW_OK) {
            snprintf(err, (size_t)errlen, "%s", se.msg);
            return -1;
        }
        return 0;
    }
    if (sp->kind == P_CMD) {
        int in[2], out[2];
        if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) {
            snprintf(err, (size_t)errlen, "pipe: %s", strerror(errno));
            return -1;
        }
        pid_t pid = fork();
        if (pid < 0) {
            snprintf(err, (size_t)errlen, "fork: %s", strerror(errno));
            return -1;
        }
        if (pid == 0) {
            dup2(in[0], 0);
            dup2(out[1], 1);
            close(in[0]);
            close(in[1]);
            close(out[0]);
            close(out[1]);
            execl("/bin/sh", "sh", "-c", sp->cmd, (char *)NULL);
            _exit(127);
        }
        close(in[0]);
        close(out[1]);
        pl->pid = pid;
        pl->to = fdopen(in[1], "w");
        pl->from = fdopen(out[0], "r");
        if (!pl->to || !pl->from) {
            snprintf(err, (size_t)errlen, "fdopen failed");
            return -1;
        }
        fprintf(pl->to, "uci\nsetoption name Rules value %s\nsetoption name Pits value %d\n"
                        "setoption name Seeds value %d\nisready\n",
                M->rs.name, M->rs.pits, M->rs.seeds);
        fflush(pl->to);
        char line[4096];
        while (fgets(line, sizeof line, pl->from))
            if (!strncmp(line, "readyok", 7))
                return 0;
        snprintf(err, (size_t)errlen, "'%s' did not answer isready", sp->cmd);
        return -1;
    }
    return 0;
}

static void player_close(struct player *pl)
{
    engine_free(pl->e);
    search_free(pl->s);
    if (pl->pid > 0) {
        fprintf(pl->to, "quit\n");
        fclose(pl->to);
        fclose(pl->from);
        waitpid(pl->pid, NULL, 0);
    }
}

static void player_newgame(struct player *pl)
{
    if (pl->e)
        engine_clear(pl->e);
    if (pl->s)
        search_clear(pl->s);
    if (pl->to) {
        fprintf(pl->to, "ucinewgame\n");
        fflush(pl->to);
    }
}

/* The move of the player at position p (history hist[0..nh-1], the game
 * from its opening position `open` by moves mv[0..nm-1]).  SOW_MOVE_NONE if
 * the player failed. */
static sow_move player_move(struct mctx *M, struct player *pl, const sow_position *p,
                            const sow_position *hist, int nh, const sow_position *open,
                            const sow_move *mv, int nm)
{
    const struct ruleset *rs = &M->rs;
    const struct pspec *sp = pl->sp;
    double ms = sp->ms > 0 ? sp->ms : M->defms;
    struct sow_movelist ml;
    rules_generate(rs, p, &ml);
    if (sp->kind == P_GREEDY) {
        int best = 0, bv = -1000;
        for (int i = 0; i < ml.n; i++) {
            int v = ml.c[i].captured[p->side] - ml.c[i].captured[!p->side];
            if (v > bv) {
                bv = v;
                best = i;
            }
        }
        return ml.c[best].move;
    }
    if (sp->kind == P_SOW) {
        struct engine_limits lim = {.depth = sp->depth, .seconds = sp->depth ? 0 : ms / 1000,
                                    .cpu_clock = M->cpu_clock};
        struct engine_result r;
        int from = nh > ENGINE_MAX_HISTORY ? nh - ENGINE_MAX_HISTORY : 0;
        /* (engstr) the small levels solved in memory, before the clock
         * starts, as `sow engine` builds them on `position` (so cmd:sow
         * engine and sow: players get the same clock).  They are built once
         * per engine, up to the largest seed count met; inside
         * engine_search they count against the move's time: a jerin
         * opening of 12 seeds spent a "1 s" move on a loaded machine
         * building them, completed no iteration and played the first legal
         * move, a loss.  A fixed-depth search is the same either way. */
        engine_prepare(pl->e, p);
        engine_search(pl->e, p, hist + from, nh - from, &lim, &r);
        return r.best;
    }
    if (sp->kind == P_THRESHOLD) {
        struct search_result r;
        if (search_solve(pl->s, p, &r) < 0)
            return SOW_MOVE_NONE;
        return r.best;
    }
    /* external program */
    char pos[SOW_POS_MAXLEN];
    pos_format(rs, open, pos, sizeof pos);
    fprintf(pl->to, "position pos %s", pos);
    if (nm) {
        fprintf(pl->to, " moves");
        sow_position q = *open;
        for (int i = 0; i < nm; i++) {
            char name[SOW_MOVE_MAXLEN];
            move_format(rs, q.side, mv[i], name, sizeof name);
            fprintf(pl->to, " %s", name);
            struct sow_movelist m2;
            rules_generate(rs, &q, &m2);
            q = m2.c[rules_find_move(&m2, mv[i])].pos;
        }
    }
    if (sp->depth)
        fprintf(pl->to, "\ngo depth %d\n", sp->depth);
    else
        fprintf(pl->to, "\ngo movetime %.0f\n", ms);
    fflush(pl->to);
    char line[65536];
    while (fgets(line, sizeof line, pl->from)) {
        if (strncmp(line, "bestmove ", 9))
            continue;
        char *t = line + 9;
        t[strcspn(t, " \r\n")] = 0;
        sow_move m;
        if (move_parse(rs, p, t, &m, NULL) != SOW_OK) {
            /* oware letters */
            if (rs->family == SOW_OWARE && t[0] && !t[1] &&
                (t[0] - (p->side ? 'a' : 'A')) >= 0 && (t[0] - (p->side ? 'a' : 'A')) < rs->pits)
                m = (sow_move)(t[0] - (p->side ? 'a' : 'A'));
            else
                return SOW_MOVE_NONE;
        }
        return rules_find_move(&ml, m) >= 0 ? m : SOW_MOVE_NONE;
    }
    return SOW_MOVE_NONE;
}

/* ---- openings ---- */

/* Candidate c: K pseudo-random moves from the start, never into a finished
 * game; with `quiet`, each a move that captures nothing where there is one
 * (unbalanced openings: relay games capture a lot in a few random moves).  The
 * generator is seeded per candidate (splitmix64) so that candidates do not
 * share their low bits. */
static sow_position opening_candidate(const struct ruleset *rs, int c, int plies, bool quiet_only)
{
    sow_position p = rules_start(rs);
    uint64_t x = (uint64_t)(c + 1) * 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    if (!x)
        x = 1;
    struct sow_movelist ml, m2;
    for (int i = 0; i < plies; i++) {
        rules_generate(rs, &p, &ml);
        if (!ml.n)
            break;
        int quiet[SOW_MAX_PITS + 1], nq = 0;
        for (int j = 0; j < ml.n; j++)
            if (quiet_only && !ml.c[j].captured[0] && !ml.c[j].captured[1])
                quiet[nq++] = j;
        for (int tries = 0; tries < 8; tries++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            int j = nq ? quiet[(x >> 32) % (uint64_t)nq] : (int)((x >> 32) % (uint64_t)ml.n);
            const sow_position *q = &ml.c[j].pos;
            rules_generate(rs, q, &m2);
            if (m2.n) {
                p = *q;
                break;
            }
        }
    }
    return p;
}

/* The expected final margin of South (A) over North in centi-seeds: the
 * stores plus the engine's score of the position (mover's view). */
static int opening_margin(const sow_position *p, int score)
{
    int s = 100 * (p->store[0] - p->store[1]);
    return p->side == SOW_A ? s + score : s - score;
}

/* The games' openings, M->open[0..games/2-1]: distinct candidates; with
 * --balance, only those whose margin for South, estimated by a fixed-depth
 * search of the engine (one thread, default weights, no tables: the same
 * openings for every pair of players), lies within +-balance seeds.  In the
 * relay games a few random moves often decide the game (docs/engine.md
 * "Openings"): a pair of games on such an opening scores 1-1 whoever plays,
 * which measures nothing.  0, or a failure message in err. */
static int choose_openings(struct mctx *M, char *err, int errlen)
{
    const struct ruleset *rs = &M->rs;
    int need = M->games / 2, have = 0;
    /* (engstr) The candidates' budget, in units: a candidate costs 1, one
     * judged by the search costs `scale`.  Without a solution file scale is
     * 1: a thousand candidates per opening length, as before.  With one,
     * exact look-ups cost about 1/1000 of a depth-10 search, so twenty
     * times as many candidates keep their K moves (in jerin only 5 of the
     * first 1000 distinct openings of 4-5 moves lie within 2 seeds exactly,
     * docs/engine.md; longer openings are endings), while candidates the
     * file lacks still cost a thousandth of a length each. */
    const long scale = M->bsol ? 20 : 1, per = 1000 * scale;
    long maxu = per + per / 5 * need, units = 0;
    struct engine *e = NULL;
    double t0 = util_now(), last = t0;
    long c;
    for (c = 0; units < maxu && have < need && !g_stop; c++) {
        /* K moves; when those run short (distinct and balanced ones are
         * few in some relay games), one more per thousand candidates */
        int plies = M->oplies + (M->balance < 0 ? 0 : (int)(units / per));
        units++;
        sow_position p = opening_candidate(rs, (int)c, plies, M->balance < 0);
        struct sow_movelist ml;
        rules_generate(rs, &p, &ml);
        if (!ml.n)
            continue;
        bool dup = false;
        for (int i = 0; i < have && !dup; i++)
            dup = rules_same_position(&M->open[i], &p) &&
                  M->open[i].store[0] == p.store[0] && M->open[i].store[1] == p.store[1];
        if (dup)
            continue;
        int margin = 0;
        bool exact = false;
        /* (engstr) the exact value where the solution file holds it: the
         * opening is the game's first position (no history before it), so
         * the file's V is its exact value (engine_know.h) */
        if (M->bsol) {
            struct search_result sr;
            int vals[SOW_MAX_PITS + 1];
            if (search_solution_answer(M->bsol, &p, &sr, vals) >= 0) {
                margin = opening_margin(&p, 100 * sr.value);
                exact = true;
                if (abs(margin) > 100 * M->balance)
                    continue;
            }
        }
        if (!exact && M->balance >= 0) {
            units += scale - 1;
            if (!e) {
                struct engine_opts o = {.threads = 1, .hash_mb = 16};
                struct sow_error ee;
                if (engine_new(rs, &o, &e, &ee) != SOW_OK) {
                    snprintf(err, (size_t)errlen, "%s", ee.msg);
                    return -1;
                }
            }
            struct engine_limits lim = {.depth = M->bdepth};
            struct engine_result r;
            engine_clear(e);
            engine_search(e, &p, NULL, 0, &lim, &r);
            margin = opening_margin(&p, r.info.score);
            if (abs(margin) > 100 * M->balance)
                continue;
        }
        if (plies > M->maxoplies)
            M->maxoplies = plies;
        M->open[have] = p;
        M->oexact[have] = exact;
        M->nexact += exact;
        M->omargin[have++] = margin;
        double now = util_now();
        if (M->balance >= 0 && now - last >= 2) {
            last = now;
            double eta = (now - t0) / have * (need - have);
            fprintf(stderr, "sow match: openings %d/%d (%ld candidates), ETA %.0f s\n", have,
                    need, c + 1, eta);
        }
    }
    engine_free(e);
    M->have_margin = M->balance >= 0;
    if (g_stop)
        return -1;
    if (have < need) {
        snprintf(err, (size_t)errlen,
                 "only %d of %d openings within --balance %g found in %ld candidates; "
                 "raise --balance or change --opening-plies", have, need, M->balance, c);
        return -1;
    }
    M->ncand = c;
    return 0;
}

/* Openings from a file (--openings): one position per line, text after
 * '#' ignored, blank lines skipped; the first games/2 are used as given. */
static int read_openings(struct mctx *M, const char *path, char *err, int errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, (size_t)errlen, "--openings %s: %s", path, strerror(errno));
        return -1;
    }
    char line[4096];
    int have = 0, ln = 0, need = M->games / 2;
    while (have < need && fgets(line, sizeof line, f)) {
        ln++;
        line[strcspn(line, "#\r\n")] = 0;
        char *a = line, *b;
        while (*a == ' ' || *a == '\t')
            a++;
        for (b = a + strlen(a); b > a && (b[-1] == ' ' || b[-1] == '\t'); b--)
            b[-1] = 0;
        if (!*a)
            continue;
        struct sow_error pe;
        struct sow_movelist ml;
        if (pos_parse(&M->rs, a, &M->open[have], &pe) != SOW_OK) {
            snprintf(err, (size_t)errlen, "--openings %s line %d: %s", path, ln, pe.msg);
            fclose(f);
            return -1;
        }
        rules_generate(&M->rs, &M->open[have], &ml);
        if (!ml.n) {
            snprintf(err, (size_t)errlen, "--openings %s line %d: the game is over there", path,
                     ln);
            fclose(f);
            return -1;
        }
        M->omargin[have++] = 0;
    }
    fclose(f);
    if (have < need) {
        snprintf(err, (size_t)errlen, "--openings %s: %d positions, %d games need %d", path, have,
                 M->games, need);
        return -1;
    }
    M->ncand = have;
    M->maxoplies = M->oplies;
    return 0;
}

/* ---- games ---- */

#define MAXG 4096

/* One game; a = player index playing South (side A) first.  Returns the
 * points of player a (M->spec[0]) and fills text. */
static double play_game(struct mctx *M, struct player pl[2], int g, char *text, size_t tlen)
{
    const struct ruleset *rs = &M->rs;
    int a_side = g & 1; /* game 2k: spec a plays side A; 2k+1: side B */
    sow_position open = M->open[g / 2], p = open;
    static __thread sow_position hist[MAXG];
    static __thread sow_move mv[MAXG];
    int nh = 0;
    player_newgame(&pl[0]);
    player_newgame(&pl[1]);
    struct sow_movelist ml;
    const char *how = "game over";
    int settle2[2] = {0, 0};
    int forfeit = -1;
    for (;;) {
        rules_generate(rs, &p, &ml);
        if (ml.n == 0) {
            settle2[0] = 2 * ml.settle[0];
            settle2[1] = 2 * ml.settle[1];
            how = rules_end_name(ml.end);
            break;
        }
        bool rep = false;
        int n = rules_board_seeds(rs, &p);
        for (int j = nh - 1; j >= 0 && rules_board_seeds(rs, &hist[j]) == n; j--)
            if (rules_same_position(&hist[j], &p) ||
                (!memcmp(&hist[j].board, &p.board, sizeof p.board) && hist[j].side == p.side &&
                 hist[j].state == p.state)) {
                rep = true;
                break;
            }
        if (rep || nh >= M->maxplies || nh >= MAXG - 1) {
            rules_repetition_settle2(rs, &p, settle2);
            how = rep ? "position repeated" : "move limit";
            break;
        }
        int who = (p.side == SOW_A) == (a_side == 0) ? 0 : 1;
        sow_move m = player_move(M, &pl[who], &p, hist, nh, &open, mv, nh);
        int i = m == SOW_MOVE_NONE ? -1 : rules_find_move(&ml, m);
        if (i < 0) {
            forfeit = who;
            how = "forfeit (no legal move given)";
            break;
        }
        hist[nh] = p;
        mv[nh++] = m;
        p = ml.c[i].pos;
    }
    /* Final seeds, times two (awari may split a seed). */
    int fa2 = 2 * p.store[0] + settle2[0], fb2 = 2 * p.store[1] + settle2[1];
    int mine = a_side == 0 ? fa2 : fb2, theirs = a_side == 0 ? fb2 : fa2;
    double pts = forfeit >= 0 ? (forfeit == 0 ? 0.0 : 1.0)
                              : mine > theirs ? 1.0 : mine < theirs ? 0.0 : 0.5;
    char pos[SOW_POS_MAXLEN];
    pos_format(rs, &open, pos, sizeof pos);
    char est[40] = "";
    if (M->have_margin && M->oexact[g / 2])
        snprintf(est, sizeof est, " (South exact %+d)", M->omargin[g / 2] / 100);
    else if (M->have_margin)
        snprintf(est, sizeof est, " (South %+.2f)", M->omargin[g / 2] / 100.0);
    size_t k = (size_t)snprintf(text, tlen, "game %d opening %s%s South=%s final %g-%g (%s) a=%g:",
                                g + 1, pos, est, a_side == 0 ? "a" : "b", fa2 / 2.0, fb2 / 2.0,
                                how, pts);
    sow_position q = open;
    for (int j = 0; j < nh && k + 20 < tlen; j++) {
        char name[SOW_MOVE_MAXLEN];
        move_format(rs, q.side, mv[j], name, sizeof name);
        k += (size_t)snprintf(text + k, tlen - k, " %s", name);
        rules_generate(rs, &q, &ml);
        q = ml.c[rules_find_move(&ml, mv[j])].pos;
    }
    return pts;
}

static void on_sigint(int sig)
{
    (void)sig;
    g_stop = 1;
}

static void *worker(void *arg)
{
    struct mctx *M = arg;
    struct player pl[2];
    char err[320];
    bool ok0 = false, ok1 = false;
    if (player_open(M, 0, &pl[0], err, sizeof err) == 0)
        ok0 = true;
    if (ok0 && player_open(M, 1, &pl[1], err, sizeof err) == 0)
        ok1 = true;
    if (!ok0 || !ok1) {
        pthread_mutex_lock(&M->lock);
        if (!M->failed)
            snprintf(M->why, sizeof M->why, "%s", err);
        M->failed = true;
        pthread_mutex_unlock(&M->lock);
    } else {
        for (;;) {
            int g = __atomic_fetch_add(&M->next, 1, __ATOMIC_RELAXED);
            if (g >= M->games || g_stop || M->failed)
                break;
            if (M->text[g]) /* played before (--resume) */
                continue;
            char *text = malloc(65536);
            if (!text)
                break;
            M->score[g] = play_game(M, pl, g, text, 65536);
            M->text[g] = text;
            pthread_mutex_lock(&M->lock);
            fprintf(stderr, "sow match: game %d: %g\n", g + 1, M->score[g]);
            if (M->fo) { /* on disk at once: a killed match resumes from here */
                fprintf(M->fo, "%s\n", text);
                fflush(M->fo);
            }
            pthread_mutex_unlock(&M->lock);
        }
    }
    if (ok0)
        player_close(&pl[0]);
    if (ok1)
        player_close(&pl[1]);
    return NULL;
}

static int parse_spec(const char *s, struct pspec *sp, char *err, int errlen)
{
    memset(sp, 0, sizeof *sp);
    sp->threads = 1;
    sp->hash = 16;
    snprintf(sp->text, sizeof sp->text, "%s", s);
    if (!strncmp(s, "cmd:", 4)) {
        if (!s[4] || strlen(s + 4) >= sizeof sp->cmd) {
            snprintf(err, (size_t)errlen, "'%s': expected cmd:COMMAND", s);
            return -1;
        }
        sp->kind = P_CMD;
        snprintf(sp->cmd, sizeof sp->cmd, "%s", s + 4);
        return 0;
    }
    if (!strcmp(s, "greedy")) {
        sp->kind = P_GREEDY;
        return 0;
    }
    const char *rest;
    if (!strncmp(s, "sow", 3) && (!s[3] || s[3] == ':')) {
        sp->kind = P_SOW;
        rest = s[3] ? s + 4 : "";
    } else if (!strncmp(s, "threshold", 9) && (!s[9] || s[9] == ':')) {
        sp->kind = P_THRESHOLD;
        rest = s[9] ? s + 10 : "";
    } else {
        snprintf(err, (size_t)errlen, "player '%s': expected sow[:..], threshold[:..], greedy "
                 "or cmd:COMMAND", s);
        return -1;
    }
    static char buf[2048];
    char local[2048];
    (void)buf;
    snprintf(local, sizeof local, "%s", rest);
    char *save = NULL;
    for (char *kv = strtok_r(local, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            snprintf(err, (size_t)errlen, "player '%s': '%s' is not KEY=VALUE", s, kv);
            return -1;
        }
        *eq = 0;
        const char *v = eq + 1;
        char *end;
        double x = strtod(v, &end);
        bool num = end != v && !*end;
        if (!strcmp(kv, "depth") && num && x >= 1 && x < ENGINE_MAX_PLY && x == (int)x)
            sp->depth = (int)x;
        else if (!strcmp(kv, "time") && num && x > 0 && x <= 1e7)
            sp->ms = x;
        else if (!strcmp(kv, "threads") && num && x >= 1 && x <= 256 && x == (int)x &&
                 sp->kind == P_SOW)
            sp->threads = (int)x;
        else if (!strcmp(kv, "hash") && num && x >= 1 && x <= 65536 && x == (int)x)
            sp->hash = (unsigned)x;
        else if (!strcmp(kv, "tables") && sp->kind == P_SOW && *v)
            sp->tables = strdup(v);
        else if (!strcmp(kv, "solution") && sp->kind == P_SOW && *v)
            sp->solution = strdup(v);
        else if (!strcmp(kv, "weights") && sp->kind == P_SOW) {
            char w[256];
            snprintf(w, sizeof w, "%s", v);
            for (char *c = w; *c; c++)
                if (*c == '/')
                    *c = ',';
            struct sow_error we;
            if (eval_parse_weights(w, &sp->w, &we) != SOW_OK) {
                snprintf(err, (size_t)errlen, "%s", we.msg);
                return -1;
            }
            sp->have_weights = true;
        } else {
            snprintf(err, (size_t)errlen, "player '%s': bad option '%s=%s'", s, kv, v);
            return -1;
        }
    }
    return 0;
}

static double elo(double s)
{
    if (s <= 0)
        return -INFINITY;
    if (s >= 1)
        return INFINITY;
    return -400.0 * log10(1.0 / s - 1.0);
}

/* --resume: read the --out FILE of an earlier run of this match.  Its
 * header lines (every one kept in *heads) must carry this run's settings
 * (head, up to the version); each game line's opening must be the one
 * this run chose for that game; the games found are marked played. */
static int resume_read(struct mctx *M, const char *path, const char *head, char **heads, char *err,
                       int errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, (size_t)errlen, "%s", strerror(errno));
        return -1;
    }
    size_t hl = strlen(head), cap = 0, n = 0;
    *heads = NULL;
    char *line = NULL;
    size_t lcap = 0;
    int lineno = 0, found = 0, rc = 0;
    while (getline(&line, &lcap, f) > 0) {
        lineno++;
        line[strcspn(line, "\n")] = 0;
        if (line[0] == '#') {
            if (strncmp(line, head, hl) || strncmp(line + hl, " (sow ", 6)) {
                snprintf(err, (size_t)errlen, "line %d: another match's settings: %.200s",
                         lineno, line);
                rc = -1;
                break;
            }
            size_t k = strlen(line);
            char *h = realloc(*heads, cap = n + k + 2);
            if (!h) {
                snprintf(err, (size_t)errlen, "out of memory");
                rc = -1;
                break;
            }
            *heads = h;
            memcpy(h + n, line, k);
            h[n + k] = '\n';
            h[n += k + 1] = 0;
            continue;
        }
        int g;
        char pos[SOW_POS_MAXLEN], want[SOW_POS_MAXLEN];
        const char *a = strstr(line, ") a=");
        double pts;
        if (!n || sscanf(line, "game %d opening %191s", &g, pos) != 2 || g < 1 ||
            g > M->games || !a || sscanf(a + 4, "%lf", &pts) != 1 ||
            (pts != 0 && pts != 0.5 && pts != 1)) {
            snprintf(err, (size_t)errlen, "line %d: %s", lineno,
                     n ? "not a game line of sow match" : "no header line of sow match first");
            rc = -1;
            break;
        }
        pos_format(&M->rs, &M->open[(g - 1) / 2], want, sizeof want);
        if (strcmp(pos, want)) {
            snprintf(err, (size_t)errlen, "line %d: game %d opened %.80s, this run chose %.80s",
                     lineno, g, pos, want);
            rc = -1;
            break;
        }
        if (M->text[g - 1]) {
            snprintf(err, (size_t)errlen, "line %d: game %d twice", lineno, g);
            rc = -1;
            break;
        }
        if (!(M->text[g - 1] = strdup(line))) {
            snprintf(err, (size_t)errlen, "out of memory");
            rc = -1;
            break;
        }
        M->score[g - 1] = pts;
        found++;
    }
    free(line);
    fclose(f);
    (void)cap;
    if (rc == 0 && !n) {
        snprintf(err, (size_t)errlen, "no header line of sow match");
        rc = -1;
    }
    if (rc < 0) {
        free(*heads);
        *heads = NULL;
        return -1;
    }
    fprintf(stderr, "sow match: resuming: %d of %d games in %s\n", found, M->games, path);
    return 0;
}

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
    if (parse_spec(sa, &M.spec[0], err, sizeof err) < 0 ||
        parse_spec(sb, &M.spec[1], err, sizeof err) < 0)
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
    sa_.sa_handler = on_sigint;
    sigemptyset(&sa_.sa_mask);
    sigaction(SIGINT, &sa_, &old);
    signal(SIGPIPE, SIG_IGN);
    double t0 = util_now();
    if (openings ? read_openings(&M, openings, err, sizeof err) < 0
                 : choose_openings(&M, err, sizeof err) < 0) {
        sigaction(SIGINT, &old, NULL);
        if (g_stop) {
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
    if (resume && resume_read(&M, out, head, &heads, err, sizeof err) < 0) {
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
        pthread_create(&th[i], NULL, worker, &M);
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
    if (g_stop && played < M.games)
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
    printf("elo a-b  : %+.1f (95%%: %+.1f .. %+.1f)\n", elo(s), elo(s - 1.96 * se),
           elo(s + 1.96 * se));
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
    return g_stop ? CLI_INTERRUPTED : CLI_OK;
}
