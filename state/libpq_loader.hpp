// libpq, opened on first use. state/libpq_loader.cpp defines each libpq function team calls,
// forwarding to libpq.so.5, which it opens (dlopen) when the first of them is called: a command
// on a SQLite store never loads libpq and the two dozen libraries it needs (linked, they cost
// every command 8.7 ms of start-up here). The PostgreSQL backend includes <libpq-fe.h> and calls
// libpq as usual.
#pragma once

namespace team {

// The address of libpq's function `name`. Throws StoreError(cannot_open) when libpq cannot be
// loaded (Debian: the package libpq5) or lacks it.
void* libpq_symbol(const char* name);

}  // namespace team
