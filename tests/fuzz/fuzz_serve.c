/* libFuzzer target: sow serve's answers (serve_answer) to arbitrary
 * requests, as the HTTP layer decodes them.
 *
 * Input, one item a line: the method, the path, then up to 8 query
 * parameters "name=value" ("name" alone: no value).  Invariants:
 *  - the status is one the API documents (200, 400, 404, 405, 414, 503), never
 *    500 (the search failed, or memory ran out with a small request);
 *  - every JSON answer is one valid JSON text (RFC 8259: UTF-8, strings
 *    escaped, numbers well formed) and an object, of exactly one member
 *    "error" (a string) unless the status is 200;
 *  - the page's files are answered only with 200.
 * The analysis runs with a 2 ms budget, a 1 MiB hash and shared levels of
 * 16384 positions a set, so that a run tries many requests; relay positions
 * of more than FUZZ_RELAY_SEEDS seeds are skipped (fuzz_common.h). */
#include "fuzz_common.h"
#include "serve/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- a strict JSON checker: each returns the end of what it read, or NULL */

struct js {
    const char *s, *end;
    int depth;
    bool object;      /* the top value is an object */
    int members;      /* the top object's members */
    bool only_error;  /* its one member is "error", a string */
};

static const char *ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* One UTF-8 character at p (RFC 3629: no overlong forms, no surrogates,
 * at most U+10FFFF); its length, or 0 if malformed. */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0], n, min, v;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, min = 0x80, v = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, min = 0x800, v = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, min = 0x10000, v = c & 0x07;
    else
        return 0;
    if ((size_t)(end - p) < n)
        return 0;
    for (unsigned i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    return (int)n;
}

static const char *string(const char *p, const char *end)
{
    if (p >= end || *p != '"')
        return NULL;
    for (p++; p < end;) {
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c < 0x20)
            return NULL;
        if (c == '\\') {
            if (++p >= end)
                return NULL;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (p + i >= end || !strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
                        return NULL;
                p += 5;
            } else if (strchr("\"\\/bfnrt", *p) && *p) {
                p++;
            } else {
                return NULL;
            }
            continue;
        }
        int n = utf8_len((const unsigned char *)p, (const unsigned char *)end);
        if (!n)
            return NULL;
        p += n;
    }
    return NULL;
}

static const char *number(const char *p, const char *end)
{
#define DIGITS(q) ((q) < end && *(q) >= '0' && *(q) <= '9')
    if (p < end && *p == '-')
        p++;
    if (!DIGITS(p))
        return NULL;
    if (*p == '0')
        p++;
    else
        while (DIGITS(p))
            p++;
    if (p < end && *p == '.') {
        if (!DIGITS(++p))
            return NULL;
        while (DIGITS(p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (!DIGITS(p))
            return NULL;
        while (DIGITS(p))
            p++;
    }
    return p;
#undef DIGITS
}

static const char *value(struct js *j, const char *p);

static const char *container(struct js *j, const char *p, char close)
{
    bool top = j->depth == 0, obj = close == '}';
    if (++j->depth > 64)
        return NULL;
    p = ws(p + 1, j->end);
    if (p < j->end && *p == close) {
        j->depth--;
        return p + 1;
    }
    for (;;) {
        if (obj) {
            const char *k = p;
            if (!(p = string(p, j->end)))
                return NULL;
            p = ws(p, j->end);
            if (p >= j->end || *p++ != ':')
                return NULL;
            p = ws(p, j->end);
            if (top) {
                j->members++;
                j->only_error = j->members == 1 && strncmp(k, "\"error\":", 8) == 0 && *p == '"';
            }
        }
        if (!(p = value(j, p)))
            return NULL;
        p = ws(p, j->end);
        if (p < j->end && *p == ',') {
            p = ws(p + 1, j->end);
            continue;
        }
        if (p < j->end && *p == close) {
            j->depth--;
            return p + 1;
        }
        return NULL;
    }
}

static const char *value(struct js *j, const char *p)
{
    const char *end = j->end;
    if (p >= end)
        return NULL;
    switch (*p) {
    case '{': return container(j, p, '}');
    case '[': return container(j, p, ']');
    case '"': return string(p, end);
    case 't': return end - p >= 4 && !memcmp(p, "true", 4) ? p + 4 : NULL;
    case 'f': return end - p >= 5 && !memcmp(p, "false", 5) ? p + 5 : NULL;
    case 'n': return end - p >= 4 && !memcmp(p, "null", 4) ? p + 4 : NULL;
    default: return number(p, end);
    }
}

static void check_json(const char *what, const struct serve_answer *a)
{
    if (!a->body)
        fuzz_fail("%s: %d without a body", what, a->status);
    struct js j = {a->body, a->body + a->len, 0, false, 0, false};
    const char *p = ws(a->body, j.end);
    j.object = p < j.end && *p == '{';
    const char *q = value(&j, p);
    if (!q || ws(q, j.end) != j.end)
        fuzz_fail("%s: %d: not one JSON text at byte %td: %.*s", what, a->status,
                  q ? ws(q, j.end) - a->body : (ptrdiff_t)-1, (int)(a->len > 300 ? 300 : a->len),
                  a->body);
    if (!j.object)
        fuzz_fail("%s: %d: not an object: %.100s", what, a->status, a->body);
    if (a->status != 200 && (j.members != 1 || !j.only_error))
        fuzz_fail("%s: %d: not {\"error\": \"...\"}: %.200s", what, a->status, a->body);
    if (strlen(a->body) != a->len)
        fuzz_fail("%s: length %zu, text of %zu", what, a->len, strlen(a->body));
}

/* ---- the relay cap ---- */

static bool relay_too_big(const char *path, const struct serve_arg *a, int n)
{
    const char *name = strncmp(path, "/api/", 5) == 0 ? path + 5 : NULL;
    if (!name)
        return false;
    char rules[40];
    size_t k = strcspn(name, "/");
    if (k >= sizeof rules)
        return false;
    memcpy(rules, name, k);
    rules[k] = 0;
    struct ruleset rs;
    struct sow_error e;
    if (rules_init(&rs, rules, 0, -1, &e) != SOW_OK || !rs.relay)
        return false;
    long pits = 6, seeds = 4;
    for (int i = 0; i < n; i++) {
        const char *v = a[i].value ? a[i].value : "";
        if (!strcmp(a[i].name, "pits"))
            pits = strtol(v, NULL, 10);
        else if (!strcmp(a[i].name, "seeds"))
            seeds = strtol(v, NULL, 10);
        else if (!strcmp(a[i].name, "pos")) {
            int tp;
            sow_position p;
            if (strlen(v) < SOW_POS_MAXLEN && pos_token_pits(v, &tp, &e) == SOW_OK &&
                rules_init(&rs, rules, tp, -1, &e) == SOW_OK && pos_parse(&rs, v, &p, &e) == SOW_OK &&
                rules_board_seeds(&rs, &p) > FUZZ_RELAY_SEEDS)
                return true;
        }
    }
    return pits > 0 && seeds > 0 && pits <= 1000 && seeds <= 1000 &&
           2 * pits * seeds > FUZZ_RELAY_SEEDS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct serve_ctx ctx;
    static bool init;
    if (!init) {
        serve_ctx_init(&ctx, NULL, 1, 0.002, NULL);
        ctx.hash_mb = 1;
        ctx.memory = 64.0 * (1 << 20);
        ctx.levels = 1 << 14; /* shared levels, small: 64 sets stay small */
        init = true;
    }
    char *text = fuzz_cstr(data, size);
    char *line[10] = {0};
    int nl = 0;
    for (char *s = text, *save = NULL, *t; nl < 10 && (t = strtok_r(s, "\n", &save)); s = NULL)
        line[nl++] = t;
    struct serve_arg a[8];
    int n = 0;
    for (int i = 2; i < nl; i++) {
        char *eq = strchr(line[i], '=');
        if (eq)
            *eq = 0;
        a[n++] = (struct serve_arg){line[i], eq ? eq + 1 : NULL};
    }
    const struct serve_request rq = {line[0] ? line[0] : "GET", line[1] ? line[1] : "/", a, n};
    if (relay_too_big(rq.path, a, n)) {
        free(text);
        return 0;
    }
    struct serve_answer ans = serve_answer(&ctx, &rq);
    char what[200];
    snprintf(what, sizeof what, "%.10s %.100s (%d parameters)", rq.method, rq.path, n);
    if (ans.status != 200 && ans.status != 400 && ans.status != 404 && ans.status != 405 &&
        ans.status != 414 && ans.status != 503)
        fuzz_fail("%s: status %d: %.200s", what, ans.status, ans.body ? ans.body : "(none)");
    if (!ans.type)
        fuzz_fail("%s: no content type", what);
    if (ans.is_static) {
        if (ans.status != 200 || !ans.body || !ans.len)
            fuzz_fail("%s: a page file with status %d", what, ans.status);
    } else if (strcmp(ans.type, "application/json") == 0) {
        check_json(what, &ans);
    } else {
        fuzz_fail("%s: a %s answer not of the page", what, ans.type);
    }
    serve_answer_free(&ans);
    free(text);
    return 0;
}
