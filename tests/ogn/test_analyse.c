/* analyse_position + analyse_json (sow/analyse.h, what sow annotate and
 * Python's sow.analyse use) against sow serve's own answer to GET /api/RULES
 * (serve_answer, without a socket) given the same sources: byte for byte
 * where the values are exact (by the solver, from shared levels, from a
 * solution file), the same fields where they are the engine's. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyse/analyse_internal.h"
#include "serve/serve.h"
#include "sow/analyse.h"
#include "sow/position.h"

/* serve_answer to GET /api/RULES[/mainline]?pos=POS on ctx. */
static char *via_serve(struct serve_ctx *ctx, const char *rules, const char *pos, bool line)
{
    struct serve_arg a[1] = {{"pos", pos}};
    char path[64];
    snprintf(path, sizeof path, "/api/%s%s", rules, line ? "/mainline" : "");
    const struct serve_request rq = {"GET", path, a, 1};
    struct serve_answer r = serve_answer(ctx, &rq);
    cr_assert_eq(r.status, 200, "%s %s: %d %s", path, pos, r.status, r.body);
    cr_assert_eq(strlen(r.body), r.len);
    return r.body;
}

/* A server's context without shared levels (ctx.levels 0) or with the
 * default, and the time budget. */
static void serve_init(struct serve_ctx *ctx, bool levels, double seconds)
{
    serve_ctx_init(ctx, NULL, 1, seconds, NULL);
    if (!levels)
        ctx->levels = 0;
}

static void parse(const char *rules, const char *pos, struct ruleset *rs, sow_position *p)
{
    int pits;
    struct sow_error e;
    cr_assert_eq(pos_token_pits(pos, &pits, &e), SOW_OK);
    cr_assert_eq(rules_init(rs, rules, pits, 4, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(pos_parse(rs, pos, p, &e), SOW_OK, "%s", e.msg);
}

/* analyse_position with o, written by analyse_json (or the mainline's). */
static char *via_analyse(const char *rules, const char *pos, const struct analyse_opts *o,
                         bool line)
{
    struct ruleset rs;
    sow_position p;
    struct sow_error e;
    parse(rules, pos, &rs, &p);
    struct analysis *a = malloc(sizeof *a);
    cr_assert(a);
    cr_assert_eq(analyse_position(&rs, &p, o, a, &e), SOW_OK, "%s", e.msg);
    char *s = line ? analyse_json_line(&rs, &p, a) : analyse_json(&rs, &p, a);
    cr_assert(s);
    free(a);
    return s;
}

static void expect_same(const char *a, const char *s, const char *source, const char *what)
{
    cr_expect_str_eq(a, s, "%s", what);
    char want[64];
    snprintf(want, sizeof want, "\"exact\":true,\"source\":\"%s\"", source);
    cr_expect(strstr(a, want), "%s: %s not in %s", what, want, a);
}

static const char *const cases[][2] = {
    {"oware", "2,2,2/2,2,2/A"},
    {"oware", "1,1,0,2,0,1/1,0,0,1,1,0/A"},
    {"oware", "0,0,0/1,0,0/A"}, /* over: no moves */
    {"awari", "0,0,1,2,0,3/1,0,0,2,1,0/A"},
    {"jodu", "1,0,2/0,3,1/B"},
    {"darra", "2,0,1/0,3,1/B/5-4/A"},
    {"jerin", "1,1,1/1,1,1/A/0-0/open"}, /* not in the levels */
    {"jodu-starve", "0,0,0/1,2,0/A"},    /* a pass */
};
#define NCASES (sizeof cases / sizeof cases[0])

/* The exact solver: no shared levels, no solution file on either side. */
Test(analyse, solver_answers_are_serves)
{
    struct serve_ctx ctx;
    serve_init(&ctx, false, 20.0);
    const struct analyse_opts o = {.threads = 1, .seconds = 20.0};
    for (size_t i = 0; i < NCASES; i++)
        for (int line = 0; line < 2; line++) {
            char *a = via_analyse(cases[i][0], cases[i][1], &o, line);
            char *s = via_serve(&ctx, cases[i][0], cases[i][1], line);
            expect_same(a, s, "closure", cases[i][1]);
            free(a);
            free(s);
        }
    serve_ctx_free(&ctx);
}

/* Shared levels: serve's own (its default) and a caller's analyse_levels
 * give the same bytes (their values against the solver's: test_serve.c). */
Test(analyse, levels_answers_are_serves)
{
    struct serve_ctx ctx;
    serve_init(&ctx, true, 20.0);
    for (size_t i = 0; i < NCASES; i++) {
        struct ruleset rs;
        sow_position p;
        parse(cases[i][0], cases[i][1], &rs, &p);
        struct analyse_levels *lv = analyse_levels_new(&rs, SERVE_LEVELS_DEFAULT);
        cr_assert(lv);
        const struct analyse_opts o = {.threads = 1, .seconds = 20.0, .levels = lv};
        const char *source = p.state == SOW_STATE_OPEN ? "closure" : "levels";
        for (int line = 0; line < 2; line++) {
            char *a = via_analyse(cases[i][0], cases[i][1], &o, line);
            char *s = via_serve(&ctx, cases[i][0], cases[i][1], line);
            expect_same(a, s, source, cases[i][1]);
            free(a);
            free(s);
        }
        analyse_levels_free(lv);
    }
    serve_ctx_free(&ctx);
}

/* Levels of another rule set or size than the position's are not used. */
Test(analyse, levels_of_other_rules_are_not_used)
{
    struct ruleset other;
    cr_assert_eq(rules_init(&other, "awari", 3, 2, NULL), SOW_OK);
    struct analyse_levels *lv = analyse_levels_new(&other, SERVE_LEVELS_DEFAULT);
    const struct analyse_opts o = {.threads = 1, .seconds = 20.0, .levels = lv};
    char *a = via_analyse("oware", "2,2,2/2,2,2/A", &o, false);
    cr_expect(strstr(a, "\"source\":\"closure\""), "%s", a);
    free(a);
    a = via_analyse("awari", "2,2,2,2/2,2,2,2/A", &o, false);
    cr_expect(strstr(a, "\"source\":\"closure\""), "%s", a);
    free(a);
    a = via_analyse("awari", "2,2,2/2,2,2/A", &o, false);
    cr_expect(strstr(a, "\"source\":\"levels\""), "%s", a);
    free(a);
    analyse_levels_free(lv);
}

/* A solution file: given to serve (--solution) and to analyse_position, the
 * same bytes for positions it holds; the solver for one it does not. */
Test(analyse, solution_answers_are_serves)
{
    struct ruleset rs;
    cr_assert_eq(rules_init(&rs, "odu", 3, 2, NULL), SOW_OK);
    struct sow_error e = {0};
    struct search_opts so = {.threads = 1, .hash_mb = 1, .level_budget = -1};
    struct search_ctx *sc;
    cr_assert_eq(search_new(&rs, &so, &sc, &e), SOW_OK, "%s", e.msg);
    sow_position root = rules_start(&rs);
    struct search_result res;
    cr_assert_eq(search_solve(sc, &root, &res), SOW_OK);
    char path[128];
    snprintf(path, sizeof path, "/tmp/sow-test-analyse-%d.sowsol", (int)getpid());
    cr_assert_eq(search_save(sc, &root, path, &e), SOW_OK, "%s", e.msg);
    search_free(sc);
    struct sol *f;
    cr_assert_eq(search_solution_open(&rs, path, &f, &e), SOW_OK, "%s", e.msg);

    struct serve_ctx ctx;
    serve_init(&ctx, false, 20.0);
    cr_assert_eq(serve_ctx_add_solution(&ctx, path, &e), SOW_OK, "%s", e.msg);
    const struct sol *sols[] = {f};
    const struct analyse_opts o = {.threads = 1, .seconds = 20.0, .solutions = sols,
                                   .nsolutions = 1};
    struct sow_movelist ml;
    rules_generate(&rs, &root, &ml);
    cr_assert_geq(ml.n, 2);
    const sow_position held[] = {root, ml.c[0].pos, ml.c[ml.n - 1].pos};
    for (size_t i = 0; i < sizeof held / sizeof held[0]; i++) {
        char pos[SOW_POS_MAXLEN];
        pos_format(&rs, &held[i], pos, sizeof pos);
        for (int line = 0; line < 2; line++) {
            char *a = via_analyse("odu", pos, &o, line);
            char *s = via_serve(&ctx, "odu", pos, line);
            expect_same(a, s, "solution", pos);
            free(a);
            free(s);
        }
    }
    /* more seeds than the file's start: not in it */
    char *a = via_analyse("odu", "3,3,3/3,3,3/A", &o, false);
    char *s = via_serve(&ctx, "odu", "3,3,3/3,3,3/A", false);
    expect_same(a, s, "closure", "3,3,3/3,3,3/A");
    free(a);
    free(s);
    serve_ctx_free(&ctx);
    search_solution_close(f);
    unlink(path);
}

Test(analyse, engine_answers_have_serves_fields)
{
    const char *start = "4,4,4,4,4,4/4,4,4,4,4,4/A";
    struct serve_ctx ctx;
    serve_init(&ctx, true, 0.2);
    const struct analyse_opts o = {.threads = 1, .seconds = 0.2};
    char *a = via_analyse("oware", start, &o, false), *s = via_serve(&ctx, "oware", start, false);
    static const char *const head[] = {"{\"rules\":\"oware\",\"pits\":6,\"pos\":",
                                       "\"exact\":false,\"source\":\"engine\",\"depth\":",
                                       ",\"over\":false,\"best\":\"", ",\"moves\":[{\"move\":\""};
    for (size_t k = 0; k < sizeof head / sizeof head[0]; k++) {
        cr_expect(strstr(a, head[k]), "%s not in %s", head[k], a);
        cr_expect(strstr(s, head[k]), "%s not in %s", head[k], s);
    }
    free(a);
    free(s);
    serve_ctx_free(&ctx);
}
