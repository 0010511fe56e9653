// The operations of the store itself (SPEC 16): `store check` (what this home reaches and how
// fast), `store migrate` (create or upgrade a PostgreSQL store's schema) and `store use` (record
// the home's store in its config). Listed by ops/table.cpp.
#pragma once

#include "ops/operation.hpp"

namespace team::ops {

extern const Operation store_check_op;
extern const Operation store_migrate_op;
extern const Operation store_use_op;

}  // namespace team::ops
