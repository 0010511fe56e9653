#include "tasks/reassign.hpp"

namespace team::tasks {

std::vector<std::string> reassign_tasks(SQLite::Database&, std::int64_t, const std::string&,
                                        const std::optional<std::string>&) {
    return {};  // no task list yet (issue 5)
}

}  // namespace team::tasks
