/* The solver: threshold tests ge(p, t, c), each an on-the-fly attractor over
 * p's level with exits asked one level down, driven MTD(f)-style to the
 * value; Lazy SMP over the shared table.  docs/solver.md explains the
 * algorithm and why it is exact with repetitions; the comments here say how.
 *
 * Notation (per position p with n seeds, mover's point of view):
 *   lo(p): best exit value the mover can force, endless play = -n;
 *   hi(p): same with endless play = +n;  V(p) = clamp(cyc(p), lo, hi).
 *   ge(p, t, c) = (c ? hi(p) : lo(p)) >= t;  V(p) >= t <=> ge(p, t, cyc >= t).
 */
#include <limits.h>
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sow/search.h"
#include "sow/tt.h"
#include "sow/util.h"
#include "closure.h"
#include "solution.h"

#define MAX_LEVELS (SOW_MAX_SEEDS + 2) /* nested level tests: one per seed count */

enum cutmode { CUT_EXACT, CUT_BOUND, CUT_HEUR };

struct level;

struct thr {
    struct search_ctx *s;
    const struct ruleset *rs;
    struct tt *tt;
    const struct tb_set *tb;
    int tbmax;
    struct sow_relay_cache *cache;
    int tid;
    uint64_t nodes, visits, tb_hits; /* nodes: positions expanded */
    enum cutmode cut;
    bool abort;
    bool tainted;                 /* a depth cut was used: store nothing */
    volatile int *done;           /* another thread answered this test */
    int lvl;                      /* nesting of level tests */
    struct level *levels;         /* [MAX_LEVELS] work areas */
    struct sow_movelist *ml;      /* [MAX_LEVELS + 1] */
};

struct search_ctx {
    const struct ruleset *rs;
    struct search_opts o;
    struct tt *tt;
    int nthreads;
    struct thr **th;
    double deadline;              /* 0 = none */
    bool timed_out, too_deep, oom, interrupted;
    char why[320];                /* search_error's text when it is specific */
    bool quiet;                   /* no progress lines (PV, move values) */
    /* exact mode (closure.h): the last solved closure, kept for the PV and
     * move values; per-thread counters and relay caches */
    struct clos *clos;
    struct sow_relay_cache **caches;
    uint64_t *cnodes, *cvisits, *ctbh;
    /* exact mode: levels 0..memmax solved whole in memory (those of o.tb
     * borrowed, the rest built on the fly, memused positions of them) */
    struct tb_set *mem;
    int memmax, diskmax;
    bool memfull;                 /* the next level would not fit in RAM */
    uint64_t memused, dmoves, dentries;
};

static inline int clampi(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

static void check_stop(struct thr *th)
{
    struct search_ctx *s = th->s;
    /* done and timed_out are shared between the test's threads: atomic
     * accesses (relaxed: each is a flag set once, read until seen). */
    if (__atomic_load_n(th->done, __ATOMIC_RELAXED) || (s->o.stop && *s->o.stop))
        th->abort = true;
    else if (s->deadline > 0 && util_now() > s->deadline) {
        __atomic_store_n(&s->timed_out, true, __ATOMIC_RELAXED);
        th->abort = true;
    }
}

/* Order: the table's move, then exits by net capture, then the rest; helper
 * threads break ties differently so that Lazy SMP threads spread out. */
static int order_moves(struct thr *th, const struct sow_movelist *ml, int side, sow_move ttm,
                       uint64_t key, uint8_t *order)
{
    int score[SOW_MAX_PITS + 1];
    int n = ml->n;
    for (int i = 0; i < n; i++) {
        const struct sow_child *ch = &ml->c[i];
        int sc;
        if (ch->move == ttm)
            sc = 1 << 20;
        else if (ch->captured[0] | ch->captured[1])
            sc = (1 << 12) + 64 * (ch->captured[side] - ch->captured[!side]);
        else
            sc = 0;
        if (th->tid)
            sc += (int)((key * (uint64_t)(2 * th->tid + 1) >> (i * 3 % 58)) & 31);
        score[i] = sc;
        int j = i;
        while (j > 0 && score[order[j - 1]] < sc) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint8_t)i;
    }
    return n;
}

static int heuristic(const struct ruleset *rs, const sow_position *p, int n)
{
    int own = rules_side_seeds(rs, p, p->side), opp = rules_side_seeds(rs, p, !p->side);
    return clampi((own - opp) / 2, -n, n);
}

/* ---- one threshold test inside one level: an on-the-fly attractor ----
 *
 * ge(r, t, c) for the level of r.  R, the "reacher", is the side for which
 * endless play is a failure (r's mover if !c, else the other).  Attr = the
 * positions from which R forces an R-good exit (least fixed point).  Nodes
 * are discovered breadth-first from r through moves that keep the seed count
 * (parity 1 = the other side to move: threshold 1-t, flag !c); each expanded
 * node values its exits by fresh questions one level down (vquery) until one
 * decides it; a node's status, once known, is propagated to the nodes that
 * wait on it (R-node: any child in Attr; S-node: a counter of children not yet
 * in Attr).  The test stops as soon as r is decided; if the level is
 * exhausted first, every undecided node is outside Attr.  Every status found
 * is a fact about the position alone (no path is involved), so all of them
 * are stored: this is the graph-history-safe form of "a repetition counts as
 * c" (docs/solver.md). */

enum { ST_OPEN = 0, ST_IN = 1, ST_OUT = 2 }; /* in Attr, outside Attr */

struct lnode {
    sow_position pos;
    uint64_t key;
    int depth;       /* remaining depth (bounded mode) */
    int cnt;         /* S-node: children not yet known to be in Attr */
    int pred;        /* first predecessor edge, -1 none */
    int slot;        /* its cell in the map (cleared cell by cell) */
    uint8_t par, st, expanded;
    sow_move move;   /* move that decided it, if known */
};

struct ledge {
    int from, next;
    sow_move move;
};

struct level {
    struct lnode *node;
    int cnt, cap;
    struct ledge *edge;
    int ecnt, ecap;
    int32_t *map;    /* open addressing: node index or -1 */
    int mapcap;      /* power of two */
    int *work;       /* propagation stack */
    int wcap;
};

#define LEVEL_MAX_NODES (1 << 23)

static bool level_grow_map(struct level *L)
{
    int nc = L->mapcap ? L->mapcap * 2 : 1024;
    int32_t *m = malloc(sizeof *m * (size_t)nc);
    if (!m)
        return false;
    memset(m, 0xFF, sizeof *m * (size_t)nc);
    for (int i = 0; i < L->cnt; i++) {
        size_t h = (size_t)L->node[i].key & (size_t)(nc - 1);
        while (m[h] >= 0)
            h = (h + 1) & (size_t)(nc - 1);
        m[h] = i;
        L->node[i].slot = (int)h;
    }
    free(L->map);
    L->map = m;
    L->mapcap = nc;
    return true;
}

/* Empty the level for the next test: only the cells in use are cleared, so
 * a map grown once for a big level costs nothing for the small ones after. */
static void level_reset(struct level *L)
{
    for (int i = 0; i < L->cnt; i++)
        L->map[L->node[i].slot] = -1;
    L->cnt = L->ecnt = 0;
}

/* Index of position p in the level, added if new; -1 on memory limits. */
static int level_find_add(struct thr *th, struct level *L, const sow_position *p, uint64_t key,
                          int par, int depth)
{
    if (2 * (L->cnt + 1) > L->mapcap && !level_grow_map(L))
        goto oom;
    size_t mask = (size_t)L->mapcap - 1, h = (size_t)key & mask;
    for (; L->map[h] >= 0; h = (h + 1) & mask) {
        struct lnode *x = &L->node[L->map[h]];
        if (x->key == key && rules_same_position(&x->pos, p))
            return L->map[h];
    }
    if (L->cnt == L->cap) {
        if (L->cap >= LEVEL_MAX_NODES) {
            th->s->too_deep = true;
            th->abort = true;
            return -1;
        }
        int nc = L->cap ? L->cap * 2 : 256;
        struct lnode *nn = realloc(L->node, sizeof *nn * (size_t)nc);
        int *nw = realloc(L->work, sizeof *nw * (size_t)nc);
        if (nn)
            L->node = nn;
        if (nw)
            L->work = nw;
        if (!nn || !nw)
            goto oom;
        L->cap = L->wcap = nc;
    }
    struct lnode *x = &L->node[L->cnt];
    x->pos = *p;
    x->key = key;
    x->depth = depth;
    x->cnt = 0;
    x->pred = -1;
    x->par = (uint8_t)par;
    x->st = ST_OPEN;
    x->expanded = 0;
    x->move = SOW_MOVE_NONE;
    x->slot = (int)h;
    L->map[h] = L->cnt;
    return L->cnt++;
oom:
    th->s->oom = true;
    th->abort = true;
    return -1;
}

static bool level_edge(struct thr *th, struct level *L, int to, int from, sow_move m)
{
    if (L->ecnt == L->ecap) {
        int nc = L->ecap ? L->ecap * 2 : 1024;
        struct ledge *ne = realloc(L->edge, sizeof *ne * (size_t)nc);
        if (!ne) {
            th->s->oom = true;
            th->abort = true;
            return false;
        }
        L->edge = ne;
        L->ecap = nc;
    }
    L->edge[L->ecnt] = (struct ledge){from, L->node[to].pred, m};
    L->node[to].pred = L->ecnt++;
    return true;
}

/* Node i's status becomes st (by move m); propagate to waiting nodes.
 * rnode(x) = (x's flag c_x is false) = (par == 0) == !c. */
static void level_set(struct level *L, int i, int st, sow_move m, bool c)
{
    int sp = 0;
    L->node[i].st = (uint8_t)st;
    L->node[i].move = m;
    L->work[sp++] = i;
    while (sp) {
        int y = L->work[--sp];
        int yst = L->node[y].st;
        for (int e = L->node[y].pred; e >= 0; e = L->edge[e].next) {
            struct lnode *x = &L->node[L->edge[e].from];
            if (x->st != ST_OPEN)
                continue;
            bool rnode = (x->par == 0) == !c;
            if (yst == ST_IN) {
                if (rnode || --x->cnt == 0) {
                    x->st = ST_IN;
                    x->move = rnode ? L->edge[e].move : SOW_MOVE_NONE;
                    L->work[sp++] = L->edge[e].from;
                }
            } else if (!rnode) { /* S moves to a position outside Attr */
                x->st = ST_OUT;
                x->move = L->edge[e].move;
                L->work[sp++] = L->edge[e].from;
            }
        }
    }
}

static bool vquery(struct thr *th, const sow_position *p, int n, int s, bool cw, int depth);

/* ge(r, t, c): true if r's mover succeeds. */
static bool level_test(struct thr *th, const sow_position *r, uint64_t rkey, int n, int t, bool c,
                       bool cw, int depth)
{
    const struct ruleset *rs = th->rs;
    if (th->lvl >= (int)(MAX_LEVELS)) {
        th->s->too_deep = true;
        th->abort = true;
        return false;
    }
    struct level *L = &th->levels[th->lvl++];
    level_reset(L);
    bool tainted0 = th->tainted;
    th->tainted = false;
    struct sow_movelist *ml = &th->ml[th->lvl];
    if (level_find_add(th, L, r, rkey, 0, depth) < 0)
        goto out;
    for (int i = 0; i < L->cnt && L->node[0].st == ST_OPEN; i++) {
        if (L->node[i].st != ST_OPEN)
            continue;
        uint64_t nodes0 = th->nodes++;
        if ((nodes0 & 1023) == 0)
            check_stop(th);
        if (th->abort)
            goto out;
        struct lnode *x = &L->node[i];
        int tx = x->par ? 1 - t : t;
        bool cx = x->par ? !c : c, rnode = !cx;
        /* "mover succeeds" maps to IN for an R-node, OUT for an S-node */
        int win = rnode ? ST_IN : ST_OUT, lose = rnode ? ST_OUT : ST_IN;
        struct tt_info e;
        sow_move ttm = SOW_MOVE_NONE;
        if (tt_probe(th->tt, x->key, &e)) {
            int lb = cx ? e.hiL : e.loL, ub = cx ? e.hiU : e.loU;
            if (lb >= tx || ub < tx) {
                level_set(L, i, lb >= tx ? win : lose, e.move, c);
                continue;
            }
            ttm = e.move;
        }
        if (th->tb && n <= th->tbmax && i > 0) {
            /* inside a covered level (only below a root in it): V bounds lo
             * from above and hi from below, and fixes one of them */
            int v;
            if (tb_probe(th->tb, &x->pos, &v)) {
                th->tb_hits++;
                int cy = rules_cycle_value(rs, &x->pos);
                int lb = cx ? v : (v > cy ? v : -n), ub = cx ? (v < cy ? v : n) : v;
                if (lb >= tx || ub < tx) {
                    level_set(L, i, lb >= tx ? win : lose, SOW_MOVE_NONE, c);
                    continue;
                }
            }
        }
        rs->generate(rs, &x->pos, ml, th->cache, NULL);
        x = &L->node[i];
        int side = x->pos.side;
        if (ml->n == 0) {
            int sv = ml->settle[side] - ml->settle[!side];
            level_set(L, i, sv >= tx ? win : lose, SOW_MOVE_NONE, c);
            continue;
        }
        if (x->depth <= 0) {
            /* bounded mode: a cut, decided by the mode, never stored */
            th->tainted = true;
            bool ms = th->cut == CUT_HEUR ? heuristic(rs, &x->pos, n) >= tx : (cw ^ x->par);
            level_set(L, i, ms ? win : lose, SOW_MOVE_NONE, c);
            continue;
        }
        uint8_t order[SOW_MAX_PITS + 1];
        int nm = order_moves(th, ml, side, ttm, x->key, order);
        int pending = 0, dec = ST_OPEN, xdepth = x->depth, xpar = x->par;
        sow_move dm = SOW_MOVE_NONE;
        x->expanded = 1;
        for (int k = 0; k < nm && dec == ST_OPEN; k++) {
            const struct sow_child *ch = &ml->c[order[k]];
            th->visits++;
            int cap = ch->captured[0] + ch->captured[1];
            if (cap) {
                /* exit worth d - V(child) >= tx  <=>  NOT V(child) >= d - tx + 1 */
                int d = ch->captured[side] - ch->captured[!side];
                int nc = n - cap, sq = d - tx + 1;
                bool ge_child;
                if (sq <= -nc)
                    ge_child = true;
                else if (sq > nc)
                    ge_child = false;
                else /* nested tests use the next movelist and level slots */
                    ge_child = vquery(th, &ch->pos, nc, sq, !(cw ^ xpar), xdepth - 1);
                if (th->abort)
                    goto out;
                if (!ge_child) {
                    dec = win;
                    dm = ch->move;
                }
                continue;
            }
            int y = level_find_add(th, L, &ch->pos, tt_key(rs, &ch->pos), !xpar, xdepth - 1);
            if (y < 0)
                goto out;
            int yst = L->node[y].st;
            if (yst == ST_IN) {
                if (rnode) {
                    dec = ST_IN;
                    dm = ch->move;
                }
            } else if (yst == ST_OUT) {
                if (!rnode) {
                    dec = ST_OUT;
                    dm = ch->move;
                }
            } else {
                if (!level_edge(th, L, y, i, ch->move))
                    goto out;
                pending++;
            }
        }
        if (dec != ST_OPEN) {
            level_set(L, i, dec, dm, c);
            continue;
        }
        /* no move decided it: an S-node whose moves all lead into Attr is in */
        L->node[i].cnt = pending;
        if (!rnode && pending == 0)
            level_set(L, i, ST_IN, SOW_MOVE_NONE, c);
    }
    {
        bool exhausted = L->node[0].st == ST_OPEN;
        bool rroot = !c;
        bool in = L->node[0].st == ST_IN;
        bool result = rroot ? in : !in;
        if (!th->tainted) {
            for (int i = 0; i < L->cnt; i++) {
                struct lnode *x = &L->node[i];
                int st = x->st;
                if (st == ST_OPEN) {
                    if (!exhausted)
                        continue;
                    st = ST_OUT; /* least fixed point: never forced in */
                }
                int tx = x->par ? 1 - t : t;
                bool cx = x->par ? !c : c;
                bool ms = (st == ST_IN) == !cx;
                int v = ms ? tx : tx - 1, lo = -SOW_MAX_SEEDS, hi = SOW_MAX_SEEDS;
                if (ms)
                    tt_store(th->tt, x->key, cx ? lo : v, hi, cx ? v : lo, hi,
                             ms ? x->move : SOW_MOVE_NONE, 1);
                else
                    tt_store(th->tt, x->key, lo, cx ? hi : v, lo, cx ? v : hi, SOW_MOVE_NONE, 1);
            }
        }
        th->lvl--;
        th->tainted = th->tainted || tainted0;
        return result;
    }
out:
    th->lvl--;
    th->tainted = th->tainted || tainted0;
    return false;
}

/* "V(p) >= s?" for a position entered by an exit: a fresh question in p's
 * own level (tables first). */
static bool vquery(struct thr *th, const sow_position *p, int n, int s, bool cw, int depth)
{
    if (th->tb && n <= th->tbmax) {
        int v;
        if (tb_probe(th->tb, p, &v)) {
            th->tb_hits++;
            return v >= s;
        }
    }
    int cy = rules_cycle_value(th->rs, p);
    return level_test(th, p, tt_key(th->rs, p), n, s, cy >= s, cw, depth);
}

/* ---- root targets and the driver ---- */

enum tkind { T_VALUE, T_STAY, T_EXIT };

/* What the driver converges on: V(p); or the value of p's move to q, either
 * a move that stays in the level (clamp(cyc(p), -hi(q), -lo(q))) or an exit
 * (d - V(q)). */
struct target {
    enum tkind kind;
    const sow_position *p, *q;
    int n;      /* seeds of the position tested (p, or q) */
    int cy;     /* cyc(p) */
    int d;      /* T_EXIT: net capture of the move */
    int lo, hi; /* range of the target value */
};

/* One test "target >= t?" in thread th.  cw: a depth cut counts as success
 * for the root mover (bounded mode). */
static bool root_test(struct thr *th, const struct target *g, int t, int depth, bool cw)
{
    const struct ruleset *rs = th->rs;
    th->tainted = false;
    th->lvl = 0;
    switch (g->kind) {
    case T_VALUE:
        return vquery(th, g->p, g->n, t, cw, depth);
    case T_STAY: {
        /* clamp(cy, -hi(q), -lo(q)) >= t  <=>  NOT ge(q, 1 - t, !(cy >= t)) */
        bool cc = g->cy >= t;
        return !level_test(th, g->q, tt_key(rs, g->q), g->n, 1 - t, !cc, !cw, depth);
    }
    case T_EXIT: {
        int s = g->d - t + 1; /* d - V(q) >= t  <=>  NOT V(q) >= s */
        if (s <= -g->n)
            return false;
        if (s > g->n)
            return true;
        return !vquery(th, g->q, g->n, s, !cw, depth);
    }
    }
    return false;
}

/* Run one test on all threads (Lazy SMP): the first to answer wins and the
 * others stop; every answer is correct, so which one wins does not matter.
 * Returns false if stopped (interrupt, time, error). */
static bool par_test(struct search_ctx *s, const struct target *g, int t, int depth,
                     enum cutmode cut, bool cw, bool *out)
{
    volatile int done = 0;
    bool got = false, res = false;
    int nt = s->nthreads;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        struct thr *th = s->th[omp_get_thread_num()];
        th->done = &done;
        th->abort = false;
        th->cut = cut;
        bool v = root_test(th, g, t, depth, cw);
        if (!th->abort) {
#pragma omp critical(sow_search_answer)
            {
                if (!got) {
                    got = true;
                    res = v;
                }
            }
            __atomic_store_n(&done, 1, __ATOMIC_RELAXED);
        }
    }
    if (s->o.stop && *s->o.stop)
        s->interrupted = true;
    if (!got)
        return false;
    *out = res;
    return true;
}

static void progress(struct search_ctx *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void progress(struct search_ctx *s, const char *fmt, ...)
{
    if (!s->o.progress || s->quiet)
        return;
    char line[448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->o.progress(s->o.progress_arg, line);
}

static uint64_t total_nodes(const struct search_ctx *s)
{
    uint64_t n = s->dmoves;
    for (int i = 0; i < s->nthreads; i++)
        n += s->th[i]->visits + s->cvisits[i];
    return n;
}

/* The driver: null-window tests from the guess, MTD(f) style (guess, then
 * guess +- 1), widening the step while the answer keeps its direction and
 * bisecting once the value is bracketed.  With cut == CUT_BOUND a step proves
 * a lower bound with cuts failing the root mover or an upper bound with cuts
 * favouring it, and stops when neither proves anything.  false if stopped. */
static bool mtd(struct search_ctx *s, const struct target *g, int *lower, int *upper, int guess,
                int depth, enum cutmode cut)
{
    int it = 0, step = 1;
    bool had_yes = false, had_no = false;
    int t = clampi(guess, *lower + 1, *upper);
    while (*lower < *upper) {
        bool yes;
        if (cut == CUT_BOUND) {
            if (!par_test(s, g, t, depth, cut, false, &yes))
                return false;
            if (!yes) {
                bool yes2;
                if (!par_test(s, g, t, depth, cut, true, &yes2))
                    return false;
                if (yes2)
                    return true; /* undecided at this depth */
            }
        } else if (!par_test(s, g, t, depth, cut, false, &yes)) {
            return false;
        }
        it++;
        if (yes) {
            *lower = t;
            had_yes = true;
        } else {
            *upper = t - 1;
            had_no = true;
        }
        if (g->kind == T_VALUE && cut == CUT_EXACT)
            progress(s, "test %d: value >= %d? %s  bounds [%d, %d]  nodes %llu", it, t,
                     yes ? "yes" : "no", *lower, *upper, (unsigned long long)total_nodes(s));
        if (had_yes && had_no)
            t = *lower + (*upper - *lower + 1) / 2;
        else
            t = yes ? *lower + step : *upper - step + 1;
        step *= 2;
        t = clampi(t, *lower + 1, *upper);
    }
    return true;
}

static void target_value(struct target *g, const struct ruleset *rs, const sow_position *p)
{
    memset(g, 0, sizeof *g);
    g->kind = T_VALUE;
    g->p = p;
    g->n = rules_board_seeds(rs, p);
    g->cy = rules_cycle_value(rs, p);
    g->lo = -g->n;
    g->hi = g->n;
}

static void target_move(struct target *g, const struct ruleset *rs, const sow_position *p,
                        const struct sow_child *ch)
{
    memset(g, 0, sizeof *g);
    int n = rules_board_seeds(rs, p);
    int cap = ch->captured[0] + ch->captured[1];
    g->p = p;
    g->q = &ch->pos;
    g->cy = rules_cycle_value(rs, p);
    if (cap) {
        g->kind = T_EXIT;
        g->d = ch->captured[p->side] - ch->captured[!p->side];
        g->n = n - cap;
        g->lo = g->d - g->n;
        g->hi = g->d + g->n;
    } else {
        g->kind = T_STAY;
        g->n = n;
        g->lo = -n;
        g->hi = n;
    }
}

/* Guess: what the table knows (V lies in [loL, hiU]), else the cycle value. */
static int guess_for(struct search_ctx *s, const struct target *g)
{
    struct tt_info e;
    int guess = clampi(g->cy, g->lo, g->hi);
    if (g->kind == T_VALUE && tt_probe(s->tt, tt_key(s->rs, g->p), &e))
        guess = clampi(g->cy, e.loL, e.hiU);
    return clampi(guess, g->lo, g->hi);
}

/* Exact value of a target. false if stopped. */
static bool solve_target(struct search_ctx *s, const struct target *g, int *value)
{
    if (g->kind == T_VALUE && s->o.tb && g->n <= tb_max_level(s->o.tb)) {
        int v;
        if (tb_probe(s->o.tb, g->p, &v)) {
            s->th[0]->tb_hits++;
            *value = v;
            return true;
        }
    }
    int lower = g->lo, upper = g->hi;
    if (!mtd(s, g, &lower, &upper, guess_for(s, g), INT_MAX / 2, CUT_EXACT))
        return false;
    *value = lower;
    return true;
}

/* ---- public API ---- */

struct search_ctx *search_new(const struct ruleset *rs, const struct search_opts *o, char *err,
                              int errlen)
{
    struct search_ctx *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, (size_t)errlen, "out of memory");
        return NULL;
    }
    s->rs = rs;
    s->o = *o;
    s->nthreads = o->threads < 1 ? 1 : o->threads;
    /* The exact mode's closure solver does not use the table: only the
     * bounded mode and the attractor method get one of hash_mb MiB. */
    bool need_tt = o->attractor || o->depth > 0 || o->time_limit > 0;
    s->tt = tt_new(need_tt ? (o->hash_mb ? o->hash_mb : 1) : 0);
    s->th = calloc((size_t)s->nthreads, sizeof *s->th);
    if (!s->tt || !s->th) {
        snprintf(err, (size_t)errlen, "cannot allocate a %u MiB transposition table",
                 o->hash_mb);
        search_free(s);
        return NULL;
    }
    s->clos = clos_new(rs);
    s->caches = calloc((size_t)s->nthreads, sizeof *s->caches);
    s->cnodes = calloc((size_t)s->nthreads, sizeof *s->cnodes);
    s->cvisits = calloc((size_t)s->nthreads, sizeof *s->cvisits);
    s->ctbh = calloc((size_t)s->nthreads, sizeof *s->ctbh);
    if (!s->clos || !s->caches || !s->cnodes || !s->cvisits || !s->ctbh) {
        snprintf(err, (size_t)errlen, "out of memory");
        search_free(s);
        return NULL;
    }
    for (int i = 0; i < s->nthreads; i++) {
        struct thr *th = calloc(1, sizeof *th);
        s->th[i] = th;
        if (!th) {
            snprintf(err, (size_t)errlen, "out of memory");
            search_free(s);
            return NULL;
        }
        th->s = s;
        th->rs = rs;
        th->tt = s->tt;
        th->tb = o->tb;
        th->tbmax = o->tb ? tb_max_level(o->tb) : -1;
        th->tid = i;
        th->cache = rs->relay ? rules_cache_new(14) : NULL;
        s->caches[i] = th->cache;
        th->levels = calloc(MAX_LEVELS, sizeof *th->levels);
        th->ml = calloc(MAX_LEVELS + 1, sizeof *th->ml);
        if (!th->levels || !th->ml || (rs->relay && !th->cache)) {
            snprintf(err, (size_t)errlen, "out of memory");
            search_free(s);
            return NULL;
        }
    }
    return s;
}

void search_free(struct search_ctx *s)
{
    if (!s)
        return;
    for (int i = 0; s->th && i < s->nthreads; i++) {
        struct thr *th = s->th[i];
        if (!th)
            continue;
        for (int k = 0; th->levels && k < MAX_LEVELS; k++) {
            free(th->levels[k].node);
            free(th->levels[k].edge);
            free(th->levels[k].map);
            free(th->levels[k].work);
        }
        free(th->levels);
        free(th->ml);
        rules_cache_free(th->cache);
        free(th);
    }
    free(s->th);
    clos_free(s->clos);
    free(s->caches);
    free(s->cnodes);
    free(s->cvisits);
    free(s->ctbh);
    tb_close(s->mem);
    tt_free(s->tt);
    free(s);
}

void search_clear(struct search_ctx *s)
{
    tt_clear(s->tt);
    clos_reset(s->clos);
    tb_close(s->mem);
    s->mem = NULL;
}

void search_counters(const struct search_ctx *s, uint64_t *nodes, uint64_t *tb_hits)
{
    uint64_t h = 0;
    for (int i = 0; i < s->nthreads; i++)
        h += s->th[i]->tb_hits + s->ctbh[i];
    *nodes = total_nodes(s);
    *tb_hits = h;
}

uint64_t search_expanded(const struct search_ctx *s)
{
    uint64_t n = s->dentries;
    for (int i = 0; i < s->nthreads; i++)
        n += s->th[i]->nodes + s->cnodes[i];
    return n;
}

void search_reset_counters(struct search_ctx *s)
{
    for (int i = 0; i < s->nthreads; i++)
        s->th[i]->nodes = s->th[i]->visits = s->th[i]->tb_hits = s->cnodes[i] = s->cvisits[i] =
            s->ctbh[i] = 0;
    s->dmoves = s->dentries = 0;
}

enum sow_status search_status(const struct search_ctx *s)
{
    if (s->oom)
        return SOW_E_NOMEM;
    if (s->too_deep)
        return SOW_E_TOO_BIG;
    if (s->interrupted)
        return SOW_E_INTERRUPTED;
    return SOW_OK;
}

const char *search_error(const struct search_ctx *s)
{
    if (s->oom)
        return s->why[0] ? s->why : "out of memory";
    if (s->too_deep)
        return s->why[0] ? s->why : "a level of the position is too large for the in-memory search";
    return NULL;
}

static void begin(struct search_ctx *s)
{
    s->timed_out = s->too_deep = s->oom = s->interrupted = false;
    s->why[0] = 0;
    s->deadline = 0;
    s->quiet = false;
}

/* ---- exact mode: the levels solved in memory (tables.h) ---- */

static void level_progress(void *arg, int level, uint64_t entries, double frac, const char *phase)
{
    struct search_ctx *s = arg;
    if (frac >= 1.0)
        progress(s, "level %d solved in memory: %llu positions", level,
                 (unsigned long long)entries);
    (void)phase;
}

/* The set of levels in memory, created on first use (borrowing the loaded
 * tables); stays NULL when there are neither tables nor a budget. */
static bool mem_init(struct search_ctx *s)
{
    if (s->mem || (s->o.level_budget < 0 && !s->o.tb))
        return true;
    s->mem = tb_set_new(s->rs, "");
    if (!s->mem) {
        s->oom = true;
        return false;
    }
    if (s->o.tb)
        tb_set_borrow(s->mem, s->o.tb);
    s->memmax = s->diskmax = tb_max_level(s->mem);
    s->memused = 0;
    s->memfull = false;
    return true;
}

/* May level m (the next one) be built in memory, `used` positions being built
 * already?  Its positions in *E, the bytes its build needs in *need; *ram
 * tells a refusal for RAM from one for the budget.  Levels are added from the
 * bottom while the levels built stay within o.level_budget positions, a
 * level fits the index width, and its build (workspace, plus 3 bytes per
 * position kept) stays within 3/4 of RAM: the budget is the user's, memory
 * the machine's; what is refused is left to the closure. */
static bool level_fits(const struct search_ctx *s, int m, uint64_t used, uint64_t *E, double *need,
                       bool *ram)
{
    uint64_t budget = s->o.level_budget ? (uint64_t)s->o.level_budget : SEARCH_LEVEL_BUDGET;
    const struct tb_index *ix = tb_set_index(s->mem);
    *ram = false;
    if (s->o.level_budget < 0 || s->memfull || m > TB_MAX_LEVEL)
        return false;
    *E = tb_level_entries(ix, m);
    if (*E > budget || used > budget - *E || *E > TB_MAX_ENTRIES)
        return false;
    double mem = util_phys_memory();
    *need = tb_level_memory(ix, m) + 3.0 * (double)(used + *E);
    *ram = mem > 0 && *need > 0.75 * mem;
    return !*ram;
}

/* Positions ensure_levels(s, n) would build (a dry run). */
static uint64_t levels_plan(const struct search_ctx *s, int n)
{
    uint64_t used = s->memused, add = 0, E;
    double need;
    bool ram;
    for (int m = s->memmax + 1; s->mem && m <= n && level_fits(s, m, used, &E, &need, &ram); m++) {
        used += E;
        add += E;
    }
    return add;
}

/* Solve the lowest levels up to n whole in memory, as far as level_fits
 * allows.  false if stopped or failed. */
static bool ensure_levels(struct search_ctx *s, int n)
{
    if (!mem_init(s))
        return false;
    while (s->mem && s->memmax < n) {
        int m = s->memmax + 1;
        uint64_t E;
        double need;
        bool ram;
        if (!level_fits(s, m, s->memused, &E, &need, &ram)) {
            if (ram) {
                s->memfull = true;
                progress(s, "level %d (%llu positions) would need %.1f GB to build in memory: "
                            "left to the closure",
                         m, (unsigned long long)E, need / 1e9);
            }
            break;
        }
        /* levels under 100,000 positions on one thread: there start-up and
         * barriers cost more than a second thread saves (measured) */
        struct tb_build_opts bo = {
            .threads = E >= 100000 ? s->nthreads : 1,
            .stop = s->o.stop,
            .progress = level_progress,
            .ctx = s,
            .moves = &s->dmoves,
        };
        char err[256];
        int rc = tb_set_build_level(s->mem, m, &bo, err, sizeof err);
        if (rc != 0) {
            tb_set_release_work(s->mem);
            if (rc == TB_INTERRUPTED) {
                s->interrupted = true;
            } else {
                s->oom = true;
                snprintf(s->why, sizeof s->why, "%s", err);
            }
            return false;
        }
        s->dentries += E;
        s->memused += E;
        s->memmax = m;
    }
    if (s->mem)
        tb_set_release_work(s->mem);
    return true;
}

/* ---- exact mode: the closure solver (closure.h) ---- */
/* (closure: memory budget and refusal; issue 11) */

static void clos_progress(void *arg, const char *line)
{
    progress(arg, "%s", line);
}

/* The closure's memory budget: --memory, else 3/4 of RAM, less what the
 * levels in memory keep (3 bytes a position). */
static double clos_budget(const struct search_ctx *s)
{
    double b = s->o.memory;
    if (b <= 0) {
        double ram = util_phys_memory();
        b = ram > 0 ? 0.75 * ram : 0;
    }
    if (b > 0)
        b -= 3.0 * (double)s->memused;
    return b > 1 ? b : b > 0 ? 1 : 0;
}

/* Solve p's closure (replacing the kept one), refusing more than cap
 * positions.  Flags set for a stop or a lack of memory, not for the cap;
 * *info says what the build reached. */
static enum clos_err clos_run(struct search_ctx *s, const sow_position *p, uint64_t cap,
                              struct clos_info *info)
{
    struct clos_env env = {
        .threads = s->nthreads,
        .cache = s->caches,
        .stop = s->o.stop,
        .tb = s->mem ? s->mem : s->o.tb,
        .tb_hits_max = s->mem ? s->diskmax : s->o.tb ? tb_max_level(s->o.tb) : -1,
        .nodes = s->cnodes,
        .visits = s->cvisits,
        .tb_hits = s->ctbh,
        .max_nodes = cap,
        .memory = clos_budget(s),
        .work = s->o.work,
        .progress = clos_progress,
        .progress_arg = s,
        .info = info,
    };
    enum clos_err e = clos_build(s->clos, &env, p);
    if (e == CLOS_OK)
        progress(s, "closure of %llu positions solved (%.1f GB peak, %.1f bytes/position)",
                 (unsigned long long)clos_size(s->clos), info->peak / 1e9,
                 info->peak / (double)(info->positions ? info->positions : 1));
    else if (e == CLOS_STOPPED)
        s->interrupted = true;
    else if (e == CLOS_OOM)
        s->oom = true;
    return e;
}

/* Solve p's closure within the memory budget.  false if stopped/failed. */
static bool clos_solve(struct search_ctx *s, const sow_position *p)
{
    struct clos_info info;
    switch (clos_run(s, p, UINT64_MAX, &info)) {
    case CLOS_OK:
        return true;
    case CLOS_STOPPED:
    case CLOS_OOM:
        break;
    case CLOS_TOO_BIG: {
        s->too_deep = true;
        char below[96] = "";
        if (s->mem && s->memmax >= 0)
            snprintf(below, sizeof below, " above level %d (levels 0..%d solved in memory)",
                     s->memmax, s->memmax);
        if (info.why[0])
            snprintf(s->why, sizeof s->why, "the position's closure%s: %s", below, info.why);
        else
            snprintf(s->why, sizeof s->why,
                     "the position's closure%s reached %llu positions in %llu layers; the next "
                     "layer (~%llu positions) would need %.3g GB, the budget is %.3g GB: raise "
                     "--memory, or solve more levels first (--levels, or --tables with tables "
                     "built by sow tables build)",
                     below, (unsigned long long)info.positions, (unsigned long long)info.layers,
                     (unsigned long long)info.next_est, info.need / 1e9, clos_budget(s) / 1e9);
        break;
    }
    }
    return false;
}

enum sow_status search_save(struct search_ctx *s, const sow_position *root, const char *path,
                            struct sow_error *e)
{
    if (s->o.level_budget >= 0 || s->o.tb || s->o.attractor || !clos_find(s->clos, root, NULL, NULL, NULL, NULL))
        return sow_fail(e, SOW_E_INPUT,
                        "%s: a solution file is written from a solve by the closure alone", path);
    return sol_save(s->rs, s->clos, root, path, e);
}

/* lo, hi and V of p, from the kept closure or a new one. */
/* lo, hi and V of p from the levels in memory, if they hold p with bounds. */
static bool levels_lohi(const struct search_ctx *s, const sow_position *p, int n, int *lo, int *hi,
                        int *v)
{
    int l, h, vv;
    if (!s->mem || n > s->memmax || !tb_probe_bounds(s->mem, p, &l, &h, &vv))
        return false;
    if (lo)
        *lo = l;
    if (hi)
        *hi = h;
    if (v)
        *v = vv;
    return true;
}

/* lo, hi and V of p: from the levels in memory, the kept closure, or a new
 * solve.  A new solve that would build many positions of levels first tries
 * p's closure alone, capped at 1/256 of them (a closure position costs about
 * 3 level positions): some positions reach very little of their levels (the
 * game ends fast, or the board is big) and are then solved at once;
 * otherwise the try costs about 1%. */
static bool exact_lohi(struct search_ctx *s, const sow_position *p, int *lo, int *hi, int *v)
{
    int n = rules_board_seeds(s->rs, p);
    if (!mem_init(s))
        return false;
    if (levels_lohi(s, p, n, lo, hi, v) || clos_find(s->clos, p, lo, hi, v, NULL))
        return true;
    uint64_t plan = levels_plan(s, n);
    uint64_t first = s->o.closure_first ? (uint64_t)s->o.closure_first : SEARCH_CLOSURE_FIRST;
    if (s->o.closure_first >= 0 && plan >= first) {
        uint64_t cap = plan / 256 > 64 ? plan / 256 : 64;
        struct clos_info info;
        enum clos_err e = clos_run(s, p, cap, &info);
        if (e == CLOS_OK)
            return clos_find(s->clos, p, lo, hi, v, NULL);
        if (e != CLOS_TOO_BIG)
            return false;
        progress(s, "closure passed %llu positions: solving levels in memory first",
                 (unsigned long long)cap);
    }
    if (!ensure_levels(s, n))
        return false;
    if (levels_lohi(s, p, n, lo, hi, v))
        return true;
    if (!clos_solve(s, p))
        return false;
    return clos_find(s->clos, p, lo, hi, v, NULL);
}

/* V(p): the endgame tables if they hold p's level, else the closure. */
static bool exact_value(struct search_ctx *s, const sow_position *p, int *v)
{
    int n = rules_board_seeds(s->rs, p);
    if (!mem_init(s))
        return false;
    if (s->mem && n <= s->memmax && tb_probe(s->mem, p, v)) {
        if (n <= s->diskmax)
            s->ctbh[0]++;
        return true;
    }
    return exact_lohi(s, p, NULL, NULL, v);
}

/* Value of p's move ch: an exit nets d - V(q); a move staying in the level
 * is worth clamp(cyc(p), -hi(q), -lo(q)). */
static bool exact_move_value(struct search_ctx *s, const sow_position *p,
                             const struct sow_child *ch, int *val)
{
    int cap = ch->captured[0] + ch->captured[1];
    if (cap) {
        int vq;
        if (!exact_value(s, &ch->pos, &vq))
            return false;
        *val = ch->captured[p->side] - ch->captured[!p->side] - vq;
        return true;
    }
    int lo, hi;
    if (!exact_lohi(s, &ch->pos, &lo, &hi, NULL))
        return false;
    *val = clampi(rules_cycle_value(s->rs, p), -hi, -lo);
    return true;
}

static int exact_move_values(struct search_ctx *s, const sow_position *p, int *vals)
{
    struct sow_movelist ml;
    s->rs->generate(s->rs, p, &ml, s->th[0]->cache, NULL);
    if (ml.n && !exact_lohi(s, p, NULL, NULL, NULL)) /* children now in the closure */
        return -1;
    for (int i = 0; i < ml.n; i++)
        if (!exact_move_value(s, p, &ml.c[i], &vals[i]))
            return -1;
    return ml.n;
}

/* A principal variation from p0 (value v0): at each position a move worth the
 * position's value, until the end of the game, a repeated position
 * (r->pv_repeats) or SEARCH_MAX_PV moves.  The method says how a move worth v
 * is picked (index into ml; false if stopped) and how the value of a child
 * that stays in the level is found; an exit's child value follows from v. */
struct pv_method {
    bool (*pick)(struct search_ctx *s, const sow_position *p, const struct sow_movelist *ml, int v,
                 int *pick);
    bool (*value)(struct search_ctx *s, const sow_position *q, int *v);
};

static bool pv_walk(struct search_ctx *s, const sow_position *p0, int v0, struct search_result *r,
                    const struct pv_method *m)
{
    const struct ruleset *rs = s->rs;
    sow_position hist[SEARCH_MAX_PV + 1];
    sow_position p = *p0;
    int v = v0;
    r->pv_len = 0;
    r->pv_repeats = false;
    hist[0] = p;
    while (r->pv_len < SEARCH_MAX_PV) {
        struct sow_movelist ml;
        rs->generate(rs, &p, &ml, s->th[0]->cache, NULL);
        if (ml.n == 0)
            return true;
        int pick = -1;
        if (!m->pick(s, &p, &ml, v, &pick))
            return false;
        if (pick < 0)
            pick = 0; /* cannot happen: V is the best move value */
        const struct sow_child *ch = &ml.c[pick];
        r->pv[r->pv_len++] = ch->move;
        sow_position q = ch->pos;
        if (ch->captured[0] + ch->captured[1]) {
            v = (ch->captured[p.side] - ch->captured[!p.side]) - v;
        } else {
            for (int j = r->pv_len - 1; j >= 0; j--)
                if (rules_same_position(&hist[j], &q)) {
                    r->pv_repeats = true;
                    return true;
                }
            if (!m->value(s, &q, &v))
                return false;
        }
        p = q;
        hist[r->pv_len] = p;
    }
    return true;
}

/* Exact mode: the first move (generation order) worth v, from the levels or
 * the kept closure. */
static bool exact_pick(struct search_ctx *s, const sow_position *p, const struct sow_movelist *ml,
                       int v, int *pick)
{
    if (!exact_lohi(s, p, NULL, NULL, NULL))
        return false;
    for (int i = 0; i < ml->n && *pick < 0; i++) {
        int mv;
        if (!exact_move_value(s, p, &ml->c[i], &mv))
            return false;
        if (mv == v)
            *pick = i;
    }
    return true;
}

static const struct pv_method exact_method = {exact_pick, exact_value};

int search_value(struct search_ctx *s, const sow_position *p, int *value)
{
    struct target g;
    begin(s);
    if (!s->o.attractor)
        return exact_value(s, p, value) ? 0 : -1;
    target_value(&g, s->rs, p);
    return solve_target(s, &g, value) ? 0 : -1;
}

int search_move_values(struct search_ctx *s, const sow_position *p, int *vals)
{
    struct sow_movelist ml;
    begin(s);
    s->quiet = true;
    if (!s->o.attractor)
        return exact_move_values(s, p, vals);
    s->rs->generate(s->rs, p, &ml, s->th[0]->cache, NULL);
    for (int i = 0; i < ml.n; i++) {
        struct target g;
        target_move(&g, s->rs, p, &ml.c[i]);
        if (!solve_target(s, &g, &vals[i]))
            return -1;
    }
    return ml.n;
}

/* Does the move ch of p reach t?  (one exact test) */
static bool move_reaches(struct search_ctx *s, const sow_position *p, const struct sow_child *ch,
                         int t, bool *ok)
{
    struct target g;
    bool yes = false;
    target_move(&g, s->rs, p, ch);
    if (t <= g.lo)
        return true;
    if (t > g.hi)
        return false;
    *ok = par_test(s, &g, t, INT_MAX / 2, CUT_EXACT, false, &yes);
    return yes;
}

/* Attractor method: the table's move first if it reaches v, else the first
 * move (generation order) that does, each by one exact test. */
static bool attractor_pick(struct search_ctx *s, const sow_position *p,
                           const struct sow_movelist *ml, int v, int *pick)
{
    struct tt_info e;
    sow_move pref = SOW_MOVE_NONE;
    if (tt_probe(s->tt, tt_key(s->rs, p), &e))
        pref = e.move;
    int ip = rules_find_move(ml, pref);
    bool ok = true;
    if (ip >= 0 && move_reaches(s, p, &ml->c[ip], v, &ok))
        *pick = ip;
    for (int i = 0; ok && *pick < 0 && i < ml->n; i++)
        if (i != ip && move_reaches(s, p, &ml->c[i], v, &ok))
            *pick = i;
    return ok;
}

static bool attractor_value(struct search_ctx *s, const sow_position *q, int *v)
{
    struct target g;
    target_value(&g, s->rs, q);
    return solve_target(s, &g, v);
}

static const struct pv_method attractor_method = {attractor_pick, attractor_value};

static void finish(struct search_ctx *s, struct search_result *r, double t0, uint64_t n0,
                   uint64_t h0)
{
    uint64_t n, h;
    search_counters(s, &n, &h);
    r->nodes = n - n0;
    r->expanded = search_expanded(s) - r->expanded;
    r->tb_hits = h - h0;
    r->seconds = util_now() - t0;
}

int search_solve(struct search_ctx *s, const sow_position *p, struct search_result *r)
{
    const struct ruleset *rs = s->rs;
    memset(r, 0, sizeof *r);
    begin(s);
    tt_new_generation(s->tt);
    double t0 = util_now();
    uint64_t n0, h0;
    search_counters(s, &n0, &h0);
    r->expanded = search_expanded(s); /* the baseline, until finish() */
    r->best = SOW_MOVE_NONE;

    struct sow_movelist ml;
    rs->generate(rs, p, &ml, s->th[0]->cache, NULL);
    if (ml.n == 0) {
        r->over = r->exact = true;
        r->value = r->lower = r->upper = ml.settle[p->side] - ml.settle[!p->side];
        finish(s, r, t0, n0, h0);
        return 0;
    }
    struct target g;
    target_value(&g, rs, p);

    if (s->o.depth <= 0 && s->o.time_limit <= 0 && !s->o.attractor) {
        if (!exact_value(s, p, &r->value))
            goto stopped;
        r->exact = true;
        r->lower = r->upper = r->value;
        s->quiet = true;
        if (!pv_walk(s, p, r->value, r, &exact_method))
            goto stopped;
        r->best = r->pv_len ? r->pv[0] : ml.c[0].move;
        finish(s, r, t0, n0, h0);
        return 0;
    }
    if (s->o.depth <= 0 && s->o.time_limit <= 0) {
        if (!solve_target(s, &g, &r->value))
            goto stopped;
        r->exact = true;
        r->lower = r->upper = r->value;
        s->quiet = true;
        if (!pv_walk(s, p, r->value, r, &attractor_method))
            goto stopped;
        r->best = r->pv_len ? r->pv[0] : ml.c[0].move;
        finish(s, r, t0, n0, h0);
        return 0;
    }

    /* Bounded: iterative deepening; at each depth prove what the cut tree
     * allows, then a heuristic search inside the proven bounds; the best
     * move is the first that reaches the heuristic value. */
    if (s->o.time_limit > 0)
        s->deadline = t0 + s->o.time_limit;
    int lower = g.lo, upper = g.hi, hv = clampi(g.cy, lower, upper);
    int maxd = s->o.depth > 0 ? s->o.depth : INT_MAX / 4;
    r->best = ml.c[0].move;
    r->lower = lower;
    r->upper = upper;
    r->value = hv;
    for (int d = 1; d <= maxd; d++) {
        int l = lower, u = upper;
        if (!mtd(s, &g, &l, &u, hv, d, CUT_BOUND))
            break;
        int hl = l, hu = u;
        if (!mtd(s, &g, &hl, &hu, clampi(hv, l, u), d, CUT_HEUR))
            break;
        sow_move best = SOW_MOVE_NONE;
        for (int i = 0; i < ml.n && best == SOW_MOVE_NONE; i++) {
            struct target gm;
            bool yes;
            target_move(&gm, rs, p, &ml.c[i]);
            if (hl <= gm.lo) {
                best = ml.c[i].move;
                continue;
            }
            if (hl > gm.hi)
                continue;
            if (!par_test(s, &gm, hl, d, CUT_HEUR, false, &yes))
                goto deadline;
            if (yes)
                best = ml.c[i].move;
        }
        lower = l;
        upper = u;
        hv = hl;
        r->depth = d;
        r->lower = lower;
        r->upper = upper;
        r->value = hv;
        if (best != SOW_MOVE_NONE)
            r->best = best;
        progress(s, "depth %d: proven [%d, %d], heuristic %d, nodes %llu", d, lower, upper, hv,
                 (unsigned long long)total_nodes(s));
        if (lower == upper) {
            r->exact = true;
            r->value = lower;
            break;
        }
    }
deadline:
    if (s->interrupted || s->too_deep || s->oom)
        goto stopped;
    /* The bounded mode reports its best move as the whole PV, even when the
     * bounds met: a full PV needs exact solves of the positions along it,
     * which --depth/--time promise not to start (they can take far longer). */
    r->pv_len = 1;
    r->pv[0] = r->best;
    finish(s, r, t0, n0, h0);
    return 0;
stopped:
    finish(s, r, t0, n0, h0);
    r->interrupted = true;
    return -1;
}
