/* The evaluation's terms and weights files (src/engine/eval.c,
 * docs/engine.md "Evaluation"): eval_position against its slow twin
 * eval_features, the weights files written and read back, damaged files
 * refused with the line named, and the compiled-in files. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sow/engine.h"
#include "sow/rules.h"
#include "engine/eval_builtin.h"

static uint64_t rng = 0x2545F4914F6CDD1DULL;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static sow_position random_pos(const struct ruleset *rs)
{
    sow_position p;
    memset(&p, 0, sizeof p);
    int n = (int)(rnd() % (uint64_t)(rs->holes * rs->seeds + 1));
    for (int i = 0; i < n; i++)
        p.board.h[rnd() % (uint64_t)rs->holes]++;
    if (rnd() % 4 == 0) /* now and then a big hole (a kroo) */
        p.board.h[rnd() % (uint64_t)rs->holes] += (uint8_t)(rnd() % 40);
    p.side = (uint8_t)(rnd() % 2);
    if (rs->family == SOW_DARRA)
        p.state = (uint8_t)(rnd() % 3);
    return p;
}

static void random_weights(struct eval_weights *w)
{
    int v[EVAL_NFEAT];
    for (int i = 0; i < EVAL_NFEAT; i++)
        v[i] = (int)(rnd() % 2001) - 1000;
    eval_weights_from_vector(v, w);
}

/* eval_position = the dot product of the weights with eval_features,
 * clamped to +-100 n: every rule set, sizes 2..18, random weights. */
Test(eval, position_is_features_dot_weights)
{
    for (int r = 0; sow_rule_names[r]; r++)
        for (int pits = 2; pits <= SOW_MAX_PITS; pits += 4) {
            struct ruleset rs;
            struct sow_error re;
            if (rules_init(&rs, sow_rule_names[r], pits, 4, &re) != SOW_OK)
                continue;
            for (int round = 0; round < 20; round++) {
                struct eval_weights w;
                random_weights(&w);
                int v[EVAL_NFEAT], f[EVAL_NFEAT];
                eval_weights_vector(&w, v);
                for (int i = 0; i < 200; i++) {
                    sow_position p = random_pos(&rs);
                    eval_features(&rs, &p, f);
                    long s = 0, n = rules_board_seeds(&rs, &p);
                    for (int j = 0; j < EVAL_NFEAT; j++)
                        s += (long)v[j] * f[j];
                    s = s > 100 * n ? 100 * n : s < -100 * n ? -100 * n : s;
                    cr_assert_eq(eval_position(&rs, &w, &p), s, "%s 2x%d", rs.name, pits);
                }
            }
        }
}

/* The classic weights are the first terms, the others 0. */
Test(eval, classic_list_sets_only_the_classic_terms)
{
    struct eval_weights w;
    struct sow_error e;
    cr_assert_eq(eval_parse_weights("12,12,10,40,0,10,30", &w, &e), SOW_OK);
    struct ruleset rs;
    cr_assert_eq(rules_init(&rs, "oware", 6, 4, &e), SOW_OK);
    struct eval_weights c;
    eval_classic_weights(&rs, &c);
    cr_assert(!memcmp(&w, &c, sizeof w));
    cr_assert_eq(eval_parse_weights("1,2,3", &w, &e), SOW_E_INPUT);
}

static char text[16384];

Test(eval, file_round_trip)
{
    struct eval_weights w, r;
    random_weights(&w);
    /* holes past the file's pits are not in it */
    for (int k = 6; k < SOW_MAX_PITS; k++)
        memset(w.hole[k], 0, sizeof w.hole[k]);
    int n = eval_weights_write(&w, "oware", 6, "# a comment\n", text, sizeof text);
    cr_assert_gt(n, 0);
    struct sow_error e;
    cr_assert_eq(eval_weights_read(text, (size_t)n, "t", &r, &e), SOW_OK, "%s", e.msg);
    cr_assert(!memcmp(&w, &r, sizeof w));
    cr_assert_eq(eval_weights_write(&w, "oware", 6, NULL, text, 100), -1);
}

/* Every damage is refused, with a reason naming the line. */
Test(eval, damaged_files_refused)
{
    struct eval_weights w;
    memset(&w, 0, sizeof w);
    int n = eval_weights_write(&w, "awari", 6, NULL, text, sizeof text);
    cr_assert_gt(n, 0);
    struct sow_error e;
    struct eval_weights r;
    static const char *const bad[][2] = {
        {"sow-eval 1", "sow-eval 2"},      {"rules awari", "rules nosuch"},
        {"pits 6", "pits 0"},              {"side 0", "side x"},
        {"tempo 0", "tempo 99999"},        {"hole 3 0", "hole 4 0"},
        {"threat 0", "threatened 0"},      {"hole 6 0 0 0 0 0 0 0 0 0 0 0 0", "hole 6 0 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char d[65536];
        const char *at = strstr(text, bad[i][0]);
        cr_assert(at, "%s", bad[i][0]);
        size_t pre = (size_t)(at - text);
        snprintf(d, sizeof d, "%.*s%s%s", (int)pre, text, bad[i][1], at + strlen(bad[i][0]));
        cr_assert_eq(eval_weights_read(d, strlen(d), "f", &r, &e), SOW_E_INPUT, "%s", bad[i][1]);
        cr_assert(!strncmp(e.msg, "f:", 2) && !strchr(e.msg, '\n'), "%s", e.msg);
    }
    /* truncated, and a line too many */
    cr_assert_eq(eval_weights_read(text, (size_t)n / 2, "f", &r, &e), SOW_E_INPUT);
    char d[65536];
    snprintf(d, sizeof d, "%shole 7 0\n", text);
    cr_assert_eq(eval_weights_read(d, strlen(d), "f", &r, &e), SOW_E_INPUT);
    cr_assert_eq(eval_weights_read(text, (size_t)n, "f", &r, &e), SOW_OK, "%s", e.msg);
}

/* Each compiled-in file reads, belongs to the rule set its name says, and
 * is that rule set's default. */
Test(eval, builtin_files_are_the_defaults)
{
    for (const struct embedded_file *f = eval_builtin; f->name; f++) {
        struct eval_weights w, d;
        struct sow_error e;
        cr_assert_eq(eval_weights_read((const char *)f->data, f->len, f->name, &w, &e), SOW_OK,
                     "%s", e.msg);
        char rules[32], line[64];
        int pits;
        const char *x = strstr(f->name, "-2x");
        cr_assert(x && x - f->name < 32, "%s", f->name);
        snprintf(rules, sizeof rules, "%.*s", (int)(x - f->name), f->name);
        cr_assert_eq(sscanf(x, "-2x%d.weights", &pits), 1, "%s", f->name);
        /* the file says the rule set and size its name says */
        snprintf(line, sizeof line, "\nrules %s\npits %d\n", rules, pits);
        cr_assert(strstr((const char *)f->data, line), "%s", f->name);
        struct ruleset rs;
        cr_assert_eq(rules_init(&rs, rules, pits, 4, &e), SOW_OK, "%s", f->name);
        eval_default_weights(&rs, &d);
        cr_assert(!memcmp(&w, &d, sizeof w), "%s", f->name);
    }
}
