/* sow serve's answers (serve.h): request in, JSON and status out; the
 * analysis itself is sow/analyse.h's, given the context's tables, shared
 * levels and solution files. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/analyse_internal.h"
#include "analyse/jsonbuf.h"
#include "serve/known.h"
#include "serve/serve.h"
#include "serve/www.h"
#include "sow/analyse.h"
#include "sow/position.h"
#include "util.h"

static const char json_type[] = "application/json";

/* A JSON text (malloc'd, or NULL: out of memory) as an answer. */
static struct serve_answer json_answer(char *s, size_t len, int status)
{
    if (!s) {
        static const char oom[] = "{\"error\":\"out of memory\"}";
        s = strdup(oom);
        return (struct serve_answer){500, s, s ? sizeof oom - 1 : 0, json_type, false};
    }
    return (struct serve_answer){status, s, len, json_type, false};
}

static struct serve_answer jb_answer(struct jbuf *b, int status)
{
    size_t len;
    char *s = jbuf_take(b, &len);
    return json_answer(s, len, status);
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
    jbuf_printf(&b, "{\"error\":");
    jbuf_str(&b, msg);
    jbuf_printf(&b, "}");
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
    c->stop = stop;
    c->levels = SERVE_LEVELS_DEFAULT;
    pthread_mutex_init(&c->lock, NULL);
}

void serve_ctx_free(struct serve_ctx *c)
{
    serve_sets_free(c);
    pthread_mutex_destroy(&c->lock);
}

/* ---- the request ------------------------------------------------------------ */

static bool rules_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '-' || ch == '_';
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
    jbuf_printf(&b, "{\"rules\":");
    jbuf_str(&b, rs->name);
    jbuf_printf(&b, ",\"pits\":%d,\"pos\":", rs->pits);
    jbuf_str(&b, pos);
    jbuf_printf(&b, ",\"side\":\"%c\",\"over\":%s,\"end\":", p->side ? 'B' : 'A',
              ml.n ? "false" : "true");
    if (ml.n) {
        jbuf_printf(&b, "null,\"settle\":null");
    } else {
        jbuf_str(&b, rules_end_name(ml.end));
        jbuf_printf(&b, ",\"settle\":[%d,%d]", ml.settle[0], ml.settle[1]);
    }
    int s2[2];
    rules_repetition_settle2(rs, p, s2);
    jbuf_printf(&b, ",\"repetition\":[%g,%g],\"moves\":[", s2[0] / 2.0, s2[1] / 2.0);
    for (int k = 0; k < ml.n; k++) {
        const struct sow_child *ch = &ml.c[k];
        char mv[SOW_MOVE_MAXLEN];
        move_format(rs, p->side, ch->move, mv, sizeof mv);
        pos_format(rs, &ch->pos, pos, sizeof pos);
        jbuf_printf(&b, "%s{\"move\":", k ? "," : "");
        jbuf_str(&b, mv);
        jbuf_printf(&b, ",\"pos\":");
        jbuf_str(&b, pos);
        jbuf_printf(&b, ",\"captured\":[%d,%d]}", ch->captured[0], ch->captured[1]);
    }
    jbuf_printf(&b, "]}");
    return jb_answer(&b, 200);
}

/* The rule sets of the registry: default size, the states a position may
 * have (those rules_validate takes), and the limits of a board. */
static struct serve_answer answer_rules(void)
{
    struct jbuf b = {0};
    jbuf_printf(&b, "{\"rules\":[");
    for (int i = 0; sow_rule_names[i]; i++) {
        struct ruleset rs;
        if (rules_init(&rs, sow_rule_names[i], 0, -1, NULL) != SOW_OK)
            continue;
        jbuf_printf(&b, "%s{\"name\":", i ? "," : "");
        jbuf_str(&b, rs.name);
        jbuf_printf(&b, ",\"pits\":%d,\"seeds\":%d,\"relay\":%s,\"cycle\":\"%s\",\"states\":[",
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
            jbuf_printf(&b, "%s", n++ ? "," : "");
            jbuf_str(&b, tok ? tok + 1 : "-");
        }
        jbuf_printf(&b, "],\"start\":\"%s\"}", start);
    }
    jbuf_printf(&b, "],\"max_pits\":%d,\"max_seeds\":%d}", SOW_MAX_PITS, SOW_MAX_SEEDS);
    return jb_answer(&b, 200);
}

/* p analysed (sow/analyse.h) with the context's tables, shared levels and
 * solution files of its rule set and size, as GET /api/RULES answers or, if
 * mainline, GET /api/RULES/mainline. */
static struct serve_answer answer_analysis(struct serve_ctx *c, const struct ruleset *rs,
                                           const sow_position *p, bool mainline)
{
    struct serve_set *set = serve_set_of(c, rs); /* first: it finds the set's solution files */
    const struct sol *sols[SERVE_MAX_SOLS];
    int nsols = serve_solutions_of(c, rs, sols);
    const struct analyse_opts o = {
        .threads = c->threads,
        .seconds = c->time_budget,
        .tb = set ? set->tb : NULL,
        .hash_mb = c->hash_mb,
        .memory = c->memory,
        .stop = c->stop,
        .levels = set ? set->levels : NULL,
        .solutions = sols,
        .nsolutions = nsols,
    };
    struct analysis *a = malloc(sizeof *a);
    if (!a)
        return error_answer(500, "out of memory");
    struct sow_error e;
    enum sow_status st = analyse_position(rs, p, &o, a, &e);
    struct serve_answer ans;
    if (st == SOW_OK) {
        char *s = mainline ? analyse_json_line(rs, p, a) : analyse_json(rs, p, a);
        ans = json_answer(s, s ? strlen(s) : 0, 200);
    } else if (st == SOW_E_INTERRUPTED) {
        ans = error_answer(503, "the server is stopping");
    } else if (st == SOW_E_NOMEM) {
        ans = error_answer(503, "out of memory for this position");
    } else {
        ans = error_answer(500, "the search failed");
    }
    free(a);
    return ans;
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

    return answer_analysis(c, &rs, &p, mainline);
}
