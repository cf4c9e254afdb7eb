/* Shared helpers of the libFuzzer targets (tests/fuzz/README.md).
 *
 * Every target checks invariants and calls fuzz_fail() when one breaks:
 * that prints what broke and aborts, so libFuzzer saves the input as a
 * crash-* file, exactly as for a sanitizer report. */
#ifndef SOW_FUZZ_COMMON_H
#define SOW_FUZZ_COMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sow/position.h"
#include "sow/rules.h"
#include "sow/status.h"

static void fuzz_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void fuzz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz invariant broken: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* The rule set a selector byte names (all eight families). */
static inline const char *fuzz_rules_name(uint8_t b)
{
    static const char *const names[] = {"oware", "awari", "jodu", "jodu-ibadan",
                                        "jodu-starve", "odu", "jerin", "darra"};
    return names[b % 8];
}

/* Exact endless-relay detection costs time in proportion to the relay's
 * cycle, which is seconds for some relay positions of 60+ seeds (jodu
 * 2,1,4,2,4,0/60,1,6,1,0,1/A: 3 s).  Real games hold at most 48 seeds
 * (2x6x4), so the targets generate moves of relay positions only up to this
 * many seeds; everything else (parsing, the other families) is unbounded. */
#define FUZZ_RELAY_SEEDS 48

/* A NUL-terminated copy of data[0..size) (embedded NULs end the string, as
 * they would on a command line). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* The input as a file for readers that take a path: one memfd, made on the
 * first call, holds data[0..size) at the path returned ("/proc/self/fd/N",
 * mappable; its length is the input's). */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        if ((fd = memfd_create("sow-fuzz-file", 0)) < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    return path;
}

/* A malloc'd copy of data[0..size), to change (a checksum recomputed). */
static inline uint8_t *fuzz_copy(const uint8_t *data, size_t size)
{
    uint8_t *c = malloc(size ? size : 1);
    if (!c)
        abort();
    memcpy(c, data, size);
    return c;
}

/* An error message must be one non-empty line. */
static inline void fuzz_check_message(const char *what, const char *err)
{
    size_t n = strlen(err);
    if (n == 0)
        fuzz_fail("%s: rejected without a message", what);
    if (strchr(err, '\n'))
        fuzz_fail("%s: message spans lines: '%s'", what, err);
}

/* A rejection by the rules or the notation: bad input (SOW_E_INPUT), the
 * status recorded in *e beside a message.  Callers clear *e first
 * (fuzz_clear_error), so what is checked was written by this call. */
static inline void fuzz_clear_error(struct sow_error *e)
{
    e->status = SOW_OK;
    e->msg[0] = 0;
}

static inline void fuzz_check_input(const char *what, enum sow_status st,
                                    const struct sow_error *e)
{
    if (st != SOW_E_INPUT || e->status != st)
        fuzz_fail("%s: rejected with status %d (recorded %d), not bad input (%d)", what, (int)st,
                  (int)e->status, (int)SOW_E_INPUT);
    fuzz_check_message(what, e->msg);
}

/* Seed conservation of one move: board + stores before = after, and the
 * captures the move reports are what the stores gained. */
static inline void fuzz_check_child(const struct ruleset *rs, const sow_position *p,
                                    const struct sow_child *c)
{
    char a[SOW_POS_MAXLEN], b[SOW_POS_MAXLEN];
    struct sow_error e;
    int before = rules_board_seeds(rs, p) + p->store[0] + p->store[1];
    int after = rules_board_seeds(rs, &c->pos) + c->pos.store[0] + c->pos.store[1];
    pos_format(rs, p, a, sizeof a);
    pos_format(rs, &c->pos, b, sizeof b);
    if (before != after)
        fuzz_fail("%s: move %d: %d seeds before, %d after (%s -> %s)", rs->name, c->move, before,
                  after, a, b);
    for (int s = 0; s < 2; s++)
        if (c->pos.store[s] != p->store[s] + c->captured[s])
            fuzz_fail("%s: move %d: store %d went %d -> %d but captured says %d (%s -> %s)",
                      rs->name, c->move, s, p->store[s], c->pos.store[s], c->captured[s], a, b);
    if (c->pos.side != (p->side ^ 1))
        fuzz_fail("%s: move %d did not pass the turn (%s -> %s)", rs->name, c->move, a, b);
    if (rules_validate(rs, &c->pos, &e) != SOW_OK)
        fuzz_fail("%s: move %d gives an invalid position: %s (%s -> %s)", rs->name, c->move,
                  e.msg, a, b);
    if (c->pos.pad_[0] || c->pos.pad_[1])
        fuzz_fail("%s: move %d leaves padding bytes set", rs->name, c->move);
}

/* Everything a move list promises: each move legal when replayed by name
 * (format -> move_parse -> rules_find_move finds that very move), seeds
 * conserved in every move, and a settlement that hands out at most the board. */
static inline void fuzz_check_movelist(const struct ruleset *rs, const sow_position *p,
                                       const struct sow_movelist *ml)
{
    char name[SOW_MOVE_MAXLEN], a[SOW_POS_MAXLEN];
    struct sow_error e;
    pos_format(rs, p, a, sizeof a);
    if (ml->n < 0 || ml->n > SOW_MAX_PITS + 1)
        fuzz_fail("%s: %d moves (%s)", rs->name, ml->n, a);
    if (ml->n == 0) {
        int board = rules_board_seeds(rs, p);
        if (ml->end == SOW_END_NONE)
            fuzz_fail("%s: no moves but no end reason (%s)", rs->name, a);
        if (ml->settle[0] + ml->settle[1] > board)
            fuzz_fail("%s: settlement %d+%d of a board of %d (%s)", rs->name, ml->settle[0],
                      ml->settle[1], board, a);
        /* Only odu/jerin (<= 4 seeds) and darra (nobody captured) let seeds go to nobody. */
        if (ml->settle[0] + ml->settle[1] != board && ml->end != SOW_END_FEW_SEEDS)
            fuzz_fail("%s: settlement %d+%d leaves seeds of %d unowned (%s, %s)", rs->name,
                      ml->settle[0], ml->settle[1], board, rules_end_name(ml->end), a);
        return;
    }
    if (ml->end != SOW_END_NONE)
        fuzz_fail("%s: %d moves and an end reason (%s)", rs->name, ml->n, a);
    for (int i = 0; i < ml->n; i++) {
        const struct sow_child *c = &ml->c[i];
        fuzz_check_child(rs, p, c);
        for (int j = 0; j < i; j++)
            if (ml->c[j].move == c->move)
                fuzz_fail("%s: move %d listed twice (%s)", rs->name, c->move, a);
        move_format(rs, p->side, c->move, name, sizeof name);
        sow_move m;
        if (move_parse(rs, p, name, &m, &e) != SOW_OK)
            fuzz_fail("%s: generated move '%s' does not parse: %s (%s)", rs->name, name, e.msg,
                      a);
        if (m != c->move)
            fuzz_fail("%s: '%s' parses to %d, generated as %d (%s)", rs->name, name, m, c->move, a);
        if (rules_find_move(ml, m) != i)
            fuzz_fail("%s: '%s' found at %d, listed at %d (%s)", rs->name, name,
                      rules_find_move(ml, m), i, a);
    }
}

#endif
