#include "cli/app.hpp"

int main(int argc, char** argv) {
    return team::cli::run(argc, argv);
}
