#include "team/agent_instructions.hpp"

namespace team {

std::string agent_instructions(const std::string& agent, const std::string& team) {
    std::string who;
    if (!agent.empty()) {
        who = "You are " + agent + ", an agent of the team " + (team.empty() ? "" : team + " ") +
              "run by `team`; the MCP server `team` gives you the team's tools. ";
    } else {
        who = "You work in a team of coding agents run by `team`, or lead it; the MCP server "
              "`team` gives you the team's tools, acting as the agent whose pane started it, "
              "else as the team's leader. ";
    }
    return who +
           "Your messages arrive in your team inbox: call inbox_read with unread: true between "
           "steps, and at once when a notice from [team] appears in your pane or a message is "
           "pushed to you (a message for you in the team inbox: run inbox_read). A message of "
           "type shutdown_request asks you to stop: answer it at once with shutdown_respond, "
           "either action \"approve\", then finish or abandon your current step and call "
           "shutdown_respond with action \"confirm\" (you are ended then), or action \"reject\" "
           "with a reason to keep working. Take work with task_claim (task_list shows what is "
           "open), finish it with task_done, and report to the leader with message_send.";
}

}  // namespace team
