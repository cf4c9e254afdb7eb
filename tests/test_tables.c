/* Endgame tables: index, retrograde values against the reference
 * (tests/ref/ref_retro.c), files, interrupted builds, verification. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ref_retro.h"
#include "test_scale.h"
#include "tables/tables.h"
#include "util.h"

#include "test_passive.h" /* OpenMP threads wait passively */

static void tmpdir(char *buf)
{
    strcpy(buf, "/tmp/sow-test-tables-XXXXXX");
    cr_assert(mkdtemp(buf) != NULL);
}

static struct ruleset rules(const char *name, int pits)
{
    struct ruleset rs;
    struct sow_error e;
    cr_assert_eq(rules_init(&rs, name, pits, 0, &e), SOW_OK, "%s", e.msg);
    return rs;
}

/* ---- index ---------------------------------------------------------------- */

static void check_index(const char *name, int pits, int n)
{
    struct ruleset rs = rules(name, pits);
    struct tb_index *ix = malloc(sizeof *ix);
    tb_index_init(ix, &rs);
    uint64_t B = tb_level_boards(ix, n);
    uint8_t h[SOW_MAX_HOLES], g[SOW_MAX_HOLES];
    tb_unrank(ix, n, 0, h);
    for (uint64_t r = 0; r < B; r++) {
        tb_unrank(ix, n, r, g);
        cr_assert(memcmp(g, h, (size_t)ix->holes) == 0, "%s 2x%d n=%d: next/unrank differ at %llu",
                  name, pits, n, (unsigned long long)r);
        int s = 0;
        for (int i = 0; i < ix->holes; i++)
            s += g[i];
        cr_assert_eq(s, n);
        cr_assert_eq(tb_rank(ix, g), r, "rank(unrank(%llu))", (unsigned long long)r);
        bool more = tb_index_next(ix, h);
        cr_assert_eq(more, r + 1 < B);
    }
    /* Whole entries, both sides to move, every state. */
    uint64_t E = tb_level_entries(ix, n);
    for (uint64_t idx = 0; idx < E; idx += 1 + E / 5000) {
        sow_position p, q;
        tb_position_of(ix, n, idx, &p);
        int lv;
        uint64_t got;
        cr_assert(tb_index_of(ix, &p, &lv, &got));
        cr_assert_eq(lv, n);
        cr_assert_eq(got, idx);
        q = p;
        q.board = board_flip(&p.board, pits);
        q.side = SOW_B;
        if (p.state == SOW_STATE_A || p.state == SOW_STATE_B)
            q.state = p.state == SOW_STATE_A ? SOW_STATE_B : SOW_STATE_A;
        cr_assert(tb_index_of(ix, &q, &lv, &got));
        cr_assert_eq(got, idx, "side B twin of entry %llu", (unsigned long long)idx);
    }
    free(ix);
}

Test(tables, rank_unrank_inverse_whole_levels)
{
    check_index("oware", 6, 8);
    check_index("oware", 6, 1);
    check_index("oware", 6, 0);
    check_index("darra", 6, 6);
    check_index("awari", 3, 18);
    check_index("jodu", 2, 30);
    check_index("odu", 1, 20);
    check_index("oware", 18, 2);
    check_index("oware", 4, 12);
}

/* 64-bit indices: levels past 2^31 and 2^32 entries (2x6 levels 30 and 31
 * for every rule set, darra's states included; 2x12 level 20), index <->
 * position round trips at the boundaries, both sides to move, and the
 * neighbours of a boundary distinct positions. */
Test(tables, index_64bit_round_trips)
{
    static const struct {
        const char *rules;
        int pits, level;
    } cases[] = {{"oware", 6, 30}, {"oware", 6, 31}, {"awari", 6, 31}, {"jodu", 6, 31},
                 {"odu", 6, 31},   {"jerin", 6, 31}, {"darra", 6, 31}, {"oware", 12, 20}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct ruleset rs;
        struct sow_error re;
        cr_assert_eq(rules_init(&rs, cases[c].rules, cases[c].pits, 4, &re), SOW_OK);
        struct tb_index *ix = malloc(sizeof *ix);
        cr_assert(ix);
        tb_index_init(ix, &rs);
        int n = cases[c].level;
        uint64_t E = tb_level_entries(ix, n);
        cr_assert_gt(E, (uint64_t)1 << 31, "%s 2x%d level %d: %llu entries", rs.name, rs.pits,
                     n, (unsigned long long)E);
        const uint64_t at[] = {((uint64_t)1 << 31) - 1, (uint64_t)1 << 31,
                               ((uint64_t)1 << 31) + 1, ((uint64_t)1 << 32) - 1,
                               (uint64_t)1 << 32,       ((uint64_t)1 << 32) + 1,
                               E / 2,                   E - 2,
                               E - 1};
        sow_position prev = {0};
        for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
            uint64_t idx = at[k];
            if (idx >= E)
                continue;
            sow_position p, q;
            tb_position_of(ix, n, idx, &p);
            cr_assert_eq(rules_board_seeds(&rs, &p), n);
            int lv;
            uint64_t got;
            cr_assert(tb_index_of(ix, &p, &lv, &got));
            cr_assert_eq(lv, n);
            cr_assert_eq(got, idx, "%s 2x%d level %d: index %llu came back as %llu", rs.name,
                         rs.pits, n, (unsigned long long)idx, (unsigned long long)got);
            q = p;
            q.board = board_flip(&p.board, rs.pits);
            q.side = SOW_B;
            if (p.state == SOW_STATE_A || p.state == SOW_STATE_B)
                q.state = p.state == SOW_STATE_A ? SOW_STATE_B : SOW_STATE_A;
            cr_assert(tb_index_of(ix, &q, &lv, &got));
            cr_assert_eq(got, idx, "side B twin of entry %llu", (unsigned long long)idx);
            if (k > 0 && at[k - 1] + 1 == idx)
                cr_assert(!rules_same_position(&prev, &p), "entries %llu and %llu are one position",
                          (unsigned long long)(idx - 1), (unsigned long long)idx);
            prev = p;
        }
        free(ix);
    }
}

Test(tables, level_sizes)
{
    struct ruleset rs = rules("oware", 6);
    struct tb_index ix;
    tb_index_init(&ix, &rs);
    cr_assert_eq(tb_level_entries(&ix, 20), 84672315ULL);
    uint64_t sum = 0;
    for (int n = 0; n <= 20; n++)
        sum += tb_level_entries(&ix, n);
    cr_assert_eq(sum, 225792840ULL);
    struct ruleset rd = rules("darra", 6);
    tb_index_init(&ix, &rd);
    cr_assert_eq(tb_level_entries(&ix, 4), 3 * 1365ULL);
    /* The worked example of tables/tables.h. */
    struct ruleset r2 = rules("oware", 2);
    tb_index_init(&ix, &r2);
    uint8_t h[4] = {1, 0, 2, 0};
    cr_assert_eq(tb_rank(&ix, h), 12);
    cr_assert_eq(tb_level_boards(&ix, 3), 20);
}

/* ---- values against the reference ----------------------------------------- */

static void flip_ref(const struct ref_pos *p, struct ref_pos *q)
{
    *q = *p;
    int N = p->pits;
    for (int i = 0; i < 2 * N; i++)
        q->hole[i] = p->hole[(i + N) % (2 * N)];
    q->side = 1 - p->side;
    if (p->state == SOW_STATE_A || p->state == SOW_STATE_B)
        q->state = p->state == SOW_STATE_A ? SOW_STATE_B : SOW_STATE_A;
}

/* threads: 2 exercises the parallel build (atomics, chunk interleaving). */
static void check_against_ref(const char *name, int pits, int max_level, int threads)
{
    struct ruleset rs = rules(name, pits);
    char dir[64];
    struct sow_error e;
    tmpdir(dir);
    struct tb_build_opts opt = {threads, 0, NULL, NULL, NULL, NULL, NULL, TB_BUILDER_AUTO, NULL, 0, 0, 0, false};
    cr_assert_eq(tb_build(&rs, dir, max_level, &opt, &e), SOW_OK, "%s", e.msg);
    struct tb_set *set;
    tb_open(&rs, dir, &set, &e);
    cr_assert(set, "%s", e.msg);
    cr_assert_eq(tb_max_level(set), max_level);
    struct ref_retro *ref = ref_retro_solve(rs.family, pits, max_level);
    cr_assert(ref);
    const struct tb_index *ix = tb_set_index(set);
    for (int n = 0; n <= max_level; n++) {
        uint64_t E = tb_level_entries(ix, n);
        cr_assert_eq((uint64_t)ref_retro_count(ref, n), E, "%s 2x%d level %d: entry count", name,
                     pits, n);
        int8_t *v = malloc(E), *lohi = malloc(2 * E);
        cr_assert_eq(tb_solve_level(&rs, set, n, v, lohi, &opt, &e), SOW_OK, "%s", e.msg);
        for (int i = 0; i < (int)E; i++) {
            struct ref_pos rp, fp;
            int val, lo, hi, got, lv;
            uint64_t idx;
            ref_retro_get(ref, n, i, &rp, &val, &lo, &hi);
            sow_position sp;
            ref_to_sow(&rp, &sp);
            cr_assert(tb_probe(set, &sp, &got));
            cr_assert(tb_index_of(ix, &sp, &lv, &idx));
            cr_assert(got == val && lohi[2 * idx] == lo && lohi[2 * idx + 1] == hi,
                      "%s 2x%d level %d entry %llu: tables %d [%d,%d], reference %d [%d,%d]", name,
                      pits, n, (unsigned long long)idx, got, lohi[2 * idx], lohi[2 * idx + 1], val,
                      lo, hi);
            cr_assert_eq(v[idx], got);
            flip_ref(&rp, &fp);
            ref_to_sow(&fp, &sp);
            cr_assert(tb_probe(set, &sp, &got));
            cr_assert_eq(got, val, "side-B twin");
        }
        free(v);
        free(lohi);
    }
    ref_retro_free(ref);
    tb_close(set);
    util_rmdir_flat(dir);
}

/* The sanitizer builds (SOW_TEST_SCALE < 1) stop lower: 2x6 at level 6, the
 * 2x2 game at 12 seeds, the 2x3 one at 13 (a fifth of the positions); the
 * same code runs, with one and two threads. */
#define RULE_TESTS(id, name)                                                                   \
    Test(tables_ref, id##_2x6_to_8) { check_against_ref(name, 6, test_size(8, 6), 2); }        \
    Test(tables_ref, id##_2x2_whole_game) { check_against_ref(name, 2, test_size(16, 12), 1); } \
    Test(tables_ref, id##_2x3_whole_game_3_per_hole)                                           \
    {                                                                                          \
        check_against_ref(name, 3, test_size(18, 13), 1);                                      \
    }

RULE_TESTS(oware, "oware")
RULE_TESTS(awari, "awari")
RULE_TESTS(jodu, "jodu")
RULE_TESTS(jodu_ibadan, "jodu-ibadan")
RULE_TESTS(jodu_starve, "jodu-starve")
RULE_TESTS(odu, "odu")
RULE_TESTS(jerin, "jerin")
RULE_TESTS(darra, "darra")

/* ---- files ------------------------------------------------------------------ */

static void copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    cr_assert(a && b);
    int c;
    while ((c = fgetc(a)) != EOF)
        fputc(c, b);
    fclose(a);
    fclose(b);
}

static void poke(const char *path, long off, int xor)
{
    FILE *f = fopen(path, "r+b");
    cr_assert(f);
    fseek(f, off, SEEK_SET);
    int c = fgetc(f);
    fseek(f, off, SEEK_SET);
    fputc(c ^ xor, f);
    fclose(f);
}

static void expect_rejected(const struct ruleset *rs, const char *dir, const char *what)
{
    struct sow_error e = {0};
    struct tb_set *s;
    cr_assert_eq(tb_open(rs, dir, &s, &e), SOW_E_INPUT, "damaged set: %s", e.msg);
    cr_assert_null(s, "damaged set accepted (%s)", what);
    cr_assert(strstr(e.msg, what), "error '%s' does not say '%s'", e.msg, what);
    cr_assert(!strchr(e.msg, '\n'), "one-line error");
}

/* tb_verify_level's count of bad entries, -1 if it failed. */
static int64_t verify_bad(const struct tb_set *s, int n, const struct tb_build_opts *opt,
                          struct sow_error *e)
{
    int64_t bad = -1;
    return tb_verify_level(s, n, opt, &bad, e) == SOW_OK ? bad : -1;
}

Test(tables, damaged_truncated_foreign_files_rejected)
{
    struct ruleset rs = rules("oware", 2), ra = rules("awari", 2);
    char dir[64], other[64], path[4200], apath[4200], save[4200];
    struct sow_error e;
    tmpdir(dir);
    tmpdir(other);
    struct tb_build_opts opt = {1, 0, NULL, NULL, NULL, NULL, NULL, TB_BUILDER_AUTO, NULL, 0, 0, 0, false};
    cr_assert_eq(tb_build(&rs, dir, 6, &opt, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_build(&ra, other, 6, &opt, &e), SOW_OK, "%s", e.msg);
    struct tb_set *s;
    tb_open(&rs, dir, &s, &e);
    cr_assert(s, "%s", e.msg);
    cr_assert_eq(tb_max_level(s), 6);
    tb_close(s);
    tb_file_name(dir, rs.name, 2, 5, path, sizeof path);
    snprintf(save, sizeof save, "%s/save", other);
    copy_file(path, save);

    poke(path, TB_HEADER_SIZE + 17, 0x01); /* payload bit flip */
    expect_rejected(&rs, dir, "checksum");
    copy_file(save, path);
    poke(path, 44, 0x02); /* level field: header checksum */
    expect_rejected(&rs, dir, "header");
    copy_file(save, path);
    poke(path, 0, 0x20); /* magic */
    expect_rejected(&rs, dir, "magic");
    copy_file(save, path);
    cr_assert_eq(truncate(path, TB_HEADER_SIZE + 10), 0);
    expect_rejected(&rs, dir, "truncated");
    cr_assert_eq(truncate(path, 50), 0);
    expect_rejected(&rs, dir, "truncated");
    /* An awari level under an oware name, a level under another level's name. */
    tb_file_name(other, ra.name, 2, 5, apath, sizeof apath);
    copy_file(apath, path);
    expect_rejected(&rs, dir, "foreign");
    tb_file_name(dir, rs.name, 2, 4, apath, sizeof apath);
    copy_file(apath, path);
    expect_rejected(&rs, dir, "foreign");
    /* A good file again is accepted; a build over a damaged file refuses. */
    copy_file(save, path);
    tb_open(&rs, dir, &s, &e);
    cr_assert(s, "%s", e.msg);
    tb_close(s);
    poke(path, TB_HEADER_SIZE + 3, 0x40);
    cr_assert_eq(tb_build(&rs, dir, 6, &opt, &e), SOW_E_INPUT);
    cr_assert(strstr(e.msg, "checksum"), "%s", e.msg);
    util_rmdir_flat(dir);
    util_rmdir_flat(other);
}

Test(tables, verify_detects_wrong_values)
{
    struct ruleset rs = rules("jodu", 2);
    char dir[64];
    struct sow_error e;
    tmpdir(dir);
    struct tb_build_opts opt = {2, 0, NULL, NULL, NULL, NULL, NULL, TB_BUILDER_AUTO, NULL, 0, 0, 0, false};
    cr_assert_eq(tb_build(&rs, dir, 9, &opt, &e), SOW_OK, "%s", e.msg);
    struct tb_set *s;
    tb_open(&rs, dir, &s, &e);
    cr_assert(s, "%s", e.msg);
    for (int n = 0; n <= 9; n++)
        cr_assert_eq(verify_bad(s, n, &opt, &e), SOW_OK, "level %d: %s", n, e.msg);
    uint64_t E;
    const int8_t *v = tb_level_values(s, 7, &E);
    int8_t *w = malloc(E);
    memcpy(w, v, E);
    w[E / 2] = (int8_t)(w[E / 2] == 7 ? 5 : w[E / 2] + 1); /* well-formed file, wrong value */
    tb_close(s);
    cr_assert_eq(tb_file_write(dir, &rs, 7, w, E, &e), SOW_OK, "%s", e.msg);
    free(w);
    tb_open(&rs, dir, &s, &e);
    cr_assert(s, "%s", e.msg);
    cr_assert_gt(verify_bad(s, 7, &opt, &e), SOW_OK);
    cr_assert(strstr(e.msg, "entry"), "%s", e.msg);
    tb_close(s);
    util_rmdir_flat(dir);
}

/* ---- interrupted builds ------------------------------------------------------- */

static void die_mid_level(void *ctx, int level, uint64_t entries, double frac, const char *phase)
{
    (void)ctx;
    (void)entries;
    (void)phase;
    if (level == 10 && frac > 0.3)
        kill(getpid(), SIGKILL); /* as hard as a crash or `kill -9` */
}

static void compare_dirs(const struct ruleset *rs, const char *a, const char *b, int max)
{
    struct tb_set *x, *y = NULL;
    struct sow_error e;
    if (tb_open(rs, a, &x, &e) == SOW_OK)
        tb_open(rs, b, &y, &e);
    cr_assert(x && y, "%s", e.msg);
    cr_assert_eq(tb_max_level(x), max);
    cr_assert_eq(tb_max_level(y), max);
    for (int n = 0; n <= max; n++) {
        uint64_t e1, e2;
        const int8_t *v1 = tb_level_values(x, n, &e1), *v2 = tb_level_values(y, n, &e2);
        cr_assert(e1 == e2 && memcmp(v1, v2, e1) == 0, "level %d differs", n);
    }
    tb_close(x);
    tb_close(y);
}

Test(tables, killed_build_leaves_complete_levels_and_resumes)
{
    struct ruleset rs = rules("oware", 6);
    char dir[64], fresh[64], path[4200];
    struct sow_error e;
    tmpdir(dir);
    tmpdir(fresh);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        struct tb_build_opts opt = {1, 0, NULL, die_mid_level, NULL, NULL, NULL, TB_BUILDER_AUTO, NULL, 0, 0, 0, false};
        tb_build(&rs, dir, 11, &opt, &e);
        _exit(0); /* not reached if the hook fired */
    }
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the child was not killed");
    for (int n = 0; n <= 11; n++) {
        tb_file_name(dir, rs.name, 6, n, path, sizeof path);
        cr_assert_eq(access(path, F_OK) == 0, n < 10, "level %d present after the kill: %d", n,
                     access(path, F_OK) == 0);
    }
    struct tb_set *s;
    tb_open(&rs, dir, &s, &e);
    cr_assert(s, "%s", e.msg);
    cr_assert_eq(tb_max_level(s), 9);
    tb_close(s);
    struct tb_build_opts opt = {2, 0, NULL, NULL, NULL, NULL, NULL, TB_BUILDER_AUTO, NULL, 0, 0, 0, false};
    cr_assert_eq(tb_build(&rs, dir, 11, &opt, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_build(&rs, fresh, 11, &opt, &e), SOW_OK, "%s", e.msg);
    compare_dirs(&rs, dir, fresh, 11);
    util_rmdir_flat(dir);
    util_rmdir_flat(fresh);
}

static volatile sig_atomic_t stop_flag;

static void stop_mid_level(void *ctx, int level, uint64_t entries, double frac, const char *phase)
{
    (void)ctx;
    (void)entries;
    (void)phase;
    if (level == 9 && frac > 0.2)
        stop_flag = 1; /* what the Ctrl-C handler does */
}

Test(tables, interrupted_build_resumes)
{
    struct ruleset rs = rules("darra", 6);
    char dir[64], fresh[64], path[4200];
    struct sow_error e;
    tmpdir(dir);
    tmpdir(fresh);
    stop_flag = 0;
    struct tb_build_opts opt = {2, 0, &stop_flag, stop_mid_level, NULL, NULL, NULL, TB_BUILDER_AUTO, NULL, 0, 0, 0, false};
    cr_assert_eq(tb_build(&rs, dir, 10, &opt, &e), SOW_E_INTERRUPTED);
    tb_file_name(dir, rs.name, 6, 9, path, sizeof path);
    cr_assert_neq(access(path, F_OK), 0, "interrupted level written");
    stop_flag = 0;
    struct tb_build_opts plain = {2, 0, NULL, NULL, NULL, NULL, NULL, TB_BUILDER_AUTO, NULL, 0, 0, 0, false};
    cr_assert_eq(tb_build(&rs, dir, 10, &plain, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_build(&rs, fresh, 10, &plain, &e), SOW_OK, "%s", e.msg);
    compare_dirs(&rs, dir, fresh, 10);
    util_rmdir_flat(dir);
    util_rmdir_flat(fresh);
}

Test(tables, memory_limit_refuses_up_front)
{
    struct ruleset rs = rules("oware", 6);
    char dir[64];
    struct sow_error e;
    tmpdir(dir);
    struct tb_build_opts opt = {1, 2e6, NULL, NULL, NULL, NULL, NULL, TB_BUILDER_AUTO, NULL, 0, 0, 0, false};
    cr_assert_eq(tb_build(&rs, dir, 12, &opt, &e), SOW_E_TOO_BIG);
    cr_assert(strstr(e.msg, "memory") && strstr(e.msg, "fit"), "%s", e.msg);
    struct ruleset big = rules("oware", 6);
    cr_assert_eq(tb_build(&big, dir, 128, &opt, &e), SOW_E_INPUT);
    cr_assert(strstr(e.msg, "127"), "%s", e.msg);
    /* Nothing was built: the refusal comes before any work. */
    struct tb_set *s;
    tb_open(&rs, dir, &s, &e);
    cr_assert_eq(tb_max_level(s), -1);
    tb_close(s);
    util_rmdir_flat(dir);
}

/* ---- levels of many blocks ---------------------------------------------------- */

/* The builder cuts a level into blocks of 2^16 entries (edge bins, seeds) and
 * marks edge sources in runs of 2^15: levels with dozens of blocks, built
 * with one thread and with three, must agree byte for byte, and the top level
 * must pass the local checks against its successors. */
static void check_threads_agree(const char *name, int max_level)
{
    struct ruleset rs = rules(name, 6);
    char one[64], three[64];
    struct sow_error e;
    tmpdir(one);
    tmpdir(three);
    struct tb_build_opts o1 = {1, 0, NULL, NULL, NULL, NULL, NULL, TB_BUILDER_AUTO, NULL, 0, 0, 0, false}, o3 = {3, 0, NULL, NULL, NULL, NULL, NULL, TB_BUILDER_AUTO, NULL, 0, 0, 0, false};
    cr_assert_eq(tb_build(&rs, one, max_level, &o1, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_build(&rs, three, max_level, &o3, &e), SOW_OK, "%s", e.msg);
    compare_dirs(&rs, one, three, max_level);
    struct tb_set *s;
    tb_open(&rs, three, &s, &e);
    cr_assert(s, "%s", e.msg);
    uint64_t E;
    cr_assert(tb_level_values(s, max_level, &E));
    cr_assert_gt(E, 16 * 65536, "%s level %d has fewer than 16 blocks", name, max_level);
    cr_assert_eq(verify_bad(s, max_level, &o3, &e), SOW_OK, "%s", e.msg);
    tb_close(s);
    util_rmdir_flat(one);
    util_rmdir_flat(three);
}

Test(tables, many_block_levels_threads_agree)
{
    /* The sanitizer builds: darra's alone (its states make it the one that
     * covers more of the index). */
    if (test_scale() == 1)
        check_threads_agree("oware", 12);
    check_threads_agree("darra", 10);
}
