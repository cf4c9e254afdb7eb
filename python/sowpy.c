/* python/sowpy.h: the C side of the Python module, over libsow's public API. */
#include "sowpy.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sow/analyse.h"
#include "sow/position.h"
#include "sow/search.h"
#include "sow/status.h"
#include "sow/tables_probe.h"
#include "sow/version.h"

struct sowpy_rules {
    struct ruleset rs;
};

struct sowpy_tables {
    struct tb_set *set;
};

static int fail(char *err, int errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, int errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, (size_t)errlen, fmt, ap);
    va_end(ap);
    return -1;
}

const char *sowpy_version(void)
{
    return sow_version();
}

const char *sowpy_commit(void)
{
    return sow_commit();
}

const char *sowpy_rule_name(int i)
{
    for (int k = 0; sow_rule_names[k]; k++)
        if (k == i)
            return sow_rule_names[k];
    return NULL;
}

struct sowpy_rules *sowpy_rules_new(const char *name, int pits, int seeds, char *err, int errlen)
{
    struct sowpy_rules *r = calloc(1, sizeof *r);
    if (!r) {
        fail(err, errlen, "out of memory");
        return NULL;
    }
    struct sow_error e;
    if (rules_init(&r->rs, name, pits, seeds, &e) != SOW_OK) {
        fail(err, errlen, "%s", e.msg);
        free(r);
        return NULL;
    }
    return r;
}

void sowpy_rules_free(struct sowpy_rules *r)
{
    free(r);
}

const char *sowpy_rules_name(const struct sowpy_rules *r)
{
    return r->rs.name;
}

int sowpy_rules_pits(const struct sowpy_rules *r)
{
    return r->rs.pits;
}

int sowpy_rules_seeds(const struct sowpy_rules *r)
{
    return r->rs.seeds;
}

int sowpy_token_pits(const char *tok, char *err, int errlen)
{
    struct sow_error e;
    int pits;
    if (pos_token_pits(tok, &pits, &e) != SOW_OK)
        return fail(err, errlen, "%s", e.msg);
    return pits;
}

int sowpy_parse(const struct sowpy_rules *r, const char *tok, sow_position *out, char *err,
                int errlen)
{
    struct sow_error e;
    if (pos_parse(&r->rs, tok, out, &e) != SOW_OK)
        return fail(err, errlen, "%s", e.msg);
    return 0;
}

void sowpy_start(const struct sowpy_rules *r, sow_position *out)
{
    *out = rules_start(&r->rs);
}

void sowpy_format(const struct sowpy_rules *r, const sow_position *p, char *buf, int len)
{
    pos_format(&r->rs, p, buf, (size_t)len);
}

void sowpy_draw(const struct sowpy_rules *r, const sow_position *p, char *buf, int len)
{
    buf[0] = 0;
    FILE *f = fmemopen(buf, (size_t)len, "w");
    if (!f)
        return;
    pos_draw(f, &r->rs, p);
    fclose(f);
    buf[len - 1] = 0;
}

void sowpy_moves(const struct sowpy_rules *r, const sow_position *p, struct sowpy_moves *out)
{
    struct sow_movelist ml;
    rules_generate(&r->rs, p, &ml);
    memset(out, 0, sizeof *out);
    out->n = ml.n;
    for (int i = 0; i < ml.n; i++) {
        move_format(&r->rs, p->side, ml.c[i].move, out->name[i], SOWPY_MOVE_LEN);
        out->pos[i] = ml.c[i].pos;
        out->captured[i][0] = ml.c[i].captured[0];
        out->captured[i][1] = ml.c[i].captured[1];
    }
    out->end = (int)ml.end;
    out->end_name = ml.n ? NULL : rules_end_name(ml.end);
    out->settle[0] = ml.n ? 0 : ml.settle[0];
    out->settle[1] = ml.n ? 0 : ml.settle[1];
}

struct sowpy_tables *sowpy_tables_open(const struct sowpy_rules *r, const char *dir, char *err,
                                       int errlen)
{
    struct sowpy_tables *t = calloc(1, sizeof *t);
    if (!t) {
        fail(err, errlen, "out of memory");
        return NULL;
    }
    struct sow_error e;
    if (tb_open(&r->rs, dir, &t->set, &e) != SOW_OK) {
        fail(err, errlen, "%s", e.msg);
        free(t);
        return NULL;
    }
    return t;
}

void sowpy_tables_free(struct sowpy_tables *t)
{
    if (t)
        tb_close(t->set);
    free(t);
}

int sowpy_tables_max_level(const struct sowpy_tables *t)
{
    return tb_max_level(t->set);
}

int sowpy_tables_probe(const struct sowpy_tables *t, const sow_position *p, int *value)
{
    return tb_probe(t->set, p, value) ? 1 : 0;
}

/* Ctrl-C during a solve: the handler can only reach a flag of static
 * storage; it is used only while a solve runs on the main thread. */
static volatile sig_atomic_t sowpy_stop;

static void on_sigint(int sig)
{
    (void)sig;
    sowpy_stop = 1;
}

/* Ctrl-C stops a long call made from Python's main thread (sowpy_stop);
 * the caller puts *old back when the call returns. */
static void catch_sigint(struct sigaction *old)
{
    struct sigaction sa;
    sowpy_stop = 0;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, old);
}

int sowpy_solve(const struct sowpy_rules *r, const sow_position *p,
                const struct sowpy_solve_opts *o, struct sowpy_result *res, char *err,
                int errlen)
{
    memset(res, 0, sizeof *res);
    if (o->depth < 0 || o->seconds < 0)
        return fail(err, errlen, "depth and time must not be negative");
    if (o->depth > 0 && o->seconds > 0)
        return fail(err, errlen, "depth and time exclude each other");
    bool bounded = o->depth > 0 || o->seconds > 0;
    if (o->moves && bounded)
        return fail(err, errlen, "moves=True gives exact values: not with depth or time");
    bool main_thread = syscall(SYS_gettid) == getpid();
    volatile sig_atomic_t local_stop = 0;
    struct search_opts so = {
        .threads = o->threads > 0 ? o->threads : 1,
        .hash_mb = o->hash_mb ? o->hash_mb : 64,
        .depth = o->depth,
        .time_limit = o->seconds,
        .tb = o->tables ? o->tables->set : NULL,
        .level_budget = o->levels,
        .stop = main_thread ? &sowpy_stop : &local_stop,
    };
    struct search_ctx *s;
    struct sow_error e;
    if (search_new(&r->rs, &so, &s, &e) != SOW_OK)
        return fail(err, errlen, "%s", e.msg);
    struct sigaction old;
    if (main_thread)
        catch_sigint(&old);
    struct search_result sr;
    int rc = search_solve(s, p, &sr) == SOW_OK ? 0 : -1;
    struct sow_movelist ml;
    rules_generate(&r->rs, p, &ml);
    int vals[SOW_MAX_PITS + 1];
    if (rc == 0 && o->moves) {
        int n = search_move_values(s, p, vals);
        if (n < 0)
            rc = -1;
        else
            res->nmoves = n;
    }
    if (main_thread)
        sigaction(SIGINT, &old, NULL);
    if (rc < 0) {
        const struct sow_error *why = search_last_error(s);
        int ret = why->status == SOW_E_INTERRUPTED ? SOWPY_INTERRUPTED : -1;
        fail(err, errlen, "%s", why->msg[0] ? why->msg : sow_status_name(why->status));
        search_free(s);
        return ret;
    }
    res->over = sr.over;
    res->exact = sr.exact;
    res->value = sr.value;
    res->lower = sr.lower;
    res->upper = sr.upper;
    res->depth = sr.depth;
    res->pv_repeats = sr.pv_repeats;
    if (sr.best != SOW_MOVE_NONE)
        move_format(&r->rs, p->side, sr.best, res->best, SOWPY_MOVE_LEN);
    /* The PV as names, each relative to the position it is played in. */
    sow_position q = *p;
    struct sow_movelist qm;
    for (int k = 0; k < sr.pv_len && k < SOWPY_MAX_PV; k++) {
        rules_generate(&r->rs, &q, &qm);
        int i = rules_find_move(&qm, sr.pv[k]);
        if (i < 0)
            break;
        move_format(&r->rs, q.side, sr.pv[k], res->pv[k], SOWPY_MOVE_LEN);
        res->pv_len = k + 1;
        q = qm.c[i].pos;
    }
    for (int i = 0; i < res->nmoves; i++) {
        move_format(&r->rs, p->side, ml.c[i].move, res->move[i], SOWPY_MOVE_LEN);
        res->move_value[i] = vals[i];
    }
    search_counters(s, &res->nodes, &res->tb_hits);
    res->expanded = search_expanded(s);
    res->seconds = sr.seconds;
    search_free(s);
    return 0;
}

int sowpy_move_parse(const struct sowpy_rules *r, const sow_position *p, const char *s,
                     char *out, int outlen, char *err, int errlen)
{
    struct sow_error e;
    sow_move m;
    if (move_parse(&r->rs, p, s, &m, &e) != SOW_OK)
        return fail(err, errlen, "%s", e.msg);
    move_format(&r->rs, p->side, m, out, (size_t)outlen);
    return 0;
}

int sowpy_analyse(const struct sowpy_rules *r, const sow_position *p, double seconds,
                  int threads, const struct sowpy_tables *tables, char **json, char *err,
                  int errlen)
{
    *json = NULL;
    if (!(seconds > 0))
        return fail(err, errlen, "time must be more than 0 seconds");
    bool main_thread = syscall(SYS_gettid) == getpid();
    volatile sig_atomic_t local_stop = 0;
    struct analyse_opts o = {
        .threads = threads > 0 ? threads : 1,
        .seconds = seconds,
        .tb = tables ? tables->set : NULL,
        .stop = main_thread ? &sowpy_stop : &local_stop,
    };
    struct analysis *a = malloc(sizeof *a);
    if (!a)
        return fail(err, errlen, "out of memory");
    struct sigaction old;
    if (main_thread)
        catch_sigint(&old);
    struct sow_error e = {0};
    enum sow_status st = analyse_position(&r->rs, p, &o, a, &e);
    if (main_thread)
        sigaction(SIGINT, &old, NULL);
    int rc = 0;
    if (st == SOW_E_INTERRUPTED)
        rc = SOWPY_INTERRUPTED;
    else if (st != SOW_OK)
        rc = fail(err, errlen, "%s", e.msg[0] ? e.msg : sow_status_name(st));
    else if (!(*json = analyse_json(&r->rs, p, a)))
        rc = fail(err, errlen, "out of memory");
    free(a);
    return rc;
}

void sowpy_free(void *ptr)
{
    free(ptr);
}
