#include "decomposed/capture/unpickler.h"

#include <algorithm>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "decomposed/capture/little_endian.h"
#include "decomposed/limits.h"
#include "decomposed/status.h"

namespace decomposed::capture {

absl::StatusOr<PicklePtr> Unpickle(std::string_view d, std::string_view where) {
  auto fail = [&](absl::StatusCode code, size_t at, std::string_view what) {
    return FrameError(code, Frame{where}, at,
                      "torch.save's pickle of one tensor", what);
  };
  auto bad = [&](size_t at, std::string_view what) {
    return fail(absl::StatusCode::kInvalidArgument, at, what);
  };
  std::vector<PicklePtr> st;
  std::vector<size_t> marks;
  std::map<uint64_t, PicklePtr> memo;
  size_t values = 0;
  auto mk = [&values](PickleValue::Kind k) {
    ++values;
    auto p = std::make_shared<PickleValue>();
    p->kind = k;
    return p;
  };
  size_t i = 0;
  auto need = [&](size_t n) { return n <= d.size() - i; };
  auto le = [&](int w) {
    uint64_t v = LoadLittleEndian(d, i, w);
    i += w;
    return v;
  };
  // Items pushed since the innermost MARK: an opcode may pop only these (in
  // Python's unpickler the items below a MARK live on another stack).
  auto above_mark = [&] {
    return st.size() - (marks.empty() ? 0 : marks.back());
  };
  while (i < d.size()) {
    const size_t at = i;
    const uint8_t op = static_cast<uint8_t>(d[i++]);
    switch (op) {
      case 0x80:  // PROTO
        if (!need(1)) return bad(at, "truncated PROTO");
        ++i;
        break;
      case 0x95:  // FRAME
        if (!need(8)) return bad(at, "truncated FRAME");
        i += 8;
        break;
      case 'c': {  // GLOBAL
        size_t n1 = d.find('\n', i);
        if (n1 == std::string_view::npos) return bad(at, "truncated GLOBAL");
        size_t n2 = d.find('\n', n1 + 1);
        if (n2 == std::string_view::npos) return bad(at, "truncated GLOBAL");
        auto g = mk(PickleValue::kGlobal);
        g->text = std::string(d.substr(i, n1 - i));
        g->name = std::string(d.substr(n1 + 1, n2 - n1 - 1));
        st.push_back(g);
        i = n2 + 1;
        break;
      }
      case '(':  // MARK
        marks.push_back(st.size());
        break;
      case 't': case 'l': {  // TUPLE, LIST
        if (marks.empty()) return bad(at, "TUPLE without MARK");
        if (marks.back() > st.size()) return bad(at, "MARK popped");
        auto t = mk(op == 't' ? PickleValue::kTuple : PickleValue::kList);
        t->items.assign(st.begin() + marks.back(), st.end());
        st.resize(marks.back());
        marks.pop_back();
        st.push_back(t);
        break;
      }
      case ')': st.push_back(mk(PickleValue::kTuple)); break;
      case ']': st.push_back(mk(PickleValue::kList)); break;
      case '}': st.push_back(mk(PickleValue::kDict)); break;
      case 0x85: case 0x86: case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
        size_t n = op - 0x84;
        if (above_mark() < n) return bad(at, "TUPLEn with too few items");
        auto t = mk(PickleValue::kTuple);
        t->items.assign(st.end() - n, st.end());
        st.resize(st.size() - n);
        st.push_back(t);
        break;
      }
      case 'X': case 0x8c: case 0x8d: {  // BINUNICODE, SHORT_, 8
        int w = op == 'X' ? 4 : op == 0x8c ? 1 : 8;
        if (!need(w)) return bad(at, "truncated string length");
        uint64_t n = le(w);
        if (n > d.size() - i) return bad(at, "string past the end");
        auto s = mk(PickleValue::kStr);
        s->text = std::string(d.substr(i, n));
        i += n;
        st.push_back(s);
        break;
      }
      case 'K': case 'M': case 'J': {  // BININT1, BININT2, BININT
        int w = op == 'K' ? 1 : op == 'M' ? 2 : 4;
        if (!need(w)) return bad(at, "truncated int");
        auto v = mk(PickleValue::kInt);
        uint64_t u = le(w);
        v->i = w == 4 ? static_cast<int32_t>(static_cast<uint32_t>(u))
                      : static_cast<int64_t>(u);
        st.push_back(v);
        break;
      }
      case 0x8a: {  // LONG1
        if (!need(1)) return bad(at, "truncated LONG1");
        size_t n = static_cast<uint8_t>(d[i++]);
        if (n > 8 || !need(n)) return bad(at, "LONG1 wider than 64 bits");
        uint64_t u = n ? LoadLittleEndian(d, i, static_cast<int>(n)) : 0;
        if (n > 0 && n < 8 && (static_cast<uint8_t>(d[i + n - 1]) & 0x80)) {
          u |= ~uint64_t{0} << (8 * n);
        }
        auto v = mk(PickleValue::kInt);
        v->i = static_cast<int64_t>(u);
        i += n;
        st.push_back(v);
        break;
      }
      case 0x88: case 0x89: {  // NEWTRUE, NEWFALSE
        auto v = mk(PickleValue::kBool);
        v->i = op == 0x88;
        st.push_back(v);
        break;
      }
      case 'N': st.push_back(mk(PickleValue::kNone)); break;
      case 'q': case 'r': case 0x94: {  // BINPUT, LONG_BINPUT, MEMOIZE
        if (above_mark() < 1) return bad(at, "memo of an empty stack");
        uint64_t key;
        if (op == 0x94) {
          key = memo.size();
        } else {
          int w = op == 'q' ? 1 : 4;
          if (!need(w)) return bad(at, "truncated memo key");
          key = le(w);
        }
        memo[key] = st.back();
        break;
      }
      case 'h': case 'j': {  // BINGET, LONG_BINGET
        int w = op == 'h' ? 1 : 4;
        if (!need(w)) return bad(at, "truncated memo key");
        auto it = memo.find(le(w));
        if (it == memo.end()) return bad(at, "unknown memo key");
        st.push_back(it->second);
        break;
      }
      case 'Q': {  // BINPERSID
        if (above_mark() < 1) return bad(at, "BINPERSID of an empty stack");
        auto p = mk(PickleValue::kPersistentId);
        p->items = {st.back()};
        st.back() = p;
        break;
      }
      case 'R': {  // REDUCE
        if (above_mark() < 2) return bad(at, "REDUCE with too few items");
        auto c = mk(PickleValue::kCall);
        c->items = {st[st.size() - 2], st.back()};
        st.resize(st.size() - 2);
        st.push_back(c);
        break;
      }
      case '.':  // STOP
        if (st.size() != 1 || !marks.empty()) return bad(at, "STOP with a stack");
        if (i != d.size()) return bad(i, "bytes after STOP");
        return st.back();
      default:
        return bad(at, absl::StrCat("unsupported opcode 0x",
                                    absl::Hex(op, absl::kZeroPad2)));
    }
    // BINGET pushes without creating a value: the stack is bounded too.
    if (values > limits::kMaxPickleValues ||
        st.size() > limits::kMaxPickleValues) {
      return fail(absl::StatusCode::kResourceExhausted, at,
                  absl::StrCat("more than ", limits::kMaxPickleValues,
                               " values"));
    }
    const bool built = op == 't' || op == 'l' || op == 0x85 || op == 0x86 ||
                       op == 0x87 || op == 'Q' || op == 'R';
    if (built) {  // a new container on top: its items are final
      PickleValue& top = *st.back();
      for (const PicklePtr& x : top.items) {
        top.depth = std::max(top.depth, x->depth + 1);
      }
      if (top.depth > limits::kMaxPickleDepth) {
        return fail(absl::StatusCode::kResourceExhausted, at,
                    absl::StrCat("values nested deeper than ",
                                 limits::kMaxPickleDepth));
      }
    }
  }
  return bad(d.size(), "no STOP");
}

}  // namespace decomposed::capture
