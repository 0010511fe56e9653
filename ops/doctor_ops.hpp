// The operation `doctor` (ops/doctor_ops.cpp): whether team can run here. Listed by
// ops/table.cpp; faces use operations() and find_operation(), the command line this entry.
#pragma once

#include "ops/operation.hpp"

namespace team::ops {

extern const Operation doctor_op;

}  // namespace team::ops
