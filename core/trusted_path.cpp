#include "core/trusted_path.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/files.hpp"
#include "core/parse_number.hpp"

namespace mqajit {
namespace {

constexpr int kMaxSymlinks = 40;

std::optional<std::string> user_name(uid_t uid) {
    std::vector<char> buffer(16384);
    struct passwd entry {};
    struct passwd* found = nullptr;
    while (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == ERANGE) buffer.resize(buffer.size() * 2);
    if (found == nullptr) return std::nullopt;
    return std::string(found->pw_name);
}

struct GroupInfo {
    gid_t gid;
    std::string name;
    std::vector<std::string> members;
};

std::optional<GroupInfo> group_by(const std::optional<gid_t>& gid, const char* name) {
    std::vector<char> buffer(16384);
    struct group entry {};
    struct group* found = nullptr;
    while ((gid ? getgrgid_r(*gid, &entry, buffer.data(), buffer.size(), &found)
                : getgrnam_r(name, &entry, buffer.data(), buffer.size(), &found)) == ERANGE) {
        buffer.resize(buffer.size() * 2);
    }
    if (found == nullptr) return std::nullopt;
    GroupInfo info{found->gr_gid, found->gr_name, {}};
    for (char** member = found->gr_mem; member != nullptr && *member != nullptr; ++member) info.members.emplace_back(*member);
    return info;
}

// A user private group (named after its one user, listing nobody else) lets nobody else write.
bool is_private_group(gid_t gid, uid_t owner) {
    const auto group = group_by(gid, nullptr);
    const auto owner_name = user_name(owner);
    if (!group || !owner_name || group->name != *owner_name) return false;
    return std::ranges::all_of(group->members, [&](const std::string& member) { return member == *owner_name; });
}

bool in_process_groups(gid_t gid) {
    if (getegid() == gid) return true;
    const int count = getgroups(0, nullptr);
    if (count <= 0) return false;
    std::vector<gid_t> groups(static_cast<std::size_t>(count));
    const int got = getgroups(count, groups.data());
    return got > 0 && std::find(groups.begin(), groups.begin() + got, gid) != groups.begin() + got;
}

std::string mode_text(mode_t mode) { return fmt::format("{:04o}", mode & 07777); }

}  // namespace

TrustPolicy TrustPolicy::for_process(const std::optional<std::string>& group_setting) {
    TrustPolicy policy;
    policy.uid = geteuid();
    if (!group_setting) return policy;
    std::optional<GroupInfo> group;
    if (const auto number = parse_whole_int64(*group_setting); number && *number >= 0) {
        const auto gid = static_cast<gid_t>(*number);
        group = group_by(gid, nullptr);
        if (!group) group = GroupInfo{gid, std::to_string(gid), {}};
    } else {
        group = group_by(std::nullopt, group_setting->c_str());
        MQAJIT_CHECK(group.has_value(), "MQAJIT_CACHE_GROUP={} names no group on this machine; give a group name "
                     "or number, or unset it for a private cache", *group_setting);
    }
    // NOTES: root may hand files to any group; everyone else must belong to it, or the group's
    // members could plant what this process then trusts without this process being one of them.
    MQAJIT_CHECK(policy.uid == 0 || in_process_groups(group->gid),
                 "MQAJIT_CACHE_GROUP={}: this process (uid {}) is not a member of group {}; join the group (then "
                 "log in again), or unset MQAJIT_CACHE_GROUP for a private cache",
                 *group_setting, policy.uid, group->name);
    policy.group = group->gid;
    policy.group_name = group->name;
    return policy;
}

bool TrustPolicy::trusts_owner(const struct stat& info) const {
    return info.st_uid == 0 || info.st_uid == uid || (group && info.st_gid == *group);
}

std::optional<std::string> TrustPolicy::entry_problem(const struct stat& info, const std::string& name) const {
    if (!trusts_owner(info)) {
        return fmt::format("{} is owned by uid {} (not by this user, uid {}, or root{})", name, info.st_uid, uid,
                           group ? fmt::format(", or group {}", group_name) : "");
    }
    if (info.st_mode & S_IWOTH) return fmt::format("{} is writable by every user (mode {})", name, mode_text(info.st_mode));
    if ((info.st_mode & S_IWGRP) && !(group && info.st_gid == *group) && !is_private_group(info.st_gid, info.st_uid)) {
        const auto other = group_by(info.st_gid, nullptr);
        return fmt::format("{} is writable by group {} (mode {}), whose members this user does not trust{}", name,
                           other ? other->name : std::to_string(info.st_gid), mode_text(info.st_mode),
                           group ? "" : "; set MQAJIT_CACHE_GROUP to that group to share it on purpose");
    }
    return std::nullopt;
}

std::optional<std::string> untrusted_folder_problem(const std::filesystem::path& folder, const TrustPolicy& policy) {
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(folder, error);
    if (error) return fmt::format("{} cannot be resolved: {}", folder.string(), error.message());
    std::deque<std::string> pending;
    for (const auto& part : absolute.relative_path()) pending.push_back(part.string());

    // A folder others may write can be passed through only when sticky, and never be the last one.
    auto folder_problem = [&](const struct stat& info, const std::filesystem::path& path, bool last)
        -> std::optional<std::string> {
        const std::string name = "folder " + path.string();
        if (!policy.trusts_owner(info)) return policy.entry_problem(info, name);
        const bool sticky = (info.st_mode & S_ISVTX) != 0;
        if (auto problem = policy.entry_problem(info, name); problem && (last || !sticky)) return problem;
        return std::nullopt;
    };

    std::filesystem::path current = "/";
    struct stat info {};
    if (::lstat("/", &info) != 0) return fmt::format("/ cannot be inspected: {}", std::strerror(errno));
    if (auto problem = folder_problem(info, current, pending.empty())) return problem;
    int links = 0;
    while (!pending.empty()) {
        const std::string part = pending.front();
        pending.pop_front();
        if (part.empty() || part == ".") continue;
        if (part == "..") {
            current = current.parent_path();
            continue;
        }
        const std::filesystem::path next = current / part;
        if (::lstat(next.c_str(), &info) != 0) {
            // Missing: it would be created in `current`, which passed as a folder to pass through.
            if (errno == ENOENT) return std::nullopt;
            return fmt::format("{} cannot be inspected: {}", next.string(), std::strerror(errno));
        }
        if (S_ISLNK(info.st_mode)) {
            if (info.st_uid != 0 && info.st_uid != policy.uid) {
                return fmt::format("{} is a symbolic link owned by uid {} (not by this user, uid {}, or root)",
                                   next.string(), info.st_uid, policy.uid);
            }
            if (++links > kMaxSymlinks) return fmt::format("{} has too many levels of symbolic links", folder.string());
            std::vector<char> target(4096);
            const ssize_t length = ::readlink(next.c_str(), target.data(), target.size());
            if (length < 0 || static_cast<std::size_t>(length) == target.size())
                return fmt::format("symbolic link {} cannot be read", next.string());
            const std::filesystem::path link(std::string(target.data(), static_cast<std::size_t>(length)));
            std::vector<std::string> parts;
            for (const auto& piece : link.relative_path()) parts.push_back(piece.string());
            pending.insert(pending.begin(), parts.begin(), parts.end());
            if (link.is_absolute()) current = "/";
            continue;
        }
        if (!S_ISDIR(info.st_mode)) return fmt::format("{} is {}, not a folder", next.string(), file_type_name(info.st_mode));
        if (auto problem = folder_problem(info, next, pending.empty())) return problem;
        current = next;
    }
    return std::nullopt;
}

void create_trusted_folders(const std::filesystem::path& folder, const TrustPolicy& policy) {
    std::filesystem::path prefix;
    for (const auto& part : std::filesystem::absolute(folder)) {
        prefix /= part;
        if (::mkdir(prefix.c_str(), policy.folder_mode()) != 0) {
            if (errno == EEXIST) continue;
            MQAJIT_FAIL(io, "cannot create folder {}: {}; check the permissions of the folder above it",
                        prefix.string(), std::strerror(errno));
        }
        // NOTES: mkdir's mode passes through the umask; set it exactly, with the group for a shared cache.
        if (policy.group && ::chown(prefix.c_str(), static_cast<uid_t>(-1), *policy.group) != 0) {
            MQAJIT_FAIL(io, "cannot give folder {} to group {}: {}", prefix.string(), policy.group_name,
                        std::strerror(errno));
        }
        if (::chmod(prefix.c_str(), policy.folder_mode()) != 0)
            MQAJIT_FAIL(io, "cannot set the mode of folder {}: {}", prefix.string(), std::strerror(errno));
    }
}

}  // namespace mqajit
