/* Writes tests/data/perft.txt from the seed-by-seed reference (ref_perft).
 * Not part of the build; run by hand after a rule change that is meant:
 *   cc -O2 -Iinclude -Itests/ref tests/ref/ref_perft_gen.c tests/ref/ref_rules.c \
 *      build-ref/src/libsow.a -fopenmp -lxxhash -o /tmp/ref_perft_gen
 *   /tmp/ref_perft_gen > tests/data/perft.txt
 * For every line below it prints depths 1, 2, ... until the count passes
 * its limit (10^6; 5*10^4 for the relay rule sets, whose long and endless
 * relays make the reference slow: minutes per 10^5 leaves), or 10^7. */
#include <stdio.h>
#include <string.h>

#include "ref_rules.h"
#include "sow/position.h"

static const struct {
    const char *rules;
    int pits, seeds;
    const char *pos; /* NULL: the start position */
    long limit;
} cases[] = {
    {"oware", 6, 4, NULL, 1000000},
    {"awari", 6, 4, NULL, 1000000},
    {"jodu", 6, 4, NULL, 50000},
    {"jodu-ibadan", 6, 4, NULL, 50000},
    {"jodu-starve", 6, 4, NULL, 50000},
    {"odu", 6, 4, NULL, 50000},
    {"jerin", 6, 4, NULL, 50000},
    {"darra", 6, 4, NULL, 1000000},
    {"darra", 12, 4, NULL, 1000000},
    {"darra", 16, 3, NULL, 300000},
    {"darra", 18, 3, NULL, 300000},
    /* small boards, where games end inside the horizon */
    {"oware", 2, 3, NULL, 1000000},
    {"awari", 3, 2, NULL, 1000000},
    {"jodu", 2, 2, NULL, 50000},
    {"jodu-ibadan", 3, 2, NULL, 50000},
    {"jodu-starve", 3, 2, NULL, 50000},
    {"odu", 3, 3, NULL, 50000},
    {"jerin", 4, 2, NULL, 50000},
    {"jerin", 1, 3, NULL, 50000},
    {"darra", 3, 3, NULL, 1000000},
    /* varied positions */
    {"oware", 6, 4, "0,0,0,0,0,13/1,0,0,0,0,0/A", 1000000},
    {"oware", 6, 4, "1,0,5,0,2,9/3,0,0,1,12,2/B/10-5/-", 1000000},
    {"awari", 6, 4, "0,0,0,0,3,1/1,0,0,0,0,0/A", 1000000},
    {"jodu", 6, 4, "5,1,4,3,4,1/6,1,7,1,0,1/A", 50000},
    {"jodu", 6, 4, "1,4,2,4,4,4/4,4,4,4,2,3/B", 50000},
    {"jodu-starve", 4, 4, "0,0,0,0/3,1,2,0/A", 50000},
    {"odu", 6, 4, "2,1,6,3,0,5/2,3,1,0,4,4/A", 50000},
    {"odu", 6, 4, "0,3,0,1,0,1/0,0,0,0,0,0/A", 50000},
    {"jerin", 6, 4, "2,0,5,1,0,3/0,4,4,1,2,2/B/0-0/open", 50000},
    {"darra", 6, 4, "2,5,1,6,0,2/1,5,2,3,2,0/A", 1000000},
    {"darra", 12, 4, "0,0,3,1,7,0,2,0,4,1,0,9/3,3,0,0,2,8,1,0,0,5,2,1/B/4-12/A", 1000000},
};

int main(void)
{
    printf("# perft counts from the seed-by-seed reference (tests/ref/ref_perft_gen.c).\n"
           "# One line per count: RULES PITS SEEDS POSITION DEPTH COUNT\n"
           "#   RULES, PITS, SEEDS: the rule set as for `sow --rules R --pits N --seeds S`;\n"
           "#   POSITION: a position token, or 'start' for the rule set's start;\n"
           "#   COUNT: move sequences of length DEPTH (perft.h: a position with no\n"
           "#   legal move adds 0 beyond it, pass is a move, repetition ignored).\n"
           "# Lines starting with '#' and blank lines are ignored.\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ruleset rs;
        struct sow_error e;
        if (rules_init(&rs, cases[i].rules, cases[i].pits, cases[i].seeds, &e) != SOW_OK) {
            fprintf(stderr, "%s\n", e.msg);
            return 1;
        }
        sow_position sp = rules_start(&rs);
        if (cases[i].pos && pos_parse(&rs, cases[i].pos, &sp, &e) != SOW_OK) {
            fprintf(stderr, "%s: %s\n", cases[i].pos, e.msg);
            return 1;
        }
        char tok[SOW_POS_MAXLEN];
        pos_format(&rs, &sp, tok, sizeof tok);
        struct ref_pos p;
        ref_from_sow(&rs, &sp, &p);
        for (int d = 1; d <= 40; d++) {
            uint64_t n = ref_perft(rs.family, &p, d);
            if (n > 10000000)
                break;
            printf("%s %d %d %s %d %llu\n", rs.name, rs.pits, rs.seeds,
                   cases[i].pos ? tok : "start", d, (unsigned long long)n);
            fflush(stdout);
            if (n >= (uint64_t)cases[i].limit || n == 0)
                break;
        }
    }
    return 0;
}
