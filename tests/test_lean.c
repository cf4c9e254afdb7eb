/* The lean builder: unmoves against the seed-by-seed reference rules
 * (exhaustively on small levels), and its levels byte for byte against
 * the fast builder (build.c), with one and two threads. */
#include <criterion/criterion.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_rules.h"
#include "test_scale.h"
#include "tables/tables.h"
#include "tables/tables_internal.h" /* tb_set_own_level: levels built here */
#include "tables/tb_lean.h"
#include "tables/unmove.h" /* unmove_confirm: the slow twin of unmove_preds_ */
#include "util.h"

#include "test_passive.h" /* OpenMP threads wait passively */
#include "test_files.h" /* whole files compared */

static struct ruleset rules(const char *name, int pits)
{
    struct ruleset rs;
    struct sow_error e;
    cr_assert_eq(rules_init(&rs, name, pits, 0, &e), SOW_OK, "%s", e.msg);
    return rs;
}

static bool same_board_state(const struct ref_pos *a, const struct ref_pos *b)
{
    if (a->side != b->side || a->state != b->state)
        return false;
    for (int i = 0; i < 2 * a->pits; i++)
        if (a->hole[i] != b->hole[i])
            return false;
    return true;
}

/* Every position of level n with side `side` to move (the entries' boards
 * and absolute states, side set). */
static sow_position *level_positions(const struct ruleset *rs, int n, int side, uint64_t *count)
{
    struct tb_index *ix = malloc(sizeof *ix);
    tb_index_init(ix, rs);
    uint64_t E = tb_level_entries(ix, n);
    sow_position *v = malloc(E * sizeof *v);
    for (uint64_t i = 0; i < E; i++) {
        tb_position_of(ix, n, i, &v[i]);
        v[i].side = (uint8_t)side;
    }
    free(ix);
    *count = E;
    return v;
}

/* Exhaustive on level n: (1) every unmove of every position q, played
 * forward by the reference rules, captures nothing and gives q; (2) every
 * in-level move of every position (reference rules) is found among the
 * unmoves of its child, and (3) the counts agree (multiplicities too). */
static void check_unmoves(const char *name, int pits, int n)
{
    struct ruleset rs = rules(name, pits);
    struct tb_unmove *um = malloc(TB_UNMOVE_MAX * sizeof *um);
    uint64_t back = 0, fwd = 0, E;
    for (int side = 0; side < 2; side++) {
        sow_position *qs = level_positions(&rs, n, side, &E);
        for (uint64_t i = 0; i < E; i++) {
            struct ref_pos rq, rp;
            ref_from_sow(&rs, &qs[i], &rq);
            int k = tb_unmoves(&rs, &qs[i], um, TB_UNMOVE_MAX);
            back += (uint64_t)k;
            for (int j = 0; j < k; j++) {
                cr_assert_eq(um[j].pos.side, !side);
                ref_from_sow(&rs, &um[j].pos, &rp);
                struct ref_list rl;
                ref_generate(rs.family, &rp, &rl);
                int found = 0;
                for (int m = 0; m < rl.n; m++)
                    if (rl.c[m].move == um[j].move) {
                        found++;
                        cr_assert(rl.c[m].captured[0] == 0 && rl.c[m].captured[1] == 0,
                                  "%s 2x%d level %d: unmove captures", name, pits, n);
                        struct ref_pos child = rl.c[m].pos;
                        child.store[0] = child.store[1] = 0;
                        cr_assert(same_board_state(&child, &rq),
                                  "%s 2x%d level %d: unmove does not lead to its child", name,
                                  pits, n);
                    }
                cr_assert_eq(found, 1, "%s 2x%d level %d: unmove is not a legal move", name, pits,
                             n);
            }
        }
        /* forward: the same positions as predecessors */
        for (uint64_t i = 0; i < E; i++) {
            struct ref_pos rp;
            ref_from_sow(&rs, &qs[i], &rp);
            struct ref_list rl;
            ref_generate(rs.family, &rp, &rl);
            for (int m = 0; m < rl.n; m++) {
                if (rl.c[m].captured[0] || rl.c[m].captured[1])
                    continue;
                fwd++;
                sow_position c;
                struct ref_pos rc = rl.c[m].pos;
                rc.store[0] = rc.store[1] = 0;
                ref_to_sow(&rc, &c);
                int k = tb_unmoves(&rs, &c, um, TB_UNMOVE_MAX), hits = 0;
                for (int j = 0; j < k; j++)
                    hits += um[j].move == rl.c[m].move &&
                            board_equal(&um[j].pos.board, &qs[i].board, SOW_BOARD_WORDS) &&
                            um[j].pos.state == qs[i].state;
                cr_assert_eq(hits, 1, "%s 2x%d level %d entry %llu move %d: found %d times", name,
                             pits, n, (unsigned long long)i, rl.c[m].move, hits);
            }
        }
        free(qs);
    }
    cr_assert_eq(back, fwd, "%s 2x%d level %d: %llu unmoves, %llu in-level moves", name, pits, n,
                 (unsigned long long)back, (unsigned long long)fwd);
    free(um);
}

/* tb_unmoves (the builder's unmove_preds_, which decides the forward check
 * from the child's board) against the candidates confirmed one by one with
 * generate() (unmove_confirm): the same list in the same order. */
static uint64_t check_preds_one(const struct ruleset *rs, const sow_position *q,
                                struct tb_unmove *um, struct tb_unmove *fast, uint64_t *found)
{
    struct sow_movelist ml;
    int k = tb_unmove_candidates(rs, q, um, TB_UNMOVE_MAX), j = 0;
    for (int i = 0; i < k; i++)
        if (unmove_confirm(rs, &um[i].pos, um[i].move, q, &ml))
            um[j++] = um[i];
    int f = tb_unmoves(rs, q, fast, TB_UNMOVE_MAX);
    bool same = f == j;
    for (int i = 0; same && i < j; i++)
        same = fast[i].move == um[i].move &&
               memcmp(&fast[i].pos, &um[i].pos, sizeof fast[i].pos) == 0;
    if (!same) {
        char a[128] = "";
        for (int i = 0; i < rs->holes; i++)
            snprintf(a + strlen(a), sizeof a - strlen(a), "%d ", q->board.h[i]);
        cr_assert_fail("%s 2x%d: child %s(side %d): %d predecessors, generate() confirms %d",
                       rs->name, rs->pits, a, q->side, f, j);
    }
    *found += (uint64_t)j;
    return (uint64_t)k;
}

/* Every position of level n, both sides to move. */
static void check_preds(const char *name, int pits, int n)
{
    struct ruleset rs = rules(name, pits);
    struct tb_unmove *um = malloc(TB_UNMOVE_MAX * sizeof *um);
    struct tb_unmove *fast = malloc(TB_UNMOVE_MAX * sizeof *fast);
    uint64_t E, found = 0;
    for (int side = 0; side < 2; side++) {
        sow_position *qs = level_positions(&rs, n, side, &E);
        for (uint64_t i = 0; i < E; i++)
            check_preds_one(&rs, &qs[i], um, fast, &found);
        free(qs);
    }
    free(fast);
    free(um);
}

/* Random positions of the larger 2x6 levels (xorshift, fixed seed). */
static void check_preds_random(const char *name, int lo, int hi, int count)
{
    struct ruleset rs = rules(name, 6);
    struct tb_index *ix = malloc(sizeof *ix);
    tb_index_init(ix, &rs);
    struct tb_unmove *um = malloc(TB_UNMOVE_MAX * sizeof *um);
    struct tb_unmove *fast = malloc(TB_UNMOVE_MAX * sizeof *fast);
    uint64_t x = 0x9E3779B97F4A7C15ull, found = 0, cands = 0;
    for (int n = lo; n <= hi; n++)
        for (int i = 0; i < count; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            sow_position q;
            tb_position_of(ix, n, x % tb_level_entries(ix, n), &q);
            q.side = (uint8_t)(x >> 62 & 1);
            cands += check_preds_one(&rs, &q, um, fast, &found);
        }
    /* some candidates are real, some are not: both sides of the check ran */
    cr_assert(found > (uint64_t)count && found < cands, "%s: %llu of %llu candidates", name,
              (unsigned long long)found, (unsigned long long)cands);
    free(fast);
    free(um);
    free(ix);
}

/* The sanitizer builds (SOW_TEST_SCALE < 1) stop the small boards' levels
 * lower (2x2 at 10, 2x3 at 8, 2x6 at 4) and draw fewer random 2x6
 * positions: every check is still made, on about a tenth of the positions. */
static int unmove_top(int top)
{
    return test_size(top, top * 2 / 3);
}

#define UNMOVE_TESTS(id, name)                                                                    \
    Test(unmoves, id##_2x2_to_16)                                                                 \
    {                                                                                             \
        for (int n = 0; n <= unmove_top(16); n++)                                                  \
            check_unmoves(name, 2, n);                                                            \
    }                                                                                             \
    Test(unmoves, id##_2x3_to_12)                                                                 \
    {                                                                                             \
        for (int n = 0; n <= unmove_top(12); n++)                                                  \
            check_unmoves(name, 3, n);                                                            \
    }                                                                                             \
    Test(unmoves, id##_2x6_to_5) {                                                                \
        for (int n = 0; n <= test_size(5, 4); n++)                                                \
            check_unmoves(name, 6, n);                                                            \
    }                                                                                             \
    Test(unmoves, id##_preds_generate)                                                             \
    {                                                                                             \
        for (int n = 0; n <= unmove_top(16); n++)                                                  \
            check_preds(name, 2, n);                                                              \
        for (int n = 0; n <= unmove_top(12); n++)                                                  \
            check_preds(name, 3, n);                                                              \
        for (int n = 0; n <= test_size(6, 4); n++)                                                \
            check_preds(name, 6, n);                                                              \
        check_preds_random(name, 7, 40, test_size(3000, 150));                                    \
    }

UNMOVE_TESTS(oware, "oware")
UNMOVE_TESTS(awari, "awari")
UNMOVE_TESTS(darra, "darra")

Test(unmoves, worked_example_and_unsupported)
{
    /* tables/tb_lean.h: oware 2x2, 1,1,0,2 with A to move has four. */
    struct ruleset rs = rules("oware", 2);
    sow_position q;
    memset(&q, 0, sizeof q);
    uint8_t h[4] = {1, 1, 0, 2};
    memcpy(q.board.h, h, 4);
    struct tb_unmove um[64];
    cr_assert_eq(tb_unmoves(&rs, &q, um, 64), 4);
    for (int j = 0; j < 4; j++) {
        cr_assert_eq(um[j].move, 0); /* B1 */
        cr_assert_eq(um[j].pos.board.h[2], j + 1);
    }
    struct ruleset rj = rules("jodu", 6);
    cr_assert_not(tb_unmove_supported(&rj));
    cr_assert_eq(tb_unmoves(&rj, &q, um, 64), 0);
}

/* ---- lean levels = the fast builder's levels ------------------------------------------- */

/* Levels 0..max_level by the fast builder; from `from` up also by the lean
 * one, compared byte for byte. */

/* Level n solved by the lean builder with opts into w equals the fast
 * builder's v, entry by entry; its peak bytes. */
static double lean_agrees(const struct ruleset *rs, const struct tb_set *set, int n,
                          const int8_t *v, int8_t *w, uint64_t E,
                          const struct tb_build_opts *opts, const char *how)
{
    struct sow_error e;
    double peak = 0;
    cr_assert_eq(tb_lean_solve_level(rs, set, n, w, opts, &peak, &e), SOW_OK, "%s", e.msg);
    uint64_t d = 0;
    while (d < E && v[d] == w[d])
        d++;
    cr_assert_eq(d, E, "%s 2x%d level %d (%d threads, %s): entry %llu is %d, the fast builder %d",
                 rs->name, rs->pits, n, opts->threads, how, (unsigned long long)d,
                 d < E ? w[d] : 0, d < E ? v[d] : 0);
    return peak;
}

static void check_identical_from(const char *name, int pits, int from, int max_level, int threads)
{
    struct ruleset rs = rules(name, pits);
    struct sow_error e;
    struct tb_set *set = tb_set_new(&rs, "/nonexistent");
    cr_assert(set);
    struct tb_build_opts fast = {.threads = 1};
    struct tb_build_opts lean = {.threads = threads};
    for (int n = 0; n <= max_level; n++) {
        uint64_t E = tb_level_entries(tb_set_index(set), n);
        int8_t *v = malloc(E ? E : 1), *w = malloc(E ? E : 1);
        cr_assert_eq(tb_solve_level(&rs, set, n, v, NULL, &fast, &e), SOW_OK, "%s", e.msg);
        double peak = 0;
        if (n < from) {
            free(w);
            tb_set_own_level(set, n, v, NULL, E);
            continue;
        }
        cr_assert_eq(tb_lean_solve_level(&rs, set, n, w, &lean, &peak, &e), SOW_OK, "%s", e.msg);
        uint64_t d = 0;
        while (d < E && v[d] == w[d])
            d++;
        cr_assert_eq(d, E, "%s 2x%d level %d (%d threads): entry %llu is %d, the fast builder %d",
                     name, pits, n, threads, (unsigned long long)d, d < E ? w[d] : 0,
                     d < E ? v[d] : 0);
        if (tb_unmove_supported(&rs) && E >= 8 * 256) {
            /* Updates held back by region (lean.c), which the default
             * regions reach only on levels of 8M entries: regions of 256
             * entries, buckets of 4 updates, so that buckets fill and are
             * applied mid-drain as well as at the round's end. */
            struct tb_build_opts small = {.threads = threads, .lean_region_shift = 8};
            double peak2 = lean_agrees(&rs, set, n, v, w, E, &small, "regions of 256");
            if (peak2 > peak) /* the 6-byte bound below holds for both */
                peak = peak2;
            /* Work lists of 8 entries: final nodes spill into the pend
             * bitmap all the time (the bit of a node's side is the top bit
             * of its 64-bit work item), scanned before each round ends. */
            struct tb_build_opts tiny = {.threads = threads, .lean_queue_cap = 8};
            lean_agrees(&rs, set, n, v, w, E, &tiny, "work lists of 8");
        }
        /* At most 6 bytes per position, besides buffers of a fixed size per
         * thread (a batch's candidates: 256 KB is ample on these boards; the
         * relay rule sets' edge store: its 4 MB floor for the sort and one
         * block's lists, (4 + 4N) x 2^16 bytes, a thread). */
        double fixed = threads * 262144.0;
        if (!tb_unmove_supported(&rs))
            fixed += 4e6 + threads * (4.0 + 4.0 * pits) * 65537.0;
        cr_assert(peak <= 6.0 * (double)E + fixed, "%s level %d: %.0f bytes for %llu positions",
                  name, n, peak, (unsigned long long)E);
        free(w);
        tb_set_own_level(set, n, v, NULL, E); /* the set frees it */
    }
    tb_close(set);
}

static void check_identical(const char *name, int pits, int max_level, int threads)
{
    check_identical_from(name, pits, 0, max_level, threads);
}

/* Whole small games: 2x2 with 4 seeds a hole, 2x3 with 3 (as test_tables.c). */
#define LEAN_TESTS(id, name, six)                                                                 \
    Test(lean, id##_2x2_whole_game) { check_identical(name, 2, 16, 1); }                          \
    Test(lean, id##_2x3_whole_game_t1) { check_identical(name, 3, 18, 1); }                       \
    Test(lean, id##_2x3_whole_game_t2) { check_identical(name, 3, 18, 2); }                       \
    Test(lean, id##_2x6_t1) { check_identical(name, 6, six, 1); }                                 \
    Test(lean, id##_2x6_t2) { check_identical(name, 6, six, 2); }

LEAN_TESTS(oware, "oware", 9)
LEAN_TESTS(awari, "awari", 9)
LEAN_TESTS(darra, "darra", 7)

/* ---- relay rule sets: predecessors from the edges on disk (lean_relay.h) ----
 * Whole 2x2 and 2x3 games, 2x6 up to RELAY_SIX with one and two threads, and
 * one rule set of each relay family (jodu: captures of 4 anywhere; odu: the
 * last hole) up to 14 with two threads (RELAY_DEEP: smaller under
 * SOW_TEST_SCALE, the sanitizer builds). */
static int relay_level(int full)
{
    return test_scale() < 1 ? full * 2 / 3 : full;
}
#define RELAY_SIX 9
#define RELAY_DEEP 14
#define RELAY_TESTS(id, name)                                                                     \
    Test(lean, id##_2x2_whole_game) { check_identical(name, 2, 16, 1); }                          \
    Test(lean, id##_2x3_whole_game_t1) { check_identical(name, 3, 18, 1); }                       \
    Test(lean, id##_2x3_whole_game_t2) { check_identical(name, 3, 18, 2); }                       \
    Test(lean, id##_2x6_t1) { check_identical(name, 6, relay_level(RELAY_SIX), 1); }               \
    Test(lean, id##_2x6_t2) { check_identical(name, 6, relay_level(RELAY_SIX), 2); }

RELAY_TESTS(jodu, "jodu")
RELAY_TESTS(jodu_ibadan, "jodu-ibadan")
RELAY_TESTS(jodu_starve, "jodu-starve")
RELAY_TESTS(odu, "odu")
RELAY_TESTS(jerin, "jerin")
/* Levels up to RELAY_SIX are the tests above': here built by the fast builder
 * only (the sanitizer builds compare their last three). */
static void relay_deep(const char *name)
{
    int top = relay_level(RELAY_DEEP);
    check_identical_from(name, 6, top > RELAY_SIX ? RELAY_SIX + 1 : top - 2, top, 2);
}
Test(lean, jodu_2x6_to_14, .timeout = 240) { relay_deep("jodu"); }
Test(lean, odu_2x6_to_14, .timeout = 240) { relay_deep("odu"); }

/* The edge store alone: block by block, the lists hold exactly the level's
 * in-level moves (the rules' generate() of every entry), each (child,
 * parent) pair as often as there are moves between them.  2x6 level 8 has
 * 75,582 entries: two blocks and two superbuckets. */
#include "tables/lean_relay.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

Test(lean, relay_store_lists_are_the_moves)
{
    struct ruleset rs = rules("jodu", 6);
    struct tb_set *set = tb_set_new(&rs, "/nonexistent");
    const struct tb_index *ix = tb_set_index(set);
    int n = 8;
    uint64_t E = tb_level_entries(ix, n), np = 0;
    struct sow_error e;
    struct lrel r;
    cr_assert_eq(lrel_new(&r, E, rs.pits, 2, NULL, &e), SOW_OK, "%s", e.msg);
    cr_assert(r.nblocks == 2 && r.S == 2, "%llu blocks, %llu superbuckets",
              (unsigned long long)r.nblocks, (unsigned long long)r.S);
    uint64_t *pairs = malloc(E * 6 * sizeof *pairs); /* q << 32 | p */
    for (uint64_t p = 0; p < E; p++) {
        sow_position pos;
        tb_position_of(ix, n, p, &pos);
        struct sow_movelist ml;
        rules_generate(&rs, &pos, &ml);
        for (int k = 0; k < ml.n; k++) {
            if (ml.c[k].captured[0] + ml.c[k].captured[1])
                continue;
            int lv;
            uint64_t q;
            cr_assert(tb_index_of(ix, &ml.c[k].pos, &lv, &q) && lv == n);
            lrel_put(&r, (int)(p & 1), q, (uint32_t)p); /* two "threads" */
            pairs[np++] = q << 32 | p;
        }
    }
    lrel_flush(&r, 0);
    lrel_flush(&r, 1);
    cr_assert_eq(lrel_sort(&r, 2, NULL, NULL, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(r.edges, np);
    qsort(pairs, np, sizeof *pairs, cmp_u64);
    uint32_t *buf = NULL, *list = malloc(E * 6 * sizeof *list);
    uint64_t cap = 0, at = 0;
    for (uint64_t b = 0; b < r.nblocks; b++) {
        const uint32_t *off, *pr;
        cr_assert(lrel_read(&r, b, &buf, &cap, &off, &pr));
        for (uint64_t i = 0; i < 65536 && (b << 16) + i < E; i++) {
            uint64_t q = (b << 16) + i, k = off[i + 1] - off[i];
            memcpy(list, pr + off[i], k * sizeof *list);
            qsort(list, k, sizeof *list, cmp_u32);
            for (uint64_t j = 0; j < k; j++, at++)
                cr_assert(at < np && pairs[at] == (q << 32 | list[j]),
                          "entry %llu: predecessor %u", (unsigned long long)q, list[j]);
        }
    }
    cr_assert_eq(at, np);
    free(buf);
    free(list);
    free(pairs);
    lrel_free(&r);
    tb_close(set);
}

/* ---- tb_build: files, the choice of builder --------------------------------- */

static void note_builder(void *ctx, int level, uint64_t entries, const char *builder, double peak)
{
    (void)level;
    (void)entries;
    (void)peak;
    snprintf(ctx, 16, "%s", builder);
}

static char *slurp(const char *path, long *len);

/* The builder of every level built (by level, up to 31). */
struct builders {
    char by[32][8];
};

static void note_builders(void *ctx, int level, uint64_t entries, const char *builder,
                          double peak)
{
    (void)entries;
    (void)peak;
    struct builders *b = ctx;
    if (level >= 0 && level < 32)
        snprintf(b->by[level], sizeof b->by[level], "%s", builder);
}

static bool same_file(const char *da, const char *db, const struct ruleset *rs, int n)
{
    char pa[4200], pb[4200];
    tb_file_name(da, rs->name, rs->pits, n, pa, sizeof pa);
    tb_file_name(db, rs->name, rs->pits, n, pb, sizeof pb);
    return test_same_file(pa, pb);
}

static char *slurp(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)*len + 1);
    cr_assert_eq(fread(b, 1, (size_t)*len, f), (size_t)*len);
    fclose(f);
    return b;
}

/* tb_build with the lean builder writes the fast builder's files for levels
 * 0..top, and --builder auto picks the lean one only where the fast one does not
 * fit the budget. */
static void build_files_identical_and_auto_choice(const char *name, int pits, int top)
{
    struct ruleset rs = rules(name, pits);
    char da[] = "/tmp/sow-test-lean-XXXXXX", db[] = "/tmp/sow-test-lean-XXXXXX", err[4200];
    struct sow_error e;
    cr_assert(mkdtemp(da) && mkdtemp(db));
    char used[16] = "";
    struct tb_build_opts lean = {.threads = 2, .builder = TB_BUILDER_LEAN,
                                 .level_info = note_builder, .ctx = used};
    cr_assert_eq(tb_build(&rs, da, top - 1, &lean, &e), SOW_OK, "%s", e.msg);
    cr_assert_str_eq(used, "lean");
    struct tb_build_opts fast = {.threads = 1, .builder = TB_BUILDER_FAST,
                                 .level_info = note_builder, .ctx = used};
    cr_assert_eq(tb_build(&rs, db, top - 1, &fast, &e), SOW_OK, "%s", e.msg);
    cr_assert_str_eq(used, "fast");
    for (int n = 0; n < top; n++) {
        char pa[4200], pb[4200];
        tb_file_name(da, rs.name, rs.pits, n, pa, sizeof pa);
        tb_file_name(db, rs.name, rs.pits, n, pb, sizeof pb);
        long la, lb;
        char *a = slurp(pa, &la), *b = slurp(pb, &lb);
        cr_assert(la == lb && memcmp(a, b, (size_t)la) == 0, "level %d files differ", n);
        free(a);
        free(b);
    }
    /* auto: the missing levels the fast builder fits (tb_level_memory) are
     * its, the first that does not fit and those above go lean; the levels
     * present are kept.  Levels top-2 and top-1 missing, top over the
     * budget for the fast builder: top-2 and top-1 fast, top lean, the
     * same files. */
    for (int n = top - 2; n < top; n++) {
        tb_file_name(da, rs.name, rs.pits, n, err, sizeof err);
        cr_assert_eq(unlink(err), 0);
    }
    struct tb_index ix;
    tb_index_init(&ix, &rs);
    double need = tb_level_memory(&ix, top);
    for (int n = 0; n < top; n++)
        need += (double)tb_level_entries(&ix, n);
    struct builders by;
    memset(&by, 0, sizeof by);
    struct tb_build_opts aut = {.threads = 1, .memory_bytes = need - 1000,
                                .level_info = note_builders, .ctx = &by};
    cr_assert_eq(tb_build(&rs, da, top, &aut, &e), SOW_OK, "%s", e.msg);
    cr_assert_str_eq(by.by[top - 2], "fast");
    cr_assert_str_eq(by.by[top - 1], "fast");
    cr_assert_str_eq(by.by[top], "lean");
    cr_assert_str_eq(by.by[top - 3], "", "level %d was present: not rebuilt", top - 3);
    cr_assert_eq(tb_build(&rs, db, top, &fast, &e), SOW_OK, "%s", e.msg);
    for (int n = top - 2; n <= top; n++)
        cr_assert(same_file(da, db, &rs, n), "level %d files differ", n);
    /* only the top level missing and over the budget: lean alone (the fast
     * builder has nothing to build below it) */
    tb_file_name(da, rs.name, rs.pits, top, err, sizeof err);
    cr_assert_eq(unlink(err), 0);
    memset(&by, 0, sizeof by);
    cr_assert_eq(tb_build(&rs, da, top, &aut, &e), SOW_OK, "%s", e.msg);
    cr_assert_str_eq(by.by[top], "lean");
    cr_assert_str_eq(by.by[top - 1], "");
    cr_assert(same_file(da, db, &rs, top), "level %d files differ", top);
    aut.level_info = note_builder;
    aut.ctx = used;
    aut.memory_bytes = 0; /* 3/4 of RAM: the fast builder */
    used[0] = 0;
    cr_assert_eq(tb_build(&rs, da, top + 1, &aut, &e), SOW_OK, "%s", e.msg);
    cr_assert_str_eq(used, "fast");
    util_rmdir_flat(da);
    util_rmdir_flat(db);
}

Test(lean, build_files_identical_and_auto_choice) { build_files_identical_and_auto_choice("awari", 3, 13); }
Test(lean, relay_build_files_identical_and_auto_choice)
{
    build_files_identical_and_auto_choice("jodu", 6, 9);
}

struct stopper {
    volatile sig_atomic_t flag;
    int level;
    const char *phase;
};

static void stop_at(void *ctx, int level, uint64_t entries, double frac, const char *phase)
{
    struct stopper *s = ctx;
    (void)entries;
    (void)frac;
    if (level == s->level && strcmp(phase, s->phase) == 0)
        s->flag = 1;
}

/* Ctrl-C in the middle of a level (move pass or solve) loses that level
 * only; the rerun resumes there, and the files are the fast builder's. */
static void interrupted_resumes(const char *name, const char *phase)
{
    struct ruleset rs = rules(name, 6);
    char da[] = "/tmp/sow-test-lean-XXXXXX", db[] = "/tmp/sow-test-lean-XXXXXX";
    struct sow_error e;
    cr_assert(mkdtemp(da) && mkdtemp(db));
    struct stopper st = {0, 8, phase};
    struct tb_build_opts lean = {.threads = 2, .builder = TB_BUILDER_LEAN, .stop = &st.flag,
                                 .progress = stop_at, .ctx = &st};
    cr_assert_eq(tb_build(&rs, da, 9, &lean, &e), SOW_E_INTERRUPTED, "%s", e.msg);
    char path[4200];
    for (int n = 0; n <= 9; n++) {
        tb_file_name(da, rs.name, rs.pits, n, path, sizeof path);
        cr_assert_eq(access(path, F_OK) == 0, n < 8, "level %d after the interrupt", n);
    }
    st.flag = 0;
    st.level = -1;
    cr_assert_eq(tb_build(&rs, da, 9, &lean, &e), SOW_OK, "%s", e.msg);
    struct tb_build_opts fast = {.threads = 1, .builder = TB_BUILDER_FAST};
    cr_assert_eq(tb_build(&rs, db, 9, &fast, &e), SOW_OK, "%s", e.msg);
    for (int n = 0; n <= 9; n++) {
        char pa[4200], pb[4200];
        tb_file_name(da, rs.name, rs.pits, n, pa, sizeof pa);
        tb_file_name(db, rs.name, rs.pits, n, pb, sizeof pb);
        long la, lb;
        char *a = slurp(pa, &la), *b = slurp(pb, &lb);
        cr_assert(la == lb && memcmp(a, b, (size_t)la) == 0, "level %d files differ", n);
        free(a);
        free(b);
    }
    util_rmdir_flat(da);
    util_rmdir_flat(db);
}

Test(lean, interrupted_in_solve_resumes) { interrupted_resumes("oware", "solve"); }
Test(lean, interrupted_in_moves_resumes) { interrupted_resumes("oware", "moves"); }
/* relay: the move pass (writing edges), the sort and the solve (reading them) */
Test(lean, relay_interrupted_in_moves_resumes) { interrupted_resumes("odu", "moves"); }
Test(lean, relay_interrupted_in_edges_resumes) { interrupted_resumes("odu", "edges"); }
Test(lean, relay_interrupted_in_solve_resumes) { interrupted_resumes("jodu", "solve"); }

/* ---- compressed files --------------------------------------------------------- */

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tables/compress.h"

static uint8_t *map_file(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY);
    cr_assert(fd >= 0, "%s", path);
    struct stat sb;
    cr_assert_eq(fstat(fd, &sb), 0);
    *size = (size_t)sb.st_size;
    uint8_t *m = malloc(*size); /* a private copy: the tests damage it */
    cr_assert_eq(read(fd, m, *size), (ssize_t)*size);
    close(fd);
    return m;
}

Test(compress, raw_and_compressed_probe_identically_damage_detected)
{
    struct ruleset rs = rules("awari", 6);
    char dr[] = "/tmp/sow-test-lean-XXXXXX", dz[] = "/tmp/sow-test-lean-XXXXXX";
    struct sow_error e;
    cr_assert(mkdtemp(dr) && mkdtemp(dz));
    struct tb_build_opts fast = {.threads = 1, .builder = TB_BUILDER_FAST};
    cr_assert_eq(tb_build(&rs, dr, 9, &fast, &e), SOW_OK, "%s", e.msg);
    struct tb_set *set;
    cr_assert_eq(tb_open(&rs, dr, &set, &e), SOW_OK, "%s", e.msg);
    for (int n = 0; n <= 9; n++) {
        uint64_t E;
        const int8_t *v = tb_level_values(set, n, &E);
        cr_assert_eq(tbz_write(dz, &rs, n, v, E, 3, &(struct tbz_write_opts){.threads = 2}, &e), SOW_OK, "%s", e.msg);
        char path[4200];
        tb_file_name(dz, rs.name, rs.pits, n, path, sizeof path);
        size_t size;
        uint8_t *m = map_file(path, &size);
        struct tbz z;
        cr_assert_eq(tbz_parse(m, size, E, n, path, &z, &e), SOW_OK, "%s", e.msg);
        cr_assert_eq(z.rawsum, XXH3_64bits(v, E), "raw checksum = version 1's");
        /* every entry, in a scattered order, through a block cache (a miss
         * per block, then hits); then every 61st without one (each of those
         * probes decompresses its block, too slow for every entry); under
         * SOW_TEST_SCALE (the sanitizer builds) that share of them */
        uint64_t K = (uint64_t)test_scaled((long)E);
        z.cache = tbz_cache_new(1, z.bshift);
        cr_assert(z.cache);
        for (uint64_t step = 1; step <= 61; step += 60) {
            for (uint64_t i = 0, j = 0; i < K; i += step, j = (j + step * 7919) % E) {
                int got = 99;
                cr_assert(tbz_probe(&z, j, &got));
                cr_assert_eq(got, v[j], "level %d entry %llu", n, (unsigned long long)j);
            }
            tbz_cache_free(z.cache);
            z.cache = NULL;
        }
        int8_t *all = malloc(E);
        cr_assert_eq(tbz_all(&z, all, 2, &e), SOW_OK, "%s", e.msg);
        cr_assert(memcmp(all, v, E) == 0);
        free(all);
        if (n == 9) {
            cr_assert(z.nblocks >= 3, "level 9 has several blocks");
            /* Damage the middle of block 1: the stored payload's checksum
             * catches it at load ... */
            uint64_t a, b;
            memcpy(&a, m + TB_HEADER_SIZE + 1 * TBZ_INDEX_ENTRY, 8);
            memcpy(&b, m + TB_HEADER_SIZE + 2 * TBZ_INDEX_ENTRY, 8);
            m[(a + b) / 2] ^= 0x40;
            struct tbz y;
            cr_assert_eq(tbz_parse(m, size, E, n, path, &y, &e), SOW_E_INPUT);
            cr_assert(strstr(e.msg, "payload damaged"), "%s", e.msg);
            /* ... and a probe decompressing the block finds it by the
             * block's own checksum (a file damaged after it was loaded); the
             * other blocks still answer. */
            int got;
            struct tbz d = z;
            d.base = m;
            d.rawsum ^= 1; /* another file as far as the cache knows */
            cr_assert_not(tbz_probe(&d, ((uint64_t)1 << z.bshift) + 5, &got));
            int8_t *buf = malloc((size_t)1 << z.bshift);
            cr_assert_eq(tbz_block(&d, 1, buf, &e), -1);
            cr_assert(strstr(e.msg, "block 1 damaged"), "%s", e.msg);
            free(buf);
            cr_assert(tbz_probe(&d, 5, &got));
            cr_assert_eq(got, v[5]);
        }
        free(m);
    }
    /* Through the loader: tb_open keeps them compressed and tb_probe answers
     * as on the raw files; tb_file_load with values decompresses; a set not
     * opened for probing (the builders') gets them decompressed. */
    struct tb_set *zs;
    cr_assert_eq(tb_open(&rs, dz, &zs, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_max_level(zs), 9);
    const struct tb_index *ix = tb_set_index(set);
    for (int n = 0; n <= 9; n++) {
        uint64_t E = tb_level_entries(ix, n);
        uint64_t step = E / (uint64_t)test_scaled((long)E); /* 1 but under SOW_TEST_SCALE */
        for (uint64_t i = 0; i < E; i += step) {
            sow_position p;
            tb_position_of(ix, n, i, &p);
            int a = 99, b = 98;
            cr_assert(tb_probe(set, &p, &a) && tb_probe(zs, &p, &b));
            cr_assert_eq(a, b, "level %d entry %llu", n, (unsigned long long)i);
        }
        char path[4200];
        tb_file_name(dz, rs.name, rs.pits, n, path, sizeof path);
        struct tb_header h;
        const int8_t *v;
        void *map;
        size_t maplen;
        cr_assert_eq(tb_file_load(path, &rs, n, &h, &v, &map, &maplen, &e), SOW_OK, "%s", e.msg);
        cr_assert(h.version == TBZ_VERSION && h.stored < TB_HEADER_SIZE + E + 4096);
        cr_assert(memcmp(v, tb_level_values(set, n, NULL), E) == 0);
        tb_file_unmap(map, maplen);
    }
    cr_assert_null(tb_level_values(zs, 9, NULL), "kept compressed");
    tb_close(zs);
    struct tb_set *bs = tb_set_new(&rs, dz);
    cr_assert_eq(tb_set_load_level(bs, 9, &e), SOW_OK, "%s", e.msg);
    cr_assert(memcmp(tb_level_values(bs, 9, NULL), tb_level_values(set, 9, NULL),
                     tb_level_entries(ix, 9)) == 0);
    tb_close(bs);
    /* A damaged byte in a block of a file: tb_open refuses it. */
    char path[4200];
    tb_file_name(dz, rs.name, rs.pits, 9, path, sizeof path);
    FILE *f = fopen(path, "r+b");
    cr_assert(f);
    fseek(f, -100, SEEK_END);
    int c = fgetc(f);
    fseek(f, -100, SEEK_END);
    fputc(c ^ 1, f);
    fclose(f);
    cr_assert_eq(tb_open(&rs, dz, &zs, &e), SOW_E_INPUT);
    cr_assert(strstr(e.msg, "payload damaged"), "%s", e.msg);
    tb_close(set);
    util_rmdir_flat(dr);
    util_rmdir_flat(dz);
}
