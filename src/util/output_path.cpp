#include "headroom/util/output_path.hpp"
#include "headroom/util/directory_ownership.hpp"
#include "headroom/util/printable_text.hpp"

#include <algorithm>
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

}  // namespace headroom::util
