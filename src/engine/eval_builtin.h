/* The evaluation weights files compiled into sow (tables/eval/, by
 * src/embed.py at build time): the weights an engine gets without naming
 * any (eval_default_weights).
 *
 *   eval_builtin[i] = {"oware-2x6.weights", bytes, len}, ... ending with {0}.
 *
 * Thread-safety: read-only data. */
#ifndef SOW_ENGINE_EVAL_BUILTIN_H
#define SOW_ENGINE_EVAL_BUILTIN_H

#include "embedded.h"

extern const struct embedded_file eval_builtin[];

#endif
