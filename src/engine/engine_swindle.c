/* The swindle (engine_opts.swindle): at a root whose value is proven, the
 * move among those that keep the value that leaves the opponent the
 * smallest share of replies keeping his.  Every such move is as good
 * against perfect play; this one gives an imperfect opponent the most
 * ways to go wrong.  Part of the engine: engine_internal.h maps its files.
 *
 * The candidates are the search's own move and every move whose value,
 * its net capture minus the child's value, is proven equal to the root's:
 * an exit (a move that captures or ends the game), or any move above the
 * levels the tables and the engine's own levels hold (net_minus_child).
 * Each value comes from a search of its own (engine_search of the
 * position, the game's history extended), taken only where that search
 * proves it.  A reply that stays in a level the tables hold, or whose
 * value is not proven, counts as one that keeps the value: the share can
 * only be overstated, and the move played always keeps the root's value.  The searches share the root's limits: its
 * depth or nodes each, and together what is left of its time (90% of it:
 * the answer must still be sent).
 *
 * Example: jodu, 2,1,2,2,0,3/2,1,1,2,4,1/A/14-13/- with tables 0..24.
 * The tables give the root +1 and the exit 1A reaching it, which is
 * played at once without the option; the swindle plays 3A, also worth +1,
 * after which 2 of North's 4 replies keep his value. */
#include "engine_internal.h"

struct swindle {
    struct engine *e;
    struct engine_limits sub;   /* each search's depth and node limits */
    double end;                 /* on e->clock's clock; 0: no time limit */
    sow_position *hist;         /* the game's history, then two more */
    int nhist;
    uint64_t nodes;
    bool out;                   /* out of time, or stopped: give up */
};

/* Has the root's search been asked to stop, or its time run out? */
static bool halted(struct swindle *s)
{
    struct engine *e = s->e;
    if (atomic_load_explicit(&e->halt, memory_order_relaxed) ||
        (e->ext_stop && __atomic_load_n(e->ext_stop, __ATOMIC_RELAXED)) ||
        (s->end > 0 && e->clock() >= s->end))
        s->out = true;
    return s->out;
}

/* The value of position q for its mover, in centi-seeds (awari's
 * repetition split gives halves), q reached d plies below the root (the
 * history then ends with the root, and at d = 2 its child): true where a
 * search proves it. */
static bool position_value(struct swindle *s, const sow_position *q, int d, int *value)
{
    if (halted(s))
        return false;
    struct engine_limits lim = s->sub;
    if (s->end > 0)
        lim.seconds = s->end - s->e->clock();
    struct engine_result r;
    engine_search(s->e, q, s->hist, s->nhist + d, &lim, &r);
    s->nodes += r.info.nodes;
    if (!r.info.proven || (r.stopped && !r.over))
        return false;
    *value = r.info.score;
    return true;
}

/* Is move ch from q's value its net capture minus its child's value, as
 * the searches here give it?  So it is for an exit (a capture, or the end
 * of the game).  A move within the level is worth the child's bounds
 * clamped by q's own cycle settlement (docs/rules.md "Value of a
 * position"), which a search of the child does not give, except above
 * every level the tables or the engine's own levels hold (and with no
 * solution file): there a proven value rests on exits alone (repetitions
 * are never proven), so the child's bounds are equal and the clamp leaves
 * their value. */
static bool net_minus_child(const struct engine *e, const sow_position *q,
                            const struct sow_child *ch)
{
    const struct ruleset *rs = e->rs;
    int n = seeds_on_board(rs, q);
    if (n > e->tbmax && !e->o.solution)
        return true;
    struct sow_movelist cm;
    rs->generate(rs, &ch->pos, &cm, NULL, NULL);
    return cm.n == 0 || seeds_on_board(rs, &ch->pos) != n;
}

/* Move ch from q (q the root, d = 0, or its child, d = 1), where
 * net_minus_child holds: its value for q's mover, in centi-seeds, where a
 * search proves the child's. */
static bool move_value(struct swindle *s, const sow_position *q, int d,
                       const struct sow_child *ch, int *value)
{
    int vc;
    s->hist[s->nhist + d] = *q;
    if (!position_value(s, &ch->pos, d + 1, &vc))
        return false;
    *value = 100 * (ch->captured[q->side] - ch->captured[!q->side]) - vc;
    return true;
}

/* Is the share keep/all below keep2/all2?  A move with no reply (all 0)
 * counts as 1 of 1: nothing left to go wrong. */
static bool share_below(int keep, int all, int keep2, int all2)
{
    if (!all)
        keep = all = 1;
    if (!all2)
        keep2 = all2 = 1;
    return (int64_t)keep * all2 < (int64_t)keep2 * all;
}

/* After root move ch: how many of the opponent's replies keep the value
 * of the child for him, of how many (*all); -1 if halted.  A reply whose
 * value is not net_minus_child's, or not proven, counts as keeping it; so does
 * every reply where the child's own value is not proven.  With best (the
 * best so far's keep and all), the count stops once its share is no
 * longer below best's: the move cannot beat it (a tie keeps the earlier
 * move). */
static int keeping(struct swindle *s, const struct sow_child *ch, int *all, const int *best)
{
    const struct ruleset *rs = s->e->rs;
    struct sow_movelist cm;
    rs->generate(rs, &ch->pos, &cm, NULL, NULL);
    *all = cm.n;
    int vc, keep = 0;
    if (cm.n && !position_value(s, &ch->pos, 1, &vc))
        return s->out ? -1 : cm.n;
    for (int j = 0; j < cm.n; j++) {
        int w;
        if (!net_minus_child(s->e, &ch->pos, &cm.c[j]) ||
            !move_value(s, &ch->pos, 1, &cm.c[j], &w) || w == vc)
            keep++;
        if (s->out)
            return -1;
        if (best && !share_below(keep, cm.n, best[0], best[1]))
            return keep;
    }
    return keep;
}

void eng_swindle(struct engine *e, const sow_position *p, const struct sow_movelist *ml,
                 const sow_position *hist, int nhist, const struct engine_limits *lim,
                 struct engine_result *r)
{
    int b = rules_find_move(ml, r->best);
    if (!e->o.swindle || e->in_swindle || r->over || !r->info.proven || r->stopped ||
        ml->n < 2 || b < 0 || lim->infinite ||
        !(lim->seconds > 0 || lim->soft > 0 || lim->depth > 0 || lim->nodes > 0))
        return;
    double t0 = util_now(), started = e->started;
    struct swindle s = {.e = e, .sub = {.depth = lim->depth, .nodes = lim->nodes,
                                        .cpu_clock = lim->cpu_clock}};
    double span = lim->soft > 0 ? lim->soft : lim->seconds;
    if (span > 0)
        s.end = started + 0.9 * span;
    s.nhist = nhist < ENGINE_MAX_HISTORY - 2 ? nhist : ENGINE_MAX_HISTORY - 2;
    s.hist = malloc(sizeof *s.hist * (size_t)(s.nhist + 2));
    if (!s.hist)
        return;
    if (s.nhist)
        memcpy(s.hist, hist + nhist - s.nhist, sizeof *s.hist * (size_t)s.nhist);
    s.hist[s.nhist] = *p; /* (a reply's search has p and the child before it) */
    void (*cb)(void *, const struct engine_info *) = e->info_cb;
    e->info_cb = NULL;
    e->in_swindle = true;
    int v = r->info.score, best = b, sh[2]; /* sh: the best's keep and all */
    /* the search's move first: it keeps v, and wins ties */
    sh[0] = keeping(&s, &ml->c[b], &sh[1], NULL);
    for (int i = 0; i < ml->n && sh[0] >= 0 && !s.out; i++) {
        int w, all;
        if (i == b || !net_minus_child(e, p, &ml->c[i]) ||
            !move_value(&s, p, 0, &ml->c[i], &w) || w != v)
            continue;
        int keep = keeping(&s, &ml->c[i], &all, sh);
        if (keep >= 0 && share_below(keep, all, sh[0], sh[1])) {
            best = i;
            sh[0] = keep;
            sh[1] = all;
        }
    }
    e->in_swindle = false;
    e->info_cb = cb;
    free(s.hist);
    r->info.nodes += s.nodes;
    r->info.seconds += util_now() - t0;
    if (sh[0] < 0)
        return; /* out of time before the search's own move was counted */
    r->swindle_keep = sh[0];
    r->swindle_replies = sh[1];
    if (best != b) {
        r->best = ml->c[best].move;
        r->info.pv[0] = r->best;
        r->info.pv_len = 1;
        if (cb)
            cb(e->info_arg, &r->info);
    }
}
