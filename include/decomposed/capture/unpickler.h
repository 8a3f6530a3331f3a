// A pickle reader for what torch.save writes for one tensor (pickle
// protocol 2). It builds a tree of values and executes nothing: GLOBAL
// records a module and a name, REDUCE records a call (function, arguments),
// BINPERSID wraps a persistent id. The .pt reader (pt_reader.h) interprets
// the tree.
//
// Opcodes read: PROTO FRAME GLOBAL MARK TUPLE TUPLE1 TUPLE2 TUPLE3
// EMPTY_TUPLE EMPTY_LIST EMPTY_DICT LIST BINUNICODE SHORT_BINUNICODE
// BINUNICODE8 BININT1 BININT2 BININT LONG1 (up to 64 bits) NEWTRUE NEWFALSE
// NONE BINPUT LONG_BINPUT MEMOIZE BINGET LONG_BINGET BINPERSID REDUCE STOP.
// Any other opcode is refused.
//
// Stricter than Python's unpickler, to keep memory and stack bounded on
// hostile input: an opcode may pop only the items pushed since the
// innermost MARK; STOP must leave exactly one value and end the data; at
// most limits::kMaxPickleValues values are created, nested at most
// limits::kMaxPickleDepth deep. Every length is checked against the bytes
// left. Values can be shared (BINGET) but never form a cycle.
//
// Errors: kInvalidArgument for malformed or unsupported pickles,
// kResourceExhausted past a limit; the message names `where` and the byte
// offset of the opcode: "<where>: expected torch.save's pickle of one
// tensor, found truncated GLOBAL (at byte 2)".
//
// Example:
//   absl::StatusOr<PicklePtr> root = Unpickle(data_pkl, "tensor0.pt data.pkl");
//   if (root.ok() && (*root)->kind == PickleValue::kCall) {
//     // ... a REDUCE: (*root)'s callable and arguments ...
//   }
#ifndef DECOMPOSED_CAPTURE_UNPICKLER_H_
#define DECOMPOSED_CAPTURE_UNPICKLER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace decomposed::capture {

struct PickleValue;
using PicklePtr = std::shared_ptr<PickleValue>;

struct PickleValue {
  enum Kind {
    kNone,
    kBool,          // i: 0 or 1
    kInt,           // i
    kStr,           // text
    kTuple,         // items
    kList,          // items
    kDict,          // (always empty: no SETITEM is read)
    kGlobal,        // text: module, name: attribute
    kCall,          // items: {function, arguments}
    kPersistentId,  // items: {id}
  } kind = kNone;
  int64_t i = 0;
  int depth = 1;  // 1 + the deepest item's depth
  std::string text;
  std::string name;
  std::vector<PicklePtr> items;
};

absl::StatusOr<PicklePtr> Unpickle(std::string_view data,
                                   std::string_view where);

}  // namespace decomposed::capture

#endif  // DECOMPOSED_CAPTURE_UNPICKLER_H_
