/* placeholder: being written */
#include "ref_rules.h"
