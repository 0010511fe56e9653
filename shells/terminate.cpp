// SPEC 13's Execution Termination over background shells: `shell kill` with SIGINT, 5 s of
// grace and force, answered as the seeds' terminate endpoint answers. One rule for ending a
// shell (Shells::end_tree), so a terminate meets the same races as a kill: a shell still
// starting is waited for and ended, one that ends by itself meanwhile is reported as it ended,
// and the supervisor's record of a shell ended on request is "killed" whatever its exit code.
#include <signal.h>

#include "proc/signals.hpp"
#include "shells/shells.hpp"

namespace team::shells {

std::optional<int> returncode_of(const ShellRecord& shell) {
    if (shell.exit_code) return shell.exit_code;
    if (shell.signal) return -proc::parse_signal(*shell.signal, "signal", false);
    return std::nullopt;
}

Termination Shells::terminate(const std::string& id, const std::string& actor) {
    Termination t;
    KillResult kill = end_tree(id, SIGINT, kTerminateGrace, true, actor, nullptr);
    t.shell = kill.shell;
    t.returncode = returncode_of(kill.shell);
    // Ended by this request: its supervisor saw the request and recorded "killed". Any other
    // end (completed, failed, timed_out, or killed before we asked) came first.
    bool ours = kill.signal_sent != "none" &&
                (kill.shell.status == ShellStatus::killed || kill.shell.running());
    t.status = ours ? "terminated" : "already_finished";
    if (!kill.success || kill.shell.running()) t.error = kill.error;
    if (kill.signal_sent != "none") {
        records_.log_cancelled(
            kill.shell, clock_.now(), actor,
            {{"execution_id", id},
             {"status", t.status},
             {"returncode", t.returncode ? nlohmann::json(*t.returncode) : nlohmann::json(nullptr)},
             {"signal", "SIGINT"}});
    }
    return t;
}

}  // namespace team::shells
