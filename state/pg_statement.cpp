// A PostgreSQL statement: parameters bound as text, rows read in SQLite's terms (see
// pg_statement.hpp).
#include "state/pg_statement.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "state/pg_text.hpp"

namespace team {

namespace {

using Kind = StoreError::Kind;

class PgStatement final : public StatementImpl {
  public:
    PgStatement(PgConnection& db, std::string_view sql);

    void bind_int64(int index, std::int64_t value) override { set(index, std::to_string(value)); }
    void bind_double(int index, double value) override;
    void bind_text(int index, std::string_view value) override;
    void bind_null(int index) override { set(index, std::nullopt); }
    bool step() override;
    int exec() override;
    void reset() override {
        result_.reset();
        row_ = -1;
    }
    int column_count() const override;
    bool is_null(int index) const override {
        return PQgetisnull(result_.get(), row_, check(index));
    }
    std::int64_t int64(int index) const override;
    double real(int index) const override;
    std::string text(int index) const override {
        if (is_null(index)) return "";
        return std::string(PQgetvalue(result_.get(), row_, index),
                           static_cast<std::size_t>(PQgetlength(result_.get(), row_, index)));
    }

  private:
    void set(int index, std::optional<std::string> value);
    void run();
    int check(int index) const;
    [[noreturn]] void not_a_number(int index) const;

    PgConnection& db_;
    std::string sql_;  // translated
    std::vector<std::optional<std::string>> values_;
    PgResult result_{nullptr, &PQclear};
    int row_ = -1;
};

PgStatement::PgStatement(PgConnection& db, std::string_view sql) : db_(db) {
    int parameters = 0;
    sql_ = pg_translate_parameters(sql, &parameters);
    values_.resize(static_cast<std::size_t>(parameters));
}

void PgStatement::set(int index, std::optional<std::string> value) {
    if (index < 1 || index > static_cast<int>(values_.size())) {
        throw StoreError(Kind::other,
                         "no parameter ?" + std::to_string(index) + " in " + quote(sql_));
    }
    values_[static_cast<std::size_t>(index - 1)] = std::move(value);
}

void PgStatement::bind_double(int index, double value) {
    if (std::isnan(value)) return set(index, "NaN");
    if (std::isinf(value)) return set(index, value > 0 ? "Infinity" : "-Infinity");
    char buffer[32];
    auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;  // shortest exact
    set(index, std::string(buffer, end));
}

void PgStatement::bind_text(int index, std::string_view value) {
    if (value.find('\0') != std::string_view::npos) {
        throw StoreError(Kind::other, "cannot store text with a NUL byte in " + db_.name() +
                                          ": postgresql has no such text");
    }
    set(index, std::string(value));
}

void PgStatement::run() {
    std::vector<const char*> values;
    values.reserve(values_.size());
    for (const auto& value : values_) values.push_back(value ? value->c_str() : nullptr);
    row_ = -1;
    result_.reset();
    result_ = db_.run(sql_, values);
}

bool PgStatement::step() {
    if (!result_) run();
    int rows = PQntuples(result_.get());
    if (row_ < rows) ++row_;
    return row_ < rows;
}

int PgStatement::exec() {
    run();
    row_ = PQntuples(result_.get());  // no current row, as after SQLite's exec
    return std::atoi(PQcmdTuples(result_.get()));
}

int PgStatement::column_count() const {
    if (result_) return PQnfields(result_.get());
    return db_.columns(sql_, static_cast<int>(values_.size()));
}

int PgStatement::check(int index) const {
    if (!result_ || row_ < 0 || row_ >= PQntuples(result_.get())) {
        throw StoreError(Kind::other, "no current row to read column " + std::to_string(index) +
                                          " of " + quote(sql_) + " from");
    }
    if (index < 0 || index >= PQnfields(result_.get())) {
        throw StoreError(Kind::other, "no column " + std::to_string(index) + " in " + quote(sql_));
    }
    return index;
}

void PgStatement::not_a_number(int index) const {
    throw StoreError(Kind::other, "column " + std::to_string(index) + " of " + quote(sql_) +
                                      " holds " + quote(text(index)) + ", not a number");
}

// NULL reads as 0, as in SQLite; a boolean as 1 or 0; a numeric with a fraction truncated.
std::int64_t PgStatement::int64(int index) const {
    if (is_null(index)) return 0;
    const char* value = PQgetvalue(result_.get(), row_, index);
    const char* end = value + PQgetlength(result_.get(), row_, index);
    if (value[0] == 't' && value + 1 == end) return 1;
    if (value[0] == 'f' && value + 1 == end) return 0;
    std::int64_t out = 0;
    auto [ptr, ec] = std::from_chars(value, end, out);
    if (ec == std::errc() && ptr == end) return out;
    if (ec == std::errc() && (*ptr == '.' || *ptr == 'e' || *ptr == 'E')) {
        return static_cast<std::int64_t>(real(index));
    }
    not_a_number(index);
}

double PgStatement::real(int index) const {
    if (is_null(index)) return 0.0;
    const char* value = PQgetvalue(result_.get(), row_, index);
    if (value[0] == 't' && value[1] == '\0') return 1.0;
    if (value[0] == 'f' && value[1] == '\0') return 0.0;
    char* end = nullptr;
    double out = std::strtod(value, &end);
    if (end == value || *end != '\0') not_a_number(index);
    return out;
}

}  // namespace

std::unique_ptr<StatementImpl> make_pg_statement(PgConnection& connection, std::string_view sql) {
    return std::make_unique<PgStatement>(connection, sql);
}

}  // namespace team
