/* Opening books (src/book, docs/book.md): the file's round trip and damage
 * detection (a header that names no game among it), a resumed build equal to a whole one, exact scores against the
 * exact solver's move values (the slow, obvious twin), the choice among
 * equal moves. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "book/book.h"
#include "book/builtin.h"
#include "sow/position.h"
#include "sow/search.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/sow-book-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

static void init_rules(struct ruleset *rs, const char *name, int pits, int seeds)
{
    struct sow_error e;
    cr_assert_eq(rules_init(rs, name, pits, seeds, &e), SOW_OK, "%s", e.msg);
}

static void build(const struct ruleset *rs, const char *path, int plies, int depth, int margin)
{
    struct book_build_opts o = {.plies = plies, .depth = depth, .margin = margin, .threads = 1,
                                .hash_mb = 16};
    struct sow_error e;
    cr_assert_eq(book_build(rs, path, &o, &e), SOW_OK, "%s", e.msg);
}

static size_t slurp(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

static void spit(const char *path, const uint8_t *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f);
    cr_assert_eq(fwrite(buf, 1, n, f), n);
    fclose(f);
}

/* Built, read back, written again: the same bytes; the start's entry holds
 * every legal move, best first; keys in order. */
Test(book, round_trip, .init = setup, .fini = teardown)
{
    struct ruleset rs;
    init_rules(&rs, "oware", 6, 4);
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.sowbook", dir);
    snprintf(b, sizeof b, "%s/b.sowbook", dir);
    build(&rs, a, 4, 8, 40);
    struct book bk;
    struct sow_error e;
    cr_assert_eq(book_open(a, &rs, &bk, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(bk.par.plies, 4);
    cr_assert_eq(bk.par.depth, 8);
    cr_assert_gt(bk.nent, 4);
    sow_position s = rules_start(&rs);
    const struct book_entry *t = book_find(&bk, &rs, &s);
    cr_assert(t);
    cr_assert_eq(t->n, 6);
    cr_assert_eq(t->ply, 0);
    for (int i = 1; i < t->n; i++)
        cr_assert_geq(bk.mov[t->first + i - 1].score, bk.mov[t->first + i].score);
    cr_assert_eq(book_write(b, &bk, &e), SOW_OK, "%s", e.msg);
    static uint8_t x[1 << 20], y[1 << 20];
    size_t nx = slurp(a, x, sizeof x), ny = slurp(b, y, sizeof y);
    cr_assert_eq(nx, ny);
    cr_assert_eq(memcmp(x, y, nx), 0);
    /* another rule set's book is refused, naming both */
    struct ruleset aw;
    init_rules(&aw, "awari", 6, 4);
    struct book other;
    cr_assert_eq(book_open(a, &aw, &other, &e), SOW_E_INPUT);
    cr_assert(strstr(e.msg, "oware") && strstr(e.msg, "awari"), "%s", e.msg);
    /* a position not in the book */
    sow_position far; /* not a position of the first plies */
    cr_assert_eq(pos_parse(&rs, "0,0,0,0,0,1/1,0,0,0,0,0/A", &far, &e), SOW_OK, "%s", e.msg);
    cr_assert_null(book_find(&bk, &rs, &far));
    book_free(&bk);
}

/* One changed byte anywhere, a cut or a longer file: refused with one line
 * naming the file (the header's seal, the payload's checksum, the size). */
Test(book, damage_detected, .init = setup, .fini = teardown)
{
    struct ruleset rs;
    init_rules(&rs, "awari", 6, 4);
    char a[128], d[128];
    snprintf(a, sizeof a, "%s/a.sowbook", dir);
    snprintf(d, sizeof d, "%s/d.sowbook", dir);
    build(&rs, a, 3, 6, 30);
    static uint8_t x[1 << 20];
    size_t n = slurp(a, x, sizeof x);
    cr_assert_gt(n, BOOK_HEADER);
    size_t at[] = {0, 9, 20, 50, 70, 85, 90, BOOK_HEADER, BOOK_HEADER + 3, n / 2, n - 1};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        x[at[k]] ^= 0x10;
        spit(d, x, n);
        x[at[k]] ^= 0x10;
        struct book bk;
        struct sow_error e;
        cr_assert_eq(book_open(d, &rs, &bk, &e), SOW_E_INPUT, "byte %zu changed: accepted",
                     at[k]);
        cr_assert(strstr(e.msg, d) && !strchr(e.msg, '\n'), "%s", e.msg);
    }
    struct book bk;
    struct sow_error e;
    spit(d, x, n - 4);
    cr_assert_eq(book_open(d, &rs, &bk, &e), SOW_E_INPUT);
    x[n] = 0;
    spit(d, x, n + 1);
    cr_assert_eq(book_open(d, &rs, &bk, &e), SOW_E_INPUT);
    spit(d, x, 10);
    cr_assert_eq(book_open(d, &rs, &bk, &e), SOW_E_INPUT);
    cr_assert(strstr(e.msg, "not a sow opening book"), "%s", e.msg);
}

/* A header whose checksums hold but whose rule set field is not a game sow
 * names (as a damaged or hand-made file may be) is refused in one line,
 * with or without a rule set asked for: `sow book info` prints the name. */
Test(book, header_names_a_game, .init = setup, .fini = teardown)
{
    struct ruleset rs;
    init_rules(&rs, "oware", 3, 2);
    char a[128], d[128];
    snprintf(a, sizeof a, "%s/a.sowbook", dir);
    snprintf(d, sizeof d, "%s/d.sowbook", dir);
    build(&rs, a, 2, 4, 30);
    static uint8_t x[1 << 16], y[1 << 16];
    size_t n = slurp(a, x, sizeof x);
    static const struct {
        const char *rules;
        uint32_t pits, seeds;
    } bad[] = {
        {"oware", 0, 2},           /* rules_init's default, not a board */
        {"oware", 19, 2},          /* too wide */
        {"oware", 3, 1090519043},  /* 2 x pits x seeds past int */
        {"kyekyemapuduo", 3, 2},   /* an alias: sow writes "jodu" */
        {"chess", 3, 2},
        {"oware\nx", 3, 2},       /* a line break in a name */
        {"Oware", 3, 2},
        {"", 3, 2},
    };
    for (size_t k = 0; k <= sizeof bad / sizeof bad[0]; k++) {
        memcpy(y, x, n);
        if (k < sizeof bad / sizeof bad[0]) {
            memset(y + 16, 0, 24);
            memcpy(y + 16, bad[k].rules, strlen(bad[k].rules));
            memcpy(y + 40, &bad[k].pits, 4);
            memcpy(y + 44, &bad[k].seeds, 4);
        } else {
            y[16 + 6] = 'x'; /* "oware", NUL, then not padding */
        }
        uint64_t seal = XXH3_64bits(y, 88);
        memcpy(y + 88, &seal, 8);
        spit(d, y, n);
        for (int with = 0; with < 2; with++) {
            struct book bk;
            struct sow_error e;
            cr_assert_eq(book_open(d, with ? &rs : NULL, &bk, &e), SOW_E_INPUT, "case %zu: accepted",
                         k);
            cr_assert(strstr(e.msg, d) && !strchr(e.msg, '\n'), "case %zu: %s", k, e.msg);
        }
    }
    struct book bk; /* the unchanged file, resealed the same way, is read */
    struct sow_error e;
    memcpy(y, x, n);
    uint64_t seal = XXH3_64bits(y, 88);
    memcpy(y + 88, &seal, 8);
    spit(d, y, n);
    cr_assert_eq(book_open(d, NULL, &bk, &e), SOW_OK, "%s", e.msg);
    book_free(&bk);
}

/* A build stopped after some plies and resumed gives the file a whole build
 * gives; so does building it again (with one thread a build is the same on
 * every run). */
Test(book, resume_equals_whole_build, .init = setup, .fini = teardown)
{
    struct ruleset rs;
    init_rules(&rs, "oware", 6, 4);
    char a[128], b[128], c[128];
    snprintf(a, sizeof a, "%s/a.sowbook", dir);
    snprintf(b, sizeof b, "%s/b.sowbook", dir);
    snprintf(c, sizeof c, "%s/c.sowbook", dir);
    build(&rs, a, 5, 7, 50);
    build(&rs, b, 2, 7, 50);
    build(&rs, b, 5, 7, 50); /* resumes at ply 2 */
    build(&rs, c, 5, 7, 50);
    static uint8_t x[1 << 20], y[1 << 20];
    size_t nx = slurp(a, x, sizeof x), ny = slurp(b, y, sizeof y);
    cr_assert_eq(nx, ny);
    cr_assert_eq(memcmp(x, y, nx), 0, "resumed build differs from a whole one");
    ny = slurp(c, y, sizeof y);
    cr_assert_eq(nx, ny);
    cr_assert_eq(memcmp(x, y, nx), 0, "two builds differ");
    /* another depth on the same file is refused, not mixed in */
    struct book_build_opts o = {.plies = 6, .depth = 9, .margin = 50, .threads = 1, .hash_mb = 16};
    struct sow_error e;
    cr_assert_eq(book_build(&rs, a, &o, &e), SOW_E_INPUT);
    cr_assert(strstr(e.msg, "depth 7"), "%s", e.msg);
}

/* On a small board the book's exact scores are the exact solver's move
 * values: every position of the first plies, every move marked exact. */
Test(book, exact_scores_are_the_solver_move_values, .init = setup, .fini = teardown)
{
    static const char *names[] = {"oware", "awari", "odu", "darra"};
    for (size_t r = 0; r < sizeof names / sizeof names[0]; r++) {
        struct ruleset rs;
        init_rules(&rs, names[r], 3, 2);
        char a[128];
        snprintf(a, sizeof a, "%s/%s.sowbook", dir, names[r]);
        build(&rs, a, 4, 12, 10000); /* every move followed */
        struct book bk;
        struct sow_error e;
        cr_assert_eq(book_open(a, &rs, &bk, &e), SOW_OK, "%s", e.msg);
        struct search_opts so = {0};
        so.threads = 1;
        so.hash_mb = 16;
        struct search_ctx *S;
        cr_assert_eq(search_new(&rs, &so, &S, &e), SOW_OK, "%s", e.msg);
        /* the positions of plies 0..3, breadth first */
        sow_position *q = malloc(sizeof *q * 4096);
        cr_assert(q);
        int nq = 1, head = 0, exact = 0, checked = 0;
        q[0] = rules_start(&rs);
        for (int ply = 0; ply < 4; ply++) {
            int end = nq;
            for (; head < end; head++) {
                const struct book_entry *t = book_find(&bk, &rs, &q[head]);
                struct sow_movelist ml;
                rules_generate(&rs, &q[head], &ml);
                if (!ml.n)
                    continue;
                cr_assert(t, "%s: a position of ply %d missing", rs.name, ply);
                checked++;
                int vals[BOOK_MAX_MOVES];
                cr_assert_eq(search_move_values(S, &q[head], vals), ml.n);
                for (int i = 0; i < t->n; i++) {
                    const struct book_move *m = &bk.mov[t->first + i];
                    int j = rules_find_move(&ml, m->move);
                    cr_assert_geq(j, 0);
                    if (m->flags & BOOK_EXACT) {
                        exact++;
                        cr_assert_eq(m->score, 100 * vals[j], "%s: move %d: book %d, solver %d",
                                     rs.name, m->move, m->score, 100 * vals[j]);
                    }
                }
                for (int i = 0; i < ml.n && nq < 4096; i++)
                    q[nq++] = ml.c[i].pos;
            }
        }
        cr_assert_gt(checked, 3);
        cr_assert_gt(exact, 0, "%s: no exact score to check", rs.name);
        free(q);
        search_free(S);
        book_free(&bk);
    }
}

/* Margin 0 chooses among the best-scored moves only, and over many draws
 * each of them; a wider margin takes the next ones too. */
Test(book, choice_among_equal_moves)
{
    struct book_move mv[4] = {{3, 0, 40}, {1, 0, 40}, {5, 0, 30}, {0, 0, -90}};
    struct book_entry t = {1, 0, 4, 0, 0};
    struct book b = {.nent = 1, .nmov = 4, .ent = &t, .mov = mv};
    uint64_t rng = 7;
    int seen[8] = {0};
    for (int i = 0; i < 400; i++)
        seen[book_choose(&b, &t, 0, &rng)]++;
    cr_assert(seen[3] > 100 && seen[1] > 100, "%d %d", seen[3], seen[1]);
    cr_assert_eq(seen[5] + seen[0], 0);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < 600; i++)
        seen[book_choose(&b, &t, 10, &rng)]++;
    cr_assert(seen[3] > 100 && seen[1] > 100 && seen[5] > 100);
    cr_assert_eq(seen[0], 0);
}
