// The command line's face of the operations table (ops/operation.hpp): a command declared from
// its operation's entry (arguments, options, help), whose action only collects the values,
// invokes the operation and prints. The rules are the core's; what is left here is the command
// line's own: "-" for a text read from stdin, and how a person reads a result.
#pragma once

#include <functional>

#include "cli/context.hpp"
#include "ops/operation.hpp"

namespace CLI {
class App;
}

namespace team::cli {

// A person's view of a result that succeeded, or whose failure it reports in its own shape
// (it then throws the Error to print). With --json the document is printed instead.
using Printer = std::function<void(Context&, const ops::Result&)>;

// What a person sees of a waiting operation's progress events (ops::Progress).
using ProgressPrinter = std::function<void(Context&, const nlohmann::json& event)>;

// Declares `op` as a subcommand of `parent` named by the last of its command words. Returns the
// subcommand, for the command file's footer.
// The command line's own syntax, applied to the collected values before they go to the core
// (`team send --all TEXT` gives its text where a recipient would stand; `team logs` asks for
// plain text when this output has no colour).
using Adjust = std::function<void(const Context&, nlohmann::json& values)>;

CLI::App* add_operation(CLI::App& parent, const ops::Operation& op, Printer print,
                        ProgressPrinter progress = {}, Adjust adjust = {});

}  // namespace team::cli
