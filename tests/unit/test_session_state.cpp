// sessions/session_state: reading bash's declarations and snapshots, what a command changed, and
// how changes of commands that ran at once are put together.
#include "sessions/session_state.hpp"

#include <catch2/catch.hpp>

#include "tests/support/process.hpp"

using namespace team::sessions;

namespace {

// What bash itself prints for `declare -p NAME` after running `setup`.
std::string bash_declare(const std::string& setup, const std::string& name,
                         const std::string& locale = "C") {
    team::test::Child bash(
        {"/bin/bash", "--noprofile", "--norc", "-c", setup + "\ndeclare -p " + name},
        team::test::clean_env({{"LC_ALL", locale}}));
    auto r = bash.wait();
    REQUIRE(r.exit_code == 0);
    return r.out;
}

ShellSnapshot snapshot(std::map<std::string, std::string> vars, std::string cwd = "/") {
    ShellSnapshot s;
    s.cwd = std::move(cwd);
    for (const auto& [name, value] : vars)
        s.vars[name] = ShellVariable{"x", "declare -x " + name + "=\"" + value + "\""};
    return s;
}

}  // namespace

TEST_CASE("bash's declarations are split and their values read back, whatever they hold",
          "[session_state]") {
    const std::vector<std::string> values = {"plain",
                                             "two words",
                                             "line\nbreak\n",
                                             "q'uote \"dq\" `bt` \\ $x $(id)",
                                             "tab\there",
                                             "\x01\x02\x1b",
                                             "héllo 中文 🎉",
                                             "",
                                             "declare -x FAKE=\"1\"\ndeclare -- more",
                                             "]) ( [x]=y"};
    for (const auto& locale : {"C", "C.UTF-8"}) {
        for (const auto& v : values) {
            INFO("locale " << locale << " value " << v);
            std::string dump = bash_declare("v=" + bash_quote(v), "v", locale) +
                               bash_declare("export w=" + bash_quote(v), "w", locale);
            auto vars = parse_declarations(dump);
            REQUIRE(vars.size() == 2);
            CHECK(vars["v"].attrs == "");
            CHECK(vars["w"].attrs == "x");
            CHECK(declared_value(vars["v"]) == v);
            CHECK(declared_value(vars["w"]) == v);
            // The declaration is exactly what bash printed (without its newline): eval gives
            // the same value back.
            CHECK(vars["v"].decl + "\n" == bash_declare("v=" + bash_quote(v), "v", locale));
        }
    }
}

TEST_CASE("arrays, associative arrays, integers and names without values are parsed whole",
          "[session_state]") {
    std::string dump = bash_declare(
        "a=(1 'two words' $'x\\ny' ')'); declare -A m=([k]=v ['a b']=c [$'n\\nl']=z [']']=q);"
        " declare -i i=4; declare u; declare -r r=1; declare -n n=r",
        "a m i u r n");
    auto vars = parse_declarations(dump);
    REQUIRE(vars.size() == 6);
    CHECK(vars["a"].attrs == "a");
    CHECK(vars["m"].attrs == "A");
    CHECK(vars["i"].attrs == "i");
    CHECK(vars["r"].attrs == "r");
    CHECK(vars["n"].attrs == "n");
    CHECK_FALSE(declared_value(vars["a"]));
    CHECK_FALSE(declared_value(vars["m"]));
    CHECK_FALSE(declared_value(vars["u"]));
    CHECK(declared_value(vars["i"]) == "4");
    CHECK(declared_value(vars["n"]) == "r");
    // Each declaration evaluates back to what bash had.
    for (const auto& name : {"a", "m"}) {
        std::string again = bash_declare(vars[name].decl, name);
        CHECK(again == vars[name].decl + "\n");
    }
}

TEST_CASE("a capture cut short keeps only its complete snapshots", "[session_state]") {
    auto tokens = [](std::initializer_list<std::string> list) {
        std::string out;
        for (const auto& t : list) out += t + std::string(1, '\0');
        return out;
    };
    std::string before = tokens({"snap",  "before",  "status", "0",
                                 "cwd",   "/a",      "opts",   "errexit:hashall",
                                 "shopt", "extglob", "vars",   "declare -x A=\"1\"\n",
                                 "fn",    "f",       "-fx",    "f () \n{ \n    :\n}",
                                 "alias", "ll",      "ls -l",  "end"});
    std::string after = tokens({"snap", "after", "status", "3", "cwd", "/b", "opts", "hashall",
                                "shopt", "", "vars", "", "end"});
    auto both = parse_capture(before + after);
    REQUIRE(both.before);
    REQUIRE(both.after);
    CHECK(both.before->cwd == "/a");
    CHECK(both.before->options_on == std::set<std::string>{"errexit", "hashall"});
    CHECK(both.before->shopt_on == std::set<std::string>{"extglob"});
    CHECK(both.before->vars.at("A").decl == "declare -x A=\"1\"");
    CHECK(both.before->functions.at("f").exported);
    CHECK(both.before->aliases.at("ll") == "ls -l");
    CHECK(both.after->status == 3);
    CHECK(both.after->cwd == "/b");
    CHECK(both.after->vars.empty());

    for (std::size_t cut : {after.size() - 1, after.size() - 5, std::size_t(10), std::size_t(0)}) {
        auto partial = parse_capture(before + after.substr(0, cut));
        CHECK(partial.before);
        CHECK_FALSE(partial.after);
    }
    CHECK_FALSE(parse_capture(before.substr(0, 50)).before);
}

TEST_CASE("diff finds what one command changed and nothing else", "[session_state]") {
    SessionState restored;
    auto before = snapshot({{"KEEP", "1"}, {"CHANGE", "old"}, {"GONE", "x"}, {"RANDOM", "5"}});
    before.functions["f"] = {"f () { :; }", false};
    before.functions["__team_snap"] = {"...", false};
    before.aliases["a"] = "echo a";
    before.options_on = {"hashall"};
    before.shopt_on = {"extglob"};
    auto after = snapshot({{"KEEP", "1"},
                           {"CHANGE", "new"},
                           {"NEW", "n"},
                           {"RANDOM", "77"},
                           {"TEAM_AGENT_ID", "x@y"},
                           {"__team_st", "0"}},
                          "/elsewhere");
    after.functions["g"] = {"g () { :; }", true};
    after.aliases["b"] = "echo b";
    after.options_on = {"hashall", "errexit"};
    after.shopt_on = {};

    auto c = diff(before, after, restored);
    CHECK(c.cwd == "/elsewhere");
    CHECK(c.set_vars.size() == 2);
    CHECK(c.set_vars.count("CHANGE"));
    CHECK(c.set_vars.count("NEW"));
    CHECK(c.unset_vars == std::set<std::string>{"GONE"});
    CHECK(c.set_functions.count("g"));
    CHECK(c.unset_functions == std::set<std::string>{"f"});
    CHECK(c.set_aliases.at("b") == "echo b");
    CHECK(c.unset_aliases == std::set<std::string>{"a"});
    CHECK(c.options == std::map<std::string, bool>{{"errexit", true}});
    CHECK(c.shopt == std::map<std::string, bool>{{"extglob", false}});

    // Options restored inside the eval count as what the command started from.
    restored.options["errexit"] = true;
    CHECK(diff(before, after, restored).options.empty());

    CHECK(diff(before, before, {}).empty());
}

TEST_CASE("changes of commands that ran at once merge per item, the last applied winning",
          "[session_state]") {
    SessionState state;
    state.cwd = "/start";
    state.vars["SHARED"] = {"x", "declare -x SHARED=\"start\""};

    // Both started from `state`; A ends first, B last.
    auto base = snapshot({{"SHARED", "start"}}, "/start");
    auto a_after = snapshot({{"SHARED", "a"}, {"A", "1"}}, "/a");
    auto b_after = snapshot({{"SHARED", "b"}, {"B", "1"}}, "/start");
    b_after.functions["bf"] = {"bf () { :; }", false};

    SessionState now = state;
    apply(now, diff(base, a_after, state));
    apply(now, diff(base, b_after, state));
    CHECK(now.cwd == "/a");  // B did not move
    CHECK(now.vars.at("SHARED").decl == "declare -x SHARED=\"b\"");
    CHECK(now.vars.count("A"));
    CHECK(now.vars.count("B"));
    CHECK(now.functions.count("bf"));

    // An unset is remembered (the variable may come back from a caller's environment), and a
    // later set ends it.
    apply(now, diff(snapshot({{"A", "1"}}), snapshot({}), now));
    CHECK_FALSE(now.vars.count("A"));
    CHECK(now.unset.count("A"));
    apply(now, diff(snapshot({}), snapshot({{"A", "2"}}), now));
    CHECK(now.vars.count("A"));
    CHECK_FALSE(now.unset.count("A"));

    // The stored form round-trips.
    CHECK(session_state_from_json(to_json(now)) == now);
}

TEST_CASE("the restore script quotes everything it is given", "[session_state]") {
    CHECK(bash_quote("it's") == R"('it'\''s')");
    CHECK(bash_quote("") == "''");
    SessionState state;
    state.vars["V"] = {"x", "declare -x V=\"1\""};
    state.unset = {"GONE"};
    state.aliases["ll"] = "ls -l 'x'";
    state.options["errexit"] = true;
    state.shopt["extglob"] = true;
    RestoreScript how;
    how.command = "echo 'hi'; $(rm -rf nothing)";
    std::string script = restore_script(state, how);
    CHECK_THAT(script, Catch::Contains("declare -x V=\"1\"\n"));
    CHECK_THAT(script, Catch::Contains("builtin unset -v -- 'GONE'\n"));
    CHECK_THAT(script, Catch::Contains(R"(builtin alias -- 'll=ls -l '\''x'\''')"));
    CHECK_THAT(script, Catch::Contains("builtin shopt -s extglob\n"));
    // The command is the script's end, as given, after the options.
    CHECK_THAT(script, Catch::EndsWith("builtin set -o errexit; echo 'hi'; $(rm -rf nothing)\n"));
    CHECK_THAT(script, !Catch::Contains("__team_snap"));  // no snapshots asked for
}
