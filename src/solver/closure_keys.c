/* The closure's key codec (closure.h "key layout"): a position packed into
 * K 64-bit words and back, its level, its hash; and the look-up of keys in
 * a sorted key array (the levels on disk, their binary search).  Part of
 * the closure solver: closure_internal.h maps its files. */
#include "closure_internal.h"

/* ---- keys ---- */

int clos_words_for(const struct ruleset *rs, int seeds)
{
    return (2 + seeds + rs->holes + 63) / 64;
}

static inline int rel_state(const sow_position *p)
{
    switch (p->state) {
    case SOW_STATE_A: return p->side == SOW_A ? 1 : 2;
    case SOW_STATE_B: return p->side == SOW_B ? 1 : 2;
    case SOW_STATE_OPEN: return 3;
    default: return 0;
    }
}

static inline void set_ones(uint64_t *w, int b, int c)
{
    while (c > 0) {
        int off = b & 63, take = 64 - off < c ? 64 - off : c;
        uint64_t run = take == 64 ? ~0ULL : ((1ULL << take) - 1);
        w[b >> 6] |= run << off;
        b += take;
        c -= take;
    }
}

/* clos_pack of one word for boards of at most 16 holes (2x6: odu and
 * jerin at full size), without the hole-by-hole chain: the board's two
 * words as one register, turned to the mover; the seeds before each hole
 * by a multiply per word (byte j of x * 0x0101..01 is c_0 + .. + c_j, once
 * the total is known to fit: no byte then carries); hole j's closing zero
 * at bit 2 + (c_0 + .. + c_j) + j; ones everywhere else below the last one.
 * -1: a hole holds 32 seeds or more (the word sums could carry; the
 * caller packs hole by hole). */
static int pack1_small(const sow_position *p, int N, int H, uint64_t *w)
{
    uint64_t lo = p->board.w[0], hi = p->board.w[1];
    if ((lo | hi) & (BOARD_ONES * 0xE0))
        return -1;
    /* each word's lanes sum to at most 8 * 31: its top byte after one multiply */
    const int total = (int)((lo * BOARD_ONES) >> 56) + (int)((hi * BOARD_ONES) >> 56);
    if (2 + total + H > 64)
        return 0;
    if (p->side == SOW_B) { /* lanes [N, H) first (0 < H - N = N < 16) */
        typedef unsigned __int128 u128;
        const u128 x = (u128)hi << 64 | lo, all = ~(u128)0 >> (8 * (16 - H));
        const u128 y = ((x >> (8 * N)) | (x << (8 * (H - N)))) & all;
        lo = (uint64_t)y;
        hi = (uint64_t)(y >> 64);
    }
    /* byte j: 2 + j + c_0 + .. + c_j, the bit of hole j's closing zero */
    const uint64_t plo = lo * BOARD_ONES;
    const uint64_t a = plo + 0x0908070605040302ULL;
    const uint64_t b = hi * BOARD_ONES + (plo >> 56) * BOARD_ONES + 0x11100F0E0D0C0B0AULL;
    uint64_t zeros = 0;
    for (int j = 0; j < 8 && j < H; j++)
        zeros |= 1ULL << ((a >> (8 * j)) & 63);
    for (int j = 8; j < H; j++)
        zeros |= 1ULL << ((b >> (8 * (j - 8))) & 63);
    const int used = 2 + total + H;
    const uint64_t below = used == 64 ? ~0ULL : (1ULL << used) - 1;
    w[0] = (below & ~zeros & ~3ULL) | (uint64_t)rel_state(p);
    return 1;
}

bool clos_pack(const struct ruleset *rs, int K, const sow_position *p, uint64_t *w)
{
    const int N = rs->pits, H = rs->holes, rot = p->side == SOW_B ? N : 0;
    const uint8_t *h = p->board.h;
    int small = K == 1 && H <= 16 ? pack1_small(p, N, H, w) : -1;
    if (small >= 0)
        return small;
    if (K == 1) {
        uint64_t k = (uint64_t)rel_state(p);
        int b = 2;
        for (int j = 0; j < H; j++) {
            int c = h[j + rot < H ? j + rot : j + rot - H];
            if (b + c + 1 > 64)
                return false;
            k |= ((1ULL << c) - 1) << b;
            b += c + 1;
        }
        w[0] = k;
        return true;
    }
    for (int k = 0; k < K; k++)
        w[k] = 0;
    w[0] = (uint64_t)rel_state(p);
    int b = 2;
    for (int j = 0; j < H; j++) {
        int c = h[j + rot < H ? j + rot : j + rot - H];
        if (b + c + 1 > 64 * K)
            return false;
        set_ones(w, b, c);
        b += c + 1;
    }
    return true;
}

/* Ones from bit b on (the hole's seed count); bits past the key are 0. */
static inline int count_ones(const uint64_t *w, int K, int b)
{
    int c = 0;
    for (;;) {
        int word = b >> 6, off = b & 63;
        if (word >= K)
            return c;
        uint64_t x = w[word] >> off;
        if (off && word + 1 < K)
            x |= w[word + 1] << (64 - off);
        int t = ~x ? __builtin_ctzll(~x) : 64;
        c += t;
        if (t < 64)
            return c;
        b += 64;
    }
}

void clos_unpack(const struct ruleset *rs, int K, const uint64_t *w, sow_position *p)
{
    const int H = rs->holes;
    memset(p, 0, sizeof *p);
    int st = (int)(w[0] & 3), b = 2;
    if (K == 1) {
        /* hole j's count: the gap between its closing zero and the one
         * before (bit 1 stands in for the zero before hole 0), the zeros
         * taken lowest first (a one-cycle chain per hole); the board
         * written a word at a time: the generator reads it in words at
         * once, and byte stores there would stall those loads */
        uint64_t z = ~w[0] & ~3ULL;
        int prev = 1;
        for (int j0 = 0; j0 < H; j0 += 8) {
            uint64_t word = 0;
            for (int j = j0; j < H && j < j0 + 8; j++) {
                int at = __builtin_ctzll(z);
                word |= (uint64_t)(at - prev - 1) << (8 * (j - j0));
                prev = at;
                z &= z - 1;
            }
            p->board.w[j0 >> 3] = word;
        }
    } else {
        for (int j = 0; j < H; j++) {
            int c = count_ones(w, K, b);
            p->board.h[j] = (uint8_t)c;
            b += c + 1;
        }
    }
    p->side = SOW_A;
    p->state = st == 1 ? SOW_STATE_A : st == 2 ? SOW_STATE_B : st == 3 ? SOW_STATE_OPEN
                                                                      : SOW_STATE_NONE;
}

uint64_t clos_hash(const uint64_t *w, int K)
{
    uint64_t h = 0x243F6A8885A308D3ULL;
    for (int k = 0; k < K; k++) {
        h = (h ^ w[k]) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return h;
}

static inline int key_cmp(const uint64_t *a, const uint64_t *b, int K)
{
    for (int k = K - 1; k >= 0; k--)
        if (a[k] != b[k])
            return a[k] < b[k] ? -1 : 1;
    return 0;
}

/* w's index in n sorted keys k of K words, -1 if absent. */
int64_t clos_key_find(const uint64_t *k, uint64_t n, const uint64_t *w, int K)
{
    uint64_t a = 0, b = n;
    while (a < b) {
        uint64_t mid = a + (b - a) / 2;
        int r = key_cmp(&k[mid * (uint64_t)K], w, K);
        if (r == 0)
            return (int64_t)mid;
        if (r < 0)
            a = mid + 1;
        else
            b = mid;
    }
    return -1;
}

/* cnt searches at once: ws[j]'s index in the ns[j] sorted keys ks[j] (K
 * words each) into out[j], -1 if absent; the same answers as clos_key_find.
 * Each search halves its range with one comparison a step (the last key
 * <= w), and after each step the next probe's line is prefetched while the
 * other searches take theirs: one node's children, looked up one after
 * another, waited for every miss in turn. */
void clos_key_find_rows(const uint64_t *const *ks, const uint64_t *ns,
                        const uint64_t (*ws)[MAX_KEY_WORDS], int cnt, int K, int64_t *out)
{
    uint64_t base[KF_MAX], len[KF_MAX];
    bool busy = false;
    for (int j = 0; j < cnt; j++) {
        base[j] = 0;
        len[j] = ns[j];
        if (len[j] > 1)
            __builtin_prefetch(&ks[j][(len[j] / 2) * (uint64_t)K]);
        busy |= len[j] > 1;
    }
    while (busy) {
        busy = false;
        for (int j = 0; j < cnt; j++) {
            if (len[j] <= 1)
                continue;
            uint64_t half = len[j] / 2;
            if (key_cmp(&ks[j][(base[j] + half) * (uint64_t)K], ws[j], K) <= 0)
                base[j] += half;
            len[j] -= half;
            if (len[j] > 1) {
                __builtin_prefetch(&ks[j][(base[j] + len[j] / 2) * (uint64_t)K]);
                busy = true;
            }
        }
    }
    for (int j = 0; j < cnt; j++)
        out[j] = ns[j] && key_cmp(&ks[j][base[j] * (uint64_t)K], ws[j], K) == 0
                     ? (int64_t)base[j] : -1;
}

void clos_key_find_many(const uint64_t *const *ks, const uint64_t *ns, const uint64_t *ws,
                        int cnt, int K, int64_t *out)
{
    uint64_t w[SOW_MAX_PITS + 1][MAX_KEY_WORDS] = {{0}};
    if (cnt > SOW_MAX_PITS + 1 || K > MAX_KEY_WORDS)
        return;
    for (int j = 0; j < cnt; j++)
        memcpy(w[j], &ws[j * K], 8 * (size_t)K);
    clos_key_find_rows(ks, ns, (const uint64_t(*)[MAX_KEY_WORDS])w, cnt, K, out);
}
