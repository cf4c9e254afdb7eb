/* libFuzzer target: the position parser.
 *
 * Input: byte 0 picks the rule set, the rest is the token (as on a command
 * line; board size from the token, as `sow` does).  Checks:
 *  - rejected tokens get a one-line, non-empty message;
 *  - accepted tokens give a valid position, and parse(format(p)) == p byte for
 *    byte, format(parse(format(p))) == format(p) (the canonical form is a
 *    fixed point);
 *  - drawing and generating moves on any accepted position is safe, and the
 *    move list keeps its promises (fuzz_common.h). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        abort();
    if (size < 1)
        return 0;
    const char *rules = fuzz_rules_name(data[0]);
    char *tok = fuzz_cstr(data + 1, size - 1);
    char err[256] = "", err2[256] = "";
    struct ruleset rs;
    sow_position p, q;

    memset(err, 'x', sizeof err - 1); /* a message must be written, not inherited */
    err[sizeof err - 1] = 0;
    int pits = pos_token_pits(tok, err, sizeof err);
    if (pits < 0) {
        fuzz_check_message("pos_token_pits", err);
        /* pos_parse must reject it too, whatever size we pick. */
        if (rules_init(&rs, rules, 6, -1, err2, sizeof err2) < 0)
            fuzz_fail("rules_init %s 2x6: %s", rules, err2);
        if (pos_parse(&rs, tok, &p, err2, sizeof err2) == 0)
            fuzz_fail("'%s': pos_token_pits rejects (%s), pos_parse accepts", tok, err);
        goto out;
    }
    if (pits < 1 || pits > SOW_MAX_PITS)
        fuzz_fail("'%s': pos_token_pits accepted %d holes", tok, pits);
    if (rules_init(&rs, rules, pits, -1, err, sizeof err) < 0)
        fuzz_fail("rules_init %s 2x%d: %s", rules, pits, err);
    memset(err, 'x', sizeof err - 1);
    if (pos_parse(&rs, tok, &p, err, sizeof err) < 0) {
        fuzz_check_message("pos_parse", err);
        goto out;
    }
    if (rules_validate(&rs, &p, err, sizeof err) < 0)
        fuzz_fail("%s '%s': accepted but invalid: %s", rules, tok, err);

    char f1[SOW_POS_MAXLEN], f2[SOW_POS_MAXLEN];
    int n1 = pos_format(&rs, &p, f1, sizeof f1);
    if (n1 <= 0 || (size_t)n1 >= sizeof f1 || (int)strlen(f1) != n1)
        fuzz_fail("%s '%s': pos_format returned %d", rules, tok, n1);
    if (pos_parse(&rs, f1, &q, err, sizeof err) < 0)
        fuzz_fail("%s '%s': its format '%s' is rejected: %s", rules, tok, f1, err);
    if (memcmp(&p, &q, sizeof p) != 0)
        fuzz_fail("%s '%s': parse(format) differs ('%s')", rules, tok, f1);
    pos_format(&rs, &q, f2, sizeof f2);
    if (strcmp(f1, f2) != 0)
        fuzz_fail("%s '%s': format not a fixed point: '%s' vs '%s'", rules, tok, f1, f2);

    pos_draw(devnull, &rs, &p);
    if (rs.relay && rules_board_seeds(&rs, &p) > FUZZ_RELAY_SEEDS)
        goto out;
    struct sow_movelist ml;
    rules_generate(&rs, &p, &ml);
    fuzz_check_movelist(&rs, &p, &ml);
out:
    free(tok);
    return 0;
}
