// What every kind of store's manifest shares: its `kind` (what the store holds), and the sealing
// (format, version and a checksum over the canonical dump) that every kind's manifest carries.
// The windows store's own manifest is store_metadata.hpp's; the node-graph store's is
// node_graph_metadata.hpp's. Stateless: thread-safe.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "headroom/store/store_metadata.hpp"

namespace headroom::store {

// The manifest's `kind`: what the store holds. A manifest without the field is a windows store
// (every store written before node-graph stores existed); store_metadata.hpp's parse_manifest
// refuses a manifest of any other kind.
inline constexpr const char* kWindowsStoreKind = "windows";       // many small graphs
inline constexpr const char* kNodeGraphStoreKind = "node-graph";  // one graph (node_graph_*.hpp)

// seal_manifest adds the format, the version and the checksum over the canonical dump (keys
// sorted) to `json` and renders it; unseal_manifest parses text and checks those three, returning
// the JSON without the checksum field. Throw StoreError naming `where`.
std::string seal_manifest(nlohmann::json json);
nlohmann::json unseal_manifest(const std::string& text, const std::string& where);
// The manifest's `arrays` object, by array name: each array's file, dtype, shape, bytes and
// checksum. parse_array_records throws nlohmann::json::exception for a missing or mistyped field
// (the caller names the manifest).
nlohmann::json render_array_records(const std::map<std::string, ArrayRecord>& arrays);
std::map<std::string, ArrayRecord> parse_array_records(const nlohmann::json& arrays);
// The `kind` of an unsealed manifest (kWindowsStoreKind when absent).
std::string manifest_kind(const nlohmann::json& manifest);

}  // namespace headroom::store
