// The protobuf wire layer, in one include:
//   wire/format.h  wire types, tag rules, varint decoding, wire::Field,
//                  BadTagError;
//   wire/reader.h  wire::FieldReader<S>, the one reader of protobuf fields
//                  over any ByteSource, with bounded sub-views;
//   wire/writer.h  tags, varints and length-delimited fields.
// Hand-written for speed and for 64-bit sizes (protobuf's own
// CodedInputStream uses `int` sizes), with protobuf's rules: every decoder
// built on it accepts exactly what protobuf accepts (test/wire_*_test.cc
// ask protobuf), or documents a stricter rule.
#ifndef DECOMPOSED_WIRE_WIRE_H_
#define DECOMPOSED_WIRE_WIRE_H_

#include "decomposed/wire/format.h"
#include "decomposed/wire/reader.h"
#include "decomposed/wire/writer.h"

#endif  // DECOMPOSED_WIRE_WIRE_H_
