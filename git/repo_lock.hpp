// The lock of one repository (SPEC 14): every git write of `team` in one repository (worktree
// add and removal, branch and snapshot refs, merges) runs under it, so 32 spawns at once never
// fight over git's own lock files (.git/config.lock, packed-refs.lock) and never leave an orphan
// branch. An flock(2) on <home>/locks/git-<key>.lock, the key a hash of the repository's common
// directory, so the kernel drops it when its holder dies; close-on-exec, so git never inherits
// it. Threads of one process exclude each other too (each lock opens the file anew).
#pragma once

#include <filesystem>

namespace team::git {

class RepoLock {
  public:
    // Blocks until the lock of the repository whose common directory is `common_dir` is ours.
    RepoLock(const std::filesystem::path& home, const std::filesystem::path& common_dir);
    ~RepoLock();
    RepoLock(RepoLock&& other) noexcept;
    RepoLock& operator=(RepoLock&&) = delete;
    RepoLock(const RepoLock&) = delete;
    RepoLock& operator=(const RepoLock&) = delete;

    static std::filesystem::path path(const std::filesystem::path& home,
                                      const std::filesystem::path& common_dir);

  private:
    int fd_;
};

}  // namespace team::git
