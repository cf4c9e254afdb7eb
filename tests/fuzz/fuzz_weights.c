/* libFuzzer target: the weights-file reader (eval_weights_read, the engine's
 * Weights option and sow's compiled-in weights) on arbitrary text.
 *
 * Invariants: a refusal is bad input with one line; accepted weights lie in
 * [-10000, 10000], and written (eval_weights_write, 18 holes: those the
 * file did not give are 0) and read again they are the same weights. */
#include "fuzz_common.h"
#include "sow/engine.h"

/* docs/engine.md "Weights files": integers in -10000 .. 10000 */
#define WEIGHT_MAX 10000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct eval_weights w, v;
    struct sow_error e;
    fuzz_clear_error(&e);
    enum sow_status st = eval_weights_read((const char *)data, size, "fuzz.weights", &w, &e);
    if (st != SOW_OK) {
        fuzz_check_input("eval_weights_read", st, &e);
        return 0;
    }
    int vec[EVAL_NFEAT];
    eval_weights_vector(&w, vec);
    for (int i = 0; i < EVAL_NFEAT; i++)
        if (vec[i] < -WEIGHT_MAX || vec[i] > WEIGHT_MAX)
            fuzz_fail("accepted weight %d = %d", i, vec[i]);
    static char buf[1 << 16];
    int n = eval_weights_write(&w, "oware", SOW_MAX_PITS, "# fuzz\n", buf, sizeof buf);
    if (n < 0)
        fuzz_fail("weights do not fit %zu bytes", sizeof buf);
    fuzz_clear_error(&e);
    if (eval_weights_read(buf, (size_t)n, "written", &v, &e) != SOW_OK)
        fuzz_fail("what sow wrote does not read back: %s", e.msg);
    if (memcmp(&w, &v, sizeof w) != 0)
        fuzz_fail("weights written and read back differ");
    return 0;
}
