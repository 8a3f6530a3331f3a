// manifest.json of an unpack (unpack.h, ManifestJson): what each file is,
// where it came from in the snapshot and, with kNpz, where its entry's data
// starts in the archive.
#include <span>
#include <string>

#include "decomposed/snapshot/unpack.h"
#include "nlohmann/json.hpp"

namespace decomposed {

nlohmann::ordered_json ManifestJson(const UnpackOptions& options,
                                    std::span<const UnpackedFile> files) {
  using Json = nlohmann::ordered_json;
  const bool npz = options.output_format == UnpackFormat::kNpz;
  Json j;
  j["format"] = "decomposed unpack manifest";
  j["version"] = 1;
  j["archive"] = npz ? Json(options.npz_path) : Json(nullptr);
  Json list = Json::array();
  for (const UnpackedFile& f : files) {
    if (f.kind == UnpackedKind::kManifest || f.kind == UnpackedKind::kArchive) {
      continue;
    }
    Json e;
    std::string name = f.entry;
    if (name.empty()) {
      const std::string& prefix = options.output_prefix;
      name = f.path.compare(0, prefix.size(), prefix) == 0
                 ? f.path.substr(prefix.size())
                 : f.path;
    }
    e["name"] = name;
    e["path"] = npz ? f.entry : f.path;
    e["kind"] = f.kind == UnpackedKind::kModule || f.kind == UnpackedKind::kMeta
                    ? UnpackedKindName(f.kind)
                    : UnpackedKindRole(f.kind);
    e["index"] = f.index < 0 ? Json(nullptr) : Json(f.index);
    e["bytes"] = f.bytes;
    if (f.kind != UnpackedKind::kMeta) {
      e["source_offset"] = f.source_offset;
      e["source_length"] = f.source_length;
    }
    if (f.kind == UnpackedKind::kInput || f.kind == UnpackedKind::kOutput) {
      e["parameter"] = f.parameter ? Json(f.parameter->name) : Json(nullptr);
      e["tuple_index"] = f.parameter && f.parameter->tuple_index >= 0
                             ? Json(f.parameter->tuple_index)
                             : Json(nullptr);
      e["dtype"] = f.descr;
      e["element_type"] = f.element_type;
      e["shape"] = f.dims;
      e["minor_to_major"] = f.minor_to_major;
      e["fortran_order"] = f.fortran_order;
    }
    if (npz) e["archive_offset"] = f.archive_offset;
    list.push_back(std::move(e));
  }
  j["files"] = std::move(list);
  return j;
}

}  // namespace decomposed
