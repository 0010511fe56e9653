#include "bench/load_mix.hpp"
