/* libFuzzer target: `sow show`, `sow moves` and `sow play` on arbitrary
 * tokens, through the very command functions of src/cli.
 *
 * Input: byte 0 picks the command, the rest is split at newlines into
 * arguments (at most 64).  stdout and stderr are captured per call (the FILE
 * pointers are swapped, fd 2 stays free for sanitizer reports).  Checks:
 *  - the exit status is 0 or 2 (1 is for failures while working, which
 *    these commands only have on out-of-memory);
 *  - status 2: exactly one line on stderr, "sow CMD: ...", nothing on stdout;
 *  - status 0: nothing on stderr, something on stdout; for play, the last
 *    line is a position token that parses back, or with --ogn the whole
 *    output is a record that parses back (ogn_parse). */
#include "fuzz_common.h"

#include "cli/cli.h"
#include "ogn/ogn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
    const char *name;
    int (*run)(int, char **);
} cmds[] = {{"show", cmd_show}, {"moves", cmd_moves}, {"play", cmd_play}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int c = data[0] % 3;
    char *text = fuzz_cstr(data + 1, size - 1);
    char *argv[66];
    int argc = 0;
    argv[argc++] = (char *)cmds[c].name;
    if (size > 1)
        for (char *s = text; argc < 65;) {
            argv[argc++] = s;
            char *nl = strchr(s, '\n');
            if (!nl)
                break;
            *nl = 0;
            s = nl + 1;
        }
    argv[argc] = NULL;
    /* Bound the relay work (FUZZ_RELAY_SEEDS): skip positions and starts with
     * more seeds, whatever the rule set (fuzz_position covers big ones). */
    long pits = 6, seeds = 4;
    for (int i = 1; i < argc; i++) {
        const char *v = argv[i];
        if (strchr(v, '/')) {
            long sum = 0;
            for (const char *q = v; *q;)
                if (*q >= '0' && *q <= '9') {
                    long x = strtol(q, (char **)&q, 10);
                    if (x > FUZZ_RELAY_SEEDS || (sum += x) > FUZZ_RELAY_SEEDS)
                        goto skip;
                } else {
                    q++;
                }
        } else if (i + 1 < argc && (!strcmp(v, "--pits") || !strcmp(v, "--seeds"))) {
            *(v[2] == 'p' ? &pits : &seeds) = strtol(argv[i + 1], NULL, 10);
        } else if (!strncmp(v, "--pits=", 7) || !strncmp(v, "--seeds=", 8)) {
            *(v[2] == 'p' ? &pits : &seeds) = strtol(strchr(v, '=') + 1, NULL, 10);
        }
    }
    if (pits > 0 && pits <= 18 && seeds > 0 && seeds <= 255 && 2 * pits * seeds > FUZZ_RELAY_SEEDS)
        goto skip;

    char *out = NULL, *errs = NULL;
    size_t outlen = 0, errlen = 0;
    FILE *fo = open_memstream(&out, &outlen), *fe = open_memstream(&errs, &errlen);
    if (!fo || !fe)
        abort();
    FILE *so = stdout, *se = stderr;
    stdout = fo;
    stderr = fe;
    int rc = cmds[c].run(argc, argv);
    stdout = so;
    stderr = se;
    fclose(fo);
    fclose(fe);

    char prefix[32];
    snprintf(prefix, sizeof prefix, "sow %s: ", cmds[c].name);
    if (rc == 2) {
        if (outlen)
            fuzz_fail("%s: status 2 after printing '%.60s'", cmds[c].name, out);
        char *nl = strchr(errs, '\n');
        if (!errlen || !nl || nl[1] || strncmp(errs, prefix, strlen(prefix)) != 0)
            fuzz_fail("%s: status 2 needs one line '%s...' on stderr, got '%s'", cmds[c].name,
                      prefix, errs);
    } else if (rc == 0) {
        if (errlen)
            fuzz_fail("%s: status 0 with '%s' on stderr", cmds[c].name, errs);
        if (!outlen)
            fuzz_fail("%s: status 0 and no output", cmds[c].name);
        if (c == 2 && !strstr(out, "usage:")) {
            /* Which rule set: the last --rules given (play parses them in
             * order); and whether --ogn asked for a record. */
            const char *rules = "oware";
            bool ogn = false;
            for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--rules") == 0 && i + 1 < argc)
                    rules = argv[++i];
                else if (strncmp(argv[i], "--rules=", 8) == 0)
                    rules = argv[i] + 8;
                else
                    ogn |= !strcmp(argv[i], "--ogn");
            }
            struct sow_error e;
            if (ogn) {
                /* The record parses back (tags, moves, result). */
                struct ogn_game *g;
                if (ogn_parse(out, outlen, &g, &e) != SOW_OK)
                    fuzz_fail("play --ogn: the record does not parse back: %s", e.msg);
                ogn_free(g);
            } else {
                /* The final position stands alone on the last line. */
                out[outlen - 1] = 0;
                char *last = strrchr(out, '\n');
                last = last ? last + 1 : out;
                struct ruleset rs;
                sow_position p;
                int tp;
                enum sow_status st = pos_token_pits(last, &tp, &e);
                if (st == SOW_OK)
                    st = rules_init(&rs, rules, tp, -1, &e);
                if (st == SOW_OK)
                    st = pos_parse(&rs, last, &p, &e);
                if (st != SOW_OK)
                    fuzz_fail("play: last line '%s' is not a position: %s", last, e.msg);
            }
        }
    } else {
        fuzz_fail("%s: exit status %d", cmds[c].name, rc);
    }
    free(out);
    free(errs);
skip:
    free(text);
    return 0;
}
