/* Play statistics: many games from the start, random or bounded-engine
 * players, games in parallel with OpenMP.
 *
 * Reproducibility: each game draws from its own splitmix64 stream seeded by
 * var_game_seed(seed, rules, player, game); each game's numbers go into its
 * own record and the records are summed in game order afterwards, so the
 * result is the same for any thread count.
 *
 * The engine is a plain depth-limited alpha-beta over net captured seeds
 * (a finished game scores its settlement, the horizon 0), moves in generation
 * order, the first best one played: a function of the position alone.  It is
 * not the solver's bounded mode: search_solve with opts.depth builds an exact
 * principal variation whenever its bounds meet, which makes late-game moves
 * cost an exact solve (see docs/variants.md).
 */
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "util.h"
#include "variants/variants.h"

const char *var_end_name(int end)
{
    switch (end) {
    case SOW_END_NO_SEEDS: return "no-seeds";
    case SOW_END_NO_FEED: return "no-feed";
    case SOW_END_FEW_SEEDS: return "few-seeds";
    case SOW_END_EMPTY: return "empty";
    case SOW_END_ENDLESS: return "endless";
    case SOW_END_REPETITION: return "repetition";
    case VAR_END_CAP: return "cap";
    default: return "?";
    }
}

uint64_t var_game_seed(uint64_t seed, const char *rules, enum var_player pl, int game)
{
    char buf[64];
    int len = snprintf(buf, sizeof buf, "%s/%d/%d", rules, (int)pl, game);
    return XXH3_64bits_withSeed(buf, (size_t)len, seed);
}

static uint64_t splitmix(uint64_t *s)
{
    return util_splitmix64(s);
}

/* What one game contributes. */
struct game_rec {
    int len;
    int8_t result;
    uint8_t end;
    uint64_t positions, live, moves, pickups, endless, captured;
};

struct worker {
    sow_position *hist;       /* positions since the seed count last changed */
};

/* Net seeds the mover at p nets within `depth` plies (alpha-beta, fail-hard
 * window [alpha, beta]); *best = index of the first best move at the root. */
static int negamax(const struct ruleset *rs, const sow_position *p, int depth, int alpha,
                   int beta, int *best)
{
    struct sow_movelist ml;
    rs->generate(rs, p, &ml, NULL, NULL);
    if (ml.n == 0)
        return ml.settle[p->side] - ml.settle[!p->side];
    if (depth == 0)
        return 0;
    int bestv = INT_MIN;
    for (int i = 0; i < ml.n; i++) {
        const struct sow_child *ch = &ml.c[i];
        int d = ch->captured[p->side] - ch->captured[!p->side], v;
        if (ch->pos.side == p->side) /* the mover moves again */
            v = d + negamax(rs, &ch->pos, depth - 1, alpha - d, beta - d, NULL);
        else
            v = d - negamax(rs, &ch->pos, depth - 1, d - beta, d - alpha, NULL);
        if (v > bestv) {
            bestv = v;
            if (best)
                *best = i;
        }
        if (v > alpha)
            alpha = v;
        if (alpha >= beta)
            break;
    }
    return bestv;
}

/* Play game g.  SOW_OK, or SOW_E_INTERRUPTED (stopped; reason in *e). */
static enum sow_status play_game(const struct ruleset *rs, const struct var_play_opts *o,
                                 struct worker *w, int g, struct game_rec *rec,
                                 struct sow_error *e)
{
    uint64_t rng = var_game_seed(o->seed, rs->name, o->player, g);
    struct sow_movelist ml;
    struct sow_stats gst = {0};
    sow_position p = rules_start(rs);
    int first = p.side, nhist = 0, seeds = rules_board_seeds(rs, &p);
    int settle2[2] = {0, 0};
    memset(rec, 0, sizeof *rec);
    w->hist[nhist++] = p;
    for (int ply = 0;; ply++) {
        if (o->stop && *o->stop)
            return sow_fail(e, SOW_E_INTERRUPTED, "interrupted");
        rs->generate(rs, &p, &ml, NULL, &gst);
        rec->positions++;
        rec->endless += (uint64_t)ml.endless;
        if (ml.n == 0) {
            rec->end = (uint8_t)ml.end;
            settle2[0] = 2 * ml.settle[0];
            settle2[1] = 2 * ml.settle[1];
            rec->len = ply;
            break;
        }
        rec->live++;
        rec->moves += (uint64_t)ml.n;
        if (ply >= VAR_MOVE_CAP) {
            rec->end = VAR_END_CAP;
            rules_repetition_settle2(rs, &p, settle2);
            rec->len = ply;
            break;
        }
        int pick;
        if (o->player == VAR_RANDOM || ply < o->random_plies) {
            pick = (int)(((splitmix(&rng) >> 32) * (uint64_t)ml.n) >> 32);
        } else {
            int bound = 2 * SOW_MAX_SEEDS + 1;
            pick = 0;
            negamax(rs, &p, o->engine_depth, -bound, bound, &pick);
        }
        const struct sow_child *ch = &ml.c[pick];
        rec->captured += (uint64_t)ch->captured[0] + ch->captured[1];
        p = ch->pos;
        int ns = rules_board_seeds(rs, &p);
        if (ns != seeds) {
            /* a position with another seed count can never come back */
            seeds = ns;
            nhist = 0;
        } else {
            bool rep = false;
            for (int j = 0; j < nhist && !rep; j++)
                rep = rules_same_position(&w->hist[j], &p);
            if (rep) {
                rec->end = SOW_END_REPETITION;
                rules_repetition_settle2(rs, &p, settle2);
                rec->len = ply + 1;
                break;
            }
        }
        w->hist[nhist++] = p;
    }
    rec->pickups = gst.pickups;
    int a = 2 * p.store[first] + settle2[first];
    int b = 2 * p.store[!first] + settle2[!first];
    rec->result = (int8_t)((a > b) - (a < b));
    return SOW_OK;
}

enum sow_status var_play(const struct ruleset *rs, const struct var_play_opts *o,
                         struct var_play_stats *st, struct sow_error *e)
{
    memset(st, 0, sizeof *st);
    if (o->games < 1)
        return sow_fail(e, SOW_E_INPUT, "need at least one game");
    if (o->player == VAR_ENGINE && o->engine_depth < 1)
        return sow_fail(e, SOW_E_INPUT, "engine depth must be at least 1");
    struct game_rec *recs = calloc((size_t)o->games, sizeof *recs);
    if (!recs)
        return sow_fail(e, SOW_E_NOMEM, "out of memory");
    double t0 = util_now();
    int threads = o->threads > 0 ? o->threads : 1;
    int failed = 0, done = 0;
    struct sow_error ferr = {SOW_OK, ""}; /* the first failure */

#pragma omp parallel num_threads(threads)
    {
        struct worker w = {0};
        struct sow_error lerr;
        bool ok = true;
        w.hist = malloc(sizeof *w.hist * (VAR_MOVE_CAP + 2));
        if (!w.hist) {
            sow_fail(&lerr, SOW_E_NOMEM, "out of memory");
            ok = false;
        }
        if (!ok) {
#pragma omp critical(var_play_err)
            {
                failed = 1;
                ferr = lerr;
            }
        }
#pragma omp for schedule(dynamic, 1)
        for (int g = 0; g < o->games; g++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (stop || !ok)
                continue;
            if (play_game(rs, o, &w, g, &recs[g], &lerr) != SOW_OK) {
#pragma omp critical(var_play_err)
                {
                    if (!failed)
                        ferr = lerr;
                    failed = 1;
                }
                continue;
            }
            int d;
#pragma omp atomic capture
            d = ++done;
            if (o->progress) {
#pragma omp critical(var_play_progress)
                o->progress(o->progress_arg, d, o->games);
            }
        }
        free(w.hist);
    }
    if (failed) {
        free(recs);
        return sow_fail(e, ferr.status, "%s", ferr.msg);
    }

    /* Sum in game order: the same numbers whatever the thread count. */
    st->games = o->games;
    st->len_min = recs[0].len;
    st->len_max = recs[0].len;
    for (int g = 0; g < o->games; g++) {
        const struct game_rec *r = &recs[g];
        st->wins += r->result > 0;
        st->draws += r->result == 0;
        st->losses += r->result < 0;
        st->plies += (uint64_t)r->len;
        st->len_min = r->len < st->len_min ? r->len : st->len_min;
        st->len_max = r->len > st->len_max ? r->len : st->len_max;
        st->positions += r->positions;
        st->live_positions += r->live;
        st->moves_generated += r->moves;
        st->pickups += r->pickups;
        st->endless += r->endless;
        st->captured += r->captured;
        st->ends[r->end < VAR_END_COUNT ? r->end : 0]++;
        int bin = r->len / VAR_LEN_BIN;
        st->len_hist[bin < VAR_LEN_BINS ? bin : VAR_LEN_BINS - 1]++;
        if (o->game_len)
            o->game_len[g] = r->len;
        if (o->game_result)
            o->game_result[g] = r->result;
        if (o->game_end)
            o->game_end[g] = r->end;
    }
    st->len_mean = (double)st->plies / o->games;
    double ss = 0;
    for (int g = 0; g < o->games; g++) {
        double d = recs[g].len - st->len_mean;
        ss += d * d;
    }
    st->len_sd = sqrt(ss / o->games);
    st->seconds = util_now() - t0;
    free(recs);
    return SOW_OK;
}
