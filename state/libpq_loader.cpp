// Generated once from /usr/include/postgresql/libpq-fe.h (libpq 15) for the functions team calls;
// add a function here when the backend starts to call it (the link fails until then: libpq
// itself is not linked). See state/libpq_loader.hpp.
#include "state/libpq_loader.hpp"

#include <dlfcn.h>
#include <libpq-fe.h>

#include <mutex>
#include <string>

#include "state/db.hpp"

namespace team {

void* libpq_symbol(const char* name) {
    static void* library = nullptr;
    static std::string error;
    static std::once_flag opened;
    std::call_once(opened, [] {
        library = ::dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
        if (!library) error = ::dlerror();
    });
    if (!library) {
        throw StoreError(StoreError::Kind::cannot_open,
                         "a PostgreSQL store needs libpq, which cannot be loaded (Debian: sudo apt "
                         "install libpq5): " +
                             error);
    }
    void* symbol = ::dlsym(library, name);
    if (!symbol) {
        throw StoreError(StoreError::Kind::cannot_open, std::string("the libpq found lacks ") +
                                                            name + ": install libpq5 15 or newer");
    }
    return symbol;
}

}  // namespace team

// clang-format off
PGconn * PQconnectdbParams(const char *const *keywords, const char *const *values, int expand_dbname) {
    static auto* fn = reinterpret_cast<decltype(&PQconnectdbParams)>(team::libpq_symbol("PQconnectdbParams"));
    return fn(keywords, values, expand_dbname);
}

void PQfinish(PGconn *conn) {
    static auto* fn = reinterpret_cast<decltype(&PQfinish)>(team::libpq_symbol("PQfinish"));
    fn(conn);
}

void PQreset(PGconn *conn) {
    static auto* fn = reinterpret_cast<decltype(&PQreset)>(team::libpq_symbol("PQreset"));
    fn(conn);
}

ConnStatusType PQstatus(const PGconn *conn) {
    static auto* fn = reinterpret_cast<decltype(&PQstatus)>(team::libpq_symbol("PQstatus"));
    return fn(conn);
}

PGTransactionStatusType PQtransactionStatus(const PGconn *conn) {
    static auto* fn = reinterpret_cast<decltype(&PQtransactionStatus)>(team::libpq_symbol("PQtransactionStatus"));
    return fn(conn);
}

char * PQerrorMessage(const PGconn *conn) {
    static auto* fn = reinterpret_cast<decltype(&PQerrorMessage)>(team::libpq_symbol("PQerrorMessage"));
    return fn(conn);
}

int PQsocket(const PGconn *conn) {
    static auto* fn = reinterpret_cast<decltype(&PQsocket)>(team::libpq_symbol("PQsocket"));
    return fn(conn);
}

int PQserverVersion(const PGconn *conn) {
    static auto* fn = reinterpret_cast<decltype(&PQserverVersion)>(team::libpq_symbol("PQserverVersion"));
    return fn(conn);
}

PQnoticeProcessor PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg) {
    static auto* fn = reinterpret_cast<decltype(&PQsetNoticeProcessor)>(team::libpq_symbol("PQsetNoticeProcessor"));
    return fn(conn, proc, arg);
}

PQnoticeReceiver PQsetNoticeReceiver(PGconn *conn, PQnoticeReceiver proc, void *arg) {
    static auto* fn = reinterpret_cast<decltype(&PQsetNoticeReceiver)>(team::libpq_symbol("PQsetNoticeReceiver"));
    return fn(conn, proc, arg);
}

PGresult * PQexec(PGconn *conn, const char *query) {
    static auto* fn = reinterpret_cast<decltype(&PQexec)>(team::libpq_symbol("PQexec"));
    return fn(conn, query);
}

PGresult * PQexecParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat) {
    static auto* fn = reinterpret_cast<decltype(&PQexecParams)>(team::libpq_symbol("PQexecParams"));
    return fn(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats, resultFormat);
}

PGresult * PQprepare(PGconn *conn, const char *stmtName, const char *query, int nParams, const Oid *paramTypes) {
    static auto* fn = reinterpret_cast<decltype(&PQprepare)>(team::libpq_symbol("PQprepare"));
    return fn(conn, stmtName, query, nParams, paramTypes);
}

PGresult * PQexecPrepared(PGconn *conn, const char *stmtName, int nParams, const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat) {
    static auto* fn = reinterpret_cast<decltype(&PQexecPrepared)>(team::libpq_symbol("PQexecPrepared"));
    return fn(conn, stmtName, nParams, paramValues, paramLengths, paramFormats, resultFormat);
}

int PQconsumeInput(PGconn *conn) {
    static auto* fn = reinterpret_cast<decltype(&PQconsumeInput)>(team::libpq_symbol("PQconsumeInput"));
    return fn(conn);
}

PGnotify * PQnotifies(PGconn *conn) {
    static auto* fn = reinterpret_cast<decltype(&PQnotifies)>(team::libpq_symbol("PQnotifies"));
    return fn(conn);
}

int PQsetnonblocking(PGconn *conn, int arg) {
    static auto* fn = reinterpret_cast<decltype(&PQsetnonblocking)>(team::libpq_symbol("PQsetnonblocking"));
    return fn(conn, arg);
}

ExecStatusType PQresultStatus(const PGresult *res) {
    static auto* fn = reinterpret_cast<decltype(&PQresultStatus)>(team::libpq_symbol("PQresultStatus"));
    return fn(res);
}

char * PQresultErrorMessage(const PGresult *res) {
    static auto* fn = reinterpret_cast<decltype(&PQresultErrorMessage)>(team::libpq_symbol("PQresultErrorMessage"));
    return fn(res);
}

char * PQresultErrorField(const PGresult *res, int fieldcode) {
    static auto* fn = reinterpret_cast<decltype(&PQresultErrorField)>(team::libpq_symbol("PQresultErrorField"));
    return fn(res, fieldcode);
}

int PQntuples(const PGresult *res) {
    static auto* fn = reinterpret_cast<decltype(&PQntuples)>(team::libpq_symbol("PQntuples"));
    return fn(res);
}

int PQnfields(const PGresult *res) {
    static auto* fn = reinterpret_cast<decltype(&PQnfields)>(team::libpq_symbol("PQnfields"));
    return fn(res);
}

char * PQcmdTuples(PGresult *res) {
    static auto* fn = reinterpret_cast<decltype(&PQcmdTuples)>(team::libpq_symbol("PQcmdTuples"));
    return fn(res);
}

char * PQgetvalue(const PGresult *res, int tup_num, int field_num) {
    static auto* fn = reinterpret_cast<decltype(&PQgetvalue)>(team::libpq_symbol("PQgetvalue"));
    return fn(res, tup_num, field_num);
}

int PQgetlength(const PGresult *res, int tup_num, int field_num) {
    static auto* fn = reinterpret_cast<decltype(&PQgetlength)>(team::libpq_symbol("PQgetlength"));
    return fn(res, tup_num, field_num);
}

int PQgetisnull(const PGresult *res, int tup_num, int field_num) {
    static auto* fn = reinterpret_cast<decltype(&PQgetisnull)>(team::libpq_symbol("PQgetisnull"));
    return fn(res, tup_num, field_num);
}

void PQclear(PGresult *res) {
    static auto* fn = reinterpret_cast<decltype(&PQclear)>(team::libpq_symbol("PQclear"));
    fn(res);
}

void PQfreemem(void *ptr) {
    static auto* fn = reinterpret_cast<decltype(&PQfreemem)>(team::libpq_symbol("PQfreemem"));
    fn(ptr);
}

int PQlibVersion() {
    static auto* fn = reinterpret_cast<decltype(&PQlibVersion)>(team::libpq_symbol("PQlibVersion"));
    return fn();
}

PQconninfoOption * PQconninfoParse(const char *conninfo, char **errmsg) {
    static auto* fn = reinterpret_cast<decltype(&PQconninfoParse)>(team::libpq_symbol("PQconninfoParse"));
    return fn(conninfo, errmsg);
}

void PQconninfoFree(PQconninfoOption *connOptions) {
    static auto* fn = reinterpret_cast<decltype(&PQconninfoFree)>(team::libpq_symbol("PQconninfoFree"));
    fn(connOptions);
}

PGresult * PQdescribePrepared(PGconn *conn, const char *stmt) {
    static auto* fn = reinterpret_cast<decltype(&PQdescribePrepared)>(team::libpq_symbol("PQdescribePrepared"));
    return fn(conn, stmt);
}

// clang-format on
