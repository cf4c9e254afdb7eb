/* The threshold (attractor) method: threshold tests ge(p, t, c), each an
 * on-the-fly attractor over p's level with exits asked one level down, driven
 * MTD(f)-style to the value; Lazy SMP over the shared table.  It is the exact
 * mode's older twin (search_opts.attractor, checked against the closure
 * solver by the tests) and, with depth cuts, the bounded mode (--depth,
 * --time).  docs/solver.md explains the algorithm and why it is exact with
 * repetitions; the comments here say how.
 *
 * Notation (per position p with n seeds, mover's point of view):
 *   lo(p): best exit value the mover can force, endless play = -n;
 *   hi(p): same with endless play = +n;  V(p) = clamp(cyc(p), lo, hi).
 *   ge(p, t, c) = (c ? hi(p) : lo(p)) >= t;  V(p) >= t <=> ge(p, t, cyc >= t).
 */
#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"
#include "util.h"
#include "movepick.h"
#include "threshold.h"

static void check_stop(struct thr *th)
{
    struct search_ctx *s = th->s;
    /* done and timed_out are shared between the test's threads: atomic
     * accesses (relaxed: each is a flag set once, read until seen). */
    if (__atomic_load_n(th->done, __ATOMIC_RELAXED) || (s->o.stop && *s->o.stop))
        th->abort = true;
    else if (s->deadline > 0 && (s->o.cpu_clock ? util_cpu_now() : util_now()) > s->deadline) {
        __atomic_store_n(&s->timed_out, true, __ATOMIC_RELAXED);
        th->abort = true;
    }
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

/* What the table, then the tables (inside a covered level), know of node i
 * (threshold tx, flag cx): true if that decides it (set win or lose, by
 * level_set); else the table's move, if any, in *ttm. */
static inline __attribute__((always_inline)) bool node_probe(struct thr *th, struct level *L,
                                                             int i, int n, int tx, bool cx,
                                                             int win, int lose, bool c,
                                                             sow_move *ttm)
{
    const struct lnode *x = &L->node[i];
    struct tt_info e;
    if (tt_probe(th->tt, x->key, &e)) {
        int lb = cx ? e.hiL : e.loL, ub = cx ? e.hiU : e.loU;
        if (lb >= tx || ub < tx) {
            level_set(L, i, lb >= tx ? win : lose, e.move, c);
            return true;
        }
        *ttm = e.move;
    }
    if (th->tb && n <= th->tbmax && i > 0) {
        /* inside a covered level (only below a root in it): V bounds lo
         * from above and hi from below, and fixes one of them */
        int v;
        if (tb_probe(th->tb, &x->pos, &v)) {
            th->tb_hits++;
            int cy = rules_cycle_value(th->rs, &x->pos);
            int lb = cx ? v : (v > cy ? v : -n), ub = cx ? (v < cy ? v : n) : v;
            if (lb >= tx || ub < tx) {
                level_set(L, i, lb >= tx ? win : lose, SOW_MOVE_NONE, c);
                return true;
            }
        }
    }
    return false;
}

/* An exit ch (its child has nc seeds) from a node of side's threshold tx:
 * exit worth d - V(child) >= tx  <=>  NOT V(child) >= d - tx + 1; returns
 * V(child) >= d - tx + 1 (flag cw, depth for the child's level). */
static inline __attribute__((always_inline)) bool exit_ge(struct thr *th,
                                                          const struct sow_child *ch, int side,
                                                          int nc, int tx, bool cw, int depth)
{
    int d = ch->captured[side] - ch->captured[!side];
    int sq = d - tx + 1;
    if (sq <= -nc)
        return true;
    if (sq > nc)
        return false;
    /* nested tests use the next movelist and level slots */
    return vquery(th, &ch->pos, nc, sq, cw, depth);
}

/* The end of an untainted test of (t, c): every status found is stored;
 * exhausted (the level ran out before the root was decided): the open
 * nodes are outside Attr. */
static void level_store(struct thr *th, const struct level *L, int t, bool c, bool exhausted)
{
    for (int i = 0; i < L->cnt; i++) {
        const struct lnode *x = &L->node[i];
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
        sow_move ttm = SOW_MOVE_NONE;
        if (node_probe(th, L, i, n, tx, cx, win, lose, c, &ttm))
            continue;
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
        int nm = movepick_threshold(ml, side, ttm, x->key, th->tid, order);
        int pending = 0, dec = ST_OPEN, xdepth = x->depth, xpar = x->par;
        sow_move dm = SOW_MOVE_NONE;
        x->expanded = 1;
        for (int k = 0; k < nm && dec == ST_OPEN; k++) {
            const struct sow_child *ch = &ml->c[order[k]];
            th->visits++;
            int cap = ch->captured[0] + ch->captured[1];
            if (cap) {
                bool ge_child = exit_ge(th, ch, side, n - cap, tx, !(cw ^ xpar), xdepth - 1);
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
        if (!th->tainted)
            level_store(th, L, t, c, exhausted);
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
            search_progress(s, "test %d: value >= %d? %s  bounds [%d, %d]  nodes %llu", it, t,
                     yes ? "yes" : "no", *lower, *upper, (unsigned long long)search_total_nodes(s));
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

/* The PV's pick: the table's move first if it reaches v, else the first move
 * (generation order) that does, each by one exact test. */
bool threshold_pick(struct search_ctx *s, const sow_position *p, const struct sow_movelist *ml,
                    int v, int *pick)
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

bool threshold_value(struct search_ctx *s, const sow_position *q, int *v)
{
    struct target g;
    target_value(&g, s->rs, q);
    return solve_target(s, &g, v);
}

bool threshold_move_value(struct search_ctx *s, const sow_position *p, const struct sow_child *ch,
                          int *v)
{
    struct target g;
    target_move(&g, s->rs, p, ch);
    return solve_target(s, &g, v);
}

struct level *threshold_levels_new(void)
{
    return calloc(MAX_LEVELS, sizeof(struct level));
}

void threshold_levels_free(struct level *levels)
{
    for (int k = 0; levels && k < MAX_LEVELS; k++) {
        free(levels[k].node);
        free(levels[k].edge);
        free(levels[k].map);
        free(levels[k].work);
    }
    free(levels);
}

bool threshold_bounded(struct search_ctx *s, const sow_position *p,
                       const struct sow_movelist *ml, double t0, struct search_result *r)
{
    const struct ruleset *rs = s->rs;
    struct target g;
    target_value(&g, rs, p);
    /* Bounded: iterative deepening; at each depth prove what the cut tree
     * allows, then a heuristic search inside the proven bounds; the best
     * move is the first that reaches the heuristic value. */
    if (s->o.time_limit > 0)
        s->deadline = (s->o.cpu_clock ? util_cpu_now() : t0) + s->o.time_limit;
    int lower = g.lo, upper = g.hi, hv = clampi(g.cy, lower, upper);
    int maxd = s->o.depth > 0 ? s->o.depth : INT_MAX / 4;
    r->best = ml->c[0].move;
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
        for (int i = 0; i < ml->n && best == SOW_MOVE_NONE; i++) {
            struct target gm;
            bool yes;
            target_move(&gm, rs, p, &ml->c[i]);
            if (hl <= gm.lo) {
                best = ml->c[i].move;
                continue;
            }
            if (hl > gm.hi)
                continue;
            if (!par_test(s, &gm, hl, d, CUT_HEUR, false, &yes))
                goto deadline;
            if (yes)
                best = ml->c[i].move;
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
        search_progress(s, "depth %d: proven [%d, %d], heuristic %d, nodes %llu", d, lower, upper, hv,
                 (unsigned long long)search_total_nodes(s));
        if (lower == upper) {
            r->exact = true;
            r->value = lower;
            break;
        }
    }
deadline:
    return !(s->interrupted || s->too_deep || s->oom);
}
