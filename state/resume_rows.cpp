#include "state/resume_rows.hpp"

#include <nlohmann/json.hpp>

#include "state/db.hpp"
#include "state/sql.hpp"

namespace team {

void insert_resume_row(Store& store, const ResumeRow& row) {
    Statement insert(store.db(), R"sql(
        INSERT INTO agent_resume (agent_id, preset, argv, conversation, conversation_id)
        VALUES (?, ?, ?, ?, ?)
    )sql");
    insert.bind(1, row.agent_id);
    bind_or_null(insert, 2, row.preset);
    insert.bind(3, nlohmann::json(row.argv).dump());
    bind_or_null(insert, 4, row.conversation);
    bind_or_null(insert, 5, row.conversation_id);
    insert.exec();
}

std::optional<ResumeRow> load_resume_row(Store& store, std::int64_t agent_id) {
    Statement s(store.db(), R"sql(
        SELECT preset, argv, conversation, conversation_id, resumes, resumed_at
        FROM agent_resume WHERE agent_id = ?
    )sql");
    s.bind(1, agent_id);
    if (!s.executeStep()) return std::nullopt;
    ResumeRow r;
    r.agent_id = agent_id;
    r.preset = column_or_null<std::string>(s.getColumn(0));
    auto argv = nlohmann::json::parse(s.getColumn(1).getString(), nullptr, false);
    if (argv.is_array()) {
        for (const auto& a : argv) {
            if (a.is_string()) r.argv.push_back(a.get<std::string>());
        }
    }
    r.conversation = column_or_null<std::string>(s.getColumn(2));
    r.conversation_id = column_or_null<std::string>(s.getColumn(3));
    r.resumes = s.getColumn(4).getInt();
    r.resumed_at = column_or_null<EpochMs>(s.getColumn(5));
    return r;
}

bool note_conversation_id(Store& store, std::int64_t agent_id, const std::string& id) {
    Statement up(store.db(), R"sql(
        UPDATE agent_resume SET conversation_id = ?
        WHERE agent_id = ? AND conversation IN ('claude', 'codex', 'gemini')
          AND (conversation_id IS NULL OR conversation_id <> ?)
    )sql");
    up.bind(1, id);
    up.bind(2, agent_id);
    up.bind(3, id);
    return up.exec() > 0;
}

void mark_resumed(Store& store, std::int64_t agent_id, const std::optional<std::string>& id,
                  EpochMs at) {
    Statement up(store.db(), R"sql(
        UPDATE agent_resume SET conversation_id = COALESCE(?, conversation_id),
                                resumes = resumes + 1, resumed_at = ?
        WHERE agent_id = ?
    )sql");
    bind_or_null(up, 1, id);
    up.bind(2, at);
    up.bind(3, agent_id);
    up.exec();
}

}  // namespace team
