// The top of the command line: global options, the commands, and the one error policy that
// turns every failure into the message, the JSON and the exit code of SPEC 1.4.
#pragma once

namespace team::cli {

int run(int argc, char** argv);

}  // namespace team::cli
