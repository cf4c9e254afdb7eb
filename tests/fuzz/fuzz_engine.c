/* libFuzzer target: `sow engine`'s line protocol, through the command
 * function itself (cmd_engine) with stdin read from the input and stdout
 * and stderr captured (the FILE pointers are swapped; fd 2 stays free for
 * sanitizer reports).
 *
 * Input: byte 0 odd runs `sow engine --letters`; the rest is the session's
 * lines, after "setoption name Hash value 1" and "setoption name Pits
 * value 2": each session builds its engine, and on 2x2 (until the input
 * sets Pits) the table is small and the levels it solves in memory few.  The input ends the session as the end of stdin does
 * (a search still running is stopped and answered).  Checks:
 *  - the exit status is 0 and nothing is written to stderr;
 *  - every `isready` is answered by exactly one `readyok`, and every `uci`
 *    by one `uciok` (counted over the lines the engine takes as commands:
 *    no control byte, not over its length limit);
 *  - every line that reports an error is one `info string error ...` line.
 * Skipped: sessions that name files or directories (Tables, Solution, Book,
 * Weights), that change Hash or Threads (memory and threads are the
 * machine's), or that name a relay rule set (whose sowings of many seeds
 * may take seconds to prove endless, fuzz_common.h). */
#include <ctype.h>
#include <omp.h>

#include "cli/cli.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ENGINE_LINE_MAX 65534 /* cmd_engine.c's LINE_MAX_LEN - 2 */

static bool skipped(const uint8_t *data, size_t size)
{
    static const char *const words[] = {"tables", "solution", "book",  "weights",
                                        "hash",   "threads",  "jodu",  "odu",
                                        "jerin",  "kyekyemapuduo", "ayoayo", "ayo-eleh",
                                        "ba-awa"};
    char *low = malloc(size + 1);
    if (!low)
        abort();
    for (size_t i = 0; i < size; i++)
        low[i] = data[i] ? (char)tolower(data[i]) : ' ';
    low[size] = 0;
    bool skip = false;
    for (size_t k = 0; k < sizeof words / sizeof words[0] && !skip; k++)
        skip = strstr(low, words[k]) != NULL;
    free(low);
    return skip;
}

/* Whether the line s[0..n) is the command cmd as the engine reads it
 * (cmd_engine.c's read_line and loop): no control byte, not over the
 * length limit, cmd its first word. */
static bool is_command(const char *s, size_t n, const char *cmd)
{
    if (n > ENGINE_LINE_MAX)
        return false;
    size_t e = n;
    while (e && s[e - 1] == '\r')
        e--;
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)s[k];
        if ((c < 0x20 && c != '\t' && (c != '\r' || k < e)) || c == 0x7f)
            return false;
    }
    size_t b = 0, cl = strlen(cmd);
    while (b < e && (s[b] == ' ' || s[b] == '\t'))
        b++;
    return e - b >= cl && !memcmp(s + b, cmd, cl) &&
           (e - b == cl || s[b + cl] == ' ' || s[b + cl] == '\t');
}

/* The commands cmd among the input's lines before the first quit. */
static int count_commands(const char *s, size_t n, const char *cmd)
{
    int count = 0;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t j = nl ? (size_t)(nl - s) : n;
        if (is_command(s + i, j - i, "quit"))
            break;
        count += is_command(s + i, j - i, cmd);
        i = j + 1;
    }
    return count;
}

static int count_lines(const char *out, const char *line)
{
    int count = 0;
    size_t ll = strlen(line);
    for (const char *p = out; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        count += n == ll && !memcmp(p, line, ll);
        p += n + (nl != NULL);
    }
    return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool warm;
    if (!warm) {
        /* The OpenMP runtime loads its tool libraries (libstdc++ among
         * them, whose start-up keeps the stdout and stderr it finds) on
         * its first use: that must happen before they are swapped below. */
        (void)omp_get_max_threads();
        warm = true;
    }
    if (size < 1 || skipped(data + 1, size - 1))
        return 0;
    static const char pre[] = "setoption name Hash value 1\nsetoption name Pits value 2\n";
    size_t n = sizeof pre - 1 + size - 1;
    char *in = malloc(n + 1);
    if (!in)
        abort();
    memcpy(in, pre, sizeof pre - 1);
    memcpy(in + sizeof pre - 1, data + 1, size - 1);
    in[n] = 0;

    char *out = NULL, *errs = NULL;
    size_t outlen = 0, errlen = 0;
    FILE *fi = fmemopen(in, n, "r"), *fo = open_memstream(&out, &outlen),
         *fe = open_memstream(&errs, &errlen);
    if (!fi || !fo || !fe)
        abort();
    FILE *si = stdin, *so = stdout, *se = stderr;
    stdin = fi;
    stdout = fo;
    stderr = fe;
    char *argv[] = {"engine", "--letters", NULL};
    int rc = cmd_engine(data[0] & 1 ? 2 : 1, argv);
    stdin = si;
    stdout = so;
    stderr = se;
    fclose(fi);
    fclose(fo);
    fclose(fe);

    if (rc != 0)
        fuzz_fail("engine: exit status %d; stderr '%s'", rc, errs);
    if (errlen)
        fuzz_fail("engine: stderr '%s'", errs);
    int want = count_commands(in, n, "isready"), got = count_lines(out, "readyok");
    if (want != got)
        fuzz_fail("engine: %d isready, %d readyok", want, got);
    want = count_commands(in, n, "uci");
    got = count_lines(out, "uciok");
    if (want != got)
        fuzz_fail("engine: %d uci, %d uciok", want, got);
    for (const char *p = out; (p = strstr(p, "error"));) {
        const char *bol = p;
        while (bol > out && bol[-1] != '\n')
            bol--;
        if (strncmp(bol, "info string error", 17) != 0)
            fuzz_fail("engine: an error not in an info string error line: '%.120s'", bol);
        p = strchr(p, '\n');
        if (!p)
            break;
    }
    free(out);
    free(errs);
    free(in);
    return 0;
}
