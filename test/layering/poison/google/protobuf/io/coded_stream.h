// Shadows the real header for the standalone compile of the codec layers.
#error "a header-only codec layer includes protobuf (docs/architecture.md: the codec needs Abseil alone)"
