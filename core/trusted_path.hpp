#pragma once
// Whom mqajit trusts with the files it loads back (compiled kernels, the user tuning database):
// this process's user, root, and, when configured on purpose (MQAJIT_CACHE_GROUP), the members of
// one group. A file is trusted when one of them owns it and nobody else can write it, and a folder
// when, besides, nobody else can change any folder above it: a folder others may write is only
// passed through when it is sticky (like /tmp, where each user can remove only their own names),
// and never holds the files themselves. docs/settings.md has the threat model.

#include <sys/stat.h>
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace mqajit {

struct TrustPolicy {
    uid_t uid = 0;                     // the effective user
    std::optional<gid_t> group;        // the shared group, when configured
    std::string group_name;            // for messages

    // This process's policy: its effective uid and, if `group_setting` (a group name or number) is
    // given, that group. Throws Error(invalid_argument) for a group that does not exist or that
    // this process is not a member of.
    static TrustPolicy for_process(const std::optional<std::string>& group_setting);

    bool trusts_owner(const struct stat& info) const;
    // Why a file or folder that lives in a trusted folder must not be used: another owner, or
    // writable by others. nullopt when it can be used. `name` starts the message.
    std::optional<std::string> entry_problem(const struct stat& info, const std::string& name) const;
    // Modes for what mqajit creates: private (0700 / 0600), or for the group (02770 / 0640).
    mode_t folder_mode() const { return group ? 02770 : 0700; }
    mode_t file_mode() const { return group ? 0640 : 0600; }
};

// Why `folder`, or a folder above it, could be changed by someone the policy does not trust (its
// owner, write permission for others, a symbolic link another user owns), or nullopt when nobody
// can. A folder that does not exist yet is judged by its deepest existing ancestor, in which it
// would be created.
std::optional<std::string> untrusted_folder_problem(const std::filesystem::path& folder, const TrustPolicy& policy);

// Creates `folder` and any missing folders above it with the policy's folder mode (and group);
// throws Error(io) naming what failed. Existing folders are left as they are.
void create_trusted_folders(const std::filesystem::path& folder, const TrustPolicy& policy);

}  // namespace mqajit
