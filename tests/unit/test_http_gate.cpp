// The checks every request to team serve passes (http/gate.hpp), branch by branch, and the
// bound on waiting calls of its pool (http/pool.hpp), in-process: no socket, no server.
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include "base/cancel.hpp"
#include "http/gate.hpp"
#include "http/pool.hpp"

using namespace team::http;

namespace {

const std::string kToken(64, 'a');
const GateConfig kConfig{.token = kToken, .listen_host = "127.0.0.1", .any_host = false};
const std::string kBearer = "Bearer " + kToken;
const std::string kCookie = "other=1; team_token=" + kToken;

RequestHead head(std::string_view method, std::string_view target) {
    return {.method = method, .target = target, .host = "127.0.0.1:7733"};
}

std::string header(const Verdict& v, const std::string& name) {
    for (const auto& [k, value] : v.headers) {
        if (k == name) return value;
    }
    return "";
}

}  // namespace

TEST_CASE("gate: a Host that is not ours is 403 before anything else", "[http]") {
    auto r = head("GET", "/api/teams");
    r.host = "evil.example:7733";
    r.authorization = kBearer;
    auto v = check_request(r, kConfig);
    CHECK_FALSE(v.pass);
    CHECK(v.api);
    CHECK(v.answer.status == 403);
    CHECK(v.answer.body.find("host") != std::string::npos);
    // The page too; localhost and the listen address are ours; any host when listening on all.
    r.target = "/";
    CHECK(check_request(r, kConfig).answer.status == 403);
    r.host = "localhost:9000";
    CHECK(check_request(r, kConfig).pass);
    r.host = "evil.example";
    CHECK(check_request(r, {.token = kToken, .listen_host = "0.0.0.0", .any_host = true}).pass);
}

TEST_CASE("gate: the token in the page's address sets the cookie and redirects", "[http]") {
    auto v = check_request(head("GET", "/?token=" + kToken), kConfig);
    CHECK_FALSE(v.pass);
    CHECK(v.answer.status == 303);
    CHECK(header(v, "Location") == "/");
    CHECK(header(v, "Set-Cookie") ==
          "team_token=" + kToken + "; Path=/; HttpOnly; SameSite=Strict");
    // A wrong token, or a malformed query: 401 in plain text, no cookie.
    for (const char* target : {"/?token=nope", "/?token=%zz"}) {
        INFO(target);
        auto bad = check_request(head("GET", target), kConfig);
        CHECK(bad.answer.status == 401);
        CHECK(bad.answer.content_type.find("text/plain") == 0);
        CHECK(bad.headers.empty());
    }
}

TEST_CASE("gate: a token by Bearer or by cookie, else 401", "[http]") {
    auto r = head("GET", "/api/teams");
    auto none = check_request(r, kConfig);
    CHECK(none.answer.status == 401);
    CHECK(none.answer.content_type == "application/json");  // an API answer is JSON
    auto page = check_request(head("GET", "/app.js"), kConfig);
    CHECK(page.answer.status == 401);
    CHECK_FALSE(page.api);
    CHECK(page.answer.content_type.find("text/plain") == 0);

    r.authorization = kBearer;
    auto bearer = check_request(r, kConfig);
    CHECK(bearer.pass);
    CHECK(bearer.api);
    // (The head holds views: the strings they show must outlive the checks.)
    const std::string basic = "Basic " + kToken;  // another scheme
    r.authorization = basic;
    CHECK(check_request(r, kConfig).answer.status == 401);
    const std::string wrong = "Bearer " + std::string(64, 'b');
    r.authorization = wrong;
    CHECK(check_request(r, kConfig).answer.status == 401);
    // The cookie counts only without an Authorization header.
    r.cookie = kCookie;
    CHECK(check_request(r, kConfig).answer.status == 401);
    r.authorization = "";
    CHECK(check_request(r, kConfig).pass);
    r.cookie = "team_token=wrong";
    CHECK(check_request(r, kConfig).answer.status == 401);
}

TEST_CASE("gate: a change needs X-Team-CSRF: 1, a read does not", "[http]") {
    for (const char* method : {"POST", "PATCH", "DELETE", "PUT"}) {
        INFO(method);
        auto r = head(method, "/api/teams");
        r.cookie = kCookie;
        auto v = check_request(r, kConfig);
        CHECK(v.answer.status == 403);
        CHECK(v.answer.body.find("X-Team-CSRF") != std::string::npos);
        r.csrf = "0";
        CHECK(check_request(r, kConfig).answer.status == 403);
        r.csrf = "1";
        CHECK(check_request(r, kConfig).pass);
    }
    for (const char* method : {"GET", "HEAD", "OPTIONS"}) {
        INFO(method);
        auto r = head(method, "/api/teams");
        r.authorization = kBearer;
        CHECK(check_request(r, kConfig).pass);
    }
}

TEST_CASE("pool: waiting calls are bounded, the rest refused at once", "[http]") {
    int stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    REQUIRE(stop_fd >= 0);
    {
        Pool pool(1, 2, stop_fd, -1);
        std::promise<void> release;
        auto released = release.get_future().share();
        std::atomic<int> started{0}, ended{0};
        auto waiting = [&] {
            ++started;
            released.wait();
            ++ended;
        };
        CHECK(pool.post_waiting(waiting));
        CHECK(pool.post_waiting(waiting));
        CHECK_FALSE(pool.post_waiting(waiting));  // the bound: 2
        // A call that answers at once still runs meanwhile.
        std::promise<int> quick;
        pool.post([&] { quick.set_value(team::thread_cancel_fd()); });
        CHECK(quick.get_future().get() == stop_fd);  // its waits end when the server stops
        release.set_value();
        // Once the waits end, their threads take new ones.
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        bool admitted = false;
        while (!admitted && std::chrono::steady_clock::now() < deadline) {
            admitted = ended == 2 && pool.post_waiting(waiting);
            if (!admitted) std::this_thread::yield();
        }
        CHECK(admitted);
        while (admitted && ended < 3 && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::yield();  // the detached thread is done with this scope's values
        }
        pool.stop();
        CHECK_FALSE(pool.post_waiting(waiting));  // stopped: nothing more
    }
    ::close(stop_fd);
}

TEST_CASE("pool: two waiting calls posted at once each get a thread, even with one idle",
          "[http]") {
    // One idle waiting thread, then two calls that wait posted back to back, before it wakes:
    // each runs at once on a thread of its own (the second never waits behind the first's
    // whole wait, as a GET of an agent's logs did behind a waited prompt in team serve).
    // Repeated, since the idle thread may wake between the two posts.
    struct Calls {
        std::mutex mutex;
        std::condition_variable changed;
        int started = 0, ended = 0;
        bool release = false;
    };
    auto calls = std::make_shared<Calls>();  // the detached threads may outlive this scope
    auto waiting = [calls] {
        std::unique_lock lock(calls->mutex);
        ++calls->started;
        calls->changed.notify_all();
        calls->changed.wait(lock, [&] { return calls->release; });
        ++calls->ended;
        calls->changed.notify_all();
    };
    auto until = [&](std::unique_lock<std::mutex>& lock, const std::function<bool()>& done) {
        return calls->changed.wait_for(lock, std::chrono::seconds(10), done);
    };
    int stop_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    REQUIRE(stop_fd >= 0);
    {
        Pool pool(1, 8, stop_fd, -1);
        for (int round = 0; round < 50; ++round) {
            INFO("round " << round);
            {
                std::lock_guard lock(calls->mutex);
                calls->started = calls->ended = 0;
                calls->release = false;
            }
            REQUIRE(pool.post_waiting(waiting));
            REQUIRE(pool.post_waiting(waiting));
            std::unique_lock lock(calls->mutex);
            bool both = until(lock, [&] { return calls->started == 2; });
            calls->release = true;
            calls->changed.notify_all();
            REQUIRE(until(lock, [&] { return calls->ended == calls->started; }));
            REQUIRE(both);
        }
        pool.stop();
    }
    ::close(stop_fd);
}
