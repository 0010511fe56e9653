#include "team/prices.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "team/config.hpp"

namespace team {

namespace {

// List prices per million tokens, from the vendors' pricing pages (docs.anthropic.com "Pricing",
// openai.com/api/pricing, ai.google.dev "Gemini Developer API pricing", prompts up to 200k
// tokens), as they stood on the date below; claude-opus-4-8's as Claude Code 2.1.197 prices it
// itself (its status line's cost, docs/usage-records.md). Cache writes are Anthropic's 5-minute
// writes; OpenAI and Google charge cached input as a read and no separate write (the input price).
constexpr const char* kShipped = R"json({
  "taken": "2025-10-01",
  "source": "docs.anthropic.com/en/docs/about-claude/pricing, openai.com/api/pricing, ai.google.dev/gemini-api/docs/pricing",
  "models": {
    "claude-opus-4-8":   {"input": 5,    "output": 25,   "cacheRead": 0.5,   "cacheWrite": 6.25},
    "claude-opus-4-5":   {"input": 5,    "output": 25,   "cacheRead": 0.5,   "cacheWrite": 6.25},
    "claude-opus-4-1":   {"input": 15,   "output": 75,   "cacheRead": 1.5,   "cacheWrite": 18.75},
    "claude-opus-4":     {"input": 15,   "output": 75,   "cacheRead": 1.5,   "cacheWrite": 18.75},
    "claude-sonnet-4-5": {"input": 3,    "output": 15,   "cacheRead": 0.3,   "cacheWrite": 3.75},
    "claude-sonnet-4":   {"input": 3,    "output": 15,   "cacheRead": 0.3,   "cacheWrite": 3.75},
    "claude-3-7-sonnet": {"input": 3,    "output": 15,   "cacheRead": 0.3,   "cacheWrite": 3.75},
    "claude-haiku-4-5":  {"input": 1,    "output": 5,    "cacheRead": 0.1,   "cacheWrite": 1.25},
    "claude-3-5-haiku":  {"input": 0.8,  "output": 4,    "cacheRead": 0.08,  "cacheWrite": 1},
    "claude-3-haiku":    {"input": 0.25, "output": 1.25, "cacheRead": 0.03,  "cacheWrite": 0.3},
    "gpt-5":             {"input": 1.25, "output": 10,   "cacheRead": 0.125, "cacheWrite": 1.25},
    "gpt-5-codex":       {"input": 1.25, "output": 10,   "cacheRead": 0.125, "cacheWrite": 1.25},
    "gpt-5.1":           {"input": 1.25, "output": 10,   "cacheRead": 0.125, "cacheWrite": 1.25},
    "gpt-5.1-codex":     {"input": 1.25, "output": 10,   "cacheRead": 0.125, "cacheWrite": 1.25},
    "gpt-5-mini":        {"input": 0.25, "output": 2,    "cacheRead": 0.025, "cacheWrite": 0.25},
    "gpt-5.1-codex-mini":{"input": 0.25, "output": 2,    "cacheRead": 0.025, "cacheWrite": 0.25},
    "gpt-5-nano":        {"input": 0.05, "output": 0.4,  "cacheRead": 0.005, "cacheWrite": 0.05},
    "gpt-4.1":           {"input": 2,    "output": 8,    "cacheRead": 0.5,   "cacheWrite": 2},
    "o4-mini":           {"input": 1.1,  "output": 4.4,  "cacheRead": 0.275, "cacheWrite": 1.1},
    "gemini-2.5-pro":    {"input": 1.25, "output": 10,   "cacheRead": 0.125, "cacheWrite": 1.25},
    "gemini-2.5-flash":  {"input": 0.3,  "output": 2.5,  "cacheRead": 0.03,  "cacheWrite": 0.3},
    "gemini-2.5-flash-lite": {"input": 0.1, "output": 0.4, "cacheRead": 0.01, "cacheWrite": 0.1},
    "gemini-2.0-flash":  {"input": 0.1,  "output": 0.4,  "cacheRead": 0.025, "cacheWrite": 0.1}
  }
})json";

double price_field(const nlohmann::json& m, const char* field, const std::string& where) {
    auto it = m.find(field);
    if (it == m.end()) return 0;  // a field left out costs nothing (no such tokens)
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0 ||
        it->get<double>() > 1'000'000) {
        throw usage_error(where + ": \"" + field +
                          "\" must be a number of US dollars per million tokens, 0 or more");
    }
    return it->get<double>();
}

}  // namespace

namespace {

// A release's date after a model's name: "-20250929" (Anthropic), "-2025-04-14" (OpenAI), or
// "-latest". Anything else names another model ("claude-opus-4-8" is not "claude-opus-4").
bool dated_release(std::string_view suffix) {
    auto digits = [](std::string_view s) {
        return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (suffix == "-latest") return true;
    if (suffix.size() == 9 && suffix[0] == '-' && digits(suffix.substr(1))) return true;
    return suffix.size() == 11 && suffix[0] == '-' && digits(suffix.substr(1, 4)) &&
           suffix[5] == '-' && digits(suffix.substr(6, 2)) && suffix[8] == '-' &&
           digits(suffix.substr(9, 2));
}

}  // namespace

const ModelPrice* PriceTable::find(std::string_view model) const {
    if (model.empty()) return nullptr;
    if (auto it = models.find(std::string(model)); it != models.end()) return &it->second;
    for (const auto& [name, price] : models) {
        if (name.size() < model.size() && model.substr(0, name.size()) == name &&
            dated_release(model.substr(name.size()))) {
            return &price;
        }
    }
    return nullptr;
}

const PriceTable& shipped_prices() {
    static const PriceTable table = parse_prices(nlohmann::json::parse(kShipped), "team's prices");
    return table;
}

PriceTable parse_prices(const nlohmann::json& doc, std::string_view where) {
    std::string w(where);
    if (!doc.is_object()) throw usage_error(w + ": a price table is a JSON object");
    auto models = doc.find("models");
    if (models == doc.end() || !models->is_object()) {
        throw usage_error(w +
                          ": no \"models\" object (NAME: {input, output, cacheRead, "
                          "cacheWrite}, US dollars per million tokens)");
    }
    PriceTable t;
    if (doc.contains("taken") && doc["taken"].is_string()) t.taken = doc["taken"];
    if (doc.contains("source") && doc["source"].is_string()) t.source = doc["source"];
    for (const auto& [name, m] : models->items()) {
        if (name.empty() || name.size() > 200)
            throw usage_error(w + ": a model name is empty or too long");
        std::string at = w + ", model \"" + name + "\"";
        if (!m.is_object()) throw usage_error(at + ": its prices are an object");
        ModelPrice p;
        p.input = price_field(m, "input", at);
        p.output = price_field(m, "output", at);
        p.cache_read = price_field(m, "cacheRead", at);
        p.cache_write = price_field(m, "cacheWrite", at);
        t.models[name] = p;
    }
    return t;
}

PriceTable prices_in_force(Store& store) {
    PriceTable t = shipped_prices();
    auto own = config_value(store, std::nullopt, "prices");
    if (!own) return t;
    auto doc = nlohmann::json::parse(*own, nullptr, false);
    try {
        PriceTable mine = parse_prices(doc, "the home's prices");
        for (auto& [name, p] : mine.models) t.models[name] = p;
        if (!mine.taken.empty()) t.taken = mine.taken;
        if (!mine.source.empty()) t.source = mine.source;
    } catch (const std::exception&) {
        // kept checked by `team config set`: never here
    }
    return t;
}

nlohmann::json to_json(const PriceTable& table) {
    nlohmann::json models = nlohmann::json::object();
    for (const auto& [name, p] : table.models) {
        models[name] = {{"input", p.input},
                        {"output", p.output},
                        {"cacheRead", p.cache_read},
                        {"cacheWrite", p.cache_write}};
    }
    return {{"taken", table.taken}, {"source", table.source}, {"models", models}};
}

std::optional<double> cost_of(const PriceTable& prices,
                              const std::map<std::string, ModelTokens>& models,
                              std::vector<std::string>* unknown) {
    double usd = 0;
    bool known = true;
    for (const auto& [name, t] : models) {
        if (t.total() == 0) continue;
        const ModelPrice* p = prices.find(name);
        if (!p) {
            known = false;
            if (unknown) unknown->push_back(name.empty() ? "(not named)" : name);
            continue;
        }
        usd +=
            (static_cast<double>(t.input) * p->input + static_cast<double>(t.output) * p->output +
             static_cast<double>(t.cache_read) * p->cache_read +
             static_cast<double>(t.cache_write) * p->cache_write) /
            1e6;
    }
    if (!known) return std::nullopt;
    return usd;
}

std::string check_prices_file(std::string_view key, std::string_view value) {
    std::string path(value);
    std::string where = std::string(key) + " " + quote(path);
    std::ifstream in(path, std::ios::binary);
    if (path.empty() || !in) throw usage_error(where + ": cannot be read (no such file?)");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) throw usage_error(where + ": cannot be read");
    std::string text = buffer.str();
    if (text.size() > (4u << 20)) throw usage_error(where + ": more than 4 MiB");
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded()) throw usage_error(where + ": not JSON");
    return to_json(parse_prices(doc, where)).dump();
}

}  // namespace team
