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
    struct sow_error e, e2;
    enum sow_status st;
    struct ruleset rs;
    sow_position p, q;

    fuzz_clear_error(&e); /* a message must be written, not inherited */
    int pits = -1;
    if ((st = pos_token_pits(tok, &pits, &e)) != SOW_OK) {
        fuzz_check_input("pos_token_pits", st, &e);
        if (pits != -1)
            fuzz_fail("'%s': pos_token_pits rejects (%s) but sets %d holes", tok, e.msg, pits);
        /* pos_parse must reject it too, whatever size we pick. */
        if (rules_init(&rs, rules, 6, -1, &e2) != SOW_OK)
            fuzz_fail("rules_init %s 2x6: %s", rules, e2.msg);
        if (pos_parse(&rs, tok, &p, &e2) == SOW_OK)
            fuzz_fail("'%s': pos_token_pits rejects (%s), pos_parse accepts", tok, e.msg);
        goto out;
    }
    if (pits < 1 || pits > SOW_MAX_PITS)
        fuzz_fail("'%s': pos_token_pits accepted %d holes", tok, pits);
    if (rules_init(&rs, rules, pits, -1, &e) != SOW_OK)
        fuzz_fail("rules_init %s 2x%d: %s", rules, pits, e.msg);
    fuzz_clear_error(&e);
    if ((st = pos_parse(&rs, tok, &p, &e)) != SOW_OK) {
        fuzz_check_input("pos_parse", st, &e);
        goto out;
    }
    if (rules_validate(&rs, &p, &e) != SOW_OK)
        fuzz_fail("%s '%s': accepted but invalid: %s", rules, tok, e.msg);

    char f1[SOW_POS_MAXLEN], f2[SOW_POS_MAXLEN];
    int n1 = pos_format(&rs, &p, f1, sizeof f1);
    if (n1 <= 0 || (size_t)n1 >= sizeof f1 || (int)strlen(f1) != n1)
        fuzz_fail("%s '%s': pos_format returned %d", rules, tok, n1);
    if (pos_parse(&rs, f1, &q, &e) != SOW_OK)
        fuzz_fail("%s '%s': its format '%s' is rejected: %s", rules, tok, f1, e.msg);
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
