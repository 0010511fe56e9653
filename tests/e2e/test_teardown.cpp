// Placeholder: filled in by the tests of issue 6.
#include <catch2/catch.hpp>
