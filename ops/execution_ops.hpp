// The entries of the executions (SPEC 13) in the operations table, beside the table's other
// entries (ops/table.hpp) and defined in ops/execution_ops.cpp.
#pragma once

#include "ops/operation.hpp"

namespace team::ops {

extern const Operation list_executions_op, execution_status_op, terminate_execution_op;

}  // namespace team::ops
