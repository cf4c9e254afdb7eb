/* serve_answer without a socket: the JSON of a few positions, the errors. */
#include <criterion/criterion.h>
#include <string.h>

#include "serve/serve.h"

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
    cr_assert_eq(r.status, 200, "%d %s", r.status, r.json);
    /* sow solve --rules oware --pits 3 --seeds 2 --moves: 6, best 3A; 2A 4, 1A -2 */
    cr_assert(strstr(r.json, "\"value\":6,\"exact\":true,\"source\":\"closure\""), "%s", r.json);
    cr_assert(strstr(r.json, "\"best\":\"3A\",\"moves\":[{\"move\":\"3A\",\"value\":6,"),
              "%s", r.json);
    const char *m2 = strstr(r.json, "{\"move\":\"2A\",\"value\":4");
    const char *m1 = strstr(r.json, "{\"move\":\"1A\",\"value\":-2");
    cr_assert(m2 && m1 && m2 < m1, "best first: %s", r.json);
    cr_assert_eq(strlen(r.json), r.len);
    free(r.json);
}

Test(serve, mainline_ends_where_the_pv_does)
{
    const char *kv[] = {"pos", "2,2,2/2,2,2/A"};
    struct serve_answer r = get("/api/oware/mainline", 1, kv);
    cr_assert_eq(r.status, 200, "%s", r.json);
    cr_assert(strstr(r.json, "\"line\":[{\"move\":\"3A\",\"pos\":"), "%s", r.json);
    /* sow solve's PV of this start ends as a position repeats */
    cr_assert(strstr(r.json, "\"end\":\"repetition\"}"), "%s", r.json);
    free(r.json);
}

Test(serve, game_over_has_no_moves)
{
    const char *kv[] = {"pos", "0,0,0/1,0,0/A"};
    struct serve_answer r = get("/api/oware", 1, kv);
    cr_assert_eq(r.status, 200, "%s", r.json);
    cr_assert(strstr(r.json, "\"over\":true,\"best\":null,\"moves\":[]}"), "%s", r.json);
    free(r.json);
}

Test(serve, errors_are_json_with_their_status)
{
    static const struct {
        const char *path, *k, *v;
        int status;
    } bad[] = {
        {"/api/chess", NULL, NULL, 404},
        {"/", NULL, NULL, 404},
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
                     bad[i].k ? bad[i].k : "", bad[i].v ? bad[i].v : "", r.status, r.json);
        cr_assert(strncmp(r.json, "{\"error\":\"", 10) == 0, "%s", r.json);
        cr_assert(!strchr(r.json, '\n'), "one line: %s", r.json);
        free(r.json);
    }
    char longq[600];
    memset(longq, '1', sizeof longq - 1);
    longq[sizeof longq - 1] = 0;
    const char *kv[] = {"pos", longq};
    struct serve_answer r = get("/api/oware", 1, kv);
    cr_assert_eq(r.status, 414, "%s", r.json);
    free(r.json);
    const struct serve_request post = {"POST", "/api/oware", NULL, 0};
    r = serve_answer(&ctx, &post);
    cr_assert_eq(r.status, 405, "%s", r.json);
    free(r.json);
}

/* Past the budget: the engine's estimate, every move still listed. */
Test(serve, engine_past_the_budget)
{
    struct serve_ctx quick;
    serve_ctx_init(&quick, NULL, 1, 0.2, NULL);
    const struct serve_request rq = {"GET", "/api/oware", NULL, 0};
    struct serve_answer r = serve_answer(&quick, &rq);
    cr_assert_eq(r.status, 200, "%s", r.json);
    cr_assert(strstr(r.json, "\"exact\":false,\"source\":\"engine\",\"depth\":"), "%s", r.json);
    int n = 0;
    for (const char *s = r.json; (s = strstr(s, "{\"move\":")); s++)
        n++;
    cr_assert_eq(n, 6, "%s", r.json);
    free(r.json);
    serve_ctx_free(&quick);
}
