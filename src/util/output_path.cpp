#include "headroom/util/output_path.hpp"
#include "headroom/util/directory_ownership.hpp"
#include "headroom/util/printable_text.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace headroom::util {
namespace fs = std::filesystem;
namespace {

// The absolute, symlink-free spelling of `path` as far as it exists (weakly_canonical), so that
// `data`, `./data/`, `../x/data` and a symlink to it compare equal.
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  fs::path result = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) result = fs::absolute(path).lexically_normal();
  if (!result.has_filename() && result != result.root_path()) result = result.parent_path();
  return result;
}

// Whether `inner` is `outer` or lies below it (component-wise, so /data2 is not inside /data).
bool is_within(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin();
  auto i = inner.begin();
  for (; o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator's empty component
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

std::string quoted(const fs::path& path) { return "'" + printable_path(path) + "'"; }

// File systems whose files are the kernel's interface, not storage (devtmpfs: /dev, where a
// directory made by mistake lives in RAM until the next boot).
// autofs is not listed: a cluster's /home is often one, with the real file system mounted over it.
constexpr std::array<std::string_view, 19> kPseudoFileSystems = {
    "proc",    "sysfs",       "devtmpfs", "devpts",     "cgroup",   "cgroup2",  "debugfs",
    "tracefs", "securityfs",  "configfs", "bpf",        "pstore",   "efivarfs", "mqueue",
    "fusectl", "binfmt_misc", "nsfs",     "rpc_pipefs", "hugetlbfs"};

// mountinfo escapes space, tab, newline and backslash in paths as \ooo (octal).
std::string unescaped_mount_path(const std::string& field) {
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string digits = field.substr(i + 1, 3);
      if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out += static_cast<char>(std::stoi(digits, nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

struct Mount {
  fs::path point;
  std::string type;
};

// The mount holding `path` (the longest mount point it lies within); empty type when the mount
// table cannot be read.
Mount mount_holding(const fs::path& path) {
  std::ifstream table("/proc/self/mountinfo");
  Mount best;
  std::string line;
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point, field;
    if (!(fields >> id >> parent >> device >> root >> point)) continue;
    while (fields >> field && field != "-") {
    }
    std::string type;
    if (!(fields >> type)) continue;
    const fs::path mount_point = unescaped_mount_path(point);
    // Later lines mount over earlier ones at the same point: `>=` keeps the last.
    if (is_within(path, mount_point) && std::distance(mount_point.begin(), mount_point.end()) >=
                                            std::distance(best.point.begin(), best.point.end()))
      best = {mount_point, type};
  }
  return best;
}

}  // namespace

void require_disjoint(const fs::path& output, std::string_view output_what, const fs::path& input,
                      std::string_view input_what) {
  const fs::path out = resolved(output);
  const fs::path in = resolved(input);
  std::string relation;
  if (out == in)
    relation = "is";
  else if (is_within(out, in))
    relation = "is inside";
  else if (is_within(in, out))
    relation = "contains";
  else
    return;
  throw std::runtime_error(std::string(output_what) + " " + quoted(output) + " " + relation + " " +
                           std::string(input_what) + " " + quoted(input) +
                           "; choose an output path outside it");
}

void require_replaceable(const fs::path& path, const DirectoryKind& kind) {
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (ec || !fs::exists(status)) return;
  const std::string why = [&]() -> std::string {
    if (fs::is_symlink(status)) return "it is a symbolic link";
    if (!fs::is_directory(status)) return "it is not a directory";
    if (is_empty_directory(path)) return {};
    return kind.why_not_ours(path);
  }();
  if (why.empty()) return;
  throw std::runtime_error(quoted(path) + " exists and is not a " + kind.what +
                           " that headroom wrote (" + why +
                           "); headroom replaces only those. Remove it yourself or choose another "
                           "output path");
}

void require_storage_location(const fs::path& output, std::string_view output_what) {
  const fs::path where = resolved(output);
  const Mount mount = mount_holding(where);
  if (std::find(kPseudoFileSystems.begin(), kPseudoFileSystems.end(), mount.type) ==
      kPseudoFileSystems.end())
    return;
  throw std::runtime_error(std::string(output_what) + " " + quoted(output) + " lies on " +
                           quoted(mount.point) + ", a " + mount.type +
                           " file system (the kernel's, not storage); choose a directory on a "
                           "disk");
}

}  // namespace headroom::util
