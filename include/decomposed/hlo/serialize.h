// DeterministicSerialization: a protobuf message's bytes with map fields in
// key order (protobuf's deterministic serialization), so that the same
// module gives the same bytes every time: what `decomposed hlo --to-proto`
// writes, and what hlo::ParseHloTextToProto's bytes equal for the module
// ParseHloText gives. Unknown fields are written as they were read.
//
// Example:
//   decomposed::xla::HloModuleProto m;
//   m.set_name("m");
//   std::string bytes = decomposed::hlo::DeterministicSerialization(m);
#ifndef DECOMPOSED_HLO_SERIALIZE_H_
#define DECOMPOSED_HLO_SERIALIZE_H_

#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/message.h"

namespace decomposed::hlo {

inline std::string DeterministicSerialization(const google::protobuf::Message& m) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&out);
  }  // the stream's last buffer is in `bytes` once it is destroyed
  return bytes;
}

}  // namespace decomposed::hlo

#endif  // DECOMPOSED_HLO_SERIALIZE_H_
