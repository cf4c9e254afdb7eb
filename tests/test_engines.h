/* Included by the engine's test files: a rule set and an engine that must
 * come up (a failure fails the test, naming the rule set). */
#ifndef SOW_TEST_ENGINES_H
#define SOW_TEST_ENGINES_H

#include <criterion/criterion.h>

#include "sow/engine.h"
#include "sow/rules.h"

static inline void init_rules(struct ruleset *rs, const char *name, int pits)
{
    struct sow_error re;
    cr_assert_eq(rules_init(rs, name, pits, -1, &re), SOW_OK, "%s: %s", name, re.msg);
}

static inline struct engine *engine_of(const struct ruleset *rs, const struct engine_opts *o)
{
    struct engine *e;
    struct sow_error ee;
    cr_assert_eq(engine_new(rs, o, &e, &ee), SOW_OK, "%s: engine_new: %s", rs->name, ee.msg);
    return e;
}

#endif
