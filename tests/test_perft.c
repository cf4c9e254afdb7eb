/* perft of the engine (perft.h) against counts the seed-by-seed
 * reference computed (tests/data/perft.txt, written by
 * tests/ref/ref_perft_gen.c; its header gives the format), with and without
 * a relay cache. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "perft.h"
#include "test_scale.h"
#include "sow/position.h"
#include "sow/rules.h"

Test(perft, table_from_reference, .timeout = 600)
{
    const char *path = SOW_TEST_DATA "/perft.txt";
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot open %s", path);
    char line[512];
    int lines = 0, starts = 0, depth_max = 0;
    bool seen_family[SOW_FAMILY_COUNT] = {0};
    struct sow_relay_cache *cache = rules_cache_new(14);
    cr_assert(cache);
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char rules[32], pos[SOW_POS_MAXLEN];
        int pits, seeds, depth;
        unsigned long long want;
        cr_assert_eq(sscanf(line, "%31s %d %d %191s %d %llu", rules, &pits, &seeds, pos, &depth,
                            &want),
                     6, "bad line: %s", line);
        struct ruleset rs;
        struct sow_error e;
        cr_assert_eq(rules_init(&rs, rules, pits, seeds, &e), SOW_OK, "%s", e.msg);
        sow_position p = rules_start(&rs);
        if (strcmp(pos, "start") != 0)
            cr_assert_eq(pos_parse(&rs, pos, &p, &e), SOW_OK, "%s: %s", pos, e.msg);
        else
            starts++;
        /* Sanitizer runs (SOW_TEST_SCALE < 1) skip the largest counts. */
        if (test_scale() < 1 && want > (unsigned long long)(400000 * test_scale())) {
            lines++;
            continue;
        }
        uint64_t got = perft(&rs, &p, depth, NULL);
        cr_assert_eq(got, want, "%s %d %s depth %d: engine %llu, reference %llu", rules, pits, pos,
                     depth, (unsigned long long)got, want);
        uint64_t gotc = perft(&rs, &p, depth, cache);
        cr_assert_eq(gotc, want, "%s %d %s depth %d (cached): engine %llu, reference %llu", rules,
                     pits, pos, depth, (unsigned long long)gotc, want);
        seen_family[rs.family] = true;
        if (depth > depth_max)
            depth_max = depth;
        lines++;
    }
    fclose(f);
    rules_cache_free(cache);
    cr_assert_gt(lines, 50, "only %d lines in %s", lines, path);
    cr_assert_gt(starts, 8);
    for (int fam = 0; fam < SOW_FAMILY_COUNT; fam++)
        cr_assert(seen_family[fam], "rule set %d missing from %s", fam, path);
    cr_assert_geq(depth_max, 6);
}
