/* serve_answer without a socket: the JSON of a few positions, the errors,
 * the page's files, and the shared levels against the solver. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "serve/serve.h"
#include "serve/www.h"
#include "sow/position.h"

static struct serve_ctx ctx;

static void setup(void)
{
    serve_ctx_init(&ctx, NULL, 1, 2.0, NULL);
}

static void teardown(void)
{
    serve_ctx_free(&ctx);
}

TestSuite(serve, .init = setup, .fini = teardown);

/* GET path with the arguments name=value given as pairs. */
static struct serve_answer get(const char *path, int n, const char *kv[])
{
    struct serve_arg a[8];
    for (int i = 0; i < n; i++)
        a[i] = (struct serve_arg){kv[2 * i], kv[2 * i + 1]};
    const struct serve_request rq = {"GET", path, a, n};
    return serve_answer(&ctx, &rq);
}

Test(serve, start_of_small_oware)
{
    const char *kv[] = {"pits", "3", "seeds", "2"};
    struct serve_answer r = get("/api/oware", 2, kv);
    cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
    /* sow solve --rules oware --pits 3 --seeds 2 --moves: 6, best 3A; 2A 4, 1A -2 */
    cr_assert(strstr(r.body, "\"value\":6,\"exact\":true,\"source\":\"levels\""), "%s", r.body);
    cr_assert_str_eq(r.type, "application/json");
    cr_assert(strstr(r.body, "\"best\":\"3A\",\"moves\":[{\"move\":\"3A\",\"value\":6,"),
              "%s", r.body);
    const char *m2 = strstr(r.body, "{\"move\":\"2A\",\"value\":4");
    const char *m1 = strstr(r.body, "{\"move\":\"1A\",\"value\":-2");
    cr_assert(m2 && m1 && m2 < m1, "best first: %s", r.body);
    cr_assert_eq(strlen(r.body), r.len);
    serve_answer_free(&r);
}

Test(serve, mainline_ends_where_the_pv_does)
{
    const char *kv[] = {"pos", "2,2,2/2,2,2/A"};
    struct serve_answer r = get("/api/oware/mainline", 1, kv);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert(strstr(r.body, "\"line\":[{\"move\":\"3A\",\"pos\":"), "%s", r.body);
    /* sow solve's PV of this start ends as a position repeats */
    cr_assert(strstr(r.body, "\"end\":\"repetition\"}"), "%s", r.body);
    serve_answer_free(&r);
}

Test(serve, game_over_has_no_moves)
{
    const char *kv[] = {"pos", "0,0,0/1,0,0/A"};
    struct serve_answer r = get("/api/oware", 1, kv);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert(strstr(r.body, "\"over\":true,\"best\":null,\"moves\":[]}"), "%s", r.body);
    serve_answer_free(&r);
}

Test(serve, errors_are_json_with_their_status)
{
    static const struct {
        const char *path, *k, *v;
        int status;
    } bad[] = {
        {"/api/chess", NULL, NULL, 404},
        {"/nothing.html", NULL, NULL, 404},
        {"/index.html/", NULL, NULL, 404},
        {"//index.html", NULL, NULL, 404},
        {"/../index.html", NULL, NULL, 404},
        {"/api/rules", "x", "1", 400},
        {"/api/rules/", NULL, NULL, 404},
        {"/api/oware/moves", "pos", "1,1/1,1/Q", 400},
        {"/api/oware/other", NULL, NULL, 404},
        {"/api/../../etc/passwd", NULL, NULL, 404},
        {"/api/oware", "pos", "9,9/9", 400},
        {"/api/oware", "pos", "\"\\\n", 400},
        {"/api/oware", "pits", "0", 400},
        {"/api/oware", "pits", "x", 400},
        {"/api/oware", "seeds", "256", 400},
        {"/api/oware", "bogus", "1", 400},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *kv[] = {bad[i].k, bad[i].v};
        struct serve_answer r = get(bad[i].path, bad[i].k ? 1 : 0, kv);
        cr_assert_eq(r.status, bad[i].status, "%s %s=%s: %d %s", bad[i].path,
                     bad[i].k ? bad[i].k : "", bad[i].v ? bad[i].v : "", r.status, r.body);
        cr_assert(strncmp(r.body, "{\"error\":\"", 10) == 0, "%s", r.body);
        cr_assert(!strchr(r.body, '\n'), "one line: %s", r.body);
        serve_answer_free(&r);
    }
    /* quoted bytes that are not UTF-8 become U+FFFD; UTF-8 stays as it is */
    const char *kv8[] = {"\xff", "1", "pits", "\xe2\x82\xac"};
    struct serve_answer r8 = get("/api/oware", 1, kv8);
    cr_assert_eq(r8.status, 400, "%s", r8.body);
    cr_assert(strstr(r8.body, "'\\ufffd'") && !strchr(r8.body, '\xff'), "%s", r8.body);
    serve_answer_free(&r8);
    r8 = get("/api/oware", 1, kv8 + 2);
    cr_assert_eq(r8.status, 400, "%s", r8.body);
    cr_assert(strstr(r8.body, "'\xe2\x82\xac'"), "%s", r8.body);
    serve_answer_free(&r8);
    char longq[600];
    memset(longq, '1', sizeof longq - 1);
    longq[sizeof longq - 1] = 0;
    const char *kv[] = {"pos", longq};
    struct serve_answer r = get("/api/oware", 1, kv);
    cr_assert_eq(r.status, 414, "%s", r.body);
    serve_answer_free(&r);
    const struct serve_request post = {"POST", "/api/oware", NULL, 0};
    r = serve_answer(&ctx, &post);
    cr_assert_eq(r.status, 405, "%s", r.body);
    serve_answer_free(&r);
}

/* Past the budget: the engine's estimate, every move still listed. */
Test(serve, engine_past_the_budget)
{
    struct serve_ctx quick;
    serve_ctx_init(&quick, NULL, 1, 0.2, NULL);
    const struct serve_request rq = {"GET", "/api/oware", NULL, 0};
    struct serve_answer r = serve_answer(&quick, &rq);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert(strstr(r.body, "\"exact\":false,\"source\":\"engine\",\"depth\":"), "%s", r.body);
    int n = 0;
    for (const char *s = r.body; (s = strstr(s, "{\"move\":")); s++)
        n++;
    cr_assert_eq(n, 6, "%s", r.body);
    serve_answer_free(&r);
    serve_ctx_free(&quick);
}

/* The page's files: compiled in, each with its type; "/" is index.html. */
Test(serve, page_files)
{
    static const struct {
        const char *path, *type, *has;
    } want[] = {
        {"/", "text/html; charset=utf-8", "<script src=\"app.js\""},
        {"/index.html", "text/html; charset=utf-8", "<svg id=\"board\""},
        {"/app.js", "text/javascript; charset=utf-8", "api/rules"},
        {"/ogn.js", "text/javascript; charset=utf-8", "Oware Abapa"},
        {"/board.js", "text/javascript; charset=utf-8", "SowBoard"},
        {"/style.css", "text/css; charset=utf-8", "#board"},
        {"/favicon.svg", "image/svg+xml", "<svg"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *kv[] = {"rules", "oware"}; /* the page's own query is the script's */
        struct serve_answer r = get(want[i].path, 1, kv);
        cr_assert_eq(r.status, 200, "%s: %d", want[i].path, r.status);
        cr_assert(r.is_static, "%s", want[i].path);
        cr_assert_str_eq(r.type, want[i].type, "%s", want[i].path);
        cr_assert(memmem(r.body, r.len, want[i].has, strlen(want[i].has)), "%s", want[i].path);
        serve_answer_free(&r);
    }
    int n = 0;
    for (const struct serve_file *f = serve_www; f->path; f++, n++)
        cr_assert(f->path[0] == '/' && !strchr(f->path + 1, '/'), "%s", f->path);
    cr_assert_eq(n, 6);
}

Test(serve, rules_and_moves)
{
    struct serve_answer r = get("/api/rules", 0, NULL);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert(strstr(r.body, "{\"name\":\"darra\",\"pits\":6,\"seeds\":4,\"relay\":false,"
                             "\"cycle\":\"own-sides\",\"states\":[\"-\",\"A\",\"B\"],\"start\":\"-\"}"),
              "%s", r.body);
    cr_assert(strstr(r.body, "\"states\":[\"-\",\"open\"],\"start\":\"open\""), "%s", r.body);
    serve_answer_free(&r);

    /* sow moves --rules jerin --pits 3 --seeds 2 */
    const char *kv[] = {"pits", "3", "seeds", "2"};
    r = get("/api/jerin/moves", 2, kv);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert_str_eq(r.body,
                     "{\"rules\":\"jerin\",\"pits\":3,\"pos\":\"2,2,2/2,2,2/A/0-0/open\",\"side\":\"A\","
                     "\"over\":false,\"end\":null,\"settle\":null,\"repetition\":[6,6],\"moves\":["
                     "{\"move\":\"1A+2A\",\"pos\":\"1,1,0/3,3,0/B/4-0/-\",\"captured\":[4,0]},"
                     "{\"move\":\"2A+3A\",\"pos\":\"0,1,1/0,3,3/B/4-0/-\",\"captured\":[4,0]}]}");
    serve_answer_free(&r);

    /* a game over, and awari's split of an odd board */
    const char *over[] = {"pos", "0,0,0/1,0,0/A/3-4"};
    r = get("/api/awari/moves", 1, over);
    cr_assert_eq(r.status, 200, "%s", r.body);
    cr_assert(strstr(r.body, "\"over\":true,\"end\":\"player to move has no seeds\","
                             "\"settle\":[0,1],\"repetition\":[0.5,0.5],\"moves\":[]}"),
              "%s", r.body);
    serve_answer_free(&r);
}

/* The shared levels (fast) against the exact solver (slow, obvious): the
 * same value, move values, best move and mainline for every position two
 * moves from a few small starts. */
/* json without its "source":"..." field (the one thing that differs). */
static char *without_source(const char *json)
{
    char *s = strdup(json), *f = strstr(s, "\"source\":\"");
    cr_assert(f, "%s", json);
    char *end = strchr(f + 10, '"');
    cr_assert(end && end[1] == ',', "%s", json);
    memmove(f, end + 2, strlen(end + 2) + 1);
    return s;
}

Test(serve, levels_agree_with_the_solver)
{
    struct serve_ctx slow;
    serve_ctx_init(&slow, NULL, 1, 60.0, NULL);
    slow.levels = 0;
    static const char *const rules[] = {"oware", "awari", "odu", "darra", "jerin", "jodu"};
    int checked = 0;
    for (size_t k = 0; k < sizeof rules / sizeof rules[0]; k++) {
        struct ruleset rs;
        cr_assert_eq(rules_init(&rs, rules[k], 3, 2, NULL), SOW_OK);
        sow_position todo[64];
        int n = 0;
        todo[n++] = rules_start(&rs);
        for (int i = 0; i < n && n < 48; i++) {
            struct sow_movelist ml;
            rules_generate(&rs, &todo[i], &ml);
            for (int j = 0; j < ml.n && n < 48; j++)
                todo[n++] = ml.c[j].pos;
        }
        for (int i = 0; i < n; i++) {
            char pos[SOW_POS_MAXLEN], path[64];
            pos_format(&rs, &todo[i], pos, sizeof pos);
            for (int line = 0; line < 2; line++) {
                snprintf(path, sizeof path, "/api/%s%s", rules[k], line ? "/mainline" : "");
                struct serve_arg a[] = {{"pos", pos}};
                const struct serve_request rq = {"GET", path, a, 1};
                struct serve_answer fast = serve_answer(&ctx, &rq);
                struct serve_answer ref = serve_answer(&slow, &rq);
                cr_assert_eq(fast.status, 200, "%s %s", path, fast.body);
                cr_assert_eq(ref.status, 200, "%s %s", path, ref.body);
                /* jerin's opening is not in the levels: the solver answers it */
                bool open = todo[i].state == SOW_STATE_OPEN;
                cr_assert(strstr(fast.body, open ? "\"source\":\"closure\"" : "\"source\":\"levels\""),
                          "%s", fast.body);
                cr_assert(strstr(ref.body, "\"source\":\"closure\""), "%s", ref.body);
                char *f = without_source(fast.body), *g = without_source(ref.body);
                cr_assert_str_eq(f, g, "%s %s", path, pos);
                free(f);
                free(g);
                serve_answer_free(&fast);
                serve_answer_free(&ref);
                checked++;
            }
        }
    }
    cr_assert_geq(checked, 200);
    serve_ctx_free(&slow);
}
