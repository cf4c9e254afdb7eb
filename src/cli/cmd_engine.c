/* sow engine: the alpha-beta engine behind a line protocol in the style of
 * the Universal Chess Interface (docs/engine.md "Protocol").  The main
 * thread reads commands; `go` starts one search thread, which prints `info`
 * lines and `bestmove`; `stop` ends it (the engine polls its stop flag every
 * 256 nodes).  `go ponder` searches with no clock until `ponderhit`, which
 * starts the go command's time limit on a timer thread (it sets the same
 * stop flag), or `stop`.
 *
 * Letter mode (the oware GUIs' notation, Aualé's): after a `position` that
 * used fen or hole letters, or always with --letters, the answers are what
 * such a GUI parses: moves as letters, the pv as one run of letters, scores
 * as `score cp` (never `score exact`), `bestmove 0000` when the game is over
 * (no legal move, a repeated position, or a player holding more than half
 * of the seeds).  With Ponder true or --letters, `bestmove M ponder R` when
 * the PV has a reply. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "sow/engine.h"
#include "sow/search.h"
#include "util.h"

static const char usage[] =
    "usage: sow engine [--letters]\n"
    "Speaks a UCI-style line protocol on stdin/stdout (docs/engine.md):\n"
    "  uci | isready | setoption name N value V | ucinewgame\n"
    "  position startpos | pos TOKEN | fen F  [moves M ...]\n"
    "  go [ponder] [depth D] [movetime MS] [wtime MS btime MS [winc MS binc MS] [movestogo N]]\n"
    "     [nodes N] [infinite] | ponderhit | stop | quit\n"
    "Options: Hash, Threads, Rules, Pits, Seeds, Tables, Solution, Weights, Ponder.  For oware,\n"
    "F is the twelve hole counts (South's A-F, North's a-f), the two stores and the side S/N\n"
    "joined by '-', and moves may be hole letters (A-F South, a-f North), also run\n"
    "together (moves CfB).  After such a position the answers are in letters, as the\n"
    "oware GUIs read them: pv CaAfA, score cp only, bestmove 0000 at the end.\n"
    "Tables DIR without Solution also probes DIR's solution file (sow solve --save,\n"
    "named RULES-2xPITS-LLL.sowsol) that holds the position set by 'position'.\n";

#define LINE_MAX_LEN 65536
#define HIST_MAX ENGINE_MAX_HISTORY

struct proto {
    pthread_mutex_t out;
    /* options */
    char rules[32];
    long pits, seeds, hash, threads;
    char tables[1024];
    char solution[1024];        /* engine-strength: a solution file, or "" */
    bool have_weights;
    struct eval_weights weights;
    /* state */
    struct ruleset rs;
    struct engine *e;
    struct tb_set *tb;
    struct sol *sol;
    /* Tables without Solution: the position DIR's solution file in use was
     * found for (the last `position` command's, before its moves) */
    sow_position sol_base;
    bool dirty;                 /* options changed: rebuild the engine */
    sow_position start, pos;
    sow_position hist[HIST_MAX];
    int nhist;
    sow_position phist[HIST_MAX]; /* the history a `position` command builds: a
                                   * rejected one leaves hist as it was */
    bool letters;               /* the last `position` used fen or letters */
    bool force_letters;         /* --letters: letter mode whatever `position` used */
    bool ponder_opt;            /* setoption Ponder: bestmove names a ponder move */
    /* the search thread */
    pthread_t th;
    bool searching;
    volatile sig_atomic_t stop_req; /* stop or quit received: the engine's stop flag */
    bool infinite;
    struct engine_limits lim;
    sow_position spos;
    sow_position shist[HIST_MAX];
    int snhist;
    bool sletters;              /* letter mode for this search's answers */
    const char *over;           /* letter mode: why the game is over (no search), or NULL */
    volatile int done;          /* the search thread has printed bestmove */
    /* go ponder: 1 until ponderhit or stop (__atomic; the search thread
     * holds bestmove back while it is set); the go command's time limit,
     * counted from ponderhit (0: none) */
    int pondering;
    double ponder_secs;
    /* the clock ponderhit starts: a thread that sets stop_req at deadline
     * (CLOCK_MONOTONIC) unless cancelled first; tmu guards tcancel */
    pthread_t timer;
    bool timer_on;
    pthread_mutex_t tmu;
    pthread_cond_t tcv;
    bool tcancel;
    struct timespec deadline;
};

static void say(struct proto *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct proto *P, const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&P->out);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
    pthread_mutex_unlock(&P->out);
}

#define ERR(P, ...) say(P, "info string error: " __VA_ARGS__)

static bool is_oware(const struct proto *P)
{
    return P->rs.family == SOW_OWARE;
}

/* Letter mode (the header comment): oware only, the notation is oware's. */
static bool letter_mode(const struct proto *P)
{
    return (P->letters || P->force_letters) && is_oware(P);
}

/* A move as the answers name it (letters: the search's snapshot sletters). */
static void fmt_move(const struct proto *P, int side, sow_move m, char *buf, size_t len)
{
    if (P->sletters && m < P->rs.pits)
        snprintf(buf, len, "%c", (side ? 'a' : 'A') + m);
    else
        move_format(&P->rs, side, m, buf, len);
}

/* ---- options and the engine ---- */

static int setup_rules(struct proto *P, char *err, int errlen)
{
    struct ruleset rs;
    struct sow_error e;
    if (rules_init(&rs, P->rules, (int)P->pits, (int)P->seeds, &e) != SOW_OK) {
        snprintf(err, (size_t)errlen, "%s", e.msg);
        return -1;
    }
    P->rs = rs;
    P->start = P->pos = P->sol_base = rules_start(&P->rs);
    P->nhist = 0;
    P->dirty = true;
    return 0;
}

/* Tables DIR without Solution: the engine also takes as exact
 * knowledge DIR's solution file that holds base, found by name as sow solve
 * --tables finds it (search_solution_find: RULES-2xPITS-LLL.sowsol from
 * base's seed count up).  0 with *out (NULL: none holds it) and its path in
 * path; -1 after one error line for a damaged or foreign file. */
static int find_solution(struct proto *P, const sow_position *base, struct sol **out, char *path,
                         size_t len)
{
    struct sow_error se = {0};
    *out = NULL;
    path[0] = 0;
    if (search_solution_find(&P->rs, P->tables, base, out, path, len, &se) != SOW_OK) {
        *out = NULL;
        ERR(P, "Tables %s: %s (no solution file used)", P->tables, se.msg);
        return -1;
    }
    return 0;
}

/* A `position` command's base p (before its moves): with Tables and no
 * Solution, a base that the file in use does not hold is looked up again,
 * and the engine is rebuilt only if that finds a file (the table is kept
 * for a GUI that sends every move's position as a new base). */
static void new_base(struct proto *P, const sow_position *p)
{
    if (!P->tables[0] || P->solution[0] || !memcmp(p, &P->sol_base, sizeof *p))
        return;
    P->sol_base = *p;
    if (P->dirty || !P->e)
        return; /* ensure_engine looks it up */
    struct search_result r;
    int vals[SOW_MAX_PITS + 1];
    if (P->sol && search_solution_answer(P->sol, p, &r, vals) >= 0)
        return; /* the same file holds it */
    char path[4096];
    struct sol *s;
    if (find_solution(P, p, &s, path, sizeof path) == 0 && (s || P->sol))
        P->dirty = true; /* another file, or none where there was one */
    search_solution_close(s);
}

static int ensure_engine(struct proto *P)
{
    if (!P->dirty && P->e)
        return 0;
    engine_free(P->e);
    P->e = NULL;
    tb_close(P->tb);
    P->tb = NULL;
    if (P->tables[0]) {
        struct sow_error te;
        if (tb_open(&P->rs, P->tables, &P->tb, &te) != SOW_OK) {
            P->tb = NULL;
            ERR(P, "Tables %s: %s (no tables used)", P->tables, te.msg);
            P->tables[0] = 0;
        }
    }
    search_solution_close(P->sol);
    P->sol = NULL;
    if (P->solution[0]) {
        struct sow_error se;
        if (search_solution_open(&P->rs, P->solution, &P->sol, &se) != SOW_OK) {
            P->sol = NULL;
            ERR(P, "Solution: %s (no solution used)", se.msg);
            P->solution[0] = 0;
        }
    }
    char found[4096];
    if (!P->solution[0] && P->tables[0] &&
        find_solution(P, &P->sol_base, &P->sol, found, sizeof found) == 0 && P->sol)
        say(P, "info string solution file %s", found);
    struct engine_opts o = {.threads = (int)P->threads, .hash_mb = (unsigned)P->hash,
                            .tb = P->tb, .weights = P->have_weights ? &P->weights : NULL,
                            .solution = P->sol};
    struct sow_error ee;
    if (engine_new(&P->rs, &o, &P->e, &ee) != SOW_OK) {
        ERR(P, "%s", ee.msg);
        return -1;
    }
    /* The engine polls this flag, which is cleared before each go: a stop
     * arriving before the search thread starts is not lost. */
    engine_set_stop_flag(P->e, &P->stop_req);
    P->dirty = false;
    return 0;
}

/* Every number of the protocol (go's limits, the spin options) is read
 * here, one way: decimal digits only, no sign, space, base prefix or
 * fraction (strtol and strtod read "0x10", " +3" or "3.0" each their own
 * way, so "go depth 0x3" was 3 while "value 0x10" was refused).  True with
 * *out in lo..hi. */
static bool parse_dec(const char *s, long long lo, long long hi, long long *out)
{
    long long v = 0;
    if (!s || !*s)
        return false;
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9' || v > (hi - (*c - '0')) / 10)
            return false; /* not a digit, or past hi (no overflow) */
        v = v * 10 + (*c - '0');
    }
    if (v < lo)
        return false;
    *out = v;
    return true;
}

/* The largest Hash in MiB: 65536, or 3/4 of this machine's memory where
 * that is less (setoption refuses more, so `uci` must not offer more). */
static long hash_max(void)
{
    double ram = util_phys_memory();
    long hi = 65536;
    if (ram > 0 && 0.75 * ram / 1048576.0 < (double)hi)
        hi = (long)(0.75 * ram / 1048576.0);
    return hi < 1 ? 1 : hi;
}

/* The range of Pits or Seeds (pits true: Pits) that rules_init accepts
 * with the other one as set now (oware 2x6 holds at most 21 seeds a hole,
 * 2x18 at most 7): what `uci` advertises is what setoption then accepts. */
static void rules_range(const struct proto *P, bool pits, long *lo, long *hi)
{
    const long top = pits ? SOW_MAX_PITS : SOW_MAX_SEEDS;
    struct ruleset rs;
    *lo = *hi = 0;
    for (long x = 1; x <= top; x++) {
        struct sow_error e;
        if (rules_init(&rs, P->rules, (int)(pits ? x : P->pits), (int)(pits ? P->seeds : x),
                       &e) != SOW_OK)
            continue;
        if (!*lo)
            *lo = x;
        *hi = x;
    }
}

/* The range of the spin option name (Hash, Threads, Pits, Seeds). */
static void spin_range(const struct proto *P, const char *name, long *lo, long *hi)
{
    *lo = 1;
    if (!strcasecmp(name, "Hash"))
        *hi = hash_max();
    else if (!strcasecmp(name, "Threads"))
        *hi = 256;
    else
        rules_range(P, !strcasecmp(name, "Pits"), lo, hi);
}

static void cmd_uci(struct proto *P)
{
    long lo, hi;
    say(P, "id name sow %s", "0.1.0");
    say(P, "id author the sow developers");
    spin_range(P, "Hash", &lo, &hi);
    say(P, "option name Hash type spin default 64 min %ld max %ld", lo, hi);
    say(P, "option name Threads type spin default 1 min 1 max 256");
    pthread_mutex_lock(&P->out);
    printf("option name Rules type combo default oware");
    for (int i = 0; sow_rule_names[i]; i++)
        printf(" var %s", sow_rule_names[i]);
    printf("\n");
    pthread_mutex_unlock(&P->out);
    spin_range(P, "Pits", &lo, &hi);
    say(P, "option name Pits type spin default 6 min %ld max %ld", lo, hi);
    spin_range(P, "Seeds", &lo, &hi);
    say(P, "option name Seeds type spin default 4 min %ld max %ld", lo, hi);
    say(P, "option name Tables type string default <empty>");
    say(P, "option name Solution type string default <empty>");
    say(P, "option name Weights type string default <empty>");
    say(P, "option name Ponder type check default false");
    say(P, "uciok");
}

/* "name N value V" (V may hold spaces: a path) split in place: *name and
 * *v (NULL without " value ") trimmed.  False after the error line. */
static bool setoption_split(struct proto *P, char *args, char **name_out, char **v_out)
{
    char *name = strstr(args, "name ");
    if (!name || name != args + strspn(args, " ")) {
        ERR(P, "setoption: expected 'setoption name N value V'");
        return false;
    }
    name += 5;
    char *val = strstr(name, " value ");
    char *v = val ? val + 7 : NULL;
    if (val)
        *val = 0;
    while (*name == ' ')
        name++;
    for (char *q = name + strlen(name); q > name && q[-1] == ' ';)
        *--q = 0;
    if (v)
        while (*v == ' ')
            v++;
    *name_out = name;
    *v_out = v;
    return true;
}

/* Hash, Threads, Pits or Seeds: an integer in range; Pits and Seeds remake
 * the rule set (kept as it was if that fails). */
static void setoption_number(struct proto *P, const char *name, const char *v)
{
    char err[320];
    long long xx;
    if (!v || !*v) {
        ERR(P, "setoption %s: missing value", name);
        return;
    }
    bool hash = !strcasecmp(name, "Hash"), thr = !strcasecmp(name, "Threads"),
         pits = !strcasecmp(name, "Pits");
    /* Pits and Seeds: the full range here, rules_init's message below says
     * why a count in it does not fit the other one */
    long lo = 1, hi = hash ? hash_max() : thr ? 256 : pits ? SOW_MAX_PITS : SOW_MAX_SEEDS;
    if (!parse_dec(v, lo, hi, &xx)) {
        ERR(P, "setoption %s: '%s' is not a decimal integer in %ld..%ld%s", name, v, lo, hi,
            hash && hi < 65536 ? " (3/4 of this machine's memory)" : "");
        return;
    }
    long x = (long)xx;
    if (hash) {
        P->hash = x;
        P->dirty = true;
    } else if (thr) {
        P->threads = x;
        P->dirty = true;
    } else {
        long old = pits ? P->pits : P->seeds;
        if (pits)
            P->pits = x;
        else
            P->seeds = x;
        if (setup_rules(P, err, sizeof err) < 0) {
            if (pits)
                P->pits = old;
            else
                P->seeds = old;
            ERR(P, "setoption %s: %s", name, err);
        }
    }
}

static void setoption_rules(struct proto *P, const char *v)
{
    char err[320];
    if (!v || !*v) {
        ERR(P, "setoption Rules: missing value");
        return;
    }
    char old[32];
    snprintf(old, sizeof old, "%s", P->rules);
    snprintf(P->rules, sizeof P->rules, "%s", v);
    if (strlen(v) >= sizeof P->rules || setup_rules(P, err, sizeof err) < 0) {
        snprintf(P->rules, sizeof P->rules, "%s", old);
        ERR(P, "setoption Rules: unknown rule set '%s'", v);
    }
}

static void setoption_tables(struct proto *P, const char *v)
{
    if (!v || !*v || !strcmp(v, "<empty>"))
        P->tables[0] = 0;
    else if (strlen(v) >= sizeof P->tables) {
        ERR(P, "setoption Tables: path too long");
        return;
    } else {
        /* tb_open takes a missing directory as one without levels (the
         * builders create it): here it is a typo to be told about */
        struct stat st;
        int bad = stat(v, &st) != 0 ? errno : 0;
        if (bad || !S_ISDIR(st.st_mode)) {
            ERR(P, "setoption Tables: %s: %s (no tables used)", v,
                bad ? strerror(bad) : "not a directory");
            P->tables[0] = 0;
        } else
            snprintf(P->tables, sizeof P->tables, "%s", v);
    }
    P->dirty = true;
}

static void setoption_solution(struct proto *P, const char *v)
{
    if (!v || !*v || !strcmp(v, "<empty>"))
        P->solution[0] = 0;
    else if (strlen(v) >= sizeof P->solution) {
        ERR(P, "setoption Solution: path too long");
        return;
    } else
        snprintf(P->solution, sizeof P->solution, "%s", v);
    P->dirty = true;
}

static void setoption_weights(struct proto *P, const char *v)
{
    if (!v || !*v || !strcmp(v, "<empty>")) {
        P->have_weights = false;
    } else {
        struct eval_weights w;
        struct sow_error we;
        if (eval_parse_weights(v, &w, &we) != SOW_OK) {
            ERR(P, "setoption Weights: %s", we.msg);
            return;
        }
        P->weights = w;
        P->have_weights = true;
    }
    P->dirty = true;
}

/* Ponder (UCI: the GUI says whether it will send go ponder; pondering
 * works either way, and true adds the ponder move to bestmove): true or
 * false. */
static void setoption_ponder(struct proto *P, const char *v)
{
    if (v && !strcasecmp(v, "true"))
        P->ponder_opt = true;
    else if (v && !strcasecmp(v, "false"))
        P->ponder_opt = false;
    else
        ERR(P, "setoption Ponder: expected true or false, not '%s'", v ? v : "");
}

static void cmd_setoption(struct proto *P, char *args)
{
    char *name, *v;
    if (!setoption_split(P, args, &name, &v))
        return;
    if (!strcasecmp(name, "Hash") || !strcasecmp(name, "Threads") ||
        !strcasecmp(name, "Pits") || !strcasecmp(name, "Seeds"))
        setoption_number(P, name, v);
    else if (!strcasecmp(name, "Rules"))
        setoption_rules(P, v);
    else if (!strcasecmp(name, "Tables"))
        setoption_tables(P, v);
    else if (!strcasecmp(name, "Solution"))
        setoption_solution(P, v);
    else if (!strcasecmp(name, "Weights"))
        setoption_weights(P, v);
    else if (!strcasecmp(name, "Ponder"))
        setoption_ponder(P, v);
    else
        ERR(P, "setoption: unknown option '%s'", name);
}

/* ---- positions ---- */

/* Oware GUIs' fen: 12 counts, 2 stores, S/N, joined by '-'. */
static int parse_fen(struct proto *P, const char *f, sow_position *out, char *err, int errlen)
{
    const int H = P->rs.holes;
    long v[SOW_MAX_HOLES + 2];
    const char *q = f;
    sow_position p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < H + 2; i++) {
        char *end;
        if (*q < '0' || *q > '9') {
            snprintf(err, (size_t)errlen, "fen '%s': expected %d counts, 2 stores and S or N "
                     "joined by '-'", f, H);
            return -1;
        }
        v[i] = strtol(q, &end, 10);
        if (*end != '-' || v[i] > SOW_MAX_SEEDS) {
            snprintf(err, (size_t)errlen, "fen '%s': expected %d counts, 2 stores and S or N "
                     "joined by '-'", f, H);
            return -1;
        }
        q = end + 1;
    }
    if ((q[0] != 'S' && q[0] != 'N') || q[1]) {
        snprintf(err, (size_t)errlen, "fen '%s': the side to move must be S or N", f);
        return -1;
    }
    for (int i = 0; i < H; i++)
        p.board.h[i] = (uint8_t)v[i];
    p.store[0] = (uint16_t)v[H];
    p.store[1] = (uint16_t)v[H + 1];
    p.side = q[0] == 'S' ? 0 : 1;
    struct sow_error e;
    if (rules_validate(&P->rs, &p, &e) != SOW_OK) {
        snprintf(err, (size_t)errlen, "%s", e.msg);
        return -1;
    }
    *out = p;
    return 0;
}

static int parse_move(struct proto *P, const sow_position *p, const char *tok, sow_move *m,
                      bool *letter, char *err, int errlen)
{
    *letter = false;
    if (is_oware(P) && tok[0] && !tok[1] && ((tok[0] >= 'A' && tok[0] < 'A' + P->rs.pits) ||
                                            (tok[0] >= 'a' && tok[0] < 'a' + P->rs.pits))) {
        int side = tok[0] >= 'a';
        if (side != p->side) {
            snprintf(err, (size_t)errlen, "move '%s': it is %s's turn", tok,
                     p->side ? "North" : "South");
            return -1;
        }
        *m = (sow_move)(tok[0] - (side ? 'a' : 'A'));
        *letter = true;
        return 0;
    }
    struct sow_error e;
    if (move_parse(&P->rs, p, tok, m, &e) != SOW_OK) {
        snprintf(err, (size_t)errlen, "%s", e.msg);
        return -1;
    }
    return 0;
}

/* The length of tok if it is two or more oware hole letters (moves CfB, as
 * the oware GUIs send a game), else 0. */
static size_t letter_run(const struct proto *P, const char *tok)
{
    if (!is_oware(P))
        return 0;
    size_t n = 0;
    for (; tok[n]; n++)
        if (!((tok[n] >= 'A' && tok[n] < 'A' + P->rs.pits) ||
              (tok[n] >= 'a' && tok[n] < 'a' + P->rs.pits)))
            return 0;
    return n > 1 ? n : 0;
}

static void cmd_position(struct proto *P, char *args)
{
    char err[320];
    char *save = NULL;
    char *kind = strtok_r(args, " \t", &save);
    sow_position p;
    bool letters = false;
    if (!kind) {
        ERR(P, "position: expected startpos, pos TOKEN or fen F");
        return;
    }
    if (!strcmp(kind, "startpos")) {
        p = rules_start(&P->rs);
    } else if (!strcmp(kind, "pos") || !strcmp(kind, "fen")) {
        char *tok = strtok_r(NULL, " \t", &save);
        if (!tok) {
            ERR(P, "position %s: missing the position", kind);
            return;
        }
        if (!strcmp(kind, "fen")) {
            if (!is_oware(P)) {
                ERR(P, "position fen: the fen notation is oware's (Rules is %s)", P->rs.name);
                return;
            }
            if (parse_fen(P, tok, &p, err, sizeof err) < 0) {
                ERR(P, "position: %s", err);
                return;
            }
            letters = true;
        } else {
            int tp = -1; /* untouched if the first row is malformed */
            struct sow_error e;
            if (pos_token_pits(tok, &tp, &e) != SOW_OK ||
                pos_parse(&P->rs, tok, &p, &e) != SOW_OK) {
                if (tp >= 0 && tp != P->rs.pits)
                    ERR(P, "position: %d holes per side, but Pits is %d", tp, P->rs.pits);
                else
                    ERR(P, "position: %s", e.msg);
                return;
            }
        }
    } else {
        ERR(P, "position: expected startpos, pos TOKEN or fen F, not '%s'", kind);
        return;
    }
    new_base(P, &p);
    sow_position *hist = P->phist;
    int nh = 0;
    char *tok = strtok_r(NULL, " \t", &save);
    if (tok && strcmp(tok, "moves")) {
        ERR(P, "position: expected 'moves' after the position, not '%s'", tok);
        return;
    }
    struct sow_movelist ml;
    while (tok && (tok = strtok_r(NULL, " \t", &save))) {
        /* a run of letters (moves CfB) is one move a letter */
        size_t run = letter_run(P, tok);
        for (size_t k = 0; k < (run ? run : 1); k++) {
            char one[2] = {tok[k], 0}, where[128] = "";
            const char *mt = run ? one : tok;
            if (run)
                snprintf(where, sizeof where, " (letter %zu of '%.64s')", k + 1, tok);
            sow_move m;
            bool let;
            if (parse_move(P, &p, mt, &m, &let, err, sizeof err) < 0) {
                ERR(P, "position: %s%s", err, where);
                return;
            }
            letters |= let;
            rules_generate(&P->rs, &p, &ml);
            int i = rules_find_move(&ml, m);
            if (i < 0) {
                ERR(P, "position: move '%s' is not legal here%s", mt, where);
                return;
            }
            if (nh == HIST_MAX) {
                memmove(hist, hist + 1, sizeof hist[0] * (HIST_MAX - 1));
                nh--;
            }
            hist[nh++] = p;
            p = ml.c[i].pos;
        }
    }
    P->pos = p;
    if (ensure_engine(P) == 0)
        engine_prepare(P->e, &p); /* the small levels now: stop stays fast */
    memcpy(P->hist, hist, sizeof hist[0] * (size_t)nh);
    P->nhist = nh;
    P->letters = letters;
}

/* ---- go ---- */

static void on_info(void *arg, const struct engine_info *in)
{
    struct proto *P = arg;
    char line[8192];
    int k = snprintf(line, sizeof line, "info depth %d seldepth %d ", in->depth, in->seldepth);
    if (in->proven && !P->sletters)
        k += snprintf(line + k, sizeof line - (size_t)k, "score exact %d", in->score / 100);
    else /* letter mode: a proven score is cp too (100 x its seeds) */
        k += snprintf(line + k, sizeof line - (size_t)k, "score cp %d%s", in->score,
                      in->bound_lower ? " lowerbound" : in->bound_upper ? " upperbound" : "");
    double t = in->seconds;
    k += snprintf(line + k, sizeof line - (size_t)k,
                  " nodes %llu nps %.0f hashfull %d tbhits %llu time %.0f",
                  (unsigned long long)in->nodes, t > 0 ? (double)in->nodes / t : 0.0,
                  in->hashfull, (unsigned long long)in->tb_hits, t * 1000);
    /* the pv: "pv 3A 1B ..."; in letter mode "pv CaA" (one run of letters,
     * as the oware GUIs read it) and nothing when it is empty */
    if (!P->sletters)
        k += snprintf(line + k, sizeof line - (size_t)k, " pv");
    sow_position q = P->spos;
    struct sow_movelist ml;
    for (int i = 0; i < in->pv_len && k < (int)sizeof line - 32; i++) {
        rules_generate(&P->rs, &q, &ml);
        int j = rules_find_move(&ml, in->pv[i]);
        if (j < 0)
            break;
        char mv[SOW_MOVE_MAXLEN];
        fmt_move(P, q.side, in->pv[i], mv, sizeof mv);
        k += snprintf(line + k, sizeof line - (size_t)k, "%s%s",
                      !P->sletters ? " " : i ? "" : " pv ", mv);
        q = ml.c[j].pos;
    }
    say(P, "%s", line);
}

/* Letter mode: why the game is over at the position of the last `position`
 * command (the oware GUIs' end of game), or NULL.  No legal move is the
 * search's to find. */
static const char *game_ended(const struct proto *P)
{
    const sow_position *p = &P->pos;
    int total = p->store[0] + p->store[1];
    for (int i = 0; i < P->rs.holes; i++)
        total += p->board.h[i];
    if (2 * p->store[0] > total || 2 * p->store[1] > total)
        return "a player has captured more than half of the seeds";
    for (int i = 0; i < P->nhist; i++)
        if (rules_same_position(&P->hist[i], p))
            return "position repeated";
    return NULL;
}

/* bestmove's " ponder R" (with Ponder true or --letters): the PV's reply
 * to the best move, if it has one and it is legal there; else "". */
static void ponder_reply(const struct proto *P, const struct engine_result *r, char *buf,
                         size_t len)
{
    buf[0] = 0;
    if (r->info.pv_len < 2 || r->info.pv[0] != r->best)
        return;
    struct sow_movelist ml;
    rules_generate(&P->rs, &P->spos, &ml);
    int i = rules_find_move(&ml, r->best);
    if (i < 0)
        return;
    sow_position q = ml.c[i].pos;
    rules_generate(&P->rs, &q, &ml);
    if (rules_find_move(&ml, r->info.pv[1]) < 0)
        return;
    char mv[SOW_MOVE_MAXLEN];
    fmt_move(P, q.side, r->info.pv[1], mv, sizeof mv);
    snprintf(buf, len, " ponder %s", mv);
}

static void *search_main(void *arg)
{
    struct proto *P = arg;
    struct engine_result r;
    const char *over = P->over;
    if (over) {
        memset(&r, 0, sizeof r);
        r.best = SOW_MOVE_NONE;
    } else {
        engine_search(P->e, &P->spos, P->shist, P->snhist, &P->lim, &r);
        over = "no legal move";
    }
    /* UCI: after `go infinite` the answer waits for `stop`; after `go
     * ponder` for `ponderhit` or `stop`. */
    while ((P->infinite || __atomic_load_n(&P->pondering, __ATOMIC_ACQUIRE)) &&
           !__atomic_load_n(&P->stop_req, __ATOMIC_RELAXED)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    /* done before the answer: a GUI may send its next command the moment
     * it reads bestmove, and the main thread must then join, not refuse. */
    __atomic_store_n(&P->done, 1, __ATOMIC_RELEASE);
    if (r.best == SOW_MOVE_NONE) {
        say(P, "info string game over: %s", over);
        say(P, "bestmove %s", P->sletters ? "0000" : "(none)");
    } else {
        char mv[SOW_MOVE_MAXLEN], reply[SOW_MOVE_MAXLEN + 8] = "";
        fmt_move(P, P->spos.side, r.best, mv, sizeof mv);
        if (P->ponder_opt || P->force_letters)
            ponder_reply(P, &r, reply, sizeof reply);
        say(P, "bestmove %s%s", mv, reply);
    }
    return NULL;
}

/* ponderhit's clock: stop_req at the deadline unless cancelled first. */
static void *timer_main(void *arg)
{
    struct proto *P = arg;
    pthread_mutex_lock(&P->tmu);
    int rc = 0;
    while (!P->tcancel && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&P->tcv, &P->tmu, &P->deadline);
    if (!P->tcancel)
        __atomic_store_n(&P->stop_req, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&P->tmu);
    return NULL;
}

static void timer_cancel(struct proto *P)
{
    if (!P->timer_on)
        return;
    pthread_mutex_lock(&P->tmu);
    P->tcancel = true;
    pthread_cond_signal(&P->tcv);
    pthread_mutex_unlock(&P->tmu);
    pthread_join(P->timer, NULL);
    P->timer_on = false;
}

static void join_search(struct proto *P)
{
    if (!P->searching)
        return;
    pthread_join(P->th, NULL);
    timer_cancel(P);
    P->searching = false;
}

/* ponderhit: the ponder move was played; the search goes on as a normal
 * one, with go's time limit from now. */
static void cmd_ponderhit(struct proto *P)
{
    if (!P->searching || !__atomic_load_n(&P->pondering, __ATOMIC_ACQUIRE)) {
        ERR(P, "ponderhit: not pondering (no go ponder running)");
        return;
    }
    if (P->ponder_secs > 0) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long ns = now.tv_nsec + (long long)(P->ponder_secs * 1e9);
        P->deadline.tv_sec = now.tv_sec + (time_t)(ns / 1000000000LL);
        P->deadline.tv_nsec = (long)(ns % 1000000000LL);
        P->tcancel = false;
        if (pthread_create(&P->timer, NULL, timer_main, P) != 0) {
            /* no clock: stop now rather than search past the time */
            ERR(P, "ponderhit: cannot start the clock thread (stopping)");
            __atomic_store_n(&P->stop_req, 1, __ATOMIC_RELAXED);
        } else
            P->timer_on = true;
    }
    __atomic_store_n(&P->pondering, 0, __ATOMIC_RELEASE);
}

static void cmd_go(struct proto *P, char *args)
{
    struct engine_limits lim = {0};
    double wtime = -1, btime = -1, winc = 0, binc = 0, mtg = 0;
    long long v, lo = 1, hi = 0;
    bool infinite = false, ponder = false;
    char *save = NULL;
    for (char *tok = strtok_r(args, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *val = NULL;
        if (!strcmp(tok, "infinite")) {
            infinite = true;
            continue;
        }
        if (!strcmp(tok, "ponder")) {
            ponder = true;
            continue;
        }
        val = strtok_r(NULL, " \t", &save);
        if (!strcmp(tok, "depth")) {
            if (!parse_dec(val, lo = 1, hi = ENGINE_MAX_PLY - 1, &v))
                goto bad;
            lim.depth = (int)v;
        } else if (!strcmp(tok, "movetime")) {
            if (!parse_dec(val, lo = 1, hi = 1000000000, &v))
                goto bad;
            lim.seconds = (double)v / 1000;
        } else if (!strcmp(tok, "nodes")) {
            if (!parse_dec(val, lo = 1, hi = 1000000000000000000LL, &v))
                goto bad;
            lim.nodes = (uint64_t)v;
        } else if (!strcmp(tok, "wtime") || !strcmp(tok, "btime") || !strcmp(tok, "winc") ||
                   !strcmp(tok, "binc") || !strcmp(tok, "movestogo")) {
            if (!parse_dec(val, lo = tok[0] == 'm' ? 1 : 0, hi = 1000000000000LL, &v))
                goto bad;
            *(!strcmp(tok, "wtime")  ? &wtime
              : !strcmp(tok, "btime") ? &btime
              : !strcmp(tok, "winc")  ? &winc
              : !strcmp(tok, "binc")  ? &binc
                                      : &mtg) = (double)v;
        } else {
            ERR(P, "go: unknown parameter '%s'", tok);
            return;
        }
        continue;
    bad:
        if (val)
            ERR(P, "go %s: '%s' is not a decimal integer in %lld..%lld", tok, val, lo, hi);
        else
            ERR(P, "go %s: missing value", tok);
        return;
    }
    /* wtime/btime: the clock of the side to move (wtime = South/A). */
    double mine = P->pos.side ? btime : wtime, inc = P->pos.side ? binc : winc;
    if (mine >= 0 && !infinite) {
        double per = mine / (mtg > 0 ? mtg : 30) + 0.8 * inc;
        if (per > mine / 2)
            per = mine / 2;
        double s = per / 1000;
        if (s < 0.005)
            s = 0.005;
        if (!lim.seconds || s < lim.seconds)
            lim.seconds = s;
    }
    if (infinite) {
        lim.depth = 0;
        lim.seconds = 0;
        lim.nodes = 0;
        lim.infinite = true;
    }
    if (ensure_engine(P) < 0)
        return;
    /* go ponder: no clock until ponderhit (cmd_ponderhit starts it) */
    P->ponder_secs = ponder ? lim.seconds : 0;
    if (ponder)
        lim.seconds = 0;
    P->lim = lim;
    P->infinite = infinite;
    P->sletters = letter_mode(P);
    P->over = P->sletters ? game_ended(P) : NULL;
    P->spos = P->pos;
    memcpy(P->shist, P->hist, sizeof P->hist[0] * (size_t)P->nhist);
    P->snhist = P->nhist;
    __atomic_store_n(&P->stop_req, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&P->done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&P->pondering, ponder ? 1 : 0, __ATOMIC_RELAXED);
    engine_set_info(P->e, on_info, P);
    if (pthread_create(&P->th, NULL, search_main, P) != 0) {
        ERR(P, "go: cannot start the search thread");
        return;
    }
    P->searching = true;
}

static void do_stop(struct proto *P)
{
    if (!P->searching)
        return;
    __atomic_store_n(&P->stop_req, 1, __ATOMIC_RELAXED);
    join_search(P);
}

/* One line of stdin, read as bytes, into line (cap bytes, NUL-terminated,
 * its end of line and a CR before it removed).  False at the end of input.
 * *why: NULL, or why the line is refused: too long (the rest of it is
 * skipped), or a control byte in it (a NUL would cut the line short where
 * fgets and strlen disagree, which once swallowed the next line). */
static bool read_line(char *line, size_t cap, const char **why, char *whybuf, size_t wlen)
{
    size_t len = 0;
    int c, ctl = -1;
    bool any = false;
    *why = NULL;
    while ((c = getc_unlocked(stdin)) != EOF && c != '\n') {
        any = true;
        if (len + 1 < cap)
            line[len] = (char)c;
        if (ctl < 0 && ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f))
            ctl = c;
        len++;
    }
    if (c == EOF && !any)
        return false;
    if (len > cap - 2) {
        snprintf(whybuf, wlen, "line longer than %zu characters ignored", cap - 2);
        *why = whybuf;
        line[0] = 0;
        return true;
    }
    line[len] = 0;
    while (len && line[len - 1] == '\r')
        line[--len] = 0;
    for (size_t i = 0; ctl < 0 && i < len; i++) /* a CR inside the line */
        if (line[i] == '\r')
            ctl = '\r';
    if (ctl >= 0) {
        snprintf(whybuf, wlen, "unknown command: the line holds the control byte 0x%02x", ctl);
        *why = whybuf;
    }
    return true;
}

int cmd_engine(int argc, char **argv)
{
    bool force_letters = false;
    const struct cli_option opts[] = {
        {"--letters", CLI_FLAG, &force_letters, 0, 0, NULL,
         "answer in letters after any position, and name a ponder move", 0, 0},
        {0}};
    const struct cli_spec spec = {"engine", usage, opts, NULL, 0, NULL};
    int pr = cli_parse(&spec, argc, argv, NULL, NULL);
    if (pr)
        return pr == CLI_HELP ? CLI_OK : pr;
    /* The session's state: large (histories), so on the heap, zeroed. */
    struct proto *P = calloc(1, sizeof *P);
    char *line = malloc(LINE_MAX_LEN);
    if (!P || !line) {
        free(P);
        free(line);
        fprintf(stderr, "sow engine: out of memory\n");
        return cli_exit_code(SOW_E_NOMEM);
    }
    pthread_mutex_init(&P->out, NULL);
    pthread_mutex_init(&P->tmu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&P->tcv, &ca);
    pthread_condattr_destroy(&ca);
    P->force_letters = force_letters;
    snprintf(P->rules, sizeof P->rules, "oware");
    P->pits = 6;
    P->seeds = 4;
    P->hash = 64;
    P->threads = 1;
    char err[320];
    if (setup_rules(P, err, sizeof err) < 0) {
        free(line);
        free(P);
        return cli_bad("engine", "%s", err);
    }
    const char *why;
    char whybuf[100];
    while (read_line(line, LINE_MAX_LEN, &why, whybuf, sizeof whybuf)) {
        if (why) {
            ERR(P, "%s", why);
            continue;
        }
        char *cmd = line + strspn(line, " \t");
        if (!*cmd)
            continue;
        char *args = cmd + strcspn(cmd, " \t");
        if (*args)
            *args++ = 0;
        /* A finished search (depth reached) is joined before anything else. */
        if (P->searching && __atomic_load_n(&P->done, __ATOMIC_ACQUIRE))
            join_search(P);
        if (!strcmp(cmd, "quit"))
            break;
        if (!strcmp(cmd, "stop")) {
            do_stop(P);
            continue;
        }
        if (!strcmp(cmd, "ponderhit")) {
            cmd_ponderhit(P);
            continue;
        }
        if (!strcmp(cmd, "isready")) {
            if (!P->searching)
                ensure_engine(P);
            say(P, "readyok");
            continue;
        }
        if (!strcmp(cmd, "uci")) {
            cmd_uci(P);
            continue;
        }
        bool known = !strcmp(cmd, "setoption") || !strcmp(cmd, "ucinewgame") ||
                     !strcmp(cmd, "position") || !strcmp(cmd, "go");
        if (!known) {
            ERR(P, "unknown command '%s'", cmd);
            continue;
        }
        if (P->searching) {
            ERR(P, "%s: a search is running (send stop first)", cmd);
            continue;
        }
        if (!strcmp(cmd, "setoption"))
            cmd_setoption(P, args);
        else if (!strcmp(cmd, "ucinewgame")) {
            P->pos = P->start;
            if (ensure_engine(P) == 0) {
                engine_clear(P->e);
                engine_prepare(P->e, &P->pos);
            }
            P->nhist = 0;
        } else if (!strcmp(cmd, "position"))
            cmd_position(P, args);
        else
            cmd_go(P, args);
    }
    do_stop(P);
    engine_free(P->e);
    tb_close(P->tb);
    search_solution_close(P->sol);
    pthread_mutex_destroy(&P->out);
    pthread_mutex_destroy(&P->tmu);
    pthread_cond_destroy(&P->tcv);
    free(line);
    free(P);
    return CLI_OK;
}
