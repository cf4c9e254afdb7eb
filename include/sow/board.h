/* sow — board: the bitpacked seed counts and word-wide (SWAR) sowing helpers.
 *
 * Layout
 * ------
 * A board of N holes per side (1 <= N <= 18) has 2N holes, numbered in sowing
 * (counter-clockwise) order: A's holes 1..N are indices 0..N-1, B's holes 1..N
 * are indices N..2N-1, and index 2N-1 is followed by index 0 again.  Hole i
 * faces hole 2N-1-i (A's hole k faces B's hole N+1-k).
 *
 * Each hole is one 8-bit lane; lane i is byte i%8 of word i/8 (little-endian,
 * so byte i of the array view is lane i).  Lanes >= 2N are always zero.
 *
 *            word 0                                   word 1
 *   bits 63..56 .. 15..8  7..0              bits 63 .. 31..24 .. 7..0
 *        [ B2 ] .. [ A2 ][ A1 ]                  [ 0 ] .. [ B6 ] .. [ B3 ]
 *   lane    7       1     0                 lane  15        11        8
 *
 * Example, oware start with N = 6 (4 seeds everywhere):
 *   w[0] = 0x0404040404040404   (A1..A6, B1, B2)
 *   w[1] = 0x0000000004040404   (B3..B6, then unused lanes)
 *   w[2..4] = 0
 *
 * A lane holds 0..255 seeds; the rules layer refuses boards with more than 255
 * seeds in total, so no sowing can ever carry into the next lane.
 *
 * Thread-safety: every function here is pure (reads its arguments, writes
 * only its outputs) and may be called from any number of threads at once.
 */
#ifndef SOW_BOARD_H
#define SOW_BOARD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sow/export.h"

#define SOW_MAX_PITS 18
#define SOW_MAX_HOLES (2 * SOW_MAX_PITS)
#define SOW_BOARD_WORDS 5
#define SOW_MAX_SEEDS 255

_Static_assert(SOW_BOARD_WORDS * 8 >= SOW_MAX_HOLES, "36 lanes must fit in the words");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "lane i must be byte i");

typedef union board {
    uint64_t w[SOW_BOARD_WORDS];
    uint8_t h[SOW_BOARD_WORDS * 8];
} board_t;

_Static_assert(sizeof(board_t) == 40, "board is five words");

#define BOARD_ONES 0x0101010101010101ULL
#define BOARD_HIGHS 0x8080808080808080ULL

/* Lanes [0, k) of one word set to 0x01, for any k in -40..48 (clamped to 0..8):
 * one table load, no branch. */
SOW_API extern const uint64_t board_ones_tab[89];
static inline uint64_t board_ones_below(int k)
{
    return board_ones_tab[k + 40];
}

/* Lanes [a, b) of the whole board as 0x01 bytes in word w (0 <= a <= b <= 40). */
static inline uint64_t board_range_word(int w, int a, int b)
{
    return board_ones_below(b - 8 * w) ^ board_ones_below(a - 8 * w);
}

/* Add 1 to every lane in [a, b) (no wrap).  nw = words in use. */
static inline void board_add_range(board_t *bd, int nw, int a, int b)
{
    for (int w = 0; w < nw; w++)
        bd->w[w] += board_range_word(w, a, b);
}

/* 0x80 in every byte of x that is zero, 0 elsewhere (exact, no false hits). */
static inline uint64_t board_zero_bytes(uint64_t x)
{
    uint64_t nz = (((x & ~BOARD_HIGHS) + ~BOARD_HIGHS) | x) & BOARD_HIGHS;
    return ~nz & BOARD_HIGHS;
}

/* Gather the 0x80 flags of a byte mask into an 8-bit mask (bit i = byte i). */
static inline unsigned board_gather(uint64_t highs)
{
    return (unsigned)(((highs >> 7) * 0x0102040810204080ULL) >> 56);
}

/* Bit i set for every lane i < nholes equal to v (0 < v < 256 or v == 0). */
static inline uint64_t board_lanes_equal(const board_t *bd, int nw, int nholes, uint8_t v)
{
    uint64_t m = 0;
    for (int w = 0; w < nw; w++)
        m |= (uint64_t)board_gather(board_zero_bytes(bd->w[w] ^ (BOARD_ONES * v))) << (8 * w);
    return nholes >= 64 ? m : m & ((1ULL << nholes) - 1);
}

/* Bit i set for every lane i < nholes holding a nonzero count. */
static inline uint64_t board_nonzero(const board_t *bd, int nw, int nholes)
{
    return ~board_lanes_equal(bd, nw, nholes, 0) & ((1ULL << nholes) - 1);
}

/* Sum of lanes [a, b).  One multiply per word: every partial sum of a board
 * is <= 255 (the rules refuse more seeds), so the byte sums never carry and
 * the top byte of x * 0x0101...01 is the sum of x's lanes. */
static inline int board_sum_range(const board_t *bd, int a, int b)
{
    int s = 0;
    for (int w = a / 8; w * 8 < b; w++)
        s += (int)(((bd->w[w] & (board_range_word(w, a, b) * 0xFF)) * BOARD_ONES) >> 56);
    return s;
}

/* Lane i set to v (< 256), or raised by one, as a read-modify-write of its
 * word: a byte store that a word load of the same word follows soon stalls
 * the load (the store cannot be forwarded), and the sowing loops read whole
 * words right after they lift or fill a hole. */
static inline void board_set_lane(board_t *bd, int i, unsigned v)
{
    const unsigned sh = 8u * (unsigned)(i & 7);
    bd->w[i >> 3] = (bd->w[i >> 3] & ~(0xFFULL << sh)) | ((uint64_t)v << sh);
}

/* (Returns the lane's new count, from the register: reading the byte back
 * would wait for the store.) */
static inline unsigned board_inc_lane(board_t *bd, int i)
{
    const unsigned sh = 8u * (unsigned)(i & 7);
    const uint64_t x = bd->w[i >> 3] + (1ULL << sh);
    bd->w[i >> 3] = x;
    return (unsigned)(x >> sh) & 0xFF;
}

static inline bool board_equal(const board_t *x, const board_t *y, int nw)
{
    uint64_t d = 0;
    for (int w = 0; w < nw; w++)
        d |= x->w[w] ^ y->w[w];
    return d == 0;
}

/* The board seen from the other side: lane i <-> lane (i + N) mod 2N. */
static inline board_t board_flip(const board_t *bd, int pits)
{
    board_t r;
    memset(&r, 0, sizeof r);
    memcpy(r.h, bd->h + pits, (size_t)pits);
    memcpy(r.h + pits, bd->h, (size_t)pits);
    return r;
}

#endif
