/* The board's word-wide helpers against plain byte loops, and every rule
 * set's bulk move counter against its generator. */
#include <criterion/criterion.h>
#include <string.h>

#include "sow/board.h"
#include "sow/rules.h"
#include "util.h"

static uint64_t rng_state = 0x5eed;
static uint64_t rnd(void)
{
    return util_splitmix64(&rng_state);
}

/* A random board of `holes` lanes with at most 255 seeds in all. */
static board_t random_board(int holes)
{
    board_t b;
    memset(&b, 0, sizeof b);
    int budget = (int)(rnd() % 256);
    for (int i = 0; i < holes && budget; i++) {
        int v = (int)(rnd() % 4 == 0 ? rnd() % (unsigned)(budget + 1) : rnd() % 6);
        if (v > budget)
            v = budget;
        b.h[i] = (uint8_t)v;
        budget -= v;
    }
    return b;
}

Test(board, ones_below_table)
{
    for (int k = -40; k <= 48; k++) {
        uint64_t want = 0;
        for (int i = 0; i < 8 && i < k; i++)
            want |= 1ULL << (8 * i);
        cr_assert_eq(board_ones_below(k), want, "k=%d", k);
    }
}

Test(board, sums_compares_ranges)
{
    for (int iter = 0; iter < 200000; iter++) {
        int holes = 2 * (1 + (int)(rnd() % SOW_MAX_PITS)), nw = (holes + 7) / 8;
        board_t b = random_board(holes);
        int a = (int)(rnd() % (unsigned)(holes + 1)), e = a + (int)(rnd() % (unsigned)(holes - a + 1));
        int sum = 0;
        for (int i = a; i < e; i++)
            sum += b.h[i];
        cr_assert_eq(board_sum_range(&b, a, e), sum, "sum [%d,%d) of %d holes", a, e, holes);

        uint8_t v = (uint8_t)(rnd() % 6);
        uint64_t eq = 0, nz = 0;
        for (int i = 0; i < holes; i++) {
            eq |= (uint64_t)(b.h[i] == v) << i;
            nz |= (uint64_t)(b.h[i] != 0) << i;
        }
        cr_assert_eq(board_lanes_equal(&b, nw, holes, v), eq);
        cr_assert_eq(board_nonzero(&b, nw, holes), nz);

        board_t c = b, d = b;
        if (sum + (e - a) <= 255) {
            board_add_range(&c, nw, a, e);
            for (int i = a; i < e; i++)
                d.h[i]++;
            cr_assert(memcmp(&c, &d, sizeof c) == 0, "add [%d,%d)", a, e);
        }

        board_t f = board_flip(&b, holes / 2);
        for (int i = 0; i < holes; i++)
            cr_assert_eq(f.h[(i + holes / 2) % holes], b.h[i]);
        cr_assert(board_equal(&b, &b, nw));
        cr_assert(!board_equal(&b, &c, nw) || e == a || sum + (e - a) > 255);
    }
}

Test(board, zero_bytes_exact)
{
    for (int iter = 0; iter < 100000; iter++) {
        uint64_t x = rnd();
        for (int k = 0; k < 8; k++)
            if (rnd() % 3 == 0)
                x &= ~(0xFFULL << (8 * k));
        uint64_t want = 0;
        for (int k = 0; k < 8; k++)
            if (!((x >> (8 * k)) & 0xFF))
                want |= 0x80ULL << (8 * k);
        cr_assert_eq(board_zero_bytes(x), want);
        cr_assert_eq(board_gather(want), (unsigned)(((want >> 7) * 0x0102040810204080ULL) >> 56));
    }
}

/* count() must say what generate() says, on positions met in random games. */
Test(rules, count_matches_generate)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        for (int pits = 1; pits <= SOW_MAX_PITS; pits += (pits < 6 ? 1 : 3)) {
            struct ruleset rs;
            struct sow_error e;
            int seeds = 4 * 6 * 2 / (2 * pits) < 1 ? 1 : 4 * 6 * 2 / (2 * pits);
            cr_assert_eq(rules_init(&rs, sow_rule_names[r], pits, seeds, &e), SOW_OK, "%s",
                         e.msg);
            struct sow_movelist ml;
            for (int game = 0; game < 60; game++) {
                sow_position p = rules_start(&rs);
                for (int ply = 0; ply < 200; ply++) {
                    rules_generate(&rs, &p, &ml);
                    cr_assert_eq(rs.count(&rs, &p, NULL), ml.n, "%s 2x%d ply %d", rs.name, pits,
                                 ply);
                    if (!ml.n)
                        break;
                    p = ml.c[rnd() % (uint64_t)ml.n].pos;
                }
            }
        }
    }
}
