/* libFuzzer target: the move parser and move application over whole games.
 *
 * Input: byte 0 = rule set, byte 1 = holes per side (1..18), byte 2 = starting
 * seeds per hole, then text: an optional first token holding '/' is the
 * start position (else the rule set's start), then whitespace-separated move
 * tokens.  A token "@K" plays legal move K mod n (so the fuzzer can walk deep
 * into games; relay starts are capped at FUZZ_RELAY_SEEDS); any other token goes through move_parse + rules_find_move, as
 * `sow play` does.  At every step:
 *  - every generated move is legal when replayed by name, conserves seeds
 *    (board + stores), reports its captures truly, gives a valid position
 *    (fuzz_check_movelist);
 *  - board + stores stay equal to the total at the start over the whole game,
 *    settlement included;
 *  - the move list is the same with and without a relay cache;
 *  - a rejected move name gets a one-line message; an accepted one that is
 *    found is exactly that move. */
#include <ctype.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_lists(const struct ruleset *rs, const sow_position *p,
                       const struct sow_movelist *a, const struct sow_movelist *b)
{
    char t[SOW_POS_MAXLEN];
    pos_format(rs, p, t, sizeof t);
    if (a->n != b->n || a->end != b->end || a->endless != b->endless)
        fuzz_fail("%s %s: without cache n=%d end=%d endless=%d, with cache n=%d end=%d endless=%d",
                  rs->name, t, a->n, a->end, a->endless, b->n, b->end, b->endless);
    if (!a->n && (a->settle[0] != b->settle[0] || a->settle[1] != b->settle[1]))
        fuzz_fail("%s %s: settlement differs with the relay cache", rs->name, t);
    for (int i = 0; i < a->n; i++)
        if (a->c[i].move != b->c[i].move || a->c[i].captured[0] != b->c[i].captured[0] ||
            a->c[i].captured[1] != b->c[i].captured[1] ||
            memcmp(&a->c[i].pos, &b->c[i].pos, sizeof a->c[i].pos) != 0)
            fuzz_fail("%s %s: move %d differs with the relay cache", rs->name, t, i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    const char *rules = fuzz_rules_name(data[0]);
    int pits = 1 + data[1] % SOW_MAX_PITS;
    int seeds = data[2];
    char *text = fuzz_cstr(data + 3, size - 3);
    char tok[SOW_POS_MAXLEN];
    struct sow_error e;
    enum sow_status st;
    struct ruleset rs;
    sow_position p;
    struct sow_relay_cache *cache = NULL;

    char *save = NULL, *w = strtok_r(text, " \t\r\n", &save);
    if (w && strchr(w, '/')) {
        int tp;
        if (pos_token_pits(w, &tp, &e) != SOW_OK || rules_init(&rs, rules, tp, -1, &e) != SOW_OK ||
            pos_parse(&rs, w, &p, &e) != SOW_OK)
            goto out; /* fuzz_position covers rejected tokens */
        if (rs.relay && rules_board_seeds(&rs, &p) > FUZZ_RELAY_SEEDS)
            goto out;
        w = strtok_r(NULL, " \t\r\n", &save);
    } else {
        /* Sizes whose start does not fit 255 seeds are refused; shrink. */
        fuzz_clear_error(&e);
        while ((st = rules_init(&rs, rules, pits, seeds, &e)) != SOW_OK) {
            fuzz_check_input("rules_init", st, &e);
            if (seeds == 0)
                fuzz_fail("rules_init %s 2x%d 0 seeds: %s", rules, pits, e.msg);
            seeds /= 2;
            fuzz_clear_error(&e);
        }
        if (rs.relay && 2 * pits * seeds > FUZZ_RELAY_SEEDS &&
            rules_init(&rs, rules, pits, FUZZ_RELAY_SEEDS / (2 * pits), &e) != SOW_OK)
            fuzz_fail("rules_init %s 2x%d: %s", rules, pits, e.msg);
        p = rules_start(&rs);
        if (rules_validate(&rs, &p, &e) != SOW_OK)
            fuzz_fail("%s 2x%d/%d: start position invalid: %s", rules, pits, seeds, e.msg);
    }
    cache = rs.relay ? rules_cache_new(8) : NULL;
    const int total = rules_board_seeds(&rs, &p) + p.store[0] + p.store[1];
    for (int step = 0; w && step < 400; step++, w = strtok_r(NULL, " \t\r\n", &save)) {
        struct sow_movelist ml, mlc;
        rules_generate(&rs, &p, &ml);
        fuzz_check_movelist(&rs, &p, &ml);
        if (cache) {
            rs.generate(&rs, &p, &mlc, cache, NULL);
            same_lists(&rs, &p, &ml, &mlc);
        }
        if (!ml.n) {
            int final = p.store[0] + p.store[1] + ml.settle[0] + ml.settle[1];
            int lost = rules_board_seeds(&rs, &p) - ml.settle[0] - ml.settle[1];
            if (final + lost != total)
                fuzz_fail("%s: game over with %d+%d (nobody %d) of %d", rules, p.store[0] +
                          ml.settle[0], p.store[1] + ml.settle[1], lost, total);
            break;
        }
        int k;
        if (w[0] == '@') {
            k = (int)(strtoul(w + 1, NULL, 10) % (unsigned long)ml.n);
        } else {
            sow_move m;
            fuzz_clear_error(&e);
            if ((st = move_parse(&rs, &p, w, &m, &e)) != SOW_OK) {
                fuzz_check_input("move_parse", st, &e);
                continue;
            }
            if ((k = rules_find_move(&ml, m)) < 0)
                continue;
            if (ml.c[k].move != m)
                fuzz_fail("rules_find_move(%d) gave move %d", m, ml.c[k].move);
        }
        p = ml.c[k].pos;
        int now = rules_board_seeds(&rs, &p) + p.store[0] + p.store[1];
        if (now != total) {
            pos_format(&rs, &p, tok, sizeof tok);
            fuzz_fail("%s: %d seeds after step %d, %d at the start (%s)", rules, now, step, total,
                      tok);
        }
    }
out:
    rules_cache_free(cache);
    free(text);
    return 0;
}
