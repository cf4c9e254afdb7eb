/* The obvious C oware perft: the twin `sow perft` is measured against.
 * int array per position, copy-make, seed-by-seed sowing, no bit tricks.
 * Thread-safety: reentrant. */
#ifndef SOW_PERFT_TWIN_H
#define SOW_PERFT_TWIN_H

#include <stdint.h>

struct twin_pos {
    int pits;
    int hole[36];
    int side;
};

uint64_t twin_perft(const struct twin_pos *p, int depth);

#endif
