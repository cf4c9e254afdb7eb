/* A root the tables hold (engine.c): its value, and a move that keeps it.
 * Part of the engine: engine_internal.h maps its files.
 *
 * The tables give V(p) but not which move keeps it.  An exit (a move that
 * captures or ends the game) is worth its net capture minus the child's
 * value; a move that stays in the level is worth clamp(cyc(p), -hi(q),
 * -lo(q)) for the child q (docs/rules.md "Value of a position"), and
 * needs q's forced bounds lo, hi.  They come from the levels that hold
 * bounds (those the engine solved in memory, tables with bounds files),
 * else from the exact solver's closure of the root (closure.h), built here
 * within a share of the move's limits and kept for the next roots, which
 * it often holds too.  Without them the search chooses: its horizon sees
 * V(q) of in-level children only as an estimate, and in long cycles it can
 * pick a move worth less than V(p) (oware 2x6 0,2,4,0,0,2/0,0,0,1,0,0/A
 * with tables 0..24: V = 3; 2A keeps it, the search at 0.2 s played 6A,
 * worth 1).
 *
 * The pick: the first exit worth V(p), at once (it makes progress).  Else
 * the moves that stay in the level worth V(p), less those whose position
 * the game already had at this level (the repetition rule would end it
 * there): one is played at once; among two or more the search chooses
 * (root_known.allow), since equal values do not tell which of them makes
 * progress toward an exit the mover can force (a move that keeps the
 * force is worth V(p) however long it waits; docs/rules.md "Value of a
 * position"), and the search sees the game's repetitions and prefers a
 * line reaching the exit (known_inlevel).  None: the search chooses among
 * all the moves, as it does where the values are not known. */
#include "engine_internal.h"
#include "solver/closure.h"
#include "watch.h"

/* The closure's share of a move's time, and the positions a second of it
 * may take at most (the closure expands and solves about 1.5-2 M positions
 * a second on oware 2x6: a cap it should reach in about the share). */
#define ROOT_CLOSURE_SHARE 0.5
#define ROOT_CLOSURE_RATE 1500000.0
/* The cap of a search limited by depth or nodes alone, which its caller
 * expects to last about what its depth says: a closure refused at the cap
 * has expanded about that many positions first (a few tenths of a second). */
#define ROOT_CLOSURE_UNTIMED 500000.0
/* Bytes the closure may hold per position of its cap (about 33 are used
 * on oware 2x6; the rest is headroom for the level phase). */
#define ROOT_CLOSURE_BYTES 64.0

static int clampi(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* Does q repeat a position of the game (hist[from..nhist), p's level)? */
static bool in_history(const sow_position *q, const sow_position *hist,
                       int from, int nhist)
{
    for (int j = from; j < nhist; j++)
        if (rules_same_position(&hist[j], q))
            return true;
    return false;
}

/* The move values the tables give: exits always, in-level moves where the
 * child's level holds bounds.  known[i]: vals[i] is exact; exit[i]: move i
 * captures or ends the game.  Returns how many moves are left unknown. */
static int table_values(const struct engine *e, const sow_position *p,
                        const struct sow_movelist *ml, int *vals, bool *known, bool *exit)
{
    const struct ruleset *rs = e->rs;
    int n = seeds_on_board(rs, p), unknown = 0;
    for (int i = 0; i < ml->n; i++) {
        const struct sow_child *ch = &ml->c[i];
        int net = ch->captured[p->side] - ch->captured[!p->side], v, lo, hi;
        struct sow_movelist cm;
        known[i] = false;
        rs->generate(rs, &ch->pos, &cm, NULL, NULL);
        exit[i] = cm.n == 0 || seeds_on_board(rs, &ch->pos) != n;
        if (cm.n == 0) {
            vals[i] = net - (cm.settle[ch->pos.side] - cm.settle[!ch->pos.side]);
            known[i] = true;
        } else if (seeds_on_board(rs, &ch->pos) != n) {
            if (tb_probe(e->set, &ch->pos, &v)) {
                vals[i] = net - v;
                known[i] = true;
            } else {
                unknown++;
            }
        } else if (tb_probe_bounds(e->set, &ch->pos, &lo, &hi, &v)) {
            vals[i] = clampi(rules_cycle_value(rs, p), -hi, -lo);
            known[i] = true;
        } else {
            unknown++;
        }
    }
    return unknown;
}

/* The in-level moves' values from the kept closure, if it holds p's
 * children. */
static bool closure_values(const struct engine *e, const sow_position *p,
                           const struct sow_movelist *ml, int *vals, bool *known)
{
    if (!e->clos || !e->clos_solved || !clos_find(e->clos, p, NULL, NULL, NULL, NULL))
        return false;
    for (int i = 0; i < ml->n; i++) {
        int lo, hi;
        if (known[i])
            continue;
        if (!clos_find(e->clos, &ml->c[i].pos, &lo, &hi, NULL, NULL))
            return false;
        vals[i] = clampi(rules_cycle_value(e->rs, p), -hi, -lo);
        known[i] = true;
    }
    return true;
}

static bool engine_halted(void *arg)
{
    struct engine *e = arg;
    return atomic_load_explicit(&e->stop, memory_order_relaxed) ||
           atomic_load_explicit(&e->halt, memory_order_relaxed) ||
           (e->ext_stop && __atomic_load_n(e->ext_stop, __ATOMIC_RELAXED));
}

/* The closure of p built within lim's share (positions, and time where
 * lim has some); its nodes into *nodes.  true if it is solved. */
static bool closure_build(struct engine *e, const sow_position *p,
                          const struct engine_limits *lim, uint64_t *nodes)
{
    double cap = e->o.root_closure ? (double)e->o.root_closure : ENGINE_ROOT_CLOSURE;
    double t = lim->soft > 0 && (lim->seconds <= 0 || lim->soft < lim->seconds) ? lim->soft
                                                                                : lim->seconds;
    double share = ROOT_CLOSURE_SHARE * t;
    if (t > 0 && share * ROOT_CLOSURE_RATE < cap)
        cap = share * ROOT_CLOSURE_RATE;
    if (t <= 0 && !lim->infinite && ROOT_CLOSURE_UNTIMED < cap)
        cap = ROOT_CLOSURE_UNTIMED;
    if (lim->nodes && (double)lim->nodes < cap)
        cap = (double)lim->nodes;
    if (cap < 1)
        return false;
    if (!e->clos && !(e->clos = clos_new(e->rs)))
        return false;
    e->clos_solved = false;
    int T = e->nthreads;
    uint64_t *cnt = calloc(3 * (size_t)T, sizeof *cnt);
    struct sow_relay_cache **caches = calloc((size_t)T, sizeof *caches);
    if (!cnt || !caches) {
        free(cnt);
        free(caches);
        return false;
    }
    for (int i = 0; i < T; i++)
        caches[i] = e->th[i]->cache;
    clockid_t clk = CLOCK_MONOTONIC;
    if (lim->cpu_clock && pthread_getcpuclockid(pthread_self(), &clk) != 0)
        clk = CLOCK_MONOTONIC;
    struct timespec ts;
    clock_gettime(clk, &ts);
    double now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    struct watch w;
    watch_start(&w, clk, t > 0 ? now + share : 0, engine_halted, e);
    struct clos_env env = {
        .threads = T,
        .cache = caches,
        .stop = &w.flag,
        .tb = e->set,
        .tb_hits_max = -1,
        .nodes = cnt,
        .visits = cnt + T,
        .tb_hits = cnt + 2 * T,
        .max_nodes = (uint64_t)cap,
        .memory = cap * ROOT_CLOSURE_BYTES,
    };
    enum clos_err r = watch_fired(&w) ? CLOS_STOPPED : clos_build(e->clos, &env, p);
    watch_end(&w);
    for (int i = 0; i < T; i++)
        *nodes += cnt[T + i];
    free(cnt);
    free(caches);
    if (r != CLOS_OK) {
        clos_reset(e->clos);
        return false;
    }
    e->clos_solved = true;
    return true;
}

bool eng_root_known(struct engine *e, const sow_position *p, const struct sow_movelist *ml,
                    const sow_position *hist, int from, int nhist,
                    const struct engine_limits *lim, struct root_known *k)
{
    memset(k, 0, sizeof *k);
    k->best = SOW_MOVE_NONE;
    if (!tb_probe(e->set, p, &k->value))
        return false;
    int vals[SOW_MAX_PITS + 1];
    bool known[SOW_MAX_PITS + 1], exit[SOW_MAX_PITS + 1];
    int unknown = table_values(e, p, ml, vals, known, exit);
    for (int i = 0; i < ml->n; i++) /* an exit: progress */
        if (known[i] && exit[i] && vals[i] == k->value) {
            k->best = ml->c[i].move;
            return true;
        }
    if (unknown && !closure_values(e, p, ml, vals, known)) {
        if (e->o.root_closure < 0 || !closure_build(e, p, lim, &k->nodes) ||
            !closure_values(e, p, ml, vals, known))
            return true;
    }
    for (int i = 0; i < ml->n; i++)
        if (known[i] && vals[i] == k->value && !in_history(&ml->c[i].pos, hist, from, nhist)) {
            sow_move m = ml->c[i].move;
            k->allow[m >> 6] |= 1ULL << (m & 63);
            if (k->ncand++ == 0)
                k->best = m;
        }
    if (k->ncand > 1) /* the search chooses among them */
        k->best = SOW_MOVE_NONE;
    return true;
}
