/* sow — which symbols libsow exports.
 *
 * The shared libsow is compiled with -fvisibility=hidden: only declarations
 * marked SOW_API (the public API: positions, moves, rule sets, solve, tables,
 * statuses, version) are visible to programs that link it; everything else
 * stays internal and may change without notice.  The static library and the
 * sow executable see every symbol, as before.
 *
 * Thread-safety: a macro, nothing to say.
 */
#ifndef SOW_EXPORT_H
#define SOW_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define SOW_API __attribute__((visibility("default")))
#else
#define SOW_API
#endif

#endif
