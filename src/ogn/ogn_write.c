/* OGN game records (ogn.h, docs/ogn.md "Writing"): a game written back as
 * text, as Aualé writes it: the tags, then the move text in lines under 80
 * columns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ogn/ogn_internal.h"
#include "sow/position.h"

struct wr {
    char *s;
    size_t len, cap;
    size_t line0; /* where the current move-text line starts */
    bool oom;
};

static void put(struct wr *w, const char *s, size_t n)
{
    if (w->oom)
        return;
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 1024;
        while (cap < w->len + n + 1)
            cap *= 2;
        char *a = realloc(w->s, cap);
        if (!a) {
            w->oom = true;
            return;
        }
        w->s = a;
        w->cap = cap;
    }
    memcpy(w->s + w->len, s, n);
    w->len += n;
    w->s[w->len] = 0;
}

static void puts_(struct wr *w, const char *s)
{
    put(w, s, strlen(s));
}

/* One move-text token: on this line while the line stays under 80 columns
 * (Aualé's rule), else on the next. */
static void token(struct wr *w, const char *t, size_t n)
{
    size_t cur = w->len - w->line0;
    if (cur > 0 && cur + 1 + n < 80) {
        put(w, " ", 1);
    } else if (cur > 0) {
        put(w, "\n", 1);
        w->line0 = w->len;
    }
    put(w, t, n);
}

static void tokens_of_note(struct wr *w, const char *text)
{
    token(w, "{", 1);
    const char *s = text;
    while (*s) {
        const char *sp = strchr(s, ' ');
        size_t n = sp ? (size_t)(sp - s) : strlen(s);
        token(w, s, n);
        s += n;
        if (*s == ' ')
            s++;
    }
    token(w, "}", 1);
}

char *ogn_format(const struct ogn_game *g, size_t *len)
{
    struct wr w = {0};
    for (int i = 0; i < g->ntags; i++) {
        puts_(&w, "[");
        puts_(&w, g->tags[i].name);
        puts_(&w, " \"");
        for (const char *c = g->tags[i].value; *c; c++) {
            if (*c == '"' || *c == '\\')
                put(&w, "\\", 1);
            put(&w, c, 1);
        }
        puts_(&w, "\"]\n");
    }
    bool text = g->nply > 0 || g->nnotes > 0 || strcmp(g->result, "*") != 0;
    if (text) {
        if (g->ntags)
            puts_(&w, "\n");
        w.line0 = w.len;
        int k = 0;
        for (; k < g->nnotes && g->notes[k].ply == 0; k++)
            tokens_of_note(&w, g->notes[k].text);
        for (int i = 0; i < g->nply; i++) {
            char t[64], mv[SOW_MOVE_MAXLEN];
            if (i % 2 == 0) {
                snprintf(t, sizeof t, "%d.", i / 2 + 1);
                token(&w, t, strlen(t));
            }
            ogn_move_name(g, i, mv, sizeof mv);
            char cap[24] = "";
            if (g->ply[i].gain2 > 0) {
                cap[0] = '+';
                ogn_fmt_half(cap + 1, sizeof cap - 1, g->ply[i].gain2);
            }
            snprintf(t, sizeof t, "%s%s%s", mv, cap, g->ply[i].mark);
            token(&w, t, strlen(t));
            for (; k < g->nnotes && g->notes[k].ply == i + 1; k++)
                tokens_of_note(&w, g->notes[k].text);
        }
        for (; k < g->nnotes; k++) /* past the moves: kept with the last */
            tokens_of_note(&w, g->notes[k].text);
        if (strcmp(g->result, "*") != 0)
            token(&w, g->result, strlen(g->result));
        puts_(&w, "\n");
    }
    if (!w.s && !w.oom)
        puts_(&w, "");
    if (w.oom) {
        free(w.s);
        return NULL;
    }
    if (len)
        *len = w.len;
    return w.s;
}
