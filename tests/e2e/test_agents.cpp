// team spawn / agents / attach / logs / prompt on real tmux (SPEC 3.1 and 4).
#include <catch2/catch.hpp>

#include "tests/support/marker.hpp"
#include "tests/support/process.hpp"
