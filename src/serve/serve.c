/* sow serve's answers (serve.h): request in, JSON and status out. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/known.h"
#include "serve/serve.h"
#include "serve/www.h"
#include "sow/position.h"
#include "sow/search.h"
#include "sow/tables_probe.h"
#include "util.h"

/* The exact try solves the lowest levels in memory up to this many positions
 * (search_opts.level_budget): far below sow solve's default, since every
 * concurrent request builds its own; the closure does the rest, to the same
 * values. */
#define SERVE_LEVEL_BUDGET (1LL << 22)
/* The engine's transposition table per request, MiB (sow solve's 64 per
 * request would be 512 MiB at 8 concurrent requests). */
#define SERVE_HASH_MB 16

/* ---- a growing JSON text --------------------------------------------------- */

struct jbuf {
    char *s;
    size_t len, cap;
    bool oom;
};

static void jb_printf(struct jbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jb_printf(struct jbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = true;
            return;
        }
        if (b->s && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 256;
        while (cap <= b->len + (size_t)n)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* s as a JSON string: quotes, backslashes and control characters escaped
 * (an error message may quote what the request sent). */
static void jb_str(struct jbuf *b, const char *s)
{
    jb_printf(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            jb_printf(b, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            jb_printf(b, "\\u%04x", ch);
        else
            jb_printf(b, "%c", ch);
    }
    jb_printf(b, "\"");
}

static const char json_type[] = "application/json";

static struct serve_answer jb_answer(struct jbuf *b, int status)
{
    if (b->oom || !b->s) {
        free(b->s);
        static const char oom[] = "{\"error\":\"out of memory\"}";
        char *s = strdup(oom);
        return (struct serve_answer){500, s, s ? sizeof oom - 1 : 0, json_type, false};
    }
    return (struct serve_answer){status, b->s, b->len, json_type, false};
}

void serve_answer_free(struct serve_answer *a)
{
    if (!a->is_static)
        free(a->body);
    a->body = NULL;
}

static struct serve_answer error_answer(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static struct serve_answer error_answer(int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct jbuf b = {0};
    jb_printf(&b, "{\"error\":");
    jb_str(&b, msg);
    jb_printf(&b, "}");
    return jb_answer(&b, status);
}

/* ---- the context ------------------------------------------------------------ */

void serve_ctx_init(struct serve_ctx *c, const char *tables, int threads, double time_budget,
                    volatile sig_atomic_t *stop)
{
    memset(c, 0, sizeof *c);
    c->tables = tables;
    c->threads = threads > 0 ? threads : 1;
    c->time_budget = time_budget > 0 ? time_budget : 1.0;
    c->hash_mb = SERVE_HASH_MB;
    c->stop = stop;
    c->levels = SERVE_LEVELS_DEFAULT;
    pthread_mutex_init(&c->lock, NULL);
}

void serve_ctx_free(struct serve_ctx *c)
{
    serve_sets_free(c);
    pthread_mutex_destroy(&c->lock);
}

/* ---- the time budget -------------------------------------------------------- */

/* The exact solver has no clock of its own: a watch thread sets its stop
 * flag at the deadline (or when the server stops), and the solve ends with
 * SOW_E_INTERRUPTED. */
struct watch {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, running;
    double until;
    volatile sig_atomic_t flag;
    volatile sig_atomic_t *stop;
};

static void *watch_run(void *arg)
{
    struct watch *w = arg;
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (util_now() >= w->until || (w->stop && *w->stop)) {
            w->flag = 1;
            break;
        }
        /* short waits: the server's stop is a flag, it signals no one */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void watch_start(struct watch *w, double seconds, volatile sig_atomic_t *stop)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->until = util_now() + seconds;
    w->stop = stop;
    w->running = pthread_create(&w->th, NULL, watch_run, w) == 0;
    if (!w->running)
        w->flag = 1; /* no watch, no unbounded solve: straight to the engine */
}

static void watch_end(struct watch *w)
{
    if (w->running) {
        pthread_mutex_lock(&w->mu);
        w->done = true;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
        pthread_join(w->th, NULL);
    }
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

/* ---- solving ---------------------------------------------------------------- */


/* Exact values by the solver (with the tables) within seconds: SOW_OK, or
 * SOW_E_INTERRUPTED past the deadline, or the solver's failure. */
static enum sow_status analyse_exact(struct serve_ctx *c, const struct ruleset *rs,
                                     const struct tb_set *tb, const sow_position *p,
                                     double seconds, struct analysis *a)
{
    struct watch w;
    watch_start(&w, seconds, c->stop);
    struct search_opts o = {
        .threads = c->threads,
        .tb = tb,
        .stop = &w.flag,
        .level_budget = SERVE_LEVEL_BUDGET,
        .memory = c->memory,
    };
    struct search_ctx *s;
    struct sow_error e;
    enum sow_status st = w.flag ? SOW_E_INTERRUPTED : search_new(rs, &o, &s, &e);
    if (st == SOW_OK) {
        struct search_result r;
        st = search_solve(s, p, &r);
        if (st == SOW_OK && search_move_values(s, p, a->vals) < 0)
            st = search_last_error(s)->status;
        /* a stop may cut a relay short and leave a move out: nothing
         * computed then is used (rules_cache_set_stop) */
        if (st == SOW_OK && w.flag)
            st = SOW_E_INTERRUPTED;
        if (st == SOW_OK) {
            a->exact = true;
            a->value = r.value;
            a->over = r.over;
            a->depth = -1;
            a->pv_len = r.pv_len;
            memcpy(a->pv, r.pv, sizeof r.pv);
            a->pv_repeats = r.pv_repeats;
        }
        search_free(s);
    }
    watch_end(&w);
    return st;
}

/* The engine's estimate: every move searched for its share of seconds, the
 * move's value from its child's (the seeds it nets, then the child's value
 * for whoever moves there); the position's value is the best of them. */
static enum sow_status analyse_engine(struct serve_ctx *c, const struct ruleset *rs,
                                      const struct tb_set *tb, const sow_position *p,
                                      double seconds, struct analysis *a)
{
    struct search_opts o = {
        .threads = c->threads,
        .hash_mb = c->hash_mb,
        .time_limit = seconds / (a->ml.n > 0 ? a->ml.n : 1),
        .tb = tb,
        .stop = c->stop,
        .level_budget = -1, /* no levels built in memory: the clock is the budget */
    };
    struct search_ctx *s;
    struct sow_error e;
    enum sow_status st = search_new(rs, &o, &s, &e);
    if (st != SOW_OK)
        return st;
    a->exact = false;
    a->source = "engine";
    a->depth = -1;
    int best = -1;
    struct search_result *rbest = malloc(sizeof *rbest), *r = malloc(sizeof *r);
    if (!rbest || !r)
        st = SOW_E_NOMEM;
    for (int i = 0; st == SOW_OK && i < a->ml.n; i++) {
        const struct sow_child *ch = &a->ml.c[i];
        st = search_solve(s, &ch->pos, r);
        if (st != SOW_OK)
            break;
        int v = r->value, net = ch->captured[p->side] - ch->captured[!p->side];
        a->vals[i] = net + (ch->pos.side == p->side ? v : -v);
        int d = r->over ? 0 : r->depth;
        if (a->depth < 0 || d + 1 < a->depth)
            a->depth = d + 1;
        if (best < 0 || a->vals[i] > a->vals[best]) {
            best = i;
            *rbest = *r;
        }
    }
    if (st == SOW_OK) {
        a->value = a->vals[best];
        a->pv[0] = a->ml.c[best].move;
        a->pv_len = 1;
        for (int k = 0; k < rbest->pv_len && a->pv_len < SEARCH_MAX_PV; k++)
            a->pv[a->pv_len++] = rbest->pv[k];
        a->pv_repeats = rbest->pv_repeats;
    }
    free(rbest);
    free(r);
    search_free(s);
    return st;
}

/* p analysed: from the shared levels or a solution file at once, else
 * exact within half the budget, else the engine's estimate in the other
 * half.  SOW_OK, or the failure (interrupted: the server stops). */
static enum sow_status analyse(struct serve_ctx *c, const struct ruleset *rs,
                               const sow_position *p, struct analysis *a)
{
    memset(a, 0, sizeof *a);
    rs->generate(rs, p, &a->ml, NULL, NULL);
    struct serve_set *set = serve_set_of(c, rs);
    if ((set && serve_levels_answer(c, set, rs, p, a)) || serve_solution_answer(c, rs, p, a))
        return SOW_OK;
    const struct tb_set *tb = set ? set->tb : NULL;
    int v;
    a->source = tb && tb_probe(tb, p, &v) ? "tables" : "closure";
    enum sow_status st = analyse_exact(c, rs, tb, p, c->time_budget / 2, a);
    /* past the deadline, or a closure too big for the memory budget: the
     * engine, whose clock is its own */
    if ((st == SOW_E_INTERRUPTED || st == SOW_E_TOO_BIG) && !(c->stop && *c->stop))
        st = analyse_engine(c, rs, tb, p, c->time_budget / 2, a);
    return st;
}

/* ---- the request ------------------------------------------------------------ */

static bool rules_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '-' || ch == '_';
}

/* The moves in the order answered: best value first, the solver's best move
 * first among equals, then generation order (stable). */
static void order_moves(const struct analysis *a, int *ord)
{
    sow_move best = a->pv_len ? a->pv[0] : SOW_MOVE_NONE;
    for (int i = 0; i < a->ml.n; i++)
        ord[i] = i;
    for (int i = 1; i < a->ml.n; i++) {
        int x = ord[i], j = i;
        for (; j > 0; j--) {
            int y = ord[j - 1];
            bool before = a->vals[x] > a->vals[y] ||
                          (a->vals[x] == a->vals[y] && a->ml.c[x].move == best);
            if (!before)
                break;
            ord[j] = y;
        }
        ord[j] = x;
    }
}

static void json_head(struct jbuf *b, const struct ruleset *rs, const sow_position *p,
                      const struct analysis *a)
{
    char pos[SOW_POS_MAXLEN];
    pos_format(rs, p, pos, sizeof pos);
    jb_printf(b, "{\"rules\":");
    jb_str(b, rs->name);
    jb_printf(b, ",\"pits\":%d,\"pos\":", rs->pits);
    jb_str(b, pos);
    jb_printf(b, ",\"value\":%d,\"exact\":%s,\"source\":\"%s\",\"depth\":", a->value,
              a->exact ? "true" : "false", a->source);
    if (a->depth >= 0)
        jb_printf(b, "%d", a->depth);
    else
        jb_printf(b, "null");
    jb_printf(b, ",\"over\":%s", a->over ? "true" : "false");
}

static struct serve_answer answer_moves(const struct ruleset *rs, const sow_position *p,
                                        const struct analysis *a)
{
    struct jbuf b = {0};
    int ord[SOW_MAX_PITS + 1];
    order_moves(a, ord);
    json_head(&b, rs, p, a);
    jb_printf(&b, ",\"best\":");
    if (a->ml.n) {
        char mv[SOW_MOVE_MAXLEN];
        move_format(rs, p->side, a->ml.c[ord[0]].move, mv, sizeof mv);
        jb_str(&b, mv);
    } else {
        jb_printf(&b, "null");
    }
    jb_printf(&b, ",\"moves\":[");
    for (int k = 0; k < a->ml.n; k++) {
        const struct sow_child *ch = &a->ml.c[ord[k]];
        char mv[SOW_MOVE_MAXLEN], pos[SOW_POS_MAXLEN];
        move_format(rs, p->side, ch->move, mv, sizeof mv);
        pos_format(rs, &ch->pos, pos, sizeof pos);
        jb_printf(&b, "%s{\"move\":", k ? "," : "");
        jb_str(&b, mv);
        jb_printf(&b, ",\"value\":%d,\"exact\":%s,\"pos\":", a->vals[ord[k]],
                  a->exact ? "true" : "false");
        jb_str(&b, pos);
        jb_printf(&b, "}");
    }
    jb_printf(&b, "]}");
    return jb_answer(&b, 200);
}

/* The principal variation replayed: each move and the position it makes;
 * "end" says why the line stops (the game is over, a position repeats, or
 * the line is cut at SEARCH_MAX_PV moves / where the engine's PV ends). */
static struct serve_answer answer_line(const struct ruleset *rs, const sow_position *p,
                                       const struct analysis *a)
{
    struct jbuf b = {0};
    json_head(&b, rs, p, a);
    jb_printf(&b, ",\"line\":[");
    sow_position q = *p;
    struct sow_movelist ml;
    int k;
    for (k = 0; k < a->pv_len; k++) {
        rs->generate(rs, &q, &ml, NULL, NULL);
        int i = rules_find_move(&ml, a->pv[k]);
        if (i < 0)
            break;
        char mv[SOW_MOVE_MAXLEN], pos[SOW_POS_MAXLEN];
        move_format(rs, q.side, a->pv[k], mv, sizeof mv);
        q = ml.c[i].pos;
        pos_format(rs, &q, pos, sizeof pos);
        jb_printf(&b, "%s{\"move\":", k ? "," : "");
        jb_str(&b, mv);
        jb_printf(&b, ",\"pos\":");
        jb_str(&b, pos);
        jb_printf(&b, "}");
    }
    rs->generate(rs, &q, &ml, NULL, NULL);
    const char *end = ml.n == 0 ? "over" : a->pv_repeats ? "repetition" : "cut";
    jb_printf(&b, "],\"end\":\"%s\"}", end);
    return jb_answer(&b, 200);
}

/* The legal moves of p and the positions they make, without analysis (the
 * page replays a game record with these), and how the game ends here. */
static struct serve_answer answer_legal(const struct ruleset *rs, const sow_position *p)
{
    struct jbuf b = {0};
    struct sow_movelist ml;
    char pos[SOW_POS_MAXLEN];
    rs->generate(rs, p, &ml, NULL, NULL);
    pos_format(rs, p, pos, sizeof pos);
    jb_printf(&b, "{\"rules\":");
    jb_str(&b, rs->name);
    jb_printf(&b, ",\"pits\":%d,\"pos\":", rs->pits);
    jb_str(&b, pos);
    jb_printf(&b, ",\"side\":\"%c\",\"over\":%s,\"end\":", p->side ? 'B' : 'A',
              ml.n ? "false" : "true");
    if (ml.n) {
        jb_printf(&b, "null,\"settle\":null");
    } else {
        jb_str(&b, rules_end_name(ml.end));
        jb_printf(&b, ",\"settle\":[%d,%d]", ml.settle[0], ml.settle[1]);
    }
    int s2[2];
    rules_repetition_settle2(rs, p, s2);
    jb_printf(&b, ",\"repetition\":[%g,%g],\"moves\":[", s2[0] / 2.0, s2[1] / 2.0);
    for (int k = 0; k < ml.n; k++) {
        const struct sow_child *ch = &ml.c[k];
        char mv[SOW_MOVE_MAXLEN];
        move_format(rs, p->side, ch->move, mv, sizeof mv);
        pos_format(rs, &ch->pos, pos, sizeof pos);
        jb_printf(&b, "%s{\"move\":", k ? "," : "");
        jb_str(&b, mv);
        jb_printf(&b, ",\"pos\":");
        jb_str(&b, pos);
        jb_printf(&b, ",\"captured\":[%d,%d]}", ch->captured[0], ch->captured[1]);
    }
    jb_printf(&b, "]}");
    return jb_answer(&b, 200);
}

/* The rule sets of the registry: default size, the states a position may
 * have (those rules_validate takes), and the limits of a board. */
static struct serve_answer answer_rules(void)
{
    struct jbuf b = {0};
    jb_printf(&b, "{\"rules\":[");
    for (int i = 0; sow_rule_names[i]; i++) {
        struct ruleset rs;
        if (rules_init(&rs, sow_rule_names[i], 0, -1, NULL) != SOW_OK)
            continue;
        jb_printf(&b, "%s{\"name\":", i ? "," : "");
        jb_str(&b, rs.name);
        jb_printf(&b, ",\"pits\":%d,\"seeds\":%d,\"relay\":%s,\"cycle\":\"%s\",\"states\":[",
                  rs.pits, rs.seeds, rs.relay ? "true" : "false",
                  rs.cycle == SOW_CYCLE_SPLIT ? "split" : "own-sides");
        sow_position p = rules_start(&rs);
        const char *start = p.state == SOW_STATE_OPEN ? "open" : "-";
        int n = 0;
        for (int st = SOW_STATE_NONE; st <= SOW_STATE_OPEN; st++) {
            p.state = (uint8_t)st;
            if (rules_validate(&rs, &p, NULL) != SOW_OK)
                continue;
            char pos[SOW_POS_MAXLEN];
            pos_format(&rs, &p, pos, sizeof pos);
            const char *tok = strrchr(pos, '/');
            jb_printf(&b, "%s", n++ ? "," : "");
            jb_str(&b, tok ? tok + 1 : "-");
        }
        jb_printf(&b, "],\"start\":\"%s\"}", start);
    }
    jb_printf(&b, "],\"max_pits\":%d,\"max_seeds\":%d}", SOW_MAX_PITS, SOW_MAX_SEEDS);
    return jb_answer(&b, 200);
}

/* One of the page's files, by exact name ("/" is "/index.html"). */
static const struct serve_file *www_file(const char *path)
{
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    for (const struct serve_file *f = serve_www; f->path; f++)
        if (strcmp(f->path, path) == 0)
            return f;
    return NULL;
}

#define API_PATHS "the page is /, the API /api/rules, /api/RULES, /api/RULES/mainline, /api/RULES/moves"

struct serve_answer serve_answer(struct serve_ctx *c, const struct serve_request *rq)
{
    if (!rq->method || (strcmp(rq->method, "GET") != 0 && strcmp(rq->method, "HEAD") != 0))
        return error_answer(405, "only GET is answered");
    const char *path = rq->path ? rq->path : "";
    if (strlen(path) > SERVE_MAX_PATH)
        return error_answer(414, "the path is longer than %d characters", SERVE_MAX_PATH);
    size_t qlen = 0;
    for (int i = 0; i < rq->nargs; i++)
        qlen += strlen(rq->args[i].name) + (rq->args[i].value ? strlen(rq->args[i].value) : 0);
    if (qlen > SERVE_MAX_QUERY)
        return error_answer(414, "the query is longer than %d characters", SERVE_MAX_QUERY);

    /* the page: compiled-in files, compared by name (the page's own query,
     * ?rules=...&pos=..., is read by its script) */
    const struct serve_file *f = www_file(path);
    if (f)
        return (struct serve_answer){200, (char *)f->data, f->len, f->type, true};
    if (strcmp(path, "/api/rules") == 0) {
        if (rq->nargs)
            return error_answer(400, "/api/rules takes no parameters");
        return answer_rules();
    }

    /* /api/RULES, /api/RULES/mainline or /api/RULES/moves */
    if (strncmp(path, "/api/", 5) != 0)
        return error_answer(404, "no such path (%s)", API_PATHS);
    const char *name = path + 5;
    size_t nlen = 0;
    while (rules_char(name[nlen]))
        nlen++;
    bool mainline = false, legal = false;
    if (strcmp(name + nlen, "/mainline") == 0)
        mainline = true;
    else if (strcmp(name + nlen, "/moves") == 0)
        legal = true;
    else if (name[nlen] != 0 && strcmp(name + nlen, "/") != 0)
        return error_answer(404, "no such path (%s)", API_PATHS);
    if (nlen == 0 || nlen > 32)
        return error_answer(404, "no rule set in the path (/api/RULES)");
    char rules[33];
    memcpy(rules, name, nlen);
    rules[nlen] = 0;

    const char *pos = NULL, *pits_s = NULL, *seeds_s = NULL;
    for (int i = 0; i < rq->nargs; i++) {
        const char *n = rq->args[i].name, *v = rq->args[i].value ? rq->args[i].value : "";
        const char **dst = strcmp(n, "pos") == 0     ? &pos
                           : strcmp(n, "pits") == 0  ? &pits_s
                           : strcmp(n, "seeds") == 0 ? &seeds_s
                                                     : NULL;
        if (!dst)
            return error_answer(400, "unknown parameter '%s' (known: pos, pits, seeds)", n);
        if (*dst)
            return error_answer(400, "parameter '%s' given twice", n);
        *dst = v;
    }
    long pits = 0, seeds = -1;
    if (pits_s && util_parse_long(pits_s, 1, SOW_MAX_PITS, &pits) < 0)
        return error_answer(400, "pits '%s': expected a whole number in 1..%d", pits_s,
                            SOW_MAX_PITS);
    if (seeds_s && util_parse_long(seeds_s, 0, SOW_MAX_SEEDS, &seeds) < 0)
        return error_answer(400, "seeds '%s': expected a whole number in 0..%d", seeds_s,
                            SOW_MAX_SEEDS);

    /* as cli_game_setup: the position's size wins, --pits must agree */
    struct sow_error e;
    struct ruleset rs;
    if (pos) {
        int tp;
        if (strlen(pos) >= SOW_POS_MAXLEN)
            return error_answer(400, "position: longer than %d characters", SOW_POS_MAXLEN - 1);
        if (pos_token_pits(pos, &tp, &e) != SOW_OK)
            return error_answer(400, "position: %s", e.msg);
        if (pits && pits != tp)
            return error_answer(400, "position has %d holes per side but pits is %ld", tp, pits);
        pits = tp;
    }
    if (rules_init(&rs, rules, (int)pits, pos && seeds < 0 ? 4 : (int)seeds, &e) != SOW_OK) {
        struct ruleset any;
        if (rules_init(&any, rules, 0, -1, NULL) != SOW_OK)
            return error_answer(404, "%s", e.msg); /* no such rule set */
        return error_answer(400, "%s", e.msg);     /* a size it does not take */
    }
    sow_position p = rules_start(&rs);
    if (pos && pos_parse(&rs, pos, &p, &e) != SOW_OK)
        return error_answer(400, "position: %s", e.msg);
    if (legal)
        return answer_legal(&rs, &p);

    struct analysis *a = malloc(sizeof *a);
    if (!a)
        return error_answer(500, "out of memory");
    enum sow_status st = analyse(c, &rs, &p, a);
    struct serve_answer ans;
    if (st == SOW_OK)
        ans = mainline ? answer_line(&rs, &p, a) : answer_moves(&rs, &p, a);
    else if (st == SOW_E_INTERRUPTED)
        ans = error_answer(503, "the server is stopping");
    else if (st == SOW_E_NOMEM)
        ans = error_answer(503, "out of memory for this position");
    else
        ans = error_answer(500, "the search failed");
    free(a);
    return ans;
}
