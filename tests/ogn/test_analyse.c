/* analyse_position + analyse_json (sow/analyse.h, what sow annotate and
 * Python's sow.analyse use) against sow serve's own answer to GET /api/RULES
 * (serve_answer, without a socket): byte for byte where the values are
 * exact, the same fields where they are the engine's. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"
#include "sow/analyse.h"
#include "sow/position.h"

static char *via_serve(const char *rules, const char *pos, double seconds)
{
    struct serve_ctx ctx;
    serve_ctx_init(&ctx, NULL, 1, seconds, NULL);
    struct serve_arg a[1] = {{"pos", pos}};
    char path[64];
    snprintf(path, sizeof path, "/api/%s", rules);
    const struct serve_request rq = {"GET", path, a, 1};
    struct serve_answer r = serve_answer(&ctx, &rq);
    serve_ctx_free(&ctx);
    cr_assert_eq(r.status, 200, "%s %s: %d %s", rules, pos, r.status, r.body);
    return r.body;
}

static char *via_analyse(const char *rules, const char *pos, double seconds)
{
    struct ruleset rs;
    int pits;
    sow_position p;
    struct sow_error e;
    cr_assert_eq(pos_token_pits(pos, &pits, &e), SOW_OK);
    cr_assert_eq(rules_init(&rs, rules, pits, 4, &e), SOW_OK, "%s", e.msg);
    cr_assert_eq(pos_parse(&rs, pos, &p, &e), SOW_OK, "%s", e.msg);
    struct analysis *a = malloc(sizeof *a);
    struct analyse_opts o = {.threads = 1, .seconds = seconds};
    cr_assert_eq(analyse_position(&rs, &p, &o, a, &e), SOW_OK, "%s", e.msg);
    char *s = analyse_json(&rs, &p, a);
    cr_assert(s);
    free(a);
    return s;
}

Test(analyse, exact_answers_are_serves)
{
    static const char *const cases[][2] = {
        {"oware", "2,2,2/2,2,2/A"},
        {"oware", "1,1,0,2,0,1/1,0,0,1,1,0/A"},
        {"oware", "0,0,0/1,0,0/A"}, /* over: no moves */
        {"awari", "0,0,1,2,0,3/1,0,0,2,1,0/A"},
        {"jodu", "1,0,2/0,3,1/B"},
        {"darra", "2,0,1/0,3,1/B/5-4/A"},
        {"jerin", "1,1,1/1,1,1/A/0-0/open"},
        {"jodu-starve", "0,0,0/1,2,0/A"}, /* a pass */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *a = via_analyse(cases[i][0], cases[i][1], 20.0);
        char *s = via_serve(cases[i][0], cases[i][1], 20.0);
        cr_expect_str_eq(a, s, "%s %s", cases[i][0], cases[i][1]);
        cr_expect(strstr(a, "\"exact\":true"), "%s", a);
        free(a);
        free(s);
    }
}

Test(analyse, engine_answers_have_serves_fields)
{
    const char *start = "4,4,4,4,4,4/4,4,4,4,4,4/A";
    char *a = via_analyse("oware", start, 0.2), *s = via_serve("oware", start, 0.2);
    static const char *const head[] = {"{\"rules\":\"oware\",\"pits\":6,\"pos\":",
                                       "\"exact\":false,\"source\":\"engine\",\"depth\":",
                                       ",\"over\":false,\"best\":\"", ",\"moves\":[{\"move\":\""};
    for (size_t k = 0; k < sizeof head / sizeof head[0]; k++) {
        cr_expect(strstr(a, head[k]), "%s not in %s", head[k], a);
        cr_expect(strstr(s, head[k]), "%s not in %s", head[k], s);
    }
    free(a);
    free(s);
}
