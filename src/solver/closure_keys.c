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

bool clos_pack(const struct ruleset *rs, int K, const sow_position *p, uint64_t *w)
{
    const int N = rs->pits, H = rs->holes, rot = p->side == SOW_B ? N : 0;
    const uint8_t *h = p->board.h;
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
        uint64_t k = w[0] >> 2;
        for (int j = 0; j < H; j++) {
            int c = __builtin_ctzll(~k);
            p->board.h[j] = (uint8_t)c;
            k >>= c;
            k >>= 1;
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
