#include "ops/core_cache.hpp"

#include "ops/operation.hpp"

namespace team::ops {

namespace {

std::string key_of(const Identity& id) {
    std::string key;
    for (const auto* part : {&id.home, &id.team, &id.as, &id.via}) {
        // "-" for none, "+" before a value: an absent part and an empty one differ.
        key += part->has_value() ? "+" + **part : "-";
        key += '\n';
    }
    return key;
}

}  // namespace

Core& CoreCache::get(const Identity& identity) {
    auto key = key_of(identity);
    if (cores_.size() >= bound_ && !cores_.count(key)) cores_.clear();
    auto& slot = cores_[key];
    if (!slot) slot = std::make_unique<Core>(identity);
    return *slot;
}

void CoreCache::after(const Identity& identity, const Result& result) {
    if (result.error && result.error->code() == ErrorCode::failed) cores_.erase(key_of(identity));
}

}  // namespace team::ops
