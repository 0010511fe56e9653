// Bringing agents back (SPEC 19): `team resume [A… | --all] [--dry-run]`. Each lost agent
// starts again under its own record (so its inbox, worktree, spending and activity stay its
// own), in its own worktree or cwd, with its conversation where its kind can resume one
// (Claude Code's and Gemini CLI's `--resume ID`, `codex resume ID`, ACP's `session/load`); the
// tasks it held come back to it if nobody has claimed them since, at a new epoch. An agent whose
// conversation cannot come back starts fresh, and the outcome says why.
//
// What it takes is recorded at spawn (state/resume_rows.hpp): its preset and command as asked,
// the names of its --env entries (their values are taken from the environment of whoever
// resumes), and its conversation's id, chosen at spawn (Claude Code, Gemini CLI) or learned from
// its reports (a hook's `session_id`; an ACP host's `sessionId`).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace team {

struct ResumeAsk {
    std::vector<std::string> names;  // these agents (a stopped one too); else, with `all`,
    bool all = false;                // every agent the team lost
    bool dry_run = false;            // the plan only
};

// What a resume did (or, with --dry-run, would do) with one agent.
struct ResumeOutcome {
    std::string name;
    // resumed (its conversation with it), fresh (started without it: `why`), skipped (not
    // started: `why`), failed (its start failed: `why`), or elsewhere: it lives on another home
    // of the store (`home_id`), whose own team resumes it (ops/resume_ops.cpp).
    std::string outcome;
    std::optional<std::string> why;
    std::optional<std::string> conversation;     // claude, codex, gemini, acp
    std::optional<std::string> conversation_id;  // the one it resumed, or starts with
    std::vector<std::string> tasks;              // the tasks it took back
    std::optional<std::string> worktree;         // the worktree it starts in
    std::vector<std::string> command;            // the command it starts with
    std::optional<std::string> home_id;
    nlohmann::json agent = nullptr;   // its record as it runs now (SPEC 4's agent JSON)
    std::optional<std::string> host;  // the host that resumed it (set by ops/)
};

nlohmann::json to_json(const ResumeOutcome& outcome);

}  // namespace team
