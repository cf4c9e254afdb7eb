#!/usr/bin/env python3
"""Write the C source of the extension module sow._sow (cffi, API mode).

    sow_cffi.py OUT.c

meson (python/meson.build) compiles OUT.c with python/sowpy.c and links the
shared libsow.  The declarations below are checked by the C compiler against
python/sowpy.h: `...;` lets cffi take the layouts of the library's own
structs from the real headers instead of a copy here.
"""
import sys

import cffi

CDEF = """
typedef struct sow_position { uint16_t store[2]; uint8_t side; uint8_t state; ...; } sow_position;
int sowpy_position_hole(const sow_position *p, int i);

#define SOWPY_INTERRUPTED ...
#define SOWPY_MOVE_LEN ...
#define SOWPY_POS_LEN ...
#define SOWPY_MAX_MOVES ...
#define SOWPY_MAX_PV ...

struct sowpy_rules;
struct sowpy_tables;

const char *sowpy_version(void);
const char *sowpy_commit(void);
const char *sowpy_rule_name(int i);

struct sowpy_rules *sowpy_rules_new(const char *name, int pits, int seeds, char *err, int errlen);
void sowpy_rules_free(struct sowpy_rules *r);
const char *sowpy_rules_name(const struct sowpy_rules *r);
int sowpy_rules_pits(const struct sowpy_rules *r);
int sowpy_rules_seeds(const struct sowpy_rules *r);

int sowpy_token_pits(const char *tok, char *err, int errlen);
int sowpy_parse(const struct sowpy_rules *r, const char *tok, sow_position *out, char *err,
                int errlen);
void sowpy_start(const struct sowpy_rules *r, sow_position *out);
void sowpy_format(const struct sowpy_rules *r, const sow_position *p, char *buf, int len);
void sowpy_draw(const struct sowpy_rules *r, const sow_position *p, char *buf, int len);

struct sowpy_moves {
    int n;
    char name[...][...];
    sow_position pos[...];
    int captured[...][2];
    int end;
    const char *end_name;
    int settle[2];
    ...;
};
void sowpy_moves(const struct sowpy_rules *r, const sow_position *p, struct sowpy_moves *out);

struct sowpy_tables *sowpy_tables_open(const struct sowpy_rules *r, const char *dir, char *err,
                                       int errlen);
void sowpy_tables_free(struct sowpy_tables *t);
int sowpy_tables_max_level(const struct sowpy_tables *t);
int sowpy_tables_probe(const struct sowpy_tables *t, const sow_position *p, int *value);

struct sowpy_solve_opts {
    int threads;
    unsigned hash_mb;
    int depth;
    double seconds;
    long long levels;
    int moves;
    const struct sowpy_tables *tables;
    ...;
};
struct sowpy_result {
    int over, exact, value, lower, upper, depth;
    char best[...];
    int pv_len, pv_repeats;
    char pv[...][...];
    int nmoves;
    char move[...][...];
    int move_value[...];
    uint64_t nodes, expanded, tb_hits;
    double seconds;
    ...;
};
int sowpy_solve(const struct sowpy_rules *r, const sow_position *p,
                const struct sowpy_solve_opts *o, struct sowpy_result *res, char *err,
                int errlen);
int sowpy_move_parse(const struct sowpy_rules *r, const sow_position *p, const char *s,
                     char *out, int outlen, char *err, int errlen);
int sowpy_analyse(const struct sowpy_rules *r, const sow_position *p, double seconds,
                  int threads, const struct sowpy_tables *tables, char **json, char *err,
                  int errlen);
void sowpy_free(void *ptr);
"""

SOURCE = """
#include "sowpy.h"
/* Hole i of the absolute board (A's holes first): the board's lanes are a
 * union the cffi declarations leave out. */
static int sowpy_position_hole(const sow_position *p, int i)
{
    return (i >= 0 && i < SOW_MAX_HOLES) ? p->board.h[i] : -1;
}
"""


def main():
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source("sow._sow", SOURCE)
    ffi.emit_c_code(sys.argv[1])


if __name__ == "__main__":
    main()
