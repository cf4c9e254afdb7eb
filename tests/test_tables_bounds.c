/* Bounds files (sow/tables_probe.h, docs/tables.md "Bounds files"): the
 * forced bounds a build writes beside each level, what the probes and the
 * analysis answer from them, and their checks.
 *
 * - closure tests: for every rule set, levels 0..6 of 2x6 built with bounds;
 *   positions of levels 5 and 6 answered from them (analyse_position:
 *   source "tables", every move's value) against the exact solver's closure
 *   over the levels below without bounds (its own retrograde code), and
 *   against sow solve's path (search over the tables with bounds).
 * - files tests: the bounds are the in-memory solve's, byte for byte; the lean
 *   and fast builders write the same files; bounds added to levels built
 *   without them; every kind of damage refused naming the file; levels
 *   without bounds still open (no exact tables answer); compressed levels
 *   keep their bounds files. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "sow/analyse.h"
#include "sow/position.h"
#include "sow/search.h"
#include "tables/compress.h"
#include "tables/tables.h"
#include "tables/tb_lean.h"
#include "test_scale.h"
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

static void tmpdir(char *buf)
{
    strcpy(buf, "/tmp/sow-test-bounds-XXXXXX");
    cr_assert(mkdtemp(buf) != NULL);
}

static void rmtree(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static void build(const struct ruleset *rs, const char *dir, int top, bool bounds, int builder)
{
    struct tb_build_opts o = {.threads = 1, .bounds = bounds, .builder = builder};
    struct sow_error e;
    cr_assert_eq(tb_build(rs, dir, top, &o, &e), SOW_OK, "%s", e.msg);
}

static uint64_t rng = 0xB0DD5;
static int rndi(int n)
{
    return (int)(util_splitmix64(&rng) % (uint64_t)n);
}

/* A random valid position with exactly n seeds on the board. */
static void random_pos(const struct ruleset *rs, int n, sow_position *p)
{
    struct sow_error e;
    for (;;) {
        memset(p, 0, sizeof *p);
        for (int k = 0; k < n; k++)
            p->board.h[rndi(rs->holes)]++;
        p->side = (uint8_t)rndi(2);
        if (rs->family == SOW_DARRA)
            p->state = (uint8_t)rndi(3);
        if (rules_validate(rs, p, &e) == SOW_OK)
            return;
    }
}

/* ---- the answers against the closure ------------------------------------- */

static void agree(const char *name, int top, int count, bool open)
{
    struct ruleset rs = rules(name, 6);
    char with[64], lower[64];
    struct sow_error e;
    tmpdir(with);
    tmpdir(lower);
    build(&rs, with, top, true, TB_BUILDER_AUTO);
    build(&rs, lower, top - 2, false, TB_BUILDER_AUTO);
    struct tb_set *tb, *tl;
    cr_assert_eq(tb_open(&rs, with, &tb, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(tb_open(&rs, lower, &tl, &e), SOW_OK, "%s", e.msg);
    for (int n = 0; n <= top; n++)
        cr_assert(tb_level_has_bounds(tb, n), "%s level %d: bounds not loaded", name, n);
    cr_assert(!tb_level_has_bounds(tl, 0));

    /* ref: the closure of levels top-1 and top over the levels below (no
     * bounds there, none built in memory); solve: sow solve --tables's path */
    struct search_opts ro = {.threads = 1, .tb = tl, .level_budget = -1};
    struct search_opts so = {.threads = 1, .tb = tb, .level_budget = -1};
    struct search_ctx *ref, *sol;
    cr_assert_eq(search_new(&rs, &ro, &ref, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(search_new(&rs, &so, &sol, &e), SOW_OK, "%s", e.msg);
    struct analyse_opts ao = {.threads = 1, .seconds = 30, .tb = tb, .level_budget = -1};
    /* half the positions random, half (as far as the levels have them) with a
     * move that stays in the level and is not worth -V(child): those only the
     * bounds answer (awari has none: its cyc is 0) */
    int ncand = 0, maxcand = count / 2;
    sow_position *cand = malloc((size_t)maxcand * sizeof *cand);
    for (int n = top; n >= top - 1 && ncand < maxcand; n--) {
        uint64_t E = tb_level_entries(tb_set_index(tb), n), step = 1 + (uint64_t)rndi(3);
        for (uint64_t i = 0; i < E && ncand < maxcand; i += step) {
            sow_position p;
            tb_position_of(tb_set_index(tb), n, i, &p);
            struct sow_movelist ml;
            rs.generate(&rs, &p, &ml, NULL, NULL);
            bool want = false;
            for (int k = 0; k < ml.n && !want; k++) {
                int lo, hi, vq, c = rules_cycle_value(&rs, &p);
                if (ml.c[k].captured[0] + ml.c[k].captured[1] == 0 &&
                    tb_probe_bounds(tb, &ml.c[k].pos, &lo, &hi, &vq))
                    want = (c < -hi ? -hi : c > -lo ? -lo : c) != -vq;
            }
            if (want && rules_validate(&rs, &p, &e) == SOW_OK)
                cand[ncand++] = p;
        }
    }
    int inlevel = 0, notneg = 0;
    for (int i = 0; i < count; i++) {
        sow_position p;
        if (i % 2 && i / 2 < ncand)
            p = cand[i / 2];
        else
            random_pos(&rs, top - rndi(2), &p);
        char tok[SOW_POS_MAXLEN];
        pos_format(&rs, &p, tok, sizeof tok);
        struct analysis a;
        cr_assert_eq(analyse_position(&rs, &p, &ao, &a, &e), SOW_OK, "%s %s: %s", name, tok,
                     e.msg);
        int lv;
        uint64_t idx;
        if (!tb_index_of(tb_set_index(tb), &p, &lv, &idx)) {
            /* jerin's opening is not indexed: the solver answers */
            cr_assert_str_neq(a.source, "tables");
            continue;
        }
        cr_assert_str_eq(a.source, "tables", "%s %s: answered by %s", name, tok, a.source);
        cr_assert(a.exact);
        int want, got, rv[SOW_MAX_PITS + 1], sv[SOW_MAX_PITS + 1];
        cr_assert_eq(search_value(ref, &p, &want), SOW_OK);
        cr_assert_eq(search_value(sol, &p, &got), SOW_OK);
        cr_assert_eq(a.value, want, "%s %s: tables %d, closure %d", name, tok, a.value, want);
        cr_assert_eq(got, want, "%s %s: solve over bounds %d, closure %d", name, tok, got, want);
        int nm = search_move_values(ref, &p, rv);
        cr_assert_eq(nm, a.ml.n, "%s %s", name, tok);
        cr_assert_eq(search_move_values(sol, &p, sv), nm);
        for (int k = 0; k < nm; k++) {
            const struct sow_child *ch = &a.ml.c[k];
            int vq;
            if (ch->captured[0] + ch->captured[1] == 0) {
                inlevel++;
                /* where -V(q) is not the move's value: only the bounds tell */
                cr_assert(tb_probe(tb, &ch->pos, &vq));
                notneg += a.vals[k] != -vq;
            }
            cr_assert_eq(a.vals[k], rv[k], "%s %s move %d: tables %d, closure %d", name, tok, k,
                         a.vals[k], rv[k]);
            cr_assert_eq(sv[k], rv[k], "%s %s move %d: solve over bounds %d, closure %d", name,
                         tok, k, sv[k], rv[k]);
        }
        /* the principal variation: each move worth the value it carries */
        cr_assert(a.over || a.pv_len > 0, "%s %s: no PV", name, tok);
    }
    cr_assert_gt(inlevel, count / 2, "%s: few moves that stay in the level were checked", name);
    free(cand);
    /* oware, odu, jerin have such moves at these levels; awari's cyc is 0
     * and the others' bounds there are all forced (lo = hi, sow tables
     * stats): -V(q) is every in-level move's value */
    if (open)
        cr_assert_gt(notneg, 0, "%s: no move whose value needs the bounds was checked", name);
    /* the solve over the bounds built no closure: it probed */
    uint64_t nodes, hits;
    search_counters(sol, &nodes, &hits);
    cr_assert_eq(nodes, 0, "%s: the solve over the bounds searched %llu nodes", name,
                 (unsigned long long)nodes);
    search_free(ref);
    search_free(sol);
    tb_close(tb);
    tb_close(tl);
    rmtree(with);
    rmtree(lower);
}

#define AGREE(id, name, open)                                                                    \
    Test(closure, id, .timeout = 300) { agree(name, 6, (int)test_scaled(300), open); }

AGREE(oware, "oware", true)
AGREE(awari, "awari", false)
AGREE(jodu, "jodu", false)
AGREE(jodu_ibadan, "jodu-ibadan", false)
AGREE(jodu_starve, "jodu-starve", false)
AGREE(odu, "odu", true)
AGREE(jerin, "jerin", true)
AGREE(darra, "darra", false)

/* ---- the files -------------------------------------------------------------- */

static void path_of(const char *dir, const struct ruleset *rs, int n, bool bounds, char *buf)
{
    (bounds ? tb_bounds_name : tb_file_name)(dir, rs->name, rs->pits, n, buf, 4200);
}

static void read_all(const char *path, uint8_t **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    *buf = malloc(*len ? *len : 1);
    cr_assert_eq(fread(*buf, 1, *len, f), *len);
    fclose(f);
}

static void write_all(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert(f, "%s", path);
    cr_assert_eq(fwrite(buf, 1, len, f), len);
    fclose(f);
}

static void same_files(const char *a, const char *b)
{
    cr_assert(test_same_file(a, b), "%s and %s differ", a, b);
}

/* tb_open of dir fails with a message naming path and holding why. */
static void refused(const struct ruleset *rs, const char *dir, const char *path, const char *why)
{
    struct tb_set *s;
    struct sow_error e;
    cr_assert_eq(tb_open(rs, dir, &s, &e), SOW_E_INPUT, "%s: not refused (%s)", path, why);
    cr_assert(strstr(e.msg, path) && strstr(e.msg, why), "%s: '%s', expected '%s'", path, e.msg,
              why);
    cr_assert(!strchr(e.msg, '\n'));
}

Test(files, bounds_are_the_solve_s)
{
    struct ruleset rs = rules("oware", 6);
    char dir[64];
    struct sow_error e;
    tmpdir(dir);
    int top = 7;
    build(&rs, dir, top, true, TB_BUILDER_FAST);
    struct tb_set *s;
    cr_assert_eq(tb_open(&rs, dir, &s, &e), SOW_OK, "%s", e.msg);
    for (int n = 0; n <= top; n++) {
        uint64_t E = tb_level_entries(tb_set_index(s), n);
        int8_t *v = malloc(E), *lohi = malloc(2 * E);
        cr_assert_eq(tb_solve_level(&rs, s, n, v, lohi, NULL, &e), SOW_OK, "%s", e.msg);
        char path[4200];
        path_of(dir, &rs, n, true, path);
        struct tb_header h;
        const int8_t *b;
        void *map;
        size_t maplen;
        uint64_t vsum;
        cr_assert_eq(tb_bounds_load(path, &rs, n, &h, &vsum, &b, &map, &maplen, &e), SOW_OK, "%s",
                     e.msg);
        cr_assert_eq(h.entries, E);
        cr_assert_eq(h.stored, TB_HEADER_SIZE + 2 * E);
        cr_assert_eq(vsum, XXH3_64bits(v, E), "level %d: bounds of other values", n);
        cr_assert_eq(h.checksum, XXH3_64bits(b, 2 * E));
        cr_assert(memcmp(b, lohi, 2 * E) == 0, "level %d: the file's bounds differ", n);
        /* and the probe reads them */
        for (uint64_t i = 0; i < E; i += 97) {
            sow_position p;
            tb_position_of(tb_set_index(s), n, i, &p);
            int lo, hi, val;
            cr_assert(tb_probe_bounds(s, &p, &lo, &hi, &val));
            cr_assert(lo == lohi[2 * i] && hi == lohi[2 * i + 1] && val == v[i]);
            cr_assert(lo <= val && val <= hi);
        }
        tb_file_unmap(map, maplen);
        free(v);
        free(lohi);
    }
    tb_close(s);
    rmtree(dir);
}

/* The lean builder writes the fast builder's bounds; bounds added to levels
 * built without them are the same files (the level files untouched). */
static void builders_agree(const char *name)
{
    struct ruleset rs = rules(name, 6);
    char fast[64], lean[64], later[64];
    tmpdir(fast);
    tmpdir(lean);
    tmpdir(later);
    int top = 7;
    build(&rs, fast, top, true, TB_BUILDER_FAST);
    build(&rs, lean, top, true, TB_BUILDER_LEAN);
    build(&rs, later, top, false, TB_BUILDER_AUTO);
    char p0[4200], p1[4200];
    path_of(later, &rs, 3, true, p0);
    cr_assert(access(p0, F_OK) != 0, "bounds without --bounds");
    struct stat st0;
    path_of(later, &rs, top, false, p0);
    cr_assert_eq(stat(p0, &st0), 0);
    build(&rs, later, top, true, TB_BUILDER_LEAN);
    struct stat st1;
    cr_assert_eq(stat(p0, &st1), 0);
    cr_assert(st0.st_ino == st1.st_ino, "the level file was rewritten");
    for (int n = 0; n <= top; n++)
        for (int b = 0; b < 2; b++) {
            path_of(fast, &rs, n, b, p0);
            path_of(lean, &rs, n, b, p1);
            same_files(p0, p1);
            path_of(later, &rs, n, b, p1);
            same_files(p0, p1);
        }
    rmtree(fast);
    rmtree(lean);
    rmtree(later);
}

Test(files, builders_agree_oware) { builders_agree("oware"); }
Test(files, builders_agree_jodu) { builders_agree("jodu"); }
Test(files, builders_agree_darra) { builders_agree("darra"); }

Test(files, damage_refused)
{
    struct ruleset rs = rules("awari", 6);
    char dir[64], path[4200];
    struct sow_error e;
    tmpdir(dir);
    build(&rs, dir, 6, true, TB_BUILDER_AUTO);
    path_of(dir, &rs, 5, true, path);
    uint8_t *good;
    size_t len;
    read_all(path, &good, &len);
    uint8_t *bad = malloc(len + 1);

    memcpy(bad, good, len); /* a payload byte */
    bad[len - 7] ^= 1;
    write_all(path, bad, len);
    refused(&rs, dir, path, "payload damaged");
    memcpy(bad, good, len); /* a header byte */
    bad[20] ^= 1;
    write_all(path, bad, len);
    refused(&rs, dir, path, "header damaged");
    write_all(path, good, len - 1);
    refused(&rs, dir, path, "truncated");
    memcpy(bad, good, len);
    bad[len] = 0;
    write_all(path, bad, len + 1);
    refused(&rs, dir, path, "trailing bytes");
    /* a level file where the bounds should be */
    char lpath[4200];
    path_of(dir, &rs, 5, false, lpath);
    uint8_t *lv;
    size_t llen;
    read_all(lpath, &lv, &llen);
    write_all(path, lv, llen);
    refused(&rs, dir, path, "bad magic");
    /* another level's bounds */
    char other[4200];
    path_of(dir, &rs, 4, true, other);
    uint8_t *ob;
    size_t olen;
    read_all(other, &ob, &olen);
    write_all(path, ob, olen);
    refused(&rs, dir, path, "foreign");
    /* well-formed bounds of other values: the level was rebuilt, not its bounds */
    struct tb_set *s;
    write_all(path, good, len);
    cr_assert_eq(tb_open(&rs, dir, &s, &e), SOW_OK, "%s", e.msg);
    uint64_t E = tb_level_entries(tb_set_index(s), 5);
    tb_close(s);
    int8_t *lohi = malloc(2 * E);
    memcpy(lohi, good + TB_HEADER_SIZE, 2 * E);
    cr_assert_eq(tb_bounds_write(dir, &rs, 5, lohi, E, 12345, &e), SOW_OK, "%s", e.msg);
    refused(&rs, dir, path, "bounds of other values");
    /* well-formed, checksummed, but lo > hi */
    {
        uint64_t sum;
        memcpy(&sum, good + 88, 8); /* the values' checksum (docs/tables.md) */
        int8_t t = lohi[0];
        lohi[0] = lohi[1];
        lohi[1] = t;
        if (lohi[0] == lohi[1])
            lohi[0] = (int8_t)(lohi[1] + 1);
        cr_assert_eq(tb_bounds_write(dir, &rs, 5, lohi, E, sum, &e), SOW_OK, "%s", e.msg);
        refused(&rs, dir, path, "out of order or range");
    }
    /* no bounds file: the level opens, without bounds */
    unlink(path);
    cr_assert_eq(tb_open(&rs, dir, &s, &e), SOW_OK, "%s", e.msg);
    cr_assert(!tb_level_has_bounds(s, 5));
    cr_assert(tb_level_has_bounds(s, 4) && tb_level_has_bounds(s, 6));
    sow_position p;
    random_pos(&rs, 5, &p);
    int lo, hi, v;
    cr_assert(!tb_probe_bounds(s, &p, &lo, &hi, &v));
    cr_assert(tb_probe(s, &p, &v));
    /* and an analysis of a position there is the exact solver's (whose
     * source is "tables" too when they hold the position: it searched) */
    struct analyse_opts ao = {.threads = 1, .seconds = 30, .tb = s, .level_budget = -1};
    struct analysis a;
    cr_assert_eq(analyse_position(&rs, &p, &ao, &a, &e), SOW_OK, "%s", e.msg);
    cr_assert(a.exact && a.value == v);
    tb_close(s);
    /* a level file whose values are not the level's: a build for its
     * bounds says so, naming it */
    int8_t *v5 = malloc(E);
    memcpy(v5, lv + TB_HEADER_SIZE, E);
    v5[0] = (int8_t)(v5[0] == 0 ? 1 : 0);
    cr_assert_eq(tb_file_write(dir, &rs, 5, v5, E, &e), SOW_OK, "%s", e.msg);
    struct tb_build_opts o = {.threads = 1, .bounds = true};
    cr_assert_eq(tb_build(&rs, dir, 6, &o, &e), SOW_E_INPUT);
    cr_assert(strstr(e.msg, lpath) && strstr(e.msg, "values differ"), "%s", e.msg);
    free(v5);
    free(lohi);
    free(good);
    free(bad);
    free(lv);
    free(ob);
    rmtree(dir);
}

/* Compressed levels (sow tables compress) keep their bounds files: the
 * raw values' checksum is unchanged, and the answers are the same. */
Test(files, compressed_levels_keep_bounds)
{
    struct ruleset rs = rules("oware", 6);
    char dir[64];
    struct sow_error e;
    tmpdir(dir);
    int top = 7;
    build(&rs, dir, top, true, TB_BUILDER_AUTO);
    struct tb_set *raw, *z;
    cr_assert_eq(tb_open(&rs, dir, &raw, &e), SOW_OK, "%s", e.msg);
    struct analysis want[40];
    sow_position ps[40];
    struct analyse_opts ao = {.threads = 1, .seconds = 30, .tb = raw, .level_budget = -1};
    for (int i = 0; i < 40; i++) {
        random_pos(&rs, top - i % 2, &ps[i]);
        cr_assert_eq(analyse_position(&rs, &ps[i], &ao, &want[i], &e), SOW_OK, "%s", e.msg);
        cr_assert_str_eq(want[i].source, "tables");
    }
    tb_close(raw);
    for (int n = 0; n <= top; n++) {
        uint64_t r, st;
        cr_assert_eq(tb_compress_level(&rs, dir, n, &(struct tbz_write_opts){.threads = 1}, &r, &st, NULL, &e), SOW_OK, "%s", e.msg);
    }
    cr_assert_eq(tb_open(&rs, dir, &z, &e), SOW_OK, "%s", e.msg);
    cr_assert_gt(tb_set_compressed_bytes(z), 0);
    ao.tb = z;
    for (int n = 0; n <= top; n++)
        cr_assert(tb_level_has_bounds(z, n));
    for (int i = 0; i < 40; i++) {
        struct analysis a;
        cr_assert_eq(analyse_position(&rs, &ps[i], &ao, &a, &e), SOW_OK, "%s", e.msg);
        cr_assert_str_eq(a.source, "tables");
        cr_assert_eq(a.value, want[i].value);
        cr_assert_eq(a.ml.n, want[i].ml.n);
        for (int k = 0; k < a.ml.n; k++)
            cr_assert_eq(a.vals[k], want[i].vals[k]);
        cr_assert_eq(a.pv_len, want[i].pv_len);
    }
    tb_close(z);
    rmtree(dir);
}
