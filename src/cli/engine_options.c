/* sow engine: the options (engine_proto.h): uci's list of them, setoption,
 * and the engine they make (rule set, Hash, Threads, Tables, Solution,
 * Weights), rebuilt when they change. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "engine_proto.h"
#include "book/builtin.h"
#include "tables_path.h"
#include "util.h"

int proto_setup_rules(struct proto *P, char *err, int errlen)
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
    if (tpath_solution_find(&P->rs, P->tables, base, out, path, len, &se) != SOW_OK) {
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
void proto_new_base(struct proto *P, const sow_position *p)
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

/* OwnBook: the Book file, or sow's own book of the rule set (none for
 * some rule sets: then play is searched from the first move). */
static void load_book(struct proto *P)
{
    book_free(&P->book);
    P->have_book = false;
    if (!P->own_book)
        return;
    struct sow_error be;
    enum sow_status st = P->book_file[0] ? book_open(P->book_file, &P->rs, &P->book, &be)
                                         : book_load_builtin(&P->rs, &P->book, &be);
    if (st == SOW_OK) {
        P->have_book = true;
        proto_say(P, "info string book %s: %llu positions",
                  P->book_file[0] ? P->book_file : "sow's own", (unsigned long long)P->book.nent);
    } else if (P->book_file[0]) {
        ERR(P, "Book: %s (no book used)", be.msg);
    }
}

int proto_ensure_engine(struct proto *P)
{
    if (!P->dirty && P->e)
        return 0;
    engine_free(P->e);
    P->e = NULL;
    tb_close(P->tb);
    P->tb = NULL;
    if (P->tables[0]) {
        struct sow_error te;
        if (tpath_open(&P->rs, P->tables, P->table_cache, &P->tb, &te) != SOW_OK) {
            P->tb = NULL;
            ERR(P, "Tables %s: %s (no tables used)", P->tables, te.msg);
            P->tables[0] = 0;
        } else if (tb_max_level(P->tb) >= 0) {
            proto_say(P, "info string tables %s: levels 0..%d", P->tables,
                      tb_max_level(P->tb));
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
        proto_say(P, "info string solution file %s", found);
    load_book(P);
    struct engine_opts o = {.threads = (int)P->threads, .hash_mb = (unsigned)P->hash,
                            .tb = P->tb, .weights = P->have_weights ? &P->weights : NULL,
                            .solution = P->sol, .swindle = P->swindle,
                            .root_closure = P->root_closure ? 1000LL * P->root_closure : -1};
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
bool proto_parse_dec(const char *s, long long lo, long long hi, long long *out)
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
    return cli_hash_max(65536);
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
/* RootClosure's largest value: thousands of positions whose closure (64
 * bytes each, engine.h) fits where Hash would. */
static long root_closure_max(void)
{
    return hash_max() * (1048576 / 64) / 1000;
}

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

void proto_uci(struct proto *P)
{
    long lo, hi;
    proto_say(P, "id name sow %s", "0.1.0");
    proto_say(P, "id author the sow developers");
    spin_range(P, "Hash", &lo, &hi);
    proto_say(P, "option name Hash type spin default 64 min %ld max %ld", lo, hi);
    proto_say(P, "option name Threads type spin default 1 min 1 max 256");
    pthread_mutex_lock(&P->out);
    printf("option name Rules type combo default oware");
    for (int i = 0; sow_rule_names[i]; i++)
        printf(" var %s", sow_rule_names[i]);
    printf("\n");
    pthread_mutex_unlock(&P->out);
    spin_range(P, "Pits", &lo, &hi);
    proto_say(P, "option name Pits type spin default 6 min %ld max %ld", lo, hi);
    spin_range(P, "Seeds", &lo, &hi);
    proto_say(P, "option name Seeds type spin default 4 min %ld max %ld", lo, hi);
    proto_say(P, "option name Tables type string default %s", tpath_default());
    proto_say(P, "option name TableCache type spin default 0 min 0 max %ld", hash_max());
    proto_say(P, "option name Solution type string default <empty>");
    proto_say(P, "option name Weights type string default <empty>");
    proto_say(P, "option name Ponder type check default false");
    proto_say(P, "option name Swindle type check default %s", PROTO_SWINDLE ? "true" : "false");
    proto_say(P, "option name RootClosure type spin default %d min 0 max %ld",
              ENGINE_ROOT_CLOSURE / 1000, root_closure_max());
    proto_say(P, "option name OwnBook type check default true");
    proto_say(P, "option name Book type string default <builtin>");
    proto_say(P, "option name BookMargin type spin default 0 min 0 max 10000");
    proto_say(P, "uciok");
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
    /* "value" as a word, followed by a space or by nothing (the line's end
     * is trimmed): then V is empty */
    char *val = name;
    while ((val = strstr(val, " value")) && val[6] && val[6] != ' ')
        val += 6;
    char *v = val ? val + 6 + (val[6] == ' ') : NULL;
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
         pits = !strcasecmp(name, "Pits"), tcache = !strcasecmp(name, "TableCache"),
         rclos = !strcasecmp(name, "RootClosure");
    /* Pits and Seeds: the full range here, rules_init's message below says
     * why a count in it does not fit the other one; TableCache 0 is the
     * default size */
    long lo = tcache || rclos ? 0 : 1,
         hi = hash || tcache ? hash_max()
              : rclos        ? root_closure_max()
              : thr          ? 256
              : pits         ? SOW_MAX_PITS
                             : SOW_MAX_SEEDS;
    if (!proto_parse_dec(v, lo, hi, &xx)) {
        ERR(P, "setoption %s: '%s' is not a decimal integer in %ld..%ld%s", name, v, lo, hi,
            (hash || tcache) && hi < 65536 ? " (3/4 of this machine's memory)" : "");
        return;
    }
    long x = (long)xx;
    if (hash) {
        P->hash = x;
        P->dirty = true;
    } else if (tcache) {
        P->table_cache = x; /* the tables are opened again with it */
        P->dirty = true;
    } else if (thr) {
        P->threads = x;
        P->dirty = true;
    } else if (rclos) {
        P->root_closure = x;
        P->dirty = true;
    } else {
        long old = pits ? P->pits : P->seeds;
        if (pits)
            P->pits = x;
        else
            P->seeds = x;
        if (proto_setup_rules(P, err, sizeof err) < 0) {
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
    if (strlen(v) >= sizeof P->rules || proto_setup_rules(P, err, sizeof err) < 0) {
        snprintf(P->rules, sizeof P->rules, "%s", old);
        ERR(P, "setoption Rules: unknown rule set '%s'", v);
    }
}

/* The tables a session starts with: the default path where its
 * directories exist (tables_path.h), else none; tell: a $SOW_TABLES that
 * names a missing directory is noted on stderr (once, at the start). */
void proto_default_tables(struct proto *P, bool tell)
{
    char note[700];
    const char *d = tpath_default_usable(note, sizeof note);
    if (tell && *note)
        fprintf(stderr, "sow engine: %s\n", note);
    snprintf(P->tables, sizeof P->tables, "%s", d && strlen(d) < sizeof P->tables ? d : "");
}

/* Tables: a tables path (DIR[:DIR...]); empty or <empty>: none; the
 * default path (what uci shows) as at the start, silently none where it
 * does not exist. */
static void setoption_tables(struct proto *P, const char *v)
{
    char msg[600];
    if (!v || !*v || !strcmp(v, "<empty>"))
        P->tables[0] = 0;
    else if (strlen(v) >= sizeof P->tables) {
        ERR(P, "setoption Tables: path too long");
        return;
    } else if (!strcmp(v, tpath_default())) {
        proto_default_tables(P, false);
    } else if (tpath_check(v, msg, sizeof msg) < 0) {
        /* tb_open takes a missing directory as one without levels (the
         * builders create it): here it is a typo to be told about */
        ERR(P, "setoption Tables: %s (no tables used)", msg);
        P->tables[0] = 0;
    } else
        snprintf(P->tables, sizeof P->tables, "%s", v);
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

/* A check option's value, as UCI spells it: true or false (any case).
 * False (after the error line) for anything else. */
static bool check_value(struct proto *P, const char *name, const char *v, bool *out)
{
    if (v && (!strcasecmp(v, "true") || !strcasecmp(v, "false"))) {
        *out = !strcasecmp(v, "true");
        return true;
    }
    ERR(P, "setoption %s: expected true or false, not '%s'", name, v ? v : "");
    return false;
}

/* Ponder (UCI: the GUI says whether it will send go ponder; pondering
 * works either way, and true adds the ponder move to bestmove). */
static void setoption_ponder(struct proto *P, const char *v)
{
    check_value(P, "Ponder", v, &P->ponder_opt);
}

/* Swindle: engine_opts.swindle; the engine is rebuilt. */
static void setoption_swindle(struct proto *P, const char *v)
{
    if (check_value(P, "Swindle", v, &P->swindle))
        P->dirty = true;
}

/* OwnBook (true or false), Book (a file, or <builtin>/empty for sow's
 * own), BookMargin (centi-seeds). */
static void setoption_book(struct proto *P, const char *name, const char *v)
{
    if (!strcasecmp(name, "OwnBook")) {
        check_value(P, "OwnBook", v, &P->own_book);
    } else if (!strcasecmp(name, "Book")) {
        if (!v || !*v || !strcmp(v, "<builtin>") || !strcmp(v, "<empty>"))
            P->book_file[0] = 0;
        else if (strlen(v) >= sizeof P->book_file) {
            ERR(P, "setoption Book: path too long");
            return;
        } else
            snprintf(P->book_file, sizeof P->book_file, "%s", v);
    } else {
        long long x;
        if (!v || !proto_parse_dec(v, 0, 10000, &x)) {
            ERR(P, "setoption BookMargin: '%s' is not a decimal integer in 0..10000", v ? v : "");
            return;
        }
        P->book_margin = (long)x;
        return;
    }
    P->dirty = true;
}

void proto_setoption(struct proto *P, char *args)
{
    char *name, *v;
    if (!setoption_split(P, args, &name, &v))
        return;
    if (!strcasecmp(name, "Hash") || !strcasecmp(name, "Threads") ||
        !strcasecmp(name, "TableCache") || !strcasecmp(name, "RootClosure") ||
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
    else if (!strcasecmp(name, "Swindle"))
        setoption_swindle(P, v);
    else if (!strcasecmp(name, "OwnBook") || !strcasecmp(name, "Book") ||
             !strcasecmp(name, "BookMargin"))
        setoption_book(P, name, v);
    else
        ERR(P, "setoption: unknown option '%s'", name);
}
