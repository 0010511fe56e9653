#include "git/repository.hpp"

#include <system_error>

namespace team::git {

namespace fs = std::filesystem;

std::string_view kind_name(GitErrorKind kind) {
    switch (kind) {
        case GitErrorKind::no_repository: return "no_repository";
        case GitErrorKind::no_commit: return "no_commit";
        case GitErrorKind::bad_ref: return "bad_ref";
        case GitErrorKind::bad_branch: return "bad_branch";
        case GitErrorKind::branch_exists: return "branch_exists";
        case GitErrorKind::branch_checked_out: return "branch_checked_out";
        case GitErrorKind::path_taken: return "path_taken";
        case GitErrorKind::dirty: return "dirty";
        case GitErrorKind::conflicts: return "conflicts";
        case GitErrorKind::not_mergeable: return "not_mergeable";
        case GitErrorKind::missing: return "missing";
        case GitErrorKind::git_failed: return "git_failed";
    }
    return "git_failed";
}

GitResult git_run(Git& git, const fs::path& cwd, std::vector<std::string> args) {
    return git.run({.args = std::move(args), .cwd = cwd});
}

GitError git_failure(const std::string& what, const GitResult& r) {
    std::string why = first_line(r.err);
    if (why.empty()) why = "git exited " + std::to_string(r.exit_code);
    return GitError(ErrorCode::failed, GitErrorKind::git_failed, what + ": " + why);
}

std::string git_out(Git& git, const fs::path& cwd, std::vector<std::string> args,
                    const std::string& what) {
    GitResult r = git_run(git, cwd, std::move(args));
    if (!r.ok()) throw git_failure(what, r);
    return r.out;
}

std::vector<std::string> read_args(std::vector<std::string> args) {
    // (Built anew rather than inserted at the front: GCC 12 warns falsely on the insert.)
    std::vector<std::string> out;
    out.reserve(args.size() + 1);
    out.emplace_back("--no-optional-locks");
    for (auto& a : args) out.push_back(std::move(a));
    return out;
}

std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

std::vector<std::string> split_z(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\0', start);
        if (end == std::string::npos) end = text.size();
        out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

Repository resolve_repository(Git& git, const fs::path& path) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
        throw not_found("no directory " + quote(path.string()));
    }
    GitResult r = git_run(git, path,
                          {"rev-parse", "--path-format=absolute", "--git-common-dir",
                           "--is-bare-repository", "--show-toplevel"});
    if (!r.ok() && r.err.find("not a git repository") != std::string::npos) {
        throw GitError(ErrorCode::usage, GitErrorKind::no_repository,
                       quote(path.string()) + " is in no git repository");
    }
    std::vector<std::string> lines = split_lines(r.out);
    bool bare = lines.size() >= 2 && lines[1] == "true";
    if (!bare && (!r.ok() || lines.size() < 3)) {
        throw git_failure("cannot read the repository at " + quote(path.string()), r);
    }
    Repository repo;
    repo.git = &git;
    repo.common_dir = fs::weakly_canonical(lines[0]);
    // The main checkout is the common directory's parent when that is `.git`: --show-toplevel
    // in a linked worktree names the linked one.
    if (!bare) {
        repo.main_checkout = repo.common_dir.filename() == ".git"
                                 ? repo.common_dir.parent_path()
                                 : fs::weakly_canonical(lines[2]);
    }
    return repo;
}

bool branch_exists(const Repository& repo, const std::string& branch) {
    return git_run(*repo.git, repo.common_dir,
                   {"show-ref", "--verify", "--quiet", "refs/heads/" + branch})
        .ok();
}

std::string commit_of(const Repository& repo, const std::string& ref) {
    GitResult r = git_run(*repo.git, repo.common_dir,
                          {"rev-parse", "--verify", "--quiet", "--end-of-options", ref + "^{commit}"});
    return r.ok() ? first_line(r.out) : "";
}

Base resolve_base(const Repository& repo, const std::string& ref) {
    fs::path where = repo.main_checkout.empty() ? repo.common_dir : repo.main_checkout;
    Base base;
    std::string wanted = ref.empty() ? "HEAD" : ref;
    GitResult r = git_run(*repo.git, where,
                          {"rev-parse", "--verify", "--quiet", "--end-of-options", wanted + "^{commit}"});
    if (!r.ok()) {
        GitResult any = git_run(*repo.git, repo.common_dir, {"rev-list", "-n", "1", "--all"});
        if (any.ok() && any.out.empty()) {
            throw GitError(ErrorCode::refused, GitErrorKind::no_commit,
                           "the repository " + quote(repo.common_dir.parent_path().string()) +
                               " has no commit yet: commit something first");
        }
        throw GitError(ErrorCode::not_found, GitErrorKind::bad_ref,
                       "no commit named " + quote(wanted) + " in " + quote(repo.common_dir.string()));
    }
    base.commit = first_line(r.out);
    if (ref.empty() || ref == "HEAD") {
        GitResult sym = git_run(*repo.git, where, {"symbolic-ref", "--quiet", "--short", "HEAD"});
        base.name = sym.ok() ? first_line(sym.out) : "";
    } else {
        base.name = ref;
    }
    return base;
}

}  // namespace team::git
