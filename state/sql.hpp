// Optional values in and out of statements: NULL <-> std::nullopt.
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include "state/db.hpp"

namespace team {

template <class T>
std::optional<T> column_or_null(const Column& c) {
    if (c.isNull()) return std::nullopt;
    if constexpr (std::is_same_v<T, std::string>) {
        return c.getString();
    } else {
        return static_cast<T>(c.getInt64());
    }
}

template <class T>
void bind_or_null(Statement& statement, int index, const std::optional<T>& value) {
    if (value) {
        statement.bind(index, *value);
    } else {
        statement.bind(index);
    }
}

}  // namespace team
