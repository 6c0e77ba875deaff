// The graph store as a directory headroom owns (util/directory_ownership.hpp): recognised by a
// manifest.json that parses and validates as a store manifest (format, supported version, its own
// checksum) and by holding nothing else but the array files a store builder writes. A web app's
// manifest.json, an empty one, or a store someone added files to is not one: --force and
// `headroom run`'s rebuild refuse to replace it.
#pragma once

#include "headroom/util/directory_ownership.hpp"

namespace headroom::store {

// Stateless; the returned kind's functions are thread-safe.
util::DirectoryKind graph_store_kind();

}  // namespace headroom::store
