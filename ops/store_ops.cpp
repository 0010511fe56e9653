// The store's operations. They open the store themselves, without the schema check every other
// operation's store makes (Core::store): the point of `check` and `migrate` is a store whose
// schema is missing or old.
#include "ops/store_ops.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "base/store_clock.hpp"
#include "state/pg_schema.hpp"
#include "state/schema.hpp"
#include "state/store.hpp"

namespace team::ops {

namespace {

using json = nlohmann::json;

const char* engine_name(const Store& store) {
    return store.engine() == Db::Engine::postgresql ? "postgresql" : "sqlite";
}

// The store's schema version: PostgreSQL's team_schema, SQLite's user_version.
int store_schema(Store& store) {
    if (store.engine() == Db::Engine::postgresql) return pg_schema_version(store.db());
    Statement version(store.db(), "PRAGMA user_version");
    version.executeStep();
    return version.getColumn(0).getInt();
}

Result check(Request& r) {
    auto home = r.core.ensure_home();
    auto started = std::chrono::steady_clock::now();
    Store store(home, resolve_store_url(home), false);
    double connect_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    // Five round trips of the smallest statement: the median is what a read pays on top of its
    // own work.
    std::vector<double> trips;
    for (int i = 0; i < 5; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        Statement one(store.db(), "SELECT 1");
        one.executeStep();
        trips.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
    }
    std::sort(trips.begin(), trips.end());
    int version = store_schema(store);
    std::string state = version == kSchemaVersion  ? "current"
                        : version == 0             ? "missing"
                        : version < kSchemaVersion ? "older"
                                                   : "newer";
    json doc = {{"engine", engine_name(store)},
                {"store", store.shown()},
                {"schema", {{"store", version}, {"team", kSchemaVersion}, {"state", state}}},
                {"connectMs", connect_ms},
                {"roundTripMs", trips[trips.size() / 2]}};
    if (store.engine() == Db::Engine::postgresql) {
        Statement server(store.db(), "SELECT current_setting('server_version')");
        if (server.executeStep()) doc["serverVersion"] = server.getColumn(0).getString();
        // How far the store's clock is from this machine's: what every time this home records
        // is moved by (base/store_clock.hpp; 0 within the measurement's error).
        doc["clockOffsetMs"] = store_clock_offset();
    }
    Result result{doc};
    if (state != "current") {
        result.exit_code = 1;
    }
    return result;
}

Result migrate(Request& r) {
    auto home = r.core.ensure_home();
    Store store(home, resolve_store_url(home), false);
    int from = store_schema(store);
    if (store.engine() == Db::Engine::postgresql) pg_migrate(store.db());
    // (A SQLite store is migrated whenever it is opened: nothing more to do.)
    return {{{"engine", engine_name(store)},
             {"store", store.shown()},
             {"from", from},
             {"to", store_schema(store)}}};
}

Result use(Request& r) {
    auto home = r.core.ensure_home();
    std::string url = r.args.string("url");
    if (url == "sqlite") url.clear();
    // It must open (and be current) before the home is moved to it.
    Store store(home, url);
    record_store_url(home, url);
    return {{{"engine", engine_name(store)}, {"store", store.shown()}}};
}

}  // namespace

const Operation store_check_op{
    .name = "store_check",
    .command = "store check",
    .tool = "store_check",
    .routes = {{"GET", "/api/store"}},
    .summary =
        "what store this home uses, whether its schema is this team's, and how fast it "
        "answers; exit 1 when the schema is missing, older or newer",
    .params = {},
    .access = Access::read,
    .scope = Scope::none,
    .body = check,
};

const Operation store_migrate_op{
    .name = "store_migrate",
    .command = "store migrate",
    .no_tool = "an administrator's step, run once per upgrade from a shell",
    .no_route = "an administrator's step, run once per upgrade from a shell",
    .summary =
        "create or upgrade the schema of this home's PostgreSQL store (a SQLite store "
        "is migrated when it is opened)",
    .params = {},
    .access = Access::write,
    .scope = Scope::none,
    .body = migrate,
};

const Operation store_use_op{
    .name = "store_use",
    .command = "store use",
    .no_tool = "moving a home to another store is an administrator's step",
    .no_route = "moving a home to another store is an administrator's step",
    .summary =
        "record the store this home uses in its config: a PostgreSQL connection string "
        "(postgresql://…; the password from ~/.pgpass, never here) or sqlite",
    .params = {{.name = "url",
                .help = "postgresql://[USER@]HOST[:PORT]/DB[?…] (a service: "
                        "postgresql:///?service=NAME), or sqlite",
                .placeholder = "URL",
                .required = true,
                .positional = true}},
    .access = Access::write,
    .scope = Scope::none,
    .body = use,
};

}  // namespace team::ops
