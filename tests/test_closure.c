/* The compact closure (src/solver/closure.h) and solution files
 * (src/solver/solution.h): key layout, memory budget, files. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "solver/closure.h"
#include "solver/closure_internal.h" /* clos_grow_nodes */
#include "solver/solution.h"
#include "test_scale.h"
#include "sow/position.h"
#include "sow/search.h"
#include "tables/tb_lean.h"
#include "test_files.h" /* whole files compared */

static uint64_t rng_state = 88172645463325252ULL;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* The sorted-key searches of the closure on disk against a linear scan:
 * random sorted arrays of 1- and 2-word keys (0 to 3,000 keys, with runs
 * of equal high words), keys present and absent, up to 7 searches at once
 * over different arrays. */
Test(closure, key_find_many)
{
    for (int K = 1; K <= 2; K++) {
        for (int round = 0; round < 300; round++) {
            uint64_t *arr[7], ns[7];
            const uint64_t *ks[7];
            for (int j = 0; j < 7; j++) {
                ns[j] = rnd() % (round < 20 ? 4 : 3000);
                arr[j] = malloc(8 * (size_t)K * (ns[j] + 1));
                uint64_t hi = rnd() % 5, lo = rnd() % 3;
                for (uint64_t i = 0; i < ns[j]; i++) { /* strictly increasing */
                    if (K == 2 && rnd() % 4 == 0) {
                        hi += 1 + rnd() % 3;
                        lo = rnd() % 3;
                    } else {
                        lo += 1 + rnd() % 3;
                    }
                    arr[j][i * K] = K == 1 ? hi * 1000000 + lo : lo;
                    if (K == 2)
                        arr[j][i * K + 1] = hi;
                }
                ks[j] = arr[j];
            }
            int cnt = 1 + (int)(rnd() % 7);
            uint64_t ws[7 * 2];
            for (int j = 0; j < cnt; j++) {
                if (ns[j] && rnd() % 2) {
                    memcpy(&ws[j * K], &arr[j][(rnd() % ns[j]) * K], 8 * (size_t)K);
                } else {
                    ws[j * K] = rnd() % 8000;
                    if (K == 2)
                        ws[j * K + 1] = rnd() % 40;
                    if (K == 1)
                        ws[j * K] = rnd() % 5 * 1000000 + rnd() % 8000;
                }
            }
            int64_t got[7];
            clos_key_find_many(ks, ns, ws, cnt, K, got);
            for (int j = 0; j < cnt; j++) {
                int64_t want = -1;
                for (uint64_t i = 0; i < ns[j] && want < 0; i++)
                    if (!memcmp(&arr[j][i * K], &ws[j * K], 8 * (size_t)K))
                        want = (int64_t)i;
                cr_assert_eq(got[j], want, "K=%d round %d search %d of %llu keys", K, round, j,
                             (unsigned long long)ns[j]);
                cr_assert_eq(clos_key_find(arr[j], ns[j], &ws[j * K], K), want);
            }
            for (int j = 0; j < 7; j++)
                free(arr[j]);
        }
    }
}

/* The worked example of closure.h. */
Test(closure, key_example)
{
    struct ruleset rs;
    struct sow_error re;
    sow_position p, q, a;
    cr_assert_eq(rules_init(&rs, "oware", 6, 4, &re), SOW_OK);
    cr_assert_eq(pos_parse(&rs, "1,0,1,0,1,1/0,1,1,0,0,1/B", &p, &re), SOW_OK, "%s", re.msg);
    cr_assert_eq(pos_parse(&rs, "0,1,1,0,0,1/1,0,1,0,1,1/A", &a, &re), SOW_OK, "%s", re.msg);
    cr_assert_eq(clos_words_for(&rs, 7), 1);
    uint64_t w = 0, wa = 0;
    cr_assert(clos_pack(&rs, 1, &p, &w));
    cr_assert_eq(w, 0xA4A28, "key %llx", (unsigned long long)w);
    cr_assert(clos_pack(&rs, 1, &a, &wa));
    cr_assert_eq(wa, w);
    clos_unpack(&rs, 1, &w, &q);
    a.store[0] = a.store[1] = 0;
    cr_assert(rules_same_position(&q, &a));
}

/* The position normalised to the mover, by the definition. */
static void normalise(const struct ruleset *rs, const sow_position *p, sow_position *n)
{
    memset(n, 0, sizeof *n);
    int rot = p->side == SOW_B ? rs->pits : 0;
    for (int j = 0; j < rs->holes; j++)
        n->board.h[j] = p->board.h[(j + rot) % rs->holes];
    n->side = SOW_A;
    n->state = p->state;
    if (p->side == SOW_B && (p->state == SOW_STATE_A || p->state == SOW_STATE_B))
        n->state = p->state == SOW_STATE_A ? SOW_STATE_B : SOW_STATE_A;
}

/* Pack and unpack random positions, one word and several (big boards). */
Test(closure, pack_roundtrip)
{
    static const char *names[] = {"oware", "jodu", "odu", "jerin", "darra"};
    static const int widths[] = {2, 6, 8, 10, 18}; /* one-word keys: up to 16 holes apart */
    for (int r = 0; r < 5; r++)
        for (int wi = 0; wi < 5; wi++) {
            const int pits = widths[wi];
            struct ruleset rs;
            struct sow_error re;
            cr_assert_eq(rules_init(&rs, names[r], pits, 1, &re), SOW_OK);
            for (int i = 0; i < 2000; i++) {
                sow_position p, n, q;
                memset(&p, 0, sizeof p);
                int seeds = (int)(rnd() % 120);
                for (int s = 0; s < seeds; s++)
                    p.board.h[rnd() % (uint64_t)rs.holes]++;
                p.side = (uint8_t)(rnd() & 1);
                p.state = (uint8_t)(rnd() % 4);
                int K = clos_words_for(&rs, seeds);
                uint64_t w[8] = {0}, w2[8] = {0};
                cr_assert(clos_pack(&rs, K, &p, w));
                if (K > 1) /* one word less must not fit */
                    cr_assert(!clos_pack(&rs, K - 1, &p, w2));
                clos_unpack(&rs, K, w, &q);
                normalise(&rs, &p, &n);
                cr_assert(rules_same_position(&q, &n), "%s 2x%d seeds %d K %d", names[r], pits,
                          seeds, K);
            }
        }
}

static struct search_ctx *closure_ctx(const struct ruleset *rs, int threads, double memory)
{
    struct sow_error e;
    struct search_opts o = {
        .threads = threads, .hash_mb = 1, .level_budget = -1, .memory = memory};
    struct search_ctx *s;
    cr_assert_eq(search_new(rs, &o, &s, &e), SOW_OK, "%s", e.msg);
    return s;
}

static void keep_refusal(void *arg, const char *line)
{
    if (strstr(line, "closure refused"))
        snprintf(arg, 512, "%s", line);
}

/* A closure past the --memory budget is refused before the layer that
 * would not fit, with a status the CLI maps to exit 2. */
Test(closure, memory_refusal)
{
    struct ruleset rs;
    struct sow_error re;
    cr_assert_eq(rules_init(&rs, "odu", 6, 4, &re), SOW_OK);
    sow_position p = rules_start(&rs);
    struct search_ctx *s = closure_ctx(&rs, 2, 4e6);
    int v;
    cr_assert_eq(search_value(s, &p, &v), SOW_E_TOO_BIG);
    cr_assert_eq(search_last_error(s)->status, SOW_E_TOO_BIG);
    const char *why = search_last_error(s)->msg;
    cr_assert(why && strstr(why, "reached") && strstr(why, "--memory"), "%s", why);
    search_free(s);
    /* the progress line of the refusal: positions found per level, adding
     * up to the positions the refusal names */
    char line[512] = "";
    struct sow_error e;
    struct search_opts o = {.threads = 1, .hash_mb = 1, .level_budget = -1, .memory = 4e6,
                            .progress = keep_refusal, .progress_arg = line};
    cr_assert_eq(search_new(&rs, &o, &s, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(search_value(s, &p, &v), SOW_E_TOO_BIG);
    unsigned long long total = 0, sum = 0, lv, cnt;
    cr_assert_eq(sscanf(line, "closure refused at %llu", &total), 1, "%s", line);
    const char *q = strstr(line, "per level:");
    cr_assert(q, "%s", line);
    q += strlen("per level:");
    int used;
    while (sscanf(q, " %llu:%llu%n", &lv, &cnt, &used) == 2) {
        sum += cnt;
        q += used;
    }
    cr_assert(total > 0 && sum == total, "%llu positions, %llu by level", total, sum);
    search_free(s);
}

/* A solution file answers exactly what the solve computed, for every
 * position in it (value and every move's value), on every rule set. */
Test(closure, solution_roundtrip, .timeout = 120)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        char path[256];
        struct sow_error re;
        cr_assert_eq(rules_init(&rs, sow_rule_names[r], 3, 2, &re), SOW_OK);
        sow_position root = rules_start(&rs);
        struct search_ctx *s = closure_ctx(&rs, 1, 0);
        struct search_result res;
        cr_assert_eq(search_solve(s, &root, &res), 0);
        snprintf(path, sizeof path, "/tmp/sow-test-sol-%d-%s", (int)getpid(), rs.name);
        struct sow_error e = {0};
        cr_assert_eq(search_save(s, &root, path, &e), SOW_OK, "%s", e.msg);
        struct sol *f;
        cr_assert_eq(sol_open(&rs, path, &f, &e), SOW_OK, "%s", e.msg);
        cr_assert(sol_size(f) > 1);
        for (uint64_t i = 0; i < sol_size(f); i++) {
            sow_position p;
            sol_position(f, i, &p);
            int v, fv, vals[SOW_MAX_PITS + 1], fvals[SOW_MAX_PITS + 1];
            cr_assert(sol_find(f, &p, NULL, NULL, &fv));
            cr_assert_eq(search_value(s, &p, &v), 0);
            cr_assert_eq(fv, v, "%s node %llu: file %d, solve %d", rs.name,
                         (unsigned long long)i, fv, v);
            int n = search_move_values(s, &p, vals);
            cr_assert_eq(sol_move_values(f, &p, fvals), n);
            for (int k = 0; k < n; k++)
                cr_assert_eq(fvals[k], vals[k], "%s node %llu move %d", rs.name,
                             (unsigned long long)i, k);
        }
        cr_assert_eq(search_solution_answer(f, &root, &res, (int[SOW_MAX_PITS + 1]){0}) >= 0,
                     true);
        sol_close(f);
        /* a foreign rule set */
        struct ruleset other;
        cr_assert_eq(rules_init(&other, strcmp(rs.name, "oware") ? "oware" : "awari", 3, 2, &re),
                     SOW_OK);
        cr_assert_eq(sol_open(&other, path, &f, &e), SOW_E_INPUT);
        cr_assert(strstr(e.msg, "foreign"), "%s", e.msg);
        unlink(path);
        search_free(s);
    }
}

/* A solution file is written as every output is (fileio.h rule 2): a link
 * or a FIFO at the path is refused and left as it was, and no temporary
 * file stays behind. */
Test(closure, solution_save_target)
{
    struct ruleset rs;
    struct sow_error re;
    cr_assert_eq(rules_init(&rs, "odu", 3, 2, &re), SOW_OK);
    sow_position root = rules_start(&rs);
    struct search_ctx *s = closure_ctx(&rs, 1, 0);
    struct search_result res;
    cr_assert_eq(search_solve(s, &root, &res), 0);
    char dir[128], victim[200], link[200], fifo[200], cmd[300];
    snprintf(dir, sizeof dir, "/tmp/sow-test-saveto-%d", (int)getpid());
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    mkdir(dir, 0777);
    FILE *f = fopen(victim, "w");
    cr_assert(f);
    fputs("keep\n", f);
    fclose(f);
    cr_assert_eq(symlink("victim", link), 0);
    cr_assert_eq(mkfifo(fifo, 0644), 0);
    struct sow_error e = {0};
    cr_assert_eq(search_save(s, &root, link, &e), SOW_E_INPUT, "%s", e.msg);
    cr_assert(strstr(e.msg, "link"), "%s", e.msg);
    cr_assert_eq(search_save(s, &root, fifo, &e), SOW_E_INPUT, "%s", e.msg);
    struct stat sb;
    cr_assert_eq(lstat(link, &sb), 0);
    cr_assert(S_ISLNK(sb.st_mode), "the link was replaced");
    cr_assert_eq(lstat(fifo, &sb), 0);
    cr_assert(S_ISFIFO(sb.st_mode), "the FIFO was replaced");
    cr_assert_eq(stat(victim, &sb), 0);
    cr_assert_eq(sb.st_size, 5, "the link's target was written");
    snprintf(cmd, sizeof cmd, "test -z \"$(ls %s | grep tmp)\"", dir);
    cr_assert_eq(system(cmd), 0, "a temporary file was left in %s", dir);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    search_free(s);
}

/* Damaged files: every byte flipped somewhere (header, keys, values, set)
 * and truncations are rejected with SOW_E_INPUT and one line; so are keys
 * that do not decode, with the checksums made to match. */
Test(closure, solution_damaged)
{
    struct ruleset rs;
    char path[256];
    struct sow_error re;
    cr_assert_eq(rules_init(&rs, "odu", 3, 2, &re), SOW_OK);
    sow_position root = rules_start(&rs);
    struct search_ctx *s = closure_ctx(&rs, 1, 0);
    int v;
    cr_assert_eq(search_value(s, &root, &v), 0);
    snprintf(path, sizeof path, "/tmp/sow-test-dmg-%d", (int)getpid());
    struct sow_error e = {0};
    cr_assert_eq(search_save(s, &root, path, &e), SOW_OK, "%s", e.msg);
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    unsigned char *buf = malloc((size_t)size);
    cr_assert_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    unsigned char *dmg = malloc((size_t)size);
    for (int t = 0; t < 62; t++) {
        memcpy(dmg, buf, (size_t)size);
        long at = t < 20 ? t * 6 : (long)(rnd() % (uint64_t)size), len = size;
        if (t == 60)
            len = size - 1; /* truncated */
        else if (t == 61)
            len = 100;
        else
            dmg[at] ^= (unsigned char)(1 + rnd() % 255);
        f = fopen(path, "wb");
        cr_assert_eq(fwrite(dmg, 1, (size_t)len, f), (size_t)len);
        fclose(f);
        struct sol *so;
        e.msg[0] = 0;
        cr_assert_eq(sol_open(&rs, path, &so, &e), SOW_E_INPUT, "byte %ld", at);
        cr_assert(e.msg[0] && !strchr(e.msg, '\n'));
    }
    /* A key of more seeds than the root's, checksums made to match (a file
     * written wrongly): refused, not decoded past its words.  The root's
     * key is the payload's first 8 K bytes, position 0's the next. */
    for (int which = 0; which < 2; which++) {
        memcpy(dmg, buf, (size_t)size);
        uint32_t K;
        memcpy(&K, dmg + 44, 4);
        memset(dmg + 128 + 8 * K * (unsigned)which, 0xff, 8 * K);
        uint64_t c = XXH3_64bits(dmg + 128, (size_t)size - 128);
        memcpy(dmg + 72, &c, 8);
        c = XXH3_64bits(dmg, 120);
        memcpy(dmg + 120, &c, 8);
        f = fopen(path, "wb");
        cr_assert_eq(fwrite(dmg, 1, (size_t)size, f), (size_t)size);
        fclose(f);
        struct sol *so;
        cr_assert_eq(sol_open(&rs, path, &so, &e), SOW_E_INPUT, "key %d accepted", which);
        cr_assert(strstr(e.msg, which ? "a position's key" : "the root's key"), "%s", e.msg);
    }
    free(dmg);
    free(buf);
    unlink(path);
    search_free(s);
}

/* ---- resumed solves (--work) ---- */

struct stopper {
    volatile sig_atomic_t stop;
};

/* Ctrl-C as soon as the first level of the closure is solved. */
static void stop_after_level(void *arg, const char *line)
{
    struct stopper *st = arg;
    if (strstr(line, "closure level"))
        st->stop = 1;
}

static struct search_ctx *work_ctx(const struct ruleset *rs, const char *work, struct stopper *st)
{
    struct sow_error e;
    struct search_opts o = {.threads = 1,
                            .hash_mb = 1,
                            .level_budget = -1,
                            .work = work,
                            .stop = st ? &st->stop : NULL,
                            .progress = st ? stop_after_level : NULL,
                            .progress_arg = st};
    struct search_ctx *s;
    cr_assert_eq(search_new(rs, &o, &s, &e), SOW_OK, "%s", e.msg);
    return s;
}

static void flip_byte(const char *path, long at)
{
    FILE *f = fopen(path, "r+b");
    cr_assert(f, "%s", path);
    fseek(f, at, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(ch ^ 0x5A, f);
    fclose(f);
}

/* A solve stopped after its first level resumes from the checkpoint and
 * gives the same value, node count and values of every position as a solve
 * without one; a damaged checkpoint is ignored (the solve starts over). */
Test(closure, resumed_identical, .timeout = 120)
{
    int interrupted = 0;
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        char work[256], a[300], b[300];
        struct sow_error re;
        /* closures of 2,000 to 20,000 positions */
        const char *nm = sow_rule_names[r];
        int pits = !strcmp(nm, "odu") || !strcmp(nm, "jerin") || !strcmp(nm, "darra") ? 4 : 3;
        cr_assert_eq(rules_init(&rs, nm, pits, 2, &re), SOW_OK);
        sow_position root = rules_start(&rs);
        snprintf(work, sizeof work, "/tmp/sow-test-work-%d-%s", (int)getpid(), rs.name);
        mkdir(work, 0777);
        snprintf(a, sizeof a, "%s/a.sol", work);
        snprintf(b, sizeof b, "%s/b.sol", work);
        struct sow_error e = {0};
        /* the reference, no checkpoints */
        struct search_ctx *s = closure_ctx(&rs, 1, 0);
        int v0, v1, v2;
        uint64_t n0, n1, n2, h;
        cr_assert_eq(search_value(s, &root, &v0), 0);
        search_counters(s, &n0, &h);
        cr_assert_eq(search_save(s, &root, a, &e), SOW_OK, "%s", e.msg);
        search_free(s);
        /* stopped, then resumed */
        struct stopper st = {0};
        s = work_ctx(&rs, work, &st);
        enum sow_status rc = search_value(s, &root, &v1);
        if (rc != SOW_OK) {
            cr_assert_eq(rc, SOW_E_INTERRUPTED);
            interrupted++;
        }
        search_free(s);
        s = work_ctx(&rs, work, NULL);
        cr_assert_eq(search_value(s, &root, &v1), 0);
        search_counters(s, &n1, &h);
        cr_assert_eq(v1, v0, "%s: resumed %d, plain %d", rs.name, v1, v0);
        cr_assert_eq(n1, n0, "%s: resumed %llu nodes, plain %llu", rs.name,
                     (unsigned long long)n1, (unsigned long long)n0);
        cr_assert_eq(search_save(s, &root, b, &e), SOW_OK, "%s", e.msg);
        search_free(s);
        struct sol *fa, *fb;
        cr_assert_eq(sol_open(&rs, a, &fa, &e), SOW_OK, "%s", e.msg);
        cr_assert_eq(sol_open(&rs, b, &fb, &e), SOW_OK, "%s", e.msg);
        cr_assert_eq(sol_size(fa), sol_size(fb));
        for (uint64_t i = 0; i < sol_size(fa); i++) {
            sow_position p;
            int la, ha, va, lb, hb, vb;
            sol_position(fa, i, &p);
            cr_assert(sol_find(fa, &p, &la, &ha, &va));
            cr_assert(sol_find(fb, &p, &lb, &hb, &vb), "%s: node %llu missing", rs.name,
                      (unsigned long long)i);
            cr_assert(la == lb && ha == hb && va == vb, "%s node %llu", rs.name,
                      (unsigned long long)i);
        }
        sol_close(fa);
        sol_close(fb);
        /* damaged checkpoints: ignored */
        char ck[300];
        snprintf(ck, sizeof ck, "%s/closure.values", work);
        flip_byte(ck, 80);
        snprintf(ck, sizeof ck, "%s/closure.keys", work);
        flip_byte(ck, 200);
        s = work_ctx(&rs, work, NULL);
        cr_assert_eq(search_value(s, &root, &v2), 0);
        search_counters(s, &n2, &h);
        cr_assert(v2 == v0 && n2 == n0, "%s: after damage %d/%llu", rs.name, v2,
                  (unsigned long long)n2);
        search_free(s);
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
        cr_assert_eq(system(cmd), 0);
    }
    cr_assert(interrupted >= 4, "only %d solves were stopped mid-way", interrupted);
}

/* ---- the levels in memory under --memory ---- */

struct lines {
    int refused, built;
};

static void count_levels(void *arg, const char *line)
{
    struct lines *l = arg;
    if (strstr(line, "would need") && strstr(line, "left to the closure"))
        l->refused++;
    if (strstr(line, "solved in memory:"))
        l->built++;
}

/* The levels solved in memory take their budget from --memory (not 3/4 of
 * RAM): under a small budget a level whose build would not fit is left to
 * the closure, and the value is the closure alone's; under budgets too small
 * for the closure above the levels the refusal is clean (SOW_E_TOO_BIG). */
Test(closure, levels_memory_budget, .timeout = 120)
{
    int refused = 0;
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        struct sow_error re;
        cr_assert_eq(rules_init(&rs, sow_rule_names[r], 4, 2, &re), SOW_OK);
        sow_position root = rules_start(&rs);
        struct search_ctx *s = closure_ctx(&rs, 1, 0);
        int v0, v1 = 0;
        cr_assert_eq(search_value(s, &root, &v0), SOW_OK);
        search_free(s);
        /* the default budget refuses nothing on this small board */
        struct lines l = {0};
        struct sow_error e;
        struct search_opts o = {.threads = 1,
                                .hash_mb = 1,
                                .progress = count_levels,
                                .progress_arg = &l};
        cr_assert_eq(search_new(&rs, &o, &s, &e), SOW_OK, "%s", e.msg);
        cr_assert_eq(search_value(s, &root, &v1), SOW_OK);
        cr_assert_eq(v1, v0, "%s: default %d, closure alone %d", rs.name, v1, v0);
        cr_assert_eq(l.refused, 0, "%s", rs.name);
        search_free(s);
        /* from 0.25 MB up, doubling, until the solve fits */
        enum sow_status st = SOW_E_TOO_BIG;
        for (double mem = 0.25e6; st == SOW_E_TOO_BIG; mem *= 2) {
            cr_assert(mem < 1e9, "%s: never fits", rs.name);
            l = (struct lines){0};
            o.memory = mem;
            cr_assert_eq(search_new(&rs, &o, &s, &e), SOW_OK, "%s", e.msg);
            st = search_value(s, &root, &v1);
            cr_assert(st == SOW_OK || st == SOW_E_TOO_BIG, "%s: %d", rs.name, (int)st);
            if (st == SOW_OK)
                cr_assert_eq(v1, v0, "%s under %.0f bytes: %d, closure alone %d", rs.name, mem,
                             v1, v0);
            else
                cr_assert(strstr(search_last_error(s)->msg, "--memory"), "%s",
                          search_last_error(s)->msg);
            search_free(s);
        }
        refused += l.refused > 0 && l.built > 0;
    }
    /* the boards whose levels are built (not solved by the closure's first
     * try) had a level left to the closure by the budget */
    cr_assert(refused >= 4, "only %d rule sets had a level refused for memory", refused);
}

/* ---- resumed expansions (--work, closure.expand) ---- */

struct exp_stopper {
    volatile sig_atomic_t stop;
    int resumed; /* "expansion resumed" lines seen */
};

/* Ctrl-C at the first breadth-first layer's line (the root's moves are
 * then expanded, and the stop is seen at the next round), and count the
 * resumptions. */
static void stop_in_expansion(void *arg, const char *line)
{
    struct exp_stopper *st = arg;
    if (strstr(line, "closure layer"))
        st->stop = 1;
    if (strstr(line, "expansion resumed"))
        st->resumed++;
}

static void count_resumed(void *arg, const char *line)
{
    struct exp_stopper *st = arg;
    if (strstr(line, "expansion resumed"))
        st->resumed++;
}

static struct search_ctx *exp_ctx(const struct ruleset *rs, const char *work, double memory,
                                  struct exp_stopper *st, bool stop)
{
    struct sow_error e;
    struct search_opts o = {.threads = 1,
                            .hash_mb = 1,
                            .level_budget = -1,
                            .memory = memory,
                            .work = work,
                            .stop = stop ? &st->stop : NULL,
                            .progress = stop ? stop_in_expansion : count_resumed,
                            .progress_arg = st};
    struct search_ctx *s;
    cr_assert_eq(search_new(rs, &o, &s, &e), SOW_OK, "%s", e.msg);
    return s;
}

/* Every position of solution file a is in b with the same lo, hi and V. */
static void same_solutions(const struct ruleset *rs, const char *a, const char *b)
{
    struct sol *fa, *fb;
    struct sow_error e;
    cr_assert_eq(sol_open(rs, a, &fa, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(sol_open(rs, b, &fb, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(sol_size(fa), sol_size(fb), "%s", rs->name);
    for (uint64_t i = 0; i < sol_size(fa); i++) {
        sow_position p;
        int la, ha, va, lb, hb, vb;
        sol_position(fa, i, &p);
        cr_assert(sol_find(fa, &p, &la, &ha, &va));
        cr_assert(sol_find(fb, &p, &lb, &hb, &vb), "%s: node %llu missing", rs->name,
                  (unsigned long long)i);
        cr_assert(la == lb && ha == hb && va == vb, "%s node %llu", rs->name,
                  (unsigned long long)i);
    }
    sol_close(fa);
    sol_close(fb);
}

static bool exists(const char *dir, const char *name)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* A solve stopped while expanding, and one refused by the --memory budget
 * mid-expansion, go on from closure.expand when rerun (with more memory):
 * the same value, node count and every position's lo/hi/V as a solve
 * without checkpoints; a damaged closure.expand is ignored. */
Test(closure, resumed_expansion, .timeout = 120)
{
    int by_memory = 0;
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        char work[256], a[300], b[300];
        struct sow_error re;
        const char *nm = sow_rule_names[r];
        int pits = !strcmp(nm, "odu") || !strcmp(nm, "jerin") || !strcmp(nm, "darra") ? 4 : 3;
        cr_assert_eq(rules_init(&rs, nm, pits, 2, &re), SOW_OK);
        sow_position root = rules_start(&rs);
        snprintf(work, sizeof work, "/tmp/sow-test-exp-%d-%s", (int)getpid(), rs.name);
        mkdir(work, 0777);
        snprintf(a, sizeof a, "%s/a.sol", work);
        snprintf(b, sizeof b, "%s/b.sol", work);
        struct sow_error e = {0};
        struct search_ctx *s = closure_ctx(&rs, 1, 0);
        int v0, v1;
        uint64_t n0, n1, h;
        cr_assert_eq(search_value(s, &root, &v0), 0);
        search_counters(s, &n0, &h);
        cr_assert_eq(search_save(s, &root, a, &e), SOW_OK, "%s", e.msg);
        search_free(s);

        /* 1. Ctrl-C while expanding, then a rerun */
        struct exp_stopper st = {0};
        s = exp_ctx(&rs, work, 0, &st, true);
        cr_assert_eq(search_value(s, &root, &v1), SOW_E_INTERRUPTED, "%s", rs.name);
        search_free(s);
        cr_assert(exists(work, "closure.expand") && !exists(work, "closure.keys"), "%s",
                  rs.name);
        st = (struct exp_stopper){0};
        s = exp_ctx(&rs, work, 0, &st, false);
        cr_assert_eq(search_value(s, &root, &v1), 0);
        search_counters(s, &n1, &h);
        cr_assert_eq(st.resumed, 1, "%s: not resumed", rs.name);
        cr_assert(v1 == v0 && n1 == n0, "%s: resumed %d/%llu, plain %d/%llu", rs.name, v1,
                  (unsigned long long)n1, v0, (unsigned long long)n0);
        cr_assert_eq(search_save(s, &root, b, &e), SOW_OK, "%s", e.msg);
        search_free(s);
        same_solutions(&rs, a, b);
        cr_assert(!exists(work, "closure.expand") && exists(work, "closure.keys"), "%s",
                  rs.name);

        /* 2. refused by the budget mid-expansion, rerun with more: each rerun
         * goes on from the last refusal's checkpoint */
        unlink(b);
        char ck[300];
        snprintf(ck, sizeof ck, "%s/closure.keys", work);
        unlink(ck);
        snprintf(ck, sizeof ck, "%s/closure.values", work);
        unlink(ck);
        enum sow_status rc = SOW_E_TOO_BIG;
        int refusals = 0, resumed = 0;
        for (double mem = 0.02e6; rc == SOW_E_TOO_BIG; mem *= 1.5) {
            st = (struct exp_stopper){0};
            s = exp_ctx(&rs, work, mem, &st, false);
            rc = search_value(s, &root, &v1);
            resumed += st.resumed;
            if (rc == SOW_E_TOO_BIG)
                refusals += exists(work, "closure.expand");
            else
                search_counters(s, &n1, &h);
            if (rc == SOW_OK)
                cr_assert_eq(search_save(s, &root, b, &e), SOW_OK, "%s", e.msg);
            search_free(s);
        }
        cr_assert_eq(rc, SOW_OK, "%s", rs.name);
        cr_assert(v1 == v0 && n1 == n0, "%s: after refusals %d/%llu, plain %d/%llu", rs.name,
                  v1, (unsigned long long)n1, v0, (unsigned long long)n0);
        same_solutions(&rs, a, b);
        if (refusals >= 1 && resumed >= 1)
            by_memory++;

        /* 3. a damaged expansion checkpoint is ignored */
        st = (struct exp_stopper){0};
        unlink(ck);
        snprintf(ck, sizeof ck, "%s/closure.keys", work);
        unlink(ck);
        s = exp_ctx(&rs, work, 0, &st, true);
        cr_assert_eq(search_value(s, &root, &v1), SOW_E_INTERRUPTED);
        search_free(s);
        snprintf(ck, sizeof ck, "%s/closure.expand", work);
        flip_byte(ck, 300);
        st = (struct exp_stopper){0};
        s = exp_ctx(&rs, work, 0, &st, false);
        cr_assert_eq(search_value(s, &root, &v1), 0);
        search_counters(s, &n1, &h);
        cr_assert_eq(st.resumed, 0, "%s: a damaged checkpoint was used", rs.name);
        cr_assert(v1 == v0 && n1 == n0, "%s: after damage %d/%llu", rs.name, v1,
                  (unsigned long long)n1);
        search_free(s);
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
        cr_assert_eq(system(cmd), 0);
    }
    cr_assert(by_memory >= 4, "only %d rule sets resumed after a refusal", by_memory);
}

/* ---- solution files found in a tables directory (search_solution_find) ---- */

/* On every rule set: a start's solution saved under its documented name in
 * a directory is found for every position it holds, not for one it does
 * not hold; a misnamed or damaged file of the rule set is refused (one
 * line), another rule set's file is not looked at. */
Test(closure, solution_in_dir, .timeout = 120)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        struct sow_error re, e = {0};
        cr_assert_eq(rules_init(&rs, sow_rule_names[r], 3, 2, &re), SOW_OK);
        sow_position root = rules_start(&rs);
        char dir[256], path[4096], found[4096], cmd[8300];
        snprintf(dir, sizeof dir, "/tmp/sow-test-sdir-%d-%s", (int)getpid(), rs.name);
        mkdir(dir, 0777);
        int lv = rules_board_seeds(&rs, &root);
        search_solution_name(&rs, dir, lv, path, sizeof path);
        char want[4096];
        snprintf(want, sizeof want, "%s/%s-2x3-%03d.sowsol", dir, rs.name, lv);
        cr_assert_str_eq(path, want);
        struct search_ctx *s = closure_ctx(&rs, 1, 0);
        int v;
        cr_assert_eq(search_value(s, &root, &v), SOW_OK);
        cr_assert_eq(search_save(s, &root, path, &e), SOW_OK, "%s", e.msg);
        search_free(s);
        struct sol *f, *g;
        cr_assert_eq(sol_open(&rs, path, &f, &e), SOW_OK, "%s", e.msg);
        /* every node; under SOW_TEST_SCALE (the sanitizer builds) every
         * k-th, each find opening and checking the file again */
        uint64_t step = (uint64_t)test_stride((long)sol_size(f));
        for (uint64_t i = 0; i < sol_size(f); i += step) {
            sow_position p;
            sol_position(f, i, &p);
            cr_assert_eq(search_solution_find(&rs, dir, &p, &g, found, sizeof found, &e), SOW_OK,
                         "%s", e.msg);
            cr_assert(g, "%s node %llu not found", rs.name, (unsigned long long)i);
            cr_assert_str_eq(found, path);
            int a, b;
            cr_assert(sol_find(f, &p, NULL, NULL, &a) && sol_find(g, &p, NULL, NULL, &b));
            cr_assert_eq(a, b);
            sol_close(g);
        }
        sol_close(f);
        /* a position of more seeds than the file's start: not held */
        sow_position big = root;
        big.board.h[0] += 3;
        cr_assert_eq(search_solution_find(&rs, dir, &big, &g, found, sizeof found, &e), SOW_OK);
        cr_assert_null(g);
        /* another rule set's file is not looked at */
        struct ruleset other;
        cr_assert_eq(rules_init(&other, strcmp(rs.name, "oware") ? "oware" : "awari", 3, 2, &re),
                     SOW_OK);
        cr_assert_eq(search_solution_find(&other, dir, &root, &g, found, sizeof found, &e),
                     SOW_OK);
        cr_assert_null(g);
        /* misnamed (the start's file under a higher level), then damaged */
        char bad[4096];
        search_solution_name(&rs, dir, lv + 3, bad, sizeof bad);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, bad);
        cr_assert_eq(system(cmd), 0);
        e.msg[0] = 0;
        cr_assert_eq(search_solution_find(&rs, dir, &big, &g, found, sizeof found, &e),
                     SOW_E_INPUT);
        cr_assert(strstr(e.msg, "misnamed") && !strchr(e.msg, '\n'), "%s", e.msg);
        flip_byte(path, 200);
        e.msg[0] = 0;
        cr_assert_eq(search_solution_find(&rs, dir, &root, &g, found, sizeof found, &e),
                     SOW_E_INPUT);
        cr_assert(e.msg[0] && !strchr(e.msg, '\n'), "%s", e.msg);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        cr_assert_eq(system(cmd), 0);
    }
}

/* ---- the levels in memory kept in --work ---- */

struct lvl_log {
    volatile sig_atomic_t stop;
    int stop_after;             /* Ctrl-C once this many levels are built (0: never) */
    bool built[SOW_MAX_SEEDS + 1], loaded[SOW_MAX_SEEDS + 1];
    int nbuilt, nloaded, damaged;
};

static void log_levels(void *arg, const char *line)
{
    struct lvl_log *l = arg;
    int k;
    /* (sscanf counts the %d alone: the rest of the line is checked by strstr) */
    if (strstr(line, " solved in memory") && sscanf(line, "level %d", &k) == 1 && k >= 0 &&
        k <= SOW_MAX_SEEDS) {
        l->built[k] = true;
        if (++l->nbuilt == l->stop_after)
            l->stop = 1;
    }
    if (strstr(line, " loaded from ") && sscanf(line, "level %d", &k) == 1 && k >= 0 &&
        k <= SOW_MAX_SEEDS) {
        l->loaded[k] = true;
        l->nloaded++;
    }
    if (strncmp(line, "note: ", 6) == 0 && strstr(line, "damaged") && strstr(line, "rebuilt"))
        l->damaged++;
}

/* The default levels in memory (never the closure's first try), with
 * checkpoints in work if not NULL. */
static struct search_ctx *lvl_ctx(const struct ruleset *rs, const char *work, struct lvl_log *l)
{
    struct sow_error e;
    struct search_opts o = {.threads = 1,
                            .hash_mb = 1,
                            .closure_first = -1,
                            .work = work,
                            .stop = &l->stop,
                            .progress = log_levels,
                            .progress_arg = l};
    struct search_ctx *s;
    cr_assert_eq(search_new(rs, &o, &s, &e), SOW_OK, "%s", e.msg);
    return s;
}

static bool level_kept(const struct ruleset *rs, const char *work, int k, char *path, size_t len)
{
    snprintf(path, len, "%s/level-%s-2x%d-%03d.ck", work, rs->name, rs->pits, k);
    return access(path, F_OK) == 0;
}

/* On every rule set: a solve stopped after its third level built in
 * memory, then rerun with the same --work, gives the same value, node count
 * and positions expanded as a solve never stopped, and loads every level
 * the first run kept instead of building it again; a damaged level file is
 * rebuilt (with a note) and the result is still the same. */
Test(closure, resumed_levels, .timeout = 120)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        struct sow_error re;
        const char *nm = sow_rule_names[r];
        int pits = !strcmp(nm, "odu") || !strcmp(nm, "jerin") || !strcmp(nm, "darra") ? 4 : 3;
        cr_assert_eq(rules_init(&rs, nm, pits, 2, &re), SOW_OK);
        sow_position root = rules_start(&rs);
        char work[256], path[400];
        snprintf(work, sizeof work, "/tmp/sow-test-lvl-%d-%s", (int)getpid(), rs.name);
        mkdir(work, 0777);
        /* the reference: no checkpoints, never stopped */
        struct lvl_log l0 = {0};
        struct search_ctx *s = lvl_ctx(&rs, NULL, &l0);
        int v0, v1, v2;
        uint64_t n0, n1, n2, h;
        cr_assert_eq(search_value(s, &root, &v0), SOW_OK);
        search_counters(s, &n0, &h);
        uint64_t x0 = search_expanded(s);
        search_free(s);
        cr_assert(l0.nbuilt >= 6, "%s: only %d levels built", rs.name, l0.nbuilt);
        /* stopped after three levels */
        struct lvl_log l1 = {.stop_after = 3};
        s = lvl_ctx(&rs, work, &l1);
        cr_assert_eq(search_value(s, &root, &v1), SOW_E_INTERRUPTED, "%s", rs.name);
        search_free(s);
        bool kept[SOW_MAX_SEEDS + 1];
        int nkept = 0, top = -1;
        for (int k = 0; k <= SOW_MAX_SEEDS; k++) {
            kept[k] = level_kept(&rs, work, k, path, sizeof path);
            if (kept[k]) {
                cr_assert(l1.built[k], "%s: level %d kept, never built", rs.name, k);
                nkept++;
                top = k;
            }
        }
        cr_assert(nkept >= 2 && nkept < l0.nbuilt, "%s: %d levels kept", rs.name, nkept);
        /* resumed: the kept levels loaded, not built */
        struct lvl_log l2 = {0};
        s = lvl_ctx(&rs, work, &l2);
        cr_assert_eq(search_value(s, &root, &v1), SOW_OK);
        search_counters(s, &n1, &h);
        cr_assert(v1 == v0 && n1 == n0 && search_expanded(s) == x0,
                  "%s: resumed %d/%llu nodes, plain %d/%llu", rs.name, v1,
                  (unsigned long long)n1, v0, (unsigned long long)n0);
        search_free(s);
        cr_assert_eq(l2.nloaded, nkept, "%s: %d loaded, %d kept (%d built first, %d now)", rs.name,
                     l2.nloaded, nkept, l1.nbuilt, l2.nbuilt);
        for (int k = 0; k <= SOW_MAX_SEEDS; k++) {
            cr_assert(!(kept[k] && l2.built[k]), "%s: kept level %d built again", rs.name, k);
            cr_assert(!kept[k] || l2.loaded[k], "%s: kept level %d not loaded", rs.name, k);
        }
        cr_assert_eq(l2.nbuilt + l2.nloaded, l0.nbuilt, "%s", rs.name);
        /* a damaged level: rebuilt with a note, the rest loaded */
        level_kept(&rs, work, top, path, sizeof path);
        flip_byte(path, 64 + 60);
        struct lvl_log l3 = {0};
        s = lvl_ctx(&rs, work, &l3);
        cr_assert_eq(search_value(s, &root, &v2), SOW_OK);
        search_counters(s, &n2, &h);
        cr_assert(v2 == v0 && n2 == n0, "%s: after damage %d/%llu", rs.name, v2,
                  (unsigned long long)n2);
        search_free(s);
        cr_assert(l3.damaged == 1 && l3.built[top] && l3.nbuilt == 1, "%s: %d notes, %d built",
                  rs.name, l3.damaged, l3.nbuilt);
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", work);
        cr_assert_eq(system(cmd), 0);
    }
}

/* ---- the closure level by level on disk ---- */

struct dk_run {
    volatile sig_atomic_t stop;
    int stop_after;   /* stop after this many finished levels (0: never) */
    bool stop_round;  /* stop at the first progress line within a level */
    int stop_level;   /* (with stop_round) within this level only (0: any) */
    uint64_t um_stack; /* clos_env's (0: the default) */
    bool unmoves_only; /* clos_env's */
    uint64_t round_max; /* clos_env's (0: the default) */
    uint64_t par_min;   /* clos_env's (0: the default) */
    bool mem_work;     /* work holds the in-memory closure's checkpoints, not levels on disk */
    bool eager;        /* clos_env's eager_lines */
    /* Ctrl-C at the first line from within a level once a level is solved
     * in this run: 1 in a move pass, 2 in a retrograde (0: never) */
    int stop_within, solved, within_stops;
    int levels, notes, resumed;
};

static void dk_progress(void *arg, const char *line)
{
    struct dk_run *r = arg;
    if (strstr(line, "closure on disk, level") &&
        (strstr(line, " expanded: ") || strstr(line, " solved: ")) && ++r->levels == r->stop_after)
        r->stop = 1;
    int l;
    if (r->stop_round && strstr(line, " positions found, ") &&
        (!r->stop_level ||
         (sscanf(line, "closure on disk, level %d", &l) == 1 && l == r->stop_level)))
        r->stop = 1;
    if (!strncmp(line, "note: ", 6)) {
        r->notes++;
        if (getenv("SOW_TEST_VERBOSE"))
            fprintf(stderr, "%s\n", line);
    }
    if (strstr(line, " solved: "))
        r->solved++;
    if (strstr(line, "stopped while solving level"))
        r->within_stops++;
    if (r->stop_within && r->solved && !r->stop &&
        strstr(line, r->stop_within == 1 ? ": moves" : ": retrograde at "))
        r->stop = 1;
    if (strstr(line, "closure on disk resumed")) {
        r->resumed++;
        if (getenv("SOW_TEST_VERBOSE"))
            fprintf(stderr, "%s\n", line);
    }
}

/* Build root's closure (in memory: work NULL) and its counters, under a
 * memory budget (0: none); info may be NULL. */
static enum clos_err dk_build_mem(const struct ruleset *rs, const sow_position *root, int threads,
                                  const char *work, struct dk_run *run, double memory,
                                  struct clos_info *info, struct clos **out, uint64_t *cnt)
{
    uint64_t nodes[2] = {0}, visits[2] = {0}, tbh[2] = {0};
    struct sow_relay_cache *cache[2] = {NULL, NULL};
    struct clos_env env = {.threads = threads,
                           .cache = cache,
                           .stop = run ? &run->stop : NULL,
                           .nodes = nodes,
                           .visits = visits,
                           .tb_hits = tbh,
                           .tb_hits_max = -1,
                           .max_nodes = UINT64_MAX,
                           .work = work,
                           .disk = work != NULL && !(run && run->mem_work),
                           .progress = run ? dk_progress : NULL,
                           .progress_arg = run,
                           .memory = memory,
                           .um_stack = run ? run->um_stack : 0,
                           .unmoves_only = run && run->unmoves_only,
                           .round_max = run ? run->round_max : 0,
                           .eager_lines = run && run->eager,
                           .par_min = run ? run->par_min : 0,
                           .info = info};
    struct clos *c = clos_new(rs);
    cr_assert(c);
    enum clos_err e = clos_build(c, &env, root);
    cnt[0] = nodes[0] + nodes[1];
    cnt[1] = visits[0] + visits[1];
    cnt[2] = tbh[0] + tbh[1];
    *out = c;
    return e;
}

static enum clos_err dk_build_one(const struct ruleset *rs, const sow_position *root, int threads,
                                  const char *work, struct dk_run *run, struct clos **out,
                                  uint64_t *cnt)
{
    return dk_build_mem(rs, root, threads, work, run, 0, NULL, out, cnt);
}

/* Every position of the in-memory closure m has the same lo, hi, V in d
 * (in memory or on disk). */
static void same_values(const struct ruleset *rs, const struct clos *m, const struct clos *d,
                        const char *what)
{
    cr_assert(!clos_on_disk(m));
    cr_assert_eq(clos_size(d), clos_size(m), "%s %s: %llu positions on disk, %llu in memory",
                 rs->name, what, (unsigned long long)clos_size(d),
                 (unsigned long long)clos_size(m));
    const int K = clos_key_words(m);
    for (uint64_t i = 0; i < clos_size(m); i++) {
        sow_position p;
        clos_unpack(rs, K, &clos_keys(m)[i * K], &p);
        int lo, hi, v;
        cr_assert(clos_find(d, &p, &lo, &hi, &v, NULL), "%s %s: node %llu not on disk", rs->name,
                  what, (unsigned long long)i);
        cr_assert(lo == clos_lo(m)[i] && hi == clos_hi(m)[i] && v == clos_v(m)[i],
                  "%s %s node %llu: disk %d/%d/%d, memory %d/%d/%d", rs->name, what,
                  (unsigned long long)i, lo, hi, v, clos_lo(m)[i], clos_hi(m)[i], clos_v(m)[i]);
    }
}

/* The same, d on disk. */
static void dk_same(const struct ruleset *rs, const struct clos *m, const struct clos *d,
                    const char *what)
{
    cr_assert(clos_on_disk(d));
    same_values(rs, m, d, what);
}

/* d (on disk) holds m's positions and values and cost the same node
 * counts (nodes, visits, table hits: cm, cd). */
static void dk_agree(const struct ruleset *rs, const struct clos *m, const struct clos *d,
                     const uint64_t *cm, const uint64_t *cd, const char *what)
{
    cr_assert(cd[0] == cm[0] && cd[1] == cm[1] && cd[2] == cm[2],
              "%s %s: %llu nodes, memory %llu", rs->name, what, (unsigned long long)cd[0],
              (unsigned long long)cm[0]);
    dk_same(rs, m, d, what);
}

static void dk_rm(const char *dir)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Rule set r on a board whose start's closure has 2,000 to 20,000
 * positions in several levels; its start. */
static sow_position dk_small(int r, struct ruleset *rs)
{
    const char *nm = sow_rule_names[r];
    int pits = !strcmp(nm, "odu") || !strcmp(nm, "jerin") || !strcmp(nm, "darra") ? 4 : 3;
    struct sow_error re;
    cr_assert_eq(rules_init(rs, nm, pits, 2, &re), SOW_OK);
    return rules_start(rs);
}

/* On every rule set, with 1 and 2 threads: the closure on disk holds the
 * same positions with the same lo, hi, V, and costs the same node counts,
 * as the closure in memory, its levels solved with reverse edges (also
 * with rounds of at most 300 expansions); so, on
 * the single-sowing rule sets, with their predecessors from unmoves, the
 * retrograde's stack of the default size and of one entry (every copy but
 * one waits in the bitmap).  With 2 threads every level's retrograde is
 * threaded, however small. */
Test(closure, disk_same, .timeout = 120)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        sow_position root = dk_small(r, &rs);
        struct clos *m, *d;
        uint64_t cm[3], cd[3];
        cr_assert_eq(dk_build_one(&rs, &root, 1, NULL, NULL, &m, cm), CLOS_OK);
        for (int k = 1; k <= 4; k++) {
            if (test_scale() < 1 && (k + r) % 2 == 0)
                continue; /* scaled: each variant on half the rule sets */
            const int t = k % 2 ? 1 : 2;
            char work[256], what[64];
            snprintf(work, sizeof work, "/tmp/sow-test-disk-%d-%s-%d", (int)getpid(), rs.name, k);
            snprintf(what, sizeof what, "%d thread(s)%s", t,
                     k == 4   ? ", unmoves, a stack of 1"
                     : k == 3 ? ", unmoves"
                     : k == 2 ? ", rounds of 300"
                              : "");
            mkdir(work, 0777);
            /* par_min 1: with 2 threads every level's retrograde threaded */
            struct dk_run run = {.um_stack = k == 4, .unmoves_only = k >= 3,
                                 .round_max = k == 2 ? 300 : 0, .par_min = 1};
            cr_assert_eq(dk_build_one(&rs, &root, t, work, &run, &d, cd), CLOS_OK, "%s", rs.name);
            cr_assert(run.levels >= 2, "%s: %d levels", rs.name, run.levels);
            cr_assert(cd[0] == cm[0] && cd[1] == cm[1] && cd[2] == cm[2],
                      "%s %s: disk %llu/%llu nodes, memory %llu/%llu", rs.name, what,
                      (unsigned long long)cd[0], (unsigned long long)cd[1],
                      (unsigned long long)cm[0], (unsigned long long)cm[1]);
            dk_same(&rs, m, d, what);
            clos_free(d);
            dk_rm(work);
        }
        clos_free(m);
    }
}

/* On every rule set: the threaded retrograde (2 threads, every level of
 * the closure in memory, stacks of the default size and of one entry
 * each, where every copy but one waits for a pass over the bitmap) gives
 * each position the lo, hi and V of the single-threaded one, and the same
 * node counts. */
Test(closure, threaded_retrograde_same, .timeout = 120)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        sow_position root = dk_small(r, &rs);
        struct clos *one, *two;
        uint64_t c1[3], c2[3];
        cr_assert_eq(dk_build_one(&rs, &root, 1, NULL, NULL, &one, c1), CLOS_OK);
        for (int k = 0; k < 2; k++) {
            struct dk_run run = {.par_min = 1, .um_stack = k ? 2 : 0};
            cr_assert_eq(dk_build_one(&rs, &root, 2, NULL, &run, &two, c2), CLOS_OK, "%s", rs.name);
            cr_assert(c1[0] == c2[0] && c1[1] == c2[1], "%s: node counts differ", rs.name);
            same_values(&rs, one, two, k ? "threaded retrograde, stacks of 1" : "threaded retrograde");
            clos_free(two);
        }
        clos_free(one);
    }
}

/* The set's threaded fill gives exactly the serial fill's cells (solution
 * files hold them): every rule set's closure, 2 to 7 ranges, at the
 * solve's load (3/5, where the threaded fill must never refuse) and at
 * loads up to n/(n+1), where runs cross the ranges' boundaries and are put
 * back (counted: some must be) or reach too far (refused). */
Test(closure, set_fill_threads_same, .timeout = 120)
{
    int fixed = 0, filled = 0, refused = 0;
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        sow_position root = dk_small(r, &rs);
        struct clos *one;
        uint64_t c1[3];
        cr_assert_eq(dk_build_one(&rs, &root, 1, NULL, NULL, &one, c1), CLOS_OK);
        const uint64_t n = clos_size(one);
        const uint64_t caps[] = {clos_set_cells_for(n), n + n / 2, n + n / 8, n + n / 20 + 1,
                                 n + 1};
        for (int k = 0; k < 5; k++)
            for (int t = 2; t <= 7; t++) {
                int x = clos_set_fill_check(one, caps[k], t);
                cr_assert(x != -1, "%s: %llu nodes in %llu cells on %d threads: the cells differ",
                          rs.name, (unsigned long long)n, (unsigned long long)caps[k], t);
                cr_assert(k > 0 || x >= 0, "%s: refused at the solve's load (%d)", rs.name, x);
                if (x >= 0) {
                    filled++;
                    fixed += x;
                } else {
                    refused++;
                }
            }
        clos_free(one);
    }
    cr_log_info("set fills: %d the same (%d boundaries put back), %d refused", filled, fixed,
                refused);
    cr_assert(fixed > 20, "only %d boundaries put back", fixed);
}

/* need GB and budget GB of a refusal's "... X GB, the budget is Y GB". */
static bool refusal_gb(const char *why, double *need, double *budget)
{
    static const char mid[] = " GB, the budget is ";
    const char *t = strstr(why, mid), *b = t;
    if (!t)
        return false;
    while (b > why && strchr("0123456789.e+-", b[-1]))
        b--;
    char *end;
    *need = strtod(b, &end);
    if (end != t)
        return false;
    *budget = strtod(t + strlen(mid), &end);
    return end != t + strlen(mid);
}

/* A refusal by --memory names a need above the budget, whichever structure
 * was refused (the next layer's estimate, the growth of the node arrays or
 * of the set mid-layer, a level on disk), in memory and on disk, on every
 * rule set, for budgets swept up to the one that solves. */
Test(closure, refusal_need_above_budget, .timeout = 120)
{
    int refusals = 0;
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        sow_position root = dk_small(r, &rs);
        for (int disk = 0; disk <= 1; disk++) {
            char work[256];
            snprintf(work, sizeof work, "/tmp/sow-test-refuse-%d-%s", (int)getpid(), rs.name);
            enum sow_status st = SOW_E_TOO_BIG;
            for (double mem = 2e4; st == SOW_E_TOO_BIG; mem *= 1.25) {
                cr_assert(mem < 1e9, "%s: no budget solves it", rs.name);
                mkdir(work, 0777);
                struct sow_error e;
                struct search_opts o = {.threads = 1, .hash_mb = 1, .level_budget = -1,
                                        .memory = mem, .work = disk ? work : NULL,
                                        .disk = disk};
                struct search_ctx *s;
                cr_assert_eq(search_new(&rs, &o, &s, &e), SOW_OK, "%s", e.msg);
                int v;
                st = search_value(s, &root, &v);
                cr_assert(st == SOW_OK || st == SOW_E_TOO_BIG, "%s: %d", rs.name, (int)st);
                if (st == SOW_E_TOO_BIG) {
                    const char *why = search_last_error(s)->msg;
                    double need, budget;
                    cr_assert(refusal_gb(why, &need, &budget), "%s: %s", rs.name, why);
                    cr_assert(need >= budget, "%s%s, budget %.0f bytes: %s", rs.name,
                              disk ? " on disk" : "", mem, why);
                    refusals++;
                }
                search_free(s);
                dk_rm(work);
            }
        }
    }
    cr_assert(refusals >= 32, "only %d refusals", refusals);
}

/* A solution file written from the closure on disk answers every
 * position as the in-memory closure's file does: the same positions, lo, hi,
 * V and move values, on every rule set; its own set (built by sol_save from
 * the level files) finds each of them. */
Test(closure, disk_solution, .timeout = 120)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        sow_position root = dk_small(r, &rs);
        struct clos *m, *d;
        uint64_t cm[3], cd[3];
        char work[256], pm[300], pd[300];
        snprintf(work, sizeof work, "/tmp/sow-test-disksol-%d-%s", (int)getpid(), rs.name);
        snprintf(pm, sizeof pm, "%s.mem.sol", work);
        snprintf(pd, sizeof pd, "%s.disk.sol", work);
        mkdir(work, 0777);
        cr_assert_eq(dk_build_one(&rs, &root, 1, NULL, NULL, &m, cm), CLOS_OK);
        cr_assert_eq(dk_build_one(&rs, &root, 2, work, NULL, &d, cd), CLOS_OK);
        struct sow_error e = {0};
        cr_assert_eq(sol_save(&rs, m, &root, pm, 0, 0, &e), SOW_OK, "%s", e.msg);
        cr_assert_eq(sol_save(&rs, d, &root, pd, 0, 0, &e), SOW_OK, "%s: %s", rs.name, e.msg);
        struct sol *fm, *fd;
        cr_assert_eq(sol_open(&rs, pm, &fm, &e), SOW_OK, "%s", e.msg);
        cr_assert_eq(sol_open(&rs, pd, &fd, &e), SOW_OK, "%s: %s", rs.name, e.msg);
        cr_assert_eq(sol_size(fd), sol_size(fm), "%s: %llu positions on disk's file, %llu",
                     rs.name, (unsigned long long)sol_size(fd), (unsigned long long)sol_size(fm));
        sow_position rm, rd;
        sol_root(fm, &rm);
        sol_root(fd, &rd);
        cr_assert(!memcmp(&rm, &rd, sizeof rm), "%s: roots differ", rs.name);
        for (uint64_t i = 0; i < sol_size(fm); i++) {
            sow_position p;
            sol_position(fm, i, &p);
            int l1, h1, v1, l2, h2, v2, a[SOW_MAX_PITS + 1], b[SOW_MAX_PITS + 1];
            cr_assert(sol_find(fm, &p, &l1, &h1, &v1));
            cr_assert(sol_find(fd, &p, &l2, &h2, &v2), "%s node %llu: not in disk's file",
                      rs.name, (unsigned long long)i);
            cr_assert(l1 == l2 && h1 == h2 && v1 == v2, "%s node %llu: %d/%d/%d, disk's %d/%d/%d",
                      rs.name, (unsigned long long)i, l1, h1, v1, l2, h2, v2);
            int n = sol_move_values(fm, &p, a);
            cr_assert_eq(sol_move_values(fd, &p, b), n);
            for (int k = 0; k < n; k++)
                cr_assert_eq(a[k], b[k], "%s node %llu move %d", rs.name, (unsigned long long)i, k);
        }
        /* the in-memory closure's file with 8-byte cells (version 2)
         * answers as its 4-byte file */
        char pm8[300];
        snprintf(pm8, sizeof pm8, "%s.mem8.sol", work);
        struct sol *f8;
        cr_assert_eq(sol_save(&rs, m, &root, pm8, 0, 8, &e), SOW_OK, "%s", e.msg);
        cr_assert_eq(sol_open(&rs, pm8, &f8, &e), SOW_OK, "%s: %s", rs.name, e.msg);
        for (uint64_t i = 0; i < sol_size(fm); i++) {
            sow_position p;
            sol_position(fm, i, &p);
            int a[SOW_MAX_PITS + 1], b[SOW_MAX_PITS + 1];
            int n = sol_move_values(fm, &p, a);
            cr_assert_eq(sol_move_values(f8, &p, b), n, "%s node %llu", rs.name,
                         (unsigned long long)i);
            for (int k = 0; k < n; k++)
                cr_assert_eq(a[k], b[k]);
        }
        sol_close(f8);
        unlink(pm8);
        sol_close(fm);
        sol_close(fd);
        unlink(pm);
        unlink(pd);
        clos_free(m);
        clos_free(d);
        dk_rm(work);
    }
}

/* Synthetic home cells for sol_set_build (an array, read in chunks). */
struct hsrc {
    const uint64_t *h;
    size_t n, at;
};

static size_t hsrc_next(void *ctx, uint64_t *home, size_t max)
{
    struct hsrc *s = ctx;
    size_t k = s->n - s->at < max ? s->n - s->at : max;
    memcpy(home, s->h + s->at, k * sizeof *home);
    s->at += k;
    return k;
}

static void hsrc_rewind(void *ctx) { ((struct hsrc *)ctx)->at = 0; }

struct cells {
    uint8_t *b;
    size_t n;
};

static void cells_put(void *ctx, const void *p, size_t n)
{
    struct cells *c = ctx;
    memcpy(c->b + c->n, p, n);
    c->n += n;
}

/* The set built a window at a time against the whole set at once, on home
 * cells that wrap at the end on purpose: all at the last cell (one run of
 * 3/5 of the cells, through many windows and around), most in the last
 * tenth, and uniform; windows from one cell to all. */
Test(closure, set_windows_wrap)
{
    const uint64_t S = 1000;
    uint64_t *h = malloc(600 * sizeof *h);
    uint8_t *whole = malloc(4 * S), *part = malloc(4 * S);
    uint64_t x = 12345;
    for (int kind = 0; kind < 3; kind++)
        for (size_t N = 1; N <= 600; N = N < 10 ? N + 1 : N * 2 > 600 && N < 600 ? 600 : N * 2) {
            for (size_t i = 0; i < N; i++) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                uint64_t r = x >> 33;
                h[i] = kind == 0 ? S - 1 : kind == 1 ? (r % 10 ? S - 1 - r % (S / 10) : r % S) : r % S;
            }
            struct hsrc hs = {h, N, 0};
            const struct sol_homes src = {hsrc_next, hsrc_rewind, &hs};
            struct cells cw = {whole, 0};
            struct sow_error e = {0};
            cr_assert_eq(sol_set_build(&src, S, 0, 4, cells_put, &cw, "t", &e), SOW_OK, "%s", e.msg);
            cr_assert_eq(cw.n, 4 * S);
            /* every node once, the run as linear probing leaves it */
            uint32_t c0;
            memcpy(&c0, whole, 4);
            cr_assert(kind != 0 || N < 2 || c0 == 1, "kind 0: node 1 wraps to cell 0");
            /* 8-byte cells: the same indices, all ones for a free cell */
            struct cells c8 = {part, 0};
            uint8_t *wide = malloc(8 * S);
            c8.b = wide;
            cr_assert_eq(sol_set_build(&src, S, S / 4, 8, cells_put, &c8, "t", &e), SOW_OK);
            for (uint64_t j = 0; j < S; j++) {
                uint32_t a;
                uint64_t b;
                memcpy(&a, whole + 4 * j, 4);
                memcpy(&b, wide + 8 * j, 8);
                cr_assert(b == (a == UINT32_MAX ? UINT64_MAX : a), "kind %d: cell %llu", kind,
                          (unsigned long long)j);
            }
            free(wide);
            for (uint64_t win = 1; win <= S + 1; win = win < 8 ? win + 1 : win * 3 + 1) {
                struct cells cp = {part, 0};
                cr_assert_eq(sol_set_build(&src, S, win, 4, cells_put, &cp, "t", &e), SOW_OK, "%s",
                             e.msg);
                cr_assert(cp.n == 4 * S && !memcmp(whole, part, 4 * S),
                          "kind %d, %zu nodes: windows of %llu cells differ from the whole set",
                          kind, N, (unsigned long long)win);
            }
        }
    free(h);
    free(whole);
    free(part);
}

/* The set of a closure on disk built a window of cells at a time
 * (solution_set.c: carries between windows, the wrap iterated) gives the
 * same file, byte for byte, as the whole set built at once, for windows from
 * one cell to all but one, on every rule set. */
Test(closure, disk_solution_windows, .timeout = 120)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        sow_position root = dk_small(r, &rs);
        struct clos *d;
        uint64_t cd[3];
        char work[256], pw[300], px[300];
        snprintf(work, sizeof work, "/tmp/sow-test-diskwin-%d-%s", (int)getpid(), rs.name);
        snprintf(pw, sizeof pw, "%s.whole.sol", work);
        snprintf(px, sizeof px, "%s.win.sol", work);
        mkdir(work, 0777);
        cr_assert_eq(dk_build_one(&rs, &root, 1, work, NULL, &d, cd), CLOS_OK);
        struct sow_error e = {0};
        cr_assert_eq(sol_save(&rs, d, &root, pw, 0, 0, &e), SOW_OK, "%s: %s", rs.name, e.msg);
        uint64_t N = clos_size(d), S = clos_set_cells_for(N);
        const uint64_t wins[] = {1, 2, 3, 61, 1000, S / 3, S / 2 + 1, S - 1, S, S + 5};
        int windowed = 0;
        for (size_t k = 0; k < sizeof wins / sizeof wins[0]; k++) {
            uint64_t w = wins[k] ? wins[k] : 1;
            if ((S / w) * N > 10000000) /* a pass a window: keep it to seconds */
                continue;
            windowed += w < S;
            cr_assert_eq(sol_save(&rs, d, &root, px, w, 0, &e), SOW_OK, "%s: %s", rs.name, e.msg);
            cr_assert(test_same_file(pw, px), "%s (%llu positions, %llu cells): windows of %llu "
                      "cells give another file", rs.name, (unsigned long long)N,
                      (unsigned long long)S, (unsigned long long)w);
        }
        cr_assert(windowed >= 4, "%s: only %d windowed saves", rs.name, windowed);
        /* 8-byte cells (format version 2, forced on a small closure): the
         * same file whatever the window, and every position answered as
         * by the 4-byte file */
        char p8[300], p8w[300];
        snprintf(p8, sizeof p8, "%s.wide.sol", work);
        snprintf(p8w, sizeof p8w, "%s.widewin.sol", work);
        cr_assert_eq(sol_save(&rs, d, &root, p8, 0, 8, &e), SOW_OK, "%s: %s", rs.name, e.msg);
        cr_assert_eq(sol_save(&rs, d, &root, p8w, S / 3 + 1, 8, &e), SOW_OK, "%s", e.msg);
        cr_assert(test_same_file(p8, p8w), "%s: 8-byte cells in windows give another file", rs.name);
        struct sol *f4, *f8;
        cr_assert_eq(sol_open(&rs, pw, &f4, &e), SOW_OK, "%s", e.msg);
        cr_assert_eq(sol_open(&rs, p8, &f8, &e), SOW_OK, "%s: %s", rs.name, e.msg);
        cr_assert_eq(sol_size(f8), sol_size(f4));
        for (uint64_t i = 0; i < sol_size(f4); i++) {
            sow_position p;
            sol_position(f4, i, &p);
            int l1, h1, v1, l2, h2, v2;
            cr_assert(sol_find(f4, &p, &l1, &h1, &v1));
            cr_assert(sol_find(f8, &p, &l2, &h2, &v2), "%s node %llu: not in the 8-byte file",
                      rs.name, (unsigned long long)i);
            cr_assert(l1 == l2 && h1 == h2 && v1 == v2, "%s node %llu", rs.name,
                      (unsigned long long)i);
        }
        sol_close(f4);
        sol_close(f8);
        FILE *f = fopen(p8, "rb");
        unsigned char hd[12];
        cr_assert(f && fread(hd, 1, 12, f) == 12);
        fclose(f);
        cr_assert_eq(hd[8] | hd[9] << 8, 2, "%s: the 8-byte file says version %d", rs.name,
                     hd[8] | hd[9] << 8);
        unlink(p8);
        unlink(p8w);
        unlink(pw);
        unlink(px);
        clos_free(d);
        dk_rm(work);
    }
}

/* Stopped after every second level in turn (Ctrl-C), rerun each time: the same
 * positions, values and node counts as a closure never stopped; then
 * damaged files: a values file solves its levels again, a keys file, the
 * state or an incoming file starts over, each with a note, and the result
 * is the same again. */
Test(closure, disk_resumed, .timeout = 120)
{
    int incoming_damaged = 0;
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        sow_position root = dk_small(r, &rs);
        struct clos *m, *d;
        uint64_t cm[3], cd[3];
        cr_assert_eq(dk_build_one(&rs, &root, 1, NULL, NULL, &m, cm), CLOS_OK);
        char work[256];
        snprintf(work, sizeof work, "/tmp/sow-test-diskr-%d-%s", (int)getpid(), rs.name);
        mkdir(work, 0777);
        int runs = 0;
        enum clos_err e;
        do {
            struct dk_run run = {.stop_after = 2};
            e = dk_build_one(&rs, &root, 1 + runs % 2, work, &run, &d, cd);
            cr_assert(e == CLOS_OK || e == CLOS_STOPPED, "%s: %d", rs.name, (int)e);
            cr_assert(runs == 0 || run.resumed == 1, "%s run %d did not resume", rs.name, runs);
            cr_assert(runs < 200);
            if (e != CLOS_OK)
                clos_free(d);
            runs++;
        } while (e != CLOS_OK);
        cr_assert(runs >= 3, "%s: %d runs", rs.name, runs);
        cr_assert(cd[0] == cm[0] && cd[1] == cm[1] && cd[2] == cm[2],
                  "%s resumed: %llu nodes, memory %llu", rs.name, (unsigned long long)cd[0],
                  (unsigned long long)cm[0]);
        dk_same(&rs, m, d, "resumed");
        clos_free(d);
        /* damaged files, each rerun from the finished solve's files */
        /* scaled (SOW_TEST_SCALE < 1): the damaged files on the even rule
         * sets, the stops within levels on the odd ones */
        const bool all = test_scale() >= 1;
        const char *damage[] = {"values", "keys", "disk.state"};
        for (int k = 0; k < (all || r % 2 == 0 ? 3 : 0); k++) {
            char path[400];
            if (k == 2)
                snprintf(path, sizeof path, "%s/disk.state", work);
            else
                snprintf(path, sizeof path, "%s/disk-%03d.%s", work, rules_board_seeds(&rs, &root),
                         damage[k]);
            struct stat sb;
            cr_assert_eq(stat(path, &sb), 0, "%s", path);
            flip_byte(path, (long)sb.st_size - 1);
            struct dk_run run = {0};
            cr_assert_eq(dk_build_one(&rs, &root, 1, work, &run, &d, cd), CLOS_OK);
            cr_assert_eq(run.notes, 1, "%s: damaged %s, %d notes", rs.name, damage[k], run.notes);
            cr_assert(cd[0] == cm[0] && cd[1] == cm[1] && cd[2] == cm[2],
                      "%s, damaged %s: %llu nodes, memory %llu", rs.name, damage[k],
                      (unsigned long long)cd[0], (unsigned long long)cm[0]);
            dk_same(&rs, m, d, damage[k]);
            clos_free(d);
        }
        /* stopped within levels (kept in disk-cur.keys), then resumed */
        dk_rm(work);
        mkdir(work, 0777);
        int mid = 0;
        bool spoilt = false;
        for (int k = 0; k < 4 && (all || r % 2 == 1); k++) {
            struct dk_run run = {.stop_round = k < 3};
            e = dk_build_one(&rs, &root, 1 + k % 2, work, &run, &d, cd);
            cr_assert_eq(run.notes, spoilt ? 1 : 0, "%s: %d notes", rs.name, run.notes);
            spoilt = false;
            char cp[400];
            struct stat sb;
            snprintf(cp, sizeof cp, "%s/disk-cur.keys", work);
            if (e == CLOS_STOPPED && stat(cp, &sb) == 0) {
                mid++;
                if (k == 1) { /* damaged: that level is expanded again from its start */
                    flip_byte(cp, (long)sb.st_size - 1);
                    spoilt = true;
                }
            }
            if (e == CLOS_OK)
                break;
            cr_assert_eq(e, CLOS_STOPPED);
            clos_free(d);
        }
        if (all || r % 2 == 1) {
            cr_assert_eq(e, CLOS_OK);
            cr_assert(mid >= 1, "%s: never stopped within a level", rs.name);
            cr_assert(cd[0] == cm[0] && cd[1] == cm[1] && cd[2] == cm[2],
                      "%s resumed within levels: %llu nodes, memory %llu", rs.name,
                      (unsigned long long)cd[0], (unsigned long long)cm[0]);
            dk_same(&rs, m, d, "resumed within levels");
            clos_free(d);
        }
        /* a damaged incoming file: stopped after the root's level */
        dk_rm(work);
        mkdir(work, 0777);
        struct dk_run run = {.stop_after = 1};
        cr_assert_eq(dk_build_one(&rs, &root, 1, work, &run, &d, cd), CLOS_STOPPED);
        clos_free(d);
        char in[400] = "";
        struct stat sb;
        for (int l = 0; l < rules_board_seeds(&rs, &root) && !in[0]; l++) {
            snprintf(in, sizeof in, "%s/disk-in-%03d.keys", work, l);
            if (stat(in, &sb) != 0 || sb.st_size < 24)
                in[0] = 0;
        }
        if (in[0]) {
            /* a key's byte flipped (the block's checksum), or in turn the
             * last block cut short (shorter than its state records) */
            if (r % 2)
                cr_assert_eq(truncate(in, sb.st_size - 8), 0);
            else
                flip_byte(in, 20);
            incoming_damaged++;
            struct dk_run run2 = {0};
            cr_assert_eq(dk_build_one(&rs, &root, 1, work, &run2, &d, cd), CLOS_OK);
            cr_assert_eq(run2.notes, 1, "%s: damaged incoming, %d notes", rs.name, run2.notes);
            cr_assert(cd[0] == cm[0] && cd[1] == cm[1], "%s, damaged incoming", rs.name);
            dk_same(&rs, m, d, "damaged incoming");
            clos_free(d);
        }
        dk_rm(work);
        clos_free(m);
    }
    cr_assert(incoming_damaged >= 4, "only %d incoming files damaged", incoming_damaged);
}

/* On every rule set, in memory (its checkpoints) and on disk: a solve
 * stopped inside a level, in its move pass or its retrograde, again and
 * again (1 and 2 threads in turn; on disk reverse edges and, single
 * sowing, unmoves in turn), each rerun going on from the levels solved,
 * ends with the same positions, values and node counts as a solve never
 * stopped. */
Test(closure, stopped_within_level, .timeout = 120)
{
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        sow_position root = dk_small(r, &rs);
        struct clos *m, *d;
        uint64_t cm[3], cd[3];
        cr_assert_eq(dk_build_one(&rs, &root, 1, NULL, NULL, &m, cm), CLOS_OK);
        for (int disk = 0; disk <= 1; disk++) {
            char work[256];
            snprintf(work, sizeof work, "/tmp/sow-test-inlevel-%d-%s", (int)getpid(), rs.name);
            mkdir(work, 0777);
            int runs = 0, stops[3] = {0};
            enum clos_err e;
            do {
                /* a run that has solved a level stops at the next one's
                 * first line from within; the rerun solves that one again */
                struct dk_run run = {.stop_within = 1 + runs % 2, .eager = true,
                                     .mem_work = !disk, .unmoves_only = runs / 4 % 2};
                e = dk_build_one(&rs, &root, 1 + runs / 2 % 2, work, &run, &d, cd);
                cr_assert(e == CLOS_OK || e == CLOS_STOPPED, "%s: %d", rs.name, (int)e);
                if (e == CLOS_STOPPED) {
                    cr_assert(run.stop && run.within_stops == 1, "%s%s run %d: stopped, %d lines",
                              rs.name, disk ? " on disk" : "", runs, run.within_stops);
                    stops[run.stop_within]++;
                    clos_free(d);
                }
                cr_assert(++runs < 100, "%s: no end", rs.name);
            } while (e != CLOS_OK);
            cr_assert(stops[1] >= 1 && stops[2] >= 1, "%s%s: %d stops in move passes, %d in "
                      "retrogrades", rs.name, disk ? " on disk" : "", stops[1], stops[2]);
            cr_assert(cd[0] == cm[0] && cd[1] == cm[1] && cd[2] == cm[2],
                      "%s%s, stopped within levels: %llu/%llu nodes, never stopped %llu/%llu",
                      rs.name, disk ? " on disk" : "", (unsigned long long)cd[0],
                      (unsigned long long)cd[1], (unsigned long long)cm[0],
                      (unsigned long long)cm[1]);
            same_values(&rs, m, d,
                        disk ? "stopped within levels, on disk" : "stopped within levels");
            clos_free(d);
            dk_rm(work);
        }
        clos_free(m);
    }
}

/* A level stopped mid-way (disk-cur.keys) and resumed under budgets too
 * small for it is refused, not taken for a damaged file: no note, the kept
 * expansion survives every refusal (until a budget finishes it), and a
 * rerun with room goes on from it to the in-memory closure's values and
 * node counts. */
Test(closure, disk_resume_refused, .timeout = 120)
{
    int refusals = 0, resumed_refusals = 0;
    for (int r = 0; sow_rule_names[r]; r++) {
        struct ruleset rs;
        sow_position root = dk_small(r, &rs);
        struct clos *m, *d;
        uint64_t cm[3], cd[3];
        cr_assert_eq(dk_build_one(&rs, &root, 1, NULL, NULL, &m, cm), CLOS_OK);
        char work[256], cp[400];
        snprintf(work, sizeof work, "/tmp/sow-test-diskrr-%d-%s", (int)getpid(), rs.name);
        snprintf(cp, sizeof cp, "%s/disk-cur.keys", work);
        mkdir(work, 0777);
        struct stat sb;
        enum clos_err e = CLOS_STOPPED;
        for (int k = 0; k < 3 && e == CLOS_STOPPED && stat(cp, &sb) != 0; k++) {
            struct dk_run run = {.stop_round = true};
            e = dk_build_one(&rs, &root, 1, work, &run, &d, cd);
            clos_free(d);
        }
        if (stat(cp, &sb) == 0) {
            for (double mem = 2e4;; mem *= 1.25) {
                cr_assert(mem < 1e9, "%s: no budget solves it", rs.name);
                struct dk_run run = {0};
                struct clos_info info = {0};
                e = dk_build_mem(&rs, &root, 1, work, &run, mem, &info, &d, cd);
                cr_assert(e == CLOS_OK || e == CLOS_TOO_BIG, "%s: %d", rs.name, (int)e);
                cr_assert_eq(run.notes, 0, "%s, budget %.0f bytes: %d notes (a refusal taken "
                             "for damage?)", rs.name, mem, run.notes);
                cr_assert(e == CLOS_TOO_BIG || run.resumed == 1, "%s: not resumed", rs.name);
                if (e == CLOS_OK)
                    break;
                /* kept, unless the kept level was finished and a level
                 * below it refused while its seeds were read (0 expanded),
                 * which keeps nothing of that one */
                cr_assert(stat(cp, &sb) == 0 || strstr(info.why, " (0 expanded)"),
                          "%s, budget %.0f bytes: the kept level is gone: %s", rs.name, mem,
                          info.why);
                resumed_refusals += run.resumed;
                cr_assert(info.by_memory && info.need > mem, "%s: need %.0f, budget %.0f",
                          rs.name, info.need, mem);
                refusals++;
                clos_free(d);
            }
            dk_agree(&rs, m, d, cm, cd, "resumed after refusals");
            clos_free(d);
        }
        /* From an empty directory, budgets swept in small steps over one
         * directory: each refusal keeps what a rerun goes on from (a level
         * refused while its seeds are read keeps nothing of it: a kept
         * expansion resumes without reading seeds again). */
        dk_rm(work);
        mkdir(work, 0777);
        for (double mem = 2e4;; mem *= 1.1) {
            cr_assert(mem < 1e9, "%s: no budget solves it", rs.name);
            struct clos_info info = {0};
            e = dk_build_mem(&rs, &root, 1, work, NULL, mem, &info, &d, cd);
            cr_assert(e == CLOS_OK || e == CLOS_TOO_BIG, "%s: %d", rs.name, (int)e);
            if (e == CLOS_OK)
                break;
            if (getenv("SOW_TEST_VERBOSE"))
                fprintf(stderr, "%s %.0f: %s\n", rs.name, mem, info.why);
            cr_assert(info.need > mem, "%s: need %.0f, budget %.0f", rs.name, info.need, mem);
            clos_free(d);
        }
        dk_agree(&rs, m, d, cm, cd, "after refusals from an empty directory");
        clos_free(d);
        dk_rm(work);
        clos_free(m);
    }
    cr_assert(refusals >= 8 && resumed_refusals >= 4, "only %d refusals, %d after resuming",
              refusals, resumed_refusals);
}

/* A level resumed mid-way is held to the budget the run before it was: on
 * the jodus (relays: a level's solve counts 4 bytes per in-level move,
 * measured by the expansions, which a resumed level had not measured; and
 * its set, rebuilt at its load, could not grow near the budget), under the
 * smallest budget (to 0.5%)
 * that solves a 13-seed closure of about 100 k positions on disk
 * uninterrupted, a solve stopped within its largest level resumes and ends
 * as the in-memory closure does. */
Test(closure, disk_resume_same_budget, .timeout = 120)
{
    static const char *const jodus[] = {"jodu", "jodu-ibadan", "jodu-starve"};
    const int nj = test_size(3, 1); /* the bisections are most of the time */
    int mid = 0;
    for (int r = 0; r < nj; r++) {
        struct ruleset rs;
        sow_position root;
        struct sow_error re;
        cr_assert_eq(rules_init(&rs, jodus[r], 4, 2, &re), SOW_OK);
        cr_assert_eq(pos_parse(&rs, "2,2,1,2/1,2,2,1/A", &root, &re), SOW_OK, "%s", re.msg);
        struct clos *m, *d;
        uint64_t cm[3], cd[3];
        struct clos_info mi = {0};
        cr_assert_eq(dk_build_mem(&rs, &root, 1, NULL, NULL, 0, &mi, &m, cm), CLOS_OK);
        int L = 0;
        for (int l = 0; l <= SOW_MAX_SEEDS; l++)
            if (mi.level_count[l] > mi.level_count[L])
                L = l;
        char work[256], cp[400];
        snprintf(work, sizeof work, "/tmp/sow-test-disksb-%d-%s", (int)getpid(), rs.name);
        snprintf(cp, sizeof cp, "%s/disk-cur.keys", work);
        /* the smallest budget that solves it, to 0.5% (by bisection) */
        double lo = 1e5, hi = 1e8, mem;
        enum clos_err e;
        for (int k = 0; k < 2 || hi > lo * 1.005; k++) {
            mem = k == 0 ? lo : k == 1 ? hi : sqrt(lo * hi);
            dk_rm(work);
            mkdir(work, 0777);
            struct clos_info info = {0};
            e = dk_build_mem(&rs, &root, 1, work, NULL, mem, &info, &d, cd);
            clos_free(d);
            cr_assert(e == CLOS_OK || e == CLOS_TOO_BIG, "%s: %d", rs.name, (int)e);
            cr_assert(k != 0 || e == CLOS_TOO_BIG, "%s: %.0f bytes solved it", rs.name, lo);
            cr_assert(k != 1 || e == CLOS_OK, "%s: %.0f bytes did not solve it", rs.name, hi);
            if (k >= 2)
                *(e == CLOS_OK ? &hi : &lo) = mem;
        }
        mem = hi;
        if (getenv("SOW_TEST_VERBOSE"))
            fprintf(stderr, "%s: level %d, %llu positions, budget %.0f\n", rs.name, L,
                    (unsigned long long)mi.level_count[L], mem);
        dk_rm(work);
        mkdir(work, 0777);
        struct dk_run run = {.stop_round = true, .stop_level = L};
        e = dk_build_mem(&rs, &root, 1, work, &run, mem, NULL, &d, cd);
        clos_free(d);
        struct stat sb;
        if (e == CLOS_STOPPED && stat(cp, &sb) == 0) {
            mid++;
            struct dk_run again = {0};
            struct clos_info info = {0};
            e = dk_build_mem(&rs, &root, 1, work, &again, mem, &info, &d, cd);
            cr_assert_eq(e, CLOS_OK, "%s: level %d resumed under %.0f bytes, which solved it "
                         "uninterrupted: %s", rs.name, L, mem, info.why);
            cr_assert_eq(again.resumed, 1, "%s: not resumed", rs.name);
            dk_agree(&rs, m, d, cm, cd, "resumed under the same budget");
            clos_free(d);
        } else {
            cr_assert_eq(e, CLOS_OK, "%s: %d", rs.name, (int)e);
        }
        dk_rm(work);
        clos_free(m);
    }
    cr_assert(mid == nj, "only %d of %d solves stopped within their largest level", mid, nj);
}

struct dk_timer {
    struct dk_run *run;
    long ms;
};

static void *dk_stop_later(void *arg)
{
    struct dk_timer *t = arg;
    struct timespec ts = {t->ms / 1000, t->ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
    t->run->stop = 1;
    return NULL;
}

/* An 11-seed oware position whose closure (its top level about 480 k
 * positions) solves in a second or two, and that closure in memory with
 * its counters. */
static void dk_eleven(struct ruleset *rs, sow_position *root, struct clos **m, uint64_t *cm)
{
    struct sow_error re;
    cr_assert_eq(rules_init(rs, "oware", 6, 4, &re), SOW_OK);
    cr_assert_eq(pos_parse(rs, "2,1,0,2,0,1/1,1,0,1,1,1/A", root, &re), SOW_OK, "%s", re.msg);
    cr_assert_eq(dk_build_one(rs, root, 1, NULL, NULL, m, cm), CLOS_OK);
}

/* The same with a level stopped after thousands of positions (a Ctrl-C
 * from a timer), so that the saved level's own node array is what the
 * small budgets refuse when it is read back: a refusal (exit 2, the file
 * kept), where it used to be taken for a damaged file and expanded again. */
Test(closure, disk_resume_refused_big, .timeout = 120)
{
    struct ruleset rs;
    sow_position root;
    struct clos *m, *d;
    uint64_t cm[3], cd[3];
    dk_eleven(&rs, &root, &m, cm);
    char work[256], cp[400];
    snprintf(work, sizeof work, "/tmp/sow-test-diskrb-%d", (int)getpid());
    snprintf(cp, sizeof cp, "%s/disk-cur.keys", work);
    struct stat sb;
    bool big = false;
    for (long ms = 40; ms < 2000 && !big; ms *= 2) { /* until the stop lands mid-level */
        dk_rm(work);
        mkdir(work, 0777);
        struct dk_run run = {0};
        struct dk_timer t = {&run, ms};
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, dk_stop_later, &t), 0);
        enum clos_err e = dk_build_one(&rs, &root, 1, work, &run, &d, cd);
        pthread_join(th, NULL);
        clos_free(d);
        /* 64 KiB of keys: more than the first node array holds */
        big = e == CLOS_STOPPED && stat(cp, &sb) == 0 && sb.st_size > 65536;
    }
    cr_assert(big, "no stop landed within a level of more than 8192 positions");
    int at_load = 0;
    for (double mem = 1e5;; mem *= 1.5) {
        cr_assert(mem < 1e10, "no budget solves it");
        struct dk_run run = {0};
        struct clos_info info = {0};
        enum clos_err e = dk_build_mem(&rs, &root, 1, work, &run, mem, &info, &d, cd);
        cr_assert(e == CLOS_OK || e == CLOS_TOO_BIG, "%d", (int)e);
        cr_assert_eq(run.notes, 0, "budget %.0f bytes: %d notes (a refusal taken for damage?)",
                     mem, run.notes);
        if (e == CLOS_OK)
            break;
        cr_assert(info.by_memory && info.need > mem, "need %.0f, budget %.0f", info.need, mem);
        cr_assert_eq(stat(cp, &sb), 0, "budget %.0f bytes: the kept level is gone", mem);
        at_load += run.resumed == 0 && strstr(info.why, "on disk, reached") != NULL;
        clos_free(d);
    }
    cr_assert(at_load >= 1, "no budget refused the kept level as it was read back");
    dk_agree(&rs, m, d, cm, cd, "resumed after refusals");
    clos_free(d);
    clos_free(m);
    dk_rm(work);
}

/* Memory bounds the largest level, not the growth steps: a budget 10%
 * above the largest level's own need (docs/solver.md "Past RAM": while
 * expanded 8K + 3 bytes a position and the set's cells; while solved
 * 8K + 3 + 6 a position and 4 per in-level move, the moves counted here by
 * the rules' generate over the in-memory closure) solves the closure on
 * disk, to the same values (2 threads: the level's set rebuilt in
 * parallel).  The 1.5x growth of the node arrays and the set, and the
 * retrograde's stack beside the keys, used to need about 1.4x. */
Test(closure, disk_budget_is_the_level, .timeout = 120)
{
    struct ruleset rs;
    sow_position root;
    struct clos *m, *d;
    uint64_t cm[3], cd[3];
    dk_eleven(&rs, &root, &m, cm);
    const int K = clos_key_words(m);
    uint64_t n[SOW_MAX_SEEDS + 1] = {0};
    for (uint64_t i = 0; i < clos_size(m); i++) {
        sow_position p;
        clos_unpack(&rs, K, &clos_keys(m)[i * K], &p);
        n[rules_board_seeds(&rs, &p)]++;
    }
    /* docs/solver.md "Past RAM": expanded, keys and set; solved (oware:
     * the predecessors by unmoves), keys, values, be, cnt, the bitmap, a
     * stack of n/16 + 4096 entries and under 1 MB of buffers */
    cr_assert(tb_unmove_supported(&rs));
    double need = 0;
    for (int l = 0; l <= SOW_MAX_SEEDS; l++) {
        double keys = 8.0 * K * (double)n[l];
        double down = keys + 8.0 * (double)clos_set_cells_for(n[l]);
        double up = keys + 5.25 * (double)n[l] + 4.0 * ((double)n[l] / 16 + 4096) + 1e6;
        need = fmax(need, fmax(down, up));
    }
    char work[256];
    snprintf(work, sizeof work, "/tmp/sow-test-diskbl-%d", (int)getpid());
    dk_rm(work);
    mkdir(work, 0777);
    struct clos_info info = {0};
    enum clos_err e = dk_build_mem(&rs, &root, 2, work, NULL, 1.1 * need, &info, &d, cd);
    cr_assert_eq(e, CLOS_OK, "a budget of %.0f bytes, 1.1x the largest level's need: %s (%.0f)",
                 1.1 * need, info.why, info.need);
    dk_agree(&rs, m, d, cm, cd, "within the level's budget");
    clos_free(d);
    clos_free(m);
    dk_rm(work);
}

/* Through the solver, on 2x6 with the lowest levels solved in memory first
 * (the default exact mode): with --disk the same value, every move's value
 * and node count as without. */
Test(closure, disk_levels, .timeout = 120)
{
    const char *names[] = {"oware", "darra", "jodu-ibadan"};
    for (int r = 0; r < 3; r++) {
        struct ruleset rs;
        struct sow_error re;
        cr_assert_eq(rules_init(&rs, names[r], 6, 4, &re), SOW_OK);
        sow_position p;
        /* 9 seeds: the lowest levels (up to 20,000 positions) in memory,
         * the closure above them */
        cr_assert_eq(pos_parse(&rs, "1,0,1,2,0,1/1,1,0,1,1,0/A", &p, &re), SOW_OK, "%s", re.msg);
        char work[256];
        snprintf(work, sizeof work, "/tmp/sow-test-diskl-%d-%s", (int)getpid(), rs.name);
        mkdir(work, 0777);
        int v[2], n[2], vals[2][SOW_MAX_PITS + 1];
        uint64_t nodes[2], h;
        for (int k = 0; k < 2; k++) {
            struct sow_error e;
            struct search_opts o = {.threads = 2, .hash_mb = 1, .level_budget = 20000,
                                    .closure_first = -1, .work = k ? work : NULL, .disk = k};
            struct search_ctx *s;
            cr_assert_eq(search_new(&rs, &o, &s, &e), SOW_OK, "%s", e.msg);
            cr_assert_eq(search_value(s, &p, &v[k]), SOW_OK, "%s", search_last_error(s)->msg);
            search_counters(s, &nodes[k], &h);
            n[k] = search_move_values(s, &p, vals[k]);
            search_free(s);
        }
        char st[300];
        struct stat sb;
        snprintf(st, sizeof st, "%s/disk.state", work);
        cr_assert_eq(stat(st, &sb), 0, "%s: the closure was not on disk", rs.name);
        cr_assert(v[0] == v[1] && nodes[0] == nodes[1] && n[0] == n[1] && n[0] > 0,
                  "%s: value %d/%d, nodes %llu/%llu", rs.name, v[0], v[1],
                  (unsigned long long)nodes[0], (unsigned long long)nodes[1]);
        for (int i = 0; i < n[0]; i++)
            cr_assert_eq(vals[0][i], vals[1][i], "%s move %d", rs.name, i);
        dk_rm(work);
    }
}

/* A key array first mapped large then grown (the up pass across ranks maps
 * its first level's keys afresh and grows them for the next): the growth
 * keeps the keys.  (The mapping's huge-page advice once covered only its
 * 2 MiB-aligned part, which split it in three, and the growth's mremap
 * failed with EFAULT: "out of memory" at jerin's level 24.) */
Test(closure, keys_grow_after_a_large_first_map)
{
    struct ruleset rs;
    cr_assert_eq(rules_init(&rs, "oware", 6, 4, NULL), SOW_OK);
    struct clos *c = clos_new(&rs);
    cr_assert(c);
    uint64_t nodes[1] = {0}, visits[1] = {0}, tbh[1] = {0};
    struct clos_env env = {.threads = 1, .nodes = nodes, .visits = visits, .tb_hits = tbh,
                           .tb_hits_max = -1, .max_nodes = UINT64_MAX};
    const uint64_t a = ((uint64_t)3 << 20) + 123, b = (uint64_t)8 << 20;
    cr_assert_eq(clos_grow_nodes(c, &env, a), CLOS_OK);
    for (uint64_t i = 0; i < a * (uint64_t)c->K; i++)
        c->key[i] = i * 0x9e3779b97f4a7c15ull;
    cr_assert_eq(clos_grow_nodes(c, &env, b), CLOS_OK, "the key array did not grow");
    cr_assert_geq(c->cap, b);
    for (uint64_t i = 0; i < a * (uint64_t)c->K; i++)
        cr_assert_eq(c->key[i], i * 0x9e3779b97f4a7c15ull, "key word %llu lost in the growth",
                     (unsigned long long)i);
    c->key[b * (uint64_t)c->K - 1] = 1; /* the new end is mapped */
    clos_free(c);
}
