/* sow variants: the atlas against the endgame tables and the obvious value
 * twin (tests/ref/ref_value.c), and the play statistics against a seed-by-seed
 * replay of every game, reproducible and adding up. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ref_rules.h"
#include "ref_value.h"
#include "tables/tables.h"
#include "variants/variants.h"
#include "util.h"

static void rs_init(struct ruleset *rs, const char *name, int pits, int seeds)
{
    struct sow_error e;
    cr_assert_eq(rules_init(rs, name, pits, seeds, &e), SOW_OK, "%s", e.msg);
}

/* ---- atlas ---- */

static const struct {
    int pits, seeds;
} tiny[] = {{1, 1}, {1, 2}, {1, 3}, {2, 1}, {2, 2}, {3, 1}};

static void check_atlas(const char *name)
{
    char dir[] = "/tmp/sow-test-variants-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    int checked_tb = 0;
    for (size_t k = 0; k < sizeof tiny / sizeof tiny[0]; k++) {
        struct ruleset rs;
        rs_init(&rs, name, tiny[k].pits, tiny[k].seeds);
        sow_position start = rules_start(&rs);
        int n = rules_board_seeds(&rs, &start);

        /* The obvious twin: value and every move's value by the definition. */
        struct ref_value_ctx *rv = ref_value_new(&rs);
        cr_assert_not_null(rv);
        int lo, hi, mvals[SOW_MAX_PITS + 1];
        int want = ref_value(rv, &start, &lo, &hi);
        int nm = ref_move_values(rv, &start, mvals);
        ref_value_free(rv);

        /* The tables of every level up to the start's, built here. */
        struct sow_error e;
        cr_assert_eq(tb_build(&rs, dir, n, &(struct tb_build_opts){.threads = 1}, &e),
                     SOW_OK, "%s", e.msg);
        struct tb_set *set;
        tb_open(&rs, dir, &set, &e);
        cr_assert_not_null(set, "%s", e.msg);
        cr_assert_geq(tb_max_level(set), n);
        int tbv;
        if (tb_probe(set, &start, &tbv)) { /* jerin's opening is not indexed */
            cr_expect_eq(tbv, want, "%s 2x%d/%d: tables %d, reference %d", name, rs.pits,
                         rs.seeds, tbv, want);
            checked_tb++;
        } else {
            cr_expect_eq(rs.family, SOW_JERIN, "%s: start not in the tables", name);
        }
        tb_close(set);

        /* The atlas by search alone, and with the tables just built. */
        for (int with_tb = 0; with_tb < 2; with_tb++) {
            struct var_atlas_opts o = {.threads = 1, .hash_mb = 4, .budget = 0};
            o.tables_dir = with_tb ? dir : NULL;
            struct var_atlas_result r;
            cr_assert_eq(var_atlas_solve(&rs, &o, &r, &e), SOW_OK, "%s", e.msg);
            cr_assert(r.exact);
            cr_expect_eq(r.value, want, "%s 2x%d/%d (tables %d): atlas %d, reference %d", name,
                         rs.pits, rs.seeds, with_tb, r.value, want);
            if (with_tb && !r.over)
                cr_expect_geq(r.tb_level, n);
            /* best moves = exactly the moves the twin values at `want` */
            struct sow_movelist ml;
            rules_generate(&rs, &start, &ml);
            cr_assert_eq(nm, ml.n);
            int nbest = 0;
            for (int i = 0; i < ml.n; i++) {
                bool listed = false;
                for (int j = 0; j < r.nbest; j++)
                    listed |= r.best[j] == ml.c[i].move;
                cr_expect_eq(listed, mvals[i] == want, "%s 2x%d/%d: move %d value %d vs %d",
                             name, rs.pits, rs.seeds, i, mvals[i], want);
                nbest += mvals[i] == want;
            }
            cr_expect_eq(r.nbest, nbest);
            cr_expect(r.over || r.pv_len >= 1);
            cr_expect_null(strchr(r.best_str, '?'), "%s", r.best_str);
        }
    }
    if (strcmp(name, "jerin") != 0)
        cr_expect_gt(checked_tb, 0);
    util_rmdir_flat(dir); /* the level files and the builder's lock */
}

Test(atlas, oware) { check_atlas("oware"); }
Test(atlas, awari) { check_atlas("awari"); }
Test(atlas, jodu) { check_atlas("jodu"); }
Test(atlas, jodu_ibadan) { check_atlas("jodu-ibadan"); }
Test(atlas, jodu_starve) { check_atlas("jodu-starve"); }
Test(atlas, odu) { check_atlas("odu"); }
Test(atlas, jerin) { check_atlas("jerin"); }
Test(atlas, darra) { check_atlas("darra"); }

/* ---- play ---- */

/* Everything but the wall time. */
static void expect_same_stats(const struct var_play_stats *a, const struct var_play_stats *b,
                              const char *what)
{
    struct var_play_stats x = *a, y = *b;
    x.seconds = y.seconds = 0;
    cr_expect_eq(memcmp(&x, &y, sizeof x), 0, "%s: statistics differ", what);
}

static void expect_adds_up(const struct var_play_stats *s, const int *len, const int8_t *res,
                           const uint8_t *end)
{
    cr_expect_eq(s->wins + s->draws + s->losses, s->games);
    cr_expect_eq(s->ends[0], 0, "a game ended without a reason");
    int ends = 0;
    for (int e = 1; e < VAR_END_COUNT; e++)
        ends += s->ends[e];
    cr_expect_eq(ends, s->games, "games by ending %d != %d", ends, s->games);
    uint64_t hist = 0, plies = 0;
    for (int b = 0; b < VAR_LEN_BINS; b++)
        hist += s->len_hist[b];
    cr_expect_eq(hist, (uint64_t)s->games);
    int w = 0, d = 0, l = 0, per_end[VAR_END_COUNT] = {0};
    for (int g = 0; g < s->games; g++) {
        plies += (uint64_t)len[g];
        w += res[g] > 0;
        d += res[g] == 0;
        l += res[g] < 0;
        cr_assert_lt(end[g], VAR_END_COUNT);
        per_end[end[g]]++;
        cr_expect_geq(len[g], s->len_min);
        cr_expect_leq(len[g], s->len_max);
    }
    cr_expect_eq(plies, s->plies);
    cr_expect(w == s->wins && d == s->draws && l == s->losses);
    cr_expect_eq(memcmp(per_end, s->ends, sizeof per_end), 0);
    /* every game met one position more than its moves, except that a
     * repeated final position is not generated again */
    cr_expect_eq(s->positions, s->plies + (uint64_t)(s->games - s->ends[SOW_END_REPETITION]));
}

static uint64_t sm(uint64_t *s)
{
    return util_splitmix64(s);
}

static bool same_ref(const struct ref_pos *a, const struct ref_pos *b)
{
    return a->side == b->side && a->state == b->state &&
           memcmp(a->hole, b->hole, sizeof a->hole) == 0;
}

/* Replay random game g with the seed-by-seed rules and plain bookkeeping:
 * every earlier position kept and compared (no level shortcut). */
static void replay(const struct ruleset *rs, uint64_t seed, int g, int *len, int *res, int *end)
{
    static struct ref_pos hist[VAR_MOVE_CAP + 2];
    struct ref_list *rl = malloc(sizeof *rl);
    cr_assert_not_null(rl);
    uint64_t rng = var_game_seed(seed, rs->name, VAR_RANDOM, g);
    sow_position sp = rules_start(rs);
    struct ref_pos p;
    ref_from_sow(rs, &sp, &p);
    int first = p.side, s2[2] = {0, 0}, nh = 0;
    hist[nh++] = p;
    for (int ply = 0;; ply++) {
        ref_generate(rs->family, &p, rl);
        if (rl->n == 0) {
            *end = rl->end;
            s2[0] = 2 * rl->settle[0];
            s2[1] = 2 * rl->settle[1];
            *len = ply;
            break;
        }
        if (ply >= VAR_MOVE_CAP) {
            *end = VAR_END_CAP;
            *len = ply;
            goto settle_rep;
        }
        int pick = (int)(((sm(&rng) >> 32) * (uint64_t)rl->n) >> 32);
        p = rl->c[pick].pos;
        bool rep = false;
        for (int j = 0; j < nh; j++)
            rep |= same_ref(&hist[j], &p);
        if (rep) {
            *end = SOW_END_REPETITION;
            *len = ply + 1;
            goto settle_rep;
        }
        hist[nh++] = p;
    }
    goto score;
settle_rep:
    if (rs->family == SOW_AWARI) {
        s2[0] = s2[1] = ref_board_seeds(&p);
    } else {
        for (int i = 0; i < rs->pits; i++) {
            s2[0] += 2 * p.hole[i];
            s2[1] += 2 * p.hole[rs->pits + i];
        }
    }
score:;
    int a = 2 * p.store[first] + s2[first], b = 2 * p.store[!first] + s2[!first];
    *res = (a > b) - (a < b);
    free(rl);
}

static void check_play(const char *name, int pits, int seeds, int games, bool differs)
{
    struct ruleset rs;
    struct sow_error e;
    rs_init(&rs, name, pits, seeds);
    int *len = calloc((size_t)games, sizeof *len);
    int8_t *res = calloc((size_t)games, 1);
    uint8_t *end = calloc((size_t)games, 1);
    struct var_play_opts o = {.player = VAR_RANDOM, .games = games, .seed = 7, .threads = 1};
    o.game_len = len;
    o.game_result = res;
    o.game_end = end;
    struct var_play_stats s1, s1b, s2, s3;
    cr_assert_eq(var_play(&rs, &o, &s1, &e), SOW_OK, "%s", e.msg);
    expect_adds_up(&s1, len, res, end);
    for (int g = 0; g < games; g++) {
        int l, r, e;
        replay(&rs, 7, g, &l, &r, &e);
        cr_expect(l == len[g] && r == res[g] && e == end[g],
                  "%s game %d: play %d plies result %d end %d, replay %d %d %d", name, g,
                  len[g], res[g], end[g], l, r, e);
    }
    o.game_len = NULL;
    o.game_result = NULL;
    o.game_end = NULL;
    cr_assert_eq(var_play(&rs, &o, &s1b, &e), SOW_OK, "%s", e.msg);
    expect_same_stats(&s1, &s1b, "same seed twice");
    o.threads = 2;
    cr_assert_eq(var_play(&rs, &o, &s2, &e), SOW_OK, "%s", e.msg);
    expect_same_stats(&s1, &s2, "1 vs 2 threads");
    o.seed = 8;
    cr_assert_eq(var_play(&rs, &o, &s3, &e), SOW_OK, "%s", e.msg);
    cr_expect(!differs || s3.plies != s1.plies || s3.wins != s1.wins || s3.captured != s1.captured,
              "%s: seeds 7 and 8 gave the same games", name);
    free(len);
    free(res);
    free(end);
}

Test(play, random_all_rules)
{
    for (int i = 0; sow_rule_names[i]; i++) {
        check_play(sow_rule_names[i], 6, 4, 60, true);
        check_play(sow_rule_names[i], 3, 3, 100, false); /* jerin: 1-ply games */
        check_play(sow_rule_names[i], 2, 1, 60, false); /* tiny: repetitions and endless moves */
    }
}

Test(play, engine_reproducible)
{
    const char *names[] = {"oware", "jodu", "darra"};
    for (int i = 0; i < 3; i++) {
        struct ruleset rs;
        struct sow_error e;
        rs_init(&rs, names[i], 3, 2);
        int len[24], len2[24];
        int8_t res[24];
        uint8_t end[24];
        struct var_play_opts o = {.player = VAR_ENGINE, .games = 24, .seed = 3, .threads = 1,
                                  .engine_depth = 2, .random_plies = 2};
        o.game_len = len;
        o.game_result = res;
        o.game_end = end;
        struct var_play_stats a, b;
        cr_assert_eq(var_play(&rs, &o, &a, &e), SOW_OK, "%s", e.msg);
        expect_adds_up(&a, len, res, end);
        o.threads = 2;
        o.game_len = len2;
        cr_assert_eq(var_play(&rs, &o, &b, &e), SOW_OK, "%s", e.msg);
        expect_same_stats(&a, &b, names[i]);
        cr_expect_eq(memcmp(len, len2, sizeof len), 0);
    }
}

Test(play, rejects_bad_options)
{
    struct ruleset rs;
    struct sow_error e = {0};
    rs_init(&rs, "oware", 2, 2);
    struct var_play_stats s;
    struct var_play_opts o = {.player = VAR_RANDOM, .games = 0, .threads = 1};
    cr_expect_eq(var_play(&rs, &o, &s, &e), SOW_E_INPUT);
    cr_expect_neq(e.msg[0], 0);
    o.games = 1;
    o.player = VAR_ENGINE;
    o.engine_depth = 0;
    cr_expect_eq(var_play(&rs, &o, &s, &e), SOW_E_INPUT);
}
