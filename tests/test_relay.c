/* The jodu relay's fast paths against the seed-by-seed reference, by kind of
 * relay, so that each kind is known to have been met (the randomized tests
 * of test_diff.c compare everything but do not say what they covered).
 *
 * src/rules/jodu.c decides "never ends" by comparing with the starting state
 * only ("Why the start" there: a lift is a one-to-one map on relay states, so
 * a relay that repeats comes back to its first state).  The reference
 * remembers every state and reports where the cycle begins: here every
 * never-ending jodu move must have its cycle begin at the move's own start.
 * The kinds counted, each of which must occur: relays that end and relays
 * that never end, on 2x1..2x8 boards (one 16-lane vector, the table path) and
 * 2x9..2x12 (the word path); lifts of H or more seeds (the lap path);
 * relays longer than RELAY_CACHE_AFTER lifts (chunk boundaries, the memo),
 * generated again from the memo.  Fixed PRNG seeds; messages name the
 * position.  About a second per test.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ref_rules.h"
#include "test_scale.h"
#include "sow/position.h"
#include "sow/rules.h"
#include "util.h"

/* Relays longer than this are left out (the reference keeps every state). */
#define REF_LIMIT 20000
#define MEMO_AFTER 48 /* RELAY_CACHE_AFTER of src/rules/relay_cache.h */

static int rnd(uint64_t *s, int n) { return (int)(util_splitmix64(s) % (uint64_t)n); }

struct kinds {
    long ended, endless, laps, long_relays, memo_hits, skipped;
    long turned; /* positions whose endless relays the engine proved in fewer
                  * lifts than their cycles: by a turn of the start */
};

/* A random position on 2xpits: small counts, now and then holes of H or more
 * (the lap path), total <= 255. */
static void random_pos(uint64_t *s, int pits, struct ref_pos *p)
{
    memset(p, 0, sizeof *p);
    int H = 2 * pits, total = 0;
    p->pits = pits;
    int mode = rnd(s, 3);
    for (int i = 0; i < H; i++) {
        int v = mode == 0 ? rnd(s, 4) : mode == 1 ? rnd(s, 7) : rnd(s, 6) == 0 ? H + rnd(s, H) : rnd(s, 3);
        if (total + v > 255)
            v = 0;
        p->hole[i] = v;
        total += v;
    }
    p->side = rnd(s, 2);
}

/* Does the relay of move k lift H or more seeds at some point?  (Counted
 * from the reference's rules, seed by seed, up to REF_LIMIT lifts.) */
static bool lifts_a_lap(const struct ref_pos *p, int k)
{
    int H = 2 * p->pits, b[SOW_MAX_HOLES], c = p->side * p->pits + k;
    memcpy(b, p->hole, sizeof b);
    for (int n = 0; n < REF_LIMIT; n++) {
        int s = b[c];
        if (s >= H)
            return true;
        b[c] = 0;
        for (int j = 0; j < s; j++)
            c = (c + 1) % H, b[c]++;
        if (b[c] == 1)
            return false;
    }
    return false;
}

static void check_position(const struct ruleset *rs, struct sow_relay_cache *cache,
                           const struct ref_pos *rp, struct kinds *kd)
{
    struct ref_list rl;
    if (!ref_generate_bounded(rs->family, rp, &rl, REF_LIMIT)) {
        kd->skipped++;
        return;
    }
    sow_position sp;
    ref_to_sow(rp, &sp);
    char tok[SOW_POS_MAXLEN];
    pos_format(rs, &sp, tok, sizeof tok);
    /* plain, then with the memo twice (the second time long relays hit it) */
    for (int pass = 0; pass < 3; pass++) {
        struct sow_movelist ml;
        struct sow_stats st = {0};
        rs->generate(rs, &sp, &ml, pass ? cache : NULL, &st);
        if (pass == 2)
            kd->memo_hits += (long)st.cache_hits;
        if (pass == 0 && st.endless) {
            long cycles = 0;
            for (int k = 0; k < rp->pits; k++) {
                long pickups, first, len;
                if (rp->hole[rp->side * rp->pits + k] &&
                    ref_move_endless(rs->family, rp, k, &pickups, &first, &len))
                    cycles += len;
            }
            kd->turned += (long)st.endless_pickups < cycles;
        }
        cr_assert_eq(ml.n, rl.n, "%s %s (pass %d): engine %d moves, reference %d", rs->name, tok,
                     pass, ml.n, rl.n);
        cr_assert_eq(ml.endless, rl.endless, "%s %s (pass %d): endless engine %d reference %d",
                     rs->name, tok, pass, ml.endless, rl.endless);
        cr_assert_eq((int)ml.end, rl.end, "%s %s (pass %d): end", rs->name, tok, pass);
        for (int j = 0; j < ml.n; j++) {
            sow_position want;
            ref_to_sow(&rl.c[j].pos, &want);
            cr_assert(ml.c[j].move == rl.c[j].move &&
                          memcmp(&want, &ml.c[j].pos, sizeof want) == 0 &&
                          ml.c[j].captured[0] == rl.c[j].captured[0] &&
                          ml.c[j].captured[1] == rl.c[j].captured[1],
                      "%s %s (pass %d): move %d differs from the reference", rs->name, tok, pass,
                      rl.c[j].move);
        }
    }
    /* the kinds, move by move */
    for (int k = 0; k < rp->pits; k++) {
        if (!rp->hole[rp->side * rp->pits + k])
            continue;
        long pickups, first, len;
        bool endless = ref_move_endless(rs->family, rp, k, &pickups, &first, &len);
        if (endless) {
            cr_assert_eq(first, 0,
                         "%s %s: move %d never ends but its cycle begins after %ld lifts, not at "
                         "its start (src/rules/jodu.c compares with the start only)",
                         rs->name, tok, k, first);
            kd->endless++;
        } else {
            kd->ended++;
        }
        kd->laps += lifts_a_lap(rp, k);
        kd->long_relays += pickups > MEMO_AFTER;
    }
}

/* Relays that never end are rare in random positions on 2x9 and up (none in
 * 100,000); these were found by a random search (small counts, 10 to 60
 * seeds) and each holds one, the move given.  The states of its cycle are
 * positions too (the board, the lifted hole's owner to move, that hole's
 * move), so every one checked here yields many: up to 40 per cycle, spread
 * along it.  Whether each move ends or not is the reference's answer, not
 * this table's. */
static const struct {
    int pits, move;
    const char *tok;
} cycle_seeds[] = {
    {9, 6, "2,1,0,2,1,4,0,1,0/1,4,3,2,3,2,1,0,1/A"},
    {9, 3, "2,3,2,1,0,4,5,2,1/2,4,3,1,3,2,3,2,1/B"},
    {9, 9, "2,1,2,1,2,3,2,1,2/1,0,1,3,2,1,6,5,2/B"},
    {10, 1, "4,2,1,2,1,0,1,3,5,0/1,2,3,2,1,5,4,0,2,1/A"},
    {10, 9, "1,2,1,3,4,1,2,1,3,1/3,2,3,2,1,2,1,2,1,0/A"},
    {10, 4, "1,0,1,3,4,3,2,1,0,2/1,0,2,1,2,3,0,1,0,2/A"},
    {11, 4, "1,0,1,3,1,0,1,0,3,0,1/2,1,0,1,0,4,3,0,1,0,2/A"},
    {11, 10, "1,0,1,2,3,1,2,0,2,1,0/1,0,1,0,2,1,0,2,1,2,2/B"},
    {11, 4, "3,2,1,3,4,3,4,1,0,1,2/1,0,1,2,4,3,0,1,2,1,2/B"},
    {12, 11, "5,2,1,0,1,5,4,1,2,3,2,0/1,0,4,1,2,1,2,1,0,4,1,2/A"},
    {12, 2, "5,3,0,1,4,1,2,1,0,1,2,1/2,1,0,1,5,1,0,4,1,0,1,0/A"},
    {12, 11, "2,1,2,3,4,1,2,1,2,1,3,2/1,2,1,0,4,1,0,3,0,1,2,3/B"},
};

static void run_cycles(const char *rules, struct sow_relay_cache *cache, struct kinds *kd)
{
    for (size_t i = 0; i < sizeof cycle_seeds / sizeof cycle_seeds[0]; i++) {
        struct ruleset rs;
        struct sow_error e;
        cr_assert_eq(rules_init(&rs, rules, cycle_seeds[i].pits, 4, &e), SOW_OK, "%s", e.msg);
        sow_position sp;
        cr_assert_eq(pos_parse(&rs, cycle_seeds[i].tok, &sp, &e), SOW_OK, "%s", e.msg);
        struct ref_pos rp;
        ref_from_sow(&rs, &sp, &rp);
        long pickups, first, len;
        int k = cycle_seeds[i].move - 1;
        cr_assert(ref_move_endless(rs.family, &rp, k, &pickups, &first, &len),
                  "%s %s: move %d was found never to end", rules, cycle_seeds[i].tok, k + 1);
        /* walk the cycle, checking states spread along it as positions */
        int H = 2 * rp.pits, c = rp.side * rp.pits + k;
        long every = len / 40 + 1;
        for (long n = 0; n < len; n++) {
            if (n % every == 0) {
                struct ref_pos q = rp;
                q.side = c / rp.pits;
                q.store[0] = q.store[1] = 0;
                check_position(&rs, cache, &q, kd);
            }
            int s = rp.hole[c];
            rp.hole[c] = 0;
            for (int j = 0; j < s; j++)
                c = (c + 1) % H, rp.hole[c]++;
        }
    }
}

static void run(const char *rules, int pits_lo, int pits_hi, long count)
{
    uint64_t s = 0x7e1a0000ULL + (uint64_t)pits_lo;
    struct sow_relay_cache *cache = rules_cache_new(12);
    cr_assert(cache);
    struct kinds kd = {0};
    for (long i = 0; i < count; i++) {
        int pits = pits_lo + rnd(&s, pits_hi - pits_lo + 1);
        struct ruleset rs;
        struct sow_error e;
        cr_assert_eq(rules_init(&rs, rules, pits, 4, &e), SOW_OK, "%s", e.msg);
        struct ref_pos rp;
        random_pos(&s, pits, &rp);
        check_position(&rs, cache, &rp, &kd);
    }
    if (pits_lo > 8)
        run_cycles(rules, cache, &kd);
    rules_cache_free(cache);
    cr_log_info("%s 2x%d..2x%d: %ld relays ended, %ld never ended, %ld with a lap, %ld longer "
                "than %d lifts, %ld memo hits, %ld positions too long for the reference, %ld with an "
                "endless relay proven by a turn",
                rules, pits_lo, pits_hi, kd.ended, kd.endless, kd.laps, kd.long_relays,
                MEMO_AFTER, kd.memo_hits, kd.skipped, kd.turned);
    cr_assert_gt(kd.ended, count / 2, "%s: too few relays that end (%ld)", rules, kd.ended);
    cr_assert_gt(kd.endless, count / 1000, "%s: too few endless relays (%ld)", rules, kd.endless);
    cr_assert_gt(kd.laps, count / 100, "%s: too few lifts of H or more (%ld)", rules, kd.laps);
    cr_assert_gt(kd.long_relays, count / 1000, "%s: too few long relays (%ld)", rules,
                 kd.long_relays);
    cr_assert_gt(kd.memo_hits, 0, "%s: the memo was never hit", rules);
    cr_assert_gt(kd.turned, 0, "%s: no endless relay was proven by a turn of its start", rules);
    cr_assert_lt(kd.skipped * 100, count, "%s: %ld positions too long for the reference", rules,
                 kd.skipped);
}

#define RELAY_TESTS(id, name)                                                                  \
    Test(relay, id##_vector) { run(name, 1, 8, test_scaled(20000)); }                          \
    Test(relay, id##_words) { run(name, 9, 12, test_scaled(4000)); }

RELAY_TESTS(jodu, "jodu")
RELAY_TESTS(jodu_ibadan, "jodu-ibadan")
RELAY_TESTS(jodu_starve, "jodu-starve")
