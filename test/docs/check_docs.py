#!/usr/bin/env python3
"""Fails when the documents name code that is not in the tree.

Checks, for README.md and docs/*.md (inline `code` spans only; fenced blocks
are examples and command lines):
  * every path (`include/decomposed/xla/shape.h`, `xla/shape.h`,
    `src/snapshot/unpack.cc`, `test/fuzz/`, `scripts/fuzz.sh`, ...) exists,
    taken from the repository root, or from include/decomposed/ or src/ for
    a layer-relative header;
  * every identifier that looks like this project's code (CamelCase such as
    `DecomposedReader` or `ReadBox`, a `kConstant`, a snake_case option such
    as `lenient_length_byte`, each part of `A::B`) occurs in the code:
    include/, src/, examples/, python/, proto/, test/, bench/, CMake files,
    with C/C++ comments removed, so a name that survives only in a stale
    comment still fails. Names from other projects (XLA, protobuf, NumPy,
    riegeli, ...) are listed in EXTERNAL with the reason;
  * every link to another document exists, and so does its #anchor;
and, for the code (include/, src/, examples/, test/, bench/, scripts/,
proto/, python/): every `docs/format.md §N` citation names a section that
format.md has, and every docs/<name>.md it cites exists.

    python3 test/docs/check_docs.py SOURCE_DIR
    python3 test/docs/check_docs.py --self-test
Prints one line per problem and exits 1 when there is any. --self-test runs
the checks on a small tree with one known defect of each kind and fails
unless each is reported (and nothing else), so the check itself can fail.
"""
import os
import re
import sys

# Identifiers the documents name that belong to other projects or to the
# formats, not to this tree's code.
EXTERNAL = {
    # XLA / TensorFlow (the formats' owners)
    "CreateFromProto", "MutableLiteralBase", "LiteralBase", "ToProto",
    "CopyFromProto", "LiteralUtil", "CreateR0", "HloUnoptimizedSnapshot",
    "convertProtoForTF2_11", "prohibit_empty_literal", "Serialize",
    "tail_padding_alignment_in_elements", "register_hlo_snapshot_callback",
    "xla_dump_hlo_snapshots", "xla_dump_to", "read_uint64",
    "DecomposedHloSnapshot", "decomposed_hlo_snapshot",
    "NEURON_DUMP_HLO_SNAPSHOT", "ON_NRT_ERROR", "ON_NRT_ERROR_CPU",
    "ON_NRT_ERROR_HYBRID", "XLA_FLAGS", "SyncTensorsGraph", "Layout",
    "PRIMITIVE_TYPE_INVALID",
    # absl::StatusCode names as the documents write them (kInvalidArgument)
    "InvalidArgument", "OutOfRange", "ResourceExhausted", "Unimplemented",
    "FailedPrecondition", "DataLoss", "NotFound", "PermissionDenied",
    "AlreadyExists",
    # protobuf, riegeli, abseil, the C++ and POSIX libraries
    "length_error", "message_lite", "coded_stream",
    "ParseFromString", "LimitingReader", "ZeroCopyInputStream",
    "CodedInputStream", "FdReader", "ErrnoToStatus", "copy_file_range",
    "bad_alloc", "operator", "fsync", "lseek", "pread", "mmap",
    # NumPy, ml_dtypes, PyTorch, vLLM
    "fortran_order", "max_header_size", "ml_dtypes", "ml_dtype",
    "_rebuild_tensor_v2", "_rebuild_tensor_v3", "UntypedStorage",
    "VLLM_CACHE_ROOT", "XDG_CACHE_HOME", "VLLM_NEURON_RUNTIME_INPUT_SNAPSHOT_",
    "torch_neuronx", "pyhlo", "data.pkl", "get_default_cache_root",
    "ErrorSpec", "ones_like",
    # vLLM-Neuron's accuracy helpers (vllm_neuron/accuracy/), whose
    # definitions the three-way comparison follows
    "assert_close_three_way", "_compute_bc", "module_test_guidelines",
    "plot_error_distributions", "plot_error_qqplot",
    # libneuronxla's snapshot callback's parameters
    "device_index", "execution_count",
}

# ctest names made in loops (test/corpus.cmake, test/crash_safety.cmake):
# corpus_<command>, crash_safety_<command>.
GENERATED_PREFIXES = ("corpus_", "crash_safety_")

# Paths that are not in this tree: other projects' files, include prefixes
# the layer check refuses, and build output folders.
EXTERNAL_PATH_PREFIXES = ("torch_neuronx/", "nlohmann/", "google/protobuf/",
                          "pybind11/", "decomposed/", "build", "out/")

CODE_DIRS = ("include", "src", "examples", "python", "proto", "test", "bench",
             "cmake", "scripts")
CODE_EXT = (".h", ".cc", ".py", ".proto", ".cmake", ".txt", ".sh", ".in")
PATH_EXT = (".h", ".cc", ".py", ".md", ".cmake", ".sh", ".txt", ".proto",
            ".tsv", ".json", ".hpp")

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def strip_comments(text, ext):
    if ext in (".h", ".cc", ".proto", ".in"):
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        return re.sub(r"//[^\n]*", " ", text)
    if ext in (".py", ".cmake", ".txt", ".sh"):
        return re.sub(r"(^|\s)#[^\n]*", " ", text)
    return text


def code_words(root):
    words = set()
    for d in CODE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            if "/corpus" in dirpath or "/poison" in dirpath or \
                    dirpath.endswith(os.path.join("test", "docs")):
                continue
            for f in files:
                ext = os.path.splitext(f)[1]
                if f == "CMakeLists.txt" or ext in CODE_EXT:
                    path = os.path.join(dirpath, f)
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        words.update(
                            IDENT.findall(strip_comments(fh.read(), ext)))
                words.add(os.path.splitext(f)[0])  # test and target names
    with open(os.path.join(root, "CMakeLists.txt")) as fh:
        words.update(IDENT.findall(strip_comments(fh.read(), ".cmake")))
    return words


def looks_like_code(w):
    if w in EXTERNAL or len(w) < 4:
        return False
    if re.fullmatch(r"k[A-Z][A-Za-z0-9]+", w):
        return True
    if re.fullmatch(r"[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+", w):
        return True  # CamelCase with two humps: ReadBox, DecomposedReader
    if re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+", w):
        return True  # snake_case: lenient_length_byte
    return False


def inline_spans(text):
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.findall(r"`([^`\n]+)`", text)


def code_block_names(text):
    """Names used by the fenced C++ and Python examples (shell blocks and
    program output are not code of this tree): every identifier of a C++
    example; in a Python example the attributes and calls after a dot (its
    own variables are the reader's)."""
    names = set()
    for lang, block in re.findall(r"```(c\+\+|cpp|python)\n(.*?)```", text,
                                  flags=re.S):
        block = re.sub(r"(#|//)[^\n]*", " ", block)  # comments
        block = re.sub(r'"[^"\n]*"', " ", block)     # strings
        if lang == "python":
            names.update(re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)", block))
        else:
            names.update(IDENT.findall(block))
    return names


def headings(fmt_text):
    return set(re.findall(r"^#{2,4} §(\d+(?:\.\d+)?)\b", fmt_text, re.M))


def check(root):
    problems = []
    docs = [os.path.join(root, "README.md")] + sorted(
        os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs"))
        if f.endswith(".md"))
    words = code_words(root)
    anchors = {}
    for d in docs:
        with open(d, encoding="utf-8") as fh:
            t = fh.read()
        ids = set(re.findall(r'<a id="([^"]+)"', t))
        ids |= {re.sub(r"[^a-z0-9 -]", "", h.lower()).strip().replace(" ", "-")
                for h in re.findall(r"^#+ (.*)$", t, re.M)}
        anchors[os.path.normpath(d)] = ids
    for d in docs:
        rel = os.path.relpath(d, root)
        with open(d, encoding="utf-8") as fh:
            text = fh.read()
        for span in inline_spans(text):
            for tok in re.split(r"[\s,;()\[\]{}=<>*&|\"']+", span):
                tok = tok.strip(".:")
                if not tok:
                    continue
                if "/" in tok and not tok.startswith(("-", "$", "/", "http")) \
                        and (tok.endswith(PATH_EXT) or tok.endswith("/")) \
                        and re.fullmatch(r"[A-Za-z0-9_./+-]+", tok) \
                        and "*" not in tok and "<" not in tok:
                    if tok.startswith(EXTERNAL_PATH_PREFIXES):
                        continue
                    cands = [tok, os.path.join("include/decomposed", tok),
                             os.path.join("src", tok), os.path.join("docs", tok)]
                    if not any(os.path.exists(os.path.join(root, c)) for c in cands):
                        problems.append(f"{rel}: path `{tok}` does not exist")
                    continue
                if "." in tok or "/" in tok or tok.startswith("-"):
                    continue
                for part in tok.split("::"):
                    part = re.sub(r"^[~!]", "", part)
                    if looks_like_code(part) and part not in words and \
                            not part.startswith(GENERATED_PREFIXES):
                        problems.append(
                            f"{rel}: `{part}` (in `{span}`) is not in the code")
        for part in sorted(code_block_names(text)):
            if looks_like_code(part) and part not in words and \
                    not part.startswith(GENERATED_PREFIXES):
                problems.append(
                    f"{rel}: `{part}` (in an example) is not in the code")
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
            if target.startswith(("http:", "https:", "mailto:")):
                continue
            path = os.path.normpath(os.path.join(os.path.dirname(d), target)) \
                if target else os.path.normpath(d)
            if not os.path.exists(path):
                problems.append(f"{rel}: link to missing {target}")
            elif anchor and path in anchors and anchor not in anchors[path]:
                problems.append(f"{rel}: link to missing anchor {target}#{anchor}")
    with open(os.path.join(root, "docs", "format.md"), encoding="utf-8") as fh:
        sections = headings(fh.read())
    for d in ("include", "src", "examples", "test", "bench", "scripts", "proto",
              "python"):
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            if "/corpus" in dirpath or "/docs" in dirpath:
                continue
            for f in files:
                path = os.path.join(dirpath, f)
                try:
                    with open(path, encoding="utf-8") as fh:
                        lines = fh.read().split("\n")
                except (UnicodeDecodeError, OSError):
                    continue
                rel = os.path.relpath(path, root)
                for i, line in enumerate(lines):
                    for m in re.findall(r"docs/([A-Za-z0-9_-]+\.md)", line):
                        if not os.path.exists(os.path.join(root, "docs", m)):
                            problems.append(f"{rel}:{i+1}: cites missing docs/{m}")
                    if "format.md" not in line:
                        continue
                    cited = line[line.index("format.md"):]
                    if i + 1 < len(lines) and not re.search(r"[).]\s*$", cited):
                        cited += " " + lines[i + 1]
                    for s in re.findall(r"§(\d+(?:\.\d+)?)", cited):
                        if s not in sections:
                            problems.append(
                                f"{rel}:{i+1}: cites docs/format.md §{s}, "
                                "which format.md does not have")
    return problems


def self_test():
    import tempfile
    files = {
        "docs/format.md": '<a id="s1"></a>\n## §1 Scope\n',
        "docs/other.md": "See [§1](format.md#s1) and [x](format.md#s9).\n"
                         "```c++\nRealThing t; t.ReadGone(my_var);\n```\n",
        "README.md": "`RealThing`, `real_option`, `include/decomposed/a.h`, "
                     "`GoneThing`, `gone_option`, `kGoneLimit`, "
                     "`include/decomposed/gone.h`, [d](docs/gone.md).\n",
        "include/decomposed/a.h": "// GoneThing lives only in a comment.\n"
                                  "struct RealThing { int real_option; };\n"
                                  "// docs/format.md §1 and §7.\n"
                                  "// docs/gone.md\n",
    }
    want = {
        "README.md: `GoneThing` (in `GoneThing`) is not in the code",
        "README.md: `gone_option` (in `gone_option`) is not in the code",
        "README.md: `kGoneLimit` (in `kGoneLimit`) is not in the code",
        "README.md: path `include/decomposed/gone.h` does not exist",
        "README.md: link to missing docs/gone.md",
        "docs/other.md: link to missing anchor format.md#s9",
        "docs/other.md: `ReadGone` (in an example) is not in the code",
        "docs/other.md: `my_var` (in an example) is not in the code",
        "include/decomposed/a.h:3: cites docs/format.md §7, which format.md "
        "does not have",
        "include/decomposed/a.h:4: cites missing docs/gone.md",
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as fh:
                fh.write(text)
        with open(os.path.join(root, "CMakeLists.txt"), "w") as fh:
            fh.write("project(t)\n")
        got = set(check(root))
    for p in sorted(want - got):
        print(f"self-test: not reported: {p}")
    for p in sorted(got - want):
        print(f"self-test: reported wrongly: {p}")
    ok = got == want
    print(f"self-test {'passed' if ok else 'FAILED'}: {len(want)} defects")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    problems = check(sys.argv[1] if len(sys.argv) > 1 else ".")
    for p in problems:
        print(p)
    print(f"{len(problems)} problems in the documents")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
